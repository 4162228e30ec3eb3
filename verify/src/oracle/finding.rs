//! Findings of the differential oracle: what went wrong, a signature for
//! deduplication, and the reproducer as a corpus text test.

use interp::{Behaviour, HeapEntry, Outcome};
use ir::{FuncId, InputSpec, Module};
use std::fmt;

/// The kind of a finding.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// Return vs trap, a different trap, or a different returned value.
    MismatchOutcome,
    /// The output traces differ.
    MismatchTrace,
    /// The final heaps differ.
    MismatchHeap,
    /// A pass produced a module the verifier rejects.
    IllFormed,
    /// A pass (or the interpreter on its output) panicked.
    Panic,
    /// A pass found its own invariant broken (the peephole fixed point).
    Invariant,
    /// An instruction touched memory outside its declared effects.
    Effects,
    /// The native code (of the original or of an optimized module) behaved
    /// differently from the interpreter, or the backend failed.
    MismatchNative,
    /// The optimized program executed more loads + stores than the original
    /// (beyond the speculation bound, see [`crate::oracle::allowed_extra`]).
    Pessimization,
    /// A native worker died: a signal (the fault's disassembly in the
    /// detail), a hang past the timeout, or a panic in the runtime.
    NativeCrash,
    /// The SMT oracle proved a difference and the interpreter confirmed its
    /// counterexample.
    MismatchSmt,
    /// The SMT oracle's counterexample is not confirmed by the interpreter,
    /// or the checker panicked: a bug of the checker, not of the passes.
    SmtUnconfirmed,
    /// LLVM's `opt -O2` keeps fewer loads and stores than loadstar's passes
    /// on the same module (`crate::peer`): not a soundness bug.
    MissedOptimization,
    /// The peer's translation run by `lli-14` behaved differently from the
    /// interpreter on the same input (`crate::peer::lli`): a bug of the
    /// interpreter or of the translation.
    MismatchLli,
}

impl FindingKind {
    /// The name used in signatures and reports.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::MismatchOutcome => "mismatch-outcome",
            FindingKind::MismatchTrace => "mismatch-trace",
            FindingKind::MismatchHeap => "mismatch-heap",
            FindingKind::IllFormed => "ill-formed",
            FindingKind::Panic => "panic",
            FindingKind::Invariant => "invariant",
            FindingKind::Effects => "effects",
            FindingKind::MismatchNative => "mismatch-native",
            FindingKind::Pessimization => "pessimization",
            FindingKind::NativeCrash => "native-crash",
            FindingKind::MismatchSmt => "mismatch-smt",
            FindingKind::SmtUnconfirmed => "smt-unconfirmed",
            FindingKind::MissedOptimization => "missed-optimization",
            FindingKind::MismatchLli => "mismatch-lli",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One soundness finding with everything needed to reproduce it.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The comma-separated pass list that was run.
    pub passes: String,
    /// What went wrong.
    pub kind: FindingKind,
    /// The first differing part, coarse enough to deduplicate on.
    pub part: String,
    /// Details for a human (behaviours, verifier errors, panic message).
    pub detail: String,
    /// The original (unoptimized) module.
    pub module: Module,
    /// The function that was run.
    pub func: FuncId,
    /// The input it went wrong on (for ill-formed/panic: a conclusive input, if any).
    pub input: Option<InputSpec>,
    /// The original's behaviour on `input`.
    pub expected: Option<Behaviour>,
    /// The optimized program's behaviour, for mismatches.
    pub actual: Option<Behaviour>,
    /// The fuel budget the original ran with.
    pub fuel: u64,
    /// The seed the program came from (set by the sweep).
    pub seed: Option<u64>,
}

impl Finding {
    /// `passes|kind|part`: findings with the same signature are the same bug as far
    /// as deduplication is concerned.
    pub fn signature(&self) -> String {
        // The peephole seed (`#N`) is left out: one bug, one signature.
        let passes = self.passes.split('#').next().unwrap_or_default();
        format!("{passes}|{}|{}", self.kind, self.part)
    }

    /// A file-name-safe digest of the signature.
    pub fn file_stem(&self) -> String {
        let h =
            crate::gen::rng::hash_seq(&self.signature().bytes().map(u64::from).collect::<Vec<_>>());
        format!("{}-{}-{:016x}", self.kind, self.passes.replace(',', "+"), h)
    }

    /// The reproducer as a corpus text test (`; test: run`, docs/filetests.md):
    /// the original module, the input, and the original's behaviour as `; expect:`.
    pub fn to_test_text(&self) -> String {
        let f = self.module.func(self.func);
        let mut out = String::new();
        out.push_str(&format!(
            "; Finding: {} after passes `{}` (found by the loadstar harness).\n",
            self.kind, self.passes
        ));
        out.push_str(&format!("; signature: {}\n", self.signature()));
        out.push_str(&format!("; passes: {}\n", self.passes));
        if let Some(seed) = self.seed {
            out.push_str(&format!("; seed: {seed}\n"));
        }
        for line in self.detail.lines() {
            out.push_str(&format!(";   | {line}\n"));
        }
        out.push_str("; test: run\n");
        out.push_str(&format!("; func: @{}\n", f.name));
        out.push_str(&format!("; fuel: {}\n", self.fuel));
        if let Some(input) = &self.input {
            out.push_str(&format!(
                "; input: {}\n",
                ir::print_input_spec(input, &self.module, f)
            ));
            if let Some(b) = &self.expected {
                for line in b.to_string().lines() {
                    out.push_str(&format!("; expect: {line}\n"));
                }
            }
        }
        out.push('\n');
        out.push_str(&ir::print_module(&self.module));
        out
    }
}

fn outcome_class(o: &Outcome) -> String {
    match o {
        Outcome::Return(_) => "return".to_string(),
        Outcome::Trap(t) => format!("trap {t}"),
    }
}

fn heap_entry_label(e: Option<&HeapEntry>) -> String {
    match e {
        Some(HeapEntry::Global { name, .. }) => format!("@{name}"),
        Some(HeapEntry::Struct { ty, .. }) => ty.to_string(),
        Some(HeapEntry::Array { ty, .. }) => ty.to_string(),
        None => "missing".to_string(),
    }
}

/// Compare two behaviours; the kind and coarse first differing part when they differ.
pub fn compare(expected: &Behaviour, actual: &Behaviour) -> Option<(FindingKind, String)> {
    if expected.outcome != actual.outcome {
        let (e, a) = (
            outcome_class(&expected.outcome),
            outcome_class(&actual.outcome),
        );
        let part = if e == a {
            format!("{e} value")
        } else {
            format!("{e} -> {a}")
        };
        return Some((FindingKind::MismatchOutcome, part));
    }
    if expected.trace != actual.trace {
        let part = if expected.trace.len() != actual.trace.len() {
            "length"
        } else {
            "value"
        };
        return Some((FindingKind::MismatchTrace, part.to_string()));
    }
    if expected.heap != actual.heap {
        let k = expected
            .heap
            .iter()
            .zip(&actual.heap)
            .position(|(a, b)| a != b)
            .unwrap_or(expected.heap.len().min(actual.heap.len()));
        let part = heap_entry_label(expected.heap.get(k).or(actual.heap.get(k)));
        return Some((FindingKind::MismatchHeap, part));
    }
    None
}

/// Replace digits by `#` (panic messages name indices that differ between programs).
pub fn normalize_digits(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_digit = false;
    for ch in s.chars() {
        if ch.is_ascii_digit() {
            if !prev_digit {
                out.push('#');
            }
            prev_digit = true;
        } else {
            out.push(ch);
            prev_digit = false;
        }
    }
    out
}
