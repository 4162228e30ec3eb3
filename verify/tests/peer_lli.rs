//! `lli-14` as a third opinion on the interpreter (`verify::peer::lli`):
//! the corpus's run tests behave alike under both, and a behaviour that
//! differs from what `lli` does is reported as a `mismatch-lli` finding.

mod support;

use interp::{Behaviour, Config, HeapEntry, Observed, Outcome};
use ir::{FuncId, InputSpec};
use support::loadstar_split;
use verify::commands::peer_lli::run_cases;
use verify::load::load_text;
use verify::oracle::FindingKind;
use verify::peer::lli::{check, check_expected, expected, Case};
use verify::seeds::{corpus_files, default_corpus};

#[test]
fn every_corpus_run_test_behaves_alike_under_lli() {
    corpus_run_tests_under_lli(false);
}

/// The same after `opt -O2`: the translation's TBAA and attributes let LLVM
/// change nothing the corpus observes.
#[test]
fn every_corpus_run_test_behaves_alike_under_lli_after_opt() {
    corpus_run_tests_under_lli(true);
}

fn corpus_run_tests_under_lli(o2: bool) {
    // (module, func, inputs) of every run test, grouped by fuel.
    let mut groups: std::collections::BTreeMap<Option<u64>, Vec<_>> = Default::default();
    for (f, text) in corpus_files(&default_corpus()) {
        let Ok(loaded) = load_text(&text, "test.ir") else {
            continue;
        };
        let (inputs, func, fuel) = run_cases(&text, &loaded.module, "test.ir").unwrap();
        if !inputs.is_empty() {
            groups
                .entry(fuel)
                .or_default()
                .push((f, loaded.module, func, inputs));
        }
    }
    let (mut compared, mut files_run) = (0, 0);
    for (fuel, progs) in &groups {
        let cfg = Config {
            fuel: fuel.unwrap_or(Config::default().fuel),
            ..Config::default()
        };
        let cases: Vec<Case<'_>> = progs
            .iter()
            .map(|(_, m, func, inputs)| Case {
                module: m,
                func: *func,
                inputs,
            })
            .collect();
        let t = check(&cases, &cfg, o2).expect("lli runs the corpus");
        if let Some(d) = t.disagreements.first() {
            panic!(
                "{}: input {}: interpreter\n{}\nlli {:?}",
                progs[d.case].0, d.input, d.interp, d.lli
            );
        }
        assert_eq!(t.agreed, t.compared);
        compared += t.compared;
        files_run += progs.len();
    }
    assert!(files_run > 70, "only {files_run} run tests");
    assert!(compared > 150, "only {compared} inputs compared");
    eprintln!("{files_run} run tests, {compared} inputs compared");
}

/// Externs (declared effects and not), a volatile access, escapes and an
/// extern returning a reference: every environment step goes through the
/// parent, and the heap is compared at the end.
const ENV_MODULE: &str = "
type Node { val: i64, next: Node }
global @count: i64
global @head: Node
extern @mystery(i64, Node) -> i64
extern @pick(Node) -> Node reads(Node.next) writes(Node.val)
func @main(%n: Node, %m: Node, %k: i64) -> i64 {
entry:
  %a = call @mystery(%k, %n)
  %o = new Node
  store %o.next, %m
  %p = call @pick(%o)
  escape %p
  %v = load.volatile %n.val
  store.volatile @count, %v
  store @head, %o
  escape %a
  %c = eq %p, null
  br %c, done, more
more:
  %w = load %p.val
  %s = add %w, %a
  ret %s
done:
  %x = load %m.next
  %y = load %x.val
  ret %y
}
";

/// The module of [`ENV_MODULE`] and its inputs: six instantiated ones and
/// one that traps.
fn env_case() -> (ir::Module, Vec<InputSpec>) {
    let m = load_text(ENV_MODULE, "env.ir").unwrap().module;
    let f = m.func(FuncId::new(0));
    let mut specs = verify::inputs::instantiate_all(&m, f, 7, 6);
    // A null `%n`: the volatile load traps after two steps and an escape.
    specs.push(
        ir::input_text::parse_input_spec("n = null, m = Node{val: 3}, k = 1", "input", &m, f)
            .unwrap(),
    );
    (m, specs)
}

/// `@main` of `m` on `inputs`, and what the interpreter does on them.
fn main_case<'a>(m: &'a ir::Module, inputs: &'a [InputSpec]) -> (Case<'a>, Vec<Option<Behaviour>>) {
    let case = Case {
        module: m,
        func: FuncId::new(0),
        inputs,
    };
    let want = expected(&case, &Config::default());
    (case, want)
}

