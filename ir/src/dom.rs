//! The dominator tree (Cooper–Harvey–Kennedy, "A Simple, Fast Dominance Algorithm").
//!
//! Dominance is defined over the reachable blocks only: an unreachable block has
//! no immediate dominator, dominates nothing but itself and is dominated by
//! nothing but itself. `dominates` is O(1) through pre/post numbers of a DFS
//! of the tree.
//!
//! Value availability (used by the verifier and by passes that move code):
//! constants, `null` and parameters are available everywhere; an instruction
//! result is available *before* an instruction `u` when its definition strictly
//! precedes `u` on every path (same block: earlier position; otherwise its block
//! strictly dominates `u`'s block), and *at the end of* block `p` (where a phi
//! operand coming from `p` is read) when its block dominates `p`.

use crate::cfg::Cfg;
use crate::entities::{Block, Inst, Value};
use crate::function::{Function, ValueDef};

/// The dominator tree of the reachable blocks of a function.
///
/// Stored flat: one record per block slot (immediate dominator, start of its
/// children, pre/post numbers) plus one list holding every block's children
/// (indexed by offsets) followed by the preorder. [`DomTree::recompute`]
/// rebuilds it in place, reusing both buffers.
#[derive(Clone, Debug, Default)]
pub struct DomTree {
    /// One record per block slot, plus a sentinel whose `child_start` ends
    /// the last block's children.
    nodes: Vec<Node>,
    /// Children of block `b` (`nodes[b].child_start..nodes[b + 1].child_start`),
    /// then the preorder (from `preorder_start`).
    lists: Vec<Block>,
    preorder_start: usize,
}

/// What the tree records about one block slot.
#[derive(Copy, Clone, Debug)]
struct Node {
    /// The immediate dominator's index, or `NONE`.
    idom: u32,
    child_start: u32,
    pre: u32,
    post: u32,
    /// While computing: the idom (as an RPO position) of the block at this
    /// RPO position, then the next child the numbering DFS visits.
    scratch: u32,
    reachable: bool,
}

impl Node {
    const EMPTY: Node = Node {
        idom: NONE,
        child_start: 0,
        pre: UNNUMBERED,
        post: UNNUMBERED,
        scratch: NONE,
        reachable: false,
    };
}

const UNNUMBERED: u32 = u32::MAX;
/// No block / no RPO position.
const NONE: u32 = u32::MAX;

impl DomTree {
    /// Compute the dominator tree of `func` from its CFG.
    pub fn new(func: &Function, cfg: &Cfg) -> DomTree {
        let mut tree = DomTree::default();
        tree.recompute(func, cfg);
        tree
    }

    /// Recompute the dominator tree of `func` in place (the same result as
    /// [`DomTree::new`]), reusing this tree's buffers.
    pub fn recompute(&mut self, func: &Function, cfg: &Cfg) {
        let n = func.blocks.len().max(cfg.num_block_slots());
        let rpo = cfg.rpo();
        let nodes = &mut self.nodes;
        nodes.clear();
        nodes.resize(n + 1, Node::EMPTY);
        // idom as RPO positions, in `scratch` indexed by RPO position.
        iterate_idoms(cfg, &mut nodes[..]);
        // Block indices from RPO positions; count the children in `child_start`.
        for (i, &b) in rpo.iter().enumerate() {
            nodes[b.index()].reachable = true;
            if i == 0 {
                continue;
            }
            let d = nodes[i].scratch;
            if d != NONE {
                let parent = rpo[d as usize];
                nodes[b.index()].idom = parent.0;
                nodes[parent.index()].child_start += 1;
            }
        }
        // Counts → start offsets (the sentinel gets the total).
        let mut start = 0u32;
        for node in nodes.iter_mut() {
            node.scratch = 0;
            let count = node.child_start;
            node.child_start = start;
            start += count;
        }
        // Children in reverse post-order, flat; `child_start` serves as the fill
        // cursor and ends up at the next block's start; shifted back below.
        let lists = &mut self.lists;
        lists.clear();
        lists.reserve(start as usize + rpo.len());
        lists.resize(start as usize, Block(0));
        for &b in rpo.iter().skip(1) {
            let parent = nodes[b.index()].idom;
            if parent != NONE {
                let cursor = &mut nodes[parent as usize].child_start;
                lists[*cursor as usize] = b;
                *cursor += 1;
            }
        }
        for i in (1..n).rev() {
            nodes[i].child_start = nodes[i - 1].child_start;
        }
        if n > 0 {
            nodes[0].child_start = 0;
        }
        self.preorder_start = lists.len();
        if let Some(&entry) = rpo.first() {
            self.number_from(entry);
        }
    }

