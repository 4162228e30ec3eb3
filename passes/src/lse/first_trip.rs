//! Idempotent stores out of loops: a store that writes a loop-invariant
//! value to a loop-invariant location that nothing else in the loop reads or
//! writes runs once, before the loop, when the loop's first trip would run
//! it (`lse.stores_hoisted_to_first_trip`, issue 13).
//!
//! The shape: an innermost loop of a reducible CFG with a pre-header `pre`
//! and header `H`; the store is in `H` (after only instructions that are
//! removable when unused: they write nothing observable and trap at most on
//! a resource limit) or in `S`, a successor of `H` whose one predecessor is
//! `H` and which dominates every latch (then all of `H` is removable when
//! unused, and so is what comes before the store in `S`). A list walk that
//! stores a constant in its body is the common case:
//!
//! ```text
//! H: %i = phi [pre: 0], [S: %i1]; %p = phi [pre: %p1], [S: %n]
//!    %c = and (slt %i, 2), (ne %p, null); br %c, S, exit
//! S: store %a.f, 5; %n = load %p.next; %i1 = add %i, 1; jmp H
//! ```
//!
//! becomes `pre: %c0 = and (slt 0, 2), (ne %p1, null); br %c0, P, H` with
//! `P: store %a.f, 5; jmp H`, and the loop, now without effects, is left to
//! DCE's dead-loop rule.
//!
//! Why this keeps every run's behaviour (the store's address operands and
//! value are defined outside the loop, and every other instruction of the
//! loop neither reads nor writes its location: plain accesses asked of the
//! alias analysis, the rest of `ir::effects`):
//! - every run of the store writes the same value to the same slot, and
//!   nothing else in the loop looks at that slot: running it `k >= 1`
//!   times leaves the heap as running it once, at every later point of the
//!   loop (a trap included) and after it;
//! - every trip that goes around passes `S`'s store (`S` dominates the
//!   latches), so the store runs at least once exactly when the first trip
//!   reaches it: always when it is in `H` or `H` jumps to `S`, else when
//!   `H`'s branch on its first run goes to `S`. That branch's condition is
//!   computed again in `pre` from `H`'s pure instructions, with each phi of
//!   `H` replaced by its value from `pre` (no load is copied);
//! - between `pre` and the store's first run the original runs only
//!   instructions that write nothing observable and cannot trap (resource
//!   limits aside) and do not read the location: running the store before
//!   them changes none of their results, and if it traps (a `null` base, an
//!   index out of bounds) it traps with the heap and the output the
//!   original had at its own trap. Nothing moves past the loop, so whether
//!   the loop ends does not matter.
//!
//! Never worse: the store runs once where the original ran it at least
//! once, and not at all where it did not; the copied instructions are pure.

use super::clobber::Clobbers;
use super::loc::{Loc, Subst};
use super::promote::{defined_outside, small_with_a_store};
use crate::alias::AliasResult;
use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::loops::{Loop, LoopInfo};
use ir::split_edge::split_edge;
use ir::{Block, Function, Inst, InstKind, Module, Value};

/// Stores hoisted per loop at most.
const MAX_STORES: usize = 8;
/// Instructions of the header copied into the pre-header at most.
const MAX_CLONES: usize = 16;

/// What hoisting did, for statistics.
#[derive(Clone, Copy, Debug, Default)]
pub struct HoistCounts {
    /// Stores hoisted out of a loop.
    pub stores: u64,
    /// Blocks made to hold stores run only when the first trip would
    /// (the CFG changed).
    pub blocks: u64,
}

/// Storage reused from run to run.
#[derive(Default)]
pub struct Scratch {
    /// Per block slot: in the loop analysed.
    in_loop: Vec<bool>,
}

/// When the first trip of a loop reaches the block after its header.
enum Reached {
    /// On every entry (the header jumps there).
    Always,
    /// When the header's branch condition goes that way on the first trip:
    /// the condition, whether its true edge leads there, and the header's
    /// instructions that compute it (in order).
    When {
        cond: Value,
        on_true: bool,
        clones: Vec<Inst>,
    },
}

/// The stores of one loop to hoist.
struct Plan {
    pre: Block,
    header: Block,
    /// Stores of the header, run on every entry.
    always: Vec<Inst>,
    /// Stores of the block after the header, and when the first trip gets there.
    after: Option<(Reached, Vec<Inst>)>,
}

