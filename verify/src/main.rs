//! The `loadstar` command line (see docs and CLI.md): exit 0 on success, 1 on a
//! finding, 2 on bad usage, bad input or an internal error.

use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;
use verify::commands::check::{check, CheckOptions, CheckOutcome};
use verify::commands::opt::{opt, Emit};
use verify::commands::reduce::{
    reduce_file, render as render_reduction, ReduceOptions, ReduceOutcome,
};
use verify::commands::repro::{repro, ReproOutcome};
use verify::commands::run::{run, run_checking_effects, run_strict, RunOptions};

// The oracle allocates many small, short-lived vectors per checked program;
// mimalloc serves them about a third faster than the system allocator, and its
// options (loadstar_alloc::OPTIONS) keep big modules' pages mapped and huge.
loadstar_alloc::install!();

#[derive(Parser)]
#[command(
    name = "loadstar",
    version,
    about = "An optimizing middle end for a managed-memory SSA IR, and the machinery that proves it right"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one function on inputs and print its observable behaviour.
    Run {
        /// The IR module.
        file: String,
        /// The function to run (default `@main`, else the first).
        #[arg(long)]
        func: Option<String>,
        /// Inputs in the syntax of IR.md §7, e.g. 'p = Point{x: 1}, q = p, n = 5'.
        #[arg(long, default_value = "")]
        input: String,
        /// Optimize first with these passes (comma-separated).
        #[arg(long)]
        passes: Option<String>,
        /// Fuel budget: taken branches and calls.
        #[arg(long)]
        fuel: Option<u64>,
        /// Check every memory access against the declared effects (IR.md §8);
        /// violations are printed after the behaviour and make the exit status 1.
        #[arg(long)]
        check_effects: bool,
        /// Compile to x86-64 and run the machine code instead of interpreting.
        #[arg(long, conflicts_with = "check_effects")]
        native: bool,
        /// With `--native`: strict memory (every object against a PROT_NONE
        /// guard page, so an access outside it faults), in a crash-isolated
        /// worker; a crash is reported with its disassembly, exit 1.
        #[arg(long, requires = "native")]
        strict: bool,
        /// Plant bugs of the bug zoo first (comma-separated names; builds with `--features bug-zoo`).
        #[arg(long, value_name = "NAME")]
        inject: Option<String>,
    },
    /// Optimize a module and print the result.
    Opt {
        /// The IR module.
        file: String,
        /// Passes to run (comma-separated): lse, peeps, gvn, dce, pipeline.
        #[arg(long)]
        passes: String,
        /// What to print.
        #[arg(long, value_enum, default_value_t = Emit::Ir)]
        emit: Emit,
        /// Seed of the peephole worklist order (same seed, same result).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Plant bugs of the bug zoo first (comma-separated names; builds with `--features bug-zoo`).
        #[arg(long, value_name = "NAME")]
        inject: Option<String>,
    },
    /// Check one file: the original against the optimized module on the file's
    /// `; input:` lines and N generated inputs; prints the first divergence.
    Check {
        /// The IR module (`; input:`, `; func:` and `; fuel:` lines are used).
        file: String,
        /// Passes to check (comma-separated): lse, peeps, gvn, dce, pipeline.
        #[arg(long, default_value = "pipeline")]
        passes: String,
        /// Generated inputs to add to the file's own (aliasing among reference parameters).
        #[arg(long, default_value_t = 32)]
        inputs: usize,
        /// Seed of the generated inputs and of the peephole worklist order.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// The function to check (default: the file's `; func:`, else `@main`, else the first).
        #[arg(long)]
        func: Option<String>,
        /// Fuel budget of the original run (default: the file's `; fuel:`, else the interpreter's).
        #[arg(long)]
        fuel: Option<u64>,
        /// Plant bugs of the bug zoo first (comma-separated names; builds with `--features bug-zoo`).
        #[arg(long, value_name = "NAME")]
        inject: Option<String>,
        /// Also compare the x86-64 code of the original and of the optimized
        /// module with the interpreter (crash-isolated workers).
        #[arg(long)]
        native: bool,
        /// Also prove every function of the file equivalent to its optimized
        /// version with z3; a counterexample is replayed in the interpreter.
        #[arg(long)]
        smt: bool,
        /// With `--smt`: solver time per function, in milliseconds.
        #[arg(long, default_value_t = 10_000)]
        smt_timeout_ms: u32,
    },
    /// Generate random aliased programs and check the passes against the interpreter.
    Sweep {
        #[command(flatten)]
        args: SweepArgs,
        /// Plant bugs of the bug zoo first (comma-separated names; builds with `--features bug-zoo`).
        #[arg(long, value_name = "NAME")]
        inject: Option<String>,
    },
    /// Shrink a failing text test while it keeps the same failure signature.
    Reduce {
        /// The failing text test (e.g. a sweep finding, with `; input:` lines).
        file: String,
        /// The pass list to check (default: the file's `; passes:` comment, else each pass).
        #[arg(long)]
        passes: Option<String>,
        /// Oracles (only `interp` in this build).
        #[arg(long, default_value = "interp")]
        oracles: String,
        /// Where to write the reduced text test (default: stdout).
        #[arg(short = 'o', long = "out")]
        out: Option<String>,
        /// Time cap of the reduction, in seconds.
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
    },
    /// Turn a cargo-fuzz crash artifact into a reduced text test.
    Repro {
        /// The crash artifact (the raw bytes the fuzz target was given).
        artifact: String,
        /// The fuzz target that crashed: lse, gvn, peeps, pipeline, native, smt or parse.
        #[arg(long)]
        target: String,
        /// Where to write the reduced text test (default: stdout).
        #[arg(short = 'o', long = "out")]
        out: Option<String>,
        /// Time cap of the reduction, in seconds.
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
    },
    /// Merge the outputs of a night's shards (sweep directories and libFuzzer
    /// artifacts) into one report deduplicated by failure signature; exit 1
    /// only if a signature is new (not in the known-findings file).
    Triage {
        /// Shard output directories (walked: every directory with a
        /// `report.json` is a sweep shard, every `crash-*`/`timeout-*`/`oom-*`
        /// file a libFuzzer artifact of the target its directory is named after).
        #[arg(required = true)]
        dirs: Vec<String>,
        /// Known findings: one signature per line, then two spaces, `#` and why.
        #[arg(long)]
        known: Option<String>,
        /// Where the JSON report goes.
        #[arg(short = 'o', long = "out", default_value = "triage.json")]
        out: String,
        /// Also write the Markdown summary (always printed) to this file.
        #[arg(long)]
        summary: Option<String>,
        /// Time cap for reducing the smallest crash artifact of each signature, in seconds.
        #[arg(long, default_value_t = 10.0)]
        reduce_seconds: f64,
    },
    /// Write each fuzz target's seed corpus into OUT/TARGET/: the text corpus
    /// encoded as the target's input (IR text mode), plus generator seeds.
    Seeds {
        /// Where the corpora go (one directory per target).
        #[arg(long, default_value = "fuzz/corpus")]
        out: String,
        /// The text corpus to encode (default: the one this build came from).
        #[arg(long)]
        corpus: Option<String>,
        /// Only these targets (comma-separated; default all).
        #[arg(long)]
        targets: Option<String>,
    },
    /// SMT translation validation: prove each function equivalent to its
    /// optimized version, or find an input (replayed in the interpreter) that
    /// tells them apart.
    Verify {
        /// The IR module (the original); not with `--generated`.
        file: Option<String>,
        /// Instead of a file, check this many generated programs and print the
        /// verdict rates and times.
        #[arg(long, value_name = "N")]
        generated: Option<u64>,
        /// The first generated program's seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Approximate instructions per generated program.
        #[arg(long, default_value_t = 40)]
        size: usize,
        /// With `--generated`: write each program with a function not proved here.
        #[arg(long)]
        out: Option<String>,
        /// Passes to validate (comma-separated); not with `--against`.
        #[arg(long)]
        passes: Option<String>,
        /// Check against the functions of the same name in this module instead.
        #[arg(long)]
        against: Option<String>,
        /// Loop iterations (taken back edges) per function body.
        #[arg(long, default_value_t = 4)]
        unroll: usize,
        /// Solver time per function, in milliseconds.
        #[arg(long, default_value_t = 10_000)]
        timeout_ms: u32,
        /// Prove every peephole rule and GVN fold (or, with FILE, the rules
        /// of that rule file) and print the table; exit 1 if one is not proved.
        #[arg(long)]
        rules: bool,
    },
    /// Compare the loads and stores loadstar keeps with LLVM 14's `opt -O2`
    /// on the same module (translated to LLVM IR); exit 1 where LLVM keeps
    /// fewer (a missed optimization).
    Peer {
        /// The IR module; not with `--generated`.
        file: Option<String>,
        /// Instead of a file, compare this many generated programs and print the shares.
        #[arg(long, value_name = "N")]
        generated: Option<u64>,
        /// The first generated program's seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Approximate instructions per generated program.
        #[arg(long, default_value_t = 35)]
        size: usize,
        /// loadstar's passes (comma-separated).
        #[arg(long, default_value = "pipeline")]
        passes: String,
        /// Worker threads for `--generated` (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// With `--generated`: write each program where LLVM keeps fewer
        /// (`missed-SEED.ir`) or loadstar keeps fewer (`won-SEED.ir`) here.
        #[arg(long)]
        out: Option<String>,
        /// Also print the LLVM IR given to `opt`.
        #[arg(long)]
        emit_llvm: bool,
        /// Also print what `opt -O2` made of it.
        #[arg(long)]
        emit_llvm_opt: bool,
        /// With FILE: shrink it while LLVM still keeps fewer, and write the
        /// result as a `; test: peer` text test (to `-o`, else stdout).
        #[arg(long)]
        reduce: bool,
        /// Where `--reduce` writes the text test.
        #[arg(short = 'o', long = "output", requires = "reduce")]
        output: Option<String>,
        /// Time cap of `--reduce`, in seconds.
        #[arg(long, default_value_t = 30.0)]
        reduce_seconds: f64,
        /// Instead of counting accesses, run the translation with `lli-14` on
        /// the oracle's inputs and compare its behaviour with the
        /// interpreter's (exit 1 on a disagreement); with `--out`, each
        /// disagreement is written there as a run test.
        #[arg(long)]
        lli: bool,
        /// With `--lli` and FILE: inputs per function.
        #[arg(long, default_value_t = 3)]
        inputs: usize,
        /// With `--lli`: run what `opt -O2` makes of the translation, which
        /// checks that its TBAA and attributes claim no more than IR.md.
        #[arg(long, requires = "lli")]
        o2: bool,
    },
    /// Benchmark the harness: sweep on one core against each planted bug of the
    /// bug zoo and print the time to the first finding.
    #[cfg(feature = "bug-zoo")]
    Zoo {
        /// Time budget per bug, in seconds.
        #[arg(long, default_value_t = 60.0)]
        seconds_per_bug: f64,
        /// The sweep seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Only these bugs (comma-separated names; default all).
        #[arg(long)]
        bugs: Option<String>,
        /// Write each detecting program here as a text test.
        #[arg(long)]
        out: Option<String>,
        /// Approximate instructions per generated program.
        #[arg(long, default_value_t = 40)]
        size: usize,
        /// Inputs per program.
        #[arg(long, default_value_t = 3)]
        inputs: usize,
        /// Time budget per bug of the SMT oracle's own hunt, in seconds (0: no SMT column).
        #[arg(long, default_value_t = 60.0)]
        smt_seconds_per_bug: f64,
    },
}

