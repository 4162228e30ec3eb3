//! Matching `; check:` / `; not:` lines against printed output.
//!
//! Checks match, in order, successive lines of the output by substring: each
//! check must match a line after the line the previous check matched. A `not`
//! must match no line at all.

use super::directives::{CheckLine, Located};

/// Match `checks` against `output`; returns one message per failed directive.
pub fn match_checks(output: &str, checks: &[Located<CheckLine>]) -> Vec<String> {
    let lines: Vec<&str> = output.lines().collect();
    let mut failures = Vec::new();
    let mut next = 0usize;
    for c in checks {
        match &c.value {
            CheckLine::Check(text) => {
                match (next..lines.len()).find(|&i| lines[i].contains(text.as_str())) {
                    Some(i) => next = i + 1,
                    None => {
                        let after = if next == 0 {
                            "anywhere in the output".to_string()
                        } else {
                            format!("after output line {next} (`{}`)", lines[next - 1].trim())
                        };
                        failures.push(format!(
                            "line {}: `; check: {text}` matched no line {after}",
                            c.line
                        ));
                    }
                }
            }
            CheckLine::Not(text) => {
                if let Some(i) = lines.iter().position(|l| l.contains(text.as_str())) {
                    failures.push(format!(
                        "line {}: `; not: {text}` matches output line {} (`{}`)",
                        c.line,
                        i + 1,
                        lines[i].trim()
                    ));
                }
            }
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(spec: &[(&str, &str)]) -> Vec<Located<CheckLine>> {
        spec.iter()
            .enumerate()
            .map(|(i, (k, t))| Located {
                line: i + 1,
                value: if *k == "check" {
                    CheckLine::Check(t.to_string())
                } else {
                    CheckLine::Not(t.to_string())
                },
            })
            .collect()
    }

    const OUT: &str = "func @main() {\nentry:\n  %a = add 1, 2\n  escape %a\n  ret\n}\n";

    #[test]
    fn checks_match_in_order() {
        let ok = checks(&[("check", "entry:"), ("check", "add"), ("check", "ret")]);
        assert!(match_checks(OUT, &ok).is_empty());
        let wrong_order = checks(&[("check", "escape"), ("check", "add")]);
        let f = match_checks(OUT, &wrong_order);
        assert_eq!(f.len(), 1);
        assert!(f[0].contains("line 2") && f[0].contains("after output line 4"));
    }

    #[test]
    fn a_check_cannot_reuse_the_previous_line() {
        let twice = checks(&[("check", "add"), ("check", "add")]);
        assert_eq!(match_checks(OUT, &twice).len(), 1);
        let two_on_one_line = checks(&[("check", "%a ="), ("check", "1, 2")]);
        assert_eq!(match_checks(OUT, &two_on_one_line).len(), 1);
    }

    #[test]
    fn not_matches_nowhere() {
        assert!(match_checks(OUT, &checks(&[("not", "load")])).is_empty());
        let f = match_checks(OUT, &checks(&[("check", "ret"), ("not", "add")]));
        assert_eq!(f.len(), 1);
        assert!(f[0].contains("output line 3"));
    }

    #[test]
    fn reports_every_failure() {
        let c = checks(&[("check", "nope"), ("not", "ret"), ("check", "entry:")]);
        assert_eq!(match_checks(OUT, &c).len(), 2);
    }
}
