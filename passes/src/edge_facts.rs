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