    /// Iterative DFS of the tree assigning pre/post numbers; its stack is
    /// linked through the idoms (`scratch` holds the next child to visit).
    fn number_from(&mut self, root: Block) {
        let mut counter = 0u32;
        self.nodes[root.index()].pre = counter;
        self.lists.push(root);
        counter += 1;
        let mut cur = root;
        loop {
            let next = self.nodes[cur.index()].scratch as usize;
            if let Some(&c) = self.children(cur).get(next) {
                self.nodes[cur.index()].scratch += 1;
                self.nodes[c.index()].pre = counter;
                self.lists.push(c);
                counter += 1;
                cur = c;
            } else {
                let node = &mut self.nodes[cur.index()];
                node.post = counter;
                counter += 1;
                if cur == root || node.idom == NONE {
                    break;
                }
                cur = Block(node.idom);
            }
        }
    }

    /// The record of block `b`, if `b` is a block slot.
    #[inline]
    fn node(&self, b: Block) -> Option<&Node> {
        self.nodes[..self.nodes.len().saturating_sub(1)].get(b.index())
    }

    /// Whether `b` is reachable from the entry (and so part of the tree).
    #[inline]
    pub fn is_reachable(&self, b: Block) -> bool {
        self.node(b).is_some_and(|n| n.reachable)
    }

    /// The immediate dominator of `b` (`None` for the entry and unreachable blocks).
    #[inline]
    pub fn idom(&self, b: Block) -> Option<Block> {
        self.node(b)
            .map(|n| n.idom)
            .filter(|&d| d != NONE)
            .map(Block)
    }

    /// Whether `a` dominates `b` (reflexive). False when either is unreachable,
    /// unless `a == b`.
    #[inline]
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        match (self.node(a), self.node(b)) {
            (Some(na), Some(nb)) if na.reachable && nb.reachable => {
                na.pre <= nb.pre && nb.post <= na.post
            }
            _ => false,
        }
    }

    /// Whether `a` dominates `b` and `a != b`.
    pub fn strictly_dominates(&self, a: Block, b: Block) -> bool {
        a != b && self.dominates(a, b)
    }

    /// The blocks `b` immediately dominates, in RPO discovery order.
    #[inline]
    pub fn children(&self, b: Block) -> &[Block] {
        match self.node(b) {
            Some(node) => {
                let hi = self.nodes[b.index() + 1].child_start;
                &self.lists[node.child_start as usize..hi as usize]
            }
            None => &[],
        }
    }

    /// The reachable blocks in a preorder walk of the tree (entry first; a
    /// block comes before every block it dominates).
    pub fn preorder(&self) -> &[Block] {
        &self.lists[self.preorder_start..]
    }

    /// Whether instruction `a` dominates instruction `b` (reflexive): same block →
    /// `a` is at or before `b`; otherwise `a`'s block strictly dominates `b`'s.
    /// False when either instruction is not placed.
    pub fn inst_dominates(&self, func: &Function, a: Inst, b: Inst) -> bool {
        let (Some(ba), Some(bb)) = (placed_block(func, a), placed_block(func, b)) else {
            return false;
        };
        self.comes_before(func, (a, ba), (b, bb), true)
    }

    /// Whether placed instruction `a` (in its block) runs before `b` on every
    /// path from the entry: earlier in the same block (or `b` itself when
    /// `or_same`), or in a block that strictly dominates `b`'s.
    fn comes_before(
        &self,
        func: &Function,
        (a, ba): (Inst, Block),
        (b, bb): (Inst, Block),
        or_same: bool,
    ) -> bool {
        if ba == bb {
            match (position_in(func, ba, a), position_in(func, bb, b)) {
                (Some(pa), Some(pb)) => pa < pb || (or_same && pa == pb),
                _ => false,
            }
        } else {
            self.strictly_dominates(ba, bb)
        }
    }

    /// Whether `v` may be used as an operand of the (non-phi) instruction `user`:
    /// `v` is a constant, `null` or a parameter, or its placed definition
    /// strictly precedes `user` on every path from the entry.
    pub fn available_before(&self, func: &Function, v: Value, user: Inst) -> bool {
        match def_site(func, v) {
            DefSite::Everywhere => true,
            DefSite::Nowhere => false,
            DefSite::Inst(d, db) => {
                let Some(ub) = placed_block(func, user) else {
                    return false;
                };
                self.comes_before(func, (d, db), (user, ub), false)
            }
        }
    }

    /// Whether `v` is available at the end of block `pred` — where a phi reads
    /// its operand for the edge from `pred`. A phi of a loop header naming itself
    /// on the back edge is available there (the header dominates the latch).
    pub fn available_at_end(&self, func: &Function, v: Value, pred: Block) -> bool {
        match def_site(func, v) {
            DefSite::Everywhere => true,
            DefSite::Nowhere => false,
            DefSite::Inst(_, db) => self.dominates(db, pred),
        }
    }
}

