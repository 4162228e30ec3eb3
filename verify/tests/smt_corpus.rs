//! Every `corpus/smt/*.smt` test gives the verdicts it expects (counterexamples
//! confirmed by the interpreter), and every function of the text corpus is
//! proved equivalent to itself and to its printed-and-reparsed copy.

use smt::Verdict;
use std::path::Path;
use verify::commands::smt_verify::verify_modules;
use verify::smt_tests::check_smt_text;

fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

#[test]
fn smt_corpus_verdicts() {
    let dir = corpus().join("smt");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus/smt exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "smt"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "corpus/smt has {} tests", files.len());
    let mut problems = Vec::new();
    let mut counterexamples = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        let label = f.file_name().unwrap().to_string_lossy().to_string();
        let (p, reports) = check_smt_text(&text, &label);
        counterexamples += reports.iter().filter(|r| r.confirmed == Some(true)).count();
        problems.extend(p);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        counterexamples >= 5,
        "only {counterexamples} confirmed counterexamples"
    );
}

#[test]
fn every_corpus_function_is_equivalent_to_itself_and_its_reparsed_copy() {
    let files = verify::filetest::collect_files(&corpus()).expect("corpus");
    let opts = smt::Options {
        unroll: 2,
        timeout_ms: 60_000,
        ..smt::Options::default()
    };
    let mut problems = Vec::new();
    let mut checked = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable");
        let Ok(loaded) = verify::load::load_text(&text, &f.display().to_string()) else {
            continue; // parse-error and verify-error tests
        };
        let printed = ir::print_module(&loaded.module);
        let reparsed = verify::load::load_text(&printed, "reparsed")
            .unwrap_or_else(|e| panic!("{}: printed module does not load: {e}", f.display()))
            .module;
        for other in [&loaded.module, &reparsed] {
            for r in verify_modules(&loaded.module, other, &opts) {
                checked += 1;
                if !matches!(r.verdict, Verdict::Proved | Verdict::ProvedBounded(_)) {
                    problems.push(format!("{}: @{}: {}", f.display(), r.name, r.label()));
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} functions checked");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
