//! Values of loop phis by optimistic propagation (run by `dce`, issue 13;
//! LLVM's SCCP and correlated value propagation find the same).
//!
//! A sparse conditional propagation over the SSA graph of a function with a
//! loop: every integer or reference value gets an abstract value, a signed
//! range `lo..=hi` and known bits (a reference is `0` when null: `null` is
//! `0..=0`, a reference known non-null `1..=MAX`, any reference `0..=MAX`).
//! It starts optimistic: no block but the entry is reachable and no value
//! computed; only reachable blocks are evaluated, only the edges of a `br`
//! its condition allows become reachable, a phi joins the values on its
//! reachable edges only, and a `guard` whose condition is known zero ends
//! its block there (it traps; nothing after it runs). Where a value is used,
//! what the branch edges that dominate the use teach about it narrows it
//! (`slt %i, 3` taken: `%i <= 2`; `ne %i, 12345` taken: not 12345; `ne %p,
//! null` taken: non-null), and so does an access of a reference in a block
//! strictly dominating the use (it would have trapped on null); a phi's
//! entry is narrowed by the condition of the branch on its edge as well. So
//! `i = phi [0, i + 1]` with back edge only while `i + 1 < 2` stays in
//! `0..=1`, and `i = phi [0, i + 2]` keeps its lowest bit known zero.
//!
//! Then each `br` whose block is reached but only one of whose edges is
//! (`dce.optimistic_branches`) becomes a `jmp` (the other edge's phi entries
//! go), and each operand whose value is one constant wherever it is
//! computed reads that constant (`dce.optimistic_constants`): a loop exit
//! never taken, a guard certain to fail (then cut by
//! [`crate::certain_traps`]), a loop body never entered.
//!
//! Why this is sound: the result is a fixed point — every reachable block's
//! instructions have values containing what their operation gives on any
//! operands in the operands' (narrowed) values, and every edge its
//! terminator can take on such a condition is reachable. By induction on the
//! steps of any run (up to its end or its trap): every block it enters is
//! reachable, every edge it takes is, and every value it computes lies in
//! that value's abstract value (a narrowing fact holds wherever it is
//! applied: SSA values never change, and the block where it was learnt —
//! an edge's only target, or a block whose access of the reference did not
//! trap — dominates the use). So a `br` never takes an unreachable edge, and
//! a value that is one constant in every run equals it: the rewritten
//! function does exactly what the original did, step for step (fuel too: a
//! `br` and a `jmp` both cost one).
//!
//! Cost: only functions with a loop (a retreating edge); a phi of more than
//! [`MAX_PHI_ENTRIES`] entries is taken to be any value. One walk builds the
//! use lists and the narrowing facts (at most [`MAX_FACTS`] per value);
//! then each value changes at most [`GIVE_UP_AFTER`] times (joins only grow
//! it; a phi that changed [`WIDEN_AFTER`] times is widened to the next bound
//! its facts name, or to the type's full range), and each change evaluates
//! its users once, each asking one O(1) dominance question per fact of each
//! operand. Linear in the function's size.

use crate::certain_traps::drop_phi_entries;
use crate::edge_facts::{implied_facts, IMPLIED_DEPTH};
use crate::edge_values::{compared_with_constant, range_where};
use crate::stats::Stats;
use ir::effects::{checked_by, Checked};
use ir::{BinOp, Block, Cfg, DomTree, Function, Inst, InstKind, UnOp, Value, ValueDef};
use smallvec::SmallVec;
use std::cell::RefCell;
use std::collections::VecDeque;

/// Narrowing facts kept per value (further ones are not used).
const MAX_FACTS: usize = 6;

/// Phis with more entries are taken to be any value of their type (each
/// change of an entry evaluates the whole phi again: this keeps it linear).
const MAX_PHI_ENTRIES: usize = 32;

/// Changes of a phi after which each further one is widened.
const WIDEN_AFTER: u8 = 2;

/// Changes of a value after which it is given its type's full range.
const GIVE_UP_AFTER: u8 = 10;

/// The sign bit.
const SIGN: u64 = 1 << 63;

/// An abstract value: every value in `lo..=hi` whose bits in `zeros` are 0
/// and in `ones` are 1.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Abs {
    lo: i64,
    hi: i64,
    zeros: u64,
    ones: u64,
}

