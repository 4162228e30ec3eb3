//! `loadstar check FILE`: the differential check of one file. The original
//! module is compared with the optimized one on the file's own `; input:`
//! lines (docs/filetests.md) and on N generated inputs — the sweep's input
//! instantiation, with aliasing among the reference parameters — through the
//! sweep's oracle ([`crate::oracle::check_program`]). The first divergence is
//! reported with both behaviours and the input in IR.md §7 syntax, ready to
//! paste into `loadstar run --input`.
//!
//! The oracles form a list ([`Oracle`]), each consulted in turn on the same
//! inputs: the interpreter always, the native executor with `--native` (the
//! x86-64 code of the original and of the optimized module against the
//! interpreter, in crash-isolated workers: a fault is a `native-crash`), and
//! z3 with `--smt` (every function of the file proved equivalent to its
//! optimized version, or a counterexample replayed in the interpreter:
//! `mismatch-smt` when confirmed, `smt-unconfirmed` — a checker bug — when not).

use crate::filetest::directives::split_directive;
use crate::inputs::instantiate_all;
use crate::load::{load_text, select_function, Diagnostic};
use crate::oracle::{check_program, Finding, FindingKind, OracleConfig};
use ir::{Function, InputSpec, Module};
use passes::PassManager;

/// Options of `loadstar check`.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The IR file.
    pub file: String,
    /// The function to check (else the file's `; func:`, `@main`, the first).
    pub func: Option<String>,
    /// The pass list to optimize with.
    pub passes: String,
    /// How many generated inputs to add to the file's own.
    pub inputs: usize,
    /// Seed of the generated inputs and of the peephole worklist order.
    pub seed: u64,
    /// Fuel of the original run (else the file's `; fuel:`, else the interpreter's).
    pub fuel: Option<u64>,
    /// Also consult the native oracle ([`Oracle::Native`]).
    pub native: bool,
    /// Also consult the SMT oracle ([`Oracle::Smt`]) with this solver time
    /// per function, in milliseconds.
    pub smt_timeout_ms: Option<u32>,
}

/// A way to decide whether the optimized module behaves like the original.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Oracle {
    /// Run both with the reference interpreter (effect checking on) and
    /// compare the observable behaviours: the sweep's oracle.
    Interp,
    /// Compile the original and the optimized module to x86-64 and compare
    /// their native runs (in forked workers) with the interpreter's.
    Native,
    /// Prove every function equivalent to its optimized version with z3
    /// (counterexamples replayed in the interpreter).
    Smt,
}

/// The oracles this build has, consulted in this order.
pub const ORACLES: &[Oracle] = &[Oracle::Interp, Oracle::Native, Oracle::Smt];

impl Oracle {
    /// The oracle's name, as `--oracles` lists take it.
    pub fn name(self) -> &'static str {
        match self {
            Oracle::Interp => "interp",
            Oracle::Native => "native",
            Oracle::Smt => "smt",
        }
    }
}

/// Where one checked input came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputOrigin {
    /// An `; input:` directive of the file, at this line.
    File(usize),
    /// Generated instantiation number `k` of seed `seed`.
    Generated { seed: u64, k: usize },
}

/// What `check` concluded.
#[derive(Clone, Debug)]
pub enum CheckOutcome {
    /// Every oracle agreed on every conclusive input.
    Agree(String),
    /// The first divergence, rendered for the user.
    Diverges(String),
}

