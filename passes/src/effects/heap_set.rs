//! Sets of abstract heaps: the effect lattice, implemented twice.
//!
//! [`RangeHeapSet`] keeps sorted disjoint leaf ranges (JavaScriptCore's abstract
//! heaps as pre-order intervals); [`BitHeapSet`] keeps one bit per leaf
//! (Cinder's alias classes). Both implement [`HeapSet`]; a property test checks
//! that they answer every query the same.

use super::tree::HeapTree;
use ir::effects::HeapNode;

/// The lattice operations every representation provides.
pub trait HeapSet: Clone + PartialEq + std::fmt::Debug {
    /// The empty set (bottom).
    fn empty(tree: &HeapTree) -> Self;
    /// The set of everything `node` covers.
    fn of(tree: &HeapTree, node: HeapNode) -> Self;
    /// Set union.
    fn union(&self, other: &Self) -> Self;
    /// Set intersection.
    fn intersection(&self, other: &Self) -> Self;
    /// Whether the two sets share a leaf: can the accesses interfere?
    fn overlaps(&self, other: &Self) -> bool;
    /// Whether every leaf of `self` is in `other`.
    fn is_subset(&self, other: &Self) -> bool;
    /// Whether the set is empty.
    fn is_empty(&self) -> bool;
    /// The leaves in the set, ascending (for comparing representations).
    fn leaves(&self) -> Vec<u32>;

    /// The union of the sets of several nodes.
    fn of_all(tree: &HeapTree, nodes: &[HeapNode]) -> Self {
        nodes
            .iter()
            .fold(Self::empty(tree), |acc, &n| acc.union(&Self::of(tree, n)))
    }
}

/// Sorted, disjoint, non-adjacent half-open leaf ranges.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct RangeHeapSet {
    ranges: Vec<(u32, u32)>,
}

impl RangeHeapSet {
    fn normalized(mut ranges: Vec<(u32, u32)>) -> RangeHeapSet {
        ranges.retain(|r| r.0 < r.1);
        ranges.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match out.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        RangeHeapSet { ranges: out }
    }
}

impl HeapSet for RangeHeapSet {
    fn empty(_: &HeapTree) -> Self {
        RangeHeapSet::default()
    }

    fn of(tree: &HeapTree, node: HeapNode) -> Self {
        RangeHeapSet::normalized(vec![tree.range(node)])
    }

    fn union(&self, other: &Self) -> Self {
        RangeHeapSet::normalized(self.ranges.iter().chain(&other.ranges).copied().collect())
    }

    fn intersection(&self, other: &Self) -> Self {
        let (mut i, mut j, mut out) = (0, 0, Vec::new());
        while i < self.ranges.len() && j < other.ranges.len() {
            let (a, b) = (self.ranges[i], other.ranges[j]);
            let (lo, hi) = (a.0.max(b.0), a.1.min(b.1));
            if lo < hi {
                out.push((lo, hi));
            }
            if a.1 < b.1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        RangeHeapSet::normalized(out)
    }

    fn overlaps(&self, other: &Self) -> bool {
        !self.intersection(other).is_empty()
    }

    fn is_subset(&self, other: &Self) -> bool {
        self.ranges.iter().all(|&(lo, hi)| {
            other
                .ranges
                .iter()
                .any(|&(olo, ohi)| olo <= lo && hi <= ohi)
        })
    }

    fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    fn leaves(&self) -> Vec<u32> {
        self.ranges.iter().flat_map(|&(lo, hi)| lo..hi).collect()
    }
}

/// One bit per leaf.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BitHeapSet {
    words: Vec<u64>,
}

impl HeapSet for BitHeapSet {
    fn empty(tree: &HeapTree) -> Self {
        BitHeapSet {
            words: vec![0; (tree.leaf_count() as usize).div_ceil(64)],
        }
    }

    fn of(tree: &HeapTree, node: HeapNode) -> Self {
        let mut s = BitHeapSet::empty(tree);
        let (lo, hi) = tree.range(node);
        for leaf in lo..hi {
            s.words[leaf as usize / 64] |= 1 << (leaf % 64);
        }
        s
    }

    fn union(&self, other: &Self) -> Self {
        BitHeapSet {
            words: self
                .words
                .iter()
                .zip(&other.words)
                .map(|(a, b)| a | b)
                .collect(),
        }
    }

    fn intersection(&self, other: &Self) -> Self {
        BitHeapSet {
            words: self
                .words
                .iter()
                .zip(&other.words)
                .map(|(a, b)| a & b)
                .collect(),
        }
    }

    fn overlaps(&self, other: &Self) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    fn is_subset(&self, other: &Self) -> bool {
        self.words
            .iter()
            .zip(&other.words)
            .all(|(a, b)| a & !b == 0)
    }

    fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    fn leaves(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for (i, &w) in self.words.iter().enumerate() {
            for b in 0..64 {
                if w & (1 << b) != 0 {
                    out.push((i * 64 + b) as u32);
                }
            }
        }
        out
    }
}
