//! Branch folds between peephole rounds (issue 13; LLVM's SimplifyCFG and
//! jump threading do the same), each a `br` turned into a `jmp` — a `br`
//! never traps, so only where it goes matters:
//!
//! - **equal arms** (`peeps.equal_arms`): `br c, a, b` where both edges lead
//!   to the same place with the same values: `a == b` with the phis of `a`
//!   agreeing on both edges; or `a` and `b` each pure instructions (no
//!   read, write, trap or allocation; the arm dropped may also read and trap
//!   only on a reference its edge knows non-null) and then the same
//!   terminator — the same `ret v`, both `unreachable`, or the same
//!   `jmp`/`br` whose targets' phis
//!   take the same values from `a` and from `b`; or one arm a lone `jmp` to
//!   the other whose phis take the same value from both ways in; or
//!   (`peeps.equal_trapping_arms`) both arms the same certain trap
//!   ([`ir::effects::certain_trap`]: `nullcheck null`, `guard 0`, …) and
//!   then `unreachable` — either way the program traps the same way with
//!   the same heap, nothing run in between;
//! - **decided branches** (`peeps.decided_branches`): `br c` in a block
//!   dominated by an edge of an earlier `br` on the same condition (or on
//!   `eq c, 0` / `ne c, 0`, or on `c` when this one tests `eq`/`ne c, 0`),
//!   where the edge's target has that edge as its only way in: `c`'s value
//!   is known there. A dominator-tree walk carries the known conditions; it
//!   runs only when two branches test one condition, so a function with
//!   nothing to decide pays one look at each terminator.
//!
//! The empty diamonds of [`super::diamonds`] are found in the same walk
//! over the terminators.

use super::block_edges::BlockEdges;
use super::engine::Engine;
use crate::edge_facts::{cond_root, entry_fact};
use ir::effects::{certain_trap, local_inst_effects, traps_only_on_null};
use ir::{Block, Function, Inst, InstKind, Value};

/// The arm to keep when `br c, a, b` in block `me` may become a `jmp`
/// (`Some((keep, dropped))`), by the equal-arms rule of the module header
/// (`phis`: whether the function may have a phi, see [`edges_agree`]).
pub(crate) fn equal_arms(
    func: &Function,
    phis: bool,
    me: Block,
    c: Value,
    a: Block,
    b: Block,
) -> Option<(Block, Block)> {
    if a == b {
        return edges_agree(func, phis, a, me, me).then_some((a, b));
    }
    if a == me || b == me {
        return None;
    }
    if lone_jmp(func, b) == Some(a) && edges_agree(func, phis, a, me, b) {
        return Some((a, b));
    }
    if lone_jmp(func, a) == Some(b) && edges_agree(func, phis, b, me, a) {
        return Some((b, a));
    }
    // The terminators first (cheap), then whether what precedes them is pure.
    let (&ta, &tb) = (
        func.blocks[a.index()].insts.last()?,
        func.blocks[b.index()].insts.last()?,
    );
    let same = match (&func.insts[ta.index()].kind, &func.insts[tb.index()].kind) {
        (InstKind::Ret(x), InstKind::Ret(y)) => x == y,
        (InstKind::Unreachable, InstKind::Unreachable) => true,
        (InstKind::Jmp(j), InstKind::Jmp(k)) => {
            j == k && *j != a && *j != b && edges_agree(func, phis, *j, a, b)
        }
        (InstKind::Br(c, j, k), InstKind::Br(d, j2, k2)) => {
            c == d
                && (j, k) == (j2, k2)
                && ![a, b].contains(j)
                && ![a, b].contains(k)
                && edges_agree(func, phis, *j, a, b)
                && edges_agree(func, phis, *k, a, b)
        }
        _ => false,
    };
    if !same {
        return None;
    }
    if same_certain_trap(func, a, b) {
        return Some((a, b));
    }
    // The arm kept must be pure; the one dropped may also hold accesses that
    // can only trap on a reference its edge knows non-null (it ran no
    // further load then: the never-worse oracle counts them).
    if pure_before_last(func, a, None) && pure_before_last(func, b, nonnull_on(func, c, false)) {
        Some((a, b))
    } else if pure_before_last(func, b, None)
        && pure_before_last(func, a, nonnull_on(func, c, true))
    {
        Some((b, a))
    } else {
        None
    }
}

