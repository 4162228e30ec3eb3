//! Value locations: where every SSA value of a function lives while its code runs.
//!
//! This backend keeps every instruction result in a home slot of its frame
//! (`[rbp - 8*(k+1)]`), parameters where the caller put them
//! (`[rbp + 16 + 8*i]`) and constants as immediates; instruction selection
//! loads operands into fixed scratch registers around each instruction. No
//! value stays in a register across instructions, so nothing is live in a
//! caller-saved register across a call and phi elimination is a parallel copy
//! between slots. (A register allocator would replace this module: see the
//! crate documentation.)

use ir::{Function, InstKind, ValueDef};

/// Where a value lives.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Loc {
    /// A constant (`null` is 0).
    Imm(i64),
    /// A stack slot at this displacement from `rbp`.
    Mem(i32),
}

/// The frame of one function: value homes and sizes.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Per value (by index), its location.
    pub homes: Vec<Loc>,
    /// A slot for breaking phi-copy cycles.
    pub scratch: i32,
    /// Bytes below `rbp` that the prologue reserves (a multiple of 16), the
    /// outgoing-argument area at `[rsp + 8*i]` included.
    pub size: i32,
}

/// The words of outgoing arguments a volatile step needs (base, index, value).
const VOLATILE_ARGS: usize = 3;

impl Frame {
    /// Assign a location to every value of `f`.
    pub fn new(f: &Function) -> Frame {
        let mut next = 0i32;
        let homes = f
            .values
            .iter()
            .map(|v| match v.def {
                ValueDef::Const(c) => Loc::Imm(c),
                ValueDef::Null => Loc::Imm(0),
                ValueDef::Param(p) => Loc::Mem(16 + 8 * p as i32),
                ValueDef::Inst(_) => {
                    next += 1;
                    Loc::Mem(-8 * next)
                }
            })
            .collect();
        next += 1;
        let scratch = -8 * next;
        let mut out = 0usize;
        for i in f.inst_iter() {
            match &f.inst(i).kind {
                InstKind::Call { args, .. } => out = out.max(args.len()),
                InstKind::Load { volatile: true, .. } | InstKind::Store { volatile: true, .. } => {
                    out = out.max(VOLATILE_ARGS)
                }
                _ => {}
            }
        }
        let bytes = 8 * next as usize + 8 * out;
        let size = bytes.div_ceil(16) * 16;
        Frame {
            homes,
            scratch,
            size: size as i32,
        }
    }

    /// The location of `v`.
    pub fn loc(&self, v: ir::Value) -> Loc {
        self.homes[v.index()]
    }
}
