//! Load/store elimination (`lse`): forwarding of known values over the whole
//! CFG (joins through phis, loop-invariant and loop-carried locations), removal
//! of stores of the value already there, and dead-store elimination.
//!
//! Memory behaviour is asked of `ir::effects` (through [`clobber`]), aliasing of
//! [`crate::alias`]; the number of tracked locations per program point is capped
//! and the excess is forgotten, never skipped.

pub mod arena;
pub mod arm_stores;
pub mod clobber;
pub mod dse;
pub mod exit_stores;
pub mod first_trip;
pub mod folds;
pub mod forward;
pub mod known;
pub mod loc;
pub mod nonnull;
pub mod promote;
pub mod return_arms;
pub mod unread;
pub mod writers;
pub mod young;

use crate::alias::AliasAnalysis;
use crate::manager::Pass;
use crate::per_function::each_function_detached;
use crate::stats::{CounterId, Stats};
use clobber::Clobbers;
use ir::cfg::Cfg;
use ir::reuse::with_reused;
use ir::summaries::Summaries;
use ir::{DomTree, LoopInfo};
use ir::{Function, Inst, Module, Value};
use std::cell::RefCell;

/// How many locations LSE tracks at one program point (Panda tracks 32 per object).
pub const DEFAULT_CAP: usize = 32;

/// Storage LSE reuses from run to run.
#[derive(Default)]
struct Scratch {
    alias: AliasAnalysis,
    forward: forward::Scratch,
    dse: dse::Scratch,
    unread: unread::Scratch,
    promote: promote::Scratch,
    first_trip: first_trip::Scratch,
    arm_stores: arm_stores::Scratch,
}

thread_local! {
    /// Boxed, and `None` while a run holds it: taking it out and putting it
    /// back moves a pointer, not the whole storage (nor makes and drops an
    /// empty one in its place).
    static SCRATCH: RefCell<Option<Box<Scratch>>> = const { RefCell::new(None) };
    /// The call summaries of the last run (see
    /// [`crate::per_function::callee_summaries`]).
    static CALLS: RefCell<Option<Summaries>> = const { RefCell::new(None) };
}

/// The `lse` pass.
pub struct Lse {
    /// The cap on tracked locations per program point.
    pub cap: usize,
}

impl Default for Lse {
    fn default() -> Self {
        Lse { cap: DEFAULT_CAP }
    }
}

impl Pass for Lse {
    /// It rewrites function bodies only.
    fn changes_declarations(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str {
        "lse"
    }

    fn run(&self, module: &mut Module, stats: &mut Stats) -> bool {
        CALLS.with(|last| {
            let mut last = last.borrow_mut();
            // Read before any edit: LSE keeps each function's behaviour, so
            // an edited callee does no more than its summary says.
            let calls = crate::per_function::callee_summaries(module, &mut last);
            // The counters of every function visited, added to `stats` once.
            let mut counts: Option<Counts> = None;
            let changed = each_function_detached(module, |module, func| {
                if func.layout.is_empty() {
                    return false;
                }
                let counts = counts.get_or_insert_with(Counts::default);
                self.run_counted(module, calls, func, counts)
            });
            if let Some(counts) = counts {
                counts.record(stats);
            }
            changed
        })
    }
}

impl Lse {
    /// Run on one function (taken out of `module` while it is edited);
    /// `calls` says what calls of module functions may do.
    pub fn run_function(
        &self,
        module: &Module,
        calls: &Summaries,
        func: &mut Function,
        stats: &mut Stats,
    ) -> bool {
        let mut counts = Counts::default();
        let changed = self.run_counted(module, calls, func, &mut counts);
        if !func.layout.is_empty() {
            counts.record(stats);
        }
        changed
    }

    /// [`Lse::run_function`], adding the counters to `counts` (for a
    /// function with a body) instead of to the statistics.
    fn run_counted(
        &self,
        module: &Module,
        calls: &Summaries,
        func: &mut Function,
        counts: &mut Counts,
    ) -> bool {
        if func.layout.is_empty() {
            return false;
        }
        with_reused(&SCRATCH, |scratch| {
            let scratch = scratch.get_or_insert_with(Box::default);
            self.run_with(module, calls, func, counts, scratch)
        })
    }

