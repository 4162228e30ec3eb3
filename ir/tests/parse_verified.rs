//! `parse_verified` (each function verified as soon as it is resolved) gives
//! exactly what `parse_module` then `verify_module` give: the same module and
//! source map, the same parse error, or the same verifier errors in the same
//! order.

use ir::{parse_module, parse_verified, verify_module, LoadError, Module, SourceMap};
use proptest::prelude::*;
use std::path::Path;

mod mutate_support;

/// What the two-step path reports for `text`.
#[derive(Debug, PartialEq)]
enum Outcome {
    Module(Module, SourceMap),
    Parse(ir::ParseError),
    Verify(Vec<ir::VerifyError>),
}

fn two_steps(text: &str) -> Outcome {
    match parse_module(text, "t.ir") {
        Err(e) => Outcome::Parse(e),
        Ok((m, map)) => match verify_module(&m) {
            Ok(()) => Outcome::Module(m, map),
            Err(e) => Outcome::Verify(e),
        },
    }
}

fn fused(text: &str) -> Outcome {
    match parse_verified(text, "t.ir") {
        Ok((m, map)) => Outcome::Module(m, map),
        Err(LoadError::Parse(e)) => Outcome::Parse(e),
        Err(LoadError::Verify(e, _)) => Outcome::Verify(e),
    }
}

fn ir_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("corpus directory") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            ir_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "ir") {
            out.push(path);
        }
    }
}

#[test]
fn the_corpus_gives_the_same_outcome_both_ways() {
    let mut files = Vec::new();
    ir_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus"),
        &mut files,
    );
    assert!(files.len() > 100, "found {} corpus files", files.len());
    let (mut ok, mut verify) = (0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        let (a, b) = (two_steps(&text), fused(&text));
        assert_eq!(a, b, "{}", f.display());
        match a {
            Outcome::Module(..) => ok += 1,
            Outcome::Verify(_) => verify += 1,
            Outcome::Parse(_) => {}
        }
    }
    // Both kinds of outcome are exercised (corpus/verify holds ill-formed modules).
    assert!(
        ok > 100 && verify > 5,
        "{ok} well-formed, {verify} ill-formed"
    );
}

/// Three functions calling each other (the first calls one resolved after it).
const MODULE: &str = "type P { x: i64 }\n\
func @a(%p: P, %n: i64) -> i64 {\nentry:\n  %x = load %p.x\n  %c = call @b(%n)\n  br %c, l, r\n\
l:\n  %y = add %x, 1\n  jmp r\nr:\n  %z = phi [entry: %x], [l: %y]\n  ret %z\n}\n\
func @b(%n: i64) -> i64 {\nentry:\n  %m = mul %n, 3\n  ret %m\n}\n\
func @c(%p: P) {\nentry:\n  %v = call @a(%p, 2)\n  store %p.x, %v\n  ret\n}\n";

#[test]
fn errors_in_several_functions_come_in_module_order() {
    // A use before its definition in @a, a missing terminator in @c.
    let text = MODULE
        .replace(
            "  %y = add %x, 1\n  jmp r",
            "  %y = add %w, 1\n  %w = add %x, 1\n  jmp r",
        )
        .replace("  store %p.x, %v\n  ret\n", "  store %p.x, %v\n");
    let Outcome::Verify(errors) = fused(&text) else {
        panic!("expected verifier errors");
    };
    assert!(errors.len() >= 2, "{errors:?}");
    assert_eq!(errors[0].func, Some(ir::FuncId(0)));
    assert_eq!(errors.last().unwrap().func, Some(ir::FuncId(2)));
    assert_eq!(Outcome::Verify(errors), two_steps(&text));
}

#[test]
fn calls_of_later_functions_fail_as_after_parsing() {
    // Calls of functions defined later (so still without a body while the
    // caller is checked), with too few arguments, an argument of the wrong
    // type, and a result of the wrong type: checking each function as it is
    // resolved gives the errors that checking the finished module gives.
    let src = "type T { a: i64 }\n\
               func @main(%p: T, %x: i64) -> i64 {\nentry:\n  %a = call @f(%p)\n  \
               %b = call @f(%x, %x)\n  %c = call @g(%p)\n  %d = add %c, 1\n  ret %a\n}\n\
               func @f(%p: T, %x: i64) -> i64 {\nentry:\n  ret %x\n}\n\
               func @g(%q: T) -> T {\nentry:\n  ret %q\n}\n";
    let Outcome::Verify(after) = two_steps(src) else {
        panic!("expected verifier errors");
    };
    assert!(after.len() >= 3, "{after:?}");
    assert_eq!(fused(src), Outcome::Verify(after));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn edited_modules_give_the_same_outcome_both_ways(
        edits in proptest::collection::vec((any::<usize>(), 0usize..3, "[%a-z0-9 ,:\\n\\[\\]]{0,4}"), 1..4)
    ) {
        let s = mutate_support::apply_edits(MODULE, &edits);
        prop_assert_eq!(two_steps(&s), fused(&s));
    }
}
