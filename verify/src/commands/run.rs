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