/// Where [`iterate_idoms`] keeps the idoms: slot `i` holds the RPO position of
/// the idom of the block at RPO position `i` (`NONE` while unknown).
trait IdomSlots {
    fn get(&self, i: usize) -> u32;
    fn set(&mut self, i: usize, d: u32);
}

impl IdomSlots for [Node] {
    fn get(&self, i: usize) -> u32 {
        self[i].scratch
    }
    fn set(&mut self, i: usize, d: u32) {
        self[i].scratch = d;
    }
}

impl IdomSlots for [u32] {
    fn get(&self, i: usize) -> u32 {
        self[i]
    }
    fn set(&mut self, i: usize, d: u32) {
        self[i] = d;
    }
}

/// The CHK iteration: fill `slots` (at least `cfg.rpo().len()` of them, all
/// `NONE`) with the idom of every reachable block by RPO position; the entry
/// is its own idom.
fn iterate_idoms<S: IdomSlots + ?Sized>(cfg: &Cfg, slots: &mut S) {
    let rpo = cfg.rpo();
    if rpo.is_empty() {
        return;
    }
    slots.set(0, 0);
    // Stamps of the blocks walked for one block of many predecessors
    // ([`meet_of_many`]), allocated when the first such block comes.
    let mut marks: Vec<u32> = Vec::new();
    let mut stamp = 0u32;
    let mut changed = true;
    while changed {
        changed = false;
        // Whether some block has a predecessor no earlier in the RPO (a
        // retreating edge). Without one every block's predecessors are final
        // before it is reached, so this pass computed the exact idoms and
        // the pass that would confirm them is skipped (as it is when every
        // retreating edge is a back edge; see `back_edges_only`).
        let mut retreating = false;
        for (i, &b) in rpo.iter().enumerate().skip(1) {
            let preds = cfg.preds(b);
            let many = preds.len() > MANY_PREDS;
            if many && marks.is_empty() {
                marks.resize(rpo.len(), 0);
            }
            stamp = stamp.wrapping_add(1);
            if stamp == 0 {
                marks.iter_mut().for_each(|m| *m = 0);
                stamp = 1;
            }
            let mut new_idom = NONE;
            for &p in preds {
                let Some(pi) = cfg.rpo_index(p) else { continue };
                retreating |= pi >= i;
                if slots.get(pi) == NONE {
                    continue;
                }
                new_idom = if new_idom == NONE {
                    pi as u32
                } else if many {
                    meet_of_many(slots, pi as u32, new_idom, &mut marks, stamp)
                } else {
                    intersect(slots, pi as u32, new_idom)
                };
            }
            if new_idom != NONE && slots.get(i) != new_idom {
                slots.set(i, new_idom);
                changed = true;
            }
        }
        changed &= retreating && !back_edges_only(cfg, slots);
    }
}

