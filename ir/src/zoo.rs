//! The bug zoo (cargo feature `bug-zoo`): deliberately unsound variants of
//! the passes, the effects table and the x86-64 backend, each a one-line
//! change at the exact decision point of a real optimizer or code generator
//! bug, selected at run time with [`inject`]. `loadstar zoo` and the zoo test
//! measure how fast the harness catches each one.
//!
//! The registry lives here, in the crate every other one depends on, so the
//! passes (`passes::zoo` re-exports it), the effects table and `codegen` read
//! one list and one process-wide selection.
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
    /// Backend: a signed `slt` is selected as the unsigned condition code
    /// `b` (below) instead of `l`.
    NativeUnsignedCompare,
    /// Backend: folding a constant index into the displacement scales it by
    /// 4 instead of the element size 8.
    NativeConstIndexScale,
    /// Backend: a field store writes 16 bytes (the next word too).
    NativeWideStore,
    /// Backend: an element access with a constant index skips its bounds check.
    NativeConstIndexNoBounds,
    /// Backend: a field access whose base was itself loaded from the heap is
    /// taken as already null-checked (a null check dropped for a wrong reason).
    NativeLoadedBaseNonNull,
    /// Backend: `rdx` is left out of a call's clobbers, so a value kept in it
    /// across a runtime call is destroyed.
    NativeCallClobberRdx,
    /// Backend: the sequential moves of a parallel copy (phi elimination,
    /// spills) are emitted in reverse order.
    NativeMoveOrder,
    /// Backend: `sdiv`/`srem` go straight to `idiv` without the `-1` case
    /// (`MIN / -1` faults).
    NativeIdivMinus1,
    /// Backend: `setcc` writes the low byte of a compare's result without
    /// zero-extending it, so its upper bits are stale.
    NativeSetccNoZext,
}

impl Bug {
    /// Every planted bug, in table order.
    pub const ALL: [Bug; 22] = [
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
        Bug::NativeUnsignedCompare,
        Bug::NativeConstIndexScale,
        Bug::NativeWideStore,
        Bug::NativeConstIndexNoBounds,
        Bug::NativeLoadedBaseNonNull,
        Bug::NativeCallClobberRdx,
        Bug::NativeMoveOrder,
        Bug::NativeIdivMinus1,
        Bug::NativeSetccNoZext,
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
            Bug::NativeUnsignedCompare => "native-unsigned-compare",
            Bug::NativeConstIndexScale => "native-const-index-scale",
            Bug::NativeWideStore => "native-wide-store",
            Bug::NativeConstIndexNoBounds => "native-const-index-no-bounds",
            Bug::NativeLoadedBaseNonNull => "native-loaded-base-non-null",
            Bug::NativeCallClobberRdx => "native-call-clobber-rdx",
            Bug::NativeMoveOrder => "native-move-order",
            Bug::NativeIdivMinus1 => "native-idiv-minus-1",
            Bug::NativeSetccNoZext => "native-setcc-no-zext",
        }
    }

    /// The bug named `name` (as printed by [`Bug::name`]).
    pub fn from_name(name: &str) -> Option<Bug> {
        Bug::ALL.into_iter().find(|b| b.name() == name.trim())
    }

    /// Whether the bug lives in the backend (a zoo run turns the native oracle on).
    pub fn is_native(self) -> bool {
        self.name().starts_with("native-")
    }

    /// The passes a zoo run checks for this bug: the pass it lives in, plus
    /// `pipeline`; `none` for a backend bug (the native oracle compiles the
    /// original program).
    pub fn passes(self) -> &'static str {
        if self.is_native() {
            return "none";
        }
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
            Bug::NativeUnsignedCompare => "signed compare selected with an unsigned condition code",
            Bug::NativeConstIndexScale => "address-mode fold truncates the index scale",
            Bug::NativeWideStore => "widened store writes 16 bytes",
            Bug::NativeConstIndexNoBounds => "bounds check dropped for a constant index",
            Bug::NativeLoadedBaseNonNull => "null check dropped on a loaded (forwarded) base",
            Bug::NativeCallClobberRdx => "caller-saved register live across a runtime call",
            Bug::NativeMoveOrder => "parallel move sequentialised in the wrong order",
            Bug::NativeIdivMinus1 => "idiv without the MIN / -1 case",
            Bug::NativeSetccNoZext => "setcc result used without zero-extension",
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
}

/// Remove every planted bug: the passes are sound again.
pub fn clear() {
    ACTIVE.store(0, Ordering::SeqCst);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for b in Bug::ALL {
            assert_eq!(Bug::from_name(b.name()), Some(b));
            assert!(!b.imitates().is_empty());
            assert!(b.passes().ends_with("pipeline") || b.is_native());
        }
        let mut names: Vec<_> = Bug::ALL.iter().map(|b| b.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Bug::ALL.len());
        assert_eq!(Bug::from_name("no-such-bug"), None);
    }
}
