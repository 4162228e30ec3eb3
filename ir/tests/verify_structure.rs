//! Verifier: block structure, terminators, phi placement, `InstData.block`, labels.

mod verify_support;

use ir::verify::verify_function;
use ir::{BinOp, Block, FuncId, Function, InstKind, Module, Type};
use verify_support::{assert_err, assert_ok, blk, Fb};

fn straight(m: &Module) -> Function {
    let mut fb = Fb::new(m, "f", Some(Type::I64));
    let p = fb.param("p", Type::I64);
    fb.at("entry");
    let a = fb.binary(BinOp::Add, p, p);
    fb.ret(Some(a));
    fb.finish()
}

#[test]
fn a_well_formed_function_verifies() {
    let m = Module::new();
    assert_ok(&m, straight(&m));
}

#[test]
fn a_block_must_end_in_a_terminator() {
    let m = Module::new();
    let mut f = straight(&m);
    let ret = f.terminator(Block::new(0)).unwrap();
    f.remove_inst(ret);
    assert_err(
        &m,
        f,
        "@f, block 'entry': %v1 = add %p, %p: the block does not end in a terminator",
    );
}

#[test]
fn an_empty_block_is_reported() {
    let m = Module::new();
    let mut f = straight(&m);
    f.add_block("empty");
    assert_err(&m, f, "@f, block 'empty': the block is empty");
}

#[test]
fn a_terminator_in_the_middle_is_reported() {
    let m = Module::new();
    let mut f = straight(&m);
    let (i, _) = f.create_inst(InstKind::Unreachable, None);
    f.insert_inst(Block::new(0), 0, i);
    assert_err(
        &m,
        f,
        "@f, block 'entry': unreachable: a terminator in the middle of the block",
    );
}

#[test]
fn phis_come_first() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", Some(Type::I64));
    let p = fb.param("p", Type::I64);
    let entry = fb.at("entry");
    let l = fb.label("l");
    fb.jmp(l);
    fb.at("l");
    let a = fb.binary(BinOp::Add, p, p);
    let ph = fb.phi(Type::I64, vec![(entry, a)]);
    fb.ret(Some(ph));
    let f = fb.finish();
    assert_err(
        &m,
        f,
        "a phi after a non-phi instruction (phis must come first)",
    );
}

#[test]
fn phis_first_positive() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", Some(Type::I64));
    let p = fb.param("p", Type::I64);
    let entry = fb.at("entry");
    let l = fb.label("l");
    fb.jmp(l);
    fb.at("l");
    let ph = fb.phi(Type::I64, vec![(entry, p)]);
    let a = fb.binary(BinOp::Add, ph, p);
    fb.ret(Some(a));
    assert_ok(&m, fb.finish());
}

#[test]
fn branch_to_a_block_outside_the_layout() {
    let m = Module::new();
    let mut fb = Fb::new(&m, "f", None);
    fb.at("entry");
    let gone = fb.label("gone");
    fb.jmp(gone);
    fb.at("gone");
    fb.ret(None);
    let mut f = fb.finish();
    let g = blk(&f, "gone");
    f.remove_block(g);
    assert_err(
        &m,
        f,
        "jmp gone: branch to block #1 ('gone'), which is not in the function",
    );
}

#[test]
fn branch_to_a_block_that_does_not_exist() {
    let m = Module::new();
    let mut f = straight(&m);
    let t = f.terminator(Block::new(0)).unwrap();
    f.insts[t.index()].kind = InstKind::Jmp(Block::new(42));
    assert_err(
        &m,
        f,
        "branch to block #42 ('<bad block 42>'), which is not in the function",
    );
}

#[test]
fn inst_block_field_must_match_the_block_list() {
    let m = Module::new();
    let mut f = straight(&m);
    let other = f.add_block("other");
    let first = f.blocks[0].insts[0];
    f.insts[first.index()].block = Some(other);
    assert_err(
        &m,
        f,
        "InstData.block says block 'other', but the instruction is listed in this block",
    );
}

#[test]
fn an_instruction_claiming_a_block_that_does_not_list_it() {
    let m = Module::new();
    let mut f = straight(&m);
    let (i, _) = f.create_inst(InstKind::Guard(f.params[0]), None);
    f.insts[i.index()].block = Some(Block::new(0));
    assert_err(
        &m,
        f,
        "InstData.block says block 'entry', but that block does not list the instruction",
    );
}

#[test]
fn an_instruction_listed_twice() {
    let m = Module::new();
    let mut f = straight(&m);
    let first = f.blocks[0].insts[0];
    f.blocks[0].insts.insert(0, first);
    assert_err(&m, f, "the instruction is listed twice");
}

#[test]
fn a_block_listed_twice_in_the_layout() {
    let m = Module::new();
    let mut f = straight(&m);
    f.layout.push(Block::new(0));
    assert_err(&m, f, "the block appears twice in the layout");
}

#[test]
fn removed_blocks_are_not_checked() {
    let m = Module::new();
    let mut f = straight(&m);
    let junk = f.add_block("junk"); // empty: would be an error if it were in the layout
    f.remove_block(junk);
    assert_ok(&m, f);
}

#[test]
fn an_empty_layout_is_an_error() {
    let m = Module::new();
    let f = Function::new("nothing", None);
    assert_err(&m, f, "@nothing: the function has no blocks");
}

#[test]
fn verify_function_of_a_missing_function() {
    let m = Module::new();
    let errs = verify_function(&m, FuncId::new(3)).unwrap_err();
    assert_eq!(
        errs[0].to_string(),
        "function #3: no such function in the module"
    );
}

#[test]
fn errors_carry_function_block_and_instruction() {
    let m = Module::new();
    let mut f = straight(&m);
    let ret = f.terminator(Block::new(0)).unwrap();
    f.remove_inst(ret);
    let mut m2 = m.clone();
    let id = m2.add_func(f);
    let errs = verify_function(&m2, id).unwrap_err();
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].func, Some(id));
    assert_eq!(errs[0].block, Some(Block::new(0)));
    assert_eq!(errs[0].inst, Some(m2.funcs[0].blocks[0].insts[0]));
}
