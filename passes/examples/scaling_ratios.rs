//! Prints the N → 10N time-ratio table of every scaling shape × pass (the
//! table in the README's Benchmarks section), or writes one shape's module.
//!
//! ```text
//! cargo run --release -p passes --example scaling_ratios [-- --n 10000] [--shapes a,b] [--passes lse,gvn]
//! cargo run --release -p passes --example scaling_ratios -- --write huge_block 1000000 > big.ir
//! valgrind --tool=callgrind target/release/examples/scaling_ratios --count huge_block 10000
//! ```
//!
//! `--count SHAPE N [--passes dce,gvn]` runs each column (or parse + verify
//! and the columns listed) once on one shape, each inside its own
//! never-inlined function (`count_parse_verify`, `count_lse`, ...), so that
//! `callgrind_annotate --inclusive=yes` gives the instruction count of every
//! column: a load-independent measure of the work (see the README).
//! `--passes lse,peeps` runs only those columns (parsing always runs), so
//! `valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*PassManager::run'`
//! counts one pass's instructions and cache misses without the module's
//! parsing, cloning and dropping.
//!
//! Each cell is the thread's CPU time (not wall time, so that other jobs on
//! the machine inflate it less), the best of several runs: up to `--reps`
//! runs, more for short cells (until 0.3 s have been spent), stopping after a
//! run slower than `--limit` seconds. A ratio of 10 is linear.

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

/// A CPU-time stopwatch.
struct Instant(Duration);

impl Instant {
    fn now() -> Instant {
        Instant(cpu_now())
    }
    fn elapsed(&self) -> Duration {
        cpu_now() - self.0
    }
}

/// The time of one parse + verify of `text` (as `loadstar` loads a file:
/// each function verified as soon as it is parsed), and the module.
fn parse_once(text: &str) -> (Duration, Module) {
    let t = Instant::now();
    let (m, _) = ir::parse_verified(text, "shape").expect("shape parses and verifies");
    (t.elapsed(), m)
}

/// The time of one run of pass column `col` on a copy of `m`.
fn run_once(col: &str, m: &Module) -> Duration {
    let mut m = m.clone();
    let mut pm = PassManager::from_list(col).expect("known pass");
    // The pipeline is timed as `loadstar opt` runs it (verifying after each
    // pass); single passes alone.
    pm.verify = col == "pipeline";
    let t = Instant::now();
    pm.run(&mut m).expect("passes succeed");
    t.elapsed()
}

/// The best of up to `reps` runs of `col`, stopping early once a run exceeds
/// `limit`; parsing also returns the module.
fn best(col: &str, text: &str, m: &mut Option<Module>, reps: usize, limit: Duration) -> Duration {
    let mut best = Duration::MAX;
    let mut spent = Duration::ZERO;
    for rep in 0.. {
        if rep >= reps && (spent > Duration::from_millis(300) || rep >= 50) {
            break;
        }
        let d = if col == "parse+verify" {
            let (d, parsed) = parse_once(text);
            *m = Some(parsed);
            d
        } else {
            if m.is_none() {
                *m = Some(parse_once(text).1);
            }
            run_once(col, m.as_ref().unwrap())
        };
        best = best.min(d);
        spent += d;
        if d > limit {
            break;
        }
    }
    best
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
        for (name, count) in counts {
            if wanted(name) {
                count(&m);
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
        .unwrap_or(5);
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
    println!("N = {n}: time at N → time at 10N (ratio; 10 = linear), best of {reps}");
    println!();
    print!("| shape |");
    for c in &cols {
        print!(" {c} |");
    }
    println!();
    print!("| --- |");
    for _ in &cols {
        print!(" --- |");
    }
    println!();
    for shape in shapes::SHAPES {
        if only_shapes
            .as_ref()
            .is_some_and(|o| !o.contains(&shape.name))
        {
            continue;
        }
        let small = (shape.build)(n);
        let large = (shape.build)(10 * n);
        let (mut ms, mut ml) = (None, None);
        print!("| {} |", shape.name);
        for c in &cols {
            let a = best(c, &small, &mut ms, reps, limit);
            let b = best(c, &large, &mut ml, reps, limit);
            print!(
                " {} → {} (×{:.1}) |",
                fmt(a),
                fmt(b),
                b.as_secs_f64() / a.as_secs_f64()
            );
            use std::io::Write;
            std::io::stdout().flush().ok();
        }
        println!();
    }
}

fn fmt(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}
