//! The verifier alone, in a loop (a profiling aid).
fn main() {
    let cfg = verify::gen::GenConfig::default();
    let mods: Vec<_> = (0..500u64)
        .map(|s| verify::gen::generate_from_seed(s, &cfg).module)
        .collect();
    let mut n = 0;
    for _ in 0..60 {
        for m in &mods {
            if ir::verify::verify_module(m).is_ok() {
                n += 1;
            }
        }
    }
    println!("{n}");
}
