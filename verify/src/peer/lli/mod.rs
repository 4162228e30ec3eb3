//! LLVM's `lli` as a third executable opinion on the interpreter: run the
//! peer's translation of a module ([`super::translate`], `lli` flavour) with
//! `lli-14` on the inputs the oracle uses and compare the observable
//! behaviour — outcome, trace and heap (IR.md §7) — with the interpreter's.
//!
//! The environment (externs, volatile steps) is not re-implemented: the
//! runtime ([`runtime`]) sends every step to this process, which takes it
//! with the interpreter's own `loadstar_env_step` on the same arena, as the
//! native executor does; so a disagreement is about the execution of the
//! instructions, not about the environment's definition. Skipped (the
//! translation does not model them): inputs on which the interpreter runs
//! out of fuel, exhausts the heap or overflows the stack (IR.md §7:
//! inconclusive). Everything else the translation makes defined in LLVM:
//! every trap is an explicit branch to `@ls.trap`, divisions are guarded,
//! shifts masked, and `lli` runs the translation unoptimized.

pub mod batch;
pub mod runtime;
pub mod session;

use crate::oracle::finding::{compare, Finding, FindingKind};
use interp::{Behaviour, Config, Outcome, Program};
use ir::{FuncId, InputSpec, Module};
use session::Session;
use std::time::Duration;

/// Why `lli` gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum LliError {
    /// `lli` could not be started.
    #[error("cannot run `{0}` (install llvm-14 or set LOADSTAR_LLI): {1}")]
    NoLli(String, String),
    /// `lli` ended early (it rejected the module, crashed or hung).
    #[error("lli died: {0}")]
    Died(String),
    /// The runtime sent something that does not fit the protocol (a bad
    /// reference, a broken arena): the translated code went wrong.
    #[error("lli runtime protocol: {0}")]
    Protocol(String),
    /// A temporary file could not be written.
    #[error("lli temporary file: {0}")]
    Io(String),
    /// The inputs do not fit the heap.
    #[error("inputs: {0}")]
    Inputs(String),
    /// `opt` failed on the translation (with `o2`).
    #[error("{0}")]
    Opt(String),
}

/// One program to run: a module, the function and its inputs.
#[derive(Clone, Copy)]
pub struct Case<'a> {
    /// The module.
    pub module: &'a Module,
    /// The function run.
    pub func: FuncId,
    /// Its inputs.
    pub inputs: &'a [InputSpec],
}

/// An input on which `lli` and the interpreter disagree.
#[derive(Clone, Debug)]
pub struct Disagreement {
    /// The case (index into the cases checked).
    pub case: usize,
    /// The input (index into the case's inputs).
    pub input: usize,
    /// What the interpreter did.
    pub interp: Behaviour,
    /// What the translation did under `lli`, or why it gave no behaviour.
    pub lli: Result<Behaviour, String>,
}

impl Disagreement {
    /// The finding (kind `mismatch-lli`) for `case`, its part as the
    /// differential oracle's (or `lli died`).
    pub fn finding(&self, case: &Case<'_>, fuel: u64) -> Finding {
        let (part, detail) = match &self.lli {
            Ok(b) => (
                compare(&self.interp, b).map_or("?".to_string(), |(k, p)| format!("{k} {p}")),
                format!("interpreter:\n{}\nlli:\n{b}", self.interp),
            ),
            Err(e) => (
                "lli died".to_string(),
                format!("interpreter:\n{}\nlli: {e}", self.interp),
            ),
        };
        Finding {
            passes: "lli".to_string(),
            kind: FindingKind::MismatchLli,
            part,
            detail,
            module: case.module.clone(),
            func: case.func,
            input: Some(case.inputs[self.input].clone()),
            expected: Some(self.interp.clone()),
            actual: self.lli.as_ref().ok().cloned(),
            fuel,
            seed: None,
        }
    }
}

