//! Checking one function against another: encode both over shared inputs,
//! ask z3 for an input on which they differ (with a per-query timeout, on a
//! per-thread solver reused with push/pop), and turn the answer into a verdict.

use crate::cex::extract;
use crate::compare::differences;
use crate::encode::{Encoder, Limits};
use crate::shared::Shared;
use ir::{FuncId, InputSpec, Module};
use std::time::{Duration, Instant};
use z3::ast::Bool;
use z3::{Params, SatResult, Solver};

/// Options of a check.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Loop iterations (retreating edges taken) per function body.
    pub unroll: usize,
    /// Nested calls inlined.
    pub inline_depth: u32,
    /// The solver budget per query, in milliseconds of one core's solver
    /// time: z3's deterministic resource count ([`RLIMIT_PER_MS`] units per
    /// millisecond), so verdicts do not depend on the machine's load, with a
    /// wall-clock backstop at [`WALL_FACTOR`] times the budget.
    pub timeout_ms: u32,
}

/// z3 resource units per millisecond of solver time (measured on this
/// machine: about 2.65 million per CPU second on generated programs).
pub const RLIMIT_PER_MS: u32 = 2_500;

/// The wall-clock backstop of a query, as a multiple of its budget (a
/// loaded machine gives the solver a fraction of a core).
pub const WALL_FACTOR: u32 = 10;

/// The memory z3 may use, in megabytes (z3's global `memory_max_size`):
/// past it inside the solver a query is `unknown`. Past it while the
/// encoding builds terms, z3 fails the call and the process dies (measured
/// with 20 MB: a segfault), so the limit is far above what a query needs and
/// the work per query is bounded by the resource count instead (docs/smt.md).
pub const MEMORY_MAX_MB: u32 = 4096;

/// z3's `smt.relevancy` level for every query (0: the relevancy filter off;
/// z3's default is 2).
pub const SMT_RELEVANCY: u32 = 0;

/// The reason of an `unknown` that hit the wall-clock backstop rather than
/// the resource count (a loaded machine: the same query may pass alone).
pub const WALL_CLOCK_TIMEOUT: &str = "timeout, wall clock";

/// The wall-clock backstop of a query with budget `ms`.
fn wall_limit(ms: u32) -> Duration {
    Duration::from_millis(u64::from(ms.max(1)) * u64::from(WALL_FACTOR))
}

/// The solver parameters of a query with budget `ms`.
fn budget(ms: u32) -> Params {
    let mut p = Params::new();
    let ms = ms.max(1);
    p.set_u32("rlimit", ms.saturating_mul(RLIMIT_PER_MS));
    p.set_u32("timeout", ms.saturating_mul(WALL_FACTOR));
    // Every atom is relevant (z3's relevancy filter off): on the generated
    // programs with loops and environment steps this proved about half of
    // the queries that timed out with the default (docs/smt.md, figures). A
    // search heuristic only: `unsat` means the same.
    p.set_u32("smt.relevancy", SMT_RELEVANCY);
    p
}

impl Default for Options {
    fn default() -> Self {
        Options {
            unroll: 4,
            inline_depth: 3,
            timeout_ms: 10_000,
        }
    }
}

/// The answer for one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Equivalent on every input.
    Proved,
    /// Equivalent on every input whose executions stay within the bounds (K iterations).
    ProvedBounded(usize),
    /// An input on which they differ, and the first differing part the model shows.
    Counterexample {
        /// The input, ready for `loadstar run --input`.
        input: InputSpec,
        /// The part of the behaviour that differs.
        part: String,
    },
    /// The solver gave up (timeout or resource limit).
    Unknown(String),
    /// The encoder cannot express this function.
    Unsupported(String),
}

impl Verdict {
    /// The verdict as `loadstar verify` prints it (without the input).
    pub fn label(&self) -> String {
        match self {
            Verdict::Proved => "proved".to_string(),
            Verdict::ProvedBounded(k) => format!("proved (bounded, {k})"),
            Verdict::Counterexample { .. } => "counterexample".to_string(),
            Verdict::Unknown(r) => format!("unknown ({r})"),
            Verdict::Unsupported(r) => format!("unsupported: {r}"),
        }
    }
}

/// A verdict and the time it took.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The verdict.
    pub verdict: Verdict,
    /// Encoding and solving time.
    pub time: Duration,
}

/// z3's global rewriter settings for every query (z3 reads them when a
/// solver or a simplification starts): `select(store(a, i, v), j)` becomes
/// `ite(i = j, v, select(a, j))` before the search (`blast_select_store`,
/// `expand_select_store`), and an `ite` under a bit-vector operation is
/// pushed outward (`push_ite_bv`: an object's identity `site + ite(c, 0, 1)`
/// becomes `ite(c, site, site + 1)`, so identities compare by case split, not
/// through an adder). Rewrites to equal terms: `unsat` means the same. On
/// `verify --generated 150 --seed 9000 --timeout-ms 1000 --unroll 2` they
/// took the unknowns from 9 to 5 (docs/smt.md, figures).
pub const REWRITER_PARAMS: [(&str, &str); 3] = [
    ("rewriter.expand_select_store", "true"),
    ("rewriter.blast_select_store", "true"),
    ("rewriter.push_ite_bv", "true"),
];

