//! CFG and dominator tree on small hand-made shapes.

mod verify_support;

use ir::cfg::Cfg;
use ir::dom::DomTree;
use verify_support::{blk, shape, Fb};

#[test]
fn duplicate_edges_count_twice_in_preds_and_succs() {
    let (_, f) = shape(&[("entry", &["l", "l"]), ("l", &[])]);
    let cfg = Cfg::new(&f);
    let (e, l) = (blk(&f, "entry"), blk(&f, "l"));
    assert_eq!(cfg.succs(e), &[l, l]);
    assert_eq!(cfg.preds(l), &[e, e]);
    assert_eq!(cfg.unique_preds(l), vec![e]);
}

#[test]
fn rpo_starts_at_entry_and_skips_unreachable_blocks() {
    let (_, f) = shape(&[
        ("entry", &["a", "b"]),
        ("dead", &["join"]),
        ("a", &["join"]),
        ("b", &["join"]),
        ("join", &[]),
    ]);
    let cfg = Cfg::new(&f);
    let rpo = cfg.rpo();
    assert_eq!(rpo.len(), 4);
    assert_eq!(rpo[0], blk(&f, "entry"));
    assert_eq!(*rpo.last().unwrap(), blk(&f, "join"));
    assert!(!cfg.is_reachable(blk(&f, "dead")));
    assert_eq!(cfg.rpo_index(blk(&f, "dead")), None);
    for (i, &b) in rpo.iter().enumerate() {
        assert_eq!(cfg.rpo_index(b), Some(i));
    }
    // The unreachable block's edge still counts as a predecessor edge.
    assert!(cfg.preds(blk(&f, "join")).contains(&blk(&f, "dead")));
}

#[test]
fn blocks_outside_the_layout_do_not_exist() {
    let (_, mut f) = shape(&[("entry", &["a"]), ("a", &["b"]), ("b", &[])]);
    let b = blk(&f, "b");
    f.layout.retain(|&x| x != b);
    let cfg = Cfg::new(&f);
    assert!(cfg.succs(blk(&f, "a")).is_empty());
    assert!(cfg.preds(b).is_empty());
    assert!(!cfg.in_layout(b));
    assert!(!cfg.is_reachable(b));
}

#[test]
fn empty_function_has_empty_cfg_and_tree() {
    let f = ir::Function::new("empty", None);
    let cfg = Cfg::new(&f);
    assert!(cfg.rpo().is_empty());
    assert_eq!(cfg.entry(), None);
    let dom = DomTree::new(&f, &cfg);
    assert!(dom.preorder().is_empty());
}

#[test]
fn diamond_dominators() {
    let (_, f) = shape(&[
        ("entry", &["then", "else"]),
        ("then", &["join"]),
        ("else", &["join"]),
        ("join", &[]),
    ]);
    let cfg = Cfg::new(&f);
    let dom = DomTree::new(&f, &cfg);
    let [e, t, el, j] = ["entry", "then", "else", "join"].map(|n| blk(&f, n));
    assert_eq!(dom.idom(e), None);
    assert_eq!(dom.idom(t), Some(e));
    assert_eq!(dom.idom(el), Some(e));
    assert_eq!(dom.idom(j), Some(e));
    assert!(dom.dominates(e, j));
    assert!(dom.dominates(j, j));
    assert!(!dom.strictly_dominates(j, j));
    assert!(!dom.dominates(t, j));
    assert!(!dom.dominates(t, el));
    let mut kids = dom.children(e).to_vec();
    kids.sort();
    assert_eq!(kids, vec![t, el, j]);
    assert_eq!(dom.preorder()[0], e);
    assert_eq!(dom.preorder().len(), 4);
}

/// A retreating edge that is not a back edge: the DFS goes entry, a, b, p
/// (`p -> b` retreats) and reaches `p` again from `c`. The first pass of the
/// idom iteration sees only `b`'s forward predecessor `a`; the path entry,
/// c, p, b avoids `a`, so a second pass must lift `b`'s idom to the entry
/// (stopping after the first pass, as is right for back edges, would keep `a`).
#[test]
fn a_retreating_edge_into_a_cycle_with_two_entries_needs_another_pass() {
    let (_, f) = shape(&[
        ("entry", &["a", "c"]),
        ("a", &["b"]),
        ("b", &["p"]),
        ("p", &["b"]),
        ("c", &["p"]),
    ]);
    let cfg = Cfg::new(&f);
    let dom = DomTree::new(&f, &cfg);
    let idoms = ir::dom::Idoms::new(&cfg);
    let [e, a, b, p] = ["entry", "a", "b", "p"].map(|n| blk(&f, n));
    assert_eq!(cfg.rpo_index(b), Some(3), "{:?}", cfg.rpo());
    assert_eq!(cfg.rpo_index(p), Some(4), "{:?}", cfg.rpo());
    assert_eq!(dom.idom(b), Some(e));
    assert_eq!(dom.idom(p), Some(e));
    assert!(!dom.dominates(a, b));
    assert!(!idoms.dominates(&cfg, a, b));
    assert!(idoms.dominates(&cfg, e, b));
    assert!(!idoms.dominates(&cfg, b, p));
}

