//! Verifier: dominance of uses, phi entries against predecessor edges, the entry block.

mod verify_support;

use ir::{BinOp, InstKind, Module, Type};
use verify_support::{assert_err, assert_ok, blk, messages, val, Fb};

/// entry: br %c, then, else / then: %x = add %a, 1 / else: … / join: %r = add %a, %x
/// — the classic after CSE: %x computed on one path, used on another.
#[test]
fn value_from_one_arm_used_after_the_join_is_reported_clearly() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "main", Some(Type::I64));
    let c = fb.param("c", Type::I64);
    let a = fb.param("a", Type::I64);
    fb.at("entry");
    let (t, e, j) = (fb.label("then"), fb.label("else"), fb.label("join"));
    fb.br(c, t, e);
    fb.at("then");
    let one = fb.c(1);
    let x = fb.binary(BinOp::Add, a, one);
    fb.named(x, "x");
    fb.jmp(j);
    fb.at("else");
    fb.jmp(j);
    fb.at("join");
    let r = fb.binary(BinOp::Add, a, x);
    fb.named(r, "r");
    fb.ret(Some(r));
    let ms = messages(&m, fb.finish());
    assert_eq!(
        ms,
        vec![
            "@main, block 'join': %r = add %a, %x: use of %x is not dominated by its definition in block 'then'"
                .to_string()
        ]
    );
}

#[test]
fn value_from_one_arm_used_in_the_other_arm_is_reported() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "main", Some(Type::I64));
    let c = fb.param("c", Type::I64);
    fb.at("entry");
    let (t, e) = (fb.label("then"), fb.label("else"));
    fb.br(c, t, e);
    fb.at("then");
    let x = fb.binary(BinOp::Mul, c, c);
    fb.named(x, "x");
    fb.ret(Some(x));
    fb.at("else");
    let y = fb.binary(BinOp::Sub, x, c);
    fb.ret(Some(y));
    assert_err(
        &m,
        fb.finish(),
        "@main, block 'else': %v2 = sub %x, %c: use of %x is not dominated by its definition in block 'then'",
    );
}

#[test]
fn the_same_value_through_a_phi_is_fine() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "main", Some(Type::I64));
    let c = fb.param("c", Type::I64);
    fb.at("entry");
    let (t, e, j) = (fb.label("then"), fb.label("else"), fb.label("join"));
    fb.br(c, t, e);
    fb.at("then");
    let x = fb.binary(BinOp::Mul, c, c);
    fb.jmp(j);
    fb.at("else");
    fb.jmp(j);
    fb.at("join");
    let zero = fb.c(0);
    let p = fb.phi(Type::I64, vec![(t, x), (e, zero)]);
    fb.ret(Some(p));
    assert_ok(&m, fb.finish());
}

#[test]
fn use_before_definition_in_the_same_block() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", Some(Type::I64));
    let p = fb.param("p", Type::I64);
    fb.at("entry");
    let a = fb.binary(BinOp::Add, p, p);
    let b = fb.binary(BinOp::Add, a, p);
    fb.ret(Some(b));
    let mut f = fb.finish();
    // Swap the two adds: %v1 now uses %v2 before it is computed.
    f.blocks[0].insts.swap(0, 1);
    assert_err(&m, f, "use of %v1 before its definition in the same block");
}

#[test]
fn an_instruction_cannot_use_its_own_result() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", Some(Type::I64));
    let p = fb.param("p", Type::I64);
    fb.at("entry");
    let a = fb.binary(BinOp::Add, p, p);
    fb.ret(Some(a));
    let mut f = fb.finish();
    let i = f.def_inst(a).unwrap();
    f.insts[i.index()].kind = InstKind::Binary(BinOp::Add, a, p);
    assert_err(&m, f, "use of %v1 before its definition in the same block");
}

