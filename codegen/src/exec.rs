//! The native executor: maps a compiled module W^X (written, then flipped to
//! read+execute; never both; the mapping is reused per thread,
//! [`crate::pool::CodeMap`]) and runs its functions on the interpreter's flat
//! word heap, so that the final state is observed by the interpreter's own
//! code ([`interp::observe::observe`]) and compares with `==`.
//!
//! In strict mode ([`NativeProgram::set_strict`]; on by default in harness
//! mode, when [`CompileOptions::chaos`] is set) the heap is a
//! [`crate::strict::StrictHeap`]: every object ends against a PROT_NONE guard
//! page, so an access past an object or wider than 8 bytes faults.
//!
//! Each execution gets a machine stack (an anonymous mapping with a
//! PROT_NONE guard page below it) sized for the interpreter's frame limit.
//! The stack, the strict heap's reservation and the dense heap's buffer are
//! reused per thread and reset between executions ([`crate::pool`]).

use crate::abi::{trap_kind, NativeCtx, Runtime};
use crate::emit::{compile_with, listing, CodegenError, CompileOptions, Compiled};
use crate::pool::{give_words, take_words, CodeMap, Stack};
use crate::strict::{NativeHeap, StrictHeap};
use interp::heap::{build_initial_in, fill_initial, validate_inputs, InputError};
use interp::observe::{
    observe_with, trapped_at_entry, FinalState, HeapNames, ObserveScratch, RawValue,
};
use interp::{Behaviour, Config, EnvContext, EnvInfo};
use ir::{FuncId, InputSpec, Module, Type};
use std::cell::RefCell;

/// The result of one native execution.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct NativeExecution {
    /// What an observer sees (the same type the interpreter returns).
    pub behaviour: Behaviour,
    /// Fuel units spent (taken branches and calls).
    pub fuel_used: u64,
}

/// A module compiled to machine code and mapped executable.
pub struct NativeProgram<'m> {
    module: &'m Module,
    compiled: Compiled,
    code: CodeMap,
    env_info: EnvInfo,
    /// The names of the module's heap entries (built once, shared by every run).
    names: HeapNames,
    strict: bool,
}

thread_local! {
    /// The observation's buffers, reused by every run of the thread (a strict
    /// heap's span is long, and clearing a fresh table each run cost more
    /// than the walk).
    static SCRATCH: RefCell<ObserveScratch> = RefCell::new(ObserveScratch::default());
}

/// Observation tables beyond this many words are not kept between runs.
const SCRATCH_KEEP_WORDS: usize = 1 << 22;

/// [`observe_with`] with the thread's reused buffers.
fn observe_reusing(
    m: &Module,
    layout: &interp::heap::Layout,
    names: &HeapNames,
    st: &FinalState,
) -> Behaviour {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let b = observe_with(m, layout, names, &mut s, st);
        s.trim(SCRATCH_KEEP_WORDS);
        b
    })
}

/// Bytes of machine stack kept for runtime calls (the environment step and
/// allocation run on the execution's stack).
const RUNTIME_STACK: usize = 1 << 20;

type Thunk = unsafe extern "C" fn(*mut NativeCtx, *mut u8) -> u64;

impl<'m> NativeProgram<'m> {
    /// Compile the verified module `m` and map its code executable.
    pub fn new(module: &'m Module) -> Result<NativeProgram<'m>, CodegenError> {
        NativeProgram::with_options(module, CompileOptions::default())
    }

    /// [`NativeProgram::new`] with compile options (harness mode checks the
    /// register allocation).
    pub fn with_options(
        module: &'m Module,
        opts: CompileOptions,
    ) -> Result<NativeProgram<'m>, CodegenError> {
        NativeProgram::with_sabotage(module, opts, None)
    }

