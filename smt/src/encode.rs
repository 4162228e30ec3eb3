//! The encoder: one function (with the module functions it calls inlined up to
//! a depth) becomes the symbolic outcome of every execution over the shared
//! inputs. Blocks are visited as nodes `(block, d)` of the unrolled CFG (see
//! [`crate::unroll`]); executions that take more than K retreating edges, or
//! nest calls deeper than the inlining bound, end in the *sink* and are
//! excluded from the query. Traps end an execution with their kind and the
//! state before the trapping instruction.

use crate::env::{env_step, StepRecord, StepSpec};
use crate::shared::{bv, is_fresh, Shared, FRESH_BIT, MAX_LEN};
use crate::state::{Alloc, State, STEP_COLUMNS};
use crate::unroll::Unrolling;
use ir::{
    Addr, BinOp, Block, Callee, FuncId, Function, InstKind, Module, Type, UnOp, Value, ValueDef,
};
use rustc_hash::FxHashMap;
use z3::ast::{Array, Ast, Bool, BV};

/// The trap kinds the encoder models, with IR.md's names; code 0 is a return.
pub const TRAP_NAMES: [&str; 7] = [
    "return",
    "div_by_zero",
    "bad_length",
    "null_deref",
    "out_of_bounds",
    "guard_failed",
    "unreachable",
];

const DIV_BY_ZERO: u64 = 1;
const BAD_LENGTH: u64 = 2;
const NULL_DEREF: u64 = 3;
const OUT_OF_BOUNDS: u64 = 4;
const GUARD_FAILED: u64 = 5;
const UNREACHABLE: u64 = 6;

/// Limits of the encoding.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Retreating edges an execution may take (per function body).
    pub unroll: usize,
    /// Nested inlined calls.
    pub inline_depth: u32,
}

/// How an execution ended: under `cond`, outcome `code` (0 = return), the
/// returned value and the state at the end.
struct Exit {
    cond: Bool,
    code: u64,
    ret: Option<BV>,
    state: State,
}

/// Every execution of one function, merged.
pub struct Summary {
    /// The outcome code (index into [`TRAP_NAMES`]).
    pub code: BV,
    /// The returned value (0 when there is none).
    pub ret: BV,
    /// The state at the end.
    pub state: State,
    /// The executions excluded by the bounds.
    pub sink: Bool,
    /// Whether some bound applied (loops or calls deep enough to be cut).
    pub bounded: bool,
    /// The environment steps, for pairing with the other side's.
    pub steps: Vec<StepRecord>,
}

/// A frame's result: the condition of returning, the state, the returned value.
type Returned = (Bool, State, Option<BV>);

/// Encodes function bodies for one side of a check.
pub struct Encoder<'a> {
    m: &'a Module,
    sh: &'a mut Shared,
    limits: Limits,
    exits: Vec<Exit>,
    sink: Vec<Bool>,
    bounded: bool,
    unrollings: FxHashMap<FuncId, std::rc::Rc<Unrolling>>,
    steps: Vec<StepRecord>,
    earlier: &'a [StepRecord],
}

impl<'a> Encoder<'a> {
    /// An encoder for functions of `m` over the shared inputs `sh`.
    pub fn new(m: &'a Module, sh: &'a mut Shared, limits: Limits) -> Self {
        Encoder {
            m,
            sh,
            limits,
            exits: Vec::new(),
            sink: Vec::new(),
            bounded: false,
            unrollings: FxHashMap::default(),
            steps: Vec::new(),
            earlier: &[],
        }
    }

    /// Reuse the outputs of the other side's steps with identical inputs.
    pub fn reusing(mut self, earlier: &'a [StepRecord]) -> Self {
        self.earlier = earlier;
        self
    }

