//! The differential oracle: it stays quiet on correct passes, reports real
//! miscompilations with the right kind and a reproducer that parses, treats
//! resource-limited inputs as inconclusive, and the sweep is deterministic.

use ir::InputSpec;
use verify::gen::{generate_from_seed, GenConfig};
use verify::inputs::{instantiate_all, params_alias};
use verify::oracle::{check_program, compare, pass_plans, FindingKind, OracleConfig};

fn parse(text: &str) -> ir::Module {
    ir::parse_module(text, "t.ir").expect("parses").0
}

fn inputs(m: &ir::Module, spec: &str) -> Vec<InputSpec> {
    let f = m.func(ir::FuncId::new(0));
    vec![ir::parse_input_spec(spec, "<in>", m, f).expect("input")]
}

#[test]
fn dce_alone_finds_nothing_on_generated_programs() {
    let plans = vec!["dce".to_string()];
    for seed in 0..200u64 {
        let g = generate_from_seed(seed, &GenConfig::default());
        let ins = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let r = check_program(&g.module, g.main, &ins, &plans, &OracleConfig::default());
        assert!(r.valid);
        assert!(
            r.findings.is_empty(),
            "seed {seed}: {}",
            r.findings[0].detail
        );
    }
}

/// An optimized run compared with the original's behaviour as it ends
/// (`run_checked_valid_against`) agrees with building its behaviour and
/// comparing with `==`: equal pairs (the same input) say so without a
/// behaviour, differing ones (other inputs) give the built behaviour.
#[test]
fn comparing_as_the_run_ends_agrees_with_building_the_behaviour() {
    let cfg = interp::Config {
        fuel: 10_000,
        heap_words: 1 << 16,
        ..interp::Config::default()
    };
    let (mut same, mut differ) = (0, 0);
    for seed in 0..150u64 {
        let g = generate_from_seed(seed, &GenConfig::default());
        let ins = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let mut opt = g.module.clone();
        let mut stats = passes::Stats::default();
        verify::oracle::run_plan("pipeline", &mut opt, &mut stats).expect("optimizes");
        let prog = interp::Program::new(&g.module);
        let opt_prog = interp::Program::new_like(&opt, &prog);
        for p in [&prog, &opt_prog] {
            let built: Vec<_> = ins
                .iter()
                .map(|i| interp::run_checked(p, g.main, i, &cfg).expect("fits").0)
                .collect();
            for (i, input) in ins.iter().enumerate() {
                let valid = p.validate(g.main, input).expect("fits");
                for expected in &built {
                    let (e, _) = interp::run_checked_valid_against(
                        p,
                        g.main,
                        &valid,
                        &cfg,
                        &expected.behaviour,
                    )
                    .expect("fits");
                    let equal = built[i].behaviour == expected.behaviour;
                    assert_eq!(e.behaviour.is_none(), equal, "seed {seed} input {i}");
                    if let Some(b) = e.behaviour {
                        assert_eq!(b, built[i].behaviour, "seed {seed} input {i}");
                    }
                    assert_eq!((e.loads, e.stores), (built[i].loads, built[i].stores));
                    if equal {
                        same += 1;
                    } else {
                        differ += 1;
                    }
                }
            }
        }
    }
    assert!(same > 100 && differ > 100, "same {same}, differ {differ}");
}

#[test]
fn endless_loops_are_inconclusive_not_findings() {
    let m = parse("func @main() -> i64 {\nentry:\n  jmp l\nl:\n  jmp l\n}\n");
    let ins = inputs(&m, "");
    let r = check_program(
        &m,
        ir::FuncId::new(0),
        &ins,
        &["pipeline".to_string()],
        &OracleConfig::default(),
    );
    assert_eq!(r.inconclusive, 1);
    assert!(r.findings.is_empty());
    assert_eq!(r.plans_run, 0);
}

