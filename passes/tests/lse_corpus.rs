//! The LSE text tests of `corpus/lse/` (until the shared corpus runner lands):
//! each file is parsed, optimized with `lse` (verifier on), its `; check:`
//! lines are matched in order and its `; not:` lines nowhere against the
//! printed optimized module, the printed module must parse again, and for
//! every `; input:` both the original and the optimized module must produce
//! the three `; expect:` lines — under the effect checker, with no violation.
//!
//! Files in `corpus/lse/known-bugs/` reproduce LSE bugs that are not fixed
//! yet: they must still fail (when one passes, move it up to `corpus/lse/`).
//!
//! `LOADSTAR_BLESS=1` rewrites the `; expect:` lines from the original module.

use interp::{run_checked, Config, Program};
use ir::{FuncId, Module};
use std::path::{Path, PathBuf};

/// One `; input:` with its expected three lines.
struct Case {
    input: String,
    expect: Vec<String>,
}

/// A parsed test file.
struct TestFile {
    passes: String,
    checks: Vec<String>,
    nots: Vec<String>,
    cases: Vec<Case>,
}

fn directive<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.trim_start().strip_prefix(';')?.trim_start();
    rest.strip_prefix(name)?.strip_prefix(':').map(str::trim)
}

fn parse_test(src: &str) -> Result<TestFile, String> {
    let mut t = TestFile {
        passes: String::new(),
        checks: Vec::new(),
        nots: Vec::new(),
        cases: Vec::new(),
    };
    for line in src.lines() {
        if let Some(p) = directive(line, "test") {
            t.passes = p
                .strip_prefix("opt")
                .ok_or_else(|| format!("unsupported test kind `{p}`"))?
                .trim()
                .to_string();
        } else if let Some(c) = directive(line, "check") {
            t.checks.push(c.to_string());
        } else if let Some(c) = directive(line, "not") {
            t.nots.push(c.to_string());
        } else if let Some(i) = directive(line, "input") {
            t.cases.push(Case {
                input: i.to_string(),
                expect: Vec::new(),
            });
        } else if let Some(e) = directive(line, "expect") {
            t.cases
                .last_mut()
                .ok_or("`; expect:` before any `; input:`")?
                .expect
                .push(e.to_string());
        }
    }
    if t.passes.is_empty() {
        return Err("no `; test: opt PASSES` line".into());
    }
    Ok(t)
}

fn main_func(m: &Module) -> Result<FuncId, String> {
    m.func_by_name("main")
        .or_else(|| (!m.funcs.is_empty()).then(|| FuncId::new(0)))
        .ok_or_else(|| "no function".to_string())
}

/// Run `m` on `input` under the effect checker; the three lines of behaviour.
fn behaviour(m: &Module, input: &str, what: &str) -> Result<Vec<String>, String> {
    let f = main_func(m)?;
    let spec = ir::parse_input_spec(input, "<input>", m, m.func(f)).map_err(|e| e.to_string())?;
    let (exec, violations) = run_checked(&Program::new(m), f, &spec, &Config::default())
        .map_err(|e| format!("{what}: {e}"))?;
    if let Some(v) = violations.first() {
        return Err(format!("{what}: {v}"));
    }
    Ok(exec
        .behaviour
        .to_string()
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect())
}

fn check_lines(printed: &str, t: &TestFile) -> Result<(), String> {
    let lines: Vec<&str> = printed.lines().collect();
    let mut at = 0;
    for c in &t.checks {
        match lines[at..].iter().position(|l| l.contains(c.as_str())) {
            Some(i) => at += i + 1,
            None => return Err(format!("`; check: {c}` not found (in order) in\n{printed}")),
        }
    }
    for n in &t.nots {
        if let Some(l) = lines.iter().find(|l| l.contains(n.as_str())) {
            return Err(format!("`; not: {n}` found in line `{l}` of\n{printed}"));
        }
    }
    Ok(())
}