/// A counting loop: the header phi names itself on the back edge (carried unchanged).
fn loop_func(m: &Module, self_ref_on_entry: bool) -> ir::Function {
    let mut fb = Fb::new(m, "count", Some(Type::I64));
    let n = fb.param("n", Type::I64);
    let entry = fb.at("entry");
    let (head, body, out) = (fb.label("head"), fb.label("body"), fb.label("out"));
    fb.jmp(head);
    fb.at("head");
    let zero = fb.c(0);
    let i = fb.phi(Type::I64, vec![]);
    fb.named(i, "i");
    let keep = fb.phi(Type::I64, vec![]);
    fb.named(keep, "keep");
    let more = fb.binary(BinOp::Slt, i, n);
    fb.br(more, body, out);
    fb.at("body");
    let one = fb.c(1);
    let next = fb.binary(BinOp::Add, i, one);
    fb.jmp(head);
    fb.at("out");
    fb.ret(Some(keep));
    fb.set_phi_entries(i, vec![(entry, zero), (body, next)]);
    let first = if self_ref_on_entry { keep } else { n };
    fb.set_phi_entries(keep, vec![(entry, first), (body, keep)]);
    fb.finish()
}

#[test]
fn a_phi_may_name_itself_on_the_back_edge() {
    let m = Module::new();
    assert_ok(&m, loop_func(&m, false));
}

#[test]
fn a_phi_naming_itself_on_the_entry_edge_is_not_available() {
    let m = Module::new();
    assert_err(
        &m,
        loop_func(&m, true),
        "%keep (the entry for 'entry') is not available at the end of 'entry'",
    );
}

#[test]
fn phi_operand_must_be_available_at_the_end_of_its_predecessor() {
    let m = Module::new();
    let mut f = loop_func(&m, false);
    // Give %i's entry edge the value computed in the loop body.
    let i = val(&f, "i");
    let next = f
        .values
        .iter()
        .position(|d| matches!(d.def, ir::ValueDef::Inst(x) if matches!(f.insts[x.index()].kind, InstKind::Binary(BinOp::Add, ..))))
        .map(ir::Value::new)
        .unwrap();
    let (entry, body) = (blk(&f, "entry"), blk(&f, "body"));
    let pi = f.def_inst(i).unwrap();
    f.insts[pi.index()].kind = InstKind::Phi(vec![(entry, next), (body, next)]);
    assert_err(&m, f, "is not available at the end of 'entry': its definition in block 'body' does not dominate it");
}

#[test]
fn phi_missing_an_entry() {
    let m = Module::new();
    let mut f = loop_func(&m, false);
    let pi = f.def_inst(val(&f, "keep")).unwrap();
    let entry = blk(&f, "entry");
    f.insts[pi.index()].kind = InstKind::Phi(vec![(entry, f.params[0])]);
    assert_err(&m, f, "phi has no entry for predecessor 'body'");
}

#[test]
fn phi_entry_for_a_non_predecessor() {
    let m = Module::new();
    let mut f = loop_func(&m, false);
    let pi = f.def_inst(val(&f, "keep")).unwrap();
    let (entry, body, out) = (blk(&f, "entry"), blk(&f, "body"), blk(&f, "out"));
    let n = f.params[0];
    f.insts[pi.index()].kind = InstKind::Phi(vec![(entry, n), (body, n), (out, n)]);
    assert_err(
        &m,
        f,
        "phi has an entry for 'out', which is not a predecessor of 'head'",
    );
}

#[test]
fn phi_with_two_entries_for_one_edge() {
    let m = Module::new();
    let mut f = loop_func(&m, false);
    let pi = f.def_inst(val(&f, "keep")).unwrap();
    let (entry, body) = (blk(&f, "entry"), blk(&f, "body"));
    let n = f.params[0];
    f.insts[pi.index()].kind = InstKind::Phi(vec![(entry, n), (body, n), (body, n)]);
    assert_err(
        &m,
        f,
        "phi has 2 entries for 'body', but it has 1 edge(s) to 'head'",
    );
}

/// `br %c, join, join`: two edges from one block need two phi entries.
fn double_edge(m: &Module, entries: usize) -> ir::Function {
    let mut fb = Fb::new(m, "f", Some(Type::I64));
    let c = fb.param("c", Type::I64);
    let entry = fb.at("entry");
    let join = fb.label("join");
    fb.br(c, join, join);
    fb.at("join");
    let p = fb.phi(Type::I64, vec![(entry, c); entries]);
    fb.ret(Some(p));
    fb.finish()
}

