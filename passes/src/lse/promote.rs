//! Store promotion out of loops: a location that an innermost loop reads and
//! writes only through exact accesses (no other access or effect in the loop
//! may touch it) lives in a register inside the loop and is stored once on
//! each exit.
//!
//! What is promoted, exactly (docs/language.md, decision "store promotion"):
//! - the location is `%b.f`, `%b[%i]` or `@g` with `%b` and `%i` defined
//!   outside the loop; the loop is innermost, its CFG reducible, and no
//!   block of it returns;
//! - every store of it in the loop is in one block `S` that dominates every
//!   latch: each trip that goes around has stored it. An exiting block `S`
//!   dominates stores the last value `S` stored; one it does not dominate
//!   (a loop tested at the top) stores only once the loop went around (a
//!   header flag), the value a header phi carries, unless the pre-header
//!   stores the location itself: then the exits take that store over. The
//!   exit stores add no access (never worse); [`super::exit_stores`] places
//!   them, splitting exit edges where needed;
//! - a load that may see the value from before the trip (before `S`'s first
//!   store) needs a header phi and a load in the pre-header; that load is made
//!   only when the header itself loads the location before storing it, with
//!   only phis and pure instructions before it: every entry to the loop ran
//!   that load at the same heap, so the hoisted load is no speculation;
//! - traps: once a promoted store has run, no instruction of the loop may
//!   trap (the heap at a trap must be the original's). Allowed are traps on
//!   `null` of the base of every promoted location, and the checks that
//!   replace the promoted location's own accesses when they may trap (a
//!   loop-invariant check traps on its first run or never, and its first run
//!   comes before the first promoted store); a loop with any other possible
//!   trap (a call, an extern, a division, `guard`, ...) promotes nothing;
//! - a loop without exits (its runs never leave it: they run out of fuel or
//!   trap) promotes the same way and makes no exit stores at all: nothing
//!   after the loop can read the location, and the traps allowed above see
//!   the heap as it was (`lse.promoted_without_exits` counts these).

use super::clobber::Clobbers;
use super::exit_stores::{self, ExitStore};
use super::loc::{Loc, Subst};
use super::nonnull::NonNull;
use crate::alias::{AliasAnalysis, AliasResult};
use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::effects::{checked_by, traps_only_on_null, Traps};
use ir::loops::{Loop, LoopInfo};
use ir::{Addr, Block, Function, Inst, InstKind, Module, Type, Value, ValueDef};

/// Instructions an innermost loop may have to be considered.
const LOOP_SCAN_LIMIT: usize = 4096;
/// Locations considered per loop.
const MAX_CANDIDATES: usize = 8;

/// What promotion did, for statistics.
#[derive(Clone, Copy, Debug, Default)]
pub struct PromoteCounts {
    /// Locations promoted (one per loop and location).
    pub locations: u64,
    /// Loads hoisted from a loop header into its pre-header.
    pub loads_hoisted: u64,
    /// Exit stores made only when the loop went around (its exiting block
    /// may run before the trip's store: a loop tested at the top).
    pub exits_guarded: u64,
    /// Pre-header stores the loop's exit stores took over (a loop that may
    /// exit before its store: the exit stores what the pre-header stored).
    pub entry_stores_sunk: u64,
    /// Exit blocks made to hold exit stores (an exit entered by more than
    /// one edge, or a guarded exit store).
    pub exit_blocks: u64,
    /// Locations promoted in loops without exits (no exit stores at all).
    pub without_exits: u64,
}

/// Storage reused from run to run.
#[derive(Default)]
pub struct Scratch {
    nonnull: NonNull,
    /// Whether `nonnull` is this function's (computed once a loop has candidates).
    nonnull_ready: bool,
    in_loop: Vec<bool>,
    /// Per instruction: an access of a candidate of the loop analysed.
    owned: Vec<bool>,
    /// Values replaced by others (loads now served from a register).
    replace: Vec<Option<Value>>,
}

/// One plain access of the loop.
#[derive(Copy, Clone)]
struct Access {
    inst: Inst,
    loc: Loc,
    is_store: bool,
    /// It may trap where it stands (set for a candidate's accesses).
    may_trap: bool,
}

/// How a possible trap of the loop may happen.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Trap {
    /// Only on this (resolved) base being `null`.
    NullOn(Value),
    /// As the access of this location (its check).
    Access(Loc),
}

