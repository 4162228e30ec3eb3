//! Runs every text test under `corpus/peeps/` and `corpus/dce/` (and, for the
//! seed and pipeline checks, `corpus/gvn/` too): the `; check:`/`; not:` lines,
//! equal behaviour of original and optimized on every `; input:`, identical
//! output under 8 worklist seeds (unless the file says `; confluent: no`), the
//! fixed-point invariant after every single peephole step, and `pipeline`
//! agreeing with the unoptimized module.

mod peeps_support;

use passes::peeps::{CheckMode, Peeps};
use passes::{Pass, PassManager, Stats};
use peeps_support::*;

const SEEDS: u64 = 8;

fn run_dir(sub: &str) {
    let files = corpus_files(sub);
    assert!(!files.is_empty(), "no tests in corpus/{sub}");
    let mut failures = Vec::new();
    for path in files {
        let t = parse_test(&path);
        let mut first: Option<String> = None;
        for seed in 0..SEEDS {
            match run_test(&t, seed) {
                Ok(printed) => match &first {
                    None => first = Some(printed),
                    Some(f) if t.confluent && *f != printed => failures.push(format!(
                        "{}: seed {seed} gives different output\n{f}\n--- vs ---\n{printed}",
                        path.display()
                    )),
                    Some(_) => {}
                },
                Err(e) => failures.push(format!("{} (seed {seed}): {e}", path.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn peeps_corpus_passes_under_every_seed() {
    run_dir("peeps");
}

#[test]
fn dce_corpus_passes_under_every_seed() {
    run_dir("dce");
}

#[test]
fn every_peephole_step_keeps_the_invariant_on_every_corpus_file() {
    for sub in ["peeps", "gvn", "dce"] {
        for path in corpus_files(sub) {
            let t = parse_test(&path);
            for seed in 0..4 {
                let mut m = load(&t);
                let pass = Peeps {
                    seed,
                    check: CheckMode::EveryStep,
                    drop_deps_of: None,
                };
                pass.run_checked(&mut m, &mut Stats::default())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                ir::verify_module(&m).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
            }
        }
    }
}

#[test]
fn the_pipeline_agrees_with_the_unoptimized_run_on_every_corpus_file() {
    for sub in ["peeps", "gvn", "dce"] {
        for path in corpus_files(sub) {
            let t = parse_test(&path);
            let m = load(&t);
            for seed in [0, 5] {
                let mut opt = m.clone();
                PassManager::from_list("pipeline")
                    .unwrap()
                    .with_seed(seed)
                    .run(&mut opt)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                for case in &t.cases {
                    assert_eq!(
                        behaviour(&m, &case.input),
                        behaviour(&opt, &case.input),
                        "{} on {:?}\n{}",
                        path.display(),
                        case.input,
                        ir::print_module(&opt)
                    );
                }
            }
        }
    }
}
