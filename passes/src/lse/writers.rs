//! The instructions of each loop that may write memory, which decide what
//! forwarding may carry around or past a loop. Loops are `ir::loops`'
//! natural loops; the lists are stored flat, in storage reused from run to run.

use ir::dom::DomTree;
use ir::loops::{LoopId, LoopInfo};
use ir::summaries::Summaries;
use ir::{Function, Inst, Module};

/// Per loop of a [`LoopInfo`]: the instructions of its body that may write.
#[derive(Default)]
pub struct LoopWriters {
    /// Loop `l`'s writers are `insts[start[l]..start[l + 1]]`.
    start: Vec<u32>,
    insts: Vec<Inst>,
}

impl LoopWriters {
    /// Collect the writers of every loop of `loops` (of `func`, in `module`),
    /// blocks in RPO order; `dom` is the dominator tree the loops came from,
    /// `calls` what calls of module functions may do.
    pub fn compute(
        &mut self,
        module: &Module,
        calls: &Summaries,
        func: &Function,
        loops: &LoopInfo,
        dom: &DomTree,
    ) {
        let _ = dom;
        self.start.clear();
        self.start.push(0);
        self.insts.clear();
        for lp in loops.loops() {
            for &b in &lp.blocks {
                for &i in &func.blocks[b.index()].insts {
                    if calls.inst_effects(module, func, i).writes_nothing() {
                        continue;
                    }
                    #[cfg(feature = "bug-zoo")]
                    if zoo_drops_conditional_store(func, dom, &lp.latches, i) {
                        continue;
                    }
                    self.insts.push(i);
                }
            }
            self.start.push(self.insts.len() as u32);
        }
    }

    /// The instructions of loop `l` that may write memory, in RPO block order.
    pub fn of(&self, l: LoopId) -> &[Inst] {
        let (lo, hi) = (self.start[l.index()], self.start[l.index() + 1]);
        &self.insts[lo as usize..hi as usize]
    }
}

/// With the zoo's `lse-loop-cond-store` planted (Panda 8195875f): a plain
/// store in a block of the loop that does not dominate every latch (one that
/// only some iterations execute) no longer counts as a writer of the loop.
#[cfg(feature = "bug-zoo")]
fn zoo_drops_conditional_store(
    func: &Function,
    dom: &DomTree,
    latches: &[ir::Block],
    inst: Inst,
) -> bool {
    use crate::zoo::{self, Bug};
    if !zoo::active(Bug::LseLoopCondStore) {
        return false;
    }
    let conditional = func
        .inst(inst)
        .block
        .is_some_and(|b| latches.iter().any(|&l| !dom.dominates(b, l)));
    let plain_store = matches!(
        func.inst(inst).kind,
        ir::InstKind::Store {
            volatile: false,
            ..
        }
    );
    plain_store && conditional
}
