//! The bug zoo (cargo feature `bug-zoo`): deliberately unsound variants of
//! the passes, each a one-line change at the exact decision point of a real
//! optimizer bug, selected at run time with [`inject`]. `loadstar zoo` and the
//! zoo test measure how fast the harness catches each one.
//!
//! Every injection point reads `if zoo::active(Bug::X) { wrong } else { right }`
//! behind `#[cfg(feature = "bug-zoo")]`; without the feature neither this
//! module nor any check exists, so normal builds are unchanged.
//!
//! The selection is process-wide (one atomic bit set): every thread of a
//! sweep sees the same bugs. Tests that inject must not run concurrently
//! with tests that expect sound passes.

use std::sync::atomic::{AtomicU64, Ordering};

/// One planted bug.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Bug {
    /// LSE: a store forgets only the known value of its exact (base, field) —
    /// the Toy Optimizer's aliasing bug: `(v0, 0)` and `(v1, 0)` may be one object.
    LseExactAlias,
    /// LSE: a call of an extern does not clear any known value.
    LseCallNoClobber,
    /// LSE: a store through one base keeps the known values of other bases it
    /// may alias (only must-alias and same-base entries are forgotten).
    LseForwardMayAlias,
    /// LSE: a store in a conditionally executed block of a loop is ignored when
    /// deciding that a location is loop-invariant (Panda 8195875f).
    LseLoopCondStore,
    /// DSE: only a must-alias load keeps a store alive; a may-alias load does
    /// not (Panda 755ebc76).
    LseDseMayAliasLoad,
    /// DSE: a possible trap between a store and its overwrite does not observe
    /// the store (Cranelift #14053).
    LseDseAcrossTrap,
    /// DSE: a loop back edge not yet visited is ignored instead of counting as
    /// "nothing known dead", so a store the next iteration reads is removed
    /// (Cranelift #13990).
    LseDseLoopCarried,
    /// GVN: leaving a dominator-tree scope does not forget its entries, so a
    /// value of one branch is reused in its sibling (MoarVM's expression JIT
    /// "first reference" bug); the verifier rejects the result.
    GvnNonDominating,
    /// GVN: `new` is treated as a pure expression, so two allocations of the
    /// same type become one object.
    GvnMergeNew,
    /// Peepholes: `sdiv x, 0` is folded to 0 instead of being left to trap.
    PeepsFoldDivZero,
    /// Peepholes: the constant folder evaluates `sdiv MIN, -1` with a
    /// saturating wide division (`i64::MAX`) instead of IR.md's `MIN`.
    PeepsSdivMin,
    /// Peepholes: `phi_const_web` does not register its dependency on the
    /// distant phis it looked through (a missing `add_dep`, Simple ch. 9);
    /// the fixed-point check reports it.
    PeepsMissingDep,
    /// Effects table: an extern with declared effects loses its writes, so
    /// passes move loads across it and the effect checker sees undeclared writes.
    EffectsMissingWrite,
}

impl Bug {
    /// Every planted bug, in table order.
    pub const ALL: [Bug; 13] = [
        Bug::LseExactAlias,
        Bug::LseCallNoClobber,
        Bug::LseForwardMayAlias,
        Bug::LseLoopCondStore,
        Bug::LseDseMayAliasLoad,
        Bug::LseDseAcrossTrap,
        Bug::LseDseLoopCarried,
        Bug::GvnNonDominating,
        Bug::GvnMergeNew,
        Bug::PeepsFoldDivZero,
        Bug::PeepsSdivMin,
        Bug::PeepsMissingDep,
        Bug::EffectsMissingWrite,
    ];

