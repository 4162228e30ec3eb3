//! Prints the N → 10N time-ratio table of every scaling shape × pass (the
//! table in the README's Benchmarks section), or writes one shape's module.
//!
//! ```text
//! cargo run --release -p passes --example scaling_ratios [-- --n 10000] [--rounds 5] [--shapes a,b] [--passes lse,gvn]
//! cargo run --release -p passes --example scaling_ratios -- --write huge_block 1000000 > big.ir
//! valgrind --tool=callgrind target/release/examples/scaling_ratios --count huge_block 10000
//! ```
//!
//! `--count SHAPE N [--passes dce,gvn]` runs each column (or parse + verify
//! and the columns listed) once on one shape, each inside its own
//! never-inlined function (`count_parse_verify`, `count_lse`, ...), so that
//! `callgrind_annotate --inclusive=yes` gives the instruction count of every
//! column: a load-independent measure of the work (see the README).
//! `--runs K` runs each column K times (the first run on fresh buffers,
//! the later ones reusing them, as the timed runs do; subtract a `--runs 1`
//! count to get one warm run's).
//! `--passes lse,peeps` runs only those columns (parsing always runs), so
//! `valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*PassManager::run'`
//! counts one pass's instructions and cache misses without the module's
//! parsing, cloning and dropping.
//!
//! Each cell is the thread's CPU time (not wall time, so that other jobs on
//! the machine inflate it less), the best of several runs, measured the same
//! way at both sizes (see [`cell`]): one untimed warm-up run at each size
//! (first-touch page faults, cold code), then the same number of timed runs
//! at N and at 10N (a best of more runs is lower, so unequal counts would
//! bias the ratio), at least `--reps` and more for short cells (about 0.3 s
//! of runs at 10N, at most 50 each), in two rounds of N-then-10N so that a
//! change of the machine's load during a cell reaches both sizes. Runs
//! during which the thread was preempted are left out when both sizes have
//! runs without (as many at each size, see [`best_pair`]). A cell stops
//! early once a 10N run takes longer than `--limit` seconds. The load
//! average is printed before and after the table. A ratio of 10 is linear.
//!
//! `--rounds R` (default 5; one round is about 32 s of CPU time on a quiet
//! machine, 38 s at load average 14, so about 3 minutes) measures the whole table R times, round after round (every cell
//! once per round, so a noisy spell of the machine reaches a few cells of
//! one round, not every run of one cell), and prints per cell the medians of
//! the rounds' best times, the median of the rounds' ratios and the range of
//! those ratios: `2.6 ms → 26.2 ms (×10.4, 10.1–10.9)`. A cell is then
//! above 11 only if most rounds put it there. `--rounds 1` is the old
//! single-round table.
//!
//! The load-independent view, the ratio of instruction counts of every
//! cell, is `passes/benches/ir_ratios.sh` (callgrind over `--count`).

// The allocator and options of the `loadstar` binary (loadstar_alloc).
loadstar_alloc::install!();

#[path = "../benches/shapes/mod.rs"]
mod shapes;

use ir::Module;
use passes::PassManager;
use std::time::Duration;

/// What one table column runs.
const COLUMNS: &[&str] = &["parse+verify", "lse", "gvn", "peeps", "dce", "pipeline"];

fn arg<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// The CPU time this thread has used so far.
fn cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// How often this thread has been preempted so far (involuntary context
/// switches).
fn preemptions() -> i64 {
    // SAFETY: an all-zero `rusage` is a valid value to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid rusage to write; the selector is a constant.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    assert_eq!(rc, 0, "getrusage failed");
    ru.ru_nivcsw as i64
}

/// One timed run: its CPU time, and whether the thread was preempted during
/// it (then another job ran on the core and used its caches meanwhile).
#[derive(Copy, Clone)]
struct Sample {
    time: Duration,
    preempted: bool,
}

/// A CPU-time stopwatch that also notes preemption.
struct Instant(Duration, i64);

impl Instant {
    fn now() -> Instant {
        // The switch count is read outside the timed span at both ends.
        let preempted = preemptions();
        Instant(cpu_now(), preempted)
    }
    fn elapsed(&self) -> Sample {
        let time = cpu_now() - self.0;
        Sample {
            time,
            preempted: preemptions() != self.1,
        }
    }
}