    /// [`NativeProgram::with_options`], then (tests of crash isolation only)
    /// overwrite the first instruction of every function as `sabotage` says.
    pub fn with_sabotage(
        module: &'m Module,
        opts: CompileOptions,
        sabotage: Option<Sabotage>,
    ) -> Result<NativeProgram<'m>, CodegenError> {
        let mut compiled = compile_with(module, opts)?;
        if let Some(s) = sabotage {
            let bytes: &[u8] = match s {
                Sabotage::Fault => &[0xf4],      // hlt: SIGSEGV in user mode
                Sabotage::Hang => &[0xeb, 0xfe], // jmp $: loops without fuel
            };
            for &at in &compiled.funcs {
                compiled.code[at..at + bytes.len()].copy_from_slice(bytes);
            }
        }
        let code =
            CodeMap::new(&compiled.code).map_err(|e| CodegenError(format!("mapping code: {e}")))?;
        Ok(NativeProgram {
            module,
            compiled,
            code,
            env_info: EnvInfo::new(module),
            names: HeapNames::new(module, std::iter::empty()),
            strict: opts.chaos.is_some(),
        })
    }

    /// Run on the strict heap (objects against guard pages) or the dense one.
    pub fn set_strict(&mut self, on: bool) {
        self.strict = on;
    }

    /// Whether executions use the strict heap.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// The module.
    pub fn module(&self) -> &'m Module {
        self.module
    }

    /// The disassembly with each IR instruction as a comment above its code.
    pub fn listing(&self) -> String {
        listing(&self.compiled)
    }

    /// The offset in the code of the absolute address `rip`, if it lies there.
    pub fn code_offset(&self, rip: u64) -> Option<usize> {
        let base = self.code.as_ptr() as u64;
        (rip >= base && rip < base + self.compiled.code.len() as u64).then(|| (rip - base) as usize)
    }

    /// The disassembly around the absolute address `rip` (`radius` lines of
    /// listing either side, the instruction at `rip` marked `=>`), or a note
    /// that it lies outside the generated code (in the runtime).
    pub fn disassembly_around(&self, rip: u64, radius: usize) -> String {
        let Some(off) = self.code_offset(rip) else {
            return format!("rip {rip:#x} lies outside the generated code (in the runtime)\n");
        };
        let text = listing(&self.compiled);
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .rposition(|l| {
                l.split_whitespace()
                    .next()
                    .and_then(|w| usize::from_str_radix(w, 16).ok())
                    .is_some_and(|ip| ip <= off && !l.starts_with(' '))
            })
            .unwrap_or(0);
        let lo = at.saturating_sub(radius);
        let hi = (at + radius + 1).min(lines.len());
        let mut out = format!("fault at code offset {off:#x}:\n");
        for (i, l) in lines.iter().enumerate().take(hi).skip(lo) {
            out.push_str(if i == at { "=> " } else { "   " });
            out.push_str(l);
            out.push('\n');
        }
        out
    }

    /// Run `func` on `inputs` natively, or say why the inputs do not fit it.
    pub fn try_run(
        &self,
        func: FuncId,
        inputs: &InputSpec,
        config: &Config,
    ) -> Result<NativeExecution, InputError> {
        let m = self.module;
        let Some(f) = m.funcs.get(func.index()) else {
            return Err(InputError(format!("no function {func:?}")));
        };
        let param_types: Vec<Type> = f.params.iter().map(|&p| f.value_type(p)).collect();
        validate_inputs(m, &param_types, inputs)?;
        let layout = &self.env_info.layout;
        let mut params = Vec::new();
        let heap = if self.strict {
            StrictHeap::new(layout.globals.len(), config.heap_words).and_then(|mut h| {
                fill_initial(&mut h, inputs, &mut params, &mut Vec::new())?;
                Ok(NativeHeap::Strict(h))
            })
        } else {
            let words = take_words(config.heap_words.max(1 + layout.globals.len()));
            build_initial_in(
                layout,
                inputs,
                config.heap_words,
                words,
                &mut params,
                &mut Vec::new(),
            )
            .map(NativeHeap::Dense)
        };
        let heap = match heap {
            Ok(h) => h,
            Err(trap) => {
                // The inputs alone exceed the heap budget (as the interpreter reports it).
                let behaviour =
                    trapped_at_entry(m, layout, &self.names, &mut ObserveScratch::default(), trap);
                return Ok(NativeExecution {
                    behaviour,
                    fuel_used: 0,
                });
            }
        };
        let entry_roots = params
            .iter()
            .zip(&param_types)
            .filter(|(&w, t)| t.is_ref() && w != 0)
            .map(|(&w, _)| w)
            .collect();
        let mut env = EnvContext::new(&self.env_info, entry_roots);
        let mut rt = Runtime {
            heap,
            trace: Vec::new(),
        };
        env.heap = rt.heap.base_ptr();
        env.heap_len = rt.heap.words().len();
        let mut ctx = NativeCtx {
            saved_rsp: 0,
            heap: rt.heap.base_ptr(),
            fuel: config.fuel,
            depth: config.max_depth.saturating_sub(1) as u64,
            trap: 0,
            result: 0,
            target: self.code.as_ptr() as u64 + self.compiled.funcs[func.index()] as u64,
            args: params.as_ptr(),
            nargs: params.len() as u64,
            env: &mut env,
            rt: &mut rt,
            pending: 0,
        };
        let stack_bytes = config.max_depth * (self.compiled.max_frame + 64)
            + RUNTIME_STACK
            + 8 * params.len().max(6)
            + 16;
        let mut stack = Stack::take(stack_bytes)
            .unwrap_or_else(|e| panic!("cannot map a machine stack of {stack_bytes} bytes: {e}"));
        // SAFETY: `entry` is the entry thunk of this code, which follows the
        // C ABI; the context points at live state for the whole call, the
        // heap's capacity covers its budget (allocation never moves it), and
        // the stack top is 16-byte aligned with room for every frame.
        unsafe {
            let thunk: Thunk = std::mem::transmute(self.code.as_ptr().add(self.compiled.entry));
            thunk(&mut ctx, stack.top());
        }
        let trap = trap_kind(ctx.trap);
        let returned = match (trap, f.ret) {
            (None, Some(t)) if t.is_ref() => Some(RawValue::Ref(ctx.result)),
            (None, Some(_)) => Some(RawValue::Int(ctx.result as i64)),
            _ => None,
        };
        let fuel_used = config.fuel - ctx.fuel;
        let behaviour = observe_reusing(
            m,
            layout,
            &self.names,
            &FinalState {
                words: rt.heap.words(),
                entry_roots: &env.entry_roots,
                returned,
                escaped: &env.escaped,
                trace: &rt.trace,
                trap,
            },
        );
        drop(stack);
        if let NativeHeap::Dense(h) = rt.heap {
            give_words(h.words);
        }
        Ok(NativeExecution {
            behaviour,
            fuel_used,
        })
    }

    /// Run `func` on `inputs`; panics when the inputs do not fit.
    pub fn run(&self, func: FuncId, inputs: &InputSpec, config: &Config) -> NativeExecution {
        match self.try_run(func, inputs, config) {
            Ok(e) => e,
            Err(e) => panic!("inputs do not fit @{}: {e}", self.module.func(func).name),
        }
    }
}

