//! Observable behaviour (IR.md §7, CLI.md): the three printed lines, the order
//! of the canonical heap walk, and what is not observed.

mod support;
use interp::{Config, Program, TrapKind};
use ir::Type;
use support::*;

#[test]
fn the_documented_example_line() {
    let mut fx = Fx::new();
    let count = fx.global("count", Type::I64);
    let head = fx.global("head", fx.node_ty());
    let f = fx.func("main", &[Type::I64.array_of()], Some(Type::I64), |b, _| {
        let three = b.iconst(3);
        b.store_global(count, three);
        b.escape(three);
        let h = b.load_global(head);
        b.escape(h);
        let m1 = b.iconst(-1);
        b.escape(m1);
        let seven = b.iconst(7);
        b.ret(Some(seven));
    });
    let mut s = Spec::new();
    let n = s.obj(fx.node, vec![int(1), NULL]);
    s.set(n, 1, n);
    let a = s.arr(Type::I64, vec![int(3), int(4)]);
    s.globals(vec![int(0), n]);
    assert_eq!(
        fx.show(f, &s.params(vec![a])),
        "outcome: return 7\ntrace: 3, #0, -1\nheap: @count = 3; @head = #0; #0 = Node{val: 1, next: #0}; #1 = [i64]{3, 4}"
    );
}

#[test]
fn roots_are_arguments_then_returned_then_escaped_walked_breadth_first() {
    // One breadth-first walk whose first level is every root in order: the roots
    // are numbered first, then what they reach.
    let mut fx = Fx::new();
    let (point, node, next, val) = (fx.point, fx.node, fx.next(), fx.val());
    let nt = fx.node_ty();
    let f = fx.func("main", &[nt], Some(Type::object(point)), |b, p| {
        let escaped = b.new_object(node);
        let one = b.iconst(1);
        b.store_field(escaped, val, one);
        let deep = b.new_object(node);
        b.store_field(escaped, next, deep);
        let dead = b.new_object(node);
        let _ = dead;
        b.escape(escaped);
        let ret = b.new_object(point);
        let _ = p;
        b.ret(Some(ret));
    });
    let mut s = Spec::new();
    let tail = s.obj(fx.node, vec![int(9), NULL]);
    let h = s.obj(fx.node, vec![int(8), tail]);
    assert_eq!(
        fx.show(f, &s.params(vec![h])),
        "outcome: return #1\ntrace: #2\nheap: #0 = Node{val: 8, next: #3}; #1 = Point{x: 0, y: 0}; \
#2 = Node{val: 1, next: #4}; #3 = Node{val: 9, next: null}; #4 = Node{val: 0, next: null}"
    );
}

#[test]
fn null_return_and_null_escape() {
    let mut fx = Fx::new();
    let nt = fx.node_ty();
    let f = fx.func("main", &[], Some(nt), |b, _| {
        let n = b.null();
        b.escape(n);
        b.ret(Some(n));
    });
    assert_eq!(
        fx.show(f, &ints(&[])),
        "outcome: return null\ntrace: null\nheap:"
    );
}

#[test]
fn inputs_that_exceed_the_heap_are_heap_exhausted() {
    let mut fx = Fx::new();
    let f = fx.func("main", &[Type::I64.array_of()], None, |b, _| {
        b.ret(None);
    });
    let mut s = Spec::new();
    let a = s.arr(Type::I64, (0..100).map(int).collect());
    let config = Config {
        heap_words: 50,
        ..Config::default()
    };
    let e = fx.run_with(f, &s.params(vec![a]), &config);
    assert_eq!(
        e.behaviour.to_string(),
        "outcome: trap heap_exhausted\ntrace:\nheap:"
    );
}

