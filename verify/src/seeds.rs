//! Seed corpora for the cargo-fuzz targets, so that a fuzzing run starts from
//! known-interesting programs of the generator's usual size instead of an
//! empty corpus (libFuzzer grows inputs from the largest seed's length).
//!
//! The `parse` target gets every `corpus/**/*.ir` file as it is. The
//! program-checking targets get each file that loads, encoded as IR text
//! mode input ([`crate::fuzz::IR_PREFIX`] and the text), plus the generator
//! bytes of the sweep's first programs ([`crate::gen::seed_bytes`]): 16 of
//! the usual size and 4 of the size tail. `loadstar seeds` writes them; each
//! fuzz target writes them itself into an empty corpus directory when it
//! starts ([`seed_empty_corpus`]).

use crate::fuzz::{IR_PREFIX, TARGETS};
use crate::gen::{seed_bytes, GenConfig};
use std::path::{Path, PathBuf};

/// Generator seeds of the usual size, and of the size tail, per target.
const USUAL: usize = 16;
const TAIL: usize = 4;

/// The text corpus this build came from (`LOADSTAR_CORPUS` overrides it).
pub fn default_corpus() -> PathBuf {
    std::env::var_os("LOADSTAR_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus"))
}

/// Every `*.ir` file under `root`, sorted, with its path relative to `root`.
pub fn corpus_files(root: &Path) -> Vec<(String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|e| e == "ir") {
                if let Ok(text) = std::fs::read_to_string(&p) {
                    let rel = p.strip_prefix(root).unwrap_or(&p);
                    out.push((rel.display().to_string(), text));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// The seeds of the generator: the sweep's seed-0 programs, the first
/// [`USUAL`] of the usual size and the first [`TAIL`] of the size tail.
pub fn generator_seeds() -> Vec<(u64, Vec<u8>)> {
    let cfg = GenConfig::default();
    let usual_len = 64 * cfg.target_insts.max(8);
    let (mut usual, mut tail) = (Vec::new(), Vec::new());
    let mut k = 0u64;
    while usual.len() < USUAL || tail.len() < TAIL {
        let seed = crate::sweep::program_seed(0, 0, k);
        let bytes = seed_bytes(seed, &cfg);
        if bytes.len() > usual_len {
            if tail.len() < TAIL {
                tail.push((seed, bytes));
            }
        } else if usual.len() < USUAL {
            usual.push((seed, bytes));
        }
        k += 1;
    }
    usual.extend(tail);
    usual
}

/// The seed inputs of `target` (file name, bytes) from the text corpus at
/// `corpus`; an unknown target has none.
pub fn seed_inputs(target: &str, corpus: &Path) -> Vec<(String, Vec<u8>)> {
    if !TARGETS.contains(&target) {
        return Vec::new();
    }
    let name = |rel: &str| format!("ir-{}", rel.replace(['/', '\\'], "-"));
    let files = corpus_files(corpus);
    if target == "parse" {
        return files
            .into_iter()
            .map(|(rel, text)| (name(&rel), text.into_bytes()))
            .collect();
    }
    let mut out: Vec<(String, Vec<u8>)> = files
        .into_iter()
        .filter(|(rel, text)| crate::load::load_text(text, rel).is_ok())
        .map(|(rel, text)| {
            let mut bytes = IR_PREFIX.to_vec();
            bytes.extend_from_slice(text.as_bytes());
            (name(&rel), bytes)
        })
        .collect();
    out.extend(
        generator_seeds()
            .into_iter()
            .map(|(seed, bytes)| (format!("gen-{seed:016x}"), bytes)),
    );
    out
}

/// Write the seeds of `target` into `dir` (created); the number written.
pub fn write_seeds(target: &str, corpus: &Path, dir: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let seeds = seed_inputs(target, corpus);
    for (name, bytes) in &seeds {
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(seeds.len())
}

/// Called by each fuzz target when libFuzzer starts: if the first directory
/// on the command line (cargo-fuzz passes `fuzz/corpus/TARGET`) exists and is
/// empty, fill it with the target's seeds, so that `cargo fuzz run TARGET`
/// starts from programs of the generator's usual size without flags. Not
/// when merging (`-merge=1` writes its first directory). With
/// `LOADSTAR_WRITE_SEEDS=DIR` in the environment it writes the seeds into
/// DIR and exits instead (the ClusterFuzzLite build packs them).
pub fn seed_empty_corpus(target: &str) {
    if let Some(dir) = std::env::var_os("LOADSTAR_WRITE_SEEDS") {
        let code = match write_seeds(target, &default_corpus(), Path::new(&dir)) {
            Ok(_) => 0,
            Err(e) => {
                eprintln!(
                    "error: cannot write seeds to {}: {e}",
                    Path::new(&dir).display()
                );
                2
            }
        };
        std::process::exit(code);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some((dir, n)) = seed_corpus_of(target, &args, &default_corpus()) {
        eprintln!(
            "loadstar: seeded the empty corpus {} with {n} inputs",
            dir.display()
        );
    }
}

/// [`seed_empty_corpus`] on libFuzzer's arguments `args`: the directory
/// seeded and the inputs written, if any.
pub fn seed_corpus_of(target: &str, args: &[String], corpus: &Path) -> Option<(PathBuf, usize)> {
    if args
        .iter()
        .any(|a| a.starts_with("-merge") || a.starts_with("-minimize"))
    {
        return None;
    }
    let dir = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)?;
    let empty = std::fs::read_dir(&dir).is_ok_and(|mut rd| rd.next().is_none());
    if !empty {
        return None;
    }
    let n = write_seeds(target, corpus, &dir).ok()?;
    Some((dir, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_seeds_have_both_sizes() {
        let s = generator_seeds();
        assert_eq!(s.len(), USUAL + TAIL);
        let usual = 64 * GenConfig::default().target_insts;
        assert!(s[..USUAL].iter().all(|(_, b)| b.len() == usual));
        assert!(s[USUAL..].iter().all(|(_, b)| b.len() >= 64 * 150));
    }
}
