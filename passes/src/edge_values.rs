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
//! An edge on a comparison of an integer with a constant teaches a range
//! too (`slt %x, 1` not taken: `%x >= 1`; `ult %x, 8` taken: `0 <= %x <=
//! 7`; LLVM's correlated value propagation does the same). Where the
//! ranges of every dominating edge that teaches one about `%x` decide a
//! comparison of `%x` with a constant (`eq %x, 0` is false for `%x >= 1`)
//! or exclude 0 for a `br %x`, that use reads the constant it always is
//! (`dce.uses_decided_by_edge_ranges`).
//!
//! An instruction that completed teaches the same way, from the position
//! after it in its block on and in the blocks that block strictly
//! dominates (issue 13): `guard %c` passed, so `%c` is non-zero there, as
//! on an edge where it is; an access of (or `boundscheck` on) a `newarray`
//! of constant length `n` at index `%i` did not trap, so `0 <= %i <= n -
//! 1` (`load %a[%i]` of a one-element array makes `%i` 0). Sound as for
//! an edge: the instruction's block dominates every use it decides, and
//! a value defined before it cannot be redefined on the way to the use
//! without the block running again.
//!
//! A select on a value a fact gives a constant is its picked arm wherever
//! that fact holds: where that arm is an integer constant or `null`, the
//! select is taught that constant too (`dce.select_arms_known_from_edges`;
//! `select %c, %p, null` below the edge where `%c` is 0 is `null`, so an
//! access through it is a certain trap, as LLVM finds). Sound: the select
//! is defined before each of its uses and `%c` is one SSA value, so at a
//! use where `%c` is `k` the select is the arm `k` picks.
//!
//! Cost: one look at each instruction; only when some edge or instruction
//! teaches a value, one walk over the instructions' operands, each looked
//! up in a dense table and each candidate asked one O(1) dominance
//! question per fact about its value (at most [`MAX_EDGES`]). Counters:
//! `dce.values_known_from_edges` (operands replaced by a value's
//! constant), `dce.uses_decided_by_edge_ranges` (by a decided comparison
//! or branch condition), `dce.uses_known_after_insts` (of both, those
//! where a fact an instruction taught holds).

use crate::edge_facts::{implied_facts, IMPLIED_DEPTH};
use crate::stats::Stats;
use ir::effects::{checked_by, fresh_array_len, Checked};
use ir::{Addr, BinOp, Block, Cfg, Function, Inst, InstKind, Value, ValueDef};
use smallvec::SmallVec;
use std::cell::RefCell;

/// How many edges may teach one value (further ones are not used).
const MAX_EDGES: usize = 4;

/// No fact (in [`Scratch::slot`]).
const NONE: u32 = u32::MAX;

/// What one edge (or instruction) teaches about a value: the edge's target
/// (the instruction's block), the position in it from which the fact holds
/// (0 for an edge; one past the instruction), and the signed range
/// `lo..=hi` the value lies in there and wherever the target strictly
/// dominates (one number: the value's constant); `arm` when the value is
/// a select and the fact its picked constant arm.
#[derive(Clone, Copy)]
struct EdgeFact {
    target: Block,
    from: u32,
    lo: i64,
    hi: i64,
    arm: bool,
}

/// The edges that teach one value.
type Edges = SmallVec<[EdgeFact; 2]>;

/// One operand to replace: its instruction, its position among the
/// instruction's operands (`InstKind::for_each_operand` order), the
/// constant it reads, whether that is a range's decision (else a value's
/// constant), whether a fact an instruction taught holds there, and
/// whether the value is a select's constant arm.
type Replacement = (Inst, u32, i64, bool, bool, bool);

