//! CFG cleanup between peephole rounds: delete blocks the entry no longer
//! reaches (dropping the phi entries that named them), and merge a block into
//! its single predecessor when that predecessor jumps only to it. Both start
//! from the engine's cached CFG when no edge changed since it was computed.

use super::engine::Engine;
use ir::{Block, Inst, InstKind};
use smallvec::SmallVec;

impl Engine<'_> {
    /// Run both cleanups; returns whether anything changed. Expects compacted blocks.
    pub(crate) fn cleanup_cfg(&mut self) -> bool {
        let removed = self.remove_unreachable();
        self.compact();
        let merged = self.merge_blocks();
        removed || merged
    }

    fn remove_unreachable(&mut self) -> bool {
        let cfg = self.cfgs.current(self.func);
        let mut dead = std::mem::take(&mut self.bufs.dead);
        dead.clear();
        dead.extend(
            self.func
                .layout
                .iter()
                .copied()
                .filter(|&b| !cfg.is_reachable(b)),
        );
        if dead.is_empty() {
            self.bufs.dead = dead;
            return false;
        }
        let mut reachable = std::mem::take(&mut self.bufs.reachable);
        reachable.clear();
        reachable.extend((0..self.func.blocks.len()).map(|b| cfg.is_reachable(Block::new(b))));
        let is_reachable = |b: Block| reachable.get(b.index()).copied().unwrap_or(false);
        self.cfg_changed();
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
            self.bufs.phis = phis;
        }
        self.report.blocks_removed += dead.len() as u64;
        self.bufs.dead = dead;
        self.bufs.reachable = reachable;
        true
    }

    fn merge_blocks(&mut self) -> bool {
        let cfg = self.cfgs.current(self.func);
        let n = self.func.blocks.len();
        let mut preds = Preds {
            start: std::mem::take(&mut self.bufs.pred_start),
            list: std::mem::take(&mut self.bufs.pred_list),
        };
        preds.start.clear();
        preds.list.clear();
        for b in 0..n {
            preds.start.push(preds.list.len() as u32);
            preds.list.extend_from_slice(cfg.preds(Block::new(b)));
        }
        preds.start.push(preds.list.len() as u32);
        let entry = self.func.entry();
        let mut gone = std::mem::take(&mut self.bufs.gone);
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
                if b == a || b == entry || preds.of(b) != [a] {
                    break;
                }
                self.merge(a, b, term, &mut preds);
                gone[b.index()] = true;
                any = true;
            }
        }
        if any {
            self.func.layout.retain(|&x| !gone[x.index()]);
            self.cfg_changed();
        }
        self.bufs.pred_start = preds.start;
        self.bufs.pred_list = preds.list;
        self.bufs.gone = gone;
        any
    }

    /// Move `b`'s instructions to the end of `a` (whose terminator `term` jumps to `b`).
    fn merge(&mut self, a: Block, b: Block, term: Inst, preds: &mut Preds) {
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
        self.bufs.phis = phis;
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
            for p in preds.of_mut(s) {
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
            self.bufs.phis = phis;
        }
        self.report.blocks_merged += 1;
    }
}

/// The predecessors of every block slot, flat, as the merge updates them.
struct Preds {
    /// Block `b`'s predecessors are `list[start[b]..start[b + 1]]`.
    start: Vec<u32>,
    list: Vec<Block>,
}

impl Preds {
    fn of(&self, b: Block) -> &[Block] {
        &self.list[self.start[b.index()] as usize..self.start[b.index() + 1] as usize]
    }

    fn of_mut(&mut self, b: Block) -> &mut [Block] {
        &mut self.list[self.start[b.index()] as usize..self.start[b.index() + 1] as usize]
    }
}
