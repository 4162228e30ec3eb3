//! Load forwarding over the whole CFG, loops included.
//!
//! Blocks are visited in reverse post-order with a [`Known`] state each:
//! - a load of a known location is replaced by the known value; otherwise its
//!   result becomes known; a store of the value already known is removed;
//!   otherwise it clobbers what may alias it and becomes known;
//! - at a join, a location known in every predecessor keeps its value, or gets
//!   a new phi when the predecessors know different values;
//! - at a loop header, a location known on every entry edge survives when
//!   nothing in the loop may write it (the value from before the loop), or
//!   when the loop writes it only through stores of that exact location: then
//!   a header phi carries it around the loop, its back-edge entries being the
//!   value known at the end of each latch (or, if the state lost it, a load
//!   inserted at the end of the latch, which cannot trap: the same base and
//!   index were accessed successfully before the loop);
//! - a block entered by an edge not yet visited that is not a loop back edge
//!   (irreducible control flow) starts with nothing known.
//!
//! - a `new T` makes every field of the fresh object known: 0 or `null`
//!   (IR.md §2), so loads of fields nothing wrote yet fold and stores of the
//!   initial value are redundant (up to [`FRESH_FIELDS`] fields, and only
//!   into free room below the cap: a fresh fact never evicts a learned one);
//! - a `newarray E, n` makes the whole fresh array known to hold 0 or `null`
//!   (one fact, [`whole_array`]) and, for a constant `n`, its first
//!   [`FRESH_FIELDS`] elements too (so that joins and loops that write them
//!   get phis from the initial value). A store that may write an element
//!   forgets the whole-array fact unless it stores the initial value. A load
//!   of an element the fact covers gets the initial value; it goes only when
//!   it cannot trap (a constant index below the array's constant length),
//!   otherwise it stays, its result unused, for its bounds trap. A store of
//!   the initial value is redundant under the same condition.
//! - a store of value `v` does not clobber a fact that its location holds
//!   `v`: whether or not it writes that location, `v` is there afterwards.
//!
//! Every fact is keyed on values that dominate the point where it holds, and
//! names a value available there; a fact exists only after an access of the
//! same base and index succeeded, or after the `new` that made the base, so a
//! replaced load could never have trapped.
//! No fact is keyed on a base that is the constant `null` (such an access
//! always traps, and `null` carries no element type).

use super::arena::BlockSlices;
use super::clobber::Clobbers;
use super::known::{lookup, lookup_near, Entry, Evicted, Known, Origin};
use super::loc::{Loc, Subst};
use super::writers::LoopWriters;
use super::young::{FirstEscapes, Young};
use crate::alias::AliasResult;
use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::loops::{LoopId, LoopInfo};
use ir::{Addr, Block, Function, Inst, InstKind, Module, Type, Value};

#[cfg(feature = "bug-zoo")]
use crate::zoo::{self, Bug};

/// What forwarding did, for statistics.
#[derive(Clone, Debug, Default)]
pub struct ForwardCounts {
    /// Loads replaced, by where the value came from.
    pub forwarded_local: u64,
    /// ... known at a join (possibly through a new phi).
    pub forwarded_merge: u64,
    /// ... known before a loop that never writes the location.
    pub forwarded_loop_invariant: u64,
    /// ... carried around a loop through a header phi.
    pub forwarded_loop_carried: u64,
    /// Stores of the value already known to be there.
    pub stores_redundant: u64,
    /// Locations kept through a loop whose every store of them writes the
    /// value they hold on entry (those stores are then redundant).
    pub loops_storing_held: u64,
    /// ... a field of a fresh object or an element of a fresh array that
    /// nothing wrote yet.
    pub forwarded_fresh: u64,
    /// Loads of a fresh array's element whose value (the initial one) was
    /// forwarded but which stay for their bounds trap (their result unused).
    pub fresh_kept_for_trap: u64,
    /// ... read or stored by a volatile access of the same location.
    pub forwarded_volatile: u64,
    /// Tracked locations forgotten because of the cap.
    pub evictions: u64,
    /// Known values of a fresh object that an instruction which could
    /// otherwise write it kept, because the object escapes only later in its
    /// block ([`crate::escape::EscapeInfo::local_escape`]).
    pub kept_before_escape: u64,
    /// Known values of reachable objects that a call of a module function
    /// kept because its summary says it cannot write them (a call of
    /// unknown code forgets them).
    pub kept_across_calls: u64,
}

