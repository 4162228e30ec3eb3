//! What the CLI tests share: running the `loadstar` binary built for them.
//! Each test crate uses some of these, so the rest are unused there.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Run `loadstar` with `args` to completion.
pub fn loadstar_output(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loadstar"))
        .args(args)
        .output()
        .expect("loadstar runs")
}

/// Run `loadstar`: its exit code (-1 if a signal ended it), stdout and stderr.
pub fn loadstar_split(args: &[&str]) -> (i32, String, String) {
    let out = loadstar_output(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Run `loadstar`: its exit code and stdout followed by stderr.
pub fn loadstar_all(args: &[&str]) -> (i32, String) {
    let (code, mut all, err) = loadstar_split(args);
    all.push_str(&err);
    (code, all)
}
