//! The abstract heap tree of IR.md §8, built per module, with every node
//! numbered so that sets of nodes can be stored as leaf ranges or leaf bits.
//!
//! Leaves are the nodes without children (including an inner node such as
//! `Elements` when the module has no array type, so that it still stands for
//! something). Leaves are numbered in pre-order, so every node covers one
//! contiguous range of leaf numbers: that is what makes JavaScriptCore's
//! range representation and Cinder's bitset representation agree exactly.

use ir::effects::{module_heap_leaves, HeapNode};
use ir::Module;
use rustc_hash::FxHashMap;

/// A node of the tree and the leaves below it.
#[derive(Clone, Debug)]
pub struct TreeNode {
    /// Which abstract heap this is.
    pub node: HeapNode,
    /// The parent node's index (`None` for `World`).
    pub parent: Option<usize>,
    /// The first leaf number below (or at) this node.
    pub first_leaf: u32,
    /// One past the last leaf number below this node.
    pub end_leaf: u32,
}

/// The abstract heap tree of one module.
#[derive(Clone, Debug)]
pub struct HeapTree {
    nodes: Vec<TreeNode>,
    index: FxHashMap<HeapNode, usize>,
    leaves: u32,
}

impl HeapTree {
    /// Build the tree for `module`: World ⊃ {Heap ⊃ {Fields, Elements, Globals}, Alloc, Output}.
    pub fn new(module: &Module) -> HeapTree {
        let leaves = module_heap_leaves(module);
        let children_of = |group: HeapNode| -> Vec<HeapNode> {
            leaves
                .iter()
                .copied()
                .filter(|l| l.parent() == Some(group))
                .collect()
        };
        let mut tree = HeapTree {
            nodes: Vec::new(),
            index: FxHashMap::default(),
            leaves: 0,
        };
        let world = tree.open(HeapNode::World, None);
        let heap = tree.open(HeapNode::Heap, Some(world));
        for group in [HeapNode::Fields, HeapNode::Elements, HeapNode::Globals] {
            let g = tree.open(group, Some(heap));
            for leaf in children_of(group) {
                let l = tree.open(leaf, Some(g));
                tree.close(l);
            }
            tree.close(g);
        }
        tree.close(heap);
        for top in [HeapNode::Alloc, HeapNode::Output] {
            let t = tree.open(top, Some(world));
            tree.close(t);
        }
        tree.close(world);
        tree
    }

    fn open(&mut self, node: HeapNode, parent: Option<usize>) -> usize {
        let i = self.nodes.len();
        self.nodes.push(TreeNode {
            node,
            parent,
            first_leaf: self.leaves,
            end_leaf: self.leaves,
        });
        self.index.insert(node, i);
        i
    }

    fn close(&mut self, i: usize) {
        if self.nodes[i].first_leaf == self.leaves {
            // No leaf below: the node is a leaf itself.
            self.leaves += 1;
        }
        self.nodes[i].end_leaf = self.leaves;
    }

    /// The number of leaves.
    pub fn leaf_count(&self) -> u32 {
        self.leaves
    }

    /// Every node, in pre-order.
    pub fn nodes(&self) -> &[TreeNode] {
        &self.nodes
    }

    /// The leaf range `[first, end)` that `node` covers. A node the module does not
    /// declare (a field of another module, say) falls back to its nearest
    /// ancestor that exists, which only ever over-approximates.
    pub fn range(&self, node: HeapNode) -> (u32, u32) {
        let mut n = node;
        loop {
            if let Some(&i) = self.index.get(&n) {
                return (self.nodes[i].first_leaf, self.nodes[i].end_leaf);
            }
            match n.parent() {
                Some(p) => n = p,
                None => return (0, self.leaves),
            }
        }
    }
}
