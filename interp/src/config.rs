//! Execution limits ([`Config`]) and the trap kinds of IR.md §4/§7 ([`TrapKind`]).

use std::fmt;

/// The largest array length `newarray` accepts (IR.md §4).
pub const MAX_ARRAY_LEN: i64 = 65536;

/// Resource limits of one execution. They are part of the semantics: an input
/// that hits `heap_exhausted` or `stack_overflow` in the original is inconclusive.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Config {
    /// Fuel budget: every taken `jmp`/`br` edge and every call costs one unit.
    pub fuel: u64,
    /// Total arena size in words (reserved header, globals, input objects and
    /// every allocation included); exceeding it traps `heap_exhausted`.
    pub heap_words: usize,
    /// Maximum number of simultaneously active frames (the entry function is
    /// frame 1); a call that would exceed it traps `stack_overflow`.
    pub max_depth: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            fuel: 10_000_000,
            heap_words: 1 << 22,
            max_depth: 64,
        }
    }
}

impl Config {
    /// The default limits with a different fuel budget.
    pub fn with_fuel(fuel: u64) -> Config {
        Config {
            fuel,
            ..Config::default()
        }
    }
}

/// Why an execution stopped early.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum TrapKind {
    /// `sdiv`/`srem` by zero.
    DivByZero,
    /// The heap budget ran out.
    HeapExhausted,
    /// `newarray` with a length outside `0..=65536`.
    BadLength,
    /// A field/element access or `len` through `null`.
    NullDeref,
    /// An element index outside `0..len`.
    OutOfBounds,
    /// More than the configured number of frames.
    StackOverflow,
    /// `guard` on zero.
    GuardFailed,
    /// The `unreachable` terminator.
    Unreachable,
    /// The fuel budget ran out.
    OutOfFuel,
}

impl TrapKind {
    /// Every trap kind.
    pub const ALL: [TrapKind; 9] = [
        TrapKind::DivByZero,
        TrapKind::HeapExhausted,
        TrapKind::BadLength,
        TrapKind::NullDeref,
        TrapKind::OutOfBounds,
        TrapKind::StackOverflow,
        TrapKind::GuardFailed,
        TrapKind::Unreachable,
        TrapKind::OutOfFuel,
    ];

    /// The name used in `trap KIND`.
    pub fn name(self) -> &'static str {
        match self {
            TrapKind::DivByZero => "div_by_zero",
            TrapKind::HeapExhausted => "heap_exhausted",
            TrapKind::BadLength => "bad_length",
            TrapKind::NullDeref => "null_deref",
            TrapKind::OutOfBounds => "out_of_bounds",
            TrapKind::StackOverflow => "stack_overflow",
            TrapKind::GuardFailed => "guard_failed",
            TrapKind::Unreachable => "unreachable",
            TrapKind::OutOfFuel => "out_of_fuel",
        }
    }

    /// The trap kind named `s`.
    pub fn from_name(s: &str) -> Option<TrapKind> {
        TrapKind::ALL.iter().copied().find(|t| t.name() == s)
    }

    /// True for the resource traps that make an input inconclusive (IR.md §7).
    pub fn is_inconclusive(self) -> bool {
        matches!(
            self,
            TrapKind::OutOfFuel | TrapKind::HeapExhausted | TrapKind::StackOverflow
        )
    }
}

impl fmt::Display for TrapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
