//! Stores merged into a select: a store overwritten on one arm of a branch.
//!
//! Block `P` stores `x` to a location `L` and ends in `br c, T, F`; an arm
//! `A` (`T` or `F`, entered only from `P`) stores `v` to `L` before doing
//! anything but pure arithmetic. Then the two stores become one at the end
//! of `P`: `store L, select c, v, x` (`x, v` when `A` is the false arm), and
//! the arm's store goes: on the way into `A` the slot ends up holding `v`,
//! on the other way `x`, as before, with one store fewer on `A`'s way. LLVM
//! does this in SimplifyCFG (a store speculated over a preceding store to
//! the same address) and then deletes the first store.
//!
//! And the mirror image (LLVM's MergedLoadStoreMotion): a join `J` whose
//! two predecessors both end in `jmp J` and both store to `L` last (with
//! nothing after that can trap or touch `L`) gets one store of `phi [A: a],
//! [B: b]` at its start instead, when `L`'s base and index are defined
//! above `J`.
//!
//! Sound when nothing can see the slot in between (IR.md §7, the heap at a
//! trap is observable): every instruction after the first store in `P`
//! cannot trap (asked of `ir::effects`; an access through the stored base
//! cannot meet `null` after the store) and neither reads nor writes `L`
//! (aliasing asked of [`crate::alias`], declared effects of
//! [`super::clobber`]), and the arm's instructions before its store are
//! pure. The arm's store cannot trap (the same slot was just written). The
//! first store moves down to the end of `P`: if it may trap, the
//! instructions it moves over must write nothing observable, so that its
//! trap shows the same heap and trace. `v` must be available at the end of
//! `P` (a constant, a parameter, or defined in a block that dominates it).

use super::clobber::Clobbers;
use super::loc::{Loc, Subst};
use crate::alias::AliasResult;
use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::effects::traps_only_on_null;
use ir::{Addr, Block, Function, Inst, InstKind, Module, Type, Value};

/// Storage reused from run to run.
#[derive(Default)]
pub struct Scratch {
    dom: DomTree,
}

/// The dominator tree of the function, computed when first asked.
struct LazyDom<'s> {
    dom: &'s mut DomTree,
    ready: bool,
}

impl LazyDom<'_> {
    /// Whether `v` is available at the end of `b` (at its start when
    /// `strict`): a constant or parameter, or defined in a block that
    /// dominates `b` (strictly when `strict`).
    fn available(&mut self, func: &Function, cfg: &Cfg, v: Value, b: Block, strict: bool) -> bool {
        let Some(d) = func.def_inst(v) else {
            return true;
        };
        match func.inst(d).block {
            None => false,
            Some(db) if db == b => !strict,
            Some(db) => {
                if !std::mem::replace(&mut self.ready, true) {
                    self.dom.recompute(func, cfg);
                }
                self.dom.dominates(db, b)
            }
        }
    }

    fn available_at_end(&mut self, func: &Function, cfg: &Cfg, v: Value, b: Block) -> bool {
        self.available(func, cfg, v, b, false)
    }
}

/// The type of the values `loc` holds; `None` for an element of a base
/// whose type names no array (the `null` constant).
fn slot_type(module: &Module, func: &Function, loc: Loc) -> Option<Type> {
    match loc {
        Loc::Elem { base, .. } => func.value_type(base).elem(),
        _ => Some(loc.ty(module, func)),
    }
}

/// A plain store's location and value.
fn plain_store(func: &Function, subst: &Subst, inst: Inst) -> Option<(Loc, Value)> {
    match &func.inst(inst).kind {
        InstKind::Store {
            addr,
            value,
            volatile: false,
        } => Some((Loc::of(func, subst, addr), *value)),
        _ => None,
    }
}

/// Whether `kind` is a plain store.
fn is_plain_store(kind: &InstKind) -> bool {
    matches!(
        kind,
        InstKind::Store {
            volatile: false,
            ..
        }
    )
}

/// The first plain store of `a`, if only pure instructions precede it.
pub(super) fn first_arm_store(
    module: &Module,
    clobbers: &Clobbers<'_>,
    func: &Function,
    a: Block,
) -> Option<Inst> {
    let insts = &func.blocks[a.index()].insts;
    // The instruction kinds first: most arms have no store to look at.
    let k = insts
        .iter()
        .position(|&i| is_plain_store(&func.inst(i).kind))?;
    insts[..k]
        .iter()
        .all(|&i| clobbers.effects(module, func, i).is_pure())
        .then_some(insts[k])
}

/// The location and value of store `s` when block `other` may hold a
/// partner for it ([`may_have_partner`]); `subst` is made when first needed.
fn candidate(
    func: &Function,
    subst: &mut Option<Subst>,
    s: Inst,
    other: Block,
) -> Option<(Loc, Value)> {
    let InstKind::Store { addr, .. } = &func.inst(s).kind else {
        return None;
    };
    if !may_have_partner(func, other, addr) {
        return None;
    }
    plain_store(func, subst.get_or_insert_with(|| Subst::new(func)), s)
}