/// Hoist the idempotent stores of `func`'s innermost loops (module header).
/// `dom` and `loops` are `cfg`'s; the CFG changes when a block is made
/// (`blocks` of the counts).
pub fn hoist(
    module: &Module,
    func: &mut Function,
    cfg: &Cfg,
    (dom, loops): (&DomTree, &LoopInfo),
    clobbers: &Clobbers<'_>,
    scratch: &mut Scratch,
) -> HoistCounts {
    let mut counts = HoistCounts::default();
    if !loops.is_reducible() {
        return counts;
    }
    let innermost = loops.innermost();
    // Copies are looked through on demand: no table of the whole function.
    let subst = Subst::empty();
    let mut plans: Vec<Plan> = Vec::new();
    scratch.in_loop.clear();
    scratch.in_loop.resize(func.blocks.len(), false);
    for (k, lp) in loops.loops().iter().enumerate() {
        let Some(pre) = lp.preheader else {
            continue;
        };
        if !innermost[k] || !small_with_a_store(func, lp) {
            continue;
        }
        for &b in &lp.blocks {
            scratch.in_loop[b.index()] = true;
        }
        let look = Look {
            module,
            func,
            clobbers,
            subst: &subst,
            lp,
            in_loop: &scratch.in_loop,
        };
        if let Some(plan) = look.plan(cfg, dom, pre) {
            plans.push(plan);
        }
        for &b in &lp.blocks {
            scratch.in_loop[b.index()] = false;
        }
    }
    for plan in plans {
        apply(func, plan, &mut counts);
    }
    counts
}

/// One loop being looked at.
struct Look<'a> {
    module: &'a Module,
    func: &'a Function,
    clobbers: &'a Clobbers<'a>,
    subst: &'a Subst,
    lp: &'a Loop,
    /// Per block slot: in `lp`.
    in_loop: &'a [bool],
}

impl Look<'_> {
    /// The stores to hoist out of the loop (pre-header `pre`), if any.
    fn plan(&self, cfg: &Cfg, dom: &DomTree, pre: Block) -> Option<Plan> {
        let header = self.lp.header;
        let mut budget = MAX_STORES;
        let (always, passed) = self.walk(header, &mut budget);
        let after = if passed {
            self.block_after_header(cfg, dom).and_then(|(s, reached)| {
                let (stores, _) = self.walk(s, &mut budget);
                (!stores.is_empty()).then_some((reached, stores))
            })
        } else {
            None
        };
        (!always.is_empty() || after.is_some()).then_some(Plan {
            pre,
            header,
            always,
            after,
        })
    }

    /// The stores of block `b` (after its phis) that can be hoisted, up to
    /// the first instruction that is neither one nor removable when unused;
    /// and whether the whole block was passed.
    fn walk(&self, b: Block, budget: &mut usize) -> (Vec<Inst>, bool) {
        let func = self.func;
        let mut stores = Vec::new();
        for &i in &func.blocks[b.index()].insts {
            let kind = &func.inst(i).kind;
            if kind.is_phi() {
                continue;
            }
            if kind.is_terminator() {
                return (stores, true);
            }
            if *budget > 0 && self.hoistable(i) {
                *budget -= 1;
                stores.push(i);
            } else if !self.effects(i).removable_if_unused() {
                return (stores, false);
            }
        }
        (stores, false)
    }

    fn effects(&self, i: Inst) -> ir::Effects {
        self.clobbers.effects(self.module, self.func, i)
    }

    /// Whether `v` is defined outside the loop.
    fn outside(&self, v: Value) -> bool {
        defined_outside(self.func, self.in_loop, v)
    }

    /// Whether `i` is a plain store of a value defined outside the loop to
    /// an address whose operands are, and no other instruction of the loop
    /// may read or write its location.
    fn hoistable(&self, i: Inst) -> bool {
        let func = self.func;
        let InstKind::Store {
            addr,
            value,
            volatile: false,
        } = &func.inst(i).kind
        else {
            return false;
        };
        if !self.outside(*value) || !addr.values().all(|v| self.outside(v)) {
            return false;
        }
        let loc = Loc::of(func, self.subst, addr);
        self.lp.blocks.iter().all(|&b| {
            func.blocks[b.index()]
                .insts
                .iter()
                .all(|&j| j == i || !self.touches(j, loc))
        })
    }

    /// Whether instruction `j` of the loop may read or write `loc`.
    fn touches(&self, j: Inst, loc: Loc) -> bool {
        let func = self.func;
        match &func.inst(j).kind {
            InstKind::Load {
                addr,
                volatile: false,
            }
            | InstKind::Store {
                addr,
                volatile: false,
                ..
            } => {
                let other = Loc::of(func, self.subst, addr);
                self.clobbers.alias(func, other, loc) != AliasResult::No
            }
            _ => {
                let eff = self.effects(j);
                self.clobbers.effect_reads(func, &eff, loc)
                    || self.clobbers.effect_writes(func, &eff, loc)
            }
        }
    }

    /// The block `S` after the header that every trip going around passes
    /// (its one predecessor is the header, it dominates every latch), and
    /// when the first trip reaches it.
    fn block_after_header(&self, cfg: &Cfg, dom: &DomTree) -> Option<(Block, Reached)> {
        let func = self.func;
        let header = self.lp.header;
        let (s, reached) = match func.inst(func.terminator(header)?).kind {
            InstKind::Jmp(s) => (s, Reached::Always),
            InstKind::Br(cond, t, f) if t != f => {
                let on_true = self.in_loop[t.index()];
                let s = if on_true { t } else { f };
                let clones = self.condition_clones(cond)?;
                (
                    s,
                    Reached::When {
                        cond,
                        on_true,
                        clones,
                    },
                )
            }
            _ => return None,
        };
        let fits = s != header
            && self.in_loop[s.index()]
            && cfg.preds(s) == [header]
            && self.lp.latches.iter().all(|&l| dom.dominates(s, l));
        fits.then_some((s, reached))
    }

    /// The header's instructions (not phis) that `cond` is computed from,
    /// in order, when all of them are pure and there are few.
    fn condition_clones(&self, cond: Value) -> Option<Vec<Inst>> {
        let func = self.func;
        let header = self.lp.header;
        let mut needed: Vec<Inst> = Vec::new();
        let mut work = vec![cond];
        while let Some(v) = work.pop() {
            let Some(i) = func.def_inst(v) else {
                continue;
            };
            let data = func.inst(i);
            if data.block != Some(header) || data.kind.is_phi() || needed.contains(&i) {
                continue;
            }
            if needed.len() == MAX_CLONES || !self.effects(i).is_pure() {
                return None;
            }
            needed.push(i);
            data.kind.for_each_operand(|o| work.push(o));
        }
        Some(
            func.blocks[header.index()]
                .insts
                .iter()
                .copied()
                .filter(|i| needed.contains(i))
                .collect(),
        )
    }
}

