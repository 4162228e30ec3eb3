//! The heap leaves an environment step without declared effects is modelled
//! to read and write: only those the functions of the two modules load, store
//! or allocate, instead of every leaf (a declared extern's steps keep their
//! own declared leaves). docs/smt.md ("Environment steps: only the leaves the code
//! touches") gives the argument why this raises no false proof: a leaf no
//! function touches evolves on both sides as a function of the step history
//! alone, and a difference in that history is already a difference in the
//! step log or in a step's visible inputs.

use crate::env::Leaf;
use crate::shared::Shared;
use ir::{Addr, InstKind, Module};

/// The leaves of `sh` that some function of `mods` loads, stores or allocates.
pub fn touched_leaves(sh: &Shared, mods: &[&Module]) -> Vec<Leaf> {
    let mut out: Vec<Leaf> = Vec::new();
    let mut add = |l: Leaf| {
        if !out.contains(&l) {
            out.push(l);
        }
    };
    let all_elems = |add: &mut dyn FnMut(Leaf)| {
        for t in &sh.elem_types {
            add(Leaf::Elems(*t));
        }
    };
    for m in mods {
        for f in &m.funcs {
            for data in &f.insts {
                match &data.kind {
                    InstKind::Load { addr, .. } | InstKind::Store { addr, .. } => match *addr {
                        Addr::Field { field, .. } => {
                            add(Leaf::Field(field.ty.index(), field.index as usize))
                        }
                        Addr::Elem { base, .. } => match f.value_type(base).elem() {
                            Some(t) => add(Leaf::Elems(t)),
                            None => all_elems(&mut add),
                        },
                        Addr::Global(g) => add(Leaf::Global(g.index())),
                    },
                    InstKind::New(s) => {
                        let n = sh.fields0.get(s.index()).map_or(0, Vec::len);
                        (0..n).for_each(|fi| add(Leaf::Field(s.index(), fi)));
                    }
                    InstKind::NewArray { elem, .. } => add(Leaf::Elems(*elem)),
                    _ => {}
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_leaves_the_code_touches_are_listed() {
        let text = "type P { x: i64, y: i64 }\ntype Q { a: i64, b: i64 }\nglobal @g: i64\nglobal @h: i64\n\
            extern @e(i64)\nextern @d(i64) reads(Q.b) writes(@h)\n\
            func @main(%p: P, %n: i64) -> i64 {\nentry:\n  %q = new Q\n  store %p.x, %n\n  call @e(%n)\n  %a = load @g\n  ret %a\n}\n";
        let (m, _) = ir::parse_module(text, "t.ir").unwrap();
        let f = m.func(ir::FuncId::new(0));
        let tys: Vec<ir::Type> = f.params.iter().map(|p| f.value_type(*p)).collect();
        let sh = Shared::new(&m, &tys, &[]);
        let got = touched_leaves(&sh, &[&m]);
        assert_eq!(
            got,
            vec![
                Leaf::Field(1, 0),
                Leaf::Field(1, 1),
                Leaf::Field(0, 0),
                Leaf::Global(0)
            ]
        );
    }
}
