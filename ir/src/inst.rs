//! Instructions (IR.md §4): opcodes, operands and addresses.

use crate::entities::{Block, ExternId, FuncId, GlobalId, StructId, Value};
use crate::types::Type;

/// Binary integer operations, comparisons included.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    Shl,
    Lshr,
    Ashr,
    Sdiv,
    Srem,
    Eq,
    Ne,
    Slt,
    Sle,
    Sgt,
    Sge,
    Ult,
    Ule,
    Ugt,
    Uge,
}

impl BinOp {
    /// Every binary operation, in a fixed order.
    pub const ALL: [BinOp; 21] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::Lshr,
        BinOp::Ashr,
        BinOp::Sdiv,
        BinOp::Srem,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Slt,
        BinOp::Sle,
        BinOp::Sgt,
        BinOp::Sge,
        BinOp::Ult,
        BinOp::Ule,
        BinOp::Ugt,
        BinOp::Uge,
    ];

    /// The mnemonic of the text format.
    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Xor => "xor",
            BinOp::Shl => "shl",
            BinOp::Lshr => "lshr",
            BinOp::Ashr => "ashr",
            BinOp::Sdiv => "sdiv",
            BinOp::Srem => "srem",
            BinOp::Eq => "eq",
            BinOp::Ne => "ne",
            BinOp::Slt => "slt",
            BinOp::Sle => "sle",
            BinOp::Sgt => "sgt",
            BinOp::Sge => "sge",
            BinOp::Ult => "ult",
            BinOp::Ule => "ule",
            BinOp::Ugt => "ugt",
            BinOp::Uge => "uge",
        }
    }

    /// The operation with mnemonic `s`.
    pub fn from_name(s: &str) -> Option<BinOp> {
        BinOp::ALL.iter().copied().find(|op| op.name() == s)
    }

    /// True for `eq`/`ne`, the only operations that accept reference operands.
    pub fn accepts_refs(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Ne)
    }

    /// True for operations whose operands may be swapped.
    pub fn is_commutative(self) -> bool {
        matches!(
            self,
            BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Eq | BinOp::Ne
        )
    }

    /// True for `sdiv`/`srem`, which trap on a zero divisor.
    pub fn may_trap(self) -> bool {
        matches!(self, BinOp::Sdiv | BinOp::Srem)
    }

    /// Evaluate with IR.md's exact semantics; `None` means the `div_by_zero` trap.
    #[inline]
    pub fn eval(self, a: i64, b: i64) -> Option<i64> {
        Some(match self {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            BinOp::Shl => a.wrapping_shl((b & 63) as u32),
            BinOp::Lshr => ((a as u64) >> (b & 63)) as i64,
            BinOp::Ashr => a >> (b & 63),
            BinOp::Sdiv => {
                if b == 0 {
                    return None;
                }
                a.wrapping_div(b)
            }
            BinOp::Srem => {
                if b == 0 {
                    return None;
                }
                a.wrapping_rem(b)
            }
            BinOp::Eq => (a == b) as i64,
            BinOp::Ne => (a != b) as i64,
            BinOp::Slt => (a < b) as i64,
            BinOp::Sle => (a <= b) as i64,
            BinOp::Sgt => (a > b) as i64,
            BinOp::Sge => (a >= b) as i64,
            BinOp::Ult => ((a as u64) < (b as u64)) as i64,
            BinOp::Ule => ((a as u64) <= (b as u64)) as i64,
            BinOp::Ugt => ((a as u64) > (b as u64)) as i64,
            BinOp::Uge => ((a as u64) >= (b as u64)) as i64,
        })
    }
}

/// Unary operations.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum UnOp {
    /// Wrapping negation.
    Neg,
    /// Bitwise not.
    Not,
    /// The operand itself (any type).
    Copy,
}

impl UnOp {
    /// Every unary operation.
    pub const ALL: [UnOp; 3] = [UnOp::Neg, UnOp::Not, UnOp::Copy];

