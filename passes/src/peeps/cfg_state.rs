//! The engine's view of the control-flow graph. Rules see the dominator tree
//! of a *snapshot*: the CFG when the engine started, retaken after each CFG
//! cleanup (between snapshots the tree may be stale, which only makes its
//! answers conservative). The tree depends on nothing but the snapshot's CFG,
//! so it is built only when a rule first asks for it, which few runs do. The
//! cleanup asks for the *current* CFG, which is the snapshot itself until an
//! edge or the layout changes.

use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::Function;
use std::cell::OnceCell;

/// The snapshot CFG, its lazily built dominator tree, and the current CFG.
pub(crate) struct CfgState {
    /// The CFG at the last snapshot.
    snap: Cfg,
    /// The dominator tree of `snap`, once asked for.
    dom: OnceCell<DomTree>,
    /// No edge or layout change since the snapshot: `snap` is current.
    snap_is_current: bool,
    /// The current CFG, computed after a change (dropped at the next change).
    fresh: Option<Cfg>,
}

impl CfgState {
    /// The state of `func` as it is now (the first snapshot).
    pub(crate) fn new(func: &Function) -> CfgState {
        CfgState {
            snap: Cfg::new(func),
            dom: OnceCell::new(),
            snap_is_current: true,
            fresh: None,
        }
    }

    /// The snapshot's CFG and the cell its dominator tree is built into.
    pub(crate) fn snapshot_dom(&self) -> (&Cfg, &OnceCell<DomTree>) {
        (&self.snap, &self.dom)
    }

    /// The CFG of `func` as it is now.
    pub(crate) fn current(&mut self, func: &Function) -> &Cfg {
        if self.snap_is_current {
            &self.snap
        } else {
            self.fresh.get_or_insert_with(|| Cfg::new(func))
        }
    }

    /// An edge or the layout of `func` changed.
    pub(crate) fn changed(&mut self) {
        self.snap_is_current = false;
        self.fresh = None;
    }

    /// Take a new snapshot of `func` (a no-op when nothing changed since the last).
    pub(crate) fn snapshot(&mut self, func: &Function) {
        if !self.snap_is_current {
            self.snap = self.fresh.take().unwrap_or_else(|| Cfg::new(func));
            self.dom = OnceCell::new();
            self.snap_is_current = true;
        }
    }
}
