//! Print, for a range of seeds of the oracle bench's programs (no size tail),
//! each generated module and what `pipeline` (the oracle's pass manager, with
//! its invariant checks) makes of it, with the pass statistics: a byte-for-byte
//! record to compare two versions of the optimizer (a measurement aid).
//! `cargo run --release -p verify --example oracle_dump -- FIRST COUNT [tail]`.

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>().ok());
    let first = args.next().flatten().unwrap_or(1);
    let count = args.next().flatten().unwrap_or(1000);
    let cfg = verify::gen::GenConfig {
        tail_chance: args.next().flatten().map_or(0, |t| t as u8),
        ..verify::gen::GenConfig::default()
    };
    for seed in first..first + count {
        let g = verify::gen::generate_from_seed(seed, &cfg);
        let mut m = g.module.clone();
        let mut stats = passes::Stats::default();
        let r = verify::oracle::run_plan("pipeline", &mut m, &mut stats);
        println!("== seed {seed}\n{}", ir::print_module(&g.module));
        match r {
            Ok(()) => println!("-- optimized\n{}", ir::print_module(&m)),
            Err(e) => println!("-- error\n{e}"),
        }
        println!("-- stats\n{stats:?}");
    }
}
