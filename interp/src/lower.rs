//! Lowering: each function becomes a compact linear bytecode once per module.
//!
//! Every SSA value gets the register slot with its own index (plus one scratch
//! slot for breaking phi-copy cycles); constants are pre-loaded into a frame
//! template; field accesses carry resolved word offsets; branch targets are
//! program counters; phis become parallel copies on the edges (inline before a
//! `jmp`, or in a trampoline after the code for a `br` edge).
//!
//! Step accounting: `entry_steps[pc]` is the number of IR instructions of the
//! block that starts at `pc` (a block start or a trampoline), added when a
//! branch lands there; `remaining[pc]` is the number of IR instructions of the
//! block after the one at `pc`, subtracted again when an execution stops there.

use crate::access::{AccessKind, AccessLoc};
use crate::env::ref_mask;
use crate::heap::array_header;
use ir::{
    Addr, BinOp, Block, Callee, EffectLoc, Function, Inst, InstKind, Module, Type, UnOp, ValueDef,
};

/// An absent slot.
pub const NONE: u32 = u32::MAX;

/// Volatile-step flags: which arguments the step has.
pub const VF_BASE: u32 = 1;
/// The step has an index argument.
pub const VF_INDEX: u32 = 2;
/// The step has a stored-value argument.
pub const VF_VALUE: u32 = 4;
/// The stored value is a reference.
pub const VF_VALUE_REF: u32 = 8;

/// One bytecode instruction; all `u32` operands are frame slots unless noted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Op {
    Add {
        d: u32,
        a: u32,
        b: u32,
    },
    Sub {
        d: u32,
        a: u32,
        b: u32,
    },
    Mul {
        d: u32,
        a: u32,
        b: u32,
    },
    And {
        d: u32,
        a: u32,
        b: u32,
    },
    Or {
        d: u32,
        a: u32,
        b: u32,
    },
    Xor {
        d: u32,
        a: u32,
        b: u32,
    },
    Shl {
        d: u32,
        a: u32,
        b: u32,
    },
    Lshr {
        d: u32,
        a: u32,
        b: u32,
    },
    Ashr {
        d: u32,
        a: u32,
        b: u32,
    },
    Sdiv {
        d: u32,
        a: u32,
        b: u32,
    },
    Srem {
        d: u32,
        a: u32,
        b: u32,
    },
    Eq {
        d: u32,
        a: u32,
        b: u32,
    },
    Ne {
        d: u32,
        a: u32,
        b: u32,
    },
    Slt {
        d: u32,
        a: u32,
        b: u32,
    },
    Sle {
        d: u32,
        a: u32,
        b: u32,
    },
    Sgt {
        d: u32,
        a: u32,
        b: u32,
    },
    Sge {
        d: u32,
        a: u32,
        b: u32,
    },
    Ult {
        d: u32,
        a: u32,
        b: u32,
    },
    Ule {
        d: u32,
        a: u32,
        b: u32,
    },
    Ugt {
        d: u32,
        a: u32,
        b: u32,
    },
    Uge {
        d: u32,
        a: u32,
        b: u32,
    },
    Neg {
        d: u32,
        a: u32,
    },
    Not {
        d: u32,
        a: u32,
    },
    /// `copy`, and the moves of phi copies (not an IR step by itself).
    Mov {
        d: u32,
        a: u32,
    },
    Select {
        d: u32,
        c: u32,
        a: u32,
        b: u32,
    },
    /// `new`: `sid` is the struct, `n` its field count.
    New {
        d: u32,
        sid: u32,
        n: u32,
    },
    /// `newarray`: `shape` indexes [`crate::Program`]'s array headers.
    NewArray {
        d: u32,
        len: u32,
        shape: u32,
    },
    /// `off` is the word offset from the header (field index + 1).
    LoadField {
        d: u32,
        o: u32,
        off: u32,
    },
    StoreField {
        o: u32,
        off: u32,
        v: u32,
    },
    LoadElem {
        d: u32,
        a: u32,
        i: u32,
    },
    StoreElem {
        a: u32,
        i: u32,
        v: u32,
    },
    Len {
        d: u32,
        a: u32,
    },
    /// `w` is the arena word of the global.
    LoadGlobal {
        d: u32,
        w: u32,
    },
    StoreGlobal {
        w: u32,
        v: u32,
    },
    /// The environment step before a volatile access (flags `VF_*`).
    Volatile {
        base: u32,
        index: u32,
        value: u32,
        flags: u32,
    },
    /// `call @f`: `args` indexes the function's argument pool, `n` arguments.
    Call {
        d: u32,
        func: u32,
        args: u32,
        n: u32,
    },
    CallExtern {
        d: u32,
        ext: u32,
        args: u32,
        n: u32,
    },
    Escape {
        v: u32,
        is_ref: bool,
    },
    Guard {
        c: u32,
    },
    /// `nullcheck`: trap `null_deref` when the reference is null.
    NullCheck {
        a: u32,
    },
    /// `boundscheck`: an element access's traps, without the read.
    BoundsCheck {
        a: u32,
        i: u32,
    },
    /// `jmp`: `t` is a pc.
    Jmp {
        t: u32,
    },
    Br {
        c: u32,
        t: u32,
        e: u32,
    },
    /// The free jump at the end of a trampoline (no fuel, no steps).
    Goto {
        t: u32,
    },
    Ret {
        v: u32,
    },
    RetVoid,
    Unreachable,
}

