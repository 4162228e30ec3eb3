//! Stores merged at returns: both arms of a branch store to one kind of
//! location and then end the function, or both jump to one block (LLVM's
//! SimplifyCFG sinks such a pair into one store of selects or phis).
//!
//! Block `P` ends in `br c, A, B`; `A` and `B` are other blocks, entered
//! only from `P`, both ending in `ret` or both in `jmp J` (one `J`; a pair
//! of last stores to one address there is sunk into `J` by
//! [`super::arm_stores`] first), and each starts with pure
//! instructions and then a plain store — to the same field, the same global,
//! or an element of the same array type. The two stores become one at the
//! end of `P`, just before the `br`: `store select(c, a, b).f, select(c, x,
//! y)` (a select only where the two stores' operands differ; base, index and
//! value each), and the arms' stores go. The arms often `ret` the same value
//! afterwards, and `peeps.equal_arms` then merges them.
//!
//! Sound (docs/language.md): on the edge into `A` every select picks `A`'s
//! operand, so the new store writes the slot `A`'s store wrote, the same
//! value, and traps exactly when it did (same base, same index); likewise
//! for `B`. It now runs before the `br` (which never traps) and before the
//! arm's leading instructions, which are pure (no read, write, trap,
//! allocation or environment step — asked of `ir::effects` through
//! [`super::clobber`]): they compute the same values, and the heap and trace
//! at the store, or at its trap, are the same. Everything after the store
//! stays where it was. Each path still runs one store (never worse); the
//! function holds one store fewer. Operands must be available at the end of
//! `P`: an arm has `P` as its only predecessor, so that means not defined in
//! the arm itself. Volatile stores are left alone. Counted as
//! `lse.stores_merged_at_returns`.

use super::arm_stores::first_arm_store;
use super::clobber::Clobbers;
use ir::cfg::Cfg;
use ir::{Addr, Block, Function, Inst, InstKind, Module, Type, Value};

/// Merge the stores of each branch's two returning (or joining) arms into one store
/// before the branch (see the module header); returns how many pairs were.
/// `cfg` is `func`'s CFG (terminators unchanged since).
pub fn merge_returning_arm_stores(
    module: &Module,
    func: &mut Function,
    cfg: &Cfg,
    clobbers: &Clobbers<'_>,
) -> u64 {
    let mut merged = 0;
    for k in 0..func.layout.len() {
        let p = func.layout[k];
        let Some(term) = func.terminator(p) else {
            continue;
        };
        let InstKind::Br(c, a, b) = func.inst(term).kind else {
            continue;
        };
        let Some([sa, sb]) = arm_store_pair(module, func, cfg, clobbers, p, [a, b]) else {
            continue;
        };
        let Some(plan) = plan_merge(module, func, [(a, sa), (b, sb)]) else {
            continue;
        };
        apply_merge(func, p, c, [sa, sb], plan);
        merged += 1;
    }
    merged
}

/// The first plain stores of arms `a` and `b` of `p`'s `br` when both arms
/// are other blocks entered only from `p`, both end in `ret` or both in a
/// `jmp` to one other block, and reach their store through pure
/// instructions alone.
fn arm_store_pair(
    module: &Module,
    func: &Function,
    cfg: &Cfg,
    clobbers: &Clobbers<'_>,
    p: Block,
    [a, b]: [Block; 2],
) -> Option<[Inst; 2]> {
    let arm = |x: Block| x != p && cfg.preds(x) == [p];
    if a == b || !arm(a) || !arm(b) {
        return None;
    }
    let end = |x: Block| func.terminator(x).map(|t| &func.inst(t).kind);
    let same_end = match (end(a)?, end(b)?) {
        (InstKind::Ret(_), InstKind::Ret(_)) => true,
        (InstKind::Jmp(j), InstKind::Jmp(k)) => j == k && ![a, b].contains(j),
        _ => false,
    };
    if !same_end {
        return None;
    }
    Some([
        first_arm_store(module, clobbers, func, a)?,
        first_arm_store(module, clobbers, func, b)?,
    ])
}

