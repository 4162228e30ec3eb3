//! The `loadstar` subcommands. Each returns the process exit status or a
//! [`crate::load::Diagnostic`] for bad input (exit 2).

pub mod check;
pub mod opt;
pub mod peer;
pub mod peer_lli;
pub mod reduce;
pub mod repro;
pub mod rules;
pub mod run;
pub mod smt_survey;
pub mod smt_verify;
pub mod threads;
pub mod triage;
#[cfg(feature = "bug-zoo")]
pub mod zoo;
