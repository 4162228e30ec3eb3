//! The dominator tree rules see: the one of a *snapshot* of the CFG, taken
//! when the engine starts and again after each CFG cleanup (between snapshots
//! the tree may be stale, which only makes its answers conservative). Few runs
//! ever ask for it, so neither the snapshot's `Cfg` nor its tree is built
//! until a rule asks — except that the `Cfg` is built just before the first
//! edge change after a snapshot, while it still describes the snapshot.

use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::Function;
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
        }
    }

    /// Whether the function has a phi (the engine never creates one).
    pub(crate) fn has_phis(&self) -> bool {
        self.may_ask
    }

    /// The cells of the snapshot's CFG and dominator tree (filled from the
    /// function on first use; valid because they are filled before it changes).
    pub(crate) fn snapshot_cells(&self) -> (&OnceCell<Cfg>, &OnceCell<DomTree>) {
        (&self.snap_cfg, &self.dom)
    }

    /// An edge, the layout or a block's last instruction of `func` is about
    /// to change: keep what the snapshot's tree needs.
    pub(crate) fn before_change(&mut self, func: &Function) {
        if self.snap_is_current {
            if self.may_ask && self.dom.get().is_none() {
                self.snap_cfg.get_or_init(|| Cfg::new(func));
            }
            self.snap_is_current = false;
        }
    }

    /// Take a new snapshot (a no-op when nothing changed since the last);
    /// returns whether one was taken (the tree rules see may differ).
    pub(crate) fn snapshot(&mut self) -> bool {
        if self.snap_is_current {
            return false;
        }
        self.snap_cfg = OnceCell::new();
        self.dom = OnceCell::new();
        self.snap_is_current = true;
        true
    }
}
