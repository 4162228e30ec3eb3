//! Natural loops: headers, bodies, latches, exits, nesting, preheaders, reducibility.

mod verify_support;

use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::loops::LoopInfo;
use verify_support::{blk, shape};

fn analyse(f: &ir::Function) -> LoopInfo {
    let cfg = Cfg::new(f);
    let dom = DomTree::new(f, &cfg);
    LoopInfo::new(f, &cfg, &dom)
}

#[test]
fn straight_line_code_has_no_loops() {
    let (_, f) = shape(&[("entry", &["a", "b"]), ("a", &[]), ("b", &[])]);
    let li = analyse(&f);
    assert!(li.loops().is_empty());
    assert!(li.is_reducible());
    assert_eq!(li.loop_of(blk(&f, "a")), None);
    assert_eq!(li.depth(blk(&f, "a")), 0);
}

#[test]
fn simple_loop_with_preheader_latch_and_exit() {
    let (_, f) = shape(&[
        ("entry", &["pre"]),
        ("pre", &["head"]),
        ("head", &["body", "exit"]),
        ("body", &["head"]),
        ("exit", &[]),
    ]);
    let li = analyse(&f);
    assert_eq!(li.loops().len(), 1);
    let l = &li.loops()[0];
    assert_eq!(l.header, blk(&f, "head"));
    assert_eq!(l.blocks, vec![blk(&f, "head"), blk(&f, "body")]);
    assert_eq!(l.latches, vec![blk(&f, "body")]);
    assert_eq!(l.exits, vec![blk(&f, "exit")]);
    assert_eq!(l.preheader, Some(blk(&f, "pre")));
    assert_eq!(l.parent, None);
    assert_eq!(l.depth, 1);
    let id = li.loop_of(blk(&f, "body")).unwrap();
    assert_eq!(li.loop_with_header(blk(&f, "head")), Some(id));
    assert_eq!(li.loop_with_header(blk(&f, "body")), None);
    assert!(!li.contains(id, blk(&f, "exit")));
}

#[test]
fn self_loop_is_its_own_latch() {
    let (_, f) = shape(&[("entry", &["l"]), ("l", &["l", "out"]), ("out", &[])]);
    let li = analyse(&f);
    let l = &li.loops()[0];
    assert_eq!(l.blocks, vec![blk(&f, "l")]);
    assert_eq!(l.latches, vec![blk(&f, "l")]);
    assert_eq!(l.preheader, Some(blk(&f, "entry")));
}

#[test]
fn no_preheader_when_the_outside_predecessor_branches_elsewhere_too() {
    // entry branches to head and to other: not a dedicated preheader.
    let (_, f) = shape(&[
        ("entry", &["head", "other"]),
        ("head", &["head", "other"]),
        ("other", &[]),
    ]);
    let li = analyse(&f);
    assert_eq!(li.loops()[0].preheader, None);
}

#[test]
fn no_preheader_with_two_outside_predecessors() {
    let (_, f) = shape(&[
        ("entry", &["a", "b"]),
        ("a", &["head"]),
        ("b", &["head"]),
        ("head", &["head", "out"]),
        ("out", &[]),
    ]);
    let li = analyse(&f);
    assert_eq!(li.loops()[0].preheader, None);
}

#[test]
fn two_back_edges_make_one_loop_with_two_latches() {
    let (_, f) = shape(&[
        ("entry", &["head"]),
        ("head", &["a", "out"]),
        ("a", &["head", "b"]),
        ("b", &["head"]),
        ("out", &[]),
    ]);
    let li = analyse(&f);
    assert_eq!(li.loops().len(), 1);
    assert_eq!(li.loops()[0].latches, vec![blk(&f, "a"), blk(&f, "b")]);
    assert_eq!(li.loops()[0].blocks.len(), 3);
}

#[test]
fn nested_loops_have_parents_and_depths() {
    let (_, f) = shape(&[
        ("entry", &["outer"]),
        ("outer", &["inner", "exit"]),
        ("inner", &["inner_body", "outer_latch"]),
        ("inner_body", &["inner"]),
        ("outer_latch", &["outer"]),
        ("exit", &[]),
    ]);
    let li = analyse(&f);
    assert_eq!(li.loops().len(), 2);
    let outer = li.loop_with_header(blk(&f, "outer")).unwrap();
    let inner = li.loop_with_header(blk(&f, "inner")).unwrap();
    assert!(outer < inner, "parents come first");
    assert_eq!(li.get(inner).parent, Some(outer));
    assert_eq!(li.get(outer).parent, None);
    assert_eq!(li.get(inner).depth, 2);
    let innermost = li.innermost();
    assert!(innermost[inner.index()] && !innermost[outer.index()]);
    assert_eq!(li.depth(blk(&f, "inner_body")), 2);
    assert_eq!(li.depth(blk(&f, "outer_latch")), 1);
    assert_eq!(li.loop_of(blk(&f, "inner_body")), Some(inner));
    assert!(li.contains(outer, blk(&f, "inner_body")));
    assert!(!li.contains(inner, blk(&f, "outer_latch")));
    assert_eq!(li.get(inner).exits, vec![blk(&f, "outer_latch")]);
    assert_eq!(li.get(outer).blocks.len(), 4);
    // The inner header's only outside predecessor is `outer`, which also branches to exit.
    assert_eq!(li.get(inner).preheader, None);
}

#[test]
fn irreducible_cycle_is_reported_and_is_not_a_loop() {
    // entry branches into the middle of the a <-> b cycle from both sides.
    let (_, f) = shape(&[
        ("entry", &["a", "b"]),
        ("a", &["b", "out"]),
        ("b", &["a"]),
        ("out", &[]),
    ]);
    let li = analyse(&f);
    assert!(!li.is_reducible());
    assert_eq!(li.irreducible_edges().len(), 1);
    let (from, to) = li.irreducible_edges()[0];
    assert!(
        (from, to) == (blk(&f, "b"), blk(&f, "a")) || (from, to) == (blk(&f, "a"), blk(&f, "b"))
    );
    assert!(li.loops().is_empty());
}

#[test]
fn reducible_loop_reports_no_irreducible_edges() {
    let (_, f) = shape(&[
        ("entry", &["head"]),
        ("head", &["body", "out"]),
        ("body", &["head"]),
        ("out", &[]),
    ]);
    assert!(analyse(&f).irreducible_edges().is_empty());
}

#[test]
fn unreachable_cycles_are_ignored() {
    let (_, f) = shape(&[("entry", &[]), ("x", &["y"]), ("y", &["x"])]);
    let li = analyse(&f);
    assert!(li.loops().is_empty());
    assert!(li.is_reducible());
}
