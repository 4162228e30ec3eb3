//! The deterministic environment of IR.md §6: extern calls and volatile accesses.
//!
//! A step computes what it can reach *now* from its roots — the globals, the
//! function's reference arguments at entry, the step's own reference arguments,
//! every object escaped so far — numbering the reached objects in breadth-first
//! order (roots in that fixed order, slots in field/element order). Hashes use
//! those numbers, never addresses, so programs that allocate differently meet
//! the same environment.
//!
//! * Result: `hash(s, name, canonical args, every readable reachable slot)`;
//!   a reference-returning extern returns a reachable object of the return type
//!   (or `null`) picked by that hash.
//! * Writes: every writable `i64` slot is rewritten to
//!   `hash(step seed, object number, slot, old value)` (never equal to the old
//!   value); each writable reference slot is rewired with probability ~1/4 to a
//!   reachable object of the slot's exact type, or `null`.
//! * An extern with declared effects only follows (and hashes) reference slots
//!   it may read — reaching an object through a field is reading that field —
//!   and only writes slots in its `writes` set. Externs without declared effects
//!   and `volatile` steps read and write everything in reach.
//!
//! The step is exposed as the C-ABI function [`loadstar_env_step`] so that
//! native code can call the very same logic on the very same arena.

use crate::access::{AccessKind, AccessLoc};
use crate::hash::{hash_name, mix, SEED};
use crate::heap::{header_of_type, Layout, Shape, GLOBALS_BASE};
use ir::{EffectLoc, ExternEffects, FieldRef, GlobalId, Module, StructId, Type};
use std::cell::RefCell;

/// The `callee` code of a volatile step in [`loadstar_env_step`].
pub const VOLATILE: u32 = u32::MAX;

/// The object number used for the globals block when hashing global slots.
const GLOBALS_OBJ: u64 = u64::MAX - 1;
/// How `null` is written into hashes.
const NULL_CANON: u64 = u64::MAX;

/// Which slots a step may touch (read or write).
#[derive(Clone, Debug)]
pub struct Perm {
    all: bool,
    /// Per field (flat, see [`Layout::field_base`]), then per global.
    slots: Vec<bool>,
    elems: Vec<Type>,
}

impl Perm {
    fn everything() -> Perm {
        Perm {
            all: true,
            slots: Vec::new(),
            elems: Vec::new(),
        }
    }

    fn from_locs(layout: &Layout, locs: &[EffectLoc]) -> Perm {
        let fields = layout.field_count();
        let mut p = Perm {
            all: false,
            slots: vec![false; fields + layout.globals.len()],
            elems: Vec::new(),
        };
        for loc in locs {
            match *loc {
                EffectLoc::Field(f) => {
                    if let Some(i) = layout.flat_field(f.ty, f.index as usize) {
                        p.slots[i] = true;
                    }
                }
                EffectLoc::Elements(e) => p.elems.push(e),
                EffectLoc::Global(g) => {
                    if let Some(slot) = p.slots.get_mut(fields + g.index()) {
                        *slot = true;
                    }
                }
            }
        }
        p
    }

    fn slot(&self, layout: &Layout, shape: Shape, k: usize) -> bool {
        self.all
            || match shape {
                Shape::Struct(s) => self.slots[layout.field_base[s.index()] + k],
                Shape::Array(e) => self.elems.contains(&e),
            }
    }

    /// [`Perm::slot`] for field `k` of a struct whose field 0 has flat index `base`.
    #[inline]
    fn field(&self, base: usize, k: usize) -> bool {
        self.all || self.slots[base + k]
    }

    fn global(&self, layout: &Layout, g: usize) -> bool {
        self.all || self.slots[layout.field_count() + g]
    }
}

/// What the environment knows about one extern.
#[derive(Clone, Debug)]
pub struct ExternInfo {
    name_hash: u64,
    param_ref_mask: u64,
    ret: Option<Type>,
    reads: Perm,
    writes: Perm,
}

/// Everything a step needs to know about the module, computed once per program.
#[derive(Clone, Debug)]
pub struct EnvInfo {
    /// Field and global types.
    pub layout: Layout,
    externs: Vec<ExternInfo>,
    volatile_hash: u64,
}

