//! Benchmarks of the peephole engine (and GVN) on generated functions of 10k
//! and 100k instructions: a long add chain (stacked constants re-associate
//! every link: quadratic with a naive pass-until-nothing-changes scheme), and
//! a mix of foldable, canonicalizable and identity operations over branches.

// The allocator and options of the `loadstar` binary (loadstar_alloc).
loadstar_alloc::install!();

#[path = "shapes/mod.rs"]
mod shapes;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ir::Module;
use passes::peeps::{CheckMode, Peeps};
use passes::{Pass, Stats};
use std::fmt::Write;

/// `%v(i+1) = add %v(i), 1` for `n` links.
fn add_chain(n: usize) -> Module {
    let mut s = String::from("func @main(%x: i64) -> i64 {\nentry:\n  %v0 = add %x, 1\n");
    for i in 1..n {
        writeln!(s, "  %v{i} = add %v{}, 1", i - 1).unwrap();
    }
    writeln!(s, "  ret %v{}\n}}", n - 1).unwrap();
    ir::parse_module(&s, "chain").unwrap().0
}

/// Blocks of 8 mixed operations joined by branches on folded constants and
/// phis (the `gvn_mixed` scaling shape).
fn mixed(n: usize) -> Module {
    ir::parse_module(&shapes::gvn_mixed(n), "mixed").unwrap().0
}

fn count(m: &Module) -> u64 {
    m.funcs.iter().map(|f| f.placed_inst_count() as u64).sum()
}

fn bench(c: &mut Criterion) {
    let peeps = Peeps {
        seed: 1,
        check: CheckMode::Off,
        drop_deps_of: None,
    };
    let mut g = c.benchmark_group("peeps");
    g.sample_size(10);
    for n in [10_000usize, 100_000] {
        for (name, m) in [("add_chain", add_chain(n)), ("mixed", mixed(n))] {
            g.throughput(Throughput::Elements(count(&m)));
            g.bench_function(format!("{name}/{n}"), |b| {
                b.iter_batched(
                    || m.clone(),
                    |mut m| peeps.run(&mut m, &mut Stats::default()),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    g.finish();
    let mut g = c.benchmark_group("gvn");
    g.sample_size(10);
    for n in [10_000usize, 100_000] {
        let m = mixed(n);
        g.throughput(Throughput::Elements(count(&m)));
        g.bench_function(format!("mixed/{n}"), |b| {
            b.iter_batched(
                || m.clone(),
                |mut m| passes::gvn::Gvn.run(&mut m, &mut Stats::default()),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
