//! loadstar's optimization passes and the pass manager that runs them.
//!
//! Every pass is a [`Pass`]; the [`PassManager`] runs a list of them by name and
//! runs the verifier after each one, so an ill-formed result is reported as the
//! bug of the pass that produced it.

pub mod alias;
pub mod analyses;
mod certain_traps;
pub mod checks;
pub mod copies;
pub mod dce;
mod dead_loops;
mod decided_branches;
pub mod edge_facts;
mod edge_values;
pub mod effects;
pub mod escape;
mod fresh_lens;
pub mod gvn;
mod loop_exit_values;
pub mod lse;
pub mod manager;
mod optimistic_values;
pub mod peeps;
pub mod per_function;
mod phi_edge_values;
mod return_blocks;
pub mod stats;
mod threading;
pub mod verified;
#[cfg(feature = "bug-zoo")]
pub mod zoo;

pub use manager::{expand_pass_list, Pass, PassError, PassManager, PASS_NAMES};
pub use stats::{CounterId, Stats};
