//! Reading what the shards of a night left behind: sweep output directories
//! (`report.json` plus the finding text tests written beside it) and
//! libFuzzer artifact files (`crash-*`, `timeout-*`, `oom-*`, also under
//! ClusterFuzzLite's `TARGET-SANITIZER-crash-*` names). Each directory given
//! is walked; a sweep directory that cannot be read whole is returned as a
//! problem naming it, never half-merged.

use super::{Occurrence, Repro, ShardInfo, SweepFigures};
use serde::Deserialize;
use std::path::{Path, PathBuf};

use crate::fuzz::TARGETS;

/// What walking the directories found.
#[derive(Default, Debug)]
pub struct Found {
    /// Sweep directories (with a `report.json`).
    pub sweeps: Vec<PathBuf>,
    /// Directories with finding files but no `report.json` (a sweep that did
    /// not finish), with the number of finding files.
    pub unfinished: Vec<(PathBuf, usize)>,
    /// libFuzzer artifacts.
    pub artifacts: Vec<Artifact>,
    /// Directories below the given ones that could not be read, and why.
    pub unreadable: Vec<(PathBuf, String)>,
}

/// One libFuzzer artifact file.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// The file.
    pub path: PathBuf,
    /// `crash`, `timeout`, `oom`, `leak` or `slow-unit`.
    pub kind: String,
    /// The fuzz target, when the name or a parent directory tells it.
    pub target: Option<String>,
}

/// Walk `root` (a directory): sweep directories are not descended into.
pub fn walk(root: &Path, found: &mut Found) -> std::io::Result<()> {
    let report = root.join("report.json");
    if report.is_file() && !is_triage_report(&report) {
        found.sweeps.push(root.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    let mut findings = 0;
    for p in entries {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if let Err(e) = walk(&p, found) {
                found.unreadable.push((p, format!("cannot read: {e}")));
            }
        } else if meta.is_file() {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            if let Some((target, kind)) = artifact_name(&name) {
                let target = target.or_else(|| target_from_dirs(&p));
                found.artifacts.push(Artifact {
                    path: p,
                    kind,
                    target,
                });
            } else if name.ends_with(".ir") && is_finding_file(&p) {
                findings += 1;
            }
        }
    }
    if findings > 0 {
        found.unfinished.push((root.to_path_buf(), findings));
    }
    Ok(())
}

/// `crash-HEX` (libFuzzer) or `TARGET-SANITIZER-crash-HEX` (ClusterFuzzLite):
/// the target if named, and the kind.
pub fn artifact_name(name: &str) -> Option<(Option<String>, String)> {
    const KINDS: &[&str] = &["crash", "timeout", "oom", "leak", "slow-unit"];
    for kind in KINDS {
        let Some(at) = name.find(&format!("{kind}-")) else {
            continue;
        };
        let hash = &name[at + kind.len() + 1..];
        if hash.is_empty() || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
            continue;
        }
        if at == 0 {
            return Some((None, kind.to_string()));
        }
        let prefix = name[..at].strip_suffix('-')?;
        let target = prefix.split('-').next().unwrap_or_default();
        return Some((
            TARGETS.contains(&target).then(|| target.to_string()),
            kind.to_string(),
        ));
    }
    None
}

/// The nearest parent directory named after a target (`lse`, `fuzz-lse`,
/// `artifacts-lse`, `lse-crashes`...).
fn target_from_dirs(path: &Path) -> Option<String> {
    for dir in path.ancestors().skip(1) {
        let name = dir.file_name()?.to_string_lossy();
        for part in name.split(['-', '_', '.']) {
            if TARGETS.contains(&part) {
                return Some(part.to_string());
            }
        }
    }
    None
}

/// Whether `path` is a triage report written among the shards (its first
/// field is [`super::REPORT_FORMAT`]), not a sweep's.
fn is_triage_report(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let marker = format!("\"format\": \"{}\"", super::REPORT_FORMAT);
    String::from_utf8_lossy(&head[..n]).contains(&marker)
}

