//! The peephole worklist: a set of instructions with a dedup bitset, pulled in
//! a pseudo-random order from a seeded generator so that no fixed visiting
//! order can make a rewrite pattern go quadratic, and so that the same seed
//! always gives the same result. Instructions can also be taken out by name,
//! so the engine can visit a waiting input before its user.

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
    /// Per instruction: its position in `items`, or `NOT_ON_LIST`.
    pos: Vec<u32>,
    rng: SplitMix64,
}

const NOT_ON_LIST: u32 = u32::MAX;

impl Default for Worklist {
    /// An empty worklist with seed 0.
    fn default() -> Worklist {
        Worklist::new(0, 0)
    }
}

impl Worklist {
    /// An empty worklist for a function with `num_insts` instruction slots.
    pub fn new(num_insts: usize, seed: u64) -> Worklist {
        Worklist {
            items: Vec::with_capacity(num_insts),
            pos: vec![NOT_ON_LIST; num_insts],
            rng: SplitMix64::new(seed),
        }
    }

    /// Empty the list and restart it as [`Worklist::new`] would, keeping
    /// the storage.
    pub fn reset(&mut self, num_insts: usize, seed: u64) {
        self.items.clear();
        self.items.reserve(num_insts);
        self.pos.clear();
        self.pos.resize(num_insts, NOT_ON_LIST);
        self.rng = SplitMix64::new(seed);
    }

    /// Add `inst` unless it is already waiting.
    pub fn push(&mut self, inst: Inst) {
        let i = inst.index();
        if i >= self.pos.len() {
            self.pos.resize(i + 1, NOT_ON_LIST);
        }
        if self.pos[i] == NOT_ON_LIST {
            self.pos[i] = self.items.len() as u32;
            self.items.push(inst);
        }
    }

    fn take_at(&mut self, k: usize) -> Inst {
        let inst = self.items.swap_remove(k);
        self.pos[inst.index()] = NOT_ON_LIST;
        if let Some(&moved) = self.items.get(k) {
            self.pos[moved.index()] = k as u32;
        }
        inst
    }

    /// Take `inst` off the list if it is waiting; returns whether it was.
    pub fn remove(&mut self, inst: Inst) -> bool {
        match self.pos.get(inst.index()) {
            Some(&k) if k != NOT_ON_LIST => {
                self.take_at(k as usize);
                true
            }
            _ => false,
        }
    }

    /// Take a pseudo-randomly chosen waiting instruction.
    pub fn pop(&mut self) -> Option<Inst> {
        if self.items.is_empty() {
            return None;
        }
        let k = self.rng.below(self.items.len());
        Some(self.take_at(k))
    }

    /// Whether `inst` is waiting.
    pub fn contains(&self, inst: Inst) -> bool {
        self.pos
            .get(inst.index())
            .is_some_and(|&k| k != NOT_ON_LIST)
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
    fn remove_takes_exactly_that_instruction() {
        let mut w = Worklist::new(8, 1);
        (0..8).for_each(|i| w.push(Inst::new(i)));
        assert!(w.remove(Inst::new(3)));
        assert!(!w.remove(Inst::new(3)));
        assert!(!w.contains(Inst::new(3)));
        let mut rest: Vec<usize> = std::iter::from_fn(|| w.pop()).map(|i| i.index()).collect();
        rest.sort();
        assert_eq!(rest, [0, 1, 2, 4, 5, 6, 7]);
    }

    #[test]
    fn a_reset_list_behaves_like_a_new_one() {
        let drain = |w: &mut Worklist| std::iter::from_fn(|| w.pop()).collect::<Vec<_>>();
        let mut reused = Worklist::new(3, 9);
        (0..3).for_each(|i| reused.push(Inst::new(i)));
        reused.pop();
        reused.reset(16, 5);
        let mut fresh = Worklist::new(16, 5);
        for w in [&mut reused, &mut fresh] {
            (0..16).rev().for_each(|i| w.push(Inst::new(i)));
        }
        assert_eq!(drain(&mut reused), drain(&mut fresh));
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = SplitMix64::new(0);
        assert!((0..1000).all(|_| r.below(5) < 5));
    }
}
