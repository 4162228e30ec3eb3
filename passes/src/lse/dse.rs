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

impl DeadSet {
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

    fn meet(
        &self,
        other: &DeadSet,
        clobbers: &Clobbers<'_>,
        func: &Function,
        cap: usize,
    ) -> DeadSet {
        let mut entries: Vec<Dead> = Vec::new();
        for d in self.entries.iter().chain(&other.entries) {
            if entries.iter().any(|e| e.loc == d.loc) {
                continue;
            }
            if let (Some(a), Some(b)) = (
                self.lookup(d.loc, clobbers, func),
                other.lookup(d.loc, clobbers, func),
            ) {
                entries.push(Dead {
                    loc: d.loc,
                    clean: a && b,
                });
            }
        }
        let mut private_except = self.private_except.clone();
        for &e in &other.private_except {
            if !private_except.contains(&e) {
                private_except.push(e);
            }
        }
        let mut set = DeadSet {
            entries,
            private_all: self.private_all && other.private_all,
            private_except,
        };
        set.bound(cap);
        set
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
        while self.entries.len() > cap {
            self.entries.remove(0);
        }
        if self.private_except.len() > cap {
            self.private_except.clear();
            self.private_all = false;
        }
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

/// Remove dead stores from `func`; returns the removed stores.
pub fn eliminate_dead_stores(
    module: &Module,
    func: &mut Function,
    clobbers: &Clobbers<'_>,
    cap: usize,
) -> Vec<Inst> {
    let cfg = Cfg::new(func);
    let subst = Subst::new(0);
    let mut at_entry: Vec<Option<DeadSet>> = vec![None; func.blocks.len()];
    let mut dead: Vec<Inst> = Vec::new();
    for &b in cfg.rpo().iter().rev() {
        let mut set = exit_set(func, &cfg, b, &at_entry, clobbers, cap);
        for &inst in func.blocks[b.index()].insts.iter().rev() {
            if transfer(module, func, &subst, clobbers, inst, &mut set, cap) {
                dead.push(inst);
            }
        }
        at_entry[b.index()] = Some(set);
    }
    for &inst in &dead {
        func.remove_inst(inst);
    }
    dead
}

/// The set at the end of `b`: the meet over its successors (empty for one not
/// yet visited); at a return or `unreachable`, every private location.
fn exit_set(
    func: &Function,
    cfg: &Cfg,
    b: Block,
    at_entry: &[Option<DeadSet>],
    clobbers: &Clobbers<'_>,
    cap: usize,
) -> DeadSet {
    let succs = cfg.succs(b);
    if succs.is_empty() {
        let terminates = func
            .terminator(b)
            .is_some_and(|t| matches!(func.inst(t).kind, InstKind::Ret(_) | InstKind::Unreachable));
        return DeadSet {
            entries: Vec::new(),
            private_all: terminates,
            private_except: Vec::new(),
        };
    }
    let mut result: Option<DeadSet> = None;
    for s in succs {
        #[cfg(feature = "bug-zoo")]
        if zoo::active(Bug::LseDseLoopCarried) && at_entry[s.index()].is_none() {
            // Planted (Cranelift #13990): a back edge not yet visited is
            // skipped instead of contributing "nothing is dead".
            continue;
        }
        let set = at_entry[s.index()].clone().unwrap_or_default();
        result = Some(match result {
            None => set,
            Some(r) => r.meet(&set, clobbers, func, cap),
        });
    }
    result.unwrap_or_default()
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
