//! Machine instructions over virtual registers (the output of instruction
//! selection, the input of register allocation): one [`VInst`] per x86
//! instruction group, with its regalloc2 operands and clobbers, in blocks
//! whose parameters are the phis of IR.md (edges of a `br` get blocks of
//! their own, so no edge is critical and every parallel copy has a place).

use interp::TrapKind;
use regalloc2::{Operand, PRegSet, VReg};

/// An arithmetic operation of the two-operand x86 form.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Alu {
    /// `add`
    Add,
    /// `sub`
    Sub,
    /// `and`
    And,
    /// `or`
    Or,
    /// `xor`
    Xor,
    /// `imul`
    Mul,
}

/// A shift.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Shift {
    /// `shl`
    Shl,
    /// `shr`
    Lshr,
    /// `sar`
    Ashr,
}

/// A condition code.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Cc {
    /// equal
    E,
    /// not equal
    Ne,
    /// signed less
    L,
    /// signed less or equal
    Le,
    /// signed greater
    G,
    /// signed greater or equal
    Ge,
    /// unsigned below
    B,
    /// unsigned below or equal
    Be,
    /// unsigned above
    A,
    /// unsigned above or equal
    Ae,
}

impl Cc {
    /// The condition that holds exactly when `self` does not.
    pub fn inverse(self) -> Cc {
        match self {
            Cc::E => Cc::Ne,
            Cc::Ne => Cc::E,
            Cc::L => Cc::Ge,
            Cc::Ge => Cc::L,
            Cc::Le => Cc::G,
            Cc::G => Cc::Le,
            Cc::B => Cc::Ae,
            Cc::Ae => Cc::B,
            Cc::Be => Cc::A,
            Cc::A => Cc::Be,
        }
    }
}

/// Whether an access null-checks its base.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum NullCheck {
    /// Test the base and trap if it is null.
    Emit,
    /// The base is known non-null here (an earlier access on every path
    /// checked it, or `new` made it): no test.
    Skip,
    /// In a block emitted twice (a loop header, see `VBlock::twice`): test
    /// in the copy entered from outside the loop, not in the copy the back
    /// edges enter (every one of them checked the base).
    OnLoopEntry,
}

/// A machine instruction (group). Operand order is given per variant; `d` is
/// the defined register, `t` a temporary.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum VInst {
    /// `[def d]`: parameter `idx` from the caller's outgoing area.
    Param { idx: u32 },
    /// `[def p0 = rcx, def p1 = rdx, ...]`: the parameters passed in
    /// registers (`isel::regs::ARGS`), already there: no code.
    RegParams,
    /// `[def d]`: a constant.
    Const { imm: i64 },
    /// `[use a, use b, def d = a]`.
    Alu { op: Alu },
    /// `[use a, def d = a]`.
    AluImm { op: Alu, imm: i32 },
    /// `[use a, def d]`: `imul d, a, imm`.
    MulImm { imm: i32 },
    /// `[use a, use b = rcx, def d = a]`.
    Shift { op: Shift },
    /// `[use a, def d = a]`.
    ShiftImm { op: Shift, n: u8 },
    /// `[use a = rax, use b, def d = rax or rdx, ...]`.
    Div { rem: bool },
    /// `[use a, use b, def d]`: `cmp; setcc; movzx`.
    Cmp { cc: Cc },
    /// `[use a, def d]`.
    CmpImm { cc: Cc, imm: i32 },
    /// `[use a, def d = a]`.
    Neg,
    /// `[use a, def d = a]`.
    Not,
    /// `[use a, def d]`.
    Move,
    /// `[use c, use a, use b, def d = a]`.
    Select,
    /// `[use base, def d]`; `checked`: whether the base is null-checked.
    LoadField { disp: i32, checked: NullCheck },
    /// `[use base, use v]`; `checked` as for `LoadField`.
    StoreField { disp: i32, checked: NullCheck },
    /// `[use base, use index, def d, def at]`: bounds check, then `at =
    /// base + index` (the element's word is `r15 + 8*at + 16`, where a later
    /// access of the same element reads or writes it: [`VInst::LoadElemAt`]);
    /// `checked`: whether the base is null-checked.
    LoadElem { checked: NullCheck },
    /// `[use at, def d]`: the element a bounds-checked access of this block
    /// addressed.
    LoadElemAt,
    /// `[use base, def d]`: constant index `c` in `0..=65536`.
    LoadElemConst { c: i32, checked: NullCheck },
    /// `[use base, use index, use v, def at]`; as [`VInst::LoadElem`].
    StoreElem { checked: NullCheck },
    /// `[use at, use v]`; as [`VInst::LoadElemAt`].
    StoreElemAt,
    /// `[use base, use v]`.
    StoreElemConst { c: i32, checked: NullCheck },
    /// `[use base]`: a constant index that is always out of bounds.
    ElemOutOfRange,
    /// `[use a, def d]`.
    Len { checked: NullCheck },
    /// `[use r]`: `nullcheck` (never with `checked` = `Skip`: isel then
    /// emits nothing).
    NullCheck { checked: NullCheck },
    /// `[use base, use index, def at]`: `boundscheck`, the checks of
    /// [`VInst::LoadElem`] with `at` for later accesses of the element but
    /// no read.
    BoundsCheck { checked: NullCheck },
    /// `[use base]`: `boundscheck` of a constant index `c` in `0..=65536`.
    BoundsCheckConst { c: i32, checked: NullCheck },
    /// `[def d]`.
    LoadGlobal { disp: i32 },
    /// `[use v]`.
    StoreGlobal { disp: i32 },
    /// `[use v]`: outgoing argument `i` at `[rsp + 8*i]`.
    StoreArg { i: u32 },
    /// `[def d = rax]`: runtime `new`.
    New { sid: u32, nfields: u32 },
    /// `[use len = rdx, def d = rax]`: runtime `newarray`.
    NewArray { header: u64 },
    /// `[use a0 = rcx, use a1 = rdx, ..., def d = rax]`: call a module
    /// function (arguments past the sixth stored before).
    Call { func: u32 },
    /// What is left of a call to an inlined leaf (its body follows): the
    /// call's unit of fuel and the frame-depth check (`stack_overflow` if
    /// no frame is left for the callee).
    InlinedCall,
    /// `[def d = rax]?`: an environment step for an extern.
    CallExtern { ext: u32, nargs: u32 },
    /// An environment step before a volatile access.
    Volatile { nargs: u32, mask: u64 },
    /// `[use v = rsi]`.
    Escape { is_ref: bool },
    /// `[use c]`.
    Guard,
    /// Jump to a block passing arguments; `charge` takes one unit of fuel.
    Jmp { target: u32, charge: bool },
    /// `[use c]`: charge fuel, branch on `c != 0`.
    Br { t: u32, e: u32 },
    /// `[use a, use b]`: charge fuel, `cmp a, b`, branch on `cc`.
    CmpBr { cc: Cc, t: u32, e: u32 },
    /// `[use a]`: charge fuel, `cmp a, imm`, branch on `cc`.
    CmpImmBr { cc: Cc, imm: i32, t: u32, e: u32 },
    /// `[use v = rax]?`: return.
    Ret,
    /// Raise a trap (the `unreachable` terminator).
    Trap { kind: TrapKind },
}

