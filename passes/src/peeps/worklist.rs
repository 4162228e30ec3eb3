//! The peephole worklist: a set of instructions with a dedup bitset, pulled in
//! a pseudo-random order from a seeded generator so that no fixed visiting
//! order can make a rewrite pattern go quadratic, and so that the same seed
//! always gives the same result. Instructions can also be taken out by name,
//! so the engine can visit a waiting input before its user.
//!
//! Locality: a list of at most [`UNIFORM_UP_TO`] instructions is pulled
//! uniformly at random (every program the generator makes is that small, so
//! the order shaking the harness relies on is exactly as before). A longer
//! list is pulled uniformly from its newest [`WINDOW`] entries: a pull moves
//! the newest entry into the hole, so the window stays the newest entries,
//! and the instructions of one window (neighbours in the layout, or the
//! neighbourhood of a recent change) are visited while they are in the
//! cache. Pulling from the whole list of a 100k-instruction function missed
//! the cache on almost every visit.

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

/// Lists up to this long are pulled uniformly.
pub const UNIFORM_UP_TO: usize = 1024;

/// Longer lists are pulled from their newest `WINDOW` entries.
pub const WINDOW: usize = 16;

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
    /// the storage. Only the positions of the instructions still waiting
    /// are cleared (the others are clear already: at 100k instructions,
    /// clearing them all wrote 400 kB), and the positions are never
    /// shortened, so that a bigger function after a smaller one does not
    /// clear them again.
    pub fn reset(&mut self, num_insts: usize, seed: u64) {
        for inst in self.items.drain(..) {
            self.pos[inst.index()] = NOT_ON_LIST;
        }
        self.items.reserve(num_insts);
        if self.pos.len() < num_insts {
            self.pos.resize(num_insts, NOT_ON_LIST);
        }
        self.rng = SplitMix64::new(seed);
    }

    /// Add the instructions of `insts`, each given once and none waiting
    /// yet: [`Worklist::push`] of each, without its checks.
    #[inline]
    pub fn fill(&mut self, insts: impl Iterator<Item = Inst>) {
        for inst in insts {
            debug_assert_eq!(self.pos[inst.index()], NOT_ON_LIST, "{inst:?} given twice");
            self.pos[inst.index()] = self.items.len() as u32;
            self.items.push(inst);
        }
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

    /// Make the list, filled in layout order, come out roughly in that order
    /// when it is longer than [`UNIFORM_UP_TO`] (the pull takes the newest
    /// entries first, so the list is reversed); a shorter list is left as it is.
    #[inline]
    pub fn pull_in_push_order(&mut self) {
        if self.items.len() > UNIFORM_UP_TO {
            self.reverse_items();
        }
    }

    /// The list, filled last instruction of the layout first, as
    /// [`Worklist::pull_in_push_order`] leaves a list filled in layout
    /// order: a longer list is already reversed, a shorter one is put back
    /// in layout order.
    #[inline]
    pub fn filled_last_first(&mut self) {
        if self.items.len() <= UNIFORM_UP_TO {
            self.reverse_items();
        }
    }

    fn reverse_items(&mut self) {
        self.items.reverse();
        for (k, inst) in self.items.iter().enumerate() {
            self.pos[inst.index()] = k as u32;
        }
    }

    /// Take a pseudo-randomly chosen waiting instruction: any of a list of at
    /// most [`UNIFORM_UP_TO`], else one of the newest [`WINDOW`].
    pub fn pop(&mut self) -> Option<Inst> {
        self.pop_looking_ahead(|_, _| {})
    }

    /// [`Worklist::pop`]; for a list longer than [`UNIFORM_UP_TO`], first
    /// `ahead` on the newest entry outside the window (the one the pulls
    /// come to next, [`WINDOW`] pulls from now unless pushes come first)
    /// and on an entry that came into the window about `WINDOW / 2` pulls
    /// ago: time to bring what they read into the cache.
    #[inline]
    pub fn pop_looking_ahead(&mut self, ahead: impl FnOnce(Inst, Inst)) -> Option<Inst> {
        let len = self.items.len();
        if len == 0 {
            return None;
        }
        // Short lists: `0 + below(len)`, the uniform pull.
        let span = if len > UNIFORM_UP_TO {
            ahead(
                self.items[len - WINDOW - 1],
                self.items[len - WINDOW / 2 - 1],
            );
            WINDOW
        } else {
            len
        };
        let k = len - span + self.rng.below(span);
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
    fn looking_ahead_names_the_next_entries_of_long_lists_and_pulls_as_pop() {
        let n = UNIFORM_UP_TO + 100;
        let (mut a, mut b) = (Worklist::new(n, 3), Worklist::new(n, 3));
        a.fill((0..n).map(Inst::new));
        b.fill((0..n).map(Inst::new));
        let mut asked = 0;
        loop {
            let len = b.len();
            let expect = (len > UNIFORM_UP_TO)
                .then(|| (b.items[len - WINDOW - 1], b.items[len - WINDOW / 2 - 1]));
            let mut got = None;
            let pulled = b.pop_looking_ahead(|far, near| got = Some((far, near)));
            assert_eq!(got, expect);
            asked += usize::from(got.is_some());
            assert_eq!(pulled, a.pop());
            if pulled.is_none() {
                break;
            }
        }
        assert_eq!(asked, 100);
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

    /// Drain `w`, holding the waiting instructions in `left` oldest first;
    /// every pull of a list longer than `UNIFORM_UP_TO` must be among the
    /// `WINDOW` newest (`newest`) or oldest entries left.
    fn drain_checking_window(w: &mut Worklist, mut left: Vec<usize>, newest: bool) {
        while let Some(inst) = w.pop() {
            let k = left.iter().position(|&i| i == inst.index()).unwrap();
            let rank = if newest { left.len() - 1 - k } else { k };
            if left.len() > UNIFORM_UP_TO {
                assert!(rank < WINDOW, "pulled the {rank}th of {}", left.len());
            }
            left.remove(k);
        }
        assert!(left.is_empty());
    }

    #[test]
    fn a_long_list_is_pulled_from_its_newest_window() {
        let n = UNIFORM_UP_TO + 3 * WINDOW;
        let mut w = Worklist::new(n + 1, 2);
        (0..n).for_each(|i| w.push(Inst::new(i)));
        let first = w.pop().unwrap().index();
        assert!(first >= n - WINDOW);
        // A push joins the window at once.
        w.push(Inst::new(n));
        let left = (0..=n).filter(|&i| i != first).collect();
        drain_checking_window(&mut w, left, true);
    }

    #[test]
    fn a_long_list_in_push_order_comes_out_roughly_in_that_order() {
        let n = UNIFORM_UP_TO * 3;
        let order = |seed| {
            let mut w = Worklist::new(n, seed);
            (0..n).for_each(|i| w.push(Inst::new(i)));
            w.pull_in_push_order();
            std::iter::from_fn(|| w.pop()).collect::<Vec<_>>()
        };
        let mut w = Worklist::new(n, 6);
        (0..n).for_each(|i| w.push(Inst::new(i)));
        w.pull_in_push_order();
        drain_checking_window(&mut w, (0..n).collect(), false);
        assert_eq!(order(6), order(6));
        assert_ne!(order(7), order(6));
    }

    #[test]
    fn a_list_filled_last_first_pulls_as_one_filled_in_order() {
        for n in [5, UNIFORM_UP_TO, UNIFORM_UP_TO + 1, 3 * UNIFORM_UP_TO] {
            let (mut a, mut b) = (Worklist::new(n, 8), Worklist::new(n, 8));
            a.fill((0..n).map(Inst::new));
            a.pull_in_push_order();
            b.fill((0..n).rev().map(Inst::new));
            b.filled_last_first();
            let drain = |w: &mut Worklist| std::iter::from_fn(|| w.pop()).collect::<Vec<_>>();
            assert_eq!(drain(&mut a), drain(&mut b), "{n}");
        }
    }

    #[test]
    fn a_short_list_keeps_its_uniform_pull() {
        let mut w = Worklist::new(UNIFORM_UP_TO, 4);
        (0..UNIFORM_UP_TO).for_each(|i| w.push(Inst::new(i)));
        w.pull_in_push_order();
        let mut rng = SplitMix64::new(4);
        let mut model: Vec<usize> = (0..UNIFORM_UP_TO).collect();
        while let Some(inst) = w.pop() {
            assert_eq!(inst.index(), model.swap_remove(rng.below(model.len())));
        }
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = SplitMix64::new(0);
        assert!((0..1000).all(|_| r.below(5) < 5));
    }
}
