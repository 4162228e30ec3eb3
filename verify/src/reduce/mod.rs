//! The reducer: structural delta debugging on the IR of a finding.
//!
//! A [`Candidate`] is a module, the function to run and one input. Starting
//! from a finding's reproducer, the reducer tries smaller candidates — chunks of
//! instructions removed first (ddmin style), then one edit at a time (an
//! instruction replaced by one of its operands, a parameter or a constant; a
//! `br` turned into a `jmp`; a branch turned into a `ret`; blocks merged;
//! parameters, functions, externs, globals, fields and types dropped; the input
//! shrunk) — and keeps each candidate that still verifies and still fails with
//! the same [`Finding::signature`]. Rounds repeat until nothing more is
//! accepted (a fixed point) or the time cap is reached. Every accepted state is
//! re-checked after printing and parsing it, so the written text test
//! reproduces exactly what the reducer saw.

pub mod decls;
pub mod edits;
pub mod input;

use crate::oracle::{check_program_with, run_plan, Finding, Optimizer, OracleConfig};
use ir::{FuncId, InputSpec, Module};
use std::time::{Duration, Instant};

/// What the reducer shrinks: a module, the function that runs, and its input.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The module.
    pub module: Module,
    /// The function that runs.
    pub func: FuncId,
    /// The input it runs on.
    pub input: InputSpec,
}

impl Candidate {
    /// The instructions placed in every function (phis and terminators included).
    pub fn inst_count(&self) -> usize {
        self.module
            .funcs
            .iter()
            .map(|f| f.placed_inst_count())
            .sum()
    }
}

/// Re-check a candidate: the finding it produces, if any.
pub type Recheck<'a> = dyn FnMut(&Candidate) -> Option<Finding> + 'a;

/// Budget of one reduction.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Wall-clock cap; the best candidate so far is returned when it runs out.
    pub time: Option<Duration>,
    /// Cap on the number of candidates re-checked.
    pub max_checks: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: Some(Duration::from_secs(10)),
            max_checks: None,
        }
    }
}

/// The result of one reduction, with numbers for reports.
#[derive(Clone, Debug)]
pub struct Reduction {
    /// The reduced finding (the original when nothing reproduced).
    pub finding: Finding,
    /// Placed instructions before.
    pub insts_before: usize,
    /// Placed instructions after.
    pub insts_after: usize,
    /// Candidates re-checked (each one verifies).
    pub checks: u64,
    /// Candidates accepted.
    pub accepted: u64,
    /// Whether the original reproduced at all.
    pub reproduced: bool,
    /// Whether the time or check cap stopped the search before the fixed point.
    pub capped: bool,
    /// Wall-clock time taken.
    pub elapsed: Duration,
}

/// A re-check through [`check_program_with`] with `optimize`, running the
/// finding's plan (`passes`) on the candidate's single input with fuel `fuel`.
pub fn recheck_with<'a>(
    optimize: &'a Optimizer<'a>,
    passes: &str,
    fuel: u64,
) -> impl FnMut(&Candidate) -> Option<Finding> + 'a {
    recheck_oracles(optimize, passes, fuel, false)
}

/// [`recheck_with`], with the native oracle on when `native` (for
/// `mismatch-native` findings).
pub fn recheck_oracles<'a>(
    optimize: &'a Optimizer<'a>,
    passes: &str,
    fuel: u64,
    native: bool,
) -> impl FnMut(&Candidate) -> Option<Finding> + 'a {
    let plans = if passes == "none" {
        Vec::new()
    } else {
        vec![passes.to_string()]
    };
    let cfg = OracleConfig {
        fuel,
        native,
        ..OracleConfig::default()
    };
    move |c: &Candidate| {
        check_program_with(
            &c.module,
            c.func,
            std::slice::from_ref(&c.input),
            &plans,
            optimize,
            &cfg,
        )
        .findings
        .into_iter()
        .next()
    }
}

/// Reduce a finding to a smaller program with the same signature, against the
/// real passes, within the default time cap.
pub fn reduce(finding: Finding) -> Finding {
    reduce_finding(&finding, &Limits::default()).finding
}

