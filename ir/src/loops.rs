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
///
/// [`LoopInfo::recompute`] rebuilds it in place, reusing every buffer
/// (including the block lists of the loops it had), so a warm `LoopInfo`
/// recomputed for a function no larger than before allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct LoopInfo {
    loops: Vec<Loop>,
    innermost: Vec<Option<LoopId>>,
    irreducible: Vec<(Block, Block)>,
    /// Loops of an earlier computation, kept for their storage.
    spare: Vec<Loop>,
    scratch: Scratch,
}

/// Working storage of [`LoopInfo::recompute`] (cleared before each use).
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// Per block slot: in the body being collected / visited by the DFS.
    mark: Vec<bool>,
    /// Per block slot: on the DFS stack.
    on_stack: Vec<bool>,
    work: Vec<Block>,
    dfs: Vec<(Block, usize)>,
    /// Loop indices, largest body first.
    order: Vec<usize>,
    /// The reachable predecessors of a header outside its loop.
    outside: Vec<Block>,
}

impl Loop {
    /// A loop with no blocks, to be filled.
    fn empty() -> Loop {
        Loop {
            header: Block(0),
            blocks: Vec::new(),
            latches: Vec::new(),
            exits: Vec::new(),
            parent: None,
            depth: 0,
            preheader: None,
        }
    }
}

impl LoopInfo {
    /// Find the natural loops of `func` and check reducibility.
    pub fn new(func: &Function, cfg: &Cfg, dom: &DomTree) -> LoopInfo {
        let mut info = LoopInfo::default();
        info.recompute(func, cfg, dom);
        info
    }

    /// Recompute in place (the same result as [`LoopInfo::new`]), reusing
    /// this `LoopInfo`'s storage.
    pub fn recompute(&mut self, func: &Function, cfg: &Cfg, dom: &DomTree) {
        let n = func.blocks.len().max(cfg.num_block_slots());
        self.spare.append(&mut self.loops);
        let mark = &mut self.scratch.mark;
        mark.clear();
        mark.resize(n, false);
        // Headers in RPO order: an enclosing loop's header comes before the inner one's.
        for &h in cfg.rpo() {
            let is_latch = |p: Block| cfg.is_reachable(p) && dom.dominates(h, p);
            if !cfg.preds(h).iter().any(|&p| is_latch(p)) {
                continue;
            }
            let mut lp = self.spare.pop().unwrap_or_else(Loop::empty);
            lp.header = h;
            lp.latches.clear();
            for &p in cfg.preds(h) {
                if is_latch(p) && !lp.latches.contains(&p) {
                    lp.latches.push(p);
                }
            }
            // Distinct reachable blocks have distinct RPO positions.
            lp.latches.sort_unstable_by_key(|&b| cfg.rpo_index(b));
            natural_loop_body(cfg, &mut lp, mark, &mut self.scratch.work);
            lp.exits.clear();
            lp.parent = None;
            lp.depth = 0;
            lp.preheader = None;
            self.loops.push(lp);
        }
        self.innermost.clear();
        self.innermost.resize(n, None);
        find_irreducible_edges(cfg, dom, &mut self.scratch, &mut self.irreducible);
        self.build_forest();
        self.compute_exits_and_preheaders(cfg);
    }

    /// Assign innermost loops, parents and depths: visiting loops from the
    /// largest body to the smallest, each block ends up owned by its innermost
    /// loop, and a loop's parent is the owner of its header just before it.
    fn build_forest(&mut self) {
        let mut order = std::mem::take(&mut self.scratch.order);
        order.clear();
        order.extend(0..self.loops.len());
        // Ties in order of index, as a stable sort would leave them.
        order.sort_unstable_by_key(|&i| (std::cmp::Reverse(self.loops[i].blocks.len()), i));
        for &i in &order {
            let id = LoopId(i as u32);
            let header = self.loops[i].header;
            let parent = self.innermost[header.index()];
            self.loops[i].parent = parent;
            self.loops[i].depth = parent.map_or(1, |p| self.loops[p.index()].depth + 1);
            for &b in &self.loops[i].blocks {
                self.innermost[b.index()] = Some(id);
            }
        }
        self.scratch.order = order;
    }

    fn compute_exits_and_preheaders(&mut self, cfg: &Cfg) {
        let mut outside = std::mem::take(&mut self.scratch.outside);
        for i in 0..self.loops.len() {
            let id = LoopId(i as u32);
            let mut exits = std::mem::take(&mut self.loops[i].exits);
            exits.clear();
            for &b in &self.loops[i].blocks {
                for &s in cfg.succs(b) {
                    if !self.contains(id, s) && !exits.contains(&s) {
                        exits.push(s);
                    }
                }
            }
            let header = self.loops[i].header;
            outside.clear();
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
        self.scratch.outside = outside;
    }

    /// Every loop; a loop's parent comes before it (ordered by header RPO position).
    pub fn loops(&self) -> &[Loop] {
        &self.loops
    }

    /// Per loop (indexed as [`LoopInfo::loops`]): whether no other loop
    /// nests in it.
    pub fn innermost(&self) -> Vec<bool> {
        let mut innermost = vec![true; self.loops.len()];
        for lp in &self.loops {
            if let Some(p) = lp.parent {
                innermost[p.index()] = false;
            }
        }
        innermost
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

/// Fill `lp.blocks` with `lp.header` plus every block reaching one of
/// `lp.latches` backwards without crossing the header, in RPO order. `mark`
/// (one `false` per block slot) is left all `false`; `work` is scratch.
fn natural_loop_body(cfg: &Cfg, lp: &mut Loop, mark: &mut [bool], work: &mut Vec<Block>) {
    // The body is collected as it is found and then sorted by RPO position
    // (every block of it is reachable): the loop's size, not the function's.
    lp.blocks.clear();
    mark[lp.header.index()] = true;
    lp.blocks.push(lp.header);
    work.clear();
    for &l in &lp.latches {
        if !mark[l.index()] {
            mark[l.index()] = true;
            work.push(l);
            lp.blocks.push(l);
        }
    }
    while let Some(b) = work.pop() {
        for &p in cfg.preds(b) {
            if cfg.is_reachable(p) && !mark[p.index()] {
                mark[p.index()] = true;
                work.push(p);
                lp.blocks.push(p);
            }
        }
    }
    lp.blocks.sort_unstable_by_key(|&b| cfg.rpo_index(b));
    for &b in &lp.blocks {
        mark[b.index()] = false;
    }
}

/// Set `out` to the retreating edges of a DFS from the entry whose target
/// does not dominate the source, in the order the DFS meets them.
fn find_irreducible_edges(
    cfg: &Cfg,
    dom: &DomTree,
    scratch: &mut Scratch,
    out: &mut Vec<(Block, Block)>,
) {
    out.clear();
    let Some(entry) = cfg.entry() else {
        return;
    };
    let n = cfg.num_block_slots();
    let Scratch {
        mark: visited,
        on_stack,
        dfs: stack,
        ..
    } = scratch;
    visited.clear();
    visited.resize(n, false);
    on_stack.clear();
    on_stack.resize(n, false);
    stack.clear();
    stack.push((entry, 0));
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
}
