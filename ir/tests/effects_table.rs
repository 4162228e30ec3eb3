//! The effects table of IR.md §8, one test per row.

mod verify_support;

use ir::effects::{
    extern_effects, inst_effects, module_heap_leaves, null_checked, sets_overlap,
    traps_only_on_null, Effects, HeapNode, Traps,
};
use ir::{
    Addr, BinOp, Callee, EffectLoc, Extern, ExternEffects, Function, InstKind, Type, UnOp, Value,
};
use verify_support::{sample, Fb, Sample};

/// Build `@f(%p: Point, %n: Node, %i: i64, %a: [i64])`, emit one instruction
/// with `body`, and return the effects of the last instruction emitted.
fn effects_of(s: &Sample, body: impl FnOnce(&mut Fb, [Value; 4])) -> Effects {
    let mut fb = Fb::new(&s.m, "f", None);
    let p = fb.param("p", Type::object(s.point));
    let n = fb.param("n", Type::object(s.node));
    let i = fb.param("i", Type::I64);
    let a = fb.param("a", Type::I64.array_of());
    fb.at("entry");
    body(&mut fb, [p, n, i, a]);
    let f: Function = fb.finish();
    let last = *f.blocks[0].insts.last().unwrap();
    inst_effects(&s.m, &f, last)
}

fn nodes(xs: &[HeapNode]) -> Vec<HeapNode> {
    xs.to_vec()
}

#[test]
fn heap_tree_shape() {
    let s = sample();
    let fx = HeapNode::Field(s.px);
    assert_eq!(fx.parent(), Some(HeapNode::Fields));
    assert_eq!(HeapNode::Fields.parent(), Some(HeapNode::Heap));
    assert_eq!(
        HeapNode::Element(Type::I64).parent(),
        Some(HeapNode::Elements)
    );
    assert_eq!(HeapNode::Global(s.count).parent(), Some(HeapNode::Globals));
    assert_eq!(HeapNode::Globals.parent(), Some(HeapNode::Heap));
    assert_eq!(HeapNode::Heap.parent(), Some(HeapNode::World));
    assert_eq!(HeapNode::Alloc.parent(), Some(HeapNode::World));
    assert_eq!(HeapNode::Output.parent(), Some(HeapNode::World));
    assert_eq!(HeapNode::World.parent(), None);
    assert!(HeapNode::World.contains(fx));
    assert!(HeapNode::Heap.contains(fx));
    assert!(fx.contains(fx));
    assert!(!fx.contains(HeapNode::Fields));
    assert!(!HeapNode::Heap.contains(HeapNode::Alloc));
    assert!(HeapNode::overlaps(HeapNode::Fields, fx));
    assert!(HeapNode::overlaps(fx, HeapNode::World));
    assert!(!HeapNode::overlaps(fx, HeapNode::Field(s.py)));
    assert!(!HeapNode::overlaps(
        HeapNode::Element(Type::I64),
        HeapNode::Element(Type::I64.array_of())
    ));
    assert!(!HeapNode::overlaps(HeapNode::Output, HeapNode::Heap));
    assert!(sets_overlap(&[HeapNode::Output, fx], &[HeapNode::Fields]));
    assert!(!sets_overlap(
        &[HeapNode::Output],
        &[HeapNode::Alloc, HeapNode::Heap]
    ));
}

#[test]
fn pure_integer_ops_have_no_effects() {
    let s = sample();
    for op in BinOp::ALL {
        if op.may_trap() {
            continue;
        }
        let e = effects_of(&s, |fb, [_, _, i, _]| {
            fb.binary(op, i, i);
        });
        assert!(e.is_pure(), "{op:?}");
    }
    for op in [UnOp::Neg, UnOp::Not, UnOp::Copy] {
        assert!(effects_of(&s, |fb, [_, _, i, _]| {
            fb.unary(op, i);
        })
        .is_pure());
    }
    assert!(effects_of(&s, |fb, [p, _, i, _]| {
        fb.select(i, p, p);
    })
    .is_pure());
}

