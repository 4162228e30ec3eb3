//! Entry points of the cargo-fuzz targets (`fuzz/`): bytes → generator →
//! oracle → reducer, panicking with the printed reproducer on a finding; and
//! the parser/printer round trip on arbitrary text. It lives beside the
//! oracle, not in it: the reducer depends on the oracle, never the reverse.

use crate::gen::{generate, GenConfig};
use crate::inputs::instantiate_all;
use crate::oracle::{check_program, pass_plans, Finding, OracleConfig};
use crate::reduce::reduce;
use arbitrary::Unstructured;
use ir::{FuncId, InputSpec, Module};

/// The first line of an input in IR text mode. Without it, a program-checking
/// target's input is generator bytes ([`crate::gen::generate`]), which can
/// only spell the generator's own programs; with it, the rest is an IR text
/// test (`; func:`, `; fuel:` and `; input:` lines are used), so the text
/// corpus can seed the targets. The prefix is an IR comment: an input in this
/// mode is itself an IR file (`loadstar check` reads it as it is). A random
/// byte string starts with it with probability 2^-160.
pub const IR_PREFIX: &[u8] = b"; loadstar-fuzz: ir\n";

/// A fuzz input decoded into the program a target checks.
pub struct Decoded {
    /// The module (well-formed).
    pub module: Module,
    /// The function that runs.
    pub func: FuncId,
    /// The inputs it runs on.
    pub inputs: Vec<InputSpec>,
    /// The original run's fuel.
    pub fuel: u64,
    /// The seed of the random pass plans (and of the peephole order).
    pub seed: u64,
}

/// Decode a program-checking target's input: generator bytes, or IR text
/// after [`IR_PREFIX`]. `None` for text that does not parse or verify (the
/// target ignores it, as the parse target covers the parser).
pub fn decode(data: &[u8]) -> Option<Decoded> {
    match data.strip_prefix(IR_PREFIX) {
        Some(_) => decode_text(std::str::from_utf8(data).ok()?),
        None => {
            let mut u = Unstructured::new(data);
            let g = generate(&mut u, &GenConfig::default());
            let seed = u.arbitrary::<u64>().unwrap_or(0);
            let inputs = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
            Some(Decoded {
                module: g.module,
                func: g.main,
                inputs,
                fuel: OracleConfig::default().fuel,
                seed,
            })
        }
    }
}

/// IR text mode: the module, its `; func:` (else `@main`, else the first
/// function), its `; input:` lines that parse, three generated inputs, its
/// `; fuel:`; the seed is a hash of the text.
fn decode_text(text: &str) -> Option<Decoded> {
    let loaded = crate::load::load_text(text, "fuzz.ir").ok()?;
    let d = crate::commands::check::file_directives(text);
    let module = loaded.module;
    let func = crate::load::select_function(&module, d.func.as_deref(), "fuzz.ir").ok()?;
    let words: Vec<u64> = text
        .as_bytes()
        .chunks(8)
        .map(|c| c.iter().fold(0u64, |h, &b| (h << 8) | u64::from(b)))
        .collect();
    let seed = crate::gen::rng::hash_seq(&words);
    let f = module.func(func);
    let mut inputs: Vec<InputSpec> = d
        .inputs
        .iter()
        .filter_map(|i| i.parse(&module, f, "fuzz.ir").ok())
        .collect();
    inputs.extend(instantiate_all(&module, f, seed, 3));
    Some(Decoded {
        fuel: d.fuel.unwrap_or(OracleConfig::default().fuel),
        module,
        func,
        inputs,
        seed,
    })
}

/// Generate a program from `data` and check it against `passes` (names this
/// build lacks are skipped): the first finding, unreduced. The fuzz targets and
/// `loadstar repro` both go through here, so they cannot drift apart.
pub fn finding_from_bytes(data: &[u8], passes: &[&str]) -> Option<Finding> {
    finding_from_bytes_with(data, passes, &OracleConfig::default())
}

/// [`finding_from_bytes`] with the oracle configuration `cfg` (the `native`
/// target's is [`target_oracle`]).
pub fn finding_from_bytes_with(
    data: &[u8],
    passes: &[&str],
    cfg: &OracleConfig,
) -> Option<Finding> {
    let d = decode(data)?;
    let plans = pass_plans(passes, d.seed, 1);
    if plans.is_empty() {
        return None;
    }
    let cfg = OracleConfig {
        fuel: d.fuel,
        ..cfg.clone()
    };
    let r = check_program(&d.module, d.func, &d.inputs, &plans, &cfg);
    assert!(r.valid, "the decoded module is ill-formed");
    r.findings.into_iter().next()
}

/// The cargo-fuzz targets (`fuzz/fuzz_targets/`).
pub const TARGETS: &[&str] = &["lse", "gvn", "peeps", "pipeline", "native", "smt", "parse"];

