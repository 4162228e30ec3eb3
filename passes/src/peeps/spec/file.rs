//! Rule files (`*.rule`, e.g. `smt/broken-rules/`): rules in the table's
//! syntax, one block per rule of four lines `name: N`, `pattern: P`,
//! `condition: C` and `rewrite: R`, blocks separated by blank lines; `;`
//! starts a comment line. Errors carry the file's line and column.

use super::{parse_rule, RuleSpec};

/// Read every rule of `text`; errors are `LINE:COLUMN: message`.
pub fn parse_rule_file(text: &str) -> Result<Vec<RuleSpec>, String> {
    let mut out = Vec::new();
    let mut block: Vec<(usize, &str)> = Vec::new();
    for (k, line) in text.lines().enumerate().chain([(usize::MAX - 1, "")]) {
        let t = line.trim();
        if t.starts_with(';') {
            continue;
        }
        if t.is_empty() {
            if !block.is_empty() {
                out.push(parse_block(&block)?);
                block.clear();
            }
            continue;
        }
        block.push((k + 1, line));
    }
    if out.is_empty() {
        return Err("1:1: no rule in the file".to_string());
    }
    Ok(out)
}

fn parse_block(lines: &[(usize, &str)]) -> Result<RuleSpec, String> {
    const KEYS: [&str; 4] = ["name", "pattern", "condition", "rewrite"];
    let mut found: [Option<(&str, (usize, usize))>; 4] = [None; 4];
    for &(n, line) in lines {
        let Some((key, rest)) = line.split_once(':') else {
            return Err(format!(
                "{n}:1: expected `KEY: TEXT` (name, pattern, condition, rewrite)"
            ));
        };
        let Some(k) = KEYS.iter().position(|&x| x == key.trim()) else {
            return Err(format!("{n}:1: unknown key `{}`", key.trim()));
        };
        if found[k].is_some() {
            return Err(format!("{n}:1: `{}` given twice", KEYS[k]));
        }
        let col = key.len() + 2 + (rest.len() - rest.trim_start().len());
        found[k] = Some((rest.trim(), (n, col)));
    }
    let first = lines[0].0;
    let get =
        |k: usize| found[k].ok_or_else(|| format!("{first}:1: the rule has no `{}`", KEYS[k]));
    let name = get(0)?.0;
    parse_rule(name, [get(1)?, get(2)?, get(3)?]).map_err(|(m, (l, c))| format!("{l}:{c}: {m}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_comments_and_errors() {
        let text = "; a comment\nname: a\npattern: (add ?x 0)\ncondition: true\nrewrite: ?x\n\nname: b\npattern: (sub ?x ?x)\ncondition: true\nrewrite: 0\n";
        let rules = parse_rule_file(text).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[1].name, "b");
        let bad = "name: a\npattern: (add ?x 0\ncondition: true\nrewrite: ?x\n";
        assert_eq!(parse_rule_file(bad).unwrap_err(), "2:10: unclosed `(`");
        assert!(parse_rule_file("name: a\npattern: (add ?x 0)\n")
            .unwrap_err()
            .contains("no `condition`"));
        assert!(parse_rule_file("").is_err());
    }
}
