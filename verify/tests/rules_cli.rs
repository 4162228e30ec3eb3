//! `loadstar verify --rules`: every rule of the peephole table and every GVN
//! and LSE fold is proved (0 counterexamples, 0 unknown), so CI proves the table on
//! every run; every deliberately wrong rule of `smt/broken-rules/` is
//! rejected with a counterexample that the concrete replay confirms; bad
//! usage and bad rule files exit 2 with a position.

use std::path::{Path, PathBuf};

mod support;
use support::loadstar_output as loadstar;

fn broken_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../smt/broken-rules")
}

#[test]
fn the_rule_table_is_fully_proved() {
    let out = loadstar(&["verify", "--rules"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for rule in passes::peeps::rules() {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(rule.name))
            .unwrap_or_else(|| panic!("no row for {}\n{text}", rule.name));
        assert!(line.contains(" proved "), "{line}");
    }
    let folds = passes::gvn::folds::GVN_FOLDS
        .iter()
        .chain(passes::lse::folds::LSE_FOLDS.iter());
    for (name, ..) in folds {
        assert!(
            text.lines()
                .any(|l| l.starts_with(name) && l.contains(" proved ")),
            "{name}\n{text}"
        );
    }
    let total = text.lines().last().unwrap_or("");
    assert!(
        total.contains(", 0 with a counterexample, 0 unknown"),
        "{total}"
    );
}

#[test]
fn every_broken_rule_is_rejected_with_a_counterexample() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(broken_dir())
        .expect("smt/broken-rules")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rule"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "only {} broken rules", files.len());
    for f in &files {
        let out = loadstar(&["verify", "--rules", f.to_str().expect("utf-8 path")]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{}: {text}", f.display());
        let cex = text
            .lines()
            .find(|l| l.trim_start().starts_with("counterexample ("))
            .unwrap_or_else(|| panic!("{}: no counterexample\n{text}", f.display()));
        assert!(
            cex.contains("instruction: ") && cex.contains("replacement: "),
            "{cex}"
        );
    }
}

#[test]
fn named_counterexamples_show_the_difference() {
    let run = |name: &str| {
        let p = broken_dir().join(name);
        String::from_utf8_lossy(&loadstar(&["verify", "--rules", p.to_str().unwrap()]).stdout)
            .to_string()
    };
    let t = run("trap_removed_div_self.rule");
    assert!(
        t.contains("x = 0; instruction: trap div_by_zero, replacement: 1"),
        "{t}"
    );
    let t = run("null_compare.rule");
    assert!(
        t.contains("p = null; instruction: 1, replacement: 0"),
        "{t}"
    );
    let t = run("sdiv_min_minus_one.rule");
    assert!(t.contains("x = -9223372036854775808;"), "{t}");
    let t = run("lse_forward_may_alias.rule");
    assert!(
        t.contains("instruction: 0, replacement: 1") || t.contains("; instruction: "),
        "{t}"
    );
    let t = run("trap_removed_guard.rule");
    assert!(
        t.contains("c = 0; instruction: trap guard_failed, replacement: continues"),
        "{t}"
    );
}

#[test]
fn bad_usage_and_bad_rule_files_exit_2() {
    let out = loadstar(&["verify", "--rules", "--passes", "peeps"]);
    assert_eq!(out.status.code(), Some(2));
    let dir = std::env::temp_dir().join(format!("loadstar-rules-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join("bad.rule");
    std::fs::write(
        &p,
        "name: r\npattern: (add ?x 0\ncondition: true\nrewrite: ?x\n",
    )
    .expect("write");
    let out = loadstar(&["verify", "--rules", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.rule:2:10: unclosed `(`"), "{err}");
    let out = loadstar(&[
        "verify",
        "--rules",
        dir.join("missing.rule").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::write(
        &p,
        "name: r\npattern: (frob ?x)\ncondition: true\nrewrite: ?x\n",
    )
    .expect("write");
    let out = loadstar(&["verify", "--rules", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown opcode `frob`"));
}
