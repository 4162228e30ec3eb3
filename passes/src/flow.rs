//! Control-flow facts for LSE and GVN — successors, predecessors, reverse
//! post-order and the dominator tree — with exactly the answers of `ir::cfg`
//! and `ir::dom`, computed into storage that a per-thread pool hands from run
//! to run, so that a pass run allocates nothing for them once warm.
//!
//! As in `ir::cfg`: only layout blocks exist, a block's successors are the
//! layout blocks its last instruction branches to (one entry per edge),
//! predecessors are listed in layout order, and the reverse post-order comes
//! from a DFS that visits successors in terminator order.

use ir::{Block, Function};
use std::cell::RefCell;

/// Not a position (unreached block, no immediate dominator).
const NONE: u32 = u32::MAX;

/// The CFG, reverse post-order and (on demand) dominator tree of one function.
#[derive(Default)]
pub struct Flow {
    /// Per block: 0 outside the layout, 1 in it, 2 successors found, 3 predecessors filled.
    state: Vec<u8>,
    succ: Vec<[Block; 2]>,
    succ_len: Vec<u8>,
    pred_start: Vec<u32>,
    pred_fill: Vec<u32>,
    pred_list: Vec<Block>,
    rpo: Vec<Block>,
    rpo_index: Vec<u32>,
    dfs: Vec<(Block, u8)>,
    /// Immediate dominator by RPO position (`NONE` while unknown).
    idom: Vec<u32>,
    child_start: Vec<u32>,
    child_fill: Vec<u32>,
    child_list: Vec<Block>,
}

thread_local! {
    static POOL: RefCell<Flow> = RefCell::new(Flow::default());
}

impl Flow {
    /// Storage from this thread's pool (empty if it is in use).
    pub fn take() -> Flow {
        POOL.with(|p| p.take())
    }

    /// Return the storage to this thread's pool.
    pub fn give_back(self) {
        POOL.with(|p| *p.borrow_mut() = self);
    }

    /// Compute the CFG and reverse post-order of `func`.
    pub fn compute(&mut self, func: &Function) {
        let n = func.blocks.len();
        reset(&mut self.state, n, 0);
        for &b in &func.layout {
            if let Some(s) = self.state.get_mut(b.index()) {
                *s = 1;
            }
        }
        reset(&mut self.succ_len, n, 0);
        reset(&mut self.succ, n, [Block::new(0); 2]);
        reset(&mut self.pred_start, n + 1, 0);
        for &b in &func.layout {
            if b.index() >= n || self.state[b.index()] != 1 {
                continue;
            }
            self.state[b.index()] = 2;
            let Some(&last) = func.blocks[b.index()].insts.last() else {
                continue;
            };
            let Some(data) = func.insts.get(last.index()) else {
                continue;
            };
            for s in data.kind.successors() {
                if self.state.get(s.index()).is_some_and(|&st| st != 0) {
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
        self.pred_fill.clear();
        self.pred_fill.extend_from_slice(&self.pred_start);
        reset(
            &mut self.pred_list,
            self.pred_start[n] as usize,
            Block::new(0),
        );
        for &b in &func.layout {
            if b.index() >= n || self.state[b.index()] == 3 {
                continue;
            }
            self.state[b.index()] = 3;
            for k in 0..self.succ_len[b.index()] as usize {
                let s = self.succ[b.index()][k];
                self.pred_list[self.pred_fill[s.index()] as usize] = b;
                self.pred_fill[s.index()] += 1;
            }
        }
        self.compute_rpo(func.layout.first().copied().filter(|e| e.index() < n));
    }

    fn compute_rpo(&mut self, entry: Option<Block>) {
        let n = self.succ.len();
        self.rpo.clear();
        reset(&mut self.rpo_index, n, NONE);
        let Some(entry) = entry else {
            return;
        };
        // `rpo_index` doubles as the visited mark (any value but NONE).
        self.dfs.clear();
        self.dfs.push((entry, 0));
        self.rpo_index[entry.index()] = 0;
        while let Some(top) = self.dfs.last_mut() {
            let (b, next) = *top;
            if next < self.succ_len[b.index()] {
                let s = self.succ[b.index()][next as usize];
                top.1 += 1;
                if self.rpo_index[s.index()] == NONE {
                    self.rpo_index[s.index()] = 0;
                    self.dfs.push((s, 0));
                }
            } else {
                self.rpo.push(b);
                self.dfs.pop();
            }
        }
        self.rpo.reverse();
        for (i, &b) in self.rpo.iter().enumerate() {
            self.rpo_index[b.index()] = i as u32;
        }
    }

    /// Compute the dominator tree (after [`Flow::compute`]).
    pub fn compute_dominators(&mut self) {
        let len = self.rpo.len();
        reset(&mut self.idom, len, NONE);
        if len > 0 {
            self.idom[0] = 0;
        }
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..len {
                let b = self.rpo[i];
                let mut new_idom = NONE;
                for &p in self.preds(b) {
                    let pi = self.rpo_index[p.index()];
                    if pi == NONE || self.idom[pi as usize] == NONE {
                        continue;
                    }
                    new_idom = if new_idom == NONE {
                        pi
                    } else {
                        intersect(&self.idom, pi, new_idom)
                    };
                }
                if new_idom != NONE && self.idom[i] != new_idom {
                    self.idom[i] = new_idom;
                    changed = true;
                }
            }
        }
        // Children in reverse post-order, flat.
        let n = self.succ.len();
        reset(&mut self.child_start, n + 1, 0);
        for i in 1..len {
            if self.idom[i] != NONE {
                let parent = self.rpo[self.idom[i] as usize];
                self.child_start[parent.index() + 1] += 1;
            }
        }
        for i in 0..n {
            self.child_start[i + 1] += self.child_start[i];
        }
        self.child_fill.clear();
        self.child_fill.extend_from_slice(&self.child_start);
        reset(
            &mut self.child_list,
            self.child_start[n] as usize,
            Block::new(0),
        );
        for i in 1..len {
            if self.idom[i] != NONE {
                let parent = self.rpo[self.idom[i] as usize];
                self.child_list[self.child_fill[parent.index()] as usize] = self.rpo[i];
                self.child_fill[parent.index()] += 1;
            }
        }
    }

    /// The successors of `b`, one entry per terminator edge, in terminator order.
    pub fn succs(&self, b: Block) -> &[Block] {
        match (self.succ.get(b.index()), self.succ_len.get(b.index())) {
            (Some(s), Some(&len)) => &s[..len as usize],
            _ => &[],
        }
    }

    /// The predecessors of `b`, one entry per edge, in layout order.
    pub fn preds(&self, b: Block) -> &[Block] {
        match (
            self.pred_start.get(b.index()),
            self.pred_start.get(b.index() + 1),
        ) {
            (Some(&lo), Some(&hi)) => &self.pred_list[lo as usize..hi as usize],
            _ => &[],
        }
    }

    /// The reachable blocks in reverse post-order (entry first).
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }

    /// The position of `b` in [`Flow::rpo`], or `None` when `b` is unreachable.
    pub fn rpo_index(&self, b: Block) -> Option<usize> {
        match self.rpo_index.get(b.index()) {
            Some(&i) if i != NONE => Some(i as usize),
            _ => None,
        }
    }

    /// Whether a path from the entry reaches `b`.
    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index(b).is_some()
    }