/// A function in bytecode form.
#[derive(Clone, Debug)]
pub struct LoweredFunc {
    /// The code.
    pub code: Vec<Op>,
    /// Slots per frame.
    pub frame_size: usize,
    /// The initial contents of a frame (constants pre-loaded).
    pub template: Vec<u64>,
    /// The slots of the parameters, in order.
    pub params: Vec<u32>,
    /// The parameter types, in order.
    pub param_types: Vec<Type>,
    /// Argument slots of the calls, indexed by `Call::args`.
    pub arg_pool: Vec<u32>,
    /// Per pc: IR instructions added when a branch lands here.
    pub entry_steps: Vec<u32>,
    /// Per pc: where the op comes from and what it accesses.
    pub meta: Vec<OpMeta>,
    /// Whether the function returns a reference.
    pub returns_ref: bool,
}

/// What the executor knows about an op besides the op itself.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OpMeta {
    /// The IR instruction this op comes from.
    pub inst: Inst,
    /// IR instructions of the block after this op.
    pub remaining: u32,
    /// The access the op itself makes (for observers).
    pub access: Option<(AccessKind, AccessLoc)>,
}

/// Buffers lowering reuses from one function to the next.
#[derive(Default)]
pub struct LowerScratch {
    fixups: Vec<(usize, [Option<Label>; 2])>,
    block_pc: Vec<usize>,
    tramps: Vec<(Block, Block, Inst)>,
    tramp_pc: Vec<usize>,
    pending_moves: Vec<(u32, u32)>,
    moves: Vec<(u32, u32)>,
}

/// Module-level tables the bytecode refers to.
#[derive(Default)]
pub struct Tables {
    /// Array headers used by `newarray`.
    pub array_headers: Vec<u64>,
    /// The element type of each of `array_headers`.
    pub array_elems: Vec<Type>,
    /// Per extern, which parameters are references.
    pub extern_ref_masks: Vec<u64>,
}

impl Tables {
    fn array_shape(&mut self, elem: Type) -> u32 {
        let h = array_header(elem);
        match self.array_headers.iter().position(|&x| x == h) {
            Some(i) => i as u32,
            None => {
                self.array_headers.push(h);
                self.array_elems.push(elem);
                (self.array_headers.len() - 1) as u32
            }
        }
    }
}

/// Label of a branch target before resolution: a block or a trampoline.
#[derive(Copy, Clone)]
enum Label {
    Block(Block),
    Tramp(usize),
}

struct Lowerer<'a> {
    m: &'a Module,
    f: &'a Function,
    tables: &'a mut Tables,
    code: Vec<Op>,
    meta: Vec<OpMeta>,
    arg_pool: Vec<u32>,
    fixups: Vec<(usize, [Option<Label>; 2])>,
    scratch: u32,
    /// One past the highest value index any placed instruction names (as an
    /// operand or its result), raised by [`Lowerer::slot`] and
    /// [`Lowerer::note`]: the frame must hold that many slots.
    top: usize,
    /// Scratch of [`Lowerer::emit_phi_moves`]: the parallel copy, then its sequence.
    pending_moves: Vec<(u32, u32)>,
    moves: Vec<(u32, u32)>,
}

fn slot(v: ir::Value) -> u32 {
    v.0
}

