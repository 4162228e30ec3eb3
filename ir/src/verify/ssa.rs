//! CFG and SSA checks: the entry has no predecessors, each phi has exactly one
//! entry per predecessor edge, and in reachable code every use is dominated by
//! its definition (a phi operand must be available at the end of its
//! predecessor; a loop-header phi may name itself on the back edge).

use super::FnCtx;
use crate::cfg::Cfg;
use crate::dom::{DomTree, Idoms};
use crate::entities::{Block, Inst, Value};
use crate::function::ValueDef;
use crate::inst::InstKind;
use std::cell::{Cell, RefCell};

/// Compute the CFG of `cx.f` (the structure must be sound) into the
/// reusable buffer `cfg`.
pub(super) fn prepare(cx: &FnCtx<'_>, cfg: &mut Cfg) {
    cfg.recompute(cx.f);
}

/// Run the CFG/SSA checks but dominance (the structure must be sound;
/// `cfg` from [`prepare`]); then report `dominance`, the errors
/// [`check_dominance`] found during the typing walk.
pub(super) fn check(cx: &mut FnCtx<'_>, cfg: &Cfg, mut dominance: Vec<super::VerifyError>) {
    let f = cx.f;
    if let Some(entry) = cfg.entry() {
        let preds = cfg.unique_preds(entry);
        if !preds.is_empty() {
            let names: Vec<String> = preds.iter().map(|&p| cx.label(p)).collect();
            cx.report(
                Some(entry),
                None,
                format!("the entry block has predecessors ({})", names.join(", ")),
            );
        }
    }
    for &b in &f.layout {
        for &i in &f.blocks[b.index()].insts {
            match &f.insts[i.index()].kind {
                InstKind::Phi(entries) => check_phi_entries(cx, cfg, b, i, entries),
                // Past the phis at the start of the block there are none,
                // unless the structure check found one out of place.
                _ if !cx.misplaced_phis => break,
                _ => {}
            }
        }
    }
    // The typing walk went in layout order; these checks report in reverse
    // post-order (a stable sort keeps each block's own order).
    dominance.sort_by_key(|e| e.block.and_then(|b| cfg.rpo_index(b)));
    cx.errors.append(&mut dominance);
}

/// Dominance between the blocks of the CFG. A block dominates itself, and
/// the entry every reachable block; other queries follow single incoming
/// edges up, then search backwards for a path from the entry that avoids the
/// would-be dominator (the first few such queries of a function), then ask
/// the immediate dominators, which are computed (into a reused buffer) only
/// when a query needs them.
pub(super) struct Dominance<'c> {
    pub(super) cfg: &'c Cfg,
    /// The dominator tree of `cfg` when the caller has it: it answers
    /// every query.
    tree: Option<&'c DomTree>,
    idoms: &'c RefCell<Idoms>,
    /// Whether `idoms` holds the immediate dominators of `cfg`.
    ready: Cell<bool>,
    searches: &'c RefCell<SearchBuffers>,
    /// How many queries of this function were answered by a search.
    searched: Cell<u32>,
}

/// How far [`Dominance`] follows single incoming edges up from a block
/// before it searches or asks the immediate dominators.
const SINGLE_PRED_STEPS: usize = 8;

/// How many queries of a function [`Dominance`] answers by a backward search
/// (each up to a walk of the CFG) before it computes the immediate
/// dominators (a few walks, after which a query is a walk up the tree).
const SEARCHES_BEFORE_IDOMS: u32 = 4;

/// The buffers of [`Dominance`]'s backward searches, reused from one
/// function to the next.
#[derive(Default)]
pub(super) struct SearchBuffers {
    /// For each block slot: the number of the last search that reached it.
    seen: Vec<u32>,
    /// The blocks reached whose predecessors are still to be visited.
    stack: Vec<Block>,
}

impl<'c> Dominance<'c> {
    /// Dominance in `cfg`, with `idoms` the buffer for its immediate
    /// dominators and `searches` that of the backward searches.
    pub(super) fn new(
        cfg: &'c Cfg,
        idoms: &'c RefCell<Idoms>,
        searches: &'c RefCell<SearchBuffers>,
    ) -> Self {
        Dominance {
            cfg,
            tree: None,
            idoms,
            ready: Cell::new(false),
            searches,
            searched: Cell::new(0),
        }
    }

    /// The same queries answered by `tree`, the dominator tree of the CFG
    /// (when the caller has one).
    pub(super) fn with_tree(self, tree: Option<&'c DomTree>) -> Self {
        Dominance { tree, ..self }
    }

