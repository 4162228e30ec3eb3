//! Counters of what each pass did, printed by `loadstar opt --emit stats`.
//!
//! Passes add to counters named by static strings many times per run, and
//! each run starts from empty statistics, so a counter's (pass, rule) name
//! pair gets a number once per process: statistics are then a vector indexed
//! by it, and adding is a hash of the names' addresses (a thread's cache of
//! numbers) and an index, or just the index for a pass that keeps its
//! counters' numbers ([`CounterId`]). The sorted per-pass view
//! ([`Stats::passes`]) is built when asked for.

use rustc_hash::FxHashMap;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

/// The sorted view of the counters: pass name, then rule name.
pub type PassCounters = BTreeMap<&'static str, BTreeMap<&'static str, u64>>;

/// The address and length of a pass name and a rule name: the key of a
/// thread's cache of counter numbers (two literals with the same text may
/// have two addresses; both find the same number).
type Address = [usize; 4];

/// Every (pass, rule) name pair numbered so far: its names by number, and
/// its number by names.
#[derive(Default)]
struct Names {
    pairs: Vec<(&'static str, &'static str)>,
    ids: FxHashMap<(&'static str, &'static str), usize>,
}

/// The process's numbered name pairs.
static NAMES: Mutex<Names> = Mutex::new(Names {
    pairs: Vec::new(),
    ids: FxHashMap::with_hasher(rustc_hash::FxBuildHasher),
});

thread_local! {
    /// This thread's numbers of the name addresses it has seen.
    static IDS: RefCell<FxHashMap<Address, usize>> =
        const { RefCell::new(FxHashMap::with_hasher(rustc_hash::FxBuildHasher)) };
}

/// The number of counter (`pass`, `rule`), given one the first time.
fn id_of(pass: &'static str, rule: &'static str) -> usize {
    let address = [
        pass.as_ptr() as usize,
        pass.len(),
        rule.as_ptr() as usize,
        rule.len(),
    ];
    IDS.with(|ids| {
        if let Some(&id) = ids.borrow().get(&address) {
            return id;
        }
        let id = register(pass, rule);
        ids.borrow_mut().insert(address, id);
        id
    })
}

/// The number of the names `pass` and `rule` (by text), new if they have none.
fn register(pass: &'static str, rule: &'static str) -> usize {
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let names = &mut *names;
    *names.ids.entry((pass, rule)).or_insert_with(|| {
        names.pairs.push((pass, rule));
        names.pairs.len() - 1
    })
}

/// The names of the counters numbered `ids` (by [`id_of`]), in order.
fn names_of(ids: impl Iterator<Item = usize>) -> Vec<(&'static str, &'static str)> {
    let names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    ids.map(|id| names.pairs[id]).collect()
}

/// The number of one counter, for passes that add to the same counters on
/// every run: found once ([`CounterId::of`]), it saves the name lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterId(usize);

impl CounterId {
    /// The number of counter `rule` of pass `pass`.
    pub fn of(pass: &'static str, rule: &'static str) -> CounterId {
        CounterId(register(pass, rule))
    }
}

/// Per-pass, per-rule counters (`{"dce": {"insts_removed": 3}}`).
#[derive(Clone, Default)]
pub struct Stats {
    /// The counters by number ([`id_of`]): `None` for one never touched
    /// (a counter added 0 to still appears).
    values: Vec<Option<u64>>,
}

impl Stats {
    /// Add `n` to counter `rule` of pass `pass` (the counter appears, at
    /// zero, even when `n` is 0).
    pub fn add(&mut self, pass: &'static str, rule: &'static str, n: u64) {
        self.add_id(id_of(pass, rule), n);
    }

    /// Add `n` to counter `id` (as [`Stats::add`] with its names).
    pub fn add_counter(&mut self, id: CounterId, n: u64) {
        self.add_id(id.0, n);
    }