/// Whether blocks `a` and `b` are each the same certain trap (equal
/// instructions) and then their terminator: entering either traps the same
/// way, before anything else happens.
fn same_certain_trap(func: &Function, a: Block, b: Block) -> bool {
    let (ia, ib) = (&func.blocks[a.index()].insts, &func.blocks[b.index()].insts);
    match (ia.as_slice(), ib.as_slice()) {
        ([x, _], [y, _]) => {
            let (dx, dy) = (&func.insts[x.index()], &func.insts[y.index()]);
            dx.block.is_some()
                && dy.block.is_some()
                && dx.kind == dy.kind
                && certain_trap(func, *x).is_some()
        }
        _ => false,
    }
}

/// The reference `br c` knows non-null on its first (`first`) or second edge.
fn nonnull_on(func: &Function, c: Value, first: bool) -> Option<Value> {
    let (root, direct) = cond_root(func, c);
    (func.value_type(root).is_ref() && first == direct).then_some(root)
}

/// The instruction of `b` when it is a lone `jmp`: its target.
pub(crate) fn lone_jmp(func: &Function, b: Block) -> Option<Block> {
    match func.blocks[b.index()].insts.as_slice() {
        [only] => match func.insts[only.index()].kind {
            InstKind::Jmp(j) => Some(j),
            _ => None,
        },
        _ => None,
    }
}

/// Whether every instruction of `b` but the last is pure and not a phi (so
/// running `b` or not shows nothing but where its terminator goes), or,
/// with `nonnull` (a reference known non-null on the way into `b`), writes
/// nothing, allocates nothing and may only trap when `nonnull` is null.
fn pure_before_last(func: &Function, b: Block, nonnull: Option<Value>) -> bool {
    let Some((_, rest)) = func.blocks[b.index()].insts.split_last() else {
        return false;
    };
    rest.iter().all(|&i| {
        let data = &func.insts[i.index()];
        if data.block.is_none() {
            return true;
        }
        if data.kind.is_phi() {
            return false;
        }
        match local_inst_effects(func, i) {
            Some(e) if e.is_pure() => true,
            Some(e) => {
                nonnull.is_some()
                    && e.writes_nothing()
                    && !e.allocates
                    && traps_only_on_null(func, i) == nonnull
            }
            None => false,
        }
    })
}

/// Whether the decided-branches walk may decide a branch on one of `roots`
/// (sorted), given `edges` (the function's block edges now) and its
/// branches `brs` (block, condition, targets; ones since folded count
/// too, which only keeps the walk): false only when every block with
/// an entry fact on one of them ([`entry_fact`]: the one way in is from a
/// `br` with two different targets) dominates no other block
/// ([`dominates_nothing`]) and does not itself end in a `br` on that root —
/// then no fact is known where a branch on its root is. It needs no
/// dominator tree nor `Cfg`: at 100k instructions, building them and
/// walking the tree missed the cache on most blocks, and on shapes whose
/// facts hold only inside one arm of a diamond (`alias_diamonds`) it never
/// decided anything.
fn may_decide(
    func: &Function,
    edges: &BlockEdges,
    roots: &[Value],
    brs: &[(Block, Value, Block, Block)],
) -> bool {
    let entry = func.layout.first().copied();
    brs.iter().any(|&(p, c, x, y)| {
        let entered_from_p = |e: Block| x != y && edges.single_pred(e) == Some(p);
        if !entered_from_p(x) && !entered_from_p(y) {
            return false;
        }
        let root = cond_root(func, c).0;
        roots.binary_search(&root).is_ok()
            && [x, y].into_iter().any(|e| {
                entered_from_p(e)
                    && (Some(e) == entry
                        || p == e
                        || (edges.ends_in_br(e) && tests_root(func, e, root))
                        || !dominates_nothing(edges, e, p))
            })
    })
}

/// Whether block `b` ends in a `br` whose condition's root is `root`.
fn tests_root(func: &Function, b: Block, root: Value) -> bool {
    let Some(t) = func.terminator(b) else {
        return false;
    };
    match func.insts[t.index()].kind {
        InstKind::Br(c, ..) => cond_root(func, c).0 == root,
        _ => false,
    }
}

/// Whether block `e` (not the entry), whose one way in is from `p` (not `e`),
/// provably dominates no other block. If `e` strictly dominated a block, it
/// would dominate the successor of `e` after the last `e` on a path to that
/// block, so it is enough that no successor `s` of `e` is dominated by `e`:
/// `s` is `p` (which dominates `e`), or has two ways in, the other from a
/// block `e` does not dominate — `p`, or a block other than `e` whose one
/// way in is from `p` (reached from the entry around `e`, as `p` is, when
/// `e` is reachable; an unreachable `e` is never walked).
fn dominates_nothing(edges: &BlockEdges, e: Block, p: Block) -> bool {
    edges.succs(e).iter().all(|&s| {
        s == e
            || s == p
            || edges
                .other_pred(s, e)
                .is_some_and(|q| q == p || (q != e && edges.single_pred(q) == Some(p)))
    })
}

