//! `loadstar peer`: compare the loads and stores loadstar's passes keep with
//! what LLVM 14's `opt -O2` keeps on the same module (translated by
//! [`crate::peer::translate`]), for one file or over generated programs.

use crate::gen::{generate_from_seed, GenConfig};
use crate::load::{load_file, Diagnostic};
use crate::peer::reduce::{peer_test_text, reduce_missed};
use crate::peer::survey::{Compared, PeerBatcher, PeerSurvey};
use crate::peer::{compare, PeerError, Standing};
use passes::PassManager;
use std::fmt::Write;
use std::path::Path;
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

/// Write a compared program to `out` when one side keeps fewer:
/// `missed-SEED.ir` (LLVM) or `won-SEED.ir` (loadstar).
fn write_standing(out: Option<&Path>, passes: &str, (sd, module, r): &Compared) {
    let (file, why) = match r.standing() {
        Standing::More => (
            "missed",
            "missed optimization: llvm -O2 keeps fewer loads+stores",
        ),
        Standing::Fewer => ("won", "loadstar keeps fewer loads+stores than llvm -O2"),
        Standing::Same => return,
    };
    if let Some(dir) = out {
        let text = format!(
            "; {why} (seed {sd})\n; {}\n{}",
            r.render(passes).trim_end().replace('\n', "\n; "),
            ir::print::print_module(module)
        );
        let _ = std::fs::write(dir.join(format!("{file}-{sd}.ir")), text);
    }
}

/// `peer FILE --reduce`: the reduced missed optimization as a `; test: peer`
/// text test, or `None` when LLVM does not keep fewer on the file.
pub fn peer_reduce(file: &str, passes: &str, seconds: f64) -> Result<Option<String>, Diagnostic> {
    let loaded = load_file(file)?;
    let pm = PassManager::from_list(passes).map_err(|e| Diagnostic(format!("error: {e}")))?;
    let limits = crate::reduce::Limits {
        time: Some(std::time::Duration::from_secs_f64(seconds.max(0.0))),
        max_checks: None,
    };
    // A translator or tool problem is an error, not "nothing to reduce".
    let reduced = reduce_missed(&loaded.module, &pm, &limits)
        .map_err(|e| Diagnostic(format!("{file}: {e}")))?;
    Ok(reduced.map(|r| peer_test_text(&r, &pm)))
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
    let survey = Mutex::new(PeerSurvey::default());
    // Programs go to `opt` in batches: one process start per batch.
    let done = super::threads::over_programs(
        n,
        jobs,
        || PeerBatcher::new(pm.clone()),
        |batcher, k| {
            let g = generate_from_seed(seed + k, &cfg);
            let done = batcher.push(seed + k, g.module)?;
            done.iter().for_each(|c| write_standing(out, passes, c));
            Ok(())
        },
        |mut batcher| {
            let done = batcher.flush()?;
            done.iter().for_each(|c| write_standing(out, passes, c));
            survey.lock().unwrap().merge(&batcher.survey);
            Ok(())
        },
    );
    if let Err((k, e)) = done {
        return Err(match e {
            PeerError::Rejected(bin, msg) => {
                PeerError::Rejected(bin, format!("seed {}: {msg}", seed + k))
            }
            other => other,
        });
    }
    Ok(survey.into_inner().unwrap())
}