    /// Encode every execution of `fid` on the shared parameters.
    pub fn encode(mut self, fid: FuncId) -> Result<Summary, String> {
        let args = self.sh.params.clone();
        let st = State::initial(self.sh);
        if let Some((cond, mut state, ret)) =
            self.body(fid, args, st, Bool::from_bool(true), 0, 0)?
        {
            if let (Some(r), Some(ty)) = (&ret, self.m.func(fid).ret) {
                if ty.is_ref() {
                    state.expose(r);
                }
            }
            self.exits.push(Exit {
                cond,
                code: 0,
                ret,
                state,
            });
        }
        let sink = or_all(&self.sink);
        let mut exits = self.exits.into_iter().rev();
        let Some(last) = exits.next() else {
            // Every execution ends in the sink.
            return Ok(Summary {
                code: bv(0),
                ret: bv(0),
                state: State::initial(self.sh),
                sink,
                bounded: true,
                steps: self.steps,
            });
        };
        let mut code = BV::from_u64(last.code, 64);
        let mut ret = last.ret.unwrap_or_else(|| bv(0));
        let mut state = last.state;
        for e in exits {
            code = crate::state::ite(&e.cond, &BV::from_u64(e.code, 64), &code);
            ret = crate::state::ite(&e.cond, &e.ret.unwrap_or_else(|| bv(0)), &ret);
            state = State::merge(&e.cond, &e.state, &state);
        }
        Ok(Summary {
            code,
            ret,
            state,
            sink,
            bounded: self.bounded,
            steps: self.steps,
        })
    }

    fn unrolling(&mut self, fid: FuncId) -> std::rc::Rc<Unrolling> {
        let m = self.m;
        self.unrollings
            .entry(fid)
            .or_insert_with(|| std::rc::Rc::new(Unrolling::new(m.func(fid))))
            .clone()
    }

    /// Run the body of `fid` from `st` under path condition `pc`; trap exits
    /// and the sink are recorded, the returns merged and handed back.
    fn body(
        &mut self,
        fid: FuncId,
        args: Vec<BV>,
        mut st: State,
        pc: Bool,
        ctx: u64,
        depth: u32,
    ) -> Result<Option<Returned>, String> {
        let f = self.m.func(fid);
        if f.layout.is_empty() {
            return Err(format!("@{} has no blocks", f.name));
        }
        let un = self.unrolling(fid);
        if un.has_loops() {
            self.bounded = true;
        }
        st.vals.clear();
        for (p, a) in f.params.iter().zip(args) {
            st.vals.insert(*p, a);
        }
        let mut pending: FxHashMap<(Block, usize), Vec<(Bool, State)>> = FxHashMap::default();
        pending.insert((f.entry(), 0), vec![(pc, st)]);
        let mut returns: Vec<Returned> = Vec::new();
        for d in 0..=self.limits.unroll {
            for &b in &un.order {
                let Some(incoming) = pending.remove(&(b, d)) else {
                    continue;
                };
                let (pc, st) = merge_all(incoming);
                let frame = Frame {
                    f,
                    fid,
                    d,
                    ctx,
                    depth,
                };
                self.block(&frame, b, pc, st, &un, &mut pending, &mut returns)?;
            }
        }
        if returns.is_empty() {
            return Ok(None);
        }
        let mut it = returns.into_iter().rev();
        let (mut cond, mut state, mut ret) = it.next().expect("not empty");
        for (c, s, r) in it {
            state = State::merge(&c, &s, &state);
            ret = match (r, ret) {
                (Some(a), Some(b)) => Some(crate::state::ite(&c, &a, &b)),
                (a, b) => a.or(b),
            };
            cond = Bool::or(&[c, cond]);
        }
        Ok(Some((cond, state, ret)))
    }