impl<'a> Lowerer<'a> {
    /// The slot of operand or result `v`, noted as named.
    #[inline]
    fn slot(&mut self, v: ir::Value) -> u32 {
        self.note(v);
        v.0
    }

    /// Note that a placed instruction names `v` (see [`Lowerer::top`]).
    #[inline]
    fn note(&mut self, v: ir::Value) {
        self.top = self.top.max(v.index() + 1);
    }

    /// Note every value instruction `i` names, operands and result (for
    /// the instructions lowering reads only in part, or not at all).
    fn note_all(&mut self, i: Inst) {
        let data = self.f.inst(i);
        let mut top = self.top;
        data.kind.for_each_operand(|v| top = top.max(v.index() + 1));
        if let Some(r) = data.result {
            top = top.max(r.index() + 1);
        }
        self.top = top;
    }

    /// Whether block `to` starts with a phi (an edge into it may need copies).
    #[inline]
    fn has_phis(&self, to: Block) -> bool {
        self.f.blocks[to.index()]
            .insts
            .first()
            .is_some_and(|&i| self.f.inst(i).kind.is_phi())
    }
    fn emit(
        &mut self,
        op: Op,
        inst: Inst,
        remaining: u32,
        access: Option<(AccessKind, AccessLoc)>,
    ) -> usize {
        self.code.push(op);
        self.meta.push(OpMeta {
            inst,
            remaining,
            access,
        });
        self.code.len() - 1
    }

    fn addr_loc(&self, addr: &Addr) -> AccessLoc {
        AccessLoc::Heap(match *addr {
            Addr::Field { field, .. } => EffectLoc::Field(field),
            Addr::Elem { base, .. } => {
                EffectLoc::Elements(self.f.value_type(base).elem().unwrap_or(Type::I64))
            }
            Addr::Global(g) => EffectLoc::Global(g),
        })
    }

