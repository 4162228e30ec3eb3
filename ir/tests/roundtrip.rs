//! Printing then parsing is the identity: for random well-typed modules built
//! with the `FunctionBuilder`, `print(parse(print(m))) == print(m)`, and the
//! reparsed module has the same shape and the same value types.

use ir::{
    parse_module, print_module, Addr, BinOp, Block, Callee, EffectLoc, Extern, ExternEffects,
    FieldRef, FuncId, FunctionBuilder, GlobalId, Module, StructId, Type, UnOp, Value,
};
use proptest::prelude::*;

/// A small deterministic random source, so one `u64` seed describes a module.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

fn random_type(r: &mut Rng, structs: usize) -> Type {
    let base = if structs > 0 && r.chance(50) {
        Type::object(StructId::new(r.below(structs)))
    } else {
        Type::I64
    };
    match r.below(5) {
        0 => base.array_of(),
        1 => base.array_of().array_of(),
        _ => base,
    }
}

fn random_const(r: &mut Rng) -> i64 {
    match r.below(6) {
        0 => i64::MIN,
        1 => i64::MAX,
        2 => -(r.below(100) as i64),
        3 => r.next() as i64,
        _ => r.below(10) as i64,
    }
}

/// Values available in the current block, by type.
#[derive(Clone, Default)]
struct Pool {
    values: Vec<(Type, Value)>,
}

impl Pool {
    fn of(&self, t: Type) -> Vec<Value> {
        self.values
            .iter()
            .filter(|(ty, _)| *ty == t)
            .map(|&(_, v)| v)
            .collect()
    }
    fn add(&mut self, t: Type, v: Value) {
        self.values.push((t, v));
    }
}

struct Gen<'m> {
    r: Rng,
    m: &'m Module,
    sigs: Vec<(Vec<Type>, Option<Type>)>,
}

