//! `loadstar verify`: exit statuses, and a printed counterexample pastes into
//! `loadstar run --input` and shows two different behaviours.

use std::path::PathBuf;

mod support;
use support::loadstar_output as loadstar;

fn tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadstar-verify-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

const ORIG: &str = "type Point { x: i64, y: i64 }
func @main(%p: Point, %q: Point) -> i64 {
entry:
  %a = load %p.x
  store %q.x, 5
  %b = load %p.x
  %c = add %a, %b
  ret %c
}
";

#[test]
fn counterexample_exits_1_and_replays_with_run() {
    let opt = ORIG
        .replace("  %b = load %p.x\n", "")
        .replace("add %a, %b", "add %a, %a");
    let (a, b) = (tmp("orig.ir", ORIG), tmp("opt.ir", &opt));
    let out = loadstar(&[
        "verify",
        a.to_str().unwrap(),
        "--against",
        b.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("@main: counterexample"), "{text}");
    let spec = text
        .lines()
        .find_map(|l| l.strip_prefix("counterexample: "))
        .expect("a counterexample line");
    let run = |f: &PathBuf| {
        let o = loadstar(&["run", f.to_str().unwrap(), "--input", spec]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    assert_ne!(
        run(&a),
        run(&b),
        "the counterexample must tell the two apart"
    );
}

#[test]
fn proved_exits_0_and_bad_input_exits_2() {
    let a = tmp("same.ir", ORIG);
    let out = loadstar(&["verify", a.to_str().unwrap(), "--passes", "pipeline"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("@main: proved ("));
    let missing = loadstar(&["verify", "/nonexistent/x.ir", "--passes", "dce"]);
    assert_eq!(missing.status.code(), Some(2));
    let no_mode = loadstar(&["verify", a.to_str().unwrap()]);
    assert_eq!(no_mode.status.code(), Some(2));
    let bad_pass = loadstar(&["verify", a.to_str().unwrap(), "--passes", "nope"]);
    assert_eq!(bad_pass.status.code(), Some(2));
}
