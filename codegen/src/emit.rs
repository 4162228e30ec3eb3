//! Emission: the whole module as one block of x86-64 code — the entry thunk,
//! the trap stubs, then every function — built with iced's code assembler and
//! encoded by [`crate::encode`], with a listing
//! (each IR instruction as a comment above its code) for `--emit asm`.

use crate::abi::{
    self, OFF_ARGS, OFF_DEPTH, OFF_FUEL, OFF_HEAP, OFF_NARGS, OFF_PENDING, OFF_RESULT,
    OFF_SAVED_RSP, OFF_TARGET, OFF_TRAP,
};
use crate::encode::{encode, Encoded};
use crate::isel::select;
use crate::lower::{bind, gpr64, FuncEmitter, ModuleLabels};
use crate::regalloc::{allocate, machine_env};
use iced_x86::code_asm::*;
use iced_x86::{Decoder, DecoderOptions, Formatter, NasmFormatter};
use interp::TrapKind;
use ir::Module;
use std::fmt::Write;

/// Why a module could not be compiled (always a backend bug: every verified
/// module lowers).
#[derive(Debug, thiserror::Error)]
#[error("codegen: {0}")]
pub struct CodegenError(pub String);

impl From<IcedError> for CodegenError {
    fn from(e: IcedError) -> Self {
        CodegenError(e.to_string())
    }
}

/// A compiled module: position-independent code and where things are in it.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The machine code (relative branches only; runtime addresses are absolute).
    pub code: Vec<u8>,
    /// Offset of the entry thunk `extern "C" fn(*mut NativeCtx, stack_top) -> u64`.
    pub entry: usize,
    /// Per function, the offset of its first instruction.
    pub funcs: Vec<usize>,
    /// The largest frame of any function, in bytes (return address included).
    pub max_frame: usize,
    /// Listing comments: code offset, text (in code order).
    pub comments: Vec<(usize, String)>,
    /// With `check_regalloc`: the functions (by index) regalloc2's checker or
    /// SSA validation was skipped on, being over
    /// [`crate::regalloc::CHECK_LIMIT`] or [`crate::regalloc::SSA_LIMIT`]
    /// (also said in the listing).
    pub unchecked: Vec<usize>,
}

/// How to compile.
#[derive(Copy, Clone, Debug, Default)]
pub struct CompileOptions {
    /// Run regalloc2's SSA validation and checker on every function (harness
    /// mode; each only within its limit, see [`crate::regalloc::CHECK_LIMIT`]).
    pub check_regalloc: bool,
    /// Keep each IR instruction's text for [`listing`].
    pub listing: bool,
    /// Harness mode: scramble every register a call clobbers after the call
    /// (pseudo-random values from this seed; see `lower::FuncEmitter::chaos`).
    pub chaos: Option<u64>,
    /// Keep every call to a module function a call (no inlining of small
    /// leaves, `isel::inlinable`).
    pub no_inline: bool,
}

/// Compile every function of the verified module `m`.
pub fn compile(m: &Module) -> Result<Compiled, CodegenError> {
    compile_with(m, CompileOptions::default())
}

/// [`compile`] with options.
pub fn compile_with(m: &Module, opts: CompileOptions) -> Result<Compiled, CodegenError> {
    let mut a = CodeAssembler::new(64)?;
    // Every branch is near (rel32); `encode` resolves the labels.
    a.set_prefer_short_branch(false);
    let labels = ModuleLabels {
        funcs: m.funcs.iter().map(|_| a.create_label()).collect(),
        traps: TrapKind::ALL.iter().map(|_| a.create_label()).collect(),
        pending: a.create_label(),
    };
    let mut comments: Vec<(usize, String)> = Vec::new();
    let mut entry = a.create_label();
    let entry_at = a.instructions().len();
    comments.push((entry_at, "entry thunk".into()));
    entry_thunk(&mut a, &mut entry)?;
    comments.push((a.instructions().len(), "trap stubs".into()));
    trap_stubs(&mut a, &labels)?;
    let env = machine_env();
    let mut max_frame = 0;
    let mut bound = Vec::with_capacity(m.funcs.len());
    let mut unchecked = Vec::new();
    for (k, f) in m.funcs.iter().enumerate() {
        comments.push((a.instructions().len(), format!("func @{}", f.name)));
        let code = select(m, f, opts.listing, !opts.no_inline);
        let (out, checked) = allocate(&code, &env, opts.check_regalloc)
            .map_err(|e| CodegenError(format!("@{}: {e}", f.name)))?;
        if checked.skipped() {
            unchecked.push(k);
            let at = a.instructions().len();
            comments.extend(checked.notes(&code, &out).into_iter().map(|n| (at, n)));
        }
        let mut fe = FuncEmitter {
            a: &mut a,
            code: &code,
            out: &out,
            labels: &labels,
            blocks: Vec::new(),
            forward: Vec::new(),
            chaos: opts.chaos,
            saved: Vec::new(),
            frameless: false,
            steady_labels: Vec::new(),
            steady: false,
        };
        let (first, frame) = fe.emit(k, &mut comments)?;
        max_frame = max_frame.max(frame);
        bound.push(first);
    }
    let Encoded { code, offsets } = encode(a.instructions())?;
    let at = |idx: usize| -> usize { offsets.get(idx).map_or(code.len(), |&o| o as usize) };
    Ok(Compiled {
        entry: at(entry_at),
        funcs: bound.iter().map(|&i| at(i)).collect(),
        max_frame,
        comments: comments.into_iter().map(|(i, t)| (at(i), t)).collect(),
        code,
        unchecked,
    })
}

