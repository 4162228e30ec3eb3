//! Fuzz target: arbitrary text through the parser, verifier and printer; never a
//! panic, and whatever parses round-trips print → parse → print.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    verify::fuzz::parse_roundtrip(data);
});
