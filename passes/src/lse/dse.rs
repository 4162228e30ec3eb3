//! Dead-store elimination: a backward must-analysis over the CFG.
//!
//! At each point we keep the locations that every path from here overwrites
//! before anything may observe them. Observers are: a load that may alias;
//! an instruction whose declared reads overlap the location (calls, externs,
//! volatile accesses, `escape`); a possible trap or a return, which observe
//! every reachable slot. Locations of allocations that never escape are never
//! observed by anything but loads, so at a return or a trap they count as
//! overwritten. Crossing the definition of a location's base or index
//! (a phi on a back edge included) forgets it: the same SSA value names
//! another object or slot on the next iteration.
//!
//! An allocation that escapes only later in its own block
//! ([`crate::escape::EscapeInfo::local_escape`]) is young before that point:
//! nothing but its own SSA value reaches it, so no call, volatile access or
//! trap there can observe its slots (a trap's heap shows only what the roots
//! reach, IR.md §7), and a store into it overwritten before the escape is
//! dead across them. In a CFG without cycles the same holds across blocks,
//! up to the first escaping use on every path ([`FirstEscapes`]): a store
//! into a fresh object overwritten after a branch whose arm may trap is
//! dead when the object escapes only after the branch.
//!
//! A store that may itself trap is removed only when the overwriting store is
//! reached with nothing observable in between: then, if the removed store
//! would have trapped, the overwriting one traps the same way (same base and
//! index) with the same trace and heap.
//!
//! Loops: a first walk lets successors not yet visited (back edges,
//! irreducible edges) contribute the empty set. Where the function has
//! natural loops, a second walk lets each back edge contribute what is dead
//! at every exit of its loop (from the first walk) and that nothing in the
//! loop may observe ([`BackEdges`]): a store overwritten after a loop that
//! never reads it is dead. A store a later iteration may read is never
//! removed (its location is read in the loop, or keyed on a value the loop
//! defines).
//!
//! A store that may trap, whose location is overwritten before anything
//! reads it but with something observable in between (another store, a
//! call, a possible trap), becomes its check alone (`nullcheck` of its base,
//! or `boundscheck` of its array and index: `ir::effects::checked_by`): the
//! check traps exactly where and how the store would, before it has written
//! anything, so the heap at that trap is the original's; where it does not
//! trap, the value the store wrote is overwritten before any load, call or
//! trap could see it (the walk's must-set says so). LLVM keeps the explicit
//! check of such a store and deletes the store.
//!
//! Traps on a `null` base (`ir::effects::traps_only_on_null`) are finer:
//! - an access that an earlier check of the same base rules out
//!   ([`super::nonnull`]) cannot trap at all;
//! - an access through base `b` that may trap only when `b` is `null` leaves
//!   the pending stores into fields of `b` in the set: where `b` is not null
//!   it does not trap, and where it is, the field store above would have
//!   trapped `null_deref` before it, with the heap it would show. That store
//!   is then clean: without it, this access traps the same way first.

use super::arena::BlockSlices;
use super::clobber::Clobbers;
use super::loc::{Loc, Subst};
use super::nonnull::NonNull;
use super::young::{FirstEscapes, Young};
use crate::alias::AliasResult;
use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::effects::{checked_by, traps_only_on_null, Traps};
use ir::loops::{LoopId, LoopInfo};
use ir::{Block, Function, Inst, InstKind, Module, Value};

#[cfg(feature = "bug-zoo")]
use crate::zoo::{self, Bug};

/// One location known to be overwritten before it is observed.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
struct Dead {
    loc: Loc,
    /// Nothing observable happens between here and the overwriting store.
    clean: bool,
    /// Some path to the overwriting store goes around a loop from its
    /// bottom to its top ([`BackEdges::add_header_set`]).
    next_trip: bool,
}

/// The must-set at one point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct DeadSet {
    entries: Vec<Dead>,
    /// Every location of a never-escaping allocation is also in the set ...
    private_all: bool,
    /// ... except these, which a later load may read.
    private_except: Vec<Loc>,
}

/// A must-set borrowed from where it is stored.
#[derive(Copy, Clone, Debug, Default)]
struct DeadView<'s> {
    entries: &'s [Dead],
    private_all: bool,
    private_except: &'s [Loc],
}

