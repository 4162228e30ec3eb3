//! How many pipeline rounds generated programs take (a measurement aid).
use passes::{Pass, Stats};
fn main() {
    let cfg = verify::gen::GenConfig::default();
    let mut hist = [0u32; 6];
    for seed in 0..2000u64 {
        let g = verify::gen::generate_from_seed(seed, &cfg);
        let mut m = g.module.clone();
        let mut rounds = 0;
        for _ in 0..5 {
            rounds += 1;
            let mut stats = Stats::default();
            let mut changed = false;
            changed |= passes::lse::Lse::default().run(&mut m, &mut stats);
            changed |= passes::peeps::Peeps::new(0).run(&mut m, &mut stats);
            changed |= passes::gvn::Gvn.run(&mut m, &mut stats);
            changed |= passes::peeps::Peeps::new(0).run(&mut m, &mut stats);
            changed |= passes::dce::Dce.run(&mut m, &mut stats);
            if !changed {
                break;
            }
            if rounds == 2 && seed < 3 {
                println!("{}", stats.to_json());
            }
        }
        hist[rounds] += 1;
    }
    println!("rounds histogram (index = rounds): {hist:?}");
}
