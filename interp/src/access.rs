//! The memory-access hook: an effect-checking mode can observe every access an
//! instruction makes, its own and the environment's during a step it caused.
//!
//! The interpreter is generic over an [`AccessObserver`]; with [`NoObserver`]
//! (the default) every hook compiles away.

use ir::{EffectLoc, FuncId, Inst};
use rustc_hash::FxHashSet;

/// Whether an access reads or writes.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum AccessKind {
    /// A read.
    Read,
    /// A write.
    Write,
}

/// A node of the abstract heap tree of IR.md §8 that an access touches.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum AccessLoc {
    /// A field, the elements of arrays of one element type, or a global.
    Heap(EffectLoc),
    /// The allocator's state (`new`, `newarray`).
    Alloc,
    /// The output trace (`escape`).
    Output,
}

/// An instruction of a function: where an access was made.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Site {
    /// The function.
    pub func: FuncId,
    /// The instruction in it.
    pub inst: Inst,
}

/// Receives every memory access of an execution.
pub trait AccessObserver {
    /// False for observers that ignore everything (lets the hot loop skip the hooks).
    const ENABLED: bool = true;

    /// `stack` is the chain of active instructions, outermost first: the call
    /// instructions of every caller, then the instruction making the access.
    fn access(&mut self, stack: &[Site], kind: AccessKind, loc: AccessLoc);

    /// Every access of `accesses`, in order, all made by `stack` (an
    /// environment step's log): [`AccessObserver::access`] on each, unless the
    /// observer knows a shorter way to the same result.
    fn access_all(&mut self, stack: &[Site], accesses: &[(AccessKind, AccessLoc)]) {
        for &(kind, loc) in accesses {
            self.access(stack, kind, loc);
        }
    }
}

/// The observer that records nothing.
pub struct NoObserver;

impl AccessObserver for NoObserver {
    const ENABLED: bool = false;
    fn access(&mut self, _: &[Site], _: AccessKind, _: AccessLoc) {}
}

/// Collects, for every instruction, the set of accesses it made — directly,
/// through the environment, or (for a `call`) anywhere inside the callee.
#[derive(Default, Debug, Clone)]
pub struct AccessLog {
    /// Every `(site, kind, location)` seen.
    pub entries: FxHashSet<(Site, AccessKind, AccessLoc)>,
}

impl AccessLog {
    /// An empty log.
    pub fn new() -> AccessLog {
        AccessLog::default()
    }

    /// Whether `site` made an access of `kind` to `loc`.
    pub fn contains(&self, site: Site, kind: AccessKind, loc: AccessLoc) -> bool {
        self.entries.contains(&(site, kind, loc))
    }

    /// Every access made by `site`.
    pub fn accesses_of(&self, site: Site) -> Vec<(AccessKind, AccessLoc)> {
        self.entries
            .iter()
            .filter(|(s, ..)| *s == site)
            .map(|&(_, k, l)| (k, l))
            .collect()
    }
}

impl AccessObserver for AccessLog {
    fn access(&mut self, stack: &[Site], kind: AccessKind, loc: AccessLoc) {
        for &site in stack {
            self.entries.insert((site, kind, loc));
        }
    }
}