/// The time of one parse + verify of `text` (as `loadstar` loads a file:
/// each function verified as soon as it is parsed), and the module.
fn parse_once(text: &str) -> (Sample, Module) {
    let t = Instant::now();
    let (m, _) = ir::parse_verified(text, "shape").expect("shape parses and verifies");
    (t.elapsed(), m)
}

/// The time of one run of pass column `col` on a copy of `m`.
fn run_once(col: &str, m: &Module) -> Sample {
    let mut m = m.clone();
    let mut pm = PassManager::from_list(col).expect("known pass");
    // The pipeline is timed as `loadstar opt` runs it (verifying after each
    // pass); single passes alone.
    pm.verify = col == "pipeline";
    // Each run starts as `loadstar opt` does, with no analyses kept from the
    // run before (which only functions within `KEEP_INPUTS` could reuse).
    passes::analyses::forget_all();
    let t = Instant::now();
    pm.run(&mut m).expect("passes succeed");
    t.elapsed()
}

/// One timed run of column `col` at one size: parse + verify of `text`
/// (keeping the module in `m`), or a pass run on a copy of `*m` (parsing
/// `text` first if `m` is empty).
fn run_col(col: &str, text: &str, m: &mut Option<Module>) -> Sample {
    if col == "parse+verify" {
        // The module of the previous run goes first, as it would in a
        // program that parses one file at a time: kept alive, it doubled
        // the memory a 10N parse lives in.
        *m = None;
        let (d, parsed) = parse_once(text);
        *m = Some(parsed);
        return d;
    }
    if m.is_none() {
        *m = Some(parse_once(text).1);
    }
    run_once(col, m.as_ref().unwrap())
}

/// Runs per size and round of a cell whose 10N warm-up run took `warm`: at
/// least `reps` in all, more while the 10N runs stay within 0.3 s (at most
/// 50 unless `reps` asks for more); split over [`ROUNDS`].
fn runs_per_round(warm: Duration, reps: usize) -> usize {
    let fit = (0.3 / warm.as_secs_f64().max(1e-6)) as usize;
    fit.min(50).max(reps).max(1).div_ceil(ROUNDS)
}

/// Rounds of N-then-10N runs per cell.
const ROUNDS: usize = 2;

/// The best time of column `col` at N (`small`) and at 10N (`large`) from
/// the same number of runs of each after an untimed warm-up run (the first
/// timed 10N run sizes the rounds), see [`best_pair`]; `ms`/`ml` hold (or
/// receive) the parsed modules.
fn cell(
    col: &str,
    (small, large): (&str, &str),
    (ms, ml): (&mut Option<Module>, &mut Option<Module>),
    reps: usize,
    limit: Duration,
) -> (Duration, Duration) {
    run_col(col, small, ms);
    run_col(col, large, ml);
    let mut b = vec![run_col(col, large, ml)];
    let mut a = vec![run_col(col, small, ms)];
    if b[0].time > limit {
        return best_pair(&a, &b);
    }
    let per_round = runs_per_round(b[0].time, reps.saturating_sub(1));
    for _ in 0..ROUNDS {
        a.extend((0..per_round).map(|_| run_col(col, small, ms)));
        b.extend((0..per_round).map(|_| run_col(col, large, ml)));
        if b.iter().any(|r| r.time > limit) {
            break;
        }
    }
    best_pair(&a, &b)
}

/// The best of runs `a` (at N) and of runs `b` (at 10N), as many of each:
/// when both sizes have runs during which the thread was never preempted,
/// the best of the first k such runs of each, k the fewer of the two counts
/// (a preempted run also measured the cache use of whatever ran meanwhile,
/// which a long 10N run meets far more often than a short N run); else the
/// best of all runs of each.
fn best_pair(a: &[Sample], b: &[Sample]) -> (Duration, Duration) {
    let clean = |runs: &[Sample]| runs.iter().filter(|r| !r.preempted).count();
    let k = clean(a).min(clean(b));
    let best = |runs: &[Sample]| {
        let kept = runs.iter().filter(|r| k == 0 || !r.preempted);
        let kept = kept.take(if k == 0 { runs.len() } else { k });
        kept.map(|r| r.time).min().unwrap_or(Duration::MAX)
    };
    (best(a), best(b))
}

