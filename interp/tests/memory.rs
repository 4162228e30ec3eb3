//! Memory instructions (IR.md §4): objects, arrays, fields, elements, globals,
//! their traps, aliasing inputs and cycles, and the heap part of the behaviour.

mod support;
use interp::{Config, Outcome, TrapKind};
use ir::{Addr, InputValue, Type};
use support::*;

#[test]
fn new_object_is_zeroed_and_stores_are_seen() {
    let mut fx = Fx::new();
    let (px, py, node) = (fx.px(), fx.py(), fx.node);
    let point = fx.point;
    let f = fx.func("main", &[], Some(Type::object(point)), |b, _| {
        let p = b.new_object(point);
        let x0 = b.load_field(p, px);
        b.escape(x0);
        let five = b.iconst(5);
        b.store_field(p, py, five);
        let n = b.new_object(node);
        b.escape(n);
        b.ret(Some(p));
    });
    assert_eq!(
        fx.show(f, &ints(&[])),
        "outcome: return #0\ntrace: 0, #1\nheap: #0 = Point{x: 0, y: 5}; #1 = Node{val: 0, next: null}"
    );
}

#[test]
fn arrays_zeroed_len_and_elements() {
    let mut fx = Fx::new();
    let f = fx.func("main", &[Type::I64], Some(Type::I64.array_of()), |b, p| {
        let a = b.new_array(Type::I64, p[0]);
        let n = b.len(a);
        b.escape(n);
        let one = b.iconst(1);
        let nine = b.iconst(9);
        b.store_elem(a, one, nine);
        let zero = b.iconst(0);
        let e0 = b.load_elem(a, zero);
        b.escape(e0);
        b.ret(Some(a));
    });
    assert_eq!(
        fx.show(f, &ints(&[3])),
        "outcome: return #0\ntrace: 3, 0\nheap: #0 = [i64]{0, 9, 0}"
    );
}

#[test]
fn newarray_length_limits() {
    let mut fx = Fx::new();
    let f = fx.func("main", &[Type::I64], Some(Type::I64), |b, p| {
        let a = b.new_array(Type::I64, p[0]);
        let n = b.len(a);
        b.ret(Some(n));
    });
    assert_eq!(fx.show(f, &ints(&[0])), "outcome: return 0\ntrace:\nheap:");
    assert_eq!(
        fx.show(f, &ints(&[65536])),
        "outcome: return 65536\ntrace:\nheap:"
    );
    assert_eq!(
        fx.show(f, &ints(&[65537])),
        "outcome: trap bad_length\ntrace:\nheap:"
    );
    assert_eq!(
        fx.show(f, &ints(&[-1])),
        "outcome: trap bad_length\ntrace:\nheap:"
    );
}

#[test]
fn null_deref_on_every_access_with_trace_and_heap_at_the_trap() {
    let mut fx = Fx::new();
    let px = fx.px();
    let pt = fx.point_ty();
    let arr = Type::I64.array_of();
    type Body = Box<dyn Fn(&mut ir::FunctionBuilder, ir::Value, ir::Value, ir::FieldRef)>;
    let bodies: Vec<Body> = vec![
        Box::new(|b, p, _, f| {
            b.load_field(p, f);
        }),
        Box::new(|b, p, _, f| {
            let one = b.iconst(1);
            b.store_field(p, f, one);
        }),
        Box::new(|b, _, a, _| {
            let zero = b.iconst(0);
            b.load_elem(a, zero);
        }),
        Box::new(|b, _, a, _| {
            let zero = b.iconst(0);
            b.store_elem(a, zero, zero);
        }),
        Box::new(|b, _, a, _| {
            b.len(a);
        }),
    ];
    for body in bodies {
        let f = fx.func("main", &[pt, arr, pt], None, |b, p| {
            let seven = b.iconst(7);
            b.escape(seven);
            b.escape(p[2]);
            body(b, p[0], p[1], px);
            b.ret(None);
        });
        let mut s = Spec::new();
        let q = s.obj(fx.point, vec![int(1), int(2)]);
        let inputs = s.params(vec![NULL, NULL, q]);
        assert_eq!(
            fx.show(f, &inputs),
            "outcome: trap null_deref\ntrace: 7, #0\nheap: #0 = Point{x: 1, y: 2}"
        );
    }
}

