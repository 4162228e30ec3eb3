//! `loadstar peer`: compare the loads and stores loadstar's passes keep with
//! what LLVM 14's `opt -O2` keeps on the same module (translated by
//! [`crate::peer::translate`]), for one file or over generated programs.

use crate::gen::{generate_from_seed, GenConfig};
use crate::load::{load_file, Diagnostic};
use crate::peer::reduce::{peer_test_text, reduce_missed};
use crate::peer::survey::PeerSurvey;
use crate::peer::{compare, compare_many, PeerError, Standing};
use passes::PassManager;
use std::fmt::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// What `loadstar peer FILE` prints besides the table.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct PeerEmit {
    /// Also print the LLVM IR given to `opt`.
    pub llvm_in: bool,
    /// Also print `opt -O2`'s output.
    pub llvm_out: bool,
}

/// Compare one file; `Ok((text, standing))`, where `Standing::More` means
/// LLVM keeps fewer (a missed optimization).
pub fn peer_file(
    file: &str,
    passes: &str,
    emit: PeerEmit,
) -> Result<(String, Standing), Diagnostic> {
    let loaded = load_file(file)?;
    let pm = PassManager::from_list(passes).map_err(|e| Diagnostic(format!("error: {e}")))?;
    let report = compare(&loaded.module, &pm).map_err(|e| Diagnostic(format!("{file}: {e}")))?;
    let mut out = report.render(passes);
    if emit.llvm_in {
        let _ = write!(out, "\n; LLVM IR given to opt\n{}", report.llvm_in);
    }
    if emit.llvm_out {
        let _ = write!(out, "\n; opt -O2 output\n{}", report.llvm_out);
    }
    Ok((out, report.standing()))
}

/// `peer FILE --reduce`: the reduced missed optimization as a `; test: peer`
/// text test, or `None` when LLVM does not keep fewer on the file.
pub fn peer_reduce(file: &str, passes: &str, seconds: f64) -> Result<Option<String>, Diagnostic> {
    let loaded = load_file(file)?;
    let pm = PassManager::from_list(passes).map_err(|e| Diagnostic(format!("error: {e}")))?;
    // A translator or tool problem is an error, not "nothing to reduce".
    compare(&loaded.module, &pm).map_err(|e| Diagnostic(format!("{file}: {e}")))?;
    let limits = crate::reduce::Limits {
        time: Some(std::time::Duration::from_secs_f64(seconds.max(0.0))),
        max_checks: None,
    };
    Ok(reduce_missed(&loaded.module, &pm, &limits).map(|r| peer_test_text(&r, &pm)))
}

/// Compare `n` generated programs (seeds `seed..seed+n`, ~`size` instructions)
/// on `jobs` threads; write each program where LLVM keeps fewer to `out`
/// (`missed-SEED.ir`), and each where loadstar keeps fewer (`won-SEED.ir`).
pub fn peer_survey(
    n: u64,
    seed: u64,
    size: usize,
    passes: &str,
    jobs: usize,
    out: Option<&Path>,
) -> Result<PeerSurvey, PeerError> {
    let pm = PassManager::from_list(passes).map_err(|e| PeerError::Passes(e.to_string()))?;
    let cfg = GenConfig {
        target_insts: size,
        ..GenConfig::default()
    };
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(|e| PeerError::Passes(e.to_string()))?;
    }
    // Programs go to `opt` in batches: one process start per batch.
    const BATCH: u64 = 32;
    let next = AtomicU64::new(0);
    let survey = Mutex::new(PeerSurvey::default());
    let error = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let first = next.fetch_add(BATCH, Ordering::Relaxed);
                if first >= n || error.lock().unwrap().is_some() {
                    return;
                }
                let seeds: Vec<u64> = (first..n.min(first + BATCH)).map(|k| seed + k).collect();
                let programs: Vec<_> = seeds
                    .iter()
                    .map(|&sd| generate_from_seed(sd, &cfg))
                    .collect();
                let modules: Vec<&ir::Module> = programs.iter().map(|g| &g.module).collect();
                match compare_many(&modules, &pm) {
                    Ok(reports) => {
                        for ((sd, g), r) in seeds.iter().zip(&programs).zip(&reports) {
                            let name = match r.standing() {
                                Standing::More => Some((
                                    "missed",
                                    "missed optimization: llvm -O2 keeps fewer loads+stores",
                                )),
                                Standing::Fewer => {
                                    Some(("won", "loadstar keeps fewer loads+stores than llvm -O2"))
                                }
                                Standing::Same => None,
                            };
                            if let (Some(dir), Some((file, why))) = (out, name) {
                                let text = format!(
                                    "; {why} (seed {sd})\n; {}\n{}",
                                    r.render(passes).trim_end().replace('\n', "\n; "),
                                    ir::print::print_module(&g.module)
                                );
                                let _ = std::fs::write(dir.join(format!("{file}-{sd}.ir")), text);
                            }
                            survey.lock().unwrap().add(*sd, r);
                        }
                    }
                    Err(e) => *error.lock().unwrap() = Some((seeds[0], e)),
                }
            });
        }
    });
    if let Some((sd, e)) = error.into_inner().unwrap() {
        return Err(match e {
            PeerError::Rejected(bin, msg) => PeerError::Rejected(bin, format!("seed {sd}: {msg}")),
            other => other,
        });
    }
    Ok(survey.into_inner().unwrap())
}
