//! Running one test file against the parser, verifier, passes and interpreter,
//! and collecting the failures (and, in bless mode, the rewritten file).

use super::asm;
use super::bless::{apply_edits, Edit};
use super::directives::{parse_directives, Case, TestFile, TestKind};
use super::matcher::match_checks;
use ir::{FuncId, InputSpec, Module, SourceMap};

/// What checking one file produced.
pub(crate) struct Checked {
    /// Every problem found.
    pub failures: Vec<String>,
    /// In bless mode, the file with its expectations rewritten.
    pub blessed: Option<String>,
}

/// Outcomes after which the differential check is inconclusive (IR.md §7).
const INCONCLUSIVE: [&str; 3] = [
    "outcome: trap out_of_fuel",
    "outcome: trap heap_exhausted",
    "outcome: trap stack_overflow",
];

/// The three printed lines of an observable behaviour.
type Lines = [String; 3];

struct Ctx<'a> {
    text: &'a str,
    label: &'a str,
    bless: bool,
    failures: Vec<String>,
    edits: Vec<Edit>,
}

impl Ctx<'_> {
    fn fail(&mut self, line: usize, msg: impl AsRef<str>) {
        self.failures
            .push(format!("{}:{}: {}", self.label, line, msg.as_ref()));
    }
}

/// Check the test in `text`.
pub(crate) fn check_text(text: &str, label: &str, bless: bool) -> Checked {
    let mut cx = Ctx {
        text,
        label,
        bless,
        failures: Vec::new(),
        edits: Vec::new(),
    };
    match parse_directives(text) {
        Err(e) => cx.fail(e.line, format!("bad directive: {}", e.message)),
        Ok(tf) if !tf.asm_checks.is_empty() && tf.kind != TestKind::Run => cx.fail(
            tf.asm_checks[0].line,
            "`; check-asm:` lines belong in run tests",
        ),
        Ok(tf) => match tf.kind.clone() {
            TestKind::ParseError => check_parse_error(&mut cx, &tf),
            TestKind::VerifyError => check_verify_error(&mut cx, &tf),
            TestKind::InputError => check_input_error(&mut cx, &tf),
            TestKind::Run => check_run(&mut cx, &tf),
            TestKind::Opt(list) => check_opt(&mut cx, &tf, &list),
            TestKind::Peer(list) => check_peer(&mut cx, &tf, &list),
        },
    }
    let blessed = (bless && !cx.edits.is_empty()).then(|| apply_edits(cx.text, &cx.edits));
    Checked {
        failures: cx.failures,
        blessed,
    }
}

/// Parse and verify the module; on failure record it and return `None`.
fn load(cx: &mut Ctx, tf: &TestFile) -> Option<(Module, SourceMap, FuncId)> {
    let (module, map) = match ir::parse_module(cx.text, cx.label) {
        Ok(m) => m,
        Err(e) => {
            cx.failures.push(format!("{e}"));
            return None;
        }
    };
    if let Err(errs) = ir::verify::verify_module(&module) {
        for e in crate::load::verify_error_lines(&errs, &map, cx.label) {
            cx.failures.push(e);
        }
        return None;
    }
    let func = match &tf.func {
        Some(name) => module.func_by_name(name),
        None => module
            .func_by_name("main")
            .or_else(|| (!module.funcs.is_empty()).then(|| FuncId::new(0))),
    };
    match func {
        Some(f) => Some((module, map, f)),
        None => {
            let what = tf
                .func
                .as_deref()
                .map_or("any function".into(), |f| format!("@{f}"));
            cx.fail(tf.kind_line, format!("the module has no {what} to run"));
            None
        }
    }
}

/// `LINE:COL: message` of a positioned error.
fn pos_message(e: &ir::ParseError) -> String {
    format!("{}:{}: {}", e.pos.line, e.pos.col, e.message)
}

fn bless_errors(cx: &mut Ctx, tf: &TestFile, actual: &[String]) {
    if cx.bless {
        let old: Vec<usize> = tf.errors.iter().map(|e| e.line).collect();
        let new = actual.iter().map(|a| format!("; error: {a}")).collect();
        cx.edits.push(Edit::replace(&old, tf.kind_line, new));
    }
}

