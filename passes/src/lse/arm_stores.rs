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
use ir::effects::{inst_effects, traps_only_on_null};
use ir::{Addr, Block, Function, Inst, InstKind, Module, Type, Value};

/// Storage reused from run to run.
#[derive(Default)]
pub struct Scratch {
    dom: DomTree,
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
fn first_arm_store(module: &Module, func: &Function, a: Block) -> Option<Inst> {
    let insts = &func.blocks[a.index()].insts;
    // The instruction kinds first: most arms have no store to look at.
    let k = insts
        .iter()
        .position(|&i| is_plain_store(&func.inst(i).kind))?;
    insts[..k]
        .iter()
        .all(|&i| inst_effects(module, func, i).is_pure())
        .then_some(insts[k])
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
        let eff = inst_effects(module, func, inst);
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

/// Merge each store overwritten at the start of one arm into the store
/// before the branch (see the module header); returns how many arm stores
/// went. `cfg` is `func`'s CFG (its terminators unchanged since).
pub fn merge_arm_stores(
    module: &Module,
    func: &mut Function,
    cfg: &Cfg,
    clobbers: &Clobbers<'_>,
    scratch: &mut Scratch,
) -> u64 {
    let mut subst: Option<Subst> = None;
    let mut dom_ready = false;
    let mut merged = 0;
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
            let Some(s2) = first_arm_store(module, func, a) else {
                continue;
            };
            let InstKind::Store { addr, .. } = &func.inst(s2).kind else {
                continue;
            };
            if !may_have_partner(func, p, addr) {
                continue;
            }
            let subst = subst.get_or_insert_with(|| Subst::new(func));
            let Some((loc, v)) = plain_store(func, subst, s2) else {
                continue;
            };
            let Some(s1) = merge_partner(module, func, subst, clobbers, p, loc) else {
                continue;
            };
            let available = match func.def_inst(v).and_then(|d| func.inst(d).block) {
                None => func.def_inst(v).is_none(),
                Some(db) if db == p => true,
                Some(db) if db == a => false,
                Some(db) => {
                    if !std::mem::replace(&mut dom_ready, true) {
                        scratch.dom.recompute(func, cfg);
                    }
                    scratch.dom.dominates(db, p)
                }
            };
            if !available {
                continue;
            }
            let ty = loc.ty(module, func);
            merge(func, p, [s1, s2], c, (v, ty), on_true);
            merged += 1;
            // `p`'s store changed: its other arm is looked at next run.
            break;
        }
    }
    merged
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
