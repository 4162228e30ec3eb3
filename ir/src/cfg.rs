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

use crate::entities::{Block, Inst};
use crate::function::Function;
use crate::inst::InstKind;

/// Successor/predecessor lists and a reverse post-order of one function.
///
/// Stored flat, because every pass and the verifier rebuild it: one record
/// per block slot (at most two successors inline, the start of its
/// predecessors, its RPO position) plus one list holding every block's
/// predecessors (indexed by offsets) followed by the reverse post-order.
/// [`Cfg::recompute`] rebuilds it in place, reusing both buffers.
#[derive(Clone, Debug, Default)]
pub struct Cfg {
    entry: Option<Block>,
    /// One record per block slot, plus a sentinel whose `pred_start` ends the
    /// last block's predecessors.
    nodes: Vec<Node>,
    /// Predecessors of every block (`nodes[b].pred_start..nodes[b + 1].pred_start`),
    /// then the reverse post-order (from `rpo_start`).
    lists: Vec<Block>,
    rpo_start: usize,
}

/// What the CFG records about one block slot.
#[derive(Copy, Clone, Debug)]
struct Node {
    succ: [Block; 2],
    pred_start: u32,
    /// Position in the RPO, or `UNREACHED`. During the DFS: the DFS parent.
    rpo_index: u32,
    succ_len: u8,
    /// Next successor the DFS visits.
    dfs_next: u8,
    flags: u8,
}

impl Node {
    const EMPTY: Node = Node {
        succ: [Block(0); 2],
        pred_start: 0,
        rpo_index: UNREACHED,
        succ_len: 0,
        dfs_next: 0,
        flags: 0,
    };

    fn succs(&self) -> &[Block] {
        &self.succ[..self.succ_len as usize]
    }
}

/// `rpo_index` of a block no path reaches (and the DFS root's parent).
const UNREACHED: u32 = u32::MAX;
/// The block is in the layout.
const IN_LAYOUT: u8 = 1;
/// Its successors were recorded (a corrupt layout may list it twice).
const SUCCS_DONE: u8 = 2;
/// It was entered as a predecessor of its successors.
const PREDS_DONE: u8 = 4;
/// The DFS reached it.
const VISITED: u8 = 8;

impl Cfg {
    /// Compute the CFG of `func` from the terminators of its layout blocks.
    pub fn new(func: &Function) -> Cfg {
        let mut cfg = Cfg::default();
        cfg.recompute(func);
        cfg
    }

    /// The CFG `func` had when each layout block's terminator `t` was of
    /// kind `kind_of(t, kind)` (`kind` is its kind now): the CFG from before
    /// some terminators changed, given their old kinds.
    pub fn with_terminator_kinds<'k>(
        func: &'k Function,
        kind_of: impl Fn(Inst, &'k InstKind) -> &'k InstKind,
    ) -> Cfg {
        let mut cfg = Cfg::default();
        cfg.recompute_by(func, kind_of);
        cfg
    }

    /// Recompute the CFG of `func` in place (the same result as [`Cfg::new`]),
    /// reusing this CFG's buffers.
    pub fn recompute(&mut self, func: &Function) {
        self.recompute_by(func, |_, kind| kind);
    }

    /// [`Cfg::recompute`] with the terminators' kinds read through
    /// `kind_of` (see [`Cfg::with_terminator_kinds`]).
    fn recompute_by<'k>(
        &mut self,
        func: &'k Function,
        kind_of: impl Fn(Inst, &'k InstKind) -> &'k InstKind,
    ) {
        let n = func.blocks.len();
        let nodes = &mut self.nodes;
        nodes.clear();
        nodes.resize(n + 1, Node::EMPTY);
        for &b in &func.layout {
            if let Some(node) = nodes[..n].get_mut(b.index()) {
                node.flags |= IN_LAYOUT;
            }
        }
        // Successors (edges to blocks outside the layout dropped); count the
        // predecessor edges of each block in its `pred_start`.
        let mut edges = 0u32;
        for &b in &func.layout {
            if b.index() >= n || nodes[b.index()].flags & SUCCS_DONE != 0 {
                continue;
            }
            nodes[b.index()].flags |= SUCCS_DONE;
            let Some(&last) = func.blocks[b.index()].insts.last() else {
                continue;
            };
            let Some(data) = func.insts.get(last.index()) else {
                continue;
            };
            for s in kind_of(last, &data.kind).successors() {
                if s.index() < n && nodes[s.index()].flags & IN_LAYOUT != 0 {
                    let node = &mut nodes[b.index()];
                    node.succ[node.succ_len as usize] = s;
                    node.succ_len += 1;
                    nodes[s.index()].pred_start += 1;
                    edges += 1;
                }
            }
        }
        // Counts → start offsets (the sentinel gets the total).
        let mut start = 0u32;
        for node in nodes.iter_mut() {
            let count = node.pred_start;
            node.pred_start = start;
            start += count;
        }
        // Predecessors in layout order, one entry per edge, each block once
        // even if a corrupt layout lists it twice. `pred_start` serves as the
        // fill cursor and ends up at the next block's start; shifted back below.
        let lists = &mut self.lists;
        lists.clear();
        lists.reserve(edges as usize + func.layout.len().min(n));
        lists.resize(edges as usize, Block(0));
        for &b in &func.layout {
            if b.index() >= n || nodes[b.index()].flags & PREDS_DONE != 0 {
                continue;
            }
            nodes[b.index()].flags |= PREDS_DONE;
            let node = nodes[b.index()];
            for &s in node.succs() {
                let cursor = &mut nodes[s.index()].pred_start;
                lists[*cursor as usize] = b;
                *cursor += 1;
            }
        }
        for i in (1..n).rev() {
            nodes[i].pred_start = nodes[i - 1].pred_start;
        }
        if n > 0 {
            nodes[0].pred_start = 0;
        }
        self.entry = func.layout.first().copied().filter(|e| e.index() < n);
        self.rpo_start = lists.len();
        if let Some(entry) = self.entry {
            post_order(nodes, lists, entry);
            lists[self.rpo_start..].reverse();
            for (i, &b) in lists[self.rpo_start..].iter().enumerate() {
                nodes[b.index()].rpo_index = i as u32;
            }
        }
    }

