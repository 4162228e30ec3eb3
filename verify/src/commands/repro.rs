//! `loadstar repro ARTIFACT --target T`: turn a cargo-fuzz crash artifact (the
//! raw bytes) into a reduced text test by running exactly what the fuzz target
//! runs on those bytes ([`crate::fuzz`]) and reducing the finding.

use crate::fuzz::{finding_from_bytes_with, parse_roundtrip, target_oracle, target_passes};
use crate::load::Diagnostic;
use crate::oracle::panics;
use crate::reduce::{reduce_finding, reduced_test_text, Limits};
use std::time::Duration;

/// What `repro` produced.
pub enum ReproOutcome {
    /// The artifact does not fail on this build (exit 0).
    NotFailing(String),
    /// The reduced text test (exit 1).
    Failing(String),
}

/// The fuzz targets `repro` knows.
pub const TARGETS: &[&str] = &["lse", "gvn", "peeps", "pipeline", "native", "smt", "parse"];

/// Run `loadstar repro` on the bytes of `artifact`.
pub fn repro(artifact: &str, target: &str, seconds: f64) -> Result<ReproOutcome, Diagnostic> {
    let data = std::fs::read(artifact)
        .map_err(|e| Diagnostic(format!("{artifact}: error: cannot read file: {e}")))?;
    repro_bytes(&data, artifact, target, seconds)
}

/// [`repro`] on bytes already read (`label` names them in messages).
pub fn repro_bytes(
    data: &[u8],
    label: &str,
    target: &str,
    seconds: f64,
) -> Result<ReproOutcome, Diagnostic> {
    if target == "parse" {
        return Ok(repro_parse(data, label));
    }
    let Some(passes) = target_passes(target) else {
        return Err(Diagnostic(format!(
            "error: unknown fuzz target '{target}' (known: {})",
            TARGETS.join(", ")
        )));
    };
    let found = panics::catch(|| finding_from_bytes_with(data, passes, &target_oracle(target)))
        .map_err(|msg| {
            Diagnostic(format!(
                "{label}: internal error: the generator panicked: {msg}"
            ))
        })?;
    let Some(finding) = found else {
        return Ok(ReproOutcome::NotFailing(format!(
            "{label}: does not fail the {target} target on this build"
        )));
    };
    let limits = Limits {
        time: Some(Duration::from_secs_f64(seconds.max(0.0))),
        max_checks: None,
    };
    let r = reduce_finding(&finding, &limits);
    Ok(ReproOutcome::Failing(reduced_test_text(&r)))
}

/// The panic message of the parse target on `text`, without its location.
fn parse_failure(text: &str) -> Option<String> {
    let msg = panics::catch(|| parse_roundtrip(text.as_bytes())).err()?;
    let first = msg.lines().next().unwrap_or_default().to_string();
    Some(crate::oracle::finding::normalize_digits(&first))
}

/// The parse target: shrink the text line by line (ddmin) while the round
/// trip fails with the same first message line.
fn repro_parse(data: &[u8], label: &str) -> ReproOutcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return ReproOutcome::NotFailing(format!(
            "{label}: not UTF-8, the parse target ignores it"
        ));
    };
    let Some(sig) = parse_failure(text) else {
        return ReproOutcome::NotFailing(format!(
            "{label}: does not fail the parse target on this build"
        ));
    };
    let mut lines: Vec<&str> = text.lines().collect();
    let mut size = lines.len() / 2;
    while size >= 1 {
        let mut progress = false;
        let mut start = 0;
        while start < lines.len() {
            let end = (start + size).min(lines.len());
            let mut cand = lines.clone();
            cand.drain(start..end);
            if parse_failure(&cand.join("\n")).as_deref() == Some(sig.as_str()) {
                lines = cand;
                progress = true;
            } else {
                start = end;
            }
        }
        if !progress {
            size /= 2;
        }
    }
    let body = lines.join("\n");
    let parses = ir::parse_module(&body, "repro.ir").is_ok();
    let mut out = format!("; Finding: the parse target fails: {sig}\n; signature: parse|{sig}\n");
    out.push_str(if parses {
        "; test: run\n"
    } else {
        "; test: parse-error\n"
    });
    out.push('\n');
    out.push_str(&body);
    out.push('\n');
    ReproOutcome::Failing(out)
}
