//! The rule floor of a sweep: every counter the passes can bump, and the ones
//! that fired in fewer than one program in a thousand ("rarely exercised").
//!
//! A counter that never fires does not appear in [`passes::Stats`] at all, so
//! the floor needs the full list: the peephole rules come from the rule table
//! itself, the other passes' counters are listed here (a test checks that a
//! sweep never reports a counter missing from this list).

use super::totals::Totals;

/// Programs per thousand a counter must fire in to be above the floor.
pub const FLOOR_PER_MILLE: u64 = 1;

/// Counters of LSE, GVN, DCE, the peephole CFG cleanup and the pass manager.
const FIXED: &[(&str, &str)] = &[
    ("dce", "back_edges_never_taken"),
    ("dce", "bad_lengths_after_guards"),
    ("dce", "back_edges_taken_once"),
    ("dce", "blocks_removed"),
    ("dce", "branches_decided_on_entry"),
    ("dce", "calls_never_returning"),
    ("dce", "calls_without_effects_removed"),
    ("dce", "certain_trap_operands_dropped"),
    ("dce", "certain_traps"),
    ("dce", "certain_traps_to_checks"),
    ("dce", "checks_known_from_branches"),
    ("dce", "checks_known_from_phis"),
    ("dce", "checks_removed"),
    ("dce", "dead_loops_after_a_kept_run"),
    ("dce", "dead_loops_removed"),
    ("dce", "dead_loops_run_once"),
    ("dce", "decided_branch_walks_spared"),
    ("dce", "divisions_trap_only"),
    ("dce", "edges_threaded"),
    ("dce", "first_visit_traps"),
    ("dce", "insts_after_certain_trap"),
    ("dce", "insts_removed"),
    ("dce", "lens_of_fresh_arrays"),
    ("dce", "loads_removed_checked"),
    ("dce", "loads_to_checks"),
    ("dce", "loop_exit_values"),
    ("dce", "null_tests_known"),
    ("dce", "optimistic_branches"),
    ("dce", "optimistic_constants"),
    ("dce", "phi_entries_known_from_edges"),
    ("dce", "phis_removed"),
    ("dce", "return_blocks_merged"),
    ("dce", "select_arms_known_from_edges"),
    ("dce", "self_divisions"),
    ("dce", "stores_in_loops_without_exit"),
    ("dce", "uses_decided_by_edge_ranges"),
    ("dce", "uses_known_after_insts"),
    ("dce", "values_known_from_edges"),
    ("dce", "zero_dividends"),
    ("gvn", "call_results_known"),
    ("gvn", "congruent_phis"),
    ("gvn", "guards_merged"),
    ("gvn", "loads_kept_across_calls"),
    ("gvn", "loads_merged"),
    ("gvn", "phi_of_ops"),
    ("gvn", "phis_merged"),
    ("gvn", "pure_merged"),
    ("gvn", "unused_call_args_dropped"),
    ("lse", "evictions"),
    ("lse", "facts_kept_across_calls"),
    ("lse", "facts_kept_before_escape"),
    ("lse", "latch_loads_inserted"),
    ("lse", "loads_forwarded_fresh"),
    ("lse", "loads_forwarded_local"),
    ("lse", "loads_forwarded_loop_carried"),
    ("lse", "loads_forwarded_loop_invariant"),
    ("lse", "loads_forwarded_merge"),
    ("lse", "loads_forwarded_volatile"),
    ("lse", "loads_fresh_kept_for_trap"),
    ("lse", "loops_storing_held"),
    ("lse", "overwritten_kept_across_calls"),
    ("lse", "overwritten_kept_before_escape"),
    ("lse", "phis_created"),
    ("lse", "promoted_entry_stores_sunk"),
    ("lse", "promoted_exit_blocks"),
    ("lse", "promoted_exits_guarded"),
    ("lse", "promoted_loads_hoisted"),
    ("lse", "promoted_locations"),
    ("lse", "promoted_without_exits"),
    ("lse", "stores_dead"),
    ("lse", "stores_dead_next_trip"),
    ("lse", "stores_dead_to_checks"),
    ("lse", "stores_dead_unread_object"),
    ("lse", "stores_hoisted_to_first_trip"),
    ("lse", "stores_merged_at_returns"),
    ("lse", "stores_merged_into_select"),
    ("lse", "stores_redundant"),
    ("lse", "stores_sunk_into_join"),
    ("lse", "stores_unread_compared_only"),
    ("lse", "stores_unread_select_to_checks"),
    ("lse", "stores_unread_to_checks"),
    ("manager", "passes_run"),
    ("manager", "passes_skipped_unchanged"),
    ("manager", "verifier_runs"),
    ("peeps", "cfg_blocks_merged"),
    ("peeps", "cfg_blocks_removed"),
    ("peeps", "decided_branches"),
    ("peeps", "empty_diamonds"),
    ("peeps", "equal_arms"),
    ("peeps", "equal_trapping_arms"),
];

