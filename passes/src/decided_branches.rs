//! Branches decided on entry (run by `dce`): loop bodies that never run.
//!
//! A block `h` ends in `br c, t, e` where `c` is computed in `h` from its phis
//! (pure operations, folded with `ir::BinOp::eval`). If, with each phi taking
//! its (constant) value on the edge from one predecessor `p`, `c` folds to a
//! constant that picks successor `s`, and once `h` jumps only to `s` no other
//! predecessor of `h` is reachable from the entry, then `h` only ever runs
//! entered from `p` and always goes to `s`: the branch becomes `jmp s`, and
//! what only the other successor reached (a loop body whose induction starts
//! at its bound) is left unreachable for DCE to delete.
//!
//! Why this is sound: take the first execution of `h` that would leave for
//! the other successor. Up to then every run of `h` went to `s`, so execution
//! followed only edges of the rewritten CFG, and `h` was entered from a
//! predecessor reachable there, which is only `p`; so the phis held their `p`
//! values and `c` picked `s` — a contradiction. Fuel is unchanged (one taken
//! branch of a terminator for one).
//!
//! A branch every edge into `h` decides the same way is folded too (no walk:
//! whichever edge `h` is entered on, `c` is that constant).
//!
//! Cost: finding candidates is one look at each block's terminator; the
//! reachability walk runs only for a branch that folds on some edge, at most
//! [`MAX_WALKS`] times per function and run. Counter:
//! `dce.branches_decided_on_entry`.

use crate::certain_traps::drop_phi_entries;
use crate::stats::Stats;
use ir::{BinOp, Block, Function, InstKind, Value, ValueDef};

/// Reachability walks per function and run (keeps the pass linear).
const MAX_WALKS: usize = 4;

/// How deep the condition's expression in its block is followed.
const MAX_DEPTH: u32 = 6;

/// Fold each branch of `func` decided by the one predecessor that can enter
/// its block. Whether anything changed.
pub(crate) fn fold_decided_branches(func: &mut Function, stats: &mut Stats) -> bool {
    let mut walks = 0;
    let mut changed = false;
    for k in 0..func.layout.len() {
        if walks == MAX_WALKS {
            break;
        }
        let h = func.layout[k];
        let Some((s, other)) = decided_on_entry(func, h, &mut walks) else {
            continue;
        };
        let term = func.terminator(h).expect("decided_on_entry saw a br");
        func.insts[term.index()].kind = InstKind::Jmp(s);
        drop_phi_entries(func, other, h);
        stats.add("dce", "branches_decided_on_entry", 1);
        changed = true;
    }
    changed
}

/// If block `h`'s branch is decided as described in the module header:
/// the successor it always takes and the one it never does.
fn decided_on_entry(func: &Function, h: Block, walks: &mut usize) -> Option<(Block, Block)> {
    let term = func.terminator(h)?;
    let InstKind::Br(c, t, e) = func.inst(term).kind else {
        return None;
    };
    if t == e
        || func
            .def_inst(c)
            .is_none_or(|i| func.inst(i).block != Some(h))
    {
        return None;
    }
    let insts = &func.blocks[h.index()].insts;
    let InstKind::Phi(first) = &func.inst(*insts.first()?).kind else {
        return None;
    };
    let pick = |taken: i64| if taken != 0 { (t, e) } else { (e, t) };
    // Decided the same way on every edge: no walk needed.
    let mut edges = first.iter().map(|&(p, _)| eval(func, h, p, c, MAX_DEPTH));
    let on_first = edges.next().flatten();
    if let Some(k) = on_first.filter(|&k| edges.all(|x| x.is_some_and(|x| (x != 0) == (k != 0)))) {
        return Some(pick(k));
    }
    for (n, &(p, _)) in first.iter().enumerate() {
        if first.iter().skip(n + 1).any(|&(q, _)| q == p) {
            continue;
        }
        let Some(taken) = eval(func, h, p, c, MAX_DEPTH) else {
            continue;
        };
        let (s, other) = pick(taken);
        *walks += 1;
        if only_pred_reachable(func, h, s, p, first.iter().map(|&(q, _)| q)) {
            return Some((s, other));
        }
        if *walks == MAX_WALKS {
            return None;
        }
    }
    None
}

