//! Interpreter throughput on a loop-heavy program: field and array accesses,
//! arithmetic and a call to a small module function in every iteration.
//! Reported as IR instructions per second (`Throughput::Elements(steps)`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use interp::{Config, Program};
use ir::{
    BinOp, Callee, FieldRef, FuncId, FunctionBuilder, InputObject, InputSpec, InputValue, Module,
    Type,
};

/// `main(acc: Acc, a: [i64], n)`: for i in 0..n { a[i & 63] += mix(i, acc.sum); acc.sum += a[i & 63] ^ i }.
fn build() -> (Module, FuncId) {
    let mut m = Module::new();
    let acc = m.add_struct("Acc", vec![("sum", Type::I64), ("count", Type::I64)]);
    let sum = FieldRef { ty: acc, index: 0 };
    let count = FieldRef { ty: acc, index: 1 };
    let mix = {
        let mut b = FunctionBuilder::new(&m, "mix", Some(Type::I64));
        let x = b.param("x", Type::I64);
        let y = b.param("y", Type::I64);
        b.block("entry");
        let three = b.iconst(3);
        let t = b.binary(BinOp::Mul, x, three);
        let u = b.binary(BinOp::Add, t, y);
        let s = b.binary(BinOp::Lshr, u, three);
        b.ret(Some(s));
        m.add_func(b.finish())
    };
    let main = {
        let mut b = FunctionBuilder::new(&m, "main", Some(Type::I64));
        let accv = b.param("acc", Type::object(acc));
        let arr = b.param("a", Type::I64.array_of());
        let n = b.param("n", Type::I64);
        let entry = b.block("entry");
        let lp = b.create_block("loop");
        let done = b.create_block("done");
        b.jmp(lp);
        b.switch_to(lp);
        let i = b.phi(Type::I64, vec![]);
        let c63 = b.iconst(63);
        let one = b.iconst(1);
        let zero = b.iconst(0);
        let idx = b.binary(BinOp::And, i, c63);
        let s = b.load_field(accv, sum);
        let (_, mixed) = b.call(Callee::Func(mix), vec![i, s]);
        let old = b.load_elem(arr, idx);
        let new = b.binary(BinOp::Add, old, mixed.unwrap());
        b.store_elem(arr, idx, new);
        let x = b.binary(BinOp::Xor, new, i);
        let s2 = b.binary(BinOp::Add, s, x);
        b.store_field(accv, sum, s2);
        let c = b.load_field(accv, count);
        let c2 = b.binary(BinOp::Add, c, one);
        b.store_field(accv, count, c2);
        let i2 = b.binary(BinOp::Add, i, one);
        let more = b.binary(BinOp::Slt, i2, n);
        b.set_phi_entries(i, vec![(entry, zero), (lp, i2)]);
        b.br(more, lp, done);
        b.switch_to(done);
        let r = b.load_field(accv, sum);
        b.ret(Some(r));
        m.add_func(b.finish())
    };
    (m, main)
}

fn inputs(n: i64) -> InputSpec {
    InputSpec {
        objects: vec![
            InputObject::Struct {
                ty: ir::StructId(0),
                fields: vec![InputValue::Int(0), InputValue::Int(0)],
            },
            InputObject::Array {
                elem: Type::I64,
                elems: vec![InputValue::Int(1); 64],
            },
        ],
        params: vec![InputValue::Obj(0), InputValue::Obj(1), InputValue::Int(n)],
        globals: vec![],
        object_names: vec![],
    }
}

fn throughput(c: &mut Criterion) {
    let (m, main) = build();
    let prog = Program::new(&m);
    let spec = inputs(200_000);
    let config = Config::with_fuel(u64::MAX);
    let steps = prog.run(main, &spec, &config).steps;
    let mut g = c.benchmark_group("interp");
    g.throughput(Throughput::Elements(steps));
    g.bench_function("loop_fields_arrays_calls", |b| {
        b.iter(|| prog.run(main, &spec, &config))
    });
    g.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
