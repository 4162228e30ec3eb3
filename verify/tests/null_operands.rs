//! Generated programs with `null` put in place of reference operands —
//! address bases of every type, phi, select and copy operands, stored values,
//! call arguments — the shapes behind two defects the generator could not
//! reach: LSE mixing array element types once a base became the constant
//! `null`, and the printer dropping `(null: T)` in cycles of phis. Every
//! pass plan must keep the behaviour and leave a well-formed module, and
//! every optimized module must print and parse back to the same text and
//! result types.

use ir::{InstKind, Module, Type};
use verify::gen::rng::Rng;
use verify::gen::{generate_from_seed, GenConfig};
use verify::inputs::instantiate_all;
use verify::oracle::{check_program, run_plan, OracleConfig};

/// Replace about one in `den` reference operands (not in `eq`/`ne`) by `null`.
fn nullify(m: &mut Module, rng: &mut Rng, den: u64) -> usize {
    let mut changed = 0;
    for f in &mut m.funcs {
        let null = f.null();
        for i in 0..f.insts.len() {
            if f.insts[i].block.is_none() || matches!(f.insts[i].kind, InstKind::Binary(..)) {
                continue;
            }
            let types: Vec<Type> = f.values.iter().map(|d| d.ty).collect();
            f.insts[i].kind.for_each_operand_mut(|v| {
                let ty = types[v.index()];
                if ty.is_ref() && ty != Type::NULL && *v != null && rng.chance(1, den) {
                    *v = null;
                    changed += 1;
                }
            });
        }
    }
    changed
}

/// The result type of every placed instruction, in layout order.
fn result_types(m: &Module) -> Vec<Option<Type>> {
    let mut out = Vec::new();
    for f in &m.funcs {
        for b in &f.layout {
            for &i in &f.blocks[b.index()].insts {
                out.push(f.inst(i).result.map(|v| f.value_type(v)));
            }
        }
    }
    out
}

#[test]
fn null_reference_operands_keep_every_pass_sound_and_printable() {
    let cfg = GenConfig::default();
    let plans: Vec<String> = ["lse", "gvn", "peeps", "dce", "lse,peeps,lse", "pipeline"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut checked = 0;
    for seed in 0..800u64 {
        let g = generate_from_seed(seed, &cfg);
        let mut m = g.module.clone();
        let mut rng = Rng::new(seed ^ 0x6e75_6c6c);
        if nullify(&mut m, &mut rng, 3) == 0 || ir::verify_module(&m).is_err() {
            continue;
        }
        checked += 1;
        let inputs = instantiate_all(&m, m.func(g.main), seed, 3);
        let r = check_program(&m, g.main, &inputs, &plans, &OracleConfig::default());
        if let Some(f) = r.findings.first() {
            panic!("seed {seed}: {}\n{}", f.signature(), f.to_test_text());
        }
        for plan in &plans {
            let mut opt = m.clone();
            run_plan(plan, &mut opt, &mut passes::Stats::default())
                .unwrap_or_else(|e| panic!("seed {seed}, {plan}: {e}"));
            let text = ir::print_module(&opt);
            let (again, _) = ir::parse_module(&text, "opt.ir")
                .unwrap_or_else(|e| panic!("seed {seed}, {plan}: {e}\n{text}"));
            assert_eq!(ir::print_module(&again), text, "seed {seed}, {plan}");
            assert_eq!(
                result_types(&again),
                result_types(&opt),
                "seed {seed}, {plan}:\n{text}"
            );
        }
    }
    assert!(
        checked > 250,
        "only {checked} programs had a reference operand"
    );
}