#[test]
fn a_double_edge_needs_two_phi_entries() {
    let m = Module::new();
    assert_ok(&m, double_edge(&m, 2));
    assert_err(
        &m,
        double_edge(&m, 1),
        "phi has 1 entries for 'entry', but it has 2 edges to 'join'",
    );
}

#[test]
fn the_entry_block_has_no_predecessors() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", None);
    let c = fb.param("c", Type::I64);
    let entry = fb.at("entry");
    let out = fb.label("out");
    fb.br(c, entry, out);
    fb.at("out");
    fb.ret(None);
    assert_err(
        &m,
        fb.finish(),
        "@f, block 'entry': the entry block has predecessors ('entry')",
    );
}

#[test]
fn dominance_is_not_checked_in_unreachable_blocks() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", Some(Type::I64));
    let p = fb.param("p", Type::I64);
    fb.at("entry");
    fb.ret(Some(p));
    fb.at("dead");
    let late = fb.label("dead2");
    fb.jmp(late);
    fb.at("dead2");
    let x = fb.binary(BinOp::Add, p, p);
    fb.ret(Some(x));
    let mut f = fb.finish();
    // In 'dead', use %v1 which is defined in 'dead2' (no dominance in dead code).
    let dead = blk(&f, "dead");
    let (i, _) = f.append_inst(dead, InstKind::Escape(x), None);
    let insts = &mut f.blocks[dead.index()].insts;
    let last = insts.pop().unwrap();
    insts.insert(0, last);
    assert_eq!(insts[0], i);
    assert_ok(&m, f);
}

#[test]
fn unreachable_blocks_must_still_be_well_typed() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", None);
    fb.at("entry");
    fb.ret(None);
    fb.at("dead");
    let n = fb.null();
    fb.guard(n);
    fb.ret(None);
    assert_err(
        &m,
        fb.finish(),
        "@f, block 'dead': guard null: guard condition null has type null, expected i64",
    );
}

#[test]
fn a_reachable_use_of_a_value_defined_only_in_dead_code_is_reported() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", Some(Type::I64));
    let p = fb.param("p", Type::I64);
    fb.at("entry");
    let (i, _) = fb.push(InstKind::Ret(None), None);
    fb.at("dead");
    let x = fb.binary(BinOp::Add, p, p);
    fb.ret(Some(x));
    let mut f = fb.finish();
    f.insts[i.index()].kind = InstKind::Ret(Some(x));
    assert_err(
        &m,
        f,
        "use of %v1 is not dominated by its definition in block 'dead'",
    );
}

#[test]
fn a_use_of_a_removed_instruction_is_reported() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", Some(Type::I64));
    let p = fb.param("p", Type::I64);
    fb.at("entry");
    let x = fb.binary(BinOp::Add, p, p);
    fb.named(x, "x");
    fb.ret(Some(x));
    let mut f = fb.finish();
    f.remove_inst(f.def_inst(x).unwrap());
    assert_err(
        &m,
        f,
        "ret %x: use of %x, whose defining instruction is not placed in the function",
    );
}