    #[allow(clippy::too_many_arguments)]
    fn block(
        &mut self,
        fr: &Frame<'_>,
        b: Block,
        mut pc: Bool,
        mut st: State,
        un: &Unrolling,
        pending: &mut FxHashMap<(Block, usize), Vec<(Bool, State)>>,
        returns: &mut Vec<Returned>,
    ) -> Result<(), String> {
        let f = fr.f;
        for &inst in &f.blocks[b.index()].insts {
            let data = f.inst(inst);
            match &data.kind {
                InstKind::Phi(_) => continue,
                InstKind::Jmp(t) => {
                    self.edge(fr, un, pending, b, *t, pc, &st)?;
                    return Ok(());
                }
                InstKind::Br(c, t, e) => {
                    let c = nonzero(&val(f, &st, *c)?).simplify();
                    let taken = and2(&pc, &c);
                    let not_taken = and2(&pc, &c.not());
                    self.edge(fr, un, pending, b, *t, taken, &st)?;
                    self.edge(fr, un, pending, b, *e, not_taken, &st)?;
                    return Ok(());
                }
                InstKind::Ret(v) => {
                    let r = v.map(|v| val(f, &st, v)).transpose()?;
                    returns.push((pc, st, r));
                    return Ok(());
                }
                InstKind::Unreachable => {
                    self.trap(&pc, Bool::from_bool(true), UNREACHABLE, &st);
                    return Ok(());
                }
                kind => {
                    let (npc, res) = self.inst(fr, inst, kind, pc, &mut st)?;
                    pc = npc;
                    if let (Some(r), Some(v)) = (data.result, res) {
                        st.vals.insert(r, v);
                    }
                    if pc.as_bool() == Some(false) {
                        return Ok(());
                    }
                }
            }
        }
        Err(format!(
            "block {} of @{} has no terminator",
            f.blocks[b.index()].name,
            f.name
        ))
    }

    /// Follow the edge `from -> to` under `cond`: assign `to`'s phis, then queue the node.
    #[allow(clippy::too_many_arguments)]
    fn edge(
        &mut self,
        fr: &Frame<'_>,
        un: &Unrolling,
        pending: &mut FxHashMap<(Block, usize), Vec<(Bool, State)>>,
        from: Block,
        to: Block,
        cond: Bool,
        st: &State,
    ) -> Result<(), String> {
        if cond.as_bool() == Some(false) {
            return Ok(());
        }
        let f = fr.f;
        let mut next = st.clone();
        for &i in &f.blocks[to.index()].insts {
            let data = f.inst(i);
            let InstKind::Phi(entries) = &data.kind else {
                break;
            };
            let Some((_, v)) = entries.iter().find(|(p, _)| *p == from) else {
                return Err(format!(
                    "phi in {} has no entry for {}",
                    f.blocks[to.index()].name,
                    f.blocks[from.index()].name
                ));
            };
            if let Some(r) = data.result {
                next.vals.insert(r, val(f, st, *v)?);
            }
        }
        let d = if un.retreating.contains(&(from, to)) {
            fr.d + 1
        } else {
            fr.d
        };
        if d > self.limits.unroll {
            self.sink.push(cond);
        } else {
            pending.entry((to, d)).or_default().push((cond, next));
        }
        Ok(())
    }

    /// Record a trap exit under `pc && cond`; the path condition that continues.
    fn trap(&mut self, pc: &Bool, cond: Bool, code: u64, st: &State) -> Bool {
        // Decided here when it can be (a null check of an allocated object,
        // a division by a nonzero constant): fewer exits and merges.
        let cond = cond.simplify();
        if cond.as_bool() == Some(false) {
            return pc.clone();
        }
        let mut state = st.clone();
        state.vals.clear();
        self.exits.push(Exit {
            cond: and2(pc, &cond),
            code,
            ret: None,
            state,
        });
        and2(pc, &cond.not())
    }

