//! The scoped value table of GVN: keys to the first (dominating)
//! instruction numbered under them. Scopes follow the dominator tree:
//! leaving a block forgets what was inserted inside it.
//!
//! Layout (chosen for locality at any size): the numbered keys sit in one
//! stack of 28-byte entries in insertion order (scopes pop from its end),
//! phi entries in one [`KeyArena`] that pops with them. The index is filed
//! by value, not by hash alone: a key goes in the 64-byte line of its
//! youngest operand, or of its second youngest when that line is full
//! ([`KeyArena::anchors`]; one line of 8 slots per 4 values), so a walk
//! that makes keys over values made one after the other reads the index
//! front to back, one line at a time, however big it is: a hash-ordered
//! index of a 100k-instruction function misses the cache on almost every
//! lookup. A lookup reads one line, or two; a key whose lines are full (or
//! that names no value) goes to a small open-addressing index instead,
//! which a full line sends lookups on to. Nothing N-sized is
//! cleared per run: a finished walk has popped every scope, leaving the
//! index empty, so [`ScopedTable::reset`] only tidies what a walk left
//! behind.

use super::key::{Key, KeyArena, NO_ANCHOR};
use ir::Inst;

/// A hash table of keys to their first (dominating) instruction, with scopes.
#[derive(Default)]
pub struct ScopedTable {
    /// The index lines, one per [`VALUES_PER_LINE`] values.
    lines: Vec<Line>,
    /// Per line, one bit: whether a key of that line went to `spill`.
    spilled: Vec<u64>,
    /// The keys no line took: open addressing with linear probing, a
    /// power-of-two length (or empty).
    spill: Vec<Slot>,
    /// How many slots of `spill` are in use.
    spill_live: usize,
    /// The numbered instructions in insertion order.
    entries: Vec<Entry>,
    /// Per open scope: the lengths of `entries` and of the arena when it opened.
    marks: Vec<(u32, u32)>,
    /// The phi entries of the keys in `entries` (and of the key being looked up).
    arena: KeyArena,
}

/// How many values share one index line.
const VALUES_PER_LINE: u32 = 4;

/// The slots of one line.
const LINE_SLOTS: usize = 8;

/// One cache line of the index: the hashes of its keys and 1 + their
/// entries' positions (0: an empty slot).
#[derive(Copy, Clone, Default)]
#[repr(C, align(64))]
struct Line {
    hash: [u32; LINE_SLOTS],
    entry: [u32; LINE_SLOTS],
}

impl Line {
    /// The slots whose hash is `hash`, one bit each (empty ones included).
    #[inline(always)]
    fn matches(&self, hash: u32) -> u32 {
        let mut m = 0;
        for (i, &h) in self.hash.iter().enumerate() {
            m |= u32::from(h == hash) << i;
        }
        m
    }
}

/// One slot of the spill index: the key's hash and 1 + the entry's position
/// (0: empty).
#[derive(Copy, Clone, Default)]
struct Slot {
    hash: u32,
    entry: u32,
}

/// No line (in [`ScopedTable::lines_of`]).
const NO_LINE: usize = usize::MAX;

/// Where an entry is filed: a line index, or this for the spill index.
const SPILL: u32 = u32::MAX;

/// One numbered instruction.
struct Entry {
    key: Key,
    hash: u32,
    inst: Inst,
    /// Its line, or [`SPILL`].
    home: u32,
}

/// The smallest spill index this table keeps.
const MIN_SLOTS: usize = 16;

impl ScopedTable {
    /// A table for a function with `num_values` values.
    pub fn new(num_values: usize) -> ScopedTable {
        let mut t = ScopedTable::default();
        t.reset(num_values);
        t
    }

