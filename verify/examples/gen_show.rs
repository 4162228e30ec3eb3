//! Print the generated program for a seed: `cargo run -p verify --example gen_show -- 7`.

fn main() {
    let seed = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let g = verify::gen::generate_from_seed(seed, &verify::gen::GenConfig::default());
    print!("{}", ir::print_module(&g.module));
}