/// Storage reused from function to function.
#[derive(Default)]
struct Scratch {
    /// Per value: its index in `facts`, or [`NONE`] (all [`NONE`] between runs).
    slot: Vec<u32>,
    /// Per value taught: the value and the edges that teach it.
    facts: Vec<(Value, Edges)>,
    /// Whether some edge teaches a range of more than one number.
    ranges: bool,
    /// The operands found to replace.
    found: Vec<Replacement>,
    /// The function's selects (for [`Scratch::learn_select_arms`]).
    selects: Vec<Inst>,
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
            s.found.clear();
            s.ranges = false;
            if collect(func, a.cfg(), s) > 0 {
                find_dominated_uses(func, a.dom(func), s);
            }
            for (v, _) in s.facts.drain(..) {
                s.slot[v.index()] = NONE;
            }
            let (values, decided) = replace(func, &s.found);
            let by_insts = count(&s.found, |r| r.4);
            if by_insts > 0 {
                stats.add("dce", "uses_known_after_insts", by_insts);
            }
            if values > 0 {
                stats.add("dce", "values_known_from_edges", values);
            }
            if decided > 0 {
                stats.add("dce", "uses_decided_by_edge_ranges", decided);
            }
            let arms = count(&s.found, |r| r.5);
            if arms > 0 {
                stats.add("dce", "select_arms_known_from_edges", arms);
            }
            values + decided > 0
        })
    })
}

/// Fill `s.facts` with what each single-entry edge of a `br`, each guard
/// and each access of a fresh array teaches, then what that teaches the
/// selects on those values; returns how many values were taught.
fn collect(func: &Function, cfg: &Cfg, s: &mut Scratch) -> usize {
    if s.slot.len() < func.values.len() {
        s.slot.resize(func.values.len(), NONE);
    }
    s.selects.clear();
    let mut taught: SmallVec<[(Value, i64, i64); 4]> = SmallVec::new();
    for k in 0..func.layout.len() {
        let b = func.layout[k];
        let insts = &func.blocks[b.index()].insts;
        for (pos, &i) in insts.iter().enumerate() {
            let kind = &func.inst(i).kind;
            if let InstKind::Select(..) = kind {
                s.selects.push(i);
            }
            if may_teach(kind) {
                taught.clear();
                taught_by_inst(func, kind, &mut taught);
                s.learn(&taught, b, pos as u32 + 1, false);
            }
        }
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
            edge_ranges(func, c, nonzero, &mut taught);
            s.learn(&taught, t, 0, false);
        }
    }
    if !s.facts.is_empty() {
        s.learn_select_arms(func);
    }
    s.facts.len()
}

impl Scratch {
    /// Record the facts `taught` as holding in block `target` from position
    /// `from` on (and in the blocks it strictly dominates); `arm`: they are
    /// selects' picked arms.
    fn learn(&mut self, taught: &[(Value, i64, i64)], target: Block, from: u32, arm: bool) {
        for &(v, lo, hi) in taught {
            let slot = &mut self.slot[v.index()];
            if *slot == NONE {
                *slot = self.facts.len() as u32;
                self.facts.push((v, SmallVec::new()));
            }
            let edges = &mut self.facts[*slot as usize].1;
            if edges.len() < MAX_EDGES {
                edges.push(EdgeFact {
                    target,
                    from,
                    lo,
                    hi,
                    arm,
                });
                self.ranges |= lo != hi;
            }
        }
    }

    /// For each select `v = select c, a, b` and each fact giving `c` a
    /// constant: where that picks an integer constant or `null` (as 0),
    /// the same fact gives `v` that constant (module header).
    fn learn_select_arms(&mut self, func: &Function) {
        for k in 0..self.selects.len() {
            let i = self.selects[k];
            let data = func.inst(i);
            let (InstKind::Select(c, a, b), Some(v)) = (&data.kind, data.result) else {
                continue;
            };
            let (c, a, b) = (*c, *a, *b);
            let slot = self.slot[c.index()];
            if slot == NONE {
                continue;
            }
            let cond_facts: Edges = self.facts[slot as usize].1.clone();
            for e in cond_facts.iter().filter(|e| e.lo == e.hi) {
                let arm = if e.lo != 0 { a } else { b };
                let k = match func.value_def(arm) {
                    ValueDef::Null => 0,
                    ValueDef::Const(k) => k,
                    _ => continue,
                };
                self.learn(&[(v, k, k)], e.target, e.from, true);
            }
        }
    }
}

/// Whether `kind` is an instruction [`taught_by_inst`] may learn from (a
/// quick filter: most are not).
fn may_teach(kind: &InstKind) -> bool {
    matches!(
        kind,
        InstKind::Guard(_)
            | InstKind::BoundsCheck(..)
            | InstKind::Load {
                addr: Addr::Elem { .. },
                ..
            }
            | InstKind::Store {
                addr: Addr::Elem { .. },
                ..
            }
    )
}