impl DeadView<'_> {
    fn lookup(&self, loc: Loc, clobbers: &Clobbers<'_>, func: &Function) -> Option<Dead> {
        if let Some(d) = self.entries.iter().find(|d| d.loc == loc) {
            return Some(*d);
        }
        let excepted = self
            .private_except
            .iter()
            .any(|&e| clobbers.alias(func, e, loc) != AliasResult::No);
        (self.private_all && clobbers.is_private(loc) && !excepted).then_some(Dead {
            loc,
            clean: false,
            next_trip: false,
        })
    }
}

impl DeadSet {
    fn view(&self) -> DeadView<'_> {
        DeadView {
            entries: &self.entries,
            private_all: self.private_all,
            private_except: &self.private_except,
        }
    }

    /// Become a copy of `view` (reusing the storage).
    fn assign(&mut self, view: DeadView<'_>) {
        self.entries.clear();
        self.entries.extend_from_slice(view.entries);
        self.private_all = view.private_all;
        self.private_except.clear();
        self.private_except.extend_from_slice(view.private_except);
    }

    /// Become the meet of `a` and `b`: what is dead on both sides.
    fn assign_meet(
        &mut self,
        a: DeadView<'_>,
        b: DeadView<'_>,
        clobbers: &Clobbers<'_>,
        func: &Function,
        cap: usize,
    ) {
        self.entries.clear();
        for d in a.entries.iter().chain(b.entries) {
            if self.entries.iter().any(|e| e.loc == d.loc) {
                continue;
            }
            if let (Some(x), Some(y)) = (
                a.lookup(d.loc, clobbers, func),
                b.lookup(d.loc, clobbers, func),
            ) {
                self.entries.push(Dead {
                    loc: d.loc,
                    clean: x.clean && y.clean,
                    next_trip: x.next_trip || y.next_trip,
                });
            }
        }
        self.private_except.clear();
        self.private_except.extend_from_slice(a.private_except);
        for &e in b.private_except {
            if !self.private_except.contains(&e) {
                self.private_except.push(e);
            }
        }
        self.private_all = a.private_all && b.private_all;
        self.bound(cap);
    }

    fn lookup(&self, loc: Loc, clobbers: &Clobbers<'_>, func: &Function) -> Option<Dead> {
        self.view().lookup(loc, clobbers, func)
    }

    /// Step back over a possible trap: a trap observes every reachable slot,
    /// so only private locations stay; and it is an observable event, so no
    /// path from here to an overwriting store is clean any more (a removed
    /// store that would have trapped must trap before anything else could).
    /// A trap that happens only when `null_base` is null keeps the
    /// locations on that base too: a store into them has trapped first.
    /// Locations `young` says yes to (of allocations not escaped yet) stay:
    /// the trap's heap cannot reach them.
    fn at_possible_trap(
        &mut self,
        clobbers: &Clobbers<'_>,
        null_base: Option<Value>,
        young: impl Fn(Loc) -> bool,
    ) {
        #[cfg(feature = "bug-zoo")]
        if zoo::active(Bug::LseDseAcrossTrap) {
            // Planted (Cranelift #14053): a possible trap observes nothing.
            return;
        }
        self.entries.retain(|d| {
            clobbers.is_private(d.loc)
                || (null_base.is_some() && d.loc.base() == null_base)
                || young(d.loc)
        });
        self.entries.iter_mut().for_each(|d| d.clean = false);
    }

    /// Step back over an instruction that traps exactly when `base` is null:
    /// a field store into `base` above it would have trapped the same way
    /// first, so without that store this instruction does, with nothing
    /// observable in between.
    fn at_null_check(&mut self, base: Value) {
        for d in &mut self.entries {
            if matches!(d.loc, Loc::Field { base: b, .. } if b == base) {
                d.clean = true;
            }
        }
    }

    /// Stay within the cap by forgetting (never by assuming): dropping an
    /// entry or the whole private part only makes the set smaller.
    fn bound(&mut self, cap: usize) {
        if self.entries.len() > cap {
            let excess = self.entries.len() - cap;
            self.entries.drain(..excess);
        }
        if self.private_except.len() > cap {
            self.private_except.clear();
            self.private_all = false;
        }
    }
}

/// The must-sets at the entry of the visited blocks, stored flat.
#[derive(Default)]
struct EntrySets {
    entries: BlockSlices<Dead>,
    private_except: BlockSlices<Loc>,
    private_all: Vec<bool>,
}

impl EntrySets {
    fn reset(&mut self, num_blocks: usize) {
        self.entries.reset(num_blocks);
        self.private_except.reset(num_blocks);
        self.private_all.clear();
        self.private_all.resize(num_blocks, false);
    }

