//! `loadstar triage`'s library: one report for a night of shards. Sweep
//! outputs and replayed libFuzzer artifacts become [`Occurrence`]s; [`merge`]
//! deduplicates them by failure signature (the one the reducer keeps:
//! `passes|kind|part`), keeps the smallest repro of each, marks the
//! signatures of the known-findings file as known and lists the known ones
//! not seen as fixed. [`render::markdown`] is the job summary.

pub mod known;
pub mod render;
pub mod shard;

use known::KnownEntry;
use serde::Serialize;
use std::collections::BTreeMap;

/// A reproducer of a signature: a text test, or (for artifacts that do not
/// replay into one) the raw input's path.
#[derive(Clone, Debug, Serialize)]
pub struct Repro {
    /// Where it came from (`SHARD/FILE`, or the artifact's path).
    pub source: String,
    /// IR lines of the text test (not comments, not blank); `None` for raw bytes.
    pub lines: Option<usize>,
    /// Its size in bytes.
    pub bytes: usize,
    /// The text test, when there is one.
    pub text: Option<String>,
}

impl Repro {
    /// A text-test repro.
    pub fn text(source: String, text: String) -> Repro {
        Repro {
            source,
            lines: Some(ir_lines(&text)),
            bytes: text.len(),
            text: Some(text),
        }
    }

    /// A raw-input repro of `bytes` bytes.
    pub fn raw(source: String, bytes: usize) -> Repro {
        Repro {
            source,
            lines: None,
            bytes,
            text: None,
        }
    }

    /// Smaller is better: text tests before raw inputs, then fewer IR lines,
    /// fewer bytes, and the source name to break ties.
    fn key(&self) -> (bool, usize, usize, &str) {
        (
            self.text.is_none(),
            self.lines.unwrap_or(usize::MAX),
            self.bytes,
            &self.source,
        )
    }
}

/// The lines of a text test that are IR (neither blank nor `;` comments).
pub fn ir_lines(text: &str) -> usize {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(';'))
        .count()
}

/// One finding of one shard.
#[derive(Clone, Debug)]
pub struct Occurrence {
    /// Its failure signature.
    pub signature: String,
    /// The shard it came from.
    pub shard: String,
    /// How many programs (or artifacts) hit it there.
    pub hits: u64,
    /// Its reproducer.
    pub repro: Repro,
}

/// A sweep shard's figures, from its `report.json`.
#[derive(Clone, Debug, Serialize)]
pub struct SweepFigures {
    /// The sweep seed.
    pub seed: u64,
    /// `I/N`.
    pub shard: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Programs checked.
    pub programs: u64,
    /// Programs per second.
    pub programs_per_second: f64,
    /// Findings before deduplication.
    pub raw_findings: u64,
    /// Modules the native oracle ran.
    pub native_modules: u64,
    /// Native executions.
    pub native_runs: u64,
    /// Programs the SMT oracle sampled.
    pub smt_programs: u64,
    /// SMT queries.
    pub smt_queries: u64,
}

/// One shard that was merged.
#[derive(Clone, Debug, Serialize)]
pub struct ShardInfo {
    /// Its directory, as given (or found under a given directory).
    pub name: String,
    /// A sweep shard's figures (`None` for a directory of fuzz artifacts).
    pub sweep: Option<SweepFigures>,
    /// libFuzzer artifacts in it.
    pub artifacts: usize,
    /// Distinct signatures it found.
    pub distinct: usize,
}

/// A shard output that was not merged, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    /// The directory or file.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// What the shards gave, before merging.
#[derive(Default, Debug)]
pub struct Collected {
    /// Shards merged.
    pub shards: Vec<ShardInfo>,
    /// Every finding of every shard.
    pub occurrences: Vec<Occurrence>,
    /// Outputs skipped.
    pub skipped: Vec<Skipped>,
}

/// Whether a signature is new tonight or listed as known.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not in the known-findings file: the night fails.
    New,
    /// In the known-findings file.
    Known,
}

