//! Instruction selection: one IR function becomes [`VCode`] — x86-64
//! instruction groups over virtual registers — with the exact trap and fuel
//! behaviour of the interpreter (IR.md §4, §7).
//!
//! * Field and element accesses use `base + index*8 + disp` addressing on the
//!   heap base `r15`; element accesses are bounds-checked with one unsigned
//!   compare against the length word (a negative index is a huge unsigned one).
//! * A compare whose only use is the `br` ending its block is not
//!   materialised: the branch does the `cmp` and jumps on its flags.
//! * `sdiv`/`srem` test for zero (trap) and for `-1` (`MIN / -1 = MIN`,
//!   `MIN % -1 = 0`, without `idiv`, which would fault).
//! * A base an earlier access already null-checked on every path is not
//!   checked again (SSA values never change, and the earlier check trapped
//!   if it was null; across blocks: [`crate::nonnull`]); nor is the result
//!   of `new`/`newarray`. A loop header whose back edges all checked a base
//!   is emitted twice ([`VBlock::twice`]): the check stays only in the copy
//!   entered from outside the loop. An element access whose array and
//!   index an earlier access of the block bounds-checked is not checked
//!   again (array lengths never change), and reuses the element address
//!   that access computed.
//! * Fuel is charged before every taken `jmp`/`br` edge and every call.
//! * Phis become block parameters; each `br` edge gets a block of its own
//!   (no critical edges), where the allocator puts the edge's parallel copy.
//! * Blocks no path from the entry reaches are not lowered (never executed;
//!   IR.md does not even check dominance in them).

use crate::nonnull::NonNull;
use crate::vcode::{Alu, Cc, InstData, NullCheck, Shift, VBlock, VCode, VInst};
use interp::heap::{array_header, GLOBALS_BASE};
use interp::TrapKind;
use ir::{Addr, BinOp, Block, Callee, Function, Inst, InstKind, Module, UnOp, Value, ValueDef};
use regalloc2::{Operand, PReg, PRegSet, RegClass, VReg};

/// Physical registers by hardware encoding.
pub mod regs {
    use regalloc2::{PReg, RegClass};
    /// `rax`
    pub const RAX: PReg = PReg::new(0, RegClass::Int);
    /// `rcx`
    pub const RCX: PReg = PReg::new(1, RegClass::Int);
    /// `rdx`
    pub const RDX: PReg = PReg::new(2, RegClass::Int);
    /// `rbx`
    pub const RBX: PReg = PReg::new(3, RegClass::Int);
    /// `rsi`
    pub const RSI: PReg = PReg::new(6, RegClass::Int);
    /// `rdi`
    pub const RDI: PReg = PReg::new(7, RegClass::Int);
    /// `r8`
    pub const R8: PReg = PReg::new(8, RegClass::Int);
    /// `r9`
    pub const R9: PReg = PReg::new(9, RegClass::Int);
    /// `r10`
    pub const R10: PReg = PReg::new(10, RegClass::Int);
    /// `r11`: the allocator's scratch register, never allocated.
    pub const R11: PReg = PReg::new(11, RegClass::Int);
    /// The registers a runtime call (the SysV ABI) may change.
    pub const CALLER_SAVED: [PReg; 9] = [RAX, RCX, RDX, RSI, RDI, R8, R9, R10, R11];
    /// The registers a call to a module function may change: module
    /// functions keep every other allocatable register (`rbx`, `rsi`,
    /// `rdi`, `r8`–`r10`), saving in their prologue those they write.
    pub const MODULE_CALL_CLOBBERS: [PReg; 4] = [RAX, RCX, RDX, R11];
    /// The allocatable registers module functions preserve for their callers.
    pub const CALLEE_SAVED: [PReg; 6] = [RBX, RSI, RDI, R8, R9, R10];
    /// Where a module function receives its first arguments (the rest on
    /// the stack). A callee that writes one of the callee-saved ones saves
    /// and restores it like any other, so the caller's value survives.
    pub const ARGS: [PReg; 6] = [RCX, RDX, RSI, RDI, R8, R9];
}

fn compare_cc(op: BinOp) -> Option<Cc> {
    Some(match op {
        BinOp::Eq => Cc::E,
        BinOp::Ne => Cc::Ne,
        BinOp::Slt => {
            if zoo!(NativeUnsignedCompare) {
                Cc::B
            } else {
                Cc::L
            }
        }
        BinOp::Sle => Cc::Le,
        BinOp::Sgt => Cc::G,
        BinOp::Sge => Cc::Ge,
        BinOp::Ult => Cc::B,
        BinOp::Ule => Cc::Be,
        BinOp::Ugt => Cc::A,
        BinOp::Uge => Cc::Ae,
        _ => return None,
    })
}

/// Every register a runtime call may change except those in `except` (a
/// call's clobbers).
fn call_clobbers(except: &[PReg]) -> PRegSet {
    abi_clobbers(&regs::CALLER_SAVED, except)
}

/// Every register of `abi` (what a kind of call may change) except those in
/// `except` (the call's clobbers).
fn abi_clobbers(abi: &[PReg], except: &[PReg]) -> PRegSet {
    let mut s = PRegSet::empty();
    for &r in abi {
        let kept = if zoo!(NativeCallClobberRdx) {
            except.contains(&r) || r == regs::RDX
        } else {
            except.contains(&r)
        };
        if !kept {
            s.add(r);
        }
    }
    s
}

/// Builds the [`VCode`] of one function.
struct Selector<'a> {
    m: &'a Module,
    f: &'a Function,
    code: VCode,
    uses: Vec<u32>,
    /// Per IR block: its vblock, if reachable.
    vblock: Vec<Option<u32>>,
    /// Per IR block ending in `br`: the vblocks of its two edges.
    edges: Vec<Option<(u32, u32)>>,
    names: Option<ir::Names>,
    /// Per value: the stamp of the block where an access null-checked it.
    non_null_in: Vec<u32>,
    /// The stamp of the block being lowered (never 0).
    stamp: u32,
    /// The IR block being lowered.
    block: Block,
    /// Which values are non-null on entry to each block (`None` for a
    /// function of one block).
    nonnull: Option<NonNull>,
    /// (array, index, element address) of each element an earlier access
    /// of this block bounds-checked.
    in_bounds: Vec<(Value, Value, VReg)>,
    /// Inline calls to small leaf functions ([`inlinable`]).
    inline: bool,
    /// While lowering an inlined body (`f` is then the callee): the virtual
    /// register of each of its values.
    inlined: Option<Vec<VReg>>,
}

