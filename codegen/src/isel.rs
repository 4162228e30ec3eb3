//! Instruction selection: one IR function becomes x86-64 instructions in an
//! iced [`CodeAssembler`], with the exact trap and fuel behaviour of the
//! interpreter (IR.md §4, §7).
//!
//! * Field and element accesses use `base + index*8 + disp` addressing on the
//!   heap base `r15`; element accesses are bounds-checked with one unsigned
//!   compare against the length word (a negative index is a huge unsigned one).
//! * A compare whose only use is the `br` ending its block is not
//!   materialised: the branch re-does the `cmp` and jumps on its flags.
//! * `sdiv`/`srem` test for zero (trap) and for `-1` (`MIN / -1 = MIN`,
//!   `MIN % -1 = 0`, without `idiv`, which would fault).
//! * Fuel is charged (`sub r13, 1; jb out_of_fuel`) before every taken
//!   `jmp`/`br` edge and every call; a call first charges fuel, then checks
//!   the frame budget in `r12`, as the interpreter does.
//! * Phis become parallel copies on the edges, sequentialised with cycles
//!   broken through a scratch slot.

use crate::abi::{self, OFF_ENV};
use crate::frame::{Frame, Loc};
use iced_x86::code_asm::*;
use interp::env::VOLATILE;
use interp::heap::{array_header, GLOBALS_BASE};
use interp::TrapKind;
use ir::{Addr, BinOp, Block, Callee, Function, Inst, InstKind, Module, UnOp, Value, ValueDef};

/// Labels shared by every function of a module.
pub struct ModuleLabels {
    /// The entry of each function.
    pub funcs: Vec<CodeLabel>,
    /// One stub per trap kind (indexed like [`TrapKind::ALL`]).
    pub traps: Vec<CodeLabel>,
    /// The stub that raises the trap a runtime function left in `pending`.
    pub pending: CodeLabel,
}

impl ModuleLabels {
    fn trap(&self, t: TrapKind) -> CodeLabel {
        self.traps[abi::trap_code(t) as usize - 1]
    }
}

/// A comment of the listing: before the instruction with this index, this text.
pub type Comment = (usize, String);

/// A condition code.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Cc {
    E,
    Ne,
    L,
    Le,
    G,
    Ge,
    B,
    Be,
    A,
    Ae,
}

