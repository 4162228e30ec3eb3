//! The local rewrites LSE makes, stated in the peephole rule language
//! (`crate::peeps::spec`) over one field leaf's heap (`(load h p)`,
//! `(store h p v)`), so `loadstar verify --rules` proves them: a load after a
//! store to the same object forwards the stored value, a load past a store to
//! another object reads the older heap, a store overwritten by a store to the
//! same object is dead, a store of the value loaded from the same place
//! changes nothing (a store of the value held: `stores_redundant`, and in a
//! loop `loops_storing_held`), and a second load of the same place reuses
//! the first. Which places alias is the pass's analysis (`super::loc`), outside
//! the rules. Each entry is `(name, pattern, condition, rewrite)`.

/// LSE's folds as rules.
pub const LSE_FOLDS: [(&str, &str, &str, &str); 5] = [
    ("lse_forward", "(load (store ?h ?p ?v) ?p)", "true", "?v"),
    (
        "lse_load_past_store",
        "(load (store ?h ?p ?v) ?q)",
        "(!= ?p ?q)",
        "(load ?h ?q)",
    ),
    (
        "lse_dead_store",
        "(store (store ?h ?p ?a) ?p ?b)",
        "true",
        "(store ?h ?p ?b)",
    ),
    ("lse_store_held", "(store ?h ?p (load ?h ?p))", "true", "?h"),
    ("lse_load_load", "(load ?h ?p)", "true", "(load ?h ?p)"),
];
