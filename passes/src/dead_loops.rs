//! Loops whose work is never observed (run by `dce`, issue 13).
//!
//! Two rules over the loops of a function, each a run of blocks `h ..= l` of
//! the layout where `l` jumps back to `h` (a natural loop, or an irreducible
//! one: edges from outside may enter the run at any block), whose
//! terminators are all `jmp`/`br` and whose
//! instructions cannot trap: each asked of
//! [`ir::effects::inst_effects`] — a trap at most on a resource limit, or a
//! plain (not volatile) access, `len` or check whose null or bounds check
//! the known-checked analysis ([`crate::checks`]) finds already made where
//! it stands — and that call nothing:
//!
//! - **A loop without effects** (`dce.dead_loops_removed`): one exit block
//!   `e`, every instruction removable when unused (no store), no value of
//!   the loop used outside it, and `e`'s phis taking one value from outside
//!   the loop on all its loop edges, and every block of the run entered
//!   from outside reaching `e` inside the run (so that value is defined
//!   before every way in). The loop's entering edges go to `e` (with those
//!   phi values) and the loop is left unreachable. Sound without
//!   proving that the loop ends: a run that enters it either leaves it for
//!   `e` with the heap and trace it entered with (nothing in it writes, steps
//!   or traps), or never leaves it and runs out of fuel, and an input whose
//!   original run is out of fuel is inconclusive (IR.md §7; the oracle skips
//!   it before comparing anything, the never-worse count included).
//! - **Stores in a loop with no exit** (`dce.stores_in_loops_without_exit`):
//!   a loop no edge leaves, with no `ret` or `unreachable`, never ends once
//!   entered and shows nothing (it cannot trap, and takes no environment
//!   step): every run that enters it is inconclusive, so its stores are
//!   never observed and go.
//!
//! A run holding a `br` on a constant (or a `copy` of one: a null test the
//! same DCE run just decided) is left alone until peeps folds that branch:
//! the edge it never takes may be the run's only exit, and deleting a loop
//! that never ends would make what follows it reachable.
//!
//! Cost: one look at each block's terminator finds the runs; the first
//! few runs that pass every test but the known checks (up to the first
//! with no access to ask about) are looked at further, in layout order,
//! so that a loop that must stay does not hide a dead one after it
//! (issue 13); one known-checked walk answers for all their accesses,
//! and the first that can go goes (no CFG, dominator tree or loop forest
//! otherwise; the one-trip rule asks the function's cached dominator
//! tree, [`crate::analyses`]). Each rule's soundness is that of its run
//! alone: which run goes first changes nothing about it.

use crate::checks;
use crate::stats::Stats;
use ir::effects::{checked_by, inst_effects, HeapNode, Traps};
use ir::{Block, FuncId, Function, Inst, InstKind, Module, UnOp, Value};

/// Storage reused from function to function.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Per block slot: its position in the layout, plus one (0: not placed).
    pos: Vec<u32>,
    /// Per block slot: in the run being looked at.
    inside: Vec<bool>,
    /// Per instruction: an access whose check must be known.
    needs: Vec<bool>,
}

/// What a run that passed the structural tests is a candidate for.
enum Plan {
    /// Delete the run: its one exit, the blocks entering it and the value
    /// each phi of the exit takes from it.
    Delete {
        exit: Block,
        entering: Vec<Block>,
        phis: Vec<(Inst, Value)>,
    },
    /// Delete these stores.
    Stores(Vec<Inst>),
}

/// The blocks entering a run to delete, and each phi of its exit with the
/// value it takes from the run.
type Entries = (Vec<Block>, Vec<(Inst, Value)>);

/// A run of layout blocks: the first and last position, and the one block
/// it leaves for (`None`: it never leaves).
type Run = (usize, usize, Option<Block>);

