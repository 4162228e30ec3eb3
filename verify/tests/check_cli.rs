//! `loadstar check FILE`: exit 0 when the original and the optimized module
//! agree on the file's inputs and the generated ones, 1 with the first
//! divergence (both behaviours, the input in IR.md §7 syntax that pastes into
//! `loadstar run --input`), 2 for a bad file. The diverging optimizer comes
//! from the bug zoo (`--inject`, feature `bug-zoo`).

use std::path::PathBuf;

mod support;
use support::loadstar_split as loadstar;

/// Write `text` to a file of its own in the temp directory.
fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadstar-check-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// IR.md §1's example: `%p` and `%q` may be one object.
const ALIASING: &str = "\
; input: p = Point{x: 1, y: 2}, q = p, n = 0
type Point { x: i64, y: i64 }

func @main(%p: Point, %q: Point, %n: i64) -> i64 {
entry:
  %a = load %p.x
  store %q.x, 5
  %b = load %p.x
  %c = add %a, %b
  ret %c
}
";

#[test]
fn a_file_the_passes_keep_equivalent_exits_0() {
    let f = temp_file("clean.ir", ALIASING);
    let (code, out, err) = loadstar(&["check", f.to_str().unwrap(), "--inputs", "8"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no divergence after `pipeline`"), "{out}");
    assert!(out.contains("(1 from the file, 8 generated)"), "{out}");
}

#[test]
fn a_file_that_does_not_parse_exits_2_with_file_line_and_column() {
    let f = temp_file(
        "bad.ir",
        "func @main() -> i64 {\nentry:\n  %a = add 1, $2\n  ret %a\n}\n",
    );
    let (code, out, err) = loadstar(&["check", f.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(&format!(
            "{}:3:15: error: unexpected character '$'",
            f.display()
        )),
        "{err}"
    );
}

#[test]
fn a_bad_input_line_or_pass_list_exits_2() {
    let text = ALIASING.replace("q = p, n = 0", "q = p, n = 0, zz = 3");
    let f = temp_file("badinput.ir", &text);
    let (code, _, err) = loadstar(&["check", f.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("{}:1:", f.display())), "{err}");
    let f = temp_file("clean2.ir", ALIASING);
    let (code, _, err) = loadstar(&["check", f.to_str().unwrap(), "--passes", "nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown pass 'nope'"), "{err}");
}

#[cfg(feature = "bug-zoo")]
#[test]
fn a_diverging_optimization_exits_1_and_prints_both_behaviours_and_the_input() {
    let f = temp_file("diverges.ir", ALIASING);
    let file = f.to_str().unwrap();
    let (code, out, err) = loadstar(&[
        "check",
        file,
        "--passes",
        "lse",
        "--inject",
        "lse-exact-alias",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("divergence after `lse`"), "{out}");
    // The file's own input comes first, and diverges.
    let input_line = format!("input ({file}:1): ");
    let spec = out
        .lines()
        .find_map(|l| l.strip_prefix(&input_line))
        .unwrap_or_else(|| panic!("no input line in:\n{out}"));
    assert_eq!(spec, "p = Point{x: 1, y: 2}, q = p, n = 0");
    let section = |title: &str| -> String {
        out.split(&format!("\n{title}:\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no {title} section in:\n{out}"))
            .lines()
            .take(3)
            .map(|l| l.trim_start().to_string() + "\n")
            .collect()
    };
    let (original, optimized) = (section("original"), section("optimized"));
    assert!(original.starts_with("outcome: return 6"), "{out}");
    assert!(optimized.starts_with("outcome: return 2"), "{out}");
    // The printed input pastes into `loadstar run --input` and replays both.
    let (code, ran, _) = loadstar(&["run", file, "--input", spec]);
    assert_eq!((code, ran), (0, original));
    let (code, ran, _) = loadstar(&[
        "run",
        file,
        "--input",
        spec,
        "--passes",
        "lse",
        "--inject",
        "lse-exact-alias",
    ]);
    assert_eq!((code, ran), (0, optimized));
}

#[cfg(feature = "bug-zoo")]
#[test]
fn a_divergence_only_generated_inputs_reach_is_found_too() {
    // No `; input:` line: the generated inputs alias `%p` and `%q`.
    let text = ALIASING.lines().skip(1).collect::<Vec<_>>().join("\n");
    let f = temp_file("generated.ir", &text);
    let (code, out, err) = loadstar(&[
        "check",
        f.to_str().unwrap(),
        "--passes",
        "lse",
        "--inject",
        "lse-exact-alias",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("input (generated input "), "{out}");
    assert!(out.contains("q = p"), "{out}");
}

#[test]
fn native_adds_the_native_oracle_to_the_check() {
    let f = temp_file("native.ir", ALIASING);
    let path = f.to_str().unwrap();
    let (code, out, err) = loadstar(&["check", path, "--inputs", "8", "--native"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("oracles: interp,native"), "{out}");
    let (code, out, err) = loadstar(&["check", path, "--inputs", "8"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("oracles: interp\n"), "{out}");
    let bad = temp_file("bad-native.ir", "func @main( -> {\n");
    let (code, _, err) = loadstar(&["check", bad.to_str().unwrap(), "--native"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn smt_adds_the_smt_oracle_and_reports_its_verdicts() {
    // The pipeline folds `add %c, 0`: z3 proves the result equivalent.
    let text = ALIASING.replace("ret %c", "%d = add %c, 0\n  ret %d");
    let f = temp_file("smt-clean.ir", &text);
    let (code, out, err) = loadstar(&["check", f.to_str().unwrap(), "--inputs", "4", "--smt"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("oracles: interp,smt"), "{out}");
    assert!(out.contains("smt: 1 proved,"), "{out}");
    // Without a change there is nothing to ask z3.
    let f = temp_file("smt-unchanged.ir", ALIASING);
    let (code, out, err) = loadstar(&["check", f.to_str().unwrap(), "--inputs", "4", "--smt"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("smt: 0 proved, 0 proved (bounded), 0 unknown, 0 unsupported, 1 unchanged"),
        "{out}"
    );
}

#[cfg(feature = "bug-zoo")]
#[test]
fn smt_finds_a_divergence_no_input_reaches_and_prints_its_counterexample() {
    // No `; input:` line and no generated input: only z3 can see the aliasing.
    let text = ALIASING.lines().skip(1).collect::<Vec<_>>().join("\n");
    let f = temp_file("smt-diverges.ir", &text);
    let file = f.to_str().unwrap();
    let args = ["--passes", "lse", "--inject", "lse-exact-alias"];
    let (code, out, err) = loadstar(&[&["check", file, "--inputs", "0"][..], &args].concat());
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) =
        loadstar(&[&["check", file, "--inputs", "0", "--smt"][..], &args].concat());
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("(oracle smt): mismatch-smt (returned value)"),
        "{out}"
    );
    let spec = out
        .lines()
        .find_map(|l| l.strip_prefix("counterexample: "))
        .unwrap_or_else(|| panic!("no counterexample line in:\n{out}"));
    assert!(spec.contains("q = p"), "{out}");
    // The counterexample replays the divergence with `run`.
    let (_, a, _) = loadstar(&["run", file, "--input", spec]);
    let (_, b, _) = loadstar(&[&["run", file, "--input", spec][..], &args].concat());
    assert_ne!(a, b);
}
