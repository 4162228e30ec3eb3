//! Bless mode: rewrite a test file's expectation lines in place, leaving every
//! other byte (comments, the program, line endings) untouched.

use std::collections::{BTreeMap, BTreeSet};

/// One replacement: delete some lines, insert new directive lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Edit {
    /// 1-based lines to delete.
    pub delete: Vec<usize>,
    /// The new lines go before this 1-based line (`lines + 1` appends).
    pub insert_before: usize,
    /// The new lines, without line endings (e.g. `; expect: trace:`).
    pub lines: Vec<String>,
}

impl Edit {
    /// Replace the directive lines `old` (if any) by `new`; with no old lines,
    /// insert the new ones after line `after` (0 = the top of the file).
    pub fn replace(old: &[usize], after: usize, new: Vec<String>) -> Edit {
        Edit {
            delete: old.to_vec(),
            insert_before: old.first().copied().unwrap_or(after + 1),
            lines: new,
        }
    }
}

/// Apply `edits` to `text`. New lines take the indentation of the line they
/// replace (if any) and the file's line ending (`\r\n` if its first line has one).
pub fn apply_edits(text: &str, edits: &[Edit]) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let eol = if lines.first().is_some_and(|l| l.ends_with("\r\n")) {
        "\r\n"
    } else {
        "\n"
    };
    let deleted: BTreeSet<usize> = edits
        .iter()
        .flat_map(|e| e.delete.iter().copied())
        .collect();
    let mut inserts: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for e in edits {
        let indent: String = lines
            .get(e.insert_before.wrapping_sub(1))
            .filter(|_| e.delete.contains(&e.insert_before))
            .map(|l| l.chars().take_while(|c| *c == ' ' || *c == '\t').collect())
            .unwrap_or_default();
        inserts
            .entry(e.insert_before)
            .or_default()
            .extend(e.lines.iter().map(|l| format!("{indent}{l}{eol}")));
    }
    let mut out = String::with_capacity(text.len() + 64);
    for (i, line) in lines.iter().enumerate() {
        if let Some(new) = inserts.get(&(i + 1)) {
            new.iter().for_each(|l| out.push_str(l));
        }
        if !deleted.contains(&(i + 1)) {
            out.push_str(line);
        }
    }
    if let Some(new) = inserts.range(lines.len() + 1..).next().map(|(_, v)| v) {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(eol);
        }
        new.iter().for_each(|l| out.push_str(l));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_lines_keeping_everything_else() {
        let text = "; test: run\n; input: n = 1\n;  expect: outcome: return 9\n; expect: trace:\n; expect: heap:\nfunc @main(%n: i64) -> i64 { ; keep\n";
        let edit = Edit::replace(
            &[3, 4, 5],
            2,
            vec![
                "; expect: outcome: return 1".into(),
                "; expect: trace: 1".into(),
                "; expect: heap:".into(),
            ],
        );
        let out = apply_edits(text, &[edit]);
        assert_eq!(
            out,
            "; test: run\n; input: n = 1\n; expect: outcome: return 1\n; expect: trace: 1\n; expect: heap:\nfunc @main(%n: i64) -> i64 { ; keep\n"
        );
    }

    #[test]
    fn inserts_after_a_line_when_nothing_to_replace() {
        let text = "; test: run\n; input: n = 1\nfunc\n";
        let out = apply_edits(text, &[Edit::replace(&[], 2, vec!["; expect: x".into()])]);
        assert_eq!(out, "; test: run\n; input: n = 1\n; expect: x\nfunc\n");
        let out = apply_edits("a", &[Edit::replace(&[], 1, vec!["; b".into()])]);
        assert_eq!(out, "a\n; b\n");
    }

    #[test]
    fn keeps_crlf_and_indentation() {
        let text = "; test: parse-error\r\n  ; error: old\r\nx\r\n";
        let out = apply_edits(text, &[Edit::replace(&[2], 1, vec!["; error: new".into()])]);
        assert_eq!(out, "; test: parse-error\r\n  ; error: new\r\nx\r\n");
    }

    #[test]
    fn several_edits_apply_together() {
        let text = "1\n2\n3\n4\n";
        let out = apply_edits(
            text,
            &[
                Edit::replace(&[2], 0, vec!["b".into()]),
                Edit::replace(&[], 4, vec!["e".into()]),
                Edit::replace(&[], 0, vec!["0".into()]),
            ],
        );
        assert_eq!(out, "0\n1\nb\n3\n4\ne\n");
    }
}