/// Whether the target of every retreating edge dominates its source in the
/// tree `slots` now holds (after a pass of [`iterate_idoms`]). Then another
/// pass changes nothing, so the idoms are final: each block without a
/// retreating predecessor gets the same common ancestor of its (unchanged)
/// predecessors, and each block `b` with one gets the common ancestor of its
/// current idom `d` (an ancestor of its other predecessors' common ancestor)
/// and sources below `b`, which is `d` again. Reducible loops pass this test
/// after their first pass, sparing the confirming one.
fn back_edges_only<S: IdomSlots + ?Sized>(cfg: &Cfg, slots: &S) -> bool {
    cfg.rpo().iter().enumerate().skip(1).all(|(i, &b)| {
        cfg.preds(b).iter().all(|&p| {
            let Some(mut x) = cfg.rpo_index(p).filter(|&pi| pi >= i) else {
                return true;
            };
            // Up the tree from the source: idoms come earlier in the RPO.
            while x > i {
                match slots.get(x) {
                    d if d != NONE && (d as usize) < x => x = d as usize,
                    _ => return false,
                }
            }
            x == i
        })
    })
}

/// Above this many predecessors a block's idom is found with
/// [`meet_of_many`] instead of [`intersect`].
const MANY_PREDS: usize = 4;

/// [`intersect`] for one of many predecessors of a block: `a` (the
/// predecessor) walks up marking what it passes with `stamp`; reaching a
/// block marked for an earlier predecessor of the same block ends the walk
/// at `b`, the meet so far. Every marked block lies below `b` (it was on
/// the way from an earlier predecessor up to the meet of that time, which
/// is `b` or below it), so the meet is `b` itself. Without the marks, a
/// block entered from k places along one deep chain (a return block
/// merged from k arms) cost k walks of up to the chain's depth each:
/// quadratic time.
fn meet_of_many<S: IdomSlots + ?Sized>(
    slots: &S,
    mut a: u32,
    mut b: u32,
    marks: &mut [u32],
    stamp: u32,
) -> u32 {
    let up = |x: u32| match slots.get(x as usize) {
        NONE => 0,
        d => d,
    };
    while a != b {
        while a > b {
            if marks[a as usize] == stamp {
                return b;
            }
            marks[a as usize] = stamp;
            a = up(a);
        }
        while b > a {
            b = up(b);
        }
    }
    a
}

/// The CHK "intersect": walk both fingers up the tree (by RPO position) until they meet.
fn intersect<S: IdomSlots + ?Sized>(slots: &S, mut a: u32, mut b: u32) -> u32 {
    let up = |x: u32| match slots.get(x as usize) {
        NONE => 0,
        d => d,
    };
    while a != b {
        while a > b {
            a = up(a);
        }
        while b > a {
            b = up(b);
        }
    }
    a
}

/// Immediate dominators only (no tree, no numbering): cheaper to compute than
/// a [`DomTree`] when only a few dominance queries follow, which walk up the
/// idoms. Answers exactly as [`DomTree`] does for the same CFG.
#[derive(Clone, Debug, Default)]
pub struct Idoms {
    /// By RPO position: the RPO position of the block's idom (the entry's is 0).
    by_rpo: Vec<u32>,
    /// For CFGs of more than [`Idoms::NUMBERED_ABOVE`] blocks, by RPO
    /// position: the (pre, post) numbers of a DFS of the dominator tree, so
    /// that a query is O(1) however deep the tree; empty otherwise.
    numbers: Vec<(u32, u32)>,
    /// Scratch for the numbering: children offsets and lists.
    scratch: Vec<u32>,
}

impl Idoms {
    /// Compute the immediate dominators of the reachable blocks of `cfg`.
    pub fn new(cfg: &Cfg) -> Idoms {
        let mut idoms = Idoms::default();
        idoms.recompute(cfg);
        idoms
    }

    /// Recompute in place (as [`Idoms::new`]), reusing the buffer.
    pub fn recompute(&mut self, cfg: &Cfg) {
        self.by_rpo.clear();
        self.by_rpo.resize(cfg.rpo().len(), NONE);
        iterate_idoms(cfg, &mut self.by_rpo[..]);
        self.numbers.clear();
        if self.by_rpo.len() > Self::NUMBERED_ABOVE {
            self.number();
        }
    }