impl Gen<'_> {
    /// An operand of type `t`: a pool value, or a literal / `null`.
    fn operand(&mut self, b: &mut FunctionBuilder, pool: &Pool, t: Type) -> Value {
        let vs = pool.of(t);
        if !vs.is_empty() && self.r.chance(70) {
            return self.r.pick(&vs);
        }
        if t.is_int() {
            let c = random_const(&mut self.r);
            b.iconst(c)
        } else {
            b.null()
        }
    }

    fn any_value(&mut self, pool: &Pool) -> Option<Value> {
        (!pool.values.is_empty()).then(|| pool.values[self.r.below(pool.values.len())].1)
    }

    /// Append one random non-terminator instruction.
    fn inst(&mut self, b: &mut FunctionBuilder, pool: &mut Pool) {
        let i64s = Type::I64;
        match self.r.below(17) {
            0 | 1 => {
                let op = self.r.pick(&BinOp::ALL);
                let (x, y) = (self.operand(b, pool, i64s), self.operand(b, pool, i64s));
                let v = b.binary(op, x, y);
                pool.add(i64s, v);
            }
            2 => {
                let op = self.r.pick(&UnOp::ALL);
                let x = self.operand(b, pool, i64s);
                let v = b.unary(op, x);
                pool.add(i64s, v);
            }
            3 => {
                let Some(x) = self.any_value(pool) else {
                    return;
                };
                let t = b.func.value_type(x);
                let c = self.operand(b, pool, i64s);
                let y = self.operand(b, pool, t);
                let v = b.select(c, x, y);
                pool.add(t, v);
            }
            4 if !self.m.structs.is_empty() => {
                let s = StructId::new(self.r.below(self.m.structs.len()));
                let v = b.new_object(s);
                pool.add(Type::object(s), v);
            }
            5 => {
                let e = random_type(&mut self.r, self.m.structs.len());
                let n = self.operand(b, pool, i64s);
                let v = b.new_array(e, n);
                pool.add(e.array_of(), v);
            }
            6 | 7 => {
                let objs: Vec<(Type, Value)> = pool
                    .values
                    .iter()
                    .copied()
                    .filter(|(t, _)| {
                        t.as_struct()
                            .is_some_and(|s| !self.m.struct_decl(s).fields.is_empty())
                    })
                    .collect();
                if objs.is_empty() {
                    return;
                }
                let (t, base) = self.r.pick(&objs);
                let s = t.as_struct().unwrap();
                let n = self.m.struct_decl(s).fields.len();
                let field = FieldRef {
                    ty: s,
                    index: self.r.below(n) as u32,
                };
                let fty = self.m.field(field).ty;
                let volatile = self.r.chance(20);
                if self.r.chance(50) {
                    let v = b.load(Addr::Field { base, field }, volatile);
                    pool.add(fty, v);
                } else {
                    let x = self.operand(b, pool, fty);
                    b.store(Addr::Field { base, field }, x, volatile);
                }
            }
            8 | 9 => {
                let arrs: Vec<(Type, Value)> = pool
                    .values
                    .iter()
                    .copied()
                    .filter(|(t, _)| t.is_array())
                    .collect();
                if arrs.is_empty() {
                    return;
                }
                let (t, base) = self.r.pick(&arrs);
                let index = self.operand(b, pool, i64s);
                let e = t.elem().unwrap();
                let volatile = self.r.chance(20);
                match self.r.below(3) {
                    0 => {
                        let v = b.load(Addr::Elem { base, index }, volatile);
                        pool.add(e, v);
                    }
                    1 => {
                        let x = self.operand(b, pool, e);
                        b.store(Addr::Elem { base, index }, x, volatile);
                    }
                    _ => {
                        let v = b.len(base);
                        pool.add(i64s, v);
                    }
                }
            }
            10 if !self.m.globals.is_empty() => {
                let g = GlobalId::new(self.r.below(self.m.globals.len()));
                let t = self.m.globals[g.index()].ty;
                let volatile = self.r.chance(30);
                if self.r.chance(50) {
                    let v = b.load(Addr::Global(g), volatile);
                    pool.add(t, v);
                } else {
                    let x = self.operand(b, pool, t);
                    b.store(Addr::Global(g), x, volatile);
                }
            }
            11 | 12 => {
                let nf = self.sigs.len();
                let ne = self.m.externs.len();
                let k = self.r.below(nf + ne);
                let (callee, params, ret) = if k < nf {
                    let (p, r) = self.sigs[k].clone();
                    (Callee::Func(FuncId::new(k)), p, r)
                } else {
                    let e = &self.m.externs[k - nf];
                    (
                        Callee::Extern(ir::ExternId::new(k - nf)),
                        e.params.clone(),
                        e.ret,
                    )
                };
                let args = params.iter().map(|&t| self.operand(b, pool, t)).collect();
                let (_, v) = match callee {
                    Callee::Func(f) => b.call_func_with_ret(f, args, ret),
                    Callee::Extern(_) => b.call(callee, args),
                };
                if let (Some(v), Some(t)) = (v, ret) {
                    pool.add(t, v);
                }
            }
            13 => {
                if let Some(x) = self.any_value(pool) {
                    b.escape(x);
                }
            }
            14 => {
                let c = self.operand(b, pool, i64s);
                b.guard(c);
            }
            15 => {
                // eq/ne on references.
                let refs: Vec<(Type, Value)> = pool
                    .values
                    .iter()
                    .copied()
                    .filter(|(t, _)| t.is_ref())
                    .collect();
                if refs.is_empty() {
                    return;
                }
                let (t, x) = self.r.pick(&refs);
                let y = self.operand(b, pool, t);
                let v = b.binary(
                    if self.r.chance(50) {
                        BinOp::Eq
                    } else {
                        BinOp::Ne
                    },
                    x,
                    y,
                );
                pool.add(i64s, v);
            }
            _ => {
                if let Some(x) = self.any_value(pool) {
                    let t = b.func.value_type(x);
                    let v = b.unary(UnOp::Copy, x);
                    pool.add(t, v);
                }
            }
        }
    }

    fn insts(&mut self, b: &mut FunctionBuilder, pool: &mut Pool) {
        for _ in 0..self.r.below(8) {
            self.inst(b, pool);
        }
    }

    fn ret(&mut self, b: &mut FunctionBuilder, pool: &Pool, ret: Option<Type>) {
        match ret {
            Some(t) => {
                let v = self.operand(b, pool, t);
                b.ret(Some(v));
            }
            None => {
                b.ret(None);
            }
        }
    }

    /// entry → head (phis) → body → head | exit, plus sometimes an unreachable block.
    fn function(&mut self, idx: usize) -> ir::Function {
        let (params, ret) = self.sigs[idx].clone();
        let mut b = FunctionBuilder::new(self.m, &format!("f{idx}"), ret);
        let mut pool = Pool::default();
        for (i, &t) in params.iter().enumerate() {
            let name = if self.r.chance(70) {
                format!("p{i}")
            } else {
                format!("{i}")
            };
            let v = b.param(&name, t);
            pool.add(t, v);
        }
        let entry = b.block("entry");
        self.insts(&mut b, &mut pool);
        let head = b.create_block("head");
        let body = b.create_block("body");
        let exit = b.create_block("exit");
        b.jmp(head);
        b.switch_to(head);
        let mut phis: Vec<(Value, Type, Value)> = Vec::new();
        for _ in 0..self.r.below(4) {
            // Sometimes a reference phi that starts as `null`: with a back
            // edge from another such phi, a cycle of phis whose type only
            // the `(null: T)` annotations carry.
            let (init, t) = if self.r.chance(30) {
                let t = random_type(&mut self.r, self.m.structs.len());
                if !t.is_ref() {
                    continue;
                }
                (b.null(), t)
            } else {
                let Some(init) = self.any_value(&pool) else {
                    break;
                };
                (init, b.func.value_type(init))
            };
            let phi = b.phi(t, Vec::new());
            phis.push((phi, t, init));
            pool.add(t, phi);
        }
        let c = self.operand(&mut b, &pool, Type::I64);
        b.br(c, body, exit);
        b.switch_to(body);
        let mut body_pool = pool.clone();
        self.insts(&mut b, &mut body_pool);
        for &(phi, t, init) in &phis {
            let twins: Vec<Value> = phis.iter().filter(|p| p.1 == t).map(|p| p.0).collect();
            let back = if self.r.chance(20) {
                phi
            } else if self.r.chance(40) {
                self.r.pick(&twins)
            } else {
                self.operand(&mut b, &body_pool, t)
            };
            let entries = if self.r.chance(50) {
                vec![(entry, init), (body, back)]
            } else {
                vec![(body, back), (entry, init)]
            };
            b.set_phi_entries(phi, entries);
        }
        if self.r.chance(30) {
            let c = self.operand(&mut b, &body_pool, Type::I64);
            b.br(c, head, exit);
        } else {
            b.jmp(head);
        }
        b.switch_to(exit);
        self.insts(&mut b, &mut pool);
        self.ret(&mut b, &pool, ret);
        if self.r.chance(30) {
            let dead: Block = b.create_block("dead");
            b.switch_to(dead);
            self.insts(&mut b, &mut pool);
            b.unreachable();
        }
        b.finish()
    }
}

