//! Fuzz target: generated programs checked with the SMT oracle beside the
//! interpreter — z3 validates every function the `pipeline` changed, and a
//! counterexample (confirmed or not) is a crash with its reduced reproducer.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let cfg = verify::fuzz::target_oracle("smt");
    verify::fuzz::check_bytes_with(data, &["pipeline"], &cfg);
});