const SAVED: [AsmRegister64; 6] = [rbx, rbp, r12, r13, r14, r15];

/// How many arguments module functions receive in registers.
const REG_ARGS: usize = crate::isel::regs::ARGS.len();

/// `fn(ctx: *mut NativeCtx, stack_top: *mut u8) -> u64`: switch to the
/// execution's stack, copy the arguments, call the target, store the result.
fn entry_thunk(a: &mut CodeAssembler, label: &mut CodeLabel) -> Result<(), IcedError> {
    bind(a, label)?;
    for r in SAVED {
        a.push(r)?;
    }
    a.mov(qword_ptr(rdi + OFF_SAVED_RSP), rsp)?;
    a.mov(r14, rdi)?;
    a.mov(r15, qword_ptr(r14 + OFF_HEAP))?;
    a.mov(r13, qword_ptr(r14 + OFF_FUEL))?;
    a.mov(r12, qword_ptr(r14 + OFF_DEPTH))?;
    // rsp = stack_top - align16(8 * max(nargs, 6)): room for every argument
    // word, and the six the register arguments are loaded from.
    a.mov(rcx, qword_ptr(r14 + OFF_NARGS))?;
    a.mov(eax, REG_ARGS as u32)?;
    a.cmp(rcx, rax)?;
    a.cmovae(rax, rcx)?;
    a.shl(rax, 3u32)?;
    a.add(rax, 15)?;
    a.and(rax, -16)?;
    a.sub(rsi, rax)?;
    a.mov(rsp, rsi)?;
    a.mov(rsi, qword_ptr(r14 + OFF_ARGS))?;
    a.xor(edx, edx)?;
    let mut top = a.create_label();
    let mut done = a.create_label();
    bind(a, &mut top)?;
    a.cmp(rdx, rcx)?;
    a.jae(done)?;
    a.mov(rax, qword_ptr(rsi + rdx * 8))?;
    a.mov(qword_ptr(rsp + rdx * 8), rax)?;
    a.add(rdx, 1)?;
    a.jmp(top)?;
    bind(a, &mut done)?;
    // The first arguments go in registers (`isel::regs::ARGS`; words past
    // `nargs` are zero and unused).
    for (k, &r) in crate::isel::regs::ARGS.iter().enumerate() {
        a.mov(gpr64(r), qword_ptr(rsp + 8 * k as i32))?;
    }
    a.call(qword_ptr(r14 + OFF_TARGET))?;
    a.mov(qword_ptr(r14 + OFF_RESULT), rax)?;
    a.mov(qword_ptr(r14 + OFF_TRAP), 0)?;
    a.xor(eax, eax)?;
    exit(a)
}

/// Store the fuel left, restore the host stack and callee-saved registers, return.
fn exit(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.mov(qword_ptr(r14 + OFF_FUEL), r13)?;
    a.mov(rsp, qword_ptr(r14 + OFF_SAVED_RSP))?;
    for r in SAVED.iter().rev() {
        a.pop(*r)?;
    }
    a.ret()
}

/// One stub per trap kind: record the code in the context and leave.
fn trap_stubs(a: &mut CodeAssembler, labels: &ModuleLabels) -> Result<(), IcedError> {
    let mut common = a.create_label();
    for (k, &t) in TrapKind::ALL.iter().enumerate() {
        let mut l = labels.traps[k];
        bind(a, &mut l)?;
        if t == TrapKind::OutOfFuel {
            // `sub r13, 1` wrapped: no fuel is left.
            a.xor(r13d, r13d)?;
        }
        a.mov(rax, abi::trap_code(t) as i64)?;
        a.jmp(common)?;
    }
    let mut pending = labels.pending;
    bind(a, &mut pending)?;
    a.mov(rax, qword_ptr(r14 + OFF_PENDING))?;
    bind(a, &mut common)?;
    a.mov(qword_ptr(r14 + OFF_TRAP), rax)?;
    exit(a)
}

/// The disassembly of `c` (NASM syntax), each listing comment above its code.
pub fn listing(c: &Compiled) -> String {
    let mut out = String::new();
    let mut decoder = Decoder::with_ip(64, &c.code, 0, DecoderOptions::NONE);
    let mut formatter = NasmFormatter::new();
    let mut text = String::new();
    let mut next = 0;
    for ins in &mut decoder {
        let ip = ins.ip() as usize;
        while next < c.comments.len() && c.comments[next].0 <= ip {
            let _ = writeln!(out, "    ; {}", c.comments[next].1);
            next += 1;
        }
        text.clear();
        formatter.format(&ins, &mut text);
        let _ = writeln!(out, "{ip:06x}  {text}");
    }
    out
}
