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
pub mod folds;
pub mod forward;
pub mod known;
pub mod loc;
pub mod nonnull;
pub mod promote;
pub mod unread;
pub mod writers;

use crate::alias::AliasAnalysis;
use crate::manager::Pass;
use crate::per_function::each_function_detached;
use crate::stats::Stats;
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
    arm_stores: arm_stores::Scratch,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
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
            each_function_detached(module, |module, func| {
                self.run_function(module, calls, func, stats)
            })
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
        if func.layout.is_empty() {
            return false;
        }
        with_reused(&SCRATCH, |scratch| {
            self.run_with(module, calls, func, stats, scratch)
        })
    }

    fn run_with(
        &self,
        module: &Module,
        calls: &Summaries,
        func: &mut Function,
        stats: &mut Stats,
        scratch: &mut Scratch,
    ) -> bool {
        if !func
            .inst_iter()
            .any(|i| forward::is_plain_access(&func.inst(i).kind))
        {
            // Nothing is ever known and no store can die: no analysis needed.
            record_counts(
                stats,
                &forward::ForwardCounts::default(),
                &promote::PromoteCounts::default(),
                [0; 10],
            );
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
            self.transform(module, calls, func, stats, scratch, cfg, dom_loops)
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
        stats: &mut Stats,
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
        let (phis_kept, latch_loads_kept) =
            remove_unused_created(func, &fw.created_phis, &fw.latch_loads);
        let unread = unread::remove_stores_to_unread(module, func, &mut scratch.unread);
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
        let fresh = (promoted.exit_blocks > 0).then(|| {
            let cfg = Cfg::new(func);
            let dom = DomTree::new(func, &cfg);
            let loops = LoopInfo::new(func, &cfg, &dom);
            (cfg, dom, loops)
        });
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

        record_counts(
            stats,
            &fw.counts,
            &promoted,
            [
                dead.removed.len() as u64,
                dead.to_checks,
                merged.into_select,
                merged.into_join,
                unread.removed.len() as u64,
                unread.to_checks,
                unread.select_to_checks,
                phis_kept,
                latch_loads_kept,
                dead.kept_across_calls,
            ],
        );
        !fw.removed.is_empty()
            || rewritten
            || !dead.removed.is_empty()
            || dead.to_checks > 0
            || merged.into_select > 0
            || merged.into_join > 0
            || !unread.removed.is_empty()
            || unread.to_checks > 0
            || unread.select_to_checks > 0
            || phis_kept > 0
            || promoted.locations > 0
    }
}

/// Add one run's counters to `stats` (every rule, zeros included, finding
/// the pass's counters once); `removed` holds the dead stores, those rewritten
/// to their checks, the arm stores merged into a select, the store pairs
/// sunk into a join, the stores into
/// unread objects removed and those rewritten to checks (directly, and
/// through a `select` of `null`), the phis and the latch loads kept, the
/// overwritten locations calls did not observe; `p` is store promotion's.
fn record_counts(
    stats: &mut Stats,
    c: &forward::ForwardCounts,
    p: &promote::PromoteCounts,
    removed: [u64; 10],
) {
    let [stores_dead, stores_dead_to_checks, stores_merged_into_select, stores_sunk_into_join, stores_unread, stores_unread_to_checks, stores_unread_select_to_checks, phis_kept, latch_loads_kept, overwritten_kept_across_calls] =
        removed;
    // Sorted by name: a map built from it in one go costs no searches.
    let counts = [
        ("evictions", c.evictions),
        ("facts_kept_across_calls", c.kept_across_calls),
        ("latch_loads_inserted", latch_loads_kept),
        ("loads_forwarded_fresh", c.forwarded_fresh),
        ("loads_forwarded_local", c.forwarded_local),
        ("loads_forwarded_loop_carried", c.forwarded_loop_carried),
        ("loads_forwarded_loop_invariant", c.forwarded_loop_invariant),
        ("loads_forwarded_merge", c.forwarded_merge),
        ("loads_forwarded_volatile", c.forwarded_volatile),
        ("loads_fresh_kept_for_trap", c.fresh_kept_for_trap),
        (
            "overwritten_kept_across_calls",
            overwritten_kept_across_calls,
        ),
        ("phis_created", phis_kept),
        ("promoted_entry_stores_sunk", p.entry_stores_sunk),
        ("promoted_exit_blocks", p.exit_blocks),
        ("promoted_exits_guarded", p.exits_guarded),
        ("promoted_loads_hoisted", p.loads_hoisted),
        ("promoted_locations", p.locations),
        ("stores_dead", stores_dead),
        ("stores_dead_to_checks", stores_dead_to_checks),
        ("stores_dead_unread_object", stores_unread),
        ("stores_merged_into_select", stores_merged_into_select),
        ("stores_redundant", c.stores_redundant),
        ("stores_sunk_into_join", stores_sunk_into_join),
        (
            "stores_unread_select_to_checks",
            stores_unread_select_to_checks,
        ),
        ("stores_unread_to_checks", stores_unread_to_checks),
    ];
    let rules = stats.passes.entry("lse").or_default();
    if rules.is_empty() {
        // The first run: every rule at once (a bulk build of sorted keys).
        *rules = counts.into_iter().collect();
        return;
    }
    // Once every rule has its entry, only the rules that fired change it.
    let all_present = rules.len() >= counts.len();
    for (rule, n) in counts {
        if n == 0 && all_present {
            continue;
        }
        *rules.entry(rule).or_default() += n;
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
