//! What the CFG cleanup needs to know of the block graph, and no more: which
//! layout blocks the entry reaches, and each block's predecessor edges
//! (counted, with the first one in layout order). It reads the CFG exactly
//! as `ir::cfg::Cfg` does (edges to blocks outside the layout dropped, each
//! layout block's terminator read once) but builds no predecessor lists, no
//! order and no numbering, so a cleanup round of a small function costs a
//! few dozen steps per block.

use ir::{Block, Function};

const IN_LAYOUT: u8 = 1;
const SUCCS_DONE: u8 = 2;
const REACHED: u8 = 4;

/// The edges of one block slot, kept together so that a recompute clears
/// one array for them (the flags stay apart, dense: the walks test them for
/// blocks whose edges they do not read).
#[derive(Copy, Clone)]
struct Node {
    /// Its successors in the layout (the first `succ_count`).
    succs: [Block; 2],
    succ_count: u8,
    /// How many predecessor edges it has, and the first in layout order.
    pred_count: u32,
    first_pred: Block,
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
            first_pred: entry,
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
            for s in data.kind.successors() {
                if s.index() < n && flags[s.index()] & IN_LAYOUT != 0 {
                    let node = &mut nodes[b.index()];
                    node.succs[node.succ_count as usize] = s;
                    node.succ_count += 1;
                    let target = &mut nodes[s.index()];
                    if target.pred_count == 0 {
                        target.first_pred = b;
                    }
                    target.pred_count += 1;
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
    }

    /// Whether the entry reaches `b`.
    pub(crate) fn is_reachable(&self, b: Block) -> bool {
        self.flags.get(b.index()).is_some_and(|f| f & REACHED != 0)
    }

    /// The only predecessor edge of `b`, if it has exactly one.
    pub(crate) fn single_pred(&self, b: Block) -> Option<Block> {
        let node = self.nodes.get(b.index())?;
        (node.pred_count == 1).then_some(node.first_pred)
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
    }
}
