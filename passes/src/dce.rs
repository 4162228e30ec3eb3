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
use ir::effects::inst_effects;
use ir::reuse::with_reused;
use ir::{Block, FuncId, Function, Inst, InstKind, Module};
use std::cell::RefCell;

/// The `dce` pass.
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&self, module: &mut Module, stats: &mut Stats) -> bool {
        with_reused(&SCRATCH, |scratch| {
            let mut changed = false;
            for i in 0..module.funcs.len() {
                changed |= remove_unreachable_blocks(&mut module.funcs[i], stats, scratch);
                changed |= remove_dead_insts(module, FuncId::new(i), stats, scratch);
            }
            changed
        })
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Storage reused from function to function and run to run.
#[derive(Default)]
struct Scratch {
    /// Per block, a [`Reach`] state.
    reach: Vec<u8>,
    /// Per instruction: live.
    live: Vec<bool>,
    blocks: Vec<Block>,
    insts: Vec<Inst>,
}

/// Reachability states of a block during [`mark_reachable`].
struct Reach;

impl Reach {
    const NOT_IN_LAYOUT: u8 = 0;
    const UNREACHED: u8 = 1;
    const REACHED: u8 = 2;
}

/// Set `scratch.reach` to the reachability of every block, as
/// [`ir::cfg::Cfg`] sees it: only layout blocks exist, and a block's
/// successors are the layout blocks its last instruction branches to.
fn mark_reachable(func: &Function, scratch: &mut Scratch) {
    let n = func.blocks.len();
    let reach = &mut scratch.reach;
    reach.clear();
    reach.resize(n, Reach::NOT_IN_LAYOUT);
    for &b in &func.layout {
        if let Some(r) = reach.get_mut(b.index()) {
            *r = Reach::UNREACHED;
        }
    }
    let stack = &mut scratch.blocks;
    stack.clear();
    if let Some(&entry) = func.layout.first().filter(|e| e.index() < n) {
        reach[entry.index()] = Reach::REACHED;
        stack.push(entry);
    }
    while let Some(b) = stack.pop() {
        let Some(&last) = func.blocks[b.index()].insts.last() else {
            continue;
        };
        let Some(data) = func.insts.get(last.index()) else {
            continue;
        };
        for s in data.kind.successors() {
            if reach.get(s.index()) == Some(&Reach::UNREACHED) {
                reach[s.index()] = Reach::REACHED;
                stack.push(s);
            }
        }
    }
}

/// Delete blocks the entry does not reach and the phi entries that name them.
fn remove_unreachable_blocks(
    func: &mut Function,
    stats: &mut Stats,
    scratch: &mut Scratch,
) -> bool {
    if func.layout.is_empty() {
        return false;
    }
    mark_reachable(func, scratch);
    let reach = &scratch.reach;
    let is_dead = |b: Block| reach.get(b.index()) != Some(&Reach::REACHED);
    if !func.layout.iter().any(|&b| is_dead(b)) {
        return false;
    }
    let dead: Vec<Block> = func
        .layout
        .iter()
        .copied()
        .filter(|&b| is_dead(b))
        .collect();
    for &b in &dead {
        func.remove_block(b);
    }
    func.for_each_placed_kind_mut(|kind| {
        if let InstKind::Phi(entries) = kind {
            entries.retain(|(pred, _)| !dead.contains(pred));
        }
    });
    stats.add("dce", "blocks_removed", dead.len() as u64);
    true
}

/// Mark live from the roots, then remove everything unmarked.
fn remove_dead_insts(
    module: &mut Module,
    fid: FuncId,
    stats: &mut Stats,
    scratch: &mut Scratch,
) -> bool {
    let func = &module.funcs[fid.index()];
    let live = &mut scratch.live;
    live.clear();
    live.resize(func.insts.len(), false);
    let work = &mut scratch.insts;
    work.clear();
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
    // Unlink the dead (nothing changes when everything is live).
    let Function {
        layout,
        blocks,
        insts,
        ..
    } = &mut module.funcs[fid.index()];
    let (mut removed, mut phis) = (0u64, 0u64);
    for b in layout.iter() {
        blocks[b.index()].insts.retain(|i| {
            if !live[i.index()] {
                removed += 1;
                phis += u64::from(insts[i.index()].kind.is_phi());
                insts[i.index()].block = None;
            }
            live[i.index()]
        });
    }
    if removed == 0 {
        return false;
    }
    stats.add("dce", "insts_removed", removed - phis);
    stats.add("dce", "phis_removed", phis);
    true
}
