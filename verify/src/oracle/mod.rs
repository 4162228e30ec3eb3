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
pub mod fuzz;
pub mod panics;
pub mod smt_check;

use crate::gen::rng::Rng;
use crate::inputs::{params_alias, shares_objects};
pub use finding::{compare, reduce, Finding, FindingKind};
use interp::{Behaviour, Config, Outcome, Program};
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

struct Baseline {
    input: usize,
    behaviour: Behaviour,
    fuel_used: u64,
    loads: u64,
    stores: u64,
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

/// The program and plan a finding is about.
#[derive(Copy, Clone)]
struct FindingSite<'a> {
    plan: &'a str,
    module: &'a Module,
    func: FuncId,
    inputs: &'a [InputSpec],
    cfg: &'a OracleConfig,
}

impl FindingSite<'_> {
    /// A finding on the input of baseline `b`.
    fn finding(
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

fn config(cfg: &OracleConfig, fuel: u64) -> Config {
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
    let (list, seed) = split_plan(plan);
    let pm = PassManager::from_list(list)?
        .with_seed(seed)
        .with_invariant_checks(passes::peeps::CheckMode::FixedPoint);
    stats.merge(&pm.run(module)?);
    Ok(())
}

/// Check `module`'s function `func` on `inputs` against every plan in `plans`.
pub fn check_program(
    module: &Module,
    func: FuncId,
    inputs: &[InputSpec],
    plans: &[String],
    cfg: &OracleConfig,
) -> ProgramResult {
    check_program_with(module, func, inputs, plans, &run_plan, cfg)
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
    let mut res = ProgramResult {
        valid: ir::verify_module(module).is_ok(),
        ..ProgramResult::default()
    };
    if !res.valid {
        return res;
    }
    let prog = Program::new(module);
    let mut baselines = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        res.runs += 1;
        let Ok((exec, violations)) =
            interp::run_checked(&prog, func, input, &config(cfg, cfg.fuel))
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
        res.sharing |= shares_objects(input);
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
    if cfg.native {
        let site = FindingSite {
            plan: "none",
            module,
            func,
            inputs,
            cfg,
        };
        if let Some(f) = check_native(&site, &baselines, &|_| cfg.fuel) {
            res.findings.push(f);
            return res;
        }
    }
    for plan in plans {
        res.plans_run += 1;
        if let Some(f) = check_plan(
            module,
            func,
            inputs,
            &baselines,
            (plan, optimize),
            cfg,
            &mut res.stats,
        ) {
            res.findings.push(f);
        }
    }
    res
}

fn check_plan(
    module: &Module,
    func: FuncId,
    inputs: &[InputSpec],
    baselines: &[Baseline],
    (plan, optimize): (&str, &Optimizer<'_>),
    cfg: &OracleConfig,
    stats: &mut Stats,
) -> Option<Finding> {
    let first = &baselines[0];
    let site = FindingSite {
        plan,
        module,
        func,
        inputs,
        cfg,
    };
    let finding = |kind, part: String, detail: String, b: &Baseline, actual| {
        site.finding(kind, part, detail, b, actual)
    };
    let mut optimized = module.clone();
    let mut plan_stats = Stats::default();
    match panics::catch(|| optimize(plan, &mut optimized, &mut plan_stats)) {
        Ok(Ok(())) => stats.merge(&plan_stats),
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
    let opt_prog = match panics::catch(|| Program::new(&optimized)) {
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
        let run = panics::catch(|| {
            interp::run_checked(&opt_prog, func, &inputs[b.input], &config(cfg, budget))
        });
        let actual = match run {
            Ok(Ok((e, violations))) => {
                if let Some(v) = violations.first() {
                    return Some(finding(
                        FindingKind::Effects,
                        finding::normalize_digits(&v.to_string()),
                        format!("{v}\noptimized module:\n{}", ir::print_module(&optimized)),
                        b,
                        Some(e.behaviour),
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
        if let Some((kind, part)) = compare(&b.behaviour, &actual.behaviour) {
            let detail = format!(
                "original:\n{}\noptimized (fuel {budget}):\n{}\noptimized module:\n{}",
                b.behaviour,
                actual.behaviour,
                ir::print_module(&optimized)
            );
            return Some(finding(kind, part, detail, b, Some(actual.behaviour)));
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
            return Some(finding(
                FindingKind::Pessimization,
                part,
                detail,
                b,
                Some(actual.behaviour),
            ));
        }
    }
    if cfg.native {
        let site = FindingSite {
            module: &optimized,
            ..site
        };
        return check_native(&site, baselines, &|b| 2 * b.fuel_used + 16);
    }
    None
}

/// The native oracle: compile `module` (regalloc2's checker on, registers
/// scrambled after calls) and run it on each baseline's input with
/// `budget(baseline)` fuel; the first divergence from the interpreter's
/// baseline is a `mismatch-native` finding for `plan`. With `cfg.isolate` the
/// runs happen in a forked worker; a worker that faults, hangs or dies is a
/// `native-crash` finding on the input it was running.
fn check_native(
    site: &FindingSite<'_>,
    baselines: &[Baseline],
    budget: &dyn Fn(&Baseline) -> u64,
) -> Option<Finding> {
    let FindingSite { module, cfg, .. } = *site;
    let finding = |part: String, detail: String, b: &Baseline| {
        site.finding(FindingKind::MismatchNative, part, detail, b, None)
    };
    let opts = codegen::CompileOptions {
        check_regalloc: true,
        listing: true,
        chaos: Some(module.fingerprint()),
    };
    let build = || codegen::NativeProgram::with_sabotage(module, opts, cfg.sabotage);
    let native = match panics::catch(build) {
        Ok(Ok(n)) => n,
        Ok(Err(e)) => {
            let msg = e.to_string();
            return Some(finding(
                format!("backend: {}", finding::normalize_digits(&msg)),
                msg,
                &baselines[0],
            ));
        }
        Err(msg) => {
            return Some(finding(
                format!("backend panic: {}", panic_part(&msg)),
                msg,
                &baselines[0],
            ))
        }
    };
    if !cfg.isolate {
        let d = run_native(site, &native, baselines, budget, &mut |_| {})?;
        return Some(finding(d.part, d.detail, &baselines[d.index]));
    }
    let report = codegen::isolate::run_isolated(NATIVE_TIMEOUT, |rep| {
        let started = &mut |i: usize| rep.send(TAG_STARTED, &(i as u32).to_le_bytes());
        if let Some(d) = run_native(site, &native, baselines, budget, started) {
            let text = format!("{}\n{}\0{}", d.index, d.part, d.detail);
            rep.send(TAG_DIVERGED, text.as_bytes());
        }
    });
    let mut last = 0;
    for (tag, payload) in &report.records {
        match *tag {
            TAG_STARTED if payload.len() == 4 => {
                last = u32::from_le_bytes(payload[..4].try_into().unwrap()) as usize;
            }
            TAG_DIVERGED => {
                let text = String::from_utf8_lossy(payload);
                let (head, detail) = text.split_once('\0').unwrap_or((&text, ""));
                let (index, part) = head.split_once('\n').unwrap_or(("0", head));
                let b = &baselines[index.parse::<usize>().unwrap_or(0).min(baselines.len() - 1)];
                return Some(finding(part.to_string(), detail.to_string(), b));
            }
            _ => {}
        }
    }
    let failure = report.failure?;
    let b = &baselines[last.min(baselines.len() - 1)];
    let where_ = match failure {
        codegen::isolate::Failure::Signal { rip, .. } if rip != 0 => {
            native.disassembly_around(rip, 8)
        }
        _ => String::new(),
    };
    let detail = format!(
        "native worker (fuel {}): {failure}\n{where_}input: {}\nmodule:\n{}",
        budget(b),
        ir::print_input_spec(&site.inputs[b.input], module, module.func(site.func)),
        ir::print_module(module)
    );
    Some(site.finding(FindingKind::NativeCrash, failure.part(), detail, b, None))
}

/// How long a worker may run the native code of one module (each run is
/// bounded by fuel; only a miscompiled loop that skips its fuel charge or a
/// wedged runtime comes near this).
const NATIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// Worker record: the index (u32 LE) of the baseline about to run.
const TAG_STARTED: u8 = 1;
/// Worker record: `index\npart\0detail` of the first divergence.
const TAG_DIVERGED: u8 = 2;

/// A native divergence, in the shape the worker can send back.
struct NativeDivergence {
    index: usize,
    part: String,
    detail: String,
}

/// Run `native` on each baseline's input (calling `started(i)` first); the
/// first divergence from the interpreter, if any.
fn run_native(
    site: &FindingSite<'_>,
    native: &codegen::NativeProgram<'_>,
    baselines: &[Baseline],
    budget: &dyn Fn(&Baseline) -> u64,
    started: &mut dyn FnMut(usize),
) -> Option<NativeDivergence> {
    for (index, b) in baselines.iter().enumerate() {
        started(index);
        let fuel = budget(b);
        let input = &site.inputs[b.input];
        let actual = match native.try_run(site.func, input, &config(site.cfg, fuel)) {
            Ok(e) => e.behaviour,
            Err(e) => {
                let (part, detail) = ("inputs rejected".into(), e.to_string());
                return Some(NativeDivergence {
                    index,
                    part,
                    detail,
                });
            }
        };
        if let Some((kind, part)) = compare(&b.behaviour, &actual) {
            let detail = format!(
                "interpreter:\n{}\nnative (fuel {fuel}):\n{}\nmodule:\n{}",
                b.behaviour,
                actual,
                ir::print_module(site.module)
            );
            let part = format!("{kind}: {part}");
            return Some(NativeDivergence {
                index,
                part,
                detail,
            });
        }
    }
    None
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
fn panic_part(msg: &str) -> String {
    match msg.rsplit_once(" at ") {
        Some((m, loc)) => format!("{} at {loc}", finding::normalize_digits(m)),
        None => finding::normalize_digits(msg),
    }
}