/// The most instructions (besides `ret`) of a function inlined at its calls.
pub const INLINE_MAX_INSTS: usize = 8;

/// Whether calls to `g` are inlined: a leaf of one block with at most six
/// parameters and [`INLINE_MAX_INSTS`] instructions, each a pure operation
/// (`sdiv`/`srem` included: their traps are the callee's traps, with the
/// same fuel spent), ending in `ret`. Such a body spends no fuel and makes
/// no call, so the call's own fuel unit and frame-depth check are all that
/// is left of the call (see [`VInst::InlinedCall`]).
pub fn inlinable(g: &Function) -> bool {
    let [b] = g.layout[..] else {
        return false;
    };
    let insts = &g.blocks[b.index()].insts;
    let Some((&last, body)) = insts.split_last() else {
        return false;
    };
    g.params.len() <= regs::ARGS.len()
        && body.len() <= INLINE_MAX_INSTS
        && matches!(g.inst(last).kind, InstKind::Ret(_))
        && body.iter().all(|&i| {
            matches!(
                g.inst(i).kind,
                InstKind::Binary(..) | InstKind::Unary(..) | InstKind::Select(..)
            )
        })
}

/// The most machine instructions of a loop header emitted twice
/// ([`VBlock::twice`]); a longer one keeps its null checks.
pub const TWICE_MAX_INSTS: usize = 96;

fn vr(v: Value) -> VReg {
    VReg::new(v.index(), RegClass::Int)
}

/// The [`VCode`] of function `f` of module `m`; with `comments`, each IR
/// instruction's text is kept for the listing; with `inline`, calls to
/// [`inlinable`] functions are inlined.
pub fn select(m: &Module, f: &Function, comments: bool, inline: bool) -> VCode {
    let mut uses = vec![0u32; f.values.len()];
    for i in f.inst_iter() {
        f.inst(i).kind.for_each_operand(|v| uses[v.index()] += 1);
    }
    let mut s = Selector {
        m,
        f,
        code: VCode {
            num_vregs: f.values.len(),
            ..VCode::default()
        },
        uses,
        vblock: vec![None; f.blocks.len()],
        edges: vec![None; f.blocks.len()],
        names: comments.then(|| ir::Names::new(f)),
        non_null_in: vec![0; f.values.len()],
        stamp: 0,
        block: Block(0),
        nonnull: None,
        in_bounds: Vec::new(),
        inline,
        inlined: None,
    };
    let order = s.reachable_layout();
    if order.len() > 1 {
        s.nonnull = Some(NonNull::new(f, &order));
    }
    let mut n = 0u32;
    for &b in &order {
        s.vblock[b.index()] = Some(n);
        n += 1;
        if let Some(t) = f.terminator(b) {
            if matches!(f.inst(t).kind, InstKind::Br(..)) {
                s.edges[b.index()] = Some((n, n + 1));
                n += 2;
            }
        }
    }
    s.code.blocks = vec![VBlock::default(); n as usize];
    for (k, &b) in order.iter().enumerate() {
        s.lower_block(b, k == 0);
    }
    let mut preds = vec![Vec::new(); s.code.blocks.len()];
    for (k, blk) in s.code.blocks.iter().enumerate() {
        for &succ in &blk.succs {
            preds[succ.index()].push(regalloc2::Block::new(k));
        }
    }
    for (blk, p) in s.code.blocks.iter_mut().zip(preds) {
        blk.preds = p;
    }
    s.code
}

impl<'a> Selector<'a> {
    /// The blocks the entry reaches, in reverse postorder (every block after
    /// its forward predecessors: the order regalloc2's checker analyses in).
    fn reachable_layout(&self) -> Vec<Block> {
        let f = self.f;
        let Some(&entry) = f.layout.first() else {
            return Vec::new();
        };
        let mut in_layout = vec![false; f.blocks.len()];
        for &b in &f.layout {
            in_layout[b.index()] = true;
        }
        let mut seen = vec![false; f.blocks.len()];
        let mut post = Vec::new();
        // (block, its successors, how many of them were visited)
        let mut stack: Vec<(Block, Vec<Block>, usize)> = vec![(entry, f.successors(entry), 0)];
        seen[entry.index()] = true;
        while let Some((b, succs, k)) = stack.last_mut() {
            if let Some(&s) = succs.get(*k) {
                *k += 1;
                if s.index() < seen.len() && in_layout[s.index()] && !seen[s.index()] {
                    seen[s.index()] = true;
                    let next = f.successors(s);
                    stack.push((s, next, 0));
                }
            } else {
                post.push(*b);
                stack.pop();
            }
        }
        post.reverse();
        post
    }

    fn fresh(&mut self) -> VReg {
        let v = VReg::new(self.code.num_vregs, RegClass::Int);
        self.code.num_vregs += 1;
        v
    }

    fn push(&mut self, inst: VInst, operands: Vec<Operand>, clobbers: PRegSet) {
        self.code.insts.push(InstData {
            inst,
            operands,
            clobbers,
            args: Vec::new(),
        });
    }

    /// `v` in a virtual register (a constant is materialised just before use).
    fn reg(&mut self, v: Value) -> VReg {
        match self.f.value_def(v) {
            ValueDef::Const(c) => self.konst(c),
            ValueDef::Null => self.konst(0),
            _ => self.vreg(v),
        }
    }

    /// The virtual register of value `v` of the function being lowered
    /// (the caller's own, or, in an inlined body, the one mapped to it).
    fn vreg(&self, v: Value) -> VReg {
        match &self.inlined {
            Some(map) => map[v.index()],
            None => vr(v),
        }
    }

    fn konst(&mut self, c: i64) -> VReg {
        let d = self.fresh();
        self.push(
            VInst::Const { imm: c },
            vec![Operand::reg_def(d)],
            PRegSet::empty(),
        );
        d
    }

    fn imm32(&self, v: Value) -> Option<i32> {
        match self.f.value_def(v) {
            ValueDef::Const(c) => i32::try_from(c).ok(),
            ValueDef::Null => Some(0),
            _ => None,
        }
    }

