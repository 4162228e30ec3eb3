//! Crash isolation of the native oracle: generated code that faults becomes a
//! `native-crash` finding (signal, input, disassembly around the faulting
//! instruction), the checking process survives, and the next program runs.
//! The fault is planted by `codegen::Sabotage` (a test-only hook that
//! overwrites the first instruction of every function).

use verify::gen::{generate_from_seed, GenConfig};
use verify::inputs::instantiate_all;
use verify::oracle::{check_program, pass_plans, FindingKind, OracleConfig};

#[test]
fn a_faulting_program_is_a_native_crash_and_the_next_program_runs() {
    let plans = pass_plans(&["lse", "gvn"], 0, 1);
    let sabotaged = OracleConfig {
        native: true,
        sabotage: Some(codegen::Sabotage::Fault),
        ..OracleConfig::default()
    };
    let clean = OracleConfig {
        native: true,
        ..OracleConfig::default()
    };
    let mut crashes = 0;
    for seed in 30_000..30_012 {
        let g = generate_from_seed(seed, &GenConfig::default());
        let inputs = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let r = check_program(&g.module, g.main, &inputs, &plans, &sabotaged);
        if r.runs == r.inconclusive {
            continue;
        }
        assert_eq!(r.findings.len(), 1, "seed {seed}: one finding per program");
        let f = &r.findings[0];
        assert_eq!(
            f.kind,
            FindingKind::NativeCrash,
            "seed {seed}: {}",
            f.detail
        );
        assert_eq!(f.passes, "none", "the original's code crashes first");
        assert_eq!(f.part, "SIGSEGV");
        assert!(f.signature().contains("native-crash"));
        assert!(f.input.is_some(), "the input it crashed on is kept");
        assert!(
            f.detail.contains("=> ") && f.detail.contains("hlt"),
            "disassembly around the fault:\n{}",
            f.detail
        );
        crashes += 1;
        // The same program, undamaged, in the same (surviving) process.
        let r = check_program(&g.module, g.main, &inputs, &plans, &clean);
        assert!(r.findings.is_empty(), "seed {seed}: {:?}", r.findings);
    }
    assert!(crashes >= 6, "only {crashes} programs were conclusive");
}

#[test]
fn without_isolation_the_oracle_still_agrees_in_process() {
    let cfg = OracleConfig {
        native: true,
        isolate: false,
        ..OracleConfig::default()
    };
    let plans = pass_plans(&["pipeline"], 0, 1);
    for seed in 31_000..31_020 {
        let g = generate_from_seed(seed, &GenConfig::default());
        let inputs = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let r = check_program(&g.module, g.main, &inputs, &plans, &cfg);
        assert!(r.findings.is_empty(), "seed {seed}: {:?}", r.findings);
    }
}
