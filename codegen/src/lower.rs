//! Final lowering of one function: its [`VCode`] with the allocator's
//! registers, spill slots and moves becomes iced instructions.
//!
//! Frame: `push rbp; mov rbp, rsp; sub rsp, N`; below `rbp` the
//! callee-saved registers the function writes (`isel::regs::CALLEE_SAVED`:
//! `rbx`, `rsi`, `rdi`, `r8`–`r10`, which module functions preserve for
//! their callers), then the spill slots; outgoing arguments are at
//! `[rsp + 8i]`, incoming ones at `[rbp + 16 + 8i]`. A leaf that needs no
//! stack slot and writes no callee-saved register has no frame (incoming
//! arguments at `[rsp + 8 + 8i]`). Every runtime call happens with `rsp`
//! 16-byte aligned.

use crate::abi::{self, OFF_ENV};
use crate::isel::regs::{CALLEE_SAVED, CALLER_SAVED, MODULE_CALL_CLOBBERS};
use crate::vcode::{Alu, Cc, NullCheck, Shift, VCode, VInst};
use iced_x86::code_asm::*;
use interp::env::VOLATILE;
use interp::TrapKind;
use regalloc2::{Allocation, Edit, Inst, InstPosition, Output, PReg, PRegSet};

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

type R = Result<(), IcedError>;

/// Bind `label` to the next instruction (a zero-size one, so labels never collide).
pub fn bind(a: &mut CodeAssembler, label: &mut CodeLabel) -> R {
    a.set_label(label)?;
    a.zero_bytes()
}

const GPR64: [AsmRegister64; 16] = [
    rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8, r9, r10, r11, r12, r13, r14, r15,
];
const GPR32: [AsmRegister32; 16] = [
    eax, ecx, edx, ebx, esp, ebp, esi, edi, r8d, r9d, r10d, r11d, r12d, r13d, r14d, r15d,
];
const GPR8: [AsmRegister8; 16] = [
    al, cl, dl, bl, spl, bpl, sil, dil, r8b, r9b, r10b, r11b, r12b, r13b, r14b, r15b,
];

/// The iced register of `r`.
pub(crate) fn gpr64(r: PReg) -> AsmRegister64 {
    GPR64[r.hw_enc()]
}

fn reg64(a: Allocation) -> AsmRegister64 {
    GPR64[a
        .as_reg()
        .expect("operands are allocated to registers")
        .hw_enc()]
}

fn reg8(a: Allocation) -> AsmRegister8 {
    GPR8[a
        .as_reg()
        .expect("operands are allocated to registers")
        .hw_enc()]
}

/// The displacement of element `c` from its array's address (header and
/// length words first): the constant index folded into the address mode.
fn const_elem_disp(c: i32) -> i32 {
    let scaled = if zoo!(NativeConstIndexScale) {
        4 * c
    } else {
        8 * c
    };
    16 + scaled
}

/// Emits one allocated function.
pub struct FuncEmitter<'a> {
    /// The assembler of the module.
    pub a: &'a mut CodeAssembler,
    /// The function's machine instructions.
    pub code: &'a VCode,
    /// The allocation.
    pub out: &'a Output,
    /// Module-wide labels.
    pub labels: &'a ModuleLabels,
    /// Per block, its label (filled by `emit`).
    pub blocks: Vec<CodeLabel>,
    /// Per block: `Some(target)` for an edge block that is a bare jump (no
    /// moves): it emits nothing and branches to it go to `target` directly.
    pub forward: Vec<Option<u32>>,
    /// Harness mode: after every call, fill each register the call clobbers
    /// (and the flags) with pseudo-random values from this seed, so code that
    /// relies on what the calling convention does not preserve goes wrong.
    pub chaos: Option<u64>,
    /// The callee-saved registers this function writes (saved below `rbp`
    /// in this order; filled by `emit`).
    pub saved: Vec<PReg>,
    /// A leaf without spill slots or saved registers: no frame at all, its
    /// parameters read relative to `rsp` (filled by `emit`).
    pub frameless: bool,
    /// Per block emitted twice (`VBlock::twice`), the label of its second
    /// copy, which the back edges enter (filled by `emit`).
    pub steady_labels: Vec<Option<CodeLabel>>,
    /// Emitting the second copy of a block emitted twice.
    pub steady: bool,
}

