//! The x86-64 backend and the native executor.
//!
//! [`NativeProgram::new`] lowers every function of a verified module to
//! machine code ([`isel`] selects instructions, [`frame`] places values,
//! [`emit`] assembles the module with iced), maps it W^X, and
//! [`NativeProgram::try_run`] executes a function on the interpreter's heap
//! layout, returning the interpreter's [`interp::Behaviour`] type. Generated
//! code calls the runtime of [`abi`] and the interpreter's environment step
//! `interp::loadstar_env_step`, so both executions meet the same environment.

pub mod abi;
pub mod emit;
pub mod exec;
pub mod frame;
pub mod isel;

pub use emit::{compile, listing, CodegenError, Compiled};
pub use exec::{NativeExecution, NativeProgram};