/// One deduplicated signature of the night.
#[derive(Clone, Debug, Serialize)]
pub struct Signature {
    /// The failure signature.
    pub signature: String,
    /// New or known.
    pub status: Status,
    /// The oracle that finds this kind ([`oracle_of`]).
    pub oracle: String,
    /// The known-findings file's comment, for a known signature.
    pub known_because: Option<String>,
    /// Hits summed over the shards.
    pub hits: u64,
    /// The shards that found it.
    pub shards: Vec<String>,
    /// The smallest reproducer among all shards.
    pub repro: Repro,
}

/// Per oracle: the work done and what it found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OracleCounts {
    /// What it checked (programs, native modules, SMT queries, artifacts).
    pub work: String,
    /// New signatures.
    pub new: usize,
    /// Known signatures.
    pub known: usize,
    /// Hits summed.
    pub hits: u64,
}

/// The night's report (written as JSON; [`render::markdown`] summarizes it).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// [`REPORT_FORMAT`]: tells this report from a sweep's `report.json`
    /// when it is written among the shards.
    pub format: &'static str,
    /// New signatures.
    pub new: usize,
    /// Known signatures seen tonight.
    pub known: usize,
    /// Known signatures not seen tonight.
    pub fixed: usize,
    /// Programs checked by every sweep shard together.
    pub programs: u64,
    /// Every signature seen, new ones first.
    pub signatures: Vec<Signature>,
    /// Known signatures not seen tonight ("fixed since last").
    pub fixed_signatures: Vec<KnownEntry>,
    /// Per oracle.
    pub oracles: BTreeMap<String, OracleCounts>,
    /// Shards merged.
    pub shards: Vec<ShardInfo>,
    /// Outputs skipped.
    pub skipped: Vec<Skipped>,
}

/// The first field of every triage report.
pub const REPORT_FORMAT: &str = "loadstar-triage";

/// The oracle that reports findings of the signature's kind: `native`
/// (`mismatch-native`, `native-crash`), `smt` (`mismatch-smt`,
/// `smt-unconfirmed`), `lli` (`mismatch-lli`), `parse` (the parse target), `libfuzzer` (a timeout,
/// an out-of-memory, or a crash that does not replay without the sanitizer),
/// else `interp`.
pub fn oracle_of(signature: &str) -> &'static str {
    let mut parts = signature.splitn(3, '|');
    let first = parts.next().unwrap_or_default();
    let kind = parts.next().unwrap_or_default();
    if first == "parse" && !signature.starts_with("parse|crash|") {
        return "parse";
    }
    match kind {
        "mismatch-native" | "native-crash" => "native",
        "mismatch-smt" | "smt-unconfirmed" => "smt",
        "mismatch-lli" => "lli",
        "crash" | "timeout" | "oom" | "leak" | "slow-unit" => "libfuzzer",
        _ => "interp",
    }
}

/// Merge the shards' findings: one entry per signature with the hits summed,
/// the shards listed and the smallest repro kept; known signatures marked.
pub fn merge(c: Collected, known: &[KnownEntry]) -> Report {
    let mut by_sig: BTreeMap<String, Signature> = BTreeMap::new();
    for o in c.occurrences {
        let k = known.iter().find(|k| k.signature == o.signature);
        let e = by_sig
            .entry(o.signature.clone())
            .or_insert_with(|| Signature {
                signature: o.signature.clone(),
                status: if k.is_some() {
                    Status::Known
                } else {
                    Status::New
                },
                oracle: oracle_of(&o.signature).to_string(),
                known_because: k.map(|k| k.comment.clone()),
                hits: 0,
                shards: Vec::new(),
                repro: o.repro.clone(),
            });
        e.hits += o.hits;
        if !e.shards.contains(&o.shard) {
            e.shards.push(o.shard);
        }
        if o.repro.key() < e.repro.key() {
            e.repro = o.repro;
        }
    }
    let mut signatures: Vec<Signature> = by_sig.into_values().collect();
    signatures.sort_by(|a, b| {
        (a.status == Status::Known, &a.signature).cmp(&(b.status == Status::Known, &b.signature))
    });
    let fixed_signatures: Vec<KnownEntry> = known
        .iter()
        .filter(|k| !signatures.iter().any(|s| s.signature == k.signature))
        .cloned()
        .collect();
    let oracles = oracle_counts(&c.shards, &signatures);
    Report {
        format: REPORT_FORMAT,
        new: signatures
            .iter()
            .filter(|s| s.status == Status::New)
            .count(),
        known: signatures
            .iter()
            .filter(|s| s.status == Status::Known)
            .count(),
        fixed: fixed_signatures.len(),
        programs: c
            .shards
            .iter()
            .filter_map(|s| s.sweep.as_ref())
            .map(|s| s.programs)
            .sum(),
        signatures,
        fixed_signatures,
        oracles,
        shards: c.shards,
        skipped: c.skipped,
    }
}

