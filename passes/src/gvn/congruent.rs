//! Optimistic numbering of loop-header phis: two phis of one loop header
//! whose entries from outside the loop are the same values and whose
//! back-edge values are equal *assuming the phis are* (`i = phi(0, i + 1)`,
//! `j = phi(0, j + 1)`) are one value. The dominator walk alone never sees
//! this: it numbers a header's phis before the back-edge values they wait on.
//!
//! The partition starts optimistic (phis grouped by their entries from
//! outside the loop) and is refined until it is a fixpoint: each round
//! numbers every back-edge value by hash-consing the pure instructions
//! (per `ir::effects`) of the loop body that lead to it, reading each phi
//! of the header as its class. A fixpoint is an inductive proof: on entry
//! the classes hold (same values), and a back edge carries equal values
//! when they held on the previous entry. Only headers with two or more phis
//! are looked at, only what their back-edge values are computed from is
//! read, and each function has a budget proportional to its size (a header
//! that runs out is left alone), so the cost stays linear.

use super::key::{op_key, Key};
use super::NONE;
use ir::dom::DomTree;
use ir::effects::inst_effects;
use ir::{Block, Function, Inst, InstKind, Module, Value, ValueDef};
use rustc_hash::FxHashMap;

/// How many refinement rounds a header gets before it is left alone.
const MAX_ROUNDS: usize = 8;

/// Storage reused from header to header and run to run.
#[derive(Default)]
pub struct Congruence {
    /// The header's phis, in block order.
    phis: Vec<Inst>,
    /// The partition of the phis.
    parts: Partition,
    /// The header's phis by result value (to their position in `phis`).
    phi_of: DenseMap,
    /// One round's numbering: value to the value that stands for it.
    memo: DenseMap,
    /// One round's pure operations: key to the first value with it.
    exprs: FxHashMap<Key, Value>,
    /// The explicit stack of [`number`].
    stack: Vec<(Value, bool)>,
}

/// A partition of a header's phis by signature.
#[derive(Default)]
struct Partition {
    /// Per phi (by position): its class, the position of the class's first
    /// phi.
    class: Vec<u32>,
    /// The signatures, one after the other.
    sigs: Vec<u64>,
    /// Per phi: where its signature starts in `sigs` (one more: the end).
    starts: Vec<u32>,
    /// Phi positions, sorted by signature.
    order: Vec<u32>,
}

/// What [`Congruence::find`] may read of the walk.
pub struct Ctx<'a> {
    /// The module (for `ir::effects`).
    pub module: &'a Module,
    /// The function walked.
    pub func: &'a Function,
    /// Its dominator tree.
    pub dom: &'a DomTree,
    /// The walk's replacements so far ([`super::NONE`]: none).
    pub repl: &'a [u32],
}

impl Ctx<'_> {
    /// `v` as the walk's merges so far read it.
    fn read(&self, v: Value) -> Value {
        super::read(self.repl, v)
    }

    /// The placed pure instruction defining `v` inside the loop of `h`
    /// (blocks `h` dominates), not a phi.
    fn pure_def(&self, h: Block, v: Value) -> Option<Inst> {
        let ValueDef::Inst(i) = self.func.values.get(v.index())?.def else {
            return None;
        };
        let data = &self.func.insts[i.index()];
        let b = data.block?;
        if data.kind.is_phi() || !self.dom.dominates(h, b) {
            return None;
        }
        let eff = inst_effects(self.module, self.func, i);
        (eff.writes_nothing() && eff.reads_nothing() && !eff.allocates).then_some(i)
    }
}

impl Congruence {
    /// The phis of loop header `h` that are congruent to an earlier phi of
    /// `h`, each with that phi (its class's first), appended to `out`.
    /// Nothing when `h` is no loop header, has fewer than two phis, or the
    /// work would exceed `budget` (what is spent is taken off it).
    pub fn find(&mut self, cx: &Ctx, h: Block, budget: &mut usize, out: &mut Vec<(Inst, Inst)>) {
        let insts = &cx.func.blocks[h.index()].insts;
        let n = insts
            .iter()
            .take_while(|i| cx.func.insts[i.index()].kind.is_phi())
            .count();
        if n < 2 || *budget < n {
            return;
        }
        let is_back = |p: Block| cx.dom.dominates(h, p);
        let InstKind::Phi(first) = &cx.func.insts[insts[0].index()].kind else {
            return;
        };
        if !first.iter().any(|&(p, _)| is_back(p)) {
            return;
        }
        *budget -= n;
        let mut phis = std::mem::take(&mut self.phis);
        phis.clear();
        phis.extend_from_slice(&insts[..n]);
        let found = self.refine(cx, h, &phis, budget);
        if found {
            for (k, &c) in self.parts.class.iter().enumerate() {
                if c as usize != k {
                    out.push((phis[k], phis[c as usize]));
                }
            }
        }
        self.phis = phis;
    }