fn check_parse_error(cx: &mut Ctx, tf: &TestFile) {
    let err = match ir::parse_module(cx.text, cx.label) {
        Ok(_) => {
            return cx.fail(
                tf.kind_line,
                "expected a parse error, but the module parses",
            )
        }
        Err(e) => e,
    };
    let actual = pos_message(&err);
    bless_errors(cx, tf, std::slice::from_ref(&actual));
    if cx.bless {
        return;
    }
    if tf.errors.is_empty() {
        cx.fail(
            tf.kind_line,
            format!("no `; error:` line; the error is `{actual}`"),
        );
    }
    for want in &tf.errors {
        let matches = match split_pos(&want.value) {
            Some((line, col, rest)) => {
                line == err.pos.line && col == err.pos.col && err.message.contains(rest)
            }
            None => false,
        };
        if !matches {
            cx.fail(
                want.line,
                format!(
                    "parse error mismatch\n  - expected: {}\n  + actual:   {actual}",
                    want.value
                ),
            );
        }
    }
}

/// Split `LINE:COL: TEXT`.
fn split_pos(s: &str) -> Option<(u32, u32, &str)> {
    let (line, rest) = s.split_once(':')?;
    let (col, rest) = rest.split_once(':')?;
    Some((
        line.trim().parse().ok()?,
        col.trim().parse().ok()?,
        rest.trim(),
    ))
}

fn require_substrings(cx: &mut Ctx, tf: &TestFile, actual: &[String]) {
    bless_errors(cx, tf, actual);
    if cx.bless {
        return;
    }
    let joined = actual.join("\n");
    if tf.errors.is_empty() {
        cx.fail(
            tf.kind_line,
            format!("no `; error:` line; the errors are:\n{joined}"),
        );
    }
    for want in &tf.errors {
        if !joined.contains(want.value.as_str()) {
            cx.fail(
                want.line,
                format!(
                    "error text not found\n  - expected: {}\n  + actual:   {}",
                    want.value,
                    joined.replace('\n', "\n              ")
                ),
            );
        }
    }
}

fn check_verify_error(cx: &mut Ctx, tf: &TestFile) {
    let (module, map) = match ir::parse_module(cx.text, cx.label) {
        Ok(m) => m,
        Err(e) => {
            return cx
                .failures
                .push(format!("expected a verifier error, but: {e}"))
        }
    };
    match ir::verify::verify_module(&module) {
        Ok(()) => cx.fail(
            tf.kind_line,
            "expected a verifier error, but the module verifies",
        ),
        Err(errs) => {
            // Blessed lines drop the file name so they do not depend on where
            // the corpus lives; they still match the full output as substrings.
            let prefix = format!("{}:", cx.label);
            let actual: Vec<String> = crate::load::verify_error_lines(&errs, &map, cx.label)
                .into_iter()
                .map(|l| l.strip_prefix(&prefix).map_or(l.clone(), str::to_string))
                .collect();
            require_substrings(cx, tf, &actual);
        }
    }
}

fn check_input_error(cx: &mut Ctx, tf: &TestFile) {
    let Some((module, _map, func)) = load(cx, tf) else {
        return;
    };
    let mut actual = Vec::new();
    for case in &tf.cases {
        match parse_input(&module, func, case) {
            Ok(_) => cx.fail(
                case.anchor_line(),
                format!("expected an input error, but `{}` is accepted", case.spec),
            ),
            Err(e) => actual.push(pos_message(&e)),
        }
    }
    require_substrings(cx, tf, &actual);
}

fn parse_input(module: &Module, func: FuncId, case: &Case) -> Result<InputSpec, ir::ParseError> {
    ir::input_text::parse_input_spec(&case.spec, "input", module, module.func(func))
}

