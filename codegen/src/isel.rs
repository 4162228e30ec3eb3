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
//! * A base an earlier access of the same block already null-checked is not
//!   checked again (SSA values never change, and the earlier check trapped
//!   if it was null); nor is the result of `new`/`newarray`. Likewise an
//!   element access whose array and index an earlier access of the block
//!   bounds-checked is not checked again (array lengths never change).
//! * Fuel is charged before every taken `jmp`/`br` edge and every call.
//! * Phis become block parameters; each `br` edge gets a block of its own
//!   (no critical edges), where the allocator puts the edge's parallel copy.
//! * Blocks no path from the entry reaches are not lowered (never executed;
//!   IR.md does not even check dominance in them).

use crate::vcode::{Alu, Cc, InstData, Shift, VBlock, VCode, VInst};
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
    /// (array, index) pairs an earlier element access of this block
    /// bounds-checked.
    in_bounds: Vec<(Value, Value)>,
}

fn vr(v: Value) -> VReg {
    VReg::new(v.index(), RegClass::Int)
}

/// The [`VCode`] of function `f` of module `m`; with `comments`, each IR
/// instruction's text is kept for the listing.
pub fn select(m: &Module, f: &Function, comments: bool) -> VCode {
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
        in_bounds: Vec::new(),
    };
    let order = s.reachable_layout();
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

impl Selector<'_> {
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
            _ => vr(v),
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

    /// Whether `v` is known non-null in this block (an earlier access
    /// null-checked it); from now on it is.
    fn checked_before(&mut self, v: Value) -> bool {
        let known = self.non_null_in[v.index()] == self.stamp;
        self.non_null_in[v.index()] = self.stamp;
        known
    }

    /// Whether `base[index]` is known in bounds in this block (an earlier
    /// access checked the same array and index: lengths never change and SSA
    /// values never do); from now on it is.
    fn bounds_checked_before(&mut self, base: Value, index: Value) -> bool {
        if self.in_bounds.contains(&(base, index)) {
            return true;
        }
        self.in_bounds.push((base, index));
        false
    }

    fn lower_block(&mut self, b: Block, is_entry: bool) {
        self.stamp += 1;
        self.in_bounds.clear();
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
        let d = data.result.map(vr);
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
                        let known = self.checked_before(base);
                        let checked = if zoo!(NativeLoadedBaseNonNull) {
                            loaded || known
                        } else {
                            known
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
                    Addr::Elem { base, index } => {
                        let o = self.reg(base);
                        match self.const_index(index) {
                            Some(Some(c)) => self.push(
                                VInst::LoadElemConst { c },
                                vec![Operand::reg_use(o), Operand::reg_def(d)],
                                PRegSet::empty(),
                            ),
                            Some(None) => self.out_of_range(o, Some(d)),
                            None => {
                                let x = self.reg(index);
                                let t = self.fresh();
                                let checked = self.checked_before(base);
                                let in_bounds = self.bounds_checked_before(base, index);
                                self.push(
                                    VInst::LoadElem { checked, in_bounds },
                                    vec![
                                        Operand::reg_use(o),
                                        Operand::reg_use(x),
                                        Operand::reg_def(d),
                                        Operand::reg_temp(t),
                                    ],
                                    PRegSet::empty(),
                                );
                            }
                        }
                    }
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
                        let checked = self.checked_before(base);
                        self.push(
                            VInst::StoreField {
                                disp: 8 * (field.index as i32 + 1),
                                checked,
                            },
                            vec![Operand::reg_use(o), Operand::reg_use(v)],
                            PRegSet::empty(),
                        );
                    }
                    Addr::Elem { base, index } => {
                        let o = self.reg(base);
                        match self.const_index(index) {
                            Some(Some(c)) => {
                                let v = self.reg(*value);
                                self.push(
                                    VInst::StoreElemConst { c },
                                    vec![Operand::reg_use(o), Operand::reg_use(v)],
                                    PRegSet::empty(),
                                );
                            }
                            Some(None) => self.out_of_range(o, None),
                            None => {
                                let x = self.reg(index);
                                let v = self.reg(*value);
                                let t = self.fresh();
                                let checked = self.checked_before(base);
                                let in_bounds = self.bounds_checked_before(base, index);
                                self.push(
                                    VInst::StoreElem { checked, in_bounds },
                                    vec![
                                        Operand::reg_use(o),
                                        Operand::reg_use(x),
                                        Operand::reg_use(v),
                                        Operand::reg_temp(t),
                                    ],
                                    PRegSet::empty(),
                                );
                            }
                        }
                    }
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
                self.push(
                    VInst::Len,
                    vec![Operand::reg_use(a), Operand::reg_def(d)],
                    PRegSet::empty(),
                );
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
        let code = select(&m, main, false);
        let elems: Vec<bool> = code
            .insts
            .iter()
            .filter_map(|d| match d.inst {
                VInst::LoadElem { in_bounds, .. } | VInst::StoreElem { in_bounds, .. } => {
                    Some(in_bounds)
                }
                _ => None,
            })
            .collect();
        // load a[idx] checked, store a[idx] not, load a[i] (another index) checked.
        assert_eq!(elems, [false, true, false]);
    }

    #[test]
    fn calls_to_module_functions_keep_the_callee_saved_registers() {
        let m = module();
        let main = m.func(m.func_by_name("main").expect("main"));
        let code = select(&m, main, false);
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
        let c = crate::compile(&m).expect("compiles");
        let text = crate::listing(&c);
        let (mix, main) = text.split_once("func @main").expect("both functions");
        let mix = mix.split("func @mix").nth(1).expect("@mix");
        assert!(!mix.contains("push rbp") && !mix.contains("rsp,"), "{mix}");
        assert!(main.contains("push rbp"), "{main}");
    }
}
