//! The generator always yields well-formed modules, on random, short and odd
//! byte strings alike, and its programs contain the shapes it promises.

use arbitrary::Unstructured;
use verify::gen::rng::Rng;
use verify::gen::{generate, GenConfig};

fn gen(bytes: &[u8], cfg: &GenConfig) -> verify::gen::Generated {
    let mut u = Unstructured::new(bytes);
    generate(&mut u, cfg)
}

#[test]
fn thousands_of_random_byte_strings_all_verify() {
    let cfg = GenConfig::default();
    let mut rng = Rng::new(42);
    for k in 0..3000 {
        let len = rng.below(2000) as usize;
        let mut bytes = vec![0u8; len];
        rng.fill(&mut bytes);
        let g = gen(&bytes, &cfg);
        if let Err(errs) = ir::verify_module(&g.module) {
            panic!(
                "program {k} is ill-formed: {errs:?}\n{}",
                ir::print_module(&g.module)
            );
        }
    }
}

#[test]
fn odd_inputs_verify() {
    let cfg = GenConfig::default();
    let odd: Vec<Vec<u8>> = vec![
        vec![],
        vec![0],
        vec![255; 5000],
        vec![1; 5000],
        (0..=255).cycle().take(3000).collect(),
        (0..=255).rev().cycle().take(3000).collect(),
    ];
    for bytes in odd {
        let g = gen(&bytes, &cfg);
        assert!(
            ir::verify_module(&g.module).is_ok(),
            "{}",
            ir::print_module(&g.module)
        );
    }
}

#[test]
fn generated_programs_print_and_parse_back() {
    let cfg = GenConfig::default();
    let mut rng = Rng::new(7);
    for _ in 0..300 {
        let mut bytes = vec![0u8; 1500];
        rng.fill(&mut bytes);
        let g = gen(&bytes, &cfg);
        let text = ir::print_module(&g.module);
        let (m2, _) = ir::parse_module(&text, "gen.ir").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(ir::print_module(&m2), text);
    }
}

#[test]
fn programs_contain_the_promised_shapes() {
    let cfg = GenConfig::default();
    let mut rng = Rng::new(11);
    let mut all = String::new();
    let mut sizes = 0usize;
    let n = 400;
    for _ in 0..n {
        let mut bytes = vec![0u8; 1500];
        rng.fill(&mut bytes);
        let g = gen(&bytes, &cfg);
        sizes += g.module.func(g.main).placed_inst_count();
        all.push_str(&ir::print_module(&g.module));
    }
    for needle in [
        "load.volatile",
        "store.volatile",
        "escape",
        "guard",
        "phi",
        "newarray",
        "new Node",
        "sdiv",
        "call @visit",
        "call @peek",
        "call @helper",
        ".next",
        "copy",
        "@gn",
        "len",
    ] {
        assert!(all.contains(needle), "no program contains `{needle}`");
    }
    let avg = sizes / n;
    assert!((20..=80).contains(&avg), "average size {avg}");
}

#[test]
fn longer_byte_strings_give_larger_programs_up_to_the_target() {
    let mut bytes = vec![0u8; 4000];
    Rng::new(5).fill(&mut bytes);
    let big = GenConfig {
        target_insts: 200,
        ..GenConfig::default()
    };
    let short = gen(&bytes[..20], &big);
    let long = gen(&bytes, &big);
    let size = |g: &verify::gen::Generated| g.module.func(g.main).placed_inst_count();
    assert!(
        size(&short) < size(&long),
        "{} vs {}",
        size(&short),
        size(&long)
    );
}
