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
#[derive(Clone, Debug)]
pub struct DomTree {
    idom: Vec<Option<Block>>,
    /// Children of block `b` are `child_list[child_start[b]..child_start[b + 1]]`.
    child_start: Vec<u32>,
    child_list: Vec<Block>,
    pre: Vec<u32>,
    post: Vec<u32>,
    preorder: Vec<Block>,
    reachable: Vec<bool>,
}

const UNNUMBERED: u32 = u32::MAX;

impl DomTree {
    /// Compute the dominator tree of `func` from its CFG.
    pub fn new(func: &Function, cfg: &Cfg) -> DomTree {
        let n = func.blocks.len().max(cfg.num_block_slots());
        let rpo = cfg.rpo();
        // idom as rpo indices; the entry is its own idom during the iteration.
        let mut idom_rpo: Vec<Option<usize>> = vec![None; rpo.len()];
        if !rpo.is_empty() {
            idom_rpo[0] = Some(0);
        }
        let mut changed = true;
        while changed {
            changed = false;
            for (i, &b) in rpo.iter().enumerate().skip(1) {
                let mut new_idom: Option<usize> = None;
                for &p in cfg.preds(b) {
                    let Some(pi) = cfg.rpo_index(p) else { continue };
                    if idom_rpo[pi].is_none() {
                        continue;
                    }
                    new_idom = Some(match new_idom {
                        None => pi,
                        Some(cur) => intersect(&idom_rpo, pi, cur),
                    });
                }
                if new_idom.is_some() && idom_rpo[i] != new_idom {
                    idom_rpo[i] = new_idom;
                    changed = true;
                }
            }
        }
        let mut idom = vec![None; n];
        let mut reachable = vec![false; n];
        let mut child_start = vec![0u32; n + 1];
        for (i, &b) in rpo.iter().enumerate() {
            reachable[b.index()] = true;
            if i == 0 {
                continue;
            }
            if let Some(d) = idom_rpo[i] {
                let parent = rpo[d];
                idom[b.index()] = Some(parent);
                child_start[parent.index() + 1] += 1;
            }
        }
        for i in 0..n {
            child_start[i + 1] += child_start[i];
        }
        // Children in reverse post-order, flat.
        let mut fill = child_start.clone();
        let mut child_list = vec![Block(0); child_start[n] as usize];
        for &b in rpo.iter().skip(1) {
            if let Some(parent) = idom[b.index()] {
                child_list[fill[parent.index()] as usize] = b;
                fill[parent.index()] += 1;
            }
        }
        let mut tree = DomTree {
            idom,
            child_start,
            child_list,
            pre: vec![UNNUMBERED; n],
            post: vec![UNNUMBERED; n],
            preorder: Vec::with_capacity(rpo.len()),
            reachable,
        };
        if let Some(&entry) = rpo.first() {
            tree.number_from(entry);
        }
        tree
    }

    /// Iterative DFS of the tree assigning pre/post numbers.
    fn number_from(&mut self, root: Block) {
        let mut counter = 0u32;
        let mut stack: Vec<(Block, usize)> = vec![(root, 0)];
        self.pre[root.index()] = counter;
        self.preorder.push(root);
        counter += 1;
        while let Some(top) = stack.last_mut() {
            let (b, next) = *top;
            if let Some(&c) = self.children(b).get(next) {
                top.1 += 1;
                self.pre[c.index()] = counter;
                self.preorder.push(c);
                counter += 1;
                stack.push((c, 0));
            } else {
                self.post[b.index()] = counter;
                counter += 1;
                stack.pop();
            }
        }
    }

    /// Whether `b` is reachable from the entry (and so part of the tree).
    pub fn is_reachable(&self, b: Block) -> bool {
        self.reachable.get(b.index()).copied().unwrap_or(false)
    }

    /// The immediate dominator of `b` (`None` for the entry and unreachable blocks).
    pub fn idom(&self, b: Block) -> Option<Block> {
        self.idom.get(b.index()).copied().flatten()
    }

    /// Whether `a` dominates `b` (reflexive). False when either is unreachable,
    /// unless `a == b`.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return false;
        }
        self.pre[a.index()] <= self.pre[b.index()] && self.post[b.index()] <= self.post[a.index()]
    }

    /// Whether `a` dominates `b` and `a != b`.
    pub fn strictly_dominates(&self, a: Block, b: Block) -> bool {
        a != b && self.dominates(a, b)
    }

    /// The blocks `b` immediately dominates, in RPO discovery order.
    pub fn children(&self, b: Block) -> &[Block] {
        match (
            self.child_start.get(b.index()),
            self.child_start.get(b.index() + 1),
        ) {
            (Some(&lo), Some(&hi)) => &self.child_list[lo as usize..hi as usize],
            _ => &[],
        }
    }

    /// The reachable blocks in a preorder walk of the tree (entry first; a
    /// block comes before every block it dominates).
    pub fn preorder(&self) -> &[Block] {
        &self.preorder
    }

    /// Whether instruction `a` dominates instruction `b` (reflexive): same block →
    /// `a` is at or before `b`; otherwise `a`'s block strictly dominates `b`'s.
    /// False when either instruction is not placed.
    pub fn inst_dominates(&self, func: &Function, a: Inst, b: Inst) -> bool {
        let (Some(ba), Some(bb)) = (placed_block(func, a), placed_block(func, b)) else {
            return false;
        };
        if ba == bb {
            match (position_in(func, ba, a), position_in(func, bb, b)) {
                (Some(pa), Some(pb)) => pa <= pb,
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
                if db == ub {
                    match (position_in(func, db, d), position_in(func, ub, user)) {
                        (Some(pd), Some(pu)) => pd < pu,
                        _ => false,
                    }
                } else {
                    self.strictly_dominates(db, ub)
                }
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

/// The CHK "intersect": walk both fingers up the tree (by RPO index) until they meet.
fn intersect(idom: &[Option<usize>], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while a > b {
            a = idom[a].unwrap_or(0);
        }
        while b > a {
            b = idom[b].unwrap_or(0);
        }
    }
    a
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
