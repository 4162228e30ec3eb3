//! Shapes for size and reach: a wide record (a dozen fresh objects whose
//! every field is written, then a diamond, then every field read back — more
//! than 32 locations known at once, beyond LSE's cap), and a block no path
//! reaches (left behind by inlining or folding; any pass may delete it).

use super::Gen;
use ir::{Addr, Type};

impl Gen<'_, '_, '_, '_> {
    /// Eleven to sixteen fresh objects, every field written, a diamond, every
    /// field (mostly) read back, some objects escaped.
    pub fn wide_record(&mut self) {
        let n = 11 + self.c.below(6);
        let mut objs = Vec::with_capacity(n);
        for _ in 0..n {
            let s = if self.c.chance(160) {
                self.d.node
            } else {
                self.d.pair
            };
            objs.push((self.b.new_object(s), s));
        }
        for &(o, s) in &objs {
            for &field in self.d.fields_of(s) {
                let addr = Addr::Field { base: o, field };
                let ty = self.b.addr_type(&addr);
                let v = self.value_of(ty);
                self.b.store(addr, v, false);
            }
        }
        if self.c.chance(200) {
            self.diamond();
        }
        for &(o, s) in &objs {
            for &field in self.d.fields_of(s) {
                if self.c.chance(220) {
                    let v = self.b.load_field(o, field);
                    let ty = self.b.func.value_type(v);
                    if ty == Type::I64 {
                        self.pool.add(v, ty);
                    }
                }
            }
        }
        for &(o, s) in &objs {
            if self.c.chance(30) {
                self.b.escape(o);
            }
            self.pool.add(o, Type::object(s));
        }
    }

    /// A block after the function's last one that nothing branches to: a few
    /// statements, then `ret` or `unreachable`.
    pub fn dead_block(&mut self) {
        let b = self.new_block();
        self.b.switch_to(b);
        let depth = self.depth;
        self.depth = self.cfg.max_depth;
        self.pool.push_scope();
        self.region(2);
        self.pool.pop_scope();
        self.depth = depth;
        if self.c.chance(128) {
            self.b.unreachable();
        } else {
            let r = self.int();
            self.b.ret(Some(r));
        }
    }
}
