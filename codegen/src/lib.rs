//! The x86-64 backend and the native executor.
//!
//! [`NativeProgram::new`] lowers every function of a verified module to
//! machine code ([`isel`] selects instructions over virtual registers into
//! [`vcode`], [`regalloc`] runs regalloc2 on them, [`lower`] turns each
//! allocated function into iced instructions and [`emit`] assembles the
//! module), maps it W^X, and
//! [`NativeProgram::try_run`] executes a function on the interpreter's heap
//! layout, returning the interpreter's [`interp::Behaviour`] type. Generated
//! code calls the runtime of [`abi`] and the interpreter's environment step
//! `interp::loadstar_env_step`, so both executions meet the same environment.

/// `zoo!(X)`: whether the bug zoo's planted bug `ir::zoo::Bug::X` is active
/// (feature `bug-zoo`); the constant `false` in every normal build. Each
/// planted backend bug reads `if zoo!(X) { wrong } else { right }`.
macro_rules! zoo {
    ($bug:ident) => {{
        #[cfg(feature = "bug-zoo")]
        let on = ir::zoo::active(ir::zoo::Bug::$bug);
        #[cfg(not(feature = "bug-zoo"))]
        let on = false;
        on
    }};
}

pub mod abi;
pub mod emit;
pub mod encode;
pub mod exec;
pub mod isel;
pub mod isolate;
pub mod lower;
pub mod nonnull;
pub mod pool;
pub mod regalloc;
pub mod strict;
pub mod vcode;
pub mod worker;

pub use emit::{compile, compile_with, listing, CodegenError, CompileOptions, Compiled};
pub use exec::{NativeExecution, NativeProgram, Sabotage};
