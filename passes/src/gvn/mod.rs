//! Global value numbering (`gvn`): hash-consing of pure instructions keyed on
//! opcode and (normalized) inputs, scoped by the dominator tree, so an
//! instruction is only ever replaced by an equivalent that dominates it — equal
//! expressions in the two arms of a branch stay apart. Instructions that trap
//! (a division by a variable, a `len` of a maybe-null array) are merged only
//! with a dominating identical one, which has already not trapped. Loads are
//! numbered within a block, as long as no instruction in between writes a heap
//! leaf the load reads (per `ir::effects`) at an address that may alias (per
//! [`crate::alias`]); a call of a module function writes what its callee's
//! summary says ([`ir::summaries`]), so a load is merged across a call that
//! cannot write its leaf. Calls, allocations, volatile accesses and
//! `escape` are never numbered.
//!
//! A merge does not look for the users of the value it replaces: it records
//! the replacement in a dense per-value table, and each instruction reads
//! its operands through that table when the walk reaches it. Every use but
//! a phi's is dominated by its definition, so it is reached after any merge
//! of that definition; the phis of the blocks walked and the instructions of
//! the blocks never reached (unreachable ones) are rewritten once at the
//! end. The function ends exactly as if each merge had rewritten every use
//! at once, and the walk reads each instruction once. The alias facts are
//! computed when the first load is numbered (most functions have none).
//!
//! Two things go beyond hash-consing: phis of a loop header that are equal
//! by an optimistic, inductive argument are merged when the walk enters the
//! header ([`congruent`]), and an operation of two phis of one block merges
//! into a phi of the same operations ([`phi_ops`]). Before the walk, the
//! result of a call whose callee always returns the same constant or
//! argument is replaced by it, and arguments the callee never uses become
//! `0` or `null` ([`call_facts`]).

pub mod call_facts;
pub mod congruent;
pub mod folds;
pub mod key;
pub mod phi_ops;
pub mod table;

use crate::alias::{AliasAnalysis, AliasResult};
use crate::manager::Pass;
use crate::per_function::each_function_detached;
use crate::stats::Stats;
use congruent::Congruence;
use ir::dom::DomTree;
use ir::effects::{inst_effects, sets_overlap, Effects};
use ir::summaries::Summaries;
use ir::{Block, Function, Inst, InstKind, Module, Value};
use key::{classify_with_effects, Class, Key};
use phi_ops::PhiOps;
use std::cell::RefCell;
use table::ScopedTable;

/// How many loads one block keeps numbered at a time (the excess is forgotten).
pub const LOAD_CAP: usize = 64;

/// The `gvn` pass.
pub struct Gvn;

