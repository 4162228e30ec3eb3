//! Global value numbering (`gvn`): hash-consing of pure instructions keyed on
//! opcode and (normalized) inputs, scoped by the dominator tree, so an
//! instruction is only ever replaced by an equivalent that dominates it — equal
//! expressions in the two arms of a branch stay apart. Instructions that trap
//! (a division by a variable, a `len` of a maybe-null array) are merged only
//! with a dominating identical one, which has already not trapped. Loads are
//! numbered within a block, as long as no instruction in between writes a heap
//! leaf the load reads (per `ir::effects`) at an address that may alias (per
//! [`crate::alias`]). Calls, allocations, volatile accesses and `escape` are
//! never numbered.

pub mod folds;
pub mod key;
pub mod table;

use crate::alias::{AliasAnalysis, AliasResult};
use crate::manager::Pass;
use crate::per_function::each_function_detached;
use crate::stats::Stats;
use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::effects::{inst_effects, sets_overlap, Effects};
use ir::uses::UseList;
use ir::{Block, Function, Inst, InstKind, Module, Value};
use key::{classify_with_effects, Class, Key};
use std::cell::RefCell;
use table::{hash_key, ScopedTable};

/// How many loads one block keeps numbered at a time (the excess is forgotten).
pub const LOAD_CAP: usize = 64;

/// How many instructions ahead a big function's walk prefetches the table
/// slot an instruction will look up: a random slot of an index bigger than
/// the cache costs a miss per instruction otherwise.
const PREFETCH_DISTANCE: usize = 4;

/// Functions with this many instruction slots may prefetch, once their index
/// has grown past 512 KiB; smaller ones keep their table in the cache and pay
/// nothing.
const PREFETCH_FROM_INSTS: usize = 1 << 15;

/// The `gvn` pass.
pub struct Gvn;

impl Pass for Gvn {
    fn name(&self) -> &'static str {
        "gvn"
    }

    fn run(&self, module: &mut Module, stats: &mut Stats) -> bool {
        each_function_detached(module, |module, func| run_function(module, func, stats))
    }
}

/// What one run merged.
#[derive(Default)]
struct Counts {
    pure: u64,
    phis: u64,
    loads: u64,
    guards: u64,
}

struct Walk<'a> {
    module: &'a Module,
    func: &'a mut Function,
    alias: AliasAnalysis,
    table: ScopedTable,
    /// The loads numbered in the current block (storage reused block to block).
    loads: Vec<(Key, Inst)>,
    /// Who uses each value, built at the first merge (most runs merge nothing).
    uses: UseList,
    uses_built: bool,
    counts: Counts,
}

/// One step of the dominator-tree walk.
enum Visit {
    Enter(Block),
    Exit,
}

/// Storage GVN reuses from run to run.
#[derive(Default)]
struct Scratch {
    cfg: Cfg,
    dom: DomTree,
    alias: AliasAnalysis,
    table: ScopedTable,
    loads: Vec<(Key, Inst)>,
    uses: UseList,
    stack: Vec<Visit>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Number the instructions of `func` (taken out of `module` while edited).
pub fn run_function(module: &Module, func: &mut Function, stats: &mut Stats) -> bool {
    if func.layout.is_empty() {
        return false;
    }
    let mut scratch = SCRATCH.with(|s| s.take());
    // A single block has no dominator tree to walk: skip building one.
    let single_block = func.layout.len() == 1;
    if !single_block {
        scratch.cfg.recompute(func);
        scratch.dom.recompute(func, &scratch.cfg);
    }
    let dom = &scratch.dom;
    scratch.table.reset(func.insts.len());
    scratch.alias.recompute(func);
    let mut w = Walk {
        module,
        alias: scratch.alias,
        table: scratch.table,
        loads: scratch.loads,
        uses: scratch.uses,
        uses_built: false,
        func,
        counts: Counts::default(),
    };
    let mut stack = scratch.stack;
    stack.clear();
    stack.push(Visit::Enter(w.func.entry()));
    let dom = (!single_block).then_some(dom);
    if w.func.insts.len() >= PREFETCH_FROM_INSTS {
        w.walk::<true>(dom, &mut stack);
    } else {
        w.walk::<false>(dom, &mut stack);
    }
    let c = &w.counts;
    let total = c.pure + c.phis + c.loads + c.guards;
    for (rule, n) in [
        ("pure_merged", c.pure),
        ("phis_merged", c.phis),
        ("loads_merged", c.loads),
        ("guards_merged", c.guards),
    ] {
        if n > 0 {
            stats.add("gvn", rule, n);
        }
    }
    if total > 0 {
        let insts = &w.func.insts;
        for b in &w.func.layout {
            w.func.blocks[b.index()]
                .insts
                .retain(|i| insts[i.index()].block.is_some());
        }
    }
    SCRATCH.with(|s| {
        *s.borrow_mut() = Scratch {
            cfg: scratch.cfg,
            dom: scratch.dom,
            alias: w.alias,
            table: w.table,
            loads: w.loads,
            uses: w.uses,
            stack,
        }
    });
    total > 0
}

/// Whether `kind` has `v` among its operands.
fn uses_value(kind: &InstKind, v: Value) -> bool {
    let mut found = false;
    kind.for_each_operand(|o| found |= o == v);
    found
}

impl Walk<'_> {
    /// Walk the dominator tree (`None`: a single block) from the entry on
    /// `stack`, numbering each block inside the scopes of its dominators.
    /// With `PREFETCH` (a function big enough for its table to outgrow the
    /// cache), the table slots of the instructions ahead are prefetched in
    /// the blocks entered once it has.
    fn walk<const PREFETCH: bool>(&mut self, dom: Option<&DomTree>, stack: &mut Vec<Visit>) {
        let children = |b: Block| dom.map_or(&[][..], |d| d.children(b));
        // Scopes closed since the last block was entered: closed together, as
        // nothing looks at the table in between.
        let mut exits = 0;
        while let Some(v) = stack.pop() {
            match v {
                Visit::Enter(b) => {
                    self.table.pop_scopes(std::mem::take(&mut exits));
                    self.table.push_scope();
                    // Only once the table has outgrown the cache.
                    let prefetch = PREFETCH && self.table.worth_prefetching();
                    if prefetch {
                        // The next block entered: `b`'s first child, else the
                        // next block waiting (a few scope exits down the stack).
                        let next = children(b).first().copied().or_else(|| {
                            stack.iter().rev().take(8).find_map(|v| match v {
                                Visit::Enter(c) => Some(*c),
                                Visit::Exit => None,
                            })
                        });
                        if let Some(c) = next {
                            (0..PREFETCH_DISTANCE).for_each(|pos| self.prefetch_ahead(c, pos));
                        }
                    }
                    if prefetch {
                        self.block::<true>(b);
                    } else {
                        self.block::<false>(b);
                    }
                    stack.push(Visit::Exit);
                    stack.extend(children(b).iter().rev().map(|&c| Visit::Enter(c)));
                }
                Visit::Exit => exits += 1,
            }
        }
        self.table.pop_scopes(exits);
    }

