//! The native oracle: the x86-64 code of the original (same limits as the
//! interpreter) and of every plan's output (budget 2B + 16) must behave as
//! the interpreter's baseline; a divergence is `mismatch-native`, a worker
//! that faults, hangs or dies is `native-crash`.
//!
//! Per program it compiles each distinct module once: a module identical to
//! one that already matched (same fingerprint; the original with fuel B ran
//! to the baseline's end, so with 2B + 16 it runs the same way) is reused.
//! Two knobs trade coverage for speed in the sweep, both off (everything
//! checked) by default: regalloc2's checker on one program in
//! `regalloc_check_every`, and the native code of plans other than
//! `pipeline` on one program in `native_plans_every` (the original and the
//! `pipeline` output always run natively).

use super::{compare, config, split_plan, Oracle, OracleConfig, ProgramResult};
use super::{finding, panic_part, panics, Baseline, Finding, FindingKind, FindingSite};
use ir::Module;

/// The native oracle's state for one program.
pub struct NativeOracle {
    /// Fingerprints of the modules whose native code matched.
    seen: Vec<u64>,
    /// Whether regalloc2's checker runs on this program's modules.
    check_regalloc: bool,
    /// Whether plans other than `pipeline` run natively for this program.
    all_plans: bool,
    modules: u64,
    reused: u64,
    skipped: u64,
    runs: u64,
}

impl NativeOracle {
    /// The oracle for the program whose original is `module`; the samples
    /// are chosen by its fingerprint.
    pub fn new(cfg: &OracleConfig, module: &Module) -> NativeOracle {
        let fp = module.fingerprint();
        let sampled = |every: u64, salt: u64| {
            every <= 1 || crate::gen::rng::hash_seq(&[fp, salt]).is_multiple_of(every)
        };
        NativeOracle {
            seen: Vec::new(),
            check_regalloc: sampled(cfg.regalloc_check_every, 1),
            all_plans: sampled(cfg.native_plans_every, 2),
            modules: 0,
            reused: 0,
            skipped: 0,
            runs: 0,
        }
    }
}

impl Oracle for NativeOracle {
    fn name(&self) -> &'static str {
        "native"
    }

    fn check(&mut self, site: &FindingSite<'_>, baselines: &[Baseline]) -> Option<Finding> {
        if site.optimized && !self.all_plans && split_plan(site.plan).0 != "pipeline" {
            self.skipped += 1;
            return None;
        }
        let fingerprint = site.module.fingerprint();
        if self.seen.contains(&fingerprint) {
            self.reused += 1;
            return None;
        }
        self.modules += 1;
        self.runs += baselines.len() as u64;
        let found = native_finding(site, baselines, self.check_regalloc, fingerprint);
        if found.is_none() {
            self.seen.push(fingerprint);
        }
        found
    }

    fn tally(&self, res: &mut ProgramResult) {
        res.native_modules += self.modules;
        res.native_reused += self.reused;
        res.native_skipped += self.skipped;
        res.native_runs += self.runs;
        res.regalloc_checked |= self.check_regalloc;
    }
}

/// Compile one module and run it natively (see [`NativeOracle`]).
fn native_finding(
    site: &FindingSite<'_>,
    baselines: &[Baseline],
    check_regalloc: bool,
    fingerprint: u64,
) -> Option<Finding> {
    let FindingSite { module, cfg, .. } = *site;
    let finding = |part: String, detail: String, b: &Baseline| {
        site.finding(FindingKind::MismatchNative, part, detail, b, None)
    };
    // The listing (IR text above each instruction) only serves the
    // disassembly of a fault, which only isolated runs can report.
    let opts = codegen::CompileOptions {
        check_regalloc,
        listing: cfg.isolate,
        chaos: Some(fingerprint),
        // Small leaves inlined in three modules of four (as `run --native`
        // does), every call kept a call in the fourth: the call convention
        // stays exercised.
        no_inline: fingerprint.is_multiple_of(4),
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
        let d = run_native(site, &native, baselines, &mut |_| {})?;
        return Some(finding(d.part, d.detail, &baselines[d.index]));
    }
    let report = codegen::isolate::run_isolated(NATIVE_TIMEOUT, |rep| {
        let started = &mut |i: usize| rep.send(TAG_STARTED, &(i as u32).to_le_bytes());
        if let Some(d) = run_native(site, &native, baselines, started) {
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
        site.fuel(b),
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
    started: &mut dyn FnMut(usize),
) -> Option<NativeDivergence> {
    for (index, b) in baselines.iter().enumerate() {
        started(index);
        let fuel = site.fuel(b);
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