/// A candidate location and what the loop does with it.
struct Candidate {
    loc: Loc,
    /// Its accesses in the loop, in block order (blocks in RPO, then position).
    accesses: Vec<Access>,
    /// The block holding every store.
    store_block: Block,
    /// Whether some load sees the value from before the trip.
    needs_phi: bool,
    /// The header load to hoist (when `needs_phi`).
    hoist: Option<Inst>,
    /// Whether some access of it may trap here.
    may_trap: bool,
    /// Whether some exiting block is not dominated by `store_block` (its
    /// exit store is made only when the loop went around).
    guarded: bool,
    /// The pre-header's store of the location that the loop's exits take
    /// over (nothing between it and the loop may trap or touch the
    /// location), and whether it may trap where it stands.
    entry_store: Option<(Inst, bool)>,
}

/// Promote the locations of `func`'s innermost loops that qualify. `dom` and
/// `loops` are `cfg`'s, which has a back edge; the CFG changes when exit
/// blocks are made (`exit_blocks` of the counts). Replaced loads are
/// rewritten in every use and redirected in `alias`.
pub fn promote(
    module: &Module,
    func: &mut Function,
    cfg: &Cfg,
    (dom, loops): (&DomTree, &LoopInfo),
    alias: &mut AliasAnalysis,
    calls: &ir::summaries::Summaries,
    scratch: &mut Scratch,
) -> PromoteCounts {
    let mut counts = PromoteCounts::default();
    if !loops.is_reducible() {
        return counts;
    }
    let innermost = loops.innermost();
    let shaped: Vec<&Loop> = loops
        .loops()
        .iter()
        .enumerate()
        .filter(|&(i, lp)| innermost[i] && well_shaped(func, cfg, lp))
        .map(|(_, lp)| lp)
        .collect();
    if shaped.is_empty() {
        return counts;
    }
    let subst = Subst::new(func);
    scratch.nonnull_ready = false;
    scratch.in_loop.clear();
    scratch.in_loop.resize(func.blocks.len(), false);
    scratch.replace.clear();
    scratch.replace.resize(func.values.len(), None);
    let mut plans: Vec<(&Loop, Vec<Candidate>)> = Vec::new();
    {
        let clobbers = Clobbers {
            alias: &*alias,
            calls,
        };
        for lp in shaped {
            for &b in &lp.blocks {
                scratch.in_loop[b.index()] = true;
            }
            let chosen = analyse(module, func, dom, &clobbers, &subst, scratch, lp);
            for &b in &lp.blocks {
                scratch.in_loop[b.index()] = false;
            }
            if !chosen.is_empty() {
                plans.push((lp, chosen));
            }
        }
    }
    // Every loop's rewrite (its header phis over `cfg`'s predecessors)
    // before any exit edge is split: an exit may be another loop's header.
    let mut exits: Vec<(&Loop, Vec<ExitStore>, Option<Value>)> = Vec::with_capacity(plans.len());
    for (lp, chosen) in plans {
        let mut stores = Vec::new();
        for c in chosen {
            apply(
                module,
                func,
                (cfg, dom),
                lp,
                &c,
                &mut scratch.replace,
                (&mut stores, &mut counts),
            );
        }
        let went_around = stores.iter().any(|x| x.guarded).then(|| {
            let (zero, one) = (func.iconst(0), func.iconst(1));
            header_phi(func, cfg, lp, Type::I64, (zero, one))
        });
        // Grouped by exiting block, each group in candidate order.
        stores.sort_by_key(|x| x.from);
        exits.push((lp, stores, went_around));
    }
    for (lp, stores, went_around) in exits {
        let placed = exit_stores::place(func, cfg, lp, &stores, went_around);
        counts.exit_blocks += placed.blocks;
        counts.exits_guarded += placed.guarded;
    }
    if counts.locations > 0 {
        rewrite_uses(func, alias, &scratch.replace);
    }
    counts
}

/// Whether loop `lp` has the shape promotion needs: small enough, no block
/// returns, every way in reachable, and a store in it (a loop without exits
/// qualifies: its promoted stores simply go).
fn well_shaped(func: &Function, cfg: &Cfg, lp: &Loop) -> bool {
    if !small_with_a_store(func, lp) {
        return false;
    }
    let returns = lp.blocks.iter().any(|&b| {
        func.terminator(b)
            .is_some_and(|t| matches!(func.inst(t).kind, InstKind::Ret(_)))
    });
    !returns && cfg.preds(lp.header).iter().all(|&p| cfg.is_reachable(p))
}

