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
//! [`MAX_WALKS`] times per function and run. A candidate whose kept
//! successor is itself another predecessor of `h` (a one-block loop body
//! entered on its first visit) would fail the walk, so it is rejected
//! without one, leaving the walks to later branches. Counters:
//! `dce.branches_decided_on_entry`, `dce.decided_branch_walks_spared`.

use crate::certain_traps::drop_phi_entries;
use crate::stats::Stats;
use ir::effects::local_inst_effects;
use ir::{BinOp, Block, Function, InstKind, Value, ValueDef};
use smallvec::SmallVec;

/// Reachability walks per function and run (keeps the pass linear).
pub(crate) const MAX_WALKS: usize = 4;

/// How deep the condition's expression in its block is followed.
const MAX_DEPTH: u32 = 6;

/// Fold each branch of `func` decided by the one predecessor that can enter
/// its block. Whether anything changed.
pub(crate) fn fold_decided_branches(func: &mut Function, stats: &mut Stats) -> bool {
    let mut walk = Walk::default();
    let mut changed = false;
    for k in 0..func.layout.len() {
        if walk.walks == MAX_WALKS {
            break;
        }
        let h = func.layout[k];
        if let Some((s, other)) = decided_on_entry(func, h, &mut walk) {
            let term = func.terminator(h).expect("decided_on_entry saw a br");
            func.insts[term.index()].kind = InstKind::Jmp(s);
            drop_phi_entries(func, other, h);
            stats.add("dce", "branches_decided_on_entry", 1);
            changed = true;
        } else if let Some(latches) = back_edges_never_taken(func, h) {
            for &(q, exit) in &latches {
                let term = func.terminator(q).expect("back_edges_never_taken saw a br");
                func.insts[term.index()].kind = InstKind::Jmp(exit);
                drop_phi_entries(func, h, q);
            }
            stats.add("dce", "back_edges_never_taken", latches.len() as u64);
            changed = true;
        } else if let Some((q, exit)) = back_edge_taken_once(func, h, &mut walk) {
            let term = func.terminator(q).expect("back_edge_taken_once saw a jmp");
            func.insts[term.index()].kind = InstKind::Jmp(exit);
            drop_phi_entries(func, h, q);
            stats.add("dce", "back_edges_taken_once", 1);
            changed = true;
        }
    }
    if walk.spared > 0 {
        stats.add("dce", "decided_branch_walks_spared", walk.spared);
    }
    changed
}

/// A loop tested at its top that runs its body at most once per entry
/// (issue 13): header `h` with two predecessors, its entry `p` and a latch
/// `q` it dominates, ending in `jmp h`; `h` ends in `br c` and holds no
/// instruction with effects. If `c` on a visit from `q` right after one
/// from `p` ([`eval_second_visit`]: the phis' `q` values computed from
/// their constant `p` values, `phi [p: 0], [q: add %i, 1]` with `slt %i,
/// 1`) picks the exit `s` (no phis), and no block reachable from `s`
/// without passing `h` is `q` or uses a value of `h`, then `q` may jump to
/// `s` itself: the back edge goes and the body runs once per entry. Why:
/// take the first visit from `q` that would not go to `s`; the visit
/// before it was not from `q` (that one went to `s`, from where `q` is
/// reached only through `h`), so it was from `p`, and `c` picks `s` — a
/// contradiction. The skipped visit computes nothing used after `s`.
/// The latch and exit, when it applies.
fn back_edge_taken_once(func: &Function, h: Block, walk: &mut Walk) -> Option<(Block, Block)> {
    let insts = &func.blocks[h.index()].insts;
    let InstKind::Phi(first) = &func.inst(*insts.first()?).kind else {
        return None;
    };
    let &[(a, _), (b, _)] = first.as_slice() else {
        return None;
    };
    let InstKind::Br(c, t, e) = func.inst(func.terminator(h)?).kind else {
        return None;
    };
    let is_latch = |q: Block| {
        q != h
            && func
                .terminator(q)
                .is_some_and(|j| func.inst(j).kind == InstKind::Jmp(h))
    };
    if t == e {
        return None;
    }
    for (p, q) in [(a, b), (b, a)] {
        if !is_latch(q) || walk.walks + 2 > MAX_WALKS {
            continue;
        }
        let Some(k) = eval_second_visit(func, h, p, q, c) else {
            continue;
        };
        let s = if k != 0 { t } else { e };
        if s == h
            || func.blocks[s.index()]
                .insts
                .first()
                .is_none_or(|&i| func.inst(i).kind.is_phi())
        {
            continue;
        }
        let pure = insts[..insts.len() - 1].iter().all(|&i| {
            func.inst(i).kind.is_phi() || local_inst_effects(func, i).is_some_and(|x| x.is_pure())
        });
        if pure
            && walk.only_pred_reachable(func, h, None, p, [q].into_iter())
            && walk.only_s_reaches_nothing_of(func, h, s, q)
        {
            return Some((q, s));
        }
    }
    None
}

