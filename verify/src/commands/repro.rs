//! `loadstar repro ARTIFACT --target T`: turn a cargo-fuzz crash artifact (the
//! raw bytes) into a reduced text test by running exactly what the fuzz target
//! runs on those bytes ([`crate::fuzz`]) and reducing the finding.

use crate::fuzz::{finding_from_bytes_with, parse_roundtrip, target_oracle, target_passes};
use crate::load::Diagnostic;
use crate::oracle::{panics, Finding, OracleConfig};
use crate::reduce::{reduce_finding, reduced_test_text, Limits};
use std::time::Duration;

/// What `repro` produced.
pub enum ReproOutcome {
    /// The artifact does not fail on this build (exit 0).
    NotFailing(String),
    /// The reduced text test (exit 1).
    Failing(String),
}

pub use crate::fuzz::TARGETS;

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
    Ok(match replay(data, label, target)? {
        Err(msg) => ReproOutcome::NotFailing(msg),
        Ok(failure) => ReproOutcome::Failing(reduce_failure(&failure, seconds)),
    })
}

/// What a fuzz target's input fails with when it is replayed.
#[derive(Clone, Debug)]
pub enum Failure {
    /// A finding of a program-checking target (unreduced).
    Program(Box<Finding>),
    /// The parse target's round trip failed with `message` (its first line,
    /// digits as `#`) on `text`.
    Parse {
        /// The normalized first line of the panic.
        message: String,
        /// The input text.
        text: String,
    },
}

impl Failure {
    /// The failure signature: the finding's, or `parse|MESSAGE`.
    pub fn signature(&self) -> String {
        match self {
            Failure::Program(f) => f.signature(),
            Failure::Parse { message, .. } => format!("parse|{message}"),
        }
    }
}

/// Run what fuzz target `target` runs on `data` ([`crate::fuzz`]), with
/// native code in forked children (a fault is a `native-crash` finding, not
/// the end of this process): the failure, or `Err(message)` when the input
/// does not fail on this build. An unknown target is a [`Diagnostic`].
pub fn replay(
    data: &[u8],
    label: &str,
    target: &str,
) -> Result<Result<Failure, String>, Diagnostic> {
    if target == "parse" {
        let Ok(text) = std::str::from_utf8(data) else {
            return Ok(Err(format!(
                "{label}: not UTF-8, the parse target ignores it"
            )));
        };
        return Ok(match parse_failure(text) {
            Some(message) => Ok(Failure::Parse {
                message,
                text: text.to_string(),
            }),
            None => Err(format!(
                "{label}: does not fail the parse target on this build"
            )),
        });
    }
    let Some(passes) = target_passes(target) else {
        return Err(Diagnostic(format!(
            "error: unknown fuzz target '{target}' (known: {})",
            TARGETS.join(", ")
        )));
    };
    let cfg = OracleConfig {
        isolate: true,
        ..target_oracle(target)
    };
    let found = panics::catch(|| finding_from_bytes_with(data, passes, &cfg)).map_err(|msg| {
        Diagnostic(format!(
            "{label}: internal error: the generator panicked: {msg}"
        ))
    })?;
    Ok(match found {
        Some(f) => Ok(Failure::Program(Box::new(f))),
        None => Err(format!(
            "{label}: does not fail the {target} target on this build"
        )),
    })
}

/// The reduced text test of a replayed failure, reduced within `seconds`.
pub fn reduce_failure(failure: &Failure, seconds: f64) -> String {
    match failure {
        Failure::Program(finding) => {
            let limits = Limits {
                time: Some(Duration::from_secs_f64(seconds.max(0.0))),
                max_checks: None,
            };
            reduced_test_text(&reduce_finding(finding, &limits))
        }
        Failure::Parse { message, text } => repro_parse(text, message),
    }
}

/// The panic message of the parse target on `text`, without its location.
fn parse_failure(text: &str) -> Option<String> {
    let msg = panics::catch(|| parse_roundtrip(text.as_bytes())).err()?;
    let first = msg.lines().next().unwrap_or_default().to_string();
    Some(crate::oracle::finding::normalize_digits(&first))
}

/// The parse target: shrink the text line by line (ddmin) while the round
/// trip fails with the same first message line `sig`.
fn repro_parse(text: &str, sig: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let mut size = lines.len() / 2;
    while size >= 1 {
        let mut progress = false;
        let mut start = 0;
        while start < lines.len() {
            let end = (start + size).min(lines.len());
            let mut cand = lines.clone();
            cand.drain(start..end);
            if parse_failure(&cand.join("\n")).as_deref() == Some(sig) {
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
    out
}