/// entry: br %c, left, right / left: %x = … ; jmp l2 / l2: jmp l3 / l3: use %x
/// / right: jmp r2 / r2: use %x. The verifier answers dominance along chains
/// of single-predecessor blocks without the dominator tree: a definition up
/// the chain dominates, one off it does not, and past a join the tree decides.
#[test]
fn dominance_along_single_predecessor_chains_and_past_a_join() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "main", Some(Type::I64));
    let c = fb.param("c", Type::I64);
    fb.at("entry");
    let (l, r) = (fb.label("left"), fb.label("right"));
    let (l2, l3, r2, j) = (
        fb.label("l2"),
        fb.label("l3"),
        fb.label("r2"),
        fb.label("join"),
    );
    fb.br(c, l, r);
    fb.at("left");
    let x = fb.binary(BinOp::Mul, c, c);
    fb.named(x, "x");
    fb.jmp(l2);
    fb.at("l2");
    fb.jmp(l3);
    fb.at("l3");
    let y = fb.binary(BinOp::Add, x, c);
    fb.named(y, "y");
    fb.jmp(j);
    fb.at("right");
    fb.jmp(r2);
    fb.at("r2");
    let z = fb.binary(BinOp::Sub, x, c);
    fb.named(z, "z");
    fb.jmp(j);
    fb.at("join");
    let w = fb.binary(BinOp::Add, y, c);
    fb.named(w, "w");
    fb.ret(Some(w));
    let ms = messages(&m, fb.finish());
    assert_eq!(
        ms,
        vec![
            "@main, block 'r2': %z = sub %x, %c: use of %x is not dominated by its definition in block 'left'"
                .to_string(),
            "@main, block 'join': %w = add %y, %c: use of %y is not dominated by its definition in block 'l3'"
                .to_string(),
        ]
    );
}

/// `br %c, join, join` with phi entries in edge order but different values:
/// which edge was taken is not observable, so the verifier (whose quick
/// path accepts entries that match the edges one to one) reports it.
#[test]
fn the_entries_for_a_double_edge_must_agree() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", Some(Type::I64));
    let c = fb.param("c", Type::I64);
    let d = fb.param("d", Type::I64);
    let entry = fb.at("entry");
    let join = fb.label("join");
    fb.br(c, join, join);
    fb.at("join");
    let p = fb.phi(Type::I64, vec![(entry, c), (entry, d)]);
    fb.ret(Some(p));
    let ms = messages(&m, fb.finish());
    assert_eq!(ms.len(), 1, "{ms:?}");
    assert!(
        ms[0].ends_with("phi has different values for the edges from 'entry'; entries for one predecessor block must agree"),
        "{ms:?}"
    );
}

/// entry: %x = add %p, %p / %y = mul %x, %p / %z = sub %y, %x / ret %z,
/// with `%x` then recorded as defined by the `mul` (which defines `%y`), or
/// the `mul` given `%x` as its result instead. An operand is sound only when the
/// instruction its value names has it as its result and is placed; a value
/// two instructions claim is defined where its record says.
#[test]
fn an_operand_is_defined_where_its_record_says() {
    let m = Module::new();
    let build = || {
        let mut fb = Fb::new(&m, "f", Some(Type::I64));
        let p = fb.param("p", Type::I64);
        fb.at("entry");
        let x = fb.binary(BinOp::Add, p, p);
        fb.named(x, "x");
        let y = fb.binary(BinOp::Mul, x, p);
        fb.named(y, "y");
        let z = fb.binary(BinOp::Sub, y, x);
        fb.named(z, "z");
        fb.ret(Some(z));
        (fb.finish(), x, y)
    };
    let (mut f, x, y) = build();
    let mul = f.def_inst(y).unwrap();
    f.values[x.index()].def = ir::ValueDef::Inst(mul);
    assert_eq!(
        messages(&m, f),
        vec![
            "@f, block 'entry': %x = add %p, %p: result %x is not recorded as defined by this instruction",
            "@f, block 'entry': %y = mul %x, %p: %x claims to be defined by an instruction that does not define it",
            "@f, block 'entry': %z = sub %y, %x: %x claims to be defined by an instruction that does not define it",
            "@f, block 'entry': %y = mul %x, %p: use of %x before its definition in the same block",
        ]
    );
    let (mut f, x, y) = build();
    let mul = f.def_inst(y).unwrap();
    f.insts[mul.index()].result = Some(x);
    f.values[x.index()].def = ir::ValueDef::Inst(mul);
    assert_eq!(
        messages(&m, f),
        vec![
            "@f, block 'entry': %x = add %p, %p: result %x is not recorded as defined by this instruction",
            "@f, block 'entry': %z = sub %y, %x: %y claims to be defined by an instruction that does not define it",
            "@f, block 'entry': %x = mul %x, %p: use of %x before its definition in the same block",
        ]
    );
}