#[test]
fn mismatched_inputs_are_an_error_not_a_panic() {
    let mut fx = Fx::new();
    let pt = fx.point_ty();
    let f = fx.func("main", &[pt], None, |b, _| {
        b.ret(None);
    });
    let prog = Program::new(&fx.m);
    assert!(prog.try_run(f, &ints(&[1]), &Config::default()).is_err());
    assert!(prog.try_run(f, &ints(&[]), &Config::default()).is_err());
    let mut s = Spec::new();
    let n = s.obj(fx.node, vec![int(1), NULL]);
    assert!(
        prog.try_run(f, &s.params(vec![n]), &Config::default())
            .is_err(),
        "a Node is not a Point"
    );
}

#[test]
fn trap_names_round_trip() {
    for t in TrapKind::ALL {
        assert_eq!(TrapKind::from_name(t.name()), Some(t));
    }
    let inconclusive: Vec<_> = TrapKind::ALL
        .iter()
        .filter(|t| t.is_inconclusive())
        .map(|t| t.name())
        .collect();
    assert_eq!(
        inconclusive,
        ["heap_exhausted", "stack_overflow", "out_of_fuel"]
    );
}

#[test]
fn same_program_same_inputs_same_behaviour() {
    let mut fx = Fx::new();
    let nt = fx.node_ty();
    let m = fx.ext("m", vec![nt], Some(nt));
    let f = fx.func("main", &[nt], Some(nt), |b, p| {
        let (_, r) = b.call(Callee::Extern(m), vec![p[0]]);
        let (_, r2) = b.call(Callee::Extern(m), vec![r.unwrap()]);
        b.escape(r2.unwrap());
        b.ret(r);
    });
    let inputs = || {
        let mut s = Spec::new();
        let t = s.obj(fx.node, vec![int(2), NULL]);
        let h = s.obj(fx.node, vec![int(1), t]);
        s.set(t, 1, h);
        s.params(vec![h])
    };
    let a = fx.run(f, &inputs());
    let b = Program::new(&fx.m).run(f, &inputs(), &Config::default());
    assert_eq!(a, b);
}

/// A program built like another (`Program::new_like`, as the oracle builds
/// an optimized module's) shares its environment description and heap names
/// only when the types, globals and externs are the same; then it behaves
/// exactly as a program of its own, and otherwise it names what its own
/// module declares (a shared table would be stale).
#[test]
fn programs_share_names_and_environment_only_with_the_same_declarations() {
    let src = |ty: &str, ext: &str| {
        format!(
            "type {ty} {{ x: i64, next: {ty} }}
global @g: {ty}
extern @e({ty}) -> i64{ext}
func @main(%p: {ty}) -> i64 {{
entry:
  %r = call @e(%p)
  store %p.x, %r
  store @g, %p
  ret %r
}}"
        )
    };
    let parse = |s: &str| ir::parse_module(s, "t.ir").expect("parses").0;
    let base_m = parse(&src("Node", ""));
    let base = Program::new(&base_m);
    let f = base_m.func_by_name("main").expect("main");
    let run = |m: &ir::Module, p: &Program| {
        let spec = ir::parse_input_spec("p = Node{x: 3, next: null}", "<input>", m, m.func(f))
            .or_else(|_| {
                ir::parse_input_spec("p = Cell{x: 3, next: null}", "<input>", m, m.func(f))
            })
            .expect("input");
        p.run(f, &spec, &Config::default())
    };
    let same_m = parse(&src("Node", ""));
    let same = Program::new_like(&same_m, &base);
    assert!(same.shares_env_with(&base));
    assert_eq!(run(&same_m, &same), run(&same_m, &Program::new(&same_m)));
    // Renamed type, then declared extern effects: nothing shared, and the
    // run is the one of a program of its own (new name, other environment).
    for (ty, ext) in [("Cell", ""), ("Node", " reads(Node.x)")] {
        let m = parse(&src(ty, ext));
        let like = Program::new_like(&m, &base);
        assert!(!like.shares_env_with(&base), "{ty}{ext}");
        let own = run(&m, &Program::new(&m));
        assert_eq!(run(&m, &like), own);
        assert!(own.behaviour.to_string().contains(ty));
    }
}
