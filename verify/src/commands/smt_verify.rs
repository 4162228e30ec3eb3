//! `loadstar verify`: SMT translation validation. Each function of a module is
//! checked against its optimized version (`--passes`) or against the function of
//! the same name in a second module (`--against`); every counterexample is
//! replayed in the interpreter before it is reported, and one the interpreter
//! does not confirm is a checker bug (`smt-unconfirmed`), never a miscompile.

use crate::load::{load_file, Diagnostic};
use crate::oracle::compare;
use interp::{Behaviour, Config, Outcome, Program};
use ir::{FuncId, InputSpec, Module};
use passes::PassManager;
use smt::{check_pair, Options, Verdict};
use std::fmt::Write;
use std::time::Duration;

/// One function's result, after replay.
#[derive(Clone, Debug)]
pub struct FuncReport {
    /// The function's name, without `@`.
    pub name: String,
    /// The solver's verdict.
    pub verdict: Verdict,
    /// For a counterexample: whether the interpreter confirmed it.
    pub confirmed: Option<bool>,
    /// For a counterexample: the input text (IR.md §7).
    pub input_text: Option<String>,
    /// For a counterexample: the two behaviours the interpreter showed.
    pub replay: Option<String>,
    /// For a counterexample both sides ran on: the original's and the optimized behaviour.
    pub behaviours: Option<(Behaviour, Behaviour)>,
    /// Encoding and solving time.
    pub time: Duration,
}

impl FuncReport {
    /// The verdict word of the report: the solver's, or `smt-unconfirmed`.
    pub fn label(&self) -> String {
        match (&self.verdict, self.confirmed) {
            (Verdict::Counterexample { .. }, Some(false)) => "smt-unconfirmed".to_string(),
            (v, _) => v.label(),
        }
    }

    /// Whether this is a finding (a counterexample, confirmed or not).
    pub fn is_finding(&self) -> bool {
        matches!(self.verdict, Verdict::Counterexample { .. })
    }
}

/// Check every function of `orig` against the function of the same name in `opt`.
pub fn verify_modules(orig: &Module, opt: &Module, opts: &Options) -> Vec<FuncReport> {
    orig.funcs
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let of = FuncId::new(i);
            match opt.func_by_name(&f.name) {
                Some(pf) => check_and_replay(orig, of, opt, pf, opts, &Config::default()),
                None => FuncReport {
                    name: f.name.clone(),
                    verdict: Verdict::Unsupported(format!(
                        "no function @{} in the optimized module",
                        f.name
                    )),
                    confirmed: None,
                    input_text: None,
                    replay: None,
                    behaviours: None,
                    time: Duration::ZERO,
                },
            }
        })
        .collect()
}

/// Check function `of` of `orig` against `pf` of `opt` and replay a
/// counterexample with the limits of `cfg`. A counterexample on which the
/// original hits a resource limit (IR.md §7: inconclusive) can be neither
/// confirmed nor refuted: its verdict becomes `unknown`.
pub fn check_and_replay(
    orig: &Module,
    of: FuncId,
    opt: &Module,
    pf: FuncId,
    opts: &Options,
    cfg: &Config,
) -> FuncReport {
    let checked = check_pair(orig, of, opt, pf, opts);
    let f = orig.func(of);
    let mut r = FuncReport {
        name: f.name.clone(),
        verdict: checked.verdict,
        confirmed: None,
        input_text: None,
        replay: None,
        behaviours: None,
        time: checked.time,
    };
    if let Verdict::Counterexample { input, .. } = &r.verdict {
        let text = ir::print_input_spec(input, orig, f);
        match replay_with(orig, of, opt, pf, input, cfg) {
            Replay::Inconclusive(why) => {
                r.verdict = Verdict::Unknown(format!("counterexample inconclusive: {why}"));
            }
            Replay::Ran(a, b) => {
                r.confirmed = Some(compare(&a, &b).is_some());
                r.replay = Some(format!("original:\n{a}\noptimized:\n{b}"));
                r.behaviours = Some((a, b));
                r.input_text = Some(text);
            }
            Replay::Unfit(why) => {
                r.confirmed = Some(false);
                r.replay = Some(why);
                r.input_text = Some(text);
            }
        }
    }
    r
}

/// What replaying a counterexample in the interpreter gave.
#[derive(Clone, Debug)]
pub enum Replay {
    /// Both sides ran: the original's and the optimized function's behaviours.
    Ran(Behaviour, Behaviour),
    /// The original hit a resource limit (heap, stack, fuel): inconclusive.
    Inconclusive(String),
    /// The input does not fit one of the functions (a checker bug).
    Unfit(String),
}

/// Run both functions on `input` in the interpreter with the limits of `cfg`
/// (IR.md §7's fuel rule: the optimized side gets 2B + 16).
pub fn replay_with(
    orig: &Module,
    of: FuncId,
    opt: &Module,
    pf: FuncId,
    input: &InputSpec,
    cfg: &Config,
) -> Replay {
    let a = match Program::new(orig).try_run(of, input, cfg) {
        Ok(e) => e,
        Err(e) => return Replay::Unfit(format!("the input does not fit the original: {e}")),
    };
    if let Outcome::Trap(t) = a.behaviour.outcome {
        if t.is_inconclusive() {
            return Replay::Inconclusive(format!("the original traps {}", t.name()));
        }
    }
    let budget = Config {
        fuel: 2 * a.fuel_used + 16,
        ..*cfg
    };
    match Program::new(opt).try_run(pf, input, &budget) {
        Ok(b) => Replay::Ran(a.behaviour, b.behaviour),
        Err(e) => Replay::Unfit(format!(
            "the input does not fit the optimized function: {e}"
        )),
    }
}

/// The report text of `loadstar verify` and its exit status (1 when a finding).
pub fn render(reports: &[FuncReport]) -> (String, u8) {
    let mut out = String::new();
    for r in reports {
        let _ = write!(
            out,
            "@{}: {} ({:.3} s)",
            r.name,
            r.label(),
            r.time.as_secs_f64()
        );
        if let Verdict::Counterexample { part, .. } = &r.verdict {
            let _ = write!(out, ": {part}");
        }
        out.push('\n');
        if let Some(t) = &r.input_text {
            let _ = writeln!(out, "counterexample: {t}");
        }
        if let Some(t) = &r.replay {
            for l in t.lines() {
                let _ = writeln!(out, "  {l}");
            }
        }
    }
    let status = u8::from(reports.iter().any(FuncReport::is_finding));
    (out, status)
}

/// `loadstar verify FILE --passes LIST`: optimize, then check each function.
pub fn verify_passes(
    file: &str,
    passes: &str,
    opts: &Options,
) -> Result<Vec<FuncReport>, Diagnostic> {
    let loaded = load_file(file)?;
    let pm = PassManager::from_list(passes).map_err(|e| Diagnostic(format!("error: {e}")))?;
    let mut opt = loaded.module.clone();
    pm.run(&mut opt)
        .map_err(|e| Diagnostic(format!("{file}: internal error: {e}")))?;
    Ok(verify_modules(&loaded.module, &opt, opts))
}

/// `loadstar verify ORIG --against OPT`.
pub fn verify_against(
    orig: &str,
    opt: &str,
    opts: &Options,
) -> Result<Vec<FuncReport>, Diagnostic> {
    let a = load_file(orig)?;
    let b = load_file(opt)?;
    Ok(verify_modules(&a.module, &b.module, opts))
}
