//! Phi of operations: with `x = phi [P: a + b], [Q: c + d]`,
//! `p = phi [P: a], [Q: c]` and `q = phi [P: b], [Q: d]` in one block,
//! `y = add p, q` is `x` (on the edge from each predecessor both compute
//! the same operation of the same operands), so `y` merges into `x` and one
//! operation less runs. `x` is a phi of the block `p` and `q` belong to, so
//! it dominates `y`; an operation that may trap (`sdiv`) is merged too, as
//! `x`'s entries already computed it on every path without trapping.
//!
//! The walk files each phi it keeps whose entries are all one binary
//! operation ([`PhiOps::file`]) under the hash of its translated form, and
//! looks a binary operation of two phis of one block up in that index
//! ([`PhiOps::find`]); a function with no such phi pays nothing more.

use super::key::normalize;
use ir::{Block, Function, Inst, InstKind, Value, ValueDef};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// Predecessors past which a phi is not looked at (its entries are matched
/// pairwise).
const MAX_PREDS: usize = 16;

/// One edge of a phi of operations: the predecessor, then the normalized
/// operator and operands of the operation on that edge.
type Edge = (u32, u32, u32, u32);

/// The phis of operations of one walk, by the hash of their edges.
#[derive(Default)]
pub struct PhiOps {
    index: FxHashMap<u64, Inst>,
    edges: SmallVec<[Edge; 4]>,
    other: SmallVec<[Edge; 4]>,
}

impl PhiOps {
    /// Forget every phi (a new walk).
    pub fn clear(&mut self) {
        self.index.clear();
    }

    /// Whether no phi is filed.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// File phi `x` if its entries are all one binary operation; `read`
    /// gives a value as the walk's merges read it.
    pub fn file(&mut self, func: &Function, x: Inst, read: impl Fn(Value) -> Value) {
        let mut edges = std::mem::take(&mut self.edges);
        if phi_edges(func, x, &read, &mut edges) {
            let h = hash(func.insts[x.index()].block, &edges);
            self.index.entry(h).or_insert(x);
        }
        self.edges = edges;
    }

    /// The filed phi that binary operation `y` (operands read through the
    /// walk's merges) equals, if any.
    pub fn find(
        &mut self,
        func: &Function,
        y: Inst,
        read: impl Fn(Value) -> Value,
    ) -> Option<Inst> {
        let InstKind::Binary(op, u, v) = func.insts[y.index()].kind else {
            return None;
        };
        let (pu, pv) = (phi_def(func, u)?, phi_def(func, v)?);
        let block = func.insts[pu.index()].block;
        if block != func.insts[pv.index()].block {
            return None;
        }
        let (InstKind::Phi(eu), InstKind::Phi(ev)) =
            (&func.insts[pu.index()].kind, &func.insts[pv.index()].kind)
        else {
            return None;
        };
        if eu.len() != ev.len() || eu.len() > MAX_PREDS {
            return None;
        }
        self.edges.clear();
        for &(p, a) in eu {
            let &(_, b) = ev.iter().find(|&&(q, _)| q == p)?;
            self.edges
                .push(edge(p, InstKind::Binary(op, read(a), read(b)))?);
        }
        self.edges.sort_unstable();
        let &x = self.index.get(&hash(block, &self.edges))?;
        let mut other = std::mem::take(&mut self.other);
        let same = func.insts[x.index()].block == block
            && phi_edges(func, x, &read, &mut other)
            && other == self.edges;
        self.other = other;
        same.then_some(x)
    }
}

/// Whether phi `x` may be a phi of operations (it has entries enough and
/// the first is an operation's result): a cheap test before
/// [`PhiOps::file`].
#[inline]
pub fn may_file(func: &Function, x: Inst) -> bool {
    let InstKind::Phi(entries) = &func.insts[x.index()].kind else {
        return false;
    };
    entries.len() >= 2
        && matches!(func.value_def(entries[0].1), ValueDef::Inst(i)
            if matches!(func.insts[i.index()].kind, InstKind::Binary(..)))
}

/// The edges of phi `x` into `edges` (sorted); false when an entry is not
/// the result of a binary operation, or not all of one operator.
fn phi_edges(
    func: &Function,
    x: Inst,
    read: &impl Fn(Value) -> Value,
    edges: &mut SmallVec<[Edge; 4]>,
) -> bool {
    edges.clear();
    let InstKind::Phi(entries) = &func.insts[x.index()].kind else {
        return false;
    };
    if entries.len() < 2 || entries.len() > MAX_PREDS {
        return false;
    }
    for &(p, w) in entries {
        let ValueDef::Inst(i) = func.value_def(read(w)) else {
            return false;
        };
        let InstKind::Binary(op, a, b) = func.insts[i.index()].kind else {
            return false;
        };
        match edge(p, InstKind::Binary(op, read(a), read(b))) {
            Some(e) if edges.first().is_none_or(|f| f.1 == e.1) => edges.push(e),
            _ => return false,
        }
    }
    edges.sort_unstable();
    true
}

/// The edge from `p` of binary operation `kind` (normalized).
fn edge(p: Block, kind: InstKind) -> Option<Edge> {
    match normalize(kind) {
        InstKind::Binary(op, a, b) => Some((p.0, op as u32, a.0, b.0)),
        _ => None,
    }
}

/// The phi instruction defining `v`, if a phi defines it.
fn phi_def(func: &Function, v: Value) -> Option<Inst> {
    match func.value_def(v) {
        ValueDef::Inst(i) if func.insts[i.index()].kind.is_phi() => Some(i),
        _ => None,
    }
}

/// The hash of a phi of operations of `block` with `edges`.
fn hash(block: Option<Block>, edges: &[Edge]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    block.map(|b| b.0).hash(&mut h);
    edges.hash(&mut h);
    h.finish()
}
