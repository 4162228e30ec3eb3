//! The scoped value table of GVN: keys to the first (dominating)
//! instruction numbered under them. Scopes follow the dominator tree:
//! leaving a block forgets what was inserted inside it.
//!
//! Layout (chosen for locality at any size): the numbered keys sit in one
//! stack of 24-byte entries in insertion order (scopes pop from its end),
//! phi entries in one [`KeyArena`] that pops with them, and an
//! open-addressing index of 8-byte slots (hash, stack position) finds them:
//! a probe reads one slot line, and only a slot whose hash matches sends it
//! to the stack. Nothing N-sized is cleared per run: a finished walk has
//! popped every scope, leaving the index empty, so [`ScopedTable::reset`]
//! only tidies what a walk left behind.

use super::key::{Key, KeyArena};
use ir::Inst;

/// A hash table of keys to their first (dominating) instruction, with scopes.
#[derive(Default)]
pub struct ScopedTable {
    /// Open addressing with linear probing; a power-of-two length (or empty).
    slots: Vec<Slot>,
    /// How many slots are in use.
    live: usize,
    /// The numbered instructions in insertion order.
    entries: Vec<Entry>,
    /// Per open scope: the lengths of `entries` and of the arena when it opened.
    marks: Vec<(u32, u32)>,
    /// The phi entries of the keys in `entries` (and of the key being looked up).
    arena: KeyArena,
}

/// One index slot: the key's hash and 1 + the entry's position (0: empty).
#[derive(Copy, Clone, Default)]
struct Slot {
    hash: u32,
    entry: u32,
}

/// One numbered instruction.
struct Entry {
    key: Key,
    hash: u32,
    inst: Inst,
}

/// The smallest index this table keeps.
const MIN_SLOTS: usize = 16;

/// From this many slots (512 KiB of index, 16k+ keys) on, a lookup's slot
/// is likely out of the cache, so [`ScopedTable::worth_prefetching`].
const PREFETCH_FROM_SLOTS: usize = 1 << 16;

impl ScopedTable {
    /// A table for a function with `num_insts` instruction slots.
    pub fn new(num_insts: usize) -> ScopedTable {
        let mut t = ScopedTable::default();
        t.reset(num_insts);
        t
    }

    /// Empty the table for a function with `num_insts` instruction slots,
    /// keeping its storage.
    pub fn reset(&mut self, num_insts: usize) {
        self.entries.clear();
        self.marks.clear();
        self.arena.truncate(0);
        // An index much bigger than this function needs is dropped, so that
        // small functions after a big one stay within a few cache lines.
        let wanted = (2 * num_insts).next_power_of_two().max(MIN_SLOTS);
        if self.slots.len() > 4 * wanted {
            self.slots = Vec::new();
            self.live = 0;
        }
        if self.live > 0 {
            self.slots.fill(Slot::default());
            self.live = 0;
        }
    }

    /// The arena phi keys are interned in (see [`ScopedTable::forget_keys_since`]).
    pub fn arena_mut(&mut self) -> &mut KeyArena {
        &mut self.arena
    }

    /// How much of the arena is in use: a key classified after this and
    /// not inserted is dropped with [`ScopedTable::forget_keys_since`].
    pub fn arena_mark(&self) -> usize {
        self.arena.len()
    }

    /// Drop what keys interned since `mark` (none of them was inserted).
    pub fn forget_keys_since(&mut self, mark: usize) {
        self.arena.truncate(mark);
    }

    /// The hash the table files `key` under.
    #[inline]
    pub fn hash(&self, key: &Key) -> u32 {
        self.arena.hash(key)
    }

    /// Open a scope.
    pub fn push_scope(&mut self) {
        self.marks
            .push((self.entries.len() as u32, self.arena.len() as u32));
    }

    /// Close the innermost scope, forgetting its insertions.
    pub fn pop_scope(&mut self) {
        self.pop_scopes(1);
    }

