//! The scoped value table of GVN. Each numbered instruction's lock doubles as
//! an edge lock: an instruction with a lock is in the table and must not be
//! edited; [`ScopedTable::unlock`] takes it out first. Scopes follow the
//! dominator tree: leaving a block forgets what was inserted inside it.
//!
//! Layout (chosen for locality at any size): the numbered keys sit in one
//! stack in insertion order (scopes pop from its end), an open-addressing
//! index of 8-byte slots (hash fragment, stack position) finds them, and the
//! per-instruction lock is one `u32`. Nothing N-sized is cleared per run: a
//! finished walk has popped every scope, leaving the locks zero and the index
//! empty, so [`ScopedTable::reset`] only tidies what a walk left behind.

use super::key::Key;
use ir::Inst;
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

/// A hash table of keys to their first (dominating) instruction, with scopes.
#[derive(Default)]
pub struct ScopedTable {
    /// Open addressing with linear probing; a power-of-two length (or empty).
    slots: Vec<Slot>,
    /// How many slots are in use.
    live: usize,
    /// The numbered instructions in insertion order.
    entries: Vec<Entry>,
    /// Per instruction slot: 1 + its position in `entries` while locked, else 0.
    lock: Vec<u32>,
    /// Per open scope: the length of `entries` when it opened.
    marks: Vec<usize>,
}

/// One index slot: the low bits of the key's hash and 1 + the entry's
/// position (0: empty).
#[derive(Copy, Clone, Default)]
struct Slot {
    hash: u32,
    entry: u32,
}

/// One numbered instruction.
struct Entry {
    key: Key,
    hash: u64,
    inst: Inst,
    /// Whether the index still finds it (not unlocked, not shadowed).
    indexed: bool,
}