impl VInst {
    /// How the access null-checks its base (`None`: not an access with a
    /// check that can be dropped).
    pub fn null_check(&self) -> Option<NullCheck> {
        self.clone().null_check_mut().copied()
    }

    /// How the access null-checks its base, to change it.
    pub fn null_check_mut(&mut self) -> Option<&mut NullCheck> {
        match self {
            VInst::LoadField { checked, .. }
            | VInst::StoreField { checked, .. }
            | VInst::LoadElem { checked }
            | VInst::StoreElem { checked }
            | VInst::LoadElemConst { checked, .. }
            | VInst::StoreElemConst { checked, .. }
            | VInst::Len { checked }
            | VInst::NullCheck { checked }
            | VInst::BoundsCheck { checked }
            | VInst::BoundsCheckConst { checked, .. } => Some(checked),
            _ => None,
        }
    }
}

/// One instruction with its operands.
#[derive(Clone, Debug)]
pub struct InstData {
    /// What it does.
    pub inst: VInst,
    /// Its regalloc2 operands.
    pub operands: Vec<Operand>,
    /// Registers it clobbers.
    pub clobbers: PRegSet,
    /// Block arguments (for `Jmp`).
    pub args: Vec<VReg>,
}

/// A block of machine instructions.
#[derive(Clone, Debug, Default)]
pub struct VBlock {
    /// First instruction (index into [`VCode::insts`]).
    pub start: usize,
    /// One past the last instruction.
    pub end: usize,
    /// Its parameters (the IR block's phis).
    pub params: Vec<VReg>,
    /// Successors.
    pub succs: Vec<regalloc2::Block>,
    /// Predecessors.
    pub preds: Vec<regalloc2::Block>,
    /// Emitted twice: a loop header with accesses whose null check only the
    /// copy entered from outside the loop makes ([`NullCheck::OnLoopEntry`]);
    /// the back edges (branches from this block or a later one) enter the
    /// second copy.
    pub twice: bool,
}

/// A function in machine instructions.
#[derive(Clone, Debug, Default)]
pub struct VCode {
    /// Every instruction, block by block.
    pub insts: Vec<InstData>,
    /// The blocks in emission order (block 0 is the entry).
    pub blocks: Vec<VBlock>,
    /// The number of virtual registers.
    pub num_vregs: usize,
    /// Words of outgoing arguments the function needs.
    pub max_out: usize,
    /// Listing comments: before instruction index, the text.
    pub comments: Vec<(usize, String)>,
}
