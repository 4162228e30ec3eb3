//! Phi entries known on their own edge (run by `dce`, issue 13).
//!
//! A phi's entry for predecessor `p` is read when control crosses the edge
//! `p -> b`. Where `p` ends in `br c, x, y` with exactly one of `x`, `y`
//! being `b`, that edge is taken only when `c` picks it, so what the
//! condition says there ([`crate::edge_facts::implied_facts`]: `br %k` not
//! taken makes `%k` 0, `ne %p, null` not taken makes `%p` null, a taken
//! `or` makes nothing, a not-taken `or` makes both operands 0) holds of the
//! entry's value at that moment. An entry whose value the edge says is zero
//! reads the constant `0` (or `null`) instead: the same value (SSA values
//! never change), so nothing observable differs. This holds even where `b`
//! has other predecessors, which [`crate::edge_values`] (uses dominated by
//! a single-entry edge) cannot use: `phi [b1: 0], [entry: %k]` after the
//! entry's `br %k, b1, b2` not taken is `0` on both edges, and the branch
//! on it folds (LLVM's jump threading finds the same).
//!
//! Cost: one look at each phi entry whose predecessor ends in a `br` with
//! two targets, each asking at most [`crate::edge_facts::IMPLIED_DEPTH`]
//! levels of the condition. Counter: `dce.phi_entries_known_from_edges`.

use crate::stats::Stats;
use ir::{Block, Function, InstKind, Value, ValueDef};
use smallvec::SmallVec;

/// Replace each phi entry the branch on its edge proves zero or null by
/// that constant; returns whether any changed.
pub(crate) fn substitute_phi_edge_values(func: &mut Function, stats: &mut Stats) -> bool {
    let mut found: SmallVec<[(ir::Inst, u32); 8]> = SmallVec::new();
    for &b in &func.layout {
        for &i in &func.blocks[b.index()].insts {
            let InstKind::Phi(entries) = &func.inst(i).kind else {
                break;
            };
            for (k, &(p, v)) in entries.iter().enumerate() {
                if !is_constant(func, v) && edge_says_zero(func, p, b, v) {
                    found.push((i, k as u32));
                }
            }
        }
    }
    for &(i, k) in &found {
        // A phi's operands are its entries' values, in order.
        crate::edge_values::replace_operand_by_constant(func, i, k, 0, true);
    }
    if !found.is_empty() {
        stats.add("dce", "phi_entries_known_from_edges", found.len() as u64);
    }
    !found.is_empty()
}

/// Whether `v` is already a constant or `null`.
fn is_constant(func: &Function, v: Value) -> bool {
    matches!(func.value_def(v), ValueDef::Const(_) | ValueDef::Null)
}

/// Whether the edge `p -> b` is one edge of a two-target `br` whose
/// condition, picking `b`, makes `v` zero (or null).
fn edge_says_zero(func: &Function, p: Block, b: Block, v: Value) -> bool {
    crate::edge_facts::edge_implies(func, p, b, false, |w| w == v)
}
