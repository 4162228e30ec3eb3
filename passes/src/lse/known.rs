//! The forward state of LSE: which value each tracked location is known to
//! hold, with a cap on how many are tracked. Going over the cap evicts an
//! entry, which is a clobber (forgetting), never a skip. Which one: the
//! oldest of the newest [`WINDOW`] entries, so that older facts stay; but
//! when the new location was itself evicted lately ([`Evicted`]), the table
//! is thrashing (a scan over more locations than the cap, repeated, where
//! each miss would evict the entry needed next), and the newest entry goes
//! instead, so that the rest of the scan still finds its facts.

use super::loc::Loc;
use ir::Value;
use std::hash::{Hash, Hasher};

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
    /// A volatile access of the location: its step comes first, then the
    /// plain access (IR.md §3), so the location holds the value it read or
    /// stored.
    Volatile,
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

/// How many of the newest entries take turns when the table is full: a new
/// fact evicts the oldest of them, never one of the older entries.
pub const WINDOW: usize = 16;

/// How many evicted locations [`Evicted`] remembers.
const GHOSTS: usize = 32;

/// The locations evicted last (over the whole function, whatever the block):
/// a location among them that comes back means the table is thrashing. Kept
/// as 32-bit fingerprints, compared all at once; a collision only changes
/// which entry is evicted (never what is known).
#[derive(Clone, Debug, Default)]
pub struct Evicted {
    ring: [u32; GHOSTS],
    next: usize,
}

impl Evicted {
    fn note(&mut self, loc: Loc) {
        self.ring[self.next] = fingerprint(loc);
        self.next = (self.next + 1) % GHOSTS;
    }

    fn contains(&self, loc: Loc) -> bool {
        let f = fingerprint(loc);
        self.ring.iter().fold(false, |found, &g| found | (g == f))
    }
}

/// A nonzero hash of `loc` (0 marks an empty slot of [`Evicted`]).
fn fingerprint(loc: Loc) -> u32 {
    let mut h = rustc_hash::FxHasher::default();
    loc.hash(&mut h);
    (h.finish() >> 32) as u32 | 1
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

    /// Record `loc = value`; returns true when another entry had to be
    /// evicted (see the module header), which is noted in `evicted`. The
    /// cap is at least 1.
    pub fn insert(
        &mut self,
        loc: Loc,
        value: Value,
        origin: Origin,
        cap: usize,
        evicted: &mut Evicted,
    ) -> bool {
        self.entries.retain(|e| e.loc != loc);
        let len = self.entries.len();
        let full = len >= cap;
        if full {
            let victim = if evicted.contains(loc) {
                len - 1
            } else {
                len - WINDOW.min(len)
            };
            evicted.note(self.entries.remove(victim).loc);
        }
        self.entries.push(Entry { loc, value, origin });
        full
    }

    /// Record `loc = value` only if there is room below `cap` (never
    /// evicting); returns whether it was recorded.
    pub fn insert_if_room(&mut self, loc: Loc, value: Value, origin: Origin, cap: usize) -> bool {
        self.entries.retain(|e| e.loc != loc);
        if self.entries.len() >= cap {
            return false;
        }
        self.entries.push(Entry { loc, value, origin });
        true
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

    /// Append copies of `entries` (locations not yet known, each named
    /// once, within the cap): a state built from another point's.
    pub fn extend_from_slice(&mut self, entries: &[Entry]) {
        self.entries.extend_from_slice(entries);
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

/// [`lookup`], trying position `hint` first: states that flowed from a
/// common one hold its entries at the same positions, and a state names
/// each location at most once, so a match there is the only one.
pub fn lookup_near(entries: &[Entry], loc: Loc, hint: usize) -> Option<&Entry> {
    match entries.get(hint) {
        Some(e) if e.loc == loc => Some(e),
        _ => lookup(entries, loc),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::GlobalId;

    fn loc(i: usize) -> Loc {
        Loc::Global(GlobalId::new(i))
    }

    /// A table of 32 globals `@0` ... `@31`, then `@32` past the cap.
    fn full_then_one_more(ev: &mut Evicted) -> Known {
        let mut k = Known::default();
        let v = Value::new(0);
        for i in 0..32 {
            assert!(!k.insert(loc(i), v, Origin::Local, 32, ev), "room for @{i}");
        }
        assert!(k.insert(loc(32), v, Origin::Local, 32, ev), "@32 evicts");
        k
    }

    #[test]
    fn past_the_cap_the_oldest_of_the_newest_window_goes() {
        let k = full_then_one_more(&mut Evicted::default());
        assert_eq!(k.entries().len(), 32);
        assert!(
            k.get(loc(16)).is_none(),
            "@16 was the oldest of the newest 16"
        );
        for i in (0..16).chain(17..33) {
            assert!(k.get(loc(i)).is_some(), "@{i} stays");
        }
    }

    #[test]
    fn a_location_evicted_lately_evicts_the_newest_entry() {
        let mut ev = Evicted::default();
        let mut k = full_then_one_more(&mut ev);
        assert!(k.insert(loc(16), Value::new(1), Origin::Local, 32, &mut ev));
        assert!(k.get(loc(32)).is_none(), "the newest entry went");
        assert!(k.get(loc(17)).is_some(), "the window's oldest stays");
        assert_eq!(k.get(loc(16)).map(|e| e.value), Some(Value::new(1)));
    }

    #[test]
    fn a_fact_only_into_free_room_never_evicts() {
        let mut ev = Evicted::default();
        let mut k = full_then_one_more(&mut ev);
        assert!(!k.insert_if_room(loc(40), Value::new(2), Origin::Fresh, 32));
        assert!(k.get(loc(40)).is_none());
        assert_eq!(k.entries().len(), 32);
    }
}
