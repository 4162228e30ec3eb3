//! Directive parsing: the `; name: value` comment lines that turn an IR module
//! into a test (see docs/filetests.md).
//!
//! Only whole-line comments whose first word is a known directive name followed
//! by `:` are directives; every other comment is left alone.

use std::fmt;

/// The names a directive may have.
pub const DIRECTIVE_NAMES: [&str; 13] = [
    "test",
    "func",
    "fuel",
    "input",
    "input+",
    "expect",
    "check",
    "not",
    "error",
    "passes",
    "check-asm",
    "peer",
    "stats",
];

/// What kind of test a file is (`; test: ...`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum TestKind {
    /// `; test: run`: run every input case, plus the per-pass differential check.
    Run,
    /// `; test: opt PASSLIST`: optimize, then match `; check:`/`; not:` lines.
    Opt(String),
    /// `; test: verify-error`: parses, but the verifier rejects it.
    VerifyError,
    /// `; test: parse-error`: the module does not parse.
    ParseError,
    /// `; test: input-error`: the module is fine, the input spec is not.
    InputError,
    /// `; test: peer PASSLIST`: loadstar's passes against LLVM's `opt -O2`
    /// (`crate::peer`); the `; peer:` line pins both access counts.
    Peer(String),
}

/// A value together with the 1-based line of the file it came from.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Located<T> {
    /// 1-based line number in the test file.
    pub line: usize,
    /// The value.
    pub value: T,
}

/// One `; check:` or `; not:` line of an opt test.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum CheckLine {
    /// `; check: TEXT`: a later output line must contain TEXT.
    Check(String),
    /// `; not: TEXT`: no output line may contain TEXT.
    Not(String),
}

/// One input case: an input spec and the expected behaviour on it.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Case {
    /// The lines of `; input:` and its `; input+:` continuations (empty for
    /// the implicit empty-input case).
    pub input_lines: Vec<usize>,
    /// The input spec text (continuations joined with a space).
    pub spec: String,
    /// The `; expect:` values (`outcome: ...`, `trace: ...`, `heap: ...`).
    pub expect: Vec<Located<String>>,
}

impl Case {
    /// The line to name in messages about this case (its `; input:` line, or
    /// its first expectation for the implicit case, or 0).
    pub fn anchor_line(&self) -> usize {
        self.input_lines
            .first()
            .copied()
            .or_else(|| self.expect.first().map(|e| e.line))
            .unwrap_or(0)
    }

    /// The expected three lines, if the case has a complete expectation.
    pub fn expected(&self) -> Option<[&str; 3]> {
        match self.expect.as_slice() {
            [o, t, h] => Some([o.value.as_str(), t.value.as_str(), h.value.as_str()]),
            _ => None,
        }
    }
}

/// Everything the directives of one test file say.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TestFile {
    /// The kind of test.
    pub kind: TestKind,
    /// The line of the `; test:` directive.
    pub kind_line: usize,
    /// `; func: @f` without the `@`.
    pub func: Option<String>,
    /// `; fuel: N`.
    pub fuel: Option<u64>,
    /// The input cases, in file order (never empty: no `; input:` means one
    /// case with empty input).
    pub cases: Vec<Case>,
    /// `; check:` / `; not:` lines, in order.
    pub checks: Vec<Located<CheckLine>>,
    /// `; error:` lines, in order.
    pub errors: Vec<Located<String>>,
    /// `; passes: LIST[#SEED]` lines: extra plans (a peephole seed after `#`)
    /// a run test's differential check runs besides every pass and the pipeline,
    /// e.g. the exact plan of a sweep finding.
    pub plans: Vec<String>,
    /// `; check-asm:` lines of a run test, in order (patterns over the
    /// function's machine code; see `filetest::asm`).
    pub asm_checks: Vec<Located<String>>,
    /// `; peer: loadstar N, llvm M` of a peer test: the loads + stores each keeps.
    pub peer: Option<Located<String>>,
    /// `; stats: PASS.RULE = N` lines of an opt test: the counters
    /// `loadstar opt --emit stats` reports (every other counter of a pass
    /// named here must be 0).
    pub stats: Vec<Located<StatLine>>,
}

/// One `; stats: PASS.RULE = N` line.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct StatLine {
    /// The pass (`lse`).
    pub pass: String,
    /// The counter (`loads_forwarded_local`).
    pub rule: String,
    /// Its expected value.
    pub count: u64,
}

/// Parse `PASS.RULE = N`.
fn parse_stat(value: &str) -> Option<StatLine> {
    let (name, count) = value.split_once('=')?;
    let (pass, rule) = name.trim().split_once('.')?;
    Some(StatLine {
        pass: pass.to_string(),
        rule: rule.to_string(),
        count: count.trim().parse().ok()?,
    })
}

/// A malformed directive.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DirectiveError {
    /// 1-based line of the problem (0 when it concerns the whole file).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DirectiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The three prefixes of an expectation, in order.
