//! `loadstar triage` on the outputs of several shards, generated here: a
//! signature found by two shards is one entry with the hits summed and the
//! smaller repro; a signature of the known-findings file is known and one
//! not seen is fixed; a malformed `report.json` and a shard without one are
//! named and skipped while the others merge; libFuzzer artifacts are replayed
//! (or named by their kind); exit 1 only on a new signature, 2 on bad usage.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod support;
use support::loadstar_split as loadstar;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadstar-triage-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A finding text test as the sweep writes it, with `body_lines` IR lines.
fn finding_text(sig: &str, body_lines: usize) -> String {
    let mut t = format!("; Finding: x after passes `lse` (found by the loadstar harness).\n; signature: {sig}\n; passes: lse\n; test: run\n\n");
    t.push_str("func @main() -> i64 {\nentry:\n");
    for k in 0..body_lines {
        t.push_str(&format!("  %v{k} = add {k}, 0\n"));
    }
    t.push_str("  ret %v0\n}\n");
    t
}

/// A sweep output directory: `report.json` and one file per finding.
fn write_shard(dir: &Path, seed: u64, shard: &str, programs: u64, findings: &[(&str, usize, u64)]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut list = Vec::new();
    for (k, (sig, lines, hits)) in findings.iter().enumerate() {
        let file = format!("finding-{k}.ir");
        std::fs::write(dir.join(&file), finding_text(sig, *lines)).unwrap();
        // The sweep records the path it wrote, under its own `--out`.
        list.push(serde_json::json!({"signature": sig, "file": format!("sweep-out/{file}"), "hits": hits}));
    }
    let report = serde_json::json!({
        "seed": seed, "shard": shard, "passes": ["lse"], "seconds": 10.0,
        "programs_per_second": programs as f64 / 10.0,
        "totals": {"programs": programs, "raw_findings": 1, "native_modules": 7, "native_runs": 21,
                   "smt": {"programs": 1, "queries": 4}},
        "findings": list,
    });
    std::fs::write(
        dir.join("report.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .unwrap();
}

const A: &str = "lse|mismatch-heap|Node";
const B: &str = "pipeline|mismatch-outcome|return value";
const K: &str = "gvn|panic|index # out of range";
const F: &str = "peeps|mismatch-trace|length";

fn night(root: &Path) {
    write_shard(
        &root.join("sweep-shard-0"),
        7,
        "0/4",
        1000,
        &[(A, 9, 3), (K, 2, 1)],
    );
    write_shard(&root.join("sweep-shard-1"), 7, "1/4", 1200, &[(A, 2, 5)]);
    write_shard(&root.join("sweep-shard-2"), 7, "2/4", 900, &[(B, 4, 1)]);
    // Killed while writing its report.
    write_shard(&root.join("sweep-shard-3"), 7, "3/4", 800, &[(A, 1, 1)]);
    let full = std::fs::read_to_string(root.join("sweep-shard-3/report.json")).unwrap();
    std::fs::write(
        root.join("sweep-shard-3/report.json"),
        &full[..full.len() / 2],
    )
    .unwrap();
    // Killed before writing its report: findings only.
    let four = root.join("sweep-shard-4");
    std::fs::create_dir_all(&four).unwrap();
    std::fs::write(four.join("f.ir"), finding_text(B, 1)).unwrap();
}

fn known_file(root: &Path) -> String {
    let p = root.join("known-findings.txt");
    std::fs::write(
        &p,
        format!("# known\n{K}  # issue 7: GVN panics on a dead phi\n{F}  # issue 9\n"),
    )
    .unwrap();
    p.display().to_string()
}

fn run(root: &Path, args: &[&str]) -> (i32, String, String, Value) {
    let out = root.join("triage.json");
    let mut all: Vec<&str> = vec!["triage"];
    all.extend_from_slice(args);
    let out_s = out.display().to_string();
    all.extend_from_slice(&["-o", &out_s, "--reduce-seconds", "1"]);
    let (code, stdout, stderr) = loadstar(&all);
    let json = std::fs::read_to_string(&out)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (code, stdout, stderr, json)
}

fn sig<'a>(report: &'a Value, s: &str) -> &'a Value {
    report["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["signature"] == s)
        .unwrap_or_else(|| panic!("{s} not in {report:#}"))
}

#[test]
fn shards_merge_by_signature_known_marked_malformed_skipped() {
    let root = temp_dir("night");
    night(&root);
    let known = known_file(&root);
    let night_dir = root.display().to_string();
    // The report is written among the shards (`ROOT/triage.json`); a second
    // run over the same tree, writing `report.json` there, reads the same.
    let (code, _, _, first) = run(&root, &[&night_dir, "--known", &known]);
    assert_eq!(code, 1);
    std::fs::copy(root.join("triage.json"), root.join("report.json")).unwrap();
    let (code, md, stderr, r) = run(&root, &[&night_dir, "--known", &known]);
    assert_eq!(first["signatures"], r["signatures"]);
    assert_eq!(code, 1, "a new signature fails the night\n{md}{stderr}");
    assert_eq!(
        (r["new"].as_u64(), r["known"].as_u64(), r["fixed"].as_u64()),
        (Some(2), Some(1), Some(1)),
        "{r:#}"
    );
    assert_eq!(r["signatures"].as_array().unwrap().len(), 3);
    // A: two shards, hits summed, shard 1's smaller repro kept.
    let a = sig(&r, A);
    assert_eq!(a["status"], "new");
    assert_eq!(a["hits"], 8);
    assert_eq!(a["shards"].as_array().unwrap().len(), 2);
    assert!(
        a["repro"]["source"]
            .as_str()
            .unwrap()
            .contains("sweep-shard-1"),
        "{a:#}"
    );
    assert_eq!(a["repro"]["lines"], 6);
    assert_eq!(sig(&r, K)["status"], "known");
    assert_eq!(
        sig(&r, K)["known_because"],
        "issue 7: GVN panics on a dead phi"
    );
    assert_eq!(r["fixed_signatures"][0]["signature"], F);
    // Three shards merged (2,900 + 200 programs... 1000 + 1200 + 900), two skipped by name.
    assert_eq!(r["programs"], 3100);
    assert_eq!(r["shards"].as_array().unwrap().len(), 3);
    let skipped: Vec<String> = r["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(
        skipped[0].ends_with("sweep-shard-3") && skipped[1].ends_with("sweep-shard-4"),
        "{skipped:?}"
    );
    assert_eq!(r["oracles"]["interp"]["new"], 2);
    assert_eq!(r["oracles"]["interp"]["known"], 1);
    assert_eq!(r["oracles"]["native"]["work"], "21 modules, 63 runs");
    // The Markdown names everything.
    assert!(md.contains("2 new, 1 known, 1 fixed since last"), "{md}");
    assert!(
        md.contains(&format!("`{A}`")) && md.contains(&format!("`{F}`")),
        "{md}"
    );
    assert!(
        md.contains("sweep-shard-3`: report.json: EOF while parsing"),
        "{md}"
    );
    assert!(md.contains("sweep-shard-4`: no report.json"), "{md}");
    assert!(md.contains("`loadstar sweep --seed 7 --shard 1/4`"), "{md}");
}

#[test]
fn only_known_signatures_pass_and_a_missing_finding_file_skips_its_shard() {
    let root = temp_dir("known");
    write_shard(&root.join("s0"), 1, "0/2", 500, &[(K, 3, 2)]);
    write_shard(&root.join("s1"), 1, "1/2", 500, &[(A, 3, 1)]);
    std::fs::remove_file(root.join("s1/finding-0.ir")).unwrap();
    let known = known_file(&root);
    let (s0, s1) = (
        root.join("s0").display().to_string(),
        root.join("s1").display().to_string(),
    );
    let (code, md, _, r) = run(&root, &[&s0, &s1, "--known", &known]);
    assert_eq!(code, 0, "{md}");
    assert_eq!(r["new"], 0);
    assert_eq!(r["known"], 1);
    assert!(md.contains("s1/finding-0.ir: cannot read"), "{md}");
}

#[test]
fn libfuzzer_artifacts_are_replayed_or_named_by_kind() {
    let root = temp_dir("artifacts");
    let lse = root.join("fuzz-lse");
    std::fs::create_dir_all(&lse).unwrap();
    // Bytes the lse target accepts on this (sound) build: a crash that does
    // not replay without the sanitizer is still reported.
    std::fs::write(lse.join("crash-00aa"), [7u8; 300]).unwrap();
    std::fs::write(lse.join("timeout-00bb"), [1u8; 10]).unwrap();
    std::fs::write(lse.join("timeout-00cc"), [2u8; 12]).unwrap();
    let nameless = root.join("misc");
    std::fs::create_dir_all(&nameless).unwrap();
    std::fs::write(nameless.join("crash-00dd"), [1u8; 4]).unwrap();
    let dir = root.display().to_string();
    let (code, md, _, r) = run(&root, &[&dir]);
    assert_eq!(code, 1, "{md}");
    let t = sig(&r, "lse|timeout|libFuzzer");
    assert_eq!(t["hits"], 2);
    assert_eq!(t["oracle"], "libfuzzer");
    assert_eq!(t["repro"]["bytes"], 10);
    assert_eq!(
        sig(&r, "lse|crash|does not replay without the sanitizer")["hits"],
        1
    );
    assert!(
        r["skipped"][0]["name"]
            .as_str()
            .unwrap()
            .ends_with("misc/crash-00dd"),
        "{r:#}"
    );
    assert!(md.contains("cannot tell its fuzz target"), "{md}");
}

#[test]
fn usage_errors_exit_2() {
    let root = temp_dir("usage");
    let (code, _, err, _) = run(&root, &[root.join("nope").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("nope: error: not a directory"), "{err}");
    let bad = root.join("bad-known.txt");
    std::fs::write(&bad, "lse|panic|x\n").unwrap();
    let dir = root.display().to_string();
    let (code, _, err, _) = run(&root, &[&dir, "--known", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad-known.txt:1:12: error: a known signature needs a comment"),
        "{err}"
    );
    let (code, _, err) = loadstar(&["triage"]);
    assert_eq!(code, 2, "{err}");
}