    fn set(&mut self, b: Block, set: &DeadSet) {
        self.entries.set(b, &set.entries);
        self.private_except.set(b, &set.private_except);
        self.private_all[b.index()] = set.private_all;
    }

    /// The set at the entry of `b`, if `b` was visited.
    fn get(&self, b: Block) -> Option<DeadView<'_>> {
        Some(DeadView {
            entries: self.entries.get(b)?,
            private_all: self.private_all[b.index()],
            private_except: self.private_except.get(b).unwrap_or_default(),
        })
    }
}

/// Whether a plain load of `loaded` may read the pending store to `dead`.
#[cfg(not(feature = "bug-zoo"))]
fn load_observes(clobbers: &Clobbers<'_>, func: &Function, dead: Loc, loaded: Loc) -> bool {
    clobbers.alias(func, dead, loaded) != AliasResult::No
}

/// Whether a plain load of `loaded` may read the pending store to `dead`
/// (with the zoo's `lse-dse-may-alias-load` planted, only a must-alias load does).
#[cfg(feature = "bug-zoo")]
fn load_observes(clobbers: &Clobbers<'_>, func: &Function, dead: Loc, loaded: Loc) -> bool {
    let alias = clobbers.alias(func, dead, loaded);
    if zoo::active(Bug::LseDseMayAliasLoad) {
        // Planted (Panda 755ebc76): a may-alias load does not keep the store.
        return alias == AliasResult::Must;
    }
    alias != AliasResult::No
}

/// Storage dead-store elimination reuses from run to run.
#[derive(Default)]
pub struct Scratch {
    at_entry: EntrySets,
    set: DeadSet,
    meet: DeadSet,
    dom: DomTree,
    nonnull: NonNull,
    /// The sets of the first walk, for the loop exits of the second.
    first: EntrySets,
    /// The copy table, rebuilt for each run ([`Subst::recompute`]).
    subst: Subst,
    /// Where allocations first escape, for a CFG without cycles.
    firsts: FirstEscapes,
}

/// What the backward walk asks about the function besides the set.
struct Facts<'a> {
    module: &'a Module,
    subst: &'a Subst,
    clobbers: &'a Clobbers<'a>,
    nonnull: &'a NonNull,
    /// Overwritten locations of reachable objects that a call of a module
    /// function neither read nor could trap on, by its summary, in the
    /// last walk.
    kept_across_calls: std::cell::Cell<u64>,
    /// Overwritten locations of young allocations ([`Young`]) that an
    /// instruction which could otherwise observe them kept, in the last walk.
    kept_before_escape: std::cell::Cell<u64>,
    /// Stores found dead (or made checks) over a loop's back edge by what
    /// its header overwrites ([`BackEdges::add_header_set`]), in the last walk.
    dead_next_trip: std::cell::Cell<u64>,
}

/// How one instruction may trap, as the walk sees it.
struct TrapFacts {
    /// Its effects (`ir::effects`).
    eff: ir::Effects,
    /// The base whose null is its only possible trap, resolved.
    null_base: Option<Value>,
    /// It may trap here (not ruled out by an earlier check of its base).
    may_trap: bool,
}

impl Facts<'_> {
    /// Whether `loc` is a slot of an allocation in `young`; counted as kept.
    fn keeps_young(&self, young: &Young, loc: Loc) -> bool {
        let is_young = young.holds(self.clobbers.alias.escape(), loc);
        if is_young {
            self.kept_before_escape
                .set(self.kept_before_escape.get() + 1);
        }
        is_young
    }

    fn traps(&self, func: &Function, inst: Inst) -> TrapFacts {
        let eff = self.clobbers.effects(self.module, func, inst);
        let null_base = traps_only_on_null(func, inst).map(|b| self.subst.resolve(func, b));
        // A resource limit (or a callee that never ends) makes the input
        // inconclusive (IR.md §7): no heap is compared there.
        let may_trap = eff.traps == Traps::May && !self.nonnull.cannot_trap_on_null(inst);
        TrapFacts {
            eff,
            null_base,
            may_trap,
        }
    }
}