/// Run the check; bad input (file, pass list, an `; input:` line) is a
/// [`Diagnostic`] naming the file, line and column.
pub fn check(opts: &CheckOptions) -> Result<CheckOutcome, Diagnostic> {
    let text = std::fs::read_to_string(&opts.file)
        .map_err(|e| Diagnostic(format!("{}: error: cannot read file: {e}", opts.file)))?;
    let loaded = load_text(&text, &opts.file)?;
    let directives = file_directives(&text);
    PassManager::from_list(&opts.passes).map_err(|e| Diagnostic(format!("error: {e}")))?;
    let m = &loaded.module;
    let func_name = opts.func.as_deref().or(directives.func.as_deref());
    let fid = select_function(m, func_name, &opts.file)?;
    let f = m.func(fid);
    let mut inputs: Vec<(InputSpec, InputOrigin)> = Vec::new();
    for input in &directives.inputs {
        let spec = input.parse(m, f, &opts.file)?;
        inputs.push((spec, InputOrigin::File(input.segments[0].line)));
    }
    for (k, spec) in instantiate_all(m, f, opts.seed, opts.inputs)
        .into_iter()
        .enumerate()
    {
        // A function without reference parameters or globals may get the
        // same input many times: check each once.
        if !inputs.iter().any(|(s, _)| *s == spec) {
            let origin = InputOrigin::Generated { seed: opts.seed, k };
            inputs.push((spec, origin));
        }
    }
    let specs: Vec<InputSpec> = inputs.iter().map(|(s, _)| s.clone()).collect();
    let cfg = OracleConfig {
        fuel: opts
            .fuel
            .or(directives.fuel)
            .unwrap_or(interp::Config::default().fuel),
        heap_words: interp::Config::default().heap_words,
        native: false,
        ..OracleConfig::default()
    };
    let plan = match opts.seed {
        0 => opts.passes.clone(),
        s => format!("{}#{s}", opts.passes),
    };
    let mut conclusive = 0;
    let consulted: Vec<Oracle> = ORACLES
        .iter()
        .copied()
        .filter(|&o| match o {
            Oracle::Interp => true,
            Oracle::Native => opts.native,
            Oracle::Smt => opts.smt_timeout_ms.is_some(),
        })
        .collect();
    let mut smt_line = String::new();
    for &oracle in &consulted {
        let cfg = OracleConfig {
            native: oracle == Oracle::Native,
            smt: opts
                .smt_timeout_ms
                .filter(|_| oracle == Oracle::Smt)
                .map(|t| smt::Options {
                    timeout_ms: t.max(1),
                    ..crate::oracle::smt_check::default_options()
                }),
            ..cfg.clone()
        };
        let result = check_program(m, fid, &specs, std::slice::from_ref(&plan), &cfg);
        conclusive = result.runs - result.inconclusive;
        if oracle == Oracle::Smt {
            smt_line = smt_verdicts(&result.smt);
        }
        if let Some(finding) = result.findings.first() {
            let origin = finding
                .input
                .as_ref()
                .and_then(|i| inputs.iter().find(|(s, _)| s == i))
                .map(|(_, o)| o.clone());
            return Ok(CheckOutcome::Diverges(render_divergence(
                &opts.file, oracle, finding, origin,
            )));
        }
    }
    let from_file = directives.inputs.len();
    Ok(CheckOutcome::Agree(format!(
        "{}: no divergence after `{}`: {conclusive} of {} inputs conclusive \
         ({from_file} from the file, {} generated), oracles: {}\n{smt_line}",
        opts.file,
        opts.passes,
        inputs.len(),
        inputs.len() - from_file,
        consulted
            .iter()
            .map(|o| o.name())
            .collect::<Vec<_>>()
            .join(",")
    )))
}

/// The SMT oracle's verdicts on the file's functions, one line.
fn smt_verdicts(c: &crate::sweep::smt_counters::SmtCounts) -> String {
    format!(
        "smt: {} proved, {} proved (bounded), {} unknown, {} unsupported, {} unchanged by the passes\n",
        c.proved, c.bounded, c.unknown, c.unsupported, c.unchanged
    )
}

/// The report of one divergence: what differs, the input (IR.md §7 syntax),
/// both behaviours, and the details the oracle gave.
pub fn render_divergence(
    file: &str,
    oracle: Oracle,
    finding: &Finding,
    origin: Option<InputOrigin>,
) -> String {
    let f = finding.module.func(finding.func);
    let mut out = match finding.passes.as_str() {
        "none" if finding.kind == FindingKind::Effects => format!(
            "{file}: the original program breaks its declared effects (oracle {})\n",
            oracle.name()
        ),
        passes if finding.kind == FindingKind::SmtUnconfirmed => format!(
            "{file}: SMT checker bug after `{passes}` (oracle {}): {} ({}): \
             the interpreter does not confirm the solver's counterexample\n",
            oracle.name(),
            finding.kind,
            finding.part
        ),
        "none" => format!(
            "{file}: the backend alone diverges on the original (oracle {}): {} ({})\n",
            oracle.name(),
            finding.kind,
            finding.part
        ),
        passes => format!(
            "{file}: divergence after `{passes}` (oracle {}): {} ({})\n",
            oracle.name(),
            finding.kind,
            finding.part
        ),
    };
    if let Some(input) = &finding.input {
        let from = match origin {
            Some(InputOrigin::File(line)) => format!("{file}:{line}"),
            Some(InputOrigin::Generated { seed, k }) => {
                format!("generated input {k} of seed {seed}")
            }
            None => "an input".to_string(),
        };
        out.push_str(&format!("function: @{}\n", f.name));
        let spec = ir::print_input_spec(input, &finding.module, f);
        match finding.kind {
            FindingKind::MismatchSmt | FindingKind::SmtUnconfirmed => {
                out.push_str(&format!("counterexample: {spec}\n"))
            }
            _ => out.push_str(&format!("input ({from}): {spec}\n")),
        }
    }
    let mut section = |title: &str, body: &str| {
        out.push_str(title);
        out.push_str(":\n");
        for line in body.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
    };
    if let Some(b) = &finding.expected {
        section("original", &b.to_string());
    }
    match (&finding.actual, finding.kind) {
        (Some(b), kind) => {
            section("optimized", &b.to_string());
            if let (FindingKind::Pessimization, Some((counts, _))) =
                (kind, finding.detail.split_once("optimized module:\n"))
            {
                section("loads and stores executed", counts);
            }
            if let Some((_, module)) = finding.detail.split_once("optimized module:\n") {
                section("optimized module", module);
            }
        }
        (None, FindingKind::Panic | FindingKind::IllFormed | FindingKind::Invariant) => {
            section("optimizing failed", &finding.detail)
        }
        (None, _) => section("detail", &finding.detail),
    }
    out
}