/// Whether loop `lp` holds at most [`LOOP_SCAN_LIMIT`] instructions, one
/// of them a plain store (also what [`super::first_trip`] looks at).
pub(super) fn small_with_a_store(func: &Function, lp: &Loop) -> bool {
    let size: usize = lp
        .blocks
        .iter()
        .map(|b| func.blocks[b.index()].insts.len())
        .sum();
    size <= LOOP_SCAN_LIMIT
        && lp.blocks.iter().any(|&b| {
            func.blocks[b.index()].insts.iter().any(|&i| {
                matches!(
                    func.inst(i).kind,
                    InstKind::Store {
                        volatile: false,
                        ..
                    }
                )
            })
        })
}

/// Whether `v` is defined outside the loop whose blocks are marked in `in_loop`.
pub(super) fn defined_outside(func: &Function, in_loop: &[bool], v: Value) -> bool {
    match func.value_def(v) {
        ValueDef::Inst(i) => func.inst(i).block.is_some_and(|b| !in_loop[b.index()]),
        _ => true,
    }
}

/// Choose the locations of loop `lp` to promote (its blocks are marked in
/// `scratch.in_loop`).
fn analyse(
    module: &Module,
    func: &Function,
    dom: &DomTree,
    clobbers: &Clobbers<'_>,
    subst: &Subst,
    scratch: &mut Scratch,
    lp: &Loop,
) -> Vec<Candidate> {
    let in_loop = &scratch.in_loop;
    let mut accesses: Vec<Access> = Vec::new();
    // Other instructions that touch memory: (instruction, effects).
    let mut others: Vec<(Inst, ir::Effects)> = Vec::new();
    let mut locs: Vec<Loc> = Vec::new();
    for &b in &lp.blocks {
        for &i in &func.blocks[b.index()].insts {
            match &func.inst(i).kind {
                InstKind::Load {
                    addr,
                    volatile: false,
                } => accesses.push(Access {
                    inst: i,
                    loc: Loc::of(func, subst, addr),
                    is_store: false,
                    may_trap: false,
                }),
                InstKind::Store {
                    addr,
                    volatile: false,
                    ..
                } => {
                    let loc = Loc::of(func, subst, addr);
                    accesses.push(Access {
                        inst: i,
                        loc,
                        is_store: true,
                        may_trap: false,
                    });
                    let invariant = loc.keys().all(|k| defined_outside(func, in_loop, k));
                    if invariant && !locs.contains(&loc) && locs.len() < MAX_CANDIDATES {
                        locs.push(loc);
                    }
                }
                _ => {
                    let eff = clobbers.effects(module, func, i);
                    if eff.traps == Traps::May && traps_only_on_null(func, i).is_none() {
                        // A possible trap no check can rule out: nothing is promoted.
                        return Vec::new();
                    }
                    if !eff.reads_nothing() || !eff.writes_nothing() || eff.may_trap() {
                        others.push((i, eff));
                    }
                }
            }
        }
    }
    let mut candidates: Vec<Candidate> = locs
        .into_iter()
        .filter_map(|loc| {
            candidate(
                module,
                func,
                (dom, subst),
                clobbers,
                lp,
                loc,
                (&accesses, &others),
            )
        })
        .collect();
    if candidates.is_empty() {
        return candidates;
    }
    if !scratch.nonnull_ready {
        if scratch.nonnull.reset(func, subst) {
            scratch.nonnull.compute(func, dom, None);
        }
        scratch.nonnull_ready = true;
    }
    // Marks set here are cleared below: one loop's work stays its size.
    let mut owned = std::mem::take(&mut scratch.owned);
    if owned.len() < func.insts.len() {
        owned.resize(func.insts.len(), false);
    }
    for c in &mut candidates {
        if let Some((i, may_trap)) = &mut c.entry_store {
            *may_trap = possible_trap(module, clobbers, func, &scratch.nonnull, *i);
        }
        for a in &mut c.accesses {
            a.may_trap = possible_trap(module, clobbers, func, &scratch.nonnull, a.inst);
            c.may_trap |= a.may_trap;
            owned[a.inst.index()] = true;
        }
    }
    // The possible traps of the rest of the loop.
    let mut traps: Vec<Trap> = Vec::new();
    let rest: Vec<Inst> = accesses
        .iter()
        .map(|a| a.inst)
        .chain(others.iter().map(|&(i, _)| i))
        .filter(|&i| !owned[i.index()])
        .collect();
    for c in &candidates {
        for a in &c.accesses {
            owned[a.inst.index()] = false;
        }
    }
    scratch.owned = owned;
    for &i in &rest {
        if possible_trap(module, clobbers, func, &scratch.nonnull, i) {
            match traps_only_on_null(func, i) {
                Some(b) => {
                    let t = Trap::NullOn(subst.resolve(func, b));
                    if !traps.contains(&t) {
                        traps.push(t);
                    }
                }
                None => return Vec::new(),
            }
        }
    }
    // All of them, or the first one that can go alone.
    if allowed(&candidates, &traps, |_| true) {
        return candidates;
    }
    let pick = (0..candidates.len()).find(|&k| allowed(&candidates, &traps, |j| j == k));
    match pick {
        Some(k) => vec![candidates.swap_remove(k)],
        None => Vec::new(),
    }
}