    /// Whether counter `id` was touched (added to, even 0).
    pub fn has(&self, id: CounterId) -> bool {
        matches!(self.values.get(id.0), Some(Some(_)))
    }

    /// Add `n` to counter number `id`.
    fn add_id(&mut self, id: usize, n: u64) {
        if id >= self.values.len() {
            self.values.resize(id + 1, None);
        }
        *self.values[id].get_or_insert(0) += n;
    }

    /// The numbers and values of the counters touched.
    fn touched(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.values
            .iter()
            .enumerate()
            .filter_map(|(id, v)| v.map(|n| (id, n)))
    }

    /// The value of a counter (0 when never touched).
    pub fn get(&self, pass: &str, rule: &str) -> u64 {
        let passes = self.passes();
        passes
            .get(pass)
            .and_then(|r| r.get(rule))
            .copied()
            .unwrap_or(0)
    }

    /// Whether no counter was ever touched.
    pub fn is_empty(&self) -> bool {
        self.values.iter().all(Option::is_none)
    }

    /// Add every counter of `other` into `self`.
    pub fn merge(&mut self, other: &Stats) {
        for (id, n) in other.touched() {
            self.add_id(id, n);
        }
    }

    /// The counters by pass name, then rule name (built on each call).
    pub fn passes(&self) -> PassCounters {
        let values: Vec<(usize, u64)> = self.touched().collect();
        let names = names_of(values.iter().map(|&(id, _)| id));
        let mut map = PassCounters::new();
        for ((pass, rule), (_, n)) in names.into_iter().zip(values) {
            map.entry(pass).or_default().insert(rule, n);
        }
        map
    }

    /// The counters as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.passes()).expect("stats serialize")
    }
}

/// Counters are equal when they hold the same values, whatever their order.
impl PartialEq for Stats {
    fn eq(&self, other: &Stats) -> bool {
        self.passes() == other.passes()
    }
}

impl Eq for Stats {}

/// As the sorted map ([`Stats::passes`]) in a `Stats` struct.
impl fmt::Debug for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stats")
            .field("passes", &self.passes())
            .finish()
    }
}

/// As a struct with the one field `passes`, the sorted map.
impl Serialize for Stats {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Stats", 1)?;
        s.serialize_field("passes", &self.passes())?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_accumulate_and_merge() {
        let mut a = Stats::default();
        a.add("dce", "insts_removed", 2);
        a.add("dce", "insts_removed", 3);
        let mut b = Stats::default();
        b.add("dce", "insts_removed", 1);
        b.add("dce", "blocks_removed", 4);
        a.merge(&b);
        assert_eq!(a.get("dce", "insts_removed"), 6);
        assert_eq!(a.get("dce", "blocks_removed"), 4);
        assert_eq!(a.get("lse", "anything"), 0);
        assert!(a.to_json().contains("\"insts_removed\": 6"));
    }

    #[test]
    fn names_at_other_addresses_find_the_same_counter() {
        let text = String::from("dce insts_removed");
        let leaked: &'static str = Box::leak(text.into_boxed_str());
        let (pass, rule) = leaked.split_at(3);
        let mut a = Stats::default();
        a.add("dce", "insts_removed", 2);
        a.add(pass, &rule[1..], 3);
        assert_eq!(a.passes()["dce"].len(), 1);
        assert_eq!(a.get("dce", "insts_removed"), 5);
    }

    #[test]
    fn zeros_appear_and_output_is_sorted() {
        let mut a = Stats::default();
        a.add("lse", "b", 0);
        a.add("dce", "z", 1);
        a.add("dce", "a", 0);
        assert!(!a.is_empty());
        assert_eq!(
            format!("{a:?}"),
            r#"Stats { passes: {"dce": {"a": 0, "z": 1}, "lse": {"b": 0}} }"#
        );
        let mut b = Stats::default();
        b.add("dce", "a", 0);
        b.add("lse", "b", 0);
        b.add("dce", "z", 1);
        assert_eq!(a, b);
    }
}