impl Abs {
    /// Any integer.
    const FULL: Abs = Abs::range(i64::MIN, i64::MAX);
    /// Any reference.
    const ANY_REF: Abs = Abs::range(0, i64::MAX);
    /// A reference known non-null.
    const NON_NULL: Abs = Abs::range(1, i64::MAX);
    /// A comparison's result.
    const BOOL: Abs = Abs::range(0, 1);

    /// Every value in `lo..=hi`.
    const fn range(lo: i64, hi: i64) -> Abs {
        Abs {
            lo,
            hi,
            zeros: 0,
            ones: 0,
        }
    }

    /// The one value `k`.
    fn exact(k: i64) -> Abs {
        Abs {
            lo: k,
            hi: k,
            zeros: !(k as u64),
            ones: k as u64,
        }
    }

    /// The full value of a type: any reference or any integer.
    fn full(is_ref: bool) -> Abs {
        if is_ref {
            Abs::ANY_REF
        } else {
            Abs::FULL
        }
    }

    /// The constant this is, if one.
    fn constant(self) -> Option<i64> {
        (self.lo == self.hi).then_some(self.lo)
    }

    /// Whether 0 (null) is among the values.
    fn may_be_zero(self) -> bool {
        self.lo <= 0 && 0 <= self.hi && self.ones == 0
    }

    /// Whether some non-zero value is among them.
    fn may_be_nonzero(self) -> bool {
        self.constant() != Some(0)
    }

    /// The values of both (`None`: none).
    fn meet(self, o: Abs) -> Option<Abs> {
        Abs {
            lo: self.lo.max(o.lo),
            hi: self.hi.min(o.hi),
            zeros: self.zeros | o.zeros,
            ones: self.ones | o.ones,
        }
        .normalized()
    }

    /// The values of either.
    fn join(self, o: Abs) -> Abs {
        Abs {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
            zeros: self.zeros & o.zeros,
            ones: self.ones & o.ones,
        }
    }

    /// The same values with the range tightened by the known bits and the
    /// bits a range within one sign shares added (`None`: no value).
    fn normalized(mut self) -> Option<Abs> {
        if self.zeros & self.ones != 0 {
            return None;
        }
        let unknown = !(self.zeros | self.ones);
        self.lo = self.lo.max((self.ones | (unknown & SIGN)) as i64);
        self.hi = self.hi.min((self.ones | (unknown & !SIGN)) as i64);
        if self.lo > self.hi {
            return None;
        }
        if (self.lo < 0) == (self.hi < 0) {
            let diff = (self.lo ^ self.hi) as u64;
            let shared = !(u64::MAX.checked_shr(diff.leading_zeros()).unwrap_or(0));
            self.zeros |= !(self.lo as u64) & shared;
            self.ones |= (self.lo as u64) & shared;
        }
        (self.zeros & self.ones == 0).then_some(self)
    }

    /// The range in the unsigned order, when it is one range there.
    fn unsigned(self) -> (u64, u64) {
        if (self.lo < 0) == (self.hi < 0) {
            (self.lo as u64, self.hi as u64)
        } else {
            (0, u64::MAX)
        }
    }
}

/// What a value is known to be somewhere.
#[derive(Clone, Copy, Debug)]
enum Fact {
    /// Within `lo..=hi`.
    Range(i64, i64),
    /// Not this constant (`Not(0)`: non-zero, non-null).
    Not(i64),
}

impl Fact {
    /// `a` narrowed by the fact (`None`: no value left).
    fn narrow(self, a: Abs) -> Option<Abs> {
        match self {
            Fact::Range(lo, hi) => a.meet(Abs::range(lo, hi)),
            Fact::Not(k) => {
                let mut a = a;
                if a.lo == k {
                    a.lo = a.lo.checked_add(1)?;
                }
                if a.hi == k {
                    a.hi = a.hi.checked_sub(1)?;
                }
                a.normalized()
            }
        }
    }

    /// The bounds a widened phi may stop at (around the fact's numbers).
    fn bounds(self) -> [i64; 4] {
        match self {
            Fact::Range(lo, hi) => [lo.saturating_sub(1), lo, hi, hi.saturating_add(1)],
            Fact::Not(k) => [k.saturating_sub(1), k, k, k.saturating_add(1)],
        }
    }
}

/// A fact and where it holds: in every block `at` dominates, or, for a
/// fact learnt from an access in `at` (`strict`), in every block `at`
/// strictly dominates and at the end of `at`.
#[derive(Clone, Copy, Debug)]
struct Held {
    at: Block,
    strict: bool,
    fact: Fact,
}