/// The load averages over 1, 5 and 15 minutes, as `/proc/loadavg` gives
/// them (empty where it is unreadable).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

#[inline(never)]
fn count_parse_verify(text: &str) -> Module {
    parse_once(text).1
}

/// A column's counting function.
type CountFn = fn(&Module);

/// One never-inlined function per pass column, named for callgrind.
macro_rules! count_fns {
    ($($f:ident = $pass:literal),*) => {
        $(#[inline(never)]
        fn $f(m: &Module) {
            run_once($pass, m);
        })*
    };
}
count_fns!(
    count_lse = "lse",
    count_gvn = "gvn",
    count_peeps = "peeps",
    count_dce = "dce",
    count_pipeline = "pipeline"
);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(name) = arg(&args, "--count") {
        let shape = shapes::SHAPES
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("unknown shape {name}"));
        let pos = args.iter().position(|a| a == "--count").unwrap();
        let n: usize = args
            .get(pos + 2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(10_000);
        let text = (shape.build)(n);
        // `--passes a,b` limits the pass columns run after parse + verify.
        let only: Option<Vec<&str>> = arg(&args, "--passes").map(|s| s.split(',').collect());
        let wanted = |c: &str| only.as_ref().is_none_or(|o| o.contains(&c));
        let m = count_parse_verify(&text);
        let counts: [(&str, CountFn); 5] = [
            ("lse", count_lse),
            ("gvn", count_gvn),
            ("peeps", count_peeps),
            ("dce", count_dce),
            ("pipeline", count_pipeline),
        ];
        // `--runs K` runs each column K times: the first on fresh buffers,
        // the others reusing them, as the timed runs do.
        let runs: usize = arg(&args, "--runs")
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        for (name, count) in counts {
            if wanted(name) {
                (0..runs).for_each(|_| count(&m));
            }
        }
        return;
    }
    if let Some(name) = arg(&args, "--write") {
        let shape = shapes::SHAPES
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("unknown shape {name}"));
        let pos = args.iter().position(|a| a == "--write").unwrap();
        let n: usize = args
            .get(pos + 2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(1_000_000);
        print!("{}", (shape.build)(n));
        return;
    }
    let n: usize = arg(&args, "--n")
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let reps: usize = arg(&args, "--reps")
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let rounds: usize = arg(&args, "--rounds")
        .and_then(|s| s.parse().ok())
        .unwrap_or(ROUNDS_DEFAULT)
        .max(1);
    let limit = Duration::from_secs_f64(
        arg(&args, "--limit")
            .and_then(|s| s.parse().ok())
            .unwrap_or(2.0),
    );
    let only_shapes: Option<Vec<&str>> = arg(&args, "--shapes").map(|s| s.split(',').collect());
    let only_cols: Option<Vec<&str>> = arg(&args, "--passes").map(|s| s.split(',').collect());
    let cols: Vec<&str> = COLUMNS
        .iter()
        .copied()
        .filter(|c| only_cols.as_ref().is_none_or(|o| o.contains(c)))
        .collect();
    let shapes: Vec<&shapes::Shape> = shapes::SHAPES
        .iter()
        .filter(|s| only_shapes.as_ref().is_none_or(|o| o.contains(&s.name)))
        .collect();
    println!(
        "N = {n}: time at N → time at 10N (ratio; 10 = linear), thread CPU time, \
         best of the same number (at least {reps}) of runs at each size, \
         unpreempted runs when both sizes have some; {rounds} round(s) of the \
         whole table, each cell: the medians over the rounds of the best \
         times and of the ratios, then the ratios' min–max"
    );
    println!("load average (1, 5, 15 min) before: {}", load_average());
    println!();
    let texts: Vec<(String, String)> = shapes
        .iter()
        .map(|s| ((s.build)(n), (s.build)(10 * n)))
        .collect();
    // pairs[shape][column]: one (best at N, best at 10N) per round.
    let mut pairs = vec![vec![Vec::with_capacity(rounds); cols.len()]; shapes.len()];
    for round in 0..rounds {
        for (texts, row) in texts.iter().zip(&mut pairs) {
            let (mut ms, mut ml) = (None, None);
            for (c, runs) in cols.iter().zip(row.iter_mut()) {
                let (small, large) = (texts.0.as_str(), texts.1.as_str());
                runs.push(cell(c, (small, large), (&mut ms, &mut ml), reps, limit));
            }
        }
        eprintln!("round {}/{rounds} done", round + 1);
    }
    print_table(&shapes, &cols, &pairs);
    println!();
    println!("load average (1, 5, 15 min) after: {}", load_average());
}

