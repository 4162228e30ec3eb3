//! The shapes where `null` meets typed code: a `null` constant that reaches
//! the base of an access of every reference type (through a global, a
//! reference slot, or a select), and loops whose reference phis name each
//! other (a cycle of phis, possibly over nothing but `null`).

use super::checks::Open;
use super::Gen;
use ir::{Addr, BinOp, Type, Value};

impl Gen<'_, '_, '_, '_> {
    /// A null that flows into a base: stored and reloaded (a forwarding pass
    /// sees the constant), or selected; then a field or element access through
    /// it, usually behind a null check that only folding proves dead.
    pub fn null_base(&mut self) {
        if self.c.chance(100) {
            return self.null_base_pair();
        }
        let tys = self.d.ref_types();
        let ty = self.c.pick(&tys);
        let null = self.b.null();
        let base = match self.c.below(3) {
            0 => {
                let g = self.d.global_of(ty);
                self.b.store_global(g, null);
                self.b.load_global(g)
            }
            1 if ty == self.d.t_node() => {
                let holder = self.ref_of(ty);
                let field = self.d.fields[1];
                let mut open = Open::default();
                self.check_null(holder, &mut open);
                self.b.store_field(holder, field, null);
                let v = self.b.load_field(holder, field);
                self.null_access(ty, v);
                self.close(open);
                return;
            }
            _ => {
                let c = self.cond();
                let r = self.ref_of(ty);
                if self.c.chance(128) {
                    self.b.select(c, r, null)
                } else {
                    self.b.select(c, null, r)
                }
            }
        };
        self.null_access(ty, base);
    }

    /// Two null bases of different reference types (both loaded from globals
    /// just set to null), a store through the first and a load through the
    /// second at the same field index or element index: the two locations
    /// differ only by type once a forwarding pass sees both bases as `null`.
    fn null_base_pair(&mut self) {
        let tys = self.d.ref_types();
        let first = self.c.below(tys.len());
        let second = (first + 1 + self.c.below(tys.len() - 1)) % tys.len();
        let index = self.c.below(2);
        let mut bases = [self.b.null(); 2];
        for (k, &t) in [tys[first], tys[second]].iter().enumerate() {
            let g = self.d.global_of(t);
            let null = self.b.null();
            self.b.store_global(g, null);
            bases[k] = self.b.load_global(g);
        }
        let mut open = Open::default();
        if self.c.weighted(&[1, 8]) == 1 {
            let null = self.b.null();
            let c = self.b.binary(BinOp::Ne, bases[0], null);
            self.open_when(c, &mut open);
        }
        let addrs: Vec<Addr> = [(tys[first], bases[0]), (tys[second], bases[1])]
            .iter()
            .map(|&(t, base)| match t.as_struct() {
                Some(s) => Addr::Field {
                    base,
                    field: self.d.fields_of(s)[index],
                },
                None => Addr::Elem {
                    base,
                    index: self.b.iconst(index as i64),
                },
            })
            .collect();
        let vt = self.b.addr_type(&addrs[0]);
        let v = self.value_of(vt);
        self.b.store(addrs[0].clone(), v, false);
        let r = self.b.load(addrs[1].clone(), false);
        let rt = self.b.func.value_type(r);
        if rt.is_int() {
            self.pool.add(r, rt);
        } else {
            // Use the loaded reference as a base too.
            if rt == self.d.t_node() && self.c.chance(128) {
                let field = self.c.pick(self.d.fields_of(self.d.node));
                let w = self.b.load_field(r, field);
                if self.b.func.value_type(w).is_int() {
                    self.pool.add(w, Type::I64);
                }
            } else {
                self.b.escape(r);
            }
        }
        self.close(open);
    }

    /// A load or store through `base` (of type `ty`), usually null-checked.
    fn null_access(&mut self, ty: Type, base: Value) {
        let addr = match ty.as_struct() {
            Some(s) => Addr::Field {
                base,
                field: self.c.pick(self.d.fields_of(s)),
            },
            None => Addr::Elem {
                base,
                index: self.b.iconst(self.c.below(2) as i64),
            },
        };
        let mut open = Open::default();
        if self.c.weighted(&[1, 8]) == 1 {
            let null = self.b.null();
            let c = self.b.binary(BinOp::Ne, base, null);
            self.open_when(c, &mut open);
        }
        if self.c.chance(128) {
            let v = self.b.load(addr, false);
            let vt = self.b.func.value_type(v);
            if vt.is_int() {
                self.pool.add(v, vt);
            }
        } else {
            let vt = self.b.addr_type(&addr);
            let v = self.value_of(vt);
            self.b.store(addr, v, false);
        }
        self.close(open);
    }

    /// The entries of two reference phis of a loop header that swap each
    /// other around the loop: `a = phi [pre: x], [latch: b]`,
    /// `b = phi [pre: y], [latch: a]`, with `x` and `y` often `null`.
    pub fn swap_inits(&mut self, ty: Type) -> (Value, Value) {
        let init = |g: &mut Self| {
            if g.c.weighted(&[2, 1]) == 1 {
                g.b.null()
            } else {
                g.ref_of(ty)
            }
        };
        let x = init(self);
        let y = init(self);
        (x, y)
    }
}
