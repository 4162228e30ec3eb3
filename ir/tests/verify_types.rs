//! Verifier: operand types, result types and references to declarations.

mod verify_support;

use ir::verify::verify_module;
use ir::{
    Addr, BinOp, Callee, ExternId, FieldRef, FuncId, Function, GlobalId, InstKind, StructId, Type,
    UnOp, Value,
};
use verify_support::{assert_err, assert_ok, sample, Fb, Sample};

/// `@f(%p: Point, %q: Point, %n: Node, %i: i64, %a: [i64])` whose body is built by `body`
/// in block 'entry', then `ret`.
fn with_body(s: &Sample, ret: Option<Type>, body: impl FnOnce(&mut Fb, [Value; 5])) -> Function {
    let mut fb = Fb::new(&s.m, "f", ret);
    let p = fb.param("p", Type::object(s.point));
    let q = fb.param("q", Type::object(s.point));
    let n = fb.param("n", Type::object(s.node));
    let i = fb.param("i", Type::I64);
    let a = fb.param("a", Type::I64.array_of());
    fb.at("entry");
    body(&mut fb, [p, q, n, i, a]);
    if fb.func.terminator(fb.current_block()).is_none() {
        fb.ret(None);
    }
    fb.finish()
}

fn ok(body: impl FnOnce(&mut Fb, [Value; 5], &Sample)) {
    let s = sample();
    let f = with_body(&s, None, |fb, v| body(fb, v, &s));
    assert_ok(&s.m, f);
}

fn bad(needle: &str, body: impl FnOnce(&mut Fb, [Value; 5], &Sample)) {
    let s = sample();
    let f = with_body(&s, None, |fb, v| body(fb, v, &s));
    assert_err(&s.m, f, needle);
}

#[test]
fn integer_operations_need_i64() {
    ok(|fb, [_, _, _, i, _], _| {
        let x = fb.binary(BinOp::Sdiv, i, i);
        fb.unary(UnOp::Neg, x);
    });
    bad(
        "add %p, %i: operand %p has type Point, expected i64",
        |fb, [p, _, _, i, _], _| {
            fb.binary(BinOp::Add, p, i);
        },
    );
    bad(
        "not %a: operand %a has type [i64], expected i64",
        |fb, [_, _, _, _, a], _| {
            fb.unary(UnOp::Not, a);
        },
    );
}

#[test]
fn eq_and_ne_take_two_ints_or_two_compatible_references() {
    ok(|fb, [p, q, _, i, _], _| {
        fb.binary(BinOp::Eq, p, q);
        let nul = fb.null();
        fb.binary(BinOp::Ne, p, nul);
        fb.binary(BinOp::Eq, nul, nul);
        fb.binary(BinOp::Eq, i, i);
    });
    bad("eq compares Point and Node", |fb, [p, _, n, _, _], _| {
        fb.binary(BinOp::Eq, p, n);
    });
    bad("ne compares i64 and Point", |fb, [p, _, _, i, _], _| {
        fb.binary(BinOp::Ne, i, p);
    });
    bad(
        "slt %p, %q: operand %p has type Point",
        |fb, [p, q, _, _, _], _| {
            fb.binary(BinOp::Slt, p, q);
        },
    );
}

#[test]
fn select_arms_have_the_same_type_and_the_condition_is_i64() {
    ok(|fb, [p, q, _, i, _], _| {
        fb.select(i, p, q);
        let nul = fb.null();
        fb.select(i, nul, q);
    });
    bad(
        "select arms have different types Point and Node",
        |fb, [p, _, n, i, _], _| {
            fb.select(i, p, n);
        },
    );
    bad(
        "condition %p has type Point, expected i64",
        |fb, [p, q, _, _, _], _| {
            fb.select(p, p, q);
        },
    );
}

