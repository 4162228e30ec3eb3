//! The SMT oracle: translation validation of a pass plan with z3 (crate
//! `smt`), beside the interpreter. Every function the plan changed is proved
//! equivalent to the original for all inputs (within the unrolling bound), or
//! z3 hands back an input that is replayed in the interpreter: a confirmed one
//! is a `mismatch-smt` finding, one the interpreter does not confirm is an
//! `smt-unconfirmed` finding (a checker bug). Solver timeouts and resource
//! limits are `unknown`; a panic in the checker is caught and is a finding.
//!
//! z3 is only touched when [`super::OracleConfig::smt`] is set: the
//! interpreter-only path never reaches this module.

use super::{panics, Finding, FindingKind, Optimizer, OracleConfig};
use crate::commands::smt_verify::{check_and_replay, FuncReport};
use crate::sweep::smt_counters::{SmtClass, SmtCounts};
use ir::{FuncId, Module};
use passes::Stats;
use smt::Verdict;

/// The solver limits the sweep and `check --smt` use by default: 1 s per
/// query (the budget of the figures in docs/smt.md), loops unrolled twice.
pub fn default_options() -> smt::Options {
    smt::Options {
        unroll: 2,
        timeout_ms: 1000,
        ..smt::Options::default()
    }
}

/// Optimize `module` with each plan of `plans` that has no finding yet in
/// `found` and validate every changed function with z3; counts go to
/// `counts`, findings (at most one per plan) are returned.
pub fn check_plans(
    module: &Module,
    plans: &[String],
    optimize: &Optimizer<'_>,
    opts: &smt::Options,
    cfg: &OracleConfig,
    found: &[Finding],
    counts: &mut SmtCounts,
) -> Vec<Finding> {
    counts.programs += 1;
    let mut out = Vec::new();
    // Plans that optimize to the same module need one check between them.
    let mut checked: Vec<String> = Vec::new();
    for plan in plans {
        if found.iter().any(|f| &f.passes == plan) {
            continue;
        }
        let mut optimized = module.clone();
        let ok = panics::catch(|| optimize(plan, &mut optimized, &mut Stats::default()));
        if !matches!(ok, Ok(Ok(()))) {
            // The interpreter oracle reports failing passes.
            continue;
        }
        let text = ir::print_module(&optimized);
        if checked.contains(&text) {
            counts.repeated += module.funcs.len() as u64;
            continue;
        }
        checked.push(text);
        let funcs: Vec<FuncId> = (0..module.funcs.len()).map(FuncId::new).collect();
        if let Some(f) = check_functions(module, &optimized, &funcs, plan, opts, cfg, counts) {
            out.push(f);
        }
    }
    out
}

/// Validate the functions `funcs` of `module` against `optimized` (the
/// output of `plan`); the first finding, if any.
pub fn check_functions(
    module: &Module,
    optimized: &Module,
    funcs: &[FuncId],
    plan: &str,
    opts: &smt::Options,
    cfg: &OracleConfig,
    counts: &mut SmtCounts,
) -> Option<Finding> {
    let unchanged = Unchanged::new(module, optimized);
    for &of in funcs {
        let name = &module.func(of).name;
        let Some(pf) = optimized.func_by_name(name) else {
            counts.add(SmtClass::Unsupported, std::time::Duration::ZERO);
            continue;
        };
        if unchanged.skips(of) {
            counts.unchanged += 1;
            continue;
        }
        let icfg = interp::Config {
            fuel: cfg.fuel,
            heap_words: cfg.heap_words,
            ..interp::Config::default()
        };
        let report =
            match panics::catch(|| check_and_replay(module, of, optimized, pf, opts, &icfg)) {
                Ok(r) => r,
                Err(msg) => {
                    counts.add(SmtClass::Unknown, std::time::Duration::ZERO);
                    return Some(panic_finding(module, of, plan, cfg, &msg));
                }
            };
        counts.add(class(&report), report.time);
        if let Some(f) = finding(module, of, optimized, plan, cfg, report) {
            return Some(f);
        }
    }
    None
}

/// The verdict class of a report.
pub fn class(r: &FuncReport) -> SmtClass {
    match (&r.verdict, r.confirmed) {
        (Verdict::Proved, _) => SmtClass::Proved,
        (Verdict::ProvedBounded(_), _) => SmtClass::Bounded,
        (Verdict::Counterexample { .. }, Some(true)) => SmtClass::Counterexample,
        (Verdict::Counterexample { .. }, _) => SmtClass::Unconfirmed,
        (Verdict::Unknown(_), _) => SmtClass::Unknown,
        (Verdict::Unsupported(_), _) => SmtClass::Unsupported,
    }
}

/// The finding of a report with a counterexample.
fn finding(
    module: &Module,
    of: FuncId,
    optimized: &Module,
    plan: &str,
    cfg: &OracleConfig,
    r: FuncReport,
) -> Option<Finding> {
    let Verdict::Counterexample { input, part } = r.verdict else {
        return None;
    };
    let confirmed = r.confirmed == Some(true);
    let kind = if confirmed {
        FindingKind::MismatchSmt
    } else {
        FindingKind::SmtUnconfirmed
    };
    let (expected, actual) = match r.behaviours {
        Some((a, b)) => (Some(a), Some(b)),
        None => (None, None),
    };
    let mut detail = format!(
        "counterexample: {}\n",
        r.input_text.as_deref().unwrap_or_default()
    );
    if !confirmed {
        detail.push_str("the interpreter does not confirm the counterexample (a checker bug)\n");
    }
    if let Some(t) = &r.replay {
        detail.push_str(t);
        detail.push('\n');
    }
    detail.push_str("optimized module:\n");
    detail.push_str(&ir::print_module(optimized));
    Some(Finding {
        passes: plan.to_string(),
        kind,
        part,
        detail,
        module: module.clone(),
        func: of,
        input: Some(input),
        expected,
        actual,
        fuel: cfg.fuel,
        seed: None,
    })
}

