//! The bytecode executor: [`Program`] caches a module's lowered functions and
//! runs them with the exact semantics of IR.md §4 and §7.

use crate::access::{AccessKind, AccessLoc, AccessObserver, NoObserver, Site};
use crate::config::{Config, TrapKind};
use crate::effect_check::DeclTable;
use crate::env::{loadstar_env_step, EnvContext, EnvInfo, VOLATILE};
use crate::heap::{build_initial_in, validate_inputs, Heap, Layout};
use crate::lower::{
    lower_module, LoweredFunc, Op, Tables, NONE, VF_BASE, VF_INDEX, VF_VALUE, VF_VALUE_REF,
};
use crate::observe::{
    observe_with, observes_as, with_entry_trap_state, Behaviour, FinalState, HeapNames,
    ObserveScratch, RawValue,
};
use ir::{
    DeclList, EffectLoc, Extern, FieldRef, FuncId, Global, InputSpec, Module, StructDecl, StructId,
    Type,
};
use rustc_hash::FxHashSet;
use std::cell::{OnceCell, RefCell};
use std::sync::{Arc, OnceLock};

pub use crate::heap::InputError;

/// The result of one execution. `B` is what an observer sees: its
/// [`Behaviour`], or for a run compared with an expected behaviour as it
/// ended ([`Program::run_valid_against`]), `Option<Behaviour>`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Execution<B = Behaviour> {
    /// What an observer sees.
    pub behaviour: B,
    /// Fuel units spent (taken branches and calls).
    pub fuel_used: u64,
    /// IR instructions executed (phis included; a trapping instruction counts).
    pub steps: u64,
    /// Heap loads executed (`load` of a field, element or global; a trapping
    /// load does not count; `len`, `nullcheck`, `boundscheck` and volatile
    /// steps are not loads).
    pub loads: u64,
    /// Heap stores executed (as `loads`, for `store`).
    pub stores: u64,
}

impl<B> Execution<B> {
    /// Loads plus stores: what the never-worse oracle compares.
    pub fn accesses(&self) -> u64 {
        self.loads + self.stores
    }
}

/// Inputs checked to fit a function ([`Program::validate`]). Validation
/// depends only on the parameter types and the layout (struct field types,
/// global types) it was done against; they are kept (borrowed, so they
/// cannot change) and compared by every run, so a proof is never stale.
#[derive(Clone, Debug)]
pub struct ValidInputs<'a> {
    spec: &'a InputSpec,
    params: &'a [Type],
    layout: &'a Layout,
    /// The initial heap the first successful run built from `spec`, reused
    /// by later runs (see [`InitialImage`]).
    image: OnceCell<InitialImage>,
}

/// The initial arena and parameter words of an input spec. They depend
/// only on the spec (borrowed by its [`ValidInputs`], so unchanged) and on
/// the layout, which is the one the inputs were validated against: a run
/// under another layout validates again, with a proof of its own
/// ([`Program::run_valid_observed`]). Building allocates the spec's objects
/// in order, each within the budget: it succeeds exactly when the whole
/// image fits, so an image is reused only under a budget it fits, and
/// otherwise the run builds (and traps) as before.
#[derive(Clone, Debug)]
struct InitialImage {
    words: Vec<u64>,
    params: Vec<u64>,
}

impl<'a> ValidInputs<'a> {
    /// The inputs.
    pub fn spec(&self) -> &'a InputSpec {
        self.spec
    }
}

/// A module lowered for execution; lower once, run many times.
pub struct Program<'m> {
    module: &'m Module,
    funcs: Vec<LoweredFunc>,
    tables: Tables,
    /// Shared with programs of the same declarations ([`Program::new_like`]).
    env_info: Arc<EnvInfo>,
    names: Arc<HeapNames>,
    /// Per function, the index of its first op in a program-wide op numbering.
    code_base: Vec<usize>,
    /// Declared effects for effect checking, built on first use.
    decls: OnceLock<DeclTable>,
}

/// Buffers one execution uses, kept per thread between executions so that a
/// run allocates (almost) only its result.
#[derive(Default)]
struct RunBuffers {
    heap: Vec<u64>,
    params: Vec<u64>,
    addrs: Vec<u64>,
    machine: MachineBuffers,
    entry_roots: Vec<u64>,
    escaped: Vec<u64>,
    accesses: Vec<(AccessKind, AccessLoc)>,
    observe: ObserveScratch,
}

/// Arenas larger than this many words are not kept between executions.
const KEEP_ARENA_WORDS: usize = 1 << 16;

thread_local! {
    static RUN_BUFFERS: RefCell<RunBuffers> = RefCell::new(RunBuffers::default());
    /// The environment description and heap names [`Program::new`] built
    /// last on this thread, with the declarations they were built from.
    static LAST_ENV: RefCell<Option<KeptEnv>> = const { RefCell::new(None) };
}