/// Which uses the facts apply to.
#[derive(Clone, Copy)]
enum UseAt {
    /// An instruction of this block (not a phi).
    Block(Block),
    /// The end of this block (a phi's entry for it).
    End(Block),
}

/// Storage reused from function to function.
#[derive(Default)]
struct Scratch {
    /// Per value: its abstract value (`None`: not computed yet).
    vals: Vec<Option<Abs>>,
    /// Per value: how often it changed.
    changes: Vec<u8>,
    /// Per block: whether it is reachable.
    reached: Vec<bool>,
    /// Per block: which successor slots of its terminator are reachable.
    edges: Vec<u8>,
    /// Per block: the position of the first instruction not known to run
    /// (a guard not known to pass; the block's length if none).
    cut: Vec<u32>,
    /// Per instruction: its position in its block, and whether it waits in `work`.
    pos: Vec<u32>,
    queued: Vec<bool>,
    /// The instructions to evaluate.
    work: VecDeque<Inst>,
    /// Per value: where its users start in `users` (one more entry at the
    /// end: their number).
    user_start: Vec<u32>,
    users: Vec<Inst>,
    /// Per value: its facts.
    facts: Vec<SmallVec<[Held; 2]>>,
    /// Operands to replace: instruction, operand position, constant.
    found: Vec<(Inst, u32, i64)>,
    /// Branches to fold: block, kept target, dropped target.
    folds: Vec<(Block, Block, Block)>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Fold the branches and replace the values the optimistic propagation
/// decides (module header). Whether anything changed.
pub(crate) fn propagate_optimistic_values(func: &mut Function, stats: &mut Stats) -> bool {
    if func.layout.len() < 2 {
        return false;
    }
    crate::analyses::with_analyses_mut(func, |a, func| {
        if !a.cfg().has_retreating_edge() {
            return false;
        }
        SCRATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            {
                let mut e = Engine {
                    func,
                    cfg: a.cfg(),
                    dom: a.dom(func),
                    s: &mut *s,
                };
                e.setup();
                e.run();
                e.collect_edits();
            }
            apply(func, s, stats)
        })
    })
}

/// The propagation over one function.
struct Engine<'a> {
    func: &'a Function,
    cfg: &'a Cfg,
    dom: &'a DomTree,
    s: &'a mut Scratch,
}

/// Whether `v` is a value that may vary (an instruction's result or a parameter).
fn variable(func: &Function, v: Value) -> bool {
    matches!(func.value_def(v), ValueDef::Inst(_) | ValueDef::Param(_))
}

/// Call `f` with every (value, fact) that `c` being non-zero (`nonzero`) or
/// zero teaches.
fn edge_facts(func: &Function, c: Value, nonzero: bool, f: &mut impl FnMut(Value, Fact)) {
    implied_facts(func, c, nonzero, IMPLIED_DEPTH, &mut |v, nz| {
        if variable(func, v) {
            f(v, if nz { Fact::Not(0) } else { Fact::Range(0, 0) });
        }
        if let Some((x, op, k)) = compared_with_constant(func, v) {
            if !variable(func, x) {
                return;
            }
            if let Some((lo, hi)) = range_where(op, k, nz) {
                f(x, Fact::Range(lo, hi));
            } else if (op == BinOp::Ne) == nz && matches!(op, BinOp::Ne | BinOp::Eq) {
                f(x, Fact::Not(k));
            }
        }
    });
}

