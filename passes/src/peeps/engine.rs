//! The iteration engine: pull an instruction, try the rules, apply the first
//! change, and put the neighbourhood back on the worklist — the users, the
//! former inputs, and every instruction that registered a dependency on the
//! changed one. Runs until the worklist is empty, with CFG cleanup between
//! rounds, and can check the invariant "every instruction is on the worklist
//! or no rule applies to it". The CFG and dominator tree are only rebuilt when
//! an edge changed since they were computed, and the engine's lists live in
//! buffers reused from run to run ([`super::scratch`]).

use super::cfg_state::CfgState;
use super::deps::InstLists;
use super::rule::{Change, MatchCtx, Opnd};
use super::rules::{may_match, rules, rules_for};
use super::scratch::{self, Scratch};
use super::worklist::{Worklist, UNIFORM_UP_TO};
use ir::{Function, Inst, InstKind, UnOp, Value};
use smallvec::SmallVec;

/// When the fixed-point invariant is checked.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum CheckMode {
    /// Never.
    Off,
    /// Once, when the worklist has run dry.
    FixedPoint,
    /// After every applied rule, and at the end (quadratic; for debugging rules).
    EveryStep,
}

/// Options of one run of the engine.
#[derive(Copy, Clone, Debug)]
pub struct EngineOptions {
    /// Seed of the worklist's pseudo-random pull.
    pub seed: u64,
    /// When to check the invariant.
    pub check: CheckMode,
    /// Test hook: the dependencies this rule registers are dropped.
    pub drop_deps_of: Option<&'static str>,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct EngineReport {
    /// How often each rule of [`rules`] fired, by position in the table.
    pub fired: Vec<u64>,
    /// Unreachable blocks removed.
    pub blocks_removed: u64,
    /// Blocks merged into their single predecessor.
    pub blocks_merged: u64,
    /// Empty diamonds turned into a jump (`diamonds`).
    pub empty_diamonds: u64,
    /// Branches with equal arms turned into a jump (`branch_folds`).
    pub equal_arms: u64,
    /// Branches whose arms are the same certain trap turned into a jump (`branch_folds`).
    pub equal_trapping_arms: u64,
    /// Branches decided by a dominating branch turned into a jump (`branch_folds`).
    pub decided_branches: u64,
}

impl EngineReport {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.edits() > 0
    }

    /// How many edits were made: every change the engine makes to the
    /// function is one of these counts.
    fn edits(&self) -> u64 {
        self.blocks_removed
            + self.blocks_merged
            + self.empty_diamonds
            + self.equal_arms
            + self.equal_trapping_arms
            + self.decided_branches
            + self.fired.iter().sum::<u64>()
    }
}

/// The state of one run over one function.
pub(crate) struct Engine<'f> {
    pub(crate) func: &'f mut Function,
    /// The snapshot CFG (and its dominator tree) rules see, and the current CFG.
    pub(crate) cfgs: CfgState,
    /// The user and dependency lists, the worklist and the temporaries
    /// (buffers reused from run to run).
    pub(crate) s: &'f mut Scratch,
    pub(crate) report: EngineReport,
    /// A branch was folded since the last CFG cleanup.
    pub(crate) cfg_dirty: bool,
    opts: EngineOptions,
    /// An instruction was detached since the last `compact` (true at the
    /// start when the lists came in holding detached instructions).
    detached_since_compact: bool,
    /// The next `compact` looks at every block, not just the dirty ones, and
    /// asks the instructions themselves whether they are placed.
    compact_all: bool,
    /// Block merges that moved no phi since the run began: they leave what
    /// the decided-branches walk finds as it was (see
    /// [`Engine::decide_key`]).
    pub(crate) phi_free_merges: u64,
    /// The [`Engine::decide_key`] when the decided-branches walk last found
    /// nothing (`None` before the first walk, or after one that decided).
    pub(crate) decide_found_nothing_at: Option<u64>,
    /// Whether `s.bufs.cfg` describes the function: no edge, layout or
    /// block's last instruction changed since it was computed (see
    /// [`Engine::current_edges`]).
    pub(crate) edges_current: bool,
    /// Whether `s.users` describes the function. They are built just before
    /// the function is first edited (from the function as it came in), so a
    /// run that changes nothing never builds them; a function over
    /// [`UNIFORM_UP_TO`] instructions gets them in the worklist's fill walk.
    users_built: bool,
    /// The function came in with over [`UNIFORM_UP_TO`] instructions: the
    /// worklist takes only instructions a rule may match ([`may_match`]).
    matchable_only: bool,
}