#[test]
fn copy_keeps_the_operand_type() {
    ok(|fb, [p, _, _, _, _], _| {
        fb.unary(UnOp::Copy, p);
    });
    bad(
        "result %v5 is recorded as i64, but the instruction produces Point",
        |fb, [p, ..], _| {
            fb.push(InstKind::Unary(UnOp::Copy, p), Some(Type::I64));
        },
    );
}

#[test]
fn field_accesses_resolve_through_the_base_type() {
    ok(|fb, [p, _, n, i, _], s| {
        let x = fb.load_field(p, s.px);
        fb.store_field(p, s.py, x);
        let nx = fb.load_field(n, s.next);
        fb.store_field(nx, s.val, i);
        let nul = fb.null();
        fb.store_field(n, s.next, nul);
    });
    bad(
        "base %n has type Node, but field Point.x belongs to Point",
        |fb, [_, _, n, _, _], s| {
            fb.push(
                InstKind::Load {
                    addr: Addr::Field {
                        base: n,
                        field: s.px,
                    },
                    volatile: false,
                },
                Some(Type::I64),
            );
        },
    );
    bad(
        "stored value %q has type Point, expected i64",
        |fb, [p, q, _, _, _], s| {
            fb.store_field(p, s.px, q);
        },
    );
    bad(
        "store %n.next, %p: stored value %p has type Point, expected Node",
        |fb, [p, _, n, _, _], s| {
            fb.store_field(n, s.next, p);
        },
    );
    bad(
        "result %v5 is recorded as Point, but the instruction produces i64",
        |fb, [p, ..], s| {
            fb.push(
                InstKind::Load {
                    addr: Addr::Field {
                        base: p,
                        field: s.px,
                    },
                    volatile: false,
                },
                Some(Type::object(s.point)),
            );
        },
    );
    bad("field #7 of type #0 does not exist", |fb, [p, ..], _| {
        let field = FieldRef {
            ty: StructId(0),
            index: 7,
        };
        fb.push(
            InstKind::Load {
                addr: Addr::Field { base: p, field },
                volatile: false,
            },
            Some(Type::I64),
        );
    });
}

#[test]
fn element_accesses_need_an_array_and_an_i64_index() {
    ok(|fb, [_, _, _, i, a], _| {
        let x = fb.load_elem(a, i);
        fb.store_elem(a, i, x);
        fb.len(a);
        let arr = fb.new_array(Type::I64.array_of(), i);
        let inner = fb.load_elem(arr, i);
        fb.store_elem(arr, i, inner);
    });
    bad(
        "array index %p has type Point, expected i64",
        |fb, [p, _, _, _, a], _| {
            fb.push(
                InstKind::Load {
                    addr: Addr::Elem { base: a, index: p },
                    volatile: false,
                },
                Some(Type::I64),
            );
        },
    );
    bad(
        "element access on %p, which has non-array type Point",
        |fb, [p, _, _, i, _], _| {
            fb.push(
                InstKind::Load {
                    addr: Addr::Elem { base: p, index: i },
                    volatile: false,
                },
                Some(Type::I64),
            );
        },
    );
    bad(
        "stored value %p has type Point, expected i64",
        |fb, [p, _, _, i, a], _| {
            fb.store_elem(a, i, p);
        },
    );
    bad(
        "len of %i, which has non-array type i64",
        |fb, [_, _, _, i, _], _| {
            fb.push(InstKind::Len(i), Some(Type::I64));
        },
    );
}

#[test]
fn allocation_types_and_lengths() {
    ok(|fb, [_, _, _, i, _], s| {
        fb.new_object(s.point);
        fb.new_array(Type::object(s.node), i);
    });
    bad(
        "array length %p has type Point, expected i64",
        |fb, [p, ..], _| {
            fb.push(
                InstKind::NewArray {
                    elem: Type::I64,
                    len: p,
                },
                Some(Type::I64.array_of()),
            );
        },
    );
    bad("new of type #9, which is not declared", |fb, _, _| {
        fb.push(InstKind::New(StructId(9)), Some(Type::I64));
    });
    bad(
        "result %v5 is recorded as Node, but the instruction produces Point",
        |fb, _, s| {
            fb.push(InstKind::New(s.point), Some(Type::object(s.node)));
        },
    );
    bad(
        "newarray of invalid element type",
        |fb, [_, _, _, i, _], _| {
            fb.push(
                InstKind::NewArray {
                    elem: Type::NULL,
                    len: i,
                },
                Some(Type::I64),
            );
        },
    );
}