/// Rounds of the whole table by default: five keep the table within about
/// three minutes on a quiet machine and let no single noisy round decide a
/// cell (a median of five needs three rounds off the same way).
const ROUNDS_DEFAULT: usize = 5;

/// Prints the table of `pairs[shape][column]` (one pair of best times per
/// round), each cell summarized by [`summarize`].
fn print_table(shapes: &[&shapes::Shape], cols: &[&str], pairs: &[Vec<Vec<(Duration, Duration)>>]) {
    print!("| shape |");
    for c in cols {
        print!(" {c} |");
    }
    println!();
    print!("| --- |");
    for _ in cols {
        print!(" --- |");
    }
    println!();
    for (shape, row) in shapes.iter().zip(pairs) {
        print!("| {} |", shape.name);
        for runs in row {
            print!(" {} |", summarize(runs));
        }
        println!();
    }
}

/// One cell from its rounds' pairs of best times: `a → b (×r)` for one
/// round, `a → b (×r, lo–hi)` for several, `a` and `b` the medians of the
/// rounds' times at N and at 10N, `r` the median of the rounds' ratios and
/// `lo–hi` their range.
fn summarize(runs: &[(Duration, Duration)]) -> String {
    let secs = |f: fn(&(Duration, Duration)) -> Duration| -> Vec<f64> {
        runs.iter().map(|p| f(p).as_secs_f64()).collect()
    };
    let ratios: Vec<f64> = runs
        .iter()
        .map(|(a, b)| b.as_secs_f64() / a.as_secs_f64())
        .collect();
    let (Some(a), Some(b), Some(r)) = (
        median_spread(&secs(|p| p.0)),
        median_spread(&secs(|p| p.1)),
        median_spread(&ratios),
    ) else {
        return "–".to_string();
    };
    let times = format!("{} → {}", fmt_secs(a.median), fmt_secs(b.median));
    if runs.len() == 1 {
        format!("{times} (×{:.1})", r.median)
    } else {
        format!("{times} (×{:.1}, {:.1}–{:.1})", r.median, r.min, r.max)
    }
}

/// The median of some values and their range.
#[derive(Debug, PartialEq)]
struct Spread {
    /// The middle value (the mean of the two middle ones for an even count).
    median: f64,
    /// The smallest value.
    min: f64,
    /// The largest value.
    max: f64,
}

/// The median and range of `xs`, `None` if it is empty. NaNs sort last.
fn median_spread(xs: &[f64]) -> Option<Spread> {
    let mut v = xs.to_vec();
    v.sort_by(|x, y| x.total_cmp(y));
    let (&min, &max) = (v.first()?, v.last()?);
    let mid = v.len() / 2;
    let median = if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    };
    Some(Spread { median, min, max })
}

/// A time in seconds as the table prints it (ms below a second).
fn fmt_secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_spread_of_odd_and_even_counts() {
        let odd = median_spread(&[11.2, 17.4, 10.1, 9.8, 10.4]).unwrap();
        assert_eq!(
            odd,
            Spread {
                median: 10.4,
                min: 9.8,
                max: 17.4
            }
        );
        let even = median_spread(&[12.0, 10.0, 11.0, 13.0]).unwrap();
        assert_eq!(
            even,
            Spread {
                median: 11.5,
                min: 10.0,
                max: 13.0
            }
        );
        assert_eq!(median_spread(&[]), None);
    }

    #[test]
    fn one_outlier_round_does_not_decide_a_cell() {
        let ms = Duration::from_millis;
        let runs = [(ms(10), ms(101)), (ms(10), ms(174)), (ms(10), ms(103))];
        assert_eq!(summarize(&runs), "10.0 ms → 103.0 ms (×10.3, 10.1–17.4)");
        assert_eq!(summarize(&runs[..1]), "10.0 ms → 101.0 ms (×10.1)");
    }
}
