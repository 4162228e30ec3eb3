//! The effect lattice's two representations (JSC-style leaf ranges and
//! Cinder-style leaf bits) must answer every query the same, and both must
//! agree with the tree relation of `ir::effects::HeapNode`.

use ir::effects::{module_heap_leaves, HeapNode};
use ir::{Module, Type};
use passes::effects::{BitHeapSet, HeapSet, HeapTree, RangeHeapSet};
use proptest::prelude::*;

/// A module with `structs` types of `fields` fields, `globals` globals, and
/// array types of up to `dims` nesting over i64 (through the first global).
fn module(structs: usize, fields: usize, globals: usize, dims: u8) -> Module {
    let mut m = Module::new();
    for s in 0..structs {
        let names: Vec<String> = (0..fields).map(|f| format!("f{f}")).collect();
        m.add_struct(
            &format!("T{s}"),
            names.iter().map(|n| (n.as_str(), Type::I64)).collect(),
        );
    }
    for g in 0..globals {
        let mut ty = Type::I64;
        if g == 0 {
            for _ in 0..dims {
                ty = ty.array_of();
            }
        }
        m.add_global(&format!("g{g}"), ty);
    }
    m
}

/// Every node of the module's tree, inner nodes included.
fn all_nodes(m: &Module) -> Vec<HeapNode> {
    let mut nodes = vec![
        HeapNode::World,
        HeapNode::Heap,
        HeapNode::Fields,
        HeapNode::Elements,
        HeapNode::Globals,
        HeapNode::Alloc,
        HeapNode::Output,
    ];
    for leaf in module_heap_leaves(m) {
        if !nodes.contains(&leaf) {
            nodes.push(leaf);
        }
    }
    nodes
}

fn set<S: HeapSet>(tree: &HeapTree, nodes: &[HeapNode], picks: &[usize]) -> S {
    let chosen: Vec<HeapNode> = picks.iter().map(|&i| nodes[i % nodes.len()]).collect();
    S::of_all(tree, &chosen)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn range_and_bit_sets_answer_every_query_the_same(
        structs in 0usize..4, fields in 0usize..4, globals in 0usize..4, dims in 0u8..3,
        a in prop::collection::vec(0usize..64, 0..5),
        b in prop::collection::vec(0usize..64, 0..5),
    ) {
        let m = module(structs, fields, globals, dims);
        let tree = HeapTree::new(&m);
        let nodes = all_nodes(&m);
        let (ra, rb): (RangeHeapSet, RangeHeapSet) = (set(&tree, &nodes, &a), set(&tree, &nodes, &b));
        let (ba, bb): (BitHeapSet, BitHeapSet) = (set(&tree, &nodes, &a), set(&tree, &nodes, &b));
        prop_assert_eq!(ra.leaves(), ba.leaves());
        prop_assert_eq!(ra.union(&rb).leaves(), ba.union(&bb).leaves());
        prop_assert_eq!(ra.intersection(&rb).leaves(), ba.intersection(&bb).leaves());
        prop_assert_eq!(ra.overlaps(&rb), ba.overlaps(&bb));
        prop_assert_eq!(ra.is_subset(&rb), ba.is_subset(&bb));
        prop_assert_eq!(ra.is_empty(), ba.is_empty());
        // Lattice laws on one representation (the other agrees by the above).
        prop_assert!(ra.is_subset(&ra.union(&rb)));
        prop_assert!(ra.intersection(&rb).is_subset(&ra));
        prop_assert_eq!(ra.overlaps(&rb), !ra.intersection(&rb).is_empty());
    }

    #[test]
    fn single_nodes_overlap_exactly_when_the_tree_says_so(
        structs in 0usize..4, fields in 0usize..4, globals in 0usize..4, dims in 0u8..3,
        i in 0usize..64, j in 0usize..64,
    ) {
        let m = module(structs, fields, globals, dims);
        let tree = HeapTree::new(&m);
        let nodes = all_nodes(&m);
        let (x, y) = (nodes[i % nodes.len()], nodes[j % nodes.len()]);
        let (sx, sy) = (RangeHeapSet::of(&tree, x), RangeHeapSet::of(&tree, y));
        prop_assert_eq!(sx.overlaps(&sy), HeapNode::overlaps(x, y), "{:?} vs {:?}", x, y);
        // As sets of memory: a node is the leaves below it (or itself, when it
        // has none); `Elements` with one array type is the same set as its leaf.
        let mut leaves = module_heap_leaves(&m);
        for group in [HeapNode::Fields, HeapNode::Elements, HeapNode::Globals] {
            if !leaves.iter().any(|&l| l.parent() == Some(group)) {
                leaves.push(group);
            }
        }
        let below = |n: HeapNode| -> Vec<HeapNode> { leaves.iter().copied().filter(|&l| n.contains(l)).collect() };
        let expected = below(x).iter().all(|l| below(y).contains(l));
        prop_assert_eq!(sx.is_subset(&sy), expected, "{:?} within {:?}", x, y);
    }
}

#[test]
fn world_covers_everything_and_siblings_are_disjoint() {
    let m = module(2, 2, 1, 1);
    let tree = HeapTree::new(&m);
    let world = BitHeapSet::of(&tree, HeapNode::World);
    for n in all_nodes(&m) {
        assert!(BitHeapSet::of(&tree, n).is_subset(&world), "{n:?}");
    }
    let field = |s, i| {
        HeapNode::Field(ir::FieldRef {
            ty: ir::StructId(s),
            index: i,
        })
    };
    let (a, b) = (
        RangeHeapSet::of(&tree, field(0, 0)),
        RangeHeapSet::of(&tree, field(0, 1)),
    );
    assert!(
        !a.overlaps(&b),
        "two fields of one type are different heaps"
    );
    let alloc = RangeHeapSet::of(&tree, HeapNode::Alloc);
    assert!(!alloc.overlaps(&RangeHeapSet::of(&tree, HeapNode::Heap)));
    assert!(RangeHeapSet::of(&tree, HeapNode::Fields).overlaps(&a));
}
