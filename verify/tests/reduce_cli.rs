//! `loadstar reduce` / `loadstar repro` and the sweep's finding protocol:
//! exit statuses, the text test a reduction writes (it replays in the corpus
//! runner with the original's behaviour as its expectation), and unreduced
//! findings written before the reduction overwrites them.

use ir::{BinOp, InstKind, Module};
use passes::{PassError, Stats};
use verify::commands::reduce::find_in_text_with;
use verify::gen::{generate_from_seed, GenConfig};
use verify::inputs::instantiate_all;
use verify::oracle::{check_program_with, Finding, OracleConfig};
use verify::reduce::{recheck_with, reduce_with, reduced_test_text, Limits};
use verify::sweep::record_and_reduce_with;
use verify::sweep::store::FindingStore;

mod support;
use support::loadstar_split as loadstar;

fn swap_sub(_: &str, m: &mut Module, _: &mut Stats) -> Result<(), PassError> {
    for f in &mut m.funcs {
        for i in &mut f.insts {
            if let InstKind::Binary(BinOp::Sub, a, b) = i.kind {
                i.kind = InstKind::Binary(BinOp::Sub, b, a);
            }
        }
    }
    Ok(())
}

fn first_swap_sub_finding() -> Finding {
    let plans = vec!["swap-sub".to_string()];
    for seed in 0..3000u64 {
        let g = generate_from_seed(seed, &GenConfig::default());
        let ins = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let r = check_program_with(
            &g.module,
            g.main,
            &ins,
            &plans,
            &swap_sub,
            &OracleConfig::default(),
        );
        if let Some(mut f) = r.findings.into_iter().next() {
            f.seed = Some(seed);
            return f;
        }
    }
    panic!("no finding for the broken pass");
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("loadstar-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn a_finding_file_is_found_again_reduced_and_replays_in_the_corpus_runner() {
    let f = first_swap_sub_finding();
    let text = f.to_test_text();
    // `reduce FILE` reads the plan from the `; passes:` comment and the seed.
    let again = find_in_text_with(&text, "finding.ir", None, &swap_sub)
        .expect("loads")
        .expect("still fails");
    assert_eq!(again.signature(), f.signature());
    assert_eq!(again.seed, f.seed);
    let mut recheck = recheck_with(&swap_sub, &again.passes, again.fuel);
    let r = reduce_with(&again, &mut recheck, &Limits::default());
    assert!(r.reproduced && r.insts_after < r.insts_before);
    let reduced = reduced_test_text(&r);
    assert!(reduced.contains("; test: run"), "{reduced}");
    assert!(reduced.contains(&format!("; signature: {}", f.signature())));
    assert!(reduced.contains(&format!("; seed: {}", f.seed.unwrap_or(0))));
    assert!(reduced.contains("; reduced: "));
    // The real passes do not have the bug: the reduced test passes the corpus
    // runner, so its expectation is the reduced original's true behaviour.
    // (`; passes: swap-sub` names the test's own broken pass, which the runner
    // does not know; a real finding names real passes, replayed exactly.)
    let replayable: String = reduced
        .lines()
        .filter(|l| !l.starts_with("; passes:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (failures, _) = verify::filetest::run_text(&replayable, "reduced.ir", false);
    assert!(failures.is_empty(), "{failures:?}\n{reduced}");
    // And it is itself a failing file for the broken pass.
    let twice = find_in_text_with(&reduced, "reduced.ir", None, &swap_sub)
        .expect("loads")
        .expect("fails");
    assert_eq!(twice.signature(), f.signature());
}

#[test]
fn the_sweep_writes_the_unreduced_finding_before_reducing_and_then_overwrites_it() {
    let dir = temp_dir("store");
    let store = FindingStore::new(&dir).expect("store");
    let f = first_swap_sub_finding();
    let unreduced = f.to_test_text();
    let path = record_and_reduce_with(&store, f.clone(), |g| {
        // A sweep killed here still has the unreduced finding on disk.
        let files: Vec<_> = std::fs::read_dir(&dir)
            .expect("dir")
            .map(|e| e.expect("entry").path())
            .collect();
        assert_eq!(files.len(), 1);
        assert_eq!(std::fs::read_to_string(&files[0]).expect("read"), unreduced);
        let mut recheck = recheck_with(&swap_sub, &g.passes, g.fuel);
        reduce_with(g, &mut recheck, &Limits::default())
    })
    .expect("writes")
    .expect("new signature");
    let written = std::fs::read_to_string(&path).expect("read");
    assert_ne!(written, unreduced);
    assert!(written.contains("; reduced: "));
    // A duplicate is counted, not written or reduced.
    let dup =
        record_and_reduce_with(&store, f, |_| panic!("duplicates are not reduced")).expect("ok");
    assert!(dup.is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reduce_command_exit_statuses() {
    let dir = temp_dir("cli");
    let ok = dir.join("ok.ir");
    std::fs::write(
        &ok,
        "; test: run\n; input: x = 3\nfunc @main(%x: i64) -> i64 {\nentry:\n  %y = add %x, 1\n  ret %y\n}\n",
    )
    .expect("write");
    let (code, _, err) = loadstar(&["reduce", ok.to_str().expect("path")]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("does not fail"), "{err}");
    let (code, _, _) = loadstar(&["reduce", ok.to_str().expect("path"), "--passes", "frob"]);
    assert_eq!(code, 2);
    let (code, _, _) = loadstar(&["reduce", ok.to_str().expect("path"), "--oracles", "smt"]);
    assert_eq!(code, 2);
    let bad = dir.join("bad.ir");
    std::fs::write(&bad, "func @main( {\n").expect("write");
    let (code, _, err) = loadstar(&["reduce", bad.to_str().expect("path")]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.ir:1:"), "{err}");
    let (code, _, _) = loadstar(&["reduce", dir.join("missing.ir").to_str().expect("path")]);
    assert_eq!(code, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn repro_command_runs_the_fuzz_target_code_on_the_artifact() {
    let dir = temp_dir("repro");
    let art = dir.join("crash-0");
    std::fs::write(&art, [7u8; 300]).expect("write");
    let a = art.to_str().expect("path");
    // The real passes have no known bug: the artifact does not fail.
    for target in ["lse", "gvn", "peeps", "pipeline", "parse"] {
        let (code, _, err) = loadstar(&["repro", a, "--target", target]);
        assert_eq!(code, 0, "{target}: {err}");
        assert!(
            err.contains("does not fail") || err.contains("ignores"),
            "{err}"
        );
    }
    let (code, _, _) = loadstar(&["repro", a, "--target", "frob"]);
    assert_eq!(code, 2);
    let (code, _, _) = loadstar(&[
        "repro",
        dir.join("nope").to_str().expect("p"),
        "--target",
        "lse",
    ]);
    assert_eq!(code, 2);
    let _ = std::fs::remove_dir_all(&dir);
}