    /// The mnemonic of the text format.
    pub fn name(self) -> &'static str {
        match self {
            UnOp::Neg => "neg",
            UnOp::Not => "not",
            UnOp::Copy => "copy",
        }
    }

    /// The operation with mnemonic `s`.
    pub fn from_name(s: &str) -> Option<UnOp> {
        UnOp::ALL.iter().copied().find(|op| op.name() == s)
    }

    /// Evaluate on an integer (`Copy` is the identity).
    #[inline]
    pub fn eval(self, a: i64) -> i64 {
        match self {
            UnOp::Neg => a.wrapping_neg(),
            UnOp::Not => !a,
            UnOp::Copy => a,
        }
    }
}

/// A field of a declared type: the struct and the field's position in it.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct FieldRef {
    /// The declared type the field belongs to.
    pub ty: StructId,
    /// The field's position in the declaration (0-based).
    pub index: u32,
}

/// A memory location named by a load or store.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Addr {
    /// `%o.f`.
    Field { base: Value, field: FieldRef },
    /// `%a[i]`.
    Elem { base: Value, index: Value },
    /// `@g`.
    Global(GlobalId),
}

impl Addr {
    /// The SSA values this address uses (base, and index for elements).
    #[inline]
    pub fn values(&self) -> impl Iterator<Item = Value> + '_ {
        let (a, b) = match *self {
            Addr::Field { base, .. } => (Some(base), None),
            Addr::Elem { base, index } => (Some(base), Some(index)),
            Addr::Global(_) => (None, None),
        };
        a.into_iter().chain(b)
    }

    /// Mutable access to the values this address uses.
    #[inline]
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> + '_ {
        let (a, b) = match self {
            Addr::Field { base, .. } => (Some(base), None),
            Addr::Elem { base, index } => (Some(base), Some(index)),
            Addr::Global(_) => (None, None),
        };
        a.into_iter().chain(b)
    }
}

/// The target of a `call`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Callee {
    /// A function of this module.
    Func(FuncId),
    /// An extern declaration: one environment step.
    Extern(ExternId),
}

/// What an instruction does. Phis and terminators are instructions too.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum InstKind {
    /// `op a, b`.
    Binary(BinOp, Value, Value),
    /// `op a`.
    Unary(UnOp, Value),
    /// `select c, a, b`.
    Select(Value, Value, Value),
    /// `new T`.
    New(StructId),
    /// `newarray E, n`: `elem` is the element type E.
    NewArray { elem: Type, len: Value },
    /// `load addr` / `load.volatile addr`.
    Load { addr: Addr, volatile: bool },
    /// `store addr, value` / `store.volatile addr, value`.
    Store {
        addr: Addr,
        value: Value,
        volatile: bool,
    },
    /// `len a`.
    Len(Value),
    /// `call @f(args)`.
    Call { callee: Callee, args: Vec<Value> },
    /// `escape v`.
    Escape(Value),
    /// `guard c`.
    Guard(Value),
    /// `nullcheck r`: trap `null_deref` when r is null (loadstar's extension:
    /// the trap of an access without its read).
    NullCheck(Value),
    /// `boundscheck a, i`: trap `null_deref` when a is null, else
    /// `out_of_bounds` when i is outside `0..len a` — an element access's
    /// trap without its read.
    BoundsCheck(Value, Value),
    /// `phi [L1: v1], ...`: one entry per predecessor edge.
    Phi(Vec<(Block, Value)>),
    /// `jmp L`.
    Jmp(Block),
    /// `br c, L1, L2`.
    Br(Value, Block, Block),
    /// `ret v` / `ret`.
    Ret(Option<Value>),
    /// `unreachable`.
    Unreachable,
}