    /// The name used by `--inject`.
    pub fn name(self) -> &'static str {
        match self {
            Bug::LseExactAlias => "lse-exact-alias",
            Bug::LseCallNoClobber => "lse-call-no-clobber",
            Bug::LseForwardMayAlias => "lse-forward-may-alias",
            Bug::LseLoopCondStore => "lse-loop-cond-store",
            Bug::LseDseMayAliasLoad => "lse-dse-may-alias-load",
            Bug::LseDseAcrossTrap => "lse-dse-across-trap",
            Bug::LseDseLoopCarried => "lse-dse-loop-carried",
            Bug::GvnNonDominating => "gvn-non-dominating",
            Bug::GvnMergeNew => "gvn-merge-new",
            Bug::PeepsFoldDivZero => "peeps-fold-div-zero",
            Bug::PeepsSdivMin => "peeps-sdiv-min",
            Bug::PeepsMissingDep => "peeps-missing-dep",
            Bug::EffectsMissingWrite => "effects-missing-write",
        }
    }

    /// The bug named `name` (as printed by [`Bug::name`]).
    pub fn from_name(name: &str) -> Option<Bug> {
        Bug::ALL.into_iter().find(|b| b.name() == name.trim())
    }

    /// The passes a zoo run checks for this bug: the pass it lives in, plus `pipeline`.
    pub fn passes(self) -> &'static str {
        match self {
            Bug::GvnNonDominating | Bug::GvnMergeNew => "gvn,pipeline",
            Bug::PeepsFoldDivZero | Bug::PeepsSdivMin | Bug::PeepsMissingDep => "peeps,pipeline",
            _ => "lse,pipeline",
        }
    }

    /// The real bug it imitates, in a few words.
    pub fn imitates(self) -> &'static str {
        match self {
            Bug::LseExactAlias => {
                "Toy Optimizer: store invalidates only its exact (object, offset)"
            }
            Bug::LseCallNoClobber => "extern call does not clear the known heap",
            Bug::LseForwardMayAlias => "forwarding across a may-alias store to another base",
            Bug::LseLoopCondStore => {
                "Panda 8195875f: conditional store ignored for loop invariance"
            }
            Bug::LseDseMayAliasLoad => "Panda 755ebc76: DSE ignores a may-alias load",
            Bug::LseDseAcrossTrap => "Cranelift #14053: dead store removed across a trap",
            Bug::LseDseLoopCarried => "Cranelift #13990: loop-carried store treated as dead",
            Bug::GvnNonDominating => "MoarVM expr JIT: value reused from a non-dominating branch",
            Bug::GvnMergeNew => "GVN merges two allocations",
            Bug::PeepsFoldDivZero => "constant folder folds a trapping division",
            Bug::PeepsSdivMin => "constant folder gets sdiv MIN, -1 wrong",
            Bug::PeepsMissingDep => "Simple ch. 9: a peephole forgets its add_dep",
            Bug::EffectsMissingWrite => "effects table drops a declared extern write",
        }
    }

    fn bit(self) -> u64 {
        1 << (self as u32)
    }
}

impl std::fmt::Display for Bug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

static ACTIVE: AtomicU64 = AtomicU64::new(0);

/// Plant `bug` (in addition to any already planted) for the whole process.
pub fn inject(bug: Bug) {
    ACTIVE.fetch_or(bug.bit(), Ordering::SeqCst);
    sync_ir_hooks();
}

/// Remove every planted bug: the passes are sound again.
pub fn clear() {
    ACTIVE.store(0, Ordering::SeqCst);
    sync_ir_hooks();
}

/// Whether `bug` is planted.
#[inline]
pub fn active(bug: Bug) -> bool {
    ACTIVE.load(Ordering::Relaxed) & bug.bit() != 0
}

/// The planted bugs, in table order.
pub fn planted() -> Vec<Bug> {
    Bug::ALL.into_iter().filter(|&b| active(b)).collect()
}

/// The effects table lives in `ir`, below this crate: mirror its bug there.
fn sync_ir_hooks() {
    ir::effects::zoo_drop_declared_writes(active(Bug::EffectsMissingWrite));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for b in Bug::ALL {
            assert_eq!(Bug::from_name(b.name()), Some(b));
            assert!(!b.imitates().is_empty());
            assert!(b.passes().ends_with("pipeline"));
        }
        let mut names: Vec<_> = Bug::ALL.iter().map(|b| b.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Bug::ALL.len());
        assert_eq!(Bug::from_name("no-such-bug"), None);
    }
}