/// The young allocations at the current point of the backward walk
/// ([`Young`]): an allocation becomes young at its first escape and stops
/// being so at its definition. A no-op in a function without allocations
/// that escape in their own block, nor `across` blocks (`tracked`).
fn step_young(
    young: &mut Young,
    (tracked, across): (bool, Option<&FirstEscapes>),
    clobbers: &Clobbers<'_>,
    func: &Function,
    inst: Inst,
) {
    if !tracked {
        return;
    }
    if let Some(r) = func.inst(inst).result {
        young.remove(r);
    }
    let escape = clobbers.alias.escape();
    let first = |r: Value| match across {
        Some(firsts) => firsts.at(r),
        None => escape.local_escape(r),
    };
    Young::escaping_at(escape, func, inst, first, |r| young.insert(r));
}

/// What dead-store elimination did to one function.
#[derive(Default, Debug)]
pub struct DeadStores {
    /// The stores removed.
    pub removed: Vec<Inst>,
    /// The stores that may trap, rewritten to their check alone.
    pub to_checks: u64,
    /// Overwritten locations calls of module functions did not observe, by
    /// their summaries (see [`Facts`]).
    pub kept_across_calls: u64,
    /// Overwritten locations of allocations not escaped yet that a call, a
    /// volatile access or a possible trap did not observe.
    pub kept_before_escape: u64,
    /// Stores found dead (or made checks) because the top of the loop's next
    /// trip overwrites them.
    pub dead_next_trip: u64,
}

/// What [`transfer`] found a store to be.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Verdict {
    /// Not a dead store.
    Kept,
    /// Dead: removed.
    Dead,
    /// Dead, but its possible trap stays: rewritten to its check.
    ToCheck,
}

/// Remove dead stores from `func`, whose CFG is `cfg` (or rewrite them to
/// their checks); returns what was done. `shared` is `cfg`'s dominator tree
/// and loops, given exactly when `cfg` has a retreating edge (a cycle); for
/// a CFG without one the dominator tree is computed here if something asks.
pub fn eliminate_dead_stores(
    module: &Module,
    func: &mut Function,
    cfg: &Cfg,
    shared: Option<(&DomTree, &LoopInfo)>,
    scratch: &mut Scratch,
    clobbers: &Clobbers<'_>,
    cap: usize,
) -> DeadStores {
    let plain_store = |i: Inst| {
        matches!(
            func.inst(i).kind,
            InstKind::Store {
                volatile: false,
                ..
            }
        )
    };
    if !func.inst_iter().any(plain_store) {
        // Only plain stores are ever removed.
        return DeadStores::default();
    }
    debug_assert_eq!(shared.is_some(), cfg.has_retreating_edge());
    let cyclic = shared.is_some();
    let Scratch {
        at_entry,
        set,
        meet,
        dom,
        nonnull,
        first,
        subst,
        firsts,
    } = scratch;
    subst.recompute(func);
    let subst = &*subst;
    if !any_candidate(func, subst, clobbers, cyclic) {
        return DeadStores::default();
    }
    // The dominator tree of `cfg`: the caller's when it has it, else
    // computed here only if something asks.
    if nonnull.reset(func, subst) {
        match shared {
            Some((d, _)) => nonnull.compute(func, d, Some((cfg, subst))),
            None => {
                dom.recompute(func, cfg);
                nonnull.compute(func, dom, Some((cfg, subst)));
            }
        }
    }
    let facts = Facts {
        module,
        subst,
        clobbers,
        nonnull,
        kept_across_calls: std::cell::Cell::new(0),
        kept_before_escape: std::cell::Cell::new(0),
        dead_next_trip: std::cell::Cell::new(0),
    };
    // Without a cycle, where allocations first escape on every path: the
    // young set then goes from block to block (`FirstEscapes`).
    let across =
        (!cyclic && firsts.compute(func, cfg, clobbers.alias.escape())).then_some(&*firsts);
    // Whether some allocation escapes only later in its own block, or later
    // on every path.
    let tracked = across.is_some() || clobbers.alias.escape().has_local_escapes();
    let mut young = Young::default();
    let mut walk = |at_entry: &mut EntrySets, mut back: Option<&mut BackEdges<'_>>| {
        at_entry.reset(func.blocks.len());
        facts.kept_across_calls.set(0);
        facts.kept_before_escape.set(0);
        facts.dead_next_trip.set(0);
        let mut dead: Vec<Inst> = Vec::new();
        let mut to_checks: Vec<Inst> = Vec::new();
        for &b in cfg.rpo().iter().rev() {
            exit_set(
                &facts,
                func,
                cfg,
                b,
                at_entry,
                back.as_deref_mut(),
                cap,
                set,
                meet,
            );
            if across.is_none() {
                young.clear();
            }
            for &inst in func.blocks[b.index()].insts.iter().rev() {
                match transfer(&facts, func, inst, set, &young, cap) {
                    Verdict::Kept => {}
                    Verdict::Dead => dead.push(inst),
                    Verdict::ToCheck => to_checks.push(inst),
                }
                step_young(&mut young, (tracked, across), clobbers, func, inst);
            }
            at_entry.set(b, set);
        }
        (dead, to_checks)
    };
    let mut dead = walk(at_entry, None);
    if let Some((_, loops)) = shared {
        // Again, now with what the first walk found at the loop exits
        // standing in for the back edges, if that is anything.
        std::mem::swap(at_entry, first);
        let mut back = BackEdges {
            loops,
            first,
            cache: vec![None; loops.loops().len()],
        };
        if back.any_dead(&facts, func, cap) {
            dead = walk(at_entry, Some(&mut back));
        } else {
            std::mem::swap(at_entry, first);
        }
    }
    let (removed, to_checks) = dead;
    func.remove_insts(&removed);
    for &i in &to_checks {
        if let Some(check) = checked_by(&func.inst(i).kind) {
            func.insts[i.index()].kind = check.check();
        }
    }
    DeadStores {
        removed,
        to_checks: to_checks.len() as u64,
        kept_across_calls: facts.kept_across_calls.get(),
        kept_before_escape: facts.kept_before_escape.get(),
        dead_next_trip: facts.dead_next_trip.get(),
    }
}

