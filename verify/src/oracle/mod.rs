//! The differential oracle: run the original program with the reference
//! interpreter, optimize it with each pass plan (the PassManager verifies after
//! every pass), run the optimized program on the same inputs, and compare the
//! observable behaviours with `==` (IR.md §7).
//!
//! Rules: an input on which the original runs out of fuel, exhausts the heap or
//! overflows the stack is inconclusive and skipped; when the original finishes
//! using fuel B, the optimized program runs with 2B + 16 and must finish too.
//! Panics in passes are caught and become findings.
//!
//! Never worse: on every input where the original returns, the optimized
//! program must execute no more loads + stores than the original
//! ([`allowed_extra`] is the bound a speculating transformation may use); more
//! is a `pessimization` finding. Runs whose original traps are exempt: a pass
//! may move a trap later (a dead store on a base that traps is deleted and the
//! next store on that base traps in its place), so the optimized run reaches
//! accesses the original never did, on a path that ends in the same trap.

pub mod finding;
pub mod native;
pub mod panics;
pub mod smt_check;

use crate::gen::rng::Rng;
use crate::inputs::{params_alias, shares_objects};
pub use finding::{compare, Finding, FindingKind};
use interp::{Behaviour, Config, InputError, Outcome, Program, ValidInputs};
use ir::{FuncId, InputSpec, Module};
use passes::{PassError, PassManager, Stats, PASS_NAMES};

/// Limits of the oracle.
#[derive(Clone, Debug)]
pub struct OracleConfig {
    /// Fuel for the original program.
    pub fuel: u64,
    /// Heap budget in words for every run (original and optimized alike).
    pub heap_words: usize,
    /// Also compile to x86-64 and compare the native runs of the original
    /// (same limits) and of every optimized module (budget 2B + 16) with the
    /// interpreter's baseline (the `native` oracle).
    pub native: bool,
    /// Run native code in forked workers (`codegen::isolate`) so that a fault,
    /// a hang or a corrupted runtime becomes a `native-crash` finding instead
    /// of killing the caller. On by default.
    pub isolate: bool,
    /// Tests of crash isolation only: damage the generated code.
    pub sabotage: Option<codegen::Sabotage>,
    /// Run regalloc2's checker on the native code of one program in this
    /// many (chosen by the program's fingerprint; 1, the default: every
    /// program). The sweep samples it for speed (`--regalloc-check-every`);
    /// tests, the corpus runner, `check` and the fuzz targets keep it on.
    pub regalloc_check_every: u64,
    /// Run the native code of plans other than `pipeline` on one program in
    /// this many (1, the default: every program; the original and the
    /// `pipeline` output always run natively). The sweep samples it for speed
    /// (`--native-plans-every`).
    pub native_plans_every: u64,
    /// Also validate every plan with z3 (the `smt` oracle, [`smt_check`])
    /// with these solver limits; `None` keeps z3 out of the check.
    pub smt: Option<smt::Options>,
}

impl Default for OracleConfig {
    fn default() -> Self {
        OracleConfig {
            fuel: 10_000,
            heap_words: 1 << 16,
            native: false,
            isolate: true,
            sabotage: None,
            regalloc_check_every: 1,
            native_plans_every: 1,
            smt: None,
        }
    }
}

/// What checking one program found, and counts for the statistics.
#[derive(Clone, Debug, Default)]
pub struct ProgramResult {
    /// Whether the original verified (a generator bug otherwise; nothing else is checked).
    pub valid: bool,
    /// Inputs run on the original.
    pub runs: u64,
    /// Inputs whose original run was inconclusive.
    pub inconclusive: u64,
    /// Conclusive inputs whose original run trapped.
    pub trapping: u64,
    /// How often each trap kind ended a conclusive original run.
    pub trap_kinds: std::collections::BTreeMap<String, u64>,
    /// Conclusive inputs that bound two reference parameters to one object.
    pub param_aliasing_runs: u64,
    /// Whether some conclusive input bound two reference parameters to one object.
    pub param_aliasing: bool,
    /// Whether some conclusive input referenced one object from two places.
    pub sharing: bool,
    /// Pass plans that ran.
    pub plans_run: u64,
    /// At most one finding per pass plan.
    pub findings: Vec<Finding>,
    /// What the passes did, summed over every plan.
    pub stats: Stats,
    /// Modules the native oracle compiled and ran (the original, each
    /// distinct optimized module).
    pub native_modules: u64,
    /// Optimized modules identical to one already checked natively (same
    /// fingerprint): same code, same behaviour, not compiled again.
    pub native_reused: u64,
    /// Optimized modules not run natively (plans other than `pipeline`
    /// outside the sample, see [`OracleConfig::native_plans_every`]).
    pub native_skipped: u64,
    /// Native executions started.
    pub native_runs: u64,
    /// Whether regalloc2's checker ran on this program's native code.
    pub regalloc_checked: bool,
    /// What the SMT oracle saw (nothing unless [`OracleConfig::smt`] is set).
    pub smt: crate::sweep::smt_counters::SmtCounts,
}

