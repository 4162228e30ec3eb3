//! The fuzz targets' seed corpora (`loadstar seeds`, `verify::seeds`): every
//! generated input decodes, through the very decoder the targets run
//! (`verify::fuzz::decode`), back to the program it was made from — the text
//! corpus file in IR text mode, the sweep's program for generator bytes — and
//! the corpus seeds are quiet on the `lse` target of a sound build.

use std::path::Path;
use verify::fuzz::{decode, finding_from_bytes, IR_PREFIX, TARGETS};
use verify::gen::{generate_from_seed, GenConfig};
use verify::seeds::{corpus_files, default_corpus, generator_seeds, seed_corpus_of, seed_inputs};

mod support;
use support::loadstar_split as loadstar;

fn printed(text: &str, file: &str) -> Option<String> {
    verify::load::load_text(text, file)
        .ok()
        .map(|l| ir::print_module(&l.module))
}

#[test]
fn every_seed_decodes_back_to_its_program() {
    let corpus = default_corpus();
    let files = corpus_files(&corpus);
    assert!(
        files.len() > 200,
        "the text corpus is at {}",
        corpus.display()
    );
    let loadable: Vec<&(String, String)> = files
        .iter()
        .filter(|(r, t)| printed(t, r).is_some())
        .collect();
    let gen = generator_seeds();
    for target in TARGETS {
        let seeds = seed_inputs(target, &corpus);
        if *target == "parse" {
            assert_eq!(seeds.len(), files.len());
            for ((_, bytes), (_, text)) in seeds.iter().zip(&files) {
                assert_eq!(bytes, text.as_bytes());
            }
            continue;
        }
        assert_eq!(seeds.len(), loadable.len() + gen.len(), "{target}");
        for ((name, bytes), (rel, text)) in seeds.iter().zip(&loadable) {
            assert!(bytes.starts_with(IR_PREFIX), "{name}");
            let d = decode(bytes).unwrap_or_else(|| panic!("{target}: {name} does not decode"));
            assert_eq!(
                Some(ir::print_module(&d.module)),
                printed(text, rel),
                "{target}: {name}"
            );
        }
        for ((name, bytes), (seed, _)) in seeds[loadable.len()..].iter().zip(&gen) {
            let d = decode(bytes).expect("generator bytes always decode");
            let want = generate_from_seed(*seed, &GenConfig::default());
            assert_eq!(
                ir::print_module(&d.module),
                ir::print_module(&want.module),
                "{name}"
            );
        }
    }
}

#[test]
fn text_mode_checks_the_file_with_its_directives_and_ignores_what_does_not_load() {
    let mut bad = IR_PREFIX.to_vec();
    bad.extend_from_slice(b"func @main( -> {");
    assert!(decode(&bad).is_none());
    let mut t = IR_PREFIX.to_vec();
    t.extend_from_slice(b"; func: @f\n; fuel: 77\n; input: n = 5\nfunc @g() -> i64 {\nentry:\n  %a = add 1, 0\n  ret %a\n}\nfunc @f(%n: i64) -> i64 {\nentry:\n  ret %n\n}\n");
    let d = decode(&t).expect("loads");
    assert_eq!(d.module.func(d.func).name, "f");
    assert_eq!(d.fuel, 77);
    // The file's input, then three generated ones.
    assert_eq!(d.inputs.len(), 4);
}

#[test]
fn corpus_seeds_are_quiet_on_the_lse_target() {
    for (name, bytes) in seed_inputs("lse", &default_corpus()) {
        if let Some(f) = finding_from_bytes(&bytes, &["lse"]) {
            panic!("{name}: {}\n{}", f.signature(), f.to_test_text());
        }
    }
}

#[test]
fn the_seeds_command_writes_one_directory_per_target() {
    let out = std::env::temp_dir().join(format!("loadstar-seeds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let (code, stdout, stderr) = loadstar(&[
        "seeds",
        "--out",
        out.to_str().unwrap(),
        "--targets",
        "lse,parse",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("lse: "), "{stdout}");
    let count = |t: &str| {
        std::fs::read_dir(Path::new(&out).join(t))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    assert_eq!(count("lse"), seed_inputs("lse", &default_corpus()).len());
    assert_eq!(count("parse"), corpus_files(&default_corpus()).len());
    assert_eq!(count("gvn"), 0);
    let (code, _, stderr) =
        loadstar(&["seeds", "--out", out.to_str().unwrap(), "--targets", "nope"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown fuzz target 'nope'"), "{stderr}");
}

#[test]
fn a_target_seeds_only_an_empty_first_corpus_directory_and_not_when_merging() {
    let root = std::env::temp_dir().join(format!("loadstar-seed-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (empty, other) = (root.join("empty"), root.join("other"));
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let s = |p: &Path| p.display().to_string();
    let corpus = default_corpus();
    let merge = vec!["-merge=1".to_string(), s(&empty), s(&other)];
    assert_eq!(seed_corpus_of("lse", &merge, &corpus), None);
    let artifact = root.join("crash-00");
    std::fs::write(&artifact, b"x").unwrap();
    assert_eq!(seed_corpus_of("lse", &[s(&artifact)], &corpus), None);
    let run = vec!["-max_total_time=1".to_string(), s(&empty)];
    let want = seed_inputs("lse", &corpus).len();
    assert_eq!(
        seed_corpus_of("lse", &run, &corpus),
        Some((empty.clone(), want))
    );
    // Not empty any more: left alone.
    assert_eq!(seed_corpus_of("lse", &run, &corpus), None);
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), want);
}