/// How many plain stores [`any_candidate`] compares pairwise at most.
const CANDIDATE_SCAN_LIMIT: usize = 32;

/// Whether some plain store of `func` may be found dead: a location enters
/// the walk's set only at a plain store (and, for a private location, at a
/// return), and a store is dead only where its own location is in the set.
/// A store's own entry comes back around a cycle to it only as what the
/// first walk found at a loop header (the second walk's back edges,
/// [`BackEdges::add_header_set`]): a store alone in a loop that overwrites
/// itself on the next trip. Skipping the walk loses only those (a loop
/// without exits, since any path leaving the loop must also overwrite the
/// location, with another store). So, those aside, a store can be dead
/// only when another plain store has the same location or its location is
/// private. False means the walk would find nothing more than those (it,
/// and the analyses it asks, are skipped); past [`CANDIDATE_SCAN_LIMIT`]
/// stores the answer is true. With `cyclic` (the CFG has a cycle) a call
/// of a module function whose summary the walk counts at
/// ([`DeadStores::kept_across_calls`]) makes the answer true too, so that
/// skipping the walk changes no counter of such a function.
fn any_candidate(func: &Function, subst: &Subst, clobbers: &Clobbers<'_>, cyclic: bool) -> bool {
    let mut locs: Vec<Loc> = Vec::new();
    for inst in func.inst_iter() {
        if let InstKind::Store {
            addr,
            volatile: false,
            ..
        } = &func.inst(inst).kind
        {
            let loc = Loc::of(func, subst, addr);
            if clobbers.is_private(loc) || locs.contains(&loc) || locs.len() == CANDIDATE_SCAN_LIMIT
            {
                return true;
            }
            locs.push(loc);
        } else if cyclic && clobbers.calls.is_summarized_call(func, inst) {
            return true;
        }
    }
    false
}

/// Instructions a loop may have for its exits to stand in for its back edges.
const LOOP_SCAN_LIMIT: usize = 4096;

/// What a back edge contributes in the second walk. A location overwritten
/// before it is read on every path from every exit of the loop (the first
/// walk's sets there), keyed on values defined outside the loop, and that no
/// instruction of the loop may observe (a load that may alias it, a read of
/// its heap leaf, a possible trap unless it is private or the trap is on its
/// own base's null), is dead at the header: each path from there leaves the
/// loop without observing it, or never leaves (and runs out of fuel: an
/// inconclusive run). So is what the first walk found dead at the header
/// itself: that walk let back edges contribute nothing, so its sets are
/// sound, and the end of a back edge is the header's entry. In a loop
/// without exits, whose runs never leave it, a store overwritten at the top
/// of the next trip (with nothing that may observe it in between) is dead.
/// None of these is clean: a store that may trap is not removed over a
/// loop.
struct BackEdges<'a> {
    loops: &'a LoopInfo,
    first: &'a EntrySets,
    cache: Vec<Option<DeadSet>>,
}

