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
    let Scratch { alloc_of, read, .. } = &*scratch;
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
            (false, _) => out.removed.push(i),
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
    } = scratch;
    let n = func.values.len();
    roots.recompute(func);
    alloc_of.clear();
    alloc_of.resize(n, None);
    read.clear();
    read.resize(n, false);
    stored_into.clear();
    work.clear();
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
            other => other.for_each_operand(|v| work.extend(alloc(v))),
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