    /// The phis of `to` with their incoming value along `from → to` (skipping self-copies).
    fn edge_copies(&self, from: Block, to: Block) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.f.blocks[to.index()]
            .insts
            .iter()
            .map(|&i| self.f.inst(i))
            .map_while(|data| match &data.kind {
                InstKind::Phi(entries) => Some((data.result, entries)),
                _ => None,
            })
            .filter_map(move |(result, entries)| {
                match (result, entries.iter().find(|(b, _)| *b == from)) {
                    (Some(r), Some(&(_, v))) if r != v => Some((slot(r), slot(v))),
                    _ => None,
                }
            })
    }

    /// Whether the edge `from → to` needs any phi copy.
    fn has_phi_moves(&self, from: Block, to: Block) -> bool {
        self.has_phis(to) && self.edge_copies(from, to).next().is_some()
    }

    /// Emit the parallel copy of the phis of `to` along the edge `from → to`,
    /// sequentialised, as moves attributed to `inst`.
    fn emit_phi_moves(&mut self, from: Block, to: Block, inst: Inst, remaining: u32) {
        let mut pending = std::mem::take(&mut self.pending_moves);
        let mut moves = std::mem::take(&mut self.moves);
        pending.clear();
        pending.extend(self.edge_copies(from, to));
        sequentialize_into(&mut pending, self.scratch, &mut moves);
        for &(d, a) in &moves {
            self.emit(Op::Mov { d, a }, inst, remaining, None);
        }
        self.pending_moves = pending;
        self.moves = moves;
    }

    fn lower_block(&mut self, b: Block, tramps: &mut Vec<(Block, Block, Inst)>) {
        let f = self.f;
        let insts = &f.blocks[b.index()].insts;
        let n = insts.len() as u32;
        // The position of the terminator lowering stopped at.
        let mut terminated = None;
        for (k, &i) in insts.iter().enumerate() {
            let rem = n - 1 - k as u32;
            let data = f.inst(i);
            let d = data.result.map_or(NONE, |r| self.slot(r));
            let op = match &data.kind {
                InstKind::Phi(_) => {
                    // Its entries are read on the edges into `b`.
                    self.note_all(i);
                    continue;
                }
                InstKind::Binary(op, a, bb) => {
                    let (a, b2) = (self.slot(*a), self.slot(*bb));
                    bin_op(*op, d, a, b2)
                }
                InstKind::Unary(op, a) => {
                    let a = self.slot(*a);
                    match op {
                        UnOp::Neg => Op::Neg { d, a },
                        UnOp::Not => Op::Not { d, a },
                        UnOp::Copy => Op::Mov { d, a },
                    }
                }
                InstKind::Select(c, a, bb) => Op::Select {
                    d,
                    c: self.slot(*c),
                    a: self.slot(*a),
                    b: self.slot(*bb),
                },
                InstKind::New(s) => {
                    let n = self.m.structs.get(s.index()).map_or(0, |s| s.fields.len());
                    self.emit(
                        Op::New {
                            d,
                            sid: s.0,
                            n: n as u32,
                        },
                        i,
                        rem,
                        Some((AccessKind::Write, AccessLoc::Alloc)),
                    );
                    continue;
                }
                InstKind::NewArray { elem, len } => {
                    let shape = self.tables.array_shape(*elem);
                    let len = self.slot(*len);
                    self.emit(
                        Op::NewArray { d, len, shape },
                        i,
                        rem,
                        Some((AccessKind::Write, AccessLoc::Alloc)),
                    );
                    continue;
                }
                InstKind::Load { addr, volatile } => {
                    self.note_addr(addr);
                    if *volatile {
                        self.emit_volatile(addr, None, i, rem);
                    }
                    let acc = Some((AccessKind::Read, self.addr_loc(addr)));
                    let op = match *addr {
                        Addr::Field { base, field } => Op::LoadField {
                            d,
                            o: slot(base),
                            off: field.index + 1,
                        },
                        Addr::Elem { base, index } => Op::LoadElem {
                            d,
                            a: slot(base),
                            i: slot(index),
                        },
                        Addr::Global(g) => Op::LoadGlobal {
                            d,
                            w: crate::heap::GLOBALS_BASE as u32 + g.0,
                        },
                    };
                    self.emit(op, i, rem, acc);
                    continue;
                }
                InstKind::Store {
                    addr,
                    value,
                    volatile,
                } => {
                    self.note_addr(addr);
                    if *volatile {
                        self.emit_volatile(addr, Some(*value), i, rem);
                    }
                    let acc = Some((AccessKind::Write, self.addr_loc(addr)));
                    let v = self.slot(*value);
                    let op = match *addr {
                        Addr::Field { base, field } => Op::StoreField {
                            o: slot(base),
                            off: field.index + 1,
                            v,
                        },
                        Addr::Elem { base, index } => Op::StoreElem {
                            a: slot(base),
                            i: slot(index),
                            v,
                        },
                        Addr::Global(g) => Op::StoreGlobal {
                            w: crate::heap::GLOBALS_BASE as u32 + g.0,
                            v,
                        },
                    };
                    self.emit(op, i, rem, acc);
                    continue;
                }
                InstKind::Len(a) => Op::Len {
                    d,
                    a: self.slot(*a),
                },
                InstKind::Call { callee, args } => {
                    let start = self.arg_pool.len() as u32;
                    for &v in args {
                        let s = self.slot(v);
                        self.arg_pool.push(s);
                    }
                    let n = args.len() as u32;
                    match callee {
                        Callee::Func(f) => Op::Call {
                            d,
                            func: f.0,
                            args: start,
                            n,
                        },
                        Callee::Extern(e) => Op::CallExtern {
                            d,
                            ext: e.0,
                            args: start,
                            n,
                        },
                    }
                }
                InstKind::Escape(v) => {
                    let is_ref = self.f.value_type(*v).is_ref();
                    let v = self.slot(*v);
                    self.emit(
                        Op::Escape { v, is_ref },
                        i,
                        rem,
                        Some((AccessKind::Write, AccessLoc::Output)),
                    );
                    continue;
                }
                InstKind::Guard(c) => Op::Guard { c: self.slot(*c) },
                InstKind::NullCheck(a) => Op::NullCheck { a: self.slot(*a) },
                InstKind::BoundsCheck(a, x) => Op::BoundsCheck {
                    a: self.slot(*a),
                    i: self.slot(*x),
                },
                InstKind::Jmp(t) => {
                    if self.has_phis(*t) {
                        self.emit_phi_moves(b, *t, i, rem);
                    }
                    let pc = self.emit(Op::Jmp { t: 0 }, i, rem, None);
                    self.fixups.push((pc, [Some(Label::Block(*t)), None]));
                    terminated = Some(k);
                    break;
                }
                InstKind::Br(c, t, e) => {
                    let label = |to: Block, tramps: &mut Vec<(Block, Block, Inst)>| {
                        if !self.has_phi_moves(b, to) {
                            Label::Block(to)
                        } else {
                            tramps.push((b, to, i));
                            Label::Tramp(tramps.len() - 1)
                        }
                    };
                    let (lt, le) = (label(*t, tramps), label(*e, tramps));
                    let c = self.slot(*c);
                    let pc = self.emit(Op::Br { c, t: 0, e: 0 }, i, rem, None);
                    self.fixups.push((pc, [Some(lt), Some(le)]));
                    terminated = Some(k);
                    break;
                }
                InstKind::Ret(v) => {
                    let op = match v {
                        Some(v) => Op::Ret { v: self.slot(*v) },
                        None => Op::RetVoid,
                    };
                    self.emit(op, i, rem, None);
                    terminated = Some(k);
                    break;
                }
                InstKind::Unreachable => {
                    self.emit(Op::Unreachable, i, rem, None);
                    terminated = Some(k);
                    break;
                }
            };
            self.emit(op, i, rem, None);
        }
        match terminated {
            // Instructions after the terminator (ill-formed) are never run,
            // but the frame still holds what they name.
            Some(k) => {
                for &i in &insts[k + 1..] {
                    self.note_all(i);
                }
            }
            // An ill-formed block without a terminator: never fall through.
            None => {
                self.emit(Op::Unreachable, Inst::new(0), 0, None);
            }
        }
    }

    /// Note the values address `addr` names.
    fn note_addr(&mut self, addr: &Addr) {
        match *addr {
            Addr::Field { base, .. } => self.note(base),
            Addr::Elem { base, index } => {
                self.note(base);
                self.note(index);
            }
            Addr::Global(_) => {}
        }
    }

    fn emit_volatile(&mut self, addr: &Addr, value: Option<ir::Value>, i: Inst, rem: u32) {
        let (mut base, mut index, mut flags) = (NONE, NONE, 0);
        match *addr {
            Addr::Field { base: b, .. } => {
                base = slot(b);
                flags |= VF_BASE;
            }
            Addr::Elem { base: b, index: x } => {
                base = slot(b);
                index = slot(x);
                flags |= VF_BASE | VF_INDEX;
            }
            Addr::Global(_) => {}
        }
        let mut vs = NONE;
        if let Some(v) = value {
            vs = slot(v);
            flags |= VF_VALUE;
            if self.f.value_type(v).is_ref() {
                flags |= VF_VALUE_REF;
            }
        }
        // The step's own pc never traps by itself; its remaining count is the access's.
        self.emit(
            Op::Volatile {
                base,
                index,
                value: vs,
                flags,
            },
            i,
            rem + 1,
            None,
        );
    }
}