impl BackEdges<'_> {
    /// The set the back edge from `b` to header `h` contributes, if it is one.
    fn contribution(
        &mut self,
        facts: &Facts<'_>,
        func: &Function,
        b: Block,
        h: Block,
        cap: usize,
    ) -> Option<DeadView<'_>> {
        let l = self.loops.loop_with_header(h)?;
        if !self.loops.contains(l, b) {
            return None;
        }
        if self.cache[l.index()].is_none() {
            let summary = self.summarize(facts, func, l, cap);
            self.cache[l.index()] = Some(summary);
        }
        self.cache[l.index()].as_ref().map(DeadSet::view)
    }

    /// Summarize every loop; whether any back edge contributes anything.
    fn any_dead(&mut self, facts: &Facts<'_>, func: &Function, cap: usize) -> bool {
        let mut any = false;
        for k in 0..self.cache.len() {
            let summary = self.summarize(facts, func, LoopId(k as u32), cap);
            any |= !summary.entries.is_empty();
            self.cache[k] = Some(summary);
        }
        any
    }

    fn summarize(&self, facts: &Facts<'_>, func: &Function, l: LoopId, cap: usize) -> DeadSet {
        let lp = self.loops.get(l);
        let mut out = DeadSet::default();
        let size: usize = lp
            .blocks
            .iter()
            .map(|b| func.blocks[b.index()].insts.len())
            .sum();
        if size > LOOP_SCAN_LIMIT {
            return out;
        }
        let inside = |v: Value| {
            func.def_inst(v)
                .and_then(|i| func.inst(i).block)
                .is_some_and(|blk| self.loops.contains(l, blk))
        };
        if lp.exits.is_empty() {
            self.add_header_set(&mut out, lp.header, inside, cap);
            return out;
        }
        let mut scratch = DeadSet::default();
        for (k, &e) in lp.exits.iter().enumerate() {
            let exit_set = self.first.get(e).unwrap_or_default();
            if k == 0 {
                out.assign(exit_set);
            } else {
                scratch.assign_meet(out.view(), exit_set, facts.clobbers, func, cap);
                std::mem::swap(&mut out, &mut scratch);
            }
        }
        out.entries
            .retain(|d| !d.loc.keys().any(inside) && !observed_in(facts, func, &lp.blocks, d.loc));
        out.entries.iter_mut().for_each(|d| d.clean = false);
        out.private_all = false;
        out.private_except.clear();
        self.add_header_set(&mut out, lp.header, inside, cap);
        out
    }

    /// Add to `out` what the first walk found dead at the entry of loop
    /// header `h` (keyed on no value the loop defines, `inside`): a sound
    /// fact at the header, so one at the end of each back edge too. A
    /// location overwritten at the top of every trip is dead at the bottom
    /// of the trip before; in a loop without exits this is all the back
    /// edges can say. None is clean (see [`BackEdges`]).
    fn add_header_set(
        &self,
        out: &mut DeadSet,
        h: Block,
        inside: impl Fn(Value) -> bool,
        cap: usize,
    ) {
        let Some(at_header) = self.first.get(h) else {
            return;
        };
        for d in at_header.entries {
            if !d.loc.keys().any(&inside) && !out.entries.iter().any(|e| e.loc == d.loc) {
                out.entries.push(Dead {
                    loc: d.loc,
                    clean: false,
                    next_trip: true,
                });
            }
        }
        out.bound(cap);
    }
}

/// Whether an instruction of `blocks` may observe a pending store to `loc`
/// (as [`transfer`] would decide stepping over it).
fn observed_in(facts: &Facts<'_>, func: &Function, blocks: &[Block], loc: Loc) -> bool {
    let (subst, clobbers) = (facts.subst, facts.clobbers);
    blocks
        .iter()
        .flat_map(|b| &func.blocks[b.index()].insts)
        .any(|&inst| {
            let TrapFacts {
                eff,
                null_base,
                may_trap,
            } = facts.traps(func, inst);
            let reads = match &func.inst(inst).kind {
                InstKind::Store {
                    volatile: false, ..
                } => false,
                InstKind::Load {
                    addr,
                    volatile: false,
                } => load_observes(clobbers, func, loc, Loc::of(func, subst, addr)),
                _ => clobbers.effect_reads(func, &eff, loc),
            };
            let on_own_base = null_base.is_some() && null_base == loc.base();
            let traps = may_trap && !clobbers.is_private(loc) && !on_own_base;
            reads || traps
        })
}