/// The latches of block `h` whose back edges are never taken, each with
/// the successor it always takes instead, when `h` has one other
/// predecessor `p` (its entry) and every other predecessor `q` ends in `br
/// c, ...` with `h` as one target and `c` a constant that leaves `h` once
/// the phis of `h` hold their values from `p`. Then no back edge is ever
/// taken: until the first one is, `h` is only entered from `p`, its phis
/// hold their `p` values, and every value computed from them is that
/// constant, so the latch leaves the loop — the loop body runs at most
/// once per entry.
fn back_edges_never_taken(func: &Function, h: Block) -> Option<SmallVec<[(Block, Block); 2]>> {
    let &first_inst = func.blocks[h.index()].insts.first()?;
    let InstKind::Phi(first) = &func.inst(first_inst).kind else {
        return None;
    };
    if first.len() < 2 {
        return None;
    }
    'entry: for &(p, _) in first.iter() {
        let mut latches = SmallVec::new();
        for &(q, _) in first.iter().filter(|&&(q, _)| q != p) {
            let term = func.terminator(q)?;
            let InstKind::Br(c, t, e) = func.inst(term).kind else {
                continue 'entry;
            };
            if (t == h) == (e == h) {
                continue 'entry;
            }
            let Some(k) = eval(func, h, p, c, MAX_DEPTH) else {
                continue 'entry;
            };
            let taken = if k != 0 { t } else { e };
            if taken == h {
                continue 'entry;
            }
            latches.push((q, taken));
        }
        if !latches.is_empty() {
            return Some(latches);
        }
    }
    None
}

/// If block `h`'s branch is decided as described in the module header:
/// the successor it always takes and the one it never does.
fn decided_on_entry(func: &Function, h: Block, walk: &mut Walk) -> Option<(Block, Block)> {
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
    // The direction on each edge, where a constant decides it.
    let taken: SmallVec<[Option<bool>; 4]> = first
        .iter()
        .map(|&(p, _)| eval(func, h, p, c, MAX_DEPTH).map(|k| k != 0))
        .collect();
    let pick = |taken: bool| if taken { (t, e) } else { (e, t) };
    // Decided the same way on every edge: no walk needed.
    if let Some(&Some(k)) = taken.first() {
        if taken.iter().all(|&x| x == Some(k)) {
            return Some(pick(k));
        }
    }
    for (n, &(p, _)) in first.iter().enumerate() {
        let Some(k) = taken[n] else {
            continue;
        };
        if first.iter().filter(|&&(q, _)| q == p).count() > 1 {
            continue;
        }
        let (s, other) = pick(k);
        if first.iter().any(|&(q, _)| q == s && q != p) {
            // `s` is itself another way into `h` (a one-block loop body):
            // once `h` jumps to `s` it is reachable, so the walk would fail.
            // Known without spending one of the function's walks.
            walk.spared += 1;
            continue;
        }
        if walk.only_pred_reachable(func, h, Some(s), p, first.iter().map(|&(q, _)| q)) {
            return Some((s, other));
        }
        if walk.walks == MAX_WALKS {
            return None;
        }
    }
    None
}

/// The constant `v` has when the phis of `h` hold their (constant) values
/// from predecessor `p`, if pure operations on those and on constants make
/// it one (wherever they are: a value with a phi of `h` among its leaves is
/// computed after `h`, from that visit's phis).
fn eval(func: &Function, h: Block, p: Block, v: Value, depth: u32) -> Option<i64> {
    eval_after(func, h, (p, None), v, depth)
}

/// [`eval`] on a visit of `h` entered from `q` right after a visit
/// entered from `p`: the phis hold their values from `q`, each computed (by
/// pure operations) from the phis at their (constant) values from `p`.
fn eval_second_visit(func: &Function, h: Block, p: Block, q: Block, v: Value) -> Option<i64> {
    eval_after(func, h, (q, Some(p)), v, MAX_DEPTH)
}