impl Engine<'_> {
    /// Size the storage, build the use lists and collect the facts.
    fn setup(&mut self) {
        let (func, s) = (self.func, &mut *self.s);
        let (nv, nb, ni) = (func.values.len(), func.blocks.len(), func.insts.len());
        reset(&mut s.vals, nv, None);
        reset(&mut s.changes, nv, 0);
        reset(&mut s.reached, nb, false);
        reset(&mut s.edges, nb, 0);
        reset(&mut s.cut, nb, 0);
        reset(&mut s.pos, ni, 0);
        reset(&mut s.queued, ni, false);
        reset(&mut s.user_start, nv + 1, 0);
        s.facts.iter_mut().for_each(SmallVec::clear);
        s.facts.resize_with(nv, SmallVec::new);
        s.work.clear();
        s.users.clear();
        for &b in &func.layout {
            for (k, &i) in func.blocks[b.index()].insts.iter().enumerate() {
                s.pos[i.index()] = k as u32;
                let kind = &func.inst(i).kind;
                if let (Some(r), Some(a)) = (func.inst(i).result, opaque(kind)) {
                    let is_ref = func.value_type(r).is_ref();
                    s.vals[r.index()] = Some(if is_ref {
                        Abs::ANY_REF.meet(a).unwrap_or(a)
                    } else {
                        a
                    });
                }
                if evaluated(kind) {
                    kind.for_each_operand(|v| {
                        if func.def_inst(v).is_some() {
                            s.user_start[v.index()] += 1;
                        }
                    });
                }
                if let Some(Checked::NonNull(r) | Checked::InBounds(r, _)) =
                    checked_by(&func.inst(i).kind)
                {
                    add_fact(func, s, r, b, true, Fact::Not(0));
                }
            }
        }
        for v in 1..=nv {
            s.user_start[v] += s.user_start[v - 1];
        }
        s.users.resize(s.user_start[nv] as usize, Inst::new(0));
        // Filled from the back: each value's count ends at its start.
        for &b in func.layout.iter().rev() {
            for &i in func.blocks[b.index()].insts.iter().rev() {
                if !evaluated(&func.inst(i).kind) {
                    continue;
                }
                func.inst(i).kind.for_each_operand(|v| {
                    if func.def_inst(v).is_some() {
                        let end = &mut s.user_start[v.index()];
                        *end -= 1;
                        s.users[*end as usize] = i;
                    }
                });
            }
        }
        for &b in &func.layout {
            self.collect_edge_facts(b);
        }
    }

    /// Add the facts the edges of `b`'s `br` teach in the targets they
    /// enter alone.
    fn collect_edge_facts(&mut self, b: Block) {
        let func = self.func;
        let Some(term) = func.terminator(b) else {
            return;
        };
        let InstKind::Br(c, x, y) = func.inst(term).kind else {
            return;
        };
        if x == y {
            return;
        }
        for (t, nonzero) in [(x, true), (y, false)] {
            if t == b || self.cfg.preds(t) != [b] {
                continue;
            }
            edge_facts(func, c, nonzero, &mut |v, fact| {
                add_fact(func, self.s, v, t, false, fact);
            });
        }
    }

    /// Propagate from the entry until nothing changes.
    fn run(&mut self) {
        self.reach(self.func.entry());
        while let Some(i) = self.s.work.pop_front() {
            self.s.queued[i.index()] = false;
            self.eval(i);
        }
    }

    /// Queue `i` for evaluation.
    fn push(&mut self, i: Inst) {
        if !self.s.queued[i.index()] {
            self.s.queued[i.index()] = true;
            self.s.work.push_back(i);
        }
    }

    /// Block `b` became reachable: queue its instructions up to the first
    /// guard not known to pass.
    fn reach(&mut self, b: Block) {
        self.s.reached[b.index()] = true;
        self.open_from(b, 0);
    }

    /// Queue the instructions of `b` from position `from` up to and with
    /// the first guard not known to pass, which becomes its cut.
    fn open_from(&mut self, b: Block, from: usize) {
        let insts = &self.func.blocks[b.index()].insts;
        let mut cut = insts.len();
        for (k, &i) in insts.iter().enumerate().skip(from) {
            if evaluated(&self.func.inst(i).kind) {
                self.push(i);
            }
            if let InstKind::Guard(c) = self.func.inst(i).kind {
                if self
                    .at(c, UseAt::Block(b))
                    .is_none_or(|a| !a.may_be_nonzero())
                {
                    cut = k;
                    break;
                }
            }
        }
        self.s.cut[b.index()] = cut as u32;
    }

    /// Make the successor slot `slot` of `b` (target `t`) reachable.
    fn take_edge(&mut self, b: Block, slot: u8, t: Block) {
        let edges = &mut self.s.edges[b.index()];
        if *edges & (1 << slot) != 0 {
            return;
        }
        *edges |= 1 << slot;
        if !self.s.reached[t.index()] {
            self.reach(t);
            return;
        }
        for &i in &self.func.blocks[t.index()].insts {
            if !self.func.inst(i).kind.is_phi() {
                break;
            }
            self.push(i);
        }
    }

    /// The abstract value of `v` wherever it is computed (`None`: not yet).
    fn get(&self, v: Value) -> Option<Abs> {
        match self.func.value_def(v) {
            ValueDef::Const(k) => Some(Abs::exact(k)),
            ValueDef::Null => Some(Abs::exact(0)),
            ValueDef::Param(_) => Some(Abs::full(self.func.value_type(v).is_ref())),
            ValueDef::Inst(_) => self.s.vals[v.index()],
        }
    }

    /// The abstract value of `v` at a use, narrowed by the facts that hold
    /// there (`None`: not computed yet, or no value possible there).
    fn at(&self, v: Value, at: UseAt) -> Option<Abs> {
        let mut a = self.get(v)?;
        for h in &self.s.facts[v.index()] {
            let holds = match at {
                UseAt::Block(b) if h.strict => self.dom.strictly_dominates(h.at, b),
                UseAt::Block(b) | UseAt::End(b) => self.dom.dominates(h.at, b),
            };
            if holds {
                a = h.fact.narrow(a)?;
            }
        }
        Some(a)
    }

    /// Evaluate instruction `i` (if it runs at all).
    fn eval(&mut self, i: Inst) {
        let func = self.func;
        let data = func.inst(i);
        let Some(b) = data.block else {
            return;
        };
        let k = self.s.pos[i.index()];
        if !self.s.reached[b.index()] || k > self.s.cut[b.index()] {
            return;
        }
        let here = UseAt::Block(b);
        let new = match &data.kind {
            InstKind::Guard(c) => {
                let passes = self.at(*c, here).is_some_and(Abs::may_be_nonzero);
                if passes && k == self.s.cut[b.index()] {
                    self.open_from(b, k as usize + 1);
                }
                return;
            }
            InstKind::Jmp(t) => return self.take_edge(b, 0, *t),
            InstKind::Br(c, x, y) => {
                if let Some(a) = self.at(*c, here) {
                    if a.may_be_nonzero() {
                        self.take_edge(b, 0, *x);
                    }
                    if a.may_be_zero() {
                        self.take_edge(b, 1, *y);
                    }
                }
                return;
            }
            InstKind::Phi(entries) => self.phi(b, entries),
            kind => self.transfer(kind, here),
        };
        let (Some(r), Some(new)) = (data.result, new) else {
            return;
        };
        self.update(r, new, data.kind.is_phi());
    }

    /// The join of a phi's entries on reachable edges, each narrowed there.
    fn phi(&self, h: Block, entries: &[(Block, Value)]) -> Option<Abs> {
        if entries.len() > MAX_PHI_ENTRIES {
            return entries
                .first()
                .map(|&(_, v)| Abs::full(self.func.value_type(v).is_ref()));
        }
        let mut out: Option<Abs> = None;
        for &(q, v) in entries {
            if !self.edge_reached(q, h) {
                continue;
            }
            let Some(mut a) = self.at(v, UseAt::End(q)) else {
                continue;
            };
            if let Some((c, nonzero)) = self.edge_condition(q, h) {
                let mut narrowed = Some(a);
                edge_facts(self.func, c, nonzero, &mut |x, fact| {
                    if x == v {
                        narrowed = narrowed.and_then(|a| fact.narrow(a));
                    }
                });
                let Some(n) = narrowed else {
                    continue;
                };
                a = n;
            }
            out = Some(out.map_or(a, |o| o.join(a)));
        }
        out
    }

    /// Whether an edge `q -> h` is reachable.
    fn edge_reached(&self, q: Block, h: Block) -> bool {
        if !self.s.reached[q.index()] {
            return false;
        }
        let edges = self.s.edges[q.index()];
        let Some(term) = self.func.terminator(q) else {
            return false;
        };
        self.func
            .inst(term)
            .kind
            .successors()
            .enumerate()
            .any(|(slot, t)| t == h && edges & (1 << slot) != 0)
    }

    /// The condition of `q`'s `br` and its value on the edge to `h`, when
    /// its two targets differ.
    fn edge_condition(&self, q: Block, h: Block) -> Option<(Value, bool)> {
        let term = self.func.terminator(q)?;
        match self.func.inst(term).kind {
            InstKind::Br(c, x, y) if x != y => Some((c, x == h)),
            _ => None,
        }
    }

    /// The abstract result of a non-phi instruction (`None`: an operand
    /// not computed yet).
    fn transfer(&self, kind: &InstKind, here: UseAt) -> Option<Abs> {
        Some(match *kind {
            InstKind::Binary(op, a, b) => binary(op, self.at(a, here)?, self.at(b, here)?),
            InstKind::Unary(op, a) => unary(op, self.at(a, here)?),
            InstKind::Select(c, a, b) => {
                let c = self.at(c, here)?;
                match (c.may_be_nonzero(), c.may_be_zero()) {
                    (true, false) => self.at(a, here)?,
                    (false, true) => self.at(b, here)?,
                    _ => self.at(a, here)?.join(self.at(b, here)?),
                }
            }
            _ => Abs::FULL,
        })
    }

    /// Join `new` into the value of `v`, widened or given up on after many
    /// changes; queue its users when it changed.
    fn update(&mut self, v: Value, new: Abs, is_phi: bool) {
        let is_ref = self.func.value_type(v).is_ref();
        let new = if is_ref {
            new.meet(Abs::ANY_REF).unwrap_or(new)
        } else {
            new
        };
        let old = self.s.vals[v.index()];
        let mut n = old.map_or(new, |o| o.join(new));
        if old == Some(n) {
            return;
        }
        let changes = &mut self.s.changes[v.index()];
        *changes = changes.saturating_add(1);
        let changes = *changes;
        if let Some(o) = old.filter(|_| is_phi && changes > WIDEN_AFTER) {
            n = self.widen(v, o, n);
        }
        if changes > GIVE_UP_AFTER {
            n = Abs::full(is_ref);
        }
        let n = n.normalized().unwrap_or(Abs::full(is_ref));
        if old == Some(n) {
            return;
        }
        self.s.vals[v.index()] = Some(n);
        let (start, end) = (
            self.s.user_start[v.index()] as usize,
            self.s.user_start[v.index() + 1] as usize,
        );
        for k in start..end {
            let u = self.s.users[k];
            self.push(u);
        }
    }

    /// `n` (which contains `old`) widened: a bound that moved goes to the
    /// nearest bound named by a fact about phi `v` or its entries, else to
    /// the type's end; known bits at and above the lowest one lost go.
    fn widen(&self, v: Value, old: Abs, mut n: Abs) -> Abs {
        let mut bounds: SmallVec<[i64; 16]> = SmallVec::new();
        let mut add = |x: Value| {
            for h in &self.s.facts[x.index()] {
                bounds.extend(h.fact.bounds());
            }
        };
        add(v);
        if let Some(InstKind::Phi(entries)) = self.func.def_inst(v).map(|d| &self.func.inst(d).kind)
        {
            for &(_, e) in entries {
                if variable(self.func, e) {
                    add(e);
                }
            }
        }
        if n.lo < old.lo {
            n.lo = bounds
                .iter()
                .copied()
                .filter(|&b| b <= n.lo)
                .max()
                .unwrap_or(i64::MIN);
        }
        if n.hi > old.hi {
            n.hi = bounds
                .iter()
                .copied()
                .filter(|&b| b >= n.hi)
                .min()
                .unwrap_or(i64::MAX);
        }
        let lost = (old.zeros | old.ones) & !(n.zeros | n.ones);
        if lost != 0 {
            let keep = (1u64 << lost.trailing_zeros()) - 1;
            n.zeros &= keep;
            n.ones &= keep;
        }
        n
    }

    /// Record the branches to fold and the operands to replace.
    fn collect_edits(&mut self) {
        let func = self.func;
        self.s.found.clear();
        self.s.folds.clear();
        for &b in &func.layout {
            if !self.s.reached[b.index()] {
                continue;
            }
            let insts = &func.blocks[b.index()].insts;
            let cut = self.s.cut[b.index()] as usize;
            for &i in insts.iter().take(cut + 1) {
                let kind = &func.inst(i).kind;
                if let InstKind::Br(_, x, y) = *kind {
                    match self.s.edges[b.index()] {
                        1 if x != y => self.s.folds.push((b, x, y)),
                        2 if x != y => self.s.folds.push((b, y, x)),
                        _ => {}
                    }
                    continue;
                }
                let mut pos = 0;
                kind.for_each_operand(|v| {
                    if let Some(k) = self.replacement(v) {
                        self.s.found.push((i, pos, k));
                    }
                    pos += 1;
                });
            }
        }
    }

    /// The constant an operand `v` may read instead: an instruction's
    /// result whose abstract value is one number (a reference's only `0`,
    /// null).
    fn replacement(&self, v: Value) -> Option<i64> {
        self.func.def_inst(v)?;
        let k = self.s.vals[v.index()]?.constant()?;
        (!self.func.value_type(v).is_ref() || k == 0).then_some(k)
    }
}