impl EnvInfo {
    /// The environment description of `m`.
    pub fn new(m: &Module) -> EnvInfo {
        let layout = Layout::new(m);
        let externs = m
            .externs
            .iter()
            .map(|e| {
                let (reads, writes) = match &e.effects {
                    None => (Perm::everything(), Perm::everything()),
                    Some(ExternEffects { reads, writes }) => (
                        Perm::from_locs(&layout, reads),
                        Perm::from_locs(&layout, writes),
                    ),
                };
                ExternInfo {
                    name_hash: hash_name(&e.name),
                    param_ref_mask: ref_mask(&e.params),
                    ret: e.ret,
                    reads,
                    writes,
                }
            })
            .collect();
        EnvInfo {
            layout,
            externs,
            volatile_hash: hash_name("volatile"),
        }
    }
}

/// Bit `i` set when parameter `i` (of the first 64) is a reference.
pub fn ref_mask(types: &[Type]) -> u64 {
    types
        .iter()
        .take(64)
        .enumerate()
        .filter(|(_, t)| t.is_ref())
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// The environment's state during one execution, shared with native code.
#[repr(C)]
pub struct EnvContext {
    /// The arena (set by the executor before every step; a step never allocates).
    pub heap: *mut u64,
    /// The arena's length in words.
    pub heap_len: usize,
    /// The module's environment description.
    pub info: *const EnvInfo,
    /// The next step's sequence number.
    pub seq: u64,
    /// The function's reference arguments at entry (roots for the whole execution).
    pub entry_roots: Vec<u64>,
    /// Every object escaped so far, in escape order.
    pub escaped: Vec<u64>,
    /// Whether steps record their accesses into `accesses`.
    pub log_enabled: bool,
    /// The accesses of the last step (filled only when `log_enabled`).
    pub accesses: Vec<(AccessKind, AccessLoc)>,
}

impl EnvContext {
    /// A context for an execution of a function with these entry roots.
    pub fn new(info: &EnvInfo, entry_roots: Vec<u64>) -> EnvContext {
        EnvContext {
            heap: std::ptr::null_mut(),
            heap_len: 0,
            info,
            seq: 0,
            entry_roots,
            escaped: Vec::new(),
            log_enabled: false,
            accesses: Vec::new(),
        }
    }
}

/// Take one environment step.
///
/// `callee` is an extern index, or [`VOLATILE`]; `args` points at `nargs`
/// argument words. For externs the reference arguments are those the
/// declaration types as references; for volatile steps bit `i` of `ref_mask`
/// marks argument `i` as a reference. Returns the step's result word (an
/// integer, or a reference/0 for reference-returning externs, 0 when void).
///
/// # Safety
/// `ctx` must point to a live [`EnvContext`] whose `heap`/`heap_len` describe
/// the current arena and whose `info` is live; `args` must point to `nargs`
/// readable words; every reference word must be a valid object of the arena.
#[no_mangle]
pub unsafe extern "C" fn loadstar_env_step(
    ctx: *mut EnvContext,
    callee: u32,
    args: *const u64,
    nargs: u32,
    ref_mask: u64,
) -> u64 {
    let ctx = &mut *ctx;
    let heap = std::slice::from_raw_parts_mut(ctx.heap, ctx.heap_len);
    let info = &*ctx.info;
    let args = if nargs == 0 {
        &[][..]
    } else {
        std::slice::from_raw_parts(args, nargs as usize)
    };
    step(ctx, info, heap, callee, args, ref_mask)
}

/// A reach number slot that no object holds.
const UNREACHED: u32 = u32::MAX;

/// Buffers a step reuses, kept per thread between steps (a step never
/// allocates once they have grown to the program's size).
#[derive(Default)]
struct StepScratch {
    /// Reached objects in breadth-first order.
    order: Vec<u64>,
    /// Per arena word: the reach number of the object whose header is there,
    /// or [`UNREACHED`]; reset after every step.
    number: Vec<u32>,
    /// The header of every reached object, in reach order.
    headers: Vec<u64>,
    /// Reach numbers of the candidates of the headers picked so far (see [`Picker`]).
    candidates: Vec<u32>,
    /// Per header picked so far: where its candidates start in `candidates`, how many.
    runs: Vec<(u64, u32, u32)>,
    /// Per (flat slot, kind): the last step that logged it (see [`Log`]).
    logged: Vec<u32>,
    /// The (kind, element type) of every element access this step logged.
    logged_elems: Vec<(AccessKind, Type)>,
    /// The number of the current step, for `logged`.
    stamp: u32,
}

/// The access log of one step: each (kind, location) once, in order of first
/// access (observers tell accesses apart by kind and location only).
struct Log<'a> {
    on: bool,
    out: &'a mut Vec<(AccessKind, AccessLoc)>,
    logged: &'a mut [u32],
    /// Element accesses logged this step (few: one per array type in reach).
    logged_elems: &'a mut Vec<(AccessKind, Type)>,
    stamp: u32,
}