impl InstKind {
    /// True for the instructions that end a block.
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            InstKind::Jmp(_) | InstKind::Br(..) | InstKind::Ret(_) | InstKind::Unreachable
        )
    }

    /// True for `phi`.
    pub fn is_phi(&self) -> bool {
        matches!(self, InstKind::Phi(_))
    }

    /// The successor blocks of a terminator (empty for everything else).
    pub fn successors(&self) -> impl Iterator<Item = Block> {
        let (a, b) = match *self {
            InstKind::Jmp(t) => (Some(t), None),
            InstKind::Br(_, t, e) => (Some(t), Some(e)),
            _ => (None, None),
        };
        a.into_iter().chain(b)
    }

    /// Mutable access to a terminator's successor blocks.
    pub fn successors_mut(&mut self) -> impl Iterator<Item = &mut Block> {
        let (a, b) = match self {
            InstKind::Jmp(t) => (Some(t), None),
            InstKind::Br(_, t, e) => (Some(t), Some(e)),
            _ => (None, None),
        };
        a.into_iter().chain(b)
    }

    /// Every SSA value this instruction uses, in operand order (phi entries included).
    pub fn operands(&self) -> Vec<Value> {
        let mut out = Vec::new();
        self.for_each_operand(|v| out.push(v));
        out
    }

    /// Call `f` on every SSA value this instruction uses, in operand order.
    #[inline(always)]
    pub fn for_each_operand(&self, mut f: impl FnMut(Value)) {
        match self {
            InstKind::Binary(_, a, b) => {
                f(*a);
                f(*b)
            }
            InstKind::Unary(_, a)
            | InstKind::Len(a)
            | InstKind::Escape(a)
            | InstKind::Guard(a)
            | InstKind::NullCheck(a)
            | InstKind::Br(a, _, _) => f(*a),
            InstKind::BoundsCheck(a, i) => {
                f(*a);
                f(*i)
            }
            InstKind::Select(c, a, b) => {
                f(*c);
                f(*a);
                f(*b)
            }
            InstKind::NewArray { len, .. } => f(*len),
            InstKind::Load { addr, .. } => addr.values().for_each(f),
            InstKind::Store { addr, value, .. } => {
                addr.values().for_each(&mut f);
                f(*value)
            }
            InstKind::Call { args, .. } => args.iter().copied().for_each(f),
            InstKind::Phi(entries) => entries.iter().for_each(|(_, v)| f(*v)),
            InstKind::Ret(v) => v.iter().copied().for_each(f),
            InstKind::New(_) | InstKind::Jmp(_) | InstKind::Unreachable => {}
        }
    }

    /// Call `f` on a mutable reference to every SSA value this instruction uses.
    #[inline(always)]
    pub fn for_each_operand_mut(&mut self, mut f: impl FnMut(&mut Value)) {
        match self {
            InstKind::Binary(_, a, b) => {
                f(a);
                f(b)
            }
            InstKind::Unary(_, a)
            | InstKind::Len(a)
            | InstKind::Escape(a)
            | InstKind::Guard(a)
            | InstKind::NullCheck(a)
            | InstKind::Br(a, _, _) => f(a),
            InstKind::BoundsCheck(a, i) => {
                f(a);
                f(i)
            }
            InstKind::Select(c, a, b) => {
                f(c);
                f(a);
                f(b)
            }
            InstKind::NewArray { len, .. } => f(len),
            InstKind::Load { addr, .. } => addr.values_mut().for_each(f),
            InstKind::Store { addr, value, .. } => {
                addr.values_mut().for_each(&mut f);
                f(value)
            }
            InstKind::Call { args, .. } => args.iter_mut().for_each(f),
            InstKind::Phi(entries) => entries.iter_mut().for_each(|(_, v)| f(v)),
            InstKind::Ret(v) => v.iter_mut().for_each(f),
            InstKind::New(_) | InstKind::Jmp(_) | InstKind::Unreachable => {}
        }
    }

    /// The mnemonic that starts this instruction in the text format.
    pub fn mnemonic(&self) -> &'static str {
        match self {
            InstKind::Binary(op, ..) => op.name(),
            InstKind::Unary(op, _) => op.name(),
            InstKind::Select(..) => "select",
            InstKind::New(_) => "new",
            InstKind::NewArray { .. } => "newarray",
            InstKind::Load {
                volatile: false, ..
            } => "load",
            InstKind::Load { volatile: true, .. } => "load.volatile",
            InstKind::Store {
                volatile: false, ..
            } => "store",
            InstKind::Store { volatile: true, .. } => "store.volatile",
            InstKind::Len(_) => "len",
            InstKind::Call { .. } => "call",
            InstKind::Escape(_) => "escape",
            InstKind::Guard(_) => "guard",
            InstKind::NullCheck(_) => "nullcheck",
            InstKind::BoundsCheck(..) => "boundscheck",
            InstKind::Phi(_) => "phi",
            InstKind::Jmp(_) => "jmp",
            InstKind::Br(..) => "br",
            InstKind::Ret(_) => "ret",
            InstKind::Unreachable => "unreachable",
        }
    }
}
