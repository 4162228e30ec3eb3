//! Certain traps (run by `dce`): an instruction that traps on every execution
//! reaching it ([`ir::effects::certain_trap`]: an access of the `null`
//! constant, `guard 0`, a division by `0`, a constant index out of range, …)
//! ends its block. It becomes the cheapest instruction that traps the same
//! way (`nullcheck null` for a `null`-based access, whatever its index; the
//! same kind, nothing read or written first; `sdiv 0, 0` for `sdiv %x, 0`),
//! so what computed a dropped operand may go (a load becomes its check,
//! which still comes first), everything after it in the block goes, and the
//! block ends in `unreachable` (never reached: the trap comes first, so the
//! trap kind, the trace and the heap at the trap are the original's). The
//! successors lose their phi entries for the block; blocks only reachable
//! through it are then unreachable and DCE deletes them.
//!
//! **On the first visit** ([`fold_first_visit_traps`], issue 13 plan 3): a
//! block `b` with phis whose predecessors other than one, `p`, are reachable
//! only through `b` (a loop header entered from `p`; the walk from the entry
//! with `b` going nowhere shows it) is first entered from `p`, with its phis
//! at their `p` values. If an instruction of `b` with those values in place
//! of the phis is a certain trap, the first visit reaches it (what comes
//! before it in `b` is kept, in order, so an earlier trap still wins) and
//! traps, so `b` never runs again: it is rewritten with the `p` values (they
//! dominate `b`, as `p` does) and cut there (`dce.first_visit_traps`).
//!
//! **After a guard**: `guard %c` passed means `%c` is non-zero for the rest
//! of its block; where that puts the length of a later `newarray` of the
//! block out of `0..=MAX_ARRAY_LEN` (`guard (slt %n, 0)`, then `newarray T,
//! %n`), the `newarray` certainly traps `bad_length` and ends the block the
//! same way (`dce.bad_lengths_after_guards`; the first
//! [`MAX_GUARDS`] guards of a block are asked).
//!
//! Counters: `dce.certain_traps` (blocks cut after a certain trap),
//! `dce.certain_traps_to_checks` (accesses that became their check alone),
//! `dce.certain_trap_operands_dropped` (divisions by `0` whose dividend went),
//! `dce.insts_after_certain_trap` (instructions removed after one).

use crate::decided_branches::{Walk, MAX_WALKS};
use crate::edge_facts::{implied_facts, IMPLIED_DEPTH};
use crate::edge_values::range_taught;
use crate::stats::Stats;
use ir::effects::{certain_trap, CertainTrap, MAX_ARRAY_LEN};
use ir::summaries::Summaries;
use ir::{Block, Function, Inst, InstKind, Value};
use smallvec::SmallVec;

/// Cut each block that certainly traps on its first visit (module header).
/// Whether anything changed.
pub(crate) fn fold_first_visit_traps(
    func: &mut Function,
    calls: &Summaries,
    stats: &mut Stats,
) -> bool {
    let mut walk = Walk::default();
    let mut changed = false;
    for k in 0..func.layout.len() {
        if walk.walks == MAX_WALKS {
            break;
        }
        let b = func.layout[k];
        let Some(&first) = func.blocks[b.index()].insts.first() else {
            continue;
        };
        let InstKind::Phi(entries) = &func.inst(first).kind else {
            continue;
        };
        let preds: SmallVec<[Block; 4]> = entries.iter().map(|&(p, _)| p).collect();
        for &p in preds.iter().take(2) {
            if p == b || preds.iter().filter(|&&q| q == p).count() > 1 {
                continue;
            }
            let Some((inst, kind)) = trap_with_values_from(func, b, p) else {
                continue;
            };
            // `b` itself goes nowhere in the walk: a self loop is a back edge.
            let others = preds.iter().copied().filter(|&q| q != b);
            if walk.only_pred_reachable(func, b, None, p, others) {
                func.insts[inst.index()].kind = kind;
                cut_block(func, b, calls, stats);
                stats.add("dce", "first_visit_traps", 1);
                changed = true;
                break;
            }
            if walk.walks == MAX_WALKS {
                break;
            }
        }
    }
    changed
}

/// The first instruction of `b` that certainly traps with the phis of `b`
/// at their values from predecessor `p`, and its kind with those values.
fn trap_with_values_from(func: &mut Function, b: Block, p: Block) -> Option<(Inst, InstKind)> {
    let value_from_p = |func: &Function, v: Value| -> Option<Value> {
        let d = func.def_inst(v)?;
        match &func.inst(d).kind {
            InstKind::Phi(entries) if func.inst(d).block == Some(b) => {
                entries.iter().find(|&&(q, _)| q == p).map(|&(_, x)| x)
            }
            _ => None,
        }
    };
    for k in 0..func.blocks[b.index()].insts.len().saturating_sub(1) {
        let i = func.blocks[b.index()].insts[k];
        // Only an instruction with a phi of `b` (that has a value from `p`)
        // among its operands reads something else on that visit.
        let data = func.inst(i);
        if data.kind.is_phi() {
            continue;
        }
        let mut reads_a_phi = false;
        data.kind
            .for_each_operand(|v| reads_a_phi |= value_from_p(func, v).is_some());
        if !reads_a_phi {
            continue;
        }
        let mut kind = data.kind.clone();
        kind.for_each_operand_mut(|v| {
            if let Some(x) = value_from_p(func, *v) {
                *v = x;
            }
        });
        let old = std::mem::replace(&mut func.insts[i.index()].kind, kind);
        let traps = certain_trap(func, i).is_some();
        let kind = std::mem::replace(&mut func.insts[i.index()].kind, old);
        if traps {
            return Some((i, kind));
        }
    }
    None
}

