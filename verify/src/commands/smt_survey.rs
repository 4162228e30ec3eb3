//! `loadstar verify --generated N`: validate a pass list with the SMT checker
//! over N generated programs (the sweep's generator) and report the verdict
//! rates and the time per function (median and 95th percentile), over all
//! programs and again without the generator's size tail (programs with a
//! budget of 150–400 instructions, about one in twenty:
//! `GenConfig::tail_chance`), so the figures for "~40-instruction programs"
//! are read off the same run.

use crate::commands::smt_verify::{verify_modules, FuncReport};
use crate::gen::{generate_from_seed, GenConfig};
use passes::PassManager;
use smt::{Options, Verdict};
use std::fmt::Write;
use std::time::Duration;

/// What the survey saw.
#[derive(Default, Debug)]
pub struct Survey {
    /// Functions checked.
    pub functions: usize,
    /// Fully proved.
    pub proved: usize,
    /// Proved within the bounds.
    pub bounded: usize,
    /// Confirmed counterexamples.
    pub counterexamples: usize,
    /// Counterexamples the interpreter did not confirm (checker bugs).
    pub unconfirmed: usize,
    /// Solver gave up.
    pub unknown: usize,
    /// Of those, how many hit the wall-clock backstop rather than the
    /// resource count (too little CPU on a loaded machine).
    pub unknown_wall: usize,
    /// The encoder could not express the function.
    pub unsupported: usize,
    /// Loop-free functions (no back edge, no call cut by the bound), and how many were fully proved.
    pub loop_free: (usize, usize),
    /// Time of each check.
    pub times: Vec<Duration>,
    /// One line per finding or unsupported reason (program seed, function, verdict).
    pub notes: Vec<String>,
    /// Programs of the size tail among those checked.
    pub tail_programs: usize,
    /// The same counts over the programs outside the size tail only.
    pub without_tail: Option<Box<Survey>>,
}

impl Survey {
    /// Count `r` (of program `seed`), and again in [`Survey::without_tail`]
    /// when the program is not of the size tail.
    fn add(&mut self, seed: u64, tail: bool, loop_free: bool, r: &FuncReport) {
        self.count(seed, tail, loop_free, r);
        if !tail {
            let small = self.without_tail.get_or_insert_with(Box::default);
            small.count(seed, false, loop_free, r);
        }
    }

    fn count(&mut self, seed: u64, tail: bool, loop_free: bool, r: &FuncReport) {
        if loop_free {
            self.loop_free.0 += 1;
            self.loop_free.1 += usize::from(r.verdict == Verdict::Proved);
        }
        self.functions += 1;
        self.times.push(r.time);
        match (&r.verdict, r.confirmed) {
            (Verdict::Proved, _) => self.proved += 1,
            (Verdict::ProvedBounded(_), _) => self.bounded += 1,
            (Verdict::Counterexample { .. }, Some(true)) => self.counterexamples += 1,
            (Verdict::Counterexample { .. }, _) => self.unconfirmed += 1,
            (Verdict::Unknown(why), _) => {
                self.unknown += 1;
                self.unknown_wall += usize::from(why == smt::check::WALL_CLOCK_TIMEOUT);
            }
            (Verdict::Unsupported(_), _) => self.unsupported += 1,
        }
        if !matches!(r.verdict, Verdict::Proved | Verdict::ProvedBounded(_)) {
            let tail = if tail { " (size tail)" } else { "" };
            let mut note = format!("seed {seed}{tail} @{}: {}", r.name, r.label());
            if let Some(t) = &r.input_text {
                let _ = write!(note, "\n  counterexample: {t}");
            }
            self.notes.push(note);
        }
    }

    /// The summary lines: the counts over every program, the same without
    /// the size tail, then the notes.
    pub fn render(&self) -> String {
        let mut out = self.counts();
        if let Some(small) = &self.without_tail {
            let _ = writeln!(
                out,
                "without the size tail ({} of the programs left out):",
                self.tail_programs
            );
            for line in small.counts().lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        for note in &self.notes {
            let _ = writeln!(out, "{note}");
        }
        out
    }

    /// The verdict rates, the loop-free share and the times.
    fn counts(&self) -> String {
        let mut t: Vec<f64> = self.times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        t.sort_by(f64::total_cmp);
        let pct = |p: f64| {
            t.get(((t.len() as f64 - 1.0) * p).round() as usize)
                .copied()
                .unwrap_or(0.0)
        };
        let n = self.functions.max(1) as f64;
        let rate = |x: usize| 100.0 * x as f64 / n;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "functions: {}; proved {} ({:.1} %), bounded {} ({:.1} %), counterexample {}, smt-unconfirmed {}, unknown {} ({:.1} %; {} at the wall-clock backstop), unsupported {} ({:.1} %)",
            self.functions,
            self.proved,
            rate(self.proved),
            self.bounded,
            rate(self.bounded),
            self.counterexamples,
            self.unconfirmed,
            self.unknown,
            rate(self.unknown),
            self.unknown_wall,
            self.unsupported,
            rate(self.unsupported)
        );
        let (lf, lfp) = self.loop_free;
        let _ = writeln!(
            out,
            "loop-free functions fully proved: {lfp} of {lf} ({:.1} %)",
            100.0 * lfp as f64 / lf.max(1) as f64
        );
        let _ = writeln!(
            out,
            "time per function: median {:.1} ms, p95 {:.1} ms, max {:.1} ms",
            pct(0.5),
            pct(0.95),
            t.last().copied().unwrap_or(0.0)
        );
        out
    }
}

