//! The tokenizer shared by the IR text format and the input-spec text.
//!
//! Produces a vector of positioned tokens (1-based line and column, counted in
//! characters). Comments run from `;` to the end of the line. Integer literals
//! (decimal, `0x` hex, with an optional leading `-`) are checked to fit in an
//! `i64` here, so every later stage sees plain numbers.

use crate::error::{ParseError, Pos};
use std::fmt;

/// What a token is; names borrow their text from the source.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tok<'s> {
    /// An identifier or keyword: `[A-Za-z_][A-Za-z0-9_]*`.
    Ident(&'s str),
    /// A value name `%ident` or `%N`, without the `%`.
    Local(&'s str),
    /// A global, extern or function name `@ident`, without the `@`.
    Global(&'s str),
    /// An integer literal that fits in an `i64`.
    Int(i64),
    /// One of `{ } ( ) [ ] , : = .`.
    Punct(char),
    /// `->`.
    Arrow,
    /// The end of the text.
    Eof,
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "'{s}'"),
            Tok::Local(s) => write!(f, "'%{s}'"),
            Tok::Global(s) => write!(f, "'@{s}'"),
            Tok::Int(i) => write!(f, "'{i}'"),
            Tok::Punct(c) => write!(f, "'{c}'"),
            Tok::Arrow => write!(f, "'->'"),
            Tok::Eof => write!(f, "the end of the input"),
        }
    }
}

/// A token with its position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Token<'s> {
    /// What it is.
    pub tok: Tok<'s>,
    /// Where it starts.
    pub pos: Pos,
    /// True when no other token precedes it on its line.
    pub line_start: bool,
}

/// True for characters that may start an identifier.
fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

/// True for characters that may continue an identifier.
fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Which bytes continue an identifier (`[A-Za-z0-9_]`), as a table.
static IDENT_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_';
        b += 1;
    }
    t
};

/// True when `s` is a valid identifier (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if is_ident_start(c)) && chars.all(is_ident_char)
}

