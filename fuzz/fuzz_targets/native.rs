//! Fuzz target: generated programs checked with the native oracle — the x86-64
//! code of the original and of the `pipeline` output against the interpreter —
//! in-process (a fault in generated code is libFuzzer's crash report).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let cfg = verify::fuzz::target_oracle("native");
    verify::fuzz::check_bytes_with(data, &["pipeline"], &cfg);
});
