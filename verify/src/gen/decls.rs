//! The declarations every generated module shares: object types with integer
//! and reference fields, arrays, globals, and externs with and without declared
//! effects. Keeping them fixed lets every program mix the same few types, so
//! parameters of the same type (which inputs may alias) are common.

use ir::{EffectLoc, Extern, ExternEffects, ExternId, FieldRef, GlobalId, Module, StructId, Type};
use std::sync::OnceLock;

/// An extern of the generated module and how to call it.
#[derive(Copy, Clone, Debug)]
pub struct ExternSig {
    /// The extern.
    pub id: ExternId,
    /// Its single parameter's type.
    pub param: Type,
    /// Its return type (`None` for a call without result).
    pub ret: Option<Type>,
}

/// Handles to everything declared in a generated module.
#[derive(Clone, Debug)]
pub struct Decls {
    /// `type Node { val: i64, next: Node, aux: i64 }`.
    pub node: StructId,
    /// `type Pair { a: i64, b: i64, link: Node }`.
    pub pair: StructId,
    /// Every field of every type.
    pub fields: Vec<FieldRef>,
    /// `@gi: i64`, `@gn: Node`, `@ga: [i64]`, `@gp: Pair`, `@gna: [Node]`.
    pub globals: Vec<GlobalId>,
    /// Every extern.
    pub externs: Vec<ExternSig>,
}

impl Decls {
    /// A module that holds only the shared declarations, and their handles:
    /// a clone of the module [`Decls::declare`] makes from an empty one,
    /// declared once per process (cloning shares its declaration lists,
    /// [`ir::DeclList`]; declaring builds them anew for every program). It
    /// cannot go stale: what it caches depends on nothing but this file's
    /// code.
    pub fn new_module() -> (Module, &'static Decls) {
        static TEMPLATE: OnceLock<(Module, Decls)> = OnceLock::new();
        let (m, d) = TEMPLATE.get_or_init(|| {
            let mut m = Module::new();
            let d = Decls::declare(&mut m);
            (m, d)
        });
        let mut module = m.clone();
        // `@main` and the helper.
        module.funcs.reserve(2);
        (module, d)
    }

    /// Declare the shared types, globals and externs in `m`.
    pub fn declare(m: &mut Module) -> Decls {
        let node = StructId::new(m.structs.len());
        let t_node = Type::object(node);
        m.add_struct(
            "Node",
            vec![("val", Type::I64), ("next", t_node), ("aux", Type::I64)],
        );
        let pair = m.add_struct(
            "Pair",
            vec![("a", Type::I64), ("b", Type::I64), ("link", t_node)],
        );
        let f = |ty, index| FieldRef { ty, index };
        let fields = vec![
            f(node, 0),
            f(node, 1),
            f(node, 2),
            f(pair, 0),
            f(pair, 1),
            f(pair, 2),
        ];
        let gi = m.add_global("gi", Type::I64);
        let gn = m.add_global("gn", t_node);
        let ga = m.add_global("ga", Type::I64.array_of());
        let t_pair = Type::object(pair);
        let gp = m.add_global("gp", t_pair);
        let gna = m.add_global("gna", t_node.array_of());
        let mut ext = |name: &str, param: Type, ret: Option<Type>, eff: Option<ExternEffects>| {
            let id = m.add_extern(Extern {
                name: name.to_string(),
                params: vec![param],
                ret,
                effects: eff,
            });
            ExternSig { id, param, ret }
        };
        let externs = vec![
            ext("opaque", Type::I64, Some(Type::I64), None),
            ext("visit", t_node, Some(Type::I64), None),
            ext(
                "peek",
                t_node,
                Some(Type::I64),
                Some(ExternEffects {
                    reads: vec![EffectLoc::Field(f(node, 0))],
                    writes: vec![],
                }),
            ),
            ext(
                "bump_aux",
                Type::I64,
                Some(Type::I64),
                Some(ExternEffects {
                    reads: vec![EffectLoc::Field(f(node, 2))],
                    writes: vec![EffectLoc::Field(f(node, 2))],
                }),
            ),
            ext(
                "pure",
                Type::I64,
                Some(Type::I64),
                Some(ExternEffects::default()),
            ),
            ext(
                "touch",
                t_pair,
                None,
                Some(ExternEffects {
                    reads: vec![EffectLoc::Field(f(pair, 1)), EffectLoc::Global(gi)],
                    writes: vec![EffectLoc::Field(f(pair, 1)), EffectLoc::Elements(Type::I64)],
                }),
            ),
            ext("pick", t_node, Some(t_node), None),
            // Declared effects over locations the caller keeps using: a
            // reference field and a global, and the elements of `[Node]`.
            ext(
                "relink",
                t_node,
                Some(Type::I64),
                Some(ExternEffects {
                    reads: vec![EffectLoc::Field(f(node, 0)), EffectLoc::Global(gn)],
                    writes: vec![EffectLoc::Field(f(node, 1))],
                }),
            ),
            ext(
                "shuffle",
                t_node.array_of(),
                Some(Type::I64),
                Some(ExternEffects {
                    reads: vec![EffectLoc::Elements(t_node)],
                    writes: vec![EffectLoc::Elements(t_node), EffectLoc::Field(f(node, 0))],
                }),
            ),
        ];
        Decls {
            node,
            pair,
            fields,
            globals: vec![gi, gn, ga, gp, gna],
            externs,
        }
    }

    /// `Node`.
    pub fn t_node(&self) -> Type {
        Type::object(self.node)
    }

    /// `Pair`.
    pub fn t_pair(&self) -> Type {
        Type::object(self.pair)
    }

    /// Every reference type values may have: `Node`, `Pair`, `[i64]`, `[Node]`.
    pub fn ref_types(&self) -> [Type; 4] {
        [
            self.t_node(),
            self.t_pair(),
            Type::I64.array_of(),
            self.t_node().array_of(),
        ]
    }

    /// The global of reference type `ty` (`@gn`, `@gp`, `@ga` or `@gna`).
    pub fn global_of(&self, ty: Type) -> GlobalId {
        let k = if ty == self.t_node() {
            1
        } else if ty == self.t_pair() {
            3
        } else if ty == Type::I64.array_of() {
            2
        } else {
            4
        };
        self.globals[k]
    }

    /// The fields of struct `s` (`Node`'s or `Pair`'s), in order.
    pub fn fields_of(&self, s: StructId) -> &[FieldRef] {
        if s == self.node {
            &self.fields[..3]
        } else {
            &self.fields[3..]
        }
    }

    /// The integer fields of struct `s` (`Node.val`, `Node.aux`; `Pair.a`, `Pair.b`).
    pub fn int_fields_of(&self, s: StructId) -> [FieldRef; 2] {
        let f = self.fields_of(s);
        if s == self.node {
            [f[0], f[2]]
        } else {
            [f[0], f[1]]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cached_declarations_are_those_of_a_fresh_declare() {
        let mut fresh = Module::new();
        let d = Decls::declare(&mut fresh);
        for _ in 0..2 {
            let (m, cached) = Decls::new_module();
            assert_eq!(m, fresh);
            assert_eq!(format!("{cached:?}"), format!("{d:?}"));
        }
    }
}
