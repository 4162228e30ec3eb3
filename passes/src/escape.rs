//! A small escape analysis: which fresh allocations (`new`, `newarray`) can
//! never be reached by anything but their own SSA value.
//!
//! An allocation escapes when its value (or a copy of it) is stored anywhere,
//! used as the base of a volatile access, passed to a call, escaped, returned, or merged by a phi or select with
//! anything. A non-escaping allocation is invisible to the environment
//! (IR.md §6), cannot be returned by any load, and is no other base's object.
//! The analysis is flow-insensitive: an allocation that escapes anywhere is
//! treated as escaped everywhere, which only ever loses precision. The one
//! flow-sensitive fact it keeps is where an allocation escapes when every
//! escaping use is in its own block ([`EscapeInfo::local_escape`]): before
//! that instruction nothing but its own SSA value reaches it.

use crate::copies::CopyRoots;
use ir::{Function, Inst, InstKind, Value, ValueDef};

/// Per-value escape facts of one function.
#[derive(Clone, Debug, Default)]
pub struct EscapeInfo {
    /// For each value: the allocation it is a copy of (itself for an allocation).
    root: Vec<Option<Value>>,
    /// For each allocation value: whether it escapes.
    escapes: Vec<bool>,
    /// For each escaping allocation value: its first escaping use, when all
    /// of them are in the allocation's block.
    local_escape: Vec<Option<Inst>>,
    /// What each value is a copy of.
    copies: CopyRoots,
}

impl EscapeInfo {
    /// Analyse `func`.
    pub fn new(func: &Function) -> EscapeInfo {
        let mut info = EscapeInfo::default();
        info.recompute(func);
        info
    }

    /// Analyse `func` afresh, reusing this analysis' storage.
    pub fn recompute(&mut self, func: &Function) {
        let n = func.values.len();
        let EscapeInfo {
            root,
            escapes,
            local_escape,
            copies,
        } = self;
        copies.recompute(func);
        root.clear();
        root.resize(n, None);
        // Allocations first, then copies in layout order until nothing changes
        // (a copy may precede its operand in the layout across blocks).
        let (mut has_allocs, mut has_copies) = (false, false);
        for inst in func.inst_iter() {
            let data = func.inst(inst);
            match (&data.kind, data.result) {
                (InstKind::New(_) | InstKind::NewArray { .. }, Some(r)) => {
                    root[r.index()] = Some(r);
                    has_allocs = true;
                }
                (InstKind::Unary(ir::UnOp::Copy, _), Some(_)) => has_copies = true,
                _ => {}
            }
        }
        escapes.clear();
        escapes.resize(n, false);
        local_escape.clear();
        if !has_allocs {
            // Nothing to copy or to mark.
            return;
        }
        local_escape.resize(n, None);
        if has_copies {
            // A copy is an allocation's when its copy root is the allocation.
            for inst in func.inst_iter() {
                let data = func.inst(inst);
                if let (InstKind::Unary(ir::UnOp::Copy, _), Some(r)) = (&data.kind, data.result) {
                    let c = copies.root(func, r);
                    if root[r.index()].is_none() {
                        root[r.index()] = root[c.index()];
                    }
                }
            }
        }
        for inst in func.inst_iter() {
            let data = func.inst(inst);
            let mut mark = |v: Value| {
                if let Some(r) = root[v.index()] {
                    let own_block = data.block == def_block(func, r);
                    let i = r.index();
                    // Layout order: the first mark in the allocation's block is its first escape there.
                    local_escape[i] = if escapes[i] {
                        local_escape[i].filter(|_| own_block)
                    } else {
                        Some(inst).filter(|_| own_block)
                    };
                    escapes[i] = true;
                }
            };
            escaping_operands(&data.kind, &mut mark);
        }
    }

    /// The copy roots of the function's values (as of the last recompute,
    /// plus redirections recorded since).
    pub fn copies(&self) -> &CopyRoots {
        &self.copies
    }

    /// The copy roots, to record redirections in.
    pub fn copies_mut(&mut self) -> &mut CopyRoots {
        &mut self.copies
    }

    /// The allocation `v` is (a copy of), if any.
    pub fn allocation_of(&self, v: Value) -> Option<Value> {
        self.root.get(v.index()).copied().flatten()
    }

    /// Whether `v` is a fresh allocation (or a copy of one) that never escapes.
    pub fn is_unescaped_allocation(&self, v: Value) -> bool {
        self.allocation_of(v)
            .is_some_and(|r| !self.escapes[r.index()])
    }

    /// Where the escaping allocation `r` first escapes, when every escaping
    /// use of it (or of a copy) is in the block that allocates it: in that
    /// block, before this instruction, no one else can reach it (the
    /// instruction itself may already hand it over). `None` for an
    /// allocation that never escapes or escapes in another block.
    pub fn local_escape(&self, r: Value) -> Option<Inst> {
        self.local_escape.get(r.index()).copied().flatten()
    }

    /// Whether some allocation escapes only in its own block
    /// ([`EscapeInfo::local_escape`]).
    pub fn has_local_escapes(&self) -> bool {
        self.local_escape.iter().any(Option::is_some)
    }

    /// Whether some allocation escapes in a block other than its own.
    pub fn has_escapes_elsewhere(&self) -> bool {
        self.local_escape
            .iter()
            .zip(&self.escapes)
            .any(|(local, &escapes)| escapes && local.is_none())
    }

    /// Whether `v` is certainly the result of an allocation (hence never null).
    pub fn is_allocation(&self, v: Value) -> bool {
        self.allocation_of(v).is_some()
    }
}

/// Pass to `f` each operand of an instruction of kind `kind` that the
/// instruction may hand to someone else (store anywhere, pass, return,
/// merge): uses as a plain address base, length or check, a copy, and an
/// (in)equality test do not leak the reference; a volatile access hands its
/// base to the environment (IR.md §6).
pub fn escaping_operands(kind: &InstKind, mut f: impl FnMut(Value)) {
    match kind {
        InstKind::Load {
            volatile: false, ..
        }
        | InstKind::Len(_)
        | InstKind::NullCheck(_)
        | InstKind::BoundsCheck(..)
        | InstKind::Unary(ir::UnOp::Copy, _) => {}
        InstKind::Store {
            value,
            volatile: false,
            ..
        } => f(*value),
        InstKind::Binary(ir::BinOp::Eq | ir::BinOp::Ne, _, _) => {}
        other => other.for_each_operand(&mut f),
    }
}

/// The block of the instruction defining `v`, if any.
fn def_block(func: &Function, v: Value) -> Option<ir::Block> {
    func.def_inst(v).and_then(|i| func.inst(i).block)
}

/// The value `v` stands for once `copy` chains are looked through.
pub fn strip_copies(func: &Function, mut v: Value) -> Value {
    for _ in 0..func.values.len() {
        match func.value_def(v) {
            ValueDef::Inst(i) => match func.inst(i).kind {
                InstKind::Unary(ir::UnOp::Copy, a) => v = a,
                _ => return v,
            },
            _ => return v,
        }
    }
    v
}
