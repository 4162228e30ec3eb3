//! Positioned errors for everything a user writes: IR text and input specs.

use std::fmt;

/// A position in a source text (1-based line and column, in characters).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// An error in user-written text: where it is and what was expected.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("{file}:{pos}: error: {message}")]
pub struct ParseError {
    /// The file name as the user gave it (or a label such as `<input>`).
    pub file: String,
    /// Where the problem is.
    pub pos: Pos,
    /// What was found and what was expected.
    pub message: String,
}