    /// Close the `n` innermost scopes at once. When they hold more entries
    /// than remain, the index is rebuilt from the remaining ones in one
    /// sequential sweep rather than taking each entry out of it (a deep
    /// dominator tree closes most of its scopes in one go at the end).
    pub fn pop_scopes(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let keep = self.marks.len().saturating_sub(n);
        let (mark, arena_mark) = self.marks.get(keep).copied().unwrap_or((0, 0));
        let mark = mark as usize;
        self.marks.truncate(keep);
        #[cfg(feature = "bug-zoo")]
        if crate::zoo::active(crate::zoo::Bug::GvnNonDominating) {
            // Planted (MoarVM expression JIT): what a branch numbered stays
            // visible in its siblings, whose uses it does not dominate.
            return;
        }
        self.arena.truncate(arena_mark as usize);
        if self.entries.len() - mark > mark.max(MIN_SLOTS) {
            self.entries.truncate(mark);
            self.slots.fill(Slot::default());
            self.live = 0;
            for k in 0..mark {
                self.place(self.entries[k].hash, k as u32 + 1);
            }
            self.live = mark;
            return;
        }
        while self.entries.len() > mark {
            let pos = self.entries.len() as u32;
            let mask = self.slots.len() - 1;
            let mut s = self.home(self.entries[pos as usize - 1].hash);
            while self.slots[s].entry != pos {
                s = (s + 1) & mask;
            }
            self.remove_slot(s);
            self.entries.pop();
        }
    }

    /// The first slot to probe for `hash`.
    #[inline]
    fn home(&self, hash: u32) -> usize {
        let bits = self.slots.len().trailing_zeros();
        ((u64::from(hash)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// The slot holding the entry with key `key` (hash `hash`). Always
    /// inlined: its callers are the hot lookups.
    #[inline(always)]
    fn slot_of(&self, key: &Key, hash: u32) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut s = self.home(hash);
        loop {
            let slot = self.slots[s];
            if slot.entry == 0 {
                return None;
            }
            if slot.hash == hash
                && self
                    .arena
                    .same(&self.entries[slot.entry as usize - 1].key, key)
            {
                return Some(s);
            }
            s = (s + 1) & mask;
        }
    }

    /// Whether the index is big enough for [`ScopedTable::prefetch`] to pay
    /// (a small one stays in the cache; prefetching it is only extra work).
    pub fn worth_prefetching(&self) -> bool {
        self.slots.len() >= PREFETCH_FROM_SLOTS
    }

    /// Start loading the slot a lookup of a key with hash `hash` reads
    /// first, so that a lookup a few instructions later finds it in the
    /// cache (a hint only: a key that turns out not to be looked up costs
    /// nothing else).
    pub fn prefetch(&self, hash: u32) {
        if self.slots.is_empty() {
            return;
        }
        let slot: *const Slot = &self.slots[self.home(hash)];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch only hints the cache; `slot` points into `slots`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// The instruction numbered under `key`, if any.
    pub fn find(&self, key: &Key) -> Option<Inst> {
        self.find_hashed(key, self.hash(key))
    }

    /// [`ScopedTable::find`] of `key`, whose [`ScopedTable::hash`] is `hash`.
    pub fn find_hashed(&self, key: &Key, hash: u32) -> Option<Inst> {
        let s = self.slot_of(key, hash)?;
        Some(self.entries[self.slots[s].entry as usize - 1].inst)
    }

    /// Number `inst` under `key`, which no open scope has numbered.
    pub fn insert(&mut self, key: Key, inst: Inst) {
        let hash = self.hash(&key);
        self.insert_hashed(key, hash, inst);
    }

    /// [`ScopedTable::insert`] of `key`, whose [`ScopedTable::hash`] is `hash`.
    pub fn insert_hashed(&mut self, key: Key, hash: u32, inst: Inst) {
        debug_assert!(self.slot_of(&key, hash).is_none(), "key numbered twice");
        if 2 * (self.live + 1) > self.slots.len() {
            self.grow();
        }
        let pos = self.entries.len() as u32 + 1;
        self.place(hash, pos);
        self.live += 1;
        self.entries.push(Entry { key, hash, inst });
    }

    /// Put entry `pos` (1-based) with hash `hash` in the first free slot.
    fn place(&mut self, hash: u32, pos: u32) {
        let mask = self.slots.len() - 1;
        let mut s = self.home(hash);
        while self.slots[s].entry != 0 {
            s = (s + 1) & mask;
        }
        self.slots[s] = Slot { hash, entry: pos };
    }

    /// Double the index (or make the first one).
    fn grow(&mut self) {
        let len = (2 * self.slots.len()).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); len]);
        for slot in old.into_iter().filter(|s| s.entry != 0) {
            self.place(slot.hash, slot.entry);
        }
    }

