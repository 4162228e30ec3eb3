//! Which null and bounds checks a function already made where: the "known
//! checked" analysis DCE asks before it keeps a `nullcheck` or `boundscheck`.
//!
//! An instruction that completes checks what [`ir::effects::checked_by`]
//! says (a field access, `len` or `nullcheck`: its reference is non-null; an
//! element access or `boundscheck`: its array is non-null and its index in
//! bounds). SSA values never change and array lengths are immutable, so such
//! a fact holds at every point the instruction dominates. A walk of the
//! dominator tree in preorder keeps the facts of the instructions that
//! dominate the current one in a scoped set (a block's facts are dropped
//! when the walk leaves its subtree). Values are keyed by their copy roots
//! ([`crate::copies::CopyRoots`]), so a check of `copy %p` is a check of
//! `%p`. Besides these, a result of an allocation is non-null everywhere, and
//! a constant index of a `newarray` of constant length is in bounds when it
//! is below the length; and a block entered only by the edge of `br` on
//! `ne %p, null` taken when %p is not null (or the other edge of `eq %p,
//! null`) knows %p non-null, with every block it dominates
//! ([`crate::edge_facts`]). A phi of references is non-null in its block
//! (and every block that block dominates) when each entry is non-null on
//! its own edge ([`Known::phi_non_null`], issue 13: a list walk rotated
//! into `phi [pre: %p], [b: %next]` with `%p` tested before the loop and
//! `%next` tested by the back edge's `br`).
//!
//! A check whose facts are all known where it stands is redundant
//! ([`redundant_checks`]); removing it keeps every fact it stood for known,
//! since what made it known dominates everything the check dominated.
//! A block entered only by the edge of `br (ult %i, len %a)` taken (or
//! the like, [`in_bounds_by`]) knows %i in the bounds of %a, too. An edge
//! on a comparison of an integer with a constant also leaves it a range
//! (`ult %i, 3` taken: `0..=2`, [`crate::edge_values::range_taught`]),
//! kept scoped like the facts: an index whose range is inside the
//! constant length of the fresh array it indexes is in bounds (issue 13:
//! `len` of a fresh array is folded to its constant first). And where
//! `select %c, null, %x` is known non-null it is `%x`: an index in the
//! bounds of the fresh array `%x` is in the select's bounds.
//! Asked, the same walk ([`redundant_checks`]) also decides
//! the null tests `eq %p, null` / `ne %p, null` (issue 13: after an access
//! of %p that would have trapped on null, %p is not null, as LLVM's
//! `isKnownNonZero` finds from a dominating dereference).

use crate::copies::CopyRoots;
use crate::edge_facts::{entry_fact, implied_facts, IMPLIED_DEPTH};
use crate::edge_values::range_taught;
use ir::effects::{checked_by, inst_effects, Checked};
use ir::{BinOp, Block, Cfg, Function, Inst, InstKind, Module, Value, ValueDef};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

/// The facts known at one point of the walk, undone block by block, each
/// with whether a branch edge taught it first; and the signed ranges
/// branch edges teach integers (as copy roots).
#[derive(Default)]
struct Scoped {
    set: FxHashMap<Checked, bool>,
    /// The facts in the order they were added (each once).
    log: Vec<Checked>,
    /// Per integer: the range `lo..=hi` the dominating edges leave it.
    ranges: FxHashMap<Value, (i64, i64)>,
    /// Each range change with the range before it, in order.
    range_log: Vec<(Value, Option<(i64, i64)>)>,
}

/// How far [`Scoped`] had got: the lengths of its two logs.
#[derive(Copy, Clone, Default)]
struct Mark {
    facts: usize,
    ranges: usize,
}

impl Scoped {
    fn add(&mut self, fact: Checked, from_edge: bool) {
        if let Entry::Vacant(e) = self.set.entry(fact) {
            e.insert(from_edge);
            self.log.push(fact);
        }
    }

