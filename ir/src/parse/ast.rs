//! The syntax tree of the IR text, with names still unresolved.
//!
//! The syntax pass produces this; the resolver turns it into a [`crate::Module`]
//! once every declaration (which may come later in the file) is known.
//!
//! The instructions of the whole module sit in one vector ([`AstModule::insts`],
//! reserved once from the number of lines), and what an instruction has a
//! variable number of (phi entries, call arguments) or rarely has (the type of
//! `(null: T)`, of `newarray`) sits in side vectors it indexes: an
//! instruction owns no memory, so the tree is built without an allocation per
//! block or instruction, read front to back, and dropped without a walk.

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

/// A written type of an instruction: its index in [`AstModule::types`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TypeIdx(pub u32);

/// A run of a side vector of [`AstModule`] (phi entries, call arguments).
#[derive(Copy, Clone, Debug, Default)]
pub struct Span {
    /// The index of the first element.
    pub start: u32,
    /// How many.
    pub len: u32,
}

impl Span {
    /// The indices of the run.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// The base of a field or element address.
#[derive(Copy, Clone, Debug)]
pub enum AddrBase<'s> {
    /// `%o`.
    Value(Local<'s>),
    /// `(null: T)`: the null constant at a declared type, so that the field or
    /// element can be resolved (an access through it always traps). The type
    /// is in [`AstModule::types`], as in [`Operand::TypedNull`].
    Null(TypeIdx, Pos),
}

impl AddrBase<'_> {
    /// Where the base was written.
    pub fn pos(&self) -> Pos {
        match self {
            AddrBase::Value(n) => n.pos,
            AddrBase::Null(_, pos) => *pos,
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
    /// The blocks of every function, in order (each function a run).
    pub blocks: Vec<AstBlock<'s>>,
    /// The distinct value names of every function (each function a run).
    pub value_names: Vec<&'s str>,
    /// The distinct labels of every function (each function a run).
    pub label_names: Vec<&'s str>,
    /// The instructions of every function, in order (each block a run).
    pub insts: Vec<AstInst<'s>>,
    /// The types written in instructions (`(null: T)`, `newarray T`).
    pub types: Vec<TypeExpr>,
    /// The operands of every call, in order (each call a run).
    pub args: Vec<Operand<'s>>,
    /// The entries of every phi, in order (each phi a run).
    pub phi_entries: Vec<(Local<'s>, Operand<'s>)>,
    /// The `@` names the bodies use, in order (each function a run).
    pub at_uses: Vec<&'s str>,
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
    /// Blocks in order: a run of [`AstModule::blocks`].
    pub blocks: Span,
    /// The distinct value names, by [`Local`] id: a run of [`AstModule::value_names`].
    pub value_names: Span,
    /// The distinct labels, by [`Local`] id: a run of [`AstModule::label_names`].
    pub label_names: Span,
    /// The `@` names its body uses (callees, global addresses), as often as
    /// written: a run of [`AstModule::at_uses`].
    pub at_uses: Span,
}

/// `label:` and its instructions.
#[derive(Debug)]
pub struct AstBlock<'s> {
    /// The label.
    pub label: Local<'s>,
    /// Its instructions: a run of [`AstModule::insts`].
    pub insts: Span,
}

/// An operand: a value name, an integer literal or `null`.
#[derive(Copy, Clone, Debug)]
pub enum Operand<'s> {
    /// `%v`.
    Value(Local<'s>),
    /// An integer literal.
    Int(i64),
    /// `null`.
    Null,
    /// `(null: T)`: the null constant, at type T (in [`AstModule::types`]) for
    /// type inference.
    TypedNull(TypeIdx),
}

/// A written memory address.
#[derive(Copy, Clone, Debug)]
pub enum AstAddr<'s> {
    /// `%o.f`.
    Field(AddrBase<'s>, Ident<'s>),
    /// `%a[i]`.
    Elem(AddrBase<'s>, Operand<'s>),
    /// `@g`.
    Global(Ident<'s>),
}

/// The operation part of an instruction (runs and types index the side
/// vectors of [`AstModule`]).
#[derive(Copy, Clone, Debug)]
pub enum AstOp<'s> {
    Binary(BinOp, Operand<'s>, Operand<'s>),
    Unary(UnOp, Operand<'s>),
    Select(Operand<'s>, Operand<'s>, Operand<'s>),
    New(Ident<'s>),
    NewArray(TypeIdx, Operand<'s>),
    Load(AstAddr<'s>, bool),
    Store(AstAddr<'s>, Operand<'s>, bool),
    Len(Operand<'s>),
    Call(Ident<'s>, Span),
    Escape(Operand<'s>),
    Guard(Operand<'s>),
    NullCheck(Operand<'s>),
    BoundsCheck(Operand<'s>, Operand<'s>),
    Phi(Span),
    Jmp(Local<'s>),
    Br(Operand<'s>, Local<'s>, Local<'s>),
    Ret(Option<Operand<'s>>),
    Unreachable,
}

impl AstOp<'_> {
    /// The mnemonic of the text format (for messages).
    pub fn mnemonic(&self) -> &'static str {
        match self {
            AstOp::Binary(op, ..) => op.name(),
            AstOp::Unary(op, _) => op.name(),
            AstOp::Select(..) => "select",
            AstOp::New(_) => "new",
            AstOp::NewArray(..) => "newarray",
            AstOp::Load(_, false) => "load",
            AstOp::Load(_, true) => "load.volatile",
            AstOp::Store(_, _, false) => "store",
            AstOp::Store(_, _, true) => "store.volatile",
            AstOp::Len(_) => "len",
            AstOp::Call(..) => "call",
            AstOp::Escape(_) => "escape",
            AstOp::Guard(_) => "guard",
            AstOp::NullCheck(_) => "nullcheck",
            AstOp::BoundsCheck(..) => "boundscheck",
            AstOp::Phi(_) => "phi",
            AstOp::Jmp(_) => "jmp",
            AstOp::Br(..) => "br",
            AstOp::Ret(_) => "ret",
            AstOp::Unreachable => "unreachable",
        }
    }
}

/// One instruction line.
#[derive(Copy, Clone, Debug)]
pub struct AstInst<'s> {
    /// Position of the line's first token.
    pub pos: Pos,
    /// `%r =`, if written.
    pub result: Option<Local<'s>>,
    /// What it does.
    pub op: AstOp<'s>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instruction_node_stays_small() {
        // The syntax tree of a big module is written once and read back by
        // the resolver: its size is memory traffic per instruction.
        assert!(
            std::mem::size_of::<AstInst>() <= 88,
            "{} bytes",
            std::mem::size_of::<AstInst>()
        );
        assert!(std::mem::size_of::<Operand>() <= 16);
    }
}
