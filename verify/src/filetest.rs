//! The filetest runner: text tests under `corpus/` (see docs/filetests.md).
//!
//! A test file is an IR module whose comment lines carry directives
//! (`; test: run`, `; input: ...`, `; expect: ...`, `; check: ...`, `; error: ...`).
//! This module parses the directives, runs the test, compares the result and,
//! in bless mode, rewrites the expectations in place. The `corpus` integration
//! test and the `loadstar` binary both drive it through [`run_file`] / [`run_dir`].

pub mod asm;
pub mod bless;
pub mod directives;
mod exec;
pub mod matcher;

use std::path::{Path, PathBuf};

pub use directives::{parse_directives, Case, CheckLine, Located, TestFile, TestKind};

/// The environment variable that turns on bless mode.
pub const BLESS_VAR: &str = "LOADSTAR_BLESS";

/// True when `LOADSTAR_BLESS` is set to something other than empty or `0`.
pub fn bless_requested() -> bool {
    std::env::var(BLESS_VAR).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The result of running one test file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileResult {
    /// The file.
    pub path: PathBuf,
    /// Every problem found (empty when the test passes).
    pub failures: Vec<String>,
    /// True when bless mode rewrote the file.
    pub rewritten: bool,
}

impl FileResult {
    /// True when the test passed.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Run the test in `text`; `label` names the file in messages. Returns the
/// failures and, in bless mode, the rewritten text when it differs.
pub fn run_text(text: &str, label: &str, bless: bool) -> (Vec<String>, Option<String>) {
    let checked = exec::check_text(text, label, bless);
    let rewritten = checked.blessed.filter(|new| new != text);
    (checked.failures, rewritten)
}

/// Run the test file at `path` (rewriting it in bless mode).
pub fn run_file(path: &Path, bless: bool) -> FileResult {
    run_file_labelled(path, &path.display().to_string(), bless)
}

/// Run the test file at `path`, naming it `label` in messages.
pub fn run_file_labelled(path: &Path, label: &str, bless: bool) -> FileResult {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return FileResult {
                path: path.to_path_buf(),
                failures: vec![format!("{label}: cannot read: {e}")],
                rewritten: false,
            }
        }
    };
    let (mut failures, new_text) = run_text(&text, label, bless);
    let mut rewritten = false;
    if let Some(new_text) = new_text {
        match std::fs::write(path, new_text) {
            Ok(()) => rewritten = true,
            Err(e) => failures.push(format!("{label}: cannot bless: {e}")),
        }
    }
    FileResult {
        path: path.to_path_buf(),
        failures,
        rewritten,
    }
}

/// Every `*.ir` file under `dir`, recursively, in sorted order.
pub fn collect_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "ir") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Run every test file under `dir`, naming each by its path relative to `dir`.
pub fn run_dir(dir: &Path, bless: bool) -> std::io::Result<Vec<FileResult>> {
    Ok(collect_files(dir)?
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap_or(p);
            run_file_labelled(p, &rel.display().to_string(), bless)
        })
        .collect())
}