    /// How an access null-checks `v`: not at all if it is known non-null
    /// here (an earlier access of the block or of every path into it
    /// checked it), only on loop entry if every back edge into this block
    /// checked it; from now on it is known non-null.
    fn null_check(&mut self, v: Value) -> NullCheck {
        let known = self.non_null_in[v.index()] == self.stamp;
        self.non_null_in[v.index()] = self.stamp;
        if known {
            NullCheck::Skip
        } else if self
            .nonnull
            .as_ref()
            .is_some_and(|n| n.steady(self.block, v))
        {
            NullCheck::OnLoopEntry
        } else {
            NullCheck::Emit
        }
    }

    /// The address of `base[index]` if an earlier access of this block
    /// bounds-checked the same array and index (lengths never change and
    /// SSA values never do).
    fn elem_addressed(&self, base: Value, index: Value) -> Option<VReg> {
        self.in_bounds
            .iter()
            .find(|&&(b, i, _)| (b, i) == (base, index))
            .map(|&(.., at)| at)
    }

    fn lower_block(&mut self, b: Block, is_entry: bool) {
        self.stamp += 1;
        self.block = b;
        self.in_bounds.clear();
        if let Some(n) = &self.nonnull {
            for v in n.on_entry(b) {
                self.non_null_in[v.index()] = self.stamp;
            }
        }
        let f = self.f;
        let vb = self.vblock[b.index()].expect("reachable") as usize;
        self.code.blocks[vb].start = self.code.insts.len();
        if self.names.is_some() {
            self.code.comments.push((
                self.code.insts.len(),
                format!("{}:", f.blocks[b.index()].name),
            ));
        }
        if is_entry {
            // One instruction defines every register parameter at once, so
            // the allocator never moves one into a register that still holds
            // another; the rest are loaded from the caller's outgoing area.
            // Each is then copied into the parameter's own virtual register,
            // which the allocator places freely (a parameter left in its
            // fixed register made the allocator shuffle it around loops).
            let n = f.params.len().min(regs::ARGS.len());
            let arrived: Vec<VReg> = (0..n).map(|_| self.fresh()).collect();
            let in_regs = arrived
                .iter()
                .zip(regs::ARGS)
                .map(|(&t, r)| Operand::reg_fixed_def(t, r))
                .collect();
            if n > 0 {
                self.push(VInst::RegParams, in_regs, PRegSet::empty());
            }
            for (&p, t) in f.params.iter().zip(arrived) {
                self.push(
                    VInst::Move,
                    vec![Operand::reg_use(t), Operand::reg_def(vr(p))],
                    PRegSet::empty(),
                );
            }
            for (k, &p) in f.params.iter().enumerate().skip(regs::ARGS.len()) {
                self.push(
                    VInst::Param { idx: k as u32 },
                    vec![Operand::reg_def(vr(p))],
                    PRegSet::empty(),
                );
            }
        }
        let mut params = Vec::new();
        let mut terminated = false;
        for &i in &f.blocks[b.index()].insts {
            if let Some(names) = &self.names {
                let text = ir::print_inst(self.m, f, names, i);
                self.code
                    .comments
                    .push((self.code.insts.len(), text.trim().to_string()));
            }
            let data = f.inst(i);
            if let InstKind::Phi(_) = data.kind {
                if let Some(r) = data.result {
                    params.push(vr(r));
                }
                continue;
            }
            if data.kind.is_terminator() {
                self.lower_terminator(b, vb, i);
                terminated = true;
                break;
            }
            self.lower_inst(b, i);
        }
        if !terminated {
            // An ill-formed block without a terminator: never fall through.
            self.push(
                VInst::Trap {
                    kind: TrapKind::Unreachable,
                },
                vec![],
                PRegSet::empty(),
            );
        }
        self.code.blocks[vb].params = params;
        if self.code.blocks[vb].end == 0 {
            // (A `br` already closed its block before its edge blocks.)
            self.code.blocks[vb].end = self.code.insts.len();
        }
        self.decide_twice(vb);
    }

    /// Emit block `vb` twice if it has checks only loop entries need and is
    /// short enough; otherwise those checks are made on every entry.
    fn decide_twice(&mut self, vb: usize) {
        let (start, end) = (self.code.blocks[vb].start, self.code.blocks[vb].end);
        let range = &mut self.code.insts[start..end];
        if !range
            .iter()
            .any(|d| d.inst.null_check() == Some(NullCheck::OnLoopEntry))
        {
            return;
        }
        if end - start <= TWICE_MAX_INSTS {
            self.code.blocks[vb].twice = true;
            return;
        }
        for c in range.iter_mut().filter_map(|d| d.inst.null_check_mut()) {
            if *c == NullCheck::OnLoopEntry {
                *c = NullCheck::Emit;
            }
        }
    }

    /// Whether `v` is a compare of block `b` used only by `b`'s `br`.
    fn fused_compare(&self, b: Block, v: Value) -> Option<(Cc, Value, Value)> {
        let ValueDef::Inst(i) = self.f.value_def(v) else {
            return None;
        };
        let data = self.f.inst(i);
        if data.block != Some(b) || self.uses[v.index()] != 1 {
            return None;
        }
        match data.kind {
            InstKind::Binary(op, x, y) => compare_cc(op).map(|cc| (cc, x, y)),
            _ => None,
        }
    }

    fn is_fused(&self, b: Block, i: Inst) -> bool {
        let (Some(r), Some(t)) = (self.f.inst(i).result, self.f.terminator(b)) else {
            return false;
        };
        match self.f.inst(t).kind {
            InstKind::Br(c, ..) => c == r && self.fused_compare(b, c).is_some(),
            _ => false,
        }
    }