/// A panic inside the checker: a finding of kind `smt-unconfirmed` (the
/// checker, not the passes, is at fault).
fn panic_finding(
    module: &Module,
    of: FuncId,
    plan: &str,
    cfg: &OracleConfig,
    msg: &str,
) -> Finding {
    Finding {
        passes: plan.to_string(),
        kind: FindingKind::SmtUnconfirmed,
        part: format!("checker panic: {}", super::finding::normalize_digits(msg)),
        detail: format!("the SMT checker panicked: {msg}"),
        module: module.clone(),
        func: of,
        input: None,
        expected: None,
        actual: None,
        fuel: cfg.fuel,
        seed: None,
    }
}

/// Which functions a plan left alone: equal text, and no call (a callee
/// that changed would change the inlined behaviour), or a module unchanged
/// altogether.
struct Unchanged {
    all: bool,
    same_leaf: Vec<bool>,
}

impl Unchanged {
    fn new(a: &Module, b: &Module) -> Unchanged {
        let text = |m: &Module, f: &ir::Function| ir::print_function(m, f);
        let same: Vec<(bool, bool)> = a
            .funcs
            .iter()
            .map(|f| {
                let ta = text(a, f);
                let same = b
                    .func_by_name(&f.name)
                    .is_some_and(|pf| text(b, b.func(pf)) == ta);
                (same, ta.contains("call "))
            })
            .collect();
        Unchanged {
            all: a.funcs.len() == b.funcs.len() && same.iter().all(|s| s.0),
            same_leaf: same.iter().map(|&(s, calls)| s && !calls).collect(),
        }
    }

    fn skips(&self, f: FuncId) -> bool {
        self.all || self.same_leaf[f.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::{check_program_with, run_plan};

    const M: &str = "type P { x: i64 }\n\
        func @main(%p: P, %q: P) -> i64 {\n\
        entry:\n  store %p.x, 1\n  store %q.x, 2\n  %a = load %p.x\n  %b = add %a, 0\n  ret %b\n}\n";

    /// A wrong store-to-load forwarding: the load of `%p.x` becomes 1
    /// (wrong when `p` and `q` are one object).
    fn wrong(_: &str, m: &mut Module, _: &mut Stats) -> Result<(), passes::PassError> {
        *m = ir::parse_module(
            &M.replace("%a = load %p.x\n  %b = add %a, 0\n  ret %b", "ret 1"),
            "wrong.ir",
        )
        .unwrap()
        .0;
        Ok(())
    }

    fn module() -> Module {
        ir::parse_module(M, "m.ir").unwrap().0
    }

    #[test]
    fn a_wrong_plan_gives_a_confirmed_counterexample_with_its_input() {
        let m = module();
        let cfg = OracleConfig::default();
        let mut counts = SmtCounts::default();
        let plans = ["lse".to_string()];
        let fs = check_plans(
            &m,
            &plans,
            &wrong,
            &default_options(),
            &cfg,
            &[],
            &mut counts,
        );
        assert_eq!(fs.len(), 1, "{fs:?}");
        let f = &fs[0];
        assert_eq!(f.kind, FindingKind::MismatchSmt);
        assert_eq!(f.signature(), "lse|mismatch-smt|returned value");
        assert!(f.detail.starts_with("counterexample: p = "), "{}", f.detail);
        assert_ne!(f.expected, f.actual);
        assert_eq!((counts.queries, counts.counterexample), (1, 1));
    }

    #[test]
    fn the_real_passes_are_proved_and_unchanged_functions_are_not_queried() {
        let m = module();
        let cfg = OracleConfig::default();
        let mut counts = SmtCounts::default();
        let plans = ["dce", "pipeline", "peeps"].map(String::from);
        let fs = check_plans(
            &m,
            &plans,
            &run_plan,
            &default_options(),
            &cfg,
            &[],
            &mut counts,
        );
        assert!(fs.is_empty(), "{fs:?}");
        assert_eq!(counts.unchanged, 1, "dce leaves @main alone");
        assert_eq!((counts.queries, counts.proved), (1, 1));
        assert_eq!(counts.repeated, 1, "peeps gives the pipeline's module");
    }

    #[test]
    fn the_oracle_runs_only_when_configured() {
        let m = module();
        let input =
            ir::input_text::parse_input_spec("p = P{x: 0}, q = p", "i", &m, m.func(FuncId::new(0)))
                .unwrap();
        let plans = ["lse".to_string()];
        // Without inputs the interpreter has nothing to run: only the SMT oracle finds the bug.
        let cfg = OracleConfig::default();
        let r = check_program_with(&m, FuncId::new(0), &[], &plans, &wrong, &cfg);
        assert!(r.findings.is_empty() && r.smt.programs == 0);
        let cfg = OracleConfig {
            smt: Some(default_options()),
            ..OracleConfig::default()
        };
        let r = check_program_with(&m, FuncId::new(0), &[], &plans, &wrong, &cfg);
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].kind, FindingKind::MismatchSmt);
        assert_eq!(r.smt.programs, 1);
        let r = check_program_with(&m, FuncId::new(0), &[input], &plans, &wrong, &cfg);
        assert_eq!(r.findings.len(), 1, "one finding per plan");
        assert_eq!(r.findings[0].kind, FindingKind::MismatchOutcome);
    }
}