    fn run_with(
        &self,
        module: &Module,
        calls: &Summaries,
        func: &mut Function,
        counts: &mut Counts,
        scratch: &mut Scratch,
    ) -> bool {
        if !func
            .inst_iter()
            .any(|i| forward::is_plain_access(&func.inst(i).kind))
        {
            // Nothing is ever known and no store can die: no analysis needed
            // (every counter stays as it is).
            return false;
        }
        scratch.alias.recompute(func);
        // Forwarding adds and removes loads, stores and phis but never touches a
        // terminator or the layout, so one CFG (and its dominator tree and
        // loops, when it has a back edge) serves both halves.
        crate::analyses::with_analyses_mut(func, |a, func| {
            let cfg = a.cfg();
            let dom_loops = cfg
                .has_retreating_edge()
                .then(|| (a.dom(func), a.loops(func)));
            self.transform(module, calls, func, counts, scratch, cfg, dom_loops)
        })
    }

    /// Forwarding, store promotion and dead-store elimination on `func`,
    /// whose CFG is `cfg` (with its dominator tree and loops when it has a
    /// back edge); returns whether anything changed.
    #[allow(clippy::too_many_arguments)]
    fn transform(
        &self,
        module: &Module,
        calls: &Summaries,
        func: &mut Function,
        counts: &mut Counts,
        scratch: &mut Scratch,
        cfg: &Cfg,
        dom_loops: Option<(&DomTree, &LoopInfo)>,
    ) -> bool {
        let alias = &mut scratch.alias;
        let fw = forward::forward(
            module,
            func,
            cfg,
            dom_loops,
            &mut scratch.forward,
            Clobbers {
                alias: &*alias,
                calls,
            },
            self.cap,
        );
        func.remove_insts(&fw.removed);
        // Whether an operand changed (a load kept for its trap has its result
        // replaced without being removed).
        let mut rewritten = false;
        if !fw.subst.is_empty() {
            // One pass over the function: every operand to what it stands for now.
            let map: Vec<Value> = (0..func.values.len())
                .map(|i| fw.subst.resolve_replaced(Value::new(i)))
                .collect();
            func.for_each_placed_kind_mut(|kind| {
                kind.for_each_operand_mut(|v| {
                    rewritten |= map[v.index()] != *v;
                    *v = map[v.index()];
                })
            });
            // Copies of a replaced load now look through to its replacement.
            for (i, &to) in map.iter().enumerate() {
                if to.index() != i {
                    alias.redirect(func, Value::new(i), to);
                }
            }
        }
        scratch.forward.reuse(fw.subst);
        let (phis_kept, latch_loads_kept) =
            remove_unused_created(func, &fw.created_phis, &fw.latch_loads);
        let unread = unread::remove_stores_to_unread(module, func, &mut scratch.unread);
        let hoisted = match dom_loops {
            Some(dom_loops) => first_trip::hoist(
                module,
                func,
                cfg,
                dom_loops,
                &Clobbers {
                    alias: &*alias,
                    calls,
                },
                &mut scratch.first_trip,
            ),
            None => first_trip::HoistCounts::default(),
        };
        // A block made for hoisted stores changed the CFG: promotion needs the new one.
        let hoist_fresh = (hoisted.blocks > 0).then(|| fresh_analyses(func));
        let (cfg, dom_loops) = match &hoist_fresh {
            Some((cfg, dom, loops)) => (cfg, Some((dom, loops))),
            None => (cfg, dom_loops),
        };
        let promoted = match dom_loops {
            Some(dom_loops) => promote::promote(
                module,
                func,
                cfg,
                dom_loops,
                alias,
                calls,
                &mut scratch.promote,
            ),
            None => promote::PromoteCounts::default(),
        };
        let alias = &*alias;
        // Promotion may have split exit edges: the rest needs the new CFG.
        let fresh = (promoted.exit_blocks > 0).then(|| fresh_analyses(func));
        let (cfg, dom_loops) = match &fresh {
            Some((cfg, dom, loops)) => (cfg, Some((dom, loops))),
            None => (cfg, dom_loops),
        };
        let dead = dse::eliminate_dead_stores(
            module,
            func,
            cfg,
            dom_loops,
            &mut scratch.dse,
            &Clobbers { alias, calls },
            self.cap,
        );
        // After DSE: a store both arms overwrite is gone by now.
        let merged = arm_stores::merge_arm_stores(
            module,
            func,
            cfg,
            &Clobbers { alias, calls },
            &mut scratch.arm_stores,
        );
        let at_returns =
            return_arms::merge_returning_arm_stores(module, func, cfg, &Clobbers { alias, calls });

        counts.add(
            &fw.counts,
            &promoted,
            [
                dead.removed.len() as u64,
                dead.to_checks,
                at_returns,
                merged.into_select,
                merged.into_join,
                unread.removed.len() as u64,
                unread.to_checks,
                unread.select_to_checks,
                unread.compared_only,
                phis_kept,
                latch_loads_kept,
                dead.kept_across_calls,
                dead.kept_before_escape,
                dead.dead_next_trip,
                hoisted.stores,
            ],
        );
        !fw.removed.is_empty()
            || rewritten
            || !dead.removed.is_empty()
            || dead.to_checks > 0
            || at_returns > 0
            || merged.into_select > 0
            || merged.into_join > 0
            || !unread.removed.is_empty()
            || unread.to_checks > 0
            || unread.select_to_checks > 0
            || phis_kept > 0
            || promoted.locations > 0
            || hoisted.stores > 0
    }
}

/// The CFG of `func` as it is now, with its dominator tree and loops.
fn fresh_analyses(func: &Function) -> (Cfg, DomTree, LoopInfo) {
    let cfg = Cfg::new(func);
    let dom = DomTree::new(func, &cfg);
    let loops = LoopInfo::new(func, &cfg, &dom);
    (cfg, dom, loops)
}

/// The names of the pass's counters, sorted (the order of [`Counts`]).
const RULES: [&str; 33] = [
    "evictions",
    "facts_kept_across_calls",
    "facts_kept_before_escape",
    "latch_loads_inserted",
    "loads_forwarded_fresh",
    "loads_forwarded_local",
    "loads_forwarded_loop_carried",
    "loads_forwarded_loop_invariant",
    "loads_forwarded_merge",
    "loads_forwarded_volatile",
    "loads_fresh_kept_for_trap",
    "loops_storing_held",
    "overwritten_kept_across_calls",
    "overwritten_kept_before_escape",
    "phis_created",
    "promoted_entry_stores_sunk",
    "promoted_exit_blocks",
    "promoted_exits_guarded",
    "promoted_loads_hoisted",
    "promoted_locations",
    "promoted_without_exits",
    "stores_dead",
    "stores_dead_next_trip",
    "stores_dead_to_checks",
    "stores_dead_unread_object",
    "stores_hoisted_to_first_trip",
    "stores_merged_at_returns",
    "stores_merged_into_select",
    "stores_redundant",
    "stores_sunk_into_join",
    "stores_unread_compared_only",
    "stores_unread_select_to_checks",
    "stores_unread_to_checks",
];

/// The pass's counters over one or more functions, in [`RULES`] order,
/// added to the statistics at once ([`Counts::record`]).
struct Counts([u64; RULES.len()]);

impl Default for Counts {
    fn default() -> Self {
        Counts([0; RULES.len()])
    }
}

impl Counts {
    /// Add one function's counters; `removed` holds the dead stores, those
    /// rewritten to their checks, the returning arms' store pairs merged
    /// before their branch, the arm stores merged into a select, the
    /// store pairs sunk into a join, the stores into unread objects removed
    /// and those rewritten to checks (directly, and through a `select` of
    /// `null`), the removed ones saved by a compared-only merge, the phis and the latch loads kept, the overwritten locations
    /// calls did not observe and those of allocations not escaped yet, and
    /// the dead stores a loop's next trip overwrites, and the stores hoisted
    /// to a loop's first trip; `p` is store promotion's.
    fn add(&mut self, c: &forward::ForwardCounts, p: &promote::PromoteCounts, removed: [u64; 15]) {
        let [stores_dead, stores_dead_to_checks, stores_merged_at_returns, stores_merged_into_select, stores_sunk_into_join, stores_unread, stores_unread_to_checks, stores_unread_select_to_checks, stores_unread_compared_only, phis_kept, latch_loads_kept, overwritten_kept_across_calls, overwritten_kept_before_escape, stores_dead_next_trip, stores_hoisted] =
            removed;
        let counts = [
            c.evictions,
            c.kept_across_calls,
            c.kept_before_escape,
            latch_loads_kept,
            c.forwarded_fresh,
            c.forwarded_local,
            c.forwarded_loop_carried,
            c.forwarded_loop_invariant,
            c.forwarded_merge,
            c.forwarded_volatile,
            c.fresh_kept_for_trap,
            c.loops_storing_held,
            overwritten_kept_across_calls,
            overwritten_kept_before_escape,
            phis_kept,
            p.entry_stores_sunk,
            p.exit_blocks,
            p.exits_guarded,
            p.loads_hoisted,
            p.locations,
            p.without_exits,
            stores_dead,
            stores_dead_next_trip,
            stores_dead_to_checks,
            stores_unread,
            stores_hoisted,
            stores_merged_at_returns,
            stores_merged_into_select,
            c.stores_redundant,
            stores_sunk_into_join,
            stores_unread_compared_only,
            stores_unread_select_to_checks,
            stores_unread_to_checks,
        ];
        for (total, n) in self.0.iter_mut().zip(counts) {
            *total += n;
        }
    }

