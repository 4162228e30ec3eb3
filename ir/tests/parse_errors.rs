//! What the parser accepts and how it reports what it does not: every error
//! names the file, line and column and says what was found and expected; no
//! input, however broken, makes it panic.

use ir::{
    parse_module, print_module, Addr, Base, EffectLoc, InstKind, Module, ParseError, Pos, Type,
    ValueDef,
};
use proptest::prelude::*;

mod mutate_support;

const DECLS: &str = "type Point { x: i64, y: i64 }\ntype Node { val: i64, next: Node }\n";

fn parse(src: &str) -> Module {
    parse_module(src, "t.ir")
        .unwrap_or_else(|e| panic!("{e}"))
        .0
}

fn error(src: &str) -> ParseError {
    match parse_module(src, "t.ir") {
        Ok((m, _)) => panic!("expected an error, parsed:\n{}", print_module(&m)),
        Err(e) => e,
    }
}

/// Assert that `src` fails at `line:col` with a message containing `msg`.
fn assert_error(src: &str, line: u32, col: u32, msg: &str) {
    let e = error(src);
    assert!(
        e.message.contains(msg),
        "message {:?} lacks {:?}",
        e.message,
        msg
    );
    assert_eq!(e.pos, Pos { line, col }, "{e}");
    assert_eq!(e.file, "t.ir");
}

/// A function `@f(%p: Point, %n: i64, %a: [i64])` with `body` as its entry block.
fn func(body: &str) -> String {
    format!("{DECLS}func @f(%p: Point, %n: i64, %a: [i64]) {{\nentry:\n{body}\n}}\n")
}

#[test]
fn error_display_is_file_line_col_error_message() {
    let e = error(&func("  %c = add %n x"));
    assert_eq!(
        e.to_string(),
        "t.ir:5:15: error: expected ',' after the first operand of 'add', found 'x'"
    );
}

#[test]
fn unknown_names_of_every_kind_are_errors() {
    assert_error(&func("  %c = add %x, 1\n  ret"), 5, 12, "unknown value %x");
    assert_error(
        &func("  %c = load %p.z\n  ret"),
        5,
        16,
        "unknown field 'z' of type Point",
    );
    assert_error(&func("  jmp foo"), 5, 7, "unknown block label 'foo'");
    assert_error(
        &func("  %c = load @nope\n  ret"),
        5,
        13,
        "unknown global @nope",
    );
    assert_error(
        &func("  call @nope()\n  ret"),
        5,
        8,
        "unknown function or extern @nope",
    );
    assert_error(&func("  %o = new Pnt\n  ret"), 5, 12, "unknown type 'Pnt'");
    assert_error("global @g: Foo\n", 1, 12, "unknown type 'Foo'");
    assert_error(
        "extern @e() reads(Point.x)\n",
        1,
        19,
        "unknown type 'Point'",
    );
    assert_error(
        &format!("{DECLS}extern @e() writes(@g)\n"),
        3,
        20,
        "unknown global @g",
    );
}

#[test]
fn fields_need_a_base_of_object_type() {
    assert_error(
        &func("  %c = load %n.x\n  ret"),
        5,
        13,
        "%n has type i64, which has no fields",
    );
    assert_error(
        &func("  store %a.x, 1\n  ret"),
        5,
        9,
        "%a has type [i64], which has no fields",
    );
    assert_error(
        &func("  %c = load %p[0]\n  ret"),
        5,
        13,
        "%p has type Point, which is not an array",
    );
}

#[test]
fn duplicate_definitions_are_errors() {
    assert_error(
        &func("  %c = add 1, 2\n  %c = add 1, 2\n  ret"),
        6,
        3,
        "value %c is defined twice",
    );
    assert_error(
        &func("  %n = add 1, 2\n  ret"),
        5,
        3,
        "value %n is defined twice",
    );
    assert_error(
        &func("  jmp entry\nentry:\n  ret"),
        6,
        1,
        "block label 'entry' is defined twice",
    );
    assert_error("type A {}\ntype A {}\n", 2, 6, "type 'A' is defined twice");
    assert_error(
        "type A { x: i64, x: i64 }\n",
        1,
        18,
        "field 'x' of type A is defined twice",
    );
    assert_error("global @g: i64\nextern @g()\n", 2, 8, "@g is defined twice");
    assert_error(
        "func @f() {\nb:\n  ret\n}\nfunc @f() {\nb:\n  ret\n}\n",
        5,
        6,
        "@f is defined twice",
    );
}

#[test]
fn results_are_written_exactly_when_produced() {
    assert_error(
        &func("  %s = store %p.x, 1\n  ret"),
        5,
        3,
        "'store' produces no value",
    );
    assert_error(&func("  add 1, 2\n  ret"), 5, 3, "'add' produces a value");
    let src = format!("{DECLS}extern @e()\nextern @r() -> i64\nfunc @f() {{\nentry:\n  %x = call @e()\n  ret\n}}\n");
    assert_error(&src, 7, 3, "'call' produces no value");
    let src = format!("{DECLS}extern @r() -> i64\nfunc @f() {{\nentry:\n  call @r()\n  ret\n}}\n");
    assert_error(&src, 6, 3, "'call' produces a value");
}

