//! What taking one edge of a `br` says about a value (issue 13): `br c`
//! goes to its first target when `c != 0` (IR.md §4), and `c` is often
//! `eq x, 0` / `ne x, 0` (or `null`) of the value that matters. Where a
//! block is entered by that edge alone, the fact holds in every block it
//! dominates (SSA values never change). Both the peephole engine's
//! decided-branch fold and the known-checked analysis ([`crate::checks`])
//! read branch edges through here.

use ir::{BinOp, Block, Cfg, Function, InstKind, Value, ValueDef};

/// The value condition `c` tests and whether the condition is true exactly
/// when that value is non-zero / non-null (`c` itself, `ne x, 0`) rather
/// than when it is zero / null (`eq x, 0`). Constants are right-hand
/// operands once peeps canonicalizes; other conditions are their own root.
pub fn cond_root(func: &Function, c: Value) -> (Value, bool) {
    let Some(d) = func.def_inst(c) else {
        return (c, true);
    };
    let data = &func.insts[d.index()];
    if data.block.is_none() {
        return (c, true);
    }
    match data.kind {
        InstKind::Binary(op @ (BinOp::Eq | BinOp::Ne), x, y) if is_zero(func, y) => {
            (x, op == BinOp::Ne)
        }
        _ => (c, true),
    }
}

/// Whether `v` is the constant 0 or `null`.
fn is_zero(func: &Function, v: Value) -> bool {
    func.as_const(v) == Some(0) || func.values[v.index()].def == ValueDef::Null
}

/// What the one edge into `b` says, when `b` has exactly one predecessor
/// edge and it comes from a `br` with two different targets: the root of
/// the branch's condition ([`cond_root`]) and whether it is non-zero
/// (non-null) in `b` and every block `b` dominates.
pub fn entry_fact(func: &Function, cfg: &Cfg, b: Block) -> Option<(Value, bool)> {
    let [p] = cfg.preds(b) else {
        return None;
    };
    let t = func.terminator(*p)?;
    let InstKind::Br(c, x, y) = func.insts[t.index()].kind else {
        return None;
    };
    if x == y {
        return None;
    }
    let (root, direct) = cond_root(func, c);
    // Taken when the condition is `b == x`; the root is non-zero exactly
    // when that equals `direct`.
    Some((root, (b == x) == direct))
}

/// How many `and`/`or` levels [`implied_facts`] looks through.
pub const IMPLIED_DEPTH: u32 = 2;

/// Call `f` with every (root, non-zero) fact that `c` being non-zero
/// (`nonzero`) or zero implies: its [`cond_root`]'s, and those of the
/// operands of a bitwise `and` known non-zero (`a & b != 0` needs `a != 0`
/// and `b != 0`) or of an `or` known zero, `depth` levels deep (issue 13:
/// a loop test `and (slt %i, n), (ne %p, null)` makes %p non-null in the
/// body).
pub fn implied_facts(
    func: &Function,
    c: Value,
    nonzero: bool,
    depth: u32,
    f: &mut impl FnMut(Value, bool),
) {
    let (root, direct) = cond_root(func, c);
    let root_nonzero = nonzero == direct;
    f(root, root_nonzero);
    let Some(d) = func.def_inst(root).filter(|_| depth > 0) else {
        return;
    };
    let data = &func.insts[d.index()];
    if data.block.is_none() {
        return;
    }
    if let InstKind::Binary(op, a, b) = data.kind {
        let splits = match op {
            BinOp::And => root_nonzero,
            BinOp::Or => !root_nonzero,
            _ => false,
        };
        if splits {
            implied_facts(func, a, root_nonzero, depth - 1, f);
            implied_facts(func, b, root_nonzero, depth - 1, f);
        }
    }
}

/// Whether the edge `p -> b` is one edge of a `br` with two targets whose
/// condition, taking it, makes a value `is_v` selects non-zero
/// (`nonzero`) or zero ([`implied_facts`]).
pub fn edge_implies(
    func: &Function,
    p: Block,
    b: Block,
    nonzero: bool,
    is_v: impl Fn(Value) -> bool,
) -> bool {
    let Some(term) = func.terminator(p) else {
        return false;
    };
    let InstKind::Br(c, x, y) = func.insts[term.index()].kind else {
        return false;
    };
    let mut found = false;
    if x != y {
        implied_facts(func, c, x == b, IMPLIED_DEPTH, &mut |w, nz| {
            found |= nz == nonzero && is_v(w);
        });
    }
    found
}