/// Generate `n` programs from `seed` on, optimize each with `passes`, and check every function.
/// Programs with a function not proved are written to `out` (when given) as
/// `seedN.ir` and `seedN.opt.ir`, ready for `loadstar verify A --against B`.
pub fn survey(
    n: u64,
    seed: u64,
    passes: &str,
    size: usize,
    opts: &Options,
    out: Option<&std::path::Path>,
) -> Result<Survey, String> {
    let pm = PassManager::from_list(passes).map_err(|e| e.to_string())?;
    let cfg = GenConfig {
        target_insts: size.max(1),
        ..GenConfig::default()
    };
    let mut s = Survey::default();
    for i in 0..n {
        let program_seed = seed.wrapping_add(i);
        let g = generate_from_seed(program_seed, &cfg);
        s.tail_programs += usize::from(g.tail);
        let mut opt = g.module.clone();
        if let Err(e) = pm.run(&mut opt) {
            s.notes
                .push(format!("seed {program_seed}: the passes failed: {e}"));
            continue;
        }
        let reports = verify_modules(&g.module, &opt, opts);
        if let Some(dir) = out {
            if reports
                .iter()
                .any(|r| !matches!(r.verdict, Verdict::Proved | Verdict::ProvedBounded(_)))
            {
                let write = |name: String, m: &ir::Module| {
                    std::fs::create_dir_all(dir)
                        .and_then(|_| std::fs::write(dir.join(name), ir::print_module(m)))
                        .map_err(|e| format!("cannot write to {}: {e}", dir.display()))
                };
                write(format!("seed{program_seed}.ir"), &g.module)?;
                write(format!("seed{program_seed}.opt.ir"), &opt)?;
            }
        }
        for r in reports {
            let loop_free = !matches!(r.verdict, Verdict::ProvedBounded(_))
                && g.module
                    .func_by_name(&r.name)
                    .is_some_and(|f| !smt::unroll::Unrolling::new(g.module.func(f)).has_loops());
            s.add(program_seed, g.tail, loop_free, &r);
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(verdict: Verdict) -> FuncReport {
        FuncReport {
            name: "main".to_string(),
            verdict,
            confirmed: None,
            input_text: None,
            replay: None,
            behaviours: None,
            time: Duration::from_millis(3),
        }
    }

    /// A tail program's unknown counts over all programs but not in the
    /// figures without the tail; a wall-clock unknown is counted apart.
    #[test]
    fn the_tail_is_counted_apart() {
        let mut s = Survey::default();
        s.add(1, false, true, &report(Verdict::Proved));
        s.add(2, false, false, &report(Verdict::ProvedBounded(2)));
        let wall = smt::check::WALL_CLOCK_TIMEOUT.to_string();
        s.add(3, true, false, &report(Verdict::Unknown(wall)));
        s.add(4, true, false, &report(Verdict::Unknown("timeout".into())));
        s.tail_programs = 2;
        assert_eq!((s.functions, s.unknown, s.unknown_wall), (4, 2, 1));
        let small = s.without_tail.as_ref().expect("programs outside the tail");
        assert_eq!(
            (small.functions, small.unknown, small.loop_free),
            (2, 0, (1, 1))
        );
        let text = s.render();
        assert!(
            text.contains("unknown 2 (50.0 %; 1 at the wall-clock backstop)"),
            "{text}"
        );
        assert!(
            text.contains("without the size tail (2 of the programs left out):"),
            "{text}"
        );
        assert!(text.contains("  functions: 2; proved 1 (50.0 %)"), "{text}");
        assert!(
            text.contains("seed 3 (size tail) @main: unknown (timeout, wall clock)"),
            "{text}"
        );
    }
}
