//! The bug zoo (cargo feature `bug-zoo`), as seen by the passes: the one
//! registry of planted bugs lives in `ir::zoo` (the crate below both the
//! passes and the backend, so `passes` and `codegen` share one list and one
//! process-wide selection); this module re-exports it under its old path.

pub use ir::zoo::*;