/// Whether instruction `i` may trap where it stands (resource limits aside).
fn possible_trap(
    module: &Module,
    clobbers: &Clobbers<'_>,
    func: &Function,
    nonnull: &NonNull,
    i: Inst,
) -> bool {
    clobbers.effects(module, func, i).traps == Traps::May && !nonnull.cannot_trap_on_null(i)
}

/// The trap an access of location `loc` (a candidate's) may make.
fn access_trap(loc: Loc) -> Trap {
    match loc {
        Loc::Field { base, .. } => Trap::NullOn(base),
        _ => Trap::Access(loc),
    }
}

/// Whether promoting the candidates `chosen` picks keeps the heap at every
/// possible trap: each possible trap (`traps`, the accesses of candidates
/// not chosen, the checks left for chosen ones) cannot happen once any
/// chosen location's store has run.
fn allowed(candidates: &[Candidate], traps: &[Trap], chosen: impl Fn(usize) -> bool) -> bool {
    let mut all: Vec<Trap> = traps.to_vec();
    for (k, c) in candidates.iter().enumerate() {
        let hoisted = chosen(k) && c.hoist.is_some();
        if c.may_trap && !hoisted {
            all.push(access_trap(c.loc));
        }
    }
    candidates
        .iter()
        .enumerate()
        .filter(|&(k, _)| chosen(k))
        .all(|(_, c)| {
            all.iter().all(|&t| match t {
                Trap::NullOn(b) => c.loc.base() == Some(b),
                Trap::Access(l) => l == c.loc,
            })
        })
}

/// Location `loc` as a candidate of loop `lp`, if nothing else in the loop
/// may touch it and its stores are in one block that every trip passes.
fn candidate(
    module: &Module,
    func: &Function,
    (dom, subst): (&DomTree, &Subst),
    clobbers: &Clobbers<'_>,
    lp: &Loop,
    loc: Loc,
    (accesses, others): (&[Access], &[(Inst, ir::Effects)]),
) -> Option<Candidate> {
    let mut own: Vec<Access> = Vec::new();
    let mut store_block: Option<Block> = None;
    for a in accesses {
        if a.loc == loc {
            if a.is_store {
                let b = func.inst(a.inst).block?;
                if store_block.is_some_and(|s| s != b) {
                    return None;
                }
                store_block = Some(b);
            }
            own.push(*a);
        } else if clobbers.alias(func, a.loc, loc) != AliasResult::No {
            return None;
        }
    }
    for (_, eff) in others {
        if clobbers.effect_reads(func, eff, loc) || clobbers.effect_writes(func, eff, loc) {
            return None;
        }
    }
    let s = store_block?;
    loc_type(module, func, loc)?;
    if !lp.latches.iter().all(|&b| dom.dominates(s, b)) {
        return None;
    }
    // An exiting block `s` does not dominate runs before the trip's store:
    // its exit store waits for the loop to have gone around.
    let guarded = lp
        .blocks
        .iter()
        .filter(|&&b| func.successors(b).iter().any(|e| lp.exits.contains(e)))
        .any(|&b| !dom.dominates(s, b));
    // Loads that may see the value from before the trip.
    let mut needs_phi = false;
    let mut stored = false;
    let mut hoist = None;
    for a in &own {
        let b = func.inst(a.inst).block?;
        if b == s {
            stored |= a.is_store;
            needs_phi |= !a.is_store && !stored;
        } else if !a.is_store && !dom.dominates(s, b) {
            needs_phi = true;
        }
    }
    let entry_store = if guarded || needs_phi {
        entry_store(module, func, (subst, clobbers), lp, loc).map(|i| (i, false))
    } else {
        None
    };
    if needs_phi && entry_store.is_none() {
        hoist = Some(hoistable_load(func, subst, lp, loc)?);
    }
    Some(Candidate {
        loc,
        accesses: own,
        store_block: s,
        needs_phi,
        hoist,
        may_trap: false,
        guarded: guarded && entry_store.is_none(),
        entry_store,
    })
}

