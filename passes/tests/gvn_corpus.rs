//! Runs every text test under `corpus/gvn/`: `; check:`/`; not:` lines, equal
//! behaviour of original and optimized on every `; input:`, and identical
//! output under 8 worklist seeds (the files also use `peeps`).

mod peeps_support;

use peeps_support::*;

#[test]
fn gvn_corpus_passes_under_every_seed() {
    let files = corpus_files("gvn");
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for path in files {
        let t = parse_test(&path);
        let mut first: Option<String> = None;
        for seed in 0..8 {
            match run_test(&t, seed) {
                Ok(p) => match &first {
                    None => first = Some(p),
                    Some(f) if t.confluent && *f != p => {
                        failures.push(format!("{}: seed {seed} differs", path.display()))
                    }
                    Some(_) => {}
                },
                Err(e) => failures.push(format!("{} (seed {seed}): {e}", path.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
