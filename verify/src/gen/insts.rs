//! Straight-line instruction choice: memory accesses (fields, elements,
//! globals, volatile), allocation, arithmetic that may trap, reference copies,
//! calls, `escape`, `guard`, `nullcheck` and `boundscheck` — and the
//! dispatch into control-flow shapes and the rule floor's shapes.

use super::Gen;
use ir::{Addr, BinOp, Callee, Type, UnOp, Value};

/// The kinds of statement, in the order of [`WEIGHTS`] (0 is the simplest).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Stmt {
    LoadField,
    Check,
    StoreField,
    ReuseAddr,
    Floor,
    Elem,
    Global,
    New,
    NewArray,
    Len,
    Arith,
    Div,
    CopyRef,
    SelectRef,
    EqRef,
    CallExtern,
    CallHelper,
    Volatile,
    Escape,
    Guard,
    Diamond,
    Loop,
    Irreducible,
    RotatedLoop,
    Assert,
    UnaryChain,
    NullBase,
    CallSelf,
}

const STMTS: [Stmt; 28] = [
    Stmt::LoadField,
    Stmt::Check,
    Stmt::StoreField,
    Stmt::ReuseAddr,
    Stmt::Floor,
    Stmt::Elem,
    Stmt::Global,
    Stmt::New,
    Stmt::NewArray,
    Stmt::Len,
    Stmt::Arith,
    Stmt::Div,
    Stmt::CopyRef,
    Stmt::SelectRef,
    Stmt::EqRef,
    Stmt::CallExtern,
    Stmt::CallHelper,
    Stmt::Volatile,
    Stmt::Escape,
    Stmt::Guard,
    Stmt::Diamond,
    Stmt::Loop,
    Stmt::Irreducible,
    Stmt::RotatedLoop,
    Stmt::Assert,
    Stmt::UnaryChain,
    Stmt::NullBase,
    Stmt::CallSelf,
];

/// `Check` takes one unit of `LoadField`'s weight and sits right after it,
/// so every other statement keeps the bytes that pick it: programs without
/// a check are the programs of the generator before checks existed. `Floor`
/// (the rule floor's shapes) likewise takes two units of `ReuseAddr`'s.
const WEIGHTS: [u32; 28] = [
    11, 1, 10, 10, 2, 6, 4, 4, 2, 1, 4, 2, 4, 2, 1, 4, 3, 2, 2, 1, 4, 3, 1, 2, 1, 1, 1, 3,
];

