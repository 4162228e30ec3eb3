//! SMT verify tests: `corpus/smt/*.smt` (see docs/filetests.md). A file holds
//! an original module and either a pass list or, after a `; optimized:` line,
//! a hand-optimized module; `; verdict: @f LABEL` lines give each function's
//! expected verdict as `loadstar verify` prints it (`counterexample` only when
//! the interpreter confirmed it).

use crate::commands::smt_verify::{verify_modules, FuncReport};
use crate::load::load_text;
use passes::PassManager;

/// The separator between the original and the optimized module.
pub const SEPARATOR: &str = "; optimized:";

/// Check one test file's text; the problems found (empty when it passes) and the reports.
pub fn check_smt_text(text: &str, label: &str) -> (Vec<String>, Vec<FuncReport>) {
    let mut problems = Vec::new();
    let mut passes = None;
    let mut unroll = 2usize;
    let mut expected: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(';') else {
            continue;
        };
        let rest = rest.trim();
        if let Some(v) = rest.strip_prefix("smt:") {
            let v = v.trim();
            if let Some(list) = v.strip_prefix("passes") {
                passes = Some(list.trim().to_string());
            } else if v != "against" {
                problems.push(format!(
                    "{label}: `; smt:` wants `passes LIST` or `against`, got `{v}`"
                ));
            }
        } else if let Some(v) = rest.strip_prefix("unroll:") {
            match v.trim().parse() {
                Ok(k) => unroll = k,
                Err(_) => problems.push(format!("{label}: bad `; unroll:` value `{}`", v.trim())),
            }
        } else if let Some(v) = rest.strip_prefix("verdict:") {
            match v.trim().split_once(' ') {
                Some((f, l)) => {
                    expected.push((f.trim_start_matches('@').to_string(), l.trim().to_string()))
                }
                None => problems.push(format!("{label}: `; verdict:` wants `@f LABEL`")),
            }
        }
    }
    if expected.is_empty() {
        problems.push(format!("{label}: no `; verdict:` lines"));
    }
    let (orig_text, opt_text) = match text.split_once(SEPARATOR) {
        Some((a, b)) => (a, Some(b)),
        None => (text, None),
    };
    let orig = match load_text(orig_text, label) {
        Ok(l) => l.module,
        Err(e) => {
            problems.push(e.to_string());
            return (problems, Vec::new());
        }
    };
    let opt = match (opt_text, &passes) {
        (Some(t), None) => match load_text(t, &format!("{label} (optimized)")) {
            Ok(l) => l.module,
            Err(e) => {
                problems.push(e.to_string());
                return (problems, Vec::new());
            }
        },
        (None, Some(list)) => {
            let mut m = orig.clone();
            let run = PassManager::from_list(list).and_then(|pm| pm.run(&mut m));
            if let Err(e) = run {
                problems.push(format!("{label}: passes failed: {e}"));
                return (problems, Vec::new());
            }
            m
        }
        _ => {
            problems.push(format!(
                "{label}: wants exactly one of `; smt: passes LIST` and a `{SEPARATOR}` module"
            ));
            return (problems, Vec::new());
        }
    };
    let opts = smt::Options {
        unroll,
        timeout_ms: 60_000,
        ..smt::Options::default()
    };
    let reports = verify_modules(&orig, &opt, &opts);
    for (f, want) in &expected {
        match reports.iter().find(|r| &r.name == f) {
            None => problems.push(format!("{label}: no function @{f}")),
            Some(r) if &r.label() != want => problems.push(format!(
                "{label}: @{f}: expected `{want}`, got `{}`{}",
                r.label(),
                r.replay
                    .as_deref()
                    .map(|t| format!("\n{t}"))
                    .unwrap_or_default()
            )),
            Some(_) => {}
        }
    }
    for r in &reports {
        if !expected.iter().any(|(f, _)| *f == r.name) {
            problems.push(format!(
                "{label}: @{} has no `; verdict:` line (got `{}`)",
                r.name,
                r.label()
            ));
        }
    }
    (problems, reports)
}
