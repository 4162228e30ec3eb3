//! `loadstar run`: run one function on inputs and print its observable behaviour.

use crate::load::{load_file, parse_inputs, select_function, Diagnostic};
use passes::PassManager;

/// Options of `loadstar run`.
pub struct RunOptions {
    /// The IR file.
    pub file: String,
    /// The function to run (`@main` or the first when absent).
    pub func: Option<String>,
    /// The input spec (IR.md §7).
    pub input: String,
    /// Passes to run before executing.
    pub passes: Option<String>,
    /// Fuel budget.
    pub fuel: Option<u64>,
    /// Run the machine code of the x86-64 backend instead of the interpreter.
    pub native: bool,
    /// With `native`: strict memory (every object against a PROT_NONE guard
    /// page), run in a crash-isolated worker.
    pub strict: bool,
}

/// Run and return the three lines of observable behaviour.
pub fn run(opts: &RunOptions) -> Result<String, Diagnostic> {
    let prepared = prepare(opts)?;
    let input_err = |e: interp::InputError| Diagnostic(format!("<--input>: error: {e}"));
    let behaviour = if opts.native {
        codegen::NativeProgram::new(&prepared.module)
            .map_err(|e| Diagnostic(format!("{}: internal error: {e}", opts.file)))?
            .try_run(prepared.func, &prepared.inputs, &prepared.config)
            .map_err(input_err)?
            .behaviour
    } else {
        interp::Program::new(&prepared.module)
            .try_run(prepared.func, &prepared.inputs, &prepared.config)
            .map_err(input_err)?
            .behaviour
    };
    Ok(behaviour.to_string())
}

/// How long `run --native --strict` lets its worker run.
const STRICT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// `run --native --strict`: run the machine code on the strict heap in a
/// crash-isolated worker. `Ok(Ok(lines))` is the behaviour; `Ok(Err(report))`
/// says how the native code crashed (a fault on a guard page is the strict
/// heap catching an access outside an object), with the disassembly around
/// the faulting instruction.
pub fn run_strict(opts: &RunOptions) -> Result<Result<String, String>, Diagnostic> {
    let prepared = prepare(opts)?;
    let mut native = codegen::NativeProgram::with_options(
        &prepared.module,
        codegen::CompileOptions {
            listing: true,
            ..Default::default()
        },
    )
    .map_err(|e| Diagnostic(format!("{}: internal error: {e}", opts.file)))?;
    native.set_strict(true);
    let report = codegen::isolate::run_isolated(STRICT_TIMEOUT, |rep| {
        let text = match native.try_run(prepared.func, &prepared.inputs, &prepared.config) {
            Ok(e) => format!("ok{}", e.behaviour),
            Err(e) => format!("in{e}"),
        };
        rep.send(1, text.as_bytes());
    });
    if let Some(failure) = &report.failure {
        let mut text = format!("{}: native code crashed: {failure}\n", opts.file);
        if let codegen::isolate::Failure::Signal { rip, .. } = *failure {
            text.push_str(&native.disassembly_around(rip, 8));
        }
        return Ok(Err(text));
    }
    let sent = report
        .records
        .first()
        .map(|(_, p)| String::from_utf8_lossy(p).into_owned());
    match sent.as_deref().map(|t| t.split_at(2.min(t.len()))) {
        Some(("ok", b)) => Ok(Ok(b.to_string())),
        Some((_, e)) => Err(Diagnostic(format!("<--input>: error: {e}"))),
        None => Err(Diagnostic(format!(
            "{}: internal error: the worker sent nothing",
            opts.file
        ))),
    }
}

/// `run --check-effects`: run under the effect checker of
/// `interp::effect_check`; returns the three lines of observable behaviour
/// and one line per access outside an instruction's declared effects.
pub fn run_checking_effects(opts: &RunOptions) -> Result<(String, Vec<String>), Diagnostic> {
    let prepared = prepare(opts)?;
    let (exec, violations) = interp::run_checked(
        &interp::Program::new(&prepared.module),
        prepared.func,
        &prepared.inputs,
        &prepared.config,
    )
    .map_err(|e| Diagnostic(format!("<--input>: error: {e}")))?;
    let lines = violations
        .iter()
        .map(|v| format!("{}: {v}", opts.file))
        .collect();
    Ok((exec.behaviour.to_string(), lines))
}

/// A loaded, optionally optimized module with the function and inputs to run.
struct Prepared {
    module: ir::Module,
    func: ir::FuncId,
    inputs: ir::InputSpec,
    config: interp::Config,
}

fn prepare(opts: &RunOptions) -> Result<Prepared, Diagnostic> {
    let mut loaded = load_file(&opts.file)?;
    let fid = select_function(&loaded.module, opts.func.as_deref(), &opts.file)?;
    let inputs = parse_inputs(&opts.input, &loaded.module, loaded.module.func(fid))?;
    if let Some(list) = &opts.passes {
        let pm = PassManager::from_list(list).map_err(|e| Diagnostic(format!("error: {e}")))?;
        pm.run(&mut loaded.module)
            .map_err(|e| Diagnostic(format!("{}: internal error: {e}", opts.file)))?;
    }
    let mut config = interp::Config::default();
    if let Some(fuel) = opts.fuel {
        config.fuel = fuel;
    }
    Ok(Prepared {
        module: loaded.module,
        func: fid,
        inputs,
        config,
    })
}
