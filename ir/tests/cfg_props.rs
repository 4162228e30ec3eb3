//! Property tests: dominance and loops agree with their definitions on random CFGs.
#![allow(clippy::needless_range_loop)]

mod verify_support;

use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::loops::LoopInfo;
use ir::Block;
use proptest::prelude::*;
use verify_support::shape;

/// Random CFG: for each block, 0–2 successor indices.
fn cfg_strategy() -> impl Strategy<Value = Vec<Vec<usize>>> {
    (1usize..9)
        .prop_flat_map(|n| proptest::collection::vec(proptest::collection::vec(0..n, 0..=2), n))
}

fn build(succs: &[Vec<usize>]) -> ir::Function {
    let names: Vec<String> = (0..succs.len()).map(|i| format!("b{i}")).collect();
    let targets: Vec<Vec<&str>> = succs
        .iter()
        .map(|s| s.iter().map(|&t| names[t].as_str()).collect())
        .collect();
    let edges: Vec<(&str, &[&str])> = names
        .iter()
        .zip(&targets)
        .map(|(n, t)| (n.as_str(), t.as_slice()))
        .collect();
    shape(&edges).1
}

/// Blocks reachable from the entry without passing through `avoid`.
fn reachable_avoiding(cfg: &Cfg, n: usize, avoid: Option<Block>) -> Vec<bool> {
    let mut seen = vec![false; n];
    let entry = Block::new(0);
    if Some(entry) == avoid {
        return seen;
    }
    let mut work = vec![entry];
    seen[0] = true;
    while let Some(b) = work.pop() {
        for &s in cfg.succs(b) {
            if Some(s) != avoid && !seen[s.index()] {
                seen[s.index()] = true;
                work.push(s);
            }
        }
    }
    seen
}

/// Random CFGs of up to 40 blocks whose edges go to the first three blocks
/// half of the time: blocks with many predecessors (the idom search's
/// marked walks, `ir::dom`).
fn fan_in_strategy() -> impl Strategy<Value = Vec<Vec<usize>>> {
    (6usize..40).prop_flat_map(|n| {
        let target = prop_oneof![0..3usize, 0..n];
        proptest::collection::vec(proptest::collection::vec(target, 0..=2), n)
    })
}