impl Gen<'_, '_, '_, '_> {
    /// Emit one statement (possibly a whole nested control-flow shape).
    pub fn statement(&mut self) {
        let mut weights = WEIGHTS;
        if self.depth >= self.cfg.max_depth {
            for s in [
                Stmt::Diamond,
                Stmt::Loop,
                Stmt::Irreducible,
                Stmt::RotatedLoop,
            ] {
                weights[s as usize] = 0;
            }
        }
        if self.helper.is_none() {
            weights[Stmt::CallHelper as usize] = 0;
        }
        if self.recurse.is_none() {
            weights[Stmt::CallSelf as usize] = 0;
        }
        match STMTS[self.c.weighted(&weights)] {
            Stmt::LoadField => self.load_field(),
            Stmt::StoreField => self.store_field(),
            Stmt::ReuseAddr => self.reuse_addr(),
            Stmt::Floor => self.floor_shape(),
            Stmt::Elem => self.elem_access(),
            Stmt::Global => self.global_access(),
            Stmt::New => self.new_object(),
            Stmt::NewArray => self.new_array(),
            Stmt::Len => {
                let a = self.array();
                let mut open = super::checks::Open::default();
                self.check_null(a, &mut open);
                let v = self.b.len(a);
                self.pool.add(v, Type::I64);
                self.close(open);
            }
            Stmt::Arith => self.arith(),
            Stmt::Div => {
                let op = self.c.pick(&[BinOp::Sdiv, BinOp::Srem]);
                let a = self.int();
                // Usually a divisor that cannot be 0; sometimes any value (may trap).
                let d = if self.c.weighted(&[1, 3]) == 0 {
                    self.int()
                } else {
                    let k = self.c.pick(&[1, 2, 3, -1, 7]);
                    self.b.iconst(k)
                };
                let v = self.b.binary(op, a, d);
                self.pool.add(v, Type::I64);
            }
            Stmt::CopyRef => {
                let ty = self.ref_type();
                let r = self.ref_of(ty);
                let v = self.b.unary(UnOp::Copy, r);
                self.pool.add(v, ty);
            }
            Stmt::SelectRef => {
                let ty = self.ref_type();
                let c = self.cond();
                let x = self.ref_of(ty);
                // Often one arm is null (a reference-typed select a fold may turn into null).
                let y = if self.c.chance(64) {
                    self.b.null()
                } else {
                    self.value_of(ty)
                };
                let (x, y) = if self.c.chance(128) { (y, x) } else { (x, y) };
                let v = self.b.select(c, x, y);
                self.pool.add(v, ty);
            }
            Stmt::EqRef => {
                let ty = self.ref_type();
                let x = self.ref_of(ty);
                let y = self.value_of(ty);
                let op = self.c.pick(&[BinOp::Eq, BinOp::Ne]);
                let v = self.b.binary(op, x, y);
                self.pool.add(v, Type::I64);
            }
            Stmt::CallExtern => self.call_extern(),
            Stmt::CallHelper => self.call_helper(),
            Stmt::Volatile => self.volatile_access(),
            Stmt::Escape => {
                let v = self.any_value();
                self.b.escape(v);
            }
            Stmt::Guard => {
                let c = self.mostly_true(3);
                self.b.guard(c);
                // Sometimes the same guard again after another statement (redundant).
                if self.c.chance(80) {
                    self.statement();
                    self.b.guard(c);
                }
            }
            Stmt::Diamond => self.diamond(),
            Stmt::Loop => self.counted_loop(),
            Stmt::Irreducible => self.irreducible(),
            Stmt::RotatedLoop => self.rotated_loop(),
            Stmt::Assert => self.assert(),
            Stmt::UnaryChain => self.unary_chain(),
            Stmt::NullBase => self.null_base(),
            Stmt::CallSelf => self.call_self(),
            Stmt::Check => self.explicit_check(),
        }
    }

    /// A `nullcheck` of a reference or a `boundscheck` of an element, under
    /// the generator's usual checks (so it traps about as often as an
    /// access would), sometimes next to an access of the same base or
    /// element (before or after it), which makes one of the two checks
    /// redundant.
    fn explicit_check(&mut self) {
        let (addr, open) = if self.c.chance(100) {
            let addr = self.field_addr();
            let Addr::Field { base, .. } = addr else {
                unreachable!("field_addr gives a field")
            };
            let open = self.check_addr(&addr);
            self.b.nullcheck(base);
            (addr, open)
        } else {
            let (base, index) = (self.array(), self.index());
            let addr = Addr::Elem { base, index };
            let open = self.check_addr(&addr);
            self.b.boundscheck(base, index);
            (addr, open)
        };
        match self.c.below(3) {
            0 => self.do_load(addr, false),
            1 => {
                self.do_store(addr.clone(), false);
                match addr {
                    Addr::Elem { base, index } => self.b.boundscheck(base, index),
                    Addr::Field { base, .. } => self.b.nullcheck(base),
                    Addr::Global(_) => unreachable!("a field or element"),
                };
            }
            _ => {}
        }
        self.close(open);
    }

    /// A reference type, objects more often than arrays.
    fn ref_type(&mut self) -> Type {
        let tys = self.d.ref_types();
        tys[self.c.weighted(&[6, 2, 2, 1])]
    }

