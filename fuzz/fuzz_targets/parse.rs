//! Fuzz target: arbitrary text through the parser, verifier and printer; never a
//! panic, and whatever parses round-trips print → parse → print.
//! An empty corpus directory is filled with the seed corpus first
//! (`verify::seeds`), so a plain `cargo fuzz run` starts from full-size programs.
#![no_main]

libfuzzer_sys::fuzz_target!(init: verify::seeds::seed_empty_corpus("parse"), |data: &[u8]| {
    verify::fuzz::parse_roundtrip(data);
});
