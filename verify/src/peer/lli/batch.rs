//! Generated programs queued for one `lli` process (`loadstar peer
//! --generated N --lli`, `loadstar sweep --oracles lli`): the process start
//! and the JIT compilation of the runtime are paid once per batch.

use super::{check, Case, LliError, LliTally};
use crate::oracle::Finding;
use interp::Config;
use ir::{FuncId, InputSpec, Module};
use serde::Serialize;

/// Programs per `lli` process.
pub const BATCH: usize = 32;

/// One queued program: its seed, module, function and inputs.
type Queued = (u64, Module, FuncId, Vec<InputSpec>);

/// Programs waiting for one `lli` run and what the runs so far showed.
pub struct LliBatcher {
    cfg: Config,
    o2: bool,
    pending: Vec<Queued>,
    /// The counts so far (case indices are not kept: findings carry the programs).
    pub tally: LliTally,
}

impl LliBatcher {
    /// A batcher running the interpreter and `lli` with the limits of
    /// `cfg` (`o2`: `lli` runs `opt -O2`'s output, see [`super::check_expected`]).
    pub fn new(cfg: Config, o2: bool) -> LliBatcher {
        LliBatcher {
            cfg,
            o2,
            pending: Vec::new(),
            tally: LliTally::default(),
        }
    }

    /// Queue one program; a full batch runs at once and its disagreements
    /// come back as findings (none while the batch fills).
    pub fn push(
        &mut self,
        seed: u64,
        module: Module,
        func: FuncId,
        inputs: Vec<InputSpec>,
    ) -> Result<Vec<Finding>, LliError> {
        self.pending.push((seed, module, func, inputs));
        if self.pending.len() >= BATCH {
            return self.flush();
        }
        Ok(Vec::new())
    }

    /// Run every queued program; the disagreements as `mismatch-lli` findings.
    pub fn flush(&mut self) -> Result<Vec<Finding>, LliError> {
        let batch = std::mem::take(&mut self.pending);
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let cases: Vec<Case<'_>> = batch
            .iter()
            .map(|(_, module, func, inputs)| Case {
                module,
                func: *func,
                inputs,
            })
            .collect();
        let mut t = check(&cases, &self.cfg, self.o2)?;
        let findings = t
            .disagreements
            .iter()
            .map(|d| {
                let mut f = d.finding(&cases[d.case], self.cfg.fuel);
                f.seed = Some(batch[d.case].0);
                f
            })
            .collect();
        t.disagreements.clear();
        self.tally.merge(t, 0);
        Ok(findings)
    }
}

/// The counts of a tally, as the sweep's report shows them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LliSummary {
    /// Programs run.
    pub programs: u64,
    /// Inputs compared.
    pub compared: u64,
    /// Inputs where `lli` and the interpreter agree.
    pub agreed: u64,
    /// Inputs where they disagree (each a `mismatch-lli` finding).
    pub disagreed: u64,
    /// Inputs skipped (inconclusive in the interpreter).
    pub skipped: u64,
    /// `lli` processes started.
    pub starts: u64,
    /// Environment steps taken through the parent.
    pub steps: u64,
    /// Compared inputs that end in a trap.
    pub traps: u64,
}

impl LliSummary {
    /// Add a batcher's tally.
    pub fn add(&mut self, t: &LliTally) {
        self.programs += t.programs;
        self.compared += t.compared;
        self.agreed += t.agreed;
        self.disagreed += t.compared - t.agreed;
        self.skipped += t.skipped;
        self.starts += t.starts;
        self.steps += t.steps;
        self.traps += t.traps;
    }

    /// The summary line.
    pub fn render(&self) -> String {
        format!(
            "programs {}, inputs compared {} ({} trapping), agreed {}, disagreed {}, skipped (inconclusive in the interpreter) {}, lli processes {}, environment steps {}",
            self.programs,
            self.compared,
            self.traps,
            self.agreed,
            self.disagreed,
            self.skipped,
            self.starts,
            self.steps
        )
    }
}
