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
//! A store that may itself trap is removed only when the overwriting store is
//! reached with nothing observable in between: then, if the removed store
//! would have trapped, the overwriting one traps the same way (same base and
//! index) with the same trace and heap. Successors not yet visited (back
//! edges, irreducible edges) contribute the empty set, so loops are handled
//! pessimistically and a store a later iteration may read is never removed.

use super::arena::BlockSlices;
use super::clobber::Clobbers;
use super::loc::{Loc, Subst};
use crate::alias::AliasResult;
use ir::cfg::Cfg;
use ir::effects::inst_effects;
use ir::{Block, Function, Inst, InstKind, Module};

#[cfg(feature = "bug-zoo")]
use crate::zoo::{self, Bug};

/// One location known to be overwritten before it is observed.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
struct Dead {
    loc: Loc,
    /// Nothing observable happens between here and the overwriting store.
    clean: bool,
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
    fn lookup(&self, loc: Loc, clobbers: &Clobbers<'_>, func: &Function) -> Option<bool> {
        if let Some(d) = self.entries.iter().find(|d| d.loc == loc) {
            return Some(d.clean);
        }
        let excepted = self
            .private_except
            .iter()
            .any(|&e| clobbers.alias(func, e, loc) != AliasResult::No);
        (self.private_all && clobbers.is_private(loc) && !excepted).then_some(false)
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
                    clean: x && y,
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

    fn lookup(&self, loc: Loc, clobbers: &Clobbers<'_>, func: &Function) -> Option<bool> {
        self.view().lookup(loc, clobbers, func)
    }

    /// Step back over a possible trap: a trap observes every reachable slot,
    /// so only private locations stay; and it is an observable event, so no
    /// path from here to an overwriting store is clean any more (a removed
    /// store that would have trapped must trap before anything else could).
    fn at_possible_trap(&mut self, clobbers: &Clobbers<'_>) {
        #[cfg(feature = "bug-zoo")]
        if zoo::active(Bug::LseDseAcrossTrap) {
            // Planted (Cranelift #14053): a possible trap observes nothing.
            return;
        }
        self.entries.retain(|d| clobbers.is_private(d.loc));
        self.entries.iter_mut().for_each(|d| d.clean = false);
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
}

/// Remove dead stores from `func`, whose CFG is `cfg`; returns the removed stores.
pub fn eliminate_dead_stores(
    module: &Module,
    func: &mut Function,
    cfg: &Cfg,
    scratch: &mut Scratch,
    clobbers: &Clobbers<'_>,
    cap: usize,
) -> Vec<Inst> {
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
        return Vec::new();
    }
    let subst = Subst::new(func);
    let Scratch {
        at_entry,
        set,
        meet,
    } = scratch;
    at_entry.reset(func.blocks.len());
    let mut dead: Vec<Inst> = Vec::new();
    for &b in cfg.rpo().iter().rev() {
        exit_set(func, cfg, b, at_entry, clobbers, cap, set, meet);
        for &inst in func.blocks[b.index()].insts.iter().rev() {
            if transfer(module, func, &subst, clobbers, inst, set, cap) {
                dead.push(inst);
            }
        }
        at_entry.set(b, set);
    }
    func.remove_insts(&dead);
    dead
}

/// Set `set` to the set at the end of `b`: the meet over its successors
/// (empty for one not yet visited); at a return or `unreachable`, every
/// private location. `scratch` is working storage.
#[allow(clippy::too_many_arguments)]
fn exit_set(
    func: &Function,
    cfg: &Cfg,
    b: Block,
    at_entry: &EntrySets,
    clobbers: &Clobbers<'_>,
    cap: usize,
    set: &mut DeadSet,
    scratch: &mut DeadSet,
) {
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
        let succ_set = at_entry.get(s).unwrap_or_default();
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

/// Step backward over `inst`; returns true when it is a dead store.
fn transfer(
    module: &Module,
    func: &Function,
    subst: &Subst,
    clobbers: &Clobbers<'_>,
    inst: Inst,
    set: &mut DeadSet,
    cap: usize,
) -> bool {
    let data = func.inst(inst);
    let eff = inst_effects(module, func, inst);
    match &data.kind {
        InstKind::Store {
            addr,
            volatile: false,
            ..
        } => {
            let loc = Loc::of(func, subst, addr);
            if let Some(clean) = set.lookup(loc, clobbers, func) {
                if !eff.may_trap() || clean {
                    return true;
                }
            }
            if eff.may_trap() {
                set.at_possible_trap(clobbers);
            }
            if clobbers.writes_observable(&eff, clobbers.is_private(loc)) {
                set.entries.iter_mut().for_each(|d| d.clean = false);
            }
            set.entries.retain(|d| d.loc != loc);
            set.private_except.retain(|&e| e != loc);
            set.entries.push(Dead { loc, clean: true });
            set.bound(cap);
        }
        InstKind::Load {
            addr,
            volatile: false,
        } => {
            let loc = Loc::of(func, subst, addr);
            set.entries
                .retain(|d| !load_observes(clobbers, func, d.loc, loc));
            if eff.may_trap() {
                set.at_possible_trap(clobbers);
            }
            // A load can read a private location the set holds only implicitly.
            if clobbers.is_private(loc) && !set.private_except.contains(&loc) {
                set.private_except.push(loc);
                set.bound(cap);
            }
        }
        _ => {
            set.entries
                .retain(|d| !clobbers.effect_reads(func, &eff, d.loc));
            if eff.may_trap() {
                set.at_possible_trap(clobbers);
            }
            if clobbers.writes_observable(&eff, false) {
                set.entries.iter_mut().for_each(|d| d.clean = false);
            }
        }
    }
    if let Some(r) = data.result {
        set.entries.retain(|d| !d.loc.keys().any(|k| k == r));
    }
    false
}
