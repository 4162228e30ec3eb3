//! Where the oracle's time goes, phase by phase (a measurement aid).
use passes::{Pass, Stats};
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Counts allocations, to see which phase allocates most (over mimalloc and
/// the options of the `loadstar` binary, set by `loadstar_alloc::configure`).
struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        loadstar_alloc::Allocator.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        loadstar_alloc::Allocator.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        loadstar_alloc::Allocator.realloc(p, l, n)
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;
fn main() {
    loadstar_alloc::configure();
    let mut cfg = verify::gen::GenConfig::default();
    // `ORACLE_PHASES_TAIL=0`: no size tail (only ~40-instruction programs).
    if let Some(t) = std::env::var("ORACLE_PHASES_TAIL")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        cfg.tail_chance = t;
    }
    // `ORACLE_PHASES_N=200` for a quick run (e.g. under callgrind).
    let n: u64 = std::env::var("ORACLE_PHASES_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    // `ORACLE_PHASES_MODE=oracle`: only the benchmark's loop (`check_program`
    // over the pipeline), for instruction counts of exactly what it measures.
    if std::env::var("ORACLE_PHASES_MODE").as_deref() == Ok("oracle") {
        oracle_loop(n, &cfg);
        return;
    }
    let mut t = [Duration::ZERO; 10];
    let mut a = [0u64; 10];
    let names = [
        "generate",
        "inputs",
        "run original (checked)",
        "lse",
        "peeps",
        "gvn",
        "dce",
        "verify",
        "lower+run optimized",
        "run original (unchecked)",
    ];
    let icfg = interp::Config {
        fuel: 10_000,
        heap_words: 65_536,
        ..interp::Config::default()
    };
    let mut insts = 0usize;
    for seed in 0..n {
        let s = Instant::now();
        let a0 = ALLOCS.load(Ordering::Relaxed);
        let g = verify::gen::generate_from_seed(seed, &cfg);
        t[0] += s.elapsed();
        a[0] += ALLOCS.load(Ordering::Relaxed) - a0;
        insts += g.module.func(g.main).placed_inst_count();
        let s = Instant::now();
        let a0 = ALLOCS.load(Ordering::Relaxed);
        let ins = verify::inputs::instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        t[1] += s.elapsed();
        a[1] += ALLOCS.load(Ordering::Relaxed) - a0;
        let prog = interp::Program::new(&g.module);
        let s = Instant::now();
        let a0 = ALLOCS.load(Ordering::Relaxed);
        for i in &ins {
            let _ = interp::run_checked(&prog, g.main, i, &icfg);
        }
        t[2] += s.elapsed();
        a[2] += ALLOCS.load(Ordering::Relaxed) - a0;
        let s = Instant::now();
        let a0 = ALLOCS.load(Ordering::Relaxed);
        for i in &ins {
            let _ = prog.try_run(g.main, i, &icfg);
        }
        t[9] += s.elapsed();
        a[9] += ALLOCS.load(Ordering::Relaxed) - a0;
        let mut m = g.module.clone();
        for _round in 0..4 {
            let mut changed = false;
            let mut st = Stats::default();
            for (k, p) in [
                (3usize, "lse"),
                (4, "peeps"),
                (5, "gvn"),
                (4, "peeps"),
                (6, "dce"),
            ] {
                let s = Instant::now();
                let a0 = ALLOCS.load(Ordering::Relaxed);
                changed |= match p {
                    "lse" => passes::lse::Lse::default().run(&mut m, &mut st),
                    "peeps" => {
                        let mut pp = passes::peeps::Peeps::new(0);
                        pp.check = passes::peeps::CheckMode::FixedPoint;
                        pp.run_checked(&mut m, &mut st).unwrap()
                    }
                    "gvn" => passes::gvn::Gvn.run(&mut m, &mut st),
                    _ => passes::dce::Dce.run(&mut m, &mut st),
                };
                t[k] += s.elapsed();
                a[k] += ALLOCS.load(Ordering::Relaxed) - a0;
                let s = Instant::now();
                let a0 = ALLOCS.load(Ordering::Relaxed);
                ir::verify::verify_module(&m).unwrap();
                t[7] += s.elapsed();
                a[7] += ALLOCS.load(Ordering::Relaxed) - a0;
            }
            if !changed {
                break;
            }
        }
        let s = Instant::now();
        let a0 = ALLOCS.load(Ordering::Relaxed);
        let p2 = interp::Program::new(&m);
        for i in &ins {
            let _ = interp::run_checked(&p2, g.main, i, &icfg);
        }
        t[8] += s.elapsed();
        a[8] += ALLOCS.load(Ordering::Relaxed) - a0;
    }
    let total: Duration = t.iter().take(9).sum();
    println!(
        "instructions in @main        {:8.1} per program",
        insts as f64 / n as f64
    );
    for (k, name) in names.iter().enumerate() {
        println!(
            "{name:28} {:8.1} us/program  {:5.1}%  {:7.0} allocations/program",
            t[k].as_secs_f64() * 1e6 / n as f64,
            100.0 * t[k].as_secs_f64() / total.as_secs_f64(),
            a[k] as f64 / n as f64
        );
    }
    println!(
        "total (checked)              {:8.1} us/program = {:.0} programs/s",
        total.as_secs_f64() * 1e6 / n as f64,
        n as f64 / total.as_secs_f64()
    );
}

/// The loop of `benches/oracle.rs`: generate, 3 inputs, `check_program` over `pipeline`.
fn oracle_loop(n: u64, cfg: &verify::gen::GenConfig) {
    let ocfg = verify::oracle::OracleConfig::default();
    let plans = vec!["pipeline".to_string()];
    let s = Instant::now();
    let a0 = ALLOCS.load(Ordering::Relaxed);
    let mut findings = 0;
    let (mut main_insts, mut all_insts) = (0usize, 0usize);
    for seed in 1..=n {
        let g = verify::gen::generate_from_seed(seed, cfg);
        main_insts += g.module.func(g.main).placed_inst_count();
        all_insts += g
            .module
            .funcs
            .iter()
            .map(|f| f.placed_inst_count())
            .sum::<usize>();
        let ins = verify::inputs::instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let r = verify::oracle::check_program(&g.module, g.main, &ins, &plans, &ocfg);
        findings += r.findings.len();
    }
    let t = s.elapsed();
    println!(
        "check_program over pipeline: {:.1} us/program = {:.0} programs/s, {:.0} allocations/program, {findings} findings",
        t.as_secs_f64() * 1e6 / n as f64,
        n as f64 / t.as_secs_f64(),
        (ALLOCS.load(Ordering::Relaxed) - a0) as f64 / n as f64
    );
    println!(
        "program size: {:.1} instructions in @main, {:.1} in the module",
        main_insts as f64 / n as f64,
        all_insts as f64 / n as f64
    );
}