fn bin_op(op: BinOp, d: u32, a: u32, b: u32) -> Op {
    match op {
        BinOp::Add => Op::Add { d, a, b },
        BinOp::Sub => Op::Sub { d, a, b },
        BinOp::Mul => Op::Mul { d, a, b },
        BinOp::And => Op::And { d, a, b },
        BinOp::Or => Op::Or { d, a, b },
        BinOp::Xor => Op::Xor { d, a, b },
        BinOp::Shl => Op::Shl { d, a, b },
        BinOp::Lshr => Op::Lshr { d, a, b },
        BinOp::Ashr => Op::Ashr { d, a, b },
        BinOp::Sdiv => Op::Sdiv { d, a, b },
        BinOp::Srem => Op::Srem { d, a, b },
        BinOp::Eq => Op::Eq { d, a, b },
        BinOp::Ne => Op::Ne { d, a, b },
        BinOp::Slt => Op::Slt { d, a, b },
        BinOp::Sle => Op::Sle { d, a, b },
        BinOp::Sgt => Op::Sgt { d, a, b },
        BinOp::Sge => Op::Sge { d, a, b },
        BinOp::Ult => Op::Ult { d, a, b },
        BinOp::Ule => Op::Ule { d, a, b },
        BinOp::Ugt => Op::Ugt { d, a, b },
        BinOp::Uge => Op::Uge { d, a, b },
    }
}

/// Turn a parallel copy (distinct destinations) into a sequence of moves,
/// breaking cycles through `scratch`.
pub fn sequentialize(mut pending: Vec<(u32, u32)>, scratch: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    sequentialize_into(&mut pending, scratch, &mut out);
    out
}