    /// Narrow the range of `v` to `lo..=hi`.
    fn narrow(&mut self, v: Value, lo: i64, hi: i64) {
        let old = self.ranges.get(&v).copied();
        let (l, h) = old.unwrap_or((i64::MIN, i64::MAX));
        self.ranges.insert(v, (l.max(lo), h.min(hi)));
        self.range_log.push((v, old));
    }

    fn mark(&self) -> Mark {
        Mark {
            facts: self.log.len(),
            ranges: self.range_log.len(),
        }
    }

    fn truncate(&mut self, to: Mark) {
        for fact in self.log.drain(to.facts..) {
            self.set.remove(&fact);
        }
        while self.range_log.len() > to.ranges {
            let (v, old) = self.range_log.pop().expect("longer than the mark");
            match old {
                Some(r) => self.ranges.insert(v, r),
                None => self.ranges.remove(&v),
            };
        }
    }
}

/// Storage reused from function to function (see [`redundant_checks`]).
#[derive(Default)]
pub struct Scratch {
    roots: CopyRoots,
    facts: Scoped,
    /// Per value (as copy root): whether some check checks it (facts about
    /// other values are never asked for and not recorded).
    wanted: Vec<bool>,
    /// Per value (as copy root): how many instructions check it, up to 2.
    checkers: Vec<u8>,
    /// The walk: (block, facts on entry, next child).
    stack: Vec<(Block, Mark, usize)>,
    /// How many of the last call's redundant checks only a branch edge
    /// made redundant.
    from_branches: usize,
    /// Whether the walk decides null tests too.
    tests_asked: bool,
    /// Whether some phi may be found non-null ([`Known::phi_non_null`]).
    phis_asked: bool,
    /// Per value (as copy root): bit 1 when a null test asks about it, bit
    /// 2 when an access or check checks it.
    tested: Vec<u8>,
    /// The null tests decided by the last walk that asked, each with its value.
    null_tests: Vec<(Inst, bool)>,
    /// Per value (as copy root): a phi the last walk found non-null by
    /// [`Known::phi_non_null`].
    phi_facts: Vec<bool>,
    /// The checks of the last walk found redundant only with a phi fact.
    by_phis: Vec<Inst>,
}

impl Scratch {
    /// How many checks the last [`redundant_checks`] found redundant only
    /// because a branch on a null test dominates them.
    pub fn known_from_branches(&self) -> usize {
        self.from_branches
    }

    /// The null tests decided by the last [`redundant_checks`] that asked,
    /// each with its value (`ne` of a non-null reference is true).
    pub fn null_tests(&self) -> &[(Inst, bool)] {
        &self.null_tests
    }

    /// The checks the last [`redundant_checks`] found redundant because a
    /// phi is non-null on each of its edges (and nothing else checked it).
    pub fn known_from_phis(&self) -> &[Inst] {
        &self.by_phis
    }
}

/// The array and index a comparison `v` of an index with the array's
/// `len` proves in bounds when it is non-zero (`nonzero`) or zero: `ult
/// %i, len %a` / `ugt len %a, %i` true, `uge %i, len %a` / `ule len %a,
/// %i` false (an unsigned `%i < len %a` is `0 <= %i < len %a`).
fn in_bounds_by(f: &Function, v: Value, nonzero: bool) -> Option<(Value, Value)> {
    let d = f.def_inst(v)?;
    let InstKind::Binary(op, x, y) = f.inst(d).kind else {
        return None;
    };
    let (i, n) = match (op, nonzero) {
        (BinOp::Ult, true) | (BinOp::Uge, false) => (x, y),
        (BinOp::Ugt, true) | (BinOp::Ule, false) => (y, x),
        _ => return None,
    };
    let l = f.def_inst(n)?;
    match f.inst(l).kind {
        InstKind::Len(a) if f.inst(l).block.is_some() => Some((a, i)),
        _ => None,
    }
}

