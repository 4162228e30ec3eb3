//! Stores into never-read private objects: an allocation (`new`, `newarray`)
//! whose fields and elements no instruction ever loads, and that nothing but
//! other such objects can reach, is invisible to every observer (the
//! environment, a callee, a trap's heap walk, the caller: IR.md §6-§7), so
//! every store into it is dead. A store that cannot trap goes; an element
//! store that may trap (its index not known to be in range) becomes
//! `boundscheck %a, %i`: the base is a fresh allocation, never null, so its
//! only possible trap is `out_of_bounds`, which the check raises at the same
//! point, and the heap at that trap or at a return is walked from roots that
//! do not reach the array (IR.md §7), so nothing observes the missing write.
//! Once the stores are gone the allocation is usually unused and `dce`
//! deletes it.
//!
//! The analysis is flow-insensitive: an allocation is *unread* unless some
//! use of it (its value or a `copy` of it) may read it or let it become
//! reachable: a load or volatile access through it, an operand of a call,
//! `escape`, `ret`, `phi` or `select`, or being stored into anything but
//! another unread allocation (a greatest fixed point: an object stored only
//! into unread objects is unread). A plain store through it, `len`,
//! `nullcheck`, `boundscheck` and an identity comparison (`eq`/`ne`) read
//! none of its slots. Whether a store may trap is asked of the effects
//! table; a field store that may trap (never, for a fresh base) would stay.
//! A function with no plain store through (a copy of) an allocation's
//! result is not analysed.
//!
//! A `select` of an allocation and the `null` constant (either way round)
//! is the allocation or `null`: the analysis treats it as the allocation
//! (its uses are the allocation's uses; the `select` itself reads nothing),
//! and a store through it into an unread allocation becomes its check, as
//! the store could only trap on the `null` side (`nullcheck %s` for a
//! field, `boundscheck %s, %i` for an element: `null_deref` on `null`,
//! else the element store's own bounds trap).
//! Counter `lse.stores_unread_select_to_checks`.
//!
//! A `phi` or `select` (other than the `select` of `null` above) reads none
//! of its operands' slots: it is a read of an allocation operand only when
//! its result may be used as more than an identity. A value is *compared
//! only* when each of its uses is an `eq`/`ne` operand, a `nullcheck`, or
//! an operand of a `phi`, `select` (not its condition) or `copy` whose
//! result is compared only (a greatest fixed point over the phi web, found
//! by one backward sweep from the other uses: linear). Such a result may
//! be the allocation at run time, but nothing it flows into loads a slot,
//! stores the reference, passes, escapes or returns it, so no observer can
//! reach the allocation through it (SSA values are no heap roots, IR.md
//! §7): the allocation stays unread. Counter
//! `lse.stores_unread_compared_only` (a subset of the removed stores).

use crate::copies::CopyRoots;
use ir::effects::inst_effects;
use ir::{Addr, BinOp, Function, Inst, InstKind, Module, UnOp, Value};

/// Storage reused from run to run.
#[derive(Default)]
pub struct Scratch {
    roots: CopyRoots,
    /// Per value: `Some(allocation)` when it is (a copy of) an allocation.
    alloc_of: Vec<Option<Value>>,
    /// Per allocation value: some use may read it (or make it reachable).
    read: Vec<bool>,
    /// `(container, stored)`: `stored` is read when `container` is.
    stored_into: Vec<(Value, Value)>,
    work: Vec<Value>,
    /// Phis and selects with an allocation operand, decided once the
    /// compared-only values are known.
    merges: Vec<Inst>,
    /// Per value: it may be used as more than an identity.
    more_than_compared: Vec<bool>,
    /// Worklist of [`mark_more_than_compared`].
    more_work: Vec<Value>,
    /// Per allocation value: some compared-only merge takes it.
    compared: Vec<bool>,
}

/// What [`remove_stores_to_unread`] did.
#[derive(Default)]
pub struct UnreadStores {
    /// Stores removed (they could not trap).
    pub removed: Vec<Inst>,
    /// Element stores that may trap, rewritten to their `boundscheck`.
    pub to_checks: u64,
    /// Stores through a `select` of an allocation and `null`, rewritten to
    /// their `nullcheck` or `boundscheck`.
    pub select_to_checks: u64,
    /// Removed stores into an allocation that flows into a compared-only
    /// `phi` or `select` (also in `removed`).
    pub compared_only: u64,
}