    /// Add the counters to `stats` (every rule, zeros included: a run of
    /// the pass lists all its rules).
    fn record(&self, stats: &mut Stats) {
        /// The rules' counters, numbered once.
        static IDS: std::sync::LazyLock<[CounterId; RULES.len()]> =
            std::sync::LazyLock::new(|| RULES.map(|r| CounterId::of("lse", r)));
        // Every rule gets its entry together, so one tells whether all have.
        let listed = stats.has(IDS[0]);
        for (&id, n) in IDS.iter().zip(self.0) {
            if n > 0 || !listed {
                stats.add_counter(id, n);
            }
        }
    }
}

/// Remove the phis forwarding created, and the latch loads it inserted for
/// them, that nothing outside them uses (a latch load kept for a deleted phi
/// would run on every trip for nothing: a pessimization); returns how many
/// phis and latch loads stay.
fn remove_unused_created(func: &mut Function, phis: &[Inst], loads: &[Inst]) -> (u64, u64) {
    if phis.is_empty() && loads.is_empty() {
        return (0, 0);
    }
    let mut created_mask = vec![false; func.insts.len()];
    for &i in phis.iter().chain(loads) {
        created_mask[i.index()] = true;
    }
    let is_created = |i: Inst| created_mask[i.index()];
    let mut live = vec![false; func.insts.len()];
    let mut work: Vec<Inst> = Vec::new();
    for inst in func.inst_iter() {
        if is_created(inst) {
            continue;
        }
        func.inst(inst).kind.for_each_operand(|v| {
            if let Some(d) = func.def_inst(v) {
                if is_created(d) && !live[d.index()] {
                    live[d.index()] = true;
                    work.push(d);
                }
            }
        });
    }
    while let Some(inst) = work.pop() {
        func.inst(inst).kind.for_each_operand(|v| {
            if let Some(d) = func.def_inst(v) {
                if is_created(d) && !live[d.index()] {
                    live[d.index()] = true;
                    work.push(d);
                }
            }
        });
    }
    let dead: Vec<Inst> = phis
        .iter()
        .chain(loads)
        .copied()
        .filter(|i| !live[i.index()])
        .collect();
    func.remove_insts(&dead);
    let kept = |created: &[Inst]| created.iter().filter(|i| live[i.index()]).count() as u64;
    (kept(phis), kept(loads))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(name: &str) -> usize {
        RULES.iter().position(|r| *r == name).expect("a rule")
    }

    #[test]
    fn rules_are_sorted_as_the_map_orders_them() {
        assert!(RULES.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn counters_add_up_whichever_way_they_are_recorded() {
        let mut stats = Stats::default();
        let mut c = Counts::default();
        // The first record makes every rule, zeros included.
        Counts::default().record(&mut stats);
        assert_eq!(stats.passes()["lse"].len(), RULES.len());
        assert_eq!(stats.get("lse", "stores_dead"), 0);
        c.0[rule("stores_dead")] = 2;
        c.0[rule("evictions")] = 1;
        // Exactly the pass's rules: added in order.
        c.record(&mut stats);
        assert_eq!(stats.get("lse", "stores_dead"), 2);
        assert_eq!(stats.get("lse", "evictions"), 1);
        assert_eq!(stats.get("lse", "stores_redundant"), 0);
        // A rule from elsewhere: added by name.
        stats.add("lse", "zz_other", 5);
        c.record(&mut stats);
        assert_eq!(stats.get("lse", "stores_dead"), 4);
        assert_eq!(stats.get("lse", "evictions"), 2);
        assert_eq!(stats.get("lse", "zz_other"), 5);
    }
}