/// The reference a null test `eq x, null` / `ne x, null` (either order)
/// asks about, and whether the test is `ne`.
pub fn null_test(f: &Function, kind: &InstKind) -> Option<(Value, bool)> {
    let InstKind::Binary(op @ (BinOp::Eq | BinOp::Ne), a, b) = *kind else {
        return None;
    };
    let is_null = |v: Value| f.values[v.index()].def == ValueDef::Null;
    let x = match (is_null(a), is_null(b)) {
        (false, true) => a,
        (true, false) => b,
        _ => return None,
    };
    f.value_type(x).is_ref().then_some((x, op == BinOp::Ne))
}

/// The known-checked questions over one function.
struct Known<'a> {
    m: &'a Module,
    f: &'a Function,
    /// The function's CFG (`None` for a function of one block).
    cfg: Option<&'a Cfg>,
    s: &'a mut Scratch,
}

impl Known<'_> {
    fn root(&self, v: Value) -> Value {
        self.s.roots.root(self.f, v)
    }

    /// `fact` with its values replaced by their copy roots.
    fn rooted(&self, fact: Checked) -> Checked {
        match fact {
            Checked::NonNull(b) => Checked::NonNull(self.root(b)),
            Checked::InBounds(a, i) => Checked::InBounds(self.root(a), self.root(i)),
        }
    }

    /// Whether (rooted) `v` is the result of an allocation.
    fn allocated(&self, v: Value) -> bool {
        allocated(self.m, self.f, v)
    }

    /// Whether the (rooted) fact is known at the current point: `Some(true)`
    /// when only because a branch edge taught it, `Some(false)` otherwise.
    fn known(&self, fact: Checked) -> Option<bool> {
        let by_walk = self.s.facts.set.get(&fact).copied();
        let by_def = match fact {
            Checked::NonNull(b) => self.allocated(b).then_some(false),
            Checked::InBounds(a, i) => self
                .fresh_in_bounds(a, i)
                .or_else(|| self.arm_in_bounds(a, i)),
        };
        by_def.or(by_walk)
    }

    /// Whether index `i` is certainly below the constant length of the
    /// `newarray` that made `a`: by its definition
    /// (`ir::effects::index_range`: `Some(false)`), or only with the range
    /// the dominating branch edges leave it (`Some(true)`).
    fn fresh_in_bounds(&self, a: Value, i: Value) -> Option<bool> {
        let d = self.f.def_inst(a)?;
        let InstKind::NewArray { len, .. } = self.f.inst(d).kind else {
            return None;
        };
        let n = self.f.as_const(len)?;
        let fits = |(lo, hi): (i64, i64)| 0 <= lo && hi < n;
        let (lo, hi) = ir::effects::index_range(self.f, i).unwrap_or((i64::MIN, i64::MAX));
        if fits((lo, hi)) {
            return Some(false);
        }
        let &(elo, ehi) = self.s.facts.ranges.get(&i)?;
        fits((lo.max(elo), hi.min(ehi))).then_some(true)
    }

    /// Whether `a` is `select %c, null, %x` (or `%x, null`), known non-null
    /// here (so it is `%x`), with `i` in the bounds of the fresh array `%x`
    /// (issue 13: `ne (select ...), null` taken). `Some(true)`: only a
    /// branch edge made one of these known.
    fn arm_in_bounds(&self, a: Value, i: Value) -> Option<bool> {
        let d = self.f.def_inst(a)?;
        let InstKind::Select(_, x, y) = self.f.inst(d).kind else {
            return None;
        };
        let is_null = |v: Value| self.f.values[v.index()].def == ValueDef::Null;
        let arm = match (is_null(x), is_null(y)) {
            (true, false) => y,
            (false, true) => x,
            _ => return None,
        };
        let by_edge = self.fresh_in_bounds(self.root(arm), i)?;
        let non_null_by_edge = self.known(Checked::NonNull(a))?;
        Some(by_edge || non_null_by_edge)
    }

    /// Record what `inst` checks, if some check asks about its base (an
    /// element check also makes its array non-null).
    fn learn(&mut self, inst: Inst) {
        let Some(fact) = checked_by(&self.f.inst(inst).kind) else {
            return;
        };
        let fact = self.rooted(fact);
        if !self.s.wanted[fact.base().index()] {
            return;
        }
        if let Checked::InBounds(a, _) = fact {
            self.s.facts.add(Checked::NonNull(a), false);
        }
        self.s.facts.add(fact, false);
    }

    /// Whether phi `phi` (a reference, its own copy root) of block `b` is
    /// non-null wherever `b` dominates, asked on entering `b` (before its
    /// own entry fact): each entry `(p, v)` is the phi itself, or non-null
    /// by what is known here, or made non-null by the `br` of `p` taking
    /// the edge to `b` ([`implied_facts`]). `Some(true)`: a branch edge
    /// taught one of these.
    ///
    /// Sound: the facts known on entering `b` are those of its strict
    /// dominators, and `b`'s immediate dominator dominates every
    /// predecessor `p` that can run, so they hold when the edge `p -> b`
    /// is crossed and the entry's value is read; an edge fact holds on its
    /// edge (IR.md §4). A self entry takes the value the phi had on the
    /// previous visit, non-null by induction on the visits. So each time
    /// the phi gets a value it is non-null, and SSA values never change.
    fn phi_non_null(&self, b: Block, phi: Inst) -> Option<bool> {
        let InstKind::Phi(entries) = &self.f.inst(phi).kind else {
            return None;
        };
        let me = self.root(self.f.inst(phi).result?);
        let mut by_edge = false;
        for &(p, v) in entries {
            let v = self.root(v);
            if v == me {
                continue;
            }
            if let Some(e) = self.known(Checked::NonNull(v)) {
                by_edge |= e;
                continue;
            }
            if !self.edge_makes_non_null(p, b, v) {
                return None;
            }
            by_edge = true;
        }
        Some(by_edge)
    }

    /// Whether `p` ends in a `br` with two targets whose edge to `b` is
    /// taken only when (copy root) `v` is non-null.
    fn edge_makes_non_null(&self, p: Block, b: Block, v: Value) -> bool {
        crate::edge_facts::edge_implies(self.f, p, b, true, |w| self.s.roots.root(self.f, w) == v)
    }

    /// Learn the phis of `b` that [`Self::phi_non_null`] finds non-null.
    fn learn_phis(&mut self, b: Block) {
        for &i in &self.f.blocks[b.index()].insts {
            if !self.f.inst(i).kind.is_phi() {
                break;
            }
            let Some(v) = self.f.inst(i).result.map(|v| self.root(v)) else {
                continue;
            };
            if !self.f.value_type(v).is_ref() || !self.s.wanted[v.index()] {
                continue;
            }
            if let Some(from_edge) = self.phi_non_null(b, i) {
                self.s.facts.add(Checked::NonNull(v), from_edge);
                self.s.phi_facts[v.index()] = true;
            }
        }
    }

    /// Walk `b`'s instructions: a check `is_check` selects whose fact is
    /// known goes to `out`; every other instruction teaches its facts. The
    /// edge `b` is entered by alone first teaches a reference non-null
    /// (the entry has no way in, and the CFG is only computed for a
    /// function of more than one block).
    fn block(&mut self, b: Block, is_check: &impl Fn(Inst) -> bool, out: &mut Vec<Inst>) {
        if self.s.phis_asked {
            self.learn_phis(b);
        }
        let fact = self
            .cfg
            .filter(|_| b != self.f.entry())
            .and_then(|cfg| entry_fact(self.f, cfg, b));
        if let Some((c, nonzero)) = fact {
            let (f, s) = (self.f, &mut *self.s);
            implied_facts(f, c, nonzero, IMPLIED_DEPTH, &mut |v, nonzero| {
                if let Some((x, lo, hi)) = range_taught(f, v, nonzero) {
                    s.facts.narrow(s.roots.root(f, x), lo, hi);
                }
                if let Some((a, i)) = in_bounds_by(f, v, nonzero) {
                    let (a, i) = (s.roots.root(f, a), s.roots.root(f, i));
                    if s.wanted[a.index()] {
                        s.facts.add(Checked::InBounds(a, i), true);
                    }
                }
                let v = s.roots.root(f, v);
                if nonzero && f.value_type(v).is_ref() && s.wanted[v.index()] {
                    s.facts.add(Checked::NonNull(v), true);
                }
            });
        }
        for &inst in &self.f.blocks[b.index()].insts {
            if self.s.tests_asked {
                if let Some((x, ne)) = null_test(self.f, &self.f.inst(inst).kind) {
                    let x = self.root(x);
                    if self.s.wanted[x.index()] && self.known(Checked::NonNull(x)).is_some() {
                        self.s.null_tests.push((inst, ne));
                    }
                    continue;
                }
            }
            if is_check(inst) {
                if let Some(fact) = checked_by(&self.f.inst(inst).kind) {
                    let fact = self.rooted(fact);
                    if let Some(from_edge) = self.known(fact) {
                        self.s.from_branches += usize::from(from_edge);
                        if matches!(fact, Checked::NonNull(x) if self.s.phi_facts[x.index()]) {
                            self.s.by_phis.push(inst);
                        }
                        out.push(inst);
                        continue;
                    }
                }
            }
            self.learn(inst);
        }
    }
}