/// [`eval`] with the phis of `h` at their values from `edge.0`: constants,
/// or, with `edge.1 = Some(p)`, values computed from the phis at their
/// values from `p` (see [`eval_second_visit`]).
fn eval_after(
    func: &Function,
    h: Block,
    edge: (Block, Option<Block>),
    v: Value,
    depth: u32,
) -> Option<i64> {
    let p = edge.0;
    let i = match func.value_def(v) {
        ValueDef::Const(k) => return Some(k),
        ValueDef::Inst(i) if depth > 0 => i,
        _ => return None,
    };
    let d = depth - 1;
    let data = func.inst(i);
    match &data.kind {
        // The value on the edge, not followed further: a value of `h` on a
        // back edge is the previous iteration's.
        InstKind::Phi(entries) if data.block == Some(h) => {
            let &(_, x) = entries.iter().find(|&&(q, _)| q == p)?;
            match edge.1 {
                Some(before) => eval(func, h, before, x, d),
                None => func.as_const(x),
            }
        }
        InstKind::Binary(op, a, b) => {
            let (x, y) = (
                eval_after(func, h, edge, *a, d),
                eval_after(func, h, edge, *b, d),
            );
            match (x, y) {
                (Some(x), Some(y)) => op.eval(x, y),
                (Some(k), None) | (None, Some(k)) => absorbs(*op, k, x.is_some()),
                (None, None) => None,
            }
        }
        InstKind::Unary(op, a) => Some(op.eval(eval_after(func, h, edge, *a, d)?)),
        InstKind::Select(c, a, b) => {
            let pick = if eval_after(func, h, edge, *c, d)? != 0 {
                a
            } else {
                b
            };
            eval_after(func, h, edge, *pick, d)
        }
        _ => None,
    }
}

/// The result of `op` when one operand is the constant `k` (on the left
/// when `left`) and the other is unknown, if `k` decides it (`and 0`,
/// `or -1`, `mul 0`, `ult x, 0`, `uge x, 0`, …).
pub(crate) fn absorbs(op: BinOp, k: i64, left: bool) -> Option<i64> {
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

/// The reachability walks of one function: how many ran, and their storage.
#[derive(Default)]
pub(crate) struct Walk {
    /// How many walks ran (callers stop at [`MAX_WALKS`]).
    pub(crate) walks: usize,
    /// Candidates rejected without a walk (`dce.decided_branch_walks_spared`).
    spared: u64,
    seen: Vec<bool>,
    stack: Vec<Block>,
}

impl Walk {
    /// Whether the blocks reachable from `s` without passing `h` do not
    /// include `q` and use no value defined in `h` ([`back_edge_taken_once`]).
    fn only_s_reaches_nothing_of(&mut self, func: &Function, h: Block, s: Block, q: Block) -> bool {
        self.walks += 1;
        let Walk { seen, stack, .. } = self;
        seen.clear();
        seen.resize(func.blocks.len(), false);
        stack.clear();
        stack.push(s);
        seen[s.index()] = true;
        seen[h.index()] = true;
        let in_h = |v: Value| {
            func.def_inst(v)
                .is_some_and(|d| func.inst(d).block == Some(h))
        };
        while let Some(b) = stack.pop() {
            if b == q {
                return false;
            }
            for &i in &func.blocks[b.index()].insts {
                let mut uses = false;
                func.inst(i).kind.for_each_operand(|v| uses |= in_h(v));
                if uses {
                    return false;
                }
            }
            if let Some(t) = func.terminator(b) {
                for x in func.inst(t).kind.successors() {
                    if !seen[x.index()] {
                        seen[x.index()] = true;
                        stack.push(x);
                    }
                }
            }
        }
        true
    }

    /// Whether, with `h` jumping only to `s` (nowhere if `None`), no
    /// predecessor of `h` in `preds` other than `p` is reachable from the entry.
    pub(crate) fn only_pred_reachable(
        &mut self,
        func: &Function,
        h: Block,
        s: Option<Block>,
        p: Block,
        mut preds: impl Iterator<Item = Block>,
    ) -> bool {
        self.walks += 1;
        let Walk { seen, stack, .. } = self;
        seen.clear();
        seen.resize(func.blocks.len(), false);
        stack.clear();
        stack.push(func.entry());
        seen[func.entry().index()] = true;
        while let Some(b) = stack.pop() {
            let mut visit = |x: Block| {
                if !seen[x.index()] {
                    seen[x.index()] = true;
                    stack.push(x);
                }
            };
            if b == h {
                s.into_iter().for_each(&mut visit);
            } else if let Some(t) = func.terminator(b) {
                func.inst(t).kind.successors().for_each(visit);
            }
        }
        preds.all(|q| q == p || !seen[q.index()])
    }
}
