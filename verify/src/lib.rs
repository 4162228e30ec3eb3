//! loadstar's checking machinery and the library behind the `loadstar` binary:
//! loading user files with positioned diagnostics, CFG rendering, and the
//! command implementations.

pub mod commands;
pub mod dot;
pub mod gen;
pub mod inputs;
pub mod load;
pub mod oracle;
pub mod sweep;
