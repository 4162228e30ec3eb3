//! The verifier (and the analyses it uses) never panic, whatever the arenas hold.

mod verify_support;

use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::effects::inst_effects;
use ir::loops::LoopInfo;
use ir::verify::verify_module;
use ir::{Block, Callee, Function, Inst, InstKind, Module, Type, Value, ValueDef};
use proptest::prelude::*;
use verify_support::{sample, Fb};

/// A loop with a phi, memory accesses and a call: a varied starting point for mutations.
fn victim(m: &Module) -> Function {
    let s = sample();
    let mut fb = Fb::new(m, "victim", Some(Type::I64));
    let p = fb.param("p", Type::object(s.point));
    let n = fb.param("n", Type::I64);
    let entry = fb.at("entry");
    let (head, body, out) = (fb.label("head"), fb.label("body"), fb.label("out"));
    fb.jmp(head);
    fb.at("head");
    let zero = fb.c(0);
    let i = fb.phi(Type::I64, vec![]);
    let more = fb.binary(ir::BinOp::Slt, i, n);
    fb.br(more, body, out);
    fb.at("body");
    let x = fb.load_field(p, s.px);
    fb.store_global(s.count, x);
    fb.call(Callee::Extern(s.mystery), vec![x, p]);
    let one = fb.c(1);
    let next = fb.binary(ir::BinOp::Add, i, one);
    fb.jmp(head);
    fb.at("out");
    fb.ret(Some(i));
    fb.set_phi_entries(i, vec![(entry, zero), (body, next)]);
    fb.finish()
}

fn run_everything(m: &Module) {
    let _ = verify_module(m);
    for f in &m.funcs {
        let cfg = Cfg::new(f);
        let dom = DomTree::new(f, &cfg);
        let _ = LoopInfo::new(f, &cfg, &dom);
        for i in 0..f.insts.len() + 2 {
            let _ = inst_effects(m, f, Inst::new(i));
            let _ = dom.inst_dominates(f, Inst::new(i), Inst::new(0));
            let _ = dom.available_before(f, Value::new(i), Inst::new(i));
        }
    }
}

#[test]
fn the_victim_is_well_formed() {
    let mut m = sample().m;
    let f = victim(&m);
    m.add_func(f);
    assert!(verify_module(&m).is_ok(), "{:?}", verify_module(&m));
}

#[test]
fn empty_layout_and_out_of_range_ids_are_errors_not_panics() {
    let mut m = sample().m;
    let mut f = victim(&m);
    f.layout.push(Block(99));
    f.blocks[0].insts.push(Inst(1234));
    f.params.push(Value(777));
    f.values[0].def = ValueDef::Param(40);
    m.add_func(f);
    m.add_func(Function::new("empty", None));
    let errs: Vec<String> = verify_module(&m)
        .unwrap_err()
        .iter()
        .map(|e| e.to_string())
        .collect();
    let has = |n: &str| errs.iter().any(|e| e.contains(n));
    assert!(
        has("the layout names block #99, which does not exist"),
        "{errs:?}"
    );
    assert!(
        has("the block lists instruction #1234, which does not exist"),
        "{errs:?}"
    );
    assert!(
        has("parameter 2 is value #777, which does not exist"),
        "{errs:?}"
    );
    assert!(has("@empty: the function has no blocks"), "{errs:?}");
    run_everything(&m);
}

#[test]
fn deeply_nested_array_types_do_not_overflow() {
    let m = sample().m;
    let mut fb = Fb::new(&m, "deep", None);
    fb.at("entry");
    let n = fb.c(1);
    let deep = Type {
        base: ir::Base::I64,
        dims: u8::MAX,
    };
    fb.push(InstKind::NewArray { elem: deep, len: n }, Some(Type::I64));
    fb.ret(None);
    let mut m2 = m.clone();
    m2.add_func(fb.finish());
    assert!(verify_module(&m2).is_err());
    run_everything(&m2);
}

/// One random corruption of a function.
#[derive(Clone, Debug)]
enum Mutation {
    Operand(usize, u32),
    Target(usize, u32),
    BlockList(usize, usize, u32),
    InstBlock(usize, Option<u32>),
    Layout(usize, u32),
    DropLayout(usize),
    Result(usize, Option<u32>),
    ValueDef(usize, u32),
    Swap(usize, usize, usize),
    Clear(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0usize..16, 0u32..40).prop_map(|(a, b)| Mutation::Operand(a, b)),
        (0usize..16, 0u32..8).prop_map(|(a, b)| Mutation::Target(a, b)),
        (0usize..6, 0usize..6, 0u32..20).prop_map(|(a, b, c)| Mutation::BlockList(a, b, c)),
        (0usize..16, proptest::option::of(0u32..8)).prop_map(|(a, b)| Mutation::InstBlock(a, b)),
        (0usize..6, 0u32..8).prop_map(|(a, b)| Mutation::Layout(a, b)),
        (0usize..6).prop_map(Mutation::DropLayout),
        (0usize..16, proptest::option::of(0u32..40)).prop_map(|(a, b)| Mutation::Result(a, b)),
        (0usize..20, 0u32..20).prop_map(|(a, b)| Mutation::ValueDef(a, b)),
        (0usize..6, 0usize..6, 0usize..6).prop_map(|(a, b, c)| Mutation::Swap(a, b, c)),
        (0usize..6).prop_map(Mutation::Clear),
    ]
}

fn apply(f: &mut Function, mu: &Mutation) {
    match *mu {
        Mutation::Operand(i, v) => {
            if let Some(d) = f.insts.get_mut(i) {
                d.kind.for_each_operand_mut(|x| *x = Value(v));
            }
        }
        Mutation::Target(i, b) => {
            if let Some(d) = f.insts.get_mut(i) {
                d.kind.successors_mut().for_each(|x| *x = Block(b));
                if let InstKind::Phi(es) = &mut d.kind {
                    es.iter_mut().for_each(|e| e.0 = Block(b));
                }
            }
        }
        Mutation::BlockList(b, k, i) => {
            if let Some(bd) = f.blocks.get_mut(b) {
                if let Some(slot) = bd.insts.get_mut(k) {
                    *slot = Inst(i);
                }
            }
        }
        Mutation::InstBlock(i, b) => {
            if let Some(d) = f.insts.get_mut(i) {
                d.block = b.map(Block);
            }
        }
        Mutation::Layout(k, b) => {
            if let Some(slot) = f.layout.get_mut(k) {
                *slot = Block(b);
            }
        }
        Mutation::DropLayout(k) => {
            if k < f.layout.len() {
                f.layout.remove(k);
            }
        }
        Mutation::Result(i, r) => {
            if let Some(d) = f.insts.get_mut(i) {
                d.result = r.map(Value);
            }
        }
        Mutation::ValueDef(v, i) => {
            if let Some(d) = f.values.get_mut(v) {
                d.def = ValueDef::Inst(Inst(i));
            }
        }
        Mutation::Swap(b, x, y) => {
            if let Some(bd) = f.blocks.get_mut(b) {
                if x < bd.insts.len() && y < bd.insts.len() {
                    bd.insts.swap(x, y);
                }
            }
        }
        Mutation::Clear(b) => {
            if let Some(bd) = f.blocks.get_mut(b) {
                bd.insts.clear();
            }
        }
    }
}

proptest! {
    #[test]
    fn random_corruption_never_panics(mutations in proptest::collection::vec(mutation(), 1..6)) {
        let mut m = sample().m;
        let mut f = victim(&m);
        for mu in &mutations {
            apply(&mut f, mu);
        }
        m.add_func(f);
        run_everything(&m);
    }
}
