//! Jump threading (run by `dce`, issue 13): branches decided on some of
//! their incoming edges.
//!
//! A block `b` ends in `br c, t, e` and holds nothing but phis and at most
//! [`MAX_BODY`] pure instructions (no reads, writes, traps or allocations:
//! `ir::effects` says so). On the edge from a predecessor `p`, `c` may be
//! decided: computed from the phis of `b` at their `p` values, constants,
//! and what the edges above `p` teach ([`crate::edge_facts`]: `p` ends in
//! `br x` with `b` as one target, and so on up through blocks with a single
//! predecessor edge — `br %k` not taken makes `%k` 0, taken makes it
//! non-zero). When it picks successor `s`, `p` jumps to `s` itself: the
//! phis of `s` get, for `p`, the value their `b` entry has on that edge (a
//! phi of `b` reads its `p` entry), and `b`'s phis lose their `p` entry.
//! That peels a loop test off the entry edge (a header whose induction
//! starts inside its bound goes straight to the body: loop rotation) or
//! off a latch (`phi [entry: 0], [latch: 1]` with `slt %i, 1`: the back
//! edge leaves the loop, which then runs at most once), and threads `br
//! %k` after `br %k` straight to the second branch's target.
//!
//! Values of `b` stay defined where they are used: a block not reachable
//! from `s` without passing `b` is still dominated by `b` (a way into it
//! through the new edge `p -> s` passes `b` later, or it is reachable from
//! `s` without `b`). For the blocks `R` that are reachable so, a use of a
//! value of `b` (a phi entry counts where its predecessor ends) is allowed
//! only if the value is a phi of `b`, `b` is the only predecessor of `s`
//! and no block of `R` but `s` is entered from outside `R` (so `s`
//! dominates `R`): such uses then read a new phi of `s`, `[b: v], [p: v's
//! p entry]`. Anything else is not threaded.
//!
//! Why this is sound: compare a run of the new function with the old one.
//! Up to the first taken edge `p -> s`, both ran the same steps. In the old
//! function the run reached the end of `p`, so every edge the facts come
//! from dominates that point (SSA values never change, so their facts
//! still hold), and `c` evaluated on the edge `p -> b` picks `s`: the old
//! run went `p -> b -> s`, where `b` wrote nothing, trapped nowhere and
//! allocated nothing, and `s` (and what reads a value of `b` after it)
//! sees the same values as the new run. So each run of the new function is
//! a run of the old one with the steps of `b` skipped — fewer steps of
//! fuel, the same heap and the same environment steps.
//!
//! Cost: one look at each block's terminator and body size; the CFG
//! ([`crate::analyses`], kept while the branches are unchanged) is asked
//! for only when some block qualifies, and again after each thread, at
//! most [`MAX_THREADS`] per function and run; an edge's facts are
//! collected only when its condition asks for one; the facts of an edge follow
//! at most [`FACT_STEPS`] blocks up, a condition at most [`EVAL_DEPTH`]
//! operations of `b` deep, and the region `R` at most [`MAX_REGION`] blocks and
//! [`MAX_REGION_WORK`] instructions and predecessor edges. Counter:
//! `dce.edges_threaded`.

use crate::certain_traps::drop_phi_entries;
use crate::edge_facts::{implied_facts, IMPLIED_DEPTH};
use crate::stats::Stats;
use ir::effects::local_inst_effects;
use ir::reuse::with_reused;
use ir::{BinOp, Block, Cfg, Function, InstKind, Value, ValueDef};
use smallvec::SmallVec;
use std::cell::RefCell;

/// Threads per function and run (keeps the pass linear).
const MAX_THREADS: usize = 8;

/// Non-phi instructions (besides the branch) a threaded block may hold.
const MAX_BODY: usize = 8;

/// Blocks above the edge whose branches teach facts.
const FACT_STEPS: usize = 4;

/// How deep a condition's expression is followed.
const EVAL_DEPTH: u32 = 6;

/// Blocks of the region reachable from the new target.
const MAX_REGION: usize = 32;

/// Instructions and predecessor edges looked at in that region.
const MAX_REGION_WORK: usize = 256;

