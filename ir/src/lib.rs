//! The loadstar IR: a managed-memory SSA control-flow-graph IR.
//!
//! This crate holds the data structures ([`Module`], [`Function`], instructions in
//! arenas with typed indices), the text parser and printer, the verifier, the CFG
//! analyses the passes need, and the one effects table of IR.md §8.

pub mod builder;
pub mod cfg;
pub mod decl_list;
pub mod dom;
pub mod effects;
pub mod entities;
pub mod error;
pub mod function;
pub mod input;
pub mod input_text;
pub mod inst;
pub mod lexer;
pub mod loops;
pub mod module;
pub mod parse;
pub mod print;
pub mod reuse;
pub mod source_map;
pub mod split_edge;
pub mod summaries;
pub mod types;
pub mod uses;
pub mod verify;
#[cfg(feature = "bug-zoo")]
pub mod zoo;

pub use builder::FunctionBuilder;
pub use cfg::Cfg;
pub use decl_list::DeclList;
pub use dom::DomTree;
pub use effects::{inst_effects, Effects, HeapNode, Traps};
pub use entities::{ArrayDims, Block, ExternId, FuncId, GlobalId, Inst, StructId, Value};
pub use error::{ParseError, Pos};
pub use function::{BlockData, Function, InstData, ValueData, ValueDef};
pub use input::{InputObject, InputSpec, InputValue};
pub use input_text::{parse_input_spec, print_input_spec};
pub use inst::{Addr, BinOp, Callee, FieldRef, InstKind, UnOp};
pub use loops::{Loop, LoopId, LoopInfo};
pub use module::{EffectLoc, Extern, ExternEffects, FieldDecl, Global, Module, StructDecl};
pub use parse::{parse_module, parse_verified, LoadError};
pub use print::{print_function, print_inst, print_module, Names};
pub use source_map::SourceMap;
pub use types::{Base, Type};
pub use verify::{verify_function, verify_module, VerifyError};