/// Plant the bugs named by `--inject`, if any; an error is bad usage (exit 2).
#[cfg(feature = "bug-zoo")]
fn apply_inject(list: Option<&str>) -> Result<(), String> {
    match list {
        Some(l) => verify::commands::zoo::inject_list(l).map(|_| ()),
        None => Ok(()),
    }
}

/// Without the `bug-zoo` feature there is nothing to plant.
#[cfg(not(feature = "bug-zoo"))]
fn apply_inject(list: Option<&str>) -> Result<(), String> {
    match list {
        Some(_) => Err("--inject needs a build with `--features bug-zoo`".to_string()),
        None => Ok(()),
    }
}

/// `loadstar zoo`: hunt each planted bug, print the table; exit 1 if one escaped.
#[cfg(feature = "bug-zoo")]
fn zoo_command(
    seconds_per_bug: f64,
    seed: u64,
    bugs: Option<String>,
    out: Option<String>,
    size: usize,
    inputs: usize,
    smt_seconds_per_bug: f64,
) -> ExitCode {
    use verify::commands::zoo::{parse_bugs, render_table, run_zoo, ZooOptions};
    let ok = |x: f64| x.is_finite() && x >= 0.0;
    if !ok(seconds_per_bug) || !ok(smt_seconds_per_bug) {
        eprintln!("error: --seconds-per-bug and --smt-seconds-per-bug want non-negative numbers");
        return ExitCode::from(2);
    }
    let bugs = match parse_bugs(bugs.as_deref().unwrap_or("")) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = ZooOptions {
        seconds_per_bug,
        seed,
        bugs,
        out: out.map(Into::into),
        size: size.max(1),
        inputs: inputs.max(1),
        smt_seconds_per_bug,
    };
    match run_zoo(&opts) {
        Ok(dets) => {
            print!("{}", render_table(&dets));
            if dets.iter().all(|d| d.caught()) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: cannot write findings: {e}");
            ExitCode::from(2)
        }
    }
}

