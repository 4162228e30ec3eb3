//! Throughput of the interpreter oracle: generate a ~40-instruction program,
//! instantiate 3 inputs, run the original, optimize with `pipeline`, run the
//! optimized program and compare. Reports programs per second (one core).
//! `pipeline_40_insts_3_inputs` is the speed target (the generator without its
//! size tail); `pipeline_sweep_mix_3_inputs` is the sweep's real mix, where one
//! program in twenty has 150–400 instructions.

// The allocator of the `loadstar` binary, so the figure is the sweep's.
loadstar_alloc::install!();

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use verify::gen::{generate_from_seed, GenConfig};
use verify::inputs::instantiate_all;
use verify::oracle::{check_program, OracleConfig};

fn oracle_pipeline(c: &mut Criterion) {
    let small = GenConfig {
        tail_chance: 0,
        ..GenConfig::default()
    };
    let mut group = c.benchmark_group("oracle");
    group.throughput(Throughput::Elements(BATCH));
    for (name, cfg) in [
        ("pipeline_40_insts_3_inputs", small),
        ("pipeline_sweep_mix_3_inputs", GenConfig::default()),
    ] {
        bench_config(&mut group, name, &cfg);
    }
    group.finish();
}

const BATCH: u64 = 100;

fn bench_config(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    cfg: &GenConfig,
) {
    let ocfg = OracleConfig::default();
    let plans = vec!["pipeline".to_string()];
    let mut next = 0u64;
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut findings = 0;
            for _ in 0..BATCH {
                next += 1;
                let g = generate_from_seed(next, cfg);
                let ins = instantiate_all(&g.module, g.module.func(g.main), next, 3);
                let r = check_program(&g.module, g.main, &ins, &plans, &ocfg);
                findings += r.findings.len();
            }
            findings
        })
    });
}

criterion_group!(benches, oracle_pipeline);
criterion_main!(benches);