    /// An object base and one of its fields.
    fn field_addr(&mut self) -> Addr {
        let s = if self.c.weighted(&[3, 1]) == 0 {
            self.d.node
        } else {
            self.d.pair
        };
        let base = self.ref_of(Type::object(s));
        let field = self.c.pick(self.d.fields_of(s));
        Addr::Field { base, field }
    }

    /// An array value (`[i64]` mostly, sometimes `[Node]`).
    fn array(&mut self) -> Value {
        let ty = if self.c.weighted(&[3, 1]) == 0 {
            Type::I64.array_of()
        } else {
            self.d.t_node().array_of()
        };
        self.ref_of(ty)
    }

    /// An element index: a small constant, a masked value, or any int (may be out of bounds).
    fn index(&mut self) -> Value {
        match self.c.weighted(&[16, 6, 1]) {
            0 => {
                let k = self.c.pick(&[0, 0, 0, 1, 1, 2, 3]);
                self.b.iconst(k)
            }
            1 => {
                let v = self.int();
                let m = self.b.iconst(1);
                self.b.binary(BinOp::And, v, m)
            }
            _ => self.int(),
        }
    }

    fn do_load(&mut self, addr: Addr, volatile: bool) {
        let v = self.b.load(addr.clone(), volatile);
        let ty = self.b.func.value_type(v);
        self.pool.add(v, ty);
        self.pool.note_addr(addr);
    }

    fn do_store(&mut self, addr: Addr, volatile: bool) {
        let ty = self.b.addr_type(&addr);
        let v = self.value_of(ty);
        self.b.store(addr.clone(), v, volatile);
        self.pool.note_addr(addr);
    }

    fn load_field(&mut self) {
        let addr = self.field_addr();
        let open = self.check_addr(&addr);
        self.do_load(addr, false);
        // Pointer chasing: follow a loaded reference right away.
        if let Some(v) = self.pool.nth(
            self.d.t_node(),
            self.pool.count(self.d.t_node()).wrapping_sub(1),
        ) {
            if self.c.chance(70) {
                let field = self.c.pick(self.d.fields_of(self.d.node));
                let addr = Addr::Field { base: v, field };
                let inner = self.check_addr(&addr);
                if self.c.chance(128) {
                    self.do_load(addr, false);
                } else {
                    self.do_store(addr, false);
                }
                self.close(inner);
            }
        }
        self.close(open);
    }

    fn store_field(&mut self) {
        let addr = self.field_addr();
        let open = self.check_addr(&addr);
        self.store_field_at(addr);
        self.close(open);
    }

    fn store_field_at(&mut self, addr: Addr) {
        self.do_store(addr.clone(), false);
        // Store→load pairs, overwritten stores on the same address, and two
        // stores with a read through another reference in between.
        match self.c.weighted(&[3, 2, 2, 2]) {
            1 => self.do_load(addr, false),
            2 => self.do_store(addr, false),
            3 => self.store_probe_store(addr),
            _ => {}
        }
    }

    /// `store A; load B.f; store A` with B another reference to an object of
    /// A's type — preferably a fresh allocation, whose field load cannot trap,
    /// so that only aliasing decides whether the first store is dead.
    fn store_probe_store(&mut self, addr: Addr) {
        let Addr::Field { base, field } = addr else {
            return;
        };
        let ty = self.b.func.value_type(base);
        let fresh: Vec<Value> = self
            .pool
            .of_type(ty)
            .filter(|&v| {
                self.b
                    .func
                    .def_inst(v)
                    .is_some_and(|i| matches!(self.b.func.inst(i).kind, ir::InstKind::New(_)))
            })
            .collect();
        let other = match fresh.last() {
            Some(&o) if self.c.weighted(&[1, 3]) == 1 => o,
            _ => self.ref_of(ty),
        };
        let probe = Addr::Field { base: other, field };
        let open = self.check_addr(&probe);
        self.do_load(probe, false);
        self.do_store(addr, false);
        self.close(open);
    }