/// Apply one of the rules (module header) to function `fid`. Whether it
/// changed.
pub(crate) fn fold_dead_loops(
    module: &mut Module,
    fid: FuncId,
    s: &mut Scratch,
    known: &mut checks::Scratch,
    stats: &mut Stats,
) -> bool {
    let f = &module.funcs[fid.index()];
    if f.layout.len() < 2 {
        return false;
    }
    let found = candidates(module, f, s);
    if found.is_empty() {
        return false;
    }
    // One known-checked walk answers for the accesses of every candidate.
    if found.iter().any(|c| !c.accesses.is_empty()) {
        s.needs.clear();
        s.needs.resize(f.insts.len(), false);
        for i in found.iter().flat_map(|c| &c.accesses) {
            s.needs[i.index()] = true;
        }
        let safe = checks::redundant_checks(module, f, |i| s.needs[i.index()], false, known);
        s.needs.iter_mut().for_each(|n| *n = false);
        safe.iter().for_each(|i| s.needs[i.index()] = true);
    }
    for c in found {
        let (first, last, _) = c.run;
        let blocks = &module.funcs[fid.index()].layout[first..=last];
        mark(&mut s.inside, blocks, true);
        let once = match run_once(&module.funcs[fid.index()], blocks, s, &c) {
            Some(once) => once,
            None => {
                mark(&mut s.inside, blocks, false);
                continue;
            }
        };
        let header = blocks[0];
        let blocks = blocks.to_vec();
        let by_phis = c
            .accesses
            .iter()
            .filter(|i| known.known_from_phis().contains(i))
            .count();
        if by_phis > 0 {
            stats.add("dce", "checks_known_from_phis", by_phis as u64);
        }
        apply(
            &mut module.funcs[fid.index()],
            header,
            c.plan,
            once,
            &s.inside,
            stats,
        );
        mark(&mut s.inside, &blocks, false);
        if !c.first {
            stats.add("dce", "dead_loops_after_a_kept_run", 1);
        }
        return true;
    }
    false
}

/// A run that passed every test but the known checks: the run, its plan
/// and the accesses whose checks must be known.
struct Candidate {
    run: Run,
    plan: Plan,
    accesses: Vec<Inst>,
    /// Whether it is the first run looked at (before issue 13's round 14,
    /// the only one).
    first: bool,
}

/// The first runs of the layout (at most [`MAX_CANDIDATES`], in layout
/// order) whose instructions pass (module header) but for the known
/// checks, up to the first one with no access to ask about (which goes
/// for certain). `s.inside` is all false before and after.
fn candidates(m: &Module, f: &Function, s: &mut Scratch) -> Vec<Candidate> {
    s.inside.clear();
    s.inside.resize(f.blocks.len(), false);
    let mut found = Vec::new();
    let inside = &mut s.inside;
    let mut looked = 0;
    for_each_run(f, &mut s.pos, |(first, last, exit)| {
        let blocks = &f.layout[first..=last];
        mark(inside, blocks, true);
        let plan = candidate(m, f, blocks, inside, exit);
        mark(inside, blocks, false);
        looked += 1;
        let Some((plan, accesses)) = plan else {
            return false;
        };
        let certain = accesses.is_empty();
        found.push(Candidate {
            run: (first, last, exit),
            plan,
            accesses,
            first: looked == 1,
        });
        certain || found.len() >= MAX_CANDIDATES
    });
    found
}

/// How many candidate runs [`candidates`] gathers at most: a loop that
/// must stay (its checks may trap) does not hide the dead loops after it
/// (issue 13), and the known-checked walk still runs once per call.
const MAX_CANDIDATES: usize = 4;

/// Set `inside` for the blocks `blocks` to `to`.
fn mark(inside: &mut [bool], blocks: &[Block], to: bool) {
    blocks.iter().for_each(|b| inside[b.index()] = to);
}

/// Whether candidate `c` (its blocks `blocks`, marked in `s.inside`) can
/// go, with `s.needs` marking the accesses known checked: `Some(None)` as
/// it is, `Some(Some(latches))` when the loop must run once for checks
/// that may trap ([`checked_on_every_trip`]).
fn run_once(
    f: &Function,
    blocks: &[Block],
    s: &Scratch,
    c: &Candidate,
) -> Option<Option<Vec<Block>>> {
    let unknown: Vec<Inst> = c
        .accesses
        .iter()
        .copied()
        .filter(|i| !s.needs[i.index()])
        .collect();
    if unknown.is_empty() {
        return Some(None);
    }
    let Plan::Delete { entering, .. } = &c.plan else {
        return None;
    };
    checked_on_every_trip(f, blocks, &s.inside, entering, &unknown).map(Some)
}