    fn lower_inst(&mut self, b: Block, i: Inst) {
        let f = self.f;
        let data = f.inst(i);
        let d = data.result.map(|r| self.vreg(r));
        let def = |d: Option<VReg>, s: &mut Self| d.unwrap_or_else(|| s.fresh());
        match &data.kind {
            InstKind::Phi(_) => {}
            InstKind::Binary(op, x, y) => {
                if self.is_fused(b, i) {
                    return;
                }
                let d = def(d, self);
                self.binary(*op, d, *x, *y);
            }
            InstKind::Unary(op, x) => {
                let d = def(d, self);
                let a = self.reg(*x);
                let inst = match op {
                    UnOp::Neg => VInst::Neg,
                    UnOp::Not => VInst::Not,
                    UnOp::Copy => {
                        self.push(
                            VInst::Move,
                            vec![Operand::reg_use(a), Operand::reg_def(d)],
                            PRegSet::empty(),
                        );
                        return;
                    }
                };
                self.push(
                    inst,
                    vec![Operand::reg_use(a), Operand::reg_reuse_def(d, 0)],
                    PRegSet::empty(),
                );
            }
            InstKind::Select(c, x, y) => {
                let d = def(d, self);
                let (c, a, bb) = (self.reg(*c), self.reg(*x), self.reg(*y));
                self.push(
                    VInst::Select,
                    vec![
                        Operand::reg_use(c),
                        Operand::reg_use(a),
                        Operand::reg_use(bb),
                        Operand::reg_reuse_def(d, 1),
                    ],
                    PRegSet::empty(),
                );
            }
            InstKind::New(s) => {
                let d = def(d, self);
                self.known_non_null(data.result);
                let n = self.m.structs.get(s.index()).map_or(0, |s| s.fields.len());
                self.push(
                    VInst::New {
                        sid: s.0,
                        nfields: n as u32,
                    },
                    vec![Operand::reg_fixed_def(d, regs::RAX)],
                    call_clobbers(&[regs::RAX]),
                );
            }
            InstKind::NewArray { elem, len } => {
                let d = def(d, self);
                self.known_non_null(data.result);
                let l = self.reg(*len);
                self.push(
                    VInst::NewArray {
                        header: array_header(*elem),
                    },
                    vec![
                        Operand::reg_fixed_use(l, regs::RDX),
                        Operand::reg_fixed_def(d, regs::RAX),
                    ],
                    call_clobbers(&[regs::RAX]),
                );
            }
            InstKind::Load { addr, volatile } => {
                if *volatile {
                    self.volatile_step(addr, None);
                }
                let d = def(d, self);
                match *addr {
                    Addr::Field { base, field } => {
                        let o = self.reg(base);
                        // A field access is null-checked unless an earlier
                        // access of this block checked the same base.
                        let loaded = matches!(self.f.value_def(base), ValueDef::Inst(j)
                            if matches!(self.f.inst(j).kind, InstKind::Load { .. }));
                        let check = self.null_check(base);
                        let checked = if zoo!(NativeLoadedBaseNonNull) && loaded {
                            NullCheck::Skip
                        } else {
                            check
                        };
                        self.push(
                            VInst::LoadField {
                                disp: 8 * (field.index as i32 + 1),
                                checked,
                            },
                            vec![Operand::reg_use(o), Operand::reg_def(d)],
                            PRegSet::empty(),
                        );
                    }
                    Addr::Elem { base, index } => match self.const_index(index) {
                        Some(Some(c)) => {
                            let o = self.reg(base);
                            let checked = self.null_check(base);
                            self.push(
                                VInst::LoadElemConst { c, checked },
                                vec![Operand::reg_use(o), Operand::reg_def(d)],
                                PRegSet::empty(),
                            )
                        }
                        Some(None) => {
                            let o = self.reg(base);
                            self.out_of_range(o, Some(d))
                        }
                        None => match self.elem_addressed(base, index) {
                            Some(at) => self.push(
                                VInst::LoadElemAt,
                                vec![Operand::reg_use(at), Operand::reg_def(d)],
                                PRegSet::empty(),
                            ),
                            None => self.first_elem_check(
                                base,
                                index,
                                |checked| VInst::LoadElem { checked },
                                Some(Operand::reg_def(d)),
                            ),
                        },
                    },
                    Addr::Global(g) => self.push(
                        VInst::LoadGlobal {
                            disp: 8 * (GLOBALS_BASE as i32 + g.0 as i32),
                        },
                        vec![Operand::reg_def(d)],
                        PRegSet::empty(),
                    ),
                }
            }
            InstKind::Store {
                addr,
                value,
                volatile,
            } => {
                if *volatile {
                    self.volatile_step(addr, Some(*value));
                }
                match *addr {
                    Addr::Field { base, field } => {
                        let o = self.reg(base);
                        let v = self.reg(*value);
                        let checked = self.null_check(base);
                        self.push(
                            VInst::StoreField {
                                disp: 8 * (field.index as i32 + 1),
                                checked,
                            },
                            vec![Operand::reg_use(o), Operand::reg_use(v)],
                            PRegSet::empty(),
                        );
                    }
                    Addr::Elem { base, index } => match self.const_index(index) {
                        Some(Some(c)) => {
                            let o = self.reg(base);
                            let v = self.reg(*value);
                            let checked = self.null_check(base);
                            self.push(
                                VInst::StoreElemConst { c, checked },
                                vec![Operand::reg_use(o), Operand::reg_use(v)],
                                PRegSet::empty(),
                            );
                        }
                        Some(None) => {
                            let o = self.reg(base);
                            self.out_of_range(o, None)
                        }
                        None => match self.elem_addressed(base, index) {
                            Some(at) => {
                                let v = self.reg(*value);
                                self.push(
                                    VInst::StoreElemAt,
                                    vec![Operand::reg_use(at), Operand::reg_use(v)],
                                    PRegSet::empty(),
                                );
                            }
                            None => {
                                let (o, x) = (self.reg(base), self.reg(index));
                                let v = self.reg(*value);
                                let at = self.fresh();
                                let checked = self.null_check(base);
                                self.in_bounds.push((base, index, at));
                                self.push(
                                    VInst::StoreElem { checked },
                                    vec![
                                        Operand::reg_use(o),
                                        Operand::reg_use(x),
                                        Operand::reg_use(v),
                                        // Written before `v` is stored: not
                                        // in the register of a use.
                                        Operand::reg_def_at_start(at),
                                    ],
                                    PRegSet::empty(),
                                );
                            }
                        },
                    },
                    Addr::Global(g) => {
                        let v = self.reg(*value);
                        self.push(
                            VInst::StoreGlobal {
                                disp: 8 * (GLOBALS_BASE as i32 + g.0 as i32),
                            },
                            vec![Operand::reg_use(v)],
                            PRegSet::empty(),
                        );
                    }
                }
            }
            InstKind::Len(x) => {
                let d = def(d, self);
                let a = self.reg(*x);
                let checked = self.null_check(*x);
                self.push(
                    VInst::Len { checked },
                    vec![Operand::reg_use(a), Operand::reg_def(d)],
                    PRegSet::empty(),
                );
            }
            InstKind::Call {
                callee: Callee::Func(g),
                args,
            } if self.inline && inlinable(&self.m.funcs[g.index()]) => {
                let m = self.m;
                self.inline_call(&m.funcs[g.index()], args, d)
            }
            InstKind::Call { callee, args } => {
                let mut ops = Vec::new();
                let abi: &[PReg] = match callee {
                    Callee::Func(_) => {
                        // The first arguments in registers, the rest at
                        // `[rsp + 8k]` (k counts every argument).
                        let mut used: Vec<VReg> = Vec::new();
                        for (k, &v) in args.iter().enumerate() {
                            match regs::ARGS.get(k) {
                                Some(&r) => {
                                    let mut a = self.reg(v);
                                    if used.contains(&a) {
                                        // One value in two argument registers: a copy.
                                        let c = self.fresh();
                                        self.push(
                                            VInst::Move,
                                            vec![Operand::reg_use(a), Operand::reg_def(c)],
                                            PRegSet::empty(),
                                        );
                                        a = c;
                                    }
                                    used.push(a);
                                    ops.push(Operand::reg_fixed_use(a, r));
                                }
                                None => self.store_arg(k, v),
                            }
                        }
                        &regs::MODULE_CALL_CLOBBERS
                    }
                    Callee::Extern(_) => {
                        for (k, &v) in args.iter().enumerate() {
                            self.store_arg(k, v);
                        }
                        &regs::CALLER_SAVED
                    }
                };
                let clobbers = match d {
                    Some(d) => {
                        ops.push(Operand::reg_fixed_def(d, regs::RAX));
                        abi_clobbers(abi, &[regs::RAX])
                    }
                    None => abi_clobbers(abi, &[]),
                };
                let inst = match *callee {
                    Callee::Func(g) => VInst::Call { func: g.0 },
                    Callee::Extern(e) => VInst::CallExtern {
                        ext: e.0,
                        nargs: args.len() as u32,
                    },
                };
                self.push(inst, ops, clobbers);
            }
            InstKind::Escape(v) => {
                let is_ref = f.value_type(*v).is_ref();
                let r = self.reg(*v);
                self.push(
                    VInst::Escape { is_ref },
                    vec![Operand::reg_fixed_use(r, regs::RSI)],
                    call_clobbers(&[]),
                );
            }
            InstKind::NullCheck(x) => {
                let checked = self.null_check(*x);
                if checked != NullCheck::Skip {
                    let a = self.reg(*x);
                    self.push(
                        VInst::NullCheck { checked },
                        vec![Operand::reg_use(a)],
                        PRegSet::empty(),
                    );
                }
            }
            InstKind::BoundsCheck(base, index) => self.bounds_check(*base, *index),
            InstKind::Guard(c) => match self.imm32(*c) {
                Some(k) if k != 0 => {}
                _ => {
                    let r = self.reg(*c);
                    self.push(VInst::Guard, vec![Operand::reg_use(r)], PRegSet::empty());
                }
            },
            InstKind::Jmp(_) | InstKind::Br(..) | InstKind::Ret(_) | InstKind::Unreachable => {
                unreachable!("terminators are lowered by lower_terminator")
            }
        }
    }