/// What a condition is known to be on an edge.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Known {
    /// This constant (`null` is 0).
    Const(i64),
    /// Some value other than 0 (or `null`).
    NonZero,
}

/// Storage reused from function to function.
#[derive(Default)]
struct Scratch {
    /// The facts of the edge looked at: a value and whether it is non-zero.
    facts: Vec<(Value, bool)>,
    /// Per block: whether it is in the region.
    seen: Vec<bool>,
    region: Vec<Block>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// One thread to make: `p` jumps to `s` instead of `b`; the phis of `b`
/// in `fresh` get a phi in `s` for their uses in `region`.
struct Plan {
    b: Block,
    p: Block,
    s: Block,
    fresh: SmallVec<[Value; 4]>,
}

/// Thread the edges that decide the branch of their target (module
/// header). Whether anything changed.
pub(crate) fn thread_decided_edges(func: &mut Function, stats: &mut Stats) -> bool {
    let candidates: SmallVec<[Block; 8]> = func
        .layout
        .iter()
        .copied()
        .filter(|&b| small_branch_block(func, b))
        .collect();
    if candidates.is_empty() {
        return false;
    }
    with_reused(&SCRATCH, |scratch| {
        let mut threads = 0;
        // The candidates are tried in order, each again after it threaded;
        // the CFG is asked for once per thread (it changes only then).
        let mut next = 0;
        while threads < MAX_THREADS {
            let found = crate::analyses::with_analyses(func, |a| {
                next_thread(func, a.cfg(), &candidates, &mut next, scratch)
            });
            let Some(plan) = found else {
                break;
            };
            apply(func, &plan, scratch);
            threads += 1;
        }
        if threads > 0 {
            stats.add("dce", "edges_threaded", threads as u64);
        }
        threads > 0
    })
}

/// The first thread [`find_thread`] finds in `candidates[*next..]`,
/// leaving `*next` at the candidate it came from (or past the last).
fn next_thread(
    func: &Function,
    cfg: &Cfg,
    candidates: &[Block],
    next: &mut usize,
    scratch: &mut Scratch,
) -> Option<Plan> {
    while let Some(&b) = candidates.get(*next) {
        if let Some(plan) = find_thread(func, cfg, b, scratch) {
            return Some(plan);
        }
        *next += 1;
    }
    None
}

/// Whether `b` ends in a two-way `br` on a value that is not a constant
/// after at most [`MAX_BODY`] non-phi
/// instructions (purity is asked later, of blocks with a decided edge).
fn small_branch_block(func: &Function, b: Block) -> bool {
    let insts = &func.blocks[b.index()].insts;
    let Some(&last) = insts.last() else {
        return false;
    };
    // A constant condition is folded by peeps, not threaded.
    if !matches!(func.inst(last).kind, InstKind::Br(c, t, e)
        if t != e && matches!(func.value_def(c), ValueDef::Inst(_) | ValueDef::Param(_)))
    {
        return false;
    }
    let phis = insts
        .iter()
        .take_while(|&&i| func.inst(i).kind.is_phi())
        .count();
    insts.len() - phis - 1 <= MAX_BODY
}

/// Whether every instruction of `b` but its phis and branch is pure.
fn pure_body(func: &Function, b: Block) -> bool {
    let insts = &func.blocks[b.index()].insts;
    insts[..insts.len() - 1].iter().all(|&i| {
        func.inst(i).kind.is_phi() || local_inst_effects(func, i).is_some_and(|x| x.is_pure())
    })
}

/// The first predecessor edge of `b` that decides its branch and may be
/// threaded, with what threading it takes.
fn find_thread(func: &Function, cfg: &Cfg, b: Block, scratch: &mut Scratch) -> Option<Plan> {
    let InstKind::Br(c, t, e) = func.inst(func.terminator(b)?).kind else {
        return None;
    };
    let mut pure = None;
    for p in cfg.unique_preds_iter(b) {
        if p == b {
            continue;
        }
        let edge = Edge {
            func,
            cfg,
            b,
            p,
            facts: RefCell::new((false, std::mem::take(&mut scratch.facts))),
        };
        let k = edge.eval(c, true, EVAL_DEPTH);
        scratch.facts = edge.facts.into_inner().1;
        let Some(k) = k else {
            continue;
        };
        let s = if k == Known::Const(0) { e } else { t };
        if !*pure.get_or_insert_with(|| pure_body(func, b)) {
            return None;
        }
        if let Some(plan) = plan(func, cfg, b, p, s, scratch) {
            return Some(plan);
        }
    }
    None
}

/// The facts the edge `p -> b` teaches: its own branch's, then those of
/// the edges into `p` and up, while each block has one predecessor edge.
fn collect_facts(func: &Function, cfg: &Cfg, b: Block, p: Block, out: &mut Vec<(Value, bool)>) {
    out.clear();
    let (mut from, mut to) = (p, b);
    for _ in 0..FACT_STEPS {
        if let Some(term) = func.terminator(from) {
            if let InstKind::Br(c, x, y) = func.inst(term).kind {
                if x != y {
                    // The condition itself (`br %c` after `br %c`, where
                    // `%c = ne %p, null` teaches its root `%p`), then what
                    // it implies.
                    out.push((c, to == x));
                    implied_facts(func, c, to == x, IMPLIED_DEPTH, &mut |v, nz| {
                        out.push((v, nz))
                    });
                }
            }
        }
        let &[q] = cfg.preds(from) else {
            return;
        };
        (from, to) = (q, from);
    }
}

/// An edge `p -> b` and the facts known on it (collected on the first
/// question: whether they are, and the list).
struct Edge<'a> {
    func: &'a Function,
    cfg: &'a Cfg,
    b: Block,
    p: Block,
    facts: RefCell<(bool, Vec<(Value, bool)>)>,
}

