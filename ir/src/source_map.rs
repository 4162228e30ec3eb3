//! Where each parsed item came from, so that verifier errors found after
//! parsing can still name the file, line and column.

use crate::entities::{FuncId, Inst};
use crate::error::Pos;
use rustc_hash::FxHashMap;

/// Source positions of a parsed module's functions and instructions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    /// The file name the module was parsed from.
    pub file: String,
    /// Position of each function's `func` keyword.
    pub funcs: FxHashMap<FuncId, Pos>,
    /// Position of each instruction (its first token), by function index and
    /// then instruction index (the parser creates a function's instructions
    /// in text order, so these are dense vectors, not a hash map).
    pub insts: Vec<Vec<Pos>>,
}

impl SourceMap {
    /// The position of `inst` in `func`, if it came from the text.
    pub fn inst_pos(&self, func: FuncId, inst: Inst) -> Option<Pos> {
        self.insts.get(func.index())?.get(inst.index()).copied()
    }
}