    fn dominates(&self, a: Block, b: Block) -> bool {
        if let Some(tree) = self.tree {
            return tree.dominates(a, b);
        }
        if a == b {
            return true;
        }
        let entry = self.cfg.entry();
        if Some(a) == entry || !self.cfg.is_reachable(b) {
            // Only a reachable block has dominators other than itself.
            return Some(a) == entry && self.cfg.is_reachable(b);
        }
        // Up a chain of blocks with one incoming edge each: that edge's
        // source is the block's immediate dominator.
        let mut up = b;
        for _ in 0..SINGLE_PRED_STEPS {
            if Some(up) == entry {
                // The entry has no dominator but itself, and `a` is neither.
                return false;
            }
            match *self.cfg.preds(up) {
                [p] if p == a => return true,
                [p] => up = p,
                _ => break,
            }
        }
        if !self.ready.get() {
            let searched = self.searched.get();
            if searched < SEARCHES_BEFORE_IDOMS {
                self.searched.set(searched + 1);
                // Every path to `b` goes through `up`.
                return !self.path_avoiding(a, up, searched == 0);
            }
            self.idoms.borrow_mut().recompute(self.cfg);
            self.ready.set(true);
        }
        self.idoms.borrow().dominates(self.cfg, a, b)
    }

    /// Whether some path from the entry reaches the reachable block `to`
    /// without passing through `a` (`a != to`): exactly when `a` does not
    /// dominate `to`. A search backwards along the edges of reachable
    /// blocks; `first` when it is the function's first (its buffers are
    /// then sized for the CFG).
    fn path_avoiding(&self, a: Block, to: Block, first: bool) -> bool {
        let mut buffers = self.searches.borrow_mut();
        let SearchBuffers { seen, stack } = &mut *buffers;
        if first {
            seen.clear();
            seen.resize(self.cfg.num_block_slots(), 0);
        }
        // Searches are numbered from 1 within the function; 0 is "never".
        let mark = self.searched.get();
        stack.clear();
        stack.push(to);
        seen[to.index()] = mark;
        while let Some(x) = stack.pop() {
            if Some(x) == self.cfg.entry() {
                return true;
            }
            for &p in self.cfg.preds(x) {
                if p != a && self.cfg.is_reachable(p) && seen[p.index()] != mark {
                    seen[p.index()] = mark;
                    stack.push(p);
                }
            }
        }
        false
    }

    pub(super) fn strictly_dominates(&self, a: Block, b: Block) -> bool {
        a != b && self.dominates(a, b)
    }
}

/// Entries and predecessor edges must match as multisets.
fn check_phi_entries(cx: &mut FnCtx<'_>, cfg: &Cfg, b: Block, i: Inst, entries: &[(Block, Value)]) {
    let preds = cfg.preds(b);
    // The usual case: one entry per edge, in the order of the edges, and no
    // block with two edges here (a block's edges to `b` are listed side by
    // side) — every check below passes.
    if entries.len() == preds.len()
        && entries.iter().zip(preds).all(|(e, &p)| e.0 == p)
        && preds.windows(2).all(|w| w[0] != w[1])
    {
        return;
    }
    // Each named block once, in order of first mention.
    for (k, &(l, _)) in entries.iter().enumerate() {
        if entries[..k].iter().any(|e| e.0 == l) {
            continue;
        }
        let have = entries.iter().filter(|e| e.0 == l).count();
        let edges = preds.iter().filter(|&&p| p == l).count();
        if !cx.block_in_layout(l) {
            cx.report(
                Some(b),
                Some(i),
                format!(
                    "phi entry names block #{} ({}), which is not in the function",
                    l.0,
                    cx.label(l)
                ),
            );
        } else if edges == 0 {
            cx.report(
                Some(b),
                Some(i),
                format!(
                    "phi has an entry for {}, which is not a predecessor of {}",
                    cx.label(l),
                    cx.label(b)
                ),
            );
        } else if have > edges {
            cx.report(
                Some(b),
                Some(i),
                format!(
                    "phi has {have} entries for {}, but it has {edges} edge(s) to {}",
                    cx.label(l),
                    cx.label(b)
                ),
            );
        }
        // `br %c, L, L` reaches L twice from one block: which edge was taken is
        // not observable, so both entries must carry the same value.
        let mut values = entries.iter().filter(|e| e.0 == l).map(|e| e.1);
        if let Some(first) = values.next() {
            if values.any(|v| v != first) {
                cx.report(
                    Some(b),
                    Some(i),
                    format!(
                        "phi has different values for the edges from {}; entries for one predecessor block must agree",
                        cx.label(l)
                    ),
                );
            }
        }
    }
    for p in cfg.unique_preds_iter(b) {
        let have = entries.iter().filter(|e| e.0 == p).count();
        let edges = preds.iter().filter(|&&x| x == p).count();
        if have == 0 {
            cx.report(
                Some(b),
                Some(i),
                format!("phi has no entry for predecessor {}", cx.label(p)),
            );
        } else if have < edges {
            cx.report(
                Some(b),
                Some(i),
                format!(
                    "phi has {have} entries for {}, but it has {edges} edges to {}",
                    cx.label(p),
                    cx.label(b)
                ),
            );
        }
    }
}