    /// `boundscheck base, index`: an element access's checks without the
    /// read; nothing when an earlier access of this block checked the same
    /// element, and a later one reuses the address this one computes.
    fn bounds_check(&mut self, base: Value, index: Value) {
        match self.const_index(index) {
            Some(Some(c)) => {
                let o = self.reg(base);
                let checked = self.null_check(base);
                self.push(
                    VInst::BoundsCheckConst { c, checked },
                    vec![Operand::reg_use(o)],
                    PRegSet::empty(),
                );
            }
            Some(None) => {
                let o = self.reg(base);
                self.out_of_range(o, None)
            }
            None if self.elem_addressed(base, index).is_some() => {}
            None => {
                self.first_elem_check(base, index, |checked| VInst::BoundsCheck { checked }, None)
            }
        }
    }

    /// The first bounds check of `base[index]` in this block (a load's or a
    /// `boundscheck`'s): operands `[use base, use index, (def d)?, def at]`,
    /// where `at` is recorded for the block's later accesses of the element.
    fn first_elem_check(
        &mut self,
        base: Value,
        index: Value,
        make: impl FnOnce(NullCheck) -> VInst,
        result: Option<Operand>,
    ) {
        let (o, x) = (self.reg(base), self.reg(index));
        let at = self.fresh();
        let checked = self.null_check(base);
        self.in_bounds.push((base, index, at));
        let mut ops = vec![Operand::reg_use(o), Operand::reg_use(x)];
        ops.extend(result);
        ops.push(Operand::reg_def(at));
        self.push(make(checked), ops, PRegSet::empty());
    }

    /// `v` (the result of `new` or `newarray`) is non-null.
    fn known_non_null(&mut self, v: Option<Value>) {
        if let Some(v) = v {
            self.non_null_in[v.index()] = self.stamp;
        }
    }

    /// The body of the [`inlinable`] function `g` in place of a call to it
    /// with arguments `args`, its result in `d`: the call's fuel unit and
    /// frame-depth check, then `g`'s instructions over fresh virtual
    /// registers (its parameters are the arguments' registers).
    fn inline_call(&mut self, g: &'a Function, args: &[Value], d: Option<VReg>) {
        let arg_regs: Vec<VReg> = args.iter().map(|&v| self.reg(v)).collect();
        self.push(VInst::InlinedCall, vec![], PRegSet::empty());
        let b = g.layout[0];
        let insts = &g.blocks[b.index()].insts;
        let (&last, body) = insts.split_last().expect("inlinable");
        let ret = match g.inst(last).kind {
            InstKind::Ret(v) => v,
            _ => None,
        };
        let mut map = vec![VReg::invalid(); g.values.len()];
        for (&p, r) in g.params.iter().zip(arg_regs) {
            map[p.index()] = r;
        }
        for &i in body {
            if let Some(r) = g.inst(i).result {
                map[r.index()] = match (ret, d) {
                    (Some(v), Some(d)) if v == r => d,
                    _ => self.fresh(),
                };
            }
        }
        let caller = std::mem::replace(&mut self.f, g);
        let names = self.names.take();
        let callee_names = names.is_some().then(|| ir::Names::new(g));
        self.inlined = Some(map);
        for &i in body {
            if let Some(n) = &callee_names {
                let text = ir::print_inst(self.m, g, n, i);
                self.code.comments.push((
                    self.code.insts.len(),
                    format!("(inlined @{}) {}", g.name, text.trim()),
                ));
            }
            self.lower_inst(b, i);
        }
        if let (Some(v), Some(d)) = (ret, d) {
            let r = self.reg(v);
            if r != d {
                // A parameter or a constant returned as is.
                self.push(
                    VInst::Move,
                    vec![Operand::reg_use(r), Operand::reg_def(d)],
                    PRegSet::empty(),
                );
            }
        }
        self.inlined = None;
        self.names = names;
        self.f = caller;
    }

