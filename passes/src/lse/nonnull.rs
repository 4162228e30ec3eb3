//! Accesses that cannot meet `null`: an instruction whose only possible trap
//! is its base being `null` (`ir::effects::traps_only_on_null`) cannot trap
//! when an earlier instruction that traps on that same base being `null`
//! (`ir::effects::null_checked`, bases compared through copies and replaced
//! loads) runs before it on every path: earlier in its block, or in a block
//! that dominates it. Had the base been `null`, that earlier instruction
//! would have trapped.
//!
//! One preorder walk of the dominator tree, counting per base how many
//! checking instructions enclose the current point: linear in the function.
//! A pre-scan skips the walk (and the caller's dominator tree) when no base
//! is accessed by two instructions, so that nothing can be found.

use super::loc::Subst;
use crate::edge_facts::{entry_fact, implied_facts, IMPLIED_DEPTH};
use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::effects::{null_checked, traps_only_on_null};
use ir::{Block, Function, Inst, InstKind, Value};

/// Storage reused from run to run, and the result of the last run.
#[derive(Default)]
pub struct NonNull {
    /// Per instruction: its null-only trap cannot happen.
    safe: Vec<bool>,
    /// Per value: how many checks of it enclose the current point of the walk.
    checked: Vec<u32>,
    /// The values counted up in the blocks on the current path, in order.
    counted: Vec<Value>,
    /// The walk: (block, its first entry in `counted`, next child to visit).
    stack: Vec<(Block, usize, usize)>,
    /// The pre-scan: the resolved bases of the checking and null-trapping
    /// instructions.
    bases: Vec<Value>,
    /// Per instruction: its resolved checked base, from the pre-scan.
    base_of: Vec<Option<Value>>,
}

impl NonNull {
    /// Forget the last run's result; whether [`NonNull::compute`] can find
    /// anything in `func`: some base is checked or trapped on by two
    /// instructions, or by one and a branch's null test (an instruction is
    /// only ever made safe by another one or by a branch edge).
    pub fn reset(&mut self, func: &Function, subst: &Subst) -> bool {
        self.safe.clear();
        let (bases, base_of) = (&mut self.bases, &mut self.base_of);
        bases.clear();
        base_of.clear();
        base_of.resize(func.insts.len(), None);
        for inst in func.inst_iter() {
            // `traps_only_on_null` implies `null_checked`, on the same base.
            if let Some(base) = null_checked(func, inst) {
                let base = subst.resolve(func, base);
                bases.push(base);
                base_of[inst.index()] = Some(base);
            } else if let InstKind::Br(c, ..) = func.inst(inst).kind {
                let mut tested = |v: Value, _| {
                    if func.value_type(v).is_ref() {
                        bases.push(subst.resolve(func, v));
                    }
                };
                implied_facts(func, c, true, IMPLIED_DEPTH, &mut tested);
            }
        }
        bases.sort_unstable();
        bases.windows(2).any(|w| w[0] == w[1])
    }

    /// Find the instructions of `func` that cannot trap on a `null` base
    /// (worth calling when [`NonNull::reset`] says so, with the same `func`).
    /// With `edges` (the CFG `dom` is of, and the copy table `reset` was
    /// given), branch edges that say a reference is non-null count too.
    pub fn compute(&mut self, func: &Function, dom: &DomTree, edges: Option<(&Cfg, &Subst)>) {
        let NonNull {
            safe,
            checked,
            counted,
            stack,
            bases: _,
            base_of,
        } = self;
        safe.clear();
        safe.resize(func.insts.len(), false);
        checked.clear();
        checked.resize(func.values.len(), 0);
        counted.clear();
        stack.clear();
        let Some(&entry) = dom.preorder().first() else {
            return;
        };
        let mut enter = |b: Block, checked: &mut Vec<u32>, counted: &mut Vec<Value>| {
            if let Some((cfg, subst)) = edges.filter(|_| b != entry) {
                edge_checks(func, cfg, subst, b, checked, counted);
            }
            enter_block(func, base_of, b, safe, checked, counted)
        };
        enter(entry, checked, counted);
        stack.push((entry, 0, 0));
        while let Some(top) = stack.last_mut() {
            let (b, mark, next) = *top;
            if let Some(&child) = dom.children(b).get(next) {
                top.2 += 1;
                let child_mark = counted.len();
                enter(child, checked, counted);
                stack.push((child, child_mark, 0));
            } else {
                for v in counted.drain(mark..) {
                    checked[v.index()] -= 1;
                }
                stack.pop();
            }
        }
    }

    /// Whether `inst`'s only possible trap (a `null` base) cannot happen.
    pub fn cannot_trap_on_null(&self, inst: Inst) -> bool {
        self.safe.get(inst.index()).copied().unwrap_or(false)
    }
}

/// Count up the references the one edge into block `b` (not the entry)
/// says are non-null, if it is entered by one edge of a `br` alone.
fn edge_checks(
    func: &Function,
    cfg: &Cfg,
    subst: &Subst,
    b: Block,
    checked: &mut [u32],
    counted: &mut Vec<Value>,
) {
    let Some((root, nonzero)) = entry_fact(func, cfg, b) else {
        return;
    };
    implied_facts(func, root, nonzero, IMPLIED_DEPTH, &mut |v, nonzero| {
        if nonzero && func.value_type(v).is_ref() {
            let base = subst.resolve(func, v);
            checked[base.index()] += 1;
            counted.push(base);
        }
    });
}

/// Visit block `b`: mark its null-only traps that an enclosing check rules
/// out, and count its own checks up (recorded in `counted`); `base_of`
/// holds each instruction's resolved checked base.
fn enter_block(
    func: &Function,
    base_of: &[Option<Value>],
    b: Block,
    safe: &mut [bool],
    checked: &mut [u32],
    counted: &mut Vec<Value>,
) {
    for &inst in &func.blocks[b.index()].insts {
        // `traps_only_on_null` implies `null_checked`, on the same base.
        let Some(base) = base_of[inst.index()] else {
            continue;
        };
        if traps_only_on_null(func, inst).is_some() {
            safe[inst.index()] = checked[base.index()] > 0;
        }
        checked[base.index()] += 1;
        counted.push(base);
    }
}
