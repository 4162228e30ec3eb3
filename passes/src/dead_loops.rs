//! Loops whose work is never observed (run by `dce`, issue 13).
//!
//! Two rules over the natural loops ([`ir::LoopInfo`]) whose terminators are
//! all `jmp`/`br` and whose instructions cannot trap: each asked of
//! [`ir::effects::inst_effects`] — a trap at most on a resource limit, or a
//! plain (not volatile) access, `len` or check whose null or bounds check
//! the known-checked analysis ([`crate::checks`]) finds already made where
//! it stands — and that call nothing:
//!
//! - **A loop without effects** (`dce.dead_loops_removed`): one exit block
//!   `e`, every instruction removable when unused (no store), no value of
//!   the loop used outside it, and `e`'s phis taking one value from outside
//!   the loop on all its loop edges. The loop's entering edges go to `e`
//!   (with those phi values) and the loop is left unreachable. Sound without
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
//! Cost: one look at each block's terminator finds whether some block
//! jumps back in the layout; only then are the CFG, dominators and loops
//! computed, and the known-checked analysis runs only for the accesses of a
//! loop that passes every other test.

use crate::checks;
use crate::stats::Stats;
use ir::effects::{checked_by, inst_effects, Traps};
use ir::{Block, Cfg, DomTree, FuncId, Function, Inst, InstKind, LoopInfo, Module, Value};

/// Storage reused from function to function.
#[derive(Default)]
pub(crate) struct Scratch {
    cfg: Cfg,
    dom: DomTree,
    loops: LoopInfo,
    /// Per block slot: its position in the layout, plus one (0: not placed).
    pos: Vec<u32>,
    /// Per block slot: in the loop being looked at.
    inside: Vec<bool>,
    /// Per block slot: in a loop already chosen.
    taken: Vec<bool>,
    /// Per instruction: an access whose check must be known.
    needs: Vec<bool>,
}

/// What a loop that passed the structural tests is a candidate for.
enum Plan {
    /// Delete the loop: its header, its one exit, the blocks entering it
    /// and the value each phi of the exit takes from it.
    Delete {
        header: Block,
        exit: Block,
        entering: Vec<Block>,
        phis: Vec<(Inst, Value)>,
    },
    /// Delete these stores.
    Stores(Vec<Inst>),
}

/// The blocks entering a loop to delete, and each phi of its exit with the
/// value it takes from the loop.
type Entries = (Vec<Block>, Vec<(Inst, Value)>);

/// A candidate loop: its plan and the accesses whose checks must be known.
struct Candidate {
    plan: Plan,
    accesses: Vec<Inst>,
}

/// Apply both rules (module header) to function `fid`. Whether it changed.
pub(crate) fn fold_dead_loops(
    module: &mut Module,
    fid: FuncId,
    s: &mut Scratch,
    known: &mut checks::Scratch,
    stats: &mut Stats,
) -> bool {
    let f = &module.funcs[fid.index()];
    if f.layout.len() < 2 || !jumps_back(f, &mut s.pos) {
        return false;
    }
    s.cfg.recompute(f);
    if !s.cfg.has_retreating_edge() {
        return false;
    }
    s.dom.recompute(f, &s.cfg);
    s.loops.recompute(f, &s.cfg, &s.dom);
    let n = f.blocks.len();
    s.taken.clear();
    s.taken.resize(n, false);
    let mut candidates = Vec::new();
    let mut deleting = false;
    // Outermost first: a loop inside a chosen one is not looked at.
    for l in 0..s.loops.loops().len() {
        let lp = &s.loops.loops()[l];
        if lp.blocks.iter().any(|b| s.taken[b.index()]) {
            continue;
        }
        s.inside.clear();
        s.inside.resize(n, false);
        lp.blocks.iter().for_each(|b| s.inside[b.index()] = true);
        let Some(c) = candidate(module, f, lp, &s.cfg, &s.inside, deleting) else {
            continue;
        };
        deleting |= matches!(c.plan, Plan::Delete { .. });
        lp.blocks.iter().for_each(|b| s.taken[b.index()] = true);
        candidates.push(c);
    }
    if candidates.is_empty() {
        return false;
    }
    // The accesses of every candidate, asked about at once.
    s.needs.clear();
    s.needs.resize(f.insts.len(), false);
    let mut any_access = false;
    for c in &candidates {
        for &i in &c.accesses {
            s.needs[i.index()] = true;
            any_access = true;
        }
    }
    if any_access {
        let safe = checks::redundant_checks(module, f, |i| s.needs[i.index()], known);
        s.needs.iter_mut().for_each(|x| *x = false);
        safe.iter().for_each(|i| s.needs[i.index()] = true);
        candidates.retain(|c| c.accesses.iter().all(|i| s.needs[i.index()]));
    }
    let mut changed = false;
    for c in candidates {
        match c.plan {
            Plan::Delete {
                header,
                exit,
                entering,
                phis,
            } => {
                bypass(
                    &mut module.funcs[fid.index()],
                    header,
                    exit,
                    &entering,
                    &phis,
                );
                stats.add("dce", "dead_loops_removed", 1);
            }
            Plan::Stores(stores) => {
                module.funcs[fid.index()].remove_insts(&stores);
                stats.add("dce", "stores_in_loops_without_exit", stores.len() as u64);
            }
        }
        changed = true;
    }
    changed
}