/// The most fields of one fresh object (elements of a fresh array of constant
/// length) whose initial values forwarding tracks: the first ones.
pub const FRESH_FIELDS: usize = 8;

/// The result of forwarding, before it is applied.
pub struct Forwarding {
    /// Replacements of removed loads.
    pub subst: Subst,
    /// Loads and stores to remove.
    pub removed: Vec<Inst>,
    /// Phis forwarding created (some may end up unused).
    pub created_phis: Vec<Inst>,
    /// Loads inserted at latches to complete those phis (unused, and removed,
    /// when their phi goes: otherwise they would run on every trip for nothing).
    pub latch_loads: Vec<Inst>,
    /// Counters.
    pub counts: ForwardCounts,
}

/// How a loop treats one location.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum LoopWrites {
    None,
    OnlyExact,
    Clobbers,
}

struct PendingPhi {
    phi: Inst,
    loc: Loc,
}

/// Storage forwarding reuses from run to run.
#[derive(Default)]
pub struct Scratch {
    writers: LoopWriters,
    out: BlockSlices<Entry>,
    state: Known,
    values: Vec<Value>,
    /// The copy table of the last run, handed back with [`Scratch::reuse`]
    /// and rebuilt for each run ([`Subst::recompute`]).
    subst: Subst,
    /// Where allocations first escape, for a CFG without cycles.
    firsts: FirstEscapes,
}

impl Scratch {
    /// Keep `subst` (a [`Forwarding`]'s, once applied) for the next run's
    /// table, which rebuilds it from scratch ([`Subst::recompute`]).
    pub fn reuse(&mut self, subst: Subst) {
        self.subst = subst;
    }
}

struct Forward<'a> {
    module: &'a Module,
    clobbers: Clobbers<'a>,
    cfg: &'a Cfg,
    /// The loops (stale when the CFG has no back edge: then never asked).
    loops: &'a LoopInfo,
    /// The instructions of each loop that may write, as they were before forwarding.
    writers: &'a LoopWriters,
    has_loops: bool,
    cap: usize,
    /// The state at the end of each visited block.
    out: BlockSlices<Entry>,
    /// The state of the block being visited.
    state: Known,
    /// Scratch: the allocations of the block being visited that have not
    /// escaped yet.
    young: Young,
    /// Where allocations first escape on every path, when the CFG has no
    /// cycle: then `young` goes from block to block in reverse post-order
    /// ([`FirstEscapes`]); else only within a block.
    firsts: Option<&'a FirstEscapes>,
    /// Scratch: the values the forward predecessors know for one location.
    values: Vec<Value>,
    /// The constants `0` and `null`, when the function allocates objects and
    /// accesses fields, or arrays and elements (the initial values).
    zeros: Option<(Value, Value)>,
    subst: Subst,
    removed: Vec<Inst>,
    created_phis: Vec<Inst>,
    latch_loads: Vec<Inst>,
    pending: Vec<PendingPhi>,
    /// The locations evicted last, to tell thrashing.
    evicted: Evicted,
    counts: ForwardCounts,
}