/// Set `set` to the set at the end of `b`: the meet over its successors
/// (empty for one not yet visited); at a return or `unreachable`, every
/// private location. `scratch` is working storage.
#[allow(clippy::too_many_arguments)]
fn exit_set(
    facts: &Facts<'_>,
    func: &Function,
    cfg: &Cfg,
    b: Block,
    at_entry: &EntrySets,
    mut back: Option<&mut BackEdges<'_>>,
    cap: usize,
    set: &mut DeadSet,
    scratch: &mut DeadSet,
) {
    let clobbers = facts.clobbers;
    let succs = cfg.succs(b);
    if succs.is_empty() {
        let terminates = func
            .terminator(b)
            .is_some_and(|t| matches!(func.inst(t).kind, InstKind::Ret(_) | InstKind::Unreachable));
        set.assign(DeadView {
            private_all: terminates,
            ..DeadView::default()
        });
        return;
    }
    let mut have_result = false;
    for &s in succs {
        #[cfg(feature = "bug-zoo")]
        if zoo::active(Bug::LseDseLoopCarried) && at_entry.get(s).is_none() {
            // Planted (Cranelift #13990): a back edge not yet visited is
            // skipped instead of contributing "nothing is dead".
            continue;
        }
        let succ_set = match (at_entry.get(s), back.as_deref_mut()) {
            (Some(view), _) => view,
            (None, Some(back)) => back
                .contribution(facts, func, b, s, cap)
                .unwrap_or_default(),
            (None, None) => DeadView::default(),
        };
        if have_result {
            scratch.assign_meet(set.view(), succ_set, clobbers, func, cap);
            std::mem::swap(set, scratch);
        } else {
            set.assign(succ_set);
            have_result = true;
        }
    }
    if !have_result {
        set.assign(DeadView::default());
    }
}

/// Step backward over a plain store of `loc` that is not dead, once the
/// entries of `loc` are gone: `loc` is overwritten from here on.
fn start_entry(set: &mut DeadSet, loc: Loc, cap: usize) {
    set.private_except.retain(|&e| e != loc);
    set.entries.push(Dead {
        loc,
        clean: true,
        next_trip: false,
    });
    set.bound(cap);
}

/// Step backward over a plain load of `loc`, once the entries it may read
/// are gone: it can read a private location the set holds only implicitly.
fn note_private_load(set: &mut DeadSet, clobbers: &Clobbers<'_>, loc: Loc, cap: usize) {
    if clobbers.is_private(loc) && !set.private_except.contains(&loc) {
        set.private_except.push(loc);
        set.bound(cap);
    }
}

