//! Counters of what each pass did, printed by `loadstar opt --emit stats`.

use serde::Serialize;
use std::collections::BTreeMap;

/// Per-pass, per-rule counters (`{"dce": {"insts_removed": 3}}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Counters keyed by pass name, then by rule name (static names: adding
    /// to a counter never allocates once it exists).
    pub passes: BTreeMap<&'static str, BTreeMap<&'static str, u64>>,
}

impl Stats {
    /// Add `n` to counter `rule` of pass `pass`.
    pub fn add(&mut self, pass: &'static str, rule: &'static str, n: u64) {
        *self
            .passes
            .entry(pass)
            .or_default()
            .entry(rule)
            .or_default() += n;
    }

    /// The value of a counter (0 when never touched).
    pub fn get(&self, pass: &str, rule: &str) -> u64 {
        self.passes
            .get(pass)
            .and_then(|r| r.get(rule))
            .copied()
            .unwrap_or(0)
    }

    /// Add every counter of `other` into `self`.
    pub fn merge(&mut self, other: &Stats) {
        for (pass, rules) in &other.passes {
            for (rule, n) in rules {
                self.add(pass, rule, *n);
            }
        }
    }

    /// The counters as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.passes).expect("stats serialize")
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
}