#[test]
fn global_accesses_use_the_global_type() {
    ok(|fb, [_, _, n, i, _], s| {
        fb.load_global(s.count);
        fb.store_global(s.count, i);
        fb.store_global(s.head, n);
        let nul = fb.null();
        fb.store_global(s.head, nul);
    });
    bad(
        "store @count, %n: stored value %n has type Node, expected i64",
        |fb, [_, _, n, _, _], s| {
            fb.store_global(s.count, n);
        },
    );
    bad("global #5 does not exist", |fb, _, _| {
        fb.push(
            InstKind::Load {
                addr: Addr::Global(GlobalId(5)),
                volatile: false,
            },
            Some(Type::I64),
        );
    });
}

#[test]
fn calls_check_argument_count_and_types_against_the_callee() {
    ok(|fb, [p, _, _, i, _], s| {
        fb.call(Callee::Extern(s.mystery), vec![i, p]);
        let nul = fb.null();
        fb.call(Callee::Extern(s.length), vec![nul]);
    });
    bad(
        "@mystery takes 2 argument(s), but 1 were passed",
        |fb, [_, _, _, i, _], s| {
            fb.call(Callee::Extern(s.mystery), vec![i]);
        },
    );
    bad(
        "argument 2 %n has type Node, expected Point",
        |fb, [_, _, n, i, _], s| {
            fb.call(Callee::Extern(s.mystery), vec![i, n]);
        },
    );
    bad(
        "call of @<bad extern #7>, which does not exist",
        |fb, _, _| {
            fb.push(
                InstKind::Call {
                    callee: Callee::Extern(ExternId(7)),
                    args: vec![],
                },
                None,
            );
        },
    );
    bad(
        "the instruction produces a value but has no result",
        |fb, [p, _, _, i, _], s| {
            fb.push(
                InstKind::Call {
                    callee: Callee::Extern(s.mystery),
                    args: vec![i, p],
                },
                None,
            );
        },
    );
}

#[test]
fn calls_of_module_functions() {
    let s = sample();
    let mut m = s.m.clone();
    let callee = {
        let mut fb = Fb::new(&m, "sq", Some(Type::I64));
        let x = fb.param("x", Type::I64);
        fb.at("entry");
        let y = fb.binary(BinOp::Mul, x, x);
        fb.ret(Some(y));
        fb.finish()
    };
    let sq = m.add_func(callee);
    let caller = |args_ok: bool, m: &ir::Module| {
        let mut fb = Fb::new(m, "main", None);
        let p = fb.param("p", Type::object(s.point));
        fb.at("entry");
        let arg = if args_ok { fb.c(3) } else { p };
        fb.call(Callee::Func(sq), vec![arg]);
        fb.ret(None);
        fb.finish()
    };
    assert_ok(&m, caller(true, &m));
    assert_err(
        &m,
        caller(false, &m),
        "call @sq(%p): argument 1 %p has type Point, expected i64",
    );
    let missing = {
        let mut fb = Fb::new(&m, "main", None);
        fb.at("entry");
        fb.push(
            InstKind::Call {
                callee: Callee::Func(FuncId(40)),
                args: vec![],
            },
            None,
        );
        fb.ret(None);
        fb.finish()
    };
    assert_err(&m, missing, "which does not exist");
}