/// Whether `name` is a pass this build knows.
pub fn pass_exists(name: &str) -> bool {
    PASS_NAMES.contains(&name)
}

/// The pass plans to check: each requested pass alone (names this build does not
/// have are skipped), `n_random` random sequences of the requested passes other
/// than `pipeline`, and `pipeline` if requested.
pub fn pass_plans(requested: &[&str], seed: u64, n_random: usize) -> Vec<String> {
    let known: Vec<&str> = requested
        .iter()
        .copied()
        .filter(|n| pass_exists(n))
        .collect();
    let mut plans: Vec<String> = known
        .iter()
        .filter(|n| **n != "pipeline")
        .map(|n| n.to_string())
        .collect();
    let singles: Vec<&str> = known.iter().copied().filter(|n| *n != "pipeline").collect();
    if !singles.is_empty() {
        let mut rng = Rng::new(seed);
        for _ in 0..n_random {
            let len = 2 + rng.below(3) as usize;
            let seq: Vec<&str> = (0..len)
                .map(|_| singles[rng.below(singles.len() as u64) as usize])
                .collect();
            plans.push(seq.join(","));
        }
    }
    if known.contains(&"pipeline") {
        plans.push("pipeline".to_string());
    }
    // Plans that run the peephole engine get a random worklist seed, `plan#N`.
    let mut rng = Rng::new(seed ^ 0x005e_ed0f_9ee9);
    for plan in &mut plans {
        if plan.contains("peeps") || plan.contains("pipeline") {
            plan.push_str(&format!("#{}", rng.below(1 << 32)));
        }
    }
    plans
}

/// Split `plan#seed` into the pass list and the peephole worklist seed (0 when absent).
pub fn split_plan(plan: &str) -> (&str, u64) {
    match plan.split_once('#') {
        Some((list, seed)) => (list, seed.parse().unwrap_or(0)),
        None => (plan, 0),
    }
}

/// The interpreter's run of the original on one conclusive input: what every
/// other execution of that input is compared with.
pub struct Baseline {
    /// The input's index in the program's inputs.
    pub input: usize,
    /// What the original did.
    pub behaviour: Behaviour,
    /// Fuel it used (B: optimized runs get 2B + 16).
    pub fuel_used: u64,
    /// Loads it executed.
    pub loads: u64,
    /// Stores it executed.
    pub stores: u64,
}

/// How many more loads + stores than the original an optimized run may
/// execute: no pass speculates an access today, so none (README, "Never worse").
pub fn allowed_extra() -> u64 {
    0
}

/// The `pessimization` finding's part and detail when the optimized run
/// (`loads`, `stores`) executed more accesses than the original allows.
pub fn pessimization(original: (u64, u64), optimized: (u64, u64)) -> Option<(String, String)> {
    let (before, after) = (original.0 + original.1, optimized.0 + optimized.1);
    if after <= before + allowed_extra() {
        return None;
    }
    let detail = format!(
        "original: {} loads + {} stores = {before}\noptimized: {} loads + {} stores = {after} (allowed extra: {})",
        original.0,
        original.1,
        optimized.0,
        optimized.1,
        allowed_extra()
    );
    Some(("more loads+stores".to_string(), detail))
}

/// The program and plan a finding is about: the module an oracle checks
/// (the original for plan `none`, else that plan's output).
#[derive(Copy, Clone)]
pub struct FindingSite<'a> {
    /// The plan (`none` for the original).
    pub plan: &'a str,
    /// The module under check.
    pub module: &'a Module,
    /// The function that runs.
    pub func: FuncId,
    /// The program's inputs (baselines index into them).
    pub inputs: &'a [InputSpec],
    /// The oracle's limits.
    pub cfg: &'a OracleConfig,
    /// Whether `module` is a plan's output rather than the original.
    pub optimized: bool,
}