/// The work of each oracle over the merged shards, and what it found.
fn oracle_counts(shards: &[ShardInfo], sigs: &[Signature]) -> BTreeMap<String, OracleCounts> {
    let sum = |f: fn(&SweepFigures) -> u64| -> u64 {
        shards.iter().filter_map(|s| s.sweep.as_ref()).map(f).sum()
    };
    let artifacts: usize = shards.iter().map(|s| s.artifacts).sum();
    let mut m: BTreeMap<String, OracleCounts> = BTreeMap::new();
    let mut work = |name: &str, w: String| {
        m.entry(name.to_string()).or_default().work = w;
    };
    let n = |v: u64| render::thousands(v);
    work("interp", format!("{} programs", n(sum(|s| s.programs))));
    work(
        "native",
        format!(
            "{} modules, {} runs",
            n(sum(|s| s.native_modules)),
            n(sum(|s| s.native_runs))
        ),
    );
    work(
        "smt",
        format!(
            "{} programs sampled, {} queries",
            n(sum(|s| s.smt_programs)),
            n(sum(|s| s.smt_queries))
        ),
    );
    if artifacts > 0 {
        work("libfuzzer", format!("{artifacts} artifacts"));
    }
    for s in sigs {
        let e = m.entry(s.oracle.clone()).or_default();
        match s.status {
            Status::New => e.new += 1,
            Status::Known => e.known += 1,
        }
        e.hits += s.hits;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occ(sig: &str, shard: &str, hits: u64, text: &str) -> Occurrence {
        Occurrence {
            signature: sig.into(),
            shard: shard.into(),
            hits,
            repro: Repro::text(format!("{shard}/f.ir"), text.into()),
        }
    }

    #[test]
    fn merge_keeps_the_smallest_repro_and_sorts_new_first() {
        let c = Collected {
            occurrences: vec![
                occ("lse|mismatch-heap|Node", "a", 3, "; c\nx\ny\nz\n"),
                occ("lse|mismatch-heap|Node", "b", 2, "; c\nx\n"),
                occ("gvn|panic|boom", "a", 1, "x\n"),
            ],
            ..Collected::default()
        };
        let known = vec![KnownEntry {
            signature: "gvn|panic|boom".into(),
            comment: "issue 1".into(),
            line: 1,
        }];
        let r = merge(c, &known);
        assert_eq!((r.new, r.known, r.fixed), (1, 1, 0));
        assert_eq!(r.signatures[0].signature, "lse|mismatch-heap|Node");
        assert_eq!(r.signatures[0].hits, 5);
        assert_eq!(r.signatures[0].shards, vec!["a", "b"]);
        assert_eq!(r.signatures[0].repro.source, "b/f.ir");
        assert_eq!(r.signatures[1].known_because.as_deref(), Some("issue 1"));
    }

    #[test]
    fn oracles_by_kind() {
        assert_eq!(oracle_of("pipeline|mismatch-native|return value"), "native");
        assert_eq!(oracle_of("lse|smt-unconfirmed|x"), "smt");
        assert_eq!(
            oracle_of("lli|mismatch-lli|mismatch-outcome return value"),
            "lli"
        );
        assert_eq!(oracle_of("parse|printed module does not parse"), "parse");
        assert_eq!(oracle_of("parse|crash|not reproduced"), "libfuzzer");
        assert_eq!(oracle_of("lse|timeout|libFuzzer"), "libfuzzer");
        assert_eq!(oracle_of("lse,gvn|mismatch-heap|Node"), "interp");
    }
}
