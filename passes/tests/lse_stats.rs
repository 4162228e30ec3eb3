//! LSE's per-rule counters (`loadstar opt --emit stats`, the sweep's rule
//! coverage) for corpus files whose effect is known by reading them: each
//! file's counters must be exactly these, every other LSE counter zero.

use passes::PassManager;
use std::path::Path;

/// Every counter LSE records.
const RULES: [&str; 9] = [
    "loads_forwarded_local",
    "loads_forwarded_merge",
    "loads_forwarded_loop_invariant",
    "loads_forwarded_loop_carried",
    "stores_redundant",
    "stores_dead",
    "phis_created",
    "latch_loads_inserted",
    "evictions",
];

/// (file under corpus/lse/, its non-zero counters).
const CASES: &[(&str, &[(&str, u64)])] = &[
    (
        "load_after_store_forwarded.ir",
        &[("loads_forwarded_local", 1)],
    ),
    // One predecessor: the fact keeps its origin.
    ("forward_across_jump.ir", &[("loads_forwarded_local", 1)]),
    // Two predecessors that agree: a merge, no phi.
    (
        "join_same_value_forwarded.ir",
        &[("loads_forwarded_merge", 1)],
    ),
    (
        "join_different_values_phi.ir",
        &[("loads_forwarded_merge", 1), ("phis_created", 1)],
    ),
    (
        "loop_invariant_load.ir",
        &[("loads_forwarded_loop_invariant", 1)],
    ),
    // Two entries with different values, a loop that never writes: a phi.
    (
        "loop_invariant_phi_from_two_entries.ir",
        &[("loads_forwarded_loop_invariant", 1), ("phis_created", 1)],
    ),
    (
        "loop_carried_promotion.ir",
        &[("loads_forwarded_loop_carried", 1), ("phis_created", 1)],
    ),
    (
        "store_after_store_same_value.ir",
        &[("stores_redundant", 1)],
    ),
    ("dse_within_block.ir", &[("stores_dead", 1)]),
    // 40 stores evict 8 facts; the load of %a[0] evicts a 9th.
    (
        "tracking_cap_eviction.ir",
        &[("evictions", 9), ("loads_forwarded_local", 1)],
    ),
    // In the loop, %p.x and 34 elements of %a: 3 evictions.
    (
        "loop_carried_latch_load.ir",
        &[
            ("evictions", 3),
            ("latch_loads_inserted", 1),
            ("loads_forwarded_loop_carried", 1),
            ("phis_created", 1),
        ],
    ),
];

#[test]
fn lse_counts_what_it_did() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/lse");
    for &(file, expected) in CASES {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).expect("corpus file is readable");
        let (mut module, _) = ir::parse_module(&text, file).expect("corpus file parses");
        let stats = PassManager::from_list("lse")
            .expect("lse is a pass")
            .run(&mut module)
            .expect("lse runs");
        for rule in RULES {
            let want = expected
                .iter()
                .find(|(r, _)| *r == rule)
                .map_or(0, |&(_, n)| n);
            assert_eq!(stats.get("lse", rule), want, "{file}: lse/{rule}");
        }
    }
}