/// [`sequentialize`] into a reused vector: `out` is cleared, then receives the
/// moves; `pending` is consumed (left empty).
pub fn sequentialize_into(pending: &mut Vec<(u32, u32)>, scratch: u32, out: &mut Vec<(u32, u32)>) {
    out.clear();
    while !pending.is_empty() {
        let ready = pending
            .iter()
            .position(|&(d, _)| !pending.iter().any(|&(_, s)| s == d));
        match ready {
            Some(k) => out.push(pending.remove(k)),
            None => {
                // Every destination is still needed as a source: a cycle.
                let (d, s) = pending[0];
                out.push((scratch, s));
                pending[0] = (d, scratch);
                // `s` is now free to be overwritten only after its readers ran;
                // replacing the source lets the cycle unwind.
            }
        }
    }
}

/// Lower function `f` of module `m`.
pub fn lower_function(m: &Module, f: &Function, tables: &mut Tables) -> LoweredFunc {
    lower_function_with(m, f, tables, &mut LowerScratch::default())
}

/// [`lower_function`] with buffers reused across functions.
pub fn lower_function_with(
    m: &Module,
    f: &Function,
    tables: &mut Tables,
    sc: &mut LowerScratch,
) -> LoweredFunc {
    // Every slot named by a placed instruction must lie inside the frame:
    // lowered first with a frame of the value arena (where a well-formed
    // function's values all are), again with a bigger one when an
    // instruction names a value beyond it.
    let mut slots = f.values.len();
    loop {
        match lower_in_frame(m, f, tables, sc, slots) {
            Ok(lowered) => return lowered,
            Err(named) => slots = named,
        }
    }
}

/// Lower `f` with `slots` value slots in its frame (and one scratch slot
/// after them); `Err` with the slots its placed instructions name when
/// that is more.
fn lower_in_frame(
    m: &Module,
    f: &Function,
    tables: &mut Tables,
    sc: &mut LowerScratch,
    slots: usize,
) -> Result<LoweredFunc, usize> {
    let scratch = slots as u32;
    let frame_size = slots + 1;
    // Roughly one op per instruction, and room for the moves of phis (on
    // every edge into their block) and trampolines: reallocating the code
    // midway costs more than the unused room.
    let ops = f.insts.len() + f.insts.len() / 2 + 4;
    let mut l = Lowerer {
        m,
        f,
        tables,
        code: Vec::with_capacity(ops),
        meta: Vec::with_capacity(ops),
        arg_pool: Vec::new(),
        fixups: std::mem::take(&mut sc.fixups),
        scratch,
        top: slots,
        pending_moves: std::mem::take(&mut sc.pending_moves),
        moves: std::mem::take(&mut sc.moves),
    };
    l.fixups.clear();
    let block_pc = &mut sc.block_pc;
    block_pc.clear();
    block_pc.resize(f.blocks.len(), usize::MAX);
    let tramps = &mut sc.tramps;
    tramps.clear();
    for &b in &f.layout {
        block_pc[b.index()] = l.code.len();
        l.lower_block(b, tramps);
    }
    let tramp_pc = &mut sc.tramp_pc;
    tramp_pc.clear();
    for &(from, to, inst) in tramps.iter() {
        tramp_pc.push(l.code.len());
        l.emit_phi_moves(from, to, inst, 0);
        let pc = l.emit(Op::Goto { t: 0 }, inst, 0, None);
        l.fixups.push((pc, [Some(Label::Block(to)), None]));
    }
    // A branch to a block outside the layout (ill-formed) lands on a trap.
    let bad_target = l.code.len();
    l.emit(Op::Unreachable, Inst::new(0), 0, None);
    let resolve = |lab: Option<Label>| -> u32 {
        match lab {
            Some(Label::Block(b)) => match block_pc.get(b.index()) {
                Some(&pc) if pc != usize::MAX => pc as u32,
                _ => bad_target as u32,
            },
            Some(Label::Tramp(t)) => tramp_pc[t] as u32,
            None => bad_target as u32,
        }
    };
    let fixups = std::mem::take(&mut l.fixups);
    for &(pc, [a, b]) in &fixups {
        match &mut l.code[pc] {
            Op::Jmp { t } | Op::Goto { t } => *t = resolve(a),
            Op::Br { t, e, .. } => {
                *t = resolve(a);
                *e = resolve(b);
            }
            _ => {}
        }
    }
    let mut entry_steps = vec![0u32; l.code.len()];
    for &b in &f.layout {
        entry_steps[block_pc[b.index()]] = f.blocks[b.index()].insts.len() as u32;
    }
    for (k, &(_, to, _)) in tramps.iter().enumerate() {
        entry_steps[tramp_pc[k]] = f.blocks[to.index()].insts.len() as u32;
    }
    sc.fixups = fixups;
    sc.pending_moves = l.pending_moves;
    sc.moves = l.moves;
    if l.top > slots {
        return Err(l.top);
    }
    let mut template = vec![0u64; frame_size];
    for (i, v) in f.values.iter().enumerate() {
        if let ValueDef::Const(c) = v.def {
            template[i] = c as u64;
        }
    }
    let param_types: Vec<Type> = f.params.iter().map(|&p| f.value_type(p)).collect();
    Ok(LoweredFunc {
        code: l.code,
        frame_size,
        template,
        params: f.params.iter().map(|&p| slot(p)).collect(),
        param_types,
        arg_pool: l.arg_pool,
        entry_steps,
        meta: l.meta,
        returns_ref: f.ret.is_some_and(|t| t.is_ref()),
    })
}

