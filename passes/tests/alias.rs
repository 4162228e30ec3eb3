//! The alias analysis rules of the LSE issue, one test each, on small parsed
//! functions: accesses are named by the loads/stores that make them.

use ir::{Addr, Function, InstKind, Module};
use passes::alias::{AliasAnalysis, AliasResult};

fn parse(src: &str) -> Module {
    let (m, _) = ir::parse_module(src, "alias.ir").unwrap_or_else(|e| panic!("{e}"));
    ir::verify::verify_module(&m).unwrap_or_else(|e| panic!("{e:?}"));
    m
}

/// The addresses of the memory accesses of @main, in layout order.
fn accesses(f: &Function) -> Vec<Addr> {
    f.inst_iter()
        .filter_map(|i| match &f.inst(i).kind {
            InstKind::Load { addr, .. } | InstKind::Store { addr, .. } => Some(addr.clone()),
            _ => None,
        })
        .collect()
}

/// The alias answer between access `a` and access `b` of @main.
fn relation(src: &str, a: usize, b: usize) -> AliasResult {
    let m = parse(src);
    let f = &m.funcs[m.func_by_name("main").unwrap().index()];
    let acc = accesses(f);
    let aa = AliasAnalysis::new(f);
    let r = aa.addrs(f, &acc[a], &acc[b]);
    assert_eq!(
        r,
        aa.addrs(f, &acc[b], &acc[a]),
        "alias answers are symmetric"
    );
    r
}

const DECLS: &str =
    "type P { x: i64, y: i64, next: P }\ntype Q { x: i64 }\nglobal @g: i64\nglobal @h: i64\n";

fn with_decls(body: &str) -> String {
    format!("{DECLS}{body}")
}

#[test]
fn different_fields_never_alias() {
    let src =
        with_decls("func @main(%p: P) {\nentry:\n  store %p.x, 1\n  store %p.y, 2\n  ret\n}\n");
    assert_eq!(relation(&src, 0, 1), AliasResult::No);
}

#[test]
fn same_field_of_different_types_never_alias() {
    let src = with_decls(
        "func @main(%p: P, %q: Q) {\nentry:\n  store %p.x, 1\n  store %q.x, 2\n  ret\n}\n",
    );
    assert_eq!(relation(&src, 0, 1), AliasResult::No);
}

#[test]
fn same_base_after_copies_and_same_field_must_alias() {
    let src = with_decls(
        "func @main(%p: P) {\nentry:\n  %c = copy %p\n  store %p.x, 1\n  store %c.x, 2\n  ret\n}\n",
    );
    assert_eq!(relation(&src, 0, 1), AliasResult::Must);
}

#[test]
fn two_parameters_may_alias() {
    let src = with_decls(
        "func @main(%p: P, %q: P) {\nentry:\n  store %p.x, 1\n  store %q.x, 2\n  ret\n}\n",
    );
    assert_eq!(relation(&src, 0, 1), AliasResult::May);
}

#[test]
fn a_parameter_and_a_loaded_pointer_may_alias() {
    let src = with_decls("func @main(%p: P) {\nentry:\n  %n = load %p.next\n  store %n.x, 1\n  store %p.x, 2\n  ret\n}\n");
    assert_eq!(relation(&src, 1, 2), AliasResult::May);
}

#[test]
fn two_allocations_never_alias_even_when_they_escape() {
    let src = with_decls(
        "func @main(%p: P) {\nentry:\n  %a = new P\n  %b = new P\n  store %p.next, %a\n  store %p.next, %b\n  store %a.x, 1\n  store %b.x, 2\n  ret\n}\n",
    );
    assert_eq!(relation(&src, 2, 3), AliasResult::No);
}

#[test]
fn a_fresh_allocation_never_aliases_a_parameter() {
    let src = with_decls("func @main(%p: P) {\nentry:\n  %a = new P\n  escape %a\n  store %a.x, 1\n  store %p.x, 2\n  ret\n}\n");
    assert_eq!(relation(&src, 0, 1), AliasResult::No);
}

#[test]
fn an_unescaped_allocation_aliases_no_other_base() {
    let src = with_decls("func @main(%p: P) {\nentry:\n  %a = new P\n  %n = load %p.next\n  store %a.x, 1\n  store %n.x, 2\n  ret\n}\n");
    assert_eq!(relation(&src, 1, 2), AliasResult::No);
}

#[test]
fn an_escaped_allocation_may_alias_a_loaded_pointer() {
    let src = with_decls(
        "func @main(%p: P) {\nentry:\n  %a = new P\n  store %p.next, %a\n  %n = load %p.next\n  store %a.x, 1\n  store %n.x, 2\n  ret\n}\n",
    );
    assert_eq!(relation(&src, 2, 3), AliasResult::May);
}

#[test]
fn an_allocation_merged_by_a_phi_escapes() {
    let src = with_decls(
        "func @main(%p: P, %c: i64) {\nentry:\n  %a = new P\n  br %c, l, r\nl:\n  jmp j\nr:\n  jmp j\nj:\n  %m = phi [l: %a], [r: %p]\n  store %a.x, 1\n  store %m.x, 2\n  ret\n}\n",
    );
    assert_eq!(relation(&src, 0, 1), AliasResult::May);
}

#[test]
fn a_volatile_access_hands_its_base_to_the_environment() {
    let src = with_decls(
        "func @main(%p: P) {\nentry:\n  %a = new P\n  %v = load.volatile %a.y\n  %n = load %p.next\n  store %a.x, 1\n  store %n.x, 2\n  ret\n}\n",
    );
    assert_eq!(relation(&src, 2, 3), AliasResult::May);
}

#[test]
fn different_constant_indices_never_alias_same_index_must() {
    let src = "func @main(%a: [i64], %b: [i64], %i: i64) {\nentry:\n  store %a[1], 1\n  store %b[2], 2\n  store %a[%i], 3\n  store %a[%i], 4\n  store %b[1], 5\n  ret\n}\n";
    assert_eq!(
        relation(src, 0, 1),
        AliasResult::No,
        "constant 1 vs constant 2"
    );
    assert_eq!(
        relation(src, 2, 3),
        AliasResult::Must,
        "same array, same index value"
    );
    assert_eq!(
        relation(src, 0, 2),
        AliasResult::May,
        "constant vs variable index"
    );
    assert_eq!(
        relation(src, 0, 4),
        AliasResult::May,
        "two arrays that may be the same, same index"
    );
}

#[test]
fn arrays_of_different_element_types_never_alias() {
    let src = with_decls("func @main(%a: [i64], %b: [P]) {\nentry:\n  %x = load %a[0]\n  store %b[0], null\n  ret\n}\n");
    assert_eq!(relation(&src, 0, 1), AliasResult::No);
}

#[test]
fn globals_alias_only_themselves() {
    let src = with_decls(
        "func @main() {\nentry:\n  store @g, 1\n  store @h, 2\n  store @g, 3\n  ret\n}\n",
    );
    assert_eq!(relation(&src, 0, 1), AliasResult::No);
    assert_eq!(relation(&src, 0, 2), AliasResult::Must);
}