#[test]
fn environment_steps_escapes_and_traps_agree() {
    let (m, inputs) = env_case();
    let (case, want) = main_case(&m, &inputs);
    let cfg = Config::default();
    let t = check_expected(&[case], std::slice::from_ref(&want), &cfg, false).unwrap();
    assert!(t.disagreements.is_empty(), "{:?}", t.disagreements);
    assert_eq!(t.compared, 7);
    // Two externs and a volatile load and store per run (fewer where it traps).
    assert!(t.steps >= 20, "{} steps", t.steps);
    assert!(t.traps >= 1);
    // The inputs both return and trap, and the trace is not empty.
    let outcomes: Vec<&Outcome> = want.iter().flatten().map(|b| &b.outcome).collect();
    assert!(outcomes.iter().any(|o| matches!(o, Outcome::Return(_))));
    assert!(outcomes.iter().any(|o| matches!(o, Outcome::Trap(_))));
    assert!(want.iter().flatten().any(|b| !b.trace.is_empty()));
}

/// Corrupt one part of the interpreter's behaviour: `lli` then disagrees,
/// with a finding of kind `mismatch-lli` naming the part.
fn disagreement_on(corrupt: impl Fn(&mut Behaviour), part: &str) {
    let (m, inputs) = env_case();
    let (case, mut want) = main_case(&m, &inputs);
    let cfg = Config::default();
    let k = want
        .iter()
        .position(|b| {
            b.as_ref()
                .is_some_and(|b| matches!(b.outcome, Outcome::Return(_)))
        })
        .expect("an input that returns");
    corrupt(want[k].as_mut().unwrap());
    let t = check_expected(&[case], std::slice::from_ref(&want), &cfg, false).unwrap();
    assert_eq!(t.disagreements.len(), 1, "{:?}", t.disagreements);
    let d = &t.disagreements[0];
    assert_eq!(d.input, k);
    assert_eq!(t.agreed, t.compared - 1);
    let f = d.finding(&case, cfg.fuel);
    assert_eq!(f.kind, FindingKind::MismatchLli);
    assert!(f.part.starts_with(part), "part {}", f.part);
    assert!(f.to_test_text().contains("; test: run"));
}

#[test]
fn a_different_return_value_is_a_disagreement() {
    disagreement_on(
        |b| {
            b.outcome = match b.outcome {
                Outcome::Return(Some(Observed::Int(v))) => {
                    Outcome::Return(Some(Observed::Int(v.wrapping_add(1))))
                }
                _ => Outcome::Return(None),
            }
        },
        "mismatch-outcome",
    );
}

#[test]
fn a_different_trace_is_a_disagreement() {
    disagreement_on(|b| b.trace.push(Observed::Int(5)), "mismatch-trace");
}

#[test]
fn a_different_heap_is_a_disagreement() {
    disagreement_on(
        |b| {
            if let Some(HeapEntry::Global { value, .. }) = b.heap.first_mut() {
                *value = Observed::Int(-99);
            }
        },
        "mismatch-heap",
    );
}

#[test]
fn peer_lli_cli_over_a_file_and_generated_programs() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/env/volatile.ir");
    let (code, out, err) = loadstar_split(&["peer", file.to_str().unwrap(), "--lli"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("disagreed 0"), "{out}");
    let (code, out, err) = loadstar_split(&["peer", "--generated", "40", "--lli", "--jobs", "1"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("programs 40,"), "{out}");
    assert!(out.contains("disagreed 0"), "{out}");
}

#[test]
fn sweep_with_the_lli_oracle_reports_its_counts() {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("sweep-lli");
    let _ = std::fs::remove_dir_all(&out);
    let (code, stdout, err) = loadstar_split(&[
        "sweep",
        "--seconds",
        "60",
        "--max-programs",
        "40",
        "--oracles",
        "interp,lli",
        "--jobs",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    // The summary goes to stderr.
    assert!(
        err.contains("lli (the translation under lli-14"),
        "{stdout}{err}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let lli = &report["lli"];
    assert_eq!(lli["programs"], 40, "{lli}");
    assert_eq!(lli["disagreed"], 0, "{lli}");
    assert!(lli["compared"].as_u64().unwrap() >= 40, "{lli}");
    assert!(lli["starts"].as_u64().unwrap() >= 2, "{lli}");
}
