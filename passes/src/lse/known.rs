//! The forward state of LSE: which value each tracked location is known to
//! hold, with a cap on how many are tracked. Going over the cap evicts the
//! oldest entry, which is a clobber (forgetting), never a skip.

use super::loc::Loc;
use ir::Value;

/// Where a known value came from, for per-rule statistics.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Origin {
    /// A load or store earlier in the same block (or a straight-line predecessor).
    Local,
    /// Merged at a join, possibly through a new phi.
    Merge,
    /// Known before a loop that never writes the location.
    LoopInvariant,
    /// Carried around a loop through a new header phi.
    LoopCarried,
    /// A field of an object allocated in this function and not yet written:
    /// zero or `null` (IR.md §2).
    Fresh,
}

/// One tracked location.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Entry {
    /// The location.
    pub loc: Loc,
    /// The value it holds.
    pub value: Value,
    /// How we know.
    pub origin: Origin,
}

/// Known values at one program point, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Known {
    entries: Vec<Entry>,
}

impl Known {
    /// The value known for `loc`.
    pub fn get(&self, loc: Loc) -> Option<&Entry> {
        lookup(&self.entries, loc)
    }

    /// Record `loc = value`; returns true when an older entry had to be evicted.
    pub fn insert(&mut self, loc: Loc, value: Value, origin: Origin, cap: usize) -> bool {
        self.entries.retain(|e| e.loc != loc);
        let evicted = self.entries.len() >= cap;
        if evicted {
            self.entries.remove(0);
        }
        self.entries.push(Entry { loc, value, origin });
        evicted
    }

    /// Forget every entry for which `clobbered` says yes.
    pub fn clobber(&mut self, mut clobbered: impl FnMut(&Entry) -> bool) {
        self.entries.retain(|e| !clobbered(e));
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Build from entries (already within the cap).
    pub fn from_entries(entries: Vec<Entry>) -> Known {
        Known { entries }
    }

    /// Forget everything (keeping the storage for reuse).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Append an entry for a location not yet known, within the cap (for
    /// building a state entry by entry, as [`Known::from_entries`] does).
    pub fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
    }
}

/// The entry for `loc` among `entries` (a stored state), if any.
pub fn lookup(entries: &[Entry], loc: Loc) -> Option<&Entry> {
    entries.iter().find(|e| e.loc == loc)
}
