//! The peephole worklist: a set of instructions with a dedup bitset, pulled in
//! a pseudo-random order from a seeded generator so that no fixed visiting
//! order can make a rewrite pattern go quadratic, and so that the same seed
//! always gives the same result.

use ir::Inst;

/// A small deterministic generator (SplitMix64): plenty for picking list slots.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// Instructions waiting to be peepholed; each at most once.
#[derive(Clone, Debug)]
pub struct Worklist {
    items: Vec<Inst>,
    on_list: Vec<bool>,
    rng: SplitMix64,
}

impl Worklist {
    /// An empty worklist for a function with `num_insts` instruction slots.
    pub fn new(num_insts: usize, seed: u64) -> Worklist {
        Worklist {
            items: Vec::new(),
            on_list: vec![false; num_insts],
            rng: SplitMix64::new(seed),
        }
    }

    /// Add `inst` unless it is already waiting.
    pub fn push(&mut self, inst: Inst) {
        let i = inst.index();
        if i >= self.on_list.len() {
            self.on_list.resize(i + 1, false);
        }
        if !self.on_list[i] {
            self.on_list[i] = true;
            self.items.push(inst);
        }
    }

    /// Take a pseudo-randomly chosen waiting instruction.
    pub fn pop(&mut self) -> Option<Inst> {
        if self.items.is_empty() {
            return None;
        }
        let k = self.rng.below(self.items.len());
        let inst = self.items.swap_remove(k);
        self.on_list[inst.index()] = false;
        Some(inst)
    }

    /// Whether `inst` is waiting.
    pub fn contains(&self, inst: Inst) -> bool {
        self.on_list.get(inst.index()).copied().unwrap_or(false)
    }

    /// Whether nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many instructions are waiting.
    pub fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_are_deduplicated_and_everything_comes_out_once() {
        let mut w = Worklist::new(4, 7);
        for i in [0, 1, 2, 1, 0, 3, 3] {
            w.push(Inst::new(i));
        }
        assert_eq!(w.len(), 4);
        let mut seen: Vec<usize> = std::iter::from_fn(|| w.pop()).map(|i| i.index()).collect();
        seen.sort();
        assert_eq!(seen, [0, 1, 2, 3]);
        assert!(w.is_empty());
    }

    #[test]
    fn the_same_seed_gives_the_same_order_and_seeds_differ() {
        let order = |seed| {
            let mut w = Worklist::new(64, seed);
            (0..64).for_each(|i| w.push(Inst::new(i)));
            std::iter::from_fn(|| w.pop()).collect::<Vec<_>>()
        };
        assert_eq!(order(3), order(3));
        assert_ne!(order(3), order(4));
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = SplitMix64::new(0);
        assert!((0..1000).all(|_| r.below(5) < 5));
    }
}