/// A re-check through the SMT oracle alone: the candidate's module optimized
/// with `plan` by `optimize`, its function validated with z3 (the input
/// comes from the solver; the candidate's own is ignored).
pub fn recheck_smt<'a>(
    optimize: &'a Optimizer<'a>,
    plan: &str,
    fuel: u64,
) -> impl FnMut(&Candidate) -> Option<Finding> + 'a {
    let plan = plan.to_string();
    let cfg = OracleConfig {
        fuel,
        ..OracleConfig::default()
    };
    move |c: &Candidate| {
        let mut optimized = c.module.clone();
        let mut stats = passes::Stats::default();
        let ran = crate::oracle::panics::catch(|| optimize(&plan, &mut optimized, &mut stats));
        if !matches!(ran, Ok(Ok(()))) {
            return None;
        }
        let opts = crate::oracle::smt_check::default_options();
        let mut counts = Default::default();
        crate::oracle::smt_check::check_functions(
            &c.module,
            &optimized,
            &[c.func],
            &plan,
            &opts,
            &cfg,
            &mut counts,
        )
    }
}

/// Reduce `finding` against the real passes (its own plan) within `limits`.
pub fn reduce_finding(finding: &Finding, limits: &Limits) -> Reduction {
    if matches!(
        finding.kind,
        crate::oracle::FindingKind::MismatchSmt | crate::oracle::FindingKind::SmtUnconfirmed
    ) {
        let mut recheck = recheck_smt(&run_plan, &finding.passes, finding.fuel);
        return reduce_with(finding, &mut recheck, limits);
    }
    let native = matches!(
        finding.kind,
        crate::oracle::FindingKind::MismatchNative | crate::oracle::FindingKind::NativeCrash
    );
    let mut recheck = recheck_oracles(&run_plan, &finding.passes, finding.fuel, native);
    reduce_with(finding, &mut recheck, limits)
}

/// Reduce `finding`, re-checking candidates with `recheck`; a candidate is kept
/// when it verifies and `recheck` reports a finding with the same signature.
pub fn reduce_with(finding: &Finding, recheck: &mut Recheck<'_>, limits: &Limits) -> Reduction {
    let start = Instant::now();
    let original = Candidate {
        module: finding.module.clone(),
        func: finding.func,
        input: finding.input.clone().unwrap_or_default(),
    };
    let mut search = Search {
        signature: finding.signature(),
        template: finding.clone(),
        best: finding.clone(),
        current: original.clone(),
        recheck,
        deadline: limits.time.map(|t| start + t),
        max_checks: limits.max_checks,
        checks: 0,
        accepted: 0,
        capped: false,
    };
    let reproduced = search.confirm();
    if reproduced {
        // Prefer the printed form from the start, if it still fails the same way.
        search.canonicalize();
        loop {
            let before = search.accepted;
            search.round();
            if search.accepted == before || search.out_of_budget() {
                break;
            }
        }
        search.canonicalize();
    }
    Reduction {
        insts_before: original.inst_count(),
        insts_after: if reproduced {
            search.current.inst_count()
        } else {
            original.inst_count()
        },
        finding: search.best,
        checks: search.checks,
        accepted: search.accepted,
        reproduced,
        capped: search.capped,
        elapsed: start.elapsed(),
    }
}

/// The state of one reduction.
struct Search<'r, 'a> {
    signature: String,
    template: Finding,
    best: Finding,
    current: Candidate,
    recheck: &'r mut Recheck<'a>,
    deadline: Option<Instant>,
    max_checks: Option<u64>,
    checks: u64,
    accepted: u64,
    capped: bool,
}

impl Search<'_, '_> {
    fn out_of_budget(&mut self) -> bool {
        let over = self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.max_checks.is_some_and(|m| self.checks >= m);
        self.capped |= over;
        over
    }

    /// Whether `c` verifies and fails with the target signature (then it becomes current).
    fn try_candidate(&mut self, c: Candidate) -> bool {
        if self.out_of_budget() || ir::verify_module(&c.module).is_err() {
            return false;
        }
        self.checks += 1;
        match (self.recheck)(&c) {
            Some(f) if f.signature() == self.signature => {
                self.best = Finding {
                    passes: self.template.passes.clone(),
                    seed: self.template.seed,
                    fuel: self.template.fuel,
                    ..f
                };
                self.current = c;
                self.accepted += 1;
                true
            }
            _ => false,
        }
    }

