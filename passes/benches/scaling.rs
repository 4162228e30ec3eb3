//! The `scaling` group: parse + verify and each pass (`lse`, `gvn`, `peeps`,
//! `dce`, `pipeline`) at N and 10N instructions (N = 10k) on every
//! adversarial shape of `shapes/mod.rs`. Every pass must cost O(n) or
//! O(n log n): the time at 10N should be about ten times the time at N.
//! `examples/scaling_ratios.rs` prints the ratio table of the same cells.

// The allocator and options of the `loadstar` binary (loadstar_alloc).
loadstar_alloc::install!();

#[path = "shapes/mod.rs"]
mod shapes;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use passes::PassManager;
use std::time::Duration;

const PASSES: &[&str] = &["lse", "gvn", "peeps", "dce", "pipeline"];

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("scaling");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1));
    for shape in shapes::SHAPES {
        for n in [10_000usize, 100_000] {
            let text = (shape.build)(n);
            let (m, _) = ir::parse_module(&text, shape.name).expect("shape parses");
            g.throughput(Throughput::Elements(
                m.funcs.iter().map(|f| f.placed_inst_count() as u64).sum(),
            ));
            g.bench_function(format!("{}/parse+verify/{n}", shape.name), |b| {
                b.iter(|| ir::parse_verified(&text, shape.name).unwrap().0)
            });
            for &pass in PASSES {
                let mut pm = PassManager::from_list(pass).expect("known pass");
                pm.verify = pass == "pipeline";
                g.bench_function(format!("{}/{pass}/{n}", shape.name), |b| {
                    b.iter_batched(
                        // No analyses kept from the run before, as in
                        // `loadstar opt` (see `analyses::forget_all`).
                        || {
                            passes::analyses::forget_all();
                            m.clone()
                        },
                        |mut m| pm.run(&mut m).unwrap(),
                        BatchSize::LargeInput,
                    )
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