/// Carry out `plan`: the header's stores go to the end of the pre-header,
/// the next block's to the pre-header too when the header jumps there, or
/// else to a new block on the edge from the pre-header, entered when the
/// first trip's condition holds.
fn apply(func: &mut Function, plan: Plan, counts: &mut HoistCounts) {
    let Plan {
        pre,
        header,
        always,
        after,
    } = plan;
    counts.stores += always.len() as u64;
    move_to_end(func, pre, &always);
    let Some((reached, stores)) = after else {
        return;
    };
    counts.stores += stores.len() as u64;
    let Reached::When {
        cond,
        on_true,
        clones,
    } = reached
    else {
        move_to_end(func, pre, &stores);
        return;
    };
    let cond = first_trip_value(func, pre, header, &clones, cond);
    let label = format!("{}_first_trip", func.blocks[header.index()].name);
    let block = split_edge(func, pre, header, &label).expect("the pre-header jumps to the header");
    counts.blocks += 1;
    for (pos, &st) in stores.iter().enumerate() {
        func.remove_inst(st);
        func.insert_inst(block, pos, st);
    }
    let term = func.terminator(pre).expect("the pre-header's jmp");
    func.insts[term.index()].kind = if on_true {
        InstKind::Br(cond, block, header)
    } else {
        InstKind::Br(cond, header, block)
    };
    // The header's phis take from `pre` again what they take from `block`.
    for &i in &func.blocks[header.index()].insts.clone() {
        let InstKind::Phi(entries) = &mut func.insts[i.index()].kind else {
            break;
        };
        if let Some(&(_, v)) = entries.iter().find(|(p, _)| *p == block) {
            entries.push((pre, v));
        }
    }
}

/// Move `stores` (in order) to the end of block `pre`, before its terminator.
fn move_to_end(func: &mut Function, pre: Block, stores: &[Inst]) {
    for &st in stores {
        func.remove_inst(st);
        let pos = func.blocks[pre.index()].insts.len() - 1;
        func.insert_inst(pre, pos, st);
    }
}

/// The value `cond` (computed in `header` by `clones`, in order, from its
/// phis and values defined before the loop) has on the first trip: the
/// clones are copied to the end of `pre`, each phi read as its entry from
/// `pre`.
fn first_trip_value(
    func: &mut Function,
    pre: Block,
    header: Block,
    clones: &[Inst],
    cond: Value,
) -> Value {
    let mut map: Vec<(Value, Value)> = Vec::new();
    for &i in &func.blocks[header.index()].insts {
        let data = func.inst(i);
        let InstKind::Phi(entries) = &data.kind else {
            break;
        };
        if let (Some(r), Some(&(_, v))) = (data.result, entries.iter().find(|(p, _)| *p == pre)) {
            map.push((r, v));
        }
    }
    let look_up = |map: &[(Value, Value)], v: Value| {
        map.iter()
            .find(|(from, _)| *from == v)
            .map_or(v, |&(_, to)| to)
    };
    for &i in clones {
        let mut kind = func.inst(i).kind.clone();
        kind.for_each_operand_mut(|v| *v = look_up(&map, *v));
        let old = func
            .inst(i)
            .result
            .expect("a condition's part has a result");
        let ty = func.value_type(old);
        let (copy, new) = func.create_inst(kind, Some(ty));
        let pos = func.blocks[pre.index()].insts.len() - 1;
        func.insert_inst(pre, pos, copy);
        map.push((old, new.expect("a result")));
    }
    look_up(&map, cond)
}