/// Instructions of a pre-header looked at for its store of a location.
const ENTRY_SCAN_LIMIT: usize = 16;

/// The pre-header's store of `loc` with nothing after it that may trap or
/// touch `loc`: every entry to the loop stored `loc` there, so the loop's
/// exits can make that store instead (one store per entry either way).
fn entry_store(
    module: &Module,
    func: &Function,
    (subst, clobbers): (&Subst, &Clobbers<'_>),
    lp: &Loop,
    loc: Loc,
) -> Option<Inst> {
    let pre = lp.preheader?;
    let insts = &func.blocks[pre.index()].insts;
    for &i in insts.iter().rev().skip(1).take(ENTRY_SCAN_LIMIT) {
        if let InstKind::Store {
            addr,
            volatile: false,
            ..
        } = &func.inst(i).kind
        {
            if Loc::of(func, subst, addr) == loc {
                return Some(i);
            }
        }
        // A load or store between names its location directly (the effects
        // table's heap nodes say nothing of a fresh object's own elements:
        // `corpus/regressions/lse_promote_entry_store_read_by_a_load_after_it.ir`).
        if let InstKind::Load { addr, .. } | InstKind::Store { addr, .. } = &func.inst(i).kind {
            if clobbers.alias(func, Loc::of(func, subst, addr), loc) != AliasResult::No {
                return None;
            }
        }
        let eff = clobbers.effects(module, func, i);
        if eff.traps == Traps::May
            || clobbers.effect_reads(func, &eff, loc)
            || clobbers.effect_writes(func, &eff, loc)
        {
            return None;
        }
    }
    None
}

/// The header's load of `loc` that every entry to the loop runs first: before
/// any store of it, with only phis and pure instructions before it.
fn hoistable_load(func: &Function, subst: &Subst, lp: &Loop, loc: Loc) -> Option<Inst> {
    lp.preheader?;
    for &i in &func.blocks[lp.header.index()].insts {
        let kind = &func.inst(i).kind;
        let pure = match kind {
            InstKind::Load {
                addr,
                volatile: false,
            } if Loc::of(func, subst, addr) == loc => return Some(i),
            InstKind::Store {
                addr,
                volatile: false,
                ..
            } if Loc::of(func, subst, addr) == loc => return None,
            InstKind::Phi(_) | InstKind::Unary(..) | InstKind::Select(..) => true,
            InstKind::Binary(op, _, b) => {
                !op.may_trap() || func.as_const(*b).is_some_and(|c| c != 0 && c != -1)
            }
            _ => false,
        };
        if !pure {
            return None;
        }
    }
    None
}

/// Promote candidate `c` of loop `lp`: loads read the register, stores go
/// (or leave their check behind); the stores each exit edge needs are
/// pushed on `exits`.
fn apply(
    module: &Module,
    func: &mut Function,
    (cfg, dom): (&Cfg, &DomTree),
    lp: &Loop,
    c: &Candidate,
    replace: &mut Vec<Option<Value>>,
    (exits, counts): (&mut Vec<ExitStore>, &mut PromoteCounts),
) {
    let ty = loc_type(module, func, c.loc).expect("a candidate's type is known");
    let last_store = c
        .accesses
        .iter()
        .rev()
        .find(|a| a.is_store)
        .map(|a| stored_value(func, a.inst))
        .expect("a candidate has a store");
    let mut phi_value = None;
    let mut from_entry = None;
    if let Some((store, may_trap)) = c.entry_store {
        from_entry = Some(stored_value(func, store));
        match checked_by(&func.inst(store).kind).map(|k| k.check()) {
            Some(kind) if may_trap => func.insts[store.index()].kind = kind,
            _ => func.remove_inst(store),
        }
        counts.entry_stores_sunk += 1;
    }
    if c.needs_phi || c.guarded || from_entry.is_some() {
        // The value at the start of a trip: from outside the loop the
        // pre-header store's, the hoisted load's, or (when no load needs
        // it) any value, which is only ever stored once the loop went around.
        let outside = if let Some(v) = from_entry {
            v
        } else if c.needs_phi {
            let pre = lp.preheader.expect("hoisting needs a pre-header");
            let (load, loaded) = func.create_inst(
                InstKind::Load {
                    addr: c.loc.addr(),
                    volatile: false,
                },
                Some(ty),
            );
            let pos = func.blocks[pre.index()].insts.len() - 1;
            func.insert_inst(pre, pos, load);
            counts.loads_hoisted += 1;
            loaded.expect("load result")
        } else if ty.is_ref() {
            func.null()
        } else {
            func.iconst(0)
        };
        phi_value = Some(header_phi(func, cfg, lp, ty, (outside, last_store)));
    }
    // A hoisted load or the pre-header's store did the accesses' checks.
    let keep_checks = c.hoist.is_none() && c.entry_store.is_none();
    let mut current: Option<Value> = None;
    for a in &c.accesses {
        let b = func.inst(a.inst).block.expect("placed");
        let value = if b == c.store_block {
            current.or(phi_value)
        } else if dom.dominates(c.store_block, b) {
            Some(last_store)
        } else {
            phi_value
        };
        if a.is_store {
            if b == c.store_block {
                current = Some(stored_value(func, a.inst));
            }
        } else if let (Some(old), Some(new)) = (func.inst(a.inst).result, value) {
            if replace.len() <= old.index() {
                replace.resize(old.index() + 1, None);
            }
            replace[old.index()] = Some(new);
        }
        let check = checked_by(&func.inst(a.inst).kind).map(|k| k.check());
        match check {
            Some(kind) if keep_checks && a.may_trap => {
                let data = &mut func.insts[a.inst.index()];
                data.kind = kind;
                data.result = None;
            }
            _ => func.remove_inst(a.inst),
        }
    }
    for &b in &lp.blocks {
        if !func.successors(b).iter().any(|e| lp.exits.contains(e)) {
            continue;
        }
        let after_store = from_entry.is_some() || dom.dominates(c.store_block, b);
        exits.push(ExitStore {
            loc: c.loc,
            from: b,
            value: if dom.dominates(c.store_block, b) {
                last_store
            } else {
                phi_value.expect("a guarded candidate has a header phi")
            },
            ty,
            guarded: !after_store,
        });
    }
    counts.locations += 1;
    if lp.exits.is_empty() {
        counts.without_exits += 1;
    }
}

/// A phi at `lp`'s header of type `ty`: `outside` from each predecessor
/// outside the loop, `around` from each latch.
fn header_phi(
    func: &mut Function,
    cfg: &Cfg,
    lp: &Loop,
    ty: Type,
    (outside, around): (Value, Value),
) -> Value {
    let entries: Vec<(Block, Value)> = cfg
        .preds(lp.header)
        .iter()
        .map(|&p| {
            (
                p,
                if lp.latches.contains(&p) {
                    around
                } else {
                    outside
                },
            )
        })
        .collect();
    let (phi, result) = func.create_inst(InstKind::Phi(entries), Some(ty));
    func.insert_inst(lp.header, 0, phi);
    result.expect("phi result")
}

fn stored_value(func: &Function, store: Inst) -> Value {
    match func.inst(store).kind {
        InstKind::Store { value, .. } => value,
        _ => unreachable!("a store"),
    }
}

/// The type of location `loc`; `None` for an element of the `null` literal
/// (whose type names no element type).
fn loc_type(module: &Module, func: &Function, loc: Loc) -> Option<Type> {
    match loc.addr() {
        Addr::Field { field, .. } => Some(module.field(field).ty),
        Addr::Elem { base, .. } => func.value_type(base).elem(),
        Addr::Global(g) => Some(module.globals[g.index()].ty),
    }
}

/// Rewrite every operand to what it stands for now, and redirect `alias`.
fn rewrite_uses(func: &mut Function, alias: &mut AliasAnalysis, replace: &[Option<Value>]) {
    let resolve = |mut v: Value| {
        for _ in 0..=replace.len() {
            match replace.get(v.index()).copied().flatten() {
                Some(next) if next != v => v = next,
                _ => return v,
            }
        }
        v
    };
    func.for_each_placed_kind_mut(|kind| kind.for_each_operand_mut(|v| *v = resolve(*v)));
    for (i, r) in replace.iter().enumerate() {
        if r.is_some() {
            alias.redirect(func, Value::new(i), resolve(Value::new(i)));
        }
    }
}
