//! Time to reduce one finding: a generated ~40-instruction program that a
//! deliberately broken pass (store-to-load forwarding that ignores the bases,
//! the may-alias bug) miscompiles, reduced to a fixed point against it.

use criterion::{criterion_group, criterion_main, Criterion};
use ir::{Addr, InstKind, Module};
use passes::{PassError, Stats};
use std::collections::HashMap;
use verify::gen::{generate_from_seed, GenConfig};
use verify::inputs::instantiate_all;
use verify::oracle::{check_program_with, Finding, OracleConfig};
use verify::reduce::{recheck_with, reduce_with, Limits};

fn forward_ignoring_bases(_: &str, m: &mut Module, _: &mut Stats) -> Result<(), PassError> {
    for f in &mut m.funcs {
        for b in f.layout.clone() {
            let mut last: HashMap<ir::FieldRef, ir::Value> = HashMap::new();
            for i in f.blocks[b.index()].insts.clone() {
                match f.insts[i.index()].kind.clone() {
                    InstKind::Store {
                        addr: Addr::Field { field, .. },
                        value,
                        volatile: false,
                    } => {
                        last.insert(field, value);
                    }
                    InstKind::Load {
                        addr: Addr::Field { field, .. },
                        volatile: false,
                    } => {
                        if let (Some(&v), Some(r)) = (last.get(&field), f.insts[i.index()].result) {
                            if f.value_type(v) == f.value_type(r) {
                                f.remove_inst(i);
                                f.replace_all_uses(r, v);
                            }
                        }
                    }
                    InstKind::Call { .. } => last.clear(),
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

fn findings(n: usize) -> Vec<Finding> {
    let plans = vec!["forward".to_string()];
    let mut out = Vec::new();
    for seed in 0..5000u64 {
        let g = generate_from_seed(seed, &GenConfig::default());
        let ins = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let r = check_program_with(
            &g.module,
            g.main,
            &ins,
            &plans,
            &forward_ignoring_bases,
            &OracleConfig::default(),
        );
        out.extend(r.findings.into_iter().next());
        if out.len() >= n {
            break;
        }
    }
    out
}

fn reduce_one(c: &mut Criterion) {
    let fs = findings(8);
    let limits = Limits {
        time: None,
        max_checks: Some(20_000),
    };
    let mut k = 0;
    c.bench_function("reduce_alias_bug_finding", |b| {
        b.iter(|| {
            k = (k + 1) % fs.len();
            let f = &fs[k];
            let mut recheck = recheck_with(&forward_ignoring_bases, &f.passes, f.fuel);
            reduce_with(f, &mut recheck, &limits).insts_after
        })
    });
}

criterion_group!(benches, reduce_one);
criterion_main!(benches);
