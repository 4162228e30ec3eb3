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
///
/// Stored flat (a block has at most two successors; predecessors in one
/// array indexed by offsets), because every pass and the verifier rebuild it.
#[derive(Clone, Debug)]
pub struct Cfg {
    entry: Option<Block>,
    in_layout: Vec<bool>,
    succ_len: Vec<u8>,
    succ: Vec<[Block; 2]>,
    pred_start: Vec<u32>,
    pred_list: Vec<Block>,
    rpo: Vec<Block>,
    rpo_index: Vec<u32>,
}

/// `rpo_index` of a block no path reaches.
const UNREACHED: u32 = u32::MAX;

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
        let mut succ_len = vec![0u8; n];
        let mut succ = vec![[Block(0); 2]; n];
        let mut pred_count = vec![0u32; n + 1];
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
                    let k = &mut succ_len[b.index()];
                    succ[b.index()][*k as usize] = s;
                    *k += 1;
                    pred_count[s.index() + 1] += 1;
                }
            }
        }
        // Predecessors in layout order, one entry per edge.
        for i in 0..n {
            pred_count[i + 1] += pred_count[i];
        }
        let pred_start = pred_count;
        let mut fill = pred_start.clone();
        let mut pred_list = vec![Block(0); pred_start[n] as usize];
        // Each block once, even if a corrupt layout lists it twice.
        let mut filled = vec![false; n];
        for &b in &func.layout {
            if b.index() >= n || filled[b.index()] {
                continue;
            }
            filled[b.index()] = true;
            for &s in &succ[b.index()][..succ_len[b.index()] as usize] {
                pred_list[fill[s.index()] as usize] = b;
                fill[s.index()] += 1;
            }
        }
        let entry = func.layout.first().copied().filter(|e| e.index() < n);
        let rpo = compute_rpo(entry, &succ, &succ_len);
        let mut rpo_index = vec![UNREACHED; n];
        for (i, &b) in rpo.iter().enumerate() {
            rpo_index[b.index()] = i as u32;
        }
        Cfg {
            entry,
            in_layout,
            succ_len,
            succ,
            pred_start,
            pred_list,
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
        self.succ.len()
    }

    /// Whether `b` is part of the function (in its layout).
    pub fn in_layout(&self, b: Block) -> bool {
        self.in_layout.get(b.index()).copied().unwrap_or(false)
    }

    /// The successors of `b`, one entry per terminator edge, in terminator order.
    pub fn succs(&self, b: Block) -> &[Block] {
        match (self.succ.get(b.index()), self.succ_len.get(b.index())) {
            (Some(s), Some(&len)) => &s[..len as usize],
            _ => &[],
        }
    }

    /// The predecessors of `b`, one entry per edge (a block branching to `b`
    /// twice appears twice), in layout order.
    pub fn preds(&self, b: Block) -> &[Block] {
        match (
            self.pred_start.get(b.index()),
            self.pred_start.get(b.index() + 1),
        ) {
            (Some(&lo), Some(&hi)) => &self.pred_list[lo as usize..hi as usize],
            _ => &[],
        }
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
            .filter(|&i| i != UNREACHED)
            .map(|i| i as usize)
    }

    /// Whether a path from the entry reaches `b`.
    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index(b).is_some()
    }
}

/// Reverse post-order of the blocks reachable from `entry` (iterative DFS that
/// visits successors in terminator order).
fn compute_rpo(entry: Option<Block>, succ: &[[Block; 2]], succ_len: &[u8]) -> Vec<Block> {
    let Some(entry) = entry else {
        return Vec::new();
    };
    let mut visited = vec![false; succ.len()];
    let mut post = Vec::new();
    let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
    visited[entry.index()] = true;
    while let Some(top) = stack.last_mut() {
        let (b, next) = *top;
        if next < succ_len[b.index()] as usize {
            let s = succ[b.index()][next];
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