/// Step backward over `inst`; returns whether it is a dead store.
fn transfer(
    facts: &Facts<'_>,
    func: &Function,
    inst: Inst,
    set: &mut DeadSet,
    young: &Young,
    cap: usize,
) -> Verdict {
    let (subst, clobbers) = (facts.subst, facts.clobbers);
    let keeps_young = |loc: Loc| facts.keeps_young(young, loc);
    let data = func.inst(inst);
    if set.entries.is_empty() {
        // Every step below acts on the entries (forgets, dirties, counts
        // them) and, for a plain load or store, on the private part: with
        // no entries, nothing else changes, and how the instruction may trap
        // matters only to a store found dead.
        match &data.kind {
            InstKind::Store {
                addr,
                volatile: false,
                ..
            } => {
                let loc = Loc::of(func, subst, addr);
                if set.lookup(loc, clobbers, func).is_none() {
                    start_entry(set, loc, cap);
                    return Verdict::Kept;
                }
            }
            InstKind::Load {
                addr,
                volatile: false,
            } => {
                note_private_load(set, clobbers, Loc::of(func, subst, addr), cap);
                return Verdict::Kept;
            }
            _ => return Verdict::Kept,
        }
    }
    let TrapFacts {
        eff,
        null_base,
        may_trap,
    } = facts.traps(func, inst);
    match &data.kind {
        InstKind::Store {
            addr,
            volatile: false,
            ..
        } => {
            let loc = Loc::of(func, subst, addr);
            let found = set.lookup(loc, clobbers, func);
            if found.is_some_and(|d| d.next_trip) {
                facts.dead_next_trip.set(facts.dead_next_trip.get() + 1);
            }
            match found {
                Some(_) if !may_trap => return Verdict::Dead,
                Some(Dead { clean, .. }) => {
                    // Clean: its trap moves to a later access, which must
                    // show the heap as it is here. Not clean: its check stays
                    // here. Either way this store may be the check that made
                    // accesses after it safe (super::nonnull), which then may
                    // trap: so it stays a possible trap.
                    set.at_possible_trap(clobbers, null_base, keeps_young);
                    if let Some(b) = null_base {
                        set.at_null_check(b);
                    }
                    return if clean {
                        Verdict::Dead
                    } else {
                        Verdict::ToCheck
                    };
                }
                None => {}
            }
            if may_trap {
                set.at_possible_trap(clobbers, null_base, keeps_young);
            }
            if clobbers.writes_observable(&eff, clobbers.is_private(loc)) {
                set.entries.iter_mut().for_each(|d| d.clean = false);
            }
            set.entries.retain(|d| d.loc != loc);
            start_entry(set, loc, cap);
        }
        InstKind::Load {
            addr,
            volatile: false,
        } => {
            let loc = Loc::of(func, subst, addr);
            set.entries
                .retain(|d| !load_observes(clobbers, func, d.loc, loc));
            if may_trap {
                set.at_possible_trap(clobbers, null_base, keeps_young);
            }
            note_private_load(set, clobbers, loc, cap);
        }
        _ => {
            set.entries
                .retain(|d| !clobbers.effect_reads(func, &eff, d.loc) || keeps_young(d.loc));
            if may_trap {
                set.at_possible_trap(clobbers, null_base, keeps_young);
            }
            if clobbers.writes_observable(&eff, false) {
                set.entries.iter_mut().for_each(|d| d.clean = false);
            }
            if clobbers.calls.is_summarized_call(func, inst) {
                let kept = set.entries.iter().filter(|d| !clobbers.is_private(d.loc));
                facts
                    .kept_across_calls
                    .set(facts.kept_across_calls.get() + kept.count() as u64);
            }
        }
    }
    if let Some(b) = null_base {
        // Even where an earlier check rules the trap out: that check may be
        // the very store this makes dead, and then this access traps instead.
        set.at_null_check(b);
    }
    if let Some(r) = data.result {
        set.entries.retain(|d| !d.loc.keys().any(|k| k == r));
    }
    Verdict::Kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alias::AliasAnalysis;

    /// `any_candidate` on the only function of `text`.
    fn candidate(text: &str) -> bool {
        candidate_in(text, false)
    }

    /// `any_candidate` on the only function of `text`, said `cyclic`.
    fn candidate_in(text: &str, cyclic: bool) -> bool {
        let m = ir::parse_module(text, "t.ir").expect("parses").0;
        let f = &m.funcs[0];
        let alias = AliasAnalysis::new(f);
        let calls = ir::summaries::Summaries::default();
        any_candidate(
            f,
            &Subst::new(f),
            &Clobbers {
                alias: &alias,
                calls: &calls,
            },
            cyclic,
        )
    }

    #[test]
    fn only_a_repeated_or_private_location_is_a_candidate() {
        let head = "type P { x: i64, y: i64 }\nfunc @f(%p: P, %q: P) {\nentry:\n";
        // Distinct locations of parameters: nothing can be dead.
        let distinct = "  store %p.x, 1\n  store %p.y, 2\n  store %q.x, 3\n  ret\n}\n";
        assert!(!candidate(&format!("{head}{distinct}")));
        // The same location twice (through a copy too).
        let twice = "  %c = copy %p\n  store %p.x, 1\n  store %c.x, 2\n  ret\n}\n";
        assert!(candidate(&format!("{head}{twice}")));
        // A store into an allocation that never escapes is dead at the return.
        let private = "  %o = new P\n  store %o.x, 1\n  ret\n}\n";
        assert!(candidate(&format!("{head}{private}")));
    }

    #[test]
    fn a_store_alone_in_a_loop_is_no_candidate() {
        let head = "type P { x: i64 }\nfunc @f(%p: P, %n: i64) {\nentry:\n  jmp head\n\
            head:\n  %i = phi [entry: 0], [head: %j]\n  store %p.x, %i\n  %j = add %i, 1\n\
            %c = slt %j, %n\n  br %c, head, exit\nexit:\n";
        // It overwrites itself on the next trip, but the walk never finds
        // that: its own entry does not come back around the loop.
        let alone = format!("{head}  ret\n}}\n");
        assert!(!candidate_in(&alone, true));
        // Overwritten after the loop: a candidate.
        let after = format!("{head}  store %p.x, 0\n  ret\n}}\n");
        assert!(candidate_in(&after, true));
    }
}
