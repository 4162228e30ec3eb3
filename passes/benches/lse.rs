//! LSE cost on generated functions of ~10k and ~100k instructions: straight
//! runs of loads and stores over several possibly-aliasing parameters, fresh
//! objects, arrays and globals, joined by diamonds and counted loops, with
//! extern calls now and then. The time per instruction should stay flat as the
//! function grows (the tracked-location cap bounds the work per instruction).

// The allocator and options of the `loadstar` binary (loadstar_alloc).
loadstar_alloc::install!();

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ir::{
    BinOp, Callee, EffectLoc, Extern, ExternEffects, FieldRef, FunctionBuilder, Module, Type, Value,
};
use passes::lse::Lse;
use passes::{Pass, Stats};

/// A deterministic pseudo-random sequence (no host state).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// A module whose @main has about `target` instructions.
fn generate(target: usize) -> Module {
    let mut m = Module::new();
    let node = m.add_struct("Node", vec![]);
    m.structs[node.index()].fields = vec![
        ir::FieldDecl {
            name: "a".into(),
            ty: Type::I64,
        },
        ir::FieldDecl {
            name: "b".into(),
            ty: Type::I64,
        },
        ir::FieldDecl {
            name: "c".into(),
            ty: Type::I64,
        },
        ir::FieldDecl {
            name: "next".into(),
            ty: Type::object(node),
        },
    ];
    let g = m.add_global("g", Type::I64);
    let ro = m.add_extern(Extern {
        name: "ro".into(),
        params: vec![Type::I64],
        ret: Some(Type::I64),
        effects: Some(ExternEffects {
            reads: vec![EffectLoc::Field(FieldRef { ty: node, index: 0 })],
            writes: vec![],
        }),
    });
    let any = m.add_extern(Extern {
        name: "any".into(),
        params: vec![Type::I64],
        ret: Some(Type::I64),
        effects: None,
    });
    let field = |i: u32| FieldRef { ty: node, index: i };
    let mut rng = Lcg(7);
    let mut b = FunctionBuilder::new(&m, "main", Some(Type::I64));
    let params: Vec<Value> = (0..4)
        .map(|i| b.param(&format!("p{i}"), Type::object(node)))
        .collect();
    let arr = b.param("arr", Type::I64.array_of());
    let n = b.param("n", Type::I64);
    b.block("entry");
    let mut acc = b.iconst(0);
    let mut seg = 0;
    while b.func.placed_inst_count() < target {
        seg += 1;
        // A straight run of accesses.
        for _ in 0..12 {
            let base = params[rng.next(4) as usize];
            let f = field(rng.next(3) as u32);
            match rng.next(6) {
                0 | 1 => {
                    let v = b.load_field(base, f);
                    acc = b.binary(BinOp::Add, acc, v);
                }
                2 => {
                    b.store_field(base, f, acc);
                }
                3 => {
                    let i = b.iconst(rng.next(8) as i64);
                    let v = b.load_elem(arr, i);
                    acc = b.binary(BinOp::Xor, acc, v);
                }
                4 => {
                    let v = b.load_global(g);
                    acc = b.binary(BinOp::Sub, acc, v);
                }
                _ => {
                    let next = b.load_field(base, field(3));
                    let v = b.load_field(next, f);
                    acc = b.binary(BinOp::Add, acc, v);
                }
            }
        }
        if seg % 7 == 0 {
            let callee = if rng.next(2) == 0 { ro } else { any };
            let (_, r) = b.call(Callee::Extern(callee), vec![acc]);
            acc = r.expect("result");
        }
        // A diamond or a counted loop, carrying `acc` through phis.
        let entry_block = b.current_block();
        if seg % 5 == 0 {
            let head = b.create_block(&format!("head{seg}"));
            let body = b.create_block(&format!("body{seg}"));
            let exit = b.create_block(&format!("exit{seg}"));
            b.jmp(head);
            b.switch_to(head);
            let zero = b.iconst(0);
            let i = b.phi(Type::I64, vec![]);
            let a = b.phi(Type::I64, vec![]);
            let c = b.binary(BinOp::Slt, i, n);
            b.br(c, body, exit);
            b.switch_to(body);
            let base = params[rng.next(4) as usize];
            let v = b.load_field(base, field(0));
            let a2 = b.binary(BinOp::Add, a, v);
            b.store_field(base, field(1), a2);
            let one = b.iconst(1);
            let i2 = b.binary(BinOp::Add, i, one);
            b.jmp(head);
            b.set_phi_entries(i, vec![(entry_block, zero), (body, i2)]);
            b.set_phi_entries(a, vec![(entry_block, acc), (body, a2)]);
            b.switch_to(exit);
            acc = a;
        } else {
            let left = b.create_block(&format!("l{seg}"));
            let right = b.create_block(&format!("r{seg}"));
            let join = b.create_block(&format!("j{seg}"));
            b.br(acc, left, right);
            b.switch_to(left);
            let base = params[rng.next(4) as usize];
            b.store_field(base, field(2), acc);
            b.jmp(join);
            b.switch_to(right);
            let v = b.load_field(base, field(2));
            b.jmp(join);
            b.switch_to(join);
            acc = b.phi(Type::I64, vec![(left, acc), (right, v)]);
        }
    }
    b.ret(Some(acc));
    let f = b.finish();
    m.add_func(f);
    ir::verify::verify_module(&m).expect("generated module verifies");
    m
}

fn bench_lse(c: &mut Criterion) {
    let mut group = c.benchmark_group("lse");
    group.sample_size(10);
    for size in [10_000usize, 100_000] {
        let module = generate(size);
        let insts = module.funcs[0].placed_inst_count() as u64;
        group.throughput(Throughput::Elements(insts));
        group.bench_with_input(
            BenchmarkId::from_parameter(insts),
            &module,
            |bench, module| {
                bench.iter_batched(
                    || module.clone(),
                    |mut m| {
                        let mut stats = Stats::default();
                        Lse::default().run(&mut m, &mut stats);
                        stats
                    },
                    criterion::BatchSize::LargeInput,
                )
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench_lse);
criterion_main!(benches);
