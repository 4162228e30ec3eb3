//! Fuzz target: generated programs checked against the `pipeline` pass (alone and in
//! random sequences) with the interpreter oracle; skipped if the build lacks it.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    verify::fuzz::check_bytes(data, &["pipeline"]);
});