    /// Number the instructions of `b`; with `PREFETCH`, the table slots of
    /// the instructions ahead are prefetched. Inlined into the walk (one call
    /// per block cost the oracle's small functions 1.6 % of GVN).
    #[inline(always)]
    fn block<const PREFETCH: bool>(&mut self, b: Block) {
        let mut loads = std::mem::take(&mut self.loads);
        loads.clear();
        // Merging edits instructions but never a block's instruction list.
        for pos in 0..self.func.blocks[b.index()].insts.len() {
            if PREFETCH {
                self.prefetch_ahead(b, pos + PREFETCH_DISTANCE);
            }
            let inst = self.func.blocks[b.index()].insts[pos];
            if self.func.insts[inst.index()].block.is_none() {
                continue;
            }
            let (class, eff) = classify_with_effects(self.module, self.func, inst);
            match class {
                Class::Skip => {}
                Class::Scoped(key) => {
                    // Hashed once for the lookup and the insertion.
                    let h = hash_key(&key);
                    match self.table.find_hashed(&key, h) {
                        Some(leader) if self.merge(inst, leader) => {
                            let c = &mut self.counts;
                            match self.func.insts[inst.index()].kind {
                                InstKind::Phi(_) => c.phis += 1,
                                InstKind::Guard(_) => c.guards += 1,
                                _ => c.pure += 1,
                            }
                            continue;
                        }
                        Some(_) => {}
                        None => self.table.insert_hashed(key, h, inst),
                    }
                }
                Class::Load(key) => match loads.iter().find(|(k, _)| *k == key) {
                    Some(&(_, leader)) if self.merge(inst, leader) => {
                        self.counts.loads += 1;
                        continue;
                    }
                    Some(_) => {}
                    None if loads.len() < LOAD_CAP => loads.push((key, inst)),
                    None => {}
                },
            }
            // Nothing edited `inst` since it was classified: its effects stand.
            let eff = eff.unwrap_or_else(|| inst_effects(self.module, self.func, inst));
            if !eff.writes_nothing() {
                loads.retain(|&(_, load)| !self.clobbers(inst, &eff, load));
            }
        }
        self.loads = loads;
    }

    /// Start loading the table slot the instruction at `pos` of `b` will look
    /// up, when it is an operation that may be numbered (a guess from its
    /// opcode: the effects decide when it is reached; an operand edited by a
    /// merge in between makes the guess a wasted hint, nothing worse).
    fn prefetch_ahead(&self, b: Block, pos: usize) {
        let Some(&inst) = self.func.blocks[b.index()].insts.get(pos) else {
            return;
        };
        let kind = &self.func.insts[inst.index()].kind;
        if matches!(
            kind,
            InstKind::Binary(..) | InstKind::Unary(..) | InstKind::Select(..) | InstKind::Len(_)
        ) {
            self.table.prefetch(&Key::Op(key::normalize(kind.clone())));
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
                // The users of `old` come from the use list built at the
                // first merge: `old`'s instruction is visited only now, so no
                // earlier merge redirected anything to it or from it (merges
                // only redirect to leaders, which are never merged later).
                if !self.uses_built {
                    self.uses.recompute(self.func);
                    self.uses_built = true;
                }
                let func = &mut *self.func;
                for &u in self.uses.users(old) {
                    let data = &mut func.insts[u.index()];
                    if data.block.is_none() || !uses_value(&data.kind, old) {
                        continue;
                    }
                    // Edge lock: a numbered instruction leaves the table before it is edited.
                    self.table.unlock(u);
                    data.kind.for_each_operand_mut(|v| {
                        if *v == old {
                            *v = new;
                        }
                    });
                }
                // Copies of `old` now look through to `new`.
                self.alias.redirect(func, old, new);
            }
            (None, None) => {}
            _ => return false,
        }
        self.func.insts[inst.index()].block = None;
        true
    }
}