    fn reuse_addr(&mut self) {
        let n = self.pool.addr_count();
        if n == 0 {
            return self.load_field();
        }
        let k = self.c.below(n.min(6));
        let addr = self.pool.recent_addr(k).expect("recent addr").clone();
        // Sometimes reach the same location through another SSA value of the base.
        let addr = match addr {
            Addr::Field { base, field } if self.c.chance(60) => {
                let copy = self.b.unary(UnOp::Copy, base);
                let ty = self.b.func.value_type(base);
                self.pool.add(copy, ty);
                Addr::Field { base: copy, field }
            }
            a => a,
        };
        if self.c.weighted(&[3, 2]) == 0 {
            self.do_load(addr, false);
        } else {
            self.do_store(addr, false);
        }
    }

    fn elem_access(&mut self) {
        let base = self.array();
        let index = self.index();
        let addr = Addr::Elem { base, index };
        let open = self.check_addr(&addr);
        if self.c.weighted(&[3, 2]) == 0 {
            self.do_load(addr, false);
            self.chase_element();
        } else if self.b.addr_type(&addr) == self.d.t_node() && self.c.chance(64) {
            // An array of references that holds null.
            let null = self.b.null();
            self.b.store(addr.clone(), null, false);
            self.pool.note_addr(addr);
        } else {
            self.do_store(addr, false);
        }
        self.close(open);
    }

    /// After loading an element: when it is a `Node`, sometimes read its value
    /// (it may be null: arrays of references start out null).
    fn chase_element(&mut self) {
        let n = self.pool.count(self.d.t_node());
        let Some(v) = self.pool.nth(self.d.t_node(), n.wrapping_sub(1)) else {
            return;
        };
        if self.b.func.value_type(v) == self.d.t_node() && self.c.chance(100) {
            let addr = Addr::Field {
                base: v,
                field: self.d.fields[0],
            };
            let open = self.check_addr(&addr);
            self.do_load(addr, false);
            self.close(open);
        }
    }

    fn global_access(&mut self) {
        let g = self.c.pick(&self.d.globals);
        let addr = Addr::Global(g);
        if self.c.weighted(&[3, 2]) == 0 {
            self.do_load(addr, false);
        } else {
            self.do_store(addr, false);
        }
    }

    fn volatile_access(&mut self) {
        let addr = match self.c.weighted(&[3, 1, 1]) {
            0 => self.field_addr(),
            1 => Addr::Global(self.c.pick(&self.d.globals)),
            _ => {
                let base = self.array();
                let index = self.index();
                Addr::Elem { base, index }
            }
        };
        let open = self.check_addr(&addr);
        if self.c.weighted(&[1, 1]) == 0 {
            self.do_load(addr, true);
        } else {
            self.do_store(addr, true);
        }
        self.close(open);
    }

    fn new_object(&mut self) {
        let s = if self.c.weighted(&[2, 1]) == 0 {
            self.d.node
        } else {
            self.d.pair
        };
        let ty = Type::object(s);
        let o = self.b.new_object(s);
        self.pool.add(o, ty);
        if self.c.chance(140) {
            let field = self.c.pick(self.d.fields_of(s));
            self.do_store(Addr::Field { base: o, field }, false);
        }
        // Let it escape (or not): into a caller-visible field, a global, the trace, an extern.
        if s == self.d.node {
            match self.c.weighted(&[4, 2, 1, 1]) {
                1 => {
                    let holder = self.ref_of(self.d.t_node());
                    let field = self.d.fields[1];
                    let mut open = super::checks::Open::default();
                    self.check_null(holder, &mut open);
                    self.b.store_field(holder, field, o);
                    self.pool.note_addr(Addr::Field {
                        base: holder,
                        field,
                    });
                    self.close(open);
                }
                2 => {
                    let gn = self.d.globals[1];
                    self.b.store_global(gn, o);
                }
                3 => {
                    self.b.escape(o);
                }
                _ => {}
            }
        }
    }