    /// The blocks `b` immediately dominates, in reverse post-order (after
    /// [`Flow::compute_dominators`]).
    pub fn children(&self, b: Block) -> &[Block] {
        match (
            self.child_start.get(b.index()),
            self.child_start.get(b.index() + 1),
        ) {
            (Some(&lo), Some(&hi)) => &self.child_list[lo as usize..hi as usize],
            _ => &[],
        }
    }

    /// Whether `a` dominates `b` (reflexive; false for unreachable blocks
    /// unless `a == b`), after [`Flow::compute_dominators`].
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        let (Some(ai), Some(mut bi)) = (self.rpo_index(a), self.rpo_index(b)) else {
            return false;
        };
        // A dominator comes earlier in reverse post-order: climb from `b`.
        while bi > ai {
            match self.idom.get(bi) {
                Some(&d) if d != NONE && (d as usize) < bi => bi = d as usize,
                _ => return false,
            }
        }
        bi == ai
    }
}

/// Clear `v` and fill it with `n` copies of `x`, keeping its storage.
fn reset<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

fn intersect(idom: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while a > b {
            a = if idom[a as usize] == NONE {
                0
            } else {
                idom[a as usize]
            };
        }
        while b > a {
            b = if idom[b as usize] == NONE {
                0
            } else {
                idom[b as usize]
            };
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::cfg::Cfg;
    use ir::dom::DomTree;
    use ir::{FunctionBuilder, InstKind, Module, Type};

    /// A diamond, a loop and an unreachable block.
    fn sample() -> Function {
        let m = Module::new();
        let mut b = FunctionBuilder::new(&m, "f", None);
        let p = b.param("p", Type::I64);
        let [entry, l, r, join, head, body, exit, dead] =
            ["entry", "l", "r", "join", "head", "body", "exit", "dead"]
                .map(|name| b.create_block(name));
        b.switch_to(entry);
        b.push(InstKind::Br(p, l, r), None);
        for x in [l, r] {
            b.switch_to(x);
            b.push(InstKind::Jmp(join), None);
        }
        b.switch_to(join);
        b.push(InstKind::Jmp(head), None);
        b.switch_to(head);
        b.push(InstKind::Br(p, body, exit), None);
        b.switch_to(body);
        b.push(InstKind::Jmp(head), None);
        b.switch_to(exit);
        b.push(InstKind::Ret(None), None);
        b.switch_to(dead);
        b.push(InstKind::Jmp(exit), None);
        b.finish()
    }

    #[test]
    fn agrees_with_the_ir_analyses() {
        let f = sample();
        let cfg = Cfg::new(&f);
        let dom = DomTree::new(&f, &cfg);
        let mut flow = Flow::take();
        flow.compute(&f);
        flow.compute_dominators();
        assert_eq!(flow.rpo(), cfg.rpo());
        for a in (0..f.blocks.len()).map(Block::new) {
            assert_eq!(flow.succs(a), cfg.succs(a));
            assert_eq!(flow.preds(a), cfg.preds(a));
            assert_eq!(flow.rpo_index(a), cfg.rpo_index(a));
            assert_eq!(flow.children(a), dom.children(a));
            for b in (0..f.blocks.len()).map(Block::new) {
                assert_eq!(flow.dominates(a, b), dom.dominates(a, b), "{a:?} {b:?}");
            }
        }
        flow.give_back();
    }
}
