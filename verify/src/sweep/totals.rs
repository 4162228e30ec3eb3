//! Sweep statistics: counters summed over programs, the summary table and the
//! JSON report.

use super::counters::rarely_exercised;
use crate::oracle::{FindingKind, ProgramResult};
use passes::Stats;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Counters over a whole sweep (or one worker's share of it).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    /// Programs generated.
    pub programs: u64,
    /// Programs that verified.
    pub valid: u64,
    /// Inputs run on originals.
    pub runs: u64,
    /// Inputs whose original run was inconclusive.
    pub inconclusive: u64,
    /// Conclusive inputs whose original trapped.
    pub trapping_runs: u64,
    /// Programs with at least one trapping conclusive input.
    pub trapping_programs: u64,
    /// Conclusive original runs per trap kind.
    pub trap_kinds: BTreeMap<String, u64>,
    /// Programs where two reference parameters were one object on some input.
    pub param_aliasing_programs: u64,
    /// Conclusive inputs where two reference parameters were one object.
    pub param_aliasing_runs: u64,
    /// Programs where some object was referenced from two places on some input.
    pub sharing_programs: u64,
    /// Pass plans optimized and compared.
    pub plans_run: u64,
    /// Findings before deduplication.
    pub raw_findings: u64,
    /// Of those, `pessimization` findings (more loads + stores than the original).
    pub pessimizations: u64,
    /// Modules the native oracle compiled and ran.
    pub native_modules: u64,
    /// Optimized modules identical to one already run natively (not compiled again).
    pub native_reused: u64,
    /// Optimized modules outside the native sample (plans other than `pipeline`).
    pub native_skipped: u64,
    /// Native executions.
    pub native_runs: u64,
    /// Programs whose native code went through regalloc2's checker.
    pub regalloc_checked_programs: u64,
    /// Sweep worker processes that died and were replaced.
    pub worker_restarts: u64,
    /// Rule fire counts, per pass.
    pub rules: BTreeMap<&'static str, BTreeMap<&'static str, u64>>,
    /// For each counter, per pass, the programs in which it fired at least once.
    pub rule_programs: BTreeMap<&'static str, BTreeMap<&'static str, u64>>,
    /// The SMT oracle's verdicts and query times.
    pub smt: super::smt_counters::SmtCounts,
}

impl Totals {
    /// Add one program's result.
    pub fn add(&mut self, r: &ProgramResult) {
        self.programs += 1;
        self.valid += r.valid as u64;
        self.runs += r.runs;
        self.inconclusive += r.inconclusive;
        self.trapping_runs += r.trapping;
        self.trapping_programs += (r.trapping > 0) as u64;
        self.param_aliasing_programs += r.param_aliasing as u64;
        self.sharing_programs += r.sharing as u64;
        self.param_aliasing_runs += r.param_aliasing_runs;
        self.plans_run += r.plans_run;
        self.native_modules += r.native_modules;
        self.native_reused += r.native_reused;
        self.native_skipped += r.native_skipped;
        self.native_runs += r.native_runs;
        self.regalloc_checked_programs += r.regalloc_checked as u64;
        self.raw_findings += r.findings.len() as u64;
        self.pessimizations += r
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::Pessimization)
            .count() as u64;
        self.add_stats(&r.stats);
        self.smt.merge(&r.smt);
        for (k, n) in &r.trap_kinds {
            *self.trap_kinds.entry(k.clone()).or_default() += n;
        }
    }

    fn add_stats(&mut self, s: &Stats) {
        for (pass, rules) in &s.passes() {
            let e = self.rules.entry(pass).or_default();
            for (rule, n) in rules {
                *e.entry(rule).or_default() += n;
                if *n > 0 {
                    *self
                        .rule_programs
                        .entry(pass)
                        .or_default()
                        .entry(rule)
                        .or_default() += 1;
                }
            }
        }
    }

    /// Add another worker's totals.
    pub fn merge(&mut self, o: &Totals) {
        self.programs += o.programs;
        self.valid += o.valid;
        self.runs += o.runs;
        self.inconclusive += o.inconclusive;
        self.trapping_runs += o.trapping_runs;
        self.trapping_programs += o.trapping_programs;
        self.param_aliasing_programs += o.param_aliasing_programs;
        self.sharing_programs += o.sharing_programs;
        self.param_aliasing_runs += o.param_aliasing_runs;
        self.plans_run += o.plans_run;
        self.native_modules += o.native_modules;
        self.native_reused += o.native_reused;
        self.native_skipped += o.native_skipped;
        self.native_runs += o.native_runs;
        self.regalloc_checked_programs += o.regalloc_checked_programs;
        self.worker_restarts += o.worker_restarts;
        self.raw_findings += o.raw_findings;
        self.pessimizations += o.pessimizations;
        self.smt.merge(&o.smt);
        for (k, n) in &o.trap_kinds {
            *self.trap_kinds.entry(k.clone()).or_default() += n;
        }
        for (pass, rules) in &o.rules {
            let e = self.rules.entry(pass).or_default();
            for (rule, n) in rules {
                *e.entry(rule).or_default() += n;
            }
        }
        for (pass, rules) in &o.rule_programs {
            let e = self.rule_programs.entry(pass).or_default();
            for (rule, n) in rules {
                *e.entry(rule).or_default() += n;
            }
        }
    }
}

