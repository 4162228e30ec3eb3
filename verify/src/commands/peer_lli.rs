//! `loadstar peer --lli`: run the peer's translation with `lli-14` on the
//! oracle's inputs and compare with the interpreter ([`crate::peer::lli`]),
//! for one file or over generated programs.

use crate::gen::rng::hash_seq;
use crate::gen::{generate_from_seed, GenConfig};
use crate::inputs::instantiate_all;
use crate::load::{load_file, Diagnostic};
use crate::oracle::Finding;
use crate::oracle::OracleConfig;
use crate::peer::lli::batch::{LliBatcher, LliSummary};
use crate::peer::lli::{check, Case, LliError, LliTally};
use interp::Config;
use ir::{FuncId, InputSpec, Module};
use std::fmt::Write;
use std::path::Path;
use std::sync::Mutex;

/// Inputs per function, as the sweep's default.
pub const INPUTS: usize = 3;

/// The limits the oracle runs the interpreter with.
pub fn oracle_config() -> Config {
    let o = OracleConfig::default();
    crate::oracle::config(&o, o.fuel)
}

/// The inputs of function `f` of a file, from seed 0 (as `verify --generated`
/// derives them from a program's seed).
fn file_inputs(m: &Module, f: FuncId, n: usize) -> Vec<InputSpec> {
    instantiate_all(m, m.func(f), hash_seq(&[0, 1]), n)
}

/// The summary of a tally, and each disagreement (`names`: per case, what to
/// call it).
pub fn render(t: &LliTally, names: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "lli: cases {}, inputs compared {} ({} trapping), agreed {}, disagreed {}, skipped (inconclusive in the interpreter) {}, lli processes {}, environment steps {}",
        t.programs,
        t.compared,
        t.traps,
        t.agreed,
        t.disagreements.len(),
        t.skipped,
        t.starts,
        t.steps
    );
    for d in &t.disagreements {
        let lli = match &d.lli {
            Ok(b) => b.to_string(),
            Err(e) => e.clone(),
        };
        let _ = writeln!(
            out,
            "disagreement: {} input {}\n  interpreter:\n    {}\n  lli:\n    {}",
            names[d.case],
            d.input,
            d.interp.to_string().replace('\n', "\n    "),
            lli.replace('\n', "\n    ")
        );
    }
    out
}

/// The run cases of a `; test: run` file: its function and its inputs
/// (none for other files), and its fuel.
pub fn run_cases(
    text: &str,
    m: &Module,
    file: &str,
) -> Result<(Vec<InputSpec>, FuncId, Option<u64>), Diagnostic> {
    let none = (Vec::new(), FuncId::new(0), None);
    let Ok(tf) = crate::filetest::directives::parse_directives(text) else {
        return Ok(none);
    };
    if tf.kind != crate::filetest::directives::TestKind::Run {
        return Ok(none);
    }
    let name = tf.func.clone().unwrap_or_else(|| "main".to_string());
    let Some(f) = m.funcs.iter().position(|f| f.name == name) else {
        return Ok(none);
    };
    let func = FuncId::new(f);
    let specs = tf
        .cases
        .iter()
        .map(|c| {
            ir::input_text::parse_input_spec(&c.spec, "input", m, m.func(func))
                .map_err(|e| Diagnostic(format!("{file}: error: {e}")))
        })
        .collect::<Result<_, _>>()?;
    Ok((specs, func, tf.fuel))
}

/// `peer FILE --lli`: the file's own run cases (a `; test: run` file), then
/// every function on `inputs` instantiated inputs, with the interpreter's
/// default limits (the file's fuel); the tally and the names of its cases
/// (for [`render`]).
pub fn lli_file(
    file: &str,
    inputs: usize,
    o2: bool,
) -> Result<(LliTally, Vec<String>), Diagnostic> {
    let loaded = load_file(file)?;
    let m = &loaded.module;
    let text =
        std::fs::read_to_string(file).map_err(|e| Diagnostic(format!("{file}: error: {e}")))?;
    let (own, own_func, fuel) = run_cases(&text, m, file)?;
    let specs: Vec<Vec<InputSpec>> = (0..m.funcs.len())
        .map(|f| file_inputs(m, FuncId::new(f), inputs))
        .collect();
    let mut cases = vec![Case {
        module: m,
        func: own_func,
        inputs: &own,
    }];
    let mut names = vec![format!("@{} (the file's inputs)", m.func(own_func).name)];
    for (f, inputs) in specs.iter().enumerate() {
        cases.push(Case {
            module: m,
            func: FuncId::new(f),
            inputs,
        });
        names.push(format!("@{}", m.funcs[f].name));
    }
    let cfg = Config {
        fuel: fuel.unwrap_or(Config::default().fuel),
        ..Config::default()
    };
    let t = check(&cases, &cfg, o2).map_err(|e| Diagnostic(format!("{file}: {e}")))?;
    Ok((t, names))
}

/// `peer --generated N --lli`: programs `seed..seed+n` of about `size`
/// instructions, their `@main` on [`INPUTS`] inputs each, run in batches of
/// [`crate::peer::lli::batch::BATCH`] programs per `lli` process on `jobs`
/// threads; the counts and the disagreements (each also written to `out`
/// as a run test, `mismatch-lli-SEED.ir`).
pub fn lli_survey(
    n: u64,
    seed: u64,
    size: usize,
    (jobs, o2): (usize, bool),
    out: Option<&Path>,
) -> Result<(LliSummary, Vec<Finding>), LliError> {
    let gen = GenConfig {
        target_insts: size,
        ..GenConfig::default()
    };
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(|e| LliError::Io(e.to_string()))?;
    }
    let total = Mutex::new((LliSummary::default(), Vec::new()));
    super::threads::over_programs(
        n,
        jobs,
        || (LliBatcher::new(oracle_config(), o2), Vec::new()),
        |(batcher, found), k| {
            let g = generate_from_seed(seed + k, &gen);
            let f = g.module.func(g.main);
            let inputs = instantiate_all(&g.module, f, hash_seq(&[seed + k, 1]), INPUTS);
            found.extend(batcher.push(seed + k, g.module, g.main, inputs)?);
            Ok(())
        },
        |(mut batcher, mut found)| {
            found.extend(batcher.flush()?);
            let mut t = total.lock().unwrap();
            t.0.add(&batcher.tally);
            t.1.extend(found);
            Ok(())
        },
    )
    .map_err(|(_, e)| e)?;
    let (summary, mut found) = total.into_inner().unwrap();
    found.sort_by_key(|f| f.seed);
    if let Some(dir) = out {
        for f in &found {
            let name = format!("mismatch-lli-{}.ir", f.seed.unwrap_or_default());
            std::fs::write(dir.join(name), f.to_test_text())
                .map_err(|e| LliError::Io(e.to_string()))?;
        }
    }
    Ok((summary, found))
}

/// The survey's report: the counts, then each disagreement.
pub fn render_survey(summary: &LliSummary, found: &[Finding]) -> String {
    let mut out = format!("lli: {}\n", summary.render());
    for f in found {
        let _ = writeln!(
            out,
            "disagreement: seed {} ({})\n  {}",
            f.seed.unwrap_or_default(),
            f.part,
            f.detail.replace('\n', "\n  ")
        );
    }
    out
}
