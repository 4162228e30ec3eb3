//! The effect lattice: the per-module abstract heap tree and sets over it.
//! Instruction effects themselves come only from `ir::effects`, the one table.

pub mod heap_set;
pub mod tree;

pub use heap_set::{BitHeapSet, HeapSet, RangeHeapSet};
pub use tree::HeapTree;
