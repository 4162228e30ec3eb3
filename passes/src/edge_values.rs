//! Values known on a branch edge (run by `dce`, issue 13; LLVM's GVN
//! propagates the same equalities). A block `t` entered only by one edge of
//! `br c` knows the condition's value there ([`crate::edge_facts`]): where
//! the edge says a value is zero — `br %x` not taken, `ne %p, null` false,
//! the operands of an `or` known zero — or equal to a constant (`eq %x, 5`
//! taken, `ne %x, 5` not taken), every use of that value in a block `t`
//! dominates (a phi's use sits at the end of its predecessor) reads the
//! constant instead (`0`, or `null` for a reference). SSA values never
//! change, so this is the same value: nothing observable differs. What it
//! opens up is left to the others: `eq 0, 2` folds in peeps, an access of a
//! reference known null becomes a certain trap ([`crate::certain_traps`],
//! run right after), and so a loop whose latch only a null reference
//! reaches runs at most once.
//!
//! Cost: one look at each block's terminator; only when some edge teaches
//! a value, one walk over the instructions' operands, each looked up in a
//! dense table and each candidate asked one O(1) dominance question per
//! edge that teaches its value (at most [`MAX_EDGES`]). Counter:
//! `dce.values_known_from_edges` (operands replaced).

use crate::edge_facts::{implied_facts, IMPLIED_DEPTH};
use crate::stats::Stats;
use ir::{BinOp, Block, Cfg, Function, InstKind, Value, ValueDef};
use smallvec::SmallVec;
use std::cell::RefCell;

/// How many edges may teach one value (further ones are not used).
const MAX_EDGES: usize = 4;

/// No fact (in [`Scratch::slot`]).
const NONE: u32 = u32::MAX;

/// The edges that teach one value: each target, with the constant the
/// value equals in every block that target dominates (as a number, and as
/// a value of the function once one is needed: the value itself until
/// then, so that a run that replaces nothing adds no constant).
type Edges = SmallVec<[(Block, i64, Value); 2]>;

/// Storage reused from function to function.
#[derive(Default)]
struct Scratch {
    /// Per value: its index in `facts`, or [`NONE`] (all [`NONE`] between runs).
    slot: Vec<u32>,
    /// Per value taught: the value and the edges that teach it.
    facts: Vec<(Value, Edges)>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Replace the uses of values a dominating branch edge decides by their
/// constants (module header). Whether anything changed.
pub(crate) fn substitute_edge_values(func: &mut Function, stats: &mut Stats) -> bool {
    if func.layout.len() < 2 {
        return false;
    }
    crate::analyses::with_analyses_mut(func, |a, func| {
        SCRATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            let n = collect(func, a.cfg(), s);
            let replaced = if n > 0 && replace_dominated_uses(func, a.dom(func), s, true) > 0 {
                make_constants(func, s);
                replace_dominated_uses(func, a.dom(func), s, false)
            } else {
                0
            };
            for (v, _) in s.facts.drain(..) {
                s.slot[v.index()] = NONE;
            }
            if replaced > 0 {
                stats.add("dce", "values_known_from_edges", replaced);
            }
            replaced > 0
        })
    })
}

/// Fill `s.facts` with what each single-entry edge of a `br` teaches;
/// returns how many values were taught.
fn collect(func: &Function, cfg: &Cfg, s: &mut Scratch) -> usize {
    if s.slot.len() < func.values.len() {
        s.slot.resize(func.values.len(), NONE);
    }
    let mut taught: SmallVec<[(Value, i64); 4]> = SmallVec::new();
    for k in 0..func.layout.len() {
        let b = func.layout[k];
        let Some(term) = func.terminator(b) else {
            continue;
        };
        let InstKind::Br(c, x, y) = func.inst(term).kind else {
            continue;
        };
        if x == y {
            continue;
        }
        for (t, nonzero) in [(x, true), (y, false)] {
            if t == b || cfg.preds(t) != [b] {
                continue;
            }
            taught.clear();
            edge_constants(func, c, nonzero, &mut taught);
            for &(v, k) in &taught {
                let slot = &mut s.slot[v.index()];
                if *slot == NONE {
                    *slot = s.facts.len() as u32;
                    s.facts.push((v, SmallVec::new()));
                }
                let edges = &mut s.facts[*slot as usize].1;
                if edges.len() < MAX_EDGES {
                    edges.push((t, k, v));
                }
            }
        }
    }
    s.facts.len()
}

/// The (value, constant) equalities `c` being non-zero (`nonzero`) or zero
/// implies, for values that are not constants themselves: those
/// [`implied_facts`] finds zero, and `x == k` from `eq x, k` true or `ne
/// x, k` false (`k` a constant; a reference only equals `null`).
fn edge_constants(func: &Function, c: Value, nonzero: bool, out: &mut SmallVec<[(Value, i64); 4]>) {
    let variable = |v: Value| matches!(func.value_def(v), ValueDef::Inst(_) | ValueDef::Param(_));
    implied_facts(func, c, nonzero, IMPLIED_DEPTH, &mut |v, nz| {
        if !nz && variable(v) {
            out.push((v, 0));
        }
    });
    let Some(d) = func.def_inst(c) else {
        return;
    };
    let data = func.inst(d);
    if data.block.is_none() {
        return;
    }
    if let InstKind::Binary(op @ (BinOp::Eq | BinOp::Ne), x, y) = data.kind {
        let equal = (op == BinOp::Eq) == nonzero;
        match func.as_const(y) {
            Some(k) if k != 0 && equal && variable(x) && !func.value_type(x).is_ref() => {
                out.push((x, k));
            }
            _ => {}
        }
    }
}

/// Make the constant of each edge of `s.facts` (`null` for a reference).
fn make_constants(func: &mut Function, s: &mut Scratch) {
    for (v, edges) in &mut s.facts {
        let is_ref = func.value_type(*v).is_ref();
        for (_, k, constant) in edges.iter_mut() {
            *constant = if is_ref { func.null() } else { func.iconst(*k) };
        }
    }
}

/// Replace each use of a taught value that a teaching edge's target
/// dominates by its constant; returns how many operands were replaced.
/// With `dry`, replaces nothing and stops at the first such use (whether
/// there is one).
fn replace_dominated_uses(func: &mut Function, dom: &ir::DomTree, s: &Scratch, dry: bool) -> u64 {
    let known = |v: Value, at: Block| -> Option<Value> {
        let slot = *s.slot.get(v.index())?;
        if slot == NONE {
            return None;
        }
        let (_, edges) = &s.facts[slot as usize];
        edges
            .iter()
            .find(|&&(t, ..)| dom.dominates(t, at))
            .map(|&(.., k)| k)
    };
    let mut replaced = 0;
    let Function {
        layout,
        blocks,
        insts,
        ..
    } = func;
    for &b in layout.iter() {
        for &i in &blocks[b.index()].insts {
            if insts[i.index()].block.is_none() {
                continue;
            }
            match &mut insts[i.index()].kind {
                InstKind::Phi(entries) => {
                    for (q, v) in entries.iter_mut() {
                        if let Some(k) = known(*v, *q) {
                            if !dry {
                                *v = k;
                            }
                            replaced += 1;
                        }
                    }
                }
                kind => kind.for_each_operand_mut(|v| {
                    if let Some(k) = known(*v, b) {
                        if !dry {
                            *v = k;
                        }
                        replaced += 1;
                    }
                }),
            }
            if dry && replaced > 0 {
                return replaced;
            }
        }
    }
    replaced
}
