//! `loadstar sweep`: generate random aliased programs in parallel, check each
//! with the differential oracle, write every distinct finding to the output
//! directory as a text test, and print a summary.
//!
//! Determinism: program `k` of shard `I` is generated from `hash(seed, I, k)`,
//! and so are its inputs and random pass sequences, whatever the job count.

pub mod counters;
pub mod pool;
pub mod smt_counters;
pub mod store;
pub mod totals;
pub mod wire;

use crate::gen::rng::hash_seq;
use crate::gen::{generate_from_seed, GenConfig};
use crate::inputs::instantiate_all;
use crate::oracle::{
    self, check_program, pass_exists, pass_plans, Finding, OracleConfig, ProgramResult,
};
use crate::peer::lli::batch::{LliBatcher, LliSummary};
use crate::peer::survey::{PeerBatcher, PeerSurvey};
use crate::progress::Progress;
use crate::reduce::{reduce_finding, reduced_test_text, Limits, Reduction};
use pool::{Isolation, ProgramChecker};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use store::FindingStore;
use totals::{summary_table, Totals};

/// Pass names of the CLI contract that a build may not have yet; they are skipped with a warning.
const FUTURE_PASSES: &[&str] = &["lse", "gvn", "peeps", "dce", "pipeline"];

/// Options of `loadstar sweep`.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Wall-clock budget.
    pub seconds: f64,
    /// The sweep seed.
    pub seed: u64,
    /// Worker threads.
    pub jobs: usize,
    /// Pass names to check (each alone, random sequences, `pipeline`).
    pub passes: Vec<String>,
    /// This shard and the shard count.
    pub shard: (u64, u64),
    /// Where findings and `report.json` go.
    pub out: PathBuf,
    /// Stop after this many programs (in addition to the time budget).
    pub max_programs: Option<u64>,
    /// Generator knobs.
    pub gen: GenConfig,
    /// Inputs per program.
    pub inputs_per_program: usize,
    /// Random pass sequences per program.
    pub random_plans: usize,
    /// Oracle limits.
    pub oracle: OracleConfig,
    /// Show a progress bar (only when stderr is a terminal).
    pub progress: bool,
    /// Time cap for reducing each new finding (`None`: findings are written unreduced).
    pub reduce_time: Option<Duration>,
    /// How native code is isolated when the native oracle is on.
    pub isolation: Isolation,
    /// The SMT oracle validates every plan of program `k` when `k` is a
    /// multiple of this (0: never).
    pub smt_every: u64,
    /// The SMT oracle's solver limits.
    pub smt: smt::Options,
    /// The LLVM peer (`--oracles peer`): every program's loads and stores
    /// after `pipeline` against `opt -O2`'s (`crate::peer`).
    pub peer: bool,
    /// `lli` as a third opinion (`--oracles lli`): every program's
    /// translation run by `lli-14` on its inputs against the interpreter
    /// (`crate::peer::lli`), in batches of programs per process.
    pub lli: bool,
}

/// The default share of programs the SMT oracle samples (one in N): the
/// largest share that costs the default sweep at most 20 % of its throughput
/// (README, "The SMT oracle in the sweep").
pub const DEFAULT_SMT_EVERY: u64 = 6000;

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            seconds: 60.0,
            seed: 0,
            jobs: 1,
            passes: passes::PASS_NAMES.iter().map(|s| s.to_string()).collect(),
            shard: (0, 1),
            out: PathBuf::from("sweep-out"),
            max_programs: None,
            gen: GenConfig::default(),
            inputs_per_program: 3,
            random_plans: 1,
            oracle: OracleConfig::default(),
            progress: true,
            reduce_time: Some(Duration::from_secs(10)),
            isolation: Isolation::Worker,
            smt_every: 0,
            smt: crate::oracle::smt_check::default_options(),
            peer: false,
            lli: false,
        }
    }
}

/// Check the passes a sweep was asked for: unknown names are an error; names of
/// the CLI contract this build lacks are dropped with a warning.
pub fn resolve_passes(list: &str) -> Result<(Vec<String>, Vec<String>), String> {
    let mut keep = Vec::new();
    let mut skipped = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if pass_exists(name) {
            keep.push(name.to_string());
        } else if FUTURE_PASSES.contains(&name) {
            skipped.push(name.to_string());
        } else {
            return Err(format!(
                "unknown pass '{name}' (known passes: {})",
                passes::PASS_NAMES.join(", ")
            ));
        }
    }
    if keep.is_empty() {
        return Err("no pass of the list exists in this build".to_string());
    }
    Ok((keep, skipped))
}