fn random_locs(r: &mut Rng, m: &Module) -> Vec<EffectLoc> {
    let mut out = Vec::new();
    for _ in 0..r.below(3) {
        match r.below(3) {
            0 if m.structs.iter().any(|s| !s.fields.is_empty()) => {
                let s = loop {
                    let s = r.below(m.structs.len());
                    if !m.structs[s].fields.is_empty() {
                        break s;
                    }
                };
                out.push(EffectLoc::Field(FieldRef {
                    ty: StructId::new(s),
                    index: r.below(m.structs[s].fields.len()) as u32,
                }));
            }
            1 if !m.globals.is_empty() => {
                out.push(EffectLoc::Global(GlobalId::new(r.below(m.globals.len()))))
            }
            _ => out.push(EffectLoc::Elements(random_type(r, m.structs.len()))),
        }
    }
    out
}

/// A random well-typed module described by `seed`.
fn random_module(seed: u64) -> Module {
    let mut r = Rng(seed | 1);
    let mut m = Module::new();
    let n_structs = r.below(4);
    for s in 0..n_structs {
        m.add_struct(&format!("T{s}"), Vec::new());
    }
    for s in 0..n_structs {
        let n = r.below(4);
        m.structs[s].fields = (0..n)
            .map(|i| ir::FieldDecl {
                name: format!("f{i}"),
                ty: random_type(&mut r, n_structs),
            })
            .collect();
    }
    for g in 0..r.below(3) {
        let t = random_type(&mut r, n_structs);
        m.add_global(&format!("g{g}"), t);
    }
    for e in 0..r.below(3) {
        let params = (0..r.below(3))
            .map(|_| random_type(&mut r, n_structs))
            .collect();
        let ret = r.chance(70).then(|| random_type(&mut r, n_structs));
        let effects = r.chance(50).then(|| ExternEffects {
            reads: random_locs(&mut r, &m),
            writes: random_locs(&mut r, &m),
        });
        m.add_extern(Extern {
            name: format!("e{e}"),
            params,
            ret,
            effects,
        });
    }
    let sigs: Vec<(Vec<Type>, Option<Type>)> = (0..1 + r.below(3))
        .map(|_| {
            let params = (0..r.below(4))
                .map(|_| random_type(&mut r, n_structs))
                .collect();
            (params, r.chance(70).then(|| random_type(&mut r, n_structs)))
        })
        .collect();
    let funcs: Vec<ir::Function> = {
        let mut g = Gen {
            r,
            m: &m,
            sigs: sigs.clone(),
        };
        (0..sigs.len()).map(|i| g.function(i)).collect()
    };
    for f in funcs {
        m.add_func(f);
    }
    m
}

