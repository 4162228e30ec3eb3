//! The environment (IR.md §6): extern calls and volatile steps clobber what is
//! reachable and nothing else, declared effects confine them, and everything is
//! deterministic and independent of allocation addresses.

mod support;
use interp::{AccessKind, AccessLoc, AccessLog, Config, HeapEntry, Observed, Program, Site};
use ir::{Addr, EffectLoc, Type};
use support::*;

fn ints_of(entry: &HeapEntry) -> Vec<i64> {
    match entry {
        HeapEntry::Struct { values, .. } => values
            .iter()
            .filter_map(|v| {
                if let Observed::Int(i) = v {
                    Some(*i)
                } else {
                    None
                }
            })
            .collect(),
        HeapEntry::Array { elems, .. } => elems
            .iter()
            .filter_map(|v| {
                if let Observed::Int(i) = v {
                    Some(*i)
                } else {
                    None
                }
            })
            .collect(),
        HeapEntry::Global {
            value: Observed::Int(i),
            ..
        } => vec![*i],
        HeapEntry::Global { .. } => vec![],
    }
}

#[test]
fn an_extern_clobbers_reachable_slots_but_not_an_unescaped_fresh_object() {
    let mut fx = Fx::new();
    let (point, px) = (fx.point, fx.px());
    let arr = Type::I64.array_of();
    let mystery = fx.ext("mystery", vec![Type::I64], Some(Type::I64));
    let f = fx.func("main", &[arr], Some(Type::I64), |b, _| {
        let q = b.new_object(point);
        let five = b.iconst(5);
        b.store_field(q, px, five);
        b.call(Callee::Extern(mystery), vec![five]);
        let r = b.load_field(q, px);
        b.ret(Some(r));
    });
    let mut s = Spec::new();
    let a = s.arr(Type::I64, (0..40).map(int).collect());
    let e = fx.run(f, &s.params(vec![a]));
    assert_eq!(
        e.behaviour.outcome.to_string(),
        "return 5",
        "fresh object untouched"
    );
    let after = ints_of(&e.behaviour.heap[0]);
    let changed = after.iter().zip(0..).filter(|(x, i)| **x != *i).count();
    assert_eq!(
        changed, 40,
        "IR.md §6: every writable i64 slot gets a new value"
    );
    assert_eq!(e.fuel_used, 1, "an extern call costs one unit");
}

#[test]
fn an_object_becomes_visible_once_stored_into_reachable_memory() {
    let mut fx = Fx::new();
    let (node, val, next, nt) = (fx.node, fx.val(), fx.next(), fx.node_ty());
    let arr = Type::I64.array_of();
    let mystery = fx.ext("mystery", vec![], None);
    let f = fx.func("main", &[nt], Some(arr), |b, p| {
        let n = b.iconst(30);
        let fresh = b.new_array(Type::I64, n);
        let link = b.new_object(node);
        b.store_field(p[0], next, link);
        b.store_field(link, val, n);
        let _ = fresh;
        b.call(Callee::Extern(mystery), vec![]);
        b.ret(Some(fresh));
    });
    let mut s = Spec::new();
    let h = s.obj(fx.node, vec![int(1), NULL]);
    let e = fx.run(f, &s.params(vec![h]));
    // The returned array was invisible during the step: still all zero.
    let arr_entry = e
        .behaviour
        .heap
        .iter()
        .find(|h| matches!(h, HeapEntry::Array { .. }))
        .unwrap();
    assert!(ints_of(arr_entry).iter().all(|&x| x == 0));
    // The node linked into the input is reachable: its val (30) was rewritten.
    let text = e.behaviour.to_string();
    assert!(text.contains("#0 = Node{val: "), "{text}");
    let link = e
        .behaviour
        .heap
        .iter()
        .filter(|h| matches!(h, HeapEntry::Struct { .. }))
        .nth(1);
    if let Some(link) = link {
        assert_ne!(ints_of(link), vec![30], "{text}");
    }
}

#[test]
fn declared_effects_confine_writes() {
    let mut fx = Fx::new();
    let (px, pt) = (fx.px(), fx.point_ty());
    let g = fx.global("g", Type::I64);
    let bump = fx.ext_fx("bump", vec![pt], None, vec![], vec![EffectLoc::Field(px)]);
    let f = fx.func("main", &[pt, pt, pt], None, |b, p| {
        for _ in 0..3 {
            b.call(Callee::Extern(bump), vec![p[0]]);
        }
        b.ret(None);
    });
    let mut s = Spec::new();
    let ps: Vec<_> = (0..3)
        .map(|i| s.obj(fx.point, vec![int(i), int(100 + i)]))
        .collect();
    s.globals(vec![int(77)]);
    let e = fx.run(f, &s.params(ps));
    let _ = g;
    assert_eq!(
        e.behaviour.heap[0].to_string(),
        "@g = 77",
        "globals not declared: untouched"
    );
    let mut xs_changed = 0;
    for (i, entry) in e.behaviour.heap[1..].iter().enumerate() {
        let v = ints_of(entry);
        assert_eq!(v[1], 100 + i as i64, "Point.y is not in writes");
        xs_changed += (v[0] != i as i64) as usize;
    }
    assert!(xs_changed >= 2, "Point.x is written");
}