/// Whether `inst` calls a module function or the runtime.
fn is_call(inst: &VInst) -> bool {
    matches!(
        inst,
        VInst::New { .. }
            | VInst::NewArray { .. }
            | VInst::Call { .. }
            | VInst::CallExtern { .. }
            | VInst::Volatile { .. }
            | VInst::Escape { .. }
    )
}

impl FuncEmitter<'_> {
    /// The callee-saved registers (`isel::regs::CALLEE_SAVED`) the function
    /// may write: every one an instruction defines (temporaries included) or
    /// clobbers (a runtime call), or a move of the allocator writes. (The
    /// lowering writes registers beyond an instruction's operands only
    /// where they are clobbers: the runtime calls' argument registers.)
    fn saved_registers(&self) -> Vec<PReg> {
        let mut seen = PRegSet::empty();
        for (i, d) in self.code.insts.iter().enumerate() {
            seen.union_from(d.clobbers);
            if d.inst == VInst::RegParams {
                // Names the registers the arguments arrived in; writes none.
                continue;
            }
            let allocs = self.out.inst_allocs(Inst::new(i));
            for (op, a) in d.operands.iter().zip(allocs) {
                if let (regalloc2::OperandKind::Def, Some(r)) = (op.kind(), a.as_reg()) {
                    seen.add(r);
                }
            }
        }
        for (_, Edit::Move { to, .. }) in &self.out.edits {
            if let Some(r) = to.as_reg() {
                seen.add(r);
            }
        }
        CALLEE_SAVED
            .iter()
            .copied()
            .filter(|&r| seen.contains(r))
            .collect()
    }

    /// The stack slot of spill slot `slot` (below the saved registers).
    fn spill(&self, slot: usize) -> AsmMemoryOperand {
        qword_ptr(rbp - (8 * (self.saved.len() as i32 + 1) + 8 * slot as i32))
    }

    /// Emit function `fid`, adding listing comments (at assembler instruction
    /// indices) to `comments`; returns the assembler index of its first
    /// instruction and its frame bytes.
    pub fn emit(
        &mut self,
        fid: usize,
        comments: &mut Vec<(usize, String)>,
    ) -> Result<(usize, usize), IcedError> {
        let mut entry = self.labels.funcs[fid];
        let first = self.a.instructions().len();
        bind(self.a, &mut entry)?;
        self.saved = self.saved_registers();
        let nsaved = self.saved.len();
        let bytes = 8 * nsaved + 8 * self.out.num_spillslots + 8 * self.code.max_out;
        let size = bytes.div_ceil(16) * 16;
        self.frameless = size == 0 && !self.code.insts.iter().any(|d| is_call(&d.inst));
        if !self.frameless {
            self.a.push(rbp)?;
            self.a.mov(rbp, rsp)?;
            if size > 0 {
                self.a.sub(rsp, size as i32)?;
            }
            for k in 0..nsaved {
                let r = GPR64[self.saved[k].hw_enc()];
                self.a.mov(qword_ptr(rbp - 8 * (k as i32 + 1)), r)?;
            }
        }
        self.blocks = (0..self.code.blocks.len())
            .map(|_| self.a.create_label())
            .collect();
        let edits = &self.out.edits;
        let mut edited = vec![false; self.code.insts.len()];
        for (p, _) in edits {
            edited[p.inst().index()] = true;
        }
        let has_edits = |i: usize| edited[i];
        self.forward = self
            .code
            .blocks
            .iter()
            .map(|b| match self.code.insts[b.start].inst {
                VInst::Jmp {
                    target,
                    charge: false,
                } if b.end - b.start == 1 && !has_edits(b.start) => Some(target),
                _ => None,
            })
            .collect();
        self.steady_labels = self
            .code
            .blocks
            .iter()
            .map(|b| b.twice.then(|| self.a.create_label()))
            .collect();
        let (mut edit, mut comment) = (0, 0);
        for k in 0..self.code.blocks.len() {
            if self.forward[k].is_some() {
                continue;
            }
            let mut l = self.blocks[k];
            bind(self.a, &mut l)?;
            let (e0, c0) = (edit, comment);
            self.steady = false;
            self.emit_block(k, &mut edit, &mut comment, comments)?;
            if let Some(mut l) = self.steady_labels[k] {
                // The copy the back edges enter: the same instructions, the
                // same allocation, without the loop-entry null checks.
                bind(self.a, &mut l)?;
                comments.push((
                    self.a.instructions().len(),
                    "(again, entered by the back edges: loop-invariant bases known non-null)"
                        .into(),
                ));
                let b = &self.code.blocks[k];
                let c = (c0..self.code.comments.len())
                    .find(|&c| self.code.comments[c].0 >= b.start)
                    .unwrap_or(comment);
                let (mut e, mut c) = (e0, c);
                self.steady = true;
                self.emit_block(k, &mut e, &mut c, comments)?;
                self.steady = false;
            }
        }
        Ok((first, if self.frameless { 8 } else { size + 16 }))
    }

    /// Emit the instructions of block `k` with the allocator's moves around
    /// them; `edit` and `comment` are the cursors into the edits and the
    /// listing comments.
    fn emit_block(
        &mut self,
        k: usize,
        edit: &mut usize,
        comment: &mut usize,
        comments: &mut Vec<(usize, String)>,
    ) -> R {
        let out: &Output = self.out;
        let edits = &out.edits;
        let b = &self.code.blocks[k];
        for i in b.start..b.end {
            while *comment < self.code.comments.len() && self.code.comments[*comment].0 <= i {
                comments.push((
                    self.a.instructions().len(),
                    self.code.comments[*comment].1.clone(),
                ));
                *comment += 1;
            }
            for pos in [InstPosition::Before, InstPosition::After] {
                // regalloc2 sequentialised each parallel copy (the phi
                // copies before a `jmp`, spills, reloads): keep its order.
                let mut moves = Vec::new();
                while *edit < edits.len()
                    && edits[*edit].0.inst() == Inst::new(i)
                    && edits[*edit].0.pos() == pos
                {
                    let Edit::Move { from, to } = edits[*edit].1;
                    moves.push((from, to));
                    *edit += 1;
                }
                let phi_copy = matches!(self.code.insts[i].inst, VInst::Jmp { .. });
                if zoo!(NativeMoveOrder) && phi_copy {
                    moves.reverse();
                }
                if self.chaos.is_some() && phi_copy && !moves.is_empty() {
                    // Harness mode: the scratch register holds 0 before a
                    // parallel copy, so a copy that reads it before writing
                    // it yields null/0, not a stale word (a wild address).
                    self.a.xor(r11d, r11d)?;
                }
                for (from, to) in moves {
                    self.mov(from, to)?;
                }
                if pos == InstPosition::Before {
                    self.inst(i, k)?;
                }
            }
        }
        Ok(())
    }

    fn mov(&mut self, from: Allocation, to: Allocation) -> R {
        match (from.as_reg(), to.as_reg()) {
            (Some(_), Some(_)) => {
                if from != to {
                    self.a.mov(reg64(to), reg64(from))?;
                }
                Ok(())
            }
            (Some(_), None) => {
                let m = self.spill(to.index());
                self.a.mov(m, reg64(from))
            }
            (None, Some(_)) => {
                let m = self.spill(from.index());
                self.a.mov(reg64(to), m)
            }
            (None, None) => {
                // regalloc2 never emits stack-to-stack moves; go through the scratch anyway.
                let (f, t) = (self.spill(from.index()), self.spill(to.index()));
                self.a.mov(r11, f)?;
                self.a.mov(t, r11)
            }
        }
    }

    fn trap(&self, t: TrapKind) -> CodeLabel {
        self.labels.trap(t)
    }

    fn charge_fuel(&mut self) -> R {
        self.a.sub(r13, 1)?;
        let l = self.trap(TrapKind::OutOfFuel);
        self.a.jb(l)
    }

    fn null_check(&mut self, r: AsmRegister64) -> R {
        self.a.test(r, r)?;
        let l = self.trap(TrapKind::NullDeref);
        self.a.je(l)
    }

    fn call_rt(&mut self, addr: u64) -> R {
        self.a.mov(rax, addr)?;
        self.a.call(rax)
    }

    fn check_alloc(&mut self) -> R {
        self.a.test(rax, rax)?;
        let l = self.labels.pending;
        self.a.je(l)
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

    /// `setcc d8; movzx d, d8`: the full register holds 0 or 1.
    fn setcc(&mut self, cc: Cc, d: Allocation) -> R {
        let r = reg8(d);
        let a = &mut *self.a;
        match cc {
            Cc::E => a.sete(r),
            Cc::Ne => a.setne(r),
            Cc::L => a.setl(r),
            Cc::Le => a.setle(r),
            Cc::G => a.setg(r),
            Cc::Ge => a.setge(r),
            Cc::B => a.setb(r),
            Cc::Be => a.setbe(r),
            Cc::A => a.seta(r),
            Cc::Ae => a.setae(r),
        }?;
        if zoo!(NativeSetccNoZext) {
            Ok(())
        } else {
            self.a.movzx(reg64(d), r)
        }
    }

    /// Where a branch to block `b` goes (past a bare edge block).
    fn resolve(&self, b: u32) -> u32 {
        self.forward[b as usize].unwrap_or(b)
    }

    /// Where a branch from block `cur` to block `b` goes: past a bare edge
    /// block; into the second copy of a block emitted twice when the branch
    /// is a back edge (from that block or a later one).
    fn target(&self, b: u32, cur: usize) -> CodeLabel {
        let b = self.resolve(b) as usize;
        match self.steady_labels[b] {
            Some(l) if b <= cur => l,
            _ => self.blocks[b],
        }
    }

    /// Jump to block `target` unless that code is emitted right after this.
    fn goto(&mut self, target: u32, cur: usize) -> R {
        let l = self.target(target, cur);
        if self.fallthrough(cur) != Some(l) {
            self.a.jmp(l)?;
        }
        Ok(())
    }

    /// The code emitted right after block `cur` (the copy being emitted):
    /// its second copy, or the next block.
    fn fallthrough(&self, cur: usize) -> Option<CodeLabel> {
        match self.steady_labels[cur] {
            Some(l) if !self.steady => Some(l),
            _ => (cur + 1..self.forward.len())
                .find(|&k| self.forward[k].is_none())
                .map(|k| self.blocks[k]),
        }
    }

    /// A conditional branch on `cc` to `t`, else to `e`; when `t` is emitted
    /// next, the branch goes to `e` on the opposite condition and falls through.
    fn branch(&mut self, cc: Cc, t: u32, e: u32, cur: usize) -> R {
        let (lt, le) = (self.target(t, cur), self.target(e, cur));
        if self.fallthrough(cur) == Some(lt) && lt != le {
            return self.jcc(cc.inverse(), le);
        }
        self.jcc(cc, lt)?;
        self.goto(e, cur)
    }

    /// Whether an access with `check` tests its base in the copy being emitted.
    fn tests_null(&self, check: NullCheck) -> bool {
        match check {
            NullCheck::Emit => true,
            NullCheck::Skip => false,
            NullCheck::OnLoopEntry => !self.steady,
        }
    }

    fn inst(&mut self, i: usize, cur: usize) -> R {
        self.inst_only(i, cur)?;
        match self.chaos {
            Some(seed) if is_call(&self.code.insts[i].inst) => self.scramble(seed, i),
            _ => Ok(()),
        }
    }

    /// Random values in the registers instruction `i` clobbers, random flags.
    /// A register the call's ABI lets it change (a module call: `rax`, `rcx`,
    /// `rdx`, `r11`; a runtime call: every SysV caller-saved one) that the
    /// call neither clobbers nor defines (the allocator was told it
    /// survives, the ABI says it does not) gets 0: the
    /// code then misbehaves deterministically, and a reference kept there
    /// becomes null (a trap) rather than a wild heap address (a crash).
    fn scramble(&mut self, seed: u64, i: usize) -> R {
        let clobbers = self.code.insts[i].clobbers;
        let defs: Vec<_> = self.code.insts[i]
            .operands
            .iter()
            .filter(|o| o.kind() == regalloc2::OperandKind::Def)
            .filter_map(|o| match o.constraint() {
                regalloc2::OperandConstraint::FixedReg(r) => Some(r),
                _ => None,
            })
            .collect();
        let mut h = seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut next = || {
            h ^= h >> 33;
            h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 29;
            h
        };
        let abi: &[PReg] = match self.code.insts[i].inst {
            VInst::Call { .. } => &MODULE_CALL_CLOBBERS,
            _ => &CALLER_SAVED,
        };
        for &r in abi {
            if clobbers.contains(r) {
                let v = next();
                self.a.mov(GPR64[r.hw_enc()], v)?;
            } else if !defs.contains(&r) {
                self.a.mov(GPR64[r.hw_enc()], 0u64)?;
            }
        }
        let v = next() as u32 as i32;
        self.a.cmp(r11, v)
    }

    fn inst_only(&mut self, i: usize, cur: usize) -> R {
        let allocs = self.out.inst_allocs(Inst::new(i));
        let r = |k: usize| reg64(allocs[k]);
        let inst = &self.code.insts[i].inst;
        match *inst {
            VInst::RegParams => Ok(()),
            VInst::Param { idx } => {
                let at = if self.frameless {
                    qword_ptr(rsp + (8 + 8 * idx as i32))
                } else {
                    qword_ptr(rbp + (16 + 8 * idx as i32))
                };
                self.a.mov(r(0), at)
            }
            VInst::Const { imm } => {
                // `mov r32, imm32` zero-extends the upper half (5-6 bytes);
                // anything else takes the 10-byte imm64 form.
                let hw = allocs[0].as_reg().expect("a register").hw_enc();
                match u32::try_from(imm) {
                    Ok(c) => self.a.mov(GPR32[hw], c),
                    Err(_) => self.a.mov(r(0), imm),
                }
            }
            VInst::Alu { op } => {
                let (d, b) = (r(2), r(1));
                let a = &mut *self.a;
                match op {
                    Alu::Add => a.add(d, b),
                    Alu::Sub => a.sub(d, b),
                    Alu::And => a.and(d, b),
                    Alu::Or => a.or(d, b),
                    Alu::Xor => a.xor(d, b),
                    Alu::Mul => a.imul_2(d, b),
                }
            }
            VInst::AluImm { op, imm } => {
                let d = r(1);
                let a = &mut *self.a;
                match op {
                    Alu::Add => a.add(d, imm),
                    Alu::Sub => a.sub(d, imm),
                    Alu::And => a.and(d, imm),
                    Alu::Or => a.or(d, imm),
                    Alu::Xor => a.xor(d, imm),
                    Alu::Mul => a.imul_3(d, d, imm),
                }
            }
            VInst::MulImm { imm } => self.a.imul_3(r(1), r(0), imm),
            VInst::Shift { op } => {
                // x86 masks a 64-bit shift count to 6 bits: `b & 63`.
                let d = r(2);
                match op {
                    Shift::Shl => self.a.shl(d, cl),
                    Shift::Lshr => self.a.shr(d, cl),
                    Shift::Ashr => self.a.sar(d, cl),
                }
            }
            VInst::ShiftImm { op, n } => {
                let d = r(1);
                let n = n as u32;
                match op {
                    Shift::Shl => self.a.shl(d, n),
                    Shift::Lshr => self.a.shr(d, n),
                    Shift::Ashr => self.a.sar(d, n),
                }
            }
            VInst::Div { rem } => {
                let b = r(1);
                self.a.test(b, b)?;
                let zero = self.trap(TrapKind::DivByZero);
                self.a.je(zero)?;
                let mut general = self.a.create_label();
                let mut done = self.a.create_label();
                if zoo!(NativeIdivMinus1) {
                    // (straight to idiv: MIN / -1 faults)
                } else {
                    self.a.cmp(b, -1)?;
                    self.a.jne(general)?;
                    // MIN / -1 = MIN (wrapping negate), MIN % -1 = 0: no idiv.
                    if rem {
                        self.a.mov(rdx, 0i64)?;
                    } else {
                        self.a.neg(rax)?;
                    }
                    self.a.jmp(done)?;
                }
                bind(self.a, &mut general)?;
                if self.chaos.is_some() {
                    self.idiv_fault_check(b)?;
                }
                self.a.cqo()?;
                self.a.idiv(b)?;
                bind(self.a, &mut done)
            }
            VInst::Cmp { cc } => {
                self.a.cmp(r(0), r(1))?;
                self.setcc(cc, allocs[2])
            }
            VInst::CmpImm { cc, imm } => {
                self.a.cmp(r(0), imm)?;
                self.setcc(cc, allocs[1])
            }
            VInst::Neg => self.a.neg(r(1)),
            VInst::Not => self.a.not(r(1)),
            VInst::Move => {
                if allocs[0] != allocs[1] {
                    self.a.mov(r(1), r(0))?;
                }
                Ok(())
            }
            VInst::Select => {
                self.a.test(r(0), r(0))?;
                self.a.cmove(r(3), r(2))
            }
            VInst::LoadField { disp, checked } => {
                if self.tests_null(checked) {
                    self.null_check(r(0))?;
                }
                self.a.mov(r(1), qword_ptr(r15 + r(0) * 8 + disp))
            }
            VInst::StoreField { disp, checked } => {
                if self.tests_null(checked) {
                    self.null_check(r(0))?;
                }
                self.a.mov(qword_ptr(r15 + r(0) * 8 + disp), r(1))?;
                if zoo!(NativeWideStore) {
                    self.a.mov(qword_ptr(r15 + r(0) * 8 + (disp + 8)), r(1))?;
                }
                Ok(())
            }
            VInst::LoadElem { checked } => {
                self.bounds(r(0), r(1), checked)?;
                self.a.lea(r(3), qword_ptr(r(0) + r(1)))?;
                self.a.mov(r(2), qword_ptr(r15 + r(3) * 8 + 16))
            }
            VInst::LoadElemAt => self.a.mov(r(1), qword_ptr(r15 + r(0) * 8 + 16)),
            VInst::StoreElem { checked } => {
                self.bounds(r(0), r(1), checked)?;
                self.a.lea(r(3), qword_ptr(r(0) + r(1)))?;
                self.a.mov(qword_ptr(r15 + r(3) * 8 + 16), r(2))
            }
            VInst::StoreElemAt => self.a.mov(qword_ptr(r15 + r(0) * 8 + 16), r(1)),
            VInst::LoadElemConst { c, checked } => {
                self.const_bounds(r(0), c, checked)?;
                self.a
                    .mov(r(1), qword_ptr(r15 + r(0) * 8 + const_elem_disp(c)))
            }
            VInst::StoreElemConst { c, checked } => {
                self.const_bounds(r(0), c, checked)?;
                self.a
                    .mov(qword_ptr(r15 + r(0) * 8 + const_elem_disp(c)), r(1))
            }
            VInst::ElemOutOfRange => {
                self.null_check(r(0))?;
                let l = self.trap(TrapKind::OutOfBounds);
                self.a.jmp(l)
            }
            VInst::Len { checked } => {
                if self.tests_null(checked) {
                    self.null_check(r(0))?;
                }
                self.a.mov(r(1), qword_ptr(r15 + r(0) * 8 + 8))
            }
            VInst::NullCheck { checked } => {
                if self.tests_null(checked) {
                    self.null_check(r(0))?;
                }
                Ok(())
            }
            VInst::BoundsCheck { checked } => {
                self.bounds(r(0), r(1), checked)?;
                self.a.lea(r(2), qword_ptr(r(0) + r(1)))
            }
            VInst::BoundsCheckConst { c, checked } => self.const_bounds(r(0), c, checked),
            VInst::LoadGlobal { disp } => self.a.mov(r(0), qword_ptr(r15 + disp)),
            VInst::StoreGlobal { disp } => self.a.mov(qword_ptr(r15 + disp), r(0)),
            VInst::StoreArg { i } => self.a.mov(qword_ptr(rsp + 8 * i as i32), r(0)),
            VInst::New { sid, nfields } => {
                self.a.mov(rdi, r14)?;
                self.a.mov(rsi, sid as i64)?;
                self.a.mov(rdx, nfields as i64)?;
                self.call_rt(abi::rt_new as *const () as u64)?;
                self.check_alloc()
            }
            VInst::NewArray { header } => {
                self.a.mov(rdi, r14)?;
                self.a.mov(rsi, header as i64)?;
                self.call_rt(abi::rt_newarray as *const () as u64)?;
                self.check_alloc()
            }
            VInst::Call { func } => {
                self.charge_fuel()?;
                self.a.sub(r12, 1)?;
                let l = self.trap(TrapKind::StackOverflow);
                self.a.jb(l)?;
                let target = self.labels.funcs[func as usize];
                self.a.call(target)?;
                self.a.add(r12, 1)
            }
            VInst::InlinedCall => {
                self.charge_fuel()?;
                // The frame the callee would have had: none may be left.
                self.a.test(r12, r12)?;
                let l = self.trap(TrapKind::StackOverflow);
                self.a.je(l)
            }
            VInst::CallExtern { ext, nargs } => {
                self.charge_fuel()?;
                self.a.mov(rdi, qword_ptr(r14 + OFF_ENV))?;
                self.a.mov(rsi, ext as i64)?;
                self.a.mov(rdx, rsp)?;
                self.a.mov(rcx, nargs as i64)?;
                self.a.xor(r8d, r8d)?;
                self.call_rt(interp::loadstar_env_step as *const () as u64)
            }
            VInst::Volatile { nargs, mask } => {
                self.a.mov(rdi, qword_ptr(r14 + OFF_ENV))?;
                self.a.mov(rsi, VOLATILE as i64)?;
                self.a.mov(rdx, rsp)?;
                self.a.mov(rcx, nargs as i64)?;
                self.a.mov(r8, mask as i64)?;
                self.call_rt(interp::loadstar_env_step as *const () as u64)
            }
            VInst::Escape { is_ref } => {
                self.a.mov(rdi, r14)?;
                self.a.mov(rdx, is_ref as i64)?;
                self.call_rt(abi::rt_escape as *const () as u64)
            }
            VInst::Guard => {
                self.a.test(r(0), r(0))?;
                let l = self.trap(TrapKind::GuardFailed);
                self.a.je(l)
            }
            VInst::Jmp { target, charge } => {
                if charge {
                    self.charge_fuel()?;
                }
                self.goto(target, cur)
            }
            VInst::Br { t, e } => {
                self.charge_fuel()?;
                self.a.test(r(0), r(0))?;
                self.branch(Cc::Ne, t, e, cur)
            }
            VInst::CmpBr { cc, t, e } => {
                self.charge_fuel()?;
                self.a.cmp(r(0), r(1))?;
                self.branch(cc, t, e, cur)
            }
            VInst::CmpImmBr { cc, imm, t, e } => {
                self.charge_fuel()?;
                self.a.cmp(r(0), imm)?;
                self.branch(cc, t, e, cur)
            }
            VInst::Ret => {
                if !self.frameless {
                    for k in 0..self.saved.len() {
                        let r = GPR64[self.saved[k].hw_enc()];
                        self.a.mov(r, qword_ptr(rbp - 8 * (k as i32 + 1)))?;
                    }
                    self.a.leave()?;
                }
                self.a.ret()
            }
            VInst::Trap { kind } => {
                let l = self.trap(kind);
                self.a.jmp(l)
            }
        }
    }

    /// Harness mode: `idiv` would raise #DE (`MIN / -1`), which would kill
    /// the process; report it as a division trap instead, so the native
    /// oracle sees a mismatch (sound code never gets here with `b = -1`).
    fn idiv_fault_check(&mut self, b: AsmRegister64) -> R {
        let mut ok = self.a.create_label();
        self.a.cmp(b, -1)?;
        self.a.jne(ok)?;
        self.a.mov(r11, i64::MIN)?;
        self.a.cmp(rax, r11)?;
        let l = self.trap(TrapKind::DivByZero);
        self.a.je(l)?;
        bind(self.a, &mut ok)
    }

    /// Null check of `base` (as `check` says), then `index < len`
    /// (unsigned: a negative index is out).
    fn bounds(&mut self, base: AsmRegister64, index: AsmRegister64, check: NullCheck) -> R {
        if self.tests_null(check) {
            self.null_check(base)?;
        }
        self.a.cmp(index, qword_ptr(r15 + base * 8 + 8))?;
        let l = self.trap(TrapKind::OutOfBounds);
        self.a.jae(l)
    }

    /// Null check of `base` (as `check` says), then `c < len` for a
    /// constant `c` in `0..=65536`.
    fn const_bounds(&mut self, base: AsmRegister64, c: i32, check: NullCheck) -> R {
        if self.tests_null(check) {
            self.null_check(base)?;
        }
        if zoo!(NativeConstIndexNoBounds) {
            return Ok(());
        }
        self.a.cmp(qword_ptr(r15 + base * 8 + 8), c)?;
        let l = self.trap(TrapKind::OutOfBounds);
        self.a.jbe(l)
    }
}
