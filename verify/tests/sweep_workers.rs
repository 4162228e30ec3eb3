//! The sweep's native oracle in long-lived worker processes
//! (`verify::sweep::pool`): a worker that dies is replaced and its program is
//! reported (with the disassembly around the fault), the counters agree with
//! an in-process sweep, and the CLI runs the native oracle by default.

use std::path::PathBuf;
use verify::oracle::OracleConfig;
use verify::sweep::pool::Isolation;
use verify::sweep::{run_sweep, SweepOptions};

mod support;
use support::loadstar_all as loadstar;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadstar-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn native_sweep(out: PathBuf, isolation: Isolation, programs: u64) -> SweepOptions {
    SweepOptions {
        seconds: 600.0,
        seed: 11,
        max_programs: Some(programs),
        out,
        progress: false,
        reduce_time: None,
        isolation,
        oracle: OracleConfig {
            native: true,
            regalloc_check_every: 4,
            ..OracleConfig::default()
        },
        ..SweepOptions::default()
    }
}

#[test]
fn a_worker_killed_by_a_fault_is_replaced_and_its_program_reported() {
    let dir = temp_dir("worker-crash");
    let mut opts = native_sweep(dir.clone(), Isolation::Worker, 6);
    // Test-only hook: every compiled function starts with `hlt` (SIGSEGV).
    opts.oracle.sabotage = Some(codegen::Sabotage::Fault);
    let out = run_sweep(&opts).expect("sweep");
    assert_eq!(out.totals.programs, 6, "no program is lost");
    let conclusive = out.totals.runs > out.totals.inconclusive;
    assert!(conclusive);
    assert!(
        out.totals.worker_restarts >= 1,
        "the worker died and was replaced: {:?}",
        out.totals
    );
    assert_eq!(
        out.totals.raw_findings, out.totals.worker_restarts,
        "every program that killed its worker is one finding"
    );
    assert!(out.summary.contains("native worker restarts"));
    assert_eq!(out.unique_findings, 1);
    let file = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|e| e == "ir"))
        .expect("a reproducer");
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.contains("native-crash"), "{text}");
    assert!(text.contains("SIGSEGV"), "{text}");
    assert!(
        text.contains("=> ") && text.contains("hlt"),
        "disassembly around the fault:\n{text}"
    );
    assert!(text.contains("; input:"), "the input is kept:\n{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn workers_count_what_an_in_process_sweep_counts() {
    let (a, b) = (temp_dir("worker-a"), temp_dir("worker-b"));
    let mut worker = native_sweep(a.clone(), Isolation::Worker, 40);
    worker.jobs = 2;
    let in_process = native_sweep(b.clone(), Isolation::InProcess, 40);
    let w = run_sweep(&worker).expect("sweep").totals;
    let p = run_sweep(&in_process).expect("sweep").totals;
    assert_eq!(w.worker_restarts, 0);
    assert!(w.native_modules >= 20, "{w:?}");
    assert!(w.native_runs > w.native_modules, "{w:?}");
    assert!(w.regalloc_checked_programs > 0 && w.regalloc_checked_programs < 40);
    let json = |t| serde_json::to_string(t).expect("json");
    assert_eq!(json(&w), json(&p));
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

/// The value of a summary row.
fn row(summary: &str, name: &str) -> Option<u64> {
    let line = summary.lines().find(|l| l.trim_start().starts_with(name))?;
    line.split_whitespace().last()?.parse().ok()
}

#[test]
fn the_default_sweep_runs_the_native_oracle() {
    let dir = temp_dir("default-sweep");
    let d = dir.to_str().unwrap();
    let common = ["--max-programs", "30", "--seconds", "60", "--jobs", "1"];
    let (code, all) = loadstar(&[&["sweep", "--out", d][..], &common[..]].concat());
    assert_eq!(code, 0, "{all}");
    assert_eq!(row(&all, "programs "), Some(30), "{all}");
    assert!(row(&all, "native modules run").unwrap_or(0) >= 15, "{all}");
    assert!(row(&all, "native runs").unwrap_or(0) > 15, "{all}");
    assert_eq!(row(&all, "native worker restarts"), Some(0), "{all}");
    let (code, all) = loadstar(
        &[
            &["sweep", "--out", d, "--oracles", "interp"][..],
            &common[..],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{all}");
    assert!(
        !all.contains("native modules run"),
        "interpreter only:\n{all}"
    );
    for iso in ["fork", "none"] {
        let args = [
            "sweep",
            "--out",
            d,
            "--native-isolation",
            iso,
            "--max-programs",
            "5",
        ];
        let (code, all) = loadstar(&args);
        assert_eq!(code, 0, "{all}");
        assert!(row(&all, "native modules run").unwrap_or(0) > 0, "{all}");
    }
    let (code, all) = loadstar(&["sweep", "--out", d, "--native-isolation", "threads"]);
    assert_eq!(code, 2, "{all}");
    assert!(
        all.contains("--native-isolation wants worker, fork or none"),
        "{all}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A planted backend bug that makes generated code read outside an array:
/// the default sweep (workers inherit the planted bug) reports it, and every
/// program is counted whether or not its worker survived.
#[cfg(feature = "bug-zoo")]
#[test]
fn the_default_sweep_catches_a_planted_backend_bug_through_its_workers() {
    let dir = temp_dir("default-sweep-zoo");
    let d = dir.to_str().unwrap();
    let args = [
        "sweep",
        "--inject",
        "native-const-index-no-bounds",
        "--max-programs",
        "300",
        "--seconds",
        "120",
        "--jobs",
        "1",
        "--reduce-seconds",
        "0",
        "--out",
        d,
    ];
    let (code, all) = loadstar(&args);
    assert_eq!(code, 1, "{all}");
    assert_eq!(row(&all, "programs "), Some(300), "{all}");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("mismatch-native") || n.starts_with("native-crash")),
        "{names:?}"
    );
    if row(&all, "native worker restarts").unwrap_or(0) > 0 {
        assert!(
            names.iter().any(|n| n.starts_with("native-crash")),
            "{names:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