#[test]
fn loop_dominators_and_unreachable_blocks() {
    let (_, f) = shape(&[
        ("entry", &["head"]),
        ("head", &["body", "exit"]),
        ("body", &["head"]),
        ("exit", &[]),
        ("dead", &["body"]),
    ]);
    let cfg = Cfg::new(&f);
    let dom = DomTree::new(&f, &cfg);
    let [e, h, b, x, d] = ["entry", "head", "body", "exit", "dead"].map(|n| blk(&f, n));
    assert_eq!(dom.idom(b), Some(h));
    assert_eq!(dom.idom(x), Some(h));
    assert_eq!(dom.idom(h), Some(e));
    assert!(dom.dominates(h, b));
    assert!(!dom.dominates(b, h));
    // Unreachable blocks are outside the tree: only reflexive dominance.
    assert_eq!(dom.idom(d), None);
    assert!(dom.dominates(d, d));
    assert!(!dom.dominates(e, d));
    assert!(!dom.dominates(d, b));
    assert!(!dom.is_reachable(d));
}

#[test]
fn preorder_lists_dominators_before_dominated_blocks() {
    let (_, f) = shape(&[
        ("entry", &["a", "b"]),
        ("a", &["c"]),
        ("b", &["c", "d"]),
        ("c", &["d"]),
        ("d", &[]),
    ]);
    let cfg = Cfg::new(&f);
    let dom = DomTree::new(&f, &cfg);
    let pre = dom.preorder();
    for (i, &x) in pre.iter().enumerate() {
        for &y in &pre[..i] {
            assert!(
                !dom.strictly_dominates(x, y),
                "{x:?} dominates earlier {y:?}"
            );
        }
    }
}

#[test]
fn instruction_dominance_and_availability() {
    let m = ir::Module::new();
    let mut fb = Fb::new(&m, "f", Some(ir::Type::I64));
    let p = fb.param("p", ir::Type::I64);
    fb.at("entry");
    let a = fb.binary(ir::BinOp::Add, p, p);
    fb.c(7);
    let b1 = fb.binary(ir::BinOp::Add, a, a);
    let (t, e) = (fb.label("then"), fb.label("else"));
    let br = fb.br(a, t, e);
    fb.at("then");
    let x = fb.binary(ir::BinOp::Mul, a, p);
    let j = fb.label("join");
    fb.jmp(j);
    fb.at("else");
    fb.jmp(j);
    fb.at("join");
    let r = fb.binary(ir::BinOp::Add, b1, x);
    let ret = fb.ret(Some(r));
    let f = fb.finish();
    let cfg = Cfg::new(&f);
    let dom = DomTree::new(&f, &cfg);
    let inst = |v| f.def_inst(v).unwrap();
    assert!(dom.inst_dominates(&f, inst(a), inst(b1)));
    assert!(dom.inst_dominates(&f, inst(a), inst(a)));
    assert!(!dom.inst_dominates(&f, inst(b1), inst(a)));
    assert!(dom.inst_dominates(&f, br, inst(x)));
    assert!(!dom.inst_dominates(&f, inst(x), ret));
    assert!(dom.available_before(&f, a, inst(b1)));
    assert!(!dom.available_before(&f, a, inst(a)));
    assert!(!dom.available_before(&f, x, inst(r)));
    assert!(dom.available_before(&f, p, inst(a)));
    let seven = f
        .values
        .iter()
        .position(|d| d.def == ir::ValueDef::Const(7));
    let seven = ir::Value::new(seven.expect("constant 7"));
    assert!(dom.available_before(&f, seven, inst(a)));
    assert!(dom.available_at_end(&f, seven, e));
    assert!(dom.available_at_end(&f, x, t));
    assert!(!dom.available_at_end(&f, x, e));
    assert!(dom.available_at_end(&f, a, e));
}