impl Log<'_> {
    /// Log an access to `loc`, whose flat slot (field, then global) is `slot`,
    /// unless this step already logged it.
    fn note(&mut self, kind: AccessKind, slot: usize, loc: impl FnOnce() -> AccessLoc) {
        if !self.on {
            return;
        }
        let seen = &mut self.logged[2 * slot + kind as usize];
        if std::mem::replace(seen, self.stamp) != self.stamp {
            self.out.push((kind, loc()));
        }
    }

    /// Log an access to the elements of `[elem]` arrays, unless this step
    /// already logged it.
    fn note_elements(&mut self, kind: AccessKind, elem: Type) {
        if !self.on || self.logged_elems.contains(&(kind, elem)) {
            return;
        }
        self.logged_elems.push((kind, elem));
        self.out
            .push((kind, AccessLoc::Heap(EffectLoc::Elements(elem))));
    }
}

/// Scratch arenas larger than this many words are not kept between steps.
const KEEP_SCRATCH_WORDS: usize = 1 << 16;

thread_local! {
    static STEP_SCRATCH: RefCell<StepScratch> = RefCell::new(StepScratch::default());
}

/// How one step sees the heap: the reached objects and their numbers.
struct Reach<'s> {
    order: &'s mut Vec<u64>,
    number: &'s mut [u32],
}

impl Reach<'_> {
    /// The reach numbers given so far.
    fn number(&self) -> &[u32] {
        self.number
    }

    fn visit(&mut self, obj: u64) {
        if obj != 0 && self.number[obj as usize] == UNREACHED {
            self.number[obj as usize] = self.order.len() as u32;
            self.order.push(obj);
        }
    }
}

/// The hash form of a slot word: integers as they are, `null` and unreached
/// references as markers, reached references by reach number.
fn canon(number: &[u32], word: u64, is_ref: bool) -> u64 {
    if !is_ref {
        word
    } else if word == 0 {
        NULL_CANON
    } else {
        // Unreached references (not readable) hash to one marker.
        match number.get(word as usize) {
            Some(&n) if n != UNREACHED => n as u64 | 1 << 62,
            _ => NULL_CANON - 1,
        }
    }
}

/// Picks reached objects of a type by hash (or `null`).
struct Picker<'a> {
    order: &'a [u64],
    headers: &'a [u64],
    /// The candidates of each header picked so far, in reach order (most
    /// steps pick objects of one or two types, if any).
    candidates: &'a mut Vec<u32>,
    runs: &'a mut Vec<(u64, u32, u32)>,
}

impl Picker<'_> {
    /// A reached object of type `ty` (in reach order), or `null`, chosen by `h`.
    fn pick(&mut self, h: u64, ty: Type) -> u64 {
        let (start, n) = match header_of_type(ty) {
            Some(hd) => self.run_of(hd),
            None => (0, 0),
        };
        let i = (h % (n as u64 + 1)) as usize;
        if i < n {
            self.order[self.candidates[start + i] as usize]
        } else {
            0
        }
    }

    /// Where the candidates of header `hd` start in `candidates`, and how
    /// many there are (gathered at the header's first pick).
    fn run_of(&mut self, hd: u64) -> (usize, usize) {
        if let Some(&(_, start, n)) = self.runs.iter().find(|r| r.0 == hd) {
            return (start as usize, n as usize);
        }
        let start = self.candidates.len();
        let found = self.headers.iter().enumerate().filter(|&(_, &x)| x == hd);
        self.candidates.extend(found.map(|(n, _)| n as u32));
        let n = self.candidates.len() - start;
        self.runs.push((hd, start as u32, n as u32));
        (start, n)
    }
}

