//! The never-worse oracle: an optimized program that executes more loads +
//! stores than the original on a returning input is a `pessimization` finding
//! (counted apart in the sweep totals, reduced with the same signature);
//! trapping runs are exempt, and the real LSE no longer keeps latch loads
//! for the phis it deletes.

use ir::{InputSpec, InstKind, Module};
use passes::{PassError, Stats};
use verify::oracle::{
    check_program, check_program_with, Finding, FindingKind, OracleConfig, ProgramResult,
};
use verify::reduce::{recheck_with, reduce_with, Limits};
use verify::sweep::totals::{summary_table, Totals};

fn parse(text: &str) -> Module {
    ir::parse_module(text, "t.ir").expect("parses").0
}

fn input(m: &Module, spec: &str) -> InputSpec {
    ir::parse_input_spec(spec, "<in>", m, m.func(ir::FuncId::new(0))).expect("input")
}

/// A deliberately wasteful "pass": every plain load is executed twice (the
/// copy's result is unused, so behaviour is unchanged).
fn double_loads(_: &str, m: &mut Module, _: &mut Stats) -> Result<(), PassError> {
    for f in &mut m.funcs {
        for b in f.layout.clone() {
            for i in f.blocks[b.index()].insts.clone() {
                let kind = f.insts[i.index()].kind.clone();
                if let InstKind::Load {
                    volatile: false, ..
                } = kind
                {
                    let ty = f.insts[i.index()].result.map(|r| f.value_type(r));
                    let (copy, _) = f.create_inst(kind, ty);
                    let pos = f.blocks[b.index()]
                        .insts
                        .iter()
                        .position(|&x| x == i)
                        .expect("placed");
                    f.insert_inst(b, pos, copy);
                }
            }
        }
    }
    Ok(())
}

fn identity(_: &str, _: &mut Module, _: &mut Stats) -> Result<(), PassError> {
    Ok(())
}

const SUM: &str = "type Box { v: i64, w: i64 }
func @main(%b: Box, %n: i64) -> i64 {
entry:
  jmp head
head:
  %i = phi [entry: 0], [body: %i2]
  %s = phi [entry: 0], [body: %s2]
  %c = slt %i, %n
  br %c, body, exit
body:
  %x = load %b.v
  %y = load %b.w
  %t = add %x, %y
  %s2 = add %s, %t
  %i2 = add %i, 1
  jmp head
exit:
  ret %s
}
";

/// [`SUM`] on `spec`, optimized by `optimize` as plan `double`.
fn check_sum(spec: &str, optimize: &verify::oracle::Optimizer<'_>) -> ProgramResult {
    let m = parse(SUM);
    let ins = [input(&m, spec)];
    check_program_with(
        &m,
        ir::FuncId::new(0),
        &ins,
        &["double".to_string()],
        optimize,
        &OracleConfig::default(),
    )
}

/// The finding of [`double_loads`] on a returning input of [`SUM`].
fn doubled() -> Finding {
    let r = check_sum(RETURNS, &double_loads);
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    r.findings.into_iter().next().expect("a finding")
}

const RETURNS: &str = "b = Box{v: 1, w: 2}, n = 3";

#[test]
fn doubled_loads_are_a_pessimization_with_counts_and_the_same_behaviour() {
    let f = doubled();
    assert_eq!(f.kind, FindingKind::Pessimization);
    assert_eq!(f.signature(), "double|pessimization|more loads+stores");
    assert_eq!(f.expected, f.actual, "the behaviour itself is the same");
    assert!(
        f.detail
            .starts_with("original: 6 loads + 0 stores = 6\noptimized: 12 loads + 0 stores = 12"),
        "{}",
        f.detail
    );
    assert!(check_sum(RETURNS, &identity).findings.is_empty());
}

#[test]
fn runs_whose_original_traps_are_exempt() {
    // n = 1 with a null box: the original traps at its first load.
    let r = check_sum("b = null, n = 1", &double_loads);
    assert_eq!(r.trapping, 1);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

#[test]
fn a_pessimization_reduces_keeping_its_signature() {
    let f = doubled();
    let mut recheck = recheck_with(&double_loads, &f.passes, f.fuel);
    let red = reduce_with(&f, &mut recheck, &Limits::default());
    assert!(red.reproduced);
    assert_eq!(red.finding.signature(), f.signature());
    assert!(red.insts_after < red.insts_before, "{red:?}");
}

#[test]
fn sweep_totals_count_pessimizations_apart() {
    let r = check_sum(RETURNS, &double_loads);
    let mut t = Totals::default();
    t.add(&r);
    t.add(&r);
    assert_eq!((t.raw_findings, t.pessimizations), (2, 2));
    let mut merged = Totals::default();
    merged.merge(&t);
    assert_eq!(merged.pessimizations, 2);
    let table = summary_table(&merged, 1.0, 1);
    assert!(
        table
            .lines()
            .any(|l| l.split_whitespace().eq(["pessimizations", "(raw)", "2"])),
        "{table}"
    );
    let json = serde_json::to_value(&merged).expect("serializes");
    assert_eq!(json["pessimizations"], 2);
}

/// The case the issue reported: LSE created a header phi, deleted it as
/// unused, and kept the load it had inserted at the latch to complete it.
#[test]
fn lse_keeps_no_latch_load_for_a_deleted_phi() {
    let text = std::fs::read_to_string("../corpus/regressions/lse_latch_load_for_deleted_phi.ir")
        .expect("regression file");
    let m = parse(&text);
    let ins = [input(&m, "p1 = Node{next: null}")];
    let plans: Vec<String> = ["lse", "lse,lse,lse", "pipeline"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let r = check_program(
        &m,
        ir::FuncId::new(0),
        &ins,
        &plans,
        &OracleConfig::default(),
    );
    assert_eq!(r.plans_run, 3);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// `loadstar check` renders a pessimization with both counts (the behaviours
/// agree, so the counts are what differs).
#[test]
fn check_renders_a_pessimization_with_its_counts() {
    use verify::commands::check::{render_divergence, InputOrigin, Oracle};
    let f = doubled();
    let text = render_divergence("t.ir", Oracle::Interp, &f, Some(InputOrigin::File(3)));
    assert!(
        text.starts_with(
            "t.ir: divergence after `double` (oracle interp): pessimization (more loads+stores)"
        ),
        "{text}"
    );
    assert!(text.contains("loads and stores executed:\n  original: 6 loads + 0 stores = 6\n  optimized: 12 loads + 0 stores = 12"), "{text}");
    assert!(text.contains("optimized module:\n"), "{text}");
}
