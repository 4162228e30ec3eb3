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

/// Per block slot of one function: flags, successors and predecessor edges.
#[derive(Default)]
pub(crate) struct BlockEdges {
    flags: Vec<u8>,
    succs: Vec<([Block; 2], u8)>,
    pred_count: Vec<u32>,
    first_pred: Vec<Block>,
    stack: Vec<Block>,
}

impl BlockEdges {
    /// Describe `func` as it is now.
    pub(crate) fn recompute(&mut self, func: &Function) {
        let n = func.blocks.len();
        let entry = Block::new(0);
        self.flags.clear();
        self.flags.resize(n, 0);
        self.succs.clear();
        self.succs.resize(n, ([entry; 2], 0));
        self.pred_count.clear();
        self.pred_count.resize(n, 0);
        self.first_pred.clear();
        self.first_pred.resize(n, entry);
        for &b in &func.layout {
            if let Some(f) = self.flags.get_mut(b.index()) {
                *f |= IN_LAYOUT;
            }
        }
        for &b in &func.layout {
            if b.index() >= n || self.flags[b.index()] & SUCCS_DONE != 0 {
                continue;
            }
            self.flags[b.index()] |= SUCCS_DONE;
            let Some(data) = func.blocks[b.index()]
                .insts
                .last()
                .and_then(|l| func.insts.get(l.index()))
            else {
                continue;
            };
            for s in data.kind.successors() {
                if s.index() < n && self.flags[s.index()] & IN_LAYOUT != 0 {
                    let (list, len) = &mut self.succs[b.index()];
                    list[*len as usize] = s;
                    *len += 1;
                    if self.pred_count[s.index()] == 0 {
                        self.first_pred[s.index()] = b;
                    }
                    self.pred_count[s.index()] += 1;
                }
            }
        }
        if let Some(&entry) = func.layout.first().filter(|e| e.index() < n) {
            self.flags[entry.index()] |= REACHED;
            self.stack.clear();
            self.stack.push(entry);
            while let Some(b) = self.stack.pop() {
                let (list, len) = self.succs[b.index()];
                for &s in &list[..len as usize] {
                    if self.flags[s.index()] & REACHED == 0 {
                        self.flags[s.index()] |= REACHED;
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
        (self.pred_count.get(b.index()) == Some(&1)).then(|| self.first_pred[b.index()])
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