impl FindingSite<'_> {
    /// The fuel a run of baseline `b`'s input gets: the original's budget
    /// for the original, 2B + 16 for an optimized module.
    pub fn fuel(&self, b: &Baseline) -> u64 {
        if self.optimized {
            2 * b.fuel_used + 16
        } else {
            self.cfg.fuel
        }
    }

    /// A finding on the input of baseline `b`.
    pub fn finding(
        &self,
        kind: FindingKind,
        part: String,
        detail: String,
        b: &Baseline,
        actual: Option<Behaviour>,
    ) -> Finding {
        Finding {
            passes: self.plan.to_string(),
            kind,
            part,
            detail,
            module: self.module.clone(),
            func: self.func,
            input: Some(self.inputs[b.input].clone()),
            expected: Some(b.behaviour.clone()),
            actual,
            fuel: self.cfg.fuel,
            seed: None,
        }
    }
}

/// An oracle beside the interpreter's: given the interpreter's baselines of
/// the original, it checks a module — first the original (plan `none`), then
/// each plan's output — and says what diverged. Adding one is a module
/// implementing this, a line in [`oracles`], a `FindingKind` and a name for
/// `--oracles`.
pub trait Oracle {
    /// Its name on the command line (`native`).
    fn name(&self) -> &'static str;
    /// Check `site.module` on the baselines' inputs; the first divergence.
    fn check(&mut self, site: &FindingSite<'_>, baselines: &[Baseline]) -> Option<Finding>;
    /// Add what it did to the program's counters.
    fn tally(&self, _res: &mut ProgramResult) {}
}

/// The oracles `cfg` turns on beside the interpreter, for the program
/// `module` (the original).
pub fn oracles(cfg: &OracleConfig, module: &Module) -> Vec<Box<dyn Oracle>> {
    let mut list: Vec<Box<dyn Oracle>> = Vec::new();
    if cfg.native {
        list.push(Box::new(native::NativeOracle::new(cfg, module)));
    }
    list
}

/// The first finding of `oracles` on `site`.
fn check_oracles(
    oracles: &mut [Box<dyn Oracle>],
    site: &FindingSite<'_>,
    baselines: &[Baseline],
) -> Option<Finding> {
    oracles.iter_mut().find_map(|o| o.check(site, baselines))
}

/// The interpreter limits of `cfg` with `fuel`.
pub fn config(cfg: &OracleConfig, fuel: u64) -> Config {
    Config {
        fuel,
        heap_words: cfg.heap_words,
        ..Config::default()
    }
}

/// How a plan optimizes a module: the plan string (`list#seed`), the module to
/// transform in place, and the statistics to add to.
pub type Optimizer<'a> = dyn Fn(&str, &mut Module, &mut Stats) -> Result<(), PassError> + 'a;

/// The optimizer of the real passes: the plan's pass list through the
/// [`PassManager`] with the peephole seed and invariant checks forced on.
pub fn run_plan(plan: &str, module: &mut Module, stats: &mut Stats) -> Result<(), PassError> {
    absorb(stats, plan_manager(plan)?.run(module)?);
    Ok(())
}

/// [`run_plan`] for a `module` the verifier accepts as it is, such as the copy
/// of a program [`check_program_with`] verified before optimizing it: the
/// pass manager then verifies only what the passes changed
/// ([`PassManager::run_verified`]).
pub fn run_plan_verified(
    plan: &str,
    module: &mut Module,
    stats: &mut Stats,
) -> Result<(), PassError> {
    absorb(stats, plan_manager(plan)?.run_verified(module)?);
    Ok(())
}

/// The pass manager of `plan` (`list#seed`), its invariant checks forced on.
fn plan_manager(plan: &str) -> Result<PassManager, PassError> {
    let (list, seed) = split_plan(plan);
    Ok(PassManager::from_list(list)?
        .with_seed(seed)
        .with_invariant_checks(passes::peeps::CheckMode::FixedPoint))
}

/// Add `s` into `stats` (moved in when `stats` is still empty: the usual case).
fn absorb(stats: &mut Stats, s: Stats) {
    if stats.is_empty() {
        *stats = s;
    } else {
        stats.merge(&s);
    }
}

/// Check `module`'s function `func` on `inputs` against every plan in `plans`.
pub fn check_program(
    module: &Module,
    func: FuncId,
    inputs: &[InputSpec],
    plans: &[String],
    cfg: &OracleConfig,
) -> ProgramResult {
    check_program_with(module, func, inputs, plans, &run_plan_verified, cfg)
}

/// [`check_program`] with another optimizer than the real passes (tests plug in
/// deliberately broken transformations this way).
pub fn check_program_with(
    module: &Module,
    func: FuncId,
    inputs: &[InputSpec],
    plans: &[String],
    optimize: &Optimizer<'_>,
    cfg: &OracleConfig,
) -> ProgramResult {
    let mut res = check_program_interp(module, func, inputs, plans, optimize, cfg);
    if let Some(opts) = &cfg.smt {
        if res.valid && !res.findings.iter().any(|f| f.passes == "none") {
            let found = smt_check::check_plans(
                module,
                plans,
                optimize,
                opts,
                cfg,
                &res.findings,
                &mut res.smt,
            );
            res.findings.extend(found);
        }
    }
    res
}

/// The interpreter (and native) part of [`check_program_with`].
fn check_program_interp(
    module: &Module,
    func: FuncId,
    inputs: &[InputSpec],
    plans: &[String],
    optimize: &Optimizer<'_>,
    cfg: &OracleConfig,
) -> ProgramResult {
    // Verified as a whole once: optimizers are given copies of a module the
    // verifier accepts (see `run_plan_verified`).
    let mut res = ProgramResult {
        valid: passes::verified::verify_kept(module).is_ok(),
        ..ProgramResult::default()
    };
    if !res.valid {
        return res;
    }
    let prog = Program::new(module);
    // Each input is validated once, against the original; an optimized
    // module's run re-validates only if its signature or layout differ.
    let valid: Vec<_> = inputs.iter().map(|i| prog.validate(func, i)).collect();
    let mut baselines = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        res.runs += 1;
        let Ok((exec, violations)) = valid[i]
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|v| interp::run_checked_valid(&prog, func, v, &config(cfg, cfg.fuel)))
        else {
            res.inconclusive += 1;
            continue;
        };
        if let Some(v) = violations.first() {
            res.findings
                .push(effects_finding(module, func, input, &exec, v, cfg));
            return res;
        }
        match exec.behaviour.outcome {
            Outcome::Trap(t) if t.is_inconclusive() => {
                res.inconclusive += 1;
                continue;
            }
            Outcome::Trap(t) => {
                res.trapping += 1;
                *res.trap_kinds.entry(t.name().to_string()).or_default() += 1;
            }
            Outcome::Return(_) => {}
        }
        let aliased = params_alias(input);
        res.param_aliasing |= aliased;
        res.param_aliasing_runs += aliased as u64;
        res.sharing = res.sharing || shares_objects(input);
        baselines.push(Baseline {
            input: i,
            behaviour: exec.behaviour,
            fuel_used: exec.fuel_used,
            loads: exec.loads,
            stores: exec.stores,
        });
    }
    if baselines.is_empty() {
        return res;
    }
    let mut extra = oracles(cfg, module);
    let site = FindingSite {
        plan: "none",
        module,
        func,
        inputs,
        cfg,
        optimized: false,
    };
    if let Some(f) = check_oracles(&mut extra, &site, &baselines) {
        res.findings.push(f);
    } else {
        for plan in plans {
            res.plans_run += 1;
            if let Some(f) = check_plan(
                module,
                func,
                (inputs, &valid, &prog),
                &baselines,
                (plan, optimize),
                cfg,
                (&mut res.stats, &mut extra),
            ) {
                res.findings.push(f);
            }
        }
    }
    for o in &extra {
        o.tally(&mut res);
    }
    res
}