/// A module's declarations (types, globals, externs) and the environment
/// description and heap names built from them (see [`Program::new_like`]):
/// programs of modules that declare the same share them.
struct KeptEnv {
    structs: DeclList<StructDecl>,
    globals: DeclList<Global>,
    externs: DeclList<Extern>,
    env_info: Arc<EnvInfo>,
    names: Arc<HeapNames>,
}

impl KeptEnv {
    /// What a program of `module` shares, if `module` declares the same.
    fn shared_with(&self, module: &Module) -> Option<(Arc<EnvInfo>, Arc<HeapNames>)> {
        let same = module.structs == self.structs
            && module.globals == self.globals
            && module.externs == self.externs;
        same.then(|| (self.env_info.clone(), self.names.clone()))
    }
}

struct Frame {
    func: u32,
    ret_pc: usize,
    fp: usize,
    dst: u32,
}

/// The machine's own growing state: registers, frames, the trace and the
/// scratch of access reporting (moved in from and back to [`RunBuffers`]).
#[derive(Default)]
struct MachineBuffers {
    regs: Vec<u64>,
    frames: Vec<Frame>,
    trace: Vec<RawValue>,
    args: Vec<u64>,
    sites: Vec<Site>,
    /// Scratch of [`Machine::report`]: the distinct accesses of one batch.
    unique: Vec<(AccessKind, AccessLoc)>,
    /// Scratch of `escape`: its accesses, the walk's queue and visited set.
    escape_acc: Vec<(AccessKind, AccessLoc)>,
    escape_queue: Vec<u64>,
    escape_seen: FxHashSet<u64>,
    /// Per op of the program (see `Program::code_base`): whether its own
    /// access was already reported from top level (observers only).
    reported_ops: Vec<bool>,
    /// Per access slot (see `Program::access_slot`): the last batch that
    /// reported it (observers only).
    stamps: Vec<u32>,
}

struct Machine<'p, 'o, O: AccessObserver> {
    prog: &'p Program<'p>,
    heap: Heap,
    env: EnvContext,
    bufs: MachineBuffers,
    /// The number of the current report batch.
    batch: u32,
    observer: &'o mut O,
    max_depth: usize,
    steps: u64,
    loads: u64,
    stores: u64,
    fuel: u64,
}

impl<'m> Program<'m> {
    /// Lower every function of `module`. Its environment description and
    /// heap names are those of the last program made this way on this
    /// thread when `module` declares the same (as [`Program::new_like`]
    /// shares them: consecutive generated programs all declare the same).
    pub fn new(module: &'m Module) -> Program<'m> {
        let shared = LAST_ENV.with(|k| k.borrow().as_ref().and_then(|k| k.shared_with(module)));
        if shared.is_some() {
            return Program::lower(module, shared);
        }
        let program = Program::lower(module, None);
        LAST_ENV.with(|k| {
            *k.borrow_mut() = Some(KeptEnv {
                structs: module.structs.clone(),
                globals: module.globals.clone(),
                externs: module.externs.clone(),
                env_info: program.env_info.clone(),
                names: program.names.clone(),
            })
        });
        program
    }

    /// [`Program::new`], sharing `base`'s environment description and heap
    /// names when `module` declares the same types, globals and externs
    /// (an optimized module and its original: passes never change them).
    /// They are derived from those declarations alone, which are compared
    /// here and borrowed (unchangeable) for both programs' lifetimes, so
    /// what is shared is exactly what `module` would build.
    pub fn new_like(module: &'m Module, base: &Program<'_>) -> Program<'m> {
        let b = base.module;
        let same = module.structs == b.structs
            && module.globals == b.globals
            && module.externs == b.externs;
        Program::lower(
            module,
            same.then(|| (base.env_info.clone(), base.names.clone())),
        )
    }