/// Check one file; with `bless`, return the source with fresh expectations.
fn run_file(path: &Path, bless: bool) -> Result<Option<String>, String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let t = parse_test(&src)?;
    let name = path.display().to_string();
    let (original, _) = ir::parse_module(&src, &name).map_err(|e| e.to_string())?;
    let mut optimized = original.clone();
    let pm = passes::PassManager::from_list(&t.passes).map_err(|e| e.to_string())?;
    pm.run(&mut optimized)
        .map_err(|e| format!("pass failed: {e}"))?;
    let printed = ir::print_module(&optimized);
    let (reparsed, _) = ir::parse_module(&printed, "<optimized>")
        .map_err(|e| format!("the optimized module does not parse again: {e}\n{printed}"))?;
    check_lines(&printed, &t)?;
    if t.cases.is_empty() {
        return Err("no `; input:` line".into());
    }
    let mut blessed = Vec::new();
    for case in &t.cases {
        let want = behaviour(&original, &case.input, "original")?;
        if bless {
            blessed.push(want.clone());
        } else if want != case.expect {
            return Err(format!(
                "input `{}`: original gives\n{}\nexpected\n{}",
                case.input,
                want.join("\n"),
                case.expect.join("\n")
            ));
        }
        for (m, what) in [(&optimized, "optimized"), (&reparsed, "reparsed optimized")] {
            let got = behaviour(m, &case.input, what)?;
            if got != want {
                return Err(format!(
                    "input `{}`: {what} gives\n{}\nbut the original gives\n{}\n{printed}",
                    case.input,
                    got.join("\n"),
                    want.join("\n")
                ));
            }
        }
    }
    Ok(bless.then(|| rewrite_expectations(&src, &blessed)))
}

fn rewrite_expectations(src: &str, blessed: &[Vec<String>]) -> String {
    let mut out = String::new();
    let mut case = 0;
    for line in src.lines() {
        if directive(line, "expect").is_some() {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if directive(line, "input").is_some() {
            for e in &blessed[case] {
                out.push_str("; expect: ");
                out.push_str(e);
                out.push('\n');
            }
            case += 1;
        }
    }
    out
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

fn ir_files(dir: &Path, recursive: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            if recursive {
                out.extend(ir_files(&p, true));
            }
        } else if p.extension().is_some_and(|x| x == "ir") {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn lse_corpus_files_pass() {
    let bless = std::env::var_os("LOADSTAR_BLESS").is_some_and(|v| v == "1");
    let files = ir_files(&corpus_dir().join("lse"), false);
    assert!(files.len() >= 40, "only {} LSE text tests", files.len());
    let mut failures = Vec::new();
    for f in &files {
        match run_file(f, bless) {
            Ok(Some(new)) => std::fs::write(f, new).expect("bless"),
            Ok(None) => {}
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn known_lse_bugs_still_fail() {
    for f in ir_files(&corpus_dir().join("lse/known-bugs"), false) {
        assert!(
            run_file(&f, false).is_err(),
            "{} passes now: move it to corpus/lse/",
            f.display()
        );
    }
}

/// Every run-test input anywhere in the corpus runs under the effect checker
/// with no violation, on the original module.
#[test]
fn every_corpus_input_is_effect_clean() {
    let mut checked = 0;
    for f in ir_files(&corpus_dir(), true) {
        let src = std::fs::read_to_string(&f).expect("read");
        let Ok((m, _)) = ir::parse_module(&src, &f.display().to_string()) else {
            continue;
        };
        for line in src.lines() {
            if let Some(input) = directive(line, "input") {
                if let Err(e) = behaviour(&m, input, "original") {
                    assert!(!e.contains("effect violation"), "{}: {e}", f.display());
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 0);
}

#[test]
fn check_and_not_lines_are_matched_in_order() {
    let t = parse_test("; test: opt lse\n; check: b\n; check: a\n; not: zz\n").expect("parses");
    assert!(check_lines("a\nb\n", &t).is_err(), "order matters");
    assert!(check_lines("b\na\n", &t).is_ok());
    assert!(check_lines("b\na zz\n", &t).is_err(), "not: anywhere");
}
