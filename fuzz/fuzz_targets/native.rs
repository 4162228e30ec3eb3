//! Fuzz target: generated programs checked with the native oracle — the x86-64
//! code of the original and of the `pipeline` output against the interpreter —
//! in-process (a fault in generated code is libFuzzer's crash report).
//! Inputs are generator bytes, or IR text after `verify::fuzz::IR_PREFIX`. An
//! empty corpus directory is filled with the seed corpus first
//! (`verify::seeds`), so a plain `cargo fuzz run` starts from full-size programs.
#![no_main]

libfuzzer_sys::fuzz_target!(init: verify::seeds::seed_empty_corpus("native"), |data: &[u8]| {
    let cfg = verify::fuzz::target_oracle("native");
    verify::fuzz::check_bytes_with(data, &["pipeline"], &cfg);
});
