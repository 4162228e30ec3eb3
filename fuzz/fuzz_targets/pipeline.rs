//! Fuzz target: generated programs checked against the `pipeline` pass (alone and in
//! random sequences) with the interpreter oracle; skipped if the build lacks it.
//! Inputs are generator bytes, or IR text after `verify::fuzz::IR_PREFIX`. An
//! empty corpus directory is filled with the seed corpus first
//! (`verify::seeds`), so a plain `cargo fuzz run` starts from full-size programs.
#![no_main]

libfuzzer_sys::fuzz_target!(init: verify::seeds::seed_empty_corpus("pipeline"), |data: &[u8]| {
    verify::fuzz::check_bytes(data, &["pipeline"]);
});