#[test]
fn an_extern_result_depends_on_exactly_what_it_reads() {
    let mut fx = Fx::new();
    let (px, py, pt) = (fx.px(), fx.py(), fx.point_ty());
    let length = fx.ext_fx(
        "length",
        vec![pt],
        Some(Type::I64),
        vec![EffectLoc::Field(px)],
        vec![],
    );
    let f = fx.func(
        "main",
        &[pt, Type::I64, Type::I64],
        Some(Type::I64),
        |b, p| {
            b.store_field(p[0], px, p[1]);
            b.store_field(p[0], py, p[2]);
            let (_, r) = b.call(Callee::Extern(length), vec![p[0]]);
            b.ret(r);
        },
    );
    let result = |x: i64, y: i64| {
        let mut s = Spec::new();
        let p = s.obj(fx.point, vec![int(0), int(0)]);
        let e = fx.run(f, &s.params(vec![p, int(x), int(y)]));
        // reads only: the heap is unchanged.
        assert_eq!(
            e.behaviour.heap[0].to_string(),
            format!("#0 = Point{{x: {x}, y: {y}}}")
        );
        e.behaviour.outcome
    };
    assert_eq!(result(1, 2), result(1, 3), "Point.y is not read");
    assert_ne!(
        result(1, 2),
        result(4, 2),
        "dropping a store the extern reads changes its result"
    );
}

#[test]
fn undeclared_extern_result_depends_on_reachable_state_and_sequence() {
    let mut fx = Fx::new();
    let pt = fx.point_ty();
    let px = fx.px();
    let m = fx.ext("m", vec![], Some(Type::I64));
    let f = fx.func("main", &[pt, Type::I64], None, |b, p| {
        b.store_field(p[0], px, p[1]);
        let (_, a) = b.call(Callee::Extern(m), vec![]);
        let (_, c) = b.call(Callee::Extern(m), vec![]);
        b.escape(a.unwrap());
        b.escape(c.unwrap());
        b.ret(None);
    });
    let trace = |x: i64| {
        let mut s = Spec::new();
        let p = s.obj(fx.point, vec![int(0), int(0)]);
        fx.run(f, &s.params(vec![p, int(x)])).behaviour.trace
    };
    let t1 = trace(1);
    assert_ne!(t1[0], t1[1], "a later step has a different sequence number");
    assert_ne!(t1, trace(2));
    assert_eq!(t1, trace(1), "deterministic");
}

#[test]
fn reference_results_and_rewired_slots_stay_within_reach() {
    let mut fx = Fx::new();
    let (nt, node) = (fx.node_ty(), fx.node);
    let pick = fx.ext("pick", vec![], Some(nt));
    let f = fx.func("main", &[nt.array_of()], Some(nt), |b, _| {
        let hidden = b.new_object(node);
        let _ = hidden;
        let (_, r) = b.call(Callee::Extern(pick), vec![]);
        b.ret(r);
    });
    let mut s = Spec::new();
    let nodes: Vec<_> = (0..3).map(|i| s.obj(fx.node, vec![int(i), NULL])).collect();
    let a = s.arr(
        nt,
        (0..40)
            .map(|i| if i < 3 { nodes[i] } else { nodes[0] })
            .collect(),
    );
    let e = fx.run(f, &s.params(vec![a]));
    let text = e.behaviour.to_string();
    // Only the three input nodes exist in the final heap: the hidden node was never offered.
    assert_eq!(text.matches("Node{").count(), 3, "{text}");
    assert!(
        matches!(
            e.behaviour.outcome.to_string().as_str(),
            "return null" | "return #1" | "return #2" | "return #3"
        ),
        "{text}"
    );
    let HeapEntry::Array { elems, .. } = &e.behaviour.heap[0] else {
        panic!("{text}")
    };
    // The untouched tail elements all still name one node (the walk renumbers it).
    let tail = &elems[3..];
    let mode = tail
        .iter()
        .map(|v| tail.iter().filter(|w| *w == v).count())
        .max()
        .unwrap();
    let rewired = tail.len() - mode;
    assert!(
        (2..25).contains(&rewired),
        "about a quarter rewired, got {rewired}: {text}"
    );
}