/// Functions with this many instruction slots prefetch what the worklist's
/// next visits read (their instructions outgrow the L2); smaller ones keep
/// them in the cache and pay nothing.
const PREFETCH_FROM_INSTS: usize = 1 << 15;

/// A hint to bring `x` into the cache (nothing else happens).
#[inline(always)]
fn prefetch<T>(x: &T) {
    let p: *const T = x;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; `p` points at a live `T`.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Run the peephole engine on `func` to its fixed point.
pub fn run_engine(func: &mut Function, opts: EngineOptions) -> Result<EngineReport, String> {
    if func.layout.is_empty() {
        return Ok(EngineReport::default());
    }
    scratch::with_scratch(|s| {
        let mut e = Engine::new(func, opts, s);
        e.run(opts.check).map(|()| e.report)
    })
}

impl<'f> Engine<'f> {
    fn new(func: &'f mut Function, opts: EngineOptions, s: &'f mut Scratch) -> Engine<'f> {
        s.deps.reset(func.insts.len());
        s.bufs.dirty.clear();
        s.bufs.gone.clear();
        s.bufs.gone.resize(func.insts.len().div_ceil(64), 0);
        let mut stale = false;
        s.work.reset(func.insts.len(), opts.seed);
        s.bufs.phis_in.clear();
        // A function too big for the cache gets its user lists in this same
        // walk over the instructions, not in a second one at the first edit
        // (at 100k instructions each walk missed the cache on most of them).
        let eager = func.insts.len() > UNIFORM_UP_TO;
        if eager {
            s.users.reset(func.values.len());
        }
        let (users, phis) = (&mut s.users, &mut s.bufs.phis_in);
        // Notes what the engine keeps of `inst`; returns whether it goes on
        // the list: in a big function, only if a rule may match it.
        let mut look = |&inst: &Inst| {
            let data = &func.insts[inst.index()];
            if data.kind.is_phi() {
                phis.note(inst, data.block);
            }
            stale |= data.block.is_none();
            if eager {
                note_operands(users, &data.kind, inst);
            }
            !eager || may_match(&data.kind)
        };
        if eager {
            // Last block first: the walk ends at the front of the layout,
            // where the drain starts, so that the drain finds it in the
            // cache. The worklist comes out as from a walk in layout order;
            // the user lists name their users last first, which changes only
            // the order in which a change pushes them (the visiting order of
            // a big function, which the seed shakes anyway; the rules are
            // confluent, so the result is the same). Only instructions some
            // rule may match go on the list: visiting the others (loads,
            // stores, calls, jumps: most of a big function, often) finds no
            // rule, and at 100k instructions it read each of them again, out
            // of the cache, with their operands' definitions.
            // One fill per block: a filter over one flat list runs as a
            // tighter loop than over the blocks' lists chained.
            for b in func.layout.iter().rev() {
                let insts = func.blocks[b.index()].insts.iter().rev();
                s.work.fill(insts.copied().filter(&mut look));
            }
            s.work.filled_last_first();
            s.bufs.phis_in.reverse();
            // Only here: a small function's blocks are in the cache, and
            // it reads them.
            s.bufs.phis_in.index(func.blocks.len());
        } else {
            s.work.fill(func.inst_iter().inspect(|i| {
                look(i);
            }));
            s.work.pull_in_push_order();
        }
        Engine {
            func,
            cfgs: CfgState::new(!s.bufs.phis_in.is_empty()),
            s,
            report: EngineReport {
                fired: vec![0; rules().len()],
                ..EngineReport::default()
            },
            // The first round always cleans the CFG up.
            cfg_dirty: true,
            opts,
            detached_since_compact: stale,
            compact_all: stale,
            users_built: eager,
            matchable_only: eager,
            phi_free_merges: 0,
            decide_found_nothing_at: None,
            edges_current: false,
        }
    }

    /// The key of the function's state for the decided-branches walk when
    /// `edits` edits were made: those edits less the block merges that moved
    /// no phi. A merge of `b` into its single predecessor `a` (which jumped
    /// to it) keeps every dominance relation between the remaining blocks,
    /// every single-entry edge and its branch, and (moving no phi) every
    /// branch condition: the walk, which reads only those, finds what it
    /// found before. So while this key is unchanged since a walk that found
    /// nothing, another walk would find nothing too (at 100k instructions
    /// each walk rebuilt the CFG and dominator tree, a cache miss on most
    /// blocks).
    pub(crate) fn decide_key(&self, edits: u64) -> u64 {
        edits - self.phi_free_merges
    }

    /// Build the user lists from the function as it came in: every edit
    /// calls this first, before touching the function.
    pub(crate) fn ensure_users(&mut self) {
        if self.users_built {
            return;
        }
        self.users_built = true;
        let (func, users) = (&*self.func, &mut self.s.users);
        users.reset(func.values.len());
        for inst in func.inst_iter() {
            note_operands(users, &func.insts[inst.index()].kind, inst);
        }
    }

    /// Rounds of rewriting and CFG cleanup until nothing is left to do, then
    /// the fixed-point check `check` asks for.
    fn run(&mut self, check: CheckMode) -> Result<(), String> {
        // Whether the block lists came in holding only placed instructions
        // (otherwise the first `compact` edits them, unreported).
        let came_in_compact = !self.compact_all;
        // The edit count when the branch folds last found nothing: with no
        // edit since (the first round's cleanup and phi revisits often
        // change nothing), they would look at the same function again and
        // find nothing again, so they are not run.
        let mut folds_found_nothing_at = None;
        loop {
            self.drain()?;
            self.compact();
            let edits = self.report.edits();
            if folds_found_nothing_at != Some(edits) {
                if self.fold_branches(edits) {
                    self.cfg_dirty = true;
                } else {
                    folds_found_nothing_at = Some(edits);
                }
            }
            if !self.cfg_dirty {
                break;
            }
            self.cfg_dirty = false;
            // `recompute_dom` below snapshots again before any rule runs.
            self.cfgs.retire();
            self.cleanup_cfg();
            self.compact();
            self.recompute_dom();
        }
        // A run that changed nothing visited every placed instruction a rule
        // may match once, found no rule for it, and left the function (and
        // so the snapshot the rules see) as it was: the check would ask the
        // same questions of the same function, and it is not repeated.
        let unchanged = came_in_compact && !self.report.changed();
        if check != CheckMode::Off && !unchanged {
            self.check_fixed_point(&[])?;
        }
        Ok(())
    }

    /// An edge, the layout or a block's last instruction is about to change.
    pub(crate) fn before_cfg_change(&mut self) {
        self.edges_current = false;
        self.cfgs.before_change(self.func);
    }

    /// The branch `term` is about to become a `jmp` (no other edge, block
    /// list or layout change).
    pub(crate) fn before_branch_change(&mut self, term: Inst) {
        self.edges_current = false;
        self.cfgs.before_terminator_change(self.func, term);
    }

    pub(crate) fn placed(&self, inst: Inst) -> bool {
        self.func.insts[inst.index()].block.is_some()
    }

    /// The first rule that applies to `inst`; the dependencies registered
    /// while looking are appended to `deps`.
    #[inline]
    fn find(&self, inst: Inst, deps: &mut Vec<(Inst, Inst)>) -> Option<(usize, Change)> {
        let candidates = self.candidates(inst);
        if candidates.is_empty() {
            return None;
        }
        self.find_among(inst, candidates, deps)
    }

    /// The rules whose pattern root can match `inst` (none for most
    /// instructions that are not operations: those are not looked at further).
    #[inline]
    fn candidates(&self, inst: Inst) -> &'static [usize] {
        rules_for(&self.func.insts[inst.index()].kind)
    }

    /// [`Engine::find`] among `candidates`, the rules for `inst`.
    fn find_among(
        &self,
        inst: Inst,
        candidates: &[usize],
        deps: &mut Vec<(Inst, Inst)>,
    ) -> Option<(usize, Change)> {
        let mut cx = MatchCtx::with_lazy_dom(self.func, &self.cfgs, self.opts.drop_deps_of);
        cx.deps = std::mem::take(deps);
        cx.set_current(inst);
        let table = rules();
        let mut found = None;
        for &k in candidates {
            let rule = &table[k];
            cx.rule = rule.name;
            if let Some(change) = (rule.matcher)(&mut cx, inst) {
                found = Some((k, change));
                break;
            }
        }
        *deps = cx.deps;
        found
    }

    /// Apply rules until the worklist is empty. A pulled instruction's waiting
    /// inputs are visited first (depth first, each taken off the list once), so
    /// a chain like `((x + 1) + 1) + 1` re-associates in one step per link
    /// instead of walking every link down the chain: linear, whatever the seed.
    fn drain(&mut self) -> Result<(), String> {
        let mut stack = std::mem::take(&mut self.s.bufs.stack);
        stack.clear();
        // In a function too big for the cache, the instruction the pulls
        // reach next is fetched while the window's are visited (its first
        // read missed the cache on most visits at 100k instructions), and
        // then the operands of a binary one (their definitions are looked up
        // first).
        let ahead = self.func.insts.len() >= PREFETCH_FROM_INSTS;
        while let Some(inst) = {
            let (insts, values) = (&self.func.insts, &self.func.values);
            self.s.work.pop_looking_ahead(|far, near| {
                if !ahead {
                    return;
                }
                // Its first and last field: 48 bytes may straddle two lines.
                let data = &insts[far.index()];
                prefetch(&data.kind);
                prefetch(&data.block);
                // Only a binary operation's: a full operand walk per visit
                // cost more than it saved.
                if let InstKind::Binary(_, a, b) = insts[near.index()].kind {
                    prefetch(&values[a.index()]);
                    prefetch(&values[b.index()]);
                }
            })
        } {
            stack.push(inst);
            while let Some(&top) = stack.last() {
                if self.placed(top) && !self.func.insts[top.index()].kind.is_phi() {
                    let mut waiting = None;
                    self.func.insts[top.index()].kind.for_each_operand(|v| {
                        if waiting.is_none() {
                            waiting = self.func.def_inst(v).filter(|&d| self.s.work.contains(d));
                        }
                    });
                    if let Some(d) = waiting {
                        self.s.work.remove(d);
                        stack.push(d);
                        continue;
                    }
                }
                stack.pop();
                if self.visit(top) && self.opts.check == CheckMode::EveryStep {
                    // The instructions still on the stack were taken off the
                    // worklist but not yet visited: they are waiting too.
                    self.check_fixed_point(&stack)?;
                }
            }
        }
        self.s.bufs.stack = stack;
        Ok(())
    }

    /// Try the rules on `inst` and apply the first that matches; returns
    /// whether one did.
    fn visit(&mut self, inst: Inst) -> bool {
        if !self.placed(inst) {
            return false;
        }
        let candidates = self.candidates(inst);
        if candidates.is_empty() {
            return false;
        }
        let mut deps = std::mem::take(&mut self.s.bufs.match_deps);
        deps.clear();
        let found = self.find_among(inst, candidates, &mut deps);
        for &(distant, dependent) in &deps {
            // Duplicates are harmless (revisiting pushes onto the worklist,
            // which keeps the first occurrence, so the order is the same as
            // with a deduplicated list) and bounded by the visits made; only
            // back-to-back repeats are skipped, so each push is O(1).
            self.s.deps.push(distant.index(), dependent);
        }
        self.s.bufs.match_deps = deps;
        match found {
            Some((k, change)) => {
                self.report.fired[k] += 1;
                self.apply(inst, change);
                true
            }
            None => false,
        }
    }

    fn opnd(&mut self, o: Opnd) -> Value {
        match o {
            Opnd::Val(v) => v,
            Opnd::Const(c) => self.func.iconst(c),
        }
    }

    fn note_use(&mut self, v: Value, user: Inst) {
        debug_assert!(self.users_built, "user lists edited before they were built");
        self.s.users.grow(v.index() + 1);
        self.s.users.push(v.index(), user);
    }

    fn push_inputs(&mut self, inputs: &[Value]) {
        for &v in inputs {
            if let Some(d) = self.func.def_inst(v) {
                self.s.work.push(d);
            }
        }
    }

    /// `inst` changed: revisit it, its users and its dependents.
    pub(crate) fn changed(&mut self, inst: Inst) {
        debug_assert!(self.users_built, "user lists read before they were built");
        let (func, work, only) = (&*self.func, &mut self.s.work, self.matchable_only);
        push_matchable(func, work, only, inst);
        if let Some(r) = func.insts[inst.index()].result {
            let users = &self.s.users;
            let mut cursor = users.first(r.index());
            while let Some(u) = users.next(&mut cursor) {
                push_matchable(func, work, only, u);
            }
        }
        self.revisit_dependents(inst);
    }

    /// Put the instructions that registered a dependency on `inst` back on
    /// the worklist, and forget those dependencies.
    /// Revisit `inst` and its dependents, but not its users (its result
    /// did not change, only who uses it).
    pub(crate) fn revisit(&mut self, inst: Inst) {
        self.s.work.push(inst);
        self.revisit_dependents(inst);
    }

    fn revisit_dependents(&mut self, inst: Inst) {
        let work = &mut self.s.work;
        self.s.deps.take_each(inst.index(), |d| work.push(d));
    }

    /// Make every use of `inst`'s result use `v` instead, and take `inst` out.
    pub(crate) fn replace_inst(&mut self, inst: Inst, v: Value) {
        if let Some(r) = self.func.insts[inst.index()].result {
            // Uses of `v` noted meanwhile go to other nodes: the walk
            // sees the list as it was.
            let mut cursor = self.s.users.take(r.index());
            while let Some(u) = self.s.users.next(&mut cursor) {
                if u == inst || !self.placed(u) {
                    continue;
                }
                let mut hit = false;
                self.func.insts[u.index()].kind.for_each_operand_mut(|x| {
                    if *x == r {
                        *x = v;
                        hit = true;
                    }
                });
                if hit {
                    self.note_use(v, u);
                    self.changed(u);
                }
            }
        }
        self.detach(inst);
    }

    pub(crate) fn detach(&mut self, inst: Inst) {
        if let Some(b) = self.func.insts[inst.index()].block.take() {
            self.s.bufs.dirty.push(b);
        }
        self.s.bufs.gone[inst.index() / 64] |= 1 << (inst.index() % 64);
        self.detached_since_compact = true;
        self.revisit_dependents(inst);
    }

    fn apply(&mut self, inst: Inst, change: Change) {
        self.ensure_users();
        let mut inputs: SmallVec<[Value; 4]> = SmallVec::new();
        self.func.insts[inst.index()]
            .kind
            .for_each_operand(|v| inputs.push(v));
        match change {
            Change::Replace(o) => {
                let v = self.opnd(o);
                self.replace_inst(inst, v);
            }
            Change::Binary(op, a, b) => {
                let (a, b) = (self.opnd(a), self.opnd(b));
                self.note_use(a, inst);
                self.note_use(b, inst);
                self.func.insts[inst.index()].kind = InstKind::Binary(op, a, b);
                self.changed(inst);
            }
            Change::Unary(op, a) => {
                let a = self.opnd(a);
                self.note_use(a, inst);
                self.func.insts[inst.index()].kind = InstKind::Unary(op, a);
                self.changed(inst);
            }
            Change::Jump { target, dropped } => {
                self.before_branch_change(inst);
                let me = self.func.insts[inst.index()].block;
                self.func.insts[inst.index()].kind = InstKind::Jmp(target);
                if let Some(me) = me {
                    self.drop_edge(me, dropped);
                }
                self.cfg_dirty = true;
            }
            Change::Remove => self.detach(inst),
        }
        self.push_inputs(&inputs);
    }

    /// The edge `from → to` is gone: remove one phi entry for it in `to`.
    pub(crate) fn drop_edge(&mut self, from: ir::Block, to: ir::Block) {
        let phis = self.take_phis_of(to);
        for &p in &phis {
            if let InstKind::Phi(entries) = &mut self.func.insts[p.index()].kind {
                if let Some(k) = entries.iter().rposition(|e| e.0 == from) {
                    entries.remove(k);
                }
            }
            self.changed(p);
        }
        self.s.bufs.phis = phis;
    }

    /// The placed phis of `b`, in a buffer to hand back to `bufs.phis`
    /// (none, without reading the block, in a function without phis: the
    /// engine never creates one; else only the phis `b` came in with are
    /// read, see [`super::block_phis`]).
    pub(crate) fn take_phis_of(&mut self, b: ir::Block) -> Vec<Inst> {
        let mut phis = std::mem::take(&mut self.s.bufs.phis);
        phis.clear();
        if !self.cfgs.has_phis() {
            return phis;
        }
        if self.s.bufs.phis_in.is_indexed() {
            self.indexed_phis_of(b, &mut phis);
            return phis;
        }
        phis.extend(
            self.func.blocks[b.index()]
                .insts
                .iter()
                .copied()
                .filter(|&i| is_placed_phi(self.func, i)),
        );
        phis
    }

    /// [`Engine::take_phis_of`] from the indexed phis `b` came in with.
    #[inline(never)]
    fn indexed_phis_of(&self, b: ir::Block, phis: &mut Vec<Inst>) {
        let func: &Function = self.func;
        let came_in = self.s.bufs.phis_in.of(b);
        phis.extend(came_in.filter(|&i| is_placed_phi(func, i)));
    }

    /// Drop detached instructions from the blocks' lists (nothing to do when
    /// none was detached since the last time). Should a block's last
    /// instruction go, that is a CFG change, and the result is true. Only the
    /// blocks that lost an instruction are looked at, except the first time
    /// (the lists may come in with instructions detached by earlier passes).
    pub(crate) fn compact(&mut self) -> bool {
        if !self.detached_since_compact {
            return false;
        }
        self.detached_since_compact = false;
        if self.compact_all {
            self.ensure_users();
        }
        let mut dirty = std::mem::take(&mut self.s.bufs.dirty);
        let all = std::mem::take(&mut self.compact_all);
        if all {
            dirty.clear();
            dirty.extend_from_slice(&self.func.layout);
        } else {
            // Blocks that left the layout since were emptied when they left.
            dirty.sort_unstable();
            dirty.dedup();
        }
        // Apart from what came in detached (`all`), an instruction in a
        // block's list is unplaced exactly when this run detached it.
        let (func, gone) = (&*self.func, &self.s.bufs.gone);
        let placed = |i: &Inst| still_placed(all, func, gone, *i);
        let blocks = &self.func.blocks;
        let loses_a_last = dirty
            .iter()
            .any(|b| blocks[b.index()].insts.last().is_some_and(|i| !placed(i)));
        if loses_a_last {
            self.before_cfg_change();
        }
        for &b in &dirty {
            let mut list = std::mem::take(&mut self.func.blocks[b.index()].insts);
            list.retain(|&i| still_placed(all, self.func, &self.s.bufs.gone, i));
            self.func.blocks[b.index()].insts = list;
        }
        dirty.clear();
        self.s.bufs.dirty = dirty;
        loses_a_last
    }

    /// Snapshot the CFG for the dominator tree (a new tree when it changed),
    /// and revisit the phis: `phi_same` is the one rule that asks the tree.
    /// With no new snapshot (no edge changed since the last) the tree is
    /// the one every phi was last visited with, and a phi whose operands
    /// changed was pushed then, so none is revisited. The phis are those
    /// the function came in with that are still placed phis, in layout
    /// order (only merges move instructions, and a merged block's phis
    /// collapse), so the function is not walked: at 100k instructions the
    /// walk missed the cache on most instructions.
    pub(crate) fn recompute_dom(&mut self) {
        if !self.cfgs.snapshot() || !self.cfgs.has_phis() {
            return;
        }
        let func: &Function = self.func;
        for i in self.s.bufs.phis_in.all() {
            if is_placed_phi(func, i) {
                self.s.work.push(i);
            }
        }
    }

    /// Turn a phi whose block lost all but one predecessor into its value (or a
    /// `copy` when the types differ, so that every use keeps its static type).
    pub(crate) fn collapse_single_entry_phi(&mut self, phi: Inst, v: Value) {
        let r = self.func.insts[phi.index()].result;
        let same_type = r.is_some_and(|r| self.func.value_type(r) == self.func.value_type(v));
        if same_type && r != Some(v) {
            self.replace_inst(phi, v);
        } else {
            self.note_use(v, phi);
            self.func.insts[phi.index()].kind = InstKind::Unary(UnOp::Copy, v);
            self.changed(phi);
        }
    }

    /// The invariant: every placed instruction is waiting (on the worklist,
    /// or in `pending`: taken off it but not yet visited) or no rule applies.
    pub(crate) fn check_fixed_point(&mut self, pending: &[Inst]) -> Result<(), String> {
        let mut deps = std::mem::take(&mut self.s.bufs.match_deps);
        let result = self.check_fixed_point_with(&mut deps, pending);
        self.s.bufs.match_deps = deps;
        result
    }

    fn check_fixed_point_with(
        &self,
        deps: &mut Vec<(Inst, Inst)>,
        pending: &[Inst],
    ) -> Result<(), String> {
        for &b in &self.func.layout {
            for &inst in &self.func.blocks[b.index()].insts {
                if !self.placed(inst) || self.s.work.contains(inst) || pending.contains(&inst) {
                    continue;
                }
                deps.clear();
                if let Some((k, change)) = self.find(inst, deps) {
                    return Err(format!(
                        "peephole fixed point violated in @{}: rule '{}' still applies to {:?} ({:?} → {:?}), which is not on the worklist",
                        self.func.name,
                        rules()[k].name,
                        inst,
                        self.func.insts[inst.index()].kind,
                        change
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Whether `inst` is a phi still placed in a block of `func`.
fn is_placed_phi(func: &Function, inst: Inst) -> bool {
    let data = &func.insts[inst.index()];
    data.block.is_some() && data.kind.is_phi()
}

/// Put `inst` on `work`, unless `only_matchable` and no rule may match it
/// (in a big function, a store whose operand changed is not visited: it
/// would find no rule, and at 100k instructions the visits of the users of
/// one replaced value were a walk of their own over the function).
fn push_matchable(func: &Function, work: &mut Worklist, only_matchable: bool, inst: Inst) {
    if !only_matchable || may_match(&func.insts[inst.index()].kind) {
        work.push(inst);
    }
}

/// Add `inst` to the user list of each operand of `kind` (once per list).
fn note_operands(users: &mut InstLists, kind: &InstKind, inst: Inst) {
    kind.for_each_operand(|v| users.push(v.index(), inst));
}

/// Whether `inst`, in a block's list, is still placed: asked of the
/// instruction when `ask` (lists that came in with detached instructions),
/// else of `gone`, the bits of the instructions this run detached.
fn still_placed(ask: bool, func: &Function, gone: &[u64], inst: Inst) -> bool {
    if ask {
        func.insts[inst.index()].block.is_some()
    } else {
        gone[inst.index() / 64] & (1 << (inst.index() % 64)) == 0
    }
}
