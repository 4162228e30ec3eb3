//! Natural loops and reducibility.
//!
//! A back edge is an edge `u → h` whose target dominates its source; the natural
//! loop of header `h` is `h` plus every block that reaches a latch (a back-edge
//! source) without passing through `h`. Back edges sharing a header form one
//! loop with several latches. Natural loops are disjoint or nested, which gives
//! the loop forest (`parent`, `depth`).
//!
//! A retreating edge of a DFS (an edge to a block still on the DFS stack) whose
//! target does not dominate its source makes the CFG irreducible; such cycles
//! are not natural loops, and passes should leave them alone
//! ([`LoopInfo::is_reducible`], [`LoopInfo::irreducible_edges`]).
//!
//! Only reachable blocks take part; unreachable blocks are in no loop.

use crate::cfg::Cfg;
use crate::dom::DomTree;
use crate::entities::Block;
use crate::function::Function;

/// The index of a loop in [`LoopInfo::loops`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct LoopId(pub u32);

impl LoopId {
    /// The index into [`LoopInfo::loops`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One natural loop.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Loop {
    /// The header: the single entry of the loop; dominates every body block.
    pub header: Block,
    /// Every block of the loop (header and nested loops included), in RPO order.
    pub blocks: Vec<Block>,
    /// The sources of the back edges to the header, in RPO order.
    pub latches: Vec<Block>,
    /// The blocks outside the loop that a loop block branches to, in order of
    /// first discovery (body blocks in RPO order, successors in terminator order).
    pub exits: Vec<Block>,
    /// The innermost loop strictly containing this one.
    pub parent: Option<LoopId>,
    /// Nesting depth: 1 for an outermost loop.
    pub depth: u32,
    /// The unique reachable predecessor of the header outside the loop, when
    /// that block has exactly one successor edge (to the header).
    pub preheader: Option<Block>,
}

/// The loop forest of a function.
#[derive(Clone, Debug)]
pub struct LoopInfo {
    loops: Vec<Loop>,
    innermost: Vec<Option<LoopId>>,
    irreducible: Vec<(Block, Block)>,
}

impl LoopInfo {
    /// Find the natural loops of `func` and check reducibility.
    pub fn new(func: &Function, cfg: &Cfg, dom: &DomTree) -> LoopInfo {
        let n = func.blocks.len().max(cfg.num_block_slots());
        let mut loops = Vec::new();
        // Headers in RPO order: an enclosing loop's header comes before the inner one's.
        for &h in cfg.rpo() {
            let mut latches: Vec<Block> = Vec::new();
            for &p in cfg.preds(h) {
                if cfg.is_reachable(p) && dom.dominates(h, p) && !latches.contains(&p) {
                    latches.push(p);
                }
            }
            if latches.is_empty() {
                continue;
            }
            latches.sort_by_key(|&b| cfg.rpo_index(b));
            let blocks = natural_loop_body(cfg, h, &latches, n);
            loops.push(Loop {
                header: h,
                blocks,
                latches,
                exits: Vec::new(),
                parent: None,
                depth: 0,
                preheader: None,
            });
        }
        let mut info = LoopInfo {
            innermost: vec![None; n],
            irreducible: find_irreducible_edges(cfg, dom),
            loops,
        };
        info.build_forest();
        info.compute_exits_and_preheaders(cfg);
        info
    }

