//! The local rewrites GVN makes, stated in the peephole rule language
//! (`super::super::peeps::spec`) so `loadstar verify --rules` proves them
//! with the peephole table: the normal form of [`super::key::normalize`]
//! (commutative operands swapped, comparisons turned one way), two identical
//! pure operations merged, and a phi or `select` of identical operands.
//! Each entry is `(name, pattern, condition, rewrite)`.

/// GVN's folds as rules.
pub const GVN_FOLDS: [(&str, &str, &str, &str); 6] = [
    (
        "gvn_commute",
        "(op ?a ?b)",
        "(commutative op)",
        "(op ?b ?a)",
    ),
    (
        "gvn_flip_cmp",
        "(sgt|sge|ugt|uge ?a ?b)",
        "true",
        "(slt|sle|ult|ule ?b ?a)",
    ),
    ("gvn_merge_binary", "(op ?a ?b)", "true", "(op ?a ?b)"),
    ("gvn_merge_unary", "(neg|not|copy ?a)", "true", "(op ?a)"),
    ("gvn_phi_same", "(phi ?v ?v)", "true", "?v"),
    ("gvn_select_same", "(select ?c ?a ?a)", "true", "?a"),
];