/// The merged store: its address with the selects it needs (one per
/// differing operand: `(a's operand, b's operand, type)`), and its value.
struct Plan {
    /// The address, with base and index to be replaced by selects where
    /// `base`/`index` say so.
    addr: Addr,
    /// The base select's operands and type, when the bases differ.
    base: Option<(Value, Value, Type)>,
    /// The index select's operands and type, when the indices differ.
    index: Option<(Value, Value, Type)>,
    /// The stored values (`a`'s, `b`'s) and the slot's type.
    value: (Value, Value, Type),
}

/// How the stores `sa` (in arm `a`) and `sb` (in arm `b`) merge, if they
/// store to the same kind of location with every operand available outside
/// the arms.
fn plan_merge(module: &Module, func: &Function, arms: [(Block, Inst); 2]) -> Option<Plan> {
    let [(a, sa), (b, sb)] = arms;
    let store = |s: Inst| match &func.inst(s).kind {
        InstKind::Store {
            addr,
            value,
            volatile: false,
        } => Some((addr.clone(), *value)),
        _ => None,
    };
    let ((addr_a, va), (addr_b, vb)) = (store(sa)?, store(sb)?);
    let outside = |v: Value, arm: Block| match func.def_inst(v) {
        None => true,
        Some(d) => func.inst(d).block.is_some_and(|db| db != arm),
    };
    let all_outside = addr_a.values().chain([va]).all(|v| outside(v, a))
        && addr_b.values().chain([vb]).all(|v| outside(v, b));
    if !all_outside {
        return None;
    }
    // Operands `x` (of `a`) and `y` (of `b`): a select of one type if they
    // differ; `Err` when their types differ.
    let pick = |x: Value, y: Value| {
        let ty = func.value_type(x);
        if x == y {
            Ok(None)
        } else if ty == func.value_type(y) {
            Ok(Some((x, y, ty)))
        } else {
            Err(())
        }
    };
    let (base, index, slot) = match (&addr_a, &addr_b) {
        (Addr::Field { base: x, field: f }, Addr::Field { base: y, field: g }) if f == g => {
            (pick(*x, *y).ok()?, None, module.field(*f).ty)
        }
        (Addr::Elem { base: x, index: i }, Addr::Elem { base: y, index: j }) => {
            let elem = func.value_type(*x).elem()?;
            (pick(*x, *y).ok()?, pick(*i, *j).ok()?, elem)
        }
        (Addr::Global(g), Addr::Global(h)) if g == h => (None, None, module.globals[g.index()].ty),
        _ => return None,
    };
    Some(Plan {
        addr: addr_a,
        base,
        index,
        value: (va, vb, slot),
    })
}

/// Rewrite: the selects of `plan` and `sa` (now storing through them) go at
/// the end of `p`, before its `br c`; `sb` goes.
fn apply_merge(func: &mut Function, p: Block, c: Value, [sa, sb]: [Inst; 2], plan: Plan) {
    let mut selects = Vec::with_capacity(4);
    let mut select = |func: &mut Function, (x, y, ty): (Value, Value, Type)| {
        if x == y {
            return Some(x);
        }
        let (sel, result) = func.create_inst(InstKind::Select(c, x, y), Some(ty));
        selects.push(sel);
        result
    };
    let Plan {
        mut addr,
        base,
        index,
        value,
    } = plan;
    match &mut addr {
        Addr::Field { base: at, .. } | Addr::Elem { base: at, .. } => {
            if let Some(sel) = base {
                let Some(v) = select(func, sel) else { return };
                *at = v;
            }
        }
        Addr::Global(_) => {}
    }
    if let (Addr::Elem { index: at, .. }, Some(sel)) = (&mut addr, index) {
        let Some(v) = select(func, sel) else { return };
        *at = v;
    }
    let Some(stored) = select(func, value) else {
        return;
    };
    func.remove_inst(sa);
    func.remove_inst(sb);
    if let InstKind::Store {
        addr: at, value: v, ..
    } = &mut func.insts[sa.index()].kind
    {
        *at = addr;
        *v = stored;
    }
    let end = func.blocks[p.index()].insts.len() - 1;
    for (k, inst) in selects.into_iter().chain([sa]).enumerate() {
        func.insert_inst(p, end + k, inst);
    }
}