/// Run `func` of `module` on `spec` with `fuel` (or the default), with effect
/// checking on: every access outside an instruction's declared effects is a
/// failure at `line`. Returns the behaviour lines and the run's counts.
fn execute(
    cx: &mut Ctx,
    line: usize,
    module: &Module,
    func: FuncId,
    spec: &InputSpec,
    fuel: Option<u64>,
) -> (Lines, Counts) {
    let mut config = interp::Config::default();
    if let Some(f) = fuel {
        config.fuel = f;
    }
    let program = interp::Program::new(module);
    let (exec, violations) = match interp::run_checked(&program, func, spec, &config) {
        Ok(r) => r,
        Err(e) => {
            cx.fail(line, format!("the input does not fit the function: {e}"));
            return (Default::default(), Counts::default());
        }
    };
    if !violations.is_empty() {
        let list: Vec<String> = violations.iter().map(|v| format!("  {v}")).collect();
        cx.fail(line, format!("effect violations:\n{}", list.join("\n")));
    }
    let printed = exec.behaviour.to_string();
    let mut lines = printed.lines().map(|l| l.trim_end().to_string());
    let out = [
        lines.next().unwrap_or_default(),
        lines.next().unwrap_or_default(),
        lines.next().unwrap_or_default(),
    ];
    let counts = Counts {
        fuel_used: exec.fuel_used,
        loads: exec.loads,
        stores: exec.stores,
    };
    (out, counts)
}

/// What a run used: fuel, and the loads and stores it executed.
#[derive(Clone, Copy, Default)]
struct Counts {
    fuel_used: u64,
    loads: u64,
    stores: u64,
}

/// Run `func` of `module` natively (x86-64) on `spec` with `fuel` (or the
/// default); the behaviour lines, or why the backend failed.
fn execute_native(
    native: &codegen::NativeProgram,
    func: FuncId,
    spec: &InputSpec,
    fuel: Option<u64>,
) -> Result<Lines, String> {
    let mut config = interp::Config::default();
    if let Some(f) = fuel {
        config.fuel = f;
    }
    let exec = native
        .try_run(func, spec, &config)
        .map_err(|e| format!("the input does not fit the function: {e}"))?;
    let printed = exec.behaviour.to_string();
    let mut lines = printed.lines().map(|l| l.trim_end().to_string());
    Ok([
        lines.next().unwrap_or_default(),
        lines.next().unwrap_or_default(),
        lines.next().unwrap_or_default(),
    ])
}

/// The native oracle of a run test: the machine code of `module` must behave
/// exactly like the interpreter's `expected` runs (`budget` picks each case's
/// fuel: the same budget for the original, `2B + 16` for optimized modules),
/// with small leaf functions inlined (the default) and with every call kept
/// a call (`no_inline`, so the call convention is exercised as well).
fn check_native(
    cx: &mut Ctx,
    module: &Module,
    func: FuncId,
    runs: &[(&Case, InputSpec, Lines, Counts)],
    what: &str,
    budget: &dyn Fn(u64) -> Option<u64>,
) {
    for no_inline in [false, true] {
        let what = if no_inline {
            format!("{what} (no inlining)")
        } else {
            what.to_string()
        };
        let native = match codegen::NativeProgram::with_options(
            module,
            codegen::CompileOptions {
                check_regalloc: true,
                listing: false,
                chaos: Some(0x10ad_57a2),
                no_inline,
            },
        ) {
            Ok(n) => n,
            Err(e) => {
                cx.fail(1, format!("{what}: the backend failed: {e}"));
                return;
            }
        };
        for (case, spec, expected, counts) in runs {
            let actual = match execute_native(&native, func, spec, budget(counts.fuel_used)) {
                Ok(l) => l,
                Err(e) => {
                    cx.fail(case.anchor_line(), format!("{what}: {e}"));
                    continue;
                }
            };
            if &actual != expected {
                let mut msg = format!(
                    "{what} behaves differently natively on input `{}`",
                    case.spec
                );
                push_line_diff(&mut msg, expected, &actual);
                msg.push_str(&format!("\n  module:\n{}", ir::print::print_module(module)));
                cx.fail(case.anchor_line(), msg);
            }
        }
    }
}

/// Append to `msg` the behaviour lines of `before` and `after` side by side:
/// an equal line once, a differing pair as `- before` / `+ after`.
fn push_line_diff(msg: &mut String, before: &Lines, after: &Lines) {
    for (b, a) in before.iter().zip(after) {
        if b == a {
            msg.push_str(&format!("\n    {b}"));
        } else {
            msg.push_str(&format!("\n  - {b}\n  + {a}"));
        }
    }
}

