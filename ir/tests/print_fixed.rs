//! Fixed text examples: parsing then printing gives exactly the canonical text.

use ir::{parse_module, print_module};

/// Parse `src` and print it back.
fn reprint(src: &str) -> String {
    match parse_module(src, "test.ir") {
        Ok((m, _)) => print_module(&m),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn the_ir_md_example_prints_in_canonical_form() {
    let src = r#"
; comments run from ';' to the end of the line
type Point { x: i64, y: i64 }
type Node  { val: i64, next: Node }          ; a field of object type holds a nullable reference
global @count: i64
global @head: Node
extern @mystery(i64, Point) -> i64            ; unknown code: may read/write anything it can reach
extern @length(Point) -> i64 reads(Point.x)   ; declared effects, like a JIT builtin

func @main(%p: Point, %q: Point, %n: i64) -> i64 {
entry:
  %a = load %p.x
  store %q.x, 5
  %b = load %p.x                ; %p and %q may be the same object: must stay
  %c = add %a, %b
  br %n, more, done
more:
  %d = call @mystery(%c, %p)
  jmp done
done:
  %r = phi [entry: %c], [more: %d]
  ret %r
}
"#;
    let expected = "\
type Point { x: i64, y: i64 }
type Node { val: i64, next: Node }
global @count: i64
global @head: Node
extern @mystery(i64, Point) -> i64
extern @length(Point) -> i64 reads(Point.x)

func @main(%p: Point, %q: Point, %n: i64) -> i64 {
entry:
  %a = load %p.x
  store %q.x, 5
  %b = load %p.x
  %c = add %a, %b
  br %n, more, done
more:
  %d = call @mystery(%c, %p)
  jmp done
done:
  %r = phi [entry: %c], [more: %d]
  ret %r
}
";
    assert_eq!(reprint(src), expected);
}