    /// Lower `module`, with its environment description and names when given.
    fn lower(module: &'m Module, shared: Option<(Arc<EnvInfo>, Arc<HeapNames>)>) -> Program<'m> {
        let (funcs, tables) = lower_module(module);
        let (env_info, names) = shared.unwrap_or_else(|| {
            let mentioned = module
                .globals
                .iter()
                .map(|g| g.ty)
                .chain(
                    module
                        .structs
                        .iter()
                        .flat_map(|s| s.fields.iter().map(|f| f.ty)),
                )
                .chain(funcs.iter().flat_map(|f| f.param_types.iter().copied()))
                .chain(tables.array_elems.iter().map(|e| e.array_of()));
            (
                Arc::new(EnvInfo::new(module)),
                Arc::new(HeapNames::new(module, mentioned)),
            )
        });
        let mut code_base = Vec::with_capacity(funcs.len() + 1);
        let mut ops = 0;
        for f in &funcs {
            code_base.push(ops);
            ops += f.code.len();
        }
        code_base.push(ops);
        Program {
            module,
            funcs,
            tables,
            env_info,
            names,
            code_base,
            decls: OnceLock::new(),
        }
    }

    /// Whether `self` and `other` share their environment description and
    /// heap names ([`Program::new_like`]).
    pub fn shares_env_with(&self, other: &Program<'_>) -> bool {
        Arc::ptr_eq(&self.env_info, &other.env_info) && Arc::ptr_eq(&self.names, &other.names)
    }

    /// The number of distinct access slots (see [`Program::access_slot`]).
    fn access_slots(&self) -> usize {
        let layout = &self.env_info.layout;
        2 * (layout.field_count() + layout.globals.len() + 2)
    }

    /// A dense number for accesses to fields, globals, `Alloc` and `Output`
    /// (`None` for element accesses), for de-duplicating report batches.
    fn access_slot(&self, (kind, loc): (AccessKind, AccessLoc)) -> Option<usize> {
        let layout = &self.env_info.layout;
        let (nf, ng) = (layout.field_count(), layout.globals.len());
        let n = match loc {
            AccessLoc::Heap(EffectLoc::Field(f)) => layout.flat_field(f.ty, f.index as usize)?,
            AccessLoc::Heap(EffectLoc::Global(g)) if g.index() < ng => nf + g.index(),
            AccessLoc::Heap(_) => return None,
            AccessLoc::Alloc => nf + ng,
            AccessLoc::Output => nf + ng + 1,
        };
        Some(2 * n + kind as usize)
    }

    /// The declared effects of the module's instructions, shared by every checked run.
    pub(crate) fn decl_table(&self) -> &DeclTable {
        self.decls.get_or_init(|| DeclTable::new(self.module))
    }

    /// The module this program runs.
    pub fn module(&self) -> &'m Module {
        self.module
    }

    /// The environment description (for native executors sharing the step function).
    pub fn env_info(&self) -> &EnvInfo {
        &self.env_info
    }

    /// Run `func` on `inputs`. Panics when the inputs do not fit the function
    /// (a resolved [`InputSpec`] always does; see [`Program::try_run`]).
    pub fn run(&self, func: FuncId, inputs: &InputSpec, config: &Config) -> Execution {
        match self.try_run(func, inputs, config) {
            Ok(e) => e,
            Err(e) => panic!("inputs do not fit @{}: {e}", self.module.func(func).name),
        }
    }

    /// Run `func` on `inputs`, or say why the inputs do not fit it.
    pub fn try_run(
        &self,
        func: FuncId,
        inputs: &InputSpec,
        config: &Config,
    ) -> Result<Execution, InputError> {
        self.run_observed(func, inputs, config, &mut NoObserver)
    }

    /// Run `func`, reporting every memory access to `observer`.
    pub fn run_observed<O: AccessObserver>(
        &self,
        func: FuncId,
        inputs: &InputSpec,
        config: &Config,
        observer: &mut O,
    ) -> Result<Execution, InputError> {
        let valid = self.validate(func, inputs)?;
        self.run_valid_observed(func, &valid, config, observer)
    }