#[test]
fn eq_on_references_is_pure() {
    let s = sample();
    let e = effects_of(&s, |fb, [p, _, _, _]| {
        let nul = fb.null();
        fb.binary(BinOp::Eq, p, nul);
    });
    assert!(e.is_pure());
}

#[test]
fn sdiv_and_srem_may_trap_unless_the_divisor_is_a_nonzero_constant() {
    let s = sample();
    for op in [BinOp::Sdiv, BinOp::Srem] {
        let by_var = effects_of(&s, |fb, [_, _, i, _]| {
            fb.binary(op, i, i);
        });
        assert_eq!(by_var.traps, Traps::May);
        assert!(by_var.reads_nothing() && by_var.writes_nothing());
        assert!(!by_var.removable_if_unused());
        let by_zero = effects_of(&s, |fb, [_, _, i, _]| {
            let z = fb.c(0);
            fb.binary(op, i, z);
        });
        assert_eq!(by_zero.traps, Traps::May);
        let by_minus_one = effects_of(&s, |fb, [_, _, i, _]| {
            let k = fb.c(-1);
            fb.binary(op, i, k);
        });
        assert_eq!(by_minus_one.traps, Traps::Never);
        assert!(by_minus_one.is_pure());
    }
}

#[test]
fn new_reads_and_writes_alloc_and_traps_only_on_resources() {
    let s = sample();
    let e = effects_of(&s, |fb, _| {
        fb.new_object(s.point);
    });
    assert_eq!(nodes(&e.reads), vec![HeapNode::Alloc]);
    assert_eq!(nodes(&e.writes), vec![HeapNode::Alloc]);
    assert_eq!(e.traps, Traps::ResourceOnly);
    assert!(e.allocates);
    assert!(e.may_trap());
    assert!(!e.is_pure());
    assert!(e.removable_if_unused());
}

#[test]
fn newarray_traps_on_bad_lengths_unless_the_length_is_a_valid_constant() {
    let s = sample();
    let with_len = |len: Option<i64>| {
        effects_of(&s, |fb, [_, _, i, _]| {
            let n = len.map_or(i, |c| fb.c(c));
            fb.new_array(Type::I64, n);
        })
    };
    for ok in [0, 10, 65536] {
        let e = with_len(Some(ok));
        assert_eq!(e.traps, Traps::ResourceOnly, "len {ok}");
        assert!(e.removable_if_unused());
        assert!(e.allocates);
        assert_eq!(nodes(&e.writes), vec![HeapNode::Alloc]);
    }
    for bad in [Some(-1), Some(65537), None] {
        let e = with_len(bad);
        assert_eq!(e.traps, Traps::May, "len {bad:?}");
        assert!(!e.removable_if_unused());
    }
}

#[test]
fn field_load_and_store_touch_their_field_and_trap_when_the_base_may_be_null() {
    let s = sample();
    let load = effects_of(&s, |fb, [p, ..]| {
        fb.load_field(p, s.px);
    });
    assert_eq!(nodes(&load.reads), vec![HeapNode::Field(s.px)]);
    assert!(load.writes_nothing());
    assert_eq!(load.traps, Traps::May);
    let store = effects_of(&s, |fb, [p, _, i, _]| {
        fb.store_field(p, s.py, i);
    });
    assert!(store.reads_nothing());
    assert_eq!(nodes(&store.writes), vec![HeapNode::Field(s.py)]);
    assert_eq!(store.traps, Traps::May);
    let fresh = effects_of(&s, |fb, _| {
        let o = fb.new_object(s.point);
        fb.load_field(o, s.px);
    });
    assert_eq!(fresh.traps, Traps::Never);
    assert!(fresh.removable_if_unused());
    let fresh_store = effects_of(&s, |fb, [_, _, i, _]| {
        let o = fb.new_object(s.point);
        fb.store_field(o, s.px, i);
    });
    assert_eq!(fresh_store.traps, Traps::Never);
    let null_base = effects_of(&s, |fb, _| {
        let nul = fb.null();
        fb.push(
            InstKind::Load {
                addr: Addr::Field {
                    base: nul,
                    field: s.px,
                },
                volatile: false,
            },
            Some(Type::I64),
        );
    });
    assert_eq!(null_base.traps, Traps::May);
}