/// Deliberate damage to generated code, to test crash isolation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sabotage {
    /// Every function starts with an instruction that faults (SIGSEGV).
    Fault,
    /// Every function starts with a jump to itself (a hang without fuel).
    Hang,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::pooled;
    use std::time::Duration;

    /// `@dirty` leaves -1 in a big array and in 5000 structs (past the
    /// guarded ones); `@clean` allocates the same shapes and ors every word it
    /// reads, which is 0 on a heap in the state of a fresh mapping.
    const PROGRAMS: &str = "
type Pair { a: i64, b: i64 }

func @dirty() -> i64 {
entry:
  %a = newarray i64, 5000
  jmp fill
fill:
  %i = phi [entry: 0], [fill: %j]
  store %a[%i], -1
  %p = new Pair
  store %p.a, -1
  store %p.b, -1
  %j = add %i, 1
  %more = slt %j, 5000
  br %more, fill, done
done:
  ret 0
}

func @clean() -> i64 {
entry:
  %a = newarray i64, 5000
  jmp sum
sum:
  %i = phi [entry: 0], [sum: %j]
  %s = phi [entry: 0], [sum: %s3]
  %p = new Pair
  %x = load %a[%i]
  %y = load %p.a
  %z = load %p.b
  %s1 = or %s, %x
  %s2 = or %s1, %y
  %s3 = or %s2, %z
  %j = add %i, 1
  %more = slt %j, 5000
  br %more, sum, done
done:
  ret %s3
}
";

    fn run(p: &NativeProgram, name: &str) -> Behaviour {
        let m = p.module();
        let f = m.func_by_name(name).expect("function");
        let spec = ir::parse_input_spec("", "<input>", m, m.func(f)).expect("input");
        p.run(f, &spec, &Config::default()).behaviour
    }

    #[test]
    fn a_run_after_a_dirty_one_reuses_the_memory_and_reads_zeroes() {
        let (m, _) = ir::parse_module(PROGRAMS, "reuse").expect("parses");
        let clean = m.func_by_name("clean").expect("clean");
        let spec = ir::parse_input_spec("", "<input>", &m, m.func(clean)).expect("input");
        let want = interp::Program::new(&m).run(clean, &spec, &Config::default());
        assert!(
            format!("{:?}", want.behaviour).contains("Int(0)"),
            "{want:?}"
        );
        for strict in [false, true] {
            let mut p = NativeProgram::new(&m).expect("compiles");
            p.set_strict(strict);
            run(&p, "dirty");
            let before = pooled();
            assert!(before[1] != 0 && before[if strict { 0 } else { 2 }] != 0);
            assert_eq!(run(&p, "clean"), want.behaviour, "strict: {strict}");
            assert_eq!(pooled(), before, "the same memory is reused");
        }
    }

    #[test]
    fn guard_pages_still_fault_after_reuse() {
        let (m, _) = ir::parse_module(PROGRAMS, "reuse").expect("parses");
        let segv = |f: Option<crate::isolate::Failure>| matches!(f, Some(crate::isolate::Failure::Signal { signo, .. }) if signo == libc::SIGSEGV);
        // One word past an array of a reused strict heap.
        // Compile before forking: the child of a multi-threaded test process
        // only runs code (see the fork-safety notes of `crate::isolate`).
        let mut strict = NativeProgram::new(&m).expect("compiles");
        strict.set_strict(true);
        let report = crate::isolate::run_isolated(Duration::from_secs(20), |_| {
            let p = &strict;
            run(p, "dirty");
            let at = pooled()[0];
            let mut h = StrictHeap::new(1, Config::default().heap_words).unwrap();
            assert_eq!(pooled()[0], 0, "the pooled reservation is in use");
            assert!(h.base_ptr() as usize >= at && (h.base_ptr() as usize) < at + (1 << 30));
            let a = h
                .alloc_array_with_header(interp::heap::array_header(Type::I64), 3)
                .unwrap();
            let past = h.base_ptr().wrapping_add(a as usize + 5);
            // SAFETY: deliberately touching the guard page (in a worker).
            unsafe { std::hint::black_box(std::ptr::read_volatile(past)) };
        });
        assert!(segv(report.failure.clone()), "{:?}", report.failure);
        // Below a reused machine stack.
        let dense = NativeProgram::new(&m).expect("compiles");
        let report = crate::isolate::run_isolated(Duration::from_secs(20), |_| {
            let p = &dense;
            run(p, "dirty");
            let at = pooled()[1];
            let s = Stack::take(4096).unwrap();
            assert_eq!(s.guard() as usize, at, "the pooled stack is reused");
            // SAFETY: deliberately touching the guard page (in a worker).
            unsafe { std::hint::black_box(std::ptr::read_volatile(s.guard())) };
        });
        assert!(segv(report.failure.clone()), "{:?}", report.failure);
    }
}
