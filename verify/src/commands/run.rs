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
}

/// Run and return the three lines of observable behaviour.
pub fn run(opts: &RunOptions) -> Result<String, Diagnostic> {
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
    let exec = interp::Program::new(&loaded.module)
        .try_run(fid, &inputs, &config)
        .map_err(|e| Diagnostic(format!("<--input>: error: {e}")))?;
    Ok(exec.behaviour.to_string())
}