#[test]
fn element_load_and_store_touch_their_element_type_and_may_trap() {
    let s = sample();
    let load = effects_of(&s, |fb, [_, _, i, a]| {
        fb.load_elem(a, i);
    });
    assert_eq!(nodes(&load.reads), vec![HeapNode::Element(Type::I64)]);
    assert!(load.writes_nothing());
    assert_eq!(load.traps, Traps::May);
    let store = effects_of(&s, |fb, [_, n, i, _]| {
        let arr = fb.new_array(Type::object(s.node), i);
        fb.store_elem(arr, i, n);
    });
    assert_eq!(
        nodes(&store.writes),
        vec![HeapNode::Element(Type::object(s.node))]
    );
    assert_eq!(store.traps, Traps::May, "bounds are not known");
}

#[test]
fn element_access_of_a_constant_length_newarray_at_a_constant_index_in_range_never_traps() {
    let s = sample();
    // (length, index, whether the access may trap)
    for (len, index, traps) in [
        (3, 0, Traps::Never),
        (3, 2, Traps::Never),
        (3, 3, Traps::May),
        (3, -1, Traps::May),
        (0, 0, Traps::May),
        (-2, 0, Traps::May),
    ] {
        let store = effects_of(&s, |fb, [_, _, i, _]| {
            let n = fb.iconst(len);
            let arr = fb.new_array(Type::I64, n);
            let k = fb.iconst(index);
            fb.store_elem(arr, k, i);
        });
        assert_eq!(store.traps, traps, "store, length {len}, index {index}");
        let load = effects_of(&s, |fb, _| {
            let n = fb.iconst(len);
            let arr = fb.new_array(Type::I64, n);
            let k = fb.iconst(index);
            fb.load_elem(arr, k);
        });
        assert_eq!(load.traps, traps, "load, length {len}, index {index}");
        assert_eq!(load.removable_if_unused(), traps == Traps::Never);
    }
    // A variable index or a variable length keeps the bounds check.
    let var_index = effects_of(&s, |fb, [_, _, i, _]| {
        let n = fb.iconst(4);
        let arr = fb.new_array(Type::I64, n);
        fb.load_elem(arr, i);
    });
    assert_eq!(var_index.traps, Traps::May);
    let var_len = effects_of(&s, |fb, [_, _, i, _]| {
        let arr = fb.new_array(Type::I64, i);
        let k = fb.iconst(0);
        fb.load_elem(arr, k);
    });
    assert_eq!(var_len.traps, Traps::May);
}

#[test]
fn len_reads_nothing_and_traps_only_on_a_maybe_null_array() {
    let s = sample();
    let e = effects_of(&s, |fb, [_, _, _, a]| {
        fb.len(a);
    });
    assert!(e.reads_nothing() && e.writes_nothing());
    assert_eq!(e.traps, Traps::May);
    let fresh = effects_of(&s, |fb, [_, _, i, _]| {
        let arr = fb.new_array(Type::I64, i);
        fb.len(arr);
    });
    assert!(fresh.is_pure());
}

#[test]
fn global_load_and_store_touch_their_global_and_never_trap() {
    let s = sample();
    let load = effects_of(&s, |fb, _| {
        fb.load_global(s.count);
    });
    assert_eq!(nodes(&load.reads), vec![HeapNode::Global(s.count)]);
    assert_eq!(load.traps, Traps::Never);
    assert!(load.removable_if_unused());
    let store = effects_of(&s, |fb, [_, n, _, _]| {
        fb.store_global(s.head, n);
    });
    assert_eq!(nodes(&store.writes), vec![HeapNode::Global(s.head)]);
    assert_eq!(store.traps, Traps::Never);
    assert!(!store.removable_if_unused());
}

