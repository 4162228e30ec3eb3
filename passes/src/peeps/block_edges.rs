//! What the CFG cleanup needs to know of the block graph, and no more: which
//! layout blocks the entry reaches, which have an edge from a block it does
//! not reach, and each block's predecessor edges (counted, with the xor of
//! their sources: the source itself when there is one). It reads the CFG exactly
//! as `ir::cfg::Cfg` does (edges to blocks outside the layout dropped, each
//! layout block's terminator read once) but builds no predecessor lists, no
//! order and no numbering, so a cleanup round of a small function costs a
//! few dozen steps per block.

use ir::{Block, Function, InstKind};

const IN_LAYOUT: u8 = 1;
const SUCCS_DONE: u8 = 2;
const REACHED: u8 = 4;
const DEAD_PRED: u8 = 8;
const ENDS_IN_BR: u8 = 16;

/// The edges of one block slot, kept together so that a recompute clears
/// one array for them (the flags stay apart, dense: the walks test them for
/// blocks whose edges they do not read).
#[derive(Copy, Clone)]
struct Node {
    /// Its successors in the layout (the first `succ_count`).
    succs: [Block; 2],
    succ_count: u8,
    /// How many predecessor edges it has, and the xor of their sources'
    /// indices (so that an edge can be taken away again).
    pred_count: u32,
    pred_xor: u32,
}

/// Per block slot of one function: flags, successors and predecessor edges.
#[derive(Default)]
pub(crate) struct BlockEdges {
    flags: Vec<u8>,
    nodes: Vec<Node>,
    stack: Vec<Block>,
}

impl BlockEdges {
    /// Describe `func` as it is now.
    pub(crate) fn recompute(&mut self, func: &Function) {
        let n = func.blocks.len();
        let entry = Block::new(0);
        let empty = Node {
            succs: [entry; 2],
            succ_count: 0,
            pred_count: 0,
            pred_xor: 0,
        };
        let (flags, nodes) = (&mut self.flags, &mut self.nodes);
        flags.clear();
        flags.resize(n, 0);
        nodes.clear();
        nodes.resize(n, empty);
        for &b in &func.layout {
            if let Some(f) = flags.get_mut(b.index()) {
                *f |= IN_LAYOUT;
            }
        }
        for &b in &func.layout {
            if b.index() >= n || flags[b.index()] & SUCCS_DONE != 0 {
                continue;
            }
            flags[b.index()] |= SUCCS_DONE;
            let Some(data) = func.blocks[b.index()]
                .insts
                .last()
                .and_then(|l| func.insts.get(l.index()))
            else {
                continue;
            };
            if matches!(data.kind, InstKind::Br(..)) {
                flags[b.index()] |= ENDS_IN_BR;
            }
            for s in data.kind.successors() {
                if s.index() < n && flags[s.index()] & IN_LAYOUT != 0 {
                    let node = &mut nodes[b.index()];
                    node.succs[node.succ_count as usize] = s;
                    node.succ_count += 1;
                    let target = &mut nodes[s.index()];
                    target.pred_count += 1;
                    target.pred_xor ^= b.index() as u32;
                }
            }
        }
        if let Some(&entry) = func.layout.first().filter(|e| e.index() < n) {
            flags[entry.index()] |= REACHED;
            self.stack.clear();
            self.stack.push(entry);
            while let Some(b) = self.stack.pop() {
                let Node {
                    succs, succ_count, ..
                } = nodes[b.index()];
                for &s in &succs[..succ_count as usize] {
                    if flags[s.index()] & REACHED == 0 {
                        flags[s.index()] |= REACHED;
                        self.stack.push(s);
                    }
                }
            }
        }
        self.mark_dead_preds(func);
    }

    /// Flag the blocks with an edge from a layout block the entry does not
    /// reach.
    fn mark_dead_preds(&mut self, func: &Function) {
        let (flags, nodes) = (&mut self.flags, &self.nodes);
        for &b in &func.layout {
            if flags.get(b.index()).is_some_and(|f| f & REACHED == 0) {
                let node = &nodes[b.index()];
                for &s in &node.succs[..node.succ_count as usize] {
                    flags[s.index()] |= DEAD_PRED;
                }
            }
        }
    }