/// The same functions, blocks, instruction kinds and value types.
fn assert_same_shape(a: &Module, b: &Module) {
    assert_eq!(a.structs, b.structs);
    assert_eq!(a.globals, b.globals);
    assert_eq!(a.externs, b.externs);
    assert_eq!(a.funcs.len(), b.funcs.len());
    for (fa, fb) in a.funcs.iter().zip(&b.funcs) {
        assert_eq!(fa.layout.len(), fb.layout.len());
        let ptypes = |f: &ir::Function| {
            f.params
                .iter()
                .map(|&p| f.value_type(p))
                .collect::<Vec<_>>()
        };
        assert_eq!(ptypes(fa), ptypes(fb));
        for (ba, bb) in fa.layout.iter().zip(&fb.layout) {
            let ia = &fa.blocks[ba.index()].insts;
            let ib = &fb.blocks[bb.index()].insts;
            assert_eq!(ia.len(), ib.len());
            for (&x, &y) in ia.iter().zip(ib) {
                let (dx, dy) = (&fa.inst(x), &fb.inst(y));
                assert_eq!(
                    std::mem::discriminant(&dx.kind),
                    std::mem::discriminant(&dy.kind)
                );
                assert_eq!(
                    dx.result.map(|v| fa.value_type(v)),
                    dy.result.map(|v| fb.value_type(v))
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn print_parse_print_is_the_identity(seed in any::<u64>()) {
        let m = random_module(seed);
        let text = print_module(&m);
        let (m2, _) = parse_module(&text, "gen.ir")
            .unwrap_or_else(|e| panic!("{e}\n--- text ---\n{text}"));
        let text2 = print_module(&m2);
        prop_assert_eq!(&text, &text2);
        assert_same_shape(&m, &m2);
    }
}

#[test]
fn unnamed_and_clashing_values_get_fresh_names_that_reparse() {
    let mut m = Module::new();
    m.add_global("g", Type::I64);
    let mut b = FunctionBuilder::new(&m, "f", Some(Type::I64));
    let x = b.param("x", Type::I64);
    b.block("entry");
    let five = b.iconst(5);
    let a = b.binary(BinOp::Add, x, five);
    b.func.set_value_name(a, "x"); // clashes with the parameter
    let c = b.binary(BinOp::Mul, a, a); // unnamed
    let d = b.binary(BinOp::Sub, c, x);
    b.func.set_value_name(d, "v3"); // the name an unnamed value might get
    b.ret(Some(d));
    m.add_func(b.finish());
    let text = print_module(&m);
    assert_eq!(
        text,
        "global @g: i64\n\nfunc @f(%x: i64) -> i64 {\nentry:\n  %x_1 = add %x, 5\n  \
         %v3_1 = mul %x_1, %x_1\n  %v3 = sub %v3_1, %x\n  ret %v3\n}\n"
    );
    let (m2, _) = parse_module(&text, "t").unwrap();
    assert_eq!(print_module(&m2), text);
}
