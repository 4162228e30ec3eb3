//! CFG cleanup between peephole rounds: delete blocks the entry no longer
//! reaches (dropping the phi entries that named them), and merge a block into
//! its single predecessor when that predecessor jumps only to it. Both work
//! on a [`BlockEdges`] kept in the engine's reused buffers.

use super::block_edges::BlockEdges;
use super::engine::Engine;
use ir::{Block, Inst, InstKind};
use smallvec::SmallVec;

impl Engine<'_> {
    /// Run both cleanups; returns whether anything changed. Expects compacted blocks.
    pub(crate) fn cleanup_cfg(&mut self) -> bool {
        let removed = self.remove_unreachable();
        let lost_a_last = self.compact();
        // The CFG `remove_unreachable` computed (and took the removed
        // blocks' edges out of) is still right unless a block lost its
        // terminator.
        let merged = self.merge_blocks(lost_a_last);
        removed || merged
    }

    /// Bring `s.bufs.cfg` up to date: recomputed unless no edge changed
    /// since it last was (the branch folds just before a cleanup compute it
    /// for the decided-branches walk, and at 100k instructions each
    /// recompute missed the cache on most blocks).
    pub(crate) fn current_edges(&mut self) {
        if !self.edges_current {
            self.s.bufs.cfg.recompute(self.func);
            self.edges_current = true;
        }
    }

    fn remove_unreachable(&mut self) -> bool {
        self.current_edges();
        let mut cfg = std::mem::take(&mut self.s.bufs.cfg);
        let is_reachable = |b: Block| cfg.is_reachable(b);
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
            self.s.bufs.cfg = cfg;
            return false;
        }
        self.ensure_users();
        self.before_cfg_change();
        for &b in &dead {
            for inst in std::mem::take(&mut self.func.blocks[b.index()].insts) {
                self.detach(inst);
            }
        }
        self.func.layout.retain(|&b| is_reachable(b));
        for k in 0..self.func.layout.len() {
            let b = self.func.layout[k];
            // Only an edge from a removed block leaves a phi entry to drop.
            if !cfg.has_dead_pred(b) {
                continue;
            }
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
        cfg.forget_edges_of(&dead);
        self.s.bufs.dead = dead;
        self.s.bufs.cfg = cfg;
        true
    }

    /// Merge blocks; `cfg_stale` when `bufs.cfg` no longer describes the CFG.
    ///
    /// The CFG is not recomputed after a merge: a predecessor entry naming a
    /// block merged away is read as the block it was merged into (edges out
    /// of the merged block now leave that one).
    fn merge_blocks(&mut self, cfg_stale: bool) -> bool {
        let n = self.func.blocks.len();
        let mut cfg = std::mem::take(&mut self.s.bufs.cfg);
        if cfg_stale {
            cfg.recompute(self.func);
        }
        let entry = self.func.entry();
        let mut merged_into = std::mem::take(&mut self.s.bufs.merged_into);
        merged_into.clear();
        merged_into.resize(n, None);
        let mut any = false;
        for k in 0..self.func.layout.len() {
            let a = self.func.layout[k];
            if merged_into[a.index()].is_some() {
                continue;
            }
            while let Some(term) = self.func.terminator(a) {
                let InstKind::Jmp(b) = self.func.insts[term.index()].kind else {
                    break;
                };
                if b == a || b == entry || !is_only_pred(&cfg, &merged_into, b, a) {
                    break;
                }
                if !any {
                    self.ensure_users();
                    self.before_cfg_change();
                }
                self.merge(a, b, term);
                merged_into[b.index()] = Some(a);
                any = true;
            }
        }
        if any {
            self.func
                .layout
                .retain(|&x| merged_into[x.index()].is_none());
        }
        self.s.bufs.cfg = cfg;
        self.s.bufs.merged_into = merged_into;
        any
    }

    /// Move `b`'s instructions to the end of `a` (whose terminator `term` jumps to `b`).
    fn merge(&mut self, a: Block, b: Block, term: Inst) {
        let phis = self.take_phis_of(b);
        if phis.is_empty() {
            self.phi_free_merges += 1;
        }
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

/// Whether the edge from `a` is the only predecessor edge of `b` in `cfg`,
/// reading each predecessor as the block it was (transitively) merged into.
fn is_only_pred(cfg: &BlockEdges, merged_into: &[Option<Block>], b: Block, a: Block) -> bool {
    let Some(mut p) = cfg.single_pred(b) else {
        return false;
    };
    while let Some(q) = merged_into[p.index()] {
        p = q;
    }
    p == a
}
