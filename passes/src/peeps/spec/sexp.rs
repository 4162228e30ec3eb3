//! S-expressions, the surface syntax of the rule language: atoms and
//! parenthesized lists, each with the line and column where it starts.

/// An s-expression with its position (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sexp {
    /// A word: `?x`, `#c`, `add|sub`, `-1`, `no-trap`.
    Atom(String, (usize, usize)),
    /// `( ... )`.
    List(Vec<Sexp>, (usize, usize)),
}

impl Sexp {
    /// Where it starts.
    pub fn pos(&self) -> (usize, usize) {
        match self {
            Sexp::Atom(_, p) | Sexp::List(_, p) => *p,
        }
    }
}

/// A syntax error: message and position within the parsed text.
pub type SexpError = (String, (usize, usize));

/// Parse exactly one s-expression from `text`; `start` is the position of
/// the text's first character (so errors point into the enclosing file).
pub fn parse_one(text: &str, start: (usize, usize)) -> Result<Sexp, SexpError> {
    let toks = tokenize(text, start);
    let mut i = 0;
    let e = parse_at(&toks, &mut i, start)?;
    if let Some((t, p)) = toks.get(i) {
        return Err((format!("unexpected `{t}` after the expression"), *p));
    }
    Ok(e)
}

fn tokenize(text: &str, (line0, col0): (usize, usize)) -> Vec<(String, (usize, usize))> {
    let mut out = Vec::new();
    let (mut line, mut col) = (line0, col0);
    let mut cur: Option<(String, (usize, usize))> = None;
    for ch in text.chars() {
        let pos = (line, col);
        if ch.is_whitespace() || ch == '(' || ch == ')' {
            if let Some(t) = cur.take() {
                out.push(t);
            }
            if !ch.is_whitespace() {
                out.push((ch.to_string(), pos));
            }
        } else {
            cur.get_or_insert_with(|| (String::new(), pos)).0.push(ch);
        }
        if ch == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    if let Some(t) = cur.take() {
        out.push(t);
    }
    out
}

fn parse_at(
    toks: &[(String, (usize, usize))],
    i: &mut usize,
    end: (usize, usize),
) -> Result<Sexp, SexpError> {
    let Some((t, p)) = toks.get(*i) else {
        return Err(("expected an expression".to_string(), end));
    };
    *i += 1;
    match t.as_str() {
        ")" => Err(("unexpected `)`".to_string(), *p)),
        "(" => {
            let mut items = Vec::new();
            loop {
                match toks.get(*i) {
                    None => return Err(("unclosed `(`".to_string(), *p)),
                    Some((t, _)) if t == ")" => {
                        *i += 1;
                        return Ok(Sexp::List(items, *p));
                    }
                    Some(_) => items.push(parse_at(toks, i, *p)?),
                }
            }
        }
        _ => Ok(Sexp::Atom(t.clone(), *p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_lists_and_positions() {
        let e = parse_one("(add (neg ?x)\n  #c)", (3, 5)).unwrap();
        let Sexp::List(items, p) = e else {
            panic!("not a list")
        };
        assert_eq!(p, (3, 5));
        assert_eq!(items.len(), 3);
        assert_eq!(items[2], Sexp::Atom("#c".into(), (4, 3)));
        assert!(parse_one("(add ?x", (1, 1)).is_err());
        assert!(parse_one("?x ?y", (1, 1)).is_err());
        assert!(parse_one(")", (1, 1)).is_err());
    }
}