pub const EXPECT_PREFIXES: [&str; 3] = ["outcome:", "trace:", "heap:"];

/// Split one line into a directive name and value, if it is a directive.
pub fn split_directive(line: &str) -> Option<(&'static str, &str)> {
    let rest = line.trim_start().strip_prefix(';')?.trim_start();
    let colon = rest.find(':')?;
    let name = DIRECTIVE_NAMES
        .iter()
        .copied()
        .find(|&n| n == &rest[..colon])?;
    Some((name, rest[colon + 1..].trim()))
}

/// Parse the directives of a test file.
pub fn parse_directives(text: &str) -> Result<TestFile, DirectiveError> {
    let mut kind: Option<(TestKind, usize)> = None;
    let mut func = None;
    let mut fuel = None;
    let mut cases: Vec<Case> = Vec::new();
    let mut checks = Vec::new();
    let mut errors = Vec::new();
    let mut plans = Vec::new();
    let mut asm_checks = Vec::new();
    let mut peer: Option<Located<String>> = None;
    let mut stats = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let Some((name, value)) = split_directive(raw) else {
            continue;
        };
        let err = |message: String| DirectiveError { line, message };
        match name {
            "test" => {
                if kind.is_some() {
                    return Err(err("a second `; test:` directive".into()));
                }
                kind = Some((parse_kind(value).map_err(err)?, line));
            }
            "func" => {
                let f = value
                    .strip_prefix('@')
                    .ok_or_else(|| err(format!("`; func:` wants `@name`, found `{value}`")))?;
                func = Some(f.to_string());
            }
            "fuel" => {
                fuel = Some(
                    value
                        .parse::<u64>()
                        .map_err(|_| err(format!("`; fuel:` wants a number, found `{value}`")))?,
                );
            }
            "input" => cases.push(Case {
                input_lines: vec![line],
                spec: value.to_string(),
                expect: Vec::new(),
            }),
            "input+" => match cases.last_mut() {
                Some(c) if !c.input_lines.is_empty() && c.expect.is_empty() => {
                    c.input_lines.push(line);
                    c.spec.push(' ');
                    c.spec.push_str(value);
                }
                _ => return Err(err("`; input+:` must continue an `; input:` line".into())),
            },
            "expect" => {
                if cases.is_empty() {
                    cases.push(Case::default());
                }
                let case = cases.last_mut().expect("just ensured");
                let k = case.expect.len();
                if k >= 3 {
                    return Err(err(
                        "a fourth `; expect:` line for one input (want outcome, trace, heap)"
                            .into(),
                    ));
                }
                if !value.starts_with(EXPECT_PREFIXES[k]) {
                    return Err(err(format!(
                        "expectation line {} of this input must start with `{}`",
                        k + 1,
                        EXPECT_PREFIXES[k]
                    )));
                }
                case.expect.push(Located {
                    line,
                    value: value.to_string(),
                });
            }
            "check" => checks.push(Located {
                line,
                value: CheckLine::Check(value.to_string()),
            }),
            "not" => checks.push(Located {
                line,
                value: CheckLine::Not(value.to_string()),
            }),
            "error" => errors.push(Located {
                line,
                value: value.to_string(),
            }),
            "passes" => plans.push(value.to_string()),
            "check-asm" => asm_checks.push(Located {
                line,
                value: value.to_string(),
            }),
            "stats" => match parse_stat(value) {
                Some(st) => stats.push(Located { line, value: st }),
                None => {
                    return Err(err(format!(
                        "`; stats:` wants PASS.RULE = N, found `{value}`"
                    )))
                }
            },
            "peer" if peer.is_some() => {
                return Err(err("a second `; peer:` line".into()));
            }
            "peer" => {
                peer = Some(Located {
                    line,
                    value: value.to_string(),
                })
            }
            _ => unreachable!("split_directive only returns known names"),
        }
    }
    let (kind, kind_line) = kind.ok_or(DirectiveError {
        line: 0,
        message: "no `; test:` directive".into(),
    })?;
    for c in &cases {
        if !c.expect.is_empty() && c.expect.len() != 3 {
            return Err(DirectiveError {
                line: c.anchor_line(),
                message: "an input needs all three `; expect:` lines (outcome, trace, heap)".into(),
            });
        }
    }
    if cases.is_empty() {
        cases.push(Case::default());
    }
    Ok(TestFile {
        kind,
        kind_line,
        func,
        fuel,
        cases,
        checks,
        errors,
        plans,
        asm_checks,
        peer,
        stats,
    })
}