    /// One non-terminator instruction: the new path condition and its result.
    fn inst(
        &mut self,
        fr: &Frame<'_>,
        inst: ir::Inst,
        kind: &InstKind,
        mut pc: Bool,
        st: &mut State,
    ) -> Result<(Bool, Option<BV>), String> {
        let f = fr.f;
        let v = |x: Value, st: &State| val(f, st, x);
        let res = match kind {
            InstKind::Binary(op, a, b) => {
                let (a, b) = (v(*a, st)?, v(*b, st)?);
                if op.may_trap() {
                    pc = self.trap(&pc, b.eq(bv(0)), DIV_BY_ZERO, st);
                }
                Some(binary(*op, &a, &b).simplify())
            }
            InstKind::Unary(op, a) => {
                let a = v(*a, st)?;
                Some(match op {
                    UnOp::Neg => a.bvneg().simplify(),
                    UnOp::Not => a.bvnot().simplify(),
                    UnOp::Copy => a,
                })
            }
            InstKind::Select(c, a, b) => {
                let c = nonzero(&v(*c, st)?);
                Some(c.ite(&v(*a, st)?, &v(*b, st)?))
            }
            InstKind::New(s) => {
                let id = fresh_id(fr, inst, st);
                for fld in &mut st.heap.fields[s.index()] {
                    *fld = fld.store(&id, &bv(0));
                }
                st.allocated.push((id.clone(), Alloc::Struct(s.index())));
                Some(id)
            }
            InstKind::NewArray { elem, len } => {
                let n = v(*len, st)?;
                let bad = Bool::or(&[n.bvslt(bv(0)), n.bvsgt(bv(MAX_LEN))]);
                pc = self.trap(&pc, bad, BAD_LENGTH, st);
                let ei = self.elem(*elem)?;
                let id = fresh_id(fr, inst, st);
                st.heap.lens[ei] = st.heap.lens[ei].store(&id, &n);
                let zeros = Array::const_array(&crate::shared::word(), &bv(0));
                st.heap.elems[ei] = st.heap.elems[ei].store(&id, &zeros);
                st.allocated.push((id.clone(), Alloc::Array(ei)));
                Some(id)
            }
            InstKind::Load { addr, volatile } => {
                if *volatile {
                    let args = self.volatile_args(f, st, addr, None)?;
                    self.step(StepSpec::volatile(args), &pc, st)?;
                }
                let (npc, r) = self.load(f, addr, pc, st)?;
                pc = npc;
                Some(r)
            }
            InstKind::Store {
                addr,
                value,
                volatile,
            } => {
                let x = v(*value, st)?;
                if *volatile {
                    let args = self.volatile_args(f, st, addr, Some(x.clone()))?;
                    self.step(StepSpec::volatile(args), &pc, st)?;
                }
                pc = self.store(f, addr, x, *value, pc, st)?;
                None
            }
            InstKind::Len(av) => {
                let a = v(*av, st)?;
                pc = self.trap(&pc, a.eq(bv(0)), NULL_DEREF, st);
                match self.elem_of(f.value_type(*av))? {
                    Some(ei) => Some(self.len_of(ei, &a, st)),
                    None => Some(bv(0)), // a `null`-typed base: the check above always traps
                }
            }
            InstKind::Escape(x) => {
                let r = v(*x, st)?;
                if f.value_type(*x).is_ref() {
                    st.expose(&r);
                }
                st.trace = st.trace.store(&st.trace_len, &r);
                st.trace_len = st.trace_len.bvadd(bv(1));
                None
            }
            InstKind::Guard(c) => {
                let c = v(*c, st)?;
                pc = self.trap(&pc, c.eq(bv(0)), GUARD_FAILED, st);
                None
            }
            InstKind::NullCheck(r) => {
                let r = v(*r, st)?;
                pc = self.trap(&pc, r.eq(bv(0)), NULL_DEREF, st);
                None
            }
            InstKind::BoundsCheck(a, i) => {
                pc = self.elem_checks(f, *a, *i, pc, st)?.0;
                None
            }
            InstKind::Call { callee, args } => {
                let vals = args
                    .iter()
                    .map(|a| v(*a, st))
                    .collect::<Result<Vec<_>, _>>()?;
                match callee {
                    Callee::Extern(e) => {
                        let ext = &self.m.externs[e.index()];
                        for (a, ty) in vals.iter().zip(&ext.params) {
                            if ty.is_ref() {
                                st.expose(a);
                            }
                        }
                        let spec = StepSpec::call(self.m, *e, vals)?;
                        self.step(spec, &pc, st)?
                    }
                    Callee::Func(g) => {
                        let (npc, r) = self.call(fr, inst, *g, vals, pc, st)?;
                        pc = npc;
                        r
                    }
                }
            }
            InstKind::Phi(_)
            | InstKind::Jmp(_)
            | InstKind::Br(..)
            | InstKind::Ret(_)
            | InstKind::Unreachable => unreachable!("handled by the block walk"),
        };
        Ok((pc, res))
    }