/// Whether some block's terminator targets a block `h` placed no later
/// than it, and the blocks placed from `h` to it (where a loop usually
/// lies) could hold a loop for one of the rules ([`may_hold_a_rule`]): a
/// cheap filter before any analysis; `pos` is reused storage.
fn jumps_back(f: &Function, pos: &mut Vec<u32>) -> bool {
    pos.clear();
    pos.resize(f.blocks.len(), 0);
    for (k, &b) in f.layout.iter().enumerate() {
        pos[b.index()] = k as u32 + 1;
        let Some(t) = f.terminator(b) else {
            continue;
        };
        for h in f.inst(t).kind.successors() {
            match pos.get(h.index()) {
                Some(&p) if p != 0 && may_hold_a_rule(f, p as usize - 1, k, pos) => return true,
                _ => {}
            }
        }
    }
    false
}

/// Whether the layout blocks `first..=last` (placed: their `pos` is set,
/// later ones' is 0) call nothing, take no step, end in `jmp`/`br` only,
/// and either store and never leave the range, or store nothing, leave it
/// for one block only, and define no value used outside it.
fn may_hold_a_rule(f: &Function, first: usize, last: usize, pos: &[u32]) -> bool {
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
                | InstKind::Store { volatile: true, .. } => return false,
                InstKind::Store { .. } => stores = true,
                InstKind::Jmp(_) | InstKind::Br(..) => {
                    for x in kind.successors().filter(|&x| outside(x)) {
                        if exit.is_some_and(|e| e != x) {
                            return false;
                        }
                        exit = Some(x);
                    }
                }
                k if k.is_terminator() => return false,
                _ => {}
            }
        }
    }
    match (stores, exit) {
        (true, None) => true,
        (false, Some(_)) => !used_outside(f, |b| !outside(b)),
        _ => false,
    }
}

/// The plan for loop `lp` if it passes every test but the known checks
/// (module header). `inside` marks its blocks; with `deleting`, a loop
/// was already chosen for deletion and only stores are looked for (one
/// deletion per run keeps the CFG the others were judged on).
fn candidate(
    m: &Module,
    f: &Function,
    lp: &ir::Loop,
    cfg: &Cfg,
    inside: &[bool],
    deleting: bool,
) -> Option<Candidate> {
    let exit = match lp.exits.as_slice() {
        [] => None,
        [e] if !deleting => Some(*e),
        _ => return None,
    };
    let mut accesses = Vec::new();
    let mut stores = Vec::new();
    for &b in &lp.blocks {
        for &i in &f.blocks[b.index()].insts {
            let kind = &f.inst(i).kind;
            match kind {
                InstKind::Jmp(_) | InstKind::Br(..) | InstKind::Phi(_) => continue,
                InstKind::Call { .. }
                | InstKind::Load { volatile: true, .. }
                | InstKind::Store { volatile: true, .. } => return None,
                _ if kind.is_terminator() => return None,
                InstKind::Store { .. } if exit.is_some() => return None,
                InstKind::Store { .. } => stores.push(i),
                _ => {}
            }
            let eff = inst_effects(m, f, i);
            if eff.traps == Traps::May {
                checked_by(kind)?;
                accesses.push(i);
            }
            if exit.is_some()
                && !eff
                    .writes
                    .iter()
                    .all(|&w| w == ir::effects::HeapNode::Alloc)
            {
                return None;
            }
        }
    }
    let plan = match exit {
        None if stores.is_empty() => return None,
        None => Plan::Stores(stores),
        Some(e) => {
            let (entering, phis) = deletable(f, lp, cfg, inside, e)?;
            Plan::Delete {
                header: lp.header,
                exit: e,
                entering,
                phis,
            }
        }
    };
    Some(Candidate { plan, accesses })
}

/// Whether the loop (blocks `inside`, exit `e`) can be bypassed: no value
/// of it is used outside it, `e`'s phis take one value from outside on all
/// the loop's edges, and an entering block that also jumps to `e` gives
/// that same value. The entering blocks, and each phi of `e` with its value.
fn deletable(f: &Function, lp: &ir::Loop, cfg: &Cfg, inside: &[bool], e: Block) -> Option<Entries> {
    if used_outside(f, |b| inside[b.index()]) {
        return None;
    }
    let entering: Vec<Block> = cfg
        .preds(lp.header)
        .iter()
        .copied()
        .filter(|p| !inside[p.index()])
        .collect();
    let mut phis = Vec::new();
    for &i in &f.blocks[e.index()].insts {
        let InstKind::Phi(entries) = &f.inst(i).kind else {
            break;
        };
        let mut from_loop = entries.iter().filter(|(p, _)| inside[p.index()]);
        let &(_, v) = from_loop.next()?;
        if from_loop.any(|&(_, w)| w != v) {
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

/// Send the entering edges of a loop (from `preds`) to its exit `e`, each
/// with the value each phi of `e` takes from the loop (`phis`). The loop
/// is then unreachable (its header dominates it); DCE removes it and the
/// phi entries that name it.
fn bypass(f: &mut Function, header: Block, e: Block, preds: &[Block], phis: &[(Inst, Value)]) {
    for &p in preds {
        let t = f.terminator(p).expect("a predecessor ends in a terminator");
        let kind = &mut f.insts[t.index()].kind;
        kind.successors_mut()
            .filter(|x| **x == header)
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
