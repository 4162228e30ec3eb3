//! Differential test of the x86-64 backend: on thousands of generated
//! programs (with aliased inputs), the native executor must behave exactly
//! like the interpreter — same outcome, trace, heap and fuel used — on the
//! original module and on the `pipeline`-optimized one, under the same limits,
//! with regalloc2's checker on and every register a call clobbers scrambled
//! after the call (harness mode).

use interp::{Config, Program};
use verify::gen::{generate_from_seed, GenConfig};
use verify::inputs::instantiate_all;

/// Check one module on its inputs; returns the first mismatch as text.
fn check(
    m: &ir::Module,
    func: ir::FuncId,
    inputs: &[ir::InputSpec],
    config: &Config,
    seed: u64,
) -> Option<String> {
    let native = match codegen::NativeProgram::with_options(
        m,
        codegen::CompileOptions {
            check_regalloc: true,
            listing: false,
            chaos: Some(seed),
            no_inline: false,
        },
    ) {
        Ok(n) => n,
        Err(e) => return Some(format!("the backend failed: {e}")),
    };
    let prog = Program::new(m);
    for (k, spec) in inputs.iter().enumerate() {
        let want = prog.run(func, spec, config);
        let got = native.run(func, spec, config);
        if got.behaviour != want.behaviour || got.fuel_used != want.fuel_used {
            return Some(format!(
                "input {k} `{}`:\ninterpreter (fuel {}):\n{}\nnative (fuel {}):\n{}",
                ir::print_input_spec(spec, m, m.func(func)),
                want.fuel_used,
                want.behaviour,
                got.fuel_used,
                got.behaviour
            ));
        }
    }
    None
}

fn sweep(seeds: std::ops::Range<u64>, cfg: &GenConfig) {
    let config = Config::with_fuel(20_000);
    let pipeline = passes::PassManager::from_list("pipeline").unwrap();
    let mut failures = Vec::new();
    for seed in seeds {
        let g = generate_from_seed(seed, cfg);
        let inputs = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        if let Some(msg) = check(&g.module, g.main, &inputs, &config, seed) {
            failures.push(format!(
                "seed {seed} (original):\n{msg}\n{}",
                ir::print_module(&g.module)
            ));
            continue;
        }
        let mut opt = g.module.clone();
        pipeline.run(&mut opt).unwrap();
        if let Some(msg) = check(&opt, g.main, &inputs, &config, seed) {
            failures.push(format!(
                "seed {seed} (pipeline):\n{msg}\n{}",
                ir::print_module(&opt)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches; the first:\n{}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn native_matches_the_interpreter_on_generated_programs() {
    sweep(0..2500, &GenConfig::default());
}

#[test]
fn native_matches_the_interpreter_on_larger_programs() {
    let cfg = GenConfig {
        target_insts: 150,
        max_depth: 3,
        helper: true,
        ..GenConfig::default()
    };
    sweep(10_000..10_500, &cfg);
}

#[test]
fn the_native_oracle_of_the_sweep_agrees_on_generated_programs() {
    use verify::oracle::{check_program, pass_plans, OracleConfig};
    let cfg = OracleConfig {
        native: true,
        ..OracleConfig::default()
    };
    let plans = pass_plans(&["lse", "gvn", "peeps", "dce"], 0, 1);
    let mut plans_run = 0;
    for seed in 20_000..20_150 {
        let g = generate_from_seed(seed, &GenConfig::default());
        let inputs = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let r = check_program(&g.module, g.main, &inputs, &plans, &cfg);
        assert!(
            r.findings.is_empty(),
            "seed {seed}: {}",
            r.findings[0].detail
        );
        plans_run += r.plans_run;
    }
    assert!(plans_run > 0);
}