#[test]
fn known_lse_bug_is_reported_as_an_outcome_mismatch_with_a_reproducer() {
    // A trapping store that LSE deletes as overwritten (corpus/findings).
    let text = "type Node { val: i64, next: Node }\n\
        func @main(%p: Node) -> i64 {\nentry:\n  %a = newarray i64, 3\n  store %a[3], 0\n  \
        %n = load %p.next\n  store %a[3], 1\n  ret 0\n}\n";
    let m = parse(text);
    let ins = inputs(&m, "p = null");
    let r = check_program(
        &m,
        ir::FuncId::new(0),
        &ins,
        &["lse".to_string()],
        &OracleConfig::default(),
    );
    if r.findings.is_empty() {
        // The pass has been fixed since: the oracle must then agree with the interpreter.
        return;
    }
    let f = &r.findings[0];
    assert_eq!(f.kind, FindingKind::MismatchOutcome);
    assert_eq!(
        f.signature(),
        "lse|mismatch-outcome|trap out_of_bounds -> trap null_deref"
    );
    let test = f.to_test_text();
    assert!(test.contains("; test: run"));
    assert!(test.contains("; input: p = null"));
    assert!(test.contains("; expect: outcome: trap out_of_bounds"));
    let module_text = test
        .lines()
        .filter(|l| !l.starts_with(';'))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(ir::parse_module(&module_text, "repro.ir").is_ok());
}

#[test]
fn compare_names_the_first_differing_part() {
    let m = parse("func @main(%x: i64) -> i64 {\nentry:\n  escape %x\n  ret %x\n}\n");
    let prog = interp::Program::new(&m);
    let run = |spec: &str| {
        prog.run(
            ir::FuncId::new(0),
            &inputs(&m, spec)[0],
            &interp::Config::default(),
        )
        .behaviour
    };
    let a = run("x = 1");
    let b = run("x = 2");
    assert_eq!(compare(&a, &a), None);
    assert_eq!(
        compare(&a, &b),
        Some((FindingKind::MismatchOutcome, "return value".to_string()))
    );
    let mut c = a.clone();
    c.trace.clear();
    assert_eq!(
        compare(&a, &c).map(|(k, _)| k),
        Some(FindingKind::MismatchTrace)
    );
}

#[test]
fn pass_plans_skip_unknown_passes_and_include_random_sequences() {
    let plans = pass_plans(&["lse", "dce", "frobnicate", "pipeline"], 9, 2);
    assert_eq!(&plans[..2], ["lse", "dce"]);
    // Plans that run the peephole engine carry a worklist seed: `pipeline#N`.
    let last = plans.last().expect("plans");
    assert!(last.starts_with("pipeline#"), "{last}");
    assert_eq!(verify::oracle::split_plan(last).0, "pipeline");
    assert!(verify::oracle::split_plan(last).1 > 0 || last == "pipeline#0");
    assert_eq!(plans.len(), 5);
    assert!(plans[2].contains(','));
    assert!(pass_plans(&["frobnicate"], 1, 3).is_empty());
}

#[test]
fn input_modes_alias_as_promised() {
    let g = generate_from_seed(4, &GenConfig::default());
    let f = g.module.func(g.main);
    let ins = instantiate_all(&g.module, f, 77, 6);
    // p0 and p1 are both Node: distinct in mode 0, the same object in mode 1.
    assert!(!params_alias(&ins[0]));
    assert!(params_alias(&ins[1]));
    let prog = interp::Program::new(&g.module);
    for i in &ins {
        assert!(prog
            .try_run(g.main, i, &interp::Config::with_fuel(10_000))
            .is_ok());
        let text = ir::print_input_spec(i, &g.module, f);
        let back = ir::parse_input_spec(&text, "<in>", &g.module, f).expect("round trip");
        assert_eq!(back.params.len(), i.params.len());
    }
}

#[test]
fn sweep_is_deterministic_and_writes_findings_atomically() {
    use verify::sweep::{check_one, run_sweep, SweepOptions};
    let dir = std::env::temp_dir().join(format!("loadstar-sweep-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = SweepOptions {
        seconds: 600.0,
        seed: 3,
        jobs: 2,
        max_programs: Some(150),
        out: dir.clone(),
        progress: false,
        ..SweepOptions::default()
    };
    let a = check_one(&opts, 17);
    let b = check_one(&opts, 17);
    assert_eq!(a.0, b.0);
    assert_eq!(a.1.findings.len(), b.1.findings.len());
    assert_eq!(a.1.trapping, b.1.trapping);
    let out = run_sweep(&opts).expect("sweep");
    assert_eq!(out.totals.programs, 150);
    assert_eq!(out.totals.valid, 150);
    let report = std::fs::read_to_string(dir.join("report.json")).expect("report");
    assert!(report.contains("\"programs\": 150"));
    let files: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(files.iter().all(|f| !f.contains(".tmp-")), "{files:?}");
    let written = files.iter().filter(|f| f.ends_with(".ir")).count();
    assert_eq!(written, out.unique_findings);
    let _ = std::fs::remove_dir_all(&dir);
}