    /// Inline a call of `g` (or send the path to the sink beyond the depth bound).
    fn call(
        &mut self,
        fr: &Frame<'_>,
        inst: ir::Inst,
        g: FuncId,
        args: Vec<BV>,
        pc: Bool,
        st: &mut State,
    ) -> Result<(Bool, Option<BV>), String> {
        if fr.depth >= self.limits.inline_depth {
            self.bounded = true;
            self.sink.push(pc);
            // The path is dead from here; its result is never observed.
            return Ok((Bool::from_bool(false), Some(BV::fresh_const("dead", 64))));
        }
        // The static chain of call sites: objects are told apart by their
        // count per site (see [`fresh_id`]), not by the iteration.
        let ctx = mix(fr.ctx, site_key(fr.f, inst));
        let saved = std::mem::take(&mut st.vals);
        let entry = State {
            vals: FxHashMap::default(),
            ..st.clone()
        };
        match self.body(g, args, entry, pc, ctx, fr.depth + 1)? {
            Some((cond, mut out, ret)) => {
                out.vals = saved;
                *st = out;
                Ok((cond, ret))
            }
            None => {
                st.vals = saved;
                Ok((Bool::from_bool(false), Some(BV::fresh_const("dead", 64))))
            }
        }
    }

    /// One environment step; its result (for a call that returns one).
    fn step(&mut self, spec: StepSpec, pc: &Bool, st: &mut State) -> Result<Option<BV>, String> {
        if spec.args.len() > STEP_COLUMNS - 1 {
            return Err(format!(
                "environment step with {} arguments (at most {})",
                spec.args.len(),
                STEP_COLUMNS - 1
            ));
        }
        Ok(env_step(
            self.sh,
            &spec,
            pc,
            st,
            &mut self.steps,
            self.earlier,
        ))
    }

    fn volatile_args(
        &self,
        f: &Function,
        st: &mut State,
        addr: &Addr,
        stored: Option<BV>,
    ) -> Result<Vec<BV>, String> {
        let mut args = Vec::new();
        match addr {
            Addr::Field { base, .. } => args.push(val(f, st, *base)?),
            Addr::Elem { base, index } => {
                args.push(val(f, st, *base)?);
                args.push(val(f, st, *index)?);
            }
            Addr::Global(_) => {}
        }
        if let Some(r) = args.first().cloned() {
            st.expose(&r);
        }
        if let Some(x) = stored {
            args.push(x);
        }
        Ok(args)
    }

