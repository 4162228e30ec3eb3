//! Loading user files: read, parse, verify, and turn every problem into one
//! diagnostic that names the file, line and column.

use ir::verify::VerifyError;
use ir::{FuncId, Function, InputSpec, Module, SourceMap};
use std::fmt;

/// A problem with what the user gave us (exit status 2).
#[derive(Debug)]
pub struct Diagnostic(pub String);

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Diagnostic {}

/// A parsed and verified module with its source positions.
pub struct Loaded {
    /// The module.
    pub module: Module,
    /// Where its items came from.
    pub source_map: SourceMap,
    /// The file name as given.
    pub file: String,
    /// The file's text.
    pub text: String,
}

/// Read `path`, parse it and verify it.
pub fn load_file(path: &str) -> Result<Loaded, Diagnostic> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Diagnostic(format!("{path}: error: cannot read file: {e}")))?;
    load_text(&text, path)
}

/// Parse and verify `text`, naming it `file` in diagnostics.
pub fn load_text(text: &str, file: &str) -> Result<Loaded, Diagnostic> {
    // Each function is verified as soon as it is parsed (while it is in the
    // cache); the errors are those of parsing and then verifying.
    let (module, source_map) = ir::parse_verified(text, file).map_err(|e| match e {
        ir::LoadError::Parse(e) => Diagnostic(e.to_string()),
        ir::LoadError::Verify(errors, map) => Diagnostic(format_verify_errors(&errors, &map, file)),
    })?;
    Ok(Loaded {
        module,
        source_map,
        file: file.to_string(),
        text: text.to_string(),
    })
}

/// One line per verifier error, each `file:line:col: error: ...` when the position is known.
pub fn format_verify_errors(errors: &[VerifyError], map: &SourceMap, file: &str) -> String {
    verify_error_lines(errors, map, file).join("\n")
}

/// The verifier's errors as `file:line:col: error: ...` lines, positioned at
/// the instruction (or else the function) each is about.
pub fn verify_error_lines(errors: &[VerifyError], map: &SourceMap, file: &str) -> Vec<String> {
    errors
        .iter()
        .map(|e| {
            let pos = e.func.and_then(|f| {
                e.inst
                    .and_then(|i| map.inst_pos(f, i))
                    .or_else(|| map.funcs.get(&f).copied())
            });
            match pos {
                Some(p) => format!("{file}:{p}: error: {e}"),
                None => format!("{file}: error: {e}"),
            }
        })
        .collect()
}

/// The function `--func` names (with or without `@`), else `@main`, else the first one.
pub fn select_function(
    module: &Module,
    name: Option<&str>,
    file: &str,
) -> Result<FuncId, Diagnostic> {
    match name {
        Some(n) => {
            let bare = n.strip_prefix('@').unwrap_or(n);
            module.func_by_name(bare).ok_or_else(|| {
                Diagnostic(format!("{file}: error: no function @{bare} in this module"))
            })
        }
        None => module
            .func_by_name("main")
            .or_else(|| (!module.funcs.is_empty()).then(|| FuncId::new(0)))
            .ok_or_else(|| {
                Diagnostic(format!("{file}: error: the module has no functions to run"))
            }),
    }
}

/// Parse an input spec given on the command line (labelled `<--input>` in errors).
pub fn parse_inputs(spec: &str, module: &Module, func: &Function) -> Result<InputSpec, Diagnostic> {
    ir::input_text::parse_input_spec(spec, "<--input>", module, func)
        .map_err(|e| Diagnostic(e.to_string()))
}