/// Every operand of instruction `i`, at position `pos` of reachable block
/// `b`, is available where it is used.
#[inline]
pub(super) fn check_dominance(
    cx: &mut FnCtx<'_>,
    dom: &Dominance<'_>,
    b: Block,
    pos: usize,
    i: Inst,
) {
    let cfg = dom.cfg;
    let f = cx.f;
    let kind = &f.insts[i.index()].kind;
    if let InstKind::Phi(entries) = kind {
        for &(p, v) in entries {
            // Edges from unreachable blocks are never taken; non-predecessors were reported.
            if !cfg.is_reachable(p) || !cfg.preds(b).contains(&p) {
                continue;
            }
            if let Some(db) = def_block(cx, v) {
                if !dom.dominates(db, p) {
                    let msg = format!("{} (the entry for {}) is not available at the end of {}: its definition in block {} does not dominate it", cx.val(v), cx.label(p), cx.label(p), cx.label(db));
                    cx.report(Some(b), Some(i), msg);
                }
            }
        }
    } else {
        // Collect the (rare) failing uses first, without allocating per instruction.
        let mut bad: Vec<(Value, Block)> = Vec::new();
        kind.for_each_operand(|v| {
            let Some((db, dp)) = def_site(cx, v) else {
                return;
            };
            let ok = if db == b {
                (dp as usize) < pos
            } else {
                dom.strictly_dominates(db, b)
            };
            if !ok {
                bad.push((v, db));
            }
        });
        for (v, db) in bad {
            let msg = if db == b {
                format!(
                    "use of {} before its definition in the same block",
                    cx.val(v)
                )
            } else {
                format!(
                    "use of {} is not dominated by its definition in block {}",
                    cx.val(v),
                    cx.label(db)
                )
            };
            cx.report(Some(b), Some(i), msg);
        }
    }
}

/// The block of the placed instruction defining `v` (`None` for constants,
/// parameters, null and values already reported as broken or unplaced).
fn def_block(cx: &FnCtx<'_>, v: Value) -> Option<Block> {
    def_site(cx, v).map(|(b, _)| b)
}

/// The block and position of the placed instruction defining `v` (as [`def_block`]).
#[inline]
fn def_site(cx: &FnCtx<'_>, v: Value) -> Option<(Block, u32)> {
    match cx.f.values.get(v.index())?.def {
        ValueDef::Inst(d) => cx.placed.get(d.index()).and_then(|s| s.get()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::DomTree;
    use crate::parse::parse_module;

    /// The text of a function whose block `k` branches to `succs[k]`.
    fn cfg_text(succs: &[Vec<usize>]) -> String {
        let mut text = String::from("func @f(%c: i64) {\n");
        for (k, s) in succs.iter().enumerate() {
            text.push_str(&format!("b{k}:\n"));
            text.push_str(&match s[..] {
                [] => "  ret\n".to_string(),
                [t] => format!("  jmp b{t}\n"),
                [t, e, ..] => format!("  br %c, b{t}, b{e}\n"),
            });
        }
        text.push_str("}\n");
        text
    }

    /// Pseudo-random CFGs of `n` blocks with 0-2 successors each.
    fn random_cfgs(n: usize, count: usize) -> Vec<Vec<Vec<usize>>> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ n as u64;
        let mut next = move |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        };
        (0..count)
            .map(|_| {
                (0..n)
                    .map(|_| (0..next(3)).map(|_| next(n)).collect())
                    .collect()
            })
            .collect()
    }

    /// Every way [`Dominance`] answers (following single edges, by a backward
    /// search, from the immediate dominators) agrees with the dominator tree
    /// on every pair of blocks, reachable or not.
    #[test]
    fn dominance_agrees_with_the_dominator_tree() {
        let mut shapes: Vec<Vec<Vec<usize>>> = (1..=10).flat_map(|n| random_cfgs(n, 60)).collect();
        // Longer than the single-edge walk: a chain with edges back.
        let long = 70;
        shapes.push((0..long).map(|k| vec![(k + 1) % long, k / 2]).collect());
        for succs in shapes {
            let (m, _) = parse_module(&cfg_text(&succs), "cfg").expect("parses");
            let f = &m.funcs[0];
            let cfg = Cfg::new(f);
            let tree = DomTree::new(f, &cfg);
            // Lazily (searches, then the immediate dominators), searching
            // for every query, and from the immediate dominators.
            for mode in ["lazy", "search", "idoms"] {
                let (idoms, searches) = (RefCell::default(), RefCell::default());
                let dom = Dominance::new(&cfg, &idoms, &searches);
                if mode == "idoms" {
                    idoms.borrow_mut().recompute(&cfg);
                    dom.ready.set(true);
                }
                for a in 0..succs.len() {
                    for b in 0..succs.len() {
                        let (a, b) = (Block::new(a), Block::new(b));
                        if mode == "search" {
                            dom.searched.set(0);
                        }
                        assert_eq!(
                            dom.dominates(a, b),
                            tree.dominates(a, b),
                            "{a:?} dom {b:?} ({mode}) in {succs:?}"
                        );
                    }
                }
            }
        }
    }
}
