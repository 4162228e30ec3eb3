//! The loadstar reference interpreter: the executable semantics of IR.md.
//!
//! [`Program::new`] lowers a module once into a compact register bytecode;
//! [`Program::run`] executes a function on an [`ir::InputSpec`] with the limits
//! of a [`Config`] and returns its observable [`Behaviour`] (outcome, output
//! trace, final heap) together with fuel and step counts. The environment of
//! IR.md §6 lives in [`env`] behind the C entry point [`env::loadstar_env_step`].

pub mod access;
pub mod config;
pub mod effect_check;
pub mod env;
pub mod exec;
pub mod hash;
pub mod heap;
pub mod lower;
pub mod observe;

pub use access::{AccessKind, AccessLoc, AccessLog, AccessObserver, NoObserver, Site};
pub use config::{Config, TrapKind, MAX_ARRAY_LEN};
pub use effect_check::{
    run_checked, run_checked_valid, run_checked_valid_against, run_checked_with, EffectViolation,
};
pub use env::{loadstar_env_step, EnvContext, EnvInfo};
pub use exec::{run, Execution, InputError, Program, ValidInputs};
pub use observe::{Behaviour, HeapEntry, Observed, Outcome};
