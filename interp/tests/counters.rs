//! Per-run counters of [`interp::Execution`]: executed loads and stores (the
//! never-worse oracle compares them), across loops, calls and traps.

use interp::{Config, Execution, Outcome, Program};
use ir::Module;

fn run(src: &str, input: &str) -> Execution {
    let m: Module = ir::parse_module(src, "test.ir").expect("parses").0;
    ir::verify_module(&m).expect("verifies");
    let f = m.func_by_name("main").expect("main");
    let spec = ir::parse_input_spec(input, "<input>", &m, m.func(f)).expect("input");
    Program::new(&m).run(f, &spec, &Config::default())
}

const LOOP: &str = "type Box { v: i64 }
global @g: i64
func @main(%b: Box, %a: [i64], %n: i64) -> i64 {
entry:
  jmp head
head:
  %i = phi [entry: 0], [body: %i2]
  %c = slt %i, %n
  br %c, body, exit
body:
  %x = load %b.v
  %y = load %a[%i]
  %s = add %x, %y
  store %b.v, %s
  store @g, %s
  %i2 = add %i, 1
  jmp head
exit:
  %l = len %a
  %r = load @g
  ret %r
}
";

#[test]
fn loop_counts_every_executed_load_and_store() {
    let e = run(LOOP, "b = Box{v: 1}, a = [i64]{1, 2, 3}, n = 3");
    assert_eq!(e.behaviour.outcome.to_string(), "return 7");
    // Two loads and two stores per trip, plus the load of @g; `len` is no load.
    assert_eq!((e.loads, e.stores), (3 * 2 + 1, 3 * 2));
    assert_eq!(e.accesses(), 13);
    let zero = run(LOOP, "b = Box{v: 1}, a = [i64]{1, 2, 3}, n = 0");
    assert_eq!((zero.loads, zero.stores), (1, 0));
}

#[test]
fn trapping_access_is_not_counted_and_calls_are() {
    let src = "type Box { v: i64 }
func @get(%b: Box) -> i64 {
entry:
  %x = load %b.v
  ret %x
}
func @main(%b: Box, %a: [i64]) -> i64 {
entry:
  %x = call @get(%b)
  store %b.v, 5
  %y = load %a[%x]
  ret %y
}
";
    let ok = run(src, "b = Box{v: 0}, a = [i64]{4}");
    assert_eq!((ok.loads, ok.stores), (2, 1));
    // The element load traps out of bounds: it did not happen.
    let bad = run(src, "b = Box{v: 9}, a = [i64]{4}");
    assert!(matches!(bad.behaviour.outcome, Outcome::Trap(_)));
    assert_eq!((bad.loads, bad.stores), (1, 1));
}