/// Set z3's global parameters once per process, before the first term.
fn init_globals() {
    static GLOBALS: std::sync::Once = std::sync::Once::new();
    GLOBALS.call_once(|| {
        z3::set_global_param("memory_max_size", &MEMORY_MAX_MB.to_string());
        for (k, v) in REWRITER_PARAMS {
            z3::set_global_param(k, v);
        }
    });
}

thread_local! {
    static SOLVER: Solver = {
        init_globals();
        Solver::new()
    };
}

/// Check function `of` of `orig` against function `pf` of `opt`.
pub fn check_pair(orig: &Module, of: FuncId, opt: &Module, pf: FuncId, opts: &Options) -> Checked {
    init_globals();
    let start = Instant::now();
    let verdict = check_inner(orig, of, opt, pf, opts);
    Checked {
        verdict,
        time: start.elapsed(),
    }
}

fn check_inner(orig: &Module, of: FuncId, opt: &Module, pf: FuncId, opts: &Options) -> Verdict {
    let (fa, fb) = (orig.func(of), opt.func(pf));
    let ta: Vec<_> = fa.params.iter().map(|p| fa.value_type(*p)).collect();
    let tb: Vec<_> = fb.params.iter().map(|p| fb.value_type(*p)).collect();
    if ta != tb || fa.ret != fb.ret {
        return Verdict::Unsupported("the two functions have different signatures".to_string());
    }
    if orig.structs != opt.structs || orig.globals != opt.globals || orig.externs != opt.externs {
        return Verdict::Unsupported(
            "the two modules declare different types, globals or externs".to_string(),
        );
    }
    let limits = Limits {
        unroll: opts.unroll,
        inline_depth: opts.inline_depth,
    };
    let mut sh = Shared::new(orig, &ta, &[opt]);
    sh.env_leaves = Some(crate::reach::touched_leaves(&sh, &[orig, opt]));
    let a = match Encoder::new(orig, &mut sh, limits).encode(of) {
        Ok(s) => s,
        Err(e) => return Verdict::Unsupported(e),
    };
    let b = match Encoder::new(opt, &mut sh, limits)
        .reusing(&a.steps)
        .encode(pf)
    {
        Ok(s) => s,
        Err(e) => return Verdict::Unsupported(e),
    };
    sh.assumptions
        .extend(crate::env::pair_steps(&a.steps, &b.steps));
    let parts = differences(&sh, &a, &b, fa.ret.is_some());
    let conds: Vec<Bool> = parts.iter().map(|(_, c)| c.clone()).collect();
    let differ = Bool::or(&conds);
    let bounded = a.bounded || b.bounded;
    SOLVER.with(|s| {
        let p = budget(opts.timeout_ms);
        s.set_params(&p);
        s.push();
        for x in &sh.assumptions {
            s.assert(x);
        }
        s.assert(a.sink.not());
        s.assert(b.sink.not());
        s.assert(&differ);
        // Ask once with the whole budget; when there is a counterexample,
        // prefer a small input (short arrays) if one exists within a quarter
        // of the budget more. (Asking with the preference first cost every
        // proof a quarter of its budget for nothing.)
        let asked = Instant::now();
        let r = s.check();
        let wall_out = asked.elapsed() >= wall_limit(opts.timeout_ms);
        let mut found = None;
        if r == SatResult::Sat {
            found = s.get_model();
            if !sh.preferences.is_empty() {
                s.push();
                for x in &sh.preferences {
                    s.assert(x);
                }
                s.set_params(&budget(opts.timeout_ms / 4));
                if s.check() == SatResult::Sat {
                    found = s.get_model().or(found);
                }
                s.pop(1);
            }
        }
        let verdict = match r {
            SatResult::Unsat => {
                if bounded {
                    Verdict::ProvedBounded(opts.unroll)
                } else {
                    Verdict::Proved
                }
            }
            SatResult::Unknown => Verdict::Unknown(
                s.get_reason_unknown()
                    .map(|r| {
                        if wall_out {
                            // The backstop, not the resource count: the
                            // machine gave the solver too little CPU.
                            WALL_CLOCK_TIMEOUT.to_string()
                        } else if r.contains("timeout")
                            || r.contains("canceled")
                            || r.contains("resource")
                        {
                            "timeout".to_string()
                        } else if r.contains("memory") {
                            "memory".to_string()
                        } else {
                            r
                        }
                    })
                    .unwrap_or_else(|| "timeout".to_string()),
            ),
            SatResult::Sat => match found {
                Some(model) => {
                    let part = parts
                        .iter()
                        .find(|(_, c)| model.eval(c, true).and_then(|b| b.as_bool()) == Some(true))
                        .map(|(n, _)| n.clone())
                        .unwrap_or_else(|| "unknown part".to_string());
                    Verdict::Counterexample {
                        input: extract(&model, &sh, orig, fa),
                        part,
                    }
                }
                None => Verdict::Unknown("no model".to_string()),
            },
        };
        s.pop(1);
        verdict
    })
}