/// The seed of program `k` of shard `shard`.
pub fn program_seed(seed: u64, shard: u64, k: u64) -> u64 {
    hash_seq(&[seed, shard, k])
}

/// Whether the SMT oracle validates the plans of program `k`.
pub fn smt_sampled(opts: &SweepOptions, k: u64) -> bool {
    opts.smt_every > 0 && k.is_multiple_of(opts.smt_every)
}

/// Generate and check program `k` (everything derived from its seed).
pub fn check_one(opts: &SweepOptions, k: u64) -> (u64, ProgramResult) {
    let pseed = program_seed(opts.seed, opts.shard.0, k);
    let g = generate_from_seed(pseed, &opts.gen);
    let f = g.module.func(g.main);
    let inputs = instantiate_all(&g.module, f, hash_seq(&[pseed, 1]), opts.inputs_per_program);
    let names: Vec<&str> = opts.passes.iter().map(String::as_str).collect();
    let plans = pass_plans(&names, hash_seq(&[pseed, 2]), opts.random_plans);
    let mut res = if smt_sampled(opts, k) {
        let cfg = OracleConfig {
            smt: Some(opts.smt),
            ..opts.oracle.clone()
        };
        check_program(&g.module, g.main, &inputs, &plans, &cfg)
    } else {
        check_program(&g.module, g.main, &inputs, &plans, &opts.oracle)
    };
    for f in &mut res.findings {
        f.seed = Some(pseed);
    }
    (pseed, res)
}

/// The JSON report of a sweep.
#[derive(Serialize)]
pub struct Report {
    /// The sweep seed.
    pub seed: u64,
    /// `I/N`.
    pub shard: String,
    /// Passes checked.
    pub passes: Vec<String>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Programs per second.
    pub programs_per_second: f64,
    /// Percentages: valid, inconclusive (of inputs), trapping (of programs), aliasing (of programs).
    pub valid_pct: f64,
    /// Inconclusive inputs, percent.
    pub inconclusive_pct: f64,
    /// Programs with a trapping input, percent.
    pub trapping_pct: f64,
    /// Programs with two reference parameters bound to one object, percent.
    pub aliasing_pct: f64,
    /// All counters.
    pub totals: Totals,
    /// Counters (`pass.rule`) that fired in fewer than 1 in 1,000 programs, with
    /// the number of programs they fired in.
    pub rarely_exercised: Vec<(String, u64)>,
    /// Distinct findings: signature, file, hits.
    pub findings: Vec<ReportFinding>,
    /// The SMT oracle's rates and time per query.
    pub smt: smt_counters::SmtSummary,
    /// With `--oracles peer`: programs where loadstar keeps fewer / the same /
    /// more loads and stores than LLVM -O2, and the totals.
    pub peer: Option<PeerSurvey>,
    /// With `--oracles lli`: inputs compared with `lli`, agreeing and not.
    pub lli: Option<LliSummary>,
}

/// One distinct finding in the report.
#[derive(Serialize)]
pub struct ReportFinding {
    /// `passes|kind|part`.
    pub signature: String,
    /// The reproducer file.
    pub file: String,
    /// How many programs hit it.
    pub hits: u64,
}

/// The outcome of a sweep.
pub struct SweepOutcome {
    /// Summed counters.
    pub totals: Totals,
    /// Distinct findings.
    pub unique_findings: usize,
    /// The summary table.
    pub summary: String,
    /// Where the report went.
    pub report_path: PathBuf,
}