fn field_loc(st: StructId, k: usize) -> AccessLoc {
    AccessLoc::Heap(EffectLoc::Field(FieldRef {
        ty: st,
        index: k as u32,
    }))
}

fn global_loc(g: usize) -> AccessLoc {
    AccessLoc::Heap(EffectLoc::Global(GlobalId::new(g)))
}

fn step(
    ctx: &mut EnvContext,
    info: &EnvInfo,
    heap: &mut [u64],
    callee: u32,
    args: &[u64],
    volatile_mask: u64,
) -> u64 {
    ir::reuse::with_reused(&STEP_SCRATCH, |scratch| {
        let r = step_with(ctx, info, heap, callee, args, volatile_mask, scratch);
        for &o in &scratch.order {
            scratch.number[o as usize] = UNREACHED;
        }
        if scratch.number.len() > KEEP_SCRATCH_WORDS {
            scratch.number = Vec::new();
        }
        r
    })
}

fn step_with(
    ctx: &mut EnvContext,
    info: &EnvInfo,
    heap: &mut [u64],
    callee: u32,
    args: &[u64],
    volatile_mask: u64,
    scratch: &mut StepScratch,
) -> u64 {
    let everything = Perm::everything();
    let (name_hash, arg_mask, ret, reads, writes) = if callee == VOLATILE {
        (
            info.volatile_hash,
            volatile_mask,
            None,
            &everything,
            &everything,
        )
    } else {
        let e = &info.externs[callee as usize];
        (e.name_hash, e.param_ref_mask, e.ret, &e.reads, &e.writes)
    };
    let s = ctx.seq;
    ctx.seq += 1;
    ctx.accesses.clear();
    let layout = &info.layout;
    let nf = layout.field_count();
    let is_arg_ref = |i: usize| i < 64 && arg_mask >> i & 1 == 1;
    let mut log = Log {
        on: ctx.log_enabled,
        out: &mut ctx.accesses,
        logged: &mut [],
        logged_elems: &mut scratch.logged_elems,
        stamp: 0,
    };
    log.logged_elems.clear();
    if log.on {
        let want = 2 * (nf + layout.globals.len());
        scratch.stamp = scratch.stamp.wrapping_add(1);
        if scratch.stamp == 0 || scratch.logged.len() < want {
            scratch.logged.clear();
            scratch.logged.resize(want, 0);
            scratch.stamp = 1;
        }
        log.logged = &mut scratch.logged;
        log.stamp = scratch.stamp;
    }
    // The flat slot of global `g` (field `k` of a struct is `field_base + k`).
    let global_slot = |g: usize| nf + g;

    // Reach: roots in fixed order (the walk that hashes goes on breadth-first
    // over readable reference slots).
    scratch.order.clear();
    if scratch.number.len() < heap.len() {
        scratch.number.resize(heap.len(), UNREACHED);
    }
    let mut reach = Reach {
        order: &mut scratch.order,
        number: &mut scratch.number,
    };
    for (g, ty) in layout.globals.iter().enumerate() {
        if ty.is_ref() && reads.global(layout, g) {
            log.note(AccessKind::Read, global_slot(g), || global_loc(g));
            reach.visit(heap[GLOBALS_BASE + g]);
        }
    }
    for &r in &ctx.entry_roots {
        reach.visit(r);
    }
    for (i, &a) in args.iter().enumerate() {
        if is_arg_ref(i) {
            reach.visit(a);
        }
    }
    for &r in &ctx.escaped {
        reach.visit(r);
    }
    // The step's seed: sequence number, name, canonical arguments (every
    // reference argument is a root, numbered already).
    let mut seed = mix(mix(SEED, s), name_hash);
    for (i, &a) in args.iter().enumerate() {
        seed = mix(seed, canon(reach.number(), a, is_arg_ref(i)));
    }

    // The result depends on every readable slot in reach: the globals (their
    // readable references are roots), then each object in reach order as the
    // walk meets it. A readable reference slot is followed before it is
    // hashed, so it hashes by the number the full walk gives it.
    let mut result = seed;
    for (g, &ty) in layout.globals.iter().enumerate() {
        if reads.global(layout, g) {
            log.note(AccessKind::Read, global_slot(g), || global_loc(g));
            result = mix(
                mix(result, g as u64),
                canon(reach.number(), heap[GLOBALS_BASE + g], ty.is_ref()),
            );
        }
    }
    let mut next = 0;
    while next < reach.order.len() {
        let (n, obj) = (next, reach.order[next]);
        next += 1;
        let (shape, first, len) = layout.slots(heap, obj);
        result = mix(mix(result, n as u64), heap[obj as usize]);
        match shape {
            Shape::Struct(st) => {
                let fb = layout.field_base[st.index()];
                for (k, ty) in layout.fields[st.index()].iter().enumerate() {
                    if reads.field(fb, k) {
                        log.note(AccessKind::Read, fb + k, || field_loc(st, k));
                        let w = heap[first + k];
                        if ty.is_ref() {
                            reach.visit(w);
                        }
                        result = mix(mix(result, k as u64), canon(reach.number(), w, ty.is_ref()));
                    }
                }
            }
            // Every element has one type and one permission.
            Shape::Array(e) => {
                result = mix(result, len as u64);
                if len > 0 && reads.slot(layout, shape, 0) {
                    log.note_elements(AccessKind::Read, e);
                    let slots = heap[first..first + len].iter().enumerate();
                    if e.is_ref() {
                        for (k, &w) in slots {
                            reach.visit(w);
                            result = mix(mix(result, k as u64), canon(reach.number(), w, true));
                        }
                    } else {
                        for (k, &w) in slots {
                            result = mix(mix(result, k as u64), w);
                        }
                    }
                }
            }
        }
    }
    let order: &[u64] = &scratch.order;

    // Candidates for reference slots and results: reached objects by header.
    scratch.headers.clear();
    scratch
        .headers
        .extend(order.iter().map(|&obj| heap[obj as usize]));
    scratch.candidates.clear();
    scratch.runs.clear();
    let mut picker = Picker {
        order,
        headers: &scratch.headers,
        candidates: &mut scratch.candidates,
        runs: &mut scratch.runs,
    };
    // Rewrite one slot; whether it changed (and so is a logged write).
    // `obj_seed` is `mix(seed, object number)`, computed once per object.
    let mut rewrite = |word: &mut u64, ty: Type, obj_seed: u64, k: usize| -> bool {
        let c = mix(obj_seed, k as u64);
        if ty.is_ref() {
            if c.is_multiple_of(4) {
                *word = picker.pick(mix(c, 0x5eed), ty);
                true
            } else {
                false
            }
        } else {
            // IR.md §6: every writable i64 slot gets a new value, never the old
            // one, so a stale copy of the old value is never accidentally right.
            let old = *word;
            let mut new = mix(c, old);
            if new == old {
                new ^= 1;
            }
            *word = new;
            true
        }
    };
    let globals_seed = mix(seed, GLOBALS_OBJ);
    for (g, &ty) in layout.globals.iter().enumerate() {
        if writes.global(layout, g) && rewrite(&mut heap[GLOBALS_BASE + g], ty, globals_seed, g) {
            log.note(AccessKind::Write, global_slot(g), || global_loc(g));
        }
    }
    for (n, &obj) in order.iter().enumerate() {
        let (shape, first, len) = layout.slots(heap, obj);
        let obj_seed = mix(seed, n as u64);
        match shape {
            Shape::Struct(st) => {
                let fb = layout.field_base[st.index()];
                for (k, &ty) in layout.fields[st.index()].iter().enumerate() {
                    if writes.field(fb, k) && rewrite(&mut heap[first + k], ty, obj_seed, k) {
                        log.note(AccessKind::Write, fb + k, || field_loc(st, k));
                    }
                }
            }
            Shape::Array(e) => {
                if len == 0 || !writes.slot(layout, shape, 0) {
                    continue;
                }
                let mut changed = false;
                for k in 0..len {
                    changed |= rewrite(&mut heap[first + k], e, obj_seed, k);
                }
                if changed {
                    log.note_elements(AccessKind::Write, e);
                }
            }
        }
    }

    match ret {
        None => 0,
        Some(ty) if ty.is_int() => result,
        Some(ty) => picker.pick(result, ty),
    }
}
