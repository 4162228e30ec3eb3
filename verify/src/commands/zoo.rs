//! `loadstar zoo` (cargo feature `bug-zoo`): for each planted bug of
//! `ir::zoo`, run the sweep on one core with only that bug injected and
//! only the passes it lives in (plus `pipeline`; for a backend bug no pass
//! and the native oracle on), stop at the first finding,
//! and report how long detection took — the harness's own benchmark.
//!
//! A finding counts as a detection only if the same program is clean with
//! the bug removed; otherwise it is a real bug of the passes (or of the
//! harness), counted apart and skipped.
//!
//! The SMT column: the same hunt with the SMT oracle alone (no interpreter
//! input, z3 validates every plan of every program); backend bugs are out of
//! its reach (it checks the passes, not the code generator).

use crate::oracle::Finding;
use crate::progress::Progress;
use crate::sweep::{check_one, SweepOptions};
use passes::zoo::{self, Bug};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Limits and knobs of one hunt.
#[derive(Clone, Debug)]
pub struct HuntOptions {
    /// The sweep seed (programs are the sweep's programs for this seed).
    pub seed: u64,
    /// Give up after this long (`None`: no time limit).
    pub time_limit: Option<Duration>,
    /// Give up after this many programs (`None`: no program limit).
    pub max_programs: Option<u64>,
    /// Approximate instructions per generated program.
    pub size: usize,
    /// Inputs per program.
    pub inputs: usize,
    /// Hunt with the SMT oracle alone instead of the interpreter (and native) oracles.
    pub smt: bool,
}

impl Default for HuntOptions {
    fn default() -> Self {
        HuntOptions {
            seed: 0,
            time_limit: Some(Duration::from_secs(60)),
            max_programs: None,
            size: 40,
            inputs: 3,
            smt: false,
        }
    }
}

/// What hunting one bug found.
#[derive(Clone, Debug)]
pub struct Detection {
    /// The planted bug.
    pub bug: Bug,
    /// The passes checked.
    pub passes: String,
    /// Wall-clock time until the first finding (or until giving up).
    pub elapsed: Duration,
    /// Programs checked, the detecting one included.
    pub programs: u64,
    /// The first finding the bug caused, if any.
    pub finding: Option<Finding>,
    /// Findings that persisted with the bug removed (real bugs, not the zoo's).
    pub unrelated: u64,
    /// The SMT oracle's hunt for the same bug (`None`: not run, or a backend bug).
    pub smt: Option<Box<Detection>>,
}

impl Detection {
    /// Whether the bug was caught.
    pub fn caught(&self) -> bool {
        self.finding.is_some()
    }
}

/// Restores a clean process (no planted bug) when dropped, even on panic.
struct Planted;

impl Planted {
    fn only(bug: Bug) -> Planted {
        zoo::clear();
        zoo::inject(bug);
        Planted
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        zoo::clear();
    }
}

fn sweep_options(bug: Bug, opts: &HuntOptions) -> SweepOptions {
    SweepOptions {
        seed: opts.seed,
        jobs: 1,
        passes: bug.passes().split(',').map(str::to_string).collect(),
        gen: crate::gen::GenConfig {
            target_insts: opts.size.max(1),
            ..Default::default()
        },
        // The SMT hunt runs no input: only z3 can find the bug.
        inputs_per_program: if opts.smt { 0 } else { opts.inputs.max(1) },
        oracle: crate::oracle::OracleConfig {
            native: bug.is_native() && !opts.smt,
            ..Default::default()
        },
        smt_every: u64::from(opts.smt),
        progress: false,
        ..SweepOptions::default()
    }
}

/// Sweep with `bug` planted (alone) until the first finding it causes or a limit.
/// The process has no planted bug afterwards.
pub fn hunt(bug: Bug, opts: &HuntOptions) -> Detection {
    hunt_with_progress(bug, opts, &Progress::hidden(), (0, 0))
}

/// [`hunt`], showing its progress on `progress`; `so_far` is the programs
/// checked and bugs caught by earlier hunts of the same run.
pub fn hunt_with_progress(
    bug: Bug,
    opts: &HuntOptions,
    progress: &Progress,
    so_far: (u64, u64),
) -> Detection {
    let sweep = sweep_options(bug, opts);
    let start = Instant::now();
    let mut det = Detection {
        bug,
        passes: bug.passes().to_string(),
        elapsed: Duration::ZERO,
        programs: 0,
        finding: None,
        unrelated: 0,
        smt: None,
    };
    for k in 0.. {
        if opts.max_programs.is_some_and(|m| k >= m)
            || opts.time_limit.is_some_and(|t| start.elapsed() >= t)
        {
            break;
        }
        det.programs = k + 1;
        if k % 16 == 0 {
            progress.update(so_far.0 + k, so_far.1);
        }
        let findings = {
            let _planted = Planted::only(bug);
            check_one(&sweep, k).1.findings
        };
        let Some(first) = findings.into_iter().next() else {
            continue;
        };
        // Attribution: the same program with the bug removed must be clean.
        let clean = check_one(&sweep, k).1.findings;
        if clean.iter().any(|f| f.signature() == first.signature()) {
            det.unrelated += 1;
            continue;
        }
        det.finding = Some(first);
        break;
    }
    det.elapsed = start.elapsed();
    zoo::clear();
    det
}

