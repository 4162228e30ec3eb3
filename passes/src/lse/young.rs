//! The allocations of one block that have not escaped yet
//! ([`crate::escape::EscapeInfo::local_escape`]): between its definition and
//! its first escape (later in the same block) nothing but its own SSA value
//! reaches an allocation, so no call, volatile access or trap there can see
//! its slots. Forwarding (walking forward) and dead-store elimination
//! (walking backward) both keep such a set while they walk a block; in a
//! function without cycles dead-store elimination keeps it across blocks
//! ([`FirstEscapes`]).
//!
//! A per-value mark, so that membership, entering and leaving are O(1)
//! whatever the number of allocations in the block; the values marked are
//! listed so that emptying the set costs what filling it did, and the marks
//! grow only when an allocation is first made young (most functions have
//! none).

use super::loc::Loc;
use crate::escape::{escaping_operands, EscapeInfo};
use ir::cfg::Cfg;
use ir::{Function, Inst, Value};

/// A set of young allocations (see the module header).
#[derive(Default)]
pub struct Young {
    /// Per value: whether it is a young allocation.
    marks: Vec<bool>,
    /// The values marked since the last clear (some may be unmarked since).
    marked: Vec<Value>,
    /// How many values are marked.
    len: usize,
}

impl Young {
    /// Empty the set (at the start of a block).
    pub fn clear(&mut self) {
        for v in self.marked.drain(..) {
            self.marks[v.index()] = false;
        }
        self.len = 0;
    }

    /// Whether no allocation is young.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Make allocation `r` young.
    pub fn insert(&mut self, r: Value) {
        if self.marks.len() <= r.index() {
            self.marks.resize(r.index() + 1, false);
        }
        let m = &mut self.marks[r.index()];
        if !*m {
            *m = true;
            self.len += 1;
            self.marked.push(r);
        }
    }

    /// Make allocation `r` no longer young.
    pub fn remove(&mut self, r: Value) {
        if let Some(m) = self.marks.get_mut(r.index()) {
            if *m {
                *m = false;
                self.len -= 1;
            }
        }
    }

    /// Whether `loc` is a slot of a young allocation.
    pub fn holds(&self, escape: &EscapeInfo, loc: Loc) -> bool {
        !self.is_empty()
            && loc
                .base()
                .and_then(|b| escape.allocation_of(b))
                .is_some_and(|r| self.marks.get(r.index()).is_some_and(|&m| m))
    }

    /// The allocations whose first escape is `inst` (each an operand of it,
    /// or a copy of one), passed to `f`; `first` says where an allocation
    /// first escapes ([`EscapeInfo::local_escape`], or [`FirstEscapes::at`]).
    pub fn escaping_at(
        escape: &EscapeInfo,
        func: &Function,
        inst: Inst,
        first: impl Fn(Value) -> Option<Inst>,
        mut f: impl FnMut(Value),
    ) {
        func.inst(inst).kind.for_each_operand(|v| {
            if let Some(r) = escape.allocation_of(v) {
                if first(r) == Some(inst) {
                    f(r);
                }
            }
        });
    }
}

/// Where each escaping allocation of a function whose CFG has no cycle
/// first escapes on every path: its escaping use in the earliest block in
/// reverse post-order (the first in that block). Without a cycle no path
/// from a later block in that order comes back to an earlier one, so from
/// the allocation to that instruction no path passes another escaping use
/// (which are all in that block after it, or in later blocks): before it,
/// in every block between, nothing but the allocation's own SSA value
/// reaches it. A backward walk over the blocks in reverse of that order
/// keeps one [`Young`] set across blocks: an allocation enters it at that
/// instruction and leaves it at its definition.
#[derive(Default)]
pub struct FirstEscapes {
    /// Per allocation value: its first escaping use.
    at: Vec<Option<Inst>>,
}

impl FirstEscapes {
    /// Compute the first escapes of `func`, whose CFG `cfg` has no cycle;
    /// returns whether some allocation escapes outside its own block (else
    /// [`EscapeInfo::local_escape`] says all, and nothing is computed).
    pub fn compute(&mut self, func: &Function, cfg: &Cfg, escape: &EscapeInfo) -> bool {
        debug_assert!(!cfg.has_retreating_edge());
        self.at.clear();
        if !escape.has_escapes_elsewhere() {
            return false;
        }
        self.at.resize(func.values.len(), None);
        for &b in cfg.rpo() {
            for &inst in &func.blocks[b.index()].insts {
                escaping_operands(&func.inst(inst).kind, |v| {
                    if let Some(r) = escape.allocation_of(v) {
                        self.at[r.index()].get_or_insert(inst);
                    }
                });
            }
        }
        true
    }

    /// Where allocation `r` first escapes, if it does (as last computed).
    pub fn at(&self, r: Value) -> Option<Inst> {
        self.at.get(r.index()).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_enters_and_leaves_once_and_clear_forgets_every_mark() {
        let mut young = Young::default();
        let (a, b) = (Value(0), Value(1));
        assert!(young.is_empty());
        young.insert(a);
        young.insert(a);
        young.insert(b);
        young.remove(a);
        young.remove(a);
        assert!(!young.is_empty() && young.marks[b.index()] && !young.marks[a.index()]);
        young.clear();
        assert!(young.is_empty() && !young.marks[b.index()]);
    }
}
