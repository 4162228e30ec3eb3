//! The pass manager: pass names, the `pipeline` list, and running passes with
//! the verifier after each one.

use crate::dce::Dce;
use crate::gvn::Gvn;
use crate::lse::Lse;
use crate::peeps::{CheckMode, Peeps};
use crate::stats::Stats;
use ir::verify::{verify_module, VerifyError};
use ir::Module;

/// An optimization pass over a whole module.
pub trait Pass {
    /// The name used on the command line.
    fn name(&self) -> &'static str;
    /// Transform `module`; record what was done in `stats`. Returns whether anything changed.
    fn run(&self, module: &mut Module, stats: &mut Stats) -> bool;
    /// Like [`Pass::run`], but a pass that checks its own invariants reports a
    /// violation (a bug in the pass) as `Err` instead of panicking.
    fn run_checked(&self, module: &mut Module, stats: &mut Stats) -> Result<bool, String> {
        Ok(self.run(module, stats))
    }
}

/// Every pass name accepted in a pass list (`pipeline` expands to the default order).
pub const PASS_NAMES: &[&str] = &["lse", "peeps", "gvn", "dce", "pipeline"];

/// The passes `pipeline` stands for, in order.
///
/// LSE first turns loads into values the peepholes can fold; peeps canonicalizes
/// (constants right, comparisons one way) so that GVN finds more equal keys;
/// DCE then removes what became unused. The list repeats while anything changes.
const PIPELINE: &[&str] = &["lse", "peeps", "gvn", "peeps", "dce"];

/// How often the pipeline is repeated at most while something still changes.
const PIPELINE_ROUNDS: usize = 4;

/// Why a pass list could not run.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// A name in the list is not a pass.
    #[error("unknown pass '{name}' (known passes: {known})")]
    UnknownPass {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// The list was empty.
    #[error("empty pass list (known passes: {0})")]
    Empty(String),
    /// A pass produced a module the verifier rejects: a bug in that pass.
    #[error("pass '{pass}' produced an ill-formed module:\n{}", render(errors))]
    IllFormed {
        /// The pass that ran last.
        pass: String,
        /// What the verifier found.
        errors: Vec<VerifyError>,
    },
    /// A pass found its own invariant violated (e.g. the peephole fixed point): a bug in that pass.
    #[error("pass '{pass}' broke its invariant: {message}")]
    Invariant {
        /// The pass.
        pass: String,
        /// What was found.
        message: String,
    },
}

fn render(errors: &[VerifyError]) -> String {
    errors
        .iter()
        .map(|e| format!("  {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn make_pass(name: &str, seed: u64, check: Option<CheckMode>) -> Option<Box<dyn Pass>> {
    match name {
        "dce" => Some(Box::new(Dce)),
        "lse" => Some(Box::new(Lse::default())),
        "peeps" => {
            let mut p = Peeps::new(seed);
            if let Some(c) = check {
                p.check = c;
            }
            Some(Box::new(p))
        }
        "gvn" => Some(Box::new(Gvn)),
        _ => None,
    }
}

/// Split a comma-separated pass list, checking every name; `pipeline` stays as one entry.
pub fn expand_pass_list(list: &str) -> Result<Vec<String>, PassError> {
    let known = PASS_NAMES.join(", ");
    let names: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return Err(PassError::Empty(known));
    }
    for n in &names {
        if !PASS_NAMES.contains(&n.as_str()) {
            return Err(PassError::UnknownPass {
                name: n.clone(),
                known,
            });
        }
    }
    Ok(names)
}

/// Runs a list of passes, verifying after each.
pub struct PassManager {
    names: Vec<String>,
    seed: u64,
    check: Option<CheckMode>,
    /// Run the verifier after every pass (on by default; harness modes keep it on).
    pub verify: bool,
}

impl PassManager {
    /// A manager for a comma-separated list such as `"dce"` or `"pipeline"`.
    pub fn from_list(list: &str) -> Result<PassManager, PassError> {
        Ok(PassManager {
            names: expand_pass_list(list)?,
            seed: 0,
            check: None,
            verify: true,
        })
    }

    /// The same manager with the passes' own invariant checks (the peephole
    /// fixed point) forced to `mode`; harness modes and tests use this, so the
    /// checks run in release builds too.
    pub fn with_invariant_checks(mut self, mode: CheckMode) -> PassManager {
        self.check = Some(mode);
        self
    }

    /// The same manager with peephole worklist seed `seed` (same seed, same result).
    pub fn with_seed(mut self, seed: u64) -> PassManager {
        self.seed = seed;
        self
    }

    /// The peephole worklist seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The pass names, as given.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Run every pass in order on `module`.
    pub fn run(&self, module: &mut Module) -> Result<Stats, PassError> {
        let mut stats = Stats::default();
        for name in &self.names {
            if name == "pipeline" {
                for _ in 0..PIPELINE_ROUNDS {
                    let mut changed = false;
                    for p in PIPELINE {
                        changed |= self.run_one(p, module, &mut stats)?;
                    }
                    if !changed {
                        break;
                    }
                }
            } else {
                self.run_one(name, module, &mut stats)?;
            }
        }
        Ok(stats)
    }

    fn run_one(
        &self,
        name: &str,
        module: &mut Module,
        stats: &mut Stats,
    ) -> Result<bool, PassError> {
        let pass =
            make_pass(name, self.seed, self.check).ok_or_else(|| PassError::UnknownPass {
                name: name.to_string(),
                known: PASS_NAMES.join(", "),
            })?;
        let changed = pass
            .run_checked(module, stats)
            .map_err(|message| PassError::Invariant {
                pass: name.to_string(),
                message,
            })?;
        if self.verify {
            verify_module(module).map_err(|errors| PassError::IllFormed {
                pass: name.to_string(),
                errors,
            })?;
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_pass_names_are_a_clear_error() {
        let err = PassManager::from_list("dce,frobnicate")
            .err()
            .expect("error");
        let msg = err.to_string();
        assert!(msg.contains("unknown pass 'frobnicate'"), "{msg}");
        assert!(msg.contains("dce"), "{msg}");
    }

    #[test]
    fn empty_lists_are_rejected() {
        assert!(matches!(
            PassManager::from_list(" , "),
            Err(PassError::Empty(_))
        ));
    }

    #[test]
    fn lists_keep_their_order() {
        let pm = PassManager::from_list("dce, pipeline,dce").unwrap();
        assert_eq!(pm.names(), ["dce", "pipeline", "dce"]);
    }
}
