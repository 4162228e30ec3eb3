//! `Module::fingerprint`: equal code, equal fingerprint; any code change, a new one.

use ir::{parse_module, InstKind, Module};

fn parse(text: &str) -> Module {
    parse_module(text, "t.ir").unwrap().0
}

const TEXT: &str = "type P { x: i64 }
func @f(%p: P) -> i64 {
entry:
  %a = load %p.x
  %b = add %a, 1
  store %p.x, %b
  ret %b
}
";

#[test]
fn equal_modules_have_equal_fingerprints() {
    let a = parse(TEXT);
    let b = parse(TEXT);
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_eq!(a.fingerprint(), a.clone().fingerprint());
}

#[test]
fn names_do_not_count() {
    let renamed = TEXT.replace("%a", "%loaded").replace("entry:", "start:");
    assert_eq!(parse(TEXT).fingerprint(), parse(&renamed).fingerprint());
}

#[test]
fn every_kind_of_code_change_gives_a_new_fingerprint() {
    let m = parse(TEXT);
    let base = m.fingerprint();
    let f = &m.funcs[0];
    let entry = f.layout[0];

    // An operand replaced.
    let mut changed = m.clone();
    let add = changed.funcs[0].blocks[entry.index()].insts[1];
    let two = changed.funcs[0].iconst(2);
    if let InstKind::Binary(_, _, b) = &mut changed.funcs[0].insts[add.index()].kind {
        *b = two;
    } else {
        panic!("expected the add");
    }
    assert_ne!(changed.fingerprint(), base);

    // An instruction detached from its block.
    let mut removed = m.clone();
    let store = removed.funcs[0].blocks[entry.index()].insts[2];
    removed.funcs[0].remove_inst(store);
    assert_ne!(removed.fingerprint(), base);

    // A value added (an interned constant nobody uses yet).
    let mut grown = m.clone();
    grown.funcs[0].iconst(12345);
    assert_ne!(grown.fingerprint(), base);
}