/// Remove every store into a never-read allocation that cannot trap, and
/// rewrite each element store into one that may trap to its `boundscheck`.
pub fn remove_stores_to_unread(
    module: &Module,
    func: &mut Function,
    scratch: &mut Scratch,
) -> UnreadStores {
    let mut out = UnreadStores::default();
    if !func.inst_iter().any(|i| may_store_into_alloc(func, i)) {
        return out;
    }
    mark_read(func, scratch);
    let Scratch {
        alloc_of,
        read,
        compared,
        ..
    } = &*scratch;
    let unread_base = |addr: &Addr| {
        let base = match *addr {
            Addr::Field { base, .. } | Addr::Elem { base, .. } => base,
            Addr::Global(_) => return false,
        };
        alloc_of[base.index()].is_some_and(|a| !read[a.index()])
    };
    let through_select = |addr: &Addr| {
        addr_base(addr)
            .and_then(|b| func.def_inst(b))
            .is_some_and(|d| matches!(func.inst(d).kind, InstKind::Select(..)))
    };
    let mut checks = Vec::new();
    for i in func.inst_iter() {
        let InstKind::Store {
            addr,
            volatile: false,
            ..
        } = &func.inst(i).kind
        else {
            continue;
        };
        if !unread_base(addr) {
            continue;
        }
        match (inst_effects(module, func, i).may_trap(), addr) {
            (false, _) => {
                out.removed.push(i);
                let alloc = addr_base(addr).and_then(|b| alloc_of[b.index()]);
                out.compared_only += u64::from(alloc.is_some_and(|a| compared[a.index()]));
            }
            (true, &Addr::Elem { base, index }) => checks.push((i, base, Some(index))),
            (true, &Addr::Field { base, .. }) if through_select(addr) => {
                checks.push((i, base, None))
            }
            (true, _) => {}
        }
    }
    func.remove_insts(&out.removed);
    for (i, base, index) in checks {
        let selected = func
            .def_inst(base)
            .is_some_and(|d| matches!(func.inst(d).kind, InstKind::Select(..)));
        if selected {
            out.select_to_checks += 1;
        } else {
            out.to_checks += 1;
        }
        func.insts[i.index()].kind = match index {
            Some(index) => InstKind::BoundsCheck(base, index),
            None => InstKind::NullCheck(base),
        };
    }
    out
}

/// The allocation operand of `select %c, %a, null` or `select %c, null, %a`
/// (after `copy`), given the allocations found so far.
fn select_of_null(
    func: &Function,
    kind: &InstKind,
    alloc: impl Fn(Value) -> Option<Value>,
) -> Option<Value> {
    let InstKind::Select(_, a, b) = *kind else {
        return None;
    };
    let is_null = |v: Value| func.values[v.index()].def == ir::ValueDef::Null;
    match (is_null(a), is_null(b)) {
        (true, false) => alloc(b),
        (false, true) => alloc(a),
        _ => None,
    }
}

/// Fill `scratch.alloc_of` and `scratch.read` for `func`.
fn mark_read(func: &Function, scratch: &mut Scratch) {
    let Scratch {
        roots,
        alloc_of,
        read,
        stored_into,
        work,
        merges,
        more_than_compared,
        more_work,
        compared,
    } = scratch;
    let n = func.values.len();
    roots.recompute(func);
    alloc_of.clear();
    alloc_of.resize(n, None);
    read.clear();
    read.resize(n, false);
    stored_into.clear();
    work.clear();
    merges.clear();
    compared.clear();
    compared.resize(n, false);
    for inst in func.inst_iter() {
        let data = func.inst(inst);
        if let (InstKind::New(_) | InstKind::NewArray { .. }, Some(r)) = (&data.kind, data.result) {
            alloc_of[r.index()] = Some(r);
        }
    }
    // Selects of an allocation and `null`, in block order (a select of such
    // a select found later is treated as a read, which is safe).
    for inst in func.inst_iter() {
        let data = func.inst(inst);
        let found = select_of_null(func, &data.kind, |v| alloc_of[roots.root(func, v).index()]);
        if let (Some(a), Some(r)) = (found, data.result) {
            alloc_of[r.index()] = Some(a);
        }
    }
    let alloc = |v: Value| alloc_of[roots.root(func, v).index()];
    for inst in func.inst_iter() {
        let kind = &func.inst(inst).kind;
        if select_of_null(func, kind, alloc).is_some() {
            // Its uses are the allocation's; the select reads nothing.
            continue;
        }
        match kind {
            InstKind::Store {
                addr,
                value,
                volatile: false,
            } => match (addr_base(addr).and_then(alloc), alloc(*value)) {
                (Some(container), Some(stored)) => stored_into.push((container, stored)),
                (None, Some(stored)) => work.push(stored),
                (_, None) => {}
            },
            InstKind::Len(_)
            | InstKind::NullCheck(_)
            | InstKind::BoundsCheck(..)
            | InstKind::Unary(UnOp::Copy, _)
            | InstKind::Binary(BinOp::Eq | BinOp::Ne, _, _) => {}
            InstKind::Phi(_) | InstKind::Select(..) if merges_alloc(kind, alloc) => {
                merges.push(inst)
            }
            other => other.for_each_operand(|v| work.extend(alloc(v))),
        }
    }
    if !merges.is_empty() {
        mark_more_than_compared(func, more_than_compared, more_work);
        for &inst in merges.iter() {
            let data = func.inst(inst);
            let used = data.result.is_none_or(|r| more_than_compared[r.index()]);
            data.kind.for_each_operand(|v| match alloc(v) {
                Some(a) if used => work.push(a),
                Some(a) => compared[a.index()] = true,
                None => {}
            });
        }
    }
    // Reading a container reads what is stored in it.
    stored_into.sort_unstable();
    while let Some(a) = work.pop() {
        if std::mem::replace(&mut read[a.index()], true) {
            continue;
        }
        let from = stored_into.partition_point(|&(c, _)| c < a);
        let to = stored_into.partition_point(|&(c, _)| c <= a);
        work.extend(stored_into[from..to].iter().map(|&(_, s)| s));
    }
}