    /// Check that `inputs` fit `func` (its parameter types, the module's
    /// globals and types): the proof [`Program::run_valid_observed`] takes,
    /// which other programs with the same signature and layout accept too.
    pub fn validate<'a>(
        &'a self,
        func: FuncId,
        inputs: &'a InputSpec,
    ) -> Result<ValidInputs<'a>, InputError> {
        let lf = self.lowered(func)?;
        validate_inputs(self.module, &lf.param_types, inputs)?;
        Ok(ValidInputs {
            spec: inputs,
            params: &lf.param_types,
            layout: &self.env_info.layout,
            image: OnceCell::new(),
        })
    }

    /// The lowered form of `func`.
    fn lowered(&self, func: FuncId) -> Result<&LoweredFunc, InputError> {
        self.funcs
            .get(func.index())
            .ok_or_else(|| InputError(format!("no function {func:?}")))
    }

    /// [`Program::run_observed`] on inputs validated (by this program or
    /// another); they are validated again unless the validation's parameter
    /// types and layout are this function's.
    pub fn run_valid_observed<O: AccessObserver>(
        &self,
        func: FuncId,
        valid: &ValidInputs<'_>,
        config: &Config,
        observer: &mut O,
    ) -> Result<Execution, InputError> {
        let (m, layout, names) = (self.module, &self.env_info.layout, &*self.names);
        self.run_valid_viewed(func, valid, config, observer, |st, scratch| {
            observe_with(m, layout, names, scratch, st)
        })
    }

    /// [`Program::run_valid_observed`], comparing the behaviour with
    /// `expected` as the run ends: `None` when they are equal (decided
    /// without building the behaviour, see [`observes_as`]), else the
    /// behaviour.
    pub fn run_valid_against<O: AccessObserver>(
        &self,
        func: FuncId,
        valid: &ValidInputs<'_>,
        config: &Config,
        observer: &mut O,
        expected: &Behaviour,
    ) -> Result<Execution<Option<Behaviour>>, InputError> {
        let (m, layout, names) = (self.module, &self.env_info.layout, &*self.names);
        self.run_valid_viewed(func, valid, config, observer, |st, scratch| {
            let same = observes_as(m, layout, names, scratch, st, expected);
            (!same).then(|| observe_with(m, layout, names, scratch, st))
        })
    }

    /// Run validated inputs (validated again when they were validated for
    /// other parameter types or another layout); `view` makes what an
    /// observer sees of the final state.
    fn run_valid_viewed<O: AccessObserver, B>(
        &self,
        func: FuncId,
        valid: &ValidInputs<'_>,
        config: &Config,
        observer: &mut O,
        view: impl FnOnce(&FinalState, &mut ObserveScratch) -> B,
    ) -> Result<Execution<B>, InputError> {
        let lf = self.lowered(func)?;
        // What validation read: any difference and it is done again here,
        // with a proof of this program's own (whose image is built for its
        // layout). A layout shared with the validating program is the same one.
        let layout = &self.env_info.layout;
        let same_layout = std::ptr::eq(valid.layout, layout) || valid.layout == layout;
        let revalidated;
        let valid = if valid.params != lf.param_types.as_slice() || !same_layout {
            revalidated = self.validate(func, valid.spec)?;
            &revalidated
        } else {
            valid
        };
        let exec = ir::reuse::with_reused(&RUN_BUFFERS, |bufs| {
            let exec = self.run_in(func, valid, config, observer, bufs, view);
            if bufs.heap.capacity() > KEEP_ARENA_WORDS {
                bufs.heap = Vec::new();
            }
            bufs.observe.trim(KEEP_ARENA_WORDS);
            exec
        });
        Ok(exec)
    }

    /// Run validated inputs with the buffers of `bufs` (returned to it afterwards).
    fn run_in<O: AccessObserver, B>(
        &self,
        func: FuncId,
        valid: &ValidInputs<'_>,
        config: &Config,
        observer: &mut O,
        bufs: &mut RunBuffers,
        view: impl FnOnce(&FinalState, &mut ObserveScratch) -> B,
    ) -> Execution<B> {
        let lf = &self.funcs[func.index()];
        let layout = &self.env_info.layout;
        let mut words = std::mem::take(&mut bufs.heap);
        let built = match valid.image.get() {
            Some(img) if img.words.len() <= config.heap_words => {
                words.clear();
                words.extend_from_slice(&img.words);
                bufs.params.clear();
                bufs.params.extend_from_slice(&img.params);
                Ok(Heap {
                    words,
                    budget: config.heap_words,
                })
            }
            _ => build_initial_in(
                layout,
                valid.spec,
                config.heap_words,
                words,
                &mut bufs.params,
                &mut bufs.addrs,
            )
            .inspect(|heap| {
                if valid.image.get().is_none() {
                    let _ = valid.image.set(InitialImage {
                        words: heap.words.clone(),
                        params: bufs.params.clone(),
                    });
                }
            }),
        };
        let heap = match built {
            Ok(heap) => heap,
            Err(trap) => {
                // The inputs alone exceed the heap budget.
                let behaviour =
                    with_entry_trap_state(layout, trap, |st| view(st, &mut bufs.observe));
                return Execution {
                    behaviour,
                    fuel_used: 0,
                    steps: 0,
                    loads: 0,
                    stores: 0,
                };
            }
        };
        let mut entry_roots = std::mem::take(&mut bufs.entry_roots);
        entry_roots.clear();
        entry_roots.extend(
            bufs.params
                .iter()
                .zip(&lf.param_types)
                .filter(|(&w, t)| t.is_ref() && w != 0)
                .map(|(&w, _)| w),
        );
        let mut env = EnvContext::new(&self.env_info, entry_roots);
        env.escaped = std::mem::take(&mut bufs.escaped);
        env.escaped.clear();
        env.accesses = std::mem::take(&mut bufs.accesses);
        env.accesses.clear();
        let mut machine = std::mem::take(&mut bufs.machine);
        machine.frames.clear();
        machine.trace.clear();
        machine.reported_ops.clear();
        machine.stamps.clear();
        if O::ENABLED {
            machine
                .reported_ops
                .resize(self.code_base[self.funcs.len()], false);
            machine.stamps.resize(self.access_slots(), 0);
        }
        let mut m = Machine {
            prog: self,
            heap,
            env,
            bufs: machine,
            batch: 0,
            observer,
            max_depth: config.max_depth,
            steps: 0,
            loads: 0,
            stores: 0,
            fuel: config.fuel,
        };
        let result = m.exec(func.0, &bufs.params);
        let (returned, trap) = match result {
            Ok(None) => (None, None),
            Ok(Some(w)) => (
                Some(if lf.returns_ref {
                    RawValue::Ref(w)
                } else {
                    RawValue::Int(w as i64)
                }),
                None,
            ),
            Err(t) => (None, Some(t)),
        };
        let behaviour = view(
            &FinalState {
                words: &m.heap.words,
                entry_roots: &m.env.entry_roots,
                returned,
                escaped: &m.env.escaped,
                trace: &m.bufs.trace,
                trap,
            },
            &mut bufs.observe,
        );
        let exec = Execution {
            behaviour,
            fuel_used: config.fuel - m.fuel,
            steps: m.steps,
            loads: m.loads,
            stores: m.stores,
        };
        bufs.heap = m.heap.words;
        bufs.machine = m.bufs;
        bufs.entry_roots = m.env.entry_roots;
        bufs.escaped = m.env.escaped;
        bufs.accesses = m.env.accesses;
        exec
    }
}

