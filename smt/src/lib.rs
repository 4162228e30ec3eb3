//! SMT translation validation for loadstar: a function of IR.md becomes a z3
//! formula over 64-bit bit-vectors and a typed managed heap; two functions are
//! checked for equivalence on every input and every aliasing of the inputs
//! (see `docs/smt.md` for the encoding and its choices).

pub mod cex;
pub mod check;
pub mod compare;
pub mod diff;
pub mod encode;
pub mod env;
pub mod reach;
pub mod rule_replay;
pub mod rules;
pub mod shared;
pub mod state;
pub mod unroll;

pub use check::{check_pair, Checked, Options, Verdict};
