//! The parser of the IR text format (IR.md §1–§4).
//!
//! Two passes: [`syntax`] checks the shape of the text and builds a syntax tree;
//! [`resolve`] resolves names (forward references included), infers value types
//! and builds the [`Module`]. Every problem becomes a positioned [`ParseError`];
//! nothing here panics on any input.

pub(crate) mod ast;
mod intern;
mod resolve;
mod stream;
pub(crate) mod syntax;

use crate::error::ParseError;
use crate::lexer::Cursor;
use crate::module::Module;
use crate::source_map::SourceMap;
use crate::verify::VerifyError;

pub use syntax::MAX_DIMS;

/// Parse a module from `src`; `file` names the text in error messages and the source map.
pub fn parse_module(src: &str, file: &str) -> Result<(Module, SourceMap), ParseError> {
    let mut cursor = Cursor::new(src, file);
    let ast = syntax::parse_module_syntax(&mut cursor);
    let ast = cursor.finish(ast)?;
    resolve::resolve_module(&ast, file, |_, _| {})
}

/// Why [`parse_verified`] rejected a text.
#[derive(Debug)]
pub enum LoadError {
    /// The text does not parse.
    Parse(ParseError),
    /// The text parses but the module is ill-formed: the errors
    /// [`crate::verify_module`] reports, in its order, and the source map
    /// that places them.
    Verify(Vec<VerifyError>, SourceMap),
}

/// [`parse_module`] then [`crate::verify_module`], with the same results, but
/// each function is verified as soon as it is resolved, while it is still in
/// the cache (a parse error anywhere still wins over every verifier error).
///
/// A well-formed text is resolved while it is parsed, each function body
/// as soon as the `@` names it uses are declared, and verified right then,
/// while its syntax tree is still in the cache ([`stream`]). At any error
/// the text is parsed again as [`parse_module`] does, so that errors are
/// exactly those of before.
pub fn parse_verified(src: &str, file: &str) -> Result<(Module, SourceMap), LoadError> {
    if let Some(done) = parse_verified_streaming(src, file) {
        return Ok(done);
    }
    let mut cursor = Cursor::new(src, file);
    let ast = syntax::parse_module_syntax(&mut cursor);
    let ast = cursor.finish(ast).map_err(LoadError::Parse)?;
    crate::verify::verify_as_resolved(|check| resolve::resolve_module(&ast, file, check))
}

/// [`parse_verified`]'s way for a well-formed text: `None` on any error.
fn parse_verified_streaming(src: &str, file: &str) -> Option<(Module, SourceMap)> {
    let mut cursor = Cursor::new(src, file);
    crate::verify::verify_as_resolved(|check| {
        let mut stream = stream::Streaming::new(file, check);
        let parsed = syntax::parse_streaming(&mut cursor, |ast, event| stream.event(ast, event));
        cursor.finish(parsed)?;
        stream.finish()
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// What `parse_module` then `verify_module` give for a well-formed text.
    fn two_steps(src: &str) -> Option<(Module, SourceMap)> {
        let (m, map) = parse_module(src, "t.ir").ok()?;
        crate::verify_module(&m).ok()?;
        Some((m, map))
    }

    fn corpus(dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("corpus directory") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                corpus(&path, out);
            } else if path.extension().is_some_and(|e| e == "ir") {
                out.push(std::fs::read_to_string(&path).expect("readable"));
            }
        }
    }

    #[test]
    fn streaming_gives_the_module_and_map_of_two_steps_on_the_corpus() {
        let mut texts = Vec::new();
        corpus(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus"),
            &mut texts,
        );
        let (mut well_formed, mut streamed) = (0, 0);
        for text in &texts {
            let fast = parse_verified_streaming(text, "t.ir");
            let slow = two_steps(text);
            if fast.is_some() {
                assert_eq!(fast, slow, "{text}");
                streamed += 1;
            }
            well_formed += usize::from(slow.is_some());
        }
        // Nearly every well-formed file takes the streaming way (a type or
        // global named before its declaration does not).
        assert!(
            well_formed > 100 && streamed * 10 >= well_formed * 9,
            "{streamed} of {well_formed} streamed"
        );
    }

    #[test]
    fn bodies_wait_for_the_functions_and_globals_they_name() {
        // @a calls @c, declared two functions later; @b reads a global
        // declared after it; @c calls itself and @a.
        let src = "type T { x: i64 }\n\
                   func @a(%p: T) -> i64 {\nentry:\n  %r = call @c(%p, 1)\n  ret %r\n}\n\
                   func @b(%p: T) -> i64 {\nentry:\n  %g = load @g\n  store @g, 3\n  ret %g\n}\n\
                   global @g: i64\n\
                   func @c(%p: T, %n: i64) -> i64 {\nentry:\n  br %n, l, r\nl:\n  \
                   %m = call @c(%p, 0)\n  %k = call @a(%p)\n  ret %m\nr:\n  ret %n\n}\n";
        let fast = parse_verified_streaming(src, "t.ir");
        assert!(fast.is_some());
        assert_eq!(fast, two_steps(src));
        assert_eq!(parse_verified(src, "t.ir").ok(), two_steps(src));
    }

    #[test]
    fn what_streaming_cannot_resolve_is_parsed_again_whole() {
        // A type used before its declaration, an effect on a global declared
        // after the extern: well-formed, not streamed, the same result.
        let later_type = "func @f(%p: T) -> i64 {\nentry:\n  %x = load %p.x\n  ret %x\n}\n\
                          type T { x: i64 }\n";
        let later_global = "extern @e() writes(@g)\nglobal @g: i64\n\
                            func @f() {\nentry:\n  call @e()\n  ret\n}\n";
        for src in [later_type, later_global] {
            assert!(parse_verified_streaming(src, "t.ir").is_none(), "{src}");
            assert!(two_steps(src).is_some(), "{src}");
            assert_eq!(parse_verified(src, "t.ir").ok(), two_steps(src));
        }
        // A call of a function never declared: the error of before.
        let missing = "func @f() {\nentry:\n  call @nope()\n  ret\n}\n";
        assert!(parse_verified_streaming(missing, "t.ir").is_none());
        let Err(LoadError::Parse(e)) = parse_verified(missing, "t.ir") else {
            panic!("expected a parse error");
        };
        assert_eq!(Some(e), parse_module(missing, "t.ir").err());
    }
}
