//! Random edits of a valid text, shared by the parser's property tests.

/// `text` with each edit `(at, kind, s)` applied in turn at character `at`
/// (modulo the length): kind 0 inserts `s`, 1 deletes three characters, 2
/// overwrites with `s`.
pub fn apply_edits(text: &str, edits: &[(usize, usize, String)]) -> String {
    let mut text: Vec<char> = text.chars().collect();
    for (at, kind, insert) in edits {
        let at = at % (text.len() + 1);
        match kind {
            0 => {
                text.splice(at..at, insert.chars());
            }
            1 => {
                let end = (at + 3).min(text.len());
                text.drain(at..end);
            }
            _ => {
                let end = (at + insert.chars().count()).min(text.len());
                text.splice(at..end, insert.chars());
            }
        }
    }
    text.into_iter().collect()
}