#[test]
fn out_of_bounds_both_sides() {
    let mut fx = Fx::new();
    let arr = Type::I64.array_of();
    let load = fx.func("load", &[arr, Type::I64], Some(Type::I64), |b, p| {
        let v = b.load_elem(p[0], p[1]);
        b.ret(Some(v));
    });
    let store = fx.func("store", &[arr, Type::I64], None, |b, p| {
        let v = b.iconst(1);
        b.store_elem(p[0], p[1], v);
        b.ret(None);
    });
    let inputs = |i: i64| {
        let mut s = Spec::new();
        let a = s.arr(Type::I64, vec![int(3), int(4)]);
        s.params(vec![a, int(i)])
    };
    assert_eq!(
        fx.show(load, &inputs(1)),
        "outcome: return 4\ntrace:\nheap: #0 = [i64]{3, 4}"
    );
    for i in [2, -1, i64::MIN] {
        assert_eq!(
            fx.show(load, &inputs(i)),
            "outcome: trap out_of_bounds\ntrace:\nheap: #0 = [i64]{3, 4}"
        );
        assert_eq!(
            fx.show(store, &inputs(i)),
            "outcome: trap out_of_bounds\ntrace:\nheap: #0 = [i64]{3, 4}"
        );
    }
    assert_eq!(
        fx.show(store, &inputs(0)),
        "outcome: return\ntrace:\nheap: #0 = [i64]{1, 4}"
    );
}

#[test]
fn globals_load_store_and_print_in_declaration_order() {
    let mut fx = Fx::new();
    let count = fx.global("count", Type::I64);
    let head = fx.global("head", fx.node_ty());
    let (val, node) = (fx.val(), fx.node);
    let f = fx.func("main", &[], Some(Type::I64), |b, _| {
        let c = b.load_global(count);
        let one = b.iconst(1);
        let c2 = b.binary(BinOp::Add, c, one);
        b.store_global(count, c2);
        let n = b.new_object(node);
        b.store_field(n, val, c2);
        b.store_global(head, n);
        b.ret(Some(c));
    });
    let mut s = Spec::new();
    s.globals(vec![int(41), NULL]);
    assert_eq!(
        fx.show(f, &s.params(vec![])),
        "outcome: return 41\ntrace:\nheap: @count = 42; @head = #0; #0 = Node{val: 42, next: null}"
    );
}

#[test]
fn aliased_parameters_see_each_others_stores() {
    // IR.md §1: %p and %q may be the same object; the second load must see the store.
    let mut fx = Fx::new();
    let (px, pt) = (fx.px(), fx.point_ty());
    let f = fx.func("main", &[pt, pt], Some(Type::I64), |b, p| {
        let a = b.load_field(p[0], px);
        let five = b.iconst(5);
        b.store_field(p[1], px, five);
        let bb = b.load_field(p[0], px);
        let c = b.binary(BinOp::Add, a, bb);
        b.ret(Some(c));
    });
    let mut s = Spec::new();
    let p = s.obj(fx.point, vec![int(1), int(2)]);
    assert_eq!(
        fx.show(f, &s.params(vec![p, p])),
        "outcome: return 6\ntrace:\nheap: #0 = Point{x: 5, y: 2}"
    );
    let mut s = Spec::new();
    let p = s.obj(fx.point, vec![int(1), int(2)]);
    let q = s.obj(fx.point, vec![int(3), int(4)]);
    assert_eq!(
        fx.show(f, &s.params(vec![p, q])),
        "outcome: return 2\ntrace:\nheap: #0 = Point{x: 1, y: 2}; #1 = Point{x: 5, y: 4}"
    );
}

#[test]
fn cyclic_input_is_walked_once() {
    let mut fx = Fx::new();
    let (val, next, nt) = (fx.val(), fx.next(), fx.node_ty());
    let f = fx.func("main", &[nt], Some(Type::I64), |b, p| {
        let n = b.load_field(p[0], next);
        let nn = b.load_field(n, next);
        let v = b.load_field(nn, val);
        b.ret(Some(v));
    });
    let mut s = Spec::new();
    let h = s.obj(fx.node, vec![int(1), NULL]);
    s.set(h, 1, h);
    assert_eq!(
        fx.show(f, &s.params(vec![h])),
        "outcome: return 1\ntrace:\nheap: #0 = Node{val: 1, next: #0}"
    );
}

#[test]
fn reference_equality_is_identity() {
    let mut fx = Fx::new();
    let (point, pt) = (fx.point, fx.point_ty());
    let f = fx.func("main", &[pt, pt], Some(Type::I64), |b, p| {
        let same = b.binary(BinOp::Eq, p[0], p[1]);
        let fresh = b.new_object(point);
        let differ = b.binary(BinOp::Ne, p[0], fresh);
        let null = b.null();
        let is_null = b.binary(BinOp::Eq, p[1], null);
        b.escape(same);
        b.escape(differ);
        b.escape(is_null);
        let picked = b.select(same, p[0], fresh);
        b.escape(picked);
        b.ret(Some(same));
    });
    let mut s = Spec::new();
    let a = s.obj(fx.point, vec![int(1), int(1)]);
    let b2 = s.obj(fx.point, vec![int(1), int(1)]);
    let two = s.clone();
    assert_eq!(
        fx.show(f, &s.params(vec![a, a])),
        "outcome: return 1\ntrace: 1, 1, 0, #0\nheap: #0 = Point{x: 1, y: 1}"
    );
    assert_eq!(
        fx.show(f, &two.params(vec![a, b2])),
        "outcome: return 0\ntrace: 0, 1, 0, #2\nheap: #0 = Point{x: 1, y: 1}; #1 = Point{x: 1, y: 1}; #2 = Point{x: 0, y: 0}"
    );
}

