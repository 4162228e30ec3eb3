//! LSE's per-rule counters (`loadstar opt --emit stats`, the sweep's rule
//! coverage), pinned by the `; stats: lse.RULE = N` lines of the text tests in
//! `corpus/lse/` (docs/filetests.md): each named counter has exactly its value
//! and every other LSE counter is 0. The corpus runner (`verify`) checks the
//! same lines; this test lets `cargo mutants` over `passes` alone see them.

use passes::PassManager;
use std::path::Path;

/// The `(rule, count)` pairs of a file's `; stats: lse.RULE = N` lines.
fn stats_lines(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("; stats: lse."))
        .map(|l| {
            let (rule, n) = l.split_once('=').expect("`; stats: lse.RULE = N`");
            (rule.trim().to_string(), n.trim().parse().expect("a count"))
        })
        .collect()
}

#[test]
fn lse_counts_what_it_did() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/lse");
    let mut pinned = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus/lse is readable") {
        let path = entry.expect("a directory entry").path();
        let text = std::fs::read_to_string(&path).expect("corpus file is readable");
        let expected = stats_lines(&text);
        if expected.is_empty() {
            continue;
        }
        pinned += 1;
        let file = path.display().to_string();
        let (mut module, _) = ir::parse_module(&text, &file).expect("corpus file parses");
        let stats = PassManager::from_list("lse")
            .expect("lse is a pass")
            .run(&mut module)
            .expect("lse runs");
        for (rule, want) in &expected {
            assert_eq!(stats.get("lse", rule), *want, "{file}: lse.{rule}");
        }
        for (rule, n) in stats.passes().get("lse").into_iter().flatten() {
            if !expected.iter().any(|(r, _)| r == rule) {
                assert_eq!(*n, 0, "{file}: lse.{rule} has no `; stats:` line");
            }
        }
    }
    assert!(pinned >= 13, "only {pinned} files pin LSE counters");
}
