//! The LLVM peer: every corpus module translates to LLVM IR that `opt -O2`
//! accepts, the translation gives LLVM exactly IR.md's aliasing and trap
//! rules (what it may and may not remove), and `loadstar peer` reports.

mod support;

use support::loadstar_all;
use verify::load::{load_file, load_text};
use verify::peer::count::{count_llvm, Accesses};
use verify::peer::translate::translate_module;
use verify::peer::{compare, run_opt};

/// The accesses LLVM -O2 keeps in `@main` of `text`.
fn llvm_keeps(text: &str) -> Accesses {
    let m = load_text(text, "test.ir")
        .expect("test module loads")
        .module;
    let out = run_opt(&translate_module(&m)).expect("opt accepts the translation");
    count_llvm(&out)["main"]
}

fn corpus_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("corpus dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            corpus_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ir") {
            out.push(p);
        }
    }
}

#[test]
fn every_corpus_module_translates_to_llvm_ir_that_opt_accepts() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut files = Vec::new();
    corpus_files(&root, &mut files);
    files.sort();
    let pm = passes::PassManager::from_list("pipeline").unwrap();
    let mut translated = 0;
    for f in &files {
        // Files that test parse or verify errors have no module to translate.
        let Ok(loaded) = load_file(f.to_str().unwrap()) else {
            continue;
        };
        let r = compare(&loaded.module, &pm).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(r.funcs.len(), loaded.module.funcs.len());
        let counted = count_llvm(&r.llvm_out);
        for func in &loaded.module.funcs {
            assert!(
                counted.contains_key(&func.name),
                "{}: @{} missing from opt's output",
                f.display(),
                func.name
            );
        }
        translated += 1;
    }
    assert!(
        translated > 200,
        "only {translated} corpus modules translated"
    );
}

const DECLS: &str = "type Point { x: i64, y: i64 }\ntype Node { val: i64, next: Node }\nextern @opaque(i64) -> i64\n";

#[test]
fn same_field_through_two_parameters_may_alias_in_llvm_too() {
    let k = llvm_keeps(&format!(
        "{DECLS}func @main(%p: Point, %q: Point) -> i64 {{\nentry:\n  store %p.x, 1\n  store %q.x, 2\n  %a = load %p.x\n  ret %a\n}}\n"
    ));
    assert_eq!(
        k,
        Accesses {
            loads: 1,
            stores: 2
        }
    );
}

#[test]
fn different_fields_and_element_types_never_alias_in_llvm() {
    let k = llvm_keeps(&format!(
        "{DECLS}func @main(%p: Point, %q: Point, %a: [i64], %b: [Node]) -> i64 {{\nentry:\n  store %p.x, 1\n  store %q.y, 2\n  store %a[0], 3\n  store %b[0], null\n  %r = load %p.x\n  %s = load %a[0]\n  %t = add %r, %s\n  ret %t\n}}\n"
    ));
    assert_eq!(
        k,
        Accesses {
            loads: 0,
            stores: 4
        }
    );
}

#[test]
fn a_fresh_object_is_invisible_to_an_extern_until_it_escapes() {
    let fresh = llvm_keeps(&format!(
        "{DECLS}func @main(%n: i64) -> i64 {{\nentry:\n  %o = new Point\n  store %o.x, %n\n  %c = call @opaque(1)\n  %r = load %o.x\n  escape %o\n  ret %r\n}}\n"
    ));
    assert_eq!(fresh.loads, 0, "the load is forwarded across the extern");
    let escaped = llvm_keeps(&format!(
        "{DECLS}func @main(%n: i64) -> i64 {{\nentry:\n  %o = new Point\n  store %o.x, %n\n  escape %o\n  %c = call @opaque(1)\n  %r = load %o.x\n  ret %r\n}}\n"
    ));
    assert_eq!(escaped.loads, 1, "after escape the extern may write it");
}

#[test]
fn a_store_before_a_possible_trap_is_kept_because_the_trap_shows_the_heap() {
    let k = llvm_keeps(&format!(
        "{DECLS}func @main(%p: Point, %c: i64) -> i64 {{\nentry:\n  store %p.x, 1\n  guard %c\n  store %p.x, 2\n  ret 0\n}}\n"
    ));
    assert_eq!(k.stores, 2);
    let no_trap = llvm_keeps(&format!(
        "{DECLS}func @main(%p: Point, %c: i64) -> i64 {{\nentry:\n  store %p.x, 1\n  store %p.x, 2\n  ret 0\n}}\n"
    ));
    assert_eq!(no_trap.stores, 1);
}