fn parse_kind(value: &str) -> Result<TestKind, String> {
    let (word, rest) = match value.split_once(char::is_whitespace) {
        Some((w, r)) => (w, r.trim()),
        None => (value, ""),
    };
    let plain = |k: TestKind| {
        if rest.is_empty() {
            Ok(k)
        } else {
            Err(format!(
                "`; test: {word}` takes no arguments, found `{rest}`"
            ))
        }
    };
    match word {
        "run" => plain(TestKind::Run),
        "verify-error" => plain(TestKind::VerifyError),
        "parse-error" => plain(TestKind::ParseError),
        "input-error" => plain(TestKind::InputError),
        "opt" if !rest.is_empty() => Ok(TestKind::Opt(rest.replace(' ', ""))),
        "opt" => Err("`; test: opt` needs a pass list, e.g. `; test: opt dce`".into()),
        "peer" if !rest.is_empty() => Ok(TestKind::Peer(rest.replace(' ', ""))),
        "peer" => Err("`; test: peer` needs a pass list, e.g. `; test: peer pipeline`".into()),
        _ => Err(format!(
            "unknown test kind `{word}` (want run, opt, peer, verify-error, parse-error or input-error)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_only_known_directives_on_comment_lines() {
        assert_eq!(split_directive("; test: run"), Some(("test", "run")));
        assert_eq!(
            split_directive("   ;input+:  q = p "),
            Some(("input+", "q = p"))
        );
        assert_eq!(
            split_directive("; expect: trace:"),
            Some(("expect", "trace:"))
        );
        assert_eq!(split_directive("; Note: a plain comment"), None);
        assert_eq!(split_directive("  %a = add 1, 2 ; test: run"), None);
        assert_eq!(split_directive("; tests that x: y"), None);
    }

    #[test]
    fn groups_inputs_with_their_expectations() {
        let text = "\
; test: run
; fuel: 100
; input: p = Point{x: 1},
; input+: q = p
; expect: outcome: return 1
; expect: trace:
; expect: heap: #0 = Point{x: 1}
; input: p = null, q = null
; expect: outcome: trap null_deref
; expect: trace:
; expect: heap:
func @main() {
entry:
  ret
}
";
        let tf = parse_directives(text).unwrap();
        assert_eq!(tf.kind, TestKind::Run);
        assert_eq!(tf.fuel, Some(100));
        assert_eq!(tf.cases.len(), 2);
        assert_eq!(tf.cases[0].spec, "p = Point{x: 1}, q = p");
        assert_eq!(tf.cases[0].input_lines, vec![3, 4]);
        assert_eq!(
            tf.cases[0].expected(),
            Some(["outcome: return 1", "trace:", "heap: #0 = Point{x: 1}"])
        );
        assert_eq!(tf.cases[1].anchor_line(), 8);
        assert_eq!(tf.cases[1].expect[0].line, 9);
    }

    #[test]
    fn no_input_means_one_empty_case() {
        let tf = parse_directives(
            "; test: run\n; expect: outcome: return 0\n; expect: trace:\n; expect: heap:\n",
        )
        .unwrap();
        assert_eq!(tf.cases.len(), 1);
        assert!(tf.cases[0].input_lines.is_empty());
        assert_eq!(tf.cases[0].spec, "");
        let tf = parse_directives("; test: run\n").unwrap();
        assert_eq!(tf.cases.len(), 1);
        assert!(tf.cases[0].expected().is_none());
    }

    #[test]
    fn parses_kinds_checks_and_errors() {
        let tf = parse_directives(
            "; test: opt dce, lse\n; check: a\n; not: b\n; check: c\n; func: @f\n",
        )
        .unwrap();
        assert_eq!(tf.kind, TestKind::Opt("dce,lse".into()));
        assert_eq!(tf.func.as_deref(), Some("f"));
        assert_eq!(
            tf.checks
                .iter()
                .map(|c| c.value.clone())
                .collect::<Vec<_>>(),
            vec![
                CheckLine::Check("a".into()),
                CheckLine::Not("b".into()),
                CheckLine::Check("c".into())
            ]
        );
        let tf = parse_directives("; test: parse-error\n; error: 3:4: unknown value").unwrap();
        assert_eq!(tf.kind, TestKind::ParseError);
        assert_eq!(tf.errors[0].value, "3:4: unknown value");
        assert_eq!(tf.errors[0].line, 2);
    }

    #[test]
    fn rejects_malformed_directives() {
        let e = |t: &str| parse_directives(t).unwrap_err();
        assert_eq!(e("; func: main\n; test: run\n").line, 1);
        assert_eq!(e("\n").line, 0);
        assert!(e("; test: sprint\n").message.contains("unknown test kind"));
        assert!(e("; test: opt\n").message.contains("pass list"));
        assert!(e("; test: run\n; test: run\n").message.contains("second"));
        assert_eq!(e("; test: run\n; fuel: lots\n").line, 2);
        assert_eq!(e("; test: run\n; input+: x = 1\n").line, 2);
        assert_eq!(e("; test: run\n; expect: trace:\n").line, 2);
        assert!(e("; test: run\n; input: \n; expect: outcome: return 1\n")
            .message
            .contains("all three"));
        let four = "; test: run\n; expect: outcome: x\n; expect: trace:\n; expect: heap:\n; expect: heap:\n";
        assert_eq!(e(four).line, 5);
    }
}