    /// For a constant index: `Some(Some(c))` when it may be in bounds,
    /// `Some(None)` when it never is; `None` for a variable index.
    fn const_index(&self, v: Value) -> Option<Option<i32>> {
        match self.f.value_def(v) {
            ValueDef::Const(c) => {
                Some((0..=interp::MAX_ARRAY_LEN).contains(&c).then_some(c as i32))
            }
            _ => None,
        }
    }

    /// An element access whose constant index is never in bounds: null
    /// check, then `out_of_bounds`; `d` (a load's result) is defined as 0
    /// only to keep the code in SSA form (never reached).
    fn out_of_range(&mut self, o: VReg, d: Option<VReg>) {
        self.push(
            VInst::ElemOutOfRange,
            vec![Operand::reg_use(o)],
            PRegSet::empty(),
        );
        if let Some(d) = d {
            self.push(
                VInst::Const { imm: 0 },
                vec![Operand::reg_def(d)],
                PRegSet::empty(),
            );
        }
    }

    fn store_arg(&mut self, k: usize, v: Value) {
        let r = self.reg(v);
        self.push(
            VInst::StoreArg { i: k as u32 },
            vec![Operand::reg_use(r)],
            PRegSet::empty(),
        );
        self.code.max_out = self.code.max_out.max(k + 1);
    }

    fn binary(&mut self, op: BinOp, d: VReg, x: Value, y: Value) {
        let none = PRegSet::empty();
        if let Some(cc) = compare_cc(op) {
            let a = self.reg(x);
            match self.imm32(y) {
                Some(imm) => self.push(
                    VInst::CmpImm { cc, imm },
                    vec![Operand::reg_use(a), Operand::reg_def(d)],
                    none,
                ),
                None => {
                    let b = self.reg(y);
                    self.push(
                        VInst::Cmp { cc },
                        vec![
                            Operand::reg_use(a),
                            Operand::reg_use(b),
                            Operand::reg_def(d),
                        ],
                        none,
                    );
                }
            }
            return;
        }
        let shift = match op {
            BinOp::Shl => Some(Shift::Shl),
            BinOp::Lshr => Some(Shift::Lshr),
            BinOp::Ashr => Some(Shift::Ashr),
            _ => None,
        };
        if let Some(sop) = shift {
            let a = self.reg(x);
            match self.f.value_def(y) {
                ValueDef::Const(c) => self.push(
                    VInst::ShiftImm {
                        op: sop,
                        n: (c & 63) as u8,
                    },
                    vec![Operand::reg_use(a), Operand::reg_reuse_def(d, 0)],
                    none,
                ),
                _ => {
                    let b = self.reg(y);
                    self.push(
                        VInst::Shift { op: sop },
                        vec![
                            Operand::reg_use(a),
                            Operand::reg_fixed_use(b, regs::RCX),
                            Operand::reg_reuse_def(d, 0),
                        ],
                        none,
                    );
                }
            }
            return;
        }
        if matches!(op, BinOp::Sdiv | BinOp::Srem) {
            let a = self.reg(x);
            let b = self.reg(y);
            let rem = op == BinOp::Srem;
            let ops = if rem {
                vec![
                    Operand::reg_fixed_use(a, regs::RAX),
                    Operand::reg_use(b),
                    Operand::reg_fixed_def_at_start(d, regs::RDX),
                ]
            } else {
                let t = self.fresh();
                vec![
                    Operand::reg_fixed_use(a, regs::RAX),
                    Operand::reg_use(b),
                    Operand::reg_fixed_def(d, regs::RAX),
                    Operand::reg_fixed_def_at_start(t, regs::RDX),
                ]
            };
            let mut clobbers = PRegSet::empty();
            if rem {
                clobbers.add(regs::RAX);
            }
            self.push(VInst::Div { rem }, ops, clobbers);
            return;
        }
        let alu = match op {
            BinOp::Add => Alu::Add,
            BinOp::Sub => Alu::Sub,
            BinOp::And => Alu::And,
            BinOp::Or => Alu::Or,
            BinOp::Xor => Alu::Xor,
            _ => Alu::Mul,
        };
        let a = self.reg(x);
        match self.imm32(y) {
            // `imul d, a, imm` has a destination of its own.
            Some(imm) if alu == Alu::Mul => self.push(
                VInst::MulImm { imm },
                vec![Operand::reg_use(a), Operand::reg_def(d)],
                none,
            ),
            Some(imm) => self.push(
                VInst::AluImm { op: alu, imm },
                vec![Operand::reg_use(a), Operand::reg_reuse_def(d, 0)],
                none,
            ),
            None => {
                let b = self.reg(y);
                self.push(
                    VInst::Alu { op: alu },
                    vec![
                        Operand::reg_use(a),
                        Operand::reg_use(b),
                        Operand::reg_reuse_def(d, 0),
                    ],
                    none,
                );
            }
        }
    }

    /// The environment step before a volatile access: arguments base (a
    /// reference), index, stored value, as the interpreter passes them.
    fn volatile_step(&mut self, addr: &Addr, value: Option<Value>) {
        let mut n = 0usize;
        let mut mask = 0u64;
        match *addr {
            Addr::Field { base, .. } => {
                mask |= 1;
                self.store_arg(0, base);
                n = 1;
            }
            Addr::Elem { base, index } => {
                mask |= 1;
                self.store_arg(0, base);
                self.store_arg(1, index);
                n = 2;
            }
            Addr::Global(_) => {}
        }
        if let Some(v) = value {
            if self.f.value_type(v).is_ref() {
                mask |= 1 << n;
            }
            self.store_arg(n, v);
            n += 1;
        }
        self.push(
            VInst::Volatile {
                nargs: n as u32,
                mask,
            },
            vec![],
            call_clobbers(&[]),
        );
    }