/// Canonicity: a dead allocation in different places does not change what the environment does.
#[test]
fn environment_is_independent_of_allocation_addresses() {
    let build = |dead_first: bool| {
        let mut fx = Fx::new();
        let (node, val, point) = (fx.node, fx.val(), fx.point);
        let nt = fx.node_ty();
        let m = fx.ext("m", vec![nt], Some(Type::I64));
        let f = fx.func("main", &[nt], Some(Type::I64), |b, p| {
            if dead_first {
                b.new_object(point);
                let n = b.iconst(7);
                b.new_array(Type::I64, n);
            }
            let fresh = b.new_object(node);
            let three = b.iconst(3);
            b.store_field(fresh, val, three);
            b.escape(fresh);
            if !dead_first {
                b.new_object(point);
            }
            let (_, r) = b.call(Callee::Extern(m), vec![fresh]);
            b.escape(p[0]);
            b.ret(r);
        });
        let mut s = Spec::new();
        let h = s.obj(fx.node, vec![int(1), NULL]);
        s.set(h, 1, h);
        let e = fx.run(f, &s.params(vec![h]));
        e.behaviour
    };
    let a = build(true);
    let b = build(false);
    assert_eq!(a, b);
    assert_eq!(a.to_string(), b.to_string());
}

#[test]
fn volatile_steps_read_and_clobber_reachable_memory() {
    let mut fx = Fx::new();
    let (px, pt) = (fx.px(), fx.point_ty());
    let f = fx.func("main", &[pt], None, |b, p| {
        let a = b.load(
            Addr::Field {
                base: p[0],
                field: px,
            },
            true,
        );
        let c = b.load(
            Addr::Field {
                base: p[0],
                field: px,
            },
            true,
        );
        b.escape(a);
        b.escape(c);
        b.ret(None);
    });
    let mut s = Spec::new();
    let p = s.obj(fx.point, vec![int(1), int(2)]);
    let e = fx.run(f, &s.params(vec![p]));
    assert_eq!(e.fuel_used, 0, "volatile steps are not calls");
    let t = &e.behaviour.trace;
    assert_ne!(t[0], t[1], "each step rewrites the slot again");
    assert_ne!(t[0], Observed::Int(1));
    let plain = fx.func("plain", &[pt], None, |b, p| {
        let a = b.load_field(p[0], px);
        b.escape(a);
        b.ret(None);
    });
    assert_eq!(
        fx.show(plain, &e_inputs(&fx)),
        "outcome: return\ntrace: 1\nheap: #0 = Point{x: 1, y: 2}"
    );
}

fn e_inputs(fx: &Fx) -> ir::InputSpec {
    let mut s = Spec::new();
    let p = s.obj(fx.point, vec![int(1), int(2)]);
    s.params(vec![p])
}

#[test]
fn access_log_records_own_and_environment_accesses() {
    let mut fx = Fx::new();
    let (px, py, pt) = (fx.px(), fx.py(), fx.point_ty());
    let bump = fx.ext_fx(
        "bump",
        vec![pt],
        None,
        vec![EffectLoc::Field(py)],
        vec![EffectLoc::Field(px)],
    );
    let f = fx.func("main", &[pt], Some(Type::I64), |b, p| {
        b.call(Callee::Extern(bump), vec![p[0]]);
        let v = b.load_field(p[0], py);
        b.ret(Some(v));
    });
    let prog = Program::new(&fx.m);
    let mut log = AccessLog::new();
    let e = prog
        .run_observed(f, &e_inputs(&fx), &Config::default(), &mut log)
        .unwrap();
    assert_eq!(
        e.behaviour,
        fx.run(f, &e_inputs(&fx)).behaviour,
        "observing changes nothing"
    );
    let func = &fx.m.funcs[f.index()];
    let insts: Vec<_> = func.inst_iter().collect();
    let call = Site {
        func: f,
        inst: insts[0],
    };
    let load = Site {
        func: f,
        inst: insts[1],
    };
    let heap = |l| AccessLoc::Heap(EffectLoc::Field(l));
    assert!(log.contains(call, AccessKind::Read, heap(py)));
    for (k, l) in log.accesses_of(call) {
        assert!(
            (k == AccessKind::Read && l == heap(py)) || (k == AccessKind::Write && l == heap(px)),
            "outside the declaration: {k:?} {l:?}"
        );
    }
    assert_eq!(log.accesses_of(load), vec![(AccessKind::Read, heap(py))]);
}