#[test]
fn volatile_accesses_read_and_write_the_world() {
    let s = sample();
    let vl = effects_of(&s, |fb, [p, ..]| {
        fb.load(
            Addr::Field {
                base: p,
                field: s.px,
            },
            true,
        );
    });
    assert_eq!(vl, Effects::world());
    let vs = effects_of(&s, |fb, [_, _, i, _]| {
        fb.store(Addr::Global(s.count), i, true);
    });
    assert_eq!(nodes(&vs.reads), vec![HeapNode::World]);
    assert_eq!(nodes(&vs.writes), vec![HeapNode::World]);
    assert_eq!(vs.traps, Traps::May);
}

#[test]
fn calls_of_module_functions_and_undeclared_externs_read_and_write_the_world() {
    let s = sample();
    let ext = effects_of(&s, |fb, [p, _, i, _]| {
        fb.call(Callee::Extern(s.mystery), vec![i, p]);
    });
    assert_eq!(ext, Effects::world());
    let mut m = s.m.clone();
    let callee = {
        let mut fb = Fb::new(&m, "g", None);
        fb.at("entry");
        fb.ret(None);
        fb.finish()
    };
    let g = m.add_func(callee);
    let mut fb = Fb::new(&m, "f", None);
    fb.at("entry");
    let (call, _) = fb.call(Callee::Func(g), vec![]);
    let f = fb.finish();
    assert_eq!(inst_effects(&m, &f, call), Effects::world());
}

#[test]
fn externs_with_declared_effects_touch_exactly_the_declared_leaves() {
    // Plus a read of Output: every step's reach includes the escaped objects,
    // so an extern must not move across an `escape`.
    let s = sample();
    let e = effects_of(&s, |fb, [p, ..]| {
        fb.call(Callee::Extern(s.length), vec![p]);
    });
    assert_eq!(
        nodes(&e.reads),
        vec![HeapNode::Field(s.px), HeapNode::Output]
    );
    assert!(e.writes_nothing());
    assert_eq!(e.traps, Traps::May);
    let mut m = s.m.clone();
    let x = m.add_extern(Extern {
        name: "fill".into(),
        params: vec![],
        ret: None,
        effects: Some(ExternEffects {
            reads: vec![EffectLoc::Global(s.count)],
            writes: vec![EffectLoc::Elements(Type::I64), EffectLoc::Field(s.next)],
        }),
    });
    let (r, w) = extern_effects(&m, x);
    assert_eq!(nodes(&r), vec![HeapNode::Global(s.count), HeapNode::Output]);
    assert_eq!(
        nodes(&w),
        vec![HeapNode::Element(Type::I64), HeapNode::Field(s.next)]
    );
    let none = m.add_extern(Extern {
        name: "nothing".into(),
        params: vec![],
        ret: None,
        effects: Some(ExternEffects::default()),
    });
    let (r, w) = extern_effects(&m, none);
    assert_eq!(
        nodes(&r),
        vec![HeapNode::Output],
        "reads(none) still sees what escaped"
    );
    assert!(w.is_empty());
    let (r, w) = extern_effects(&m, s.mystery);
    assert_eq!(
        (nodes(&r), nodes(&w)),
        (vec![HeapNode::World], vec![HeapNode::World])
    );
}

#[test]
fn escape_writes_output_and_reads_the_heap_for_a_reference() {
    let s = sample();
    let r = effects_of(&s, |fb, [p, ..]| {
        fb.escape(p);
    });
    assert_eq!(nodes(&r.reads), vec![HeapNode::Heap]);
    assert_eq!(nodes(&r.writes), vec![HeapNode::Output]);
    assert_eq!(r.traps, Traps::Never);
    assert!(!r.removable_if_unused());
    let i = effects_of(&s, |fb, [_, _, i, _]| {
        fb.escape(i);
    });
    assert!(i.reads_nothing());
    assert_eq!(nodes(&i.writes), vec![HeapNode::Output]);
}

#[test]
fn guard_may_trap_unless_its_condition_is_a_nonzero_constant() {
    let s = sample();
    let g = effects_of(&s, |fb, [_, _, i, _]| {
        fb.guard(i);
    });
    assert_eq!(g.traps, Traps::May);
    assert!(g.reads_nothing() && g.writes_nothing());
    let zero = effects_of(&s, |fb, _| {
        let z = fb.c(0);
        fb.guard(z);
    });
    assert_eq!(zero.traps, Traps::May);
    let one = effects_of(&s, |fb, _| {
        let k = fb.c(3);
        fb.guard(k);
    });
    assert_eq!(one.traps, Traps::Never);
}