/// Compare `actual` with the case's expectation; record a diff-like failure.
fn compare_expectation(cx: &mut Ctx, case: &Case, actual: &Lines, what: &str) {
    let Some(expected) = case.expected() else {
        cx.fail(
            case.anchor_line(),
            format!(
                "no `; expect:` lines for input `{}` (run with LOADSTAR_BLESS=1); actual:\n  {}",
                case.spec,
                actual.join("\n  ")
            ),
        );
        return;
    };
    if expected.iter().zip(actual).all(|(e, a)| e.trim_end() == a) {
        return;
    }
    let mut msg = format!("{what} differs on input `{}`", case.spec);
    for (e, a) in expected.iter().zip(actual) {
        if e.trim_end() == a {
            msg.push_str(&format!("\n    {a}"));
        } else {
            msg.push_str(&format!("\n  - {e}\n  + {a}"));
        }
    }
    cx.fail(case.anchor_line(), msg);
}

fn bless_case(cx: &mut Ctx, tf: &TestFile, case: &Case, actual: &Lines) {
    let old: Vec<usize> = case.expect.iter().map(|e| e.line).collect();
    let after = case.input_lines.last().copied().unwrap_or(tf.kind_line);
    let new = actual.iter().map(|l| format!("; expect: {l}")).collect();
    cx.edits.push(Edit::replace(&old, after, new));
}

/// Optimize a copy of `module` with each pass of `list` in turn, verifying
/// after each; the optimized module and the passes' counters.
fn optimize(
    module: &Module,
    map: &SourceMap,
    label: &str,
    list: &str,
) -> Result<(Module, passes::Stats), String> {
    let mut m = module.clone();
    let mut stats = passes::Stats::default();
    let (names, seed) = match list.split_once('#') {
        Some((names, seed)) => (
            names,
            seed.trim()
                .parse::<u64>()
                .map_err(|_| format!("bad peephole seed in `{list}`"))?,
        ),
        None => (list, 0),
    };
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let pm = passes::PassManager::from_list(name)
            .map_err(|e| format!("{e}"))?
            .with_seed(seed)
            .with_invariant_checks(passes::peeps::CheckMode::FixedPoint);
        let run = pm
            .run(&mut m)
            .map_err(|e| format!("pass `{name}` failed: {e}"))?;
        stats.merge(&run);
        if let Err(errs) = ir::verify::verify_module(&m) {
            let rendered = crate::load::verify_error_lines(&errs, map, label).join("\n  ");
            return Err(format!(
                "the module is ill-formed after pass `{name}`:\n  {rendered}\n{}",
                ir::print::print_module(&m)
            ));
        }
    }
    // The CLI contract: what `opt` prints parses again, to the same text.
    let printed = ir::print::print_module(&m);
    match ir::parse_module(&printed, "<optimized>") {
        Ok((again, _))
            if ir::print::print_module(&again) == printed && same_result_types(&m, &again) => {}
        Ok(_) => {
            return Err(format!(
            "after `{list}` the printed module prints differently or changes a result's type once parsed again:\n{printed}"
        ))
        }
        Err(e) => {
            return Err(format!(
                "after `{list}` the printed module does not parse again: {e}\n{printed}"
            ))
        }
    }
    Ok((m, stats))
}

/// Whether the instructions of `a` and `b`, in layout order, have results of
/// the same types (the text of a module could parse back with a phi's type
/// silently changed and still print the same).
fn same_result_types(a: &ir::Module, b: &ir::Module) -> bool {
    let types = |m: &ir::Module| -> Vec<Option<ir::Type>> {
        m.funcs
            .iter()
            .flat_map(|f| {
                f.layout.iter().flat_map(move |bl| {
                    f.blocks[bl.index()]
                        .insts
                        .iter()
                        .map(move |&i| f.inst(i).result.map(|v| f.value_type(v)))
                })
            })
            .collect()
    };
    types(a) == types(b)
}

/// The pass lists of the free differential check: every pass alone, then the pipeline.
fn differential_lists() -> Vec<String> {
    let mut lists: Vec<String> = passes::PASS_NAMES.iter().map(|s| s.to_string()).collect();
    if !lists.iter().any(|l| l == "pipeline") {
        lists.push("pipeline".into());
    }
    lists
}

