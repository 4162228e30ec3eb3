//! The allocations of one block that have not escaped yet
//! ([`crate::escape::EscapeInfo::local_escape`]): between its definition and
//! its first escape (later in the same block) nothing but its own SSA value
//! reaches an allocation, so no call, volatile access or trap there can see
//! its slots. Forwarding (walking forward) and dead-store elimination
//! (walking backward) both keep such a set while they walk a block.
//!
//! A per-value mark, so that membership, entering and leaving are O(1)
//! whatever the number of allocations in the block; the values marked are
//! listed so that emptying the set costs what filling it did, and the marks
//! grow only when an allocation is first made young (most functions have
//! none).

use super::loc::Loc;
use crate::escape::EscapeInfo;
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
    /// or a copy of one), passed to `f`.
    pub fn escaping_at(escape: &EscapeInfo, func: &Function, inst: Inst, mut f: impl FnMut(Value)) {
        func.inst(inst).kind.for_each_operand(|v| {
            if let Some(r) = escape.allocation_of(v) {
                if escape.local_escape(r) == Some(inst) {
                    f(r);
                }
            }
        });
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
