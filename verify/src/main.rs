//! The `loadstar` command line (see docs and CLI.md): exit 0 on success, 1 on a
//! finding, 2 on bad usage, bad input or an internal error.

use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;
use verify::commands::opt::{opt, Emit};
use verify::commands::run::{run, run_checking_effects, RunOptions};

#[derive(Parser)]
#[command(
    name = "loadstar",
    version,
    about = "An optimizing middle end for a managed-memory SSA IR, and the machinery that proves it right"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one function on inputs and print its observable behaviour.
    Run {
        /// The IR module.
        file: String,
        /// The function to run (default `@main`, else the first).
        #[arg(long)]
        func: Option<String>,
        /// Inputs in the syntax of IR.md §7, e.g. 'p = Point{x: 1}, q = p, n = 5'.
        #[arg(long, default_value = "")]
        input: String,
        /// Optimize first with these passes (comma-separated).
        #[arg(long)]
        passes: Option<String>,
        /// Fuel budget: taken branches and calls.
        #[arg(long)]
        fuel: Option<u64>,
        /// Check every memory access against the declared effects (IR.md §8);
        /// violations are printed after the behaviour and make the exit status 1.
        #[arg(long)]
        check_effects: bool,
    },
    /// Optimize a module and print the result.
    Opt {
        /// The IR module.
        file: String,
        /// Passes to run (comma-separated): lse, peeps, gvn, dce, pipeline.
        #[arg(long)]
        passes: String,
        /// What to print.
        #[arg(long, value_enum, default_value_t = Emit::Ir)]
        emit: Emit,
        /// Seed of the peephole worklist order (same seed, same result).
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
}

/// `run --check-effects`: the behaviour, then every violation; exit 1 if any.
fn run_with_effect_check(opts: &RunOptions) -> ExitCode {
    match run_checking_effects(opts) {
        Ok((behaviour, violations)) => {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{}", behaviour.trim_end());
            for v in &violations {
                let _ = writeln!(stdout, "{v}");
            }
            if violations.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            file,
            func,
            input,
            passes,
            fuel,
            check_effects,
        } => {
            let opts = RunOptions {
                file,
                func,
                input,
                passes,
                fuel,
            };
            if check_effects {
                return run_with_effect_check(&opts);
            }
            run(&opts)
        }
        Command::Opt {
            file,
            passes,
            emit,
            seed,
        } => opt(&file, &passes, emit, seed),
    };
    match result {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(out.as_bytes());
            if !out.ends_with('\n') {
                let _ = stdout.write_all(b"\n");
            }
            ExitCode::SUCCESS
        }
        Err(diag) => {
            eprintln!("{diag}");
            ExitCode::from(2)
        }
    }
}