/// Run one input case of the original module and bless or compare its
/// expectation; `None` when the input spec is bad (already reported).
fn run_expected(
    cx: &mut Ctx,
    tf: &TestFile,
    case: &Case,
    module: &Module,
    func: FuncId,
    what: &str,
) -> Option<(InputSpec, Lines, Counts)> {
    let spec = match parse_input(module, func, case) {
        Ok(s) => s,
        Err(e) => {
            cx.fail(
                case.anchor_line(),
                format!("bad input: {}", pos_message(&e)),
            );
            return None;
        }
    };
    let (actual, counts) = execute(cx, case.anchor_line(), module, func, &spec, tf.fuel);
    if cx.bless {
        bless_case(cx, tf, case, &actual);
    } else {
        compare_expectation(cx, case, &actual, what);
    }
    Some((spec, actual, counts))
}

/// Match the `; check-asm:` lines against the machine code of `func` (the
/// `--emit asm` listing, normalized by `filetest::asm`). In bless mode a file
/// whose lines do not all match gets them replaced by the precise output.
fn check_asm(cx: &mut Ctx, tf: &TestFile, module: &Module, func: FuncId) {
    let opts = codegen::CompileOptions {
        listing: true,
        ..Default::default()
    };
    let listing = match codegen::compile_with(module, opts) {
        Ok(c) => codegen::listing(&c),
        Err(e) => return cx.fail(tf.kind_line, format!("the backend failed: {e}")),
    };
    let lines = asm::normalize(&listing, &module.func(func).name);
    let failures = asm::match_asm(&lines, &tf.asm_checks);
    if failures.is_empty() {
        return;
    }
    if cx.bless {
        let old: Vec<usize> = tf.asm_checks.iter().map(|c| c.line).collect();
        let new = lines.iter().map(|l| format!("; check-asm: {l}")).collect();
        cx.edits.push(Edit::replace(&old, tf.kind_line, new));
        return;
    }
    let mut msg = failures.join("\n");
    msg.push_str("\n  the code:\n");
    for l in &lines {
        msg.push_str(&format!("    {l}\n"));
    }
    cx.fail(tf.asm_checks[0].line, msg);
}

fn check_run(cx: &mut Ctx, tf: &TestFile) {
    let Some((module, map, func)) = load(cx, tf) else {
        return;
    };
    if !tf.asm_checks.is_empty() {
        check_asm(cx, tf, &module, func);
    }
    let mut runs = Vec::new();
    for case in &tf.cases {
        if let Some((spec, actual, counts)) = run_expected(cx, tf, case, &module, func, "behaviour")
        {
            runs.push((case, spec, actual, counts));
        }
    }
    // The backend alone: same limits, so even resource traps must match.
    check_native(cx, &module, func, &runs, "the original", &|_| tf.fuel);
    for list in differential_lists()
        .into_iter()
        .chain(tf.plans.iter().cloned())
    {
        let optimized = match optimize(&module, &map, cx.label, &list) {
            Ok((m, _)) => m,
            Err(e) => {
                cx.fail(tf.kind_line, format!("differential `{list}`: {e}"));
                continue;
            }
        };
        if list == "pipeline" {
            let conclusive: Vec<_> = runs
                .iter()
                .filter(|(_, _, o, _)| !INCONCLUSIVE.contains(&o[0].as_str()))
                .cloned()
                .collect();
            check_native(
                cx,
                &optimized,
                func,
                &conclusive,
                "the `pipeline`-optimized module",
                &|b| Some(b.saturating_mul(2).saturating_add(16)),
            );
        }
        for (case, spec, original, counts) in &runs {
            if INCONCLUSIVE.contains(&original[0].as_str()) {
                continue;
            }
            let budget = counts.fuel_used.saturating_mul(2).saturating_add(16);
            let (after, opt_counts) =
                execute(cx, case.anchor_line(), &optimized, func, spec, Some(budget));
            // Never worse (the oracle's rule): on a returning run, no more loads + stores.
            let worse = (original[0].starts_with("outcome: return") && &after == original)
                .then(|| {
                    crate::oracle::pessimization(
                        (counts.loads, counts.stores),
                        (opt_counts.loads, opt_counts.stores),
                    )
                })
                .flatten();
            if let Some((_, detail)) = worse {
                cx.fail(
                    case.anchor_line(),
                    format!(
                        "after `{list}` pessimization on input `{}`:\n  {}\n  optimized module:\n{}",
                        case.spec,
                        detail.replace('\n', "\n  "),
                        ir::print::print_module(&optimized)
                    ),
                );
            }
            if &after != original {
                let mut msg = format!(
                    "after `{list}` the behaviour differs on input `{}`",
                    case.spec
                );
                push_line_diff(&mut msg, original, &after);
                msg.push_str(&format!(
                    "\n  optimized module:\n{}",
                    ir::print::print_module(&optimized)
                ));
                cx.fail(case.anchor_line(), msg);
            }
        }
    }
}

