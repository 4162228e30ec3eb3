//! Per-block states stored flat: the analyses visit every block once and
//! write its state once, so each state is appended to one shared vector and
//! costs no allocation of its own.

use ir::Block;

/// One slice of `T` per block, written at most once each, in one vector.
#[derive(Clone, Debug)]
pub struct BlockSlices<T> {
    items: Vec<T>,
    range: Vec<Option<(u32, u32)>>,
}

impl<T> Default for BlockSlices<T> {
    fn default() -> Self {
        BlockSlices {
            items: Vec::new(),
            range: Vec::new(),
        }
    }
}

impl<T: Copy> BlockSlices<T> {
    /// Nothing stored yet, for a function with `num_blocks` block slots.
    pub fn new(num_blocks: usize) -> Self {
        BlockSlices {
            items: Vec::new(),
            range: vec![None; num_blocks],
        }
    }

    /// Forget everything, for a function with `num_blocks` block slots
    /// (keeping the storage).
    pub fn reset(&mut self, num_blocks: usize) {
        self.items.clear();
        self.range.clear();
        self.range.resize(num_blocks, None);
    }

    /// Store the state of `b` (a later call for the same block replaces it).
    pub fn set(&mut self, b: Block, items: &[T]) {
        let start = self.items.len() as u32;
        self.items.extend_from_slice(items);
        if b.index() >= self.range.len() {
            self.range.resize(b.index() + 1, None);
        }
        self.range[b.index()] = Some((start, self.items.len() as u32));
    }

    /// The state stored for `b`, if any.
    pub fn get(&self, b: Block) -> Option<&[T]> {
        let (lo, hi) = self.range.get(b.index()).copied().flatten()?;
        Some(&self.items[lo as usize..hi as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_kept_per_block() {
        let mut s: BlockSlices<u32> = BlockSlices::new(3);
        s.set(Block::new(2), &[1, 2]);
        s.set(Block::new(0), &[]);
        assert_eq!(s.get(Block::new(2)), Some(&[1, 2][..]));
        assert_eq!(s.get(Block::new(0)), Some(&[][..]));
        assert_eq!(s.get(Block::new(1)), None);
        s.set(Block::new(2), &[3]);
        assert_eq!(s.get(Block::new(2)), Some(&[3][..]));
    }
}
