//! CFG cleanup between peephole rounds: delete blocks the entry no longer
//! reaches (dropping the phi entries that named them), and merge a block into
//! its single predecessor when that predecessor jumps only to it. Both work
//! on a [`BlockGraph`] kept in the engine's reused buffers.

use super::block_graph::BlockGraph;
use super::engine::Engine;
use ir::{Block, Inst, InstKind};
use smallvec::SmallVec;

impl Engine<'_> {
    /// Run both cleanups; returns whether anything changed. Expects compacted blocks.
    pub(crate) fn cleanup_cfg(&mut self) -> bool {
        let removed = self.remove_unreachable();
        let lost_a_last = self.compact();
        // The graph `remove_unreachable` computed is still the CFG unless
        // it removed something.
        let merged = self.merge_blocks(removed || lost_a_last);
        removed || merged
    }

    fn remove_unreachable(&mut self) -> bool {
        let mut graph = std::mem::take(&mut self.s.bufs.graph);
        graph.compute(self.func);
        let is_reachable = |b: Block| graph.is_reachable(b);
        let mut dead = std::mem::take(&mut self.s.bufs.dead);
        dead.clear();
        dead.extend(
            self.func
                .layout
                .iter()
                .copied()
                .filter(|&b| !is_reachable(b)),
        );
        if dead.is_empty() {
            self.s.bufs.dead = dead;
            self.s.bufs.graph = graph;
            return false;
        }
        self.before_cfg_change();
        for &b in &dead {
            for inst in std::mem::take(&mut self.func.blocks[b.index()].insts) {
                self.detach(inst);
            }
        }
        self.func.layout.retain(|&b| is_reachable(b));
        for k in 0..self.func.layout.len() {
            let b = self.func.layout[k];
            let phis = self.take_phis_of(b);
            for &p in &phis {
                let mut changed = false;
                if let InstKind::Phi(entries) = &mut self.func.insts[p.index()].kind {
                    let before = entries.len();
                    entries.retain(|(pred, _)| is_reachable(*pred));
                    changed = entries.len() != before;
                }
                if changed {
                    self.changed(p);
                }
            }
            self.s.bufs.phis = phis;
        }
        self.report.blocks_removed += dead.len() as u64;
        self.s.bufs.dead = dead;
        self.s.bufs.graph = graph;
        true
    }

    /// Merge blocks; `graph_stale` when `bufs.graph` no longer describes the CFG.
    fn merge_blocks(&mut self, graph_stale: bool) -> bool {
        let n = self.func.blocks.len();
        let mut graph = std::mem::take(&mut self.s.bufs.graph);
        if graph_stale {
            graph.compute(self.func);
        }
        let entry = self.func.entry();
        let mut gone = std::mem::take(&mut self.s.bufs.gone);
        gone.clear();
        gone.resize(n, false);
        let mut any = false;
        for k in 0..self.func.layout.len() {
            let a = self.func.layout[k];
            if gone[a.index()] {
                continue;
            }
            while let Some(term) = self.func.terminator(a) {
                let InstKind::Jmp(b) = self.func.insts[term.index()].kind else {
                    break;
                };
                if b == a || b == entry || graph.preds(b) != [a] {
                    break;
                }
                if !any {
                    self.before_cfg_change();
                }
                self.merge(a, b, term, &mut graph);
                gone[b.index()] = true;
                any = true;
            }
        }
        if any {
            self.func.layout.retain(|&x| !gone[x.index()]);
        }
        self.s.bufs.graph = graph;
        self.s.bufs.gone = gone;
        any
    }

    /// Move `b`'s instructions to the end of `a` (whose terminator `term` jumps to `b`).
    fn merge(&mut self, a: Block, b: Block, term: Inst, graph: &mut BlockGraph) {
        let phis = self.take_phis_of(b);
        for &phi in &phis {
            let v = match &self.func.insts[phi.index()].kind {
                InstKind::Phi(entries) => entries.first().map(|e| e.1),
                _ => None,
            };
            if let Some(v) = v {
                self.collapse_single_entry_phi(phi, v);
            }
        }
        self.s.bufs.phis = phis;
        self.func.insts[term.index()].block = None;
        self.func.blocks[a.index()].insts.pop();
        for inst in std::mem::take(&mut self.func.blocks[b.index()].insts) {
            if self.placed(inst) {
                self.func.insts[inst.index()].block = Some(a);
                self.func.blocks[a.index()].insts.push(inst);
            }
        }
        let succs: SmallVec<[Block; 2]> = match self.func.terminator(a) {
            Some(t) => self.func.insts[t.index()].kind.successors().collect(),
            None => SmallVec::new(),
        };
        for s in succs {
            for p in graph.preds_mut(s) {
                if *p == b {
                    *p = a;
                }
            }
            let phis = self.take_phis_of(s);
            for &phi in &phis {
                if let InstKind::Phi(entries) = &mut self.func.insts[phi.index()].kind {
                    for e in entries.iter_mut() {
                        if e.0 == b {
                            e.0 = a;
                        }
                    }
                }
                self.changed(phi);
            }
            self.s.bufs.phis = phis;
        }
        self.report.blocks_merged += 1;
    }
}
