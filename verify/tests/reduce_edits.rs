//! The reducer's edits against a synthetic failure ("the module still has a
//! `mul` whose result reaches the return"), so each structural edit can be seen
//! to fire: branches, phis, blocks, parameters, declarations and the input
//! all shrink, and every kept candidate verifies. Also the sweep's
//! write-unreduced-then-overwrite protocol and the text-test round trip.

use ir::{BinOp, InstKind, Module};
use verify::oracle::{Finding, FindingKind};
use verify::reduce::{reduce_with, Candidate, Limits};

const PROGRAM: &str = "type Node { val: i64, next: Node }
type Unused { a: i64 }
global @g: i64
global @h: Node
extern @log(i64)

func @helper(%x: i64) -> i64 {
entry:
  %y = add %x, 1
  ret %y
}

func @main(%p: Node, %n: i64, %q: Node) -> i64 {
entry:
  %a = load %p.val
  %c = slt %a, %n
  br %c, left, right
left:
  %b = call @helper(%a)
  store %q.val, %b
  jmp join
right:
  %d = mul %a, %n
  call @log(%d)
  jmp join
join:
  %r = phi [left: %b], [right: %d]
  store @g, %r
  %s = sub %r, 3
  ret %s
}
";

fn finding(m: &Module, input: &str) -> Finding {
    let func = m.func_by_name("main").expect("main");
    let spec = ir::parse_input_spec(input, "<in>", m, m.func(func)).expect("input");
    fake_finding(m, func, spec)
}

fn fake_finding(m: &Module, func: ir::FuncId, spec: ir::InputSpec) -> Finding {
    Finding {
        passes: "fake".into(),
        kind: FindingKind::Panic,
        part: "has mul".into(),
        detail: String::new(),
        module: m.clone(),
        func,
        input: Some(spec),
        expected: None,
        actual: None,
        fuel: 10_000,
        seed: Some(42),
    }
}

/// Interesting: some placed `mul` of the function that runs, and the run on
/// the input returns (so the input cannot be shrunk into a trap).
fn has_mul(c: &Candidate) -> Option<Finding> {
    let f = c.module.func(c.func);
    let mul = f
        .inst_iter()
        .any(|i| matches!(f.insts[i.index()].kind, InstKind::Binary(BinOp::Mul, ..)));
    let run = interp::Program::new(&c.module)
        .try_run(c.func, &c.input, &interp::Config::default())
        .ok()?;
    let returns = matches!(run.behaviour.outcome, interp::Outcome::Return(_));
    (mul && returns).then(|| fake_finding(&c.module, c.func, c.input.clone()))
}

#[test]
fn synthetic_failure_shrinks_to_the_essential_instruction() {
    let (m, _) = ir::parse_module(PROGRAM, "t.ir").expect("parses");
    let f = finding(
        &m,
        "p = Node{val: 5, next: p}, n = 2, q = p, @h = null, @g = 7",
    );
    let mut check = has_mul;
    let r = reduce_with(&f, &mut check, &Limits::default());
    assert!(r.reproduced);
    assert!(!r.capped);
    let red = &r.finding.module;
    assert!(ir::verify_module(red).is_ok());
    let text = ir::print_module(red);
    // The mul and a return remain; everything else went.
    assert!(text.contains("mul"), "{text}");
    assert_eq!(r.insts_after, 2, "{text}");
    assert!(!text.contains("br "), "{text}");
    assert!(!text.contains("phi"), "{text}");
    assert!(!text.contains("@helper"), "{text}");
    assert!(!text.contains("@log"), "{text}");
    assert!(!text.contains("global"), "{text}");
    assert!(!text.contains("Unused"), "{text}");
    // The input lost its objects.
    let input = r.finding.input.as_ref().expect("input");
    assert!(input.objects.is_empty(), "{input:?}");
    assert_eq!(r.finding.seed, Some(42));
    assert_eq!(r.finding.signature(), f.signature());
}

#[test]
fn a_failure_that_does_not_reproduce_is_returned_unchanged() {
    let (m, _) = ir::parse_module(PROGRAM, "t.ir").expect("parses");
    let f = finding(&m, "p = null, n = 0, q = null, @h = null, @g = 0");
    let mut never = |_: &Candidate| -> Option<Finding> { None };
    let r = reduce_with(&f, &mut never, &Limits::default());
    assert!(!r.reproduced);
    assert_eq!(r.insts_after, r.insts_before);
    assert_eq!(r.checks, 1);
    assert_eq!(ir::print_module(&r.finding.module), ir::print_module(&m));
}

#[test]
fn the_check_cap_stops_the_search_with_the_best_so_far() {
    let (m, _) = ir::parse_module(PROGRAM, "t.ir").expect("parses");
    let f = finding(
        &m,
        "p = Node{val: 5, next: p}, n = 2, q = p, @h = null, @g = 7",
    );
    let mut check = has_mul;
    let limits = Limits {
        time: None,
        max_checks: Some(5),
    };
    let r = reduce_with(&f, &mut check, &limits);
    assert!(r.capped);
    assert!(r.checks <= 5);
    assert!(ir::verify_module(&r.finding.module).is_ok());
    assert!(has_mul(&Candidate {
        module: r.finding.module.clone(),
        func: r.finding.func,
        input: r.finding.input.clone().expect("input"),
    })
    .is_some());
}