/// Every counter the passes can bump, as `(pass, rule)`.
pub fn known_counters() -> Vec<(&'static str, &'static str)> {
    let mut all: Vec<(&'static str, &'static str)> = FIXED.to_vec();
    all.extend(passes::peeps::rules().iter().map(|r| ("peeps", r.name)));
    all.sort_unstable();
    all.dedup();
    all
}

/// The counters (`pass.rule`) of the passes this sweep ran that fired in fewer
/// than [`FLOOR_PER_MILLE`] programs per thousand, with the number of programs
/// each fired in. Empty when no program was checked.
pub fn rarely_exercised(t: &Totals) -> Vec<(String, u64)> {
    if t.programs == 0 {
        return Vec::new();
    }
    let ran = |pass: &str| t.rules.contains_key(pass);
    let mut names: Vec<(&str, &str)> = known_counters()
        .into_iter()
        .filter(|(p, _)| ran(p))
        .collect();
    for (pass, rules) in &t.rules {
        names.extend(rules.keys().map(|r| (*pass, *r)));
    }
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|(p, r)| {
            let k = t
                .rule_programs
                .get(p)
                .and_then(|m| m.get(r))
                .copied()
                .unwrap_or(0);
            (format!("{p}.{r}"), k)
        })
        .filter(|&(_, k)| k * 1000 < FLOOR_PER_MILLE * t.programs)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_below_the_floor_is_listed_and_one_above_is_not() {
        let mut t = Totals {
            programs: 2000,
            ..Totals::default()
        };
        t.rules.entry("gvn").or_default().insert("phis_merged", 1);
        t.rules.entry("gvn").or_default().insert("pure_merged", 50);
        let fired = t.rule_programs.entry("gvn").or_default();
        fired.insert("phis_merged", 1);
        fired.insert("pure_merged", 2);
        let rare = rarely_exercised(&t);
        let names: Vec<&str> = rare.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"gvn.phis_merged"));
        assert!(!names.contains(&"gvn.pure_merged"));
        // Never fired at all: listed with 0.
        assert!(rare.contains(&("gvn.guards_merged".to_string(), 0)));
        // Passes that did not run are not listed.
        assert!(!names.iter().any(|n| n.starts_with("lse.")));
    }

    #[test]
    fn every_counter_a_sweep_reports_is_known() {
        let opts = crate::sweep::SweepOptions::default();
        let mut t = Totals::default();
        for k in 0..300 {
            t.add(&crate::sweep::check_one(&opts, k).1);
        }
        let known = known_counters();
        for (pass, rules) in &t.rules {
            for rule in rules.keys() {
                assert!(known.contains(&(pass, rule)), "{pass}.{rule} is not listed");
            }
        }
        assert!(t.rules.len() >= 4, "{:?}", t.rules.keys());
    }

    #[test]
    fn the_list_holds_every_peephole_rule() {
        let known = known_counters();
        assert!(known.contains(&("peeps", "double_neg")));
        assert!(known.contains(&("lse", "evictions")));
    }
}