    /// The arguments of the edge `from → to`: the phis' incoming values.
    fn edge_args(&mut self, from: Block, to: Block) -> Vec<VReg> {
        let f = self.f;
        let incoming: Vec<Value> = f.blocks[to.index()]
            .insts
            .iter()
            .map(|&i| f.inst(i))
            .map_while(|data| match &data.kind {
                InstKind::Phi(entries) => Some((data.result, entries)),
                _ => None,
            })
            .filter(|(r, _)| r.is_some())
            .map(|(_, entries)| {
                entries
                    .iter()
                    .find(|(p, _)| *p == from)
                    .map(|&(_, v)| v)
                    .expect("a verified phi has an entry per predecessor")
            })
            .collect();
        incoming.into_iter().map(|v| self.reg(v)).collect()
    }

    /// Constants for the edge's arguments, then a jump to `to`'s block.
    fn jump(&mut self, vb: usize, from: Block, to: Block, charge: bool) {
        let args = self.edge_args(from, to);
        let target = self.vblock[to.index()].expect("successors of reachable blocks are reachable");
        self.code.insts.push(InstData {
            inst: VInst::Jmp { target, charge },
            operands: vec![],
            clobbers: PRegSet::empty(),
            args,
        });
        self.code.blocks[vb]
            .succs
            .push(regalloc2::Block::new(target as usize));
    }

    fn lower_terminator(&mut self, b: Block, vb: usize, i: Inst) {
        match self.f.inst(i).kind {
            InstKind::Jmp(t) => self.jump(vb, b, t, true),
            InstKind::Br(c, t, e) => {
                let (et, ee) = self.edges[b.index()].expect("edges assigned");
                let inst = if let Some((cc, x, y)) = self.fused_compare(b, c) {
                    let a = self.reg(x);
                    match self.imm32(y) {
                        Some(imm) => (
                            VInst::CmpImmBr {
                                cc,
                                imm,
                                t: et,
                                e: ee,
                            },
                            vec![a],
                        ),
                        None => {
                            let bb = self.reg(y);
                            (VInst::CmpBr { cc, t: et, e: ee }, vec![a, bb])
                        }
                    }
                } else {
                    let r = self.reg(c);
                    (VInst::Br { t: et, e: ee }, vec![r])
                };
                let operands = inst.1.into_iter().map(Operand::reg_use).collect();
                self.push(inst.0, operands, PRegSet::empty());
                self.code.blocks[vb].succs = vec![
                    regalloc2::Block::new(et as usize),
                    regalloc2::Block::new(ee as usize),
                ];
                self.code.blocks[vb].end = self.code.insts.len();
                for (eb, to) in [(et, t), (ee, e)] {
                    let eb = eb as usize;
                    self.code.blocks[eb].start = self.code.insts.len();
                    self.jump(eb, b, to, false);
                    self.code.blocks[eb].end = self.code.insts.len();
                }
            }
            InstKind::Ret(v) => {
                let ops = match v {
                    Some(v) => {
                        let r = self.reg(v);
                        vec![Operand::reg_fixed_use(r, regs::RAX)]
                    }
                    None => vec![],
                };
                self.push(VInst::Ret, ops, PRegSet::empty());
            }
            _ => self.push(
                VInst::Trap {
                    kind: TrapKind::Unreachable,
                },
                vec![],
                PRegSet::empty(),
            ),
        }
    }
}

/// The registers the allocator hands out first: those no call preserves, so
/// a function that keeps its values there saves nothing (`r11` is its
/// scratch register). The callee-saved ones come after them
/// ([`non_preferred`]).
pub fn preferred() -> Vec<PReg> {
    vec![regs::RAX, regs::RCX, regs::RDX]
}

