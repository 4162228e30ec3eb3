//! The syntax tree of the IR text, with names still unresolved.
//!
//! The syntax pass produces this; the resolver turns it into a [`crate::Module`]
//! once every declaration (which may come later in the file) is known.

use crate::error::Pos;
use crate::inst::{BinOp, UnOp};

/// A name with the position it was written at.
#[derive(Clone, Debug)]
pub struct Name {
    /// The name, without sigil.
    pub text: String,
    /// Where it was written.
    pub pos: Pos,
}

/// A written type: `i64`, `T`, or `[E]` nested `dims` times.
#[derive(Clone, Debug)]
pub struct TypeExpr {
    /// `None` for `i64`, otherwise the declared type's name.
    pub base: Option<String>,
    /// Array nesting depth.
    pub dims: u8,
    /// Where the type starts.
    pub pos: Pos,
}

/// The base of a field or element address.
#[derive(Clone, Debug)]
pub enum AddrBase {
    /// `%o`.
    Value(Name),
    /// `(null: T)`: the null constant at a declared type, so that the field or
    /// element can be resolved (an access through it always traps).
    Null(TypeExpr),
}

impl AddrBase {
    /// Where the base was written.
    pub fn pos(&self) -> Pos {
        match self {
            AddrBase::Value(n) => n.pos,
            AddrBase::Null(t) => t.pos,
        }
    }
}

/// A whole file.
#[derive(Default, Debug)]
pub struct AstModule {
    /// `type` declarations.
    pub structs: Vec<AstStruct>,
    /// `global` declarations.
    pub globals: Vec<AstGlobal>,
    /// `extern` declarations.
    pub externs: Vec<AstExtern>,
    /// `func` definitions.
    pub funcs: Vec<AstFunc>,
}

/// `type T { f: ty, ... }`.
#[derive(Debug)]
pub struct AstStruct {
    /// The type's name.
    pub name: Name,
    /// Its fields.
    pub fields: Vec<(Name, TypeExpr)>,
}

/// `global @g: ty`.
#[derive(Debug)]
pub struct AstGlobal {
    /// The global's name.
    pub name: Name,
    /// Its type.
    pub ty: TypeExpr,
}

/// One location of an effects clause.
#[derive(Debug)]
pub enum AstLoc {
    /// `Type.field`.
    Field(Name, Name),
    /// `[E]` (the written type is the array type).
    Elements(TypeExpr),
    /// `@global`.
    Global(Name),
}

/// `extern @e(tys) -> ty reads(...) writes(...)`.
#[derive(Debug)]
pub struct AstExtern {
    /// The extern's name.
    pub name: Name,
    /// Parameter types.
    pub params: Vec<TypeExpr>,
    /// Return type.
    pub ret: Option<TypeExpr>,
    /// The `reads(...)` clause, if written (`none` is an empty list).
    pub reads: Option<Vec<AstLoc>>,
    /// The `writes(...)` clause, if written.
    pub writes: Option<Vec<AstLoc>>,
}

/// `func @f(%p: ty, ...) -> ty { blocks }`.
#[derive(Debug)]
pub struct AstFunc {
    /// Position of the `func` keyword.
    pub pos: Pos,
    /// The function's name.
    pub name: Name,
    /// Parameters with their types.
    pub params: Vec<(Name, TypeExpr)>,
    /// Return type.
    pub ret: Option<TypeExpr>,
    /// Blocks in order.
    pub blocks: Vec<AstBlock>,
}

/// `label:` and its instructions.
#[derive(Debug)]
pub struct AstBlock {
    /// The label.
    pub label: Name,
    /// Its instructions.
    pub insts: Vec<AstInst>,
}

/// An operand: a value name, an integer literal or `null`.
#[derive(Clone, Debug)]
pub enum Operand {
    /// `%v`.
    Value(Name),
    /// An integer literal.
    Int(i64),
    /// `null`.
    Null,
    /// `(null: T)`: the null constant, at type T for type inference.
    TypedNull(TypeExpr),
}

/// A written memory address.
#[derive(Debug)]
pub enum AstAddr {
    /// `%o.f`.
    Field(AddrBase, Name),
    /// `%a[i]`.
    Elem(AddrBase, Operand),
    /// `@g`.
    Global(Name),
}

/// The operation part of an instruction.
#[derive(Debug)]
pub enum AstOp {
    Binary(BinOp, Operand, Operand),
    Unary(UnOp, Operand),
    Select(Operand, Operand, Operand),
    New(Name),
    NewArray(TypeExpr, Operand),
    Load(AstAddr, bool),
    Store(AstAddr, Operand, bool),
    Len(Operand),
    Call(Name, Vec<Operand>),
    Escape(Operand),
    Guard(Operand),
    Phi(Vec<(Name, Operand)>),
    Jmp(Name),
    Br(Operand, Name, Name),
    Ret(Option<Operand>),
    Unreachable,
}

/// One instruction line.
#[derive(Debug)]
pub struct AstInst {
    /// Position of the line's first token.
    pub pos: Pos,
    /// `%r =`, if written.
    pub result: Option<Name>,
    /// The mnemonic as written (for messages).
    pub mnemonic: String,
    /// What it does.
    pub op: AstOp,
}
