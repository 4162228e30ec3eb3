//! The reducer against deliberately broken passes written here as closures:
//! generated programs are checked against each broken pass, every finding is
//! reduced, and the reduced reproducers must keep the signature, verify,
//! reparse, still fail, and be small (median ≤ 15 instructions over ≥ 20
//! findings). Run with `--nocapture` to see the size and timing table.

use ir::{Addr, BinOp, InstKind, Module};
use passes::{PassError, Stats};
use std::collections::HashMap;
use std::time::Instant;
use verify::gen::{generate_from_seed, GenConfig};
use verify::inputs::instantiate_all;
use verify::oracle::{check_program_with, Finding, OracleConfig};
use verify::reduce::{recheck_with, reduce_with, reparse, Candidate, Limits};

/// Broken pass 1: `sub a, b` becomes `sub b, a`.
fn swap_sub(_: &str, m: &mut Module, _: &mut Stats) -> Result<(), PassError> {
    for f in &mut m.funcs {
        for i in &mut f.insts {
            if let InstKind::Binary(BinOp::Sub, a, b) = i.kind {
                i.kind = InstKind::Binary(BinOp::Sub, b, a);
            }
        }
    }
    Ok(())
}

/// Broken pass 2: `slt` becomes `sle` (an off-by-one comparison fold).
fn slt_to_sle(_: &str, m: &mut Module, _: &mut Stats) -> Result<(), PassError> {
    for f in &mut m.funcs {
        for i in &mut f.insts {
            if let InstKind::Binary(BinOp::Slt, a, b) = i.kind {
                i.kind = InstKind::Binary(BinOp::Sle, a, b);
            }
        }
    }
    Ok(())
}

/// Broken pass 3: store-to-load forwarding within a block that compares
/// fields but ignores the bases (it assumes distinct references never alias
/// and forwards across stores to other objects of the same field as if they
/// did not matter — the classic may-alias bug).
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

/// Broken pass 4: the first non-volatile store of each function is dropped as "dead".
fn drop_first_store(_: &str, m: &mut Module, _: &mut Stats) -> Result<(), PassError> {
    for f in &mut m.funcs {
        let first = f.inst_iter().find(|&i| {
            matches!(
                f.insts[i.index()].kind,
                InstKind::Store {
                    volatile: false,
                    ..
                }
            )
        });
        if let Some(i) = first {
            f.remove_inst(i);
        }
    }
    Ok(())
}

type Broken = fn(&str, &mut Module, &mut Stats) -> Result<(), PassError>;

const BROKEN: [(&str, Broken); 4] = [
    ("swap-sub", swap_sub),
    ("slt-sle", slt_to_sle),
    ("forward-ignoring-bases", forward_ignoring_bases),
    ("drop-first-store", drop_first_store),
];

/// The first `want` findings of `pass` on generated programs (one per program).
fn findings_for(name: &str, pass: Broken, want: usize) -> Vec<Finding> {
    let plans = vec![name.to_string()];
    let mut out = Vec::new();
    for seed in 0..3000u64 {
        if out.len() >= want {
            break;
        }
        let g = generate_from_seed(seed, &GenConfig::default());
        let ins = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let r = check_program_with(
            &g.module,
            g.main,
            &ins,
            &plans,
            &pass,
            &OracleConfig::default(),
        );
        if let Some(mut f) = r.findings.into_iter().next() {
            f.seed = Some(seed);
            out.push(f);
        }
    }
    out
}

fn median(mut xs: Vec<usize>) -> usize {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

#[test]
fn reduced_findings_keep_their_signature_and_are_small() {
    let limits = Limits {
        time: None,
        max_checks: Some(20_000),
    };
    let mut sizes = Vec::new();
    let mut rows = Vec::new();
    for (name, pass) in BROKEN {
        let found = findings_for(name, pass, 6);
        assert!(!found.is_empty(), "{name}: no findings");
        for f in found {
            let sig = f.signature();
            let mut recheck = recheck_with(&pass, &f.passes, f.fuel);
            let t = Instant::now();
            let r = reduce_with(&f, &mut recheck, &limits);
            let ms = t.elapsed().as_millis();
            assert!(r.reproduced, "{name}: the original must reproduce");
            assert_eq!(r.finding.signature(), sig);
            assert!(r.insts_after <= r.insts_before);
            assert!(ir::verify_module(&r.finding.module).is_ok());
            // The written text test parses back and still fails the same way.
            let c = Candidate {
                module: r.finding.module.clone(),
                func: r.finding.func,
                input: r.finding.input.clone().expect("input"),
            };
            let again = reparse(&c).expect("reduced reproducer reparses");
            assert_eq!(recheck(&again).map(|g| g.signature()), Some(sig.clone()));
            rows.push(format!(
                "{name:<24} seed {:>3}  {:>3} -> {:>2} insts  {:>5} checks  {:>5} ms  {sig}",
                f.seed.unwrap_or(0),
                r.insts_before,
                r.insts_after,
                r.checks,
                ms
            ));
            sizes.push(r.insts_after);
        }
    }
    for row in &rows {
        println!("{row}");
    }
    let med = median(sizes.clone());
    println!(
        "reduced {} findings: median {} instructions, max {}",
        sizes.len(),
        med,
        sizes.iter().max().copied().unwrap_or(0)
    );
    assert!(sizes.len() >= 20);
    assert!(med <= 15, "median reduced size {med} > 15");
}