/// What an instruction that completed teaches about the values it uses:
/// `guard %c` passed, so `%c` is non-zero (what [`edge_ranges`] finds for
/// an edge where it is); an access of (or `boundscheck` on) a `newarray`
/// of constant length `n` at index `%i` did not trap, so `0 <= %i <= n -
/// 1` (issue 13: LLVM finds the index of a one-element array 0).
fn taught_by_inst(func: &Function, kind: &InstKind, out: &mut SmallVec<[(Value, i64, i64); 4]>) {
    if let InstKind::Guard(c) = *kind {
        edge_ranges(func, c, true, out);
        return;
    }
    if let Some(Checked::InBounds(a, i)) = checked_by(kind) {
        let variable = matches!(func.value_def(i), ValueDef::Inst(_) | ValueDef::Param(_));
        if let Some(n) = fresh_array_len(func, a).filter(|&n| n > 0 && variable) {
            out.push((i, 0, n - 1));
        }
    }
}

/// The (value, range) facts `c` being non-zero (`nonzero`) or zero
/// implies, for values that are not constants themselves: zero for those
/// [`implied_facts`] finds zero, and for `x` compared with a constant `k`
/// the range where the comparison has its known result (`x == k` from `eq
/// x, k` true or `ne x, k` false; `x >= 1` from `slt x, 1` false; a
/// reference is only ever known `null`).
fn edge_ranges(
    func: &Function,
    c: Value,
    nonzero: bool,
    out: &mut SmallVec<[(Value, i64, i64); 4]>,
) {
    let variable = |v: Value| matches!(func.value_def(v), ValueDef::Inst(_) | ValueDef::Param(_));
    implied_facts(func, c, nonzero, IMPLIED_DEPTH, &mut |v, nz| {
        if !nz && variable(v) {
            out.push((v, 0, 0));
        }
        if let Some((x, lo, hi)) = range_taught(func, v, nz) {
            if variable(x) {
                out.push((x, lo, hi));
            }
        }
    });
}

/// The integer `x` and the range `lo..=hi` it lies in when `v`, a
/// comparison of `x` with a constant, is non-zero (`nonzero`) or zero
/// (`None` when that is no one range narrower than every number).
pub(crate) fn range_taught(func: &Function, v: Value, nonzero: bool) -> Option<(Value, i64, i64)> {
    let (x, op, k) = compared_with_constant(func, v)?;
    let (lo, hi) = range_where(op, k, nonzero)?;
    ((lo, hi) != (i64::MIN, i64::MAX)).then_some((x, lo, hi))
}

/// The integer `x`, comparison `op` and constant `k` when `v` is the
/// result of a placed `op x, k` (or of `k` compared with `x`, the
/// comparison then mirrored).
pub(crate) fn compared_with_constant(func: &Function, v: Value) -> Option<(Value, BinOp, i64)> {
    let d = func.def_inst(v)?;
    let data = func.inst(d);
    let InstKind::Binary(op, a, b) = data.kind else {
        return None;
    };
    data.block?;
    negated(op)?;
    let (x, op, k) = match (func.as_const(a), func.as_const(b)) {
        (None, Some(k)) => (a, op, k),
        (Some(k), None) => (b, mirrored(op)?, k),
        _ => return None,
    };
    (!func.value_type(x).is_ref()).then_some((x, op, k))
}

/// The comparison `op` with its operands swapped (`k < x` is `x > k`);
/// `None` for an operation that is not a comparison.
fn mirrored(op: BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::Eq | BinOp::Ne => op,
        BinOp::Slt => BinOp::Sgt,
        BinOp::Sle => BinOp::Sge,
        BinOp::Sgt => BinOp::Slt,
        BinOp::Sge => BinOp::Sle,
        BinOp::Ult => BinOp::Ugt,
        BinOp::Ule => BinOp::Uge,
        BinOp::Ugt => BinOp::Ult,
        BinOp::Uge => BinOp::Ule,
        _ => return None,
    })
}

/// The comparison true exactly when `op` is false (`None` for an
/// operation that is not a comparison).
fn negated(op: BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::Eq => BinOp::Ne,
        BinOp::Ne => BinOp::Eq,
        BinOp::Slt => BinOp::Sge,
        BinOp::Sle => BinOp::Sgt,
        BinOp::Sgt => BinOp::Sle,
        BinOp::Sge => BinOp::Slt,
        BinOp::Ult => BinOp::Uge,
        BinOp::Ule => BinOp::Ugt,
        BinOp::Ugt => BinOp::Ule,
        BinOp::Uge => BinOp::Ult,
        _ => return None,
    })
}

