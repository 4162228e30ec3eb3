//! The runtime ABI: the context block generated code reaches through `r14`,
//! the registers it reserves, the trap codes, and the `extern "C"` runtime
//! functions it calls (allocation and `escape`; environment steps go straight
//! to the interpreter's [`interp::loadstar_env_step`]).
//!
//! Register convention of generated code (fixed for every function):
//! * `r15` — the heap base: reference `w` (a word offset) lives at `r15 + 8*w`;
//! * `r14` — the [`NativeCtx`] of the execution;
//! * `r13` — fuel left (IR.md §7: every taken branch and every call costs one);
//! * `r12` — further frames allowed before `stack_overflow`;
//! * `rbp` — frame pointer (a leaf without stack slots has no frame);
//! * arguments 0–5 of a module function come in `rcx`, `rdx`, `rsi`, `rdi`,
//!   `r8`, `r9` (`isel::regs::ARGS`); argument `i` ≥ 6 is at
//!   `[rbp + 16 + 8*i]`, and the caller writes it at `[rsp + 8*i]`;
//! * the result comes back in `rax`; a call to a module function may change
//!   `rax`, `rcx`, `rdx`, `r11` and keeps `rbx`, `rsi`, `rdi`, `r8`–`r10`
//!   (the callee saves those it writes); a runtime call follows SysV.
//!
//! All four reserved registers are callee-saved in the SysV ABI, so runtime
//! calls preserve them.

use crate::strict::NativeHeap;
use interp::observe::RawValue;
use interp::{EnvContext, TrapKind};

/// The per-execution block that generated code reads and writes via `r14`.
/// Field offsets are the `OFF_*` constants (checked by a test).
#[repr(C)]
pub struct NativeCtx {
    /// The host stack pointer saved by the entry thunk (restored on exit or trap).
    pub saved_rsp: u64,
    /// The heap base (`r15`).
    pub heap: *mut u64,
    /// Fuel in (budget) and out (left).
    pub fuel: u64,
    /// Frames allowed below the entry frame.
    pub depth: u64,
    /// The trap code on exit (0 = returned; see [`trap_code`]).
    pub trap: u64,
    /// The returned word.
    pub result: u64,
    /// The address of the function to run.
    pub target: u64,
    /// The argument words of the entry call.
    pub args: *const u64,
    /// How many argument words.
    pub nargs: u64,
    /// The environment of the execution (first argument of `loadstar_env_step`).
    pub env: *mut EnvContext,
    /// The Rust-side state the runtime functions use.
    pub rt: *mut Runtime,
    /// A trap raised by a runtime function (read by the code after the call).
    pub pending: u64,
}

/// Offset of [`NativeCtx::saved_rsp`].
pub const OFF_SAVED_RSP: i32 = 0;
/// Offset of [`NativeCtx::heap`].
pub const OFF_HEAP: i32 = 8;
/// Offset of [`NativeCtx::fuel`].
pub const OFF_FUEL: i32 = 16;
/// Offset of [`NativeCtx::depth`].
pub const OFF_DEPTH: i32 = 24;
/// Offset of [`NativeCtx::trap`].
pub const OFF_TRAP: i32 = 32;
/// Offset of [`NativeCtx::result`].
pub const OFF_RESULT: i32 = 40;
/// Offset of [`NativeCtx::target`].
pub const OFF_TARGET: i32 = 48;
/// Offset of [`NativeCtx::args`].
pub const OFF_ARGS: i32 = 56;
/// Offset of [`NativeCtx::nargs`].
pub const OFF_NARGS: i32 = 64;
/// Offset of [`NativeCtx::env`].
pub const OFF_ENV: i32 = 72;
/// Offset of [`NativeCtx::pending`].
pub const OFF_PENDING: i32 = 88;

/// The Rust-side state of one native execution: the heap and the trace.
pub struct Runtime {
    /// The arena (dense or strict); it never moves once the code runs.
    pub heap: NativeHeap,
    /// The output trace.
    pub trace: Vec<RawValue>,
}

/// The code of a trap kind in [`NativeCtx::trap`] (never 0).
pub fn trap_code(t: TrapKind) -> u64 {
    TrapKind::ALL.iter().position(|&k| k == t).unwrap_or(0) as u64 + 1
}