/// The pass list a fuzz target checks (`lse`, `gvn`, `peeps`, `pipeline`), or
/// `None` for a name that is not a program-checking target.
pub fn target_passes(target: &str) -> Option<&'static [&'static str]> {
    match target {
        "lse" => Some(&["lse"]),
        "gvn" => Some(&["gvn"]),
        "peeps" => Some(&["peeps"]),
        "pipeline" | "native" | "smt" => Some(&["pipeline"]),
        _ => None,
    }
}

/// The oracle configuration of a fuzz target: `native` adds the native oracle
/// (x86-64 code of the original and of the `pipeline` output against the
/// interpreter), run in-process so that a fault is libFuzzer's crash report;
/// `smt` adds the SMT oracle, kept cheap per input ([`SMT_TARGET`]).
pub fn target_oracle(target: &str) -> OracleConfig {
    OracleConfig {
        native: target == "native",
        isolate: target != "native",
        smt: (target == "smt").then_some(SMT_TARGET),
        ..OracleConfig::default()
    }
}

/// The `smt` target's solver limits: one loop iteration, 300 ms per query
/// (a timeout is `unknown`, never a crash), so an input costs well under a
/// second.
pub const SMT_TARGET: smt::Options = smt::Options {
    unroll: 1,
    inline_depth: 2,
    timeout_ms: 300,
};

/// Generate a program from `data`, check it against `passes`, and panic with
/// the reduced reproducer if anything is found.
pub fn check_bytes(data: &[u8], passes: &[&str]) {
    check_bytes_with(data, passes, &OracleConfig::default())
}

/// [`check_bytes`] with the oracle configuration `cfg`.
pub fn check_bytes_with(data: &[u8], passes: &[&str], cfg: &OracleConfig) {
    if let Some(f) = finding_from_bytes_with(data, passes, cfg) {
        let f = reduce(f);
        panic!("{}\n{}", f.signature(), f.to_test_text());
    }
}

/// Parse arbitrary text; whatever parses must verify without panicking and
/// round-trip print → parse → print.
pub fn parse_roundtrip(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let fused = ir::parse_verified(text, "fuzz.ir");
    let (m, map) = match ir::parse_module(text, "fuzz.ir") {
        Ok(x) => x,
        Err(e) => {
            assert!(
                matches!(&fused, Err(ir::LoadError::Parse(f)) if *f == e),
                "parse_verified disagrees with parse_module: {e}"
            );
            return;
        }
    };
    // `parse_verified` (which resolves and verifies while it parses) gives
    // what parsing then verifying gives: the module and map, or the errors.
    match (ir::verify_module(&m), fused) {
        (Ok(()), Ok(fused)) => assert!(fused == (m.clone(), map), "parse_verified: another module"),
        (Err(e), Err(ir::LoadError::Verify(f, _))) => {
            assert_eq!(e, f, "parse_verified: other errors")
        }
        (v, _) => panic!(
            "parse_verified disagrees with verify_module ({})",
            v.is_ok()
        ),
    }
    let printed = ir::print_module(&m);
    let (m2, _) = match ir::parse_module(&printed, "printed.ir") {
        Ok(x) => x,
        Err(e) => panic!("printed module does not parse: {e}\n{printed}"),
    };
    let again = ir::print_module(&m2);
    assert_eq!(printed, again, "print → parse → print is not stable");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_roundtrip_accepts_garbage_and_valid_text() {
        parse_roundtrip(b"\xff\xfe");
        parse_roundtrip(b"func @main( -> {");
        parse_roundtrip(b"type T { x: i64 }\nfunc @main(%t: T) -> i64 {\nentry:\n  %a = load %t.x\n  ret %a\n}\n");
    }

    #[test]
    fn the_native_target_runs_the_native_oracle_in_process() {
        let cfg = target_oracle("native");
        assert!(cfg.native && !cfg.isolate);
        assert_eq!(target_passes("native"), Some(&["pipeline"][..]));
        assert!(!target_oracle("pipeline").native);
        for k in 0..30u8 {
            let data: Vec<u8> = (0..400u32)
                .map(|i| (i as u8).wrapping_mul(k).wrapping_add(3 * k))
                .collect();
            check_bytes_with(&data, &["pipeline"], &cfg);
        }
    }

    #[test]
    fn the_smt_target_runs_the_smt_oracle_on_the_pipeline() {
        let cfg = target_oracle("smt");
        assert_eq!(cfg.smt.map(|o| o.timeout_ms), Some(300));
        assert_eq!(target_passes("smt"), Some(&["pipeline"][..]));
        assert!(target_oracle("pipeline").smt.is_none());
        for k in 0..6u8 {
            let data: Vec<u8> = (0..400u32)
                .map(|i| (i as u8).wrapping_mul(k + 7).wrapping_add(5 * k))
                .collect();
            check_bytes_with(&data, &["pipeline"], &cfg);
        }
    }

    #[test]
    fn check_bytes_on_dce_is_quiet() {
        for k in 0..50u8 {
            let data: Vec<u8> = (0..400u32)
                .map(|i| (i as u8).wrapping_mul(k).wrapping_add(k))
                .collect();
            check_bytes(&data, &["dce", "gvn"]);
        }
    }
}