    /// Above this many reachable blocks, queries use DFS numbers instead of
    /// walking up the idoms (whose cost is the depth of the tree).
    pub const NUMBERED_ABOVE: usize = 64;

    /// Pre/post-number the dominator tree (children in RPO order).
    fn number(&mut self) {
        let n = self.by_rpo.len();
        // scratch[0..=n]: child offsets; scratch[n+1..2n+1]: the children.
        let s = &mut self.scratch;
        s.clear();
        s.resize(2 * n + 1, 0);
        for i in 1..n {
            let d = self.by_rpo[i] as usize;
            if d < i {
                s[d + 1] += 1;
            }
        }
        for i in 1..=n {
            s[i] += s[i - 1];
        }
        let mut fill: Vec<u32> = s[..n].to_vec();
        for i in 1..n {
            let d = self.by_rpo[i] as usize;
            if d < i {
                s[n + 1 + fill[d] as usize] = i as u32;
                fill[d] += 1;
            }
        }
        self.numbers.resize(n, (0, 0));
        let mut counter = 0u32;
        // The stack holds (node, next child offset) pairs, flattened.
        let mut stack: Vec<(u32, u32)> = vec![(0, s[0])];
        self.numbers[0].0 = counter;
        counter += 1;
        while let Some(top) = stack.last_mut() {
            let (node, next) = (top.0 as usize, top.1 as usize);
            if next < s[node + 1] as usize {
                top.1 += 1;
                let c = s[n + 1 + next];
                self.numbers[c as usize].0 = counter;
                counter += 1;
                stack.push((c, s[c as usize]));
            } else {
                self.numbers[node].1 = counter;
                counter += 1;
                stack.pop();
            }
        }
    }

    /// Whether `a` dominates `b` (reflexive), as [`DomTree::dominates`]; `cfg`
    /// is the CFG these idoms were computed from.
    pub fn dominates(&self, cfg: &Cfg, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        let (Some(ia), Some(mut ib)) = (cfg.rpo_index(a), cfg.rpo_index(b)) else {
            return false;
        };
        if let (Some(&(pa, qa)), Some(&(pb, qb))) = (self.numbers.get(ia), self.numbers.get(ib)) {
            return pa <= pb && qb <= qa;
        }
        // An idom comes before its block in RPO, so the walk ends at or above `a`.
        while ib > ia {
            match self.by_rpo.get(ib) {
                Some(&d) if (d as usize) < ib => ib = d as usize,
                _ => return false,
            }
        }
        ib == ia
    }

    /// Whether `a` dominates `b` and `a != b`.
    pub fn strictly_dominates(&self, cfg: &Cfg, a: Block, b: Block) -> bool {
        a != b && self.dominates(cfg, a, b)
    }
}

/// Where a value is defined, as far as availability is concerned.
enum DefSite {
    /// Constants, null and parameters.
    Everywhere,
    /// An out-of-range value or one whose defining instruction is not placed.
    Nowhere,
    /// A placed instruction and its block.
    Inst(Inst, Block),
}

fn def_site(func: &Function, v: Value) -> DefSite {
    match func.values.get(v.index()).map(|d| d.def) {
        Some(ValueDef::Const(_) | ValueDef::Null | ValueDef::Param(_)) => DefSite::Everywhere,
        Some(ValueDef::Inst(i)) => match placed_block(func, i) {
            Some(b) => DefSite::Inst(i, b),
            None => DefSite::Nowhere,
        },
        None => DefSite::Nowhere,
    }
}

/// The block `inst` sits in, if its `InstData.block` names a block in range.
fn placed_block(func: &Function, inst: Inst) -> Option<Block> {
    let b = func.insts.get(inst.index())?.block?;
    (b.index() < func.blocks.len()).then_some(b)
}

/// The position of `inst` in `block`'s instruction list.
fn position_in(func: &Function, block: Block, inst: Inst) -> Option<usize> {
    func.blocks
        .get(block.index())?
        .insts
        .iter()
        .position(|&i| i == inst)
}