impl Pass for Gvn {
    /// It rewrites function bodies only.
    fn changes_declarations(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str {
        "gvn"
    }

    fn run(&self, module: &mut Module, stats: &mut Stats) -> bool {
        CALLS.with(|last| {
            let mut last = last.borrow_mut();
            // Read before any edit: GVN keeps each function's behaviour.
            let calls = crate::per_function::callee_summaries(module, &mut last);
            each_function_detached(module, |module, func| {
                run_function(module, calls, func, stats)
            })
        })
    }
}

/// What one run merged.
#[derive(Default)]
struct Counts {
    pure: u64,
    phis: u64,
    loads: u64,
    guards: u64,
    /// Loop-header phis merged into a congruent one.
    congruent: u64,
    /// Operations of two phis merged into a phi of operations.
    phi_ops: u64,
    /// Numbered loads a call of a module function kept, its summary saying
    /// it cannot write what they read (a call of unknown code forgets them).
    kept_across_calls: u64,
}

impl Counts {
    /// How many instructions were merged away.
    fn total(&self) -> u64 {
        self.pure + self.phis + self.loads + self.guards + self.congruent + self.phi_ops
    }
}

/// No replacement (in [`Walk::repl`]).
const NONE: u32 = u32::MAX;

struct Walk<'a> {
    module: &'a Module,
    /// What calls of module functions may do.
    calls: &'a Summaries,
    func: &'a mut Function,
    alias: &'a mut AliasAnalysis,
    /// Whether `alias` describes this function (computed at the first load).
    alias_ready: bool,
    table: &'a mut ScopedTable,
    /// The loads numbered in the current block (storage reused block to block).
    loads: &'a mut Vec<(Key, Inst)>,
    /// Per value: the value a merge replaced it by, or [`NONE`]. All
    /// [`NONE`] between runs (a run resets what it set).
    repl: &'a mut Vec<u32>,
    /// The values replaced so far, in merge order.
    merged: &'a mut Vec<Value>,
    /// The phis walked and kept (their entries may name values merged later).
    phis: &'a mut Vec<Inst>,
    /// How many blocks the walk entered.
    walked: usize,
    counts: Counts,
    /// Made at the first header looked at (boxed: it is rarely needed).
    congruence: &'a mut Option<Box<Congruence>>,
    /// The congruent phis of one header, with their leaders.
    pairs: &'a mut Vec<(Inst, Inst)>,
    /// What [`Congruence::find`] may still spend in this run.
    budget: usize,
    /// The phis of operations walked so far (made at the first one).
    phi_ops: &'a mut Option<Box<PhiOps>>,
}

/// One step of the dominator-tree walk.
enum Visit {
    Enter(Block),
    Exit,
}

/// Storage GVN reuses from run to run, borrowed in place by each run.
#[derive(Default)]
struct Scratch {
    /// Whether a run is using it: still set at the start of a run, it is
    /// what a run that unwound midway left behind (thrown away).
    busy: bool,
    alias: AliasAnalysis,
    table: ScopedTable,
    loads: Vec<(Key, Inst)>,
    repl: Vec<u32>,
    merged: Vec<Value>,
    phis: Vec<Inst>,
    stack: Vec<Visit>,
    congruence: Option<Box<Congruence>>,
    pairs: Vec<(Inst, Inst)>,
    phi_ops: Option<Box<PhiOps>>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
    /// The call summaries of the last run (see
    /// [`crate::per_function::callee_summaries`]).
    static CALLS: RefCell<Option<Summaries>> = const { RefCell::new(None) };
}

/// Number the instructions of `func` (taken out of `module` while edited);
/// `calls` says what calls of module functions may do.
pub fn run_function(
    module: &Module,
    calls: &Summaries,
    func: &mut Function,
    stats: &mut Stats,
) -> bool {
    if func.layout.is_empty() {
        return false;
    }
    let facts = call_facts::apply_call_facts(calls, func, stats);
    // A single block has no dominator tree to walk: skip building one.
    let walked = if func.layout.len() == 1 {
        run_walk(module, calls, func, stats, None)
    } else {
        crate::analyses::with_analyses_mut(func, |a, func| {
            let dom = a.dom(func);
            run_walk(module, calls, func, stats, Some(dom))
        })
    };
    walked || facts
}

/// Number the instructions of `func` walking `dom` (`None`: a single block).
fn run_walk(
    module: &Module,
    calls: &Summaries,
    func: &mut Function,
    stats: &mut Stats,
    dom: Option<&DomTree>,
) -> bool {
    SCRATCH.with(|cell| {
        let mut guard = cell.borrow_mut();
        let scratch = &mut *guard;
        if scratch.busy {
            *scratch = Scratch::default();
        }
        scratch.busy = true;
        let changed = walk_with(scratch, module, calls, func, stats, dom);
        scratch.busy = false;
        changed
    })
}