/// Whether `p` has a plain store of the same field, global or element type
/// as `addr` (a cheap test before the locations are compared).
fn may_have_partner(func: &Function, p: Block, addr: &Addr) -> bool {
    let same_kind = |other: &Addr| match (addr, other) {
        (Addr::Field { field: a, .. }, Addr::Field { field: b, .. }) => a == b,
        (Addr::Global(a), Addr::Global(b)) => a == b,
        (Addr::Elem { base: a, .. }, Addr::Elem { base: b, .. }) => {
            func.value_type(*a) == func.value_type(*b)
        }
        _ => false,
    };
    func.blocks[p.index()]
        .insts
        .iter()
        .any(|&i| match &func.inst(i).kind {
            InstKind::Store {
                addr: other,
                volatile: false,
                ..
            } => same_kind(other),
            _ => false,
        })
}

/// The store of `p` to `loc` that the arm's store may merge with: scanning
/// back from the terminator, the last plain store to `loc`, with every
/// instruction after it unable to trap and to touch `loc`, and (when that
/// store may trap) writing nothing observable.
fn merge_partner(
    module: &Module,
    func: &Function,
    subst: &Subst,
    clobbers: &Clobbers<'_>,
    p: Block,
    loc: Loc,
) -> Option<Inst> {
    let insts = &func.blocks[p.index()].insts;
    let (_, body) = insts.split_last()?;
    let mut writes_between = false;
    for &inst in body.iter().rev() {
        let eff = clobbers.effects(module, func, inst);
        if let Some((l, _)) = plain_store(func, subst, inst) {
            if l == loc {
                return (!eff.may_trap() || !writes_between).then_some(inst);
            }
        }
        let on_stored_base = traps_only_on_null(func, inst)
            .is_some_and(|b| Some(subst.resolve(func, b)) == loc.base());
        if eff.may_trap() && !on_stored_base {
            return None;
        }
        let touches = match &func.inst(inst).kind {
            InstKind::Load {
                addr,
                volatile: false,
            }
            | InstKind::Store {
                addr,
                volatile: false,
                ..
            } => {
                let other = Loc::of(func, subst, addr);
                let private = clobbers.is_private(other);
                if matches!(func.inst(inst).kind, InstKind::Store { .. }) {
                    writes_between |= clobbers.writes_observable(&eff, private);
                }
                clobbers.alias(func, loc, other) != AliasResult::No
            }
            _ => {
                writes_between |= clobbers.writes_observable(&eff, false);
                clobbers.effect_reads(func, &eff, loc) || clobbers.effect_writes(func, &eff, loc)
            }
        };
        if touches {
            return None;
        }
    }
    None
}

/// What [`merge_arm_stores`] did.
#[derive(Copy, Clone, Debug, Default)]
pub struct Merged {
    /// Arm stores merged into the store before the branch (a select).
    pub into_select: u64,
    /// Pairs of stores at the ends of a join's two predecessors sunk into
    /// the join (a phi).
    pub into_join: u64,
}

/// Merge each store overwritten at the start of one arm into the store
/// before the branch, and sink the stores both predecessors of a join make
/// to one location into the join (see the module header). `cfg` is
/// `func`'s CFG (its terminators unchanged since).
pub fn merge_arm_stores(
    module: &Module,
    func: &mut Function,
    cfg: &Cfg,
    clobbers: &Clobbers<'_>,
    scratch: &mut Scratch,
) -> Merged {
    let mut subst: Option<Subst> = None;
    let mut dom = LazyDom {
        dom: &mut scratch.dom,
        ready: false,
    };
    let mut merged = 0;
    let mut into_join = 0;
    for k in 0..func.layout.len() {
        let j = func.layout[k];
        if let Some([a, b]) = join_preds(func, cfg, j) {
            let Some(sa) = func.blocks[a.index()]
                .insts
                .iter()
                .rev()
                .copied()
                .find(|&i| is_plain_store(&func.inst(i).kind))
            else {
                continue;
            };
            let Some((loc, _)) = candidate(func, &mut subst, sa, b) else {
                continue;
            };
            let subst = subst.get_or_insert_with(|| Subst::new(func));
            let (Some(sa), Some(sb)) = (
                merge_partner(module, func, subst, clobbers, a, loc),
                merge_partner(module, func, subst, clobbers, b, loc),
            ) else {
                continue;
            };
            let InstKind::Store { addr, .. } = &func.inst(sa).kind else {
                continue;
            };
            let addr = addr.clone();
            if !addr.values().all(|v| dom.available(func, cfg, v, j, true)) {
                continue;
            }
            let Some(ty) = slot_type(module, func, loc) else {
                continue;
            };
            let values = [sa, sb].map(|s| match func.inst(s).kind {
                InstKind::Store { value, .. } => Some(value),
                _ => None,
            });
            let same_above = match values {
                [Some(va), Some(vb)] => va == vb && dom.available(func, cfg, va, j, true),
                _ => false,
            };
            sink(func, j, [(a, sa), (b, sb)], ty, same_above);
            into_join += 1;
        }
    }
    for k in 0..func.layout.len() {
        let p = func.layout[k];
        let Some(term) = func.terminator(p) else {
            continue;
        };
        let InstKind::Br(c, t, f) = func.inst(term).kind else {
            continue;
        };
        if t == f {
            continue;
        }
        for (a, on_true) in [(t, true), (f, false)] {
            if a == p || cfg.preds(a) != [p] {
                continue;
            }
            let Some(s2) = first_arm_store(module, clobbers, func, a) else {
                continue;
            };
            let Some((loc, v)) = candidate(func, &mut subst, s2, p) else {
                continue;
            };
            let subst = subst.get_or_insert_with(|| Subst::new(func));
            let Some(s1) = merge_partner(module, func, subst, clobbers, p, loc) else {
                continue;
            };
            if !dom.available_at_end(func, cfg, v, p) {
                continue;
            }
            let Some(ty) = slot_type(module, func, loc) else {
                continue;
            };
            merge(func, p, [s1, s2], c, (v, ty), on_true);
            merged += 1;
            // `p`'s store changed: its other arm is looked at next run.
            break;
        }
    }
    Merged {
        into_select: merged,
        into_join,
    }
}

