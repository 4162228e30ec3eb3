//! Values a loop leaves behind (run by `dce`, issue 13; LLVM's scalar
//! evolution computes the same exit values of counted loops).
//!
//! A block `h` with phis is entered from a predecessor `p` that gives some
//! of them constants (`phi [p: 0], [q: %i1]`). From there the run is
//! simulated block by block: phis take their value on the edge taken, pure
//! integer operations (`ir::BinOp::eval`, `ir::UnOp::eval`, `select`) of
//! known values are computed, anything else is unknown, and each `br` must
//! be decided by a known condition. The walk stops (a *cut*) at the first
//! visit of a block `e`, once some block was visited twice (a loop ran),
//! when the set `S` of blocks visited so far is entered from outside only
//! at `h` from `p` (`p` not in `S`) and `e` has one predecessor. Then every
//! value defined in `S` known at the cut is replaced by its constant in
//! each use outside `S` (for phis of `e`: on the edge from `S`).
//!
//! Why this is sound: a run enters `S` only at `h` from `p`, with the phis'
//! constants; from there it follows the simulated path (the operations are
//! pure, and every branch on it is decided by known values) until it traps,
//! runs out of fuel or reaches `e` — the only edge out of `S` the path takes
//! before `e`. A use outside `S` of a value defined in `S` is reached only
//! by leaving `S`, so through that edge, and the value's latest evaluation
//! is the simulated one. SSA values never change: nothing observable differs.
//! What it opens up is left to the others: the branches on those constants
//! fold (peeps), and a loop whose values are no longer used after it runs
//! once ([`crate::decided_branches`]) or goes ([`crate::dead_loops`]).
//!
//! Cost: one look at each block's first instruction finds the candidates;
//! at most [`MAX_CANDIDATES`] walks of at most [`MAX_STEPS`] blocks per run;
//! the CFG is built only when a walk reaches a cut to test. Counter:
//! `dce.loop_exit_values` (operands replaced).

use crate::stats::Stats;
use ir::{Block, Cfg, Function, InstKind, Value};

/// Walks per function and run.
const MAX_CANDIDATES: usize = 4;

/// Block visits per walk.
const MAX_STEPS: usize = 64;

/// Replace the uses after a loop of the values it leaves behind, where a
/// simulation from a constant entry decides them. Whether anything changed.
pub(crate) fn substitute_loop_exit_values(func: &mut Function, stats: &mut Stats) -> bool {
    let mut walk = Walk::default();
    let mut cfg = None;
    let mut replaced = 0;
    for k in 0..func.layout.len() {
        if walk.walks == MAX_CANDIDATES {
            break;
        }
        let h = func.layout[k];
        let Some(p) = constant_entry(func, h) else {
            continue;
        };
        walk.walks += 1;
        if let Some(cut) = walk.run(func, h, p, &mut cfg) {
            // Replacing operands leaves the CFG as it was.
            replaced += substitute(func, &walk, cut);
        }
    }
    if replaced > 0 {
        stats.add("dce", "loop_exit_values", replaced);
    }
    replaced > 0
}

/// A predecessor of `h` giving one of its phis a constant, when `h` has
/// another predecessor (the phi merges something else too).
fn constant_entry(func: &Function, h: Block) -> Option<Block> {
    let &first = func.blocks[h.index()].insts.first()?;
    let InstKind::Phi(entries) = &func.inst(first).kind else {
        return None;
    };
    if entries.len() < 2 {
        return None;
    }
    entries
        .iter()
        .find(|(_, v)| func.as_const(*v).is_some())
        .map(|&(p, _)| p)
}

/// Where a walk stopped: the blocks of `S` are `path[..len]`, `e` is
/// `path[len]`, entered from `path[len - 1]`.
#[derive(Copy, Clone)]
struct Cut {
    len: usize,
}

/// One walk's state, reused from walk to walk.
#[derive(Default)]
struct Walk {
    /// Per value: its known integer, as of the latest evaluation.
    known: Vec<Option<i64>>,
    /// The blocks visited, in order.
    path: Vec<Block>,
    /// Scratch: the new values of one block's phis.
    phis: Vec<(Value, Option<i64>)>,
    walks: usize,
}