#[test]
fn ret_matches_the_return_type() {
    let s = sample();
    let typed = |v: Option<bool>| {
        with_body(&s, Some(Type::I64), |fb, [p, _, _, i, _]| {
            match v {
                Some(true) => fb.ret(Some(i)),
                Some(false) => fb.ret(Some(p)),
                None => fb.ret(None),
            };
        })
    };
    assert_ok(&s.m, typed(Some(true)));
    assert_err(
        &s.m,
        typed(Some(false)),
        "ret %p: returned value %p has type Point, expected i64",
    );
    assert_err(
        &s.m,
        typed(None),
        "ret without a value in a function returning i64",
    );
    let void = with_body(&s, None, |fb, [_, _, _, i, _]| {
        fb.ret(Some(i));
    });
    assert_err(
        &s.m,
        void,
        "ret with a value in a function without a return type",
    );
}

#[test]
fn branch_and_guard_conditions_are_i64() {
    ok(|fb, [_, _, _, i, _], _| {
        fb.guard(i);
        let one = fb.c(1);
        fb.guard(one);
    });
    bad(
        "guard %p: guard condition %p has type Point, expected i64",
        |fb, [p, ..], _| {
            fb.guard(p);
        },
    );
    bad(
        "branch condition %q has type Point, expected i64",
        |fb, [_, q, ..], _| {
            let (t, e) = (fb.label("t"), fb.label("e"));
            fb.br(q, t, e);
            fb.at("t");
            fb.ret(None);
            fb.at("e");
            fb.ret(None);
        },
    );
}

#[test]
fn phi_operands_fit_the_phi_type() {
    let s = sample();
    let build = |good: bool| {
        let mut fb = Fb::new(&s.m, "f", None);
        let p = fb.param("p", Type::object(s.point));
        let i = fb.param("i", Type::I64);
        let entry = fb.at("entry");
        let j = fb.label("j");
        fb.jmp(j);
        fb.at("j");
        let nul = fb.null();
        let v = if good { nul } else { i };
        fb.phi(Type::object(s.point), vec![(entry, v)]);
        let _ = p;
        fb.ret(None);
        fb.finish()
    };
    assert_ok(&s.m, build(true));
    assert_err(
        &s.m,
        build(false),
        "phi operand %i has type i64, expected Point",
    );
}

#[test]
fn effects_only_instructions_have_no_result() {
    bad(
        "the instruction produces no value, but has result %v5",
        |fb, [_, _, _, i, _], _| {
            fb.push(InstKind::Guard(i), Some(Type::I64));
        },
    );
}

#[test]
fn operand_values_must_exist() {
    bad("operand value #999 does not exist", |fb, _, _| {
        fb.escape(Value(999));
    });
}

#[test]
fn module_declarations_are_checked() {
    let s = sample();
    assert!(verify_module(&s.m).is_ok());
    let mut m = s.m.clone();
    m.add_global("bad", Type::object(StructId(77)));
    m.externs[s.length.index()]
        .effects
        .as_mut()
        .unwrap()
        .writes
        .push(ir::EffectLoc::Field(FieldRef {
            ty: s.point,
            index: 9,
        }));
    m.add_global("mystery", Type::I64);
    let errs: Vec<String> = verify_module(&m)
        .unwrap_err()
        .iter()
        .map(|e| e.to_string())
        .collect();
    let has = |n: &str| errs.iter().any(|e| e.contains(n));
    assert!(has("global @bad: invalid type <bad type 77>"), "{errs:?}");
    assert!(has("extern @length: declared effect"), "{errs:?}");
    assert!(has("the name @mystery is declared twice"), "{errs:?}");
    assert!(errs.iter().all(|e| !e.starts_with('@')), "{errs:?}");
}

#[test]
fn verify_module_reports_errors_in_every_function() {
    let s = sample();
    let mut m = s.m.clone();
    for name in ["one", "two"] {
        let mut fb = Fb::new(&s.m, name, Some(Type::I64));
        fb.at("entry");
        fb.ret(None);
        m.add_func(fb.finish());
    }
    let errs = verify_module(&m).unwrap_err();
    assert_eq!(errs.len(), 2);
    assert_eq!(errs[0].func, Some(FuncId(0)));
    assert_eq!(errs[1].func, Some(FuncId(1)));
}