    /// The blocks `dead`, which the entry does not reach, left the layout:
    /// take their edges away (as a recompute would, without reading the
    /// function again).
    pub(crate) fn forget_edges_of(&mut self, dead: &[Block]) {
        for &d in dead {
            let Some(node) = self.nodes.get_mut(d.index()) else {
                continue;
            };
            let succs = node.succs;
            let count = std::mem::take(&mut node.succ_count);
            for &s in &succs[..count as usize] {
                let target = &mut self.nodes[s.index()];
                target.pred_count -= 1;
                target.pred_xor ^= d.index() as u32;
            }
        }
    }

    /// Whether `b` has an edge from a layout block the entry does not reach.
    pub(crate) fn has_dead_pred(&self, b: Block) -> bool {
        self.flags
            .get(b.index())
            .is_some_and(|f| f & DEAD_PRED != 0)
    }

    /// Whether the entry reaches `b`.
    pub(crate) fn is_reachable(&self, b: Block) -> bool {
        self.flags.get(b.index()).is_some_and(|f| f & REACHED != 0)
    }

    /// Whether layout block `b`'s last instruction is a `br`.
    pub(crate) fn ends_in_br(&self, b: Block) -> bool {
        self.flags
            .get(b.index())
            .is_some_and(|f| f & ENDS_IN_BR != 0)
    }

    /// The successors of `b` in the layout (one per edge).
    pub(crate) fn succs(&self, b: Block) -> &[Block] {
        self.nodes
            .get(b.index())
            .map_or(&[], |n| &n.succs[..n.succ_count as usize])
    }

    /// When `b` has exactly two predecessor edges, one of them from `one`:
    /// the source of the other.
    pub(crate) fn other_pred(&self, b: Block, one: Block) -> Option<Block> {
        let node = self.nodes.get(b.index())?;
        (node.pred_count == 2).then(|| Block::new((node.pred_xor ^ one.index() as u32) as usize))
    }

    /// The only predecessor edge of `b`, if it has exactly one.
    pub(crate) fn single_pred(&self, b: Block) -> Option<Block> {
        let node = self.nodes.get(b.index())?;
        (node.pred_count == 1).then(|| Block::new(node.pred_xor as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::cfg::Cfg;

    /// The answers agree with `ir::cfg::Cfg` on every block of a function
    /// with an unreachable block, a double edge and a merge.
    #[test]
    fn agrees_with_the_cfg() {
        let text = "func @f(%c: i64) -> i64 {\nentry:\n  br %c, a, b\na:\n  br %c, m, m\nb:\n  jmp m\ndead:\n  jmp a\nm:\n  ret %c\nlone:\n  jmp lone\n}\n";
        let (m, _) = ir::parse_module(text, "t").expect("parses");
        let f = &m.funcs[0];
        let cfg = Cfg::new(f);
        let mut e = BlockEdges::default();
        e.recompute(f);
        for &b in &f.layout {
            assert_eq!(e.is_reachable(b), cfg.is_reachable(b), "{b:?}");
            let single = match cfg.preds(b) {
                [p] => Some(*p),
                _ => None,
            };
            assert_eq!(e.single_pred(b), single, "{b:?}");
        }
        assert!(f.layout.iter().any(|&b| !e.is_reachable(b)));
        let dead: Vec<Block> = f
            .layout
            .iter()
            .copied()
            .filter(|&b| !e.is_reachable(b))
            .collect();
        let a = f.layout[1];
        assert!(e.has_dead_pred(a) && !e.has_dead_pred(f.layout[0]));
        assert_eq!(e.single_pred(a), None);
        e.forget_edges_of(&dead);
        assert_eq!(e.single_pred(a), Some(f.layout[0]));
    }
}
