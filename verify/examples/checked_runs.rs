//! Effect-checked interpreter runs only (a profiling aid).
fn main() {
    let cfg = verify::gen::GenConfig::default();
    let icfg = interp::Config {
        fuel: 10_000,
        heap_words: 65_536,
        ..interp::Config::default()
    };
    let progs: Vec<_> = (0..500u64)
        .map(|seed| {
            let g = verify::gen::generate_from_seed(seed, &cfg);
            let ins = verify::inputs::instantiate_all(&g.module, g.module.func(g.main), seed, 3);
            (g, ins)
        })
        .collect();
    let mut n = 0;
    for _ in 0..40 {
        for (g, ins) in &progs {
            let prog = interp::Program::new(&g.module);
            for i in ins {
                if interp::run_checked(&prog, g.main, i, &icfg).is_ok() {
                    n += 1;
                }
            }
        }
    }
    println!("{n}");
}