/// Run forwarding on `func` (a function of `module`, possibly taken out of it),
/// whose CFG is `cfg`, with its dominator tree and loops when it has a
/// back edge (a retreating edge).
pub fn forward(
    module: &Module,
    func: &mut Function,
    cfg: &Cfg,
    dom_loops: Option<(&DomTree, &LoopInfo)>,
    scratch: &mut Scratch,
    clobbers: Clobbers<'_>,
    cap: usize,
) -> Forwarding {
    if !func
        .inst_iter()
        .any(|i| is_plain_access(&func.inst(i).kind))
    {
        // Nothing is ever known, so nothing changes.
        return Forwarding {
            subst: Subst::empty(),
            removed: Vec::new(),
            created_phis: Vec::new(),
            latch_loads: Vec::new(),
            counts: ForwardCounts::default(),
        };
    }
    debug_assert_eq!(dom_loops.is_some(), cfg.has_retreating_edge());
    let has_loops = dom_loops.is_some();
    let empty = LoopInfo::default();
    let loops = match dom_loops {
        Some((dom, loops)) => {
            scratch
                .writers
                .compute(module, clobbers.calls, func, loops, dom);
            loops
        }
        None => &empty,
    };
    let mut out = std::mem::take(&mut scratch.out);
    out.reset(func.blocks.len());
    let zeros = fresh_zeros(func);
    let mut subst = std::mem::take(&mut scratch.subst);
    subst.recompute(func);
    let across = !has_loops && scratch.firsts.compute(func, cfg, clobbers.alias.escape());
    let mut fw = Forward {
        module,
        clobbers,
        out,
        state: std::mem::take(&mut scratch.state),
        young: Young::default(),
        firsts: across.then_some(&scratch.firsts),
        values: std::mem::take(&mut scratch.values),
        zeros,
        has_loops,
        subst,
        removed: Vec::new(),
        created_phis: Vec::new(),
        latch_loads: Vec::new(),
        pending: Vec::new(),
        evicted: Evicted::default(),
        counts: ForwardCounts::default(),
        cfg,
        loops,
        writers: &scratch.writers,
        cap,
    };
    for &b in cfg.rpo() {
        fw.entry_state(func, b);
        fw.visit_block(func, b);
        fw.out.set(b, fw.state.entries());
    }
    fw.complete_pending_phis(func);
    scratch.out = fw.out;
    scratch.state = fw.state;
    scratch.values = fw.values;
    Forwarding {
        subst: fw.subst,
        removed: fw.removed,
        created_phis: fw.created_phis,
        latch_loads: fw.latch_loads,
        counts: fw.counts,
    }
}

/// The constants `0` and `null` (interned, created here if needed) when
/// `func` has a `new` and a field access, or a `newarray` and an element
/// access, so that the fields of fresh objects and the elements of fresh
/// arrays can be known; `None` otherwise (nothing is created).
fn fresh_zeros(func: &mut Function) -> Option<(Value, Value)> {
    let (mut news, mut fields, mut arrays, mut elems) = (false, false, false, false);
    let wanted = |news, fields, arrays, elems| (news && fields) || (arrays && elems);
    for i in func.inst_iter() {
        match &func.inst(i).kind {
            InstKind::New(_) => news = true,
            InstKind::NewArray { .. } => arrays = true,
            InstKind::Load { addr, .. } | InstKind::Store { addr, .. } => match addr {
                Addr::Field { .. } => fields = true,
                Addr::Elem { .. } => elems = true,
                Addr::Global(_) => {}
            },
            _ => {}
        }
        if wanted(news, fields, arrays, elems) {
            break;
        }
    }
    wanted(news, fields, arrays, elems).then(|| (func.iconst(0), func.null()))
}

/// The key of the fact "every element of the fresh array `arr` holds its
/// initial value": the element location indexed by the array itself, which
/// no access names (an index is an `i64`). It is clobbered, merged and kept
/// through loops like any element location of `arr`, and never gets a phi
/// (its value is always the initial one).
pub fn whole_array(arr: Value) -> Loc {
    Loc::Elem {
        base: arr,
        index: arr,
    }
}

/// The initial value of element location `loc` when `state` knows that the
/// whole array is still initial.
fn fresh_element(state: &Known, loc: Loc) -> Option<Value> {
    let Loc::Elem { base, .. } = loc else {
        return None;
    };
    state.get(whole_array(base)).map(|e| e.value)
}