/// Whether the propagation evaluates instructions of this kind: those
/// whose result depends on their operands' values, guards and branches
/// (the others' results are [`opaque`], or they have none).
fn evaluated(kind: &InstKind) -> bool {
    matches!(
        kind,
        InstKind::Binary(..)
            | InstKind::Unary(..)
            | InstKind::Select(..)
            | InstKind::Phi(_)
            | InstKind::Guard(_)
            | InstKind::Jmp(_)
            | InstKind::Br(..)
    )
}

/// The value of an instruction's result that no operand's value refines
/// (a fresh object is non-null, a length not negative; a load or call
/// result is anything). Set before the propagation starts: such a result
/// is only used where its instruction ran (SSA dominance).
fn opaque(kind: &InstKind) -> Option<Abs> {
    match kind {
        InstKind::New(_) | InstKind::NewArray { .. } => Some(Abs::NON_NULL),
        InstKind::Len(_) => Some(Abs::range(0, i64::MAX)),
        _ if evaluated(kind) => None,
        _ => Some(Abs::FULL),
    }
}

/// Add a fact about `v` held in `at` (at most [`MAX_FACTS`] per value).
fn add_fact(func: &Function, s: &mut Scratch, v: Value, at: Block, strict: bool, fact: Fact) {
    if !variable(func, v) {
        return;
    }
    let facts = &mut s.facts[v.index()];
    if facts.len() < MAX_FACTS {
        facts.push(Held { at, strict, fact });
    }
}

