//! Copy roots: what each value stands for once `copy` chains are looked
//! through, answered in near-constant time (a union-find with path
//! compression) instead of walking the chain on every question.
//!
//! The table starts as the function's copy edges; [`CopyRoots::redirect`]
//! records that a non-copy value was replaced by another everywhere (a GVN
//! merge, a forwarded load), after which the copies of the old value stand
//! for the new one — exactly what [`crate::escape::strip_copies`] would find
//! on the edited function.

use crate::escape::strip_copies;
use ir::{Function, InstKind, UnOp, Value, ValueDef};
use std::cell::Cell;

/// The copy root of every value of one function (see the module header).
#[derive(Clone, Debug, Default)]
pub struct CopyRoots {
    /// `parent[v]`: the value `v` is a copy of (or was replaced by); `v` itself at a root.
    parent: Vec<Cell<u32>>,
}

/// The operand of `v`'s defining `copy`, if `v` is a copy.
fn copy_operand(func: &Function, v: Value) -> Option<Value> {
    match func.value_def(v) {
        ValueDef::Inst(i) => match func.inst(i).kind {
            InstKind::Unary(UnOp::Copy, a) => Some(a),
            _ => None,
        },
        _ => None,
    }
}

impl CopyRoots {
    /// The roots of `func`'s values.
    pub fn new(func: &Function) -> CopyRoots {
        let mut r = CopyRoots::default();
        r.recompute(func);
        r
    }

    /// Rebuild for `func`, reusing storage (O(size of the function)): each
    /// copy points at its operand; [`CopyRoots::root`] compresses the paths.
    ///
    /// A cycle of copies (possible only in unreachable blocks) roots each of
    /// its members at itself.
    pub fn recompute(&mut self, func: &Function) {
        self.parent.clear();
        let mut any = false;
        for d in &func.insts {
            if let (InstKind::Unary(UnOp::Copy, a), Some(r)) = (&d.kind, d.result) {
                if !any {
                    // Only functions with copies get a table (until a
                    // redirection needs one, values out of it are looked up
                    // directly).
                    self.parent
                        .extend((0..func.values.len() as u32).map(Cell::new));
                    any = true;
                }
                if a.index() < self.parent.len() && r.index() < self.parent.len() {
                    self.parent[r.index()].set(a.index() as u32);
                }
            }
        }
    }

    /// What `v` stands for with copies (and recorded redirections) looked
    /// through. Values created after the last recompute are walked directly.
    #[inline]
    pub fn root(&self, func: &Function, v: Value) -> Value {
        match self.parent.get(v.index()) {
            Some(p) if p.get() as usize == v.index() => v,
            _ => self.root_slow(func, v),
        }
    }

    fn root_slow(&self, func: &Function, v: Value) -> Value {
        if v.index() >= self.parent.len() {
            let s = strip_copies(func, v);
            if s.index() >= self.parent.len() || s == v {
                return s;
            }
            return self.root(func, s);
        }
        let mut r = v.index();
        let mut steps = 0;
        loop {
            let p = self.parent[r].get() as usize;
            if p == r {
                break;
            }
            r = p;
            steps += 1;
            if steps > self.parent.len() {
                // A copy cycle (unreachable code): its members are their own roots.
                return v;
            }
        }
        // Path compression.
        let mut w = v.index();
        while w != r {
            let p = self.parent[w].get() as usize;
            self.parent[w].set(r as u32);
            w = p;
        }
        Value::new(r)
    }

    /// Record that `old` (a root: not a copy) has been replaced by `new`
    /// everywhere, so that the copies of `old` now stand for `new`'s root.
    /// Ignored when that would close a cycle or when `old` is not a root.
    pub fn redirect(&mut self, func: &Function, old: Value, new: Value) {
        self.grow(func);
        if old.index() >= self.parent.len()
            || self.parent[old.index()].get() as usize != old.index()
        {
            return;
        }
        let r = self.root(func, new);
        if r != old {
            self.parent[old.index()].set(r.index() as u32);
        }
    }

    /// Take in the values created since the last recompute.
    fn grow(&mut self, func: &Function) {
        for v in self.parent.len()..func.values.len() {
            let p = copy_operand(func, Value::new(v)).map_or(v, Value::index);
            self.parent.push(Cell::new(p as u32));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Function {
        ir::parse_module(text, "t.ir").unwrap().0.funcs.remove(0)
    }

    #[test]
    fn roots_match_strip_copies_in_any_layout() {
        let f = parse(
            "func @f(%x: i64) -> i64 {\nentry:\n  %a = add %x, 1\n  jmp b2\nb1:\n  %c2 = copy %c1\n  ret %c2\n\
             b2:\n  %c1 = copy %c0\n  jmp b1\nb3:\n  %c0 = copy %a\n  jmp b2\n}\n",
        );
        let r = CopyRoots::new(&f);
        for v in 0..f.values.len() {
            let v = Value::new(v);
            assert_eq!(r.root(&f, v), strip_copies(&f, v));
        }
    }

    #[test]
    fn redirect_moves_the_copies_of_a_replaced_value() {
        let f = parse(
            "func @f(%x: i64) -> i64 {\nentry:\n  %a = add %x, 1\n  %b = add %x, 1\n  %c = copy %b\n  %d = copy %c\n  ret %d\n}\n",
        );
        let v = |name: &str| f.value_named(name).unwrap();
        let mut r = CopyRoots::new(&f);
        assert_eq!(r.root(&f, v("d")), v("b"));
        r.redirect(&f, v("b"), v("a"));
        assert_eq!(r.root(&f, v("d")), v("a"));
        assert_eq!(r.root(&f, v("c")), v("a"));
        // A copy is not a root: redirecting it is ignored; so is a cycle.
        r.redirect(&f, v("c"), v("x"));
        assert_eq!(r.root(&f, v("c")), v("a"));
        r.redirect(&f, v("a"), v("d"));
        assert_eq!(r.root(&f, v("a")), v("a"));
    }

    #[test]
    fn a_copy_cycle_terminates() {
        let f = parse(
            "func @f(%x: i64) -> i64 {\nentry:\n  ret %x\ndead:\n  %a = copy %b\n  %b = copy %a\n  jmp dead\n}\n",
        );
        let r = CopyRoots::new(&f);
        for v in 0..f.values.len() {
            let _ = r.root(&f, Value::new(v));
        }
    }
}
