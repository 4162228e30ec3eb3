//! `; check-asm:` lines: the machine code of a run test's function, as
//! `loadstar opt --emit asm` prints it, pinned by substring or regex lines
//! matched in order (see docs/filetests.md).
//!
//! The listing is normalized so that pinned lines survive unrelated changes:
//! only the test's function is kept, code offsets are dropped, and an absolute
//! branch or call target becomes `@f+0xN` (N bytes into function `@f`) or
//! `stubs+0xN` (the trap stubs before the first function).

use super::directives::Located;
use regex::Regex;

/// A code offset and the function it starts (from the listing's `; func @f` comments).
struct FuncStart {
    name: String,
    at: u64,
}

/// The normalized listing of function `func` from a whole-module `listing`.
pub fn normalize(listing: &str, func: &str) -> Vec<String> {
    let parsed: Vec<(Option<u64>, &str)> = listing
        .lines()
        .map(|l| match l.split_once("  ") {
            Some((off, text)) if !off.is_empty() && !off.starts_with(' ') => {
                (u64::from_str_radix(off, 16).ok(), text.trim())
            }
            _ => (None, l.trim()),
        })
        .collect();
    let mut starts: Vec<FuncStart> = Vec::new();
    let mut pending: Option<&str> = None;
    for &(off, text) in &parsed {
        match off {
            None => {
                if let Some(name) = text.strip_prefix("; func @") {
                    pending = Some(name);
                }
            }
            Some(at) => {
                if let Some(name) = pending.take() {
                    starts.push(FuncStart {
                        name: name.to_string(),
                        at,
                    });
                }
            }
        }
    }
    let first = starts.first().map_or(u64::MAX, |s| s.at);
    let target = Regex::new(r"\b([0-9A-F]{16})h\b").expect("valid regex");
    let name_target = |abs: u64| -> String {
        match starts.iter().rev().find(|s| s.at <= abs) {
            Some(s) => format!("@{}+{:#x}", s.name, abs - s.at),
            None if abs < first => format!("stubs+{abs:#x}"),
            None => format!("{abs:#x}"),
        }
    };
    let header = format!("; func @{func}");
    let mut out = Vec::new();
    let mut inside = false;
    for &(off, text) in &parsed {
        if off.is_none() && text.starts_with("; func @") {
            inside = text == header;
            continue;
        }
        if !inside {
            continue;
        }
        let line = target.replace_all(text, |c: &regex::Captures| {
            name_target(u64::from_str_radix(&c[1], 16).unwrap_or(0))
        });
        out.push(line.into_owned());
    }
    out
}

/// One `; check-asm:` pattern: `re: REGEX`, or a substring.
enum Pattern {
    Sub(String),
    Re(Regex),
}

impl Pattern {
    fn new(text: &str) -> Result<Pattern, String> {
        match text.strip_prefix("re:") {
            Some(re) => Regex::new(re.trim())
                .map(Pattern::Re)
                .map_err(|e| format!("bad regex `{}`: {e}", re.trim())),
            None => Ok(Pattern::Sub(text.to_string())),
        }
    }

    fn matches(&self, line: &str) -> bool {
        match self {
            Pattern::Sub(s) => line.contains(s.as_str()),
            Pattern::Re(r) => r.is_match(line),
        }
    }
}

/// Match `checks` in order against `lines` (each must match a line after the
/// previous match); one message per failed check.
pub fn match_asm(lines: &[String], checks: &[Located<String>]) -> Vec<String> {
    let mut failures = Vec::new();
    let mut next = 0usize;
    for c in checks {
        let pat = match Pattern::new(&c.value) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("line {}: `; check-asm:` {e}", c.line));
                continue;
            }
        };
        match (next..lines.len()).find(|&i| pat.matches(&lines[i])) {
            Some(i) => next = i + 1,
            None => {
                let after = match next {
                    0 => "anywhere in the code".to_string(),
                    n => format!("after `{}`", lines[n - 1]),
                };
                failures.push(format!(
                    "line {}: `; check-asm: {}` matched no line {after}",
                    c.line, c.value
                ));
            }
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "    ; trap stubs\n000076  mov rax,1\n    ; func @main\n0000ff  push rbp\n    ; br %c, t, f\n000117  jb short 0000000000000076h\n00011c  jl short 0000000000000129h\n000129  call 0000000000000140h\n    ; func @g\n000140  ret\n";

    fn located(lines: &[&str]) -> Vec<Located<String>> {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| Located {
                line: i + 1,
                value: l.to_string(),
            })
            .collect()
    }

    #[test]
    fn keeps_one_function_and_names_targets() {
        assert_eq!(
            normalize(LISTING, "main"),
            [
                "push rbp",
                "; br %c, t, f",
                "jb short stubs+0x76",
                "jl short @main+0x2a",
                "call @g+0x0"
            ]
        );
        assert_eq!(normalize(LISTING, "g"), ["ret"]);
    }

    #[test]
    fn checks_match_in_order_by_substring_or_regex() {
        let lines = normalize(LISTING, "main");
        assert!(match_asm(
            &lines,
            &located(&["push", r"re: ^jl short @main\+0x[0-9a-f]+$"])
        )
        .is_empty());
        let f = match_asm(&lines, &located(&["jl", "jb"]));
        assert_eq!(f.len(), 1);
        assert!(
            f[0].contains("line 2") && f[0].contains("after `jl short"),
            "{f:?}"
        );
        assert_eq!(match_asm(&lines, &located(&["re: ("])).len(), 1);
    }
}
