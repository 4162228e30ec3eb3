//! Equal return blocks merged (run by `dce`, issue 13; LLVM's SimplifyCFG
//! merges such blocks too).
//!
//! A block whose only instruction is `ret v` (or `ret`), with `v` a
//! constant, `null` or a parameter, is equal to every other such block
//! returning the same value. Each edge into a later one (in layout order)
//! goes to the first instead, and the later ones are left unreachable (DCE
//! removes them); the first goes last in the layout (the order of blocks
//! means nothing to a run, docs/language.md). Then a loop whose exits all `ret 0` has one exit block,
//! as [`crate::dead_loops`] asks, and a `br` whose arms both return the
//! same value has one target twice (peeps folds it).
//!
//! Sound (docs/language.md): entering either block returns the same value
//! at once, running nothing else: no read, write, trap or step, so the
//! heap, trace and result are the same whichever is entered. Neither block
//! has a phi, so the edges carry no values; `v` is defined before every
//! block (a constant, `null` or a parameter), so the kept block's `ret`
//! stays dominated by its operand.
//!
//! Cost: one look at each block's instruction count; the terminators are
//! walked only when two equal return blocks exist. Counter:
//! `dce.return_blocks_merged` (blocks left unreachable).

use crate::stats::Stats;
use ir::{Block, Function, InstKind, ValueDef};
use rustc_hash::FxHashMap;

/// Send the edges into each later equal return block (module header) to
/// the first; returns whether any edge changed.
pub(crate) fn merge_equal_return_blocks(func: &mut Function, stats: &mut Stats) -> bool {
    let entry = func.layout.first().copied();
    let mut first: FxHashMap<Option<ValueDef>, Block> = FxHashMap::default();
    let mut into: FxHashMap<Block, Block> = FxHashMap::default();
    for &b in &func.layout {
        let Some(v) = lone_return(func, b) else {
            continue;
        };
        if Some(b) == entry {
            continue;
        }
        match first.get(&v) {
            Some(&keep) => {
                into.insert(b, keep);
            }
            None => {
                first.insert(v, b);
            }
        }
    }
    if into.is_empty() {
        return false;
    }
    for k in 0..func.layout.len() {
        let Some(t) = func.terminator(func.layout[k]) else {
            continue;
        };
        let kind = &mut func.insts[t.index()].kind;
        for s in kind.successors_mut() {
            if let Some(&keep) = into.get(s) {
                *s = keep;
            }
        }
    }
    // Each kept block goes last in the layout: a loop's run of layout blocks
    // ([`crate::dead_loops`]) then does not hold the block it exits to.
    let mut is_kept = vec![false; func.blocks.len()];
    into.values().for_each(|k| is_kept[k.index()] = true);
    let kept: Vec<Block> = func
        .layout
        .iter()
        .copied()
        .filter(|b| is_kept[b.index()])
        .collect();
    func.layout.retain(|b| !is_kept[b.index()]);
    func.layout.extend(kept);
    stats.add("dce", "return_blocks_merged", into.len() as u64);
    true
}

/// What block `b` returns when `ret` (of a constant, `null`, a parameter
/// or nothing) is its only instruction: `Some` of the value's definition.
fn lone_return(func: &Function, b: Block) -> Option<Option<ValueDef>> {
    let [only] = func.blocks[b.index()].insts.as_slice() else {
        return None;
    };
    let InstKind::Ret(v) = func.inst(*only).kind else {
        return None;
    };
    let def = v.map(|v| func.value_def(v));
    let defined_everywhere =
        def.is_none_or(|d| matches!(d, ValueDef::Const(_) | ValueDef::Null | ValueDef::Param(_)));
    defined_everywhere.then_some(def)
}