    /// Refine the partition of `phis` (the phis of `h`) to a fixpoint;
    /// false when there is none with a class of two or more within the
    /// rounds and the budget.
    fn refine(&mut self, cx: &Ctx, h: Block, phis: &[Inst], budget: &mut usize) -> bool {
        let n = phis.len();
        let is_back = |p: Block| cx.dom.dominates(h, p);
        // Round 0: the entries from outside the loop.
        let mut classes = self.parts.split(cx, phis, |_, entries, sig| {
            sig.extend(
                entries
                    .iter()
                    .filter(|&&(p, _)| !is_back(p))
                    .map(|&(p, v)| u64::from(p.0) << 32 | u64::from(cx.read(v).0)),
            );
        });
        if classes == n {
            return false;
        }
        self.phi_of.clear();
        for (k, &i) in phis.iter().enumerate() {
            if let Some(r) = cx.func.insts[i.index()].result {
                self.phi_of.insert(r, k as u32);
            }
        }
        for _ in 0..MAX_ROUNDS {
            self.memo.clear();
            self.exprs.clear();
            let prev = std::mem::take(&mut self.parts.class);
            let mut round = Round {
                cx,
                h,
                phis,
                phi_of: &self.phi_of,
                class: &prev,
                memo: &mut self.memo,
                exprs: &mut self.exprs,
                stack: &mut self.stack,
                budget,
            };
            let mut out_of_budget = false;
            let refined = self.parts.split(cx, phis, |k, entries, sig| {
                sig.push(u64::from(prev[k]));
                for &(p, v) in entries.iter().filter(|&&(p, _)| is_back(p)) {
                    match round.number(v) {
                        Some(num) => sig.push(u64::from(p.0) << 32 | u64::from(num.0)),
                        None => out_of_budget = true,
                    }
                }
            });
            if out_of_budget {
                return false;
            }
            if refined == classes {
                return true;
            }
            classes = refined;
            if classes == n {
                return false;
            }
        }
        false
    }
}

impl Partition {
    /// Group `phis` by the signature `sign` writes (sorted before
    /// comparing), set `class`, and return how many classes there are.
    fn split(
        &mut self,
        cx: &Ctx,
        phis: &[Inst],
        mut sign: impl FnMut(usize, &[(Block, Value)], &mut Vec<u64>),
    ) -> usize {
        self.sigs.clear();
        self.starts.clear();
        for (k, &i) in phis.iter().enumerate() {
            let InstKind::Phi(entries) = &cx.func.insts[i.index()].kind else {
                unreachable!("a header's leading instructions are phis");
            };
            let start = self.sigs.len();
            self.starts.push(start as u32);
            sign(k, entries, &mut self.sigs);
            self.sigs[start..].sort_unstable();
        }
        self.starts.push(self.sigs.len() as u32);
        let (sigs, starts) = (&self.sigs, &self.starts);
        let sig = |k: u32| &sigs[starts[k as usize] as usize..starts[k as usize + 1] as usize];
        self.order.clear();
        self.order.extend(0..phis.len() as u32);
        // Stable: the first phi of a class comes first.
        self.order.sort_by(|&a, &b| sig(a).cmp(sig(b)));
        self.class.clear();
        self.class.resize(phis.len(), 0);
        let mut classes = 0;
        let mut leader = 0;
        for (pos, &k) in self.order.iter().enumerate() {
            if pos == 0 || sig(self.order[pos - 1]) != sig(k) {
                leader = k;
                classes += 1;
            }
            self.class[k as usize] = leader;
        }
        classes
    }
}

/// One refinement round: numbers back-edge values with the header's phis
/// read as their classes (of the round before).
struct Round<'a, 'c> {
    cx: &'a Ctx<'c>,
    h: Block,
    phis: &'a [Inst],
    phi_of: &'a DenseMap,
    class: &'a [u32],
    memo: &'a mut DenseMap,
    exprs: &'a mut FxHashMap<Key, Value>,
    stack: &'a mut Vec<(Value, bool)>,
    budget: &'a mut usize,
}

impl Round<'_, '_> {
    /// The number of `v`: a header phi's class's first phi, the first value
    /// of a pure loop-body operation over numbered operands, or `v` itself
    /// (as the walk reads it). `None` when the budget runs out.
    fn number(&mut self, v: Value) -> Option<Value> {
        let cx = self.cx;
        let v = cx.read(v);
        self.stack.clear();
        self.stack.push((v, false));
        while let Some((v, expanded)) = self.stack.pop() {
            if self.memo.get(v).is_some() {
                continue;
            }
            let Some(i) = cx.pure_def(self.h, v) else {
                let num = match self.phi_of.get(v) {
                    Some(k) => {
                        let leader = self.phis[self.class[k as usize] as usize];
                        cx.func.insts[leader.index()].result.unwrap_or(v)
                    }
                    None => v,
                };
                self.memo.insert(v, num.0);
                continue;
            };
            let kind = &cx.func.insts[i.index()].kind;
            if !expanded {
                *self.budget = self.budget.checked_sub(1)?;
                self.stack.push((v, true));
                let (memo, stack) = (&*self.memo, &mut *self.stack);
                kind.for_each_operand(|o| {
                    let o = cx.read(o);
                    if memo.get(o).is_none() {
                        stack.push((o, false));
                    }
                });
                continue;
            }
            let memo = &*self.memo;
            let num = match op_key(kind, |o| Value(memo.get(cx.read(o)).unwrap_or(NONE))) {
                Some(key) => *self.exprs.entry(key).or_insert(v),
                None => v,
            };
            self.memo.insert(v, num.0);
        }
        self.memo.get(v).map(Value)
    }
}

/// A map of values to numbers, dense over the function's values (a read is
/// one index), that clears only the slots it set.
#[derive(Default)]
struct DenseMap {
    slots: Vec<u32>,
    set: Vec<Value>,
}

impl DenseMap {
    /// The number of `v`, if set.
    #[inline]
    fn get(&self, v: Value) -> Option<u32> {
        self.slots.get(v.index()).copied().filter(|&x| x != NONE)
    }

    /// Set the number of `v` to `x` (not [`NONE`]).
    fn insert(&mut self, v: Value, x: u32) {
        if self.slots.len() <= v.index() {
            let len = (v.index() + 1).max(2 * self.slots.len());
            self.slots.resize(len, NONE);
        }
        if self.slots[v.index()] == NONE {
            self.set.push(v);
        }
        self.slots[v.index()] = x;
    }

    /// Unset every value.
    fn clear(&mut self) {
        for v in self.set.drain(..) {
            self.slots[v.index()] = NONE;
        }
    }
}