/// The trap kind of a non-zero [`NativeCtx::trap`] code.
pub fn trap_kind(code: u64) -> Option<TrapKind> {
    TrapKind::ALL.get((code as usize).checked_sub(1)?).copied()
}

/// Point the environment at the arena as it is now (after an allocation).
fn sync_env(ctx: &mut NativeCtx, rt: &mut Runtime) {
    // SAFETY: `env` is the live context of this execution.
    let env = unsafe { &mut *ctx.env };
    env.heap = rt.heap.base_ptr();
    env.heap_len = rt.heap.words().len();
}

fn alloc_result(ctx: &mut NativeCtx, r: Result<u64, TrapKind>) -> u64 {
    let rt = ctx.rt;
    // SAFETY: `rt` is the live runtime of this execution.
    let rt = unsafe { &mut *rt };
    match r {
        Ok(o) => {
            debug_assert_eq!(rt.heap.base_ptr(), ctx.heap);
            sync_env(ctx, rt);
            o
        }
        Err(t) => {
            ctx.pending = trap_code(t);
            0
        }
    }
}

/// `new T`: the new object's reference, or 0 with [`NativeCtx::pending`] set.
///
/// # Safety
/// `ctx` must be the live context of a native execution.
pub unsafe extern "C" fn rt_new(ctx: *mut NativeCtx, sid: u64, nfields: u64) -> u64 {
    let ctx = &mut *ctx;
    let rt = &mut *ctx.rt;
    let r = rt
        .heap
        .alloc_struct(ir::StructId(sid as u32), nfields as usize);
    alloc_result(ctx, r)
}

/// `newarray`: the new array's reference, or 0 with [`NativeCtx::pending`] set.
///
/// # Safety
/// `ctx` must be the live context of a native execution.
pub unsafe extern "C" fn rt_newarray(ctx: *mut NativeCtx, header: u64, len: u64) -> u64 {
    let ctx = &mut *ctx;
    let rt = &mut *ctx.rt;
    let r = rt.heap.alloc_array_with_header(header, len as i64);
    alloc_result(ctx, r)
}

/// `escape v`: append to the trace; a non-null reference is escaped from now on.
///
/// # Safety
/// `ctx` must be the live context of a native execution.
pub unsafe extern "C" fn rt_escape(ctx: *mut NativeCtx, v: u64, is_ref: u64) {
    let ctx = &mut *ctx;
    let rt = &mut *ctx.rt;
    if is_ref != 0 {
        rt.trace.push(RawValue::Ref(v));
        if v != 0 {
            (*ctx.env).escaped.push(v);
        }
    } else {
        rt.trace.push(RawValue::Int(v as i64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn offsets_match_the_struct() {
        assert_eq!(offset_of!(NativeCtx, saved_rsp), OFF_SAVED_RSP as usize);
        assert_eq!(offset_of!(NativeCtx, heap), OFF_HEAP as usize);
        assert_eq!(offset_of!(NativeCtx, fuel), OFF_FUEL as usize);
        assert_eq!(offset_of!(NativeCtx, depth), OFF_DEPTH as usize);
        assert_eq!(offset_of!(NativeCtx, trap), OFF_TRAP as usize);
        assert_eq!(offset_of!(NativeCtx, result), OFF_RESULT as usize);
        assert_eq!(offset_of!(NativeCtx, target), OFF_TARGET as usize);
        assert_eq!(offset_of!(NativeCtx, args), OFF_ARGS as usize);
        assert_eq!(offset_of!(NativeCtx, nargs), OFF_NARGS as usize);
        assert_eq!(offset_of!(NativeCtx, env), OFF_ENV as usize);
        assert_eq!(offset_of!(NativeCtx, pending), OFF_PENDING as usize);
    }

    #[test]
    fn trap_codes_round_trip() {
        for t in TrapKind::ALL {
            assert_ne!(trap_code(t), 0);
            assert_eq!(trap_kind(trap_code(t)), Some(t));
        }
        assert_eq!(trap_kind(0), None);
    }
}