/// The hash the table files `k` under.
pub fn hash_key(k: &Key) -> u64 {
    let mut h = FxHasher::default();
    k.hash(&mut h);
    h.finish()
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
        // Locks left by an unfinished walk (normally none).
        for e in self.entries.drain(..) {
            if let Some(l) = self.lock.get_mut(e.inst.index()) {
                *l = 0;
            }
        }
        if self.lock.len() < num_insts {
            self.lock.resize(num_insts, 0);
        }
        self.marks.clear();
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

    /// Open a scope.
    pub fn push_scope(&mut self) {
        self.marks.push(self.entries.len());
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
        let mark = self.marks.get(keep).copied().unwrap_or(0);
        self.marks.truncate(keep);
        #[cfg(feature = "bug-zoo")]
        if crate::zoo::active(crate::zoo::Bug::GvnNonDominating) {
            // Planted (MoarVM expression JIT): what a branch numbered stays
            // visible in its siblings, whose uses it does not dominate.
            return;
        }
        if self.entries.len() - mark > mark.max(MIN_SLOTS) {
            for (k, e) in self.entries.iter().enumerate().skip(mark) {
                if self.lock[e.inst.index()] == k as u32 + 1 {
                    self.lock[e.inst.index()] = 0;
                }
            }
            self.entries.truncate(mark);
            self.slots.fill(Slot::default());
            self.live = 0;
            for k in 0..mark {
                if self.entries[k].indexed {
                    self.place(self.entries[k].hash, k as u32 + 1);
                    self.live += 1;
                }
            }
            return;
        }
        while self.entries.len() > mark {
            let inst = self.entries[self.entries.len() - 1].inst;
            if self.lock.get(inst.index()) == Some(&(self.entries.len() as u32)) {
                self.unlock(inst);
            }
            self.entries.pop();
        }
    }

    /// The first slot to probe for `hash`.
    #[inline]
    fn home(&self, hash: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// The slot holding the indexed entry with key `key` (hash `hash`).
    /// Always inlined: its callers are the hot lookups.
    #[inline(always)]
    fn slot_of(&self, key: &Key, hash: u64) -> Option<usize> {
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
            if slot.hash == hash as u32 {
                let e = &self.entries[slot.entry as usize - 1];
                if e.hash == hash && e.key == *key {
                    return Some(s);
                }
            }
            s = (s + 1) & mask;
        }
    }

    /// Whether the index is big enough for [`ScopedTable::prefetch`] to pay
    /// (a small one stays in the cache; prefetching it is only extra work).
    pub fn worth_prefetching(&self) -> bool {
        self.slots.len() >= PREFETCH_FROM_SLOTS
    }

    /// Start loading the slot a lookup of `key` reads first, so that a
    /// lookup a few instructions later finds it in the cache (a hint only:
    /// a key that turns out not to be looked up costs nothing else).
    pub fn prefetch(&self, key: &Key) {
        if self.slots.is_empty() {
            return;
        }
        let slot: *const Slot = &self.slots[self.home(hash_key(key))];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch only hints the cache; `slot` points into `slots`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// The instruction already numbered under `key`, if any.
    pub fn find(&self, key: &Key) -> Option<Inst> {
        self.find_hashed(key, hash_key(key))
    }

    /// [`ScopedTable::find`] of `key`, whose [`hash_key`] is `hash`.
    pub fn find_hashed(&self, key: &Key, hash: u64) -> Option<Inst> {
        let s = self.slot_of(key, hash)?;
        Some(self.entries[self.slots[s].entry as usize - 1].inst)
    }

    /// Number `inst` under `key` (locking its edges). A key numbered already
    /// now names `inst` (the earlier instruction stays locked).
    pub fn insert(&mut self, key: Key, inst: Inst) {
        let hash = hash_key(&key);
        self.insert_hashed(key, hash, inst);
    }

    /// [`ScopedTable::insert`] of `key`, whose [`hash_key`] is `hash`.
    pub fn insert_hashed(&mut self, key: Key, hash: u64, inst: Inst) {
        if inst.index() >= self.lock.len() {
            self.lock.resize(inst.index() + 1, 0);
        }
        let pos = self.entries.len() as u32 + 1;
        match self.slot_of(&key, hash) {
            Some(s) => {
                let old = std::mem::replace(&mut self.slots[s].entry, pos);
                self.entries[old as usize - 1].indexed = false;
            }
            None => {
                if 2 * (self.live + 1) > self.slots.len() {
                    self.grow();
                }
                self.place(hash, pos);
                self.live += 1;
            }
        }
        self.entries.push(Entry {
            key,
            hash,
            inst,
            indexed: true,
        });
        self.lock[inst.index()] = pos;
    }

    /// Put entry `pos` (1-based) with hash `hash` in the first free slot.
    fn place(&mut self, hash: u64, pos: u32) {
        let mask = self.slots.len() - 1;
        let mut s = self.home(hash);
        while self.slots[s].entry != 0 {
            s = (s + 1) & mask;
        }
        self.slots[s] = Slot {
            hash: hash as u32,
            entry: pos,
        };
    }

    /// Double the index (or make the first one).
    fn grow(&mut self) {
        let len = (2 * self.slots.len()).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); len]);
        for slot in old.into_iter().filter(|s| s.entry != 0) {
            let hash = self.entries[slot.entry as usize - 1].hash;
            self.place(hash, slot.entry);
        }
    }

    /// Whether `inst` is in the table (its edges are locked).
    pub fn is_locked(&self, inst: Inst) -> bool {
        self.lock.get(inst.index()).is_some_and(|&l| l != 0)
    }

    /// Take `inst` out of the table so that its edges may change.
    pub fn unlock(&mut self, inst: Inst) {
        let Some(l) = self.lock.get_mut(inst.index()) else {
            return;
        };
        let pos = std::mem::replace(l, 0);
        if pos == 0 {
            return;
        }
        let e = &mut self.entries[pos as usize - 1];
        if !std::mem::replace(&mut e.indexed, false) {
            return;
        }
        let hash = e.hash;
        let mask = self.slots.len() - 1;
        let mut s = self.home(hash);
        while self.slots[s].entry != pos {
            s = (s + 1) & mask;
        }
        self.remove_slot(s);
    }

    /// Empty slot `hole`, shifting back the entries of its probe run that
    /// would no longer be found.
    fn remove_slot(&mut self, mut hole: usize) {
        let mask = self.slots.len() - 1;
        self.slots[hole] = Slot::default();
        self.live -= 1;
        let mut s = (hole + 1) & mask;
        while self.slots[s].entry != 0 {
            let hash = self.entries[self.slots[s].entry as usize - 1].hash;
            let home = self.home(hash);
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
    use ir::{InstKind, Value};

    #[test]
    fn scopes_forget_and_unlock_removes() {
        let k = Key::Op(InstKind::Len(Value::new(0)));
        let mut t = ScopedTable::new(4);
        t.push_scope();
        t.insert(k.clone(), Inst::new(1));
        assert!(t.is_locked(Inst::new(1)));
        t.push_scope();
        assert_eq!(t.find(&k), Some(Inst::new(1)));
        t.pop_scope();
        assert_eq!(t.find(&k), Some(Inst::new(1)));
        t.unlock(Inst::new(1));
        assert_eq!(t.find(&k), None);
        assert!(!t.is_locked(Inst::new(1)));
        t.insert(k.clone(), Inst::new(2));
        t.pop_scope();
        assert_eq!(t.find(&k), None);
    }

    #[test]
    fn a_shadowed_key_stays_locked_and_a_reset_unlocks_everything() {
        let k = Key::Op(InstKind::Len(Value::new(0)));
        let mut t = ScopedTable::new(4);
        t.push_scope();
        t.insert(k.clone(), Inst::new(1));
        t.insert(k.clone(), Inst::new(2));
        assert_eq!(t.find(&k), Some(Inst::new(2)));
        assert!(t.is_locked(Inst::new(1)));
        t.unlock(Inst::new(1));
        assert_eq!(t.find(&k), Some(Inst::new(2)));
        t.reset(4);
        assert!(!t.is_locked(Inst::new(2)));
        assert_eq!(t.find(&k), None);
    }

    #[test]
    fn prefetching_is_only_a_hint() {
        let key = |i: usize| Key::Op(InstKind::Len(Value::new(i)));
        let mut t = ScopedTable::new(0);
        t.prefetch(&key(0));
        t.push_scope();
        let n = PREFETCH_FROM_SLOTS / 2;
        assert!(!t.worth_prefetching());
        for i in 0..n {
            t.prefetch(&key(i));
            t.insert(key(i), Inst::new(i));
        }
        assert!(t.worth_prefetching());
        for i in (0..n + 8).step_by(97) {
            t.prefetch(&key(i));
            assert_eq!(t.find(&key(i)), (i < n).then(|| Inst::new(i)));
        }
    }

    /// Many keys, scopes and unlocks in a pseudo-random order agree with a
    /// plain list searched from its end (what the table stands for).
    #[test]
    fn agrees_with_a_scoped_list_under_churn() {
        let mut t = ScopedTable::new(0);
        let mut model: Vec<Vec<(Key, Inst)>> = vec![Vec::new()];
        let mut rng = crate::peeps::worklist::SplitMix64::new(11);
        t.push_scope();
        let mut next = 0usize;
        for _ in 0..20_000 {
            let key = Key::Op(InstKind::Len(Value::new(rng.below(300))));
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
                2 => {
                    if let Some((_, i)) = found.cloned() {
                        t.unlock(i);
                        model.iter_mut().for_each(|s| s.retain(|e| e.1 != i));
                    }
                }
                _ if found.is_none() => {
                    let i = Inst::new(next);
                    next += 1;
                    t.insert(key.clone(), i);
                    model.last_mut().unwrap().push((key, i));
                }
                _ => {}
            }
        }
    }
}