/// The checks of `f` (the instructions `is_check` selects, each checking
/// what [`checked_by`] says and doing nothing else) that are redundant: what
/// they check is known where they stand (see the module header). Removing
/// all of them at once is sound. Unreachable blocks are not visited. Linear
/// in the function's size; `scratch` is reused storage.
///
/// With `null_tests`, it also finds the null tests of `f` whose reference
/// is known non-null where they stand ([`Scratch::null_tests`]): the
/// reference was accessed, checked or allocated on every way there, or a
/// branch edge says so. Replacing each by its value is sound, as is
/// removing the checks (neither changes what the other knows).
pub fn redundant_checks(
    m: &Module,
    f: &Function,
    is_check: impl Fn(Inst) -> bool,
    null_tests: bool,
    scratch: &mut Scratch,
) -> Vec<Inst> {
    let mut out = Vec::new();
    scratch.from_branches = 0;
    scratch.tests_asked = null_tests;
    scratch.null_tests.clear();
    scratch.by_phis.clear();
    if f.layout.is_empty() || !worth_a_walk(m, f, &is_check, scratch) {
        return out;
    }
    scratch.facts.truncate(Mark::default());
    let entry = f.entry();
    if f.layout.len() == 1 {
        let mut k = Known {
            m,
            f,
            cfg: None,
            s: scratch,
        };
        k.block(entry, &is_check, &mut out);
        return out;
    }
    crate::analyses::with_analyses(f, |a| {
        let dom = a.dom(f);
        let mut stack = std::mem::take(&mut scratch.stack);
        stack.clear();
        let mut k = Known {
            m,
            f,
            cfg: Some(a.cfg()),
            s: scratch,
        };
        // Depth-first over the dominator tree, facts undone on the way back.
        k.block(entry, &is_check, &mut out);
        stack.push((entry, Mark::default(), 0));
        while let Some(top) = stack.last_mut() {
            let (b, _, next) = *top;
            match dom.children(b).get(next).copied() {
                Some(c) => {
                    top.2 += 1;
                    let mark = k.s.facts.mark();
                    k.block(c, &is_check, &mut out);
                    stack.push((c, mark, 0));
                }
                None => {
                    let (_, mark, _) = stack.pop().expect("non-empty");
                    k.s.facts.truncate(mark);
                }
            }
        }
        scratch.stack = stack;
    });
    out
}

