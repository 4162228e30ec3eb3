//! The peephole engine only tries the rules whose pattern root names an
//! instruction's opcode (`passes::peeps::rules_for`). That is an
//! optimization, so it must be exact: on generated programs and on every
//! corpus module, no rule outside an instruction's list ever matches it.

use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::Module;
use passes::peeps::{rules, rules_for, MatchCtx};

/// Every (rule, instruction) pair the dispatch skips must not match.
fn check_module(m: &Module, what: &str) -> usize {
    let mut checked = 0;
    for f in &m.funcs {
        if f.layout.is_empty() {
            continue;
        }
        let cfg = Cfg::new(f);
        let dom = DomTree::new(f, &cfg);
        for inst in f.inst_iter() {
            let allowed = rules_for(&f.inst(inst).kind);
            for (k, rule) in rules().iter().enumerate() {
                if allowed.contains(&k) {
                    continue;
                }
                let mut cx = MatchCtx::new(f, &dom, None);
                cx.set_current(inst);
                assert!(
                    (rule.matcher)(&mut cx, inst).is_none(),
                    "{what}: rule {} matches `{:?}` but the dispatch skips it",
                    rule.name,
                    f.inst(inst).kind
                );
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn skipped_rules_never_match_generated_programs() {
    let cfg = verify::gen::GenConfig::default();
    let mut checked = 0;
    for seed in 0..2000u64 {
        let g = verify::gen::generate_from_seed(seed, &cfg);
        checked += check_module(&g.module, &format!("generated program {seed}"));
        // And after the pipeline, where folded shapes (constants, phis) abound.
        let mut m = g.module.clone();
        passes::PassManager::from_list("lse,gvn,dce")
            .unwrap()
            .run(&mut m)
            .unwrap();
        checked += check_module(&m, &format!("optimized program {seed}"));
    }
    assert!(checked > 100_000, "only {checked} pairs checked");
}

#[test]
fn skipped_rules_never_match_corpus_modules() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut n = 0;
    for path in verify::filetest::collect_files(&root).expect("corpus") {
        let text = std::fs::read_to_string(&path).unwrap();
        if let Ok((m, _)) = ir::parse_module(&text, "t.ir") {
            check_module(&m, &path.display().to_string());
            n += 1;
        }
    }
    assert!(n > 150, "only {n} corpus modules");
}
