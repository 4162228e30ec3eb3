//! `loadstar reduce FILE`: re-check a failing text test (a sweep finding, with
//! `; input:` lines), shrink it while it keeps the same failure signature, and
//! render the reduced text test.

use crate::filetest::parse_directives;
use crate::load::{load_text, select_function, Diagnostic};
use crate::oracle::{check_program_with, run_plan, Finding, Optimizer, OracleConfig};
use crate::reduce::{reduce_finding, reduced_test_text, Limits, Reduction};
use passes::PASS_NAMES;
use std::time::Duration;

/// Options of `loadstar reduce`.
#[derive(Clone, Debug)]
pub struct ReduceOptions {
    /// The failing text test.
    pub file: String,
    /// The pass list to check (one plan); default: the file's `; passes:`
    /// comment, else every pass alone and `pipeline`.
    pub passes: Option<String>,
    /// Wall-clock cap of the reduction.
    pub seconds: f64,
}

/// What `reduce` found.
pub enum ReduceOutcome {
    /// The file does not fail: nothing to reduce (exit 0).
    NotFailing(String),
    /// The reduction (exit 1: a finding is reported).
    Reduced(Box<Reduction>),
}

/// The value of a `; NAME: value` comment line (not a directive) of `text`.
pub fn comment_value<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    text.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix(';')?.trim_start();
        rest.strip_prefix(name)?
            .strip_prefix(':')
            .map(str::trim)
            .filter(|v| !v.is_empty())
    })
}

/// The first finding of the text test `text` (named `file` in messages): each
/// input case against each plan, in order.
pub fn find_in_text(
    text: &str,
    file: &str,
    passes: Option<&str>,
) -> Result<Option<Finding>, Diagnostic> {
    find_in_text_with(text, file, passes, &run_plan)
}

/// [`find_in_text`] with another optimizer than the real passes.
pub fn find_in_text_with(
    text: &str,
    file: &str,
    passes: Option<&str>,
    optimize: &Optimizer<'_>,
) -> Result<Option<Finding>, Diagnostic> {
    let loaded = load_text(text, file)?;
    let directives = parse_directives(text)
        .map_err(|e| Diagnostic(format!("{file}:{}: error: {}", e.line, e.message)))?;
    let module = loaded.module;
    let func = select_function(&module, directives.func.as_deref(), file)?;
    let plans: Vec<String> = match passes.or_else(|| comment_value(text, "passes")) {
        Some(list) => vec![list.to_string()],
        None => PASS_NAMES.iter().map(|s| s.to_string()).collect(),
    };
    let cfg = OracleConfig {
        fuel: directives.fuel.unwrap_or(OracleConfig::default().fuel),
        ..OracleConfig::default()
    };
    let seed = comment_value(text, "seed").and_then(|s| s.parse().ok());
    for case in &directives.cases {
        let input = ir::parse_input_spec(&case.spec, "<input>", &module, module.func(func))
            .map_err(|e| {
                Diagnostic(format!(
                    "{file}:{}: error: bad input: {e}",
                    case.anchor_line()
                ))
            })?;
        for plan in &plans {
            let r = check_program_with(
                &module,
                func,
                std::slice::from_ref(&input),
                std::slice::from_ref(plan),
                optimize,
                &cfg,
            );
            if let Some(mut f) = r.findings.into_iter().next() {
                f.seed = seed;
                return Ok(Some(f));
            }
        }
    }
    Ok(None)
}

/// Run `loadstar reduce`.
pub fn reduce_file(opts: &ReduceOptions) -> Result<ReduceOutcome, Diagnostic> {
    let text = std::fs::read_to_string(&opts.file)
        .map_err(|e| Diagnostic(format!("{}: error: cannot read file: {e}", opts.file)))?;
    if let Some(list) = &opts.passes {
        passes::expand_pass_list(list).map_err(|e| Diagnostic(format!("error: {e}")))?;
    }
    let Some(finding) = find_in_text(&text, &opts.file, opts.passes.as_deref())? else {
        return Ok(ReduceOutcome::NotFailing(format!(
            "{}: does not fail: nothing to reduce",
            opts.file
        )));
    };
    let limits = Limits {
        time: Some(Duration::from_secs_f64(opts.seconds.max(0.0))),
        max_checks: None,
    };
    Ok(ReduceOutcome::Reduced(Box::new(reduce_finding(
        &finding, &limits,
    ))))
}

/// The text `reduce` writes for a reduction.
pub fn render(r: &Reduction) -> String {
    reduced_test_text(r)
}