/// Cut every block of `func` after its first certain trap (or call of a
/// function that never returns, by `calls`). Whether anything changed.
pub(crate) fn fold_certain_traps(
    func: &mut Function,
    calls: &Summaries,
    stats: &mut Stats,
) -> bool {
    let mut changed = false;
    for k in 0..func.layout.len() {
        let b = func.layout[k];
        changed |= cut_block(func, b, calls, stats);
    }
    changed
}

/// Cut block `b` after its first certain trap, if it has one before its
/// terminator. A call of a function without `ret` ends the block the same
/// way: control never comes back from it (it traps or runs forever inside).
fn cut_block(func: &mut Function, b: Block, calls: &Summaries, stats: &mut Stats) -> bool {
    let insts = &func.blocks[b.index()].insts;
    let mut guards: SmallVec<[Value; MAX_GUARDS]> = SmallVec::new();
    let mut by_guard = false;
    let Some((pos, how)) = insts.iter().enumerate().find_map(|(k, &i)| {
        let kind = &func.inst(i).kind;
        let how = certain_trap(func, i)
            .or_else(|| {
                by_guard = bad_length_after_guards(func, &guards, kind);
                by_guard.then_some(CertainTrap::Keep)
            })
            .or_else(|| calls.never_returns(kind).then_some(CertainTrap::Keep))
            .map(|how| (k, how));
        if let InstKind::Guard(c) = *kind {
            if guards.len() < MAX_GUARDS {
                guards.push(c);
            }
        }
        how
    }) else {
        return false;
    };
    let trap = insts[pos];
    let rest = insts.len() - pos - 1;
    let ends_cut = rest == 1 && matches!(func.inst(insts[pos + 1]).kind, InstKind::Unreachable);
    if rest == 0 || (ends_cut && how == CertainTrap::Keep) {
        return false;
    }
    match how {
        CertainTrap::Check(check) => {
            let data = &mut func.insts[trap.index()];
            data.kind = check;
            data.result = None;
            stats.add("dce", "certain_traps_to_checks", 1);
        }
        CertainTrap::Operands(kind) => {
            func.insts[trap.index()].kind = kind;
            stats.add("dce", "certain_trap_operands_dropped", 1);
        }
        CertainTrap::Keep => {}
    }
    if ends_cut {
        return true;
    }
    let gone = func.blocks[b.index()].insts.split_off(pos + 1);
    let mut succs: Vec<Block> = Vec::new();
    for &i in &gone {
        let data = &mut func.insts[i.index()];
        data.block = None;
        succs.extend(data.kind.successors());
    }
    succs.sort_unstable();
    succs.dedup();
    for s in succs {
        drop_phi_entries(func, s, b);
    }
    if matches!(func.inst(trap).kind, InstKind::Call { .. }) {
        stats.add("dce", "calls_never_returning", 1);
    }
    if by_guard {
        stats.add("dce", "bad_lengths_after_guards", 1);
    }
    func.append_inst(b, InstKind::Unreachable, None);
    stats.add("dce", "certain_traps", 1);
    stats.add("dce", "insts_after_certain_trap", gone.len() as u64 - 1);
    true
}

/// How many guards of a block [`bad_length_after_guards`] asks (the first ones).
const MAX_GUARDS: usize = 4;

/// Whether `kind` is a `newarray` whose length one of `guards` (passed
/// earlier in the block, so their conditions are non-zero here) puts out of
/// what `newarray` accepts: `guard (slt %n, 0)` then `newarray T, %n`
/// traps `bad_length` (issue 13).
fn bad_length_after_guards(func: &Function, guards: &[Value], kind: &InstKind) -> bool {
    let InstKind::NewArray { len, .. } = *kind else {
        return false;
    };
    let mut bad = false;
    for &c in guards {
        implied_facts(func, c, true, IMPLIED_DEPTH, &mut |v, nonzero| {
            if let Some((x, lo, hi)) = range_taught(func, v, nonzero) {
                bad |= x == len && (hi < 0 || lo > MAX_ARRAY_LEN);
            }
        });
    }
    bad
}

/// Remove the entries for predecessor `pred` from the phis of `block` (the
/// edge `pred -> block` is gone).
pub(crate) fn drop_phi_entries(func: &mut Function, block: Block, pred: Block) {
    let Function { blocks, insts, .. } = func;
    for &i in &blocks[block.index()].insts {
        match &mut insts[i.index()].kind {
            InstKind::Phi(entries) => entries.retain(|&(p, _)| p != pred),
            _ => break,
        }
    }
}