/// The directives of the file that `check` uses: `; func:`, `; fuel:` and
/// the `; input:` lines with their `; input+:` continuations. (A plain IR
/// file, without a `; test:` line, is fine.)
#[derive(Default)]
pub(crate) struct FileDirectives {
    pub(crate) func: Option<String>,
    pub(crate) fuel: Option<u64>,
    pub(crate) inputs: Vec<FileInput>,
}

/// One `; input:` case as written in the file.
pub(crate) struct FileInput {
    /// The spec text, continuations joined with a space.
    spec: String,
    /// Where each piece of `spec` sits in the file.
    segments: Vec<Segment>,
}

/// A piece of an input spec: its file line, the column its text starts at,
/// and its first character's offset in the joined spec.
struct Segment {
    line: usize,
    col: usize,
    offset: usize,
}

pub(crate) fn file_directives(text: &str) -> FileDirectives {
    let mut d = FileDirectives::default();
    for (i, raw) in text.lines().enumerate() {
        let Some((name, value)) = split_directive(raw) else {
            continue;
        };
        match name {
            "func" => d.func = Some(value.trim_start_matches('@').to_string()),
            "fuel" => d.fuel = value.parse().ok().or(d.fuel),
            "input" | "input+" => {
                let col = value_column(raw, value);
                if name == "input" || d.inputs.is_empty() {
                    d.inputs.push(FileInput {
                        spec: String::new(),
                        segments: Vec::new(),
                    });
                }
                let input = d.inputs.last_mut().expect("just ensured");
                if !input.segments.is_empty() {
                    input.spec.push(' ');
                }
                input.segments.push(Segment {
                    line: i + 1,
                    col,
                    offset: input.spec.chars().count(),
                });
                input.spec.push_str(value);
            }
            _ => {}
        }
    }
    d
}

/// The 1-based column where `value` (a trimmed suffix of the directive) starts in `raw`.
fn value_column(raw: &str, value: &str) -> usize {
    let start = raw.trim_end().len() - value.len();
    raw[..start].chars().count() + 1
}

impl FileInput {
    /// Parse the spec for `f`; an error names the file position of the problem.
    pub(crate) fn parse(
        &self,
        m: &Module,
        f: &Function,
        file: &str,
    ) -> Result<InputSpec, Diagnostic> {
        ir::input_text::parse_input_spec(&self.spec, file, m, f).map_err(|e| {
            // The joined spec is one line: find the piece the column falls in.
            let at = (e.pos.col as usize).saturating_sub(1);
            let seg = self
                .segments
                .iter()
                .rev()
                .find(|s| s.offset <= at)
                .unwrap_or(&self.segments[0]);
            Diagnostic(format!(
                "{file}:{}:{}: error: in this `; input:` line: {}",
                seg.line,
                seg.col + (at - seg.offset.min(at)),
                e.message
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_and_continuations_keep_their_file_positions() {
        let d = file_directives("; func: @f\n; fuel: 7\n;  input: p = null,\n; input+: q = 5\n");
        assert_eq!(d.func.as_deref(), Some("f"));
        assert_eq!(d.fuel, Some(7));
        assert_eq!(d.inputs.len(), 1);
        let i = &d.inputs[0];
        assert_eq!(i.spec, "p = null, q = 5");
        assert_eq!((i.segments[0].line, i.segments[0].col), (3, 11));
        assert_eq!((i.segments[1].line, i.segments[1].col), (4, 11));
        assert_eq!(i.segments[1].offset, 10);
    }
}