/// The signed range `lo..=hi` of the `x` for which `op x, k` is `holds`,
/// when it is one non-empty range (`ult x, 8`: `0..=7`; `ugt x, -3`:
/// `-2..=-1`; `ne x, k` and `ult x, 0` are not).
pub(crate) fn range_where(op: BinOp, k: i64, holds: bool) -> Option<(i64, i64)> {
    let op = if holds { op } else { negated(op)? };
    let (min, max) = (i64::MIN, i64::MAX);
    match op {
        BinOp::Eq => Some((k, k)),
        BinOp::Slt => (k != min).then(|| (min, k - 1)),
        BinOp::Sle => Some((min, k)),
        BinOp::Sgt => (k != max).then(|| (k + 1, max)),
        BinOp::Sge => Some((k, max)),
        BinOp::Ult => (k > 0).then(|| (0, k - 1)),
        BinOp::Ule => (k >= 0).then_some((0, k)),
        BinOp::Ugt => (k < -1).then(|| (k + 1, -1)),
        BinOp::Uge => (k < 0).then_some((k, -1)),
        _ => None,
    }
}

/// The result of `op x, k` for every `x` in `lo..=hi`, when they all agree.
/// Within the negative and within the non-negative numbers the signed and
/// unsigned orders agree, and a comparison other than `eq`/`ne` is
/// monotone in `x` in its order: it is decided on each such part when its
/// two ends agree.
fn decide(op: BinOp, lo: i64, hi: i64, k: i64) -> Option<bool> {
    match op {
        BinOp::Eq | BinOp::Ne => {
            let equal = if lo == k && hi == k {
                true
            } else if k < lo || k > hi {
                false
            } else {
                return None;
            };
            Some(equal == (op == BinOp::Eq))
        }
        _ => {
            let mut ends: SmallVec<[i64; 4]> = SmallVec::new();
            if lo < 0 {
                ends.extend([lo, hi.min(-1)]);
            }
            if hi >= 0 {
                ends.extend([lo.max(0), hi]);
            }
            let first = op.eval(ends[0], k)?;
            ends.iter()
                .all(|&x| op.eval(x, k) == Some(first))
                .then_some(first != 0)
        }
    }
}

/// The facts of one run, asked at a block.
struct Taught<'a> {
    dom: &'a ir::DomTree,
    slot: &'a [u32],
    facts: &'a [(Value, Edges)],
}

impl Taught<'_> {
    /// The edges that teach `v` something.
    fn edges(&self, v: Value) -> &[EdgeFact] {
        match self.slot.get(v.index()) {
            Some(&slot) if slot != NONE => &self.facts[slot as usize].1,
            _ => &[],
        }
    }

    /// Whether fact `e` holds at position `pos` of block `at`.
    fn holds(&self, e: &EdgeFact, (at, pos): (Block, u32)) -> bool {
        if e.target == at {
            pos >= e.from
        } else {
            self.dom.dominates(e.target, at)
        }
    }

    /// The constant `v` equals at position `at`, by the first fact that
    /// holds there and teaches one, and whether that is a select's arm.
    fn constant_at(&self, v: Value, at: (Block, u32)) -> Option<(i64, bool)> {
        self.edges(v)
            .iter()
            .find(|e| e.lo == e.hi && self.holds(e, at))
            .map(|e| (e.lo, e.arm))
    }

    /// Whether a fact an instruction taught about `v` holds at `at`.
    fn inst_taught(&self, v: Value, at: (Block, u32)) -> bool {
        self.edges(v)
            .iter()
            .any(|e| e.from > 0 && self.holds(e, at))
    }

    /// The range every fact that holds at position `at` and teaches `v` one
    /// allows (`None`: none teaches one, or they leave no number at all).
    fn range_at(&self, v: Value, at: (Block, u32)) -> Option<(i64, i64)> {
        let (lo, hi) = self
            .edges(v)
            .iter()
            .filter(|e| self.holds(e, at))
            .fold((i64::MIN, i64::MAX), |(lo, hi), e| {
                (lo.max(e.lo), hi.min(e.hi))
            });
        (lo <= hi && (lo, hi) != (i64::MIN, i64::MAX)).then_some((lo, hi))
    }
}