/// Run a sweep.
pub fn run_sweep(opts: &SweepOptions) -> std::io::Result<SweepOutcome> {
    let store = FindingStore::new(&opts.out)?;
    // Fork the workers now, while this process has one thread.
    let checkers = Mutex::new(
        (0..opts.jobs.max(1))
            .map(|_| ProgramChecker::new(opts))
            .collect::<Vec<_>>(),
    );
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(opts.seconds.max(0.0));
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let found = AtomicU64::new(0);
    let totals = Mutex::new(Totals::default());
    let progress = Progress::on_stderr(opts.progress);
    let write_error: Mutex<Option<std::io::Error>> = Mutex::new(None);
    let peer_pm = if opts.peer {
        // `opt` must be there before the programs start.
        crate::peer::run_opt("").map_err(std::io::Error::other)?;
        Some(passes::PassManager::from_list("pipeline").map_err(std::io::Error::other)?)
    } else {
        None
    };
    let peer_total = Mutex::new((PeerSurvey::default(), Vec::new()));
    if opts.lli {
        // `lli` must be there before the programs start.
        let lli = crate::peer::lli::session::lli_binary();
        std::process::Command::new(&lli)
            .arg("--version")
            .output()
            .map_err(|e| std::io::Error::other(format!("cannot run `{lli}`: {e}")))?;
    }
    let lli_total = Mutex::new(LliSummary::default());
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            s.spawn(|| {
                let mut local = Totals::default();
                let mut peer = peer_pm.clone().map(PeerBatcher::new);
                let mut lli = opts.lli.then(|| {
                    LliBatcher::new(oracle::config(&opts.oracle, opts.oracle.fuel), false)
                });
                let mut lli_found = Vec::new();
                let taken = checkers.lock().unwrap_or_else(|e| e.into_inner()).pop();
                let mut checker = taken.unwrap_or_else(|| ProgramChecker::new(opts));
                loop {
                    if Instant::now() >= deadline {
                        break;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if opts.max_programs.is_some_and(|m| k >= m) {
                        break;
                    }
                    let res = checker.check(k);
                    local.add(&res);
                    if let Some(b) = peer.as_mut() {
                        let pseed = program_seed(opts.seed, opts.shard.0, k);
                        let g = generate_from_seed(pseed, &opts.gen);
                        if let Err(e) = b.push(pseed, g.module).map(drop) {
                            *write_error.lock().unwrap_or_else(|e| e.into_inner()) =
                                Some(std::io::Error::other(e));
                            break;
                        }
                    }
                    if let Some(b) = lli.as_mut() {
                        let pseed = program_seed(opts.seed, opts.shard.0, k);
                        let g = generate_from_seed(pseed, &opts.gen);
                        let f = g.module.func(g.main);
                        let inputs = instantiate_all(
                            &g.module,
                            f,
                            hash_seq(&[pseed, 1]),
                            opts.inputs_per_program,
                        );
                        match b.push(pseed, g.module, g.main, inputs) {
                            Ok(fs) => lli_found.extend(fs),
                            Err(e) => {
                                *write_error.lock().unwrap_or_else(|e| e.into_inner()) =
                                    Some(std::io::Error::other(e));
                                break;
                            }
                        }
                    }
                    // `lli` findings are not reduced: the reducer's oracle is
                    // the interpreter's differential check.
                    for f in lli_found.drain(..) {
                        note_recorded(store.record(&f), &found, &progress, &write_error);
                    }
                    for f in res.findings {
                        let recorded = record_and_reduce(&store, f, opts.reduce_time);
                        note_recorded(recorded, &found, &progress, &write_error);
                    }
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if n.is_multiple_of(16) {
                        progress.update(n, found.load(Ordering::Relaxed));
                    }
                }
                local.worker_restarts += checker.restarts;
                drop(checker);
                if let Some(mut b) = lli {
                    match b.flush() {
                        Ok(fs) => {
                            for f in &fs {
                                note_recorded(store.record(f), &found, &progress, &write_error);
                            }
                        }
                        Err(e) => {
                            *write_error.lock().unwrap_or_else(|e| e.into_inner()) =
                                Some(std::io::Error::other(e))
                        }
                    }
                    lli_total
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .add(&b.tally);
                }
                if let Some(mut b) = peer {
                    if let Err(e) = b.flush().map(drop) {
                        *write_error.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some(std::io::Error::other(e));
                    }
                    let mut t = peer_total.lock().unwrap_or_else(|e| e.into_inner());
                    t.0.merge(&b.survey);
                    t.1.extend(b.missed);
                }
                totals
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .merge(&local);
            });
        }
    });
    progress.finish();
    if let Some(e) = write_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let secs = start.elapsed().as_secs_f64();
    let totals = totals.into_inner().unwrap_or_else(|e| e.into_inner());
    let sigs = store.signatures();
    let mut summary = summary_table(&totals, secs, sigs.len());
    let peer = match &peer_pm {
        Some(pm) => {
            let (survey, missed) = peer_total.into_inner().unwrap_or_else(|e| e.into_inner());
            write_missed(opts, pm, missed)?;
            summary.push_str("llvm peer (loadstar pipeline against opt -O2)\n");
            for line in survey.render("pipeline").lines() {
                summary.push_str(&format!("  {line}\n"));
            }
            Some(survey)
        }
        None => None,
    };
    let lli = opts.lli.then(|| {
        let t = lli_total.into_inner().unwrap_or_else(|e| e.into_inner());
        summary.push_str(&format!(
            "lli (the translation under lli-14 against the interpreter)\n  {}\n",
            t.render()
        ));
        t
    });
    let report = Report {
        seed: opts.seed,
        shard: format!("{}/{}", opts.shard.0, opts.shard.1),
        passes: opts.passes.clone(),
        seconds: secs,
        programs_per_second: if secs > 0.0 {
            totals.programs as f64 / secs
        } else {
            0.0
        },
        valid_pct: totals::pct(totals.valid, totals.programs),
        inconclusive_pct: totals::pct(totals.inconclusive, totals.runs),
        trapping_pct: totals::pct(totals.trapping_programs, totals.programs),
        aliasing_pct: totals::pct(totals.param_aliasing_programs, totals.programs),
        findings: sigs
            .iter()
            .map(|(s, p, n)| ReportFinding {
                signature: s.clone(),
                file: p.display().to_string(),
                hits: *n,
            })
            .collect(),
        rarely_exercised: counters::rarely_exercised(&totals),
        smt: totals.smt.summary(),
        peer,
        lli,
        totals: totals.clone(),
    };
    let report_path = opts.out.join("report.json");
    let json = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
    store::write_atomically(&report_path, json.as_bytes())?;
    Ok(SweepOutcome {
        totals,
        unique_findings: sigs.len(),
        summary,
        report_path,
    })
}