fn compare_cc(op: BinOp) -> Option<Cc> {
    Some(match op {
        BinOp::Eq => Cc::E,
        BinOp::Ne => Cc::Ne,
        BinOp::Slt => Cc::L,
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

/// The right-hand operand of a two-operand instruction.
enum Rhs {
    Imm(i32),
    Mem(AsmMemoryOperand),
}

type R = Result<(), IcedError>;

/// Lowers one function.
pub struct FuncLowering<'a> {
    a: &'a mut CodeAssembler,
    m: &'a Module,
    f: &'a Function,
    frame: Frame,
    labels: &'a ModuleLabels,
    blocks: Vec<CodeLabel>,
    uses: Vec<u32>,
    comments: &'a mut Vec<Comment>,
}

fn fits_i32(c: i64) -> Option<i32> {
    i32::try_from(c).ok()
}

/// Bind `label` to the next instruction (a zero-size one, so labels never collide).
pub fn bind(a: &mut CodeAssembler, label: &mut CodeLabel) -> R {
    a.set_label(label)?;
    a.zero_bytes()
}

impl<'a> FuncLowering<'a> {
    /// Prepare to lower `f` (function `fid` of `m`) into `a`.
    pub fn new(
        a: &'a mut CodeAssembler,
        m: &'a Module,
        f: &'a Function,
        labels: &'a ModuleLabels,
        comments: &'a mut Vec<Comment>,
    ) -> Self {
        let blocks = (0..f.blocks.len()).map(|_| a.create_label()).collect();
        let mut uses = vec![0u32; f.values.len()];
        for i in f.inst_iter() {
            f.inst(i).kind.for_each_operand(|v| uses[v.index()] += 1);
        }
        FuncLowering {
            a,
            m,
            f,
            frame: Frame::new(f),
            labels,
            blocks,
            uses,
            comments,
        }
    }

    /// The frame size in bytes (for the executor's stack budget).
    pub fn frame_bytes(&self) -> usize {
        self.frame.size as usize + 16
    }

    fn comment(&mut self, text: String) {
        let at = self.a.instructions().len();
        self.comments.push((at, text));
    }

    fn slot(d: i32) -> AsmMemoryOperand {
        qword_ptr(rbp + d)
    }

    /// Load `v` into `r`.
    fn ld(&mut self, r: AsmRegister64, v: Value) -> R {
        match self.frame.loc(v) {
            Loc::Imm(c) => match fits_i32(c) {
                Some(c) => self.a.mov(r, c as i64),
                None => self.a.mov(r, c),
            },
            Loc::Mem(d) => self.a.mov(r, Self::slot(d)),
        }
    }

    /// Store `r` into the home of `v`.
    fn st(&mut self, v: Option<Value>, r: AsmRegister64) -> R {
        match v.map(|v| self.frame.loc(v)) {
            Some(Loc::Mem(d)) => self.a.mov(Self::slot(d), r),
            _ => Ok(()),
        }
    }

    /// `v` as a right-hand operand (an immediate that fits, or its slot), or
    /// `None` when it must be loaded into a register first.
    fn rhs(&self, v: Value) -> Option<Rhs> {
        match self.frame.loc(v) {
            Loc::Imm(c) => fits_i32(c).map(Rhs::Imm),
            Loc::Mem(d) => Some(Rhs::Mem(Self::slot(d))),
        }
    }

    fn trap_label(&self, t: TrapKind) -> CodeLabel {
        self.labels.trap(t)
    }

    /// `sub r13, 1; jb out_of_fuel`.
    fn charge_fuel(&mut self) -> R {
        self.a.sub(r13, 1)?;
        let l = self.trap_label(TrapKind::OutOfFuel);
        self.a.jb(l)
    }

    fn jcc(&mut self, cc: Cc, l: CodeLabel) -> R {
        let a = &mut *self.a;
        match cc {
            Cc::E => a.je(l),
            Cc::Ne => a.jne(l),
            Cc::L => a.jl(l),
            Cc::Le => a.jle(l),
            Cc::G => a.jg(l),
            Cc::Ge => a.jge(l),
            Cc::B => a.jb(l),
            Cc::Be => a.jbe(l),
            Cc::A => a.ja(l),
            Cc::Ae => a.jae(l),
        }
    }

    fn setcc(&mut self, cc: Cc) -> R {
        let a = &mut *self.a;
        match cc {
            Cc::E => a.sete(al),
            Cc::Ne => a.setne(al),
            Cc::L => a.setl(al),
            Cc::Le => a.setle(al),
            Cc::G => a.setg(al),
            Cc::Ge => a.setge(al),
            Cc::B => a.setb(al),
            Cc::Be => a.setbe(al),
            Cc::A => a.seta(al),
            Cc::Ae => a.setae(al),
        }
    }

    /// `cmp rax(=a), b`.
    fn cmp_values(&mut self, x: Value, y: Value) -> R {
        self.ld(rax, x)?;
        match self.rhs(y) {
            Some(Rhs::Imm(c)) => self.a.cmp(rax, c),
            Some(Rhs::Mem(m)) => self.a.cmp(rax, m),
            None => {
                self.ld(rcx, y)?;
                self.a.cmp(rax, rcx)
            }
        }
    }

    /// Lower the whole function: prologue, then every block of the layout.
    /// Returns the bound entry label (iced needs the bound copy to find its address).
    pub fn lower(&mut self, fid: usize) -> Result<CodeLabel, IcedError> {
        let mut entry = self.labels.funcs[fid];
        bind(self.a, &mut entry)?;
        self.a.push(rbp)?;
        self.a.mov(rbp, rsp)?;
        if self.frame.size > 0 {
            self.a.sub(rsp, self.frame.size)?;
        }
        let layout = self.f.layout.clone();
        for (k, &b) in layout.iter().enumerate() {
            let next = layout.get(k + 1).copied();
            let mut l = self.blocks[b.index()];
            bind(self.a, &mut l)?;
            self.comment(format!("{}:", self.f.blocks[b.index()].name));
            self.lower_block(b, next)?;
        }
        Ok(entry)
    }

    fn lower_block(&mut self, b: Block, next: Option<Block>) -> R {
        let f = self.f;
        let names = ir::Names::new(f);
        let insts = &f.blocks[b.index()].insts;
        for &i in insts {
            let text = ir::print_inst(self.m, f, &names, i);
            self.comment(text.trim().to_string());
            let data = f.inst(i);
            if data.kind.is_terminator() {
                return self.lower_terminator(b, i, next);
            }
            self.lower_inst(b, i)?;
        }
        // A block without a terminator (ill-formed) never falls through.
        let l = self.trap_label(TrapKind::Unreachable);
        self.a.jmp(l)
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

    /// Whether instruction `i` is a compare fused into its block's `br`.
    fn is_fused(&self, b: Block, i: Inst) -> bool {
        let Some(r) = self.f.inst(i).result else {
            return false;
        };
        let Some(t) = self.f.terminator(b) else {
            return false;
        };
        match self.f.inst(t).kind {
            InstKind::Br(c, ..) => c == r && self.fused_compare(b, c).is_some(),
            _ => false,
        }
    }

    fn lower_inst(&mut self, b: Block, i: Inst) -> R {
        let f = self.f;
        let data = f.inst(i);
        let d = data.result;
        match &data.kind {
            InstKind::Phi(_) => Ok(()),
            InstKind::Binary(op, x, y) => {
                if self.is_fused(b, i) {
                    return Ok(());
                }
                self.binary(*op, d, *x, *y)
            }
            InstKind::Unary(op, x) => {
                self.ld(rax, *x)?;
                match op {
                    UnOp::Neg => self.a.neg(rax)?,
                    UnOp::Not => self.a.not(rax)?,
                    UnOp::Copy => {}
                }
                self.st(d, rax)
            }
            InstKind::Select(c, x, y) => {
                match self.frame.loc(*c) {
                    Loc::Imm(k) => self.ld(rax, if k != 0 { *x } else { *y })?,
                    Loc::Mem(cd) => {
                        self.ld(rax, *x)?;
                        self.ld(rdx, *y)?;
                        self.a.cmp(Self::slot(cd), 0)?;
                        self.a.cmove(rax, rdx)?;
                    }
                }
                self.st(d, rax)
            }
            InstKind::New(s) => {
                let n = self.m.structs.get(s.index()).map_or(0, |s| s.fields.len());
                self.a.mov(rdi, r14)?;
                self.a.mov(rsi, s.0 as i64)?;
                self.a.mov(rdx, n as i64)?;
                self.call_rt(abi::rt_new as *const () as u64)?;
                self.check_alloc()?;
                self.st(d, rax)
            }
            InstKind::NewArray { elem, len } => {
                self.ld(rdx, *len)?;
                self.a.mov(rdi, r14)?;
                self.a.mov(rsi, array_header(*elem) as i64)?;
                self.call_rt(abi::rt_newarray as *const () as u64)?;
                self.check_alloc()?;
                self.st(d, rax)
            }
            InstKind::Load { addr, volatile } => {
                if *volatile {
                    self.volatile_step(addr, None)?;
                }
                match *addr {
                    Addr::Field { base, field } => {
                        self.ld(rax, base)?;
                        self.null_check(rax)?;
                        let disp = 8 * (field.index as i32 + 1);
                        self.a.mov(rax, qword_ptr(r15 + rax * 8 + disp))?;
                    }
                    Addr::Elem { base, index } => {
                        let m = self.elem_addr(base, index)?;
                        self.a.mov(rax, m)?;
                    }
                    Addr::Global(g) => {
                        let disp = 8 * (GLOBALS_BASE as i32 + g.0 as i32);
                        self.a.mov(rax, qword_ptr(r15 + disp))?;
                    }
                }
                self.st(d, rax)
            }
            InstKind::Store {
                addr,
                value,
                volatile,
            } => {
                if *volatile {
                    self.volatile_step(addr, Some(*value))?;
                }
                match *addr {
                    Addr::Field { base, field } => {
                        self.ld(rax, base)?;
                        self.null_check(rax)?;
                        self.ld(rdx, *value)?;
                        let disp = 8 * (field.index as i32 + 1);
                        self.a.mov(qword_ptr(r15 + rax * 8 + disp), rdx)
                    }
                    Addr::Elem { base, index } => {
                        let m = self.elem_addr(base, index)?;
                        self.ld(rdx, *value)?;
                        self.a.mov(m, rdx)
                    }
                    Addr::Global(g) => {
                        self.ld(rdx, *value)?;
                        let disp = 8 * (GLOBALS_BASE as i32 + g.0 as i32);
                        self.a.mov(qword_ptr(r15 + disp), rdx)
                    }
                }
            }
            InstKind::Len(x) => {
                self.ld(rax, *x)?;
                self.null_check(rax)?;
                self.a.mov(rax, qword_ptr(r15 + rax * 8 + 8))?;
                self.st(d, rax)
            }
            InstKind::Call { callee, args } => {
                self.charge_fuel()?;
                for (k, &v) in args.iter().enumerate() {
                    self.ld(rax, v)?;
                    self.a.mov(qword_ptr(rsp + 8 * k as i32), rax)?;
                }
                match *callee {
                    Callee::Func(g) => {
                        self.a.sub(r12, 1)?;
                        let l = self.trap_label(TrapKind::StackOverflow);
                        self.a.jb(l)?;
                        let target = self.labels.funcs[g.index()];
                        self.a.call(target)?;
                        self.a.add(r12, 1)?;
                    }
                    Callee::Extern(e) => {
                        self.a.mov(rdi, qword_ptr(r14 + OFF_ENV))?;
                        self.a.mov(rsi, e.0 as i64)?;
                        self.a.mov(rdx, rsp)?;
                        self.a.mov(rcx, args.len() as i64)?;
                        self.a.xor(r8d, r8d)?;
                        self.call_rt(interp::loadstar_env_step as *const () as u64)?;
                    }
                }
                self.st(d, rax)
            }
            InstKind::Escape(v) => {
                let is_ref = f.value_type(*v).is_ref();
                self.ld(rsi, *v)?;
                self.a.mov(rdi, r14)?;
                self.a.mov(rdx, is_ref as i64)?;
                self.call_rt(abi::rt_escape as *const () as u64)
            }
            InstKind::Guard(c) => {
                let l = self.trap_label(TrapKind::GuardFailed);
                match self.frame.loc(*c) {
                    Loc::Imm(0) => self.a.jmp(l),
                    Loc::Imm(_) => Ok(()),
                    Loc::Mem(cd) => {
                        self.a.cmp(Self::slot(cd), 0)?;
                        self.a.je(l)
                    }
                }
            }
            InstKind::Jmp(_) | InstKind::Br(..) | InstKind::Ret(_) | InstKind::Unreachable => {
                unreachable!("terminators are lowered by lower_terminator")
            }
        }
    }

    fn binary(&mut self, op: BinOp, d: Option<Value>, x: Value, y: Value) -> R {
        if let Some(cc) = compare_cc(op) {
            self.cmp_values(x, y)?;
            self.setcc(cc)?;
            self.a.movzx(rax, al)?;
            return self.st(d, rax);
        }
        match op {
            BinOp::Sdiv | BinOp::Srem => return self.division(op, d, x, y),
            BinOp::Shl | BinOp::Lshr | BinOp::Ashr => {
                self.ld(rax, x)?;
                match self.frame.loc(y) {
                    Loc::Imm(c) => {
                        let c = (c & 63) as u32;
                        match op {
                            BinOp::Shl => self.a.shl(rax, c)?,
                            BinOp::Lshr => self.a.shr(rax, c)?,
                            _ => self.a.sar(rax, c)?,
                        }
                    }
                    Loc::Mem(_) => {
                        // x86 masks a 64-bit shift count to 6 bits: `b & 63`.
                        self.ld(rcx, y)?;
                        match op {
                            BinOp::Shl => self.a.shl(rax, cl)?,
                            BinOp::Lshr => self.a.shr(rax, cl)?,
                            _ => self.a.sar(rax, cl)?,
                        }
                    }
                }
                return self.st(d, rax);
            }
            _ => {}
        }
        self.ld(rax, x)?;
        let rhs = match self.rhs(y) {
            Some(r) => r,
            None => {
                self.ld(rcx, y)?;
                return self.binary_rr(op, d);
            }
        };
        let a = &mut *self.a;
        match (op, rhs) {
            (BinOp::Add, Rhs::Imm(c)) => a.add(rax, c)?,
            (BinOp::Add, Rhs::Mem(m)) => a.add(rax, m)?,
            (BinOp::Sub, Rhs::Imm(c)) => a.sub(rax, c)?,
            (BinOp::Sub, Rhs::Mem(m)) => a.sub(rax, m)?,
            (BinOp::And, Rhs::Imm(c)) => a.and(rax, c)?,
            (BinOp::And, Rhs::Mem(m)) => a.and(rax, m)?,
            (BinOp::Or, Rhs::Imm(c)) => a.or(rax, c)?,
            (BinOp::Or, Rhs::Mem(m)) => a.or(rax, m)?,
            (BinOp::Xor, Rhs::Imm(c)) => a.xor(rax, c)?,
            (BinOp::Xor, Rhs::Mem(m)) => a.xor(rax, m)?,
            (BinOp::Mul, Rhs::Imm(c)) => a.imul_3(rax, rax, c)?,
            (BinOp::Mul, Rhs::Mem(m)) => a.imul_2(rax, m)?,
            _ => unreachable!("every other binary op is handled above"),
        }
        self.st(d, rax)
    }

    /// `rax = rax op rcx` for the arithmetic ops.
    fn binary_rr(&mut self, op: BinOp, d: Option<Value>) -> R {
        let a = &mut *self.a;
        match op {
            BinOp::Add => a.add(rax, rcx)?,
            BinOp::Sub => a.sub(rax, rcx)?,
            BinOp::And => a.and(rax, rcx)?,
            BinOp::Or => a.or(rax, rcx)?,
            BinOp::Xor => a.xor(rax, rcx)?,
            BinOp::Mul => a.imul_2(rax, rcx)?,
            _ => unreachable!("every other binary op is handled before"),
        }
        self.st(d, rax)
    }

    /// `sdiv`/`srem` with IR.md's `div_by_zero` and `MIN / -1` rules.
    fn division(&mut self, op: BinOp, d: Option<Value>, x: Value, y: Value) -> R {
        self.ld(rax, x)?;
        self.ld(rcx, y)?;
        let zero = self.trap_label(TrapKind::DivByZero);
        self.a.test(rcx, rcx)?;
        self.a.je(zero)?;
        let mut general = self.a.create_label();
        let mut done = self.a.create_label();
        self.a.cmp(rcx, -1)?;
        self.a.jne(general)?;
        if op == BinOp::Sdiv {
            self.a.neg(rax)?;
        } else {
            self.a.mov(rax, 0i64)?;
        }
        self.a.jmp(done)?;
        bind(self.a, &mut general)?;
        self.a.cqo()?;
        self.a.idiv(rcx)?;
        if op == BinOp::Srem {
            self.a.mov(rax, rdx)?;
        }
        bind(self.a, &mut done)?;
        self.st(d, rax)
    }

    fn null_check(&mut self, r: AsmRegister64) -> R {
        self.a.test(r, r)?;
        let l = self.trap_label(TrapKind::NullDeref);
        self.a.je(l)
    }

    /// Null- and bounds-check `base[index]`; returns the element's operand
    /// (clobbers `rax`, `rcx`).
    fn elem_addr(&mut self, base: Value, index: Value) -> Result<AsmMemoryOperand, IcedError> {
        self.ld(rax, base)?;
        self.null_check(rax)?;
        let oob = self.trap_label(TrapKind::OutOfBounds);
        if let Loc::Imm(c) = self.frame.loc(index) {
            if !(0..=interp::MAX_ARRAY_LEN).contains(&c) {
                self.a.jmp(oob)?;
                return Ok(qword_ptr(r15 + rax * 8 + 16));
            }
            // len <= c (unsigned) is out of bounds.
            self.a.cmp(qword_ptr(r15 + rax * 8 + 8), c as i32)?;
            self.a.jbe(oob)?;
            return Ok(qword_ptr(r15 + rax * 8 + (16 + 8 * c as i32)));
        }
        self.ld(rcx, index)?;
        self.a.cmp(rcx, qword_ptr(r15 + rax * 8 + 8))?;
        self.a.jae(oob)?;
        self.a.lea(rax, qword_ptr(r15 + rax * 8))?;
        Ok(qword_ptr(rax + rcx * 8 + 16))
    }

    /// `mov rax, fn; call rax` (the stack is 16-byte aligned in every body).
    fn call_rt(&mut self, addr: u64) -> R {
        self.a.mov(rax, addr)?;
        self.a.call(rax)
    }

    /// After an allocation: 0 means the runtime left a trap in `pending`.
    fn check_alloc(&mut self) -> R {
        self.a.test(rax, rax)?;
        let l = self.labels.pending;
        self.a.je(l)
    }

    /// The environment step before a volatile access: arguments base (a
    /// reference), index, stored value, as the interpreter passes them.
    fn volatile_step(&mut self, addr: &Addr, value: Option<Value>) -> R {
        let mut n = 0i32;
        let mut mask = 0u64;
        let mut push = |s: &mut Self, v: Value, is_ref: bool| -> R {
            if is_ref {
                mask |= 1 << n;
            }
            s.ld(rax, v)?;
            s.a.mov(qword_ptr(rsp + 8 * n), rax)?;
            n += 1;
            Ok(())
        };
        match *addr {
            Addr::Field { base, .. } => push(self, base, true)?,
            Addr::Elem { base, index } => {
                push(self, base, true)?;
                push(self, index, false)?;
            }
            Addr::Global(_) => {}
        }
        if let Some(v) = value {
            let is_ref = self.f.value_type(v).is_ref();
            push(self, v, is_ref)?;
        }
        self.a.mov(rdi, qword_ptr(r14 + OFF_ENV))?;
        self.a.mov(rsi, VOLATILE as i64)?;
        self.a.mov(rdx, rsp)?;
        self.a.mov(rcx, n as i64)?;
        self.a.mov(r8, mask as i64)?;
        self.call_rt(interp::loadstar_env_step as *const () as u64)
    }

    fn lower_terminator(&mut self, b: Block, i: Inst, next: Option<Block>) -> R {
        match self.f.inst(i).kind {
            InstKind::Jmp(t) => {
                self.charge_fuel()?;
                self.edge(b, t, next)
            }
            InstKind::Br(c, t, e) => {
                self.charge_fuel()?;
                let cc = if let Some((cc, x, y)) = self.fused_compare(b, c) {
                    self.cmp_values(x, y)?;
                    cc
                } else {
                    match self.frame.loc(c) {
                        Loc::Imm(k) => return self.edge(b, if k != 0 { t } else { e }, next),
                        Loc::Mem(cd) => {
                            self.a.cmp(Self::slot(cd), 0)?;
                            Cc::Ne
                        }
                    }
                };
                if !self.has_moves(b, t) {
                    let lt = self.blocks[t.index()];
                    self.jcc(cc, lt)?;
                    return self.edge(b, e, next);
                }
                let mut taken = self.a.create_label();
                self.jcc(cc, taken)?;
                self.edge(b, e, None)?;
                bind(self.a, &mut taken)?;
                self.edge(b, t, next)
            }
            InstKind::Ret(v) => {
                if let Some(v) = v {
                    self.ld(rax, v)?;
                }
                self.a.leave()?;
                self.a.ret()
            }
            _ => {
                let l = self.trap_label(TrapKind::Unreachable);
                self.a.jmp(l)
            }
        }
    }

    /// The phi copies of `to` along `from → to`: (destination slot, source).
    fn copies(&self, from: Block, to: Block) -> Vec<(i32, Loc)> {
        let f = self.f;
        f.blocks[to.index()]
            .insts
            .iter()
            .map(|&i| f.inst(i))
            .map_while(|data| match &data.kind {
                InstKind::Phi(entries) => Some((data.result, entries)),
                _ => None,
            })
            .filter_map(|(r, entries)| {
                let (_, v) = entries.iter().find(|(p, _)| *p == from)?;
                match (self.frame.loc(r?), self.frame.loc(*v)) {
                    (Loc::Mem(d), src) if src != Loc::Mem(d) => Some((d, src)),
                    _ => None,
                }
            })
            .collect()
    }

    fn has_moves(&self, from: Block, to: Block) -> bool {
        !self.copies(from, to).is_empty()
    }

    /// The edge `from → to`: its parallel copy, then a jump (left out when
    /// `to` is the next block and there is nothing in between).
    fn edge(&mut self, from: Block, to: Block, next: Option<Block>) -> R {
        let copies = self.copies(from, to);
        let mut slot_moves = Vec::new();
        let mut consts = Vec::new();
        for (d, src) in copies {
            match src {
                Loc::Mem(s) => slot_moves.push((d as u32, s as u32)),
                Loc::Imm(c) => consts.push((d, c)),
            }
        }
        // Slot-to-slot moves first (a cycle goes through the scratch slot),
        // constants last: no constant destination is read by another move.
        let seq = interp::lower::sequentialize(slot_moves, self.frame.scratch as u32);
        for (d, s) in seq {
            self.a.mov(rax, Self::slot(s as i32))?;
            self.a.mov(Self::slot(d as i32), rax)?;
        }
        for (d, c) in consts {
            match fits_i32(c) {
                Some(c) => self.a.mov(Self::slot(d), c)?,
                None => {
                    self.a.mov(rax, c)?;
                    self.a.mov(Self::slot(d), rax)?;
                }
            }
        }
        if next != Some(to) {
            let l = self.blocks[to.index()];
            self.a.jmp(l)?;
        }
        Ok(())
    }
}