/// Whether some check may be redundant: its base (as copy root) is
/// allocated or checked by another instruction too. Marks the wanted bases
/// on the way (linear, no hashing): most functions need no walk at all.
fn worth_a_walk(
    m: &Module,
    f: &Function,
    is_check: &impl Fn(Inst) -> bool,
    s: &mut Scratch,
) -> bool {
    s.roots.recompute(f);
    let n = f.values.len();
    s.wanted.clear();
    s.wanted.resize(n, false);
    s.checkers.clear();
    s.checkers.resize(n, 0);
    s.tested.clear();
    if s.tests_asked {
        s.tested.resize(n, 0);
    }
    for inst in f.inst_iter() {
        let kind = &f.inst(inst).kind;
        if s.tests_asked {
            if let Some((x, _)) = null_test(f, kind) {
                let x = s.roots.root(f, x).index();
                s.tested[x] |= 1;
                s.wanted[x] = true;
                continue;
            }
        }
        match *kind {
            // A null test teaches its reference on one edge (not in a
            // function of one block, which has no `br`); so do the null
            // tests `and`ed into one.
            InstKind::Br(c, ..) => implied_facts(f, c, true, IMPLIED_DEPTH, &mut |v, _| {
                let bounds = in_bounds_by(f, v, true).or_else(|| in_bounds_by(f, v, false));
                if let Some((a, _)) = bounds {
                    let a = s.roots.root(f, a).index();
                    s.checkers[a] = s.checkers[a].saturating_add(1).min(2);
                }
                if f.value_type(v).is_ref() {
                    let b = s.roots.root(f, v).index();
                    s.checkers[b] = s.checkers[b].saturating_add(1).min(2);
                }
            }),
            _ => {
                if let Some(base) = checked_by(kind).map(Checked::base) {
                    let b = s.roots.root(f, base).index();
                    s.checkers[b] = s.checkers[b].saturating_add(1).min(2);
                    s.wanted[b] |= is_check(inst);
                    if let Some(t) = s.tested.get_mut(b) {
                        *t |= 2;
                    }
                }
            }
        }
    }
    s.phi_facts.clear();
    s.phi_facts.resize(n, false);
    s.phis_asked = want_phi_entries(m, f, s);
    s.phis_asked
        || (0..n).any(|v| {
            s.wanted[v]
                && (s.checkers[v] >= 2
                    || s.tested.get(v) == Some(&3)
                    || allocated(m, f, Value::new(v)))
        })
}