    /// Empty the table for a function with `num_values` values, keeping its
    /// storage.
    pub fn reset(&mut self, num_values: usize) {
        if !self.entries.is_empty() {
            // A walk that did not pop all its scopes (the planted bug).
            self.lines.fill(Line::default());
            self.spill.fill(Slot::default());
            self.spill_live = 0;
            self.entries.clear();
        }
        self.marks.clear();
        self.arena.truncate(0);
        let lines = num_values.div_ceil(VALUES_PER_LINE as usize);
        // Lines much beyond what this function needs are dropped (memory
        // only: a small function reads the first lines alone).
        if self.lines.len() > 4 * lines.max(64) {
            self.lines = Vec::new();
        }
        if self.lines.len() < lines {
            self.lines.resize(lines, Line::default());
        }
        self.spilled.clear();
        self.spilled.resize(lines.div_ceil(64), 0);
        if self.spill.len() > 4 * MIN_SLOTS.max(2 * self.spill_live) {
            self.spill = Vec::new();
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

    /// Close the `n` innermost scopes at once.
    pub fn pop_scopes(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let keep = self.marks.len().saturating_sub(n);
        let (mark, arena_mark) = self.marks.get(keep).copied().unwrap_or((0, 0));
        self.marks.truncate(keep);
        #[cfg(feature = "bug-zoo")]
        if crate::zoo::active(crate::zoo::Bug::GvnNonDominating) {
            // Planted (MoarVM expression JIT): what a branch numbered stays
            // visible in its siblings, whose uses it does not dominate.
            return;
        }
        self.arena.truncate(arena_mark as usize);
        while self.entries.len() > mark as usize {
            let pos = self.entries.len() as u32;
            let e = self.entries.pop().expect("above the mark");
            if e.home == SPILL {
                let mask = self.spill.len() - 1;
                let mut s = self.spill_home(e.hash);
                while self.spill[s].entry != pos {
                    s = (s + 1) & mask;
                }
                self.remove_spill_slot(s);
            } else {
                let line = &mut self.lines[e.home as usize];
                let i = line.entry.iter().position(|&p| p == pos);
                let i = i.expect("a line entry is in its line");
                line.entry[i] = 0;
                line.hash[i] = 0;
            }
        }
    }

    /// The lines `key` may be filed in, in the order tried ([`NO_LINE`]:
    /// none): those of its two youngest values, once each.
    #[inline(always)]
    fn lines_of(&self, key: &Key) -> [usize; 2] {
        let [a, b] = self
            .arena
            .anchors(key)
            .map(|v| match (v / VALUES_PER_LINE) as usize {
                l if v != NO_ANCHOR && l < self.lines.len() => l,
                _ => NO_LINE,
            });
        if a == b || a == NO_LINE {
            [b.min(a), NO_LINE]
        } else {
            [a, b]
        }
    }

    /// Whether a key of `line` went to the spill index.
    fn has_spilled(&self, line: usize) -> bool {
        self.spilled[line / 64] & (1 << (line % 64)) != 0
    }

    /// The first spill slot to probe for `hash`.
    #[inline]
    fn spill_home(&self, hash: u32) -> usize {
        let bits = self.spill.len().trailing_zeros();
        ((u64::from(hash)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// Whether entry `pos` (1-based) has key `key`.
    #[inline(always)]
    fn is(&self, pos: u32, key: &Key) -> bool {
        self.arena.same(&self.entries[pos as usize - 1].key, key)
    }

    /// The entry (1-based) filed under `key` (hash `hash`), if any. Always
    /// inlined: its callers are the hot lookups.
    #[inline(always)]
    fn entry_of(&self, key: &Key, hash: u32) -> Option<u32> {
        for l in self.lines_of(key) {
            if l == NO_LINE {
                break;
            }
            let line = &self.lines[l];
            let mut m = line.matches(hash);
            while m != 0 {
                let pos = line.entry[m.trailing_zeros() as usize];
                if pos != 0 && self.is(pos, key) {
                    return Some(pos);
                }
                m &= m - 1;
            }
            if !self.has_spilled(l) {
                return None;
            }
        }
        let s = self.spill_slot_of(key, hash)?;
        Some(self.spill[s].entry)
    }

    /// The spill slot holding the entry with key `key` (hash `hash`).
    fn spill_slot_of(&self, key: &Key, hash: u32) -> Option<usize> {
        if self.spill.is_empty() {
            return None;
        }
        let mask = self.spill.len() - 1;
        let mut s = self.spill_home(hash);
        loop {
            let slot = self.spill[s];
            if slot.entry == 0 {
                return None;
            }
            if slot.hash == hash && self.is(slot.entry, key) {
                return Some(s);
            }
            s = (s + 1) & mask;
        }
    }

    /// The instruction numbered under `key`, if any.
    pub fn find(&self, key: &Key) -> Option<Inst> {
        self.find_hashed(key, self.hash(key))
    }

    /// [`ScopedTable::find`] of `key`, whose [`ScopedTable::hash`] is `hash`.
    pub fn find_hashed(&self, key: &Key, hash: u32) -> Option<Inst> {
        let pos = self.entry_of(key, hash)?;
        Some(self.entries[pos as usize - 1].inst)
    }

    /// Number `inst` under `key`, which no open scope has numbered.
    pub fn insert(&mut self, key: Key, inst: Inst) {
        let hash = self.hash(&key);
        self.insert_hashed(key, hash, inst);
    }

    /// [`ScopedTable::insert`] of `key`, whose [`ScopedTable::hash`] is `hash`.
    pub fn insert_hashed(&mut self, key: Key, hash: u32, inst: Inst) {
        debug_assert!(self.entry_of(&key, hash).is_none(), "key numbered twice");
        let pos = self.entries.len() as u32 + 1;
        let mut home = SPILL;
        for l in self.lines_of(&key) {
            if l == NO_LINE {
                break;
            }
            let line = &mut self.lines[l];
            match line.entry.iter().position(|&p| p == 0) {
                Some(i) => {
                    line.entry[i] = pos;
                    line.hash[i] = hash;
                    home = l as u32;
                    break;
                }
                None => self.spilled[l / 64] |= 1 << (l % 64),
            }
        }
        if home == SPILL {
            if 2 * (self.spill_live + 1) > self.spill.len() {
                self.grow_spill();
            }
            self.place(hash, pos);
            self.spill_live += 1;
        }
        self.entries.push(Entry {
            key,
            hash,
            inst,
            home,
        });
    }

    /// Put entry `pos` (1-based) with hash `hash` in the first free spill slot.
    fn place(&mut self, hash: u32, pos: u32) {
        let mask = self.spill.len() - 1;
        let mut s = self.spill_home(hash);
        while self.spill[s].entry != 0 {
            s = (s + 1) & mask;
        }
        self.spill[s] = Slot { hash, entry: pos };
    }

    /// Double the spill index (or make the first one).
    fn grow_spill(&mut self) {
        let len = (2 * self.spill.len()).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.spill, vec![Slot::default(); len]);
        for slot in old.into_iter().filter(|s| s.entry != 0) {
            self.place(slot.hash, slot.entry);
        }
    }

    /// Empty spill slot `hole`, shifting back the entries of its probe run
    /// that would no longer be found.
    fn remove_spill_slot(&mut self, mut hole: usize) {
        let mask = self.spill.len() - 1;
        self.spill[hole] = Slot::default();
        self.spill_live -= 1;
        let mut s = (hole + 1) & mask;
        while self.spill[s].entry != 0 {
            let home = self.spill_home(self.spill[s].hash);
            // Move it into the hole unless its home lies cyclically in (hole, s].
            if (s.wrapping_sub(home) & mask) >= (s.wrapping_sub(hole) & mask) {
                self.spill[hole] = self.spill[s];
                self.spill[s] = Slot::default();
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
    fn entries_and_lines_keep_their_sizes() {
        assert_eq!(std::mem::size_of::<Entry>(), 28);
        assert_eq!(std::mem::size_of::<Line>(), 64);
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
    fn a_full_line_spills_and_its_keys_are_still_found() {
        use ir::BinOp::*;
        let key = |op, a: usize| {
            op_key(&InstKind::Binary(op, Value::new(a), Value::new(5)), |v| v).unwrap()
        };
        let keys: Vec<Key> = [Add, Sub, Mul, And, Or]
            .into_iter()
            .flat_map(|op| (0..4).map(move |a| key(op, a)))
            .collect();
        // Two lines; every key names value 5 (the second) and one of 0-3.
        let mut t = ScopedTable::new(8);
        t.push_scope();
        t.insert(keys[0], Inst::new(0));
        t.push_scope();
        for (i, &k) in keys.iter().enumerate().skip(1) {
            t.insert(k, Inst::new(i));
        }
        // 8 in the line of value 5, 8 in that of values 0-3, 4 spilled.
        assert!(t.has_spilled(1) && t.has_spilled(0));
        assert_eq!(t.spill_live, 4);
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(t.find(k), Some(Inst::new(i)));
        }
        t.pop_scope();
        assert_eq!(t.find(&keys[0]), Some(Inst::new(0)));
        assert!(keys[1..].iter().all(|k| t.find(k).is_none()));
        t.pop_scope();
        assert_eq!(t.find(&keys[0]), None);
        assert!(t.lines.iter().all(|l| l.entry == [0; LINE_SLOTS]));
        assert_eq!(t.spill_live, 0);
    }

    /// Many keys and scopes in a pseudo-random order agree with a plain
    /// list searched from its end (what the table stands for).
    #[test]
    fn agrees_with_a_scoped_list_under_churn() {
        // No lines (everything spills), and lines with spills.
        for values in [0, 300] {
            churn(values);
        }
    }

    fn churn(values: usize) {
        let mut t = ScopedTable::new(values);
        let mut model: Vec<Vec<(Key, Inst)>> = vec![Vec::new()];
        let mut rng = crate::peeps::worklist::SplitMix64::new(11);
        t.push_scope();
        let mut next = 0usize;
        for _ in 0..20_000 {
            let v = Value::new(rng.below(300));
            let key = match rng.below(2) {
                0 => len_key(v.index()),
                _ => op_key(
                    &InstKind::Binary(ir::BinOp::Add, Value::new(rng.below(8)), v),
                    |v| v,
                )
                .unwrap(),
            };
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
