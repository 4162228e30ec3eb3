//! `loadstar opt`: optimize a module and print it (or what the passes did, or its CFG).

use crate::dot::module_to_dot;
use crate::load::{load_file, Diagnostic};
use passes::PassManager;

/// What `opt` prints.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// The optimized module as IR text (parses again).
    Ir,
    /// What each pass did, as JSON.
    Stats,
    /// The CFG of each function for graphviz.
    Dot,
    /// The x86-64 disassembly, each IR instruction as a comment above its code.
    Asm,
}

/// Optimize `file` with `passes` (peephole worklist seed `seed`) and render it as `emit` says.
pub fn opt(file: &str, passes: &str, emit: Emit, seed: u64) -> Result<String, Diagnostic> {
    let mut loaded = load_file(file)?;
    let pm = PassManager::from_list(passes)
        .map_err(|e| Diagnostic(format!("error: {e}")))?
        .with_seed(seed);
    let stats = pm
        .run(&mut loaded.module)
        .map_err(|e| Diagnostic(format!("{file}: internal error: {e}")))?;
    Ok(match emit {
        Emit::Ir => ir::print::print_module(&loaded.module),
        Emit::Stats => stats.to_json() + "\n",
        Emit::Dot => module_to_dot(&loaded.module),
        Emit::Asm => codegen::compile_with(
            &loaded.module,
            codegen::CompileOptions {
                check_regalloc: true,
                listing: true,
                chaos: None,
                no_inline: false,
            },
        )
        .map(|c| codegen::listing(&c))
        .map_err(|e| Diagnostic(format!("{file}: internal error: {e}")))?,
    })
}