/// Run `func` of `m` on `inputs` (lowers the module first; cache a [`Program`] to run often).
pub fn run(m: &Module, func: FuncId, inputs: &InputSpec, config: &Config) -> Execution {
    Program::new(m).run(func, inputs, config)
}

impl<'p, 'o, O: AccessObserver> Machine<'p, 'o, O> {
    /// The chain of active instructions, outermost first (observers only),
    /// built into `self.bufs.sites` (reused: observers see every memory access).
    fn fill_stack(&mut self, cur: u32, pc: usize) {
        let funcs = &self.prog.funcs;
        let site = Site {
            func: FuncId(cur),
            inst: funcs[cur as usize].meta[pc].inst,
        };
        let sites = &mut self.bufs.sites;
        sites.clear();
        // Most accesses are made at top level: one site, no caller to walk.
        if !self.bufs.frames.is_empty() {
            sites.extend(self.bufs.frames.iter().map(|fr| Site {
                func: FuncId(fr.func),
                inst: funcs[fr.func as usize].meta[fr.ret_pc - 1].inst,
            }));
        }
        sites.push(site);
    }

    fn report(&mut self, cur: u32, pc: usize, accesses: &[(AccessKind, AccessLoc)]) {
        let &[first, ..] = accesses else {
            return;
        };
        self.fill_stack(cur, pc);
        if accesses.len() == 1 {
            self.observer.access(&self.bufs.sites, first.0, first.1);
            return;
        }
        // An `escape` walk lists one access per slot it reads; observers only
        // tell (kind, location) apart, so report each once per batch.
        self.batch = self.batch.wrapping_add(1);
        if self.batch == 0 {
            self.bufs.stamps.fill(0);
            self.batch = 1;
        }
        self.bufs.unique.clear();
        let mut prev = None;
        for &a in accesses {
            // Runs of one access are common (array elements): skip them cheaply.
            if prev == Some(a) {
                continue;
            }
            prev = Some(a);
            let fresh = match self.prog.access_slot(a) {
                Some(i) => std::mem::replace(&mut self.bufs.stamps[i], self.batch) != self.batch,
                None => {
                    !self.bufs.unique.contains(&a) && {
                        self.bufs.unique.push(a);
                        true
                    }
                }
            };
            if fresh {
                self.observer.access(&self.bufs.sites, a.0, a.1);
            }
        }
    }

    /// One environment step through the shared C entry point.
    fn env_step(&mut self, callee: u32, mask: u64, cur: u32, pc: usize) -> u64 {
        self.env.heap = self.heap.words.as_mut_ptr();
        self.env.heap_len = self.heap.words.len();
        self.env.log_enabled = O::ENABLED;
        // SAFETY: the context describes the live arena and the program's env
        // info; `args` holds `len` words; references are valid object offsets.
        let r = unsafe {
            loadstar_env_step(
                &mut self.env,
                callee,
                self.bufs.args.as_ptr(),
                self.bufs.args.len() as u32,
                mask,
            )
        };
        if O::ENABLED && !self.env.accesses.is_empty() {
            // The step's log holds each (kind, location) once already, in
            // order of first access: what `report` would pass on, without
            // de-duplicating again.
            self.fill_stack(cur, pc);
            self.observer
                .access_all(&self.bufs.sites, &self.env.accesses);
        }
        r
    }

    /// Append to `out` the reads an `escape` of `obj` makes: every slot of its reach.
    fn escape_reads(&mut self, obj: u64, out: &mut Vec<(AccessKind, AccessLoc)>) {
        let layout: &Layout = &self.prog.env_info.layout;
        let words = &self.heap.words;
        let seen = &mut self.bufs.escape_seen;
        let queue = &mut self.bufs.escape_queue;
        seen.clear();
        queue.clear();
        queue.push(obj);
        seen.insert(obj);
        while let Some(o) = queue.pop() {
            let (shape, first, n) = layout.slots(words, o);
            for k in 0..n {
                let loc = match shape {
                    crate::heap::Shape::Struct(s) => EffectLoc::Field(FieldRef {
                        ty: StructId(s.0),
                        index: k as u32,
                    }),
                    crate::heap::Shape::Array(e) => EffectLoc::Elements(e),
                };
                out.push((AccessKind::Read, AccessLoc::Heap(loc)));
                let t = words[first + k];
                if layout.slot_type(shape, k).is_ref() && t != 0 && seen.insert(t) {
                    queue.push(t);
                }
            }
        }
    }

