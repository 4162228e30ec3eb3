//! Structural checks: the layout, terminators, phi placement and the agreement
//! of `InstData.block` with the blocks' instruction lists.

use super::{FnCtx, Site};
use crate::entities::{Block, Inst, Value};
use crate::function::ValueDef;

/// Check the structure and fill `cx.placed` / `cx.value_site` / `cx.in_layout` (`blocks` is a
/// reusable buffer). Returns whether the arenas are sound enough (no bad ids,
/// nothing listed twice) for the CFG and dominance checks to be meaningful.
pub(super) fn check(cx: &mut FnCtx<'_>, blocks: &mut Vec<Block>) -> bool {
    let f = cx.f;
    let mut sound = true;
    if f.layout.is_empty() {
        cx.report(
            None,
            None,
            "the function has no blocks (it needs an entry block)",
        );
        return false;
    }
    blocks.clear();
    for &b in &f.layout {
        if b.index() >= f.blocks.len() {
            cx.report(
                None,
                None,
                format!("the layout names block #{}, which does not exist", b.0),
            );
            sound = false;
        } else if cx.in_layout[b.index()] {
            cx.report(Some(b), None, "the block appears twice in the layout");
            sound = false;
        } else {
            cx.in_layout[b.index()] = true;
            blocks.push(b);
        }
    }
    for &b in blocks.iter() {
        sound &= check_block(cx, b);
    }
    check_claimed_blocks(cx);
    sound
}

/// One block: existing, unique instructions; phis first; one terminator, last.
fn check_block(cx: &mut FnCtx<'_>, b: Block) -> bool {
    let f = cx.f;
    let insts = &f.blocks[b.index()].insts;
    let mut sound = true;
    if insts.is_empty() {
        cx.report(
            Some(b),
            None,
            "the block is empty (it must end in a terminator)",
        );
        return true;
    }
    let mut seen_non_phi = false;
    for (pos, &i) in insts.iter().enumerate() {
        let Some(data) = f.insts.get(i.index()) else {
            cx.report(
                Some(b),
                None,
                format!("the block lists instruction #{}, which does not exist", i.0),
            );
            sound = false;
            continue;
        };
        if let Some((other, _)) = cx.placed[i.index()].get() {
            let where_ = cx.label(other);
            cx.report(
                Some(b),
                Some(i),
                format!("the instruction is listed twice (also in block {where_})"),
            );
            sound = false;
            continue;
        }
        cx.placed[i.index()] = Site::new(b, pos as u32);
        if let Some(r) = data.result {
            note_result(cx, i, r, Site::new(b, pos as u32));
        }
        if data.block != Some(b) {
            let claimed = match data.block {
                Some(c) => format!("block {}", cx.label(c)),
                None => "no block".to_string(),
            };
            cx.report(
                Some(b),
                Some(i),
                format!(
                    "InstData.block says {claimed}, but the instruction is listed in this block"
                ),
            );
        }
        let last = pos + 1 == insts.len();
        if data.kind.is_terminator() && !last {
            cx.report(Some(b), Some(i), "a terminator in the middle of the block");
        }
        if !data.kind.is_terminator() && last {
            cx.report(Some(b), Some(i), "the block does not end in a terminator");
        }
        if data.kind.is_phi() {
            if seen_non_phi {
                cx.misplaced_phis = true;
                cx.report(
                    Some(b),
                    Some(i),
                    "a phi after a non-phi instruction (phis must come first)",
                );
            }
        } else {
            seen_non_phi = true;
        }
    }
    sound
}

/// Record `site`, where placed instruction `i` is, as the definition site
/// of its result `r` when `r` exists and is recorded as defined by `i`.
#[inline]
fn note_result(cx: &mut FnCtx<'_>, i: Inst, r: Value, site: Site) {
    if cx.f.values.get(r.index()).map(|d| d.def) == Some(ValueDef::Inst(i)) {
        cx.value_site[r.index()] = site;
    }
}

/// Instructions whose `InstData.block` names a block that does not list them.
fn check_claimed_blocks(cx: &mut FnCtx<'_>) {
    let f = cx.f;
    // Only instructions no block lists can be wrong here (a listed one whose
    // claim differs was reported by check_block), so the walk reads the small
    // `placed` table and looks at an instruction only when it is unlisted.
    // (`placed` has one entry per instruction: the search zips the two.)
    let mut from = 0;
    while let Some(k) = cx.placed[from..]
        .iter()
        .zip(&f.insts[from..])
        .position(|(p, d)| !p.is_placed() && d.block.is_some())
    {
        let idx = from + k;
        from = idx + 1;
        let Some(claimed) = f.insts[idx].block else {
            continue;
        };
        let i = Inst::new(idx);
        let msg = if cx.block_in_layout(claimed) {
            format!(
                "InstData.block says block {}, but that block does not list the instruction",
                cx.label(claimed)
            )
        } else {
            format!("InstData.block says block {}, which is not in the layout (a removed instruction must have no block)", cx.label(claimed))
        };
        cx.report(None, Some(i), msg);
    }
}
