//! Locations LSE tracks: an address with its base and index looked through
//! copies and through loads already replaced, so that two accesses that must
//! name the same slot get the same key.

use crate::copies::CopyRoots;
use ir::effects::HeapNode;
use ir::{Addr, FieldRef, Function, GlobalId, Module, Type, Value};

/// A canonical memory location.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Loc {
    /// `%base.field`.
    Field { base: Value, field: FieldRef },
    /// `%base[index]`.
    Elem { base: Value, index: Value },
    /// `@g`.
    Global(GlobalId),
}

/// Replacement of values by others (loads LSE removed), resolved transitively,
/// with copies looked through. Resolution is a union-find over copy edges and
/// replacements ([`CopyRoots`]), so long copy chains cost nothing per query.
#[derive(Clone, Debug, Default)]
pub struct Subst {
    map: Vec<Option<Value>>,
    roots: CopyRoots,
    any: bool,
}

impl Subst {
    /// No replacements yet, for `func`.
    pub fn new(func: &Function) -> Subst {
        Subst {
            // Grown by `set` when a replacement is recorded (most runs record none).
            map: Vec::new(),
            roots: CopyRoots::new(func),
            any: false,
        }
    }

    /// Make this table [`Subst::new`]'s for `func` again, reusing its storage:
    /// every replacement is dropped and the copy roots are rebuilt from
    /// `func` as it is now, so nothing from an earlier function or run stays.
    pub fn recompute(&mut self, func: &Function) {
        self.map.clear();
        self.roots.recompute(func);
        self.any = false;
    }

    /// No replacements and no copy facts: for a function with nothing to forward.
    pub fn empty() -> Subst {
        Subst {
            map: Vec::new(),
            roots: CopyRoots::default(),
            any: false,
        }
    }

    /// Record that `from` (a load's result) is replaced by `to`.
    pub fn set(&mut self, func: &Function, from: Value, to: Value) {
        if from.index() >= self.map.len() {
            self.map.resize(from.index() + 1, None);
        }
        self.map[from.index()] = Some(to);
        self.any = true;
        self.roots.redirect(func, from, to);
    }

    /// What `v` stands for now (copies and replacements looked through).
    pub fn resolve(&self, func: &Function, v: Value) -> Value {
        self.roots.root(func, v)
    }

    /// What `v` is replaced by (following replacements only, not copies): the
    /// value every use of `v` must be rewritten to.
    pub fn resolve_replaced(&self, mut v: Value) -> Value {
        for _ in 0..=self.map.len() {
            match self.map.get(v.index()).copied().flatten() {
                Some(next) if next != v => v = next,
                _ => return v,
            }
        }
        v
    }

    /// Whether any replacement was recorded.
    pub fn is_empty(&self) -> bool {
        !self.any
    }
}

impl Loc {
    /// The canonical location `addr` names.
    pub fn of(func: &Function, subst: &Subst, addr: &Addr) -> Loc {
        match *addr {
            Addr::Field { base, field } => Loc::Field {
                base: subst.resolve(func, base),
                field,
            },
            Addr::Elem { base, index } => Loc::Elem {
                base: subst.resolve(func, base),
                index: subst.resolve(func, index),
            },
            Addr::Global(g) => Loc::Global(g),
        }
    }

    /// The address this location is, for alias queries and for emitting a load.
    pub fn addr(self) -> Addr {
        match self {
            Loc::Field { base, field } => Addr::Field { base, field },
            Loc::Elem { base, index } => Addr::Elem { base, index },
            Loc::Global(g) => Addr::Global(g),
        }
    }

    /// The type of the value this location holds.
    pub fn ty(self, module: &Module, func: &Function) -> Type {
        match self {
            Loc::Field { field, .. } => module.field(field).ty,
            Loc::Elem { base, .. } => func.value_type(base).elem().unwrap_or(Type::I64),
            Loc::Global(g) => module.globals[g.index()].ty,
        }
    }

    /// The abstract heap leaf holding this location.
    pub fn leaf(self, func: &Function) -> HeapNode {
        match self {
            Loc::Field { field, .. } => HeapNode::Field(field),
            Loc::Elem { base, .. } => {
                HeapNode::Element(func.value_type(base).elem().unwrap_or(Type::I64))
            }
            Loc::Global(g) => HeapNode::Global(g),
        }
    }

    /// The SSA values the location is keyed on (base, and index for elements).
    pub fn keys(self) -> impl Iterator<Item = Value> {
        let (a, b) = match self {
            Loc::Field { base, .. } => (Some(base), None),
            Loc::Elem { base, index } => (Some(base), Some(index)),
            Loc::Global(_) => (None, None),
        };
        a.into_iter().chain(b)
    }

    /// The base reference, if the location has one.
    pub fn base(self) -> Option<Value> {
        match self {
            Loc::Field { base, .. } | Loc::Elem { base, .. } => Some(base),
            Loc::Global(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only_function(text: &str) -> Function {
        let mut m = ir::parse_module(text, "t.ir").expect("parses").0;
        m.funcs.swap_remove(0)
    }

    /// A table reused for another function answers exactly as a new one:
    /// no replacement nor copy root of the earlier function stays.
    #[test]
    fn a_recomputed_table_forgets_the_last_function() {
        let head = "type P { x: i64 }\nfunc @f(%p: P, %q: P) {\nentry:\n";
        let a = only_function(&format!(
            "{head}  %c = copy %p\n  %d = copy %c\n  %l = load %q.x\n  store %d.x, %l\n  ret\n}}\n"
        ));
        let b = only_function(&format!(
            "{head}  %c = copy %q\n  %l = load %p.x\n  %m = load %c.x\n  store %p.x, %m\n  ret\n}}\n"
        ));
        let mut reused = Subst::new(&a);
        // A replacement in `a` of its load's result by `%p`.
        let (load, p) = (Value::new(4), Value::new(0));
        reused.set(&a, load, p);
        assert!(!reused.is_empty());
        assert_eq!(reused.resolve(&a, load), p);
        reused.recompute(&b);
        let fresh = Subst::new(&b);
        assert!(reused.is_empty());
        for i in 0..b.values.len() {
            let v = Value::new(i);
            assert_eq!(reused.resolve(&b, v), fresh.resolve(&b, v), "value {i}");
            assert_eq!(reused.resolve_replaced(v), v);
        }
    }
}
