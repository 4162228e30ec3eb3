//! Dead code elimination (`dce`).
//!
//! First replaces the values a dominating branch edge decides by their
//! constants ([`crate::edge_values`]), then cuts each block after a trap certain to happen
//! ([`crate::certain_traps`]) and folds branches only one entry edge decides
//! ([`crate::decided_branches`]: loop bodies that never run), threads the
//! edges that decide their target's branch ([`crate::threading`]), and deletes
//! loops whose work is never observed ([`crate::dead_loops`]). Then removes blocks no path from the entry reaches (fixing the phis of their
//! successors), then every instruction whose result nothing live uses and whose
//! effects allow removal: it writes nothing but the allocator's state and can
//! trap at most on resource limits (IR.md §7 makes those runs inconclusive).
//! Liveness is computed by marking from the roots (terminators and instructions
//! with effects), so dead phi cycles go too. What an instruction may do is
//! asked of the effects table, never decided here.
//!
//! An unused instruction whose trap is its only reason to stay (a field or
//! element load, a `len`: it writes nothing, and what may trap is the null
//! or bounds check `ir::effects::checked_by` names) becomes that check alone,
//! `nullcheck` or `boundscheck` (`dce.loads_to_checks`); an unused `sdiv`
//! or `srem` (kept for its `div_by_zero` trap, which its divisor alone
//! decides) divides its divisor by itself, so what computed its dividend
//! may go (`dce.divisions_trap_only`; both forms are
//! `ir::effects::trap_alone`'s). Then every check
//! whose facts are already known where it stands ([`crate::checks`]: its
//! base allocated here, or an access or check of the same values dominating
//! it) goes: `dce.checks_removed` for a check that was there before,
//! `dce.loads_removed_checked` for an unused load (or `len`) that cannot
//! trap there (e.g. `store %p.aux, 2` then an unused `load %p.val`).
//! Of those, `dce.checks_known_from_branches` counts the ones only a
//! dominating `br` on a null test (or on `ult %i, len %a`) made known
//! (issue 13). The same walk
//! decides the null tests (`eq`/`ne %p, null`) of a reference known
//! non-null where they stand — accessed on every way there, say: each
//! becomes a `copy` of its value for peeps to fold (`dce.null_tests_known`).

use crate::manager::Pass;
use crate::stats::Stats;
use ir::effects::{checked_by, is_check, trap_alone, Effects, Traps};
use ir::reuse::with_reused;
use ir::summaries::Summaries;
use ir::{Block, FuncId, Function, Inst, InstData, InstKind, Module, UnOp};
use std::cell::RefCell;

/// The `dce` pass.
pub struct Dce;

impl Pass for Dce {
    /// It rewrites function bodies only.
    fn changes_declarations(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&self, module: &mut Module, stats: &mut Stats) -> bool {
        // Each function changed is reported, so the pass manager verifies
        // only those again.
        crate::per_function::report_per_function();
        with_reused(&SCRATCH, |scratch| {
            // What calls of module functions may do (IR.md §8), read before
            // any edit: DCE only removes, so an edited callee does no more.
            // A function DCE left at its fixed point stays there only while
            // the summaries of its callees stay as they were.
            let mut last = scratch.calls.take();
            let calls = crate::per_function::callee_summaries(module, &mut last);
            let mut changed = false;
            for i in 0..module.funcs.len() {
                if crate::per_function::skipped(i) {
                    continue;
                }
                let edited = crate::analyses::in_function(i, || {
                    let mut run = FunctionRun {
                        module: &mut *module,
                        i,
                        calls,
                        stats: &mut *stats,
                        scratch: &mut *scratch,
                    };
                    run.run()
                });
                if edited {
                    crate::per_function::report_changed(i);
                    changed = true;
                }
            }
            scratch.calls = last;
            changed
        })
    }
}

/// DCE on one function of a module: the function (`i`), what calls of the
/// module's functions may do, and the pass's statistics and storage.
struct FunctionRun<'a> {
    module: &'a mut Module,
    i: usize,
    calls: &'a Summaries,
    stats: &'a mut Stats,
    scratch: &'a mut Scratch,
}

