//! `loadstar verify --rules [FILE]`: prove every rule of the peephole table
//! and the GVN and LSE folds (or the rules of a rule file) with z3, instance by
//! instance, and print a table (rule, instances, verdict, time) with each
//! counterexample as concrete operand values.

use passes::peeps::spec::{file::parse_rule_file, parse_rule, table_spec, RuleSpec};
use smt::rules::{prove_instance, RuleVerdict};
use std::fmt::Write as _;
use std::time::Duration;

/// The outcome for one rule.
#[derive(Clone, Debug)]
pub struct RuleRow {
    /// The rule's name.
    pub name: String,
    /// How many instances it has.
    pub instances: usize,
    /// How many were proved.
    pub proved: usize,
    /// The first instance not proved: its label and verdict.
    pub failure: Option<(String, RuleVerdict)>,
    /// Solver time over its instances.
    pub time: Duration,
}

/// The rules `--rules` proves by default: the peephole table, then GVN's
/// and LSE's folds.
pub fn builtin_specs() -> Result<Vec<RuleSpec>, String> {
    let mut out: Vec<RuleSpec> = passes::peeps::rules()
        .iter()
        .map(table_spec)
        .collect::<Result<_, _>>()?;
    let folds = passes::gvn::folds::GVN_FOLDS
        .iter()
        .chain(passes::lse::folds::LSE_FOLDS.iter());
    for &(name, p, c, w) in folds {
        let at = (1, 1);
        out.push(
            parse_rule(name, [(p, at), (c, at), (w, at)])
                .map_err(|(m, _)| format!("fold {name}: {m}"))?,
        );
    }
    Ok(out)
}

/// The rules of the rule file at `path` (errors as `path:line:column: message`).
pub fn file_specs(path: &str) -> Result<Vec<RuleSpec>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    parse_rule_file(&text).map_err(|e| format!("{path}:{e}"))
}

/// Prove every instance of every rule (each query within `timeout_ms`).
pub fn prove_all(specs: &[RuleSpec], timeout_ms: u32) -> Vec<RuleRow> {
    specs
        .iter()
        .map(|spec| {
            let mut row = RuleRow {
                name: spec.name.clone(),
                instances: spec.instances.len(),
                proved: 0,
                failure: None,
                time: Duration::ZERO,
            };
            for inst in &spec.instances {
                let (verdict, t) = prove_instance(inst, timeout_ms);
                row.time += t;
                if verdict == RuleVerdict::Proved {
                    row.proved += 1;
                } else if row.failure.is_none() {
                    row.failure = Some((inst.label(), verdict));
                }
            }
            row
        })
        .collect()
}

/// The table, the counterexamples and a total line.
pub fn render(rows: &[RuleRow], wall: Duration) -> String {
    let mut s = String::new();
    let w = rows.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(s, "{:w$}  instances  verdict         time", "rule");
    for r in rows {
        let verdict = match &r.failure {
            None => "proved".to_string(),
            Some((_, RuleVerdict::Counterexample(_))) => "counterexample".to_string(),
            Some((_, RuleVerdict::Unconfirmed(_))) => "smt-unconfirmed".to_string(),
            Some((_, v)) => format!("unknown ({v:?})"),
        };
        let _ = writeln!(
            s,
            "{:w$}  {:>9}  {:14}  {:.3} s",
            r.name,
            r.instances,
            verdict,
            r.time.as_secs_f64()
        );
        match &r.failure {
            Some((label, RuleVerdict::Counterexample(cex))) => {
                let _ = writeln!(s, "  counterexample ({label}): {cex}");
            }
            Some((label, RuleVerdict::Unconfirmed(why))) => {
                let _ = writeln!(s, "  unconfirmed ({label}): {why}");
            }
            _ => {}
        }
    }
    let instances: usize = rows.iter().map(|r| r.instances).sum();
    let proved: usize = rows.iter().map(|r| r.proved).sum();
    let cex = rows
        .iter()
        .filter(|r| matches!(r.failure, Some((_, RuleVerdict::Counterexample(_)))))
        .count();
    let unknown = rows.iter().filter(|r| r.failure.is_some()).count() - cex;
    let _ = writeln!(
        s,
        "{} rules, {instances} instances: {proved} instances proved; {} rules proved, {cex} with a counterexample, {unknown} unknown ({:.2} s)",
        rows.len(),
        rows.len() - cex - unknown,
        wall.as_secs_f64()
    );
    s
}
