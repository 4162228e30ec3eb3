//! Dead code elimination (`dce`).
//!
//! Removes blocks no path from the entry reaches (fixing the phis of their
//! successors), then every instruction whose result nothing live uses and whose
//! effects allow removal: it writes nothing but the allocator's state and can
//! trap at most on resource limits (IR.md §7 makes those runs inconclusive).
//! Liveness is computed by marking from the roots (terminators and instructions
//! with effects), so dead phi cycles go too. What an instruction may do is
//! asked of the effects table, never decided here.

use crate::manager::Pass;
use crate::stats::Stats;
use ir::cfg::Cfg;
use ir::effects::inst_effects;
use ir::{Block, FuncId, Function, Inst, InstKind, Module};

/// The `dce` pass.
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&self, module: &mut Module, stats: &mut Stats) -> bool {
        let mut changed = false;
        for i in 0..module.funcs.len() {
            changed |= remove_unreachable_blocks(&mut module.funcs[i], stats);
            changed |= remove_dead_insts(module, FuncId::new(i), stats);
        }
        changed
    }
}

/// Delete blocks the entry does not reach and the phi entries that name them.
fn remove_unreachable_blocks(func: &mut Function, stats: &mut Stats) -> bool {
    if func.layout.is_empty() {
        return false;
    }
    let cfg = Cfg::new(func);
    let dead: Vec<Block> = func
        .layout
        .iter()
        .copied()
        .filter(|&b| !cfg.is_reachable(b))
        .collect();
    if dead.is_empty() {
        return false;
    }
    for &b in &dead {
        func.remove_block(b);
    }
    for b in func.layout.clone() {
        for &inst in &func.blocks[b.index()].insts {
            if let InstKind::Phi(entries) = &mut func.insts[inst.index()].kind {
                entries.retain(|(pred, _)| !dead.contains(pred));
            }
        }
    }
    stats.add("dce", "blocks_removed", dead.len() as u64);
    true
}

/// Mark live from the roots, then remove everything unmarked.
fn remove_dead_insts(module: &mut Module, fid: FuncId, stats: &mut Stats) -> bool {
    let func = &module.funcs[fid.index()];
    let mut live = vec![false; func.insts.len()];
    let mut work: Vec<Inst> = Vec::new();
    for inst in func.inst_iter() {
        let data = func.inst(inst);
        if data.kind.is_terminator() || !inst_effects(module, func, inst).removable_if_unused() {
            live[inst.index()] = true;
            work.push(inst);
        }
    }
    while let Some(inst) = work.pop() {
        func.inst(inst).kind.for_each_operand(|v| {
            if let Some(def) = func.def_inst(v) {
                if !live[def.index()] {
                    live[def.index()] = true;
                    work.push(def);
                }
            }
        });
    }
    let dead: Vec<Inst> = func.inst_iter().filter(|i| !live[i.index()]).collect();
    if dead.is_empty() {
        return false;
    }
    let phis = dead.iter().filter(|&&i| func.inst(i).kind.is_phi()).count() as u64;
    let func = &mut module.funcs[fid.index()];
    for b in func.layout.clone() {
        let insts = &mut func.blocks[b.index()].insts;
        insts.retain(|i| live[i.index()]);
    }
    for &i in &dead {
        func.insts[i.index()].block = None;
    }
    stats.add("dce", "insts_removed", dead.len() as u64 - phis);
    stats.add("dce", "phis_removed", phis);
    true
}