/// True when `s` is a valid value name (without `%`): an identifier or digits.
pub fn is_value_name(s: &str) -> bool {
    is_ident(s) || (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
}

/// Lexes over the bytes of the text; the column counts characters (a UTF-8
/// continuation byte does not advance it), so positions are those of a
/// character-by-character scan.
struct Lexer<'s, 'f> {
    src: &'s str,
    bytes: &'s [u8],
    i: usize,
    line: u32,
    col: u32,
    file: &'f str,
    line_has_token: bool,
}

impl<'s, 'f> Lexer<'s, 'f> {
    /// A lexer at the start of `src` (line 1, column 1).
    fn new(src: &'s str, file: &'f str) -> Self {
        Lexer {
            src,
            bytes: src.as_bytes(),
            i: 0,
            line: 1,
            col: 1,
            file,
            line_has_token: false,
        }
    }

    /// The byte `ahead` places on, as a char when ASCII (names, numbers and
    /// punctuation are ASCII; any other byte maps to a non-matching `'\u{80}'`).
    fn peek(&self, ahead: usize) -> Option<char> {
        self.bytes
            .get(self.i + ahead)
            .map(|&b| if b.is_ascii() { b as char } else { '\u{80}' })
    }

    /// The whole character at the current position.
    fn peek_char(&self) -> Option<char> {
        self.src.get(self.i..).and_then(|s| s.chars().next())
    }

    /// Step over one character.
    fn bump(&mut self) {
        let Some(c) = self.peek_char() else { return };
        self.i += c.len_utf8();
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.col = 1;
            self.line_has_token = false;
        } else {
            self.col = self.col.saturating_add(1);
        }
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn error(&self, pos: Pos, message: String) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            pos,
            message,
        }
    }

    /// Consume the run of ASCII characters satisfying `pred` and return it.
    fn take_while(&mut self, pred: impl Fn(char) -> bool) -> &'s str {
        let start = self.i;
        while let Some(&b) = self.bytes.get(self.i) {
            if !b.is_ascii() || !pred(b as char) {
                break;
            }
            self.i += 1;
        }
        // Only ASCII bytes that are not newlines were taken.
        self.col = self
            .col
            .saturating_add(u32::try_from(self.i - start).unwrap_or(u32::MAX));
        &self.src[start..self.i]
    }

    /// Consume the run of identifier characters (`[A-Za-z0-9_]*`) and return it.
    #[inline]
    fn ident_run(&mut self) -> &'s str {
        let start = self.i;
        let rest = &self.bytes[start..];
        let len = rest
            .iter()
            .position(|&b| !IDENT_BYTE[usize::from(b)])
            .unwrap_or(rest.len());
        self.i = start + len;
        // Only ASCII bytes that are not newlines were taken.
        self.col = self
            .col
            .saturating_add(u32::try_from(len).unwrap_or(u32::MAX));
        &self.src[start..self.i]
    }

    /// Skip whitespace and comments.
    fn skip_trivia(&mut self) {
        while let Some(&b) = self.bytes.get(self.i) {
            if b == b';' {
                while let Some(&b) = self.bytes.get(self.i) {
                    if b == b'\n' {
                        break;
                    }
                    // Count characters: continuation bytes do not move the column.
                    if b & 0xC0 != 0x80 {
                        self.col = self.col.saturating_add(1);
                    }
                    self.i += 1;
                }
            } else if b == b'\n' {
                self.i += 1;
                self.line = self.line.saturating_add(1);
                self.col = 1;
                self.line_has_token = false;
            } else if b == b' ' || b == b'\t' || b == b'\r' {
                self.i += 1;
                self.col = self.col.saturating_add(1);
            } else if b.is_ascii_graphic()
                || !matches!(self.peek_char(), Some(c) if c.is_whitespace())
            {
                // A printable ASCII byte (the start of nearly every token) is
                // never whitespace: no character decoding for it.
                break;
            } else {
                self.bump();
            }
        }
    }

    /// Lex a number starting at the current position (after an optional `-` already consumed).
    fn number(&mut self, start: Pos, negative: bool) -> Result<Tok<'s>, ParseError> {
        let hex = self.peek(0) == Some('0') && matches!(self.peek(1), Some('x') | Some('X'));
        let (digits, radix) = if hex {
            self.bump();
            self.bump();
            (self.take_while(|c| c.is_ascii_hexdigit()), 16)
        } else {
            (self.take_while(|c| c.is_ascii_digit()), 10)
        };
        let rest = self.take_while(is_ident_char);
        let sign = if negative { "-" } else { "" };
        let prefix = if hex { "0x" } else { "" };
        if digits.is_empty() || !rest.is_empty() {
            return Err(self.error(
                start,
                format!("malformed integer literal '{sign}{prefix}{digits}{rest}'"),
            ));
        }
        let out_of_range = || {
            self.error(
                start,
                format!(
                    "integer literal '{sign}{prefix}{digits}' does not fit in i64 \
                     (the range is -9223372036854775808 to 9223372036854775807)"
                ),
            )
        };
        // The magnitude is checked against i128 before negating: a cast would
        // wrap a magnitude of 128 bits into a small (wrong) number.
        let magnitude = u128::from_str_radix(digits, radix).map_err(|_| out_of_range())?;
        let magnitude = i128::try_from(magnitude).map_err(|_| out_of_range())?;
        let value = if negative { -magnitude } else { magnitude };
        i64::try_from(value)
            .map(Tok::Int)
            .map_err(|_| out_of_range())
    }

    fn next_token(&mut self) -> Result<Token<'s>, ParseError> {
        self.skip_trivia();
        let pos = self.pos();
        let line_start = !self.line_has_token;
        self.line_has_token = true;
        let Some(c) = self.peek(0) else {
            return Ok(Token {
                tok: Tok::Eof,
                pos,
                line_start,
            });
        };
        let tok = match c {
            c if is_ident_start(c) => Tok::Ident(self.ident_run()),
            c if c.is_ascii_digit() => self.number(pos, false)?,
            '-' => {
                self.bump();
                match self.peek(0) {
                    Some('>') => {
                        self.bump();
                        Tok::Arrow
                    }
                    Some(d) if d.is_ascii_digit() => self.number(pos, true)?,
                    _ => {
                        return Err(self.error(pos, "expected a digit or '>' after '-'".to_string()))
                    }
                }
            }
            '%' => {
                // The sigil: one ASCII byte.
                self.i += 1;
                self.col = self.col.saturating_add(1);
                let name = self.ident_run();
                if name.is_empty() {
                    return Err(self.error(pos, "expected a value name after '%'".to_string()));
                }
                // The run holds only identifier characters: it is a value name
                // when it starts like an identifier or is all digits.
                let first = name.as_bytes()[0];
                if first.is_ascii_digit() && !name.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(self.error(
                        pos,
                        format!(
                            "malformed value name '%{name}': expected an identifier or a number"
                        ),
                    ));
                }
                Tok::Local(name)
            }
            '@' => {
                // The sigil: one ASCII byte.
                self.i += 1;
                self.col = self.col.saturating_add(1);
                let name = self.ident_run();
                if name.as_bytes().first().is_none_or(|b| b.is_ascii_digit()) {
                    return Err(self.error(
                        pos,
                        format!("expected an identifier after '@', found '@{name}'"),
                    ));
                }
                Tok::Global(name)
            }
            '{' | '}' | '(' | ')' | '[' | ']' | ',' | ':' | '=' | '.' => {
                // One ASCII byte, not a newline.
                self.i += 1;
                self.col = self.col.saturating_add(1);
                Tok::Punct(c)
            }
            _ => {
                let other = self.peek_char().unwrap_or('\u{80}');
                return Err(self.error(pos, format!("unexpected character {other:?}")));
            }
        };
        Ok(Token {
            tok,
            pos,
            line_start,
        })
    }
}