    /// Assign innermost loops, parents and depths: visiting loops from the
    /// largest body to the smallest, each block ends up owned by its innermost
    /// loop, and a loop's parent is the owner of its header just before it.
    fn build_forest(&mut self) {
        let mut order: Vec<usize> = (0..self.loops.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.loops[i].blocks.len()));
        for i in order {
            let id = LoopId(i as u32);
            let header = self.loops[i].header;
            let parent = self.innermost[header.index()];
            self.loops[i].parent = parent;
            self.loops[i].depth = parent.map_or(1, |p| self.loops[p.index()].depth + 1);
            for &b in &self.loops[i].blocks {
                self.innermost[b.index()] = Some(id);
            }
        }
    }

    fn compute_exits_and_preheaders(&mut self, cfg: &Cfg) {
        for i in 0..self.loops.len() {
            let id = LoopId(i as u32);
            let mut exits = Vec::new();
            for &b in &self.loops[i].blocks {
                for &s in cfg.succs(b) {
                    if !self.contains(id, s) && !exits.contains(&s) {
                        exits.push(s);
                    }
                }
            }
            let header = self.loops[i].header;
            let mut outside = Vec::new();
            for &p in cfg.preds(header) {
                if cfg.is_reachable(p) && !self.contains(id, p) && !outside.contains(&p) {
                    outside.push(p);
                }
            }
            let preheader = match outside.as_slice() {
                [p] if cfg.succs(*p) == [header] => Some(*p),
                _ => None,
            };
            self.loops[i].exits = exits;
            self.loops[i].preheader = preheader;
        }
    }

    /// Every loop; a loop's parent comes before it (ordered by header RPO position).
    pub fn loops(&self) -> &[Loop] {
        &self.loops
    }

    /// The loop `id`.
    pub fn get(&self, id: LoopId) -> &Loop {
        &self.loops[id.index()]
    }

    /// The innermost loop containing `b`.
    pub fn loop_of(&self, b: Block) -> Option<LoopId> {
        self.innermost.get(b.index()).copied().flatten()
    }

    /// The loop whose header is `b`.
    pub fn loop_with_header(&self, b: Block) -> Option<LoopId> {
        self.loop_of(b)
            .filter(|&l| self.loops[l.index()].header == b)
    }

    /// The loop depth of `b` (0 outside every loop).
    pub fn depth(&self, b: Block) -> u32 {
        self.loop_of(b).map_or(0, |l| self.loops[l.index()].depth)
    }

    /// Whether loop `id` contains block `b` (nested loops' blocks included).
    pub fn contains(&self, id: LoopId, b: Block) -> bool {
        let mut cur = self.loop_of(b);
        while let Some(l) = cur {
            if l == id {
                return true;
            }
            cur = self.loops[l.index()].parent;
        }
        false
    }

    /// Whether every cycle of the CFG is a natural loop.
    pub fn is_reducible(&self) -> bool {
        self.irreducible.is_empty()
    }

    /// The retreating edges `(source, target)` that are not back edges: each
    /// enters a cycle somewhere other than a dominating header.
    pub fn irreducible_edges(&self) -> &[(Block, Block)] {
        &self.irreducible
    }
}

/// `header` plus every block reaching one of `latches` backwards without
/// crossing `header`, in RPO order.
fn natural_loop_body(cfg: &Cfg, header: Block, latches: &[Block], n: usize) -> Vec<Block> {
    let mut in_body = vec![false; n];
    in_body[header.index()] = true;
    let mut work: Vec<Block> = Vec::new();
    for &l in latches {
        if !in_body[l.index()] {
            in_body[l.index()] = true;
            work.push(l);
        }
    }
    while let Some(b) = work.pop() {
        for &p in cfg.preds(b) {
            if cfg.is_reachable(p) && !in_body[p.index()] {
                in_body[p.index()] = true;
                work.push(p);
            }
        }
    }
    cfg.rpo()
        .iter()
        .copied()
        .filter(|b| in_body[b.index()])
        .collect()
}

/// Retreating edges of a DFS from the entry whose target does not dominate the source.
fn find_irreducible_edges(cfg: &Cfg, dom: &DomTree) -> Vec<(Block, Block)> {
    let Some(entry) = cfg.entry() else {
        return Vec::new();
    };
    let n = cfg.num_block_slots();
    let mut visited = vec![false; n];
    let mut on_stack = vec![false; n];
    let mut out = Vec::new();
    let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
    visited[entry.index()] = true;
    on_stack[entry.index()] = true;
    while let Some(top) = stack.last_mut() {
        let (b, next) = *top;
        if let Some(&s) = cfg.succs(b).get(next) {
            top.1 += 1;
            if on_stack[s.index()] {
                if !dom.dominates(s, b) && !out.contains(&(b, s)) {
                    out.push((b, s));
                }
            } else if !visited[s.index()] {
                visited[s.index()] = true;
                on_stack[s.index()] = true;
                stack.push((s, 0));
            }
        } else {
            on_stack[b.index()] = false;
            stack.pop();
        }
    }
    out
}