    fn load(
        &mut self,
        f: &Function,
        addr: &Addr,
        mut pc: Bool,
        st: &mut State,
    ) -> Result<(Bool, BV), String> {
        let (pc, r, is_ref) = match addr {
            Addr::Global(g) => (
                pc,
                st.heap.globals[g.index()].clone(),
                self.m.globals[g.index()].ty.is_ref(),
            ),
            Addr::Field { base, field } => {
                let o = val(f, st, *base)?;
                pc = self.trap(&pc, o.eq(bv(0)), NULL_DEREF, st);
                let arr = &st.heap.fields[field.ty.index()][field.index as usize];
                // Simplified, like the heap after a store: a load of a slot
                // both sides stored is then the very same term on both.
                let r = select(arr, &o).simplify();
                let is_ref = self.m.field(*field).ty.is_ref();
                if is_ref {
                    let init = select(&self.sh.fields0[field.ty.index()][field.index as usize], &o);
                    self.sh.assumptions.push(is_fresh(&init).not());
                }
                (pc, r, is_ref)
            }
            Addr::Elem { base, index } => {
                let (npc, checked) = self.elem_checks(f, *base, *index, pc, st)?;
                let Some((ei, a, i)) = checked else {
                    // A `null`-typed base: the null check always traps.
                    return Ok((npc, bv(0)));
                };
                pc = npc;
                let r = select(&select_arr(&st.heap.elems[ei], &a), &i).simplify();
                let is_ref = self.sh.elem_types[ei].is_ref();
                if is_ref {
                    let init = select(&select_arr(&self.sh.elems0[ei], &a), &i);
                    self.sh.assumptions.push(is_fresh(&init).not());
                }
                (pc, r, is_ref)
            }
        };
        if is_ref {
            // Every reference in the heap is null, initial or exposed: the
            // function exposes whatever it stores, the initial heap holds
            // initial objects, and the environment writes only what it reaches.
            let ok = Bool::or(&[
                r.eq(bv(0)),
                crate::env::hidden_in(&r, &st.heap.exposed).not(),
            ]);
            self.sh.assumptions.push(pc.implies(&ok));
        }
        Ok((pc, r))
    }

    fn store(
        &mut self,
        f: &Function,
        addr: &Addr,
        x: BV,
        value: Value,
        mut pc: Bool,
        st: &mut State,
    ) -> Result<Bool, String> {
        // A stored reference is exposed only once the store has happened: a
        // store that traps on its base stores nothing (the heap at that trap
        // must not count its value as exposed, or an extern step before a
        // later trap may write an object the program never let out).
        let exposes = f.value_type(value).is_ref().then(|| x.clone());
        match addr {
            Addr::Global(g) => st.heap.globals[g.index()] = x,
            Addr::Field { base, field } => {
                let o = val(f, st, *base)?;
                pc = self.trap(&pc, o.eq(bv(0)), NULL_DEREF, st);
                let arr = &mut st.heap.fields[field.ty.index()][field.index as usize];
                *arr = arr.store(&o, &x).simplify();
            }
            Addr::Elem { base, index } => {
                let (npc, checked) = self.elem_checks(f, *base, *index, pc, st)?;
                let Some((ei, a, i)) = checked else {
                    return Ok(npc); // a `null`-typed base: the null check always traps
                };
                pc = npc;
                let row = select_arr(&st.heap.elems[ei], &a).store(&i, &x);
                st.heap.elems[ei] = st.heap.elems[ei].store(&a, &row).simplify();
            }
        }
        if let Some(r) = exposes {
            st.expose(&r);
        }
        Ok(pc)
    }

    /// The traps of an element access `base[index]` (`null_deref`, then
    /// `out_of_bounds`), shared by loads, stores and `boundscheck`: the path
    /// condition that continues, and the element slot with the array and
    /// index terms (`None` for a `null`-typed base, which always traps).
    #[allow(clippy::type_complexity)]
    fn elem_checks(
        &mut self,
        f: &Function,
        base: Value,
        index: Value,
        pc: Bool,
        st: &State,
    ) -> Result<(Bool, Option<(usize, BV, BV)>), String> {
        let a = val(f, st, base)?;
        let i = val(f, st, index)?;
        let pc = self.trap(&pc, a.eq(bv(0)), NULL_DEREF, st);
        let Some(ei) = self.elem_of(f.value_type(base))? else {
            return Ok((pc, None));
        };
        let n = self.len_of(ei, &a, st);
        let oob = Bool::or(&[i.bvslt(bv(0)), i.bvsge(&n)]);
        let pc = self.trap(&pc, oob, OUT_OF_BOUNDS, st);
        Ok((pc, Some((ei, a, i))))
    }