/// Make `v` `n` entries of `x`.
fn reset<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

/// The abstract result of `op a, b`.
fn binary(op: BinOp, a: Abs, b: Abs) -> Abs {
    if let (Some(x), Some(y)) = (a.constant(), b.constant()) {
        return op.eval(x, y).map_or(Abs::FULL, Abs::exact);
    }
    if let Some(d) = compare(op, a, b) {
        return d.map_or(Abs::BOOL, |d| Abs::exact(i64::from(d)));
    }
    let range = |lo: Option<i64>, hi: Option<i64>| match (lo, hi) {
        (Some(lo), Some(hi)) => Abs::range(lo, hi),
        _ => Abs::FULL,
    };
    match op {
        BinOp::Add => with_bits(
            range(a.lo.checked_add(b.lo), a.hi.checked_add(b.hi)),
            add_bits((a.zeros, a.ones), (b.zeros, b.ones), false),
        ),
        BinOp::Sub => with_bits(
            range(a.lo.checked_sub(b.hi), a.hi.checked_sub(b.lo)),
            add_bits((a.zeros, a.ones), (b.ones, b.zeros), true),
        ),
        BinOp::Mul => {
            let corners = [
                a.lo.checked_mul(b.lo),
                a.lo.checked_mul(b.hi),
                a.hi.checked_mul(b.lo),
                a.hi.checked_mul(b.hi),
            ];
            let r = if corners.iter().all(Option::is_some) {
                let c = corners.map(Option::unwrap_or_default);
                Abs::range(*c.iter().min().unwrap_or(&0), *c.iter().max().unwrap_or(&0))
            } else {
                Abs::FULL
            };
            let tz = (a.zeros.trailing_ones() + b.zeros.trailing_ones()).min(64);
            with_bits(r, (u64::MAX.checked_shr(64 - tz).unwrap_or(0), 0))
        }
        BinOp::And => {
            let mut r = Abs::FULL;
            for x in [a, b] {
                if x.lo >= 0 {
                    r = Abs::range(0, r.hi.min(x.hi));
                }
            }
            with_bits(r, (a.zeros | b.zeros, a.ones & b.ones))
        }
        BinOp::Or => with_bits(Abs::FULL, (a.zeros & b.zeros, a.ones | b.ones)),
        BinOp::Xor => with_bits(
            Abs::FULL,
            (
                (a.zeros & b.zeros) | (a.ones & b.ones),
                (a.zeros & b.ones) | (a.ones & b.zeros),
            ),
        ),
        BinOp::Shl | BinOp::Lshr | BinOp::Ashr => match b.constant() {
            Some(s) => shift(op, a, (s & 63) as u32),
            None => Abs::FULL,
        },
        _ => Abs::FULL,
    }
}