impl Edge<'_> {
    /// What `v` is known to be on the edge: `inside`, as `b` computes it
    /// when entered from `p` (its phis at their `p` values, operations
    /// followed); otherwise as it stands at the end of `p`: a constant or
    /// what a fact says (a value of `b` there is an earlier visit's).
    fn eval(&self, v: Value, inside: bool, depth: u32) -> Option<Known> {
        let func = self.func;
        let i = match func.value_def(v) {
            ValueDef::Const(k) => return Some(Known::Const(k)),
            ValueDef::Null => return Some(Known::Const(0)),
            ValueDef::Inst(i) => i,
            _ => return self.fact(v),
        };
        let data = func.inst(i);
        let in_b = data.block == Some(self.b);
        if !(in_b && inside) {
            // Outside `b`, only what the edges teach (a value of `b` there
            // is an earlier visit's).
            return self.fact(v).filter(|_| !in_b);
        }
        let d = depth.checked_sub(1)?;
        match &data.kind {
            InstKind::Phi(entries) => {
                let &(_, x) = entries.iter().find(|&&(q, _)| q == self.p)?;
                self.eval(x, false, d)
            }
            InstKind::Binary(op, x, y) => {
                let x = self.eval(*x, true, d);
                let y = self.eval(*y, true, d);
                combine(*op, x, y)
            }
            InstKind::Unary(op, x) => match self.eval(*x, true, d)? {
                Known::Const(k) => Some(Known::Const(op.eval(k))),
                Known::NonZero => None,
            },
            InstKind::Select(c, x, y) => {
                let pick = if self.eval(*c, true, d)? == Known::Const(0) {
                    y
                } else {
                    x
                };
                self.eval(*pick, true, d)
            }
            _ => None,
        }
    }

    /// What the facts of the edge say about `v`.
    fn fact(&self, v: Value) -> Option<Known> {
        let mut facts = self.facts.borrow_mut();
        let (collected, list) = &mut *facts;
        if !*collected {
            collect_facts(self.func, self.cfg, self.b, self.p, list);
            *collected = true;
        }
        let &(_, nz) = list.iter().find(|&&(x, _)| x == v)?;
        Some(if nz { Known::NonZero } else { Known::Const(0) })
    }
}