/// The two predecessors of `j` when it has exactly two, other blocks, both
/// ending in `jmp j`.
fn join_preds(func: &Function, cfg: &Cfg, j: Block) -> Option<[Block; 2]> {
    let &[a, b] = cfg.preds(j) else {
        return None;
    };
    let jumps_here = |x: Block| {
        x != j
            && func
                .terminator(x)
                .is_some_and(|t| matches!(func.inst(t).kind, InstKind::Jmp(to) if to == j))
    };
    (a != b && jumps_here(a) && jumps_here(b)).then_some([a, b])
}

/// Rewrite: the two stores (each in its predecessor of `j`) become one at
/// the start of `j` (after its phis) of a new phi of their values, of the
/// location's type `ty` (no phi when both store one value, `same_above`
/// saying it is defined above `j`).
fn sink(func: &mut Function, j: Block, stores: [(Block, Inst); 2], ty: Type, same_above: bool) {
    let [(a, sa), (b, sb)] = stores;
    let value = |func: &Function, s: Inst| match func.inst(s).kind {
        InstKind::Store { value, .. } => Some(value),
        _ => None,
    };
    let (Some(va), Some(vb)) = (value(func, sa), value(func, sb)) else {
        return;
    };
    let at = func.blocks[j.index()]
        .insts
        .iter()
        .take_while(|&&i| matches!(func.inst(i).kind, InstKind::Phi(_)))
        .count();
    // The same value on both edges, defined above `j`: no phi. Else a phi of
    // `j` that already merges the two values (forwarding makes such phis for
    // loads after the join), or a new one.
    let same = (va == vb && same_above).then_some(va);
    let existing = || {
        func.blocks[j.index()].insts[..at].iter().find_map(|&i| {
            let data = func.inst(i);
            match &data.kind {
                InstKind::Phi(entries)
                    if entries.len() == 2
                        && entries.contains(&(a, va))
                        && entries.contains(&(b, vb)) =>
                {
                    data.result
                }
                _ => None,
            }
        })
    };
    let (result, new_phi) = match same.or_else(existing) {
        Some(v) => (v, None),
        None => {
            let (phi, result) = func.create_inst(InstKind::Phi(vec![(a, va), (b, vb)]), Some(ty));
            let Some(result) = result else {
                return;
            };
            (result, Some(phi))
        }
    };
    func.remove_inst(sa);
    func.remove_inst(sb);
    if let InstKind::Store { value, .. } = &mut func.insts[sa.index()].kind {
        *value = result;
    }
    let at = match new_phi {
        Some(phi) => {
            func.insert_inst(j, at, phi);
            at + 1
        }
        None => at,
    };
    func.insert_inst(j, at, sa);
}

/// Rewrite: `s1` (in `p`) moves to the end of `p` and stores `select c, v,
/// x` of the location's type `ty` (or `select c, x, v` when the arm is the
/// false one); `s2` goes.
fn merge(
    func: &mut Function,
    p: Block,
    [s1, s2]: [Inst; 2],
    c: Value,
    (v, ty): (Value, Type),
    on_true: bool,
) {
    let InstKind::Store { value: x, .. } = func.inst(s1).kind else {
        return;
    };
    let (a, b) = if on_true { (v, x) } else { (x, v) };
    let (sel, result) = func.create_inst(InstKind::Select(c, a, b), Some(ty));
    let Some(result) = result else {
        return;
    };
    func.remove_inst(s1);
    func.remove_inst(s2);
    if let InstKind::Store { value, .. } = &mut func.insts[s1.index()].kind {
        *value = result;
    }
    let end = func.blocks[p.index()].insts.len() - 1;
    func.insert_inst(p, end, sel);
    func.insert_inst(p, end + 1, s1);
}
