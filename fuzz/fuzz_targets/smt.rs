//! Fuzz target: generated programs checked with the SMT oracle beside the
//! interpreter — z3 validates every function the `pipeline` changed, and a
//! counterexample (confirmed or not) is a crash with its reduced reproducer.
//! Inputs are generator bytes, or IR text after `verify::fuzz::IR_PREFIX`. An
//! empty corpus directory is filled with the seed corpus first
//! (`verify::seeds`), so a plain `cargo fuzz run` starts from full-size programs.
#![no_main]

libfuzzer_sys::fuzz_target!(init: verify::seeds::seed_empty_corpus("smt"), |data: &[u8]| {
    let cfg = verify::fuzz::target_oracle("smt");
    verify::fuzz::check_bytes_with(data, &["pipeline"], &cfg);
});