/// What a check saw.
#[derive(Clone, Debug, Default)]
pub struct LliTally {
    /// Programs checked.
    pub programs: u64,
    /// Inputs compared.
    pub compared: u64,
    /// Inputs skipped: the interpreter's run was inconclusive.
    pub skipped: u64,
    /// Inputs where both agree.
    pub agreed: u64,
    /// `lli` processes started.
    pub starts: u64,
    /// Environment steps (extern calls, volatile accesses) `lli` took.
    pub steps: u64,
    /// Compared inputs whose interpreter run trapped.
    pub traps: u64,
    /// The disagreements.
    pub disagreements: Vec<Disagreement>,
}

impl LliTally {
    /// Add another tally (its case indices shifted by `offset`).
    pub fn merge(&mut self, o: LliTally, offset: usize) {
        self.programs += o.programs;
        self.compared += o.compared;
        self.skipped += o.skipped;
        self.agreed += o.agreed;
        self.starts += o.starts;
        self.steps += o.steps;
        self.traps += o.traps;
        self.disagreements
            .extend(o.disagreements.into_iter().map(|mut d| {
                d.case += offset;
                d
            }));
    }
}

/// The interpreter's behaviour on every input of `case`, `None` where it is
/// inconclusive (out of fuel, heap or stack) or the input does not fit.
pub fn expected(case: &Case<'_>, cfg: &Config) -> Vec<Option<Behaviour>> {
    let prog = Program::new(case.module);
    case.inputs
        .iter()
        .map(|i| {
            let b = prog.try_run(case.func, i, cfg).ok()?.behaviour;
            match b.outcome {
                Outcome::Trap(t) if t.is_inconclusive() => None,
                _ => Some(b),
            }
        })
        .collect()
}

/// How long one `lli` process may run: a start plus a second per input.
fn timeout(inputs: usize) -> Duration {
    Duration::from_secs(20 + inputs as u64)
}