/// The allocatable registers module functions preserve (saved in the
/// prologue of a function that writes them): where values live across calls.
pub fn non_preferred() -> Vec<PReg> {
    regs::CALLEE_SAVED.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = "
func @mix(%x: i64, %y: i64) -> i64 {
entry:
  %t = mul %x, 3
  %u = add %t, %y
  ret %u
}

func @main(%a: [i64], %n: i64) -> i64 {
entry:
  jmp loop
loop:
  %i = phi [entry: 0], [loop: %i2]
  %idx = and %i, 3
  %m = call @mix(%i, %n)
  %old = load %a[%idx]
  %new = add %old, %m
  store %a[%idx], %new
  %other = load %a[%i]
  %i2 = add %i, %other
  %more = slt %i2, %n
  br %more, loop, done
done:
  ret 0
}
";

    fn module() -> Module {
        let (m, _) = ir::parse_module(LOOP, "loop").expect("parses");
        ir::verify_module(&m).expect("verifies");
        m
    }

    #[test]
    fn only_the_first_access_of_an_element_in_a_block_is_bounds_checked() {
        let m = module();
        let main = m.func(m.func_by_name("main").expect("main"));
        let code = select(&m, main, false, true);
        let elems: Vec<&VInst> = code
            .insts
            .iter()
            .map(|d| &d.inst)
            .filter(|i| {
                matches!(
                    i,
                    VInst::LoadElem { .. }
                        | VInst::StoreElem { .. }
                        | VInst::LoadElemAt
                        | VInst::StoreElemAt
                )
            })
            .collect();
        // load a[idx] checked, store a[idx] not (it reuses the address),
        // load a[i] (another index) checked; %a's null check only on loop entry.
        let entry = NullCheck::OnLoopEntry;
        assert_eq!(
            elems,
            [
                &VInst::LoadElem { checked: entry },
                &VInst::StoreElemAt,
                &VInst::LoadElem {
                    checked: NullCheck::Skip
                }
            ]
        );
        let at = |k: usize| -> Vec<regalloc2::Operand> {
            let pos = code
                .insts
                .iter()
                .position(|d| &d.inst == elems[k])
                .expect("there");
            code.insts[pos].operands.clone()
        };
        // The store writes through the address the load defined.
        assert_eq!(at(1)[0].vreg(), at(0)[3].vreg());
    }

    #[test]
    fn calls_to_module_functions_keep_the_callee_saved_registers() {
        let m = module();
        let main = m.func(m.func_by_name("main").expect("main"));
        let code = select(&m, main, false, false);
        let call = code
            .insts
            .iter()
            .find(|d| matches!(d.inst, VInst::Call { .. }))
            .expect("a call");
        for r in regs::CALLEE_SAVED {
            assert!(!call.clobbers.contains(r), "{r:?}");
        }
        assert!(call.clobbers.contains(regs::RCX) && call.clobbers.contains(regs::RDX));
        let fixed: Vec<_> = call
            .operands
            .iter()
            .filter(|o| o.kind() == regalloc2::OperandKind::Use)
            .map(|o| o.constraint())
            .collect();
        assert_eq!(
            fixed,
            [
                regalloc2::OperandConstraint::FixedReg(regs::RCX),
                regalloc2::OperandConstraint::FixedReg(regs::RDX)
            ]
        );
        // The leaf @mix has no frame; @main saves what it writes.
        let opts = crate::CompileOptions {
            no_inline: true,
            ..Default::default()
        };
        let c = crate::compile_with(&m, opts).expect("compiles");
        let text = crate::listing(&c);
        let (mix, main) = text.split_once("func @main").expect("both functions");
        let mix = mix.split("func @mix").nth(1).expect("@mix");
        assert!(!mix.contains("push rbp") && !mix.contains("rsp,"), "{mix}");
        assert!(main.contains("push rbp"), "{main}");
    }

    #[test]
    fn a_small_pure_leaf_is_inlined_with_the_calls_fuel_and_depth_check() {
        let m = module();
        let main = m.func(m.func_by_name("main").expect("main"));
        assert!(inlinable(m.func(m.func_by_name("mix").expect("mix"))));
        assert!(!inlinable(main), "more than one block");
        let code = select(&m, main, false, true);
        let kinds: Vec<&VInst> = code.insts.iter().map(|d| &d.inst).collect();
        assert!(!kinds.iter().any(|i| matches!(i, VInst::Call { .. })));
        // What is left of the call, then @mix's `mul` and `add` in the caller.
        let at = kinds
            .iter()
            .position(|i| **i == VInst::InlinedCall)
            .expect("the call's checks");
        assert_eq!(kinds[at + 1], &VInst::MulImm { imm: 3 });
        assert!(matches!(kinds[at + 2], VInst::Alu { op: Alu::Add }));
        // The `add` defines the call's result.
        let m_result = main
            .inst_iter()
            .find_map(|i| match main.inst(i).kind {
                InstKind::Call { .. } => main.inst(i).result,
                _ => None,
            })
            .expect("the call's result");
        assert_eq!(code.insts[at + 2].operands[2].vreg(), vr(m_result));
        let text = crate::listing(&crate::compile(&m).expect("compiles"));
        let main_text = text.split_once("func @main").expect("main").1;
        assert!(!main_text.contains("call "), "{main_text}");
        assert!(main_text.contains("test r12,r12"), "{main_text}");
    }

    #[test]
    fn a_leaf_with_a_memory_access_a_call_or_too_many_insts_is_called() {
        let text = "
type P { x: i64 }
func @load(%p: P) -> i64 {
entry:
  %v = load %p.x
  ret %v
}
func @calls(%x: i64) -> i64 {
entry:
  %v = call @long(%x)
  ret %v
}
func @long(%x: i64) -> i64 {
entry:
  %a1 = add %x, 1
  %a2 = add %a1, 1
  %a3 = add %a2, 1
  %a4 = add %a3, 1
  %a5 = add %a4, 1
  %a6 = add %a5, 1
  %a7 = add %a6, 1
  %a8 = add %a7, 1
  %a9 = add %a8, 1
  ret %a9
}
func @short(%x: i64) -> i64 {
entry:
  %a1 = sdiv %x, 3
  %a2 = select %a1, %x, %a1
  %a3 = neg %a2
  ret %x
}
";
        let (m, _) = ir::parse_module(text, "t").expect("parses");
        let f = |n: &str| m.func(m.func_by_name(n).expect("there"));
        assert!(!inlinable(f("load")));
        assert!(!inlinable(f("calls")));
        assert!(!inlinable(f("long")));
        assert!(inlinable(f("short")));
    }

    /// A loop whose header loads `%p.x` and then runs `n` additions.
    fn loop_with_header_of(n: usize) -> Module {
        let mut t = String::from(
            "type P { x: i64 }\nfunc @f(%p: P, %n: i64) -> i64 {\nentry:\n  jmp head\nhead:\n  %i = phi [entry: 0], [head: %i2]\n  %v0 = load %p.x\n",
        );
        for k in 1..=n {
            t.push_str(&format!("  %v{k} = add %v{}, %i\n", k - 1));
        }
        t.push_str(&format!(
            "  %i2 = add %v{n}, 1\n  %more = slt %i2, %n\n  br %more, head, done\ndone:\n  ret %i2\n}}\n"
        ));
        let (m, _) = ir::parse_module(&t, "t").expect("parses");
        ir::verify_module(&m).expect("verifies");
        m
    }

    #[test]
    fn a_loop_header_is_emitted_twice_only_when_short() {
        for (n, twice) in [(4, true), (TWICE_MAX_INSTS, false)] {
            let m = loop_with_header_of(n);
            let code = select(&m, &m.funcs[0], false, true);
            let head = code.blocks.iter().find(|b| b.twice);
            assert_eq!(head.is_some(), twice, "n = {n}");
            let load = code
                .insts
                .iter()
                .find_map(|d| d.inst.null_check())
                .expect("the load");
            let want = if twice {
                NullCheck::OnLoopEntry
            } else {
                NullCheck::Emit
            };
            assert_eq!(load, want, "n = {n}");
        }
        // Natively, the long header checks %p in every iteration and still
        // traps on null; the short one too (in its loop-entry copy).
        for n in [4, TWICE_MAX_INSTS] {
            let m = loop_with_header_of(n);
            let native = crate::NativeProgram::new(&m).expect("compiles");
            let fid = m.func_by_name("f").expect("f");
            let config = interp::Config::default();
            for input in ["p = P{x: 1}, n = 50", "p = null, n = 50"] {
                let spec = ir::parse_input_spec(input, "<input>", &m, m.func(fid)).expect("input");
                let want = interp::Program::new(&m).run(fid, &spec, &config);
                assert_eq!(
                    native.run(fid, &spec, &config).behaviour,
                    want.behaviour,
                    "{input}"
                );
            }
        }
    }
}
