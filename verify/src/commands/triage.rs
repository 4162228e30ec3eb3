//! `loadstar triage DIR... [--known FILE] [-o REPORT]`: one report for a
//! night. Walks the directories for sweep outputs and libFuzzer artifacts,
//! replays each crash artifact through the code `loadstar repro` runs to get
//! its failure signature (reducing the smallest artifact of each), merges
//! everything with [`crate::triage::merge`], and writes the JSON report and
//! the Markdown summary. Exit 1 only when a signature is new.

use super::repro::{reduce_failure, replay, Failure};
use crate::load::Diagnostic;
use crate::triage::known::{parse_known, KnownEntry};
use crate::triage::render::markdown;
use crate::triage::shard::{read_sweep, walk, Artifact, Found};
use crate::triage::{merge, Collected, Occurrence, Report, Repro, ShardInfo, Skipped};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Options of `loadstar triage`.
#[derive(Clone, Debug)]
pub struct TriageOptions {
    /// Shard output directories (walked recursively).
    pub dirs: Vec<String>,
    /// The known-findings file.
    pub known: Option<String>,
    /// Where the JSON report goes.
    pub out: String,
    /// Where the Markdown summary also goes (it is always printed).
    pub summary: Option<String>,
    /// Time cap for reducing the smallest crash artifact of each signature.
    pub reduce_seconds: f64,
}

/// What `triage` produced.
pub struct TriageOutcome {
    /// The merged report (also written as JSON).
    pub report: Report,
    /// The Markdown summary.
    pub markdown: String,
}

/// Run `loadstar triage`; a missing directory, an unreadable or malformed
/// known-findings file or an unwritable output is a [`Diagnostic`] (exit 2).
pub fn triage(opts: &TriageOptions) -> Result<TriageOutcome, Diagnostic> {
    let known = match &opts.known {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Diagnostic(format!("{path}: error: cannot read file: {e}")))?;
            parse_known(&text, path).map_err(Diagnostic)?
        }
        None => Vec::new(),
    };
    let mut found = Found::default();
    for dir in &opts.dirs {
        if !Path::new(dir).is_dir() {
            return Err(Diagnostic(format!("{dir}: error: not a directory")));
        }
        walk(Path::new(dir), &mut found)
            .map_err(|e| Diagnostic(format!("{dir}: error: cannot read: {e}")))?;
    }
    let report = collect_and_merge(found, &known, opts.reduce_seconds);
    let md = markdown(&report);
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| Diagnostic(format!("error: cannot encode the report: {e}")))?;
    write_file(&opts.out, &json)?;
    if let Some(path) = &opts.summary {
        write_file(path, &md)?;
    }
    Ok(TriageOutcome {
        report,
        markdown: md,
    })
}

fn write_file(path: &str, text: &str) -> Result<(), Diagnostic> {
    if let Some(parent) = Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        let _ = std::fs::create_dir_all(parent);
    }
    std::fs::write(path, text).map_err(|e| Diagnostic(format!("{path}: error: cannot write: {e}")))
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

/// Read every shard that was found and merge.
fn collect_and_merge(found: Found, known: &[KnownEntry], reduce_seconds: f64) -> Report {
    let mut c = Collected::default();
    for dir in &found.sweeps {
        let name = shown(dir);
        match read_sweep(dir, &name) {
            Ok((info, occ)) => {
                c.shards.push(info);
                c.occurrences.extend(occ);
            }
            Err(reason) => c.skipped.push(Skipped { name, reason }),
        }
    }
    for (dir, reason) in &found.unreadable {
        c.skipped.push(Skipped {
            name: shown(dir),
            reason: reason.clone(),
        });
    }
    for (dir, n) in &found.unfinished {
        c.skipped.push(Skipped {
            name: shown(dir),
            reason: format!(
                "no report.json (the sweep did not finish); its {n} finding file(s) not merged"
            ),
        });
    }
    let mut by_dir: BTreeMap<PathBuf, Vec<Artifact>> = BTreeMap::new();
    for a in found.artifacts {
        let dir = a.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        by_dir.entry(dir).or_default().push(a);
    }
    for (dir, artifacts) in by_dir {
        let (info, occ) = artifact_shard(&dir, &artifacts, reduce_seconds, &mut c.skipped);
        c.shards.push(info);
        c.occurrences.extend(occ);
    }
    merge(c, known)
}

/// The artifacts of one directory: each replayed (crashes) or named by its
/// kind (timeouts, out-of-memory), the smallest crash of each signature reduced.
fn artifact_shard(
    dir: &Path,
    artifacts: &[Artifact],
    reduce_seconds: f64,
    skipped: &mut Vec<Skipped>,
) -> (ShardInfo, Vec<Occurrence>) {
    let name = shown(dir);
    let mut occ = Vec::new();
    // Replayed failures per signature: (bytes, path, failure).
    let mut failures: BTreeMap<String, Vec<(usize, String, Failure)>> = BTreeMap::new();
    let mut merged = 0;
    for a in artifacts {
        let label = shown(&a.path);
        let Some(target) = &a.target else {
            skipped.push(Skipped {
                name: label,
                reason: "cannot tell its fuzz target: keep artifacts in a directory named after the target (e.g. `fuzz-lse/`)".into(),
            });
            continue;
        };
        let data = match std::fs::read(&a.path) {
            Ok(d) => d,
            Err(e) => {
                skipped.push(Skipped {
                    name: label,
                    reason: format!("cannot read: {e}"),
                });
                continue;
            }
        };
        merged += 1;
        if a.kind != "crash" {
            occ.push(raw(
                format!("{target}|{}|libFuzzer", a.kind),
                &name,
                label,
                data.len(),
            ));
            continue;
        }
        match replay(&data, &label, target) {
            Ok(Ok(f)) => failures
                .entry(f.signature())
                .or_default()
                .push((data.len(), label, f)),
            Ok(Err(_)) => occ.push(raw(
                format!("{target}|crash|does not replay without the sanitizer"),
                &name,
                label,
                data.len(),
            )),
            Err(diag) => {
                merged -= 1;
                skipped.push(Skipped {
                    name: label,
                    reason: diag.to_string(),
                });
            }
        }
    }
    for (sig, mut list) in failures {
        list.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        for (k, (bytes, label, f)) in list.into_iter().enumerate() {
            let repro = if k == 0 {
                Repro::text(label, reduce_failure(&f, reduce_seconds))
            } else {
                Repro::raw(label, bytes)
            };
            occ.push(Occurrence {
                signature: sig.clone(),
                shard: name.clone(),
                hits: 1,
                repro,
            });
        }
    }
    let distinct = occ
        .iter()
        .map(|o| &o.signature)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let info = ShardInfo {
        name,
        sweep: None,
        artifacts: merged,
        distinct,
    };
    (info, occ)
}

fn raw(signature: String, shard: &str, label: String, bytes: usize) -> Occurrence {
    Occurrence {
        signature,
        shard: shard.to_string(),
        hits: 1,
        repro: Repro::raw(label, bytes),
    }
}