    fn exec(&mut self, entry: u32, params: &[u64]) -> Result<Option<u64>, TrapKind> {
        let prog = self.prog;
        let funcs = &prog.funcs;
        let mut cur_idx = entry;
        let mut cur: &LoweredFunc = &funcs[entry as usize];
        // Every frame is initialised from its template: stale words never show.
        let want = cur.frame_size.max(1024);
        if self.bufs.regs.len() < want {
            self.bufs.regs.resize(want, 0);
        }
        self.bufs.regs[..cur.frame_size].copy_from_slice(&cur.template);
        for (&slot, &w) in cur.params.iter().zip(params) {
            self.bufs.regs[slot as usize] = w;
        }
        let mut code: &[Op] = &cur.code;
        let mut pc: usize = 0;
        let mut fp: usize = 0;
        let mut r: *mut u64 = self.bufs.regs.as_mut_ptr();
        let mut fuel = self.fuel;
        let mut steps = cur.entry_steps[0] as u64;
        let (mut loads, mut stores) = (0u64, 0u64);

        // SAFETY (for `rd!`/`wr!`): every slot in the code is below its
        // function's frame size (lowering guarantees it), and `regs` always
        // holds at least `fp + frame_size` words for the current frame; `r`
        // is re-derived whenever `regs` may have moved.
        macro_rules! rd {
            ($s:expr) => {
                unsafe { *r.add($s as usize) }
            };
        }
        macro_rules! wr {
            ($s:expr, $v:expr) => {{
                let v = $v;
                unsafe { *r.add($s as usize) = v }
            }};
        }
        macro_rules! bin {
            ($d:expr, $a:expr, $b:expr, |$x:ident, $y:ident| $e:expr) => {{
                let $x = rd!($a);
                let $y = rd!($b);
                wr!($d, $e)
            }};
        }
        macro_rules! observe_op {
            () => {
                if O::ENABLED {
                    if let Some(acc) = cur.meta[pc - 1].access {
                        // An op's own access has a static location: at top level
                        // (the same one-site stack every time) one report per
                        // op is all an observer can distinguish.
                        let top = self.bufs.frames.is_empty();
                        let op = prog.code_base[cur_idx as usize] + pc - 1;
                        if !top || !std::mem::replace(&mut self.bufs.reported_ops[op], true) {
                            self.report(cur_idx, pc - 1, &[acc]);
                        }
                    }
                }
            };
        }

        let result: Result<Option<u64>, TrapKind> = 'run: loop {
            let op = code[pc];
            pc += 1;
            macro_rules! trap {
                ($k:expr) => {
                    break 'run Err($k)
                };
            }
            match op {
                Op::Add { d, a, b } => bin!(d, a, b, |x, y| x.wrapping_add(y)),
                Op::Sub { d, a, b } => bin!(d, a, b, |x, y| x.wrapping_sub(y)),
                Op::Mul { d, a, b } => bin!(d, a, b, |x, y| x.wrapping_mul(y)),
                Op::And { d, a, b } => bin!(d, a, b, |x, y| x & y),
                Op::Or { d, a, b } => bin!(d, a, b, |x, y| x | y),
                Op::Xor { d, a, b } => bin!(d, a, b, |x, y| x ^ y),
                Op::Shl { d, a, b } => bin!(d, a, b, |x, y| x << (y & 63)),
                Op::Lshr { d, a, b } => bin!(d, a, b, |x, y| x >> (y & 63)),
                Op::Ashr { d, a, b } => bin!(d, a, b, |x, y| ((x as i64) >> (y & 63)) as u64),
                Op::Sdiv { d, a, b } => {
                    let y = rd!(b) as i64;
                    if y == 0 {
                        trap!(TrapKind::DivByZero);
                    }
                    wr!(d, (rd!(a) as i64).wrapping_div(y) as u64)
                }
                Op::Srem { d, a, b } => {
                    let y = rd!(b) as i64;
                    if y == 0 {
                        trap!(TrapKind::DivByZero);
                    }
                    wr!(d, (rd!(a) as i64).wrapping_rem(y) as u64)
                }
                Op::Eq { d, a, b } => bin!(d, a, b, |x, y| (x == y) as u64),
                Op::Ne { d, a, b } => bin!(d, a, b, |x, y| (x != y) as u64),
                Op::Slt { d, a, b } => bin!(d, a, b, |x, y| ((x as i64) < (y as i64)) as u64),
                Op::Sle { d, a, b } => bin!(d, a, b, |x, y| ((x as i64) <= (y as i64)) as u64),
                Op::Sgt { d, a, b } => bin!(d, a, b, |x, y| ((x as i64) > (y as i64)) as u64),
                Op::Sge { d, a, b } => bin!(d, a, b, |x, y| ((x as i64) >= (y as i64)) as u64),
                Op::Ult { d, a, b } => bin!(d, a, b, |x, y| (x < y) as u64),
                Op::Ule { d, a, b } => bin!(d, a, b, |x, y| (x <= y) as u64),
                Op::Ugt { d, a, b } => bin!(d, a, b, |x, y| (x > y) as u64),
                Op::Uge { d, a, b } => bin!(d, a, b, |x, y| (x >= y) as u64),
                Op::Neg { d, a } => wr!(d, rd!(a).wrapping_neg()),
                Op::Not { d, a } => wr!(d, !rd!(a)),
                Op::Mov { d, a } => wr!(d, rd!(a)),
                Op::Select { d, c, a, b } => {
                    let v = if rd!(c) != 0 { rd!(a) } else { rd!(b) };
                    wr!(d, v)
                }
                Op::New { d, sid, n } => {
                    observe_op!();
                    match self.heap.alloc_struct(StructId(sid), n as usize) {
                        Ok(o) => wr!(d, o),
                        Err(t) => trap!(t),
                    }
                }
                Op::NewArray { d, len, shape } => {
                    observe_op!();
                    let h = prog.tables.array_headers[shape as usize];
                    match self.heap.alloc_array_with_header(h, rd!(len) as i64) {
                        Ok(o) => wr!(d, o),
                        Err(t) => trap!(t),
                    }
                }
                Op::LoadField { d, o, off } => {
                    let base = rd!(o) as usize;
                    if base == 0 {
                        trap!(TrapKind::NullDeref);
                    }
                    observe_op!();
                    loads += 1;
                    wr!(d, self.heap.words[base + off as usize])
                }
                Op::StoreField { o, off, v } => {
                    let base = rd!(o) as usize;
                    if base == 0 {
                        trap!(TrapKind::NullDeref);
                    }
                    observe_op!();
                    stores += 1;
                    self.heap.words[base + off as usize] = rd!(v);
                }
                Op::LoadElem { d, a, i } => {
                    let base = rd!(a) as usize;
                    if base == 0 {
                        trap!(TrapKind::NullDeref);
                    }
                    let idx = rd!(i);
                    if idx >= self.heap.words[base + 1] {
                        trap!(TrapKind::OutOfBounds);
                    }
                    observe_op!();
                    loads += 1;
                    wr!(d, self.heap.words[base + 2 + idx as usize])
                }
                Op::StoreElem { a, i, v } => {
                    let base = rd!(a) as usize;
                    if base == 0 {
                        trap!(TrapKind::NullDeref);
                    }
                    let idx = rd!(i);
                    if idx >= self.heap.words[base + 1] {
                        trap!(TrapKind::OutOfBounds);
                    }
                    observe_op!();
                    stores += 1;
                    self.heap.words[base + 2 + idx as usize] = rd!(v);
                }
                Op::Len { d, a } => {
                    let base = rd!(a) as usize;
                    if base == 0 {
                        trap!(TrapKind::NullDeref);
                    }
                    wr!(d, self.heap.words[base + 1])
                }
                Op::LoadGlobal { d, w } => {
                    observe_op!();
                    loads += 1;
                    wr!(d, self.heap.words[w as usize])
                }
                Op::StoreGlobal { w, v } => {
                    observe_op!();
                    stores += 1;
                    self.heap.words[w as usize] = rd!(v);
                }
                Op::Volatile {
                    base,
                    index,
                    value,
                    flags,
                } => {
                    self.bufs.args.clear();
                    let mut mask = 0u64;
                    if flags & VF_BASE != 0 {
                        mask |= 1 << self.bufs.args.len();
                        self.bufs.args.push(rd!(base));
                    }
                    if flags & VF_INDEX != 0 {
                        self.bufs.args.push(rd!(index));
                    }
                    if flags & VF_VALUE != 0 {
                        if flags & VF_VALUE_REF != 0 {
                            mask |= 1 << self.bufs.args.len();
                        }
                        self.bufs.args.push(rd!(value));
                    }
                    self.env_step(VOLATILE, mask, cur_idx, pc - 1);
                }
                Op::Call { d, func, args, n } => {
                    if fuel == 0 {
                        trap!(TrapKind::OutOfFuel);
                    }
                    fuel -= 1;
                    if self.bufs.frames.len() + 1 >= self.max_depth {
                        trap!(TrapKind::StackOverflow);
                    }
                    let callee = &funcs[func as usize];
                    let new_fp = fp + cur.frame_size;
                    let need = new_fp + callee.frame_size;
                    if self.bufs.regs.len() < need {
                        let grown = need.max(self.bufs.regs.len() * 2);
                        self.bufs.regs.resize(grown, 0);
                    }
                    self.bufs.regs[new_fp..need].copy_from_slice(&callee.template);
                    let arg_slots = &cur.arg_pool[args as usize..(args + n) as usize];
                    for (&src, &dst) in arg_slots.iter().zip(&callee.params) {
                        self.bufs.regs[new_fp + dst as usize] = self.bufs.regs[fp + src as usize];
                    }
                    self.bufs.frames.push(Frame {
                        func: cur_idx,
                        ret_pc: pc,
                        fp,
                        dst: d,
                    });
                    cur_idx = func;
                    cur = callee;
                    code = &cur.code;
                    pc = 0;
                    fp = new_fp;
                    // SAFETY: `regs` holds at least `need` words.
                    r = unsafe { self.bufs.regs.as_mut_ptr().add(fp) };
                    steps += cur.entry_steps[0] as u64;
                }
                Op::CallExtern { d, ext, args, n } => {
                    if fuel == 0 {
                        trap!(TrapKind::OutOfFuel);
                    }
                    fuel -= 1;
                    self.bufs.args.clear();
                    for &s in &cur.arg_pool[args as usize..(args + n) as usize] {
                        self.bufs.args.push(rd!(s));
                    }
                    let res = self.env_step(ext, 0, cur_idx, pc - 1);
                    if d != NONE {
                        wr!(d, res);
                    }
                }
                Op::Escape { v, is_ref } => {
                    let w = rd!(v);
                    if O::ENABLED {
                        let mut acc = std::mem::take(&mut self.bufs.escape_acc);
                        acc.clear();
                        acc.push((AccessKind::Write, AccessLoc::Output));
                        if is_ref && w != 0 {
                            self.escape_reads(w, &mut acc);
                        }
                        self.report(cur_idx, pc - 1, &acc);
                        self.bufs.escape_acc = acc;
                    }
                    if is_ref {
                        self.bufs.trace.push(RawValue::Ref(w));
                        if w != 0 {
                            self.env.escaped.push(w);
                        }
                    } else {
                        self.bufs.trace.push(RawValue::Int(w as i64));
                    }
                }
                Op::Guard { c } => {
                    if rd!(c) == 0 {
                        trap!(TrapKind::GuardFailed);
                    }
                }
                Op::NullCheck { a } => {
                    if rd!(a) == 0 {
                        trap!(TrapKind::NullDeref);
                    }
                }
                Op::BoundsCheck { a, i } => {
                    let base = rd!(a) as usize;
                    if base == 0 {
                        trap!(TrapKind::NullDeref);
                    }
                    if rd!(i) >= self.heap.words[base + 1] {
                        trap!(TrapKind::OutOfBounds);
                    }
                }
                Op::Jmp { t } => {
                    if fuel == 0 {
                        trap!(TrapKind::OutOfFuel);
                    }
                    fuel -= 1;
                    pc = t as usize;
                    steps += cur.entry_steps[pc] as u64;
                }
                Op::Br { c, t, e } => {
                    if fuel == 0 {
                        trap!(TrapKind::OutOfFuel);
                    }
                    fuel -= 1;
                    pc = if rd!(c) != 0 { t } else { e } as usize;
                    steps += cur.entry_steps[pc] as u64;
                }
                Op::Goto { t } => pc = t as usize,
                Op::Ret { v } => {
                    let val = rd!(v);
                    match self.bufs.frames.pop() {
                        None => break 'run Ok(Some(val)),
                        Some(fr) => {
                            cur_idx = fr.func;
                            cur = &funcs[cur_idx as usize];
                            code = &cur.code;
                            pc = fr.ret_pc;
                            fp = fr.fp;
                            // SAFETY: the caller's frame lies inside `regs`.
                            r = unsafe { self.bufs.regs.as_mut_ptr().add(fp) };
                            if fr.dst != NONE {
                                wr!(fr.dst, val);
                            }
                        }
                    }
                }
                Op::RetVoid => match self.bufs.frames.pop() {
                    None => break 'run Ok(None),
                    Some(fr) => {
                        cur_idx = fr.func;
                        cur = &funcs[cur_idx as usize];
                        code = &cur.code;
                        pc = fr.ret_pc;
                        fp = fr.fp;
                        // SAFETY: the caller's frame lies inside `regs`.
                        r = unsafe { self.bufs.regs.as_mut_ptr().add(fp) };
                    }
                },
                Op::Unreachable => trap!(TrapKind::Unreachable),
            }
        };
        if result.is_err() {
            // Instructions after the trapping one were counted at block entry.
            steps -= cur.meta[pc - 1].remaining as u64;
            for fr in &self.bufs.frames {
                steps -= funcs[fr.func as usize].meta[fr.ret_pc - 1].remaining as u64;
            }
        }
        self.steps = steps;
        self.loads = loads;
        self.stores = stores;
        self.fuel = fuel;
        result
    }
}
