//! The loadstar tool's library side: the pieces the `loadstar` binary and the
//! test suites share (the filetest runner today; the differential checker,
//! fuzzer and reducer as they land).

pub mod filetest;