/// Whether `path` starts like a finding the sweep wrote (`; Finding:`).
fn is_finding_file(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .map(|t| t.starts_with("; Finding:"))
        .unwrap_or(false)
}

#[derive(Deserialize)]
struct SweepReport {
    seed: u64,
    shard: String,
    seconds: f64,
    programs_per_second: f64,
    totals: SweepTotals,
    findings: Vec<SweepFinding>,
}

#[derive(Deserialize)]
struct SweepTotals {
    programs: u64,
    raw_findings: u64,
    #[serde(default)]
    native_modules: u64,
    #[serde(default)]
    native_runs: u64,
    #[serde(default)]
    smt: SmtFigures,
}

#[derive(Deserialize, Default)]
struct SmtFigures {
    #[serde(default)]
    programs: u64,
    #[serde(default)]
    queries: u64,
}

#[derive(Deserialize)]
struct SweepFinding {
    signature: String,
    file: String,
    hits: u64,
}

/// Read one sweep directory whole: its figures and one occurrence per
/// distinct finding, or why it cannot be merged.
pub fn read_sweep(dir: &Path, name: &str) -> Result<(ShardInfo, Vec<Occurrence>), String> {
    let report_path = dir.join("report.json");
    let text = std::fs::read_to_string(&report_path)
        .map_err(|e| format!("report.json: cannot read: {e}"))?;
    let r: SweepReport = serde_json::from_str(&text).map_err(|e| format!("report.json: {e}"))?;
    let mut occurrences = Vec::new();
    for f in &r.findings {
        // The report names the file as the sweep saw it (`--out` joined with
        // its name); the shard directory may have moved since.
        let file_name = Path::new(&f.file)
            .file_name()
            .ok_or_else(|| format!("report.json: finding `{}` has no file", f.signature))?;
        let path = dir.join(file_name);
        let shown = format!("{name}/{}", file_name.to_string_lossy());
        let test =
            std::fs::read_to_string(&path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
        match signature_line(&test) {
            Some(s) if s == f.signature => {}
            Some(s) => {
                return Err(format!(
                    "{shown}: its signature `{s}` is not report.json's `{}`",
                    f.signature
                ))
            }
            None => return Err(format!("{shown}: no `; signature:` line (half written?)")),
        }
        occurrences.push(Occurrence {
            signature: f.signature.clone(),
            shard: name.to_string(),
            hits: f.hits,
            repro: Repro::text(shown, test),
        });
    }
    let info = ShardInfo {
        name: name.to_string(),
        sweep: Some(SweepFigures {
            seed: r.seed,
            shard: r.shard,
            seconds: r.seconds,
            programs: r.totals.programs,
            programs_per_second: r.programs_per_second,
            raw_findings: r.totals.raw_findings,
            native_modules: r.totals.native_modules,
            native_runs: r.totals.native_runs,
            smt_programs: r.totals.smt.programs,
            smt_queries: r.totals.smt.queries,
        }),
        artifacts: 0,
        distinct: occurrences.len(),
    };
    Ok((info, occurrences))
}

/// The value of the `; signature:` line of a text test.
pub fn signature_line(text: &str) -> Option<&str> {
    text.lines()
        .take_while(|l| l.starts_with(';'))
        .find_map(|l| l.strip_prefix("; signature: "))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_names_of_libfuzzer_and_clusterfuzzlite() {
        assert_eq!(artifact_name("crash-0a1b"), Some((None, "crash".into())));
        assert_eq!(
            artifact_name("lse-address-crash-0a1b"),
            Some((Some("lse".into()), "crash".into()))
        );
        assert_eq!(artifact_name("oom-ff"), Some((None, "oom".into())));
        assert_eq!(
            artifact_name("slow-unit-12"),
            Some((None, "slow-unit".into()))
        );
        assert_eq!(artifact_name("crash-xyz"), None);
        assert_eq!(artifact_name("report.json"), None);
        assert_eq!(
            target_from_dirs(Path::new("night/fuzz-native/crash-1")),
            Some("native".into())
        );
        assert_eq!(target_from_dirs(Path::new("night/x/crash-1")), None);
    }
}
