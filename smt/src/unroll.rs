//! The unrolling order of a function's CFG: a depth-first search from the
//! entry marks the retreating edges (the edges to a block still on the DFS
//! stack); every cycle contains one, so the other edges form a DAG, visited in
//! reverse postorder. The encoder walks nodes `(block, d)` where `d` counts the
//! retreating edges taken so far.

use ir::{Block, Function};
use rustc_hash::FxHashSet;

/// The blocks reachable from the entry in reverse postorder, and the retreating edges.
pub struct Unrolling {
    /// Reachable blocks, a topological order of the non-retreating edges.
    pub order: Vec<Block>,
    /// Edges `(from, to)` that close a cycle.
    pub retreating: FxHashSet<(Block, Block)>,
}

impl Unrolling {
    /// Compute the order and the retreating edges of `f` (iteratively, no recursion).
    pub fn new(f: &Function) -> Unrolling {
        let n = f.blocks.len();
        let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
        let mut post = Vec::new();
        let mut retreating = FxHashSet::default();
        let entry = f.entry();
        let mut stack: Vec<(Block, Vec<Block>, usize)> = vec![(entry, f.successors(entry), 0)];
        state[entry.index()] = 1;
        while let Some((b, succs, i)) = stack.last_mut() {
            if *i < succs.len() {
                let s = succs[*i];
                *i += 1;
                let from = *b;
                match state[s.index()] {
                    0 => {
                        state[s.index()] = 1;
                        let ss = f.successors(s);
                        stack.push((s, ss, 0));
                    }
                    1 => {
                        retreating.insert((from, s));
                    }
                    _ => {}
                }
            } else {
                let b = *b;
                state[b.index()] = 2;
                post.push(b);
                stack.pop();
            }
        }
        post.reverse();
        Unrolling {
            order: post,
            retreating,
        }
    }

    /// Whether the function has a cycle (then verdicts are bounded).
    pub fn has_loops(&self) -> bool {
        !self.retreating.is_empty()
    }
}
