//! The phis a function came into the engine with, grouped by block. The
//! engine never creates a phi and never moves one (a merge turns the merged
//! block's phis into copies or removes them before it moves its
//! instructions), so the placed phis of a block are always among those it
//! came in with, in the same order. In a function too big for the cache,
//! asking for them reads only the phis themselves, not the block's list and
//! every instruction on it (at 100k instructions, those reads of the CFG
//! cleanup's blocks missed the cache on most instructions), and a block
//! without phis is answered from a dense per-block table; a small function
//! builds no table and reads its blocks, which are in the cache.

use ir::{Block, Inst};

/// No phi of this block.
const NONE: u32 = u32::MAX;

/// The incoming phis in layout order, and where each block's begin.
#[derive(Default)]
pub(crate) struct BlockPhis {
    /// Each placed phi and its block, in layout order.
    phis: Vec<(Inst, Block)>,
    /// Per block slot: the index in `phis` of its first phi, or [`NONE`]
    /// (built only for functions with phis).
    first: Vec<u32>,
    /// `first` is built and every block's phis are one run of `phis`
    /// (false for small functions, and for lists that disagree with the
    /// instructions' blocks: then the blocks are read).
    grouped: bool,
}

impl BlockPhis {
    /// Forget the last function's phis.
    pub(crate) fn clear(&mut self) {
        self.phis.clear();
        self.grouped = false;
    }

    /// The walk over the function met the phi `inst`, placed in `block`
    /// (an unplaced one is left out).
    #[inline]
    pub(crate) fn note(&mut self, inst: Inst, block: Option<Block>) {
        if let Some(b) = block {
            self.phis.push((inst, b));
        }
    }

    /// The walk met the phis last first: put them in walk order.
    pub(crate) fn reverse(&mut self) {
        self.phis.reverse();
    }

    /// The walk is over: index the phis by block (`blocks` block slots), so
    /// that [`BlockPhis::of`] answers (without this, it answers `None`).
    pub(crate) fn index(&mut self, blocks: usize) {
        if self.phis.is_empty() {
            return;
        }
        self.first.clear();
        self.first.resize(blocks, NONE);
        self.grouped = true;
        for k in 0..self.phis.len() {
            let b = self.phis[k].1;
            if k > 0 && self.phis[k - 1].1 == b {
                continue;
            }
            match self.first.get_mut(b.index()) {
                Some(f) if *f == NONE => *f = k as u32,
                _ => self.grouped = false,
            }
        }
    }

    /// Whether [`BlockPhis::of`] answers (the phis are indexed by block).
    #[inline]
    pub(crate) fn is_indexed(&self) -> bool {
        self.grouped
    }

    /// Whether the function came in with no placed phi.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.phis.is_empty()
    }

    /// Every phi the function came in with, in layout order.
    pub(crate) fn all(&self) -> impl Iterator<Item = Inst> + '_ {
        self.phis.iter().map(|e| e.0)
    }

    /// The phis `b` came in with, in its list's order (none when not
    /// [`BlockPhis::is_indexed`]).
    pub(crate) fn of(&self, b: Block) -> impl Iterator<Item = Inst> + '_ {
        let start = match self.first.get(b.index()) {
            Some(&k) if self.grouped && k != NONE => k as usize,
            _ => self.phis.len(),
        };
        let run = self.phis[start..].iter().take_while(move |e| e.1 == b);
        run.map(|e| e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(p: &BlockPhis, b: usize) -> Option<Vec<usize>> {
        p.is_indexed()
            .then(|| p.of(Block::new(b)).map(|i| i.index()).collect())
    }

    #[test]
    fn phis_are_found_by_block_in_walk_order() {
        let mut p = BlockPhis::default();
        p.clear();
        for (i, b) in [(9, 2), (8, 2), (4, 0)] {
            p.note(Inst::new(i), Some(Block::new(b)));
        }
        p.reverse();
        p.index(4);
        assert_eq!(of(&p, 0), Some(vec![4]));
        assert_eq!(of(&p, 2), Some(vec![8, 9]));
        assert_eq!(of(&p, 1), Some(vec![]));
        assert_eq!(of(&p, 7), Some(vec![]));
        assert_eq!(p.all().map(|i| i.index()).collect::<Vec<_>>(), [4, 8, 9]);
    }

    #[test]
    fn a_block_met_twice_is_not_answered() {
        let mut p = BlockPhis::default();
        for (i, b) in [(1, 0), (2, 1), (3, 0)] {
            p.note(Inst::new(i), Some(Block::new(b)));
        }
        p.index(2);
        assert_eq!(of(&p, 0), None);
        p.clear();
        p.index(2);
        assert!(p.is_empty() && of(&p, 0).is_none());
        p.note(Inst::new(1), Some(Block::new(0)));
        p.note(Inst::new(2), None);
        assert!(!p.is_empty() && of(&p, 0).is_none(), "not indexed");
    }
}