fn check_plan(
    module: &Module,
    func: FuncId,
    (inputs, valid, prog): (
        &[InputSpec],
        &[Result<ValidInputs<'_>, InputError>],
        &Program<'_>,
    ),
    baselines: &[Baseline],
    (plan, optimize): (&str, &Optimizer<'_>),
    cfg: &OracleConfig,
    (stats, extra): (&mut Stats, &mut [Box<dyn Oracle>]),
) -> Option<Finding> {
    let first = &baselines[0];
    let site = FindingSite {
        plan,
        module,
        func,
        inputs,
        cfg,
        optimized: true,
    };
    let finding = |kind, part: String, detail: String, b: &Baseline, actual| {
        site.finding(kind, part, detail, b, actual)
    };
    let mut optimized = module.clone();
    let mut plan_stats = Stats::default();
    match panics::catch(|| optimize(plan, &mut optimized, &mut plan_stats)) {
        Ok(Ok(())) => absorb(stats, plan_stats),
        Ok(Err(PassError::IllFormed { pass, errors })) => {
            let first_msg = errors
                .first()
                .map(|e| finding::normalize_digits(&e.message))
                .unwrap_or_default();
            let detail = errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n");
            return Some(finding(
                FindingKind::IllFormed,
                format!("after {pass}: {first_msg}"),
                detail,
                first,
                None,
            ));
        }
        Ok(Err(PassError::Invariant { pass, message })) => {
            return Some(finding(
                FindingKind::Invariant,
                format!(
                    "after {pass}: {}",
                    finding::normalize_digits(message.lines().next().unwrap_or_default())
                ),
                message,
                first,
                None,
            ));
        }
        Ok(Err(_)) => return None,
        Err(msg) => {
            return Some(finding(
                FindingKind::Panic,
                panic_part(&msg),
                format!("panic while optimizing: {msg}"),
                first,
                None,
            ))
        }
    }
    let opt_prog = match panics::catch(|| Program::new_like(&optimized, prog)) {
        Ok(p) => p,
        Err(msg) => {
            return Some(finding(
                FindingKind::Panic,
                panic_part(&msg),
                format!("panic lowering the optimized module: {msg}"),
                first,
                None,
            ))
        }
    };
    for b in baselines {
        let budget = 2 * b.fuel_used + 16;
        // Compared with the original's behaviour as it ends: built only when it differs.
        let run = panics::catch(|| {
            valid[b.input].as_ref().map_err(Clone::clone).and_then(|v| {
                let c = config(cfg, budget);
                interp::run_checked_valid_against(&opt_prog, func, v, &c, &b.behaviour)
            })
        });
        let actual = match run {
            Ok(Ok((e, violations))) => {
                if let Some(v) = violations.first() {
                    let behaviour = e.behaviour.unwrap_or_else(|| b.behaviour.clone());
                    return Some(finding(
                        FindingKind::Effects,
                        finding::normalize_digits(&v.to_string()),
                        format!("{v}\noptimized module:\n{}", ir::print_module(&optimized)),
                        b,
                        Some(behaviour),
                    ));
                }
                e
            }
            Ok(Err(e)) => {
                return Some(finding(
                    FindingKind::Panic,
                    "optimized signature changed".to_string(),
                    format!("the optimized function no longer accepts the inputs: {e}"),
                    b,
                    None,
                ))
            }
            Err(msg) => {
                return Some(finding(
                    FindingKind::Panic,
                    panic_part(&msg),
                    format!("panic running the optimized module: {msg}"),
                    b,
                    None,
                ))
            }
        };
        if let Some(differs) = actual.behaviour {
            if let Some((kind, part)) = compare(&b.behaviour, &differs) {
                let detail = format!(
                    "original:\n{}\noptimized (fuel {budget}):\n{}\noptimized module:\n{}",
                    b.behaviour,
                    differs,
                    ir::print_module(&optimized)
                );
                return Some(finding(kind, part, detail, b, Some(differs)));
            }
        }
        let returned = matches!(b.behaviour.outcome, Outcome::Return(_));
        if let Some((part, counts)) = returned
            .then(|| pessimization((b.loads, b.stores), (actual.loads, actual.stores)))
            .flatten()
        {
            let detail = format!(
                "{counts}\noptimized module:\n{}",
                ir::print_module(&optimized)
            );
            // The behaviours are equal (compared above).
            return Some(finding(
                FindingKind::Pessimization,
                part,
                detail,
                b,
                Some(b.behaviour.clone()),
            ));
        }
    }
    let site = FindingSite {
        module: &optimized,
        ..site
    };
    check_oracles(extra, &site, baselines)
}

/// A finding for an effect violation while running the original program: the
/// effects table (or the environment) is wrong, whatever the passes do.
fn effects_finding(
    module: &Module,
    func: FuncId,
    input: &InputSpec,
    exec: &interp::Execution,
    v: &interp::EffectViolation,
    cfg: &OracleConfig,
) -> Finding {
    Finding {
        passes: "none".to_string(),
        kind: FindingKind::Effects,
        part: finding::normalize_digits(&v.to_string()),
        detail: v.to_string(),
        module: module.clone(),
        func,
        input: Some(input.clone()),
        expected: Some(exec.behaviour.clone()),
        actual: None,
        fuel: cfg.fuel,
        seed: None,
    }
}

/// The signature part of a panic: the message with digits normalized, plus where.
pub(crate) fn panic_part(msg: &str) -> String {
    match msg.rsplit_once(" at ") {
        Some((m, loc)) => format!("{} at {loc}", finding::normalize_digits(m)),
        None => finding::normalize_digits(msg),
    }
}
