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
//! Counters: `dce.certain_traps` (blocks cut after a certain trap),
//! `dce.certain_traps_to_checks` (accesses that became their check alone),
//! `dce.certain_trap_operands_dropped` (divisions by `0` whose dividend went),
//! `dce.insts_after_certain_trap` (instructions removed after one).

use crate::stats::Stats;
use ir::effects::{certain_trap, CertainTrap};
use ir::{Block, Function, InstKind};

/// Cut every block of `func` after its first certain trap. Whether anything changed.
pub(crate) fn fold_certain_traps(func: &mut Function, stats: &mut Stats) -> bool {
    let mut changed = false;
    for k in 0..func.layout.len() {
        let b = func.layout[k];
        changed |= cut_block(func, b, stats);
    }
    changed
}

/// Cut block `b` after its first certain trap, if it has one before its terminator.
fn cut_block(func: &mut Function, b: Block, stats: &mut Stats) -> bool {
    let insts = &func.blocks[b.index()].insts;
    let Some((pos, how)) = insts
        .iter()
        .enumerate()
        .find_map(|(k, &i)| certain_trap(func, i).map(|how| (k, how)))
    else {
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
    func.append_inst(b, InstKind::Unreachable, None);
    stats.add("dce", "certain_traps", 1);
    stats.add("dce", "insts_after_certain_trap", gone.len() as u64 - 1);
    true
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
