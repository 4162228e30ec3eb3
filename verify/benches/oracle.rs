//! Throughput of the interpreter oracle: generate a ~40-instruction program,
//! instantiate 3 inputs, run the original, optimize with `pipeline`, run the
//! optimized program and compare. Reports programs per second (one core).

/// The allocator of the `loadstar` binary, so the figure is the sweep's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use verify::gen::{generate_from_seed, GenConfig};
use verify::inputs::instantiate_all;
use verify::oracle::{check_program, OracleConfig};

fn oracle_pipeline(c: &mut Criterion) {
    let cfg = GenConfig::default();
    let ocfg = OracleConfig::default();
    let plans = vec!["pipeline".to_string()];
    let mut group = c.benchmark_group("oracle");
    const BATCH: u64 = 100;
    group.throughput(Throughput::Elements(BATCH));
    let mut next = 0u64;
    group.bench_function("pipeline_40_insts_3_inputs", |b| {
        b.iter(|| {
            let mut findings = 0;
            for _ in 0..BATCH {
                next += 1;
                let g = generate_from_seed(next, &cfg);
                let ins = instantiate_all(&g.module, g.module.func(g.main), next, 3);
                let r = check_program(&g.module, g.main, &ins, &plans, &ocfg);
                findings += r.findings.len();
            }
            findings
        })
    });
    group.finish();
}

criterion_group!(benches, oracle_pipeline);
criterion_main!(benches);