/// Carry out `plan` for the run with header `header` (its blocks marked in
/// `inside`), run once through `once`'s latches if given.
fn apply(
    func: &mut Function,
    header: Block,
    plan: Plan,
    once: Option<Vec<Block>>,
    inside: &[bool],
    stats: &mut Stats,
) {
    match (plan, once) {
        (Plan::Delete { exit, phis, .. }, Some(latches)) => {
            bypass(func, |x| x == header, exit, &latches, &phis);
            drop_entries(func, header, &latches);
            stats.add("dce", "dead_loops_run_once", 1);
        }
        (
            Plan::Delete {
                exit,
                entering,
                phis,
            },
            None,
        ) => {
            bypass(func, |x| inside[x.index()], exit, &entering, &phis);
            stats.add("dce", "dead_loops_removed", 1);
        }
        (Plan::Stores(stores), _) => {
            func.remove_insts(&stores);
            stats.add("dce", "stores_in_loops_without_exit", stores.len() as u64);
        }
    }
}

/// Call `visit` with each run of the layout (module header) that may hold
/// a loop for one of the rules ([`may_hold_a_rule`]), in layout order,
/// until it returns true or the work budget is spent; `pos` is reused
/// storage.
fn for_each_run(f: &Function, pos: &mut Vec<u32>, mut visit: impl FnMut(Run) -> bool) {
    pos.clear();
    pos.resize(f.blocks.len(), 0);
    for (k, &b) in f.layout.iter().enumerate() {
        pos[b.index()] = k as u32 + 1;
    }
    // Each run looked at may cost a walk of the function (its way in, its
    // values' users): a fixed number of such walks per call keeps DCE linear
    // where many jumps go back in the layout (a chain laid out last-first).
    let walk = f.layout.len() + f.insts.len();
    let mut budget = MAX_RUN_WALKS * walk + SMALL_FUNCTION_WORK;
    for (k, &b) in f.layout.iter().enumerate() {
        let Some(t) = f.terminator(b) else {
            continue;
        };
        for h in f.inst(t).kind.successors() {
            let p = pos.get(h.index()).copied().unwrap_or(0) as usize;
            // The function's entry has a way in from outside every run.
            if p > 1 && p <= k + 1 {
                if budget < walk {
                    return;
                }
                budget -= walk;
                let Some(exit) = may_hold_a_rule(f, p - 1, k, pos) else {
                    continue;
                };
                if visit((p - 1, k, exit)) {
                    return;
                }
            }
        }
    }
}

/// How many runs of a big function [`for_each_run`] looks at, at most, per call.
const MAX_RUN_WALKS: usize = 16;

/// Extra work [`for_each_run`] may always spend, so that a small function has
/// every run looked at.
const SMALL_FUNCTION_WORK: usize = 4096;

/// Whether the layout blocks `first..=last` call nothing, take no step,
/// end in `jmp`/`br` only, and either store and never leave the run
/// (`Some(None)`), or store nothing, leave it for one block only
/// (`Some(Some(exit))`) that each block entered from outside reaches
/// inside the run, and define no value used outside it.
fn may_hold_a_rule(f: &Function, first: usize, last: usize, pos: &[u32]) -> Option<Option<Block>> {
    let range = &f.layout[first..=last];
    let outside = |x: Block| {
        let p = pos.get(x.index()).copied().unwrap_or(0) as usize;
        p <= first || p > last + 1
    };
    let (mut stores, mut exit) = (false, None);
    for &b in range {
        for &i in &f.blocks[b.index()].insts {
            let kind = &f.inst(i).kind;
            match kind {
                InstKind::Call { .. }
                | InstKind::Load { volatile: true, .. }
                | InstKind::Store { volatile: true, .. } => return None,
                InstKind::Store { .. } => stores = true,
                // A branch on a constant (a null test DCE just decided is a
                // `copy` of one): peeps folds it first, and then the run may
                // have no way out at all.
                InstKind::Br(c, ..) if constant_through_copy(f, *c) => return None,
                InstKind::Jmp(_) | InstKind::Br(..) => {
                    for x in kind.successors().filter(|&x| outside(x)) {
                        if exit.is_some_and(|e| e != x) {
                            return None;
                        }
                        exit = Some(x);
                    }
                }
                k if k.is_terminator() => return None,
                _ => {}
            }
        }
    }
    match (stores, exit) {
        (true, None) | (false, Some(_)) => {}
        _ => return None,
    }
    if let Some(e) = exit {
        // Every block entered from outside reaches the exit inside the run:
        // then a value the exit's phis take from the run is defined before
        // each way in (module header, `bypass`).
        let reach = reaching_exit(f, range, pos, first, e);
        let at = |x: Block| pos[x.index()] as usize - first - 1;
        let stuck = f.layout.iter().filter(|&&b| outside(b)).any(|&b| {
            f.terminator(b).is_some_and(|t| {
                f.inst(t)
                    .kind
                    .successors()
                    .any(|x| !outside(x) && !reach[at(x)])
            })
        });
        if stuck || used_outside(f, |b| !outside(b)) {
            return None;
        }
    }
    Some(exit)
}

