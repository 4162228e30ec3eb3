//! The scoped value table of GVN. Each entry's cached hash doubles as an edge
//! lock: an instruction with a non-zero lock is in the table and must not be
//! edited; [`ScopedTable::unlock`] takes it out first. Scopes follow the
//! dominator tree: leaving a block forgets what was inserted inside it.

use super::key::Key;
use ir::Inst;
use rustc_hash::{FxHashMap, FxHasher};
use smallvec::SmallVec;
use std::hash::{Hash, Hasher};

/// A hash table of keys to their first (dominating) instruction, with scopes.
///
/// Each key is stored once, with its instruction (`key_of`); the hash map
/// only takes a key's hash to the instructions numbered under that hash.
#[derive(Default)]
pub struct ScopedTable {
    by_hash: FxHashMap<u64, SmallVec<[Inst; 1]>>,
    lock: Vec<u64>,
    key_of: Vec<Option<Key>>,
    inserted: Vec<Inst>,
    marks: Vec<usize>,
}

fn hash_key(k: &Key) -> u64 {
    let mut h = FxHasher::default();
    k.hash(&mut h);
    h.finish().max(1)
}

impl ScopedTable {
    /// A table for a function with `num_insts` instruction slots.
    pub fn new(num_insts: usize) -> ScopedTable {
        ScopedTable {
            by_hash: FxHashMap::with_capacity_and_hasher(num_insts, Default::default()),
            lock: vec![0; num_insts],
            key_of: Vec::new(),
            inserted: Vec::new(),
            marks: Vec::new(),
        }
    }

    /// Empty the table for a function with `num_insts` instruction slots,
    /// keeping its storage.
    pub fn reset(&mut self, num_insts: usize) {
        self.by_hash.clear();
        self.by_hash.reserve(num_insts);
        self.lock.clear();
        self.lock.resize(num_insts, 0);
        self.key_of.clear();
        self.inserted.clear();
        self.marks.clear();
    }

    /// Open a scope.
    pub fn push_scope(&mut self) {
        self.marks.push(self.inserted.len());
    }

    /// Close the innermost scope, forgetting its insertions.
    pub fn pop_scope(&mut self) {
        let mark = self.marks.pop().unwrap_or(0);
        #[cfg(feature = "bug-zoo")]
        if crate::zoo::active(crate::zoo::Bug::GvnNonDominating) {
            // Planted (MoarVM expression JIT): what a branch numbered stays
            // visible in its siblings, whose uses it does not dominate.
            return;
        }
        while self.inserted.len() > mark {
            if let Some(i) = self.inserted.pop() {
                self.unlock(i);
            }
        }
    }

    /// The instruction already numbered under `key`, if any.
    pub fn find(&self, key: &Key) -> Option<Inst> {
        let candidates = self.by_hash.get(&hash_key(key))?;
        candidates
            .iter()
            .copied()
            .find(|i| self.key_of.get(i.index()).and_then(Option::as_ref) == Some(key))
    }

    /// Number `inst` under `key` (locking its edges). A key numbered already
    /// now names `inst` (the earlier instruction stays locked).
    pub fn insert(&mut self, key: Key, inst: Inst) {
        if inst.index() >= self.lock.len() {
            self.lock.resize(inst.index() + 1, 0);
        }
        if inst.index() >= self.key_of.len() {
            self.key_of.resize(self.lock.len(), None);
        }
        let hash = hash_key(&key);
        let candidates = self.by_hash.entry(hash).or_default();
        let key_of = &self.key_of;
        candidates.retain(|i| key_of[i.index()].as_ref() != Some(&key));
        candidates.push(inst);
        self.lock[inst.index()] = hash;
        self.key_of[inst.index()] = Some(key);
        self.inserted.push(inst);
    }

    /// Whether `inst` is in the table (its edges are locked).
    pub fn is_locked(&self, inst: Inst) -> bool {
        self.lock.get(inst.index()).is_some_and(|&h| h != 0)
    }

    /// Take `inst` out of the table so that its edges may change.
    pub fn unlock(&mut self, inst: Inst) {
        if !self.is_locked(inst) {
            return;
        }
        let hash = std::mem::replace(&mut self.lock[inst.index()], 0);
        self.key_of[inst.index()] = None;
        if let Some(candidates) = self.by_hash.get_mut(&hash) {
            candidates.retain(|i| *i != inst);
            if candidates.is_empty() {
                self.by_hash.remove(&hash);
            }
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
}