/// Split `src` into tokens; the last token is always [`Tok::Eof`].
pub fn tokenize<'s>(src: &'s str, file: &str) -> Result<Vec<Token<'s>>, ParseError> {
    let mut lexer = Lexer::new(src, file);
    // IR text averages well over 4 bytes per token: reserve once instead of
    // growing (and copying) a vector of millions of tokens.
    let mut out = Vec::with_capacity(src.len() / 4 + 1);
    loop {
        let t = lexer.next_token()?;
        let eof = t.tok == Tok::Eof;
        out.push(t);
        if eof {
            return Ok(out);
        }
    }
}

/// A read position in the token stream, with the error helpers both parsers
/// use. Tokens are lexed on demand with one token of lookahead beyond the
/// current one, so a large text never becomes a vector of tokens.
///
/// A lexical error anywhere in the text wins over any parse error, as if the
/// whole text had been tokenized first: the first lexical error is kept (the
/// stream then reads as ended), and [`Cursor::finish`] reports it.
pub(crate) struct Cursor<'a> {
    lexer: Lexer<'a, 'a>,
    /// The current token and the next one.
    look: [Token<'a>; 2],
    /// The first lexical error met.
    lex_error: Option<ParseError>,
    /// The file label errors carry.
    pub file: &'a str,
}