    /// The length of array `a` of element slot `ei`, with the facts about initial lengths.
    fn len_of(&mut self, ei: usize, a: &BV, st: &State) -> BV {
        let init = select(&self.sh.lens0[ei], a);
        self.sh
            .assumptions
            .push(Bool::and(&[init.bvsge(bv(0)), init.bvsle(bv(MAX_LEN))]));
        self.sh.preferences.push(init.bvsle(bv(4)));
        self.sh.len_reads.push((ei, a.clone()));
        select(&st.heap.lens[ei], a)
    }

    fn elem(&self, e: Type) -> Result<usize, String> {
        self.sh
            .elem_index(e)
            .ok_or_else(|| "an array element type the encoder did not collect".to_string())
    }

    /// The element leaf of an array access through a base of type
    /// `array_ty`; `None` when the base's type is `null` itself (the constant
    /// `null`, whose access always traps `null_deref`).
    fn elem_of(&self, array_ty: Type) -> Result<Option<usize>, String> {
        match array_ty.elem() {
            Some(e) => self.elem(e).map(Some),
            None if array_ty.is_ref() => Ok(None),
            None => Err("element access through a non-reference type".to_string()),
        }
    }
}

/// The identity of the object `inst` allocates in state `st`: the fresh bit,
/// the allocation site (within the inlining context) and how many objects the
/// site allocated before on this path, so the n-th object of a site gets the
/// same identity on both sides. (Counting retreating edges instead depends on
/// the depth-first search of each side's CFG: once a pass folded a branch
/// into the loop, the two sides named the same object differently, a false
/// alarm; `corpus/smt/right_alloc_in_loop_entered_by_folded_branch.smt`.)
fn fresh_id(fr: &Frame<'_>, inst: ir::Inst, st: &mut State) -> BV {
    let site = mix(fr.ctx, site_key(fr.f, inst)) & ((1 << 43) - 1);
    let n = st.alloc_counts.get(&site).cloned().unwrap_or_else(|| bv(0));
    st.alloc_counts.insert(site, n.bvadd(bv(1)).simplify());
    BV::from_u64(FRESH_BIT | (site << 20), 64)
        .bvadd(&n)
        .simplify()
}

/// Where the encoder is: the function, its node depth, the inlining context.
struct Frame<'f> {
    f: &'f Function,
    #[allow(dead_code)]
    fid: FuncId,
    d: usize,
    ctx: u64,
    depth: u32,
}

/// The key of an allocation site: the result's source name when it has one (so
/// a hand-written optimized module matches by name), else the instruction index
/// (passes never renumber instructions).
fn site_key(f: &Function, inst: ir::Inst) -> u64 {
    let named = f.inst(inst).result.and_then(|r| f.value_name(r));
    match named {
        Some(n) => mix(0x6e61_6d65, hash_str(n)),
        None => inst.index() as u64,
    }
}

