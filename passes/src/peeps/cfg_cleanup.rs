//! CFG cleanup between peephole rounds: delete blocks the entry no longer
//! reaches (dropping the phi entries that named them), and merge a block into
//! its single predecessor when that predecessor jumps only to it.

use super::engine::Engine;
use ir::cfg::Cfg;
use ir::{Block, Inst, InstKind};

impl Engine<'_> {
    /// Run both cleanups; returns whether anything changed. Expects compacted blocks.
    pub(crate) fn cleanup_cfg(&mut self) -> bool {
        let removed = self.remove_unreachable();
        self.compact();
        let merged = self.merge_blocks();
        removed || merged
    }

    fn remove_unreachable(&mut self) -> bool {
        let cfg = Cfg::new(self.func);
        let dead: Vec<Block> = self
            .func
            .layout
            .iter()
            .copied()
            .filter(|&b| !cfg.is_reachable(b))
            .collect();
        if dead.is_empty() {
            return false;
        }
        for &b in &dead {
            for inst in std::mem::take(&mut self.func.blocks[b.index()].insts) {
                self.detach(inst);
            }
        }
        self.func.layout.retain(|&b| cfg.is_reachable(b));
        for b in self.func.layout.clone() {
            let phis: Vec<Inst> = self.phis_of(b);
            for p in phis {
                let mut changed = false;
                if let InstKind::Phi(entries) = &mut self.func.insts[p.index()].kind {
                    let before = entries.len();
                    entries.retain(|(pred, _)| cfg.is_reachable(*pred));
                    changed = entries.len() != before;
                }
                if changed {
                    self.changed(p);
                }
            }
        }
        self.report.blocks_removed += dead.len() as u64;
        true
    }

    fn phis_of(&self, b: Block) -> Vec<Inst> {
        self.func.blocks[b.index()]
            .insts
            .iter()
            .copied()
            .filter(|&i| self.placed(i) && self.func.insts[i.index()].kind.is_phi())
            .collect()
    }

    fn merge_blocks(&mut self) -> bool {
        let cfg = Cfg::new(self.func);
        let mut preds: Vec<Vec<Block>> = (0..self.func.blocks.len())
            .map(|b| cfg.preds(Block::new(b)).to_vec())
            .collect();
        let entry = self.func.entry();
        let mut gone = vec![false; self.func.blocks.len()];
        for a in self.func.layout.clone() {
            if gone[a.index()] {
                continue;
            }
            while let Some(term) = self.func.terminator(a) {
                let InstKind::Jmp(b) = self.func.insts[term.index()].kind else {
                    break;
                };
                if b == a || b == entry || preds[b.index()] != [a] {
                    break;
                }
                self.merge(a, b, term, &mut preds);
                gone[b.index()] = true;
            }
        }
        let any = gone.iter().any(|&g| g);
        if any {
            self.func.layout.retain(|&x| !gone[x.index()]);
        }
        any
    }

    /// Move `b`'s instructions to the end of `a` (whose terminator `term` jumps to `b`).
    fn merge(&mut self, a: Block, b: Block, term: Inst, preds: &mut [Vec<Block>]) {
        for phi in self.phis_of(b) {
            let v = match &self.func.insts[phi.index()].kind {
                InstKind::Phi(entries) => entries.first().map(|e| e.1),
                _ => None,
            };
            if let Some(v) = v {
                self.collapse_single_entry_phi(phi, v);
            }
        }
        self.func.insts[term.index()].block = None;
        self.func.blocks[a.index()].insts.pop();
        for inst in std::mem::take(&mut self.func.blocks[b.index()].insts) {
            if self.placed(inst) {
                self.func.insts[inst.index()].block = Some(a);
                self.func.blocks[a.index()].insts.push(inst);
            }
        }
        for s in self.func.successors(a) {
            for p in &mut preds[s.index()] {
                if *p == b {
                    *p = a;
                }
            }
            for phi in self.phis_of(s) {
                if let InstKind::Phi(entries) = &mut self.func.insts[phi.index()].kind {
                    for e in entries.iter_mut() {
                        if e.0 == b {
                            e.0 = a;
                        }
                    }
                }
                self.changed(phi);
            }
        }
        self.report.blocks_merged += 1;
    }
}