impl Walk {
    /// Simulate from `h` entered from `p`; the cut, if one passes.
    fn run(&mut self, func: &Function, h: Block, p: Block, cfg: &mut Option<Cfg>) -> Option<Cut> {
        self.known.clear();
        self.known.resize(func.values.len(), None);
        self.path.clear();
        let (mut from, mut b, mut looped) = (p, h, false);
        for _ in 0..MAX_STEPS {
            let next = self.visit(func, from, b)?;
            looped |= self.path.contains(&b);
            self.path.push(b);
            if looped && !self.path.contains(&next) {
                let cfg = cfg.get_or_insert_with(|| Cfg::new(func));
                if cut_holds(cfg, &self.path, h, p, next) {
                    self.path.push(next);
                    return Some(Cut {
                        len: self.path.len() - 1,
                    });
                }
            }
            (from, b) = (b, next);
        }
        None
    }

    /// Run block `b` entered from `from`: its phis, its pure operations;
    /// the successor its terminator takes, if decided.
    fn visit(&mut self, func: &Function, from: Block, b: Block) -> Option<Block> {
        self.phis.clear();
        for &inst in &func.blocks[b.index()].insts {
            let data = func.inst(inst);
            if let InstKind::Phi(entries) = &data.kind {
                let v = entries.iter().find(|(q, _)| *q == from)?.1;
                self.phis.push((data.result?, self.value(func, v)));
                continue;
            }
            // A block's phis take their values at once, from the edge.
            for (r, k) in self.phis.drain(..) {
                self.known[r.index()] = k;
            }
            let value = match data.kind {
                InstKind::Jmp(t) => return Some(t),
                InstKind::Br(c, t, e) => {
                    return Some(if self.value(func, c)? != 0 { t } else { e })
                }
                InstKind::Binary(op, a, c) => {
                    let (a, c) = (self.value(func, a), self.value(func, c));
                    a.zip(c).and_then(|(a, c)| op.eval(a, c))
                }
                InstKind::Unary(op, a) => self.value(func, a).map(|a| op.eval(a)),
                InstKind::Select(c, a, e) => self
                    .value(func, c)
                    .and_then(|c| self.value(func, if c != 0 { a } else { e })),
                _ => None,
            };
            if let Some(r) = data.result {
                self.known[r.index()] = value;
            }
        }
        None
    }

    /// The known integer `v` holds, if any.
    fn value(&self, func: &Function, v: Value) -> Option<i64> {
        func.as_const(v).or_else(|| self.known[v.index()])
    }
}

/// Whether the blocks `path` visited form an `S` entered from outside only
/// at `h` from `p`, left through the one predecessor of `e`.
fn cut_holds(cfg: &Cfg, path: &[Block], h: Block, p: Block, e: Block) -> bool {
    let inside = |b: &Block| path.contains(b);
    let mut preds_of_e = cfg.unique_preds_iter(e);
    let single = preds_of_e.next().is_some() && preds_of_e.next().is_none();
    single
        && !inside(&p)
        && path.iter().all(|&b| {
            cfg.unique_preds_iter(b)
                .all(|q| inside(&q) || (b == h && q == p))
        })
}

/// Replace the known values defined in the cut's `S` in their uses outside
/// it; the number of operands replaced.
fn substitute(func: &mut Function, walk: &Walk, cut: Cut) -> u64 {
    let (inside, e) = (&walk.path[..cut.len], walk.path[cut.len]);
    let exiting = inside[cut.len - 1];
    let constant = |func: &Function, v: Value| -> Option<i64> {
        let def = func.def_inst(v)?;
        let block = func.inst(def).block?;
        let k = walk.known.get(v.index()).copied().flatten()?;
        (inside.contains(&block) && func.value_type(v).is_int()).then_some(k)
    };
    let mut replaced = Vec::new();
    for &b in &func.layout {
        if inside.contains(&b) {
            continue;
        }
        for &inst in &func.blocks[b.index()].insts {
            match &func.inst(inst).kind {
                InstKind::Phi(entries) => {
                    for (slot, &(q, v)) in entries.iter().enumerate() {
                        if b == e && q == exiting {
                            if let Some(k) = constant(func, v) {
                                replaced.push((inst, Some(slot), v, k));
                            }
                        }
                    }
                }
                kind => kind.for_each_operand(|v| {
                    if let Some(k) = constant(func, v) {
                        replaced.push((inst, None, v, k));
                    }
                }),
            }
        }
    }
    for &(inst, slot, v, k) in &replaced {
        let c = func.iconst(k);
        match (&mut func.insts[inst.index()].kind, slot) {
            (InstKind::Phi(entries), Some(slot)) => entries[slot].1 = c,
            (kind, _) => kind.for_each_operand_mut(|o| {
                if *o == v {
                    *o = c;
                }
            }),
        }
    }
    replaced.len() as u64
}