/// Whether an access of element location `loc` cannot trap because its base
/// is a `newarray` of constant length and its index a constant below it.
fn in_fresh_bounds(func: &Function, subst: &Subst, loc: Loc) -> bool {
    let Loc::Elem { base, index } = loc else {
        return false;
    };
    let (Some(i), Some(def)) = (func.as_const(index), func.def_inst(base)) else {
        return false;
    };
    match func.inst(def).kind {
        InstKind::NewArray { len, .. } => func
            .as_const(subst.resolve(func, len))
            .is_some_and(|n| (0..n).contains(&i)),
        _ => false,
    }
}

/// Record a fresh fact only into free room below `cap` (a fresh fact never
/// evicts a learned one); returns whether it was recorded.
fn insert_fresh(state: &mut Known, loc: Loc, value: Value, cap: usize) -> bool {
    state.insert_if_room(loc, value, Origin::Fresh, cap)
}

/// Whether `loc`'s base is the constant `null` (after looking through copies
/// and forwarded loads). Such an access always traps, so no fact is keyed on
/// it: it would never be used, and since `null` has no type of its own,
/// element locations of different array types would share the key
/// `(null, index)` and a load could be replaced by a value of another type.
fn null_based(func: &Function, loc: Loc) -> bool {
    loc.base()
        .is_some_and(|b| func.values[b.index()].def == ir::ValueDef::Null)
}

/// Whether `kind` is a plain (non-volatile) load or store.
pub fn is_plain_access(kind: &InstKind) -> bool {
    matches!(
        kind,
        InstKind::Load {
            volatile: false,
            ..
        } | InstKind::Store {
            volatile: false,
            ..
        }
    )
}