/// Whether every phi of `join` takes the same value on the edges from `x`
/// and from `y` (the first and last entry when `x == y`: the two edges of
/// one `br`). `phis` is false when the function has no phi (the engine
/// never makes one): then nothing is read, where the walk over `join`'s
/// instructions missed the cache on each at 100k instructions.
pub(crate) fn edges_agree(func: &Function, phis: bool, join: Block, x: Block, y: Block) -> bool {
    !phis
        || func.blocks[join.index()].insts.iter().all(|&p| {
            let data = &func.insts[p.index()];
            let InstKind::Phi(entries) = &data.kind else {
                return true;
            };
            if data.block.is_none() {
                return true;
            }
            let first = entries.iter().find(|e| e.0 == x).map(|e| e.1);
            let last = entries.iter().rev().find(|e| e.0 == y).map(|e| e.1);
            first == last
        })
}

impl Engine<'_> {
    /// The CFG steps between peephole rounds: empty diamonds, equal arms,
    /// decided branches (`edits`: the edits made before). Returns whether an
    /// edge changed.
    pub(crate) fn fold_branches(&mut self, edits: u64) -> bool {
        let mut diamonds = std::mem::take(&mut self.s.bufs.diamonds);
        let mut equal = std::mem::take(&mut self.s.bufs.equal_arms);
        let mut branches = std::mem::take(&mut self.s.bufs.branches);
        let mut brs = std::mem::take(&mut self.s.bufs.branch_edges);
        diamonds.clear();
        equal.clear();
        branches.clear();
        brs.clear();
        for &me in &self.func.layout {
            let Some(term) = self.func.terminator(me) else {
                continue;
            };
            let InstKind::Br(c, a, b) = self.func.insts[term.index()].kind else {
                continue;
            };
            brs.push((me, c, a, b));
            if a != b && self.same_empty_arms(a, b) {
                diamonds.push((term, a, b));
            } else if equal_arms(self.func, self.cfgs.has_phis(), me, c, a, b).is_some() {
                equal.push(term);
            } else {
                branches.push(cond_root(self.func, c).0);
            }
        }
        let mut changed = self.apply_empty_diamonds(&mut diamonds);
        changed |= self.apply_equal_arms(&equal);
        // Skipped while nothing it reads changed since a walk that found
        // nothing (see `Engine::decide_key`; the folds above are edits too).
        let key = self.decide_key(edits);
        if changed || self.decide_found_nothing_at != Some(key) {
            if self.decide_branches(&mut branches, &brs) {
                changed = true;
            } else if !changed {
                self.decide_found_nothing_at = Some(key);
            }
        }
        self.s.bufs.diamonds = diamonds;
        self.s.bufs.equal_arms = equal;
        self.s.bufs.branches = branches;
        self.s.bufs.branch_edges = brs;
        changed
    }

    /// Turn each `br` of `terms` whose arms are still equal into a `jmp`.
    fn apply_equal_arms(&mut self, terms: &[Inst]) -> bool {
        let mut changed = false;
        for &term in terms {
            let Some(me) = self.func.insts[term.index()].block else {
                continue;
            };
            let InstKind::Br(c, a, b) = self.func.insts[term.index()].kind else {
                continue;
            };
            // Checked again: an earlier fold of this walk may have changed a phi.
            let Some((keep, dropped)) = equal_arms(self.func, self.cfgs.has_phis(), me, c, a, b)
            else {
                continue;
            };
            if same_certain_trap(self.func, keep, dropped) {
                self.report.equal_trapping_arms += 1;
            } else {
                self.report.equal_arms += 1;
            }
            self.rewrite_branch(term, c, keep, dropped);
            changed = true;
        }
        changed
    }

    /// `br c, ..` at `term` in becomes `jmp keep`; the edge to `dropped` goes.
    fn rewrite_branch(&mut self, term: Inst, c: Value, keep: Block, dropped: Block) {
        self.ensure_users();
        self.before_branch_change(term);
        let me = self.func.insts[term.index()].block.expect("placed");
        self.func.insts[term.index()].kind = InstKind::Jmp(keep);
        self.drop_edge(me, dropped);
        if let Some(d) = self.func.def_inst(c) {
            if self.placed(d) {
                // The condition lost a user; its other users (often every
                // branch testing it) did not change, so they are not pushed:
                // pushing them per fold made N branches on one value cost N².
                self.revisit(d);
            }
        }
    }

    /// The decided-branches rule: when two branches test one root (`roots`,
    /// one per branch left by the other folds) and [`may_decide`] (over
    /// `brs`, every branch) says the walk may decide one, walk the dominator
    /// tree carrying what each single-entry edge says.
    fn decide_branches(
        &mut self,
        roots: &mut Vec<Value>,
        brs: &[(Block, Value, Block, Block)],
    ) -> bool {
        roots.sort_unstable();
        let before = roots.len();
        roots.dedup();
        if roots.len() == before {
            return false;
        }
        self.current_edges();
        if !may_decide(self.func, &self.s.bufs.cfg, roots, brs) {
            return false;
        }
        let roots: &[Value] = roots;
        let func: &Function = self.func;
        let decided = crate::analyses::with_analyses(func, |a| {
            let (cfg, dom) = (a.cfg(), a.dom(func));
            // Per root (sorted): whether it is known non-zero, if known.
            let slot_of = |root: Value| roots.binary_search(&root).ok();
            let mut known: Vec<Option<bool>> = vec![None; roots.len()];
            let mut undo: Vec<(usize, Option<bool>)> = Vec::new();
            let mut decided: Vec<(Inst, Block, Block)> = Vec::new();
            enum Step {
                Enter(Block),
                Leave(usize),
            }
            let mut stack = Vec::new();
            if let Some(entry) = cfg.entry() {
                stack.push(Step::Enter(entry));
            }
            while let Some(step) = stack.pop() {
                let b = match step {
                    Step::Leave(mark) => {
                        for (slot, old) in undo.drain(mark..).rev() {
                            known[slot] = old;
                        }
                        continue;
                    }
                    Step::Enter(b) => b,
                };
                stack.push(Step::Leave(undo.len()));
                stack.extend(dom.children(b).iter().map(|&c| Step::Enter(c)));
                // What the single edge into `b` says.
                if let Some((root, nonzero)) = entry_fact(func, cfg, b) {
                    if let Some(slot) = slot_of(root) {
                        undo.push((slot, known[slot]));
                        known[slot] = Some(nonzero);
                    }
                }
                let Some(t) = func.terminator(b) else {
                    continue;
                };
                let InstKind::Br(c, x, y) = func.insts[t.index()].kind else {
                    continue;
                };
                let (root, direct) = cond_root(func, c);
                let Some(slot) = slot_of(root) else {
                    continue;
                };
                if let Some(nonzero) = known[slot] {
                    if x != y {
                        let taken = nonzero == direct;
                        decided.push(if taken { (t, x, y) } else { (t, y, x) });
                    }
                }
            }
            decided
        });
        let changed = !decided.is_empty();
        for (t, keep, dropped) in decided {
            let InstKind::Br(c, ..) = self.func.insts[t.index()].kind else {
                continue;
            };
            self.rewrite_branch(t, c, keep, dropped);
            self.report.decided_branches += 1;
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block edges of `text`'s function, and its layout.
    fn edges_of(text: &str) -> (BlockEdges, Vec<Block>) {
        let f = ir::parse_module(text, "t.ir").unwrap().0.funcs.remove(0);
        let mut edges = BlockEdges::default();
        edges.recompute(&f);
        (edges, f.layout.clone())
    }

    #[test]
    fn an_arm_of_a_diamond_dominates_nothing() {
        let (edges, l) = edges_of(
            "func @f(%c: i64) -> i64 {\nentry:\n  br %c, l, r\nl:\n  jmp m\nr:\n  jmp m\n\
             m:\n  ret 1\n}\n",
        );
        assert!(dominates_nothing(&edges, l[1], l[0]));
        assert!(dominates_nothing(&edges, l[2], l[0]));
    }

    /// A double edge from `e` (which the equal-arms fold removes before the
    /// walk in a verified function) still counts as `e`'s alone.
    #[test]
    fn a_block_entered_twice_from_e_alone_is_dominated_by_it() {
        let (edges, l) = edges_of(
            "func @f(%c: i64, %x: i64) -> i64 {\nentry:\n  br %c, e, r\ne:\n  br %x, s, s\n\
             s:\n  ret 1\nr:\n  ret 2\n}\n",
        );
        assert!(!dominates_nothing(&edges, l[1], l[0]));
    }
}
