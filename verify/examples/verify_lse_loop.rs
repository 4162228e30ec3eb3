//! The verifier and LSE alone, in a loop (a profiling aid).
use passes::{Pass, Stats};
fn main() {
    let cfg = verify::gen::GenConfig::default();
    let mods: Vec<_> = (0..500u64)
        .map(|s| verify::gen::generate_from_seed(s, &cfg).module)
        .collect();
    let mut n = 0;
    for _ in 0..40 {
        for m in &mods {
            if ir::verify::verify_module(m).is_ok() {
                n += 1;
            }
            let mut m2 = m.clone();
            passes::lse::Lse::default().run(&mut m2, &mut Stats::default());
        }
    }
    println!("{n}");
}
