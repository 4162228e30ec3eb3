//! The dominator tree rules see: the one of a *snapshot* of the CFG, taken
//! when the engine starts and again after each CFG cleanup (between snapshots
//! the tree may be stale, which only makes its answers conservative). Few runs
//! ever ask for it, so neither the snapshot's `Cfg` nor its tree is built
//! until a rule asks — except that the `Cfg` is built just before the first
//! edge change after a snapshot, while it still describes the snapshot. When
//! the changes are branches turned into jumps (most of them), the changed
//! terminators' old kinds are kept instead, and the snapshot's `Cfg` is
//! built from them only if a rule asks (at 100k instructions, building it
//! read every block's terminator, a cache miss on most, and no rule asked).

use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::{Function, Inst, InstKind};
use std::cell::OnceCell;

/// The snapshot CFG and its dominator tree, each built on demand.
pub(crate) struct CfgState {
    /// The CFG at the last snapshot, once built.
    snap_cfg: OnceCell<Cfg>,
    /// The dominator tree of the snapshot, once asked for.
    dom: OnceCell<DomTree>,
    /// No edge or block list changed since the snapshot.
    snap_is_current: bool,
    /// Whether a rule can ask for the tree at all (only phis ask, and the
    /// engine never creates one).
    may_ask: bool,
    /// While the snapshot's `Cfg` is not built: the terminators changed
    /// since the snapshot, each with its kind before the change, in the
    /// order of the changes (the function's CFG with the first kind kept of
    /// each is the snapshot's).
    old_terms: Vec<(Inst, InstKind)>,
    /// No rule asks for the tree before the next snapshot (see
    /// [`CfgState::retire`]): changes keep nothing for it.
    retired: bool,
}

impl CfgState {
    /// The first snapshot, of the function as it is now; `may_ask` is false
    /// when it has no phi.
    pub(crate) fn new(may_ask: bool) -> CfgState {
        CfgState {
            snap_cfg: OnceCell::new(),
            dom: OnceCell::new(),
            snap_is_current: true,
            may_ask,
            old_terms: Vec::new(),
            retired: false,
        }
    }

    /// The next snapshot is taken before any rule runs again (the CFG
    /// cleanup between rounds): the current snapshot's tree will not be
    /// asked for, so the changes until then keep nothing for it (building
    /// its `Cfg` at the cleanup's first change read every block's
    /// terminator for nothing).
    pub(crate) fn retire(&mut self) {
        self.retired = true;
        self.old_terms.clear();
    }

    /// Whether the function has a phi (the engine never creates one).
    pub(crate) fn has_phis(&self) -> bool {
        self.may_ask
    }

    /// The snapshot's dominator tree, built on first use from `func` (the
    /// function now, which differs from the snapshot at most by the kept
    /// terminator kinds until the snapshot's `Cfg` is built).
    pub(crate) fn tree(&self, func: &Function) -> &DomTree {
        self.dom
            .get_or_init(|| DomTree::new(func, self.snap_cfg.get_or_init(|| self.cfg_of(func))))
    }

    /// The snapshot's CFG, from `func` with the kept terminator kinds.
    fn cfg_of(&self, func: &Function) -> Cfg {
        if self.old_terms.is_empty() {
            return Cfg::new(func);
        }
        // Each terminator's first kept kind, found by binary search (a
        // stable sort keeps the first of each first).
        let mut first: Vec<(Inst, usize)> = (0..self.old_terms.len())
            .map(|k| (self.old_terms[k].0, k))
            .collect();
        first.sort_by_key(|e| e.0);
        first.dedup_by_key(|e| e.0);
        Cfg::with_terminator_kinds(func, |t, now| {
            match first.binary_search_by_key(&t, |e| e.0) {
                Ok(k) => &self.old_terms[first[k].1].1,
                Err(_) => now,
            }
        })
    }

    /// An edge, the layout or a block's last instruction of `func` is about
    /// to change: keep what the snapshot's tree needs (its `Cfg`, built now).
    pub(crate) fn before_change(&mut self, func: &Function) {
        if self.snap_is_current || !self.old_terms.is_empty() {
            if self.needs_snapshot_cfg() {
                let cfg = self.cfg_of(func);
                let _ = self.snap_cfg.set(cfg);
            }
            self.old_terms.clear();
            self.snap_is_current = false;
        }
    }

    /// The terminator `term` of `func`, and nothing else, is about to change
    /// kind (a `br` becoming a `jmp`): keep its kind now while the
    /// snapshot's `Cfg` is not built, rather than build it.
    pub(crate) fn before_terminator_change(&mut self, func: &Function, term: Inst) {
        let keeping = !self.old_terms.is_empty() || self.snap_is_current;
        if !(keeping && self.needs_snapshot_cfg()) {
            self.before_change(func);
            return;
        }
        self.snap_is_current = false;
        let kind = func.insts[term.index()].kind.clone();
        self.old_terms.push((term, kind));
    }

    /// Whether the snapshot's `Cfg` is still to be kept for a tree not built.
    fn needs_snapshot_cfg(&self) -> bool {
        self.may_ask && !self.retired && self.dom.get().is_none() && self.snap_cfg.get().is_none()
    }

    /// Take a new snapshot (a no-op when nothing changed since the last);
    /// returns whether one was taken (the tree rules see may differ).
    pub(crate) fn snapshot(&mut self) -> bool {
        self.retired = false;
        if self.snap_is_current {
            return false;
        }
        self.snap_cfg = OnceCell::new();
        self.dom = OnceCell::new();
        self.old_terms.clear();
        self.snap_is_current = true;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::Block;

    /// Whether two dominator trees agree on every pair of `n` blocks.
    fn same_dominance(a: &DomTree, b: &DomTree, n: usize) -> bool {
        (0..n).all(|x| {
            (0..n).all(|y| {
                let (x, y) = (Block::new(x), Block::new(y));
                a.dominates(x, y) == b.dominates(x, y)
            })
        })
    }

    #[test]
    fn the_tree_asked_after_branches_became_jumps_is_the_snapshots() {
        let text = "func @f(%c: i64, %x: i64) -> i64 {\nentry:\n  br %c, l, r\nl:\n  br %x, m, r\n\
                    m:\n  jmp j\nr:\n  jmp j\nj:\n  %p = phi [m: %x], [r: %c]\n  ret %p\n}\n";
        let mut f = ir::parse_module(text, "t.ir").unwrap().0.funcs.remove(0);
        let snapshot = DomTree::new(&f, &Cfg::new(&f));
        let mut state = CfgState::new(true);
        // Both branches become jumps; their old kinds are kept, no CFG built.
        for (b, target) in [(0, 1), (1, 2)] {
            let term = f.terminator(Block::new(b)).unwrap();
            state.before_terminator_change(&f, term);
            f.insts[term.index()].kind = InstKind::Jmp(Block::new(target));
        }
        assert!(state.snap_cfg.get().is_none());
        let now = DomTree::new(&f, &Cfg::new(&f));
        let n = f.blocks.len();
        assert!(
            !same_dominance(&now, &snapshot, n),
            "the jumps change dominance"
        );
        assert!(same_dominance(state.tree(&f), &snapshot, n));
        // After a retire, a change keeps nothing; the next snapshot is fresh.
        state.retire();
        state.before_change(&f);
        assert!(state.old_terms.is_empty());
        assert!(state.snapshot());
        assert!(same_dominance(state.tree(&f), &now, n));
    }
}