    fn new_array(&mut self) {
        let elem = if self.c.weighted(&[3, 1]) == 0 {
            Type::I64
        } else {
            self.d.t_node()
        };
        let len = if self.c.weighted(&[6, 1]) == 0 {
            let n = 1 + self.c.below(4) as i64;
            self.b.iconst(n)
        } else {
            self.int()
        };
        let a = self.b.new_array(elem, len);
        self.pool.add(a, elem.array_of());
        if elem == Type::I64 && self.c.chance(40) {
            let ga = self.d.globals[2];
            self.b.store_global(ga, a);
        }
    }

    fn arith(&mut self) {
        use BinOp::*;
        let op = self.c.pick(&[
            Add, Sub, Mul, Xor, And, Or, Shl, Ashr, Lshr, Slt, Eq, Ne, Sgt, Ult,
        ]);
        let a = self.int();
        let b = self.int();
        let v = self.b.binary(op, a, b);
        self.pool.add(v, Type::I64);
        if self.c.chance(20) {
            let u = self.c.pick(&[UnOp::Neg, UnOp::Not]);
            let w = self.b.unary(u, v);
            self.pool.add(w, Type::I64);
        }
    }

    fn call_extern(&mut self) {
        let sig = self.c.pick(&self.d.externs);
        let arg = if sig.param.is_int() {
            self.int()
        } else {
            self.value_of(sig.param)
        };
        let (_, r) = self.b.call(Callee::Extern(sig.id), vec![arg]);
        if let (Some(v), Some(ty)) = (r, sig.ret) {
            self.pool.add(v, ty);
        }
    }

    /// `neg`/`not` applied to a value, often twice in a row (`neg (neg x)`), as
    /// left behind by inlining and negated conditions.
    fn unary_chain(&mut self) {
        let x = self.pool_int();
        let u = self.c.pick(&[UnOp::Neg, UnOp::Not]);
        let mut v = self.b.unary(u, x);
        if self.c.chance(200) {
            v = self.b.unary(u, v);
        }
        self.pool.add(v, Type::I64);
    }

    /// In a recursive helper, its one self-call, on `depth - 1` while `depth > 0`.
    fn call_self(&mut self) {
        let Some((f, depth)) = self.recurse.take() else {
            return;
        };
        let zero = self.b.iconst(0);
        let c = self.b.binary(BinOp::Sgt, depth, zero);
        let mut open = super::checks::Open::default();
        self.open_when(c, &mut open);
        let h = self.ref_of(self.d.t_node());
        let one = self.b.iconst(1);
        let k = self.b.binary(BinOp::Sub, depth, one);
        let ret = self.b.func.ret;
        let (_, r) = self.b.call_func_with_ret(f, vec![h, k], ret);
        if let (Some(v), Some(ty)) = (r, ret) {
            self.pool.add(v, ty);
            if ty == Type::I64 {
                self.escape_sum(v);
            }
        }
        self.close(open);
    }

    /// `escape` the sum of `v` and a value of the pool (keeps a result observable).
    fn escape_sum(&mut self, v: Value) {
        let w = self.int();
        let s = self.b.binary(BinOp::Add, v, w);
        self.b.escape(s);
    }

    fn call_helper(&mut self) {
        let Some((f, ret)) = self.helper else {
            return;
        };
        let h = self.value_of(self.d.t_node());
        let k = self.int();
        // The helper dereferences its parameter: usually check it first.
        let mut open = super::checks::Open::default();
        self.check_null(h, &mut open);
        let (_, r) = self.b.call_func_with_ret(f, vec![h, k], ret);
        if let (Some(v), Some(ty)) = (r, ret) {
            self.pool.add(v, ty);
            if !open.is_empty() {
                self.escape_sum(v);
            }
        }
        self.close(open);
    }
}