/// Options of `loadstar zoo`.
#[derive(Clone, Debug)]
pub struct ZooOptions {
    /// Time budget per bug, in seconds.
    pub seconds_per_bug: f64,
    /// The sweep seed.
    pub seed: u64,
    /// The bugs to hunt (all when empty).
    pub bugs: Vec<Bug>,
    /// Where to write each detecting program as a text test.
    pub out: Option<PathBuf>,
    /// Approximate instructions per generated program.
    pub size: usize,
    /// Inputs per program.
    pub inputs: usize,
    /// Time budget per bug of the SMT oracle's hunt, in seconds (0: no SMT column).
    pub smt_seconds_per_bug: f64,
}

/// Parse a comma-separated list of bug names.
pub fn parse_bugs(list: &str) -> Result<Vec<Bug>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|n| {
            Bug::from_name(n).ok_or_else(|| {
                let known: Vec<&str> = Bug::ALL.iter().map(|b| b.name()).collect();
                format!("unknown bug '{n}' (known bugs: {})", known.join(", "))
            })
        })
        .collect()
}

/// Plant every bug of a comma-separated list (for `--inject`).
pub fn inject_list(list: &str) -> Result<Vec<Bug>, String> {
    let bugs = parse_bugs(list)?;
    if bugs.is_empty() {
        return Err("--inject wants at least one bug name".to_string());
    }
    bugs.iter().for_each(|&b| zoo::inject(b));
    Ok(bugs)
}

/// The one-line description of a finding for the table.
fn finding_cell(f: &Finding) -> String {
    let sig = f.signature();
    let short: String = sig.chars().take(90).collect();
    if short.len() < sig.len() {
        format!("{short}…")
    } else {
        short
    }
}

/// Render the table of detections (markdown, so it can go into the README).
pub fn render_table(dets: &[Detection]) -> String {
    let mut out = String::from(
        "| bug | passes | time to first finding | programs until detection | SMT oracle: time (programs) | finding kind/signature |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for d in dets {
        let (time, sig) = match &d.finding {
            Some(f) => (
                format!("{:.3} s", d.elapsed.as_secs_f64()),
                finding_cell(f).replace('|', "\\|"),
            ),
            None => (
                format!("NOT CAUGHT ({:.1} s)", d.elapsed.as_secs_f64()),
                "—".to_string(),
            ),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            d.bug,
            d.passes,
            time,
            d.programs,
            smt_cell(d),
            sig
        ));
    }
    out
}

/// The SMT column: `-` for a backend bug or when not run.
fn smt_cell(d: &Detection) -> String {
    match &d.smt {
        None => "-".to_string(),
        Some(s) if s.caught() => {
            format!("{:.3} s ({})", s.elapsed.as_secs_f64(), s.programs)
        }
        Some(s) => format!(
            "not caught ({:.1} s, {})",
            s.elapsed.as_secs_f64(),
            s.programs
        ),
    }
}

/// Run the zoo: hunt every selected bug in turn; returns the detections.
/// Progress goes to stderr.
pub fn run_zoo(opts: &ZooOptions) -> std::io::Result<Vec<Detection>> {
    let bugs = if opts.bugs.is_empty() {
        Bug::ALL.to_vec()
    } else {
        opts.bugs.clone()
    };
    if let Some(dir) = &opts.out {
        std::fs::create_dir_all(dir)?;
    }
    let hunt_opts = HuntOptions {
        seed: opts.seed,
        time_limit: Some(Duration::from_secs_f64(opts.seconds_per_bug.max(0.0))),
        max_programs: None,
        size: opts.size,
        inputs: opts.inputs,
        smt: false,
    };
    let smt_opts = HuntOptions {
        smt: true,
        time_limit: Some(Duration::from_secs_f64(opts.smt_seconds_per_bug.max(0.0))),
        ..hunt_opts.clone()
    };
    let mut dets: Vec<Detection> = Vec::new();
    let progress = Progress::on_stderr(true);
    let total = bugs.len();
    for (i, bug) in bugs.into_iter().enumerate() {
        progress.set_prefix(format!("{bug} ({}/{total})  ", i + 1));
        let so_far = (
            dets.iter().map(|d| d.programs).sum(),
            dets.iter().filter(|d| d.caught()).count() as u64,
        );
        let mut d = hunt_with_progress(bug, &hunt_opts, &progress, so_far);
        if opts.smt_seconds_per_bug > 0.0 && !bug.is_native() {
            let s = hunt_with_progress(bug, &smt_opts, &progress, so_far);
            progress.println(&match &s.finding {
                Some(f) => format!(
                    "{bug}: SMT oracle caught it after {} programs in {:.3} s: {}",
                    s.programs,
                    s.elapsed.as_secs_f64(),
                    f.signature()
                ),
                None => format!(
                    "{bug}: SMT oracle did not catch it in {} programs",
                    s.programs
                ),
            });
            d.smt = Some(Box::new(s));
        }
        progress.println(&match &d.finding {
            Some(f) => format!(
                "{bug}: caught after {} programs in {:.3} s: {}",
                d.programs,
                d.elapsed.as_secs_f64(),
                f.signature()
            ),
            None => format!(
                "{bug}: NOT caught in {} programs ({:.1} s)",
                d.programs,
                d.elapsed.as_secs_f64()
            ),
        });
        if d.unrelated > 0 {
            progress.println(&format!(
                "{bug}: {} finding(s) also present without the bug (real bugs, not counted)",
                d.unrelated
            ));
        }
        if let (Some(dir), Some(f)) = (&opts.out, &d.finding) {
            let text = format!(
                "; Planted bug: {bug} ({})\n{}",
                bug.imitates(),
                f.to_test_text()
            );
            crate::sweep::store::write_atomically(&dir.join(format!("{bug}.ir")), text.as_bytes())?;
        }
        dets.push(d);
    }
    progress.finish();
    Ok(dets)
}