/// The constant `v` (a value of block `h`) has when `h` is entered from
/// `p`, if the phis of `h` and pure operations make it one.
fn eval(func: &Function, h: Block, p: Block, v: Value, depth: u32) -> Option<i64> {
    let i = match func.value_def(v) {
        ValueDef::Const(k) => return Some(k),
        ValueDef::Inst(i) if depth > 0 && func.inst(i).block == Some(h) => i,
        _ => return None,
    };
    let d = depth - 1;
    match &func.inst(i).kind {
        // The value on the edge, not followed further: a value of `h` on a
        // back edge is the previous iteration's.
        InstKind::Phi(entries) => {
            let &(_, x) = entries.iter().find(|&&(q, _)| q == p)?;
            func.as_const(x)
        }
        InstKind::Binary(op, a, b) => {
            let (x, y) = (eval(func, h, p, *a, d), eval(func, h, p, *b, d));
            match (x, y) {
                (Some(x), Some(y)) => op.eval(x, y),
                (Some(k), None) | (None, Some(k)) => absorbs(*op, k, x.is_some()),
                (None, None) => None,
            }
        }
        InstKind::Unary(op, a) => Some(op.eval(eval(func, h, p, *a, d)?)),
        InstKind::Select(c, a, b) => {
            let pick = if eval(func, h, p, *c, d)? != 0 { a } else { b };
            eval(func, h, p, *pick, d)
        }
        _ => None,
    }
}

/// The result of `op` when one operand is the constant `k` (on the left
/// when `left`) and the other is unknown, if `k` decides it (`and 0`,
/// `or -1`, `mul 0`, `ult x, 0`, `uge x, 0`, …).
fn absorbs(op: BinOp, k: i64, left: bool) -> Option<i64> {
    match (op, k, left) {
        (BinOp::And | BinOp::Mul, 0, _) => Some(0),
        (BinOp::Or, -1, _) => Some(-1),
        (BinOp::Ult, 0, false) | (BinOp::Ugt, 0, true) => Some(0),
        (BinOp::Uge, 0, false) | (BinOp::Ule, 0, true) => Some(1),
        (BinOp::Slt, i64::MIN, false) | (BinOp::Sgt, i64::MIN, true) => Some(0),
        (BinOp::Sge, i64::MIN, false) | (BinOp::Sle, i64::MIN, true) => Some(1),
        (BinOp::Sgt, i64::MAX, false) | (BinOp::Slt, i64::MAX, true) => Some(0),
        (BinOp::Sle, i64::MAX, false) | (BinOp::Sge, i64::MAX, true) => Some(1),
        (BinOp::Ugt, -1, false) | (BinOp::Ult, -1, true) => Some(0),
        (BinOp::Ule, -1, false) | (BinOp::Uge, -1, true) => Some(1),
        _ => None,
    }
}

/// Whether, with `h` jumping only to `s`, no predecessor of `h` in `preds`
/// other than `p` is reachable from the entry.
fn only_pred_reachable(
    func: &Function,
    h: Block,
    s: Block,
    p: Block,
    preds: impl Iterator<Item = Block>,
) -> bool {
    let mut seen = vec![false; func.blocks.len()];
    let mut stack = vec![func.entry()];
    seen[func.entry().index()] = true;
    while let Some(b) = stack.pop() {
        let mut visit = |x: Block| {
            if !seen[x.index()] {
                seen[x.index()] = true;
                stack.push(x);
            }
        };
        if b == h {
            visit(s);
        } else if let Some(t) = func.terminator(b) {
            func.inst(t).kind.successors().for_each(visit);
        }
    }
    let mut preds = preds;
    preds.all(|q| q == p || !seen[q.index()])
}
