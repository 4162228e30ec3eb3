//! loadstar's checking machinery and the library behind the `loadstar` binary:
//! loading user files with positioned diagnostics, CFG rendering, the command
//! implementations, and the filetest runner for the text corpus.

pub mod commands;
pub mod dot;
pub mod filetest;
pub mod fuzz;
pub mod gen;
pub mod inputs;
pub mod load;
pub mod oracle;
pub mod peer;
pub mod progress;
pub mod reduce;
pub mod seeds;
pub mod smt_tests;
pub mod sweep;
pub mod triage;
