//! The control-flow graph of a function: successors, predecessors and reverse post-order.
//!
//! Only blocks in `func.layout` exist. Edges are counted per terminator edge:
//! `br %c, L, L` gives the block two successor entries `[L, L]` and `L` two
//! predecessor entries, because a phi in `L` needs one entry per predecessor edge
//! (IR.md §4). Use [`Cfg::unique_preds`] when a set of predecessor blocks is wanted.
//!
//! The graph is built defensively: a block without a terminator has no
//! successors, and edges to blocks that are not in the layout (or do not exist)
//! are dropped — the verifier reports those; analyses never panic on them.

use crate::entities::Block;
use crate::function::Function;

/// Successor/predecessor lists and a reverse post-order of one function.
#[derive(Clone, Debug)]
pub struct Cfg {
    entry: Option<Block>,
    in_layout: Vec<bool>,
    succs: Vec<Vec<Block>>,
    preds: Vec<Vec<Block>>,
    rpo: Vec<Block>,
    rpo_index: Vec<Option<u32>>,
}

impl Cfg {
    /// Compute the CFG of `func` from the terminators of its layout blocks.
    pub fn new(func: &Function) -> Cfg {
        let n = func.blocks.len();
        let mut in_layout = vec![false; n];
        for &b in &func.layout {
            if let Some(slot) = in_layout.get_mut(b.index()) {
                *slot = true;
            }
        }
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        let mut done = vec![false; n];
        for &b in &func.layout {
            if b.index() >= n || done[b.index()] {
                continue;
            }
            done[b.index()] = true;
            let Some(&last) = func.blocks[b.index()].insts.last() else {
                continue;
            };
            let Some(data) = func.insts.get(last.index()) else {
                continue;
            };
            for s in data.kind.successors() {
                if in_layout.get(s.index()).copied().unwrap_or(false) {
                    succs[b.index()].push(s);
                    preds[s.index()].push(b);
                }
            }
        }
        let entry = func.layout.first().copied().filter(|e| e.index() < n);
        let rpo = compute_rpo(entry, &succs);
        let mut rpo_index = vec![None; n];
        for (i, &b) in rpo.iter().enumerate() {
            rpo_index[b.index()] = Some(i as u32);
        }
        Cfg {
            entry,
            in_layout,
            succs,
            preds,
            rpo,
            rpo_index,
        }
    }

    /// The entry block (`layout[0]`), if the function has blocks.
    pub fn entry(&self) -> Option<Block> {
        self.entry
    }

    /// The number of block slots (the size of the function's block arena).
    pub fn num_block_slots(&self) -> usize {
        self.succs.len()
    }

    /// Whether `b` is part of the function (in its layout).
    pub fn in_layout(&self, b: Block) -> bool {
        self.in_layout.get(b.index()).copied().unwrap_or(false)
    }

    /// The successors of `b`, one entry per terminator edge, in terminator order.
    pub fn succs(&self, b: Block) -> &[Block] {
        self.succs.get(b.index()).map_or(&[], Vec::as_slice)
    }

    /// The predecessors of `b`, one entry per edge (a block branching to `b`
    /// twice appears twice), in layout order.
    pub fn preds(&self, b: Block) -> &[Block] {
        self.preds.get(b.index()).map_or(&[], Vec::as_slice)
    }

    /// The distinct predecessor blocks of `b`, in layout order.
    pub fn unique_preds(&self, b: Block) -> Vec<Block> {
        let mut out: Vec<Block> = Vec::new();
        for &p in self.preds(b) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// The reachable blocks in reverse post-order (entry first).
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }

    /// The position of `b` in [`Cfg::rpo`], or `None` when `b` is unreachable.
    pub fn rpo_index(&self, b: Block) -> Option<usize> {
        self.rpo_index
            .get(b.index())
            .copied()
            .flatten()
            .map(|i| i as usize)
    }

    /// Whether a path from the entry reaches `b`.
    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index(b).is_some()
    }
}

/// Reverse post-order of the blocks reachable from `entry` (iterative DFS that
/// visits successors in terminator order).
fn compute_rpo(entry: Option<Block>, succs: &[Vec<Block>]) -> Vec<Block> {
    let Some(entry) = entry else {
        return Vec::new();
    };
    let mut visited = vec![false; succs.len()];
    let mut post = Vec::new();
    let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
    visited[entry.index()] = true;
    while let Some(top) = stack.last_mut() {
        let (b, next) = *top;
        if let Some(&s) = succs[b.index()].get(next) {
            top.1 += 1;
            if !visited[s.index()] {
                visited[s.index()] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    post
}