/// `op` on operands known (or not) to be what `x` and `y` say, if that
/// decides its result.
fn combine(op: BinOp, x: Option<Known>, y: Option<Known>) -> Option<Known> {
    use Known::{Const, NonZero};
    match (x, y) {
        (Some(Const(a)), Some(Const(b))) => op.eval(a, b).map(Const),
        (Some(NonZero), Some(Const(0))) | (Some(Const(0)), Some(NonZero)) => match op {
            BinOp::Eq => Some(Const(0)),
            BinOp::Ne => Some(Const(1)),
            BinOp::Or | BinOp::Xor => Some(NonZero),
            _ => crate::decided_branches::absorbs(op, 0, x == Some(Const(0))).map(Const),
        },
        (Some(NonZero), _) | (_, Some(NonZero)) if op == BinOp::Or => Some(NonZero),
        (Some(Const(k)), _) => crate::decided_branches::absorbs(op, k, true).map(Const),
        (_, Some(Const(k))) => crate::decided_branches::absorbs(op, k, false).map(Const),
        _ => None,
    }
}

/// Whether `v` is a value defined by an instruction of `b`.
fn defined_in(func: &Function, v: Value, b: Block) -> bool {
    func.def_inst(v)
        .is_some_and(|i| func.inst(i).block == Some(b))
}

/// Whether `v` is a phi of `b`.
fn phi_of(func: &Function, v: Value, b: Block) -> bool {
    func.def_inst(v).is_some_and(|i| {
        let data = func.inst(i);
        data.block == Some(b) && data.kind.is_phi()
    })
}

/// The value `v` (an operand of an instruction of `b`'s successor read on
/// the edge from `b`) has when `b` is entered from `p`.
fn on_edge(func: &Function, b: Block, p: Block, v: Value) -> Value {
    if !phi_of(func, v, b) {
        return v;
    }
    let InstKind::Phi(entries) = &func.inst(func.def_inst(v).expect("a phi")).kind else {
        return v;
    };
    entries
        .iter()
        .find(|&&(q, _)| q == p)
        .map_or(v, |&(_, x)| x)
}

/// Whether threading `p -> b` to `s` keeps the function valid (module
/// header), and the phis of `b` that then need a phi in `s`.
fn plan(
    func: &Function,
    cfg: &Cfg,
    b: Block,
    p: Block,
    s: Block,
    scratch: &mut Scratch,
) -> Option<Plan> {
    if s == b || !redirectable(func, p, b, s) {
        return None;
    }
    // The phis of `s` read values of `b` only where those are phis.
    for &i in &func.blocks[s.index()].insts {
        let InstKind::Phi(entries) = &func.inst(i).kind else {
            break;
        };
        let from_b = entries.iter().find(|&&(q, _)| q == b)?.1;
        if defined_in(func, from_b, b) && !phi_of(func, from_b, b) {
            return None;
        }
    }
    let closed = walk_region(func, cfg, b, s, scratch)?;
    let mut fresh = SmallVec::new();
    let region = &scratch.region;
    let seen = &scratch.seen;
    let mut ok = true;
    let mut note = |v: Value| {
        if defined_in(func, v, b) {
            ok &= phi_of(func, v, b);
            if !fresh.contains(&v) {
                fresh.push(v);
            }
        }
    };
    for &x in region.iter().chain(std::iter::once(&b)) {
        for &i in &func.blocks[x.index()].insts {
            match &func.inst(i).kind {
                InstKind::Phi(entries) => entries
                    .iter()
                    .filter(|&&(q, _)| seen[q.index()])
                    .for_each(|&(_, v)| note(v)),
                kind if x != b => kind.for_each_operand(&mut note),
                _ => {}
            }
        }
    }
    if !ok || (!fresh.is_empty() && (!closed || cfg.preds(s) != [b])) {
        return None;
    }
    Some(Plan { b, p, s, fresh })
}