    /// Re-check the original itself.
    fn confirm(&mut self) -> bool {
        let c = self.current.clone();
        let ok = self.try_candidate(c);
        self.accepted = 0;
        ok
    }

    /// Replace the current candidate by its printed-and-parsed form when that
    /// still fails the same way (the text test must reproduce what we kept).
    fn canonicalize(&mut self) {
        if let Some(c) = reparse(&self.current) {
            let before = self.accepted;
            if self.try_candidate(c) {
                self.accepted = before;
            }
        }
    }

    /// Try `edits` on the current candidate, one after another.
    fn try_edits(&mut self, edits: Vec<edits::Edit>) {
        for e in edits {
            if self.out_of_budget() {
                return;
            }
            if let Some(c) = e(&self.current) {
                self.try_candidate(c);
            }
        }
    }

    /// One round of every kind of edit.
    fn round(&mut self) {
        self.chunked_removal();
        let fix = edits::terminator_edits(&self.current);
        self.try_edits(fix);
        let each = edits::instruction_edits(&self.current);
        self.try_edits(each);
        let merges = edits::merge_edits(&self.current);
        self.try_edits(merges);
        let params = edits::param_edits(&self.current);
        self.try_edits(params);
        self.canonicalize();
        self.declaration_round();
        let ins = input::input_edits(&self.current);
        self.try_edits(ins);
    }

    /// ddmin-style: remove chunks of instructions (results replaced by defaults),
    /// halving the chunk size whenever no chunk of the current size goes.
    fn chunked_removal(&mut self) {
        let mut all = edits::removable_insts(&self.current);
        let mut size = all.len() / 2;
        while size >= 1 && !self.out_of_budget() {
            let mut progress = false;
            let mut start = 0;
            while start < all.len() {
                let end = (start + size).min(all.len());
                let chunk: Vec<_> = all[start..end].to_vec();
                let cand = edits::remove_insts(&self.current, &chunk);
                if cand.is_some_and(|c| self.try_candidate(c)) {
                    all.drain(start..end);
                    progress = true;
                } else {
                    start = end;
                }
                if self.out_of_budget() {
                    return;
                }
            }
            if !progress {
                size /= 2;
            }
        }
    }

    /// Drop declarations one at a time; each accepted removal renumbers, so
    /// the list is recomputed after every success.
    fn declaration_round(&mut self) {
        loop {
            let mut accepted = false;
            for e in decls::declaration_edits(&self.current) {
                if self.out_of_budget() {
                    return;
                }
                if e(&self.current).is_some_and(|c| self.try_candidate(c)) {
                    accepted = true;
                    break;
                }
            }
            if !accepted {
                return;
            }
        }
    }
}

/// The candidate printed and parsed again (module and input), if both parse.
pub fn reparse(c: &Candidate) -> Option<Candidate> {
    let f = c.module.func(c.func);
    let text = ir::print_module(&c.module);
    let spec = ir::print_input_spec(&c.input, &c.module, f);
    let (module, _) = ir::parse_module(&text, "reduced.ir").ok()?;
    let func = module.func_by_name(&f.name)?;
    let input = ir::parse_input_spec(&spec, "<input>", &module, module.func(func)).ok()?;
    Some(Candidate {
        module,
        func,
        input,
    })
}

/// The reduced reproducer as a corpus text test: [`Finding::to_test_text`]
/// with a `; reduced:` comment giving the sizes before and after.
pub fn reduced_test_text(r: &Reduction) -> String {
    let text = r.finding.to_test_text();
    let note = format!(
        "; reduced: {} -> {} instructions ({} candidates checked{})\n",
        r.insts_before,
        r.insts_after,
        r.checks,
        if r.capped { ", stopped by the cap" } else { "" }
    );
    match text.split_once('\n') {
        Some((first, rest)) => format!("{first}\n{note}{rest}"),
        None => format!("{text}\n{note}"),
    }
}