fn check_opt(cx: &mut Ctx, tf: &TestFile, list: &str) {
    let Some((module, map, func)) = load(cx, tf) else {
        return;
    };
    let (optimized, stats) = match optimize(&module, &map, cx.label, list) {
        Ok(done) => done,
        Err(e) => return cx.fail(tf.kind_line, e),
    };
    check_stats(cx, tf, &stats);
    let printed = ir::print::print_module(&optimized);
    let check_failures = match_checks(&printed, &tf.checks);
    if !check_failures.is_empty() {
        let mut msg = check_failures.join("\n");
        msg.push_str(&format!("\n  optimized module:\n{printed}"));
        cx.fail(tf.kind_line, msg);
    }
    for case in tf
        .cases
        .iter()
        .filter(|c| !c.input_lines.is_empty() || !c.expect.is_empty())
    {
        let Some((spec, actual, _)) =
            run_expected(cx, tf, case, &module, func, "behaviour of the original")
        else {
            continue;
        };
        let (after, _) = execute(cx, case.anchor_line(), &optimized, func, &spec, tf.fuel);
        if cx.bless {
            if after != actual {
                cx.fail(
                    case.anchor_line(),
                    format!(
                        "the optimized module behaves differently:\n  - {}\n  + {}",
                        actual.join("\n  - "),
                        after.join("\n  + ")
                    ),
                );
            }
        } else {
            compare_expectation(cx, case, &after, &format!("behaviour after `{list}`"));
        }
    }
}

fn check_peer(cx: &mut Ctx, tf: &TestFile, list: &str) {
    let Some((module, _, _)) = load(cx, tf) else {
        return;
    };
    let pm = match passes::PassManager::from_list(list) {
        Ok(pm) => pm,
        Err(e) => return cx.fail(tf.kind_line, format!("{e}")),
    };
    let report = match crate::peer::compare(&module, &pm) {
        Ok(r) => r,
        Err(e) => return cx.fail(tf.kind_line, format!("{e}")),
    };
    let actual = report.pin_line();
    if cx.bless {
        let old: Vec<usize> = tf.peer.iter().map(|p| p.line).collect();
        cx.edits.push(Edit::replace(
            &old,
            tf.kind_line,
            vec![format!("; peer: {actual}")],
        ));
        return;
    }
    match &tf.peer {
        None => cx.fail(
            tf.kind_line,
            format!("no `; peer:` line; the comparison gives `{actual}`"),
        ),
        Some(p) if p.value != actual => cx.fail(
            p.line,
            format!(
                "expected `{}`, got `{actual}`:\n{}",
                p.value,
                report.render(list)
            ),
        ),
        Some(_) => {}
    }
}

/// The `; stats:` lines of an opt test: each named counter has exactly its
/// value in `stats` (the run of the pass list), and every other counter of a
/// pass named there is 0.
fn check_stats(cx: &mut Ctx, tf: &TestFile, stats: &passes::Stats) {
    for st in &tf.stats {
        let got = stats.get(&st.value.pass, &st.value.rule);
        if got != st.value.count {
            cx.fail(
                st.line,
                format!(
                    "{}.{} is {got}, expected {}",
                    st.value.pass, st.value.rule, st.value.count
                ),
            );
        }
    }
    for (pass, rules) in &stats.passes() {
        if !tf.stats.iter().any(|s| s.value.pass == *pass) {
            continue;
        }
        for (rule, n) in rules {
            let listed = tf
                .stats
                .iter()
                .any(|s| s.value.pass == *pass && s.value.rule == *rule);
            if *n != 0 && !listed {
                cx.fail(
                    tf.kind_line,
                    format!("{pass}.{rule} is {n}, but no `; stats:` line expects it"),
                );
            }
        }
    }
}