/// `part / whole` as a percentage (0 when `whole` is 0).
pub fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The summary table printed at the end of a sweep.
pub fn summary_table(t: &Totals, secs: f64, unique_findings: usize) -> String {
    let mut s = String::new();
    let rate = if secs > 0.0 {
        t.programs as f64 / secs
    } else {
        0.0
    };
    let row = |s: &mut String, k: &str, v: String| {
        let _ = writeln!(s, "  {k:<28} {v}");
    };
    s.push_str("sweep summary\n");
    row(&mut s, "programs", t.programs.to_string());
    row(&mut s, "seconds", format!("{secs:.1}"));
    row(&mut s, "programs/s", format!("{rate:.0}"));
    row(
        &mut s,
        "valid %",
        format!("{:.1}", pct(t.valid, t.programs)),
    );
    row(&mut s, "inputs run", t.runs.to_string());
    row(
        &mut s,
        "inconclusive % (inputs)",
        format!("{:.1}", pct(t.inconclusive, t.runs)),
    );
    row(
        &mut s,
        "trapping % (programs)",
        format!("{:.1}", pct(t.trapping_programs, t.programs)),
    );
    row(
        &mut s,
        "trapping % (inputs)",
        format!("{:.1}", pct(t.trapping_runs, t.runs - t.inconclusive)),
    );
    if !t.trap_kinds.is_empty() {
        let kinds: Vec<String> = t
            .trap_kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        row(&mut s, "traps by kind", kinds.join(", "));
    }
    row(
        &mut s,
        "aliasing % (param = param)",
        format!("{:.1}", pct(t.param_aliasing_programs, t.programs)),
    );
    row(
        &mut s,
        "aliasing % (inputs)",
        format!("{:.1}", pct(t.param_aliasing_runs, t.runs - t.inconclusive)),
    );
    row(
        &mut s,
        "aliasing % (any sharing)",
        format!("{:.1}", pct(t.sharing_programs, t.programs)),
    );
    row(&mut s, "pass plans checked", t.plans_run.to_string());
    if t.native_modules + t.native_reused + t.worker_restarts > 0 {
        row(&mut s, "native modules run", t.native_modules.to_string());
        row(&mut s, "native modules reused", t.native_reused.to_string());
        row(
            &mut s,
            "native modules sampled out",
            t.native_skipped.to_string(),
        );
        row(&mut s, "native runs", t.native_runs.to_string());
        row(
            &mut s,
            "regalloc-checked programs",
            t.regalloc_checked_programs.to_string(),
        );
        row(
            &mut s,
            "native worker restarts",
            t.worker_restarts.to_string(),
        );
    }
    row(&mut s, "findings (raw)", t.raw_findings.to_string());
    row(&mut s, "findings (unique)", unique_findings.to_string());
    row(&mut s, "pessimizations (raw)", t.pessimizations.to_string());
    s.push_str(&t.smt.render());
    if !t.rules.is_empty() {
        s.push_str("rule fire counts\n");
        for (pass, rules) in &t.rules {
            for (rule, n) in rules {
                let _ = writeln!(s, "  {:<28} {n}", format!("{pass}.{rule}"));
            }
        }
        let rare = rarely_exercised(t);
        if rare.is_empty() {
            s.push_str("rarely exercised (< 1 in 1,000 programs): none\n");
        } else {
            s.push_str("rarely exercised (< 1 in 1,000 programs; programs fired in)\n");
            for (name, k) in rare {
                let _ = writeln!(s, "  {name:<28} {k}");
            }
        }
    }
    s
}