impl Forward<'_> {
    /// Step `self.state` over the instructions of `b`.
    fn visit_block(&mut self, func: &Function, b: Block) {
        let mut state = std::mem::take(&mut self.state);
        let mut young = std::mem::take(&mut self.young);
        if self.firsts.is_none() {
            young.clear();
        }
        for &inst in &func.blocks[b.index()].insts {
            let data = func.inst(inst);
            if !young.is_empty() {
                let escape = self.clobbers.alias.escape();
                Young::escaping_at(
                    escape,
                    func,
                    inst,
                    |r| self.first_escape(r),
                    |r| young.remove(r),
                );
            }
            match &data.kind {
                InstKind::Phi(_) => {}
                InstKind::Load {
                    addr,
                    volatile: false,
                } => {
                    let loc = Loc::of(func, &self.subst, addr);
                    let result = data.result.expect("a load has a result");
                    if null_based(func, loc) {
                        // Traps: nothing after it runs, and a null base has
                        // no type to keep the locations of arrays apart.
                        continue;
                    }
                    if let Some(e) = state.get(loc) {
                        let (value, origin) = (e.value, e.origin);
                        self.subst.set(func, result, value);
                        self.removed.push(inst);
                        self.count_forward(origin);
                    } else if let Some(init) = fresh_element(&state, loc) {
                        self.subst.set(func, result, init);
                        if in_fresh_bounds(func, &self.subst, loc) {
                            self.removed.push(inst);
                            self.counts.forwarded_fresh += 1;
                        } else {
                            // It may trap (bounds): it stays, its result unused.
                            self.counts.fresh_kept_for_trap += 1;
                        }
                        self.learn(&mut state, loc, init, Origin::Fresh);
                    } else {
                        self.learn(&mut state, loc, result, Origin::Local);
                    }
                }
                InstKind::Store {
                    addr,
                    value,
                    volatile: false,
                } => {
                    let loc = Loc::of(func, &self.subst, addr);
                    let value = self.subst.resolve(func, *value);
                    if state.get(loc).map(|e| e.value) == Some(value)
                        || (fresh_element(&state, loc) == Some(value)
                            && in_fresh_bounds(func, &self.subst, loc))
                    {
                        self.removed.push(inst);
                        self.counts.stores_redundant += 1;
                        continue;
                    }
                    // A fact that the location holds `value` stays true.
                    state.clobber(|e| e.value != value && self.store_clobbers(func, e.loc, loc));
                    if null_based(func, loc) {
                        continue;
                    }
                    self.learn(&mut state, loc, value, Origin::Local);
                }
                InstKind::New(s) => {
                    let (Some(obj), Some((zero, null))) = (data.result, self.zeros) else {
                        continue;
                    };
                    self.note_young(&mut young, obj);
                    let decl = self.module.struct_decl(*s);
                    for (index, f) in decl.fields.iter().enumerate().take(FRESH_FIELDS) {
                        let field = ir::FieldRef {
                            ty: *s,
                            index: index as u32,
                        };
                        let value = if f.ty.is_int() { zero } else { null };
                        if !insert_fresh(
                            &mut state,
                            Loc::Field { base: obj, field },
                            value,
                            self.cap,
                        ) {
                            break;
                        }
                    }
                }
                InstKind::NewArray { elem, len } => {
                    let (Some(arr), Some((zero, null))) = (data.result, self.zeros) else {
                        continue;
                    };
                    self.note_young(&mut young, arr);
                    let init = if elem.is_int() { zero } else { null };
                    if !insert_fresh(&mut state, whole_array(arr), init, self.cap) {
                        continue;
                    }
                    let n = func.as_const(self.subst.resolve(func, *len)).unwrap_or(0);
                    for c in 0..n.clamp(0, FRESH_FIELDS as i64) {
                        // Only indices some access can name (a constant of the function).
                        let Some(index) = func.existing_iconst(c) else {
                            continue;
                        };
                        if !insert_fresh(&mut state, Loc::Elem { base: arr, index }, init, self.cap)
                        {
                            break;
                        }
                    }
                }
                InstKind::Load { .. } | InstKind::Store { .. } => {
                    self.step_other(func, &mut state, &young, inst)
                }
                _ if state.entries().is_empty() => {
                    // Nothing known for it to clobber or count, and it
                    // learns nothing (only a volatile access does).
                }
                _ => self.step_other(func, &mut state, &young, inst),
            }
        }
        self.state = state;
        self.young = young;
    }

    /// Note the allocation `obj` as young when it escapes only later in its
    /// own block ([`crate::escape::EscapeInfo::local_escape`]), or later on
    /// every path of a CFG without cycles ([`FirstEscapes`]).
    fn note_young(&self, young: &mut Young, obj: Value) {
        if self.first_escape(obj).is_some() {
            young.insert(obj);
        }
    }

    /// Where allocation `r` first escapes, as far as `young` tracks it.
    fn first_escape(&self, r: Value) -> Option<Inst> {
        match self.firsts {
            Some(firsts) => firsts.at(r),
            None => self.clobbers.alias.escape().local_escape(r),
        }
    }

    /// Step `state` over `inst`, which is neither a plain access nor an
    /// allocation: it forgets what the instruction may write, and a
    /// volatile access then learns its location ([`Forward::learn_volatile`]).
    /// `young` holds the allocations of this block that have not escaped
    /// yet: until then nothing the instruction runs can reach them.
    fn step_other(&mut self, func: &Function, state: &mut Known, young: &Young, inst: Inst) {
        let eff = self.clobbers.effects(self.module, func, inst);
        #[cfg(feature = "bug-zoo")]
        if zoo::active(Bug::LseCallNoClobber)
            && matches!(
                func.inst(inst).kind,
                InstKind::Call {
                    callee: ir::Callee::Extern(_),
                    ..
                }
            )
        {
            // Planted: an extern call keeps every known value.
            return;
        }
        if !eff.writes_nothing() {
            let escape = self.clobbers.alias.escape();
            let mut kept_young = 0;
            state.clobber(|e| {
                let writes = self.clobbers.effect_writes(func, &eff, e.loc);
                let keep = writes && young.holds(escape, e.loc);
                kept_young += u64::from(keep);
                writes && !keep
            });
            self.counts.kept_before_escape += kept_young;
        }
        if self.clobbers.calls.is_summarized_call(func, inst) {
            self.counts.kept_across_calls += state
                .entries()
                .iter()
                .filter(|e| !self.clobbers.is_private(e.loc))
                .count() as u64;
        }
        self.learn_volatile(func, state, inst);
    }

    /// Whether a plain store to `stored` clobbers the known value of `known`.
    #[cfg(not(feature = "bug-zoo"))]
    fn store_clobbers(&self, func: &Function, known: Loc, stored: Loc) -> bool {
        self.clobbers.alias(func, known, stored) != AliasResult::No
    }

    /// Whether a plain store to `stored` clobbers the known value of `known`
    /// (with the zoo's aliasing bugs, sometimes wrongly not).
    #[cfg(feature = "bug-zoo")]
    fn store_clobbers(&self, func: &Function, known: Loc, stored: Loc) -> bool {
        if zoo::active(Bug::LseExactAlias) {
            // Planted (Toy Optimizer): only the exact same (base, field) is forgotten.
            return known == stored;
        }
        let alias = self.clobbers.alias(func, known, stored);
        if zoo::active(Bug::LseForwardMayAlias) && alias == AliasResult::May {
            // Planted: a may-alias store through another base keeps the value.
            return known.base() == stored.base();
        }
        alias != AliasResult::No
    }

    /// After the step of a volatile access (already applied to `state`), its
    /// plain access: a store clobbers what may alias it, and the location
    /// then holds the value read or stored (IR.md §3: the step happens
    /// before the access itself).
    fn learn_volatile(&mut self, func: &Function, state: &mut Known, inst: Inst) {
        let data = func.inst(inst);
        let (addr, value) = match &data.kind {
            InstKind::Load {
                addr,
                volatile: true,
            } => (addr, data.result.expect("a load has a result")),
            InstKind::Store {
                addr,
                value,
                volatile: true,
            } => (addr, self.subst.resolve(func, *value)),
            _ => return,
        };
        let loc = Loc::of(func, &self.subst, addr);
        if matches!(data.kind, InstKind::Store { .. }) {
            state.clobber(|e| e.value != value && self.store_clobbers(func, e.loc, loc));
        }
        if !null_based(func, loc) {
            self.learn(state, loc, value, Origin::Volatile);
        }
    }

    /// Record `loc = value` in `state`, counting an eviction.
    fn learn(&mut self, state: &mut Known, loc: Loc, value: Value, origin: Origin) {
        if state.insert(loc, value, origin, self.cap, &mut self.evicted) {
            self.counts.evictions += 1;
        }
    }

    fn count_forward(&mut self, origin: Origin) {
        let c = &mut self.counts;
        match origin {
            Origin::Local => c.forwarded_local += 1,
            Origin::Merge => c.forwarded_merge += 1,
            Origin::LoopInvariant => c.forwarded_loop_invariant += 1,
            Origin::LoopCarried => c.forwarded_loop_carried += 1,
            Origin::Fresh => c.forwarded_fresh += 1,
            Origin::Volatile => c.forwarded_volatile += 1,
        }
    }

    /// The loop `b` is the header of, if any.
    fn loop_with_header(&self, b: Block) -> Option<LoopId> {
        if !self.has_loops {
            return None;
        }
        self.loops.loop_with_header(b)
    }

    /// Whether `pred` is inside loop `header_of` (an edge from it to the
    /// header is a back edge).
    fn is_latch_edge(&self, header_of: Option<LoopId>, pred: Block) -> bool {
        header_of.is_some_and(|l| self.loops.contains(l, pred))
    }

    /// Set `self.state` to the state at the top of `b`, creating phis where
    /// predecessors disagree.
    fn entry_state(&mut self, func: &mut Function, b: Block) {
        self.state.clear();
        let cfg = self.cfg;
        let preds = cfg.preds(b);
        if preds.is_empty() || preds.iter().any(|p| !cfg.is_reachable(*p)) {
            return;
        }
        let header_of = self.loop_with_header(b);
        if let ([pred], None) = (preds, header_of) {
            // One way in, not a loop header: the merge below would keep
            // every entry of the predecessor as it is (a state names each
            // location once), so take them without looking each one up.
            if let Some(entries) = self.out.get(*pred) {
                self.state.extend_from_slice(entries);
            }
            return;
        }
        // The predecessors on entry edges (not back edges), in order.
        let mut forward = preds
            .iter()
            .copied()
            .filter(|&p| !self.is_latch_edge(header_of, p));
        let Some(first_pred) = forward.next() else {
            return;
        };
        if preds
            .iter()
            .any(|&p| !self.is_latch_edge(header_of, p) && self.out.get(p).is_none())
        {
            return;
        }
        let has_latches = preds.iter().any(|&p| self.is_latch_edge(header_of, p));
        let first = self.out.get(first_pred).unwrap_or_default();
        let mut values = std::mem::take(&mut self.values);
        for (k, &e) in first.iter().enumerate() {
            values.clear();
            let mut all_known = true;
            for &p in preds {
                if self.is_latch_edge(header_of, p) {
                    continue;
                }
                match self.out.get(p).and_then(|s| lookup_near(s, e.loc, k)) {
                    Some(x) => values.push(x.value),
                    None => {
                        all_known = false;
                        break;
                    }
                }
            }
            if !all_known {
                continue;
            }
            let same = values.iter().all(|&v| v == values[0]);
            let writes = match header_of {
                Some(l) => match self.loop_writes(func, l, e.loc) {
                    LoopWrites::OnlyExact
                        if same && self.stores_only(func, l, e.loc, values[0]) =>
                    {
                        self.counts.loops_storing_held += 1;
                        LoopWrites::None
                    }
                    w => w,
                },
                None => LoopWrites::None,
            };
            let entry = match (header_of, writes) {
                (Some(_), LoopWrites::Clobbers) => continue,
                (None, _) if same => Entry {
                    loc: e.loc,
                    value: values[0],
                    origin: if preds.len() == 1 {
                        e.origin
                    } else {
                        Origin::Merge
                    },
                },
                (Some(_), LoopWrites::None) if same => Entry {
                    loc: e.loc,
                    value: values[0],
                    origin: Origin::LoopInvariant,
                },
                _ => {
                    // A phi: one entry per predecessor edge. Loop back edges get the
                    // phi itself (nothing in the loop writes the location) or are
                    // completed once the latches have been visited.
                    let ty = self.loc_type(func, e.loc);
                    let mut phi_entries: Vec<(Block, Value)> = Vec::with_capacity(preds.len());
                    let placeholder = func.null();
                    let mut vi = 0;
                    for &p in preds {
                        if self.is_latch_edge(header_of, p) {
                            phi_entries.push((p, placeholder));
                        } else {
                            phi_entries.push((p, values[vi]));
                            vi += 1;
                        }
                    }
                    let (phi, result) = func.create_inst(InstKind::Phi(phi_entries), Some(ty));
                    let result = result.expect("phi result");
                    func.insert_inst(b, 0, phi);
                    self.created_phis.push(phi);
                    if has_latches {
                        if writes == LoopWrites::None {
                            if let InstKind::Phi(es) = &mut func.insts[phi.index()].kind {
                                for (i, &p) in preds.iter().enumerate() {
                                    if self.is_latch_edge(header_of, p) {
                                        es[i].1 = result;
                                    }
                                }
                            }
                        } else {
                            self.pending.push(PendingPhi { phi, loc: e.loc });
                        }
                    }
                    let origin = match (header_of, writes) {
                        (Some(_), LoopWrites::OnlyExact) => Origin::LoopCarried,
                        (Some(_), _) => Origin::LoopInvariant,
                        _ => Origin::Merge,
                    };
                    Entry {
                        loc: e.loc,
                        value: result,
                        origin,
                    }
                }
            };
            self.state.push(entry);
        }
        self.values = values;
    }

    /// Whether (and how) anything in loop `l` may write `loc`.
    fn loop_writes(&self, func: &Function, l: LoopId, loc: Loc) -> LoopWrites {
        let mut result = LoopWrites::None;
        for &inst in self.writers.of(l) {
            match &func.inst(inst).kind {
                InstKind::Store {
                    addr,
                    volatile: false,
                    ..
                } => {
                    let sloc = Loc::of(func, &self.subst, addr);
                    match self.clobbers.alias(func, sloc, loc) {
                        AliasResult::No => {}
                        AliasResult::Must if sloc == loc => result = LoopWrites::OnlyExact,
                        _ => return LoopWrites::Clobbers,
                    }
                }
                _ => {
                    let eff = self.clobbers.effects(self.module, func, inst);
                    if self.clobbers.effect_writes(func, &eff, loc) {
                        return LoopWrites::Clobbers;
                    }
                }
            }
        }
        result
    }

    /// Whether every store of loop `l` that writes `loc` (all of them store
    /// exactly `loc`: [`LoopWrites::OnlyExact`]) stores `held`, the value
    /// `loc` holds on every entry edge, or the result of a plain load of
    /// `loc` inside the loop. Then `loc` holds `held` throughout the loop, by
    /// induction over a run of it: it does on entry, a load of it inside
    /// reads `held`, and each store writes `held` back (the load a store
    /// writes back dominates it, so it ran since the loop was last entered).
    /// Those stores are then redundant (`lse.loops_storing_held`).
    fn stores_only(&self, func: &Function, l: LoopId, loc: Loc, held: Value) -> bool {
        let reads_loc = |v: Value| {
            func.def_inst(v).is_some_and(|d| {
                let data = func.inst(d);
                let in_loop = data.block.is_some_and(|b| self.loops.contains(l, b));
                match &data.kind {
                    InstKind::Load {
                        addr,
                        volatile: false,
                    } => in_loop && Loc::of(func, &self.subst, addr) == loc,
                    _ => false,
                }
            })
        };
        self.writers
            .of(l)
            .iter()
            .all(|&inst| match &func.inst(inst).kind {
                InstKind::Store {
                    addr,
                    value,
                    volatile: false,
                } if Loc::of(func, &self.subst, addr) == loc => {
                    let v = self.subst.resolve(func, *value);
                    v == held || reads_loc(v)
                }
                _ => true,
            })
    }

    fn loc_type(&self, func: &Function, loc: Loc) -> Type {
        loc.ty(self.module, func)
    }

    /// Fill the back-edge entries of loop-carried phis from the latches' final states.
    fn complete_pending_phis(&mut self, func: &mut Function) {
        for PendingPhi { phi, loc } in std::mem::take(&mut self.pending) {
            let b = func.inst(phi).block.expect("placed phi");
            let l = self.loop_with_header(b).expect("header");
            let InstKind::Phi(mut entries) = func.inst(phi).kind.clone() else {
                unreachable!("pending entry is a phi")
            };
            let mut latch_loads: Vec<(Block, Value)> = Vec::new();
            for entry in entries.iter_mut() {
                let pred = entry.0;
                if !self.is_latch_edge(Some(l), pred) {
                    continue;
                }
                let known = self
                    .out
                    .get(pred)
                    .and_then(|s| lookup(s, loc))
                    .map(|e| e.value);
                let earlier = latch_loads
                    .iter()
                    .find(|(p, _)| *p == pred)
                    .map(|&(_, v)| v);
                let value = match known.or(earlier) {
                    Some(v) => v,
                    None => {
                        let ty = self.loc_type(func, loc);
                        let (load, result) = func.create_inst(
                            InstKind::Load {
                                addr: loc.addr(),
                                volatile: false,
                            },
                            Some(ty),
                        );
                        let pos = func.blocks[pred.index()].insts.len() - 1;
                        func.insert_inst(pred, pos, load);
                        self.latch_loads.push(load);
                        let v = result.expect("load result");
                        latch_loads.push((pred, v));
                        v
                    }
                };
                entry.1 = value;
            }
            func.insts[phi.index()].kind = InstKind::Phi(entries);
        }
    }
}