/// Whether `v` is a constant or a `copy` of one.
fn constant_through_copy(f: &Function, v: Value) -> bool {
    let v = match f.def_inst(v).map(|d| &f.inst(d).kind) {
        Some(&InstKind::Unary(UnOp::Copy, x)) => x,
        _ => v,
    };
    f.as_const(v).is_some()
}

/// Per block of the run `range` (at layout position `first`; `pos` as in
/// [`for_each_run`]): whether a path inside the run leads from it to an edge to
/// `exit`. Found by at most [`REACH_PASSES`] backward passes over the run;
/// what is not settled by then counts as not reaching.
fn reaching_exit(
    f: &Function,
    range: &[Block],
    pos: &[u32],
    first: usize,
    exit: Block,
) -> Vec<bool> {
    let inside = |x: Block| {
        let p = pos.get(x.index()).copied().unwrap_or(0) as usize;
        p > first && p <= first + range.len()
    };
    let mut reach = vec![false; range.len()];
    for _ in 0..REACH_PASSES {
        let mut changed = false;
        for (k, &b) in range.iter().enumerate().rev() {
            if reach[k] {
                continue;
            }
            let Some(t) = f.terminator(b) else {
                continue;
            };
            let to =
                |x: Block| x == exit || (inside(x) && reach[pos[x.index()] as usize - first - 1]);
            if f.inst(t).kind.successors().any(to) {
                reach[k] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    reach
}

/// How many passes [`reaching_exit`] makes over a run at most.
const REACH_PASSES: usize = 8;

/// The plan for the run `blocks` (marked in `inside`) leaving for `exit`,
/// if its instructions pass (module header), with the accesses whose
/// checks must be known.
fn candidate(
    m: &Module,
    f: &Function,
    blocks: &[Block],
    inside: &[bool],
    exit: Option<Block>,
) -> Option<(Plan, Vec<Inst>)> {
    let mut accesses = Vec::new();
    let mut stores = Vec::new();
    for &b in blocks {
        for &i in &f.blocks[b.index()].insts {
            let kind = &f.inst(i).kind;
            match kind {
                InstKind::Jmp(_) | InstKind::Br(..) | InstKind::Phi(_) => continue,
                InstKind::Store { .. } => stores.push(i),
                _ => {}
            }
            let eff = inst_effects(m, f, i);
            if eff.traps == Traps::May {
                checked_by(kind)?;
                accesses.push(i);
            }
            if exit.is_some() && !eff.writes.iter().all(|&w| w == HeapNode::Alloc) {
                return None;
            }
        }
    }
    let plan = match exit {
        None => Plan::Stores(stores),
        Some(e) => {
            let (entering, phis) = deletable(f, inside, e)?;
            Plan::Delete {
                exit: e,
                entering,
                phis,
            }
        }
    };
    Some((plan, accesses))
}

/// Whether the run (blocks `inside`, exit `e`) can be bypassed: `e`'s phis take one value on all the run's edges, and an
/// entering block that also jumps to `e` gives that same value. The
/// entering blocks, and each phi of `e` with its value.
fn deletable(f: &Function, inside: &[bool], e: Block) -> Option<Entries> {
    let entering: Vec<Block> = f
        .layout
        .iter()
        .copied()
        .filter(|b| !inside[b.index()])
        .filter(|&b| {
            f.terminator(b)
                .is_some_and(|t| f.inst(t).kind.successors().any(|x| inside[x.index()]))
        })
        .collect();
    let mut phis = Vec::new();
    for &i in &f.blocks[e.index()].insts {
        let InstKind::Phi(entries) = &f.inst(i).kind else {
            break;
        };
        let mut from_run = entries.iter().filter(|(p, _)| inside[p.index()]);
        let &(_, v) = from_run.next()?;
        if from_run.any(|&(_, w)| w != v) {
            return None;
        }
        let clash = entries
            .iter()
            .any(|&(p, w)| entering.contains(&p) && w != v);
        if clash {
            return None;
        }
        phis.push((i, v));
    }
    Some((entering, phis))
}

/// Send the edges from `preds` to the blocks `inside` selects to the
/// exit `e` of a loop, each with the value each phi of `e` takes from the
/// loop (`phis`). For the edges that enter the loop, it is unreachable
/// then (DCE removes it and the phi entries that name it); for its back
/// edges, it runs once.
fn bypass(
    f: &mut Function,
    inside: impl Fn(Block) -> bool,
    e: Block,
    preds: &[Block],
    phis: &[(Inst, Value)],
) {
    for &p in preds {
        let t = f.terminator(p).expect("a predecessor ends in a terminator");
        let kind = &mut f.insts[t.index()].kind;
        kind.successors_mut()
            .filter(|x| inside(**x))
            .for_each(|x| *x = e);
        if let InstKind::Br(_, a, b) = *kind {
            if a == b {
                *kind = InstKind::Jmp(a);
            }
        }
    }
    for &(i, v) in phis {
        if let InstKind::Phi(entries) = &mut f.insts[i.index()].kind {
            for &p in preds {
                if !entries.iter().any(|&(q, _)| q == p) {
                    entries.push((p, v));
                }
            }
        }
    }
}

/// The latches of the loop `blocks` (marked in `inside`, entered from the
/// blocks `entering`) when it may run once instead of until it ends (rule
/// `dce.dead_loops_run_once`, module header): every edge from outside
/// enters it at its header, and each access in `unknown` (those whose
/// checks are not known made) checks values defined outside the loop and
/// stands in a block that dominates every latch. `None` otherwise.
fn checked_on_every_trip(
    f: &Function,
    blocks: &[Block],
    inside: &[bool],
    entering: &[Block],
    unknown: &[Inst],
) -> Option<Vec<Block>> {
    let h = blocks[0];
    let to_h = |b: Block| {
        f.terminator(b).is_some_and(|t| {
            f.inst(t)
                .kind
                .successors()
                .all(|x| x == h || !inside[x.index()])
        })
    };
    if !entering.iter().all(|&b| to_h(b)) {
        return None;
    }
    let defined_outside = |v: Value| {
        f.def_inst(v)
            .and_then(|d| f.inst(d).block)
            .is_none_or(|b| !inside[b.index()])
    };
    let invariant = unknown.iter().all(|&i| {
        let mut all = true;
        f.inst(i)
            .kind
            .for_each_operand(|v| all &= defined_outside(v));
        all
    });
    if !invariant {
        return None;
    }
    let latches: Vec<Block> = blocks
        .iter()
        .copied()
        .filter(|&b| {
            f.terminator(b)
                .is_some_and(|t| f.inst(t).kind.successors().any(|x| x == h))
        })
        .collect();
    let dominant = crate::analyses::with_analyses(f, |a| {
        let dom = a.dom(f);
        unknown.iter().all(|&i| {
            let b = f.inst(i).block;
            b.is_some_and(|b| latches.iter().all(|&l| dom.dominates(b, l)))
        })
    });
    dominant.then_some(latches)
}

/// Remove the entries for the blocks `preds` (no longer its predecessors)
/// from the phis of block `b`.
fn drop_entries(f: &mut Function, b: Block, preds: &[Block]) {
    let phis: Vec<Inst> = f.blocks[b.index()].insts.clone();
    for i in phis {
        let InstKind::Phi(entries) = &mut f.insts[i.index()].kind else {
            break;
        };
        entries.retain(|(p, _)| !preds.contains(p));
    }
}

/// Whether an instruction of a layout block outside those `inside` selects
/// uses a value defined inside them.
fn used_outside(f: &Function, inside: impl Fn(Block) -> bool) -> bool {
    let in_loop = |i: Inst| f.inst(i).block.is_some_and(&inside);
    f.layout.iter().filter(|&&b| !inside(b)).any(|&b| {
        f.blocks[b.index()].insts.iter().any(|&i| {
            let mut used = false;
            f.inst(i).kind.for_each_operand(|v| {
                used |= f.def_inst(v).is_some_and(in_loop);
            });
            used
        })
    })
}