/// Whether the `phi` or `select` of kind `kind` takes an allocation (a
/// `select`'s condition is no reference).
fn merges_alloc(kind: &InstKind, alloc: impl Fn(Value) -> Option<Value>) -> bool {
    let mut any = false;
    kind.for_each_operand(|v| any |= alloc(v).is_some());
    any
}

/// Set `more[v]` for each value that may be used as more than an identity:
/// it has a use other than an `eq`/`ne` operand, a `nullcheck`, or an
/// operand of a `phi`, `select` (not its condition) or `copy`; or it is
/// such an operand of one whose result is. `work` is scratch (left empty).
fn mark_more_than_compared(func: &Function, more: &mut Vec<bool>, work: &mut Vec<Value>) {
    more.clear();
    more.resize(func.values.len(), false);
    let mut mark = |v: Value, work: &mut Vec<Value>| {
        if !std::mem::replace(&mut more[v.index()], true) {
            work.push(v);
        }
    };
    for inst in func.inst_iter() {
        match &func.inst(inst).kind {
            InstKind::Binary(BinOp::Eq | BinOp::Ne, _, _)
            | InstKind::NullCheck(_)
            | InstKind::Phi(_)
            | InstKind::Unary(UnOp::Copy, _) => {}
            InstKind::Select(c, _, _) => mark(*c, work),
            other => other.for_each_operand(|v| mark(v, work)),
        }
    }
    // A merge or copy used as more passes that on to what flows into it.
    while let Some(v) = work.pop() {
        let Some(def) = func.def_inst(v) else {
            continue;
        };
        match &func.inst(def).kind {
            InstKind::Phi(entries) => entries.iter().for_each(|&(_, u)| mark(u, work)),
            InstKind::Select(_, a, b) => [*a, *b].into_iter().for_each(|u| mark(u, work)),
            InstKind::Unary(UnOp::Copy, a) => mark(*a, work),
            _ => {}
        }
    }
}

/// Whether `inst` is a plain store whose base may be (a copy of) an
/// allocation: the base is made by `new`, `newarray`, `copy` or `select`. Only such
/// stores can be removed, so a function without one needs no analysis.
fn may_store_into_alloc(func: &Function, inst: Inst) -> bool {
    let InstKind::Store {
        addr,
        volatile: false,
        ..
    } = &func.inst(inst).kind
    else {
        return false;
    };
    addr_base(addr)
        .and_then(|b| func.def_inst(b))
        .is_some_and(|d| {
            matches!(
                func.inst(d).kind,
                InstKind::New(_)
                    | InstKind::NewArray { .. }
                    | InstKind::Unary(UnOp::Copy, _)
                    | InstKind::Select(..)
            )
        })
}

fn addr_base(addr: &Addr) -> Option<Value> {
    match *addr {
        Addr::Field { base, .. } | Addr::Elem { base, .. } => Some(base),
        Addr::Global(_) => None,
    }
}
