//! The checked-in known-findings file (`.nightly/known-findings.txt`): one
//! failure signature per line, then at least two spaces, `#` and why it is
//! known. Lines that start with `#` and blank lines are ignored.

use std::collections::BTreeSet;

/// One signature of the known-findings file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KnownEntry {
    /// The failure signature (`passes|kind|part`, or `parse|message`).
    pub signature: String,
    /// Why it is known (the text after `#`).
    pub comment: String,
    /// Its 1-based line in the file.
    pub line: usize,
}

/// Parse the known-findings file `text` (named `file` in errors, which give
/// `file:line:column`).
pub fn parse_known(text: &str, file: &str) -> Result<Vec<KnownEntry>, String> {
    let mut out: Vec<KnownEntry> = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let at = |col: usize, msg: &str| format!("{file}:{}:{}: error: {msg}", i + 1, col + 1);
        let Some((sig, comment)) = split_comment(body) else {
            return Err(at(
                indent + body.len(),
                "a known signature needs a comment: `SIGNATURE  # why it is known`",
            ));
        };
        if !sig.contains('|') {
            return Err(at(
                indent,
                &format!("`{sig}` is not a failure signature (`passes|kind|part`)"),
            ));
        }
        if !seen.insert(sig.to_string()) {
            return Err(at(indent, &format!("`{sig}` is listed twice")));
        }
        out.push(KnownEntry {
            signature: sig.to_string(),
            comment: comment.to_string(),
            line: i + 1,
        });
    }
    Ok(out)
}

/// Split `SIGNATURE  # comment` at the first `#` preceded by two blanks (or a
/// tab): signatures hold single spaces and `#` (digits of panic messages
/// become `#`), never a `#` after two blanks. `None` without a comment.
fn split_comment(body: &str) -> Option<(&str, &str)> {
    let bytes = body.as_bytes();
    for (k, &b) in bytes.iter().enumerate() {
        if b != b'#' || k < 2 {
            continue;
        }
        let (p, q) = (bytes[k - 1], bytes[k - 2]);
        let blank = |c: u8| c == b' ' || c == b'\t';
        if p == b'\t' || (blank(p) && blank(q)) {
            let comment = body[k + 1..].trim();
            let sig = body[..k].trim_end();
            return (!comment.is_empty() && !sig.is_empty()).then_some((sig, comment));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_with_hashes_keep_them_and_comments_are_required() {
        let text = "# header\n\nlse|mismatch-heap|Node  # issue 3\n\
                    pipeline|panic|index # out of range\t# a panic, digits as #\n";
        let k = parse_known(text, "k.txt").unwrap();
        assert_eq!(k.len(), 2);
        assert_eq!(k[0].signature, "lse|mismatch-heap|Node");
        assert_eq!(k[0].comment, "issue 3");
        assert_eq!(k[0].line, 3);
        assert_eq!(k[1].signature, "pipeline|panic|index # out of range");
        let e = parse_known("lse|panic|x\n", "k.txt").unwrap_err();
        assert!(
            e.starts_with("k.txt:1:12: error: a known signature needs a comment"),
            "{e}"
        );
        let e = parse_known("  nonsense  # why\n", "k.txt").unwrap_err();
        assert!(e.starts_with("k.txt:1:3: error: `nonsense`"), "{e}");
        let e = parse_known("a|b|c  # x\na|b|c  # y\n", "k.txt").unwrap_err();
        assert!(
            e.starts_with("k.txt:2:1: error:") && e.contains("twice"),
            "{e}"
        );
    }
}