/// Count and show a finding just recorded (`Some(file)` when it is new), or
/// keep the error.
fn note_recorded(
    recorded: std::io::Result<Option<PathBuf>>,
    found: &AtomicU64,
    progress: &Progress,
    write_error: &Mutex<Option<std::io::Error>>,
) {
    match recorded {
        Ok(Some(path)) => {
            found.fetch_add(1, Ordering::Relaxed);
            progress.println(&format!("finding: {}", path.display()));
        }
        Ok(None) => {}
        Err(e) => *write_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e),
    }
}

/// Reduce the first programs where LLVM keeps fewer (the smallest seeds, at
/// most [`PeerBatcher::KEEP`], each within the sweep's reduction budget) and
/// write them as `; test: peer` text tests under `OUT/missed/`.
fn write_missed(
    opts: &SweepOptions,
    pm: &passes::PassManager,
    mut missed: Vec<(u64, ir::Module)>,
) -> std::io::Result<()> {
    missed.sort_by_key(|(seed, _)| *seed);
    missed.truncate(PeerBatcher::KEEP);
    if missed.is_empty() {
        return Ok(());
    }
    let dir = opts.out.join("missed");
    std::fs::create_dir_all(&dir)?;
    let limits = Limits {
        time: Some(opts.reduce_time.unwrap_or(Duration::from_secs(2))),
        max_checks: None,
    };
    for (seed, module) in missed {
        // The batch already compared it: an error now is a passing failure of
        // `opt`, and the program is left out rather than the report.
        if let Ok(Some(r)) = crate::peer::reduce::reduce_missed(&module, pm, &limits) {
            let text = crate::peer::reduce::peer_test_text(&r, pm);
            store::write_atomically(&dir.join(format!("missed-{seed}.ir")), text.as_bytes())?;
        }
    }
    Ok(())
}

/// Write a new finding unreduced at once (a sweep killed while reducing keeps
/// it), then reduce it within `time` against the real passes and overwrite the
/// file atomically with the reduced reproducer. Duplicates of a known
/// signature are only counted.
pub fn record_and_reduce(
    store: &FindingStore,
    finding: Finding,
    time: Option<Duration>,
) -> std::io::Result<Option<PathBuf>> {
    match time {
        Some(t) => record_and_reduce_with(store, finding, |f| {
            let limits = Limits {
                time: Some(t),
                max_checks: None,
            };
            reduce_finding(f, &limits)
        }),
        None => store.record(&finding),
    }
}

/// [`record_and_reduce`] with the reduction given as a closure (called after
/// the unreduced finding is on disk); the file is replaced only when the
/// reduction reproduced the same signature.
pub fn record_and_reduce_with(
    store: &FindingStore,
    finding: Finding,
    reduce: impl FnOnce(&Finding) -> Reduction,
) -> std::io::Result<Option<PathBuf>> {
    let Some(path) = store.record(&finding)? else {
        return Ok(None);
    };
    let r = reduce(&finding);
    if r.reproduced && r.finding.signature() == finding.signature() {
        store::write_atomically(&path, reduced_test_text(&r).as_bytes())?;
    }
    Ok(Some(path))
}