/// Fill `s.found` with every use of a value that a dominating edge gives a
/// constant, and, where some edge teaches a range, every comparison and
/// branch condition those ranges decide (module header).
fn find_dominated_uses(func: &Function, dom: &ir::DomTree, s: &mut Scratch) {
    let Scratch {
        slot,
        facts,
        ranges,
        found,
        selects: _,
    } = s;
    let taught = Taught { dom, slot, facts };
    let ranges = *ranges;
    let known = |v: Value, at: (Block, u32), is_br: bool| -> Option<(i64, bool, bool, bool)> {
        if let Some((k, arm)) = taught.constant_at(v, at) {
            return Some((k, false, taught.inst_taught(v, at), arm));
        }
        if !ranges {
            return None;
        }
        if is_br
            && taught
                .range_at(v, at)
                .is_some_and(|(lo, hi)| lo > 0 || hi < 0)
        {
            return Some((1, true, taught.inst_taught(v, at), false));
        }
        let (x, op, k) = compared_with_constant(func, v)?;
        let (lo, hi) = taught.range_at(x, at)?;
        decide(op, lo, hi, k).map(|d| (i64::from(d), true, taught.inst_taught(x, at), false))
    };
    for &b in &func.layout {
        for (at, &i) in func.blocks[b.index()].insts.iter().enumerate() {
            let data = func.inst(i);
            if data.block.is_none() {
                continue;
            }
            if let InstKind::Phi(entries) = &data.kind {
                for (pos, &(q, v)) in entries.iter().enumerate() {
                    // (A phi's use sits at the end of its predecessor.)
                    if let Some((k, decided, by_inst, arm)) = known(v, (q, u32::MAX), false) {
                        found.push((i, pos as u32, k, decided, by_inst, arm));
                    }
                }
                continue;
            }
            let is_br = matches!(data.kind, InstKind::Br(..));
            let mut pos = 0;
            data.kind.for_each_operand(|v| {
                if let Some((k, decided, by_inst, arm)) = known(v, (b, at as u32), is_br) {
                    found.push((i, pos, k, decided, by_inst, arm));
                }
                pos += 1;
            });
        }
    }
}

/// Make each replacement of `found` (a value's constant is `null` for a
/// reference); returns how many operands read a value's constant and how
/// many a decision (of both, [`after_insts`] counts those where an
/// instruction's fact held).
fn replace(func: &mut Function, found: &[Replacement]) -> (u64, u64) {
    let (mut values, mut decided) = (0, 0);
    for &(i, pos, k, by_range, ..) in found {
        if !replace_operand_by_constant(func, i, pos, k, !by_range) {
            continue;
        }
        if by_range {
            decided += 1;
        } else {
            values += 1;
        }
    }
    (values, decided)
}

/// How many of the replacements `found` satisfy `pick`.
fn count(found: &[Replacement], pick: impl Fn(&Replacement) -> bool) -> u64 {
    found.iter().filter(|r| pick(r)).count() as u64
}

/// Make operand `pos` of `i` (`InstKind::for_each_operand` order) the
/// constant `k`, as `null` where the operand is a reference and
/// `null_for_refs`; whether `i` has such an operand.
pub(crate) fn replace_operand_by_constant(
    func: &mut Function,
    i: Inst,
    pos: u32,
    k: i64,
    null_for_refs: bool,
) -> bool {
    let Some(old) = nth_operand(&func.inst(i).kind, pos) else {
        return false;
    };
    let new = if null_for_refs && func.value_type(old).is_ref() {
        func.null()
    } else {
        func.iconst(k)
    };
    let mut n = 0;
    func.insts[i.index()].kind.for_each_operand_mut(|v| {
        if n == pos {
            *v = new;
        }
        n += 1;
    });
    true
}

/// The operand of `kind` at position `pos` (`InstKind::for_each_operand` order).
fn nth_operand(kind: &InstKind, pos: u32) -> Option<Value> {
    let (mut n, mut found) = (0, None);
    kind.for_each_operand(|v| {
        if n == pos {
            found = Some(v);
        }
        n += 1;
    });
    found
}