#[test]
fn terminators_and_phis() {
    let s = sample();
    let ret = effects_of(&s, |fb, _| {
        fb.ret(None);
    });
    assert!(ret.is_pure());
    let jmp = effects_of(&s, |fb, _| {
        let b = fb.current_block();
        fb.jmp(b);
    });
    assert!(jmp.is_pure());
    let br = effects_of(&s, |fb, [_, _, i, _]| {
        let b = fb.current_block();
        fb.br(i, b, b);
    });
    assert!(br.is_pure());
    let un = effects_of(&s, |fb, _| {
        fb.unreachable();
    });
    assert_eq!(un.traps, Traps::May);
    let phi = effects_of(&s, |fb, [_, _, i, _]| {
        let b = fb.current_block();
        fb.phi(Type::I64, vec![(b, i)]);
    });
    assert!(phi.is_pure());
}

#[test]
fn module_heap_leaves_lists_fields_element_types_globals_alloc_and_output() {
    let s = sample();
    let mut m = s.m.clone();
    // A function mentioning [[i64]] contributes [i64] and i64 element leaves.
    let f = {
        let mut fb = Fb::new(&m, "f", None);
        fb.param("grid", Type::I64.array_of().array_of());
        fb.at("entry");
        fb.ret(None);
        fb.finish()
    };
    m.add_func(f);
    let leaves = module_heap_leaves(&m);
    assert_eq!(
        leaves,
        vec![
            HeapNode::Field(s.px),
            HeapNode::Field(s.py),
            HeapNode::Field(s.val),
            HeapNode::Field(s.next),
            HeapNode::Element(Type::I64.array_of()),
            HeapNode::Element(Type::I64),
            HeapNode::Global(s.count),
            HeapNode::Global(s.head),
            HeapNode::Alloc,
            HeapNode::Output,
        ]
    );
    // Every leaf has no children among the leaves, and World contains them all.
    for &l in &leaves {
        assert!(HeapNode::World.contains(l));
        assert_eq!(leaves.iter().filter(|&&o| l.contains(o)).count(), 1);
    }
    // The sample module alone has no arrays.
    assert!(!module_heap_leaves(&s.m)
        .iter()
        .any(|l| matches!(l, HeapNode::Element(_))));
}

#[test]
fn null_checks_and_traps_only_on_null() {
    let s = sample();
    let mut fb = Fb::new(&s.m, "f", None);
    let p = fb.param("p", Type::object(s.point));
    let i = fb.param("i", Type::I64);
    let a = fb.param("a", Type::I64.array_of());
    fb.at("entry");
    let field_load = fb.load_field(p, s.px);
    let field_store = fb.store_field(p, s.py, i);
    let elem_load = fb.load_elem(a, i);
    let length = fb.len(a);
    let volatile = fb.store(
        Addr::Field {
            base: p,
            field: s.px,
        },
        i,
        true,
    );
    let o = fb.new_object(s.point);
    let fresh = fb.load_field(o, s.px);
    let sum = fb.binary(BinOp::Add, i, i);
    let f: Function = fb.finish();
    let def = |v: Value| f.def_inst(v).unwrap();
    // (instruction, null_checked, traps_only_on_null)
    for (inst, checked, only) in [
        (def(field_load), Some(p), Some(p)),
        (field_store, Some(p), Some(p)),
        (def(elem_load), Some(a), None),
        (def(length), Some(a), Some(a)),
        (volatile, Some(p), None),
        (def(fresh), Some(o), None),
        (def(sum), None, None),
    ] {
        assert_eq!(null_checked(&f, inst), checked, "{:?}", f.inst(inst).kind);
        assert_eq!(
            traps_only_on_null(&f, inst),
            only,
            "{:?}",
            f.inst(inst).kind
        );
    }
}