/// Whether some wanted phi of references may be found non-null
/// ([`Known::phi_non_null`]): each entry is the phi itself, allocated, or
/// a value some branch or access checks. Marks those entries wanted (one
/// level of phis), so that the walk records what it learns about them.
fn want_phi_entries(m: &Module, f: &Function, s: &mut Scratch) -> bool {
    let mut any = false;
    for &b in &f.layout {
        for &i in &f.blocks[b.index()].insts {
            let InstKind::Phi(entries) = &f.inst(i).kind else {
                break;
            };
            let Some(me) = f.inst(i).result.map(|v| s.roots.root(f, v)) else {
                continue;
            };
            if !f.value_type(me).is_ref() || !s.wanted[me.index()] {
                continue;
            }
            let may = entries.iter().all(|&(_, v)| {
                let v = s.roots.root(f, v);
                v == me || s.checkers[v.index()] >= 1 || allocated(m, f, v)
            });
            if may {
                for &(_, v) in entries {
                    let v = s.roots.root(f, v);
                    s.wanted[v.index()] = true;
                }
                any = true;
            }
        }
    }
    any
}

/// Whether `v` is the result of an allocation (asked of `ir::effects`).
fn allocated(m: &Module, f: &Function, v: Value) -> bool {
    f.def_inst(v)
        .is_some_and(|d| inst_effects(m, f, d).allocates)
}
