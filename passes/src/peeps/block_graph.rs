//! The block graph the CFG cleanup needs — predecessors and reachability —
//! computed exactly as `ir::cfg::Cfg` does (only layout blocks exist, edges to
//! other blocks are dropped, one predecessor entry per edge in layout order),
//! but into buffers kept from run to run instead of a fresh `Cfg`.

use ir::{Block, Function};

/// Predecessors and reachability of the blocks of one function.
#[derive(Default)]
pub(crate) struct BlockGraph {
    in_layout: Vec<bool>,
    /// Per block slot: its successor edges (`succ_len` of the two are used).
    succ: Vec<[Block; 2]>,
    succ_len: Vec<u8>,
    /// Block `b`'s predecessors are `pred_list[pred_start[b]..pred_start[b + 1]]`.
    pred_start: Vec<u32>,
    pred_list: Vec<Block>,
    reachable: Vec<bool>,
    /// Per block slot: already handled (a corrupt layout may list a block twice).
    done: Vec<bool>,
    stack: Vec<Block>,
}

impl BlockGraph {
    /// Compute the graph of `func` from the terminators of its layout blocks.
    pub(crate) fn compute(&mut self, func: &Function) {
        let n = func.blocks.len();
        reset(&mut self.in_layout, n, false);
        for &b in &func.layout {
            if let Some(slot) = self.in_layout.get_mut(b.index()) {
                *slot = true;
            }
        }
        reset(&mut self.succ_len, n, 0);
        reset(&mut self.succ, n, [Block::new(0); 2]);
        reset(&mut self.pred_start, n + 1, 0);
        reset(&mut self.done, n, false);
        for &b in &func.layout {
            if b.index() >= n || self.done[b.index()] {
                continue;
            }
            self.done[b.index()] = true;
            let Some(&last) = func.blocks[b.index()].insts.last() else {
                continue;
            };
            let Some(data) = func.insts.get(last.index()) else {
                continue;
            };
            for s in data.kind.successors() {
                if self.in_layout.get(s.index()).copied().unwrap_or(false) {
                    let k = &mut self.succ_len[b.index()];
                    self.succ[b.index()][*k as usize] = s;
                    *k += 1;
                    self.pred_start[s.index() + 1] += 1;
                }
            }
        }
        for i in 0..n {
            self.pred_start[i + 1] += self.pred_start[i];
        }
        // Fill with `pred_start[s]` as the cursor of `s`, then shift back.
        reset(
            &mut self.pred_list,
            self.pred_start[n] as usize,
            Block::new(0),
        );
        reset(&mut self.done, n, false);
        for &b in &func.layout {
            if b.index() >= n || self.done[b.index()] {
                continue;
            }
            self.done[b.index()] = true;
            for &s in &self.succ[b.index()][..self.succ_len[b.index()] as usize] {
                self.pred_list[self.pred_start[s.index()] as usize] = b;
                self.pred_start[s.index()] += 1;
            }
        }
        for i in (0..n).rev() {
            self.pred_start[i + 1] = self.pred_start[i];
        }
        self.pred_start[0] = 0;
        self.compute_reachable(func);
    }

    fn compute_reachable(&mut self, func: &Function) {
        let n = func.blocks.len();
        reset(&mut self.reachable, n, false);
        let Some(entry) = func.layout.first().copied().filter(|e| e.index() < n) else {
            return;
        };
        self.stack.clear();
        self.stack.push(entry);
        self.reachable[entry.index()] = true;
        while let Some(b) = self.stack.pop() {
            for k in 0..self.succ_len[b.index()] as usize {
                let s = self.succ[b.index()][k];
                if !self.reachable[s.index()] {
                    self.reachable[s.index()] = true;
                    self.stack.push(s);
                }
            }
        }
    }

    /// Whether a path from the entry reaches `b`.
    pub(crate) fn is_reachable(&self, b: Block) -> bool {
        self.reachable.get(b.index()).copied().unwrap_or(false)
    }

    /// The predecessors of `b`, one entry per edge, in layout order.
    pub(crate) fn preds(&self, b: Block) -> &[Block] {
        &self.pred_list[self.pred_range(b)]
    }

    /// The predecessors of `b`, to rename one when blocks merge.
    pub(crate) fn preds_mut(&mut self, b: Block) -> &mut [Block] {
        let range = self.pred_range(b);
        &mut self.pred_list[range]
    }

    fn pred_range(&self, b: Block) -> std::ops::Range<usize> {
        match (
            self.pred_start.get(b.index()),
            self.pred_start.get(b.index() + 1),
        ) {
            (Some(&lo), Some(&hi)) => lo as usize..hi as usize,
            _ => 0..0,
        }
    }
}

/// Make `v` `n` copies of `value`, keeping its storage.
fn reset<T: Copy>(v: &mut Vec<T>, n: usize, value: T) {
    v.clear();
    v.resize(n, value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::cfg::Cfg;

    #[test]
    fn agrees_with_the_ir_cfg_on_generated_and_parsed_functions() {
        let text = "func @f(%c: i64) -> i64 {\nentry:\n  br %c, a, a\na:\n  jmp c\nb:\n  jmp a\nc:\n  ret %c\n}\n";
        let (m, _) = ir::parse_module(text, "t.ir").unwrap();
        let mut g = BlockGraph::default();
        for f in &m.funcs {
            let cfg = Cfg::new(f);
            g.compute(f);
            for b in (0..f.blocks.len() + 1).map(Block::new) {
                assert_eq!(g.preds(b), cfg.preds(b), "{b:?}");
                assert_eq!(g.is_reachable(b), cfg.is_reachable(b), "{b:?}");
            }
        }
    }
}