impl FunctionRun<'_> {
    /// Run DCE's folds and removals on the function; returns whether it changed.
    fn run(&mut self) -> bool {
        self.scratch.opened = false;
        let folded = self.fold();
        let removed = self.remove_all_dead_insts();
        if self.delete_a_dead_loop() || folded {
            return true;
        }
        if removed {
            // Removing dead code can give the folds something to find (a
            // loop that runs once folds only when no value of it is used
            // after it), so they look once more.
            if self.fold_again() {
                self.remove_all_dead_insts();
                self.delete_a_dead_loop();
                return true;
            }
        }
        // Nothing to fold, no dead code and no dead loop left: a second run
        // would change nothing.
        crate::per_function::report_at_fixed_point(self.i);
        removed
    }

    /// DCE's folds (lengths of fresh arrays, certain traps, decided
    /// branches) and the removal of blocks they leave unreachable; returns
    /// whether any changed the function.
    fn fold(&mut self) -> bool {
        let (func, stats) = (&mut self.module.funcs[self.i], &mut *self.stats);
        let mut edited = crate::edge_values::substitute_edge_values(func, stats);
        edited |= crate::phi_edge_values::substitute_phi_edge_values(func, stats);
        edited |= crate::loop_exit_values::substitute_loop_exit_values(func, stats);
        edited |= crate::fresh_lens::fold_fresh_lens(func, stats);
        edited |= crate::certain_traps::fold_certain_traps(func, self.calls, stats);
        edited |= crate::certain_traps::fold_first_visit_traps(func, self.calls, stats);
        edited |= crate::decided_branches::fold_decided_branches(func, stats);
        edited |= crate::threading::thread_decided_edges(func, stats);
        edited |= crate::return_blocks::merge_equal_return_blocks(func, stats);
        // Last, for what the folds above left: a guard it finds certain to
        // fail is cut at once.
        if crate::optimistic_values::propagate_optimistic_values(func, stats) {
            crate::certain_traps::fold_certain_traps(func, self.calls, stats);
            edited = true;
        }
        edited | remove_unreachable_blocks(func, stats, self.scratch)
    }

    /// [`Self::fold`] again on a function the folds left unchanged, after
    /// [`Self::remove_all_dead_insts`] removed dead code; returns whether
    /// it changed the function. Unless the removal decided a null test or
    /// removed a phi ([`Scratch::opened`]), only the decided branches and threads are
    /// looked at: the removal took away instructions that neither trap nor
    /// teach a value on an edge, made unused loads their checks (certain
    /// traps exactly when the loads were) and dropped checks whose facts
    /// were known, so the other folds, which found nothing before it, find
    /// nothing now (same terminators, so no block became unreachable).
    /// A decided branch may now fold: a loop that runs once folds only when
    /// no value of it is used after it; an edge may now be threaded
    /// ([`crate::threading`]: a value of its block was used past it); and a
    /// block may now be a lone `ret` equal to another
    /// ([`crate::return_blocks`]: its unused load went, so a second DCE run
    /// merged what the first, reporting its fixed point, had left).
    fn fold_again(&mut self) -> bool {
        if self.scratch.opened {
            return self.fold();
        }
        let func = &mut self.module.funcs[self.i];
        let decided = crate::decided_branches::fold_decided_branches(func, self.stats);
        let threaded = crate::threading::thread_decided_edges(func, self.stats);
        let merged = crate::return_blocks::merge_equal_return_blocks(func, self.stats);
        if !(decided | threaded | merged) {
            return false;
        }
        remove_unreachable_blocks(func, self.stats, self.scratch);
        true
    }

    /// Delete one loop whose work is never observed ([`crate::dead_loops`]),
    /// then what that leaves unreachable or dead; returns whether it did. It
    /// runs once dead code is gone, so that a loop whose values only dead
    /// instructions used goes in the same run.
    fn delete_a_dead_loop(&mut self) -> bool {
        let Scratch { loops, checks, .. } = &mut *self.scratch;
        let fid = FuncId::new(self.i);
        if !crate::dead_loops::fold_dead_loops(self.module, fid, loops, checks, self.stats) {
            return false;
        }
        remove_unreachable_blocks(&mut self.module.funcs[self.i], self.stats, self.scratch);
        self.remove_all_dead_insts();
        true
    }

    /// Removes dead instructions until no check goes: removing checks may
    /// leave what only they used dead (unless each value they used is the
    /// result of a [`Mark::ROOT`], live whatever uses it). The checks that
    /// stayed stay (removing code adds no fact); only loads made checks
    /// then are asked about. Returns whether anything changed.
    fn remove_all_dead_insts(&mut self) -> bool {
        let fid = FuncId::new(self.i);
        let mut edited = false;
        let mut first = true;
        loop {
            let (insts_edited, again) = remove_dead_insts(
                self.module,
                fid,
                self.calls,
                self.stats,
                self.scratch,
                first,
            );
            edited |= insts_edited;
            if !again {
                return edited;
            }
            first = false;
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Storage reused from function to function and run to run.
#[derive(Default)]
struct Scratch {
    /// Per block, a [`Reach`] state.
    reach: Vec<u8>,
    /// Per instruction, a [`Mark`].
    live: Vec<u8>,
    blocks: Vec<Block>,
    insts: Vec<Inst>,
    /// The divisions marked [`Mark::TRAP`] by this run of [`remove_dead_insts`].
    divisions: Vec<Inst>,
    /// The known-checked analysis's storage.
    checks: crate::checks::Scratch,
    /// The dead-loop rules' storage.
    loops: crate::dead_loops::Scratch,
    /// The call summaries of the last run.
    calls: Option<Summaries>,
    /// Whether, since the current function's run began, removing dead code
    /// decided a null test (made it a `copy` of a constant) or removed a
    /// phi (the first phi of a block says which predecessors
    /// [`crate::certain_traps`] tries): what every fold must look at again.
    opened: bool,
}

/// Liveness marks of an instruction during [`remove_dead_insts`].
struct Mark;

impl Mark {
    /// Not (yet) seen in the layout nor marked live.
    const UNSEEN: u8 = 0;
    /// Placed in the layout, not (yet) known live.
    const PLACED: u8 = 1;
    /// Live (placed, or used by a live instruction).
    const LIVE: u8 = 2;
    /// Live for its own sake (its effects keep it, or it is a terminator):
    /// live whatever uses it.
    const ROOT: u8 = 4;
    /// Kept for its trap so far ([`trap_only`]): the operands that decide
    /// its trap are live; it becomes its check (or a division of its
    /// divisor by itself) unless a live instruction uses its result.
    const TRAP: u8 = 3;
}

/// What an unused instruction with effects `eff` becomes when its trap is
/// its only reason to stay ([`ir::effects::trap_alone`]): it has a result
/// (a load, `len`, `sdiv` or `srem`), writes and allocates nothing and may
/// trap; its check, or a division whose dividend is its divisor.
fn trap_only(func: &Function, data: &InstData, eff: &Effects) -> Option<InstKind> {
    if data.result.is_none() || !eff.writes_nothing() || eff.allocates || eff.traps != Traps::May {
        return None;
    }
    trap_alone(func, &data.kind)
}

/// Reachability states of a block during [`mark_reachable`].
struct Reach;

impl Reach {
    const NOT_IN_LAYOUT: u8 = 0;
    const UNREACHED: u8 = 1;
    const REACHED: u8 = 2;
}

/// Set `scratch.reach` to the reachability of every block, as
/// [`ir::cfg::Cfg`] sees it: only layout blocks exist, and a block's
/// successors are the layout blocks its last instruction branches to.
fn mark_reachable(func: &Function, scratch: &mut Scratch) {
    let n = func.blocks.len();
    let reach = &mut scratch.reach;
    reach.clear();
    reach.resize(n, Reach::NOT_IN_LAYOUT);
    for &b in &func.layout {
        if let Some(r) = reach.get_mut(b.index()) {
            *r = Reach::UNREACHED;
        }
    }
    let stack = &mut scratch.blocks;
    stack.clear();
    if let Some(&entry) = func.layout.first().filter(|e| e.index() < n) {
        reach[entry.index()] = Reach::REACHED;
        stack.push(entry);
    }
    while let Some(b) = stack.pop() {
        let Some(&last) = func.blocks[b.index()].insts.last() else {
            continue;
        };
        let Some(data) = func.insts.get(last.index()) else {
            continue;
        };
        for s in data.kind.successors() {
            if reach.get(s.index()) == Some(&Reach::UNREACHED) {
                reach[s.index()] = Reach::REACHED;
                stack.push(s);
            }
        }
    }
}

/// Delete blocks the entry does not reach and the phi entries that name them.
fn remove_unreachable_blocks(
    func: &mut Function,
    stats: &mut Stats,
    scratch: &mut Scratch,
) -> bool {
    if func.layout.is_empty() {
        return false;
    }
    mark_reachable(func, scratch);
    let reach = &scratch.reach;
    let is_dead = |b: Block| reach.get(b.index()) != Some(&Reach::REACHED);
    if !func.layout.iter().any(|&b| is_dead(b)) {
        return false;
    }
    // One pass over the layout: removing the blocks one by one made a
    // function that loses many blocks at once cost quadratic time.
    let removed = func.remove_blocks_where(is_dead);
    // The reachability marks still hold: a phi entry from a block that is not
    // reached (now removed) goes.
    func.for_each_placed_kind_mut(|kind| {
        if let InstKind::Phi(entries) = kind {
            entries.retain(|&(pred, _)| !is_dead(pred));
        }
    });
    stats.add("dce", "blocks_removed", removed as u64);
    true
}

/// Mark live from the roots, then remove everything unmarked, turn what is
/// kept only for its trap into checks and remove the redundant checks.
/// Whether the function changed, and whether checks or null tests went
/// that may leave something dead ([`remove_known_checks`]). Checks already
/// there are asked about only on the `first` run over the function.
fn remove_dead_insts(
    module: &mut Module,
    fid: FuncId,
    calls: &Summaries,
    stats: &mut Stats,
    scratch: &mut Scratch,
    first: bool,
) -> (bool, bool) {
    let func = &module.funcs[fid.index()];
    let live = &mut scratch.live;
    live.clear();
    live.resize(func.insts.len(), Mark::UNSEEN);
    let work = &mut scratch.insts;
    work.clear();
    let divisions = &mut scratch.divisions;
    divisions.clear();
    // How many distinct instructions are placed, and how many of those are
    // live: when all are, nothing is unlinked (no block is touched again).
    // Instructions kept only for their trap count as neither until the end.
    let (mut placed, mut placed_live) = (0usize, 0usize);
    let mut any_check = false;
    for inst in func.inst_iter() {
        if live[inst.index()] != Mark::UNSEEN {
            continue;
        }
        placed += 1;
        let data = func.inst(inst);
        // Checks and null tests are asked about only on the first run.
        any_check = any_check || (first && crate::checks::null_test(func, &data.kind).is_some());
        let eff = (!data.kind.is_terminator()).then(|| calls.inst_effects(module, func, inst));
        match eff {
            Some(eff) if eff.removable_if_unused() => live[inst.index()] = Mark::PLACED,
            Some(eff) if trap_only(func, data, &eff).is_some() => {
                live[inst.index()] = Mark::TRAP;
                work.push(inst);
                if checked_by(&data.kind).is_none() {
                    divisions.push(inst);
                }
            }
            _ => {
                any_check |= is_check(&data.kind);
                live[inst.index()] = Mark::ROOT;
                placed_live += 1;
                work.push(inst);
            }
        }
    }
    while let Some(inst) = work.pop() {
        // One kept only for its trap needs only what decides it.
        let kind = &func.inst(inst).kind;
        let alone = (live[inst.index()] == Mark::TRAP)
            .then(|| trap_alone(func, kind))
            .flatten();
        alone.as_ref().unwrap_or(kind).for_each_operand(|v| {
            if let Some(def) = func.def_inst(v) {
                let mark = &mut live[def.index()];
                if *mark != Mark::LIVE && *mark != Mark::ROOT {
                    placed_live += usize::from(*mark != Mark::UNSEEN);
                    *mark = Mark::LIVE;
                    work.push(def);
                }
            }
        });
    }
    if placed_live == placed {
        if !(first && any_check) {
            return (false, false);
        }
        return remove_known_checks(module, fid, scratch, 0, stats);
    }
    rewrite_trap_only_divisions(&mut module.funcs[fid.index()], scratch, stats);
    let live = &scratch.live;
    // Unlink the dead (nothing changes when everything is live).
    let Function {
        layout,
        blocks,
        insts,
        ..
    } = &mut module.funcs[fid.index()];
    let (mut removed, mut phis, mut converted, mut calls) = (0u64, 0u64, 0usize, 0u64);
    for b in layout.iter() {
        blocks[b.index()].insts.retain(|&i| {
            let data = &mut insts[i.index()];
            match live[i.index()] {
                Mark::LIVE | Mark::ROOT => true,
                Mark::TRAP => {
                    if let Some(c) = checked_by(&data.kind) {
                        data.kind = c.check();
                        data.result = None;
                        converted += 1;
                    }
                    true
                }
                _ => {
                    removed += 1;
                    phis += u64::from(data.kind.is_phi());
                    calls += u64::from(matches!(data.kind, InstKind::Call { .. }));
                    data.block = None;
                    false
                }
            }
        });
    }
    scratch.opened |= phis > 0;
    if removed > 0 {
        stats.add("dce", "insts_removed", removed - phis);
        // Unused calls of functions whose summary has no effects.
        stats.add("dce", "calls_without_effects_removed", calls);
        stats.add("dce", "phis_removed", phis);
    }
    if !((first && any_check) || converted > 0) {
        return (true, false);
    }
    let (_, again) = remove_known_checks(module, fid, scratch, converted, stats);
    (true, again)
}

/// Make each division of `scratch.divisions` still kept only for its trap
/// (marked [`Mark::TRAP`]) divide its divisor by itself
/// ([`ir::effects::trap_alone`]): what computed its dividend may go
/// (`dce.divisions_trap_only`).
fn rewrite_trap_only_divisions(func: &mut Function, scratch: &mut Scratch, stats: &mut Stats) {
    let mut n = 0u64;
    for inst in scratch.divisions.drain(..) {
        if scratch.live.get(inst.index()) != Some(&Mark::TRAP) {
            continue;
        }
        if let Some(alone) = trap_alone(func, &func.inst(inst).kind) {
            func.insts[inst.index()].kind = alone;
            n += 1;
        }
    }
    if n > 0 {
        stats.add("dce", "divisions_trap_only", n);
    }
}

/// Remove the checks of function `fid` that [`crate::checks`] finds
/// redundant, and make each null test it decides a `copy` of its value;
/// `converted` of the checks were made of unused loads by this run
/// (marked [`Mark::TRAP`] in `scratch.live`). Whether anything changed,
/// and whether something that went used a value whose instruction may now
/// be dead: one not marked [`Mark::ROOT`] in `scratch.live`, the marks of
/// this run (else marking again finds everything live, no load newly
/// unused).
fn remove_known_checks(
    module: &mut Module,
    fid: FuncId,
    scratch: &mut Scratch,
    converted: usize,
    stats: &mut Stats,
) -> (bool, bool) {
    let func = &module.funcs[fid.index()];
    let gone = crate::checks::redundant_checks(
        module,
        func,
        |i| is_check(&func.inst(i).kind),
        true,
        &mut scratch.checks,
    );
    let from_loads = gone
        .iter()
        .filter(|i| scratch.live.get(i.index()) == Some(&Mark::TRAP))
        .count();
    for (rule, n) in [
        ("loads_to_checks", converted - from_loads),
        ("loads_removed_checked", from_loads),
        ("checks_removed", gone.len() - from_loads),
        (
            "checks_known_from_branches",
            scratch.checks.known_from_branches(),
        ),
        ("null_tests_known", scratch.checks.null_tests().len()),
        (
            "checks_known_from_phis",
            scratch.checks.known_from_phis().len(),
        ),
    ] {
        if n > 0 {
            stats.add("dce", rule, n as u64);
        }
    }
    let tests = scratch.checks.null_tests().iter().map(|&(test, _)| test);
    let frees = gone
        .iter()
        .copied()
        .chain(tests)
        .any(|i| uses_a_non_root(func, i, &scratch.live));
    let func = &mut module.funcs[fid.index()];
    func.remove_insts(&gone);
    scratch.opened |= !scratch.checks.null_tests().is_empty();
    for &(test, value) in scratch.checks.null_tests() {
        let k = func.iconst(i64::from(value));
        func.insts[test.index()].kind = InstKind::Unary(UnOp::Copy, k);
    }
    let changed = !gone.is_empty() || !scratch.checks.null_tests().is_empty();
    (changed, frees)
}

/// Whether instruction `inst` of `func` uses the result of an instruction
/// that `live` (the marks of [`remove_dead_insts`]) does not mark
/// [`Mark::ROOT`].
fn uses_a_non_root(func: &Function, inst: Inst, live: &[u8]) -> bool {
    let mut any = false;
    func.inst(inst).kind.for_each_operand(|v| {
        any |= func
            .def_inst(v)
            .is_some_and(|d| live.get(d.index()) != Some(&Mark::ROOT));
    });
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_function_changed_is_reported() {
        let text = "func @a(%x: i64) -> i64 {\nentry:\n  %d = add %x, 1\n  ret %x\n}\n\
            func @b(%x: i64) -> i64 {\nentry:\n  ret %x\n}\n\
            func @c(%x: i64) -> i64 {\nentry:\n  %d = mul %x, 2\n  ret %x\n}\n";
        let mut m = ir::parse_module(text, "t.ir").expect("parses").0;
        let mut changed = Vec::new();
        let (any, reported) = crate::per_function::tracked(&mut changed, &[], || {
            Dce.run(&mut m, &mut Stats::default())
        });
        assert!(any && reported);
        assert_eq!(changed, [0, 2]);
        // Nothing left to remove: reported, none changed.
        let (any, reported) = crate::per_function::tracked(&mut changed, &[], || {
            Dce.run(&mut m, &mut Stats::default())
        });
        assert!(!any && reported && changed.is_empty());
    }
}