/// `r` with known bits `(zeros, ones)`.
fn with_bits(r: Abs, (zeros, ones): (u64, u64)) -> Abs {
    Abs { zeros, ones, ..r }
}

/// The known bits of `a + b + carry` (LLVM's `computeForAddCarry`): a sum
/// bit is known where both operands' bits and the carry into it are.
fn add_bits(a: (u64, u64), b: (u64, u64), carry: bool) -> (u64, u64) {
    let ((az, ao), (bz, bo)) = (a, b);
    let c = u64::from(carry);
    let sum_max = (!az).wrapping_add(!bz).wrapping_add(c);
    let sum_min = ao.wrapping_add(bo).wrapping_add(c);
    let carry_zero = !(sum_max ^ az ^ bz);
    let carry_one = sum_min ^ ao ^ bo;
    let known = (az | ao) & (bz | bo) & (carry_zero | carry_one);
    (!sum_max & known, sum_min & known)
}

/// `a` shifted by the constant `s` (below 64).
fn shift(op: BinOp, a: Abs, s: u32) -> Abs {
    let low = (1u64 << s) - 1;
    match op {
        BinOp::Shl => with_bits(Abs::FULL, ((a.zeros << s) | low, a.ones << s)),
        BinOp::Lshr => {
            let r = if a.lo >= 0 {
                Abs::range(a.lo >> s, a.hi >> s)
            } else {
                Abs::FULL
            };
            with_bits(r, ((a.zeros >> s) | !(u64::MAX >> s), a.ones >> s))
        }
        _ => with_bits(
            Abs::range(a.lo >> s, a.hi >> s),
            (
                ((a.zeros as i64) >> s) as u64,
                ((a.ones as i64) >> s) as u64,
            ),
        ),
    }
}

