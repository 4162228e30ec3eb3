//! The counts of a comparison with LLVM over many programs (`loadstar peer
//! --generated`, `loadstar sweep --oracles peer`): who keeps fewer loads and
//! stores, the totals, and the seeds on either side.

use super::{ModulePeer, Standing};
use serde::Serialize;
use std::fmt::Write;

/// What a survey over generated programs saw.
#[derive(Clone, Default, Debug, Serialize)]
pub struct PeerSurvey {
    /// Programs compared.
    pub programs: u64,
    /// Programs where loadstar keeps fewer / the same / more accesses than LLVM.
    pub fewer: u64,
    /// See `fewer`.
    pub same: u64,
    /// See `fewer`: the missed optimizations.
    pub more: u64,
    /// Accesses in the originals, after loadstar, after LLVM (loads + stores).
    pub totals: [u64; 3],
    /// Loads loadstar keeps only for their trap (unused results).
    pub unused_loads: u64,
    /// Programs where LLVM keeps fewer, but would not if loadstar dropped its
    /// unused loads (turning each into a null/bounds check).
    pub more_only_unused: u64,
    /// Seeds of the programs where LLVM keeps fewer.
    #[serde(skip)]
    pub missed_seeds: Vec<u64>,
    /// Seeds of the programs where loadstar keeps fewer.
    #[serde(skip)]
    pub won_seeds: Vec<u64>,
}

impl PeerSurvey {
    /// Count one compared program.
    pub fn add(&mut self, seed: u64, r: &ModulePeer) {
        self.programs += 1;
        match r.standing() {
            Standing::Fewer => {
                self.fewer += 1;
                self.won_seeds.push(seed);
            }
            Standing::Same => self.same += 1,
            Standing::More => {
                self.more += 1;
                self.missed_seeds.push(seed);
            }
        }
        let unused: usize = r.funcs.iter().map(|f| f.unused_loads).sum();
        self.unused_loads += unused as u64;
        let (_, l, m) = r.totals();
        if r.standing() == Standing::More && l.total() - unused <= m.total() {
            self.more_only_unused += 1;
        }
        let (o, l, m) = r.totals();
        self.totals[0] += o.total() as u64;
        self.totals[1] += l.total() as u64;
        self.totals[2] += m.total() as u64;
    }

    /// Add another survey's counts (the seeds are concatenated).
    pub fn merge(&mut self, o: &PeerSurvey) {
        self.programs += o.programs;
        self.fewer += o.fewer;
        self.same += o.same;
        self.more += o.more;
        for i in 0..3 {
            self.totals[i] += o.totals[i];
        }
        self.unused_loads += o.unused_loads;
        self.more_only_unused += o.more_only_unused;
        self.missed_seeds.extend(&o.missed_seeds);
        self.won_seeds.extend(&o.won_seeds);
    }

    /// The summary lines.
    pub fn render(&self, passes: &str) -> String {
        let n = self.programs.max(1) as f64;
        let pct = |x: u64| 100.0 * x as f64 / n;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "programs: {}; loadstar ({passes}) keeps fewer loads+stores than llvm -O2 in {} ({:.1} %), the same in {} ({:.1} %), more in {} ({:.1} %)",
            self.programs,
            self.fewer,
            pct(self.fewer),
            self.same,
            pct(self.same),
            self.more,
            pct(self.more)
        );
        let _ = writeln!(
            out,
            "loads+stores: original {}, loadstar {}, llvm -O2 {}",
            self.totals[0], self.totals[1], self.totals[2]
        );
        let _ = writeln!(
            out,
            "loads loadstar keeps only for their trap (result unused): {}; programs where llvm keeps fewer only because of them: {}",
            self.unused_loads, self.more_only_unused
        );
        for (what, seeds) in [("llvm", &self.missed_seeds), ("loadstar", &self.won_seeds)] {
            let mut seeds = seeds.clone();
            seeds.sort_unstable();
            if !seeds.is_empty() {
                let shown: Vec<String> = seeds.iter().take(12).map(u64::to_string).collect();
                let _ = writeln!(
                    out,
                    "{what} keeps fewer on seeds: {}{}",
                    shown.join(", "),
                    if seeds.len() > 12 { ", …" } else { "" }
                );
            }
        }
        out
    }
}

/// One program a batch compared: its seed, the module and the comparison.
pub type Compared = (u64, ir::Module, ModulePeer);

/// Programs waiting for one `opt` run (one thread's share of a survey or of
/// the sweep's peer oracle), what they showed so far, and the first missed
/// ones kept whole.
pub struct PeerBatcher {
    pm: passes::PassManager,
    pending: Vec<(u64, ir::Module)>,
    /// The counts so far.
    pub survey: PeerSurvey,
    /// Up to [`PeerBatcher::KEEP`] programs where LLVM keeps fewer, with their seeds.
    pub missed: Vec<(u64, ir::Module)>,
}

impl PeerBatcher {
    /// Programs per `opt` run.
    pub const BATCH: usize = 32;
    /// Missed programs kept whole for reduction.
    pub const KEEP: usize = 3;

    /// A batcher comparing against loadstar's `pm`.
    pub fn new(pm: passes::PassManager) -> PeerBatcher {
        PeerBatcher {
            pm,
            pending: Vec::new(),
            survey: PeerSurvey::default(),
            missed: Vec::new(),
        }
    }

    /// Queue one program; a full batch is compared at once and returned
    /// (empty while the batch fills).
    pub fn push(
        &mut self,
        seed: u64,
        module: ir::Module,
    ) -> Result<Vec<Compared>, super::PeerError> {
        self.pending.push((seed, module));
        if self.pending.len() >= Self::BATCH {
            return self.flush();
        }
        Ok(Vec::new())
    }

    /// Compare every queued program, count it, and return the comparisons.
    pub fn flush(&mut self) -> Result<Vec<Compared>, super::PeerError> {
        if self.pending.is_empty() {
            return Ok(Vec::new());
        }
        let batch = std::mem::take(&mut self.pending);
        let modules: Vec<&ir::Module> = batch.iter().map(|(_, m)| m).collect();
        let reports = super::compare_many(&modules, &self.pm)?;
        let mut done = Vec::with_capacity(batch.len());
        for ((seed, module), r) in batch.into_iter().zip(reports) {
            self.survey.add(seed, &r);
            if r.standing() == Standing::More && self.missed.len() < Self::KEEP {
                self.missed.push((seed, module.clone()));
            }
            done.push((seed, module, r));
        }
        Ok(done)
    }
}