#[test]
fn a_store_before_an_extern_that_reads_nothing_is_kept_for_the_trap_the_call_may_take() {
    // IR.md's effects table: every extern call may trap, and a trap shows
    // the heap, so the first store is observable; the extern's result is
    // still no reason to reload (it writes nothing).
    let k = llvm_keeps(&format!(
        "{DECLS}extern @pure(i64) -> i64 reads(none)\nfunc @main(%p: Point) -> i64 {{\nentry:\n  store %p.x, 1\n  %c = call @pure(1)\n  store %p.x, 2\n  %r = load %p.x\n  ret %r\n}}\n"
    ));
    assert_eq!((k.loads, k.stores), (0, 2));
}

#[test]
fn bounds_checks_length_loads_are_not_counted() {
    let k = llvm_keeps(&format!(
        "{DECLS}func @main(%a: [i64], %i: i64) -> i64 {{\nentry:\n  %n = len %a\n  %r = load %a[%i]\n  %s = add %n, %r\n  ret %s\n}}\n"
    ));
    assert_eq!(
        k,
        Accesses {
            loads: 1,
            stores: 0
        }
    );
}

#[test]
fn peer_cli_prints_the_table_and_exits_1_where_llvm_keeps_fewer() {
    let dir = std::env::temp_dir().join(format!("loadstar-peer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // LLVM folds `eq x, x + 1` to false, so the store under it is dead;
    // loadstar keeps it (corpus/missed/compare_with_itself_plus_a_constant.ir).
    // (The examples this test used before, a call of a function that
    // writes nothing and a load after a volatile load, are met now.)
    let missed = dir.join("missed.ir");
    std::fs::write(
        &missed,
        format!("{DECLS}func @main(%p: Point, %k: i64) -> i64 {{\nentry:\n  %a = add %k, 1\n  %c = eq %k, %a\n  br %c, yes, no\nyes:\n  store %p.y, %k\n  ret 0\nno:\n  ret 0\n}}\n"),
    )
    .unwrap();
    let (code, out) = loadstar_all(&["peer", missed.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("@main") && out.contains("llvm fewer"), "{out}");
    let same = dir.join("same.ir");
    std::fs::write(
        &same,
        format!("{DECLS}func @main(%p: Point) -> i64 {{\nentry:\n  %a = load %p.x\n  ret %a\n}}\n"),
    )
    .unwrap();
    let (code, out) = loadstar_all(&["peer", same.to_str().unwrap(), "--emit-llvm"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("define i64 @f.main"), "{out}");
    // --reduce writes a peer test that pins the miss, and it passes as a corpus file.
    let reduced = dir.join("reduced.ir");
    let (code, out) = loadstar_all(&[
        "peer",
        missed.to_str().unwrap(),
        "--reduce",
        "-o",
        reduced.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    let text = std::fs::read_to_string(&reduced).unwrap();
    assert!(
        text.contains("; test: peer pipeline\n; peer: loadstar 1, llvm 0"),
        "{text}"
    );
    let result = verify::filetest::run_file(&reduced, false);
    assert!(result.passed(), "{:?}", result.failures);
    let (code, out) = loadstar_all(&["peer", same.to_str().unwrap(), "--reduce"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = loadstar_all(&["peer", dir.join("absent.ir").to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn peer_survey_counts_every_program() {
    let (code, out) = loadstar_all(&["peer", "--generated", "6", "--seed", "3", "--jobs", "2"]);
    assert!(code == 0 || code == 1, "{out}");
    assert!(out.contains("programs: 6;"), "{out}");
}

#[test]
fn sweep_with_the_peer_oracle_reports_shares_and_writes_reduced_missed_tests() {
    let out = std::env::temp_dir().join(format!("loadstar-peer-sweep-{}", std::process::id()));
    let (code, text) = loadstar_all(&[
        "sweep",
        "--seconds",
        "60",
        "--max-programs",
        "40",
        "--jobs",
        "1",
        "--oracles",
        "interp,peer",
        "--reduce-seconds",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("llvm peer"), "{text}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let peer = &report["peer"];
    assert_eq!(peer["programs"], 40, "{peer}");
    let shares = ["fewer", "same", "more"].map(|k| peer[k].as_u64().unwrap());
    assert_eq!(shares.iter().sum::<u64>(), 40);
    // Every written missed optimization is a passing `; test: peer` file.
    let missed: Vec<_> = std::fs::read_dir(out.join("missed"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    assert_eq!(missed.len() as u64, shares[2].min(3));
    for f in &missed {
        let r = verify::filetest::run_file(f, false);
        assert!(r.passed(), "{}: {:?}", f.display(), r.failures);
    }
    let _ = std::fs::remove_dir_all(&out);
}
