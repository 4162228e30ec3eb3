//! Values known from their definition (run by `dce`; issue 13).
//!
//! Lengths of fresh arrays: `len %a` where `%a` is made by `newarray T, n`
//! with a constant `n` that `newarray` accepts is `n`
//! (`ir::effects::fresh_array_len`): an array's length never changes, and
//! `%a` is not null. Every use of the `len` reads the constant instead and
//! the `len` goes (counter `dce.lens_of_fresh_arrays`); a branch on it then
//! folds.
//!
//! Zero dividends: `sdiv 0, %x` and `srem 0, %x` trap `div_by_zero` when
//! `%x` is 0 and are 0 otherwise (docs/language.md: truncating division;
//! `0 / -1` is 0, no overflow). Every use of the result reads `0` instead
//! (counter `dce.zero_dividends`); the division stays where it was, unused,
//! and DCE keeps it for its trap (an unused `sdiv` by a variable stays), so
//! the trap, its kind and the heap at it are the original's. A use is only
//! reached after the division completed, where its value is 0.
//!
//! Self divisions: `sdiv %x, %x` traps `div_by_zero` when `%x` is 0 and is
//! 1 otherwise, `srem %x, %x` likewise 0 (truncating division: `MIN / MIN`
//! is 1 and `-1 / -1` is 1, no overflow; every remainder of a value by
//! itself is 0). Uses read the constant and the division stays for its trap,
//! exactly as for zero dividends (counter `dce.self_divisions`).
//!
//! Cost: one look at every instruction; only when one is found, one walk
//! over the operands with a dense table per value.

use crate::stats::Stats;
use ir::effects::fresh_array_len;
use ir::{BinOp, Function, Inst, InstKind, Value};
use smallvec::SmallVec;

/// Where a known value comes from (each has its own counter).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    /// A fresh array's `len` (the instruction goes).
    FreshLen,
    /// A division of `0` (the division stays for its trap).
    ZeroDividend,
    /// A division of a value by itself (the division stays for its trap).
    SelfDivision,
}

/// A value known from its definition: the value, its constant and where
/// it comes from.
type Known = (Value, i64, Source);

/// No replacement (in the per-value table).
const NONE: u32 = u32::MAX;

/// Fold every `len` of a fresh array of constant length in `func` and read
/// `0` for every use of a division of `0`. Whether anything changed.
pub(crate) fn fold_fresh_lens(func: &mut Function, stats: &mut Stats) -> bool {
    let mut found: SmallVec<[Known; 4]> = SmallVec::new();
    let mut gone: SmallVec<[Inst; 4]> = SmallVec::new();
    for inst in func.inst_iter() {
        let data = func.inst(inst);
        let Some(r) = data.result else {
            continue;
        };
        match data.kind {
            InstKind::Len(a) => {
                if let Some(n) = fresh_array_len(func, a) {
                    found.push((r, n, Source::FreshLen));
                    gone.push(inst);
                }
            }
            InstKind::Binary(op @ (BinOp::Sdiv | BinOp::Srem), a, b) => {
                if let Some(known) = division_value(func, op, a, b) {
                    found.push((r, known.0, known.1));
                }
            }
            _ => {}
        }
    }
    if found.is_empty() {
        return false;
    }
    let (zero_uses, self_uses) = replace_uses(func, &found);
    func.remove_insts(&gone);
    if !gone.is_empty() {
        stats.add("dce", "lens_of_fresh_arrays", gone.len() as u64);
    }
    if zero_uses > 0 {
        stats.add("dce", "zero_dividends", zero_uses);
    }
    if self_uses > 0 {
        stats.add("dce", "self_divisions", self_uses);
    }
    !gone.is_empty() || zero_uses > 0 || self_uses > 0
}

/// The value of `op a, b` (`sdiv` or `srem`) wherever it completes, if its
/// operands decide it: a dividend of `0`, or a value divided by itself.
fn division_value(func: &Function, op: BinOp, a: Value, b: Value) -> Option<(i64, Source)> {
    if func.as_const(a) == Some(0) {
        Some((0, Source::ZeroDividend))
    } else if a == b {
        Some((i64::from(op == BinOp::Sdiv), Source::SelfDivision))
    } else {
        None
    }
}

/// Make every operand that is one of `found`'s values read its constant;
/// returns how many operands changed that were results of a division of
/// `0` and of a division of a value by itself. A constant is made only for
/// a value something uses (making one changes the function: an unused
/// division kept for its trap would change it on every run).
fn replace_uses(func: &mut Function, found: &[Known]) -> (u64, u64) {
    let mut table = vec![NONE; func.values.len()];
    for (k, &(r, ..)) in found.iter().enumerate() {
        table[r.index()] = k as u32;
    }
    let mut used: SmallVec<[bool; 4]> = SmallVec::from_elem(false, found.len());
    for inst in func.inst_iter() {
        func.inst(inst).kind.for_each_operand(|v| {
            if let Some(&k) = table.get(v.index()).filter(|&&k| k != NONE) {
                used[k as usize] = true;
            }
        });
    }
    let with: SmallVec<[(Option<Value>, Source); 4]> = found
        .iter()
        .zip(&used)
        .map(|(&(_, n, source), &u)| (u.then(|| func.iconst(n)), source))
        .collect();
    let (mut zero, mut selfdiv) = (0, 0);
    func.for_each_placed_kind_mut(|kind| {
        kind.for_each_operand_mut(|v| {
            if let Some(&k) = table.get(v.index()).filter(|&&k| k != NONE) {
                let (Some(c), source) = with[k as usize] else {
                    return;
                };
                *v = c;
                zero += u64::from(source == Source::ZeroDividend);
                selfdiv += u64::from(source == Source::SelfDivision);
            }
        })
    });
    (zero, selfdiv)
}