/// Whether `p` branches to `b` on one edge and not already to `s`, and
/// is not a `jmp` that would jump to itself (a loop without an exit, which
/// nothing deletes, where the old one could leave).
fn redirectable(func: &Function, p: Block, b: Block, s: Block) -> bool {
    let Some(term) = func.terminator(p) else {
        return false;
    };
    let kind = &func.inst(term).kind;
    let succs: SmallVec<[Block; 2]> = kind.successors().collect();
    succs.iter().filter(|&&x| x == b).count() == 1
        && !succs.contains(&s)
        && !(p == s && matches!(kind, InstKind::Jmp(_)))
}

/// Mark the blocks reachable from `s` without passing `b` in
/// `scratch.seen` / `scratch.region`. `None` when over the bounds; else
/// whether no block of the region but `s` has a predecessor outside it.
fn walk_region(
    func: &Function,
    cfg: &Cfg,
    b: Block,
    s: Block,
    scratch: &mut Scratch,
) -> Option<bool> {
    let Scratch { seen, region, .. } = scratch;
    seen.clear();
    seen.resize(func.blocks.len(), false);
    region.clear();
    region.push(s);
    seen[s.index()] = true;
    seen[b.index()] = true;
    let mut work = 0;
    let mut k = 0;
    while let Some(&x) = region.get(k) {
        k += 1;
        work += func.blocks[x.index()].insts.len() + cfg.preds(x).len();
        if region.len() > MAX_REGION || work > MAX_REGION_WORK {
            seen[b.index()] = false;
            return None;
        }
        for &y in cfg.succs(x) {
            if !seen[y.index()] {
                seen[y.index()] = true;
                region.push(y);
            }
        }
    }
    seen[b.index()] = false;
    let closed = region[1..]
        .iter()
        .all(|&x| cfg.preds(x).iter().all(|q| seen[q.index()]));
    Some(closed)
}

/// Make the thread `plan` describes.
fn apply(func: &mut Function, plan: &Plan, scratch: &Scratch) {
    let &Plan { b, p, s, .. } = plan;
    // The phis of `s` read, for `p`, their `b` entry's value on the edge.
    let s_phis: SmallVec<[_; 4]> = func.blocks[s.index()]
        .insts
        .iter()
        .copied()
        .take_while(|&i| func.inst(i).kind.is_phi())
        .collect();
    for i in s_phis {
        let InstKind::Phi(entries) = &func.inst(i).kind else {
            continue;
        };
        let from_b = entries.iter().find(|&&(q, _)| q == b).map(|&(_, v)| v);
        if let Some(v) = from_b {
            let x = on_edge(func, b, p, v);
            if let InstKind::Phi(entries) = &mut func.insts[i.index()].kind {
                entries.push((p, x));
            }
        }
    }
    for &v in &plan.fresh {
        let x = on_edge(func, b, p, v);
        let ty = func.value_type(v);
        let (phi, w) = func.create_inst(InstKind::Phi(vec![(b, v), (p, x)]), Some(ty));
        func.insert_inst(s, 0, phi);
        let w = w.expect("a phi has a result");
        replace_in_region(func, scratch, b, v, w, phi);
    }
    let term = func.terminator(p).expect("redirectable saw a terminator");
    for x in func.insts[term.index()].kind.successors_mut() {
        if *x == b {
            *x = s;
        }
    }
    drop_phi_entries(func, b, p);
}

/// Replace the uses of `v` in the region (phi entries from its blocks,
/// in the region or in `b`) by `w`, except in `w`'s own phi.
fn replace_in_region(
    func: &mut Function,
    scratch: &Scratch,
    b: Block,
    v: Value,
    w: Value,
    phi: ir::Inst,
) {
    let seen = &scratch.seen;
    let Function { blocks, insts, .. } = func;
    for &x in scratch.region.iter().chain(std::iter::once(&b)) {
        for &i in &blocks[x.index()].insts {
            if i == phi {
                continue;
            }
            match &mut insts[i.index()].kind {
                InstKind::Phi(entries) => entries
                    .iter_mut()
                    .filter(|(q, x)| seen[q.index()] && *x == v)
                    .for_each(|(_, x)| *x = w),
                kind if x != b => kind.for_each_operand_mut(|x| {
                    if *x == v {
                        *x = w;
                    }
                }),
                _ => {}
            }
        }
    }
}