/// Run every case under `lli` (one process for all of them; a new one after
/// a process dies) and compare with `expected` (per case, per input; `None`
/// skips the input). `cfg` gives the heap budget; with `o2`, `lli` runs
/// what `opt -O2` makes of the translation (the peer's pipeline), which
/// checks that the translation's TBAA and attributes claim no more than
/// IR.md allows.
pub fn check_expected(
    cases: &[Case<'_>],
    expected: &[Vec<Option<Behaviour>>],
    cfg: &Config,
    o2: bool,
) -> Result<LliTally, LliError> {
    let mut tally = LliTally {
        programs: cases.len() as u64,
        ..LliTally::default()
    };
    let todo: usize = expected.iter().flatten().filter(|b| b.is_some()).count();
    tally.skipped = expected.iter().map(|e| e.len() as u64).sum::<u64>() - todo as u64;
    if todo == 0 {
        return Ok(tally);
    }
    let modules: Vec<&Module> = cases.iter().map(|c| c.module).collect();
    let mut translation = super::translate::translate_modules_for_lli(&modules);
    if o2 {
        translation = super::run_opt(&translation).map_err(|e| LliError::Opt(e.to_string()))?;
    }
    let funcs: Vec<FuncId> = cases.iter().map(|c| c.func).collect();
    let rt = runtime::runtime(&modules, &funcs, cfg.heap_words);
    let infos: Vec<interp::EnvInfo> = modules.iter().map(|m| interp::EnvInfo::new(m)).collect();
    let mut session: Option<Session> = None;
    for (c, case) in cases.iter().enumerate() {
        let f = case.module.func(case.func);
        for (i, want) in expected[c].iter().enumerate() {
            let Some(want) = want else { continue };
            let s = match session.as_mut() {
                Some(s) => s,
                None => {
                    tally.starts += 1;
                    match Session::start(&rt, &translation, timeout(todo)) {
                        Ok(s) => session.insert(s),
                        Err(e @ (LliError::Died(_) | LliError::Protocol(_))) => {
                            // `lli` rejected the batch: find the program(s)
                            // it rejects, each a disagreement of its own.
                            return Ok(rejected(cases, expected, cfg, o2, tally, e));
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            tally.compared += 1;
            tally.traps += u64::from(matches!(want.outcome, Outcome::Trap(_)));
            let entry = (c, f);
            let got = s.run(
                case.module,
                &infos[c],
                entry,
                &case.inputs[i],
                cfg.heap_words,
            );
            let got = match got {
                Ok(b) => Ok(b),
                Err(e @ (LliError::NoLli(..) | LliError::Io(_) | LliError::Opt(_))) => {
                    return Err(e)
                }
                Err(e) => {
                    // The process is gone or out of step: start afresh.
                    if let Some(s) = session.take() {
                        tally.steps += s.steps;
                    }
                    Err(e.to_string())
                }
            };
            if got.as_ref() == Ok(want) {
                tally.agreed += 1;
            } else {
                tally.disagreements.push(Disagreement {
                    case: c,
                    input: i,
                    interp: want.clone(),
                    lli: got,
                });
            }
        }
    }
    if let Some(s) = session {
        tally.steps += s.steps;
        s.quit();
    }
    Ok(tally)
}

/// The tally of a batch whose `lli` process did not start (`why`), with
/// `so_far` counted already: a batch of several cases is checked case by
/// case, and a single case disagrees on every input it was to compare.
fn rejected(
    cases: &[Case<'_>],
    expected: &[Vec<Option<Behaviour>>],
    cfg: &Config,
    o2: bool,
    so_far: LliTally,
    why: LliError,
) -> LliTally {
    let mut tally = LliTally {
        starts: so_far.starts,
        steps: so_far.steps,
        ..LliTally::default()
    };
    if cases.len() > 1 {
        for (c, case) in cases.iter().enumerate() {
            let one = std::slice::from_ref(case);
            let want = std::slice::from_ref(&expected[c]);
            let t = check_expected(one, want, cfg, o2)
                .unwrap_or_else(|e| rejected(one, want, cfg, o2, LliTally::default(), e));
            tally.merge(t, c);
        }
        return tally;
    }
    tally.programs = 1;
    for (i, want) in expected[0].iter().enumerate() {
        match want {
            None => tally.skipped += 1,
            Some(b) => {
                tally.compared += 1;
                tally.traps += u64::from(matches!(b.outcome, Outcome::Trap(_)));
                tally.disagreements.push(Disagreement {
                    case: 0,
                    input: i,
                    interp: b.clone(),
                    lli: Err(why.to_string()),
                });
            }
        }
    }
    tally
}

/// [`check_expected`] against the interpreter's own runs.
pub fn check(cases: &[Case<'_>], cfg: &Config, o2: bool) -> Result<LliTally, LliError> {
    let expected: Vec<_> = cases.iter().map(|c| expected(c, cfg)).collect();
    check_expected(cases, &expected, cfg, o2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "func @main(%x: i64) -> i64 {\nentry:\n  %d = sdiv 10, %x\n  ret %d\n}\n";

    /// A batch `lli` rejects is checked case by case; a single rejected
    /// case disagrees on every input it was to compare.
    #[test]
    fn a_rejected_batch_is_split_and_a_rejected_program_disagrees() {
        let m = crate::load::load_text(TEXT, "t.ir").unwrap().module;
        let f = m.func(FuncId::new(0));
        let inputs = crate::inputs::instantiate_all(&m, f, 3, 4);
        let case = Case {
            module: &m,
            func: FuncId::new(0),
            inputs: &inputs,
        };
        let cfg = Config::default();
        let want = expected(&case, &cfg);
        let why = || LliError::Died("rejected".into());
        let two = [case, case];
        let both = [want.clone(), want.clone()];
        let t = rejected(&two, &both, &cfg, false, LliTally::default(), why());
        assert_eq!((t.programs, t.compared, t.agreed), (2, 8, 8));
        assert!(t.disagreements.is_empty());
        let t = rejected(&[case], &both[..1], &cfg, false, LliTally::default(), why());
        assert_eq!((t.programs, t.compared, t.agreed), (1, 4, 0));
        assert_eq!(t.disagreements.len(), 4);
        assert!(t.disagreements[0]
            .lli
            .as_ref()
            .is_err_and(|e| e.contains("rejected")));
    }
}
