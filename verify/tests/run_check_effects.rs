//! `loadstar run --check-effects`: clean programs exit 0 with the behaviour;
//! the flag does not change the behaviour printed.

mod support;

fn loadstar(args: &[&str]) -> (i32, String) {
    let (code, stdout, _) = support::loadstar_split(args);
    (code, stdout)
}

#[test]
fn clean_run_prints_the_same_behaviour_and_exits_zero() {
    let dir = std::env::temp_dir().join(format!("loadstar-effects-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("t.ir");
    std::fs::write(
        &file,
        "type Point { x: i64, y: i64 }
extern @bump(Point) -> i64 reads(Point.x) writes(Point.x)
func @main(%p: Point) -> i64 {
entry:
  %r = call @bump(%p)
  %v = load.volatile %p.y
  store %p.y, 3
  escape %p
  %s = add %r, %v
  ret %s
}
",
    )
    .expect("write");
    let f = file.to_str().expect("utf-8 path");
    let input = "p = Point{x: 1, y: 2}";
    let (code, checked) = loadstar(&["run", f, "--input", input, "--check-effects"]);
    let (plain_code, plain) = loadstar(&["run", f, "--input", input]);
    assert_eq!((code, plain_code), (0, 0), "{checked}");
    assert_eq!(checked, plain);
    assert!(checked.starts_with("outcome: return "));
    let (bad, _) = loadstar(&["run", f, "--input", "p = 3", "--check-effects"]);
    assert_eq!(bad, 2);
}
