//! The peephole pass (`peeps`): rules kept as data ([`rules`]) applied by a
//! worklist engine to a fixed point, with a seeded pseudo-random pull
//! (`loadstar opt --seed N`), distant dependencies (`add_dep`), CFG cleanup
//! after branches fold, and a check of the fixed-point invariant.

mod block_edges;
mod block_phis;
mod branch_folds;
pub mod cfg_cleanup;
mod cfg_state;
mod deps;
mod diamonds;
pub mod engine;
pub mod rule;
pub mod rules;
mod scratch;
pub mod spec;
pub mod worklist;

pub use engine::{run_engine, CheckMode, EngineOptions, EngineReport};
pub use rule::{Change, MatchCtx, Opnd, Rule};
pub use rules::{rules, rules_for};

use crate::manager::Pass;
use crate::stats::{CounterId, Stats};
use ir::{Function, Module};

/// The environment variable that turns the fixed-point check on (`1`), off
/// (`0`), or on after every step (`step`).
pub const CHECK_ENV: &str = "LOADSTAR_CHECK_FIXPOINT";

/// The `peeps` pass.
#[derive(Clone, Debug)]
pub struct Peeps {
    /// Seed of the worklist order.
    pub seed: u64,
    /// When to check the fixed-point invariant.
    pub check: CheckMode,
    /// Test hook: drop the dependencies the named rule registers.
    pub drop_deps_of: Option<&'static str>,
}

/// The check mode from `LOADSTAR_CHECK_FIXPOINT`, else on in debug builds.
pub fn default_check_mode() -> CheckMode {
    match std::env::var(CHECK_ENV).as_deref() {
        Ok("0") | Ok("off") => CheckMode::Off,
        Ok("step") => CheckMode::EveryStep,
        Ok(_) => CheckMode::FixedPoint,
        Err(_) if cfg!(debug_assertions) => CheckMode::FixedPoint,
        Err(_) => CheckMode::Off,
    }
}

impl Peeps {
    /// The pass with worklist seed `seed` and the default check mode.
    pub fn new(seed: u64) -> Peeps {
        Peeps::with_check(seed, default_check_mode())
    }

    /// The pass with worklist seed `seed` and check mode `check` (the
    /// environment is not read).
    pub fn with_check(seed: u64, check: CheckMode) -> Peeps {
        Peeps {
            seed,
            check,
            drop_deps_of: None,
        }
    }

    /// Run on one function; records rule counts in `stats`.
    pub fn run_function(
        &self,
        func: &mut Function,
        func_index: usize,
        stats: &mut Stats,
    ) -> Result<bool, String> {
        let opts = EngineOptions {
            seed: self
                .seed
                .wrapping_add((func_index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            check: self.check,
            drop_deps_of: self.drop_deps_of,
        };
        let report = run_engine(func, opts)?;
        if !report.changed() {
            return Ok(false);
        }
        /// The rules' counters, numbered once.
        static IDS: std::sync::LazyLock<Vec<CounterId>> = std::sync::LazyLock::new(|| {
            rules()
                .iter()
                .map(|r| CounterId::of("peeps", r.name))
                .collect()
        });
        for (&id, &n) in IDS.iter().zip(&report.fired) {
            if n > 0 {
                stats.add_counter(id, n);
            }
        }
        let mut add = |name: &'static str, n: u64| {
            if n > 0 {
                stats.add("peeps", name, n);
            }
        };
        add("cfg_blocks_removed", report.blocks_removed);
        add("cfg_blocks_merged", report.blocks_merged);
        add("empty_diamonds", report.empty_diamonds);
        add("equal_arms", report.equal_arms);
        add("equal_trapping_arms", report.equal_trapping_arms);
        add("decided_branches", report.decided_branches);
        Ok(true)
    }
}

impl Pass for Peeps {
    /// It rewrites function bodies only.
    fn changes_declarations(&self) -> bool {
        false
    }
    /// The engine runs each function until no rule applies and no branch
    /// folds (the fixed point [`CheckMode::FixedPoint`] checks), with a
    /// worklist seed fixed per function index: a second run finds nothing
    /// (unless a test drops dependencies, which leaves changes unfound).
    fn idempotent(&self) -> bool {
        self.drop_deps_of.is_none()
    }
    fn name(&self) -> &'static str {
        "peeps"
    }

    fn run(&self, module: &mut Module, stats: &mut Stats) -> bool {
        match self.run_checked(module, stats) {
            Ok(changed) => changed,
            Err(msg) => panic!("{msg}"),
        }
    }

    fn run_checked(&self, module: &mut Module, stats: &mut Stats) -> Result<bool, String> {
        crate::per_function::report_per_function();
        let mut changed = false;
        for (i, func) in module.funcs.iter_mut().enumerate() {
            if crate::per_function::skipped(i) {
                continue;
            }
            if crate::analyses::in_function(i, || self.run_function(func, i, stats))? {
                crate::per_function::report_changed(i);
                changed = true;
            }
        }
        Ok(changed)
    }
}