#[test]
fn arrays_of_references_and_nested_arrays() {
    let mut fx = Fx::new();
    let (point, px) = (fx.point, fx.px());
    let pa = fx.point_ty().array_of();
    let f = fx.func("main", &[], Some(pa.array_of()), |b, _| {
        let two = b.iconst(2);
        let one = b.iconst(1);
        let zero = b.iconst(0);
        let outer = b.new_array(pa, two);
        let inner = b.new_array(Type::object(point), two);
        b.store_elem(outer, one, inner);
        let p = b.new_object(point);
        b.store_field(p, px, two);
        b.store_elem(inner, zero, p);
        b.ret(Some(outer));
    });
    assert_eq!(
        fx.show(f, &ints(&[])),
        "outcome: return #0\ntrace:\nheap: #0 = [[Point]]{null, #1}; #1 = [Point]{#2, null}; #2 = Point{x: 2, y: 0}"
    );
}

#[test]
fn heap_exhausted_with_a_small_budget() {
    let mut fx = Fx::new();
    let point = fx.point;
    let f = fx.func("main", &[Type::I64], Some(Type::I64), |b, p| {
        let a = b.new_array(Type::I64, p[0]);
        b.escape(p[0]);
        let _ = b.new_object(point);
        let n = b.len(a);
        b.ret(Some(n));
    });
    // 1 reserved word + (2 + n) array words + 3 object words must fit.
    let config = Config {
        heap_words: 16,
        ..Config::default()
    };
    let e = fx.run_with(f, &ints(&[10]), &config);
    assert_eq!(
        e.behaviour.to_string(),
        "outcome: return 10\ntrace: 10\nheap:"
    );
    let e = fx.run_with(f, &ints(&[11]), &config);
    assert_eq!(
        e.behaviour.to_string(),
        "outcome: trap heap_exhausted\ntrace: 11\nheap:"
    );
    let e = fx.run_with(f, &ints(&[14]), &config);
    assert_eq!(e.behaviour.outcome, Outcome::Trap(TrapKind::HeapExhausted));
    assert_eq!(e.behaviour.trace.len(), 0, "the array itself did not fit");
    assert!(TrapKind::HeapExhausted.is_inconclusive());
}

#[test]
fn volatile_step_reaches_its_own_argument_but_not_other_fresh_objects() {
    let mut fx = Fx::new();
    let (point, px) = (fx.point, fx.px());
    let f = fx.func("main", &[], Some(Type::I64), |b, _| {
        let p = b.new_object(point);
        let q = b.new_object(point);
        let eleven = b.iconst(11);
        b.store_field(q, px, eleven);
        let five = b.iconst(5);
        b.store(Addr::Field { base: p, field: px }, five, true);
        let seen = b.load(Addr::Field { base: p, field: px }, true);
        b.escape(seen);
        let r = b.load_field(q, px);
        b.ret(Some(r));
    });
    // q is never reachable from a root: both steps leave it alone. The store
    // itself happens after its step, so the second step sees 5 and may rewrite it.
    let e = fx.run(f, &ints(&[]));
    assert_eq!(e.behaviour.outcome.to_string(), "return 11");
    assert_eq!(e.behaviour.trace.len(), 1);
    assert_eq!(
        e.behaviour,
        fx.run(f, &ints(&[])).behaviour,
        "deterministic"
    );
}

#[test]
fn volatile_access_through_null_traps_after_its_step() {
    let mut fx = Fx::new();
    let (px, pt) = (fx.px(), fx.point_ty());
    let g = fx.global("g", Type::I64);
    let f = fx.func("main", &[pt], Some(Type::I64), |b, p| {
        let r = b.load(
            Addr::Field {
                base: p[0],
                field: px,
            },
            true,
        );
        b.ret(Some(r));
    });
    let e = fx.run(f, &Spec::new().params(vec![InputValue::Null]));
    assert_eq!(e.behaviour.outcome, Outcome::Trap(TrapKind::NullDeref));
    // The step ran first and rewrote the global (it is in reach and i64).
    let _ = g;
    assert_ne!(e.behaviour.heap[0].to_string(), "@g = 0");
}