fn hash_str(s: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

fn mix(a: u64, b: u64) -> u64 {
    (a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .rotate_left(27)
        .wrapping_mul(0xbf58_476d_1ce4_e5b9)
}

/// The term of value `v` in state `st`.
pub fn val(f: &Function, st: &State, v: Value) -> Result<BV, String> {
    match f.value_def(v) {
        ValueDef::Const(c) => Ok(bv(c)),
        ValueDef::Null => Ok(bv(0)),
        ValueDef::Param(_) | ValueDef::Inst(_) => st
            .vals
            .get(&v)
            .cloned()
            .ok_or_else(|| format!("value {v:?} of @{} used where it is not defined", f.name)),
    }
}

/// `a && b`, without a node when either is a constant.
fn and2(a: &Bool, b: &Bool) -> Bool {
    match (a.as_bool(), b.as_bool()) {
        (Some(false), _) | (_, Some(true)) => a.clone(),
        (_, Some(false)) | (Some(true), _) => b.clone(),
        _ => Bool::and(&[a.clone(), b.clone()]),
    }
}

/// `x != 0`.
pub fn nonzero(x: &BV) -> Bool {
    x.eq(bv(0)).not()
}

fn bool_word(b: Bool) -> BV {
    b.ite(&bv(1), &bv(0))
}

/// IR.md's binary operations on 64-bit words (traps are checked by the caller).
pub fn binary(op: BinOp, a: &BV, b: &BV) -> BV {
    let sh = || b.bvand(bv(63));
    match op {
        BinOp::Add => a.bvadd(b),
        BinOp::Sub => a.bvsub(b),
        BinOp::Mul => a.bvmul(b),
        BinOp::And => a.bvand(b),
        BinOp::Or => a.bvor(b),
        BinOp::Xor => a.bvxor(b),
        BinOp::Shl => a.bvshl(sh()),
        BinOp::Lshr => a.bvlshr(sh()),
        BinOp::Ashr => a.bvashr(sh()),
        // Division by a constant ±1 is common and costly to bit-blast.
        BinOp::Sdiv => match b.as_u64() {
            Some(1) => a.clone(),
            Some(u64::MAX) => a.bvneg(),
            _ => a.bvsdiv(b),
        },
        BinOp::Srem => match b.as_u64() {
            Some(1) | Some(u64::MAX) => bv(0),
            _ => a.bvsrem(b),
        },
        BinOp::Eq => bool_word(a.eq(b)),
        BinOp::Ne => bool_word(a.eq(b).not()),
        BinOp::Slt => bool_word(a.bvslt(b)),
        BinOp::Sle => bool_word(a.bvsle(b)),
        BinOp::Sgt => bool_word(a.bvsgt(b)),
        BinOp::Sge => bool_word(a.bvsge(b)),
        BinOp::Ult => bool_word(a.bvult(b)),
        BinOp::Ule => bool_word(a.bvule(b)),
        BinOp::Ugt => bool_word(a.bvugt(b)),
        BinOp::Uge => bool_word(a.bvuge(b)),
    }
}

/// `arr[i]` as a word.
pub fn select(arr: &Array, i: &BV) -> BV {
    arr.select(i).as_bv().expect("word array")
}

/// `arr[i]` as an array (rows of element arrays).
pub fn select_arr(arr: &Array, i: &BV) -> Array {
    arr.select(i).as_array().expect("array of arrays")
}

/// The disjunction of `cs` (false when empty).
pub fn or_all(cs: &[Bool]) -> Bool {
    if cs.is_empty() {
        Bool::from_bool(false)
    } else {
        Bool::or(cs)
    }
}

/// Merge the states arriving at a node: the disjunction of their conditions
/// and the state chosen by whichever condition holds.
fn merge_all(mut incoming: Vec<(Bool, State)>) -> (Bool, State) {
    let (c0, mut st) = incoming.pop().expect("a queued node has an arrival");
    if incoming.is_empty() {
        return (c0, st);
    }
    let mut conds = vec![c0];
    for (c, s) in incoming {
        st = State::merge(&c, &s, &st);
        conds.push(c);
    }
    (Bool::or(&conds), st)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit-vector semantics of every binary operation agree with the
    /// interpreter's (`BinOp::eval`) on edge values.
    #[test]
    fn binary_ops_match_the_interpreter() {
        let vals = [0, 1, -1, 2, 63, 64, 65, -64, i64::MIN, i64::MAX, 12345, -7];
        for op in BinOp::ALL {
            for &a in &vals {
                for &b in &vals {
                    let Some(want) = op.eval(a, b) else { continue };
                    let got = binary(op, &bv(a), &bv(b)).simplify().as_u64();
                    assert_eq!(got, Some(want as u64), "{} {a}, {b}", op.name());
                }
            }
        }
    }
}