/// Write `text` to `out` (a file) or stdout; an unwritable file is exit 2.
fn emit(text: &str, out: Option<&str>) -> Result<(), ExitCode> {
    match out {
        Some(path) => std::fs::write(path, text).map_err(|e| {
            eprintln!("error: cannot write {path}: {e}");
            ExitCode::from(2)
        }),
        None => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            Ok(())
        }
    }
}

/// Check an `--oracles` list against `available`; returns whether it names `native`.
fn check_oracles_in(list: &str, available: &[&str]) -> Result<bool, ExitCode> {
    let mut native = false;
    for o in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !available.contains(&o) {
            eprintln!(
                "error: oracle '{o}' is not available here (available: {})",
                available.join(", ")
            );
            return Err(ExitCode::from(2));
        }
        native |= o == "native";
    }
    Ok(native)
}

/// `reduce` knows only the interpreter oracle.
fn check_oracles(list: &str) -> Result<(), ExitCode> {
    check_oracles_in(list, &["interp"]).map(|_| ())
}

fn reduce_command(opts: ReduceOptions, oracles: &str, out: Option<&str>) -> ExitCode {
    if let Err(code) = check_oracles(oracles) {
        return code;
    }
    match reduce_file(&opts) {
        Ok(ReduceOutcome::NotFailing(msg)) => {
            eprintln!("{msg}");
            ExitCode::SUCCESS
        }
        Ok(ReduceOutcome::Reduced(r)) => {
            eprintln!(
                "{}: {} -> {} instructions, {} candidates checked in {:.2} s: {}",
                opts.file,
                r.insts_before,
                r.insts_after,
                r.checks,
                r.elapsed.as_secs_f64(),
                r.finding.signature()
            );
            match emit(&render_reduction(&r), out) {
                Ok(()) => ExitCode::from(1),
                Err(code) => code,
            }
        }
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}

fn repro_command(artifact: &str, target: &str, out: Option<&str>, seconds: f64) -> ExitCode {
    match repro(artifact, target, seconds) {
        Ok(ReproOutcome::NotFailing(msg)) => {
            eprintln!("{msg}");
            ExitCode::SUCCESS
        }
        Ok(ReproOutcome::Failing(text)) => match emit(&text, out) {
            Ok(()) => ExitCode::from(1),
            Err(code) => code,
        },
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}

/// `loadstar triage`: the Markdown summary on stdout; exit 1 on a new signature.
fn triage_command(opts: &verify::commands::triage::TriageOptions) -> ExitCode {
    match verify::commands::triage::triage(opts) {
        Ok(t) => {
            print!("{}", t.markdown);
            eprintln!("report: {}", opts.out);
            ExitCode::from(u8::from(t.report.new > 0))
        }
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}

/// `loadstar seeds`: one line per target with the inputs written.
fn seeds_command(out: &str, corpus: Option<&str>, targets: Option<&str>) -> ExitCode {
    use verify::fuzz::TARGETS;
    let corpus = corpus.map_or_else(verify::seeds::default_corpus, Into::into);
    if !corpus.is_dir() {
        eprintln!("{}: error: not a directory", corpus.display());
        return ExitCode::from(2);
    }
    let list: Vec<&str> = match targets {
        Some(l) => l
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect(),
        None => TARGETS.to_vec(),
    };
    if let Some(bad) = list.iter().find(|t| !TARGETS.contains(t)) {
        eprintln!(
            "error: unknown fuzz target '{bad}' (known: {})",
            TARGETS.join(", ")
        );
        return ExitCode::from(2);
    }
    for t in list {
        let dir = std::path::Path::new(out).join(t);
        match verify::seeds::write_seeds(t, &corpus, &dir) {
            Ok(n) => println!("{t}: {n} seeds in {}", dir.display()),
            Err(e) => {
                eprintln!("{}: error: cannot write: {e}", dir.display());
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}

/// `loadstar check`: exit 0 when every input agrees, 1 with the first divergence.
fn check_command(opts: &CheckOptions) -> ExitCode {
    match check(opts) {
        Ok(CheckOutcome::Agree(msg)) => {
            print!("{msg}");
            ExitCode::SUCCESS
        }
        Ok(CheckOutcome::Diverges(report)) => {
            print!("{report}");
            ExitCode::from(1)
        }
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}

/// `loadstar verify`: one line per function; exit 1 on a counterexample.
fn verify_command(
    file: &str,
    passes: Option<&str>,
    against: Option<&str>,
    opts: &smt::Options,
) -> ExitCode {
    use verify::commands::smt_verify::{render, verify_against, verify_passes};
    let reports = match (passes, against) {
        (Some(list), None) => verify_passes(file, list, opts),
        (None, Some(other)) => verify_against(file, other, opts),
        _ => {
            eprintln!("error: verify wants exactly one of --passes LIST and --against OPT.ir");
            return ExitCode::from(2);
        }
    };
    match reports {
        Ok(r) => {
            let (text, status) = render(&r);
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::from(status)
        }
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}

/// `loadstar verify --rules [FILE]`: the rule table; exit 1 unless every rule is proved.
fn rules_command(file: Option<&str>, timeout_ms: u32) -> ExitCode {
    use verify::commands::rules::{builtin_specs, file_specs, prove_all, render};
    let specs = match file {
        Some(path) => file_specs(path),
        None => builtin_specs(),
    };
    let specs = match specs {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let start = std::time::Instant::now();
    let rows = prove_all(&specs, timeout_ms);
    print!("{}", render(&rows, start.elapsed()));
    if rows.iter().all(|r| r.failure.is_none()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `loadstar verify --generated N`: the survey's summary; exit 1 on a counterexample.
fn survey_command(
    n: u64,
    seed: u64,
    passes: Option<&str>,
    size: usize,
    opts: &smt::Options,
    out: Option<&std::path::Path>,
) -> ExitCode {
    let list = passes.unwrap_or("pipeline");
    match verify::commands::smt_survey::survey(n, seed, list, size, opts, out) {
        Ok(s) => {
            print!("{}", s.render());
            ExitCode::from(u8::from(s.counterexamples + s.unconfirmed > 0))
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `peer`: one file (exit 1 where LLVM keeps fewer) or a survey of generated programs.
#[allow(clippy::too_many_arguments)]
fn peer_command(
    file: Option<String>,
    generated: Option<u64>,
    seed: u64,
    size: usize,
    passes: &str,
    jobs: Option<usize>,
    out: Option<String>,
    emit: verify::commands::peer::PeerEmit,
) -> ExitCode {
    use verify::commands::peer::{peer_file, peer_survey};
    match (file, generated) {
        (Some(file), None) => exit_with(peer_file(&file, passes, emit), |(text, standing)| {
            (text, standing == verify::peer::Standing::More)
        }),
        (None, Some(n)) => {
            let out = out.map(std::path::PathBuf::from);
            let done = peer_survey(n, seed, size, passes, jobs_or_cores(jobs), out.as_deref());
            exit_with(done.map_err(|e| format!("error: {e}")), |s| {
                (s.render(passes), s.more > 0)
            })
        }
        _ => {
            eprintln!("error: peer wants a FILE or --generated N");
            ExitCode::from(2)
        }
    }
}

/// `jobs`, or one per core.
fn jobs_or_cores(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Print what `show` makes of a result and exit 1 when it says so (0
/// otherwise); print the error and exit 2 on `Err`.
fn exit_with<T, E: std::fmt::Display>(
    r: Result<T, E>,
    show: impl FnOnce(T) -> (String, bool),
) -> ExitCode {
    match r {
        Ok(v) => {
            let (text, fail) = show(v);
            print!("{text}");
            ExitCode::from(u8::from(fail))
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// `peer --lli`: one file or generated programs run by `lli-14` against the
/// interpreter; exit 1 on a disagreement, 2 on bad input or without `lli`.
fn peer_lli_command(
    file: Option<String>,
    generated: Option<u64>,
    (seed, size): (u64, usize),
    (jobs, o2): (Option<usize>, bool),
    out: Option<String>,
    inputs: usize,
) -> ExitCode {
    use verify::commands::peer_lli::{lli_file, lli_survey, render, render_survey};
    match (file, generated) {
        (Some(file), None) => exit_with(lli_file(&file, inputs.max(1), o2), |(t, names)| {
            (render(&t, &names), !t.disagreements.is_empty())
        }),
        (None, Some(n)) => {
            let out = out.map(std::path::PathBuf::from);
            let start = std::time::Instant::now();
            let done = lli_survey(n, seed, size, (jobs_or_cores(jobs), o2), out.as_deref());
            exit_with(done.map_err(|e| format!("error: {e}")), |(t, found)| {
                let secs = start.elapsed().as_secs_f64();
                let text = format!(
                    "{}{secs:.1} s, {:.1} programs/s\n",
                    render_survey(&t, &found),
                    t.programs as f64 / secs.max(1e-9)
                );
                (text, !found.is_empty())
            })
        }
        _ => {
            eprintln!("error: peer --lli wants a FILE or --generated N");
            ExitCode::from(2)
        }
    }
}

/// `peer FILE --reduce`: the reduced missed optimization as a text test (exit
/// 1), or exit 0 when LLVM does not keep fewer.
fn peer_reduce_command(file: &str, passes: &str, output: Option<&str>, seconds: f64) -> ExitCode {
    match verify::commands::peer::peer_reduce(file, passes, seconds) {
        Ok(None) => {
            println!("llvm -O2 does not keep fewer loads and stores: nothing to reduce");
            ExitCode::SUCCESS
        }
        Ok(Some(text)) => {
            match output {
                Some(path) => {
                    if let Err(e) = std::fs::write(path, &text) {
                        eprintln!("error: cannot write {path}: {e}");
                        return ExitCode::from(2);
                    }
                    eprintln!("wrote {path}");
                }
                None => print!("{text}"),
            }
            ExitCode::from(1)
        }
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}

/// `run --native --strict`: the behaviour, or the crash report and exit 1.
fn run_strict_command(opts: &RunOptions) -> ExitCode {
    match run_strict(opts) {
        Ok(Ok(behaviour)) => {
            println!("{}", behaviour.trim_end());
            ExitCode::SUCCESS
        }
        Ok(Err(crash)) => {
            eprint!("{crash}");
            ExitCode::from(1)
        }
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}

/// `run --check-effects`: the behaviour, then every violation; exit 1 if any.
fn run_with_effect_check(opts: &RunOptions) -> ExitCode {
    match run_checking_effects(opts) {
        Ok((behaviour, violations)) => {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{}", behaviour.trim_end());
            for v in &violations {
                let _ = writeln!(stdout, "{v}");
            }
            if violations.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sweep { args, inject } => {
            if let Err(e) = apply_inject(inject.as_deref()) {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
            return sweep_command(args);
        }
        Command::Check {
            file,
            passes,
            inputs,
            seed,
            func,
            fuel,
            inject,
            native,
            smt,
            smt_timeout_ms,
        } => {
            if let Err(e) = apply_inject(inject.as_deref()) {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
            let opts = CheckOptions {
                file,
                func,
                passes,
                inputs,
                seed,
                fuel,
                native,
                smt_timeout_ms: smt.then_some(smt_timeout_ms),
            };
            return check_command(&opts);
        }
        Command::Reduce {
            file,
            passes,
            oracles,
            out,
            seconds,
        } => {
            let opts = ReduceOptions {
                file,
                passes,
                seconds,
            };
            return reduce_command(opts, &oracles, out.as_deref());
        }
        Command::Repro {
            artifact,
            target,
            out,
            seconds,
        } => return repro_command(&artifact, &target, out.as_deref(), seconds),
        Command::Triage {
            dirs,
            known,
            out,
            summary,
            reduce_seconds,
        } => {
            let opts = verify::commands::triage::TriageOptions {
                dirs,
                known,
                out,
                summary,
                reduce_seconds,
            };
            return triage_command(&opts);
        }
        Command::Seeds {
            out,
            corpus,
            targets,
        } => return seeds_command(&out, corpus.as_deref(), targets.as_deref()),
        Command::Run {
            file,
            func,
            input,
            passes,
            fuel,
            check_effects,
            native,
            strict,
            inject,
        } => {
            if let Err(e) = apply_inject(inject.as_deref()) {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
            let opts = RunOptions {
                file,
                func,
                input,
                passes,
                fuel,
                native,
                strict,
            };
            if check_effects {
                return run_with_effect_check(&opts);
            }
            if strict {
                return run_strict_command(&opts);
            }
            run(&opts)
        }
        Command::Opt {
            file,
            passes,
            emit,
            seed,
            inject,
        } => {
            if let Err(e) = apply_inject(inject.as_deref()) {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
            opt(&file, &passes, emit, seed)
        }
        Command::Verify {
            file,
            generated,
            seed,
            size,
            out,
            passes,
            against,
            unroll,
            timeout_ms,
            rules,
        } => {
            if rules {
                if generated.is_some() || passes.is_some() || against.is_some() {
                    eprintln!("error: --rules takes no --generated, --passes or --against");
                    return ExitCode::from(2);
                }
                return rules_command(file.as_deref(), timeout_ms);
            }
            let opts = smt::Options {
                unroll,
                timeout_ms,
                ..smt::Options::default()
            };
            return match (file, generated) {
                (Some(file), None) => {
                    verify_command(&file, passes.as_deref(), against.as_deref(), &opts)
                }
                (None, Some(n)) => {
                    let out = out.map(std::path::PathBuf::from);
                    survey_command(n, seed, passes.as_deref(), size, &opts, out.as_deref())
                }
                _ => {
                    eprintln!("error: verify wants a FILE or --generated N");
                    ExitCode::from(2)
                }
            };
        }
        Command::Peer {
            file,
            generated,
            seed,
            size,
            passes,
            jobs,
            out,
            emit_llvm,
            emit_llvm_opt,
            reduce,
            output,
            reduce_seconds,
            lli,
            inputs,
            o2,
        } => {
            if lli {
                return peer_lli_command(file, generated, (seed, size), (jobs, o2), out, inputs);
            }
            if reduce {
                let Some(file) = file else {
                    eprintln!("error: --reduce wants a FILE");
                    return ExitCode::from(2);
                };
                return peer_reduce_command(&file, &passes, output.as_deref(), reduce_seconds);
            }
            let emit = verify::commands::peer::PeerEmit {
                llvm_in: emit_llvm,
                llvm_out: emit_llvm_opt,
            };
            return peer_command(file, generated, seed, size, &passes, jobs, out, emit);
        }
        #[cfg(feature = "bug-zoo")]
        Command::Zoo {
            seconds_per_bug,
            seed,
            bugs,
            out,
            size,
            inputs,
            smt_seconds_per_bug,
        } => {
            return zoo_command(
                seconds_per_bug,
                seed,
                bugs,
                out,
                size,
                inputs,
                smt_seconds_per_bug,
            )
        }
    };
    match result {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(out.as_bytes());
            if !out.ends_with('\n') {
                let _ = stdout.write_all(b"\n");
            }
            ExitCode::SUCCESS
        }
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}

/// The options of `loadstar sweep`.
#[derive(clap::Args)]
struct SweepArgs {
    /// Wall-clock budget in seconds.
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    /// The sweep seed (same seed and shard, same programs).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Passes to check: each alone, random sequences of them, and `pipeline`.
    #[arg(long)]
    passes: Option<String>,
    /// Oracles: `interp` (always on), `native` (x86-64 code of the original
    /// and of every plan), `smt` (z3 validates every plan of one program in
    /// `--smt-every`). All three by default; `--oracles interp` for the
    /// interpreter alone. `peer` (off by default) also compares every
    /// program's loads and stores after `pipeline` with LLVM's `opt -O2`;
    /// `lli` (off by default) runs every program's LLVM translation with
    /// `lli-14` and reports a behaviour unlike the interpreter's
    /// (`mismatch-lli`).
    #[arg(long, default_value = "interp,native,smt")]
    oracles: String,
    /// With the `smt` oracle: validate the plans of one program in N.
    #[arg(long, value_name = "N", default_value_t = verify::sweep::DEFAULT_SMT_EVERY)]
    smt_every: u64,
    /// With the `smt` oracle: solver time per query, in milliseconds (a timeout is `unknown`).
    #[arg(long, default_value_t = 1000)]
    smt_timeout_ms: u32,
    /// This shard of the program index space, `I/N`.
    #[arg(long, default_value = "0/1")]
    shard: String,
    /// Where findings and report.json go.
    #[arg(long, default_value = "sweep-out")]
    out: String,
    /// Stop after this many programs.
    #[arg(long)]
    max_programs: Option<u64>,
    /// Approximate instructions per generated program.
    #[arg(long, default_value_t = 40)]
    size: usize,
    /// Inputs per program.
    #[arg(long, default_value_t = 3)]
    inputs: usize,
    /// Time cap for reducing each new finding, in seconds (0: write findings unreduced).
    #[arg(long, default_value_t = 10.0)]
    reduce_seconds: f64,
    /// Run the native oracle's code in the sweep's own process instead of
    /// forked workers: a fault in generated code kills the sweep (the same
    /// as `--native-isolation none`).
    #[arg(long)]
    native_in_process: bool,
    /// How native code is isolated: `worker` (one long-lived worker process
    /// per thread, restarted when it dies), `fork` (one child per compiled
    /// module), `none` (in the sweep's process).
    #[arg(long, default_value = "worker")]
    native_isolation: String,
    /// Run regalloc2's checker on the native code of one program in N
    /// (1: every program).
    #[arg(long, default_value_t = 8)]
    regalloc_check_every: u64,
    /// Run the native code of plans other than `pipeline` on one program in
    /// N (1: every program; the original and `pipeline` always run natively).
    #[arg(long, default_value_t = 4)]
    native_plans_every: u64,
}

fn parse_shard(s: &str) -> Option<(u64, u64)> {
    let (i, n) = s.split_once('/')?;
    let (i, n) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
    (n > 0 && i < n).then_some((i, n))
}

fn sweep_command(a: SweepArgs) -> ExitCode {
    use verify::sweep::{resolve_passes, run_sweep, SweepOptions};
    let native = match check_oracles_in(&a.oracles, &["interp", "native", "smt", "peer", "lli"]) {
        Ok(n) => n,
        Err(code) => return code,
    };
    let Some(isolation) = verify::sweep::pool::Isolation::parse(&a.native_isolation) else {
        eprintln!(
            "error: --native-isolation wants worker, fork or none, got '{}'",
            a.native_isolation
        );
        return ExitCode::from(2);
    };
    let isolation = if a.native_in_process {
        verify::sweep::pool::Isolation::InProcess
    } else {
        isolation
    };
    let with_smt = a.oracles.split(',').any(|o| o.trim() == "smt");
    let with_peer = a.oracles.split(',').any(|o| o.trim() == "peer");
    let with_lli = a.oracles.split(',').any(|o| o.trim() == "lli");
    let Some(shard) = parse_shard(&a.shard) else {
        eprintln!(
            "error: --shard wants I/N with 0 <= I < N, got '{}'",
            a.shard
        );
        return ExitCode::from(2);
    };
    if !(a.seconds.is_finite() && a.seconds >= 0.0) {
        eprintln!("error: --seconds wants a non-negative number");
        return ExitCode::from(2);
    }
    let list = a.passes.unwrap_or_else(|| passes::PASS_NAMES.join(","));
    let (passes, skipped) = match resolve_passes(&list) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if !skipped.is_empty() {
        eprintln!(
            "warning: passes not in this build, skipped: {}",
            skipped.join(", ")
        );
    }
    let jobs = a.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let opts = SweepOptions {
        seconds: a.seconds,
        seed: a.seed,
        jobs,
        passes,
        shard,
        out: a.out.into(),
        max_programs: a.max_programs,
        gen: verify::gen::GenConfig {
            target_insts: a.size.max(1),
            ..Default::default()
        },
        inputs_per_program: a.inputs.max(1),
        reduce_time: (a.reduce_seconds.is_finite() && a.reduce_seconds > 0.0)
            .then(|| std::time::Duration::from_secs_f64(a.reduce_seconds)),
        oracle: verify::oracle::OracleConfig {
            native,
            regalloc_check_every: a.regalloc_check_every.max(1),
            native_plans_every: a.native_plans_every.max(1),
            ..Default::default()
        },
        isolation,
        smt_every: if with_smt { a.smt_every } else { 0 },
        peer: with_peer,
        lli: with_lli,
        smt: smt::Options {
            timeout_ms: a.smt_timeout_ms.max(1),
            ..verify::oracle::smt_check::default_options()
        },
        ..SweepOptions::default()
    };
    match run_sweep(&opts) {
        Ok(outcome) => {
            eprint!("{}", outcome.summary);
            eprintln!("report: {}", outcome.report_path.display());
            if outcome.unique_findings > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("error: cannot write to {}: {e}", opts.out.display());
            ExitCode::from(2)
        }
    }
}
