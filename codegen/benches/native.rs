//! Native code against the interpreter on the interpreter's throughput
//! program (the same loop of field and array accesses, arithmetic and a call
//! per iteration, here as IR text), both reported as IR instructions per
//! second (the interpreter's step count); and compile speed on a
//! 10 000-instruction function (IR instructions compiled per second); and the
//! cost of strict memory (`codegen::strict`) per execution of a short run.

use codegen::{compile, NativeProgram};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use interp::{Config, Program};

const THROUGHPUT: &str = "
type Acc { sum: i64, count: i64 }

func @mix(%x: i64, %y: i64) -> i64 {
entry:
  %t = mul %x, 3
  %u = add %t, %y
  %s = lshr %u, 3
  ret %s
}

func @main(%acc: Acc, %a: [i64], %n: i64) -> i64 {
entry:
  jmp loop
loop:
  %i = phi [entry: 0], [loop: %i2]
  %idx = and %i, 63
  %s = load %acc.sum
  %m = call @mix(%i, %s)
  %old = load %a[%idx]
  %new = add %old, %m
  store %a[%idx], %new
  %x = xor %new, %i
  %s2 = add %s, %x
  store %acc.sum, %s2
  %c = load %acc.count
  %c2 = add %c, 1
  store %acc.count, %c2
  %i2 = add %i, 1
  %more = slt %i2, %n
  br %more, loop, done
done:
  %r = load %acc.sum
  ret %r
}
";

/// A straight-line function of about `n` instructions over a few live values.
fn big_function(n: usize) -> String {
    let mut s = String::from("func @big(%a: i64, %b: i64) -> i64 {\nentry:\n  %v0 = add %a, %b\n");
    for k in 1..n {
        let op = ["add", "sub", "xor", "mul", "and", "or"][k % 6];
        let back = 1 + k % 7;
        let other = if k > back {
            format!("%v{}", k - back)
        } else {
            "%a".into()
        };
        s.push_str(&format!("  %v{k} = {op} %v{}, {other}\n", k - 1));
    }
    s.push_str(&format!("  ret %v{}\n}}\n", n - 1));
    s
}

fn benches(c: &mut Criterion) {
    let (m, _) = ir::parse_module(THROUGHPUT, "throughput").expect("parses");
    let main = m.func_by_name("main").expect("main");
    let spec = ir::parse_input_spec(
        "acc = Acc{sum: 0, count: 0}, a = [i64]{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, n = 200000",
        "input",
        &m,
        m.func(main),
    )
    .expect("input parses");
    let config = Config::with_fuel(u64::MAX);
    let prog = Program::new(&m);
    let native = NativeProgram::new(&m).expect("compiles");
    let want = prog.run(main, &spec, &config);
    assert_eq!(native.run(main, &spec, &config).behaviour, want.behaviour);
    let mut g = c.benchmark_group("throughput");
    g.throughput(Throughput::Elements(want.steps));
    g.bench_function("interp", |b| b.iter(|| prog.run(main, &spec, &config)));
    g.bench_function("native", |b| b.iter(|| native.run(main, &spec, &config)));
    g.finish();

    // A short run (10 iterations over 2 input objects) is
    // dominated by setting up the heap: dense against strict.
    let short = ir::parse_input_spec(
        "acc = Acc{sum: 0, count: 0}, a = [i64]{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64}, n = 10",
        "input",
        &m,
        m.func(main),
    )
    .expect("input parses");
    let mut strict = NativeProgram::new(&m).expect("compiles");
    strict.set_strict(true);
    assert_eq!(
        strict.run(main, &short, &config).behaviour,
        prog.run(main, &short, &config).behaviour
    );
    let mut g = c.benchmark_group("short_run");
    g.bench_function("dense", |b| b.iter(|| native.run(main, &short, &config)));
    g.bench_function("strict", |b| b.iter(|| strict.run(main, &short, &config)));
    g.finish();

    let text = big_function(10_000);
    let (big, _) = ir::parse_module(&text, "big").expect("parses");
    let mut g = c.benchmark_group("codegen");
    g.throughput(Throughput::Elements(big.funcs[0].placed_inst_count() as u64));
    g.sample_size(10);
    g.bench_function("compile_10k_insts", |b| {
        b.iter(|| compile(&big).expect("compiles"))
    });
    g.finish();
}

criterion_group!(all, benches);
criterion_main!(all);