/// The abstract result of `op a`.
fn unary(op: UnOp, a: Abs) -> Abs {
    if let Some(x) = a.constant() {
        return Abs::exact(op.eval(x));
    }
    match op {
        UnOp::Copy => a,
        UnOp::Not => Abs {
            lo: !a.hi,
            hi: !a.lo,
            zeros: a.ones,
            ones: a.zeros,
        },
        UnOp::Neg => match (a.hi.checked_neg(), a.lo.checked_neg()) {
            (Some(lo), Some(hi)) => Abs::range(lo, hi),
            _ => Abs::FULL,
        },
    }
}

/// For a comparison: `Some(Some(result))` when the values decide it,
/// `Some(None)` when they do not; `None` for another operation.
fn compare(op: BinOp, a: Abs, b: Abs) -> Option<Option<bool>> {
    let ordered = |lt: bool, ge: bool| {
        if lt {
            Some(true)
        } else if ge {
            Some(false)
        } else {
            None
        }
    };
    let (ua, ub) = (a.unsigned(), b.unsigned());
    Some(match op {
        BinOp::Eq | BinOp::Ne => {
            let differ = a.hi < b.lo || b.hi < a.lo || (a.ones & b.zeros) | (a.zeros & b.ones) != 0;
            differ.then_some(op == BinOp::Ne)
        }
        BinOp::Slt => ordered(a.hi < b.lo, a.lo >= b.hi),
        BinOp::Sle => ordered(a.hi <= b.lo, a.lo > b.hi),
        BinOp::Sgt => ordered(b.hi < a.lo, b.lo >= a.hi),
        BinOp::Sge => ordered(b.hi <= a.lo, b.lo > a.hi),
        BinOp::Ult => ordered(ua.1 < ub.0, ua.0 >= ub.1),
        BinOp::Ule => ordered(ua.1 <= ub.0, ua.0 > ub.1),
        BinOp::Ugt => ordered(ub.1 < ua.0, ub.0 >= ua.1),
        BinOp::Uge => ordered(ub.1 <= ua.0, ub.0 > ua.1),
        _ => return None,
    })
}

/// Make the recorded edits; whether there were any.
fn apply(func: &mut Function, s: &Scratch, stats: &mut Stats) -> bool {
    // Operands first: an operand's position counts phi entries, which a
    // fold below drops (a phi `[b7: %v], [entry: %p]` losing its `b7`
    // entry would otherwise get `%v`'s constant in `%p`'s place).
    for &(i, pos, k) in &s.found {
        crate::edge_values::replace_operand_by_constant(func, i, pos, k, true);
    }
    for &(b, keep, drop) in &s.folds {
        let term = func.terminator(b).expect("a folded block ends in a br");
        func.insts[term.index()].kind = InstKind::Jmp(keep);
        drop_phi_entries(func, drop, b);
    }
    if !s.folds.is_empty() {
        stats.add("dce", "optimistic_branches", s.folds.len() as u64);
    }
    if !s.found.is_empty() {
        stats.add("dce", "optimistic_constants", s.found.len() as u64);
    }
    !(s.folds.is_empty() && s.found.is_empty())
}