#[test]
fn literals_out_of_range_are_errors() {
    assert_error(
        &func("  %c = add %n, 9223372036854775808\n  ret"),
        5,
        16,
        "does not fit in i64",
    );
    let m = parse(&func(
        "  %c = add %n, -9223372036854775808\n  %d = sub -0x10, 0x40\n  ret",
    ));
    let f = &m.funcs[0];
    let consts: Vec<i64> = f
        .values
        .iter()
        .filter_map(|v| match v.def {
            ValueDef::Const(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(consts, vec![i64::MIN, -16, 64]);
}

#[test]
fn syntax_errors_say_what_was_expected() {
    assert_error(
        "func @f( {\n",
        1,
        10,
        "expected a parameter name like '%p', found '{'",
    );
    assert_error(
        &func("  %c = frob 1\n  ret"),
        5,
        8,
        "unknown instruction 'frob'",
    );
    assert_error(
        &func("  %c = load.fast %p.x\n  ret"),
        5,
        8,
        "unknown instruction 'load.fast'",
    );
    assert_error(
        &func("  ret 1 2"),
        5,
        9,
        "expected the end of the line after the instruction",
    );
    assert_error("func @f() {\n  ret\n}\n", 2, 3, "expected a block label");
    assert_error("func @f() {\n}\n", 1, 1, "function @f has no blocks");
    assert_error(
        "func @f() {\nentry:\n  ret\n",
        4,
        1,
        "expected '}' to close the function body",
    );
    assert_error(
        "blah\n",
        1,
        1,
        "expected 'type', 'global', 'extern' or 'func', found 'blah'",
    );
    assert_error(
        &func("  %c = phi entry: 1\n  ret"),
        5,
        12,
        "expected '[' to open a phi entry",
    );
}

#[test]
fn the_whole_instruction_set_parses() {
    let src = format!(
        "{DECLS}global @g: i64\nglobal @h: Node\n\
         extern @e(i64) -> Node reads(Node.val, [i64], @g) writes(none)\n\
         extern @w(Point) writes(Point.x)\n\
         extern @any()\n\
         func @f(%p: Point, %n: i64, %a: [i64]) -> i64 {{\n\
         entry:\n\
           %o = new Node\n\
           %arr = newarray [i64], %n\n\
           %x = load.volatile %p.x\n\
           store.volatile %p.y, -3\n\
           %e = load.volatile %a[0]\n\
           store.volatile %a[%n], %e\n\
           %gv = load.volatile @g\n\
           store.volatile @h, null\n\
           %l = len %arr\n\
           %s = select %n, %o, null\n\
           %c = copy %s\n\
           %k = call @e(%n)\n\
           call @w(%p)\n\
           call @any()\n\
           %r = call @g2(%l)\n\
           escape %k\n\
           guard %x\n\
           %neg = neg %r\n\
           %same = eq %o, null\n\
           br %same, a, b\n\
         a:\n\
           unreachable\n\
         b:\n\
           ret %neg\n\
         }}\n\
         func @g2(%z: i64) -> i64 {{\nentry:\n  ret %z\n}}\n"
    );
    let m = parse(&src);
    let f = &m.funcs[0];
    assert_eq!(f.placed_inst_count(), 22);
    let ty = |name: &str| {
        let v = f.value_named(name).unwrap();
        m.type_name(f.value_type(v))
    };
    assert_eq!(ty("o"), "Node");
    assert_eq!(ty("arr"), "[[i64]]");
    assert_eq!(ty("e"), "i64");
    assert_eq!(ty("s"), "Node");
    assert_eq!(ty("c"), "Node");
    assert_eq!(ty("k"), "Node");
    assert_eq!(ty("r"), "i64");
    let e = &m.externs[0].effects.as_ref().unwrap();
    assert_eq!(e.reads.len(), 3);
    assert!(matches!(e.reads[1], EffectLoc::Elements(t) if t == Type::I64));
    assert!(e.writes.is_empty());
    let w = m.externs[1].effects.as_ref().unwrap();
    assert!(w.reads.is_empty(), "an absent reads clause reads nothing");
    assert_eq!(w.writes.len(), 1);
    assert_eq!(
        m.externs[2].effects, None,
        "no clause at all: may do anything"
    );
    let volatile_stores = f
        .inst_iter()
        .filter(|&i| matches!(f.inst(i).kind, InstKind::Store { volatile: true, .. }))
        .count();
    assert_eq!(volatile_stores, 3);
}

#[test]
fn phis_may_refer_forward_and_take_their_type_from_any_operand() {
    let src = format!(
        "{DECLS}func @f(%h: Node) -> Node {{\n\
         entry:\n  jmp loop\n\
         loop:\n  %cur = phi [entry: null], [next: %nxt]\n  %z = eq %cur, null\n  br %z, done, next\n\
         next:\n  %nxt = load %cur.next\n  jmp loop\n\
         done:\n  ret %cur\n}}\n"
    );
    // %cur's only typed operand is %nxt, whose type needs %cur's: that is a
    // genuine cycle through a load, so %cur becomes null-typed and the load fails.
    assert_error(&src, 11, 15, "%cur has type null, which has no fields");
    let src = src.replace("[entry: null]", "[entry: %h]");
    let m = parse(&src);
    let f = &m.funcs[0];
    let cur = &f.values[f.value_named("cur").unwrap().index()];
    assert_eq!(cur.ty.base, Base::Struct(m.struct_by_name("Node").unwrap()));
}

#[test]
fn a_phi_of_only_nulls_has_the_null_type() {
    let m = parse(&func(
        "  jmp b\nb:\n  %x = phi [entry: null]\n  %y = copy %x\n  ret",
    ));
    let f = &m.funcs[0];
    for name in ["x", "y"] {
        let d = &f.values[f.value_named(name).unwrap().index()];
        assert_eq!(d.ty, Type::NULL);
    }
}

#[test]
fn uses_may_come_before_definitions_in_text_order() {
    let m = parse(&func(
        "  jmp c\nd:\n  %y = load %x.next\n  ret\nc:\n  %x = new Node\n  jmp d",
    ));
    let f = &m.funcs[0];
    let load = f
        .inst_iter()
        .find(|&i| matches!(f.inst(i).kind, InstKind::Load { .. }))
        .unwrap();
    let InstKind::Load {
        addr: Addr::Field { field, .. },
        ..
    } = f.inst(load).kind
    else {
        panic!()
    };
    assert_eq!(m.field_name(field), "Node.next");
}

#[test]
fn a_load_that_depends_on_itself_is_an_error_not_a_hang() {
    assert_error(
        &func("  %u = load %w.next\n  %w = load %u.next\n  ret"),
        5,
        3,
        "cannot infer the type of %u: its definition depends on itself",
    );
}

#[test]
fn source_map_records_functions_and_instructions() {
    let (m, sm) = parse_module(&func("  %c = add 1, 2\n  ret"), "x.ir").unwrap();
    let f = ir::FuncId::new(0);
    assert_eq!(sm.file, "x.ir");
    assert_eq!(sm.funcs[&f], Pos { line: 3, col: 1 });
    let insts: Vec<_> = m.funcs[0].inst_iter().collect();
    assert_eq!(sm.inst_pos(f, insts[0]), Some(Pos { line: 5, col: 3 }));
    assert_eq!(sm.inst_pos(f, insts[1]), Some(Pos { line: 6, col: 3 }));
}

#[test]
fn deeply_nested_types_are_an_error_not_a_stack_overflow() {
    let deep = format!(
        "global @g: {}i64{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(error(&deep).message.contains("nest at most"));
}

fn valid_corpus() -> String {
    format!(
        "{DECLS}global @g: i64\nextern @e(i64) -> i64 reads(Node.val)\n\
         func @f(%p: Point, %n: i64, %a: [i64]) -> i64 {{\nentry:\n\
           %x = load %p.x\n  store %p.y, 0x10\n  %l = len %a\n  br %n, loop, done\n\
         loop:\n  %i = phi [entry: 0], [loop: %j]\n  %j = add %i, -1\n  %v = load %a[%i]\n\
           %c = call @e(%v)\n  br %c, loop, done\n\
         done:\n  %r = phi [entry: %x], [loop: %j]\n  ret %r\n}}\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        let _ = parse_module(&s, "fuzz");
    }

    #[test]
    fn ir_like_token_soup_never_panics(
        toks in proptest::collection::vec(
            prop_oneof![
                Just("%a"), Just("%0"), Just("@f"), Just("@g"), Just("="), Just(","),
                Just(":"), Just("."), Just("["), Just("]"), Just("{"), Just("}"),
                Just("("), Just(")"), Just("->"), Just("\n"), Just("i64"), Just("Point"),
                Just("func"), Just("type"), Just("global"), Just("extern"), Just("entry"),
                Just("phi"), Just("load"), Just("store"), Just("volatile"), Just("call"),
                Just("ret"), Just("br"), Just("jmp"), Just("null"), Just("-5"), Just("x"),
                Just("reads"), Just("writes"), Just("none"), Just("new"), Just("add"),
            ],
            0..80,
        )
    ) {
        let _ = parse_module(&toks.join(" "), "fuzz");
    }

    #[test]
    fn mutations_of_valid_text_never_panic(
        edits in proptest::collection::vec((any::<usize>(), 0usize..3, "\\PC{0,3}"), 1..6)
    ) {
        let s = mutate_support::apply_edits(&valid_corpus(), &edits);
        if let Ok((m, _)) = parse_module(&s, "fuzz") {
            // Whatever parses must print and reparse to the same text.
            let p = print_module(&m);
            let (m2, _) = parse_module(&p, "p").unwrap_or_else(|e| panic!("{e}\n{p}"));
            prop_assert_eq!(print_module(&m2), p);
        }
    }
}