/// [`run_walk`] with the thread's scratch.
fn walk_with(
    scratch: &mut Scratch,
    module: &Module,
    calls: &Summaries,
    func: &mut Function,
    stats: &mut Stats,
    dom: Option<&DomTree>,
) -> bool {
    let Scratch {
        busy: _,
        alias,
        table,
        loads,
        repl,
        merged,
        phis,
        stack,
        congruence,
        pairs,
        phi_ops,
    } = scratch;
    table.reset(func.values.len());
    merged.clear();
    phis.clear();
    if let Some(ops) = phi_ops {
        ops.clear();
    }
    // The congruence search reads at most about twice the function.
    let budget = 2 * func.insts.len() + 64;
    let mut w = Walk {
        module,
        calls,
        alias,
        alias_ready: false,
        table,
        loads,
        repl,
        merged,
        phis,
        walked: 0,
        func,
        counts: Counts::default(),
        congruence,
        pairs,
        budget,
        phi_ops,
    };
    stack.clear();
    stack.push(Visit::Enter(w.func.entry()));
    w.walk(dom, stack);
    if !w.merged.is_empty() {
        w.rewrite_the_rest(dom);
    }
    for &v in w.merged.iter() {
        w.repl[v.index()] = NONE;
    }
    let c = &w.counts;
    let total = c.total();
    for (rule, n) in [
        ("pure_merged", c.pure),
        ("phis_merged", c.phis),
        ("loads_merged", c.loads),
        ("guards_merged", c.guards),
        ("congruent_phis", c.congruent),
        ("phi_of_ops", c.phi_ops),
        ("loads_kept_across_calls", c.kept_across_calls),
    ] {
        if n > 0 {
            stats.add("gvn", rule, n);
        }
    }
    total > 0
}

/// `v` as read through `repl`.
#[inline]
fn read(repl: &[u32], v: Value) -> Value {
    match repl.get(v.index()) {
        Some(&r) if r != NONE => Value(r),
        _ => v,
    }
}

/// Read every operand of `kind` through `repl`.
#[inline]
fn rewrite(kind: &mut InstKind, repl: &[u32]) {
    kind.for_each_operand_mut(|v| {
        if let Some(&r) = repl.get(v.index()) {
            if r != NONE {
                *v = Value(r);
            }
        }
    });
}

