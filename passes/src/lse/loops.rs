//! The natural loops forwarding needs, as `ir::loops` finds them: a loop per
//! header `h` with a back edge (a predecessor `h` dominates), whose body is
//! `h` plus every block reaching a latch backwards without crossing `h`; and
//! the instructions of each body that may write memory. Stored flat, in
//! storage reused from run to run.

use crate::flow::Flow;
use ir::effects::inst_effects;
use ir::{Block, Function, Inst, Module};

/// No loop has this block as its header.
const NONE: u32 = u32::MAX;

/// The loops of one function, numbered in the reverse post-order of their headers.
#[derive(Default)]
pub struct LoopSet {
    /// Per block: the loop it heads.
    header_loop: Vec<u32>,
    /// Loop `l`'s body is `body[body_start[l]..body_start[l + 1]]`, in RPO order.
    body_start: Vec<u32>,
    body: Vec<Block>,
    /// The RPO positions of `body`, for membership tests.
    body_rpo: Vec<u32>,
    /// The instructions of loop `l` that may write, likewise.
    writer_start: Vec<u32>,
    writers: Vec<Inst>,
    mark: Vec<bool>,
    work: Vec<Block>,
    latches: Vec<Block>,
}

impl LoopSet {
    /// Find the loops of `func` (of `module`); `flow` has its dominators.
    pub fn compute(&mut self, module: &Module, func: &Function, flow: &Flow) {
        let n = func.blocks.len();
        self.header_loop.clear();
        self.header_loop.resize(n, NONE);
        self.mark.clear();
        self.mark.resize(n, false);
        self.body_start.clear();
        self.body_start.push(0);
        self.body.clear();
        self.body_rpo.clear();
        self.writer_start.clear();
        self.writer_start.push(0);
        self.writers.clear();
        for &h in flow.rpo() {
            self.latches.clear();
            for &p in flow.preds(h) {
                if flow.is_reachable(p) && flow.dominates(h, p) && !self.latches.contains(&p) {
                    self.latches.push(p);
                }
            }
            if self.latches.is_empty() {
                continue;
            }
            let id = self.body_start.len() - 1;
            self.header_loop[h.index()] = id as u32;
            self.collect_body(flow, h);
            self.collect_writers(module, func, flow, id);
        }
    }

    /// Append the body of the loop headed by `h` (latches in `self.latches`).
    fn collect_body(&mut self, flow: &Flow, h: Block) {
        let start = self.body.len();
        self.mark[h.index()] = true;
        self.body.push(h);
        self.work.clear();
        for &l in &self.latches {
            if !self.mark[l.index()] {
                self.mark[l.index()] = true;
                self.body.push(l);
                self.work.push(l);
            }
        }
        while let Some(b) = self.work.pop() {
            for &p in flow.preds(b) {
                if flow.is_reachable(p) && !self.mark[p.index()] {
                    self.mark[p.index()] = true;
                    self.body.push(p);
                    self.work.push(p);
                }
            }
        }
        let rpo_of = |b: &Block| flow.rpo_index(*b).unwrap_or(usize::MAX);
        self.body[start..].sort_unstable_by_key(rpo_of);
        for i in start..self.body.len() {
            let b = self.body[i];
            self.mark[b.index()] = false;
            self.body_rpo.push(rpo_of(&b) as u32);
        }
        self.body_start.push(self.body.len() as u32);
    }

    /// Append the instructions of loop `id` that do not write nothing.
    fn collect_writers(&mut self, module: &Module, func: &Function, flow: &Flow, id: usize) {
        let _ = flow;
        for k in self.body_start[id] as usize..self.body_start[id + 1] as usize {
            let b = self.body[k];
            for &i in &func.blocks[b.index()].insts {
                if inst_effects(module, func, i).writes_nothing() {
                    continue;
                }
                #[cfg(feature = "bug-zoo")]
                if zoo_drops_conditional_store(func, flow, &self.latches, i) {
                    continue;
                }
                self.writers.push(i);
            }
        }
        self.writer_start.push(self.writers.len() as u32);
    }

    /// The loop `b` is the header of, if any.
    pub fn loop_with_header(&self, b: Block) -> Option<usize> {
        match self.header_loop.get(b.index()) {
            Some(&l) if l != NONE => Some(l as usize),
            _ => None,
        }
    }

    /// Whether loop `l` contains `b` (nested loops' blocks included).
    pub fn contains(&self, flow: &Flow, l: usize, b: Block) -> bool {
        let Some(pos) = flow.rpo_index(b) else {
            return false;
        };
        let (lo, hi) = (self.body_start[l] as usize, self.body_start[l + 1] as usize);
        self.body_rpo[lo..hi].binary_search(&(pos as u32)).is_ok()
    }

    /// The instructions of loop `l` that may write memory, in RPO block order.
    pub fn writers(&self, l: usize) -> &[Inst] {
        &self.writers[self.writer_start[l] as usize..self.writer_start[l + 1] as usize]
    }
}

/// With the zoo's `lse-loop-cond-store` planted (Panda 8195875f): a plain
/// store in a block of the loop that does not dominate every latch (one that
/// only some iterations execute) no longer counts as a writer of the loop.
#[cfg(feature = "bug-zoo")]
fn zoo_drops_conditional_store(
    func: &Function,
    flow: &Flow,
    latches: &[Block],
    inst: Inst,
) -> bool {
    use crate::zoo::{self, Bug};
    if !zoo::active(Bug::LseLoopCondStore) {
        return false;
    }
    let conditional = func
        .inst(inst)
        .block
        .is_some_and(|b| latches.iter().any(|&l| !flow.dominates(b, l)));
    let plain_store = matches!(
        func.inst(inst).kind,
        ir::InstKind::Store {
            volatile: false,
            ..
        }
    );
    plain_store && conditional
}