impl<'a> Cursor<'a> {
    /// Start reading `src` at its first token.
    pub fn new(src: &'a str, file: &'a str) -> Cursor<'a> {
        let eof = Token {
            tok: Tok::Eof,
            pos: Pos { line: 1, col: 1 },
            line_start: true,
        };
        let mut c = Cursor {
            lexer: Lexer::new(src, file),
            look: [eof, eof],
            lex_error: None,
            file,
        };
        c.look[0] = c.lex();
        c.look[1] = c.lex();
        c
    }

    /// The next token from the lexer (the end once the text or a lexical error is reached).
    fn lex(&mut self) -> Token<'a> {
        match self.lexer.next_token() {
            Ok(t) => t,
            Err(e) => {
                let pos = e.pos;
                self.lex_error.get_or_insert(e);
                // Park the lexer at the end so every later token is the end.
                self.lexer.i = self.lexer.bytes.len();
                Token {
                    tok: Tok::Eof,
                    pos,
                    line_start: true,
                }
            }
        }
    }

    /// The parse's result, unless the text has a lexical error (checked
    /// through to the end of the text): then that error.
    pub fn finish<T>(&mut self, result: Result<T, ParseError>) -> Result<T, ParseError> {
        while self.lex_error.is_none() && self.look[1].tok != Tok::Eof {
            self.look[1] = self.lex();
        }
        match self.lex_error.take() {
            Some(e) => Err(e),
            None => result,
        }
    }

    /// The number of lines of the text (an upper bound on its instructions).
    pub fn line_count(&self) -> usize {
        self.lexer.bytes.iter().filter(|&&b| b == b'\n').count() + 1
    }

    /// The current token.
    pub fn peek(&self) -> &Token<'a> {
        &self.look[0]
    }

    /// The token after the current one (`n` is 0 or 1; the end repeats).
    pub fn peek_at(&self, n: usize) -> &Token<'a> {
        &self.look[n.min(1)]
    }

    /// Consume and return the current token (the end token is never consumed).
    pub fn next(&mut self) -> Token<'a> {
        let t = self.look[0];
        if t.tok != Tok::Eof {
            self.look[0] = self.look[1];
            if self.look[1].tok != Tok::Eof {
                self.look[1] = self.lex();
            }
        }
        t
    }

    /// An error at `pos`.
    pub fn error_at(&self, pos: Pos, message: String) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            pos,
            message,
        }
    }

    /// An error at the current token: `expected {what}, found {token}`.
    pub fn expected(&self, what: &str) -> ParseError {
        let t = self.peek();
        self.error_at(t.pos, format!("expected {what}, found {}", t.tok))
    }

    /// True (and consumed) when the current token is punctuation `c`.
    pub fn eat_punct(&mut self, c: char) -> bool {
        if self.peek().tok == Tok::Punct(c) {
            self.next();
            true
        } else {
            false
        }
    }

    /// Consume punctuation `c` or fail with `expected '{c}' {context}`.
    pub fn expect_punct(&mut self, c: char, context: &str) -> Result<Pos, ParseError> {
        self.expect_punct_with(c, || context.to_string())
    }

    /// [`Cursor::expect_punct`] with a context built only when it fails (the
    /// hot paths of the parser format no message on success).
    pub fn expect_punct_with(
        &mut self,
        c: char,
        context: impl FnOnce() -> String,
    ) -> Result<Pos, ParseError> {
        let pos = self.peek().pos;
        if self.eat_punct(c) {
            Ok(pos)
        } else {
            Err(self.expected(format!("'{c}' {}", context()).trim_end()))
        }
    }

    /// True (and consumed) when the current token is identifier `word`.
    pub fn eat_word(&mut self, word: &str) -> bool {
        if matches!(self.peek().tok, Tok::Ident(s) if s == word) {
            self.next();
            true
        } else {
            false
        }
    }

    /// Consume an identifier or fail with `expected {what}`.
    pub fn expect_ident(&mut self, what: &str) -> Result<(&'a str, Pos), ParseError> {
        match self.peek().tok {
            Tok::Ident(s) => Ok((s, self.next().pos)),
            _ => Err(self.expected(what)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok<'_>> {
        tokenize(src, "t")
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn literals_in_every_notation() {
        assert_eq!(
            toks("5 -3 0x40 -0x10 -9223372036854775808"),
            vec![
                Tok::Int(5),
                Tok::Int(-3),
                Tok::Int(64),
                Tok::Int(-16),
                Tok::Int(i64::MIN),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn out_of_range_literals_are_errors() {
        for src in [
            "9223372036854775808",
            "-9223372036854775809",
            "0x8000000000000000",
            // Magnitudes of 128 bits and more: these once wrapped to small numbers.
            "-0xfffffffffffffffffffffffffffffffb",
            "0xfffffffffffffffffffffffffffffffb",
            "-0x80000000000000000000000000000000",
            "0x80000000000000000000000000000000",
            "-0x7fffffffffffffffffffffffffffffff",
            "-340282366920938463463374607431768211455",
            "1000000000000000000000000000000000000000000",
        ] {
            let e = tokenize(src, "t").unwrap_err();
            assert!(
                e.message.contains("does not fit in i64"),
                "{src}: {}",
                e.message
            );
            assert_eq!(e.pos, Pos { line: 1, col: 1 }, "{src}");
        }
    }

    #[test]
    fn names_arrows_and_comments() {
        assert_eq!(
            toks("%a %12 @g -> x ; comment %b\n."),
            vec![
                Tok::Local("a"),
                Tok::Local("12"),
                Tok::Global("g"),
                Tok::Arrow,
                Tok::Ident("x"),
                Tok::Punct('.'),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn positions_are_one_based_lines_and_columns() {
        let t = tokenize("a\n  b c", "t").unwrap();
        assert_eq!(t[1].pos, Pos { line: 2, col: 3 });
        assert!(t[1].line_start);
        assert!(!t[2].line_start);
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // Multi-byte characters in a comment and Unicode whitespace each move
        // the column by one, as in a character-by-character scan.
        let t = tokenize("a ; é€\n\u{a0}b\u{2003}c", "t").unwrap();
        assert_eq!(t[1].pos, Pos { line: 2, col: 2 });
        assert_eq!(t[2].pos, Pos { line: 2, col: 4 });
        let e = tokenize("; €€\n€ x é", "t").unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 1 });
        assert_eq!(e.message, "unexpected character '€'");
        let e = tokenize("x ; €\n  y é", "t").unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 5 });
        assert_eq!(e.message, "unexpected character 'é'");
    }

    #[test]
    fn a_lexical_error_anywhere_wins_over_parse_errors() {
        // The parse error on line 1 comes first, but the tokens are lexed on
        // demand: the cursor still finds the bad character on line 3.
        let e = crate::parse::parse_module("func @f( {\n}\n  #", "t").unwrap_err();
        assert_eq!(e.pos, Pos { line: 3, col: 3 });
        assert_eq!(e.message, "unexpected character '#'");
        let e = crate::parse::parse_module("func @f() {\n", "t").unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 1 });
    }

    #[test]
    fn malformed_names_are_errors() {
        assert!(tokenize("%1a", "t").is_err());
        assert!(tokenize("% x", "t").is_err());
        assert!(tokenize("@1", "t").is_err());
        assert!(tokenize("- 1", "t").is_err());
        assert!(tokenize("#", "t").is_err());
    }
}