impl Walk<'_> {
    /// Walk the dominator tree (`None`: a single block) from the entry on
    /// `stack`, numbering each block inside the scopes of its dominators.
    fn walk(&mut self, dom: Option<&DomTree>, stack: &mut Vec<Visit>) {
        let children = |b: Block| dom.map_or(&[][..], |d| d.children(b));
        // Scopes closed since the last block was entered: closed together, as
        // nothing looks at the table in between.
        let mut exits = 0;
        while let Some(v) = stack.pop() {
            match v {
                Visit::Enter(b) => {
                    self.table.pop_scopes(std::mem::take(&mut exits));
                    self.table.push_scope();
                    self.walked += 1;
                    self.block(b, dom);
                    stack.push(Visit::Exit);
                    stack.extend(children(b).iter().rev().map(|&c| Visit::Enter(c)));
                }
                Visit::Exit => exits += 1,
            }
        }
        self.table.pop_scopes(exits);
    }

    /// Number the instructions of `b`. Inlined into the walk (one call per
    /// block cost the oracle's small functions 1.6 % of GVN).
    #[inline(always)]
    fn block(&mut self, b: Block, dom: Option<&DomTree>) {
        let mut loads = std::mem::take(self.loads);
        loads.clear();
        if let Some(dom) = dom {
            let insts = &self.func.blocks[b.index()].insts;
            let is_phi = |k: usize| {
                insts
                    .get(k)
                    .is_some_and(|i| self.func.insts[i.index()].kind.is_phi())
            };
            if is_phi(1) {
                self.congruent_phis(b, dom);
            }
        }
        let merged_before = self.counts.total();
        // Merging edits instructions but not the block's instruction list
        // until the block is done.
        for pos in 0..self.func.blocks[b.index()].insts.len() {
            let inst = self.func.blocks[b.index()].insts[pos];
            if !self.merged.is_empty() {
                rewrite(&mut self.func.insts[inst.index()].kind, self.repl);
            }
            let mark = self.table.arena_mark();
            let (class, eff) =
                classify_with_effects(self.module, self.func, inst, self.table.arena_mut());
            // A (placed) phi is always numbered in the table.
            let is_phi =
                matches!(class, Class::Scoped(_)) && self.func.insts[inst.index()].kind.is_phi();
            match class {
                Class::Skip => {}
                Class::Scoped(key) => {
                    // Hashed once for the lookup and the insertion.
                    let h = self.table.hash(&key);
                    match self.table.find_hashed(&key, h) {
                        Some(leader) if self.merge(inst, leader) => {
                            self.table.forget_keys_since(mark);
                            let c = &mut self.counts;
                            match self.func.insts[inst.index()].kind {
                                InstKind::Phi(_) => c.phis += 1,
                                InstKind::Guard(_) => c.guards += 1,
                                _ => c.pure += 1,
                            }
                            continue;
                        }
                        Some(_) => self.table.forget_keys_since(mark),
                        None => match self.phi_of_ops(inst) {
                            // Later copies of `inst` find the phi.
                            Some(x) => {
                                self.table.insert_hashed(key, h, x);
                                self.counts.phi_ops += 1;
                                continue;
                            }
                            None => self.table.insert_hashed(key, h, inst),
                        },
                    }
                }
                Class::Load(key) => {
                    if !self.alias_ready {
                        self.compute_alias();
                    }
                    match loads.iter().find(|(k, _)| *k == key) {
                        Some(&(_, leader)) if self.merge(inst, leader) => {
                            self.counts.loads += 1;
                            continue;
                        }
                        Some(_) => {}
                        None if loads.len() < LOAD_CAP => loads.push((key, inst)),
                        None => {}
                    }
                }
            }
            if is_phi {
                self.phis.push(inst);
                if phi_ops::may_file(self.func, inst) {
                    let repl = &self.repl;
                    let ops = self.phi_ops.get_or_insert_with(Default::default);
                    ops.file(self.func, inst, |v| read(repl, v));
                }
            }
            // What `inst` writes matters only to the loads numbered: with
            // none, nothing is clobbered or kept across a call.
            if loads.is_empty() {
                continue;
            }
            // Nothing edited `inst` since it was classified: its effects stand.
            let eff = eff.unwrap_or_else(|| self.calls.inst_effects(self.module, self.func, inst));
            if !eff.writes_nothing() {
                loads.retain(|&(_, load)| !self.clobbers(inst, &eff, load));
            }
            if !loads.is_empty() && self.calls.is_summarized_call(self.func, inst) {
                self.counts.kept_across_calls += loads.len() as u64;
            }
        }
        *self.loads = loads;
        if self.counts.total() > merged_before {
            let insts = &self.func.insts;
            self.func.blocks[b.index()]
                .insts
                .retain(|i| insts[i.index()].block.is_some());
        }
    }

    /// Merge the phis of header `b` congruent to an earlier one
    /// ([`congruent`]) before the block is walked: their uses are all
    /// walked later (the header dominates them) or are phis, rewritten at
    /// the end. A leader is its class's first phi, which the walk keeps (a
    /// phi with the same key as it would be in its class).
    fn congruent_phis(&mut self, b: Block, dom: &DomTree) {
        let mut pairs = std::mem::take(self.pairs);
        pairs.clear();
        let cx = congruent::Ctx {
            module: self.module,
            func: self.func,
            dom,
            repl: self.repl,
        };
        let congruence = self.congruence.get_or_insert_with(Default::default);
        congruence.find(&cx, b, &mut self.budget, &mut pairs);
        for &(phi, leader) in &pairs {
            // Two congruent phis of different reference types (both `null`
            // on entry) are equal values all the same: the others' proof
            // stands when this pair stays apart.
            let merged = self.merge(phi, leader);
            self.counts.congruent += u64::from(merged);
        }
        if !pairs.is_empty() {
            let insts = &self.func.insts;
            self.func.blocks[b.index()]
                .insts
                .retain(|i| insts[i.index()].block.is_some());
        }
        *self.pairs = pairs;
    }

    /// The phi of operations binary operation `inst` equals ([`phi_ops`]),
    /// merged into it; `None` (and `inst` kept) when there is none.
    fn phi_of_ops(&mut self, inst: Inst) -> Option<Inst> {
        let ops = self.phi_ops.as_mut().filter(|ops| !ops.is_empty())?;
        let repl = &self.repl;
        let x = ops.find(self.func, inst, |v| read(repl, v))?;
        self.merge(inst, x).then_some(x)
    }

    /// Compute the alias facts of the function as it stands: as if every
    /// merge so far had rewritten all its uses (the rest is rewritten first).
    fn compute_alias(&mut self) {
        if !self.merged.is_empty() {
            for &b in &self.func.layout {
                for &i in &self.func.blocks[b.index()].insts {
                    rewrite(&mut self.func.insts[i.index()].kind, self.repl);
                }
            }
        }
        self.alias.recompute(self.func);
        self.alias_ready = true;
    }

    /// After the walk: rewrite the uses no instruction reached since the
    /// merge: phi entries (a back edge's value is merged after its phi is
    /// walked) and the instructions of blocks the walk never entered.
    fn rewrite_the_rest(&mut self, dom: Option<&DomTree>) {
        let func = &mut *self.func;
        for &phi in self.phis.iter() {
            rewrite(&mut func.insts[phi.index()].kind, self.repl);
        }
        if self.walked < func.layout.len() {
            let entry = func.entry();
            for &b in &func.layout {
                if !dom.map_or(b == entry, |d| d.is_reachable(b)) {
                    for &i in &func.blocks[b.index()].insts {
                        rewrite(&mut func.insts[i.index()].kind, self.repl);
                    }
                }
            }
        }
        #[cfg(debug_assertions)]
        for i in func.inst_iter() {
            func.insts[i.index()].kind.for_each_operand(|v| {
                debug_assert!(
                    self.repl.get(v.index()).is_none_or(|&r| r == NONE),
                    "{v:?} was merged but is still used"
                )
            });
        }
    }

    /// Whether `writer` (with effects `eff`) may change what `load` reads.
    fn clobbers(&self, writer: Inst, eff: &Effects, load: Inst) -> bool {
        let reads = inst_effects(self.module, self.func, load).reads;
        if !sets_overlap(&eff.writes, &reads) {
            return false;
        }
        match (
            &self.func.insts[writer.index()].kind,
            &self.func.insts[load.index()].kind,
        ) {
            (
                InstKind::Store {
                    addr: sa,
                    volatile: false,
                    ..
                },
                InstKind::Load { addr: la, .. },
            ) => self.alias.addrs(self.func, sa, la) != AliasResult::No,
            _ => true,
        }
    }

    /// Replace `inst` by its dominating equivalent `leader`; false when their
    /// result types differ (then both stay).
    fn merge(&mut self, inst: Inst, leader: Inst) -> bool {
        let old = self.func.insts[inst.index()].result;
        let new = self.func.insts[leader.index()].result;
        match (old, new) {
            (Some(old), Some(new)) => {
                if self.func.value_type(old) != self.func.value_type(new) {
                    return false;
                }
                // `old`'s instruction is walked only now, so no earlier
                // merge replaced it, and `new`, a leader walked before, is
                // never replaced later: one step of `repl` is the answer.
                if self.repl.len() <= old.index() {
                    self.repl
                        .resize(self.func.values.len().max(old.index() + 1), NONE);
                }
                self.repl[old.index()] = new.0;
                self.merged.push(old);
                if self.alias_ready {
                    // Copies of `old` now look through to `new`.
                    self.alias.redirect(self.func, old, new);
                }
            }
            (None, None) => {}
            _ => return false,
        }
        self.func.insts[inst.index()].block = None;
        true
    }
}