    /// The entry block (`layout[0]`), if the function has blocks.
    pub fn entry(&self) -> Option<Block> {
        self.entry
    }

    /// The number of block slots (the size of the function's block arena).
    #[inline]
    pub fn num_block_slots(&self) -> usize {
        self.nodes.len().saturating_sub(1)
    }

    /// The record of block `b`, if `b` is a block slot.
    #[inline]
    fn node(&self, b: Block) -> Option<&Node> {
        self.nodes[..self.num_block_slots()].get(b.index())
    }

    /// Whether `b` is part of the function (in its layout).
    pub fn in_layout(&self, b: Block) -> bool {
        self.node(b).is_some_and(|n| n.flags & IN_LAYOUT != 0)
    }

    /// The successors of `b`, one entry per terminator edge, in terminator order.
    #[inline]
    pub fn succs(&self, b: Block) -> &[Block] {
        self.node(b).map_or(&[], Node::succs)
    }

    /// The predecessors of `b`, one entry per edge (a block branching to `b`
    /// twice appears twice), in layout order.
    #[inline]
    pub fn preds(&self, b: Block) -> &[Block] {
        match self.node(b) {
            Some(node) => {
                let hi = self.nodes[b.index() + 1].pred_start;
                &self.lists[node.pred_start as usize..hi as usize]
            }
            None => &[],
        }
    }

    /// The distinct predecessor blocks of `b`, in layout order.
    pub fn unique_preds(&self, b: Block) -> Vec<Block> {
        self.unique_preds_iter(b).collect()
    }

    /// The distinct predecessor blocks of `b`, in layout order, without allocating.
    pub fn unique_preds_iter(&self, b: Block) -> impl Iterator<Item = Block> + '_ {
        let preds = self.preds(b);
        preds
            .iter()
            .enumerate()
            .filter(move |&(k, p)| !preds[..k].contains(p))
            .map(|(_, &p)| p)
    }

    /// The reachable blocks in reverse post-order (entry first).
    #[inline]
    pub fn rpo(&self) -> &[Block] {
        &self.lists[self.rpo_start..]
    }

    /// The position of `b` in [`Cfg::rpo`], or `None` when `b` is unreachable.
    #[inline]
    pub fn rpo_index(&self, b: Block) -> Option<usize> {
        self.node(b)
            .map(|n| n.rpo_index)
            .filter(|&i| i != UNREACHED)
            .map(|i| i as usize)
    }

    /// Whether a path from the entry reaches `b`.
    #[inline]
    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index(b).is_some()
    }

    /// Whether some reachable block has an edge to a block no later in the
    /// reverse post-order (a retreating edge of the DFS): exactly when the
    /// reachable blocks contain a cycle. Every loop back edge is one, so
    /// without one a function has no loops. O(edges), no allocation.
    pub fn has_retreating_edge(&self) -> bool {
        self.rpo().iter().enumerate().any(|(i, &b)| {
            self.succs(b)
                .iter()
                .any(|&s| self.rpo_index(s).is_some_and(|si| si <= i))
        })
    }
}

/// Append the post-order of the blocks reachable from `entry` to `out`: an
/// iterative DFS visiting successors in terminator order, whose stack is
/// linked through the nodes (`rpo_index` holds the DFS parent meanwhile).
fn post_order(nodes: &mut [Node], out: &mut Vec<Block>, entry: Block) {
    nodes[entry.index()].flags |= VISITED;
    nodes[entry.index()].rpo_index = UNREACHED;
    let mut cur = entry;
    loop {
        let node = &mut nodes[cur.index()];
        if node.dfs_next < node.succ_len {
            let s = node.succ[node.dfs_next as usize];
            node.dfs_next += 1;
            let next = &mut nodes[s.index()];
            if next.flags & VISITED == 0 {
                next.flags |= VISITED;
                next.rpo_index = cur.0;
                cur = s;
            }
        } else {
            out.push(cur);
            let parent = node.rpo_index;
            node.rpo_index = UNREACHED;
            if parent == UNREACHED {
                break;
            }
            cur = Block(parent);
        }
    }
}
