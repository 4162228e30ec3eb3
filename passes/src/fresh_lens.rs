//! Lengths of fresh arrays (run by `dce`; issue 13): `len %a` where `%a` is
//! made by `newarray T, n` with a constant `n` that `newarray` accepts is
//! `n` (`ir::effects::fresh_array_len`): an array's length never changes,
//! and `%a` is not null. Every use of the `len` reads the constant instead
//! and the `len` goes (counter `dce.lens_of_fresh_arrays`); a branch on it
//! then folds.

use crate::stats::Stats;
use ir::effects::fresh_array_len;
use ir::{Function, InstKind, Value};
use smallvec::SmallVec;

/// Fold every `len` of a fresh array of constant length in `func`. Whether
/// anything changed.
pub(crate) fn fold_fresh_lens(func: &mut Function, stats: &mut Stats) -> bool {
    let mut found: SmallVec<[(Value, i64); 4]> = SmallVec::new();
    let mut gone: SmallVec<[ir::Inst; 4]> = SmallVec::new();
    for inst in func.inst_iter() {
        let data = func.inst(inst);
        if let (InstKind::Len(a), Some(r)) = (&data.kind, data.result) {
            if let Some(n) = fresh_array_len(func, *a) {
                found.push((r, n));
                gone.push(inst);
            }
        }
    }
    if found.is_empty() {
        return false;
    }
    let with: SmallVec<[(Value, Value); 4]> =
        found.iter().map(|&(r, n)| (r, func.iconst(n))).collect();
    func.for_each_placed_kind_mut(|kind| {
        kind.for_each_operand_mut(|v| {
            if let Some(&(_, c)) = with.iter().find(|&&(r, _)| r == *v) {
                *v = c;
            }
        })
    });
    func.remove_insts(&gone);
    stats.add("dce", "lens_of_fresh_arrays", gone.len() as u64);
    true
}