/// Lower every function of `m`.
pub fn lower_module(m: &Module) -> (Vec<LoweredFunc>, Tables) {
    let mut tables = Tables {
        array_headers: Vec::new(),
        array_elems: Vec::new(),
        extern_ref_masks: m.externs.iter().map(|e| ref_mask(&e.params)).collect(),
    };
    // The buffers of the last module lowered on this thread (taken, so a
    // lowering that unwinds leaves fresh ones behind).
    let mut scratch = SCRATCH.with(|s| s.take());
    let funcs = m
        .funcs
        .iter()
        .map(|f| lower_function_with(m, f, &mut tables, &mut scratch))
        .collect();
    SCRATCH.with(|s| s.replace(scratch));
    (funcs, tables)
}

thread_local! {
    /// The buffers [`lower_module`] reuses from one module to the next.
    static SCRATCH: std::cell::Cell<LowerScratch> = std::cell::Cell::new(LowerScratch::default());
}

#[cfg(test)]
mod tests {
    use super::{lower_function, sequentialize, Op, Tables};
    use ir::{Function, InstKind, Module, Type, UnOp, Value};

    /// A function `i64 f(i64 p)` whose entry block copies `named` and
    /// returns `p`, then (ill-formed) copies `after` past its terminator.
    fn copies(named: Value, after: Value) -> Function {
        let mut f = Function::new("f", Some(Type::I64));
        let p = f.add_param(None, Type::I64);
        let b = f.add_block("entry");
        f.append_inst(b, InstKind::Unary(UnOp::Copy, named), Some(Type::I64));
        f.append_inst(b, InstKind::Ret(Some(p)), None);
        f.append_inst(b, InstKind::Unary(UnOp::Copy, after), Some(Type::I64));
        f
    }

    #[test]
    fn the_frame_holds_every_value_an_instruction_names() {
        let m = Module::default();
        // Well formed but for the copy after the `ret`: the frame is the
        // value arena (3 values) and the scratch slot.
        let p = Value::new(0);
        let l = lower_function(&m, &copies(p, p), &mut Tables::default());
        assert_eq!((l.frame_size, l.template.len()), (4, 4));
        // A value beyond the arena, named by a lowered instruction or by one
        // after the terminator: the frame grows to hold it.
        for (named, after) in [(Value::new(9), p), (p, Value::new(9))] {
            let l = lower_function(&m, &copies(named, after), &mut Tables::default());
            assert_eq!((l.frame_size, l.template.len()), (11, 11));
            assert!(l.code.contains(&Op::Ret { v: 0 }));
        }
    }

    fn run(moves: &[(u32, u32)], init: &[u64]) -> Vec<u64> {
        let mut regs = init.to_vec();
        for &(d, s) in &sequentialize(moves.to_vec(), (init.len() - 1) as u32) {
            regs[d as usize] = regs[s as usize];
        }
        regs
    }

    #[test]
    fn swap_uses_scratch() {
        let r = run(&[(0, 1), (1, 0)], &[10, 20, 0]);
        assert_eq!(&r[..2], &[20, 10]);
    }

    #[test]
    fn rotation_and_chain() {
        let r = run(&[(0, 1), (1, 2), (2, 0), (3, 0)], &[1, 2, 3, 0, 0]);
        assert_eq!(&r[..4], &[2, 3, 1, 1]);
    }
}