/// `dom.dominates` agrees with the definition: `a` dominates `b` when every
/// path from the entry to `b` passes `a`.
fn check_dominance_by_paths(cfg: &Cfg, dom: &DomTree, n: usize) -> Result<(), TestCaseError> {
    let reach = reachable_avoiding(cfg, n, None);
    for b in 0..n {
        prop_assert_eq!(cfg.is_reachable(Block::new(b)), reach[b]);
    }
    for a in 0..n {
        let without_a = reachable_avoiding(cfg, n, Some(Block::new(a)));
        for b in 0..n {
            let (ba, bb) = (Block::new(a), Block::new(b));
            let expected = a == b || (reach[a] && reach[b] && !without_a[b]);
            prop_assert_eq!(dom.dominates(ba, bb), expected, "{:?} dom {:?}", ba, bb);
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn dominance_with_many_predecessors_matches_path_definition(succs in fan_in_strategy()) {
        let f = build(&succs);
        let cfg = Cfg::new(&f);
        let dom = DomTree::new(&f, &cfg);
        check_dominance_by_paths(&cfg, &dom, succs.len())?;
    }

    #[test]
    fn dominance_matches_path_definition(succs in cfg_strategy()) {
        let f = build(&succs);
        let n = succs.len();
        let cfg = Cfg::new(&f);
        let dom = DomTree::new(&f, &cfg);
        check_dominance_by_paths(&cfg, &dom, n)?;
        let reach = reachable_avoiding(&cfg, n, None);
        // The idom is the strict dominator closest to the block.
        for b in 0..n {
            let bb = Block::new(b);
            if let Some(i) = dom.idom(bb) {
                prop_assert!(dom.strictly_dominates(i, bb));
                for a in 0..n {
                    let ba = Block::new(a);
                    if dom.strictly_dominates(ba, bb) {
                        prop_assert!(dom.dominates(ba, i));
                    }
                }
            } else {
                prop_assert!(b == 0 || !reach[b]);
            }
        }
        // RPO: every non-back edge goes forward.
        for &b in cfg.rpo() {
            for &s in cfg.succs(b) {
                if !dom.dominates(s, b) {
                    let li = LoopInfo::new(&f, &cfg, &dom);
                    let retreating = cfg.rpo_index(s) <= cfg.rpo_index(b);
                    if retreating {
                        prop_assert!(!li.is_reducible());
                    }
                }
            }
        }
    }

    #[test]
    fn loops_contain_their_latches_and_are_dominated_by_their_header(succs in cfg_strategy()) {
        let f = build(&succs);
        let cfg = Cfg::new(&f);
        let dom = DomTree::new(&f, &cfg);
        let li = LoopInfo::new(&f, &cfg, &dom);
        for (i, l) in li.loops().iter().enumerate() {
            let id = ir::loops::LoopId(i as u32);
            for &b in &l.blocks {
                prop_assert!(dom.dominates(l.header, b));
                prop_assert!(li.contains(id, b));
            }
            for &latch in &l.latches {
                prop_assert!(l.blocks.contains(&latch));
                prop_assert!(cfg.succs(latch).contains(&l.header));
            }
            for &x in &l.exits {
                prop_assert!(!l.blocks.contains(&x));
            }
            if let Some(p) = l.parent {
                let parent = li.get(p);
                prop_assert_eq!(parent.depth + 1, l.depth);
                for &b in &l.blocks {
                    prop_assert!(parent.blocks.contains(&b));
                }
            }
            if let Some(ph) = l.preheader {
                prop_assert!(!l.blocks.contains(&ph));
                prop_assert_eq!(cfg.succs(ph), &[l.header]);
            }
        }
    }

    #[test]
    fn recomputing_in_place_matches_fresh_analyses(
        first in cfg_strategy(),
        second in cfg_strategy(),
    ) {
        let (f1, f2) = (build(&first), build(&second));
        let mut cfg = Cfg::new(&f1);
        let mut dom = DomTree::new(&f1, &cfg);
        let mut li = LoopInfo::new(&f1, &cfg, &dom);
        cfg.recompute(&f2);
        dom.recompute(&f2, &cfg);
        li.recompute(&f2, &cfg, &dom);
        let fresh_cfg = Cfg::new(&f2);
        let fresh_dom = DomTree::new(&f2, &fresh_cfg);
        let fresh = LoopInfo::new(&f2, &fresh_cfg, &fresh_dom);
        prop_assert_eq!(li.loops(), fresh.loops());
        prop_assert_eq!(li.irreducible_edges(), fresh.irreducible_edges());
        for b in (0..second.len() + 1).map(Block::new) {
            prop_assert_eq!(li.loop_of(b), fresh.loop_of(b));
        }
        // A retreating edge exists exactly when the reachable blocks have a cycle,
        // which is a natural loop or an irreducible one.
        let cyclic = !fresh.loops().is_empty() || !fresh.is_reducible();
        prop_assert_eq!(cfg.has_retreating_edge(), cyclic);
    }
}

proptest! {
    /// `Idoms` answers as `DomTree` does, both below and above the size where
    /// it switches from walking up the idoms to DFS numbers.
    #[test]
    fn idoms_agree_with_the_dom_tree_small_and_numbered(
        succs in (1usize..150).prop_flat_map(|n| {
            proptest::collection::vec(proptest::collection::vec(0..n, 0..=2), n)
        })
    ) {
        let f = build(&succs);
        let cfg = Cfg::new(&f);
        let dom = DomTree::new(&f, &cfg);
        let idoms = ir::dom::Idoms::new(&cfg);
        let n = succs.len();
        for a in 0..n {
            for b in 0..n {
                let (ba, bb) = (Block::new(a), Block::new(b));
                prop_assert_eq!(idoms.dominates(&cfg, ba, bb), dom.dominates(ba, bb), "{:?} dom {:?}", ba, bb);
            }
        }
    }
}
