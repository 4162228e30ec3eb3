//! Shared test support for the peephole / GVN / DCE text tests: parse a
//! corpus file's `; test:`, `; check:`, `; not:`, `; input:` and `; expect:`
//! lines, run the passes, and compare the interpreter's behaviour of the
//! original and the optimized module.

#![allow(dead_code)]

use ir::{FuncId, Module};
use passes::PassManager;
use std::path::{Path, PathBuf};

/// One input of a text test and the behaviour lines it expects.
pub struct Case {
    /// The input spec.
    pub input: String,
    /// Expected lines (`outcome: ...`, `trace: ...`, `heap: ...`).
    pub expect: Vec<String>,
}

/// A parsed text test.
pub struct TextTest {
    /// The file.
    pub path: PathBuf,
    /// The source text.
    pub text: String,
    /// The pass list of `; test: opt LIST`.
    pub passes: String,
    /// `; check:` lines, in order.
    pub checks: Vec<String>,
    /// `; not:` lines.
    pub nots: Vec<String>,
    /// Inputs with their expectations.
    pub cases: Vec<Case>,
    /// False when the file says `; confluent: no` (seeds may give different text).
    pub confluent: bool,
}

/// The workspace's `corpus/` directory.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

/// Every `.ir` file under `corpus/<sub>`, sorted.
pub fn corpus_files(sub: &str) -> Vec<PathBuf> {
    let dir = corpus_dir().join(sub);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ir"))
        .collect();
    out.sort();
    out
}

/// Parse the directives of a text test.
pub fn parse_test(path: &Path) -> TextTest {
    let text = std::fs::read_to_string(path).unwrap();
    let mut t = TextTest {
        path: path.to_path_buf(),
        text: text.clone(),
        passes: String::new(),
        checks: Vec::new(),
        nots: Vec::new(),
        cases: Vec::new(),
        confluent: true,
    };
    for line in text.lines() {
        let Some(d) = line.trim().strip_prefix(';') else {
            continue;
        };
        let d = d.trim();
        if let Some(rest) = d.strip_prefix("test:") {
            let rest = rest.trim();
            t.passes = rest
                .strip_prefix("opt")
                .unwrap_or_else(|| panic!("{}: only `opt` tests here", path.display()))
                .trim()
                .to_string();
        } else if let Some(rest) = d.strip_prefix("check:") {
            t.checks.push(rest.trim().to_string());
        } else if let Some(rest) = d.strip_prefix("not:") {
            t.nots.push(rest.trim().to_string());
        } else if let Some(rest) = d.strip_prefix("input:") {
            t.cases.push(Case {
                input: rest.trim().to_string(),
                expect: Vec::new(),
            });
        } else if let Some(rest) = d.strip_prefix("expect:") {
            // `; expect:` lines with no `; input:` before them: the empty input.
            if t.cases.is_empty() {
                t.cases.push(Case {
                    input: String::new(),
                    expect: Vec::new(),
                });
            }
            t.cases
                .last_mut()
                .expect("a case")
                .expect
                .push(rest.trim().to_string());
        } else if d == "confluent: no" {
            t.confluent = false;
        }
    }
    assert!(
        !t.passes.is_empty(),
        "{}: no `; test:` line",
        path.display()
    );
    t
}

/// Parse and verify a module.
pub fn load(t: &TextTest) -> Module {
    let name = t.path.display().to_string();
    let (m, _) = ir::parse_module(&t.text, &name).unwrap_or_else(|e| panic!("{e}"));
    ir::verify_module(&m).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    m
}

/// Optimize with the test's passes and `seed`; the printed module.
pub fn optimize(t: &TextTest, m: &Module, seed: u64) -> (Module, String) {
    let mut opt = m.clone();
    PassManager::from_list(&t.passes)
        .unwrap()
        .with_seed(seed)
        .run(&mut opt)
        .unwrap_or_else(|e| panic!("{} (seed {seed}): {e}", t.path.display()));
    let printed = ir::print_module(&opt);
    (opt, printed)
}

/// `@main`, else the first function.
pub fn main_func(m: &Module) -> FuncId {
    m.func_by_name("main").unwrap_or(FuncId::new(0))
}

/// The behaviour of `m` on `input`, as its three lines.
pub fn behaviour(m: &Module, input: &str) -> String {
    let f = main_func(m);
    let spec = ir::parse_input_spec(input, "<input>", m, m.func(f))
        .unwrap_or_else(|e| panic!("bad input {input:?}: {e}"));
    interp::Program::new(m)
        .try_run(f, &spec, &interp::Config::default())
        .unwrap_or_else(|e| panic!("input {input:?}: {e}"))
        .behaviour
        .to_string()
}

/// Check the `; check:` and `; not:` lines against `printed`.
pub fn check_text(t: &TextTest, printed: &str) -> Result<(), String> {
    let lines: Vec<&str> = printed.lines().collect();
    let mut at = 0;
    for c in &t.checks {
        match lines[at..].iter().position(|l| l.contains(c.as_str())) {
            Some(k) => at += k + 1,
            None => return Err(format!("check not found (in order): {c:?}")),
        }
    }
    for n in &t.nots {
        if printed.contains(n.as_str()) {
            return Err(format!("`not` text present: {n:?}"));
        }
    }
    Ok(())
}

/// Run one text test completely with `seed`; returns the printed module.
pub fn run_test(t: &TextTest, seed: u64) -> Result<String, String> {
    let m = load(t);
    let (opt, printed) = optimize(t, &m, seed);
    let (re, _) = ir::parse_module(&printed, "<printed>")
        .map_err(|e| format!("printed module does not parse: {e}\n{printed}"))?;
    ir::verify_module(&re).map_err(|e| format!("printed module does not verify: {e:?}"))?;
    check_text(t, &printed).map_err(|e| format!("{e}\n--- printed ---\n{printed}"))?;
    for case in &t.cases {
        let before = behaviour(&m, &case.input);
        let after = behaviour(&opt, &case.input);
        if before != after {
            return Err(format!(
                "behaviour differs on {:?}\noriginal:\n{before}\noptimized:\n{after}\n{printed}",
                case.input
            ));
        }
        for e in &case.expect {
            if !before.lines().any(|l| l.trim_end() == e) {
                return Err(format!("expected {e:?} on {:?}, got\n{before}", case.input));
            }
        }
    }
    Ok(printed)
}
