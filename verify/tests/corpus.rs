//! Runs every text test under `corpus/` (see docs/filetests.md).
//! `LOADSTAR_BLESS=1 cargo test -p verify --test corpus` rewrites expectations.

use std::path::Path;
use verify::filetest;

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let bless = filetest::bless_requested();
    let results = filetest::run_dir(&dir, bless).expect("corpus directory is readable");
    assert!(!results.is_empty(), "no *.ir files under {}", dir.display());
    let failed: Vec<_> = results.iter().filter(|r| !r.passed()).collect();
    for r in &results {
        if r.rewritten {
            eprintln!("blessed {}", r.path.display());
        }
    }
    for r in &failed {
        eprintln!("FAIL {}", r.path.display());
        for f in &r.failures {
            eprintln!("  {}", f.replace('\n', "\n  "));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} corpus files failed (listed above)",
        failed.len(),
        results.len()
    );
}