    /// Empty slot `hole`, shifting back the entries of its probe run that
    /// would no longer be found.
    fn remove_slot(&mut self, mut hole: usize) {
        let mask = self.slots.len() - 1;
        self.slots[hole] = Slot::default();
        self.live -= 1;
        let mut s = (hole + 1) & mask;
        while self.slots[s].entry != 0 {
            let home = self.home(self.slots[s].hash);
            // Move it into the hole unless its home lies cyclically in (hole, s].
            if (s.wrapping_sub(home) & mask) >= (s.wrapping_sub(hole) & mask) {
                self.slots[hole] = self.slots[s];
                self.slots[s] = Slot::default();
                hole = s;
            }
            s = (s + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gvn::key::op_key;
    use ir::{InstKind, Value};

    fn len_key(i: usize) -> Key {
        op_key(&InstKind::Len(Value::new(i)), |v| v).unwrap()
    }

    #[test]
    fn scopes_forget_what_they_numbered() {
        let k = len_key(0);
        let mut t = ScopedTable::new(4);
        t.push_scope();
        t.insert(k, Inst::new(1));
        t.push_scope();
        assert_eq!(t.find(&k), Some(Inst::new(1)));
        t.insert(len_key(1), Inst::new(2));
        t.pop_scope();
        assert_eq!(t.find(&k), Some(Inst::new(1)));
        assert_eq!(t.find(&len_key(1)), None);
        t.pop_scope();
        assert_eq!(t.find(&k), None);
        t.push_scope();
        t.insert(k, Inst::new(3));
        t.reset(4);
        assert_eq!(t.find(&k), None);
    }

    #[test]
    fn phi_keys_pop_with_their_scope() {
        let (b0, b1) = (ir::Block::new(0), ir::Block::new(1));
        let (x, y) = (Value::new(3), Value::new(4));
        let phi = |t: &mut ScopedTable, e: &[(ir::Block, Value)]| t.arena_mut().phi(b1, e);
        let mut t = ScopedTable::new(4);
        t.push_scope();
        let p = phi(&mut t, &[(b0, x), (b1, y)]);
        t.insert(p, Inst::new(1));
        t.push_scope();
        let mark = t.arena_mark();
        let q = phi(&mut t, &[(b1, y), (b0, x)]);
        assert_eq!(t.find(&q), Some(Inst::new(1)));
        t.forget_keys_since(mark);
        assert_eq!(t.arena_mark(), mark);
        let r = phi(&mut t, &[(b1, x), (b0, x)]);
        assert_eq!(t.find(&r), None);
        t.insert(r, Inst::new(2));
        t.pop_scope();
        assert_eq!(t.arena_mark(), mark);
        let r = phi(&mut t, &[(b1, x), (b0, x)]);
        assert_eq!(t.find(&r), None);
        assert_eq!(t.find(&p), Some(Inst::new(1)));
    }

    #[test]
    fn prefetching_is_only_a_hint() {
        let mut t = ScopedTable::new(0);
        t.prefetch(t.hash(&len_key(0)));
        t.push_scope();
        let n = PREFETCH_FROM_SLOTS / 2;
        assert!(!t.worth_prefetching());
        for i in 0..n {
            t.prefetch(t.hash(&len_key(i)));
            t.insert(len_key(i), Inst::new(i));
        }
        assert!(t.worth_prefetching());
        for i in (0..n + 8).step_by(97) {
            t.prefetch(t.hash(&len_key(i)));
            assert_eq!(t.find(&len_key(i)), (i < n).then(|| Inst::new(i)));
        }
    }

    /// Many keys and scopes in a pseudo-random order agree with a plain
    /// list searched from its end (what the table stands for).
    #[test]
    fn agrees_with_a_scoped_list_under_churn() {
        let mut t = ScopedTable::new(0);
        let mut model: Vec<Vec<(Key, Inst)>> = vec![Vec::new()];
        let mut rng = crate::peeps::worklist::SplitMix64::new(11);
        t.push_scope();
        let mut next = 0usize;
        for _ in 0..20_000 {
            let key = len_key(rng.below(300));
            let found = model.iter().flatten().rev().find(|(k, _)| *k == key);
            assert_eq!(t.find(&key), found.map(|e| e.1));
            match rng.below(10) {
                0 if model.len() > 1 => {
                    let n = 1 + rng.below(model.len() - 1);
                    t.pop_scopes(n);
                    model.truncate(model.len() - n);
                }
                1 => {
                    t.push_scope();
                    model.push(Vec::new());
                }
                _ if found.is_none() => {
                    let i = Inst::new(next);
                    next += 1;
                    t.insert(key, i);
                    model.last_mut().unwrap().push((key, i));
                }
                _ => {}
            }
        }
    }
}
