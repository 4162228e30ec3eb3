//! Alias analysis: must / may / no alias for two memory accesses.
//!
//! Accesses to different abstract heap leaves never interfere. Within one
//! leaf, the bases decide: the same base (after copies) with the same field,
//! or the same array with the same index value, must alias; two different
//! allocations never alias; a fresh allocation never aliases a parameter
//! (whose object existed before the call); a fresh allocation that never
//! escapes aliases no other base; different constant indices never alias;
//! anything else may.

use crate::escape::EscapeInfo;
use ir::{Addr, Function, Value, ValueDef};

/// The answer to "can these two accesses touch the same slot?".
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum AliasResult {
    /// They never touch the same slot.
    No,
    /// They might.
    May,
    /// They always touch the same slot (when both execute without trapping).
    Must,
}

/// Alias queries over one function. It keeps only facts about the function's
/// values, so the function may be edited while it is in use (values created
/// afterwards are treated as unknown, never as allocations).
#[derive(Clone, Debug, Default)]
pub struct AliasAnalysis {
    escape: EscapeInfo,
}

impl AliasAnalysis {
    /// Analyse `func`.
    pub fn new(func: &Function) -> AliasAnalysis {
        AliasAnalysis {
            escape: EscapeInfo::new(func),
        }
    }

    /// Analyse `func` afresh, reusing this analysis' storage.
    pub fn recompute(&mut self, func: &Function) {
        self.escape.recompute(func);
    }

    /// Record that `old` (not a copy) was replaced by `new` in every use, so
    /// that copies of `old` are now looked through to `new` (see
    /// [`crate::copies::CopyRoots::redirect`]).
    pub fn redirect(&mut self, func: &Function, old: Value, new: Value) {
        self.escape.copies_mut().redirect(func, old, new);
    }

    /// The escape facts this analysis uses.
    pub fn escape(&self) -> &EscapeInfo {
        &self.escape
    }

    /// How two base references relate: `Must` when they are the same object
    /// on every execution, `No` when never, `May` otherwise.
    pub fn bases(&self, func: &Function, a: Value, b: Value) -> AliasResult {
        let copies = self.escape.copies();
        let (a, b) = (copies.root(func, a), copies.root(func, b));
        if a == b {
            return AliasResult::Must;
        }
        let is_param = |v: Value| matches!(func.value_def(v), ValueDef::Param(_));
        let (fa, fb) = (self.escape.allocation_of(a), self.escape.allocation_of(b));
        match (fa, fb) {
            // Two different allocation sites (the same site seen through two
            // different SSA values needs a phi, which makes it escape).
            (Some(x), Some(y)) if x != y => AliasResult::No,
            _ if self.escape.is_unescaped_allocation(a)
                || self.escape.is_unescaped_allocation(b) =>
            {
                AliasResult::No
            }
            // A parameter's object existed before the call; a fresh one did not.
            (Some(_), None) if is_param(b) => AliasResult::No,
            (None, Some(_)) if is_param(a) => AliasResult::No,
            _ => AliasResult::May,
        }
    }

    /// How two accesses relate.
    pub fn addrs(&self, func: &Function, a: &Addr, b: &Addr) -> AliasResult {
        match (a, b) {
            (Addr::Global(x), Addr::Global(y)) => {
                if x == y {
                    AliasResult::Must
                } else {
                    AliasResult::No
                }
            }
            (
                Addr::Field {
                    base: ba,
                    field: fa,
                },
                Addr::Field {
                    base: bb,
                    field: fb,
                },
            ) => {
                if fa != fb {
                    AliasResult::No
                } else {
                    self.bases(func, *ba, *bb)
                }
            }
            (
                Addr::Elem {
                    base: ba,
                    index: ia,
                },
                Addr::Elem {
                    base: bb,
                    index: ib,
                },
            ) => {
                if func.value_type(*ba).elem() != func.value_type(*bb).elem() {
                    return AliasResult::No;
                }
                let copies = self.escape.copies();
                let (ia, ib) = (copies.root(func, *ia), copies.root(func, *ib));
                let index = match (func.as_const(ia), func.as_const(ib)) {
                    (Some(x), Some(y)) if x != y => AliasResult::No,
                    _ if ia == ib => AliasResult::Must,
                    _ => AliasResult::May,
                };
                match (self.bases(func, *ba, *bb), index) {
                    (AliasResult::No, _) | (_, AliasResult::No) => AliasResult::No,
                    (AliasResult::Must, AliasResult::Must) => AliasResult::Must,
                    _ => AliasResult::May,
                }
            }
            _ => AliasResult::No,
        }
    }
}
