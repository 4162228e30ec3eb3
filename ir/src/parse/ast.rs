//! The syntax tree of the IR text, with names still unresolved.
//!
//! The syntax pass produces this; the resolver turns it into a [`crate::Module`]
//! once every declaration (which may come later in the file) is known.

use crate::error::Pos;
use crate::inst::{BinOp, UnOp};

/// A name with the position it was written at (owned: the input-spec parser's).
#[derive(Clone, Debug)]
pub struct Name {
    /// The name, without sigil.
    pub text: String,
    /// Where it was written.
    pub pos: Pos,
}

/// A name of the IR text with the position it was written at, borrowed from
/// the source (no allocation per name).
#[derive(Copy, Clone, Debug)]
pub struct Ident<'s> {
    /// The name, without sigil.
    pub text: &'s str,
    /// Where it was written.
    pub pos: Pos,
}

/// A value name (`%v`, without sigil) or block label of the IR text, with its
/// position and its id: the syntax pass numbers the distinct value names and
/// the distinct labels of each function densely (two separate numberings), so
/// that the resolver finds them in vectors rather than hash maps. The text
/// is the function's [`AstFunc::value_names`] (or `label_names`) entry for
/// the id: written once per name, not once per use, so that the syntax tree
/// (which a big module makes big) stays small.
#[derive(Copy, Clone, Debug)]
pub struct Local<'s> {
    /// Where it was written.
    pub pos: Pos,
    /// The dense id of the name among the function's value names (or labels).
    pub id: u32,
    /// The names belong to the source text.
    pub src: std::marker::PhantomData<&'s str>,
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
pub enum AddrBase<'s> {
    /// `%o`.
    Value(Local<'s>),
    /// `(null: T)`: the null constant at a declared type, so that the field or
    /// element can be resolved (an access through it always traps). Boxed,
    /// as in [`Operand::TypedNull`]: rare, and it would triple the size of
    /// every address.
    Null(Box<TypeExpr>),
}

impl AddrBase<'_> {
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
pub struct AstModule<'s> {
    /// `type` declarations.
    pub structs: Vec<AstStruct<'s>>,
    /// `global` declarations.
    pub globals: Vec<AstGlobal<'s>>,
    /// `extern` declarations.
    pub externs: Vec<AstExtern<'s>>,
    /// `func` definitions.
    pub funcs: Vec<AstFunc<'s>>,
}

/// `type T { f: ty, ... }`.
#[derive(Debug)]
pub struct AstStruct<'s> {
    /// The type's name.
    pub name: Ident<'s>,
    /// Its fields.
    pub fields: Vec<(Ident<'s>, TypeExpr)>,
}

/// `global @g: ty`.
#[derive(Debug)]
pub struct AstGlobal<'s> {
    /// The global's name.
    pub name: Ident<'s>,
    /// Its type.
    pub ty: TypeExpr,
}

/// One location of an effects clause.
#[derive(Debug)]
pub enum AstLoc<'s> {
    /// `Type.field`.
    Field(Ident<'s>, Ident<'s>),
    /// `[E]` (the written type is the array type).
    Elements(TypeExpr),
    /// `@global`.
    Global(Ident<'s>),
}

/// `extern @e(tys) -> ty reads(...) writes(...)`.
#[derive(Debug)]
pub struct AstExtern<'s> {
    /// The extern's name.
    pub name: Ident<'s>,
    /// Parameter types.
    pub params: Vec<TypeExpr>,
    /// Return type.
    pub ret: Option<TypeExpr>,
    /// The `reads(...)` clause, if written (`none` is an empty list).
    pub reads: Option<Vec<AstLoc<'s>>>,
    /// The `writes(...)` clause, if written.
    pub writes: Option<Vec<AstLoc<'s>>>,
}

/// `func @f(%p: ty, ...) -> ty { blocks }`.
#[derive(Debug)]
pub struct AstFunc<'s> {
    /// Position of the `func` keyword.
    pub pos: Pos,
    /// The function's name.
    pub name: Ident<'s>,
    /// Parameters with their types.
    pub params: Vec<(Local<'s>, TypeExpr)>,
    /// Return type.
    pub ret: Option<TypeExpr>,
    /// Blocks in order.
    pub blocks: Vec<AstBlock<'s>>,
    /// The distinct value names, by [`Local`] id.
    pub value_names: Vec<&'s str>,
    /// The distinct labels, by [`Local`] id.
    pub label_names: Vec<&'s str>,
}

/// `label:` and its instructions.
#[derive(Debug)]
pub struct AstBlock<'s> {
    /// The label.
    pub label: Local<'s>,
    /// Its instructions.
    pub insts: Vec<AstInst<'s>>,
}

/// An operand: a value name, an integer literal or `null`.
#[derive(Clone, Debug)]
pub enum Operand<'s> {
    /// `%v`.
    Value(Local<'s>),
    /// An integer literal.
    Int(i64),
    /// `null`.
    Null,
    /// `(null: T)`: the null constant, at type T for type inference (boxed:
    /// rare, and unboxed it would triple the size of every operand).
    TypedNull(Box<TypeExpr>),
}

/// A written memory address.
#[derive(Debug)]
pub enum AstAddr<'s> {
    /// `%o.f`.
    Field(AddrBase<'s>, Ident<'s>),
    /// `%a[i]`.
    Elem(AddrBase<'s>, Operand<'s>),
    /// `@g`.
    Global(Ident<'s>),
}

/// The operation part of an instruction.
#[derive(Debug)]
pub enum AstOp<'s> {
    Binary(BinOp, Operand<'s>, Operand<'s>),
    Unary(UnOp, Operand<'s>),
    Select(Operand<'s>, Operand<'s>, Operand<'s>),
    New(Ident<'s>),
    NewArray(TypeExpr, Operand<'s>),
    Load(AstAddr<'s>, bool),
    Store(AstAddr<'s>, Operand<'s>, bool),
    Len(Operand<'s>),
    Call(Ident<'s>, Vec<Operand<'s>>),
    Escape(Operand<'s>),
    Guard(Operand<'s>),
    Phi(Vec<(Local<'s>, Operand<'s>)>),
    Jmp(Local<'s>),
    Br(Operand<'s>, Local<'s>, Local<'s>),
    Ret(Option<Operand<'s>>),
    Unreachable,
}

/// One instruction line.
#[derive(Debug)]
pub struct AstInst<'s> {
    /// Position of the line's first token.
    pub pos: Pos,
    /// `%r =`, if written.
    pub result: Option<Local<'s>>,
    /// The mnemonic as written (for messages).
    pub mnemonic: &'s str,
    /// What it does.
    pub op: AstOp<'s>,
}
