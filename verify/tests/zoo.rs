//! The bug zoo test (feature `bug-zoo`; CI runs it in release mode with
//! `cargo test --release -p verify --features bug-zoo --test zoo`): every
//! planted bug of `ir::zoo` (passes, effects table and backend; backend bugs
//! with the native oracle on) must be caught by the sweep on one core within
//! a budget of programs (programs, not seconds: the programs of a seed are
//! fixed, so the result is deterministic). A finding only counts when the same
//! program is clean with the bug removed.
//!
//! Planted bugs are process-wide, so the tests of this file take one lock.

use passes::zoo::{self, Bug};
use std::sync::Mutex;
use verify::commands::zoo::{hunt, inject_list, parse_bugs, render_table, HuntOptions};

static LOCK: Mutex<()> = Mutex::new(());

/// Programs each bug may take before it counts as missed (the slowest bug
/// needs about 12 000 with seed 0; see the table in README.md).
const BUDGET: u64 = 25_000;

fn budget_opts() -> HuntOptions {
    HuntOptions {
        seed: 0,
        time_limit: None,
        max_programs: Some(BUDGET),
        ..HuntOptions::default()
    }
}

#[test]
fn every_planted_bug_is_caught_within_its_program_budget() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut dets = Vec::new();
    for bug in Bug::ALL {
        let d = hunt(bug, &budget_opts());
        assert!(zoo::planted().is_empty(), "{bug} left planted");
        dets.push(d);
    }
    let table = render_table(&dets);
    let missed: Vec<String> = dets
        .iter()
        .filter(|d| !d.caught())
        .map(|d| d.bug.to_string())
        .collect();
    assert!(missed.is_empty(), "missed: {missed:?}\n{table}");
    for d in &dets {
        let f = d.finding.as_ref().expect("caught");
        let passes = f.passes.split('#').next().unwrap_or_default();
        // Each bug is found by a plan of the passes it lives in (or, for the
        // effects table, by effect checking of the original program).
        let allowed: Vec<&str> = d.bug.passes().split(',').collect();
        if d.bug == Bug::EffectsMissingWrite {
            assert_eq!(passes, "none", "{}", d.bug);
        } else if d.bug.is_native() {
            // A backend bug: the native oracle catches it on the original
            // program, as a divergence or (strict memory: an access past an
            // object hits a guard page) as a crash of the isolated worker.
            assert_eq!(passes, "none", "{}", d.bug);
            assert!(
                ["mismatch-native", "native-crash"].contains(&f.kind.name()),
                "{}: {}",
                d.bug,
                f.kind.name()
            );
        } else {
            assert!(
                passes.split(',').all(|p| allowed.contains(&p)),
                "{}: found by `{passes}`",
                d.bug
            );
        }
        assert!(d.programs <= BUDGET);
    }
}

#[test]
fn each_bug_is_found_the_way_it_should_be() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let opts = budget_opts();
    let kind = |bug| {
        hunt(bug, &opts)
            .finding
            .map(|f| f.kind.name().to_string())
            .unwrap_or_default()
    };
    assert_eq!(kind(Bug::GvnNonDominating), "ill-formed");
    assert_eq!(kind(Bug::PeepsMissingDep), "invariant");
    assert_eq!(kind(Bug::EffectsMissingWrite), "effects");
    // The native code traps where the interpreter returns, or the reverse.
    let outcome = |bug| {
        hunt(bug, &opts)
            .finding
            .map(|f| f.signature())
            .unwrap_or_default()
    };
    // A read past the end without its bounds check hits the guard page after
    // the array (strict memory, harness mode).
    assert!(outcome(Bug::NativeConstIndexNoBounds).contains("native-crash|SIGSEGV"));
    assert!(outcome(Bug::NativeLoadedBaseNonNull).contains("trap null_deref -> return"));
}

#[test]
fn without_a_planted_bug_the_first_programs_are_clean() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    zoo::clear();
    let sweep = verify::sweep::SweepOptions {
        passes: vec![
            "lse".into(),
            "gvn".into(),
            "peeps".into(),
            "pipeline".into(),
        ],
        progress: false,
        ..Default::default()
    };
    for k in 0..200 {
        let (_, res) = verify::sweep::check_one(&sweep, k);
        assert!(
            res.findings.is_empty(),
            "program {k}: {}",
            res.findings[0].signature()
        );
    }
}

#[test]
fn bug_names_parse_and_unknown_names_are_errors() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(
        parse_bugs("lse-exact-alias, gvn-merge-new").unwrap(),
        vec![Bug::LseExactAlias, Bug::GvnMergeNew]
    );
    let err = parse_bugs("lse-exact-alias,nope").unwrap_err();
    assert!(err.contains("unknown bug 'nope'"), "{err}");
    assert!(err.contains("peeps-sdiv-min"), "{err}");
    assert!(inject_list("").is_err());
    inject_list("peeps-sdiv-min,gvn-merge-new").unwrap();
    assert_eq!(zoo::planted(), vec![Bug::GvnMergeNew, Bug::PeepsSdivMin]);
    zoo::clear();
    assert!(zoo::planted().is_empty());
}

#[test]
fn the_cli_plants_a_bug_with_inject_and_rejects_unknown_names() {
    let dir = std::env::temp_dir().join(format!("loadstar-zoo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("alias.ir");
    std::fs::write(
        &file,
        "type Node { val: i64 }\n\
         func @main(%p: Node, %q: Node) -> i64 {\n\
         entry:\n  %a = load %p.val\n  store %q.val, 5\n  %b = load %p.val\n  ret %b\n}\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_loadstar"))
            .args([
                "run",
                file.to_str().unwrap(),
                "--input",
                "p = Node{val: 1}, q = p",
            ])
            .args(["--passes", "lse"])
            .args(extra)
            .output()
            .unwrap()
    };
    let sound = run(&[]);
    assert!(String::from_utf8_lossy(&sound.stdout).contains("return 5"));
    let planted = run(&["--inject", "lse-exact-alias"]);
    assert!(
        String::from_utf8_lossy(&planted.stdout).contains("return 1"),
        "{}",
        String::from_utf8_lossy(&planted.stdout)
    );
    let bad = run(&["--inject", "no-such-bug"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown bug"));
    let _ = std::fs::remove_dir_all(&dir);
}
