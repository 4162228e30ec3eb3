//! The parser of the IR text format (IR.md §1–§4).
//!
//! Two passes: [`syntax`] checks the shape of the text and builds a syntax tree;
//! [`resolve`] resolves names (forward references included), infers value types
//! and builds the [`Module`]. Every problem becomes a positioned [`ParseError`];
//! nothing here panics on any input.

pub(crate) mod ast;
mod intern;
mod resolve;
pub(crate) mod syntax;

use crate::error::ParseError;
use crate::lexer::Cursor;
use crate::module::Module;
use crate::source_map::SourceMap;
use crate::verify::VerifyError;

pub use syntax::MAX_DIMS;

/// Parse a module from `src`; `file` names the text in error messages and the source map.
pub fn parse_module(src: &str, file: &str) -> Result<(Module, SourceMap), ParseError> {
    let mut cursor = Cursor::new(src, file);
    let ast = syntax::parse_module_syntax(&mut cursor);
    let ast = cursor.finish(ast)?;
    resolve::resolve_module(&ast, file, |_, _| {})
}

/// Why [`parse_verified`] rejected a text.
#[derive(Debug)]
pub enum LoadError {
    /// The text does not parse.
    Parse(ParseError),
    /// The text parses but the module is ill-formed: the errors
    /// [`crate::verify_module`] reports, in its order, and the source map
    /// that places them.
    Verify(Vec<VerifyError>, SourceMap),
}

/// [`parse_module`] then [`crate::verify_module`], with the same results, but
/// each function is verified as soon as it is resolved, while it is still in
/// the cache (a parse error anywhere still wins over every verifier error).
pub fn parse_verified(src: &str, file: &str) -> Result<(Module, SourceMap), LoadError> {
    let mut cursor = Cursor::new(src, file);
    let ast = syntax::parse_module_syntax(&mut cursor);
    let ast = cursor.finish(ast).map_err(LoadError::Parse)?;
    crate::verify::verify_as_resolved(|check| resolve::resolve_module(&ast, file, check))
}
