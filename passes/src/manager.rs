//! The pass manager: pass names, the `pipeline` list, and running passes with
//! the verifier after each one.

use crate::dce::Dce;
use crate::gvn::Gvn;
use crate::lse::Lse;
use crate::peeps::{CheckMode, Peeps};
use crate::stats::Stats;
use crate::verified::{function_prints, Accepted};
use ir::verify::VerifyError;
use ir::Module;

/// An optimization pass over a whole module.
pub trait Pass {
    /// The name used on the command line.
    fn name(&self) -> &'static str;
    /// Transform `module`; record what was done in `stats`. Returns whether anything changed.
    fn run(&self, module: &mut Module, stats: &mut Stats) -> bool;
    /// Like [`Pass::run`], but a pass that checks its own invariants reports a
    /// violation (a bug in the pass) as `Err` instead of panicking.
    fn run_checked(&self, module: &mut Module, stats: &mut Stats) -> Result<bool, String> {
        Ok(self.run(module, stats))
    }
    /// Whether [`Pass::run`] may change the module's declarations (types,
    /// globals, externs, function names and signatures). A pass that says
    /// no lets the manager keep the declarations fingerprint it verified
    /// with ([`Module::decls_fingerprint`]) instead of hashing them again
    /// after the pass; debug builds check the claim.
    fn changes_declarations(&self) -> bool {
        true
    }
    /// Whether a run leaves every function it visits at this pass's fixed
    /// point: run again on its output, it changes nothing. The manager then
    /// skips it on those functions until they change (debug builds run it
    /// and check that it changes nothing).
    fn idempotent(&self) -> bool {
        false
    }
}

/// Every pass name accepted in a pass list (`pipeline` expands to the default order).
pub const PASS_NAMES: &[&str] = &["lse", "peeps", "gvn", "dce", "pipeline"];

/// The passes `pipeline` stands for, in order.
///
/// LSE first turns loads into values the peepholes can fold; peeps canonicalizes
/// (constants right, comparisons one way) so that GVN finds more equal keys;
/// DCE then removes what became unused. The list repeats while anything changes.
const PIPELINE: &[&str] = &["lse", "peeps", "gvn", "peeps", "dce"];

/// How often the pipeline is repeated at most while something still changes.
const PIPELINE_ROUNDS: usize = 4;

/// Why a pass list could not run.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// A name in the list is not a pass.
    #[error("unknown pass '{name}' (known passes: {known})")]
    UnknownPass {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// The list was empty.
    #[error("empty pass list (known passes: {0})")]
    Empty(String),
    /// A pass produced a module the verifier rejects: a bug in that pass.
    #[error("pass '{pass}' produced an ill-formed module:\n{}", render(errors))]
    IllFormed {
        /// The pass that ran last.
        pass: String,
        /// What the verifier found.
        errors: Vec<VerifyError>,
    },
    /// A pass found its own invariant violated (e.g. the peephole fixed point): a bug in that pass.
    #[error("pass '{pass}' broke its invariant: {message}")]
    Invariant {
        /// The pass.
        pass: String,
        /// What was found.
        message: String,
    },
}

fn render(errors: &[VerifyError]) -> String {
    errors
        .iter()
        .map(|e| format!("  {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn make_pass(name: &str, seed: u64, check: Option<CheckMode>) -> Option<Box<dyn Pass>> {
    match name {
        "dce" => Some(Box::new(Dce)),
        "lse" => Some(Box::new(Lse::default())),
        // A forced check mode spares reading the environment for the default.
        "peeps" => Some(Box::new(match check {
            Some(c) => Peeps::with_check(seed, c),
            None => Peeps::new(seed),
        })),
        "gvn" => Some(Box::new(Gvn)),
        _ => None,
    }
}

/// Split a comma-separated pass list, checking every name; `pipeline` stays as one entry.
pub fn expand_pass_list(list: &str) -> Result<Vec<String>, PassError> {
    let known = PASS_NAMES.join(", ");
    let names: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return Err(PassError::Empty(known));
    }
    for n in &names {
        if !PASS_NAMES.contains(&n.as_str()) {
            return Err(PassError::UnknownPass {
                name: n.clone(),
                known,
            });
        }
    }
    Ok(names)
}

/// Runs a list of passes, verifying after each.
#[derive(Clone, Debug)]
pub struct PassManager {
    names: Vec<String>,
    seed: u64,
    check: Option<CheckMode>,
    /// Run the verifier after every pass (on by default; harness modes keep it on).
    pub verify: bool,
}

impl PassManager {
    /// A manager for a comma-separated list such as `"dce"` or `"pipeline"`.
    pub fn from_list(list: &str) -> Result<PassManager, PassError> {
        Ok(PassManager {
            names: expand_pass_list(list)?,
            seed: 0,
            check: None,
            verify: true,
        })
    }

    /// The same manager with the passes' own invariant checks (the peephole
    /// fixed point) forced to `mode`; harness modes and tests use this, so the
    /// checks run in release builds too.
    pub fn with_invariant_checks(mut self, mode: CheckMode) -> PassManager {
        self.check = Some(mode);
        self
    }

    /// The same manager with peephole worklist seed `seed` (same seed, same result).
    pub fn with_seed(mut self, seed: u64) -> PassManager {
        self.seed = seed;
        self
    }

    /// The peephole worklist seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The pass names, as given.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Run every pass in order on `module`.
    pub fn run(&self, module: &mut Module) -> Result<Stats, PassError> {
        self.run_with(module, self.hashes_every_module(), Input::Unknown)
    }

    /// [`PassManager::run`] on a module the verifier accepts as it is (the
    /// oracle verifies each program, [`crate::verified::verify_kept`], before
    /// it optimizes copies of it): the verifier then checks only the functions
    /// a pass changed, with nothing hashed to tell which those are. Debug
    /// builds check the claim.
    pub fn run_verified(&self, module: &mut Module) -> Result<Stats, PassError> {
        self.run_with(module, self.hashes_every_module(), Input::Verified)
    }

    /// [`PassManager::run`], hashing every module state if `eager`.
    fn run_with(&self, module: &mut Module, eager: bool, input: Input) -> Result<Stats, PassError> {
        let out = self.run_passes(module, eager, input);
        crate::analyses::end_run();
        out
    }

    /// The passes of [`PassManager::run_with`]; the passes share each
    /// function's CFG analyses while its branches stay unchanged
    /// ([`crate::analyses`]).
    fn run_passes(
        &self,
        module: &mut Module,
        eager: bool,
        input: Input,
    ) -> Result<Stats, PassError> {
        let mut stats = Stats::default();
        let mut state = RunState::new(module, eager, self.verify);
        // Module identities are this run's own (tokens restart each run).
        crate::per_function::forget_kept_summaries();
        if self.verify && input == Input::Verified {
            state.accept_input(module);
        }
        for (k, name) in self.names.iter().enumerate() {
            // Whether another pass may run after this one (and so ask
            // whether it is at a fixed point, or whether it was verified).
            let more = k + 1 < self.names.len();
            if name == "pipeline" {
                for _ in 0..PIPELINE_ROUNDS {
                    let mut changed = false;
                    for p in PIPELINE {
                        changed |= self.run_one(p, module, &mut stats, &mut state, true)?;
                    }
                    if !changed {
                        break;
                    }
                }
            } else {
                let name = PASS_NAMES
                    .iter()
                    .copied()
                    .find(|n| n == name)
                    .expect("from_list checked the names");
                self.run_one(name, module, &mut stats, &mut state, more)?;
            }
        }
        state.counts.add_to(&mut stats);
        Ok(stats)
    }

    /// Whether every module state is hashed as soon as it exists (debug
    /// builds, which check that a pass reporting no change left the module,
    /// and each function it did not report changed, as it was); otherwise
    /// module states are told apart by what the passes reported (see
    /// [`RunState`]). Harness modes in release builds do not hash: they
    /// would check nothing with the prints, and hashing every function
    /// after every pass was the oracle's largest single cost (6 % of its
    /// time on the bench's programs).
    fn hashes_every_module(&self) -> bool {
        cfg!(debug_assertions)
    }

    /// Run pass `name`, unless it is known to leave the module unchanged;
    /// `more` says whether another pass may follow.
    fn run_one(
        &self,
        name: &'static str,
        module: &mut Module,
        stats: &mut Stats,
        state: &mut RunState,
        more: bool,
    ) -> Result<bool, PassError> {
        if state.at_fixed_point(name, module) || state.skips_every_function(name, module) {
            state.counts.passes_skipped_unchanged += 1;
            return Ok(false);
        }
        state.counts.passes_run += 1;
        let pass =
            make_pass(name, self.seed, self.check).ok_or_else(|| PassError::UnknownPass {
                name: name.to_string(),
                known: PASS_NAMES.join(", "),
            })?;
        let id = state.current(module);
        // Eager (debug) runs visit every function and check the skips instead.
        let skip: &[bool] = if state.eager { &[] } else { &state.skip };
        let (changed, reported) =
            crate::per_function::tracked_in(Some(id), &mut state.dirty, skip, || {
                pass.run_checked(module, stats)
            });
        let changed = changed.map_err(|message| PassError::Invariant {
            pass: name.to_string(),
            message,
        })?;
        if crate::per_function::skips_forgotten() {
            state.skip.clear();
        }
        state.after_declarations(name, module, pass.changes_declarations());
        let unchanged = state.after_pass(name, module, changed, reported);
        let decls_may_differ = pass.changes_declarations() && !unchanged;
        let all_left = unchanged || pass.idempotent();
        state.record_unchanged_functions(name, all_left, reported, decls_may_differ);
        if unchanged && more {
            let fp = state.current(module);
            state.fixed.push((name, fp));
        }
        if self.verify && (state.current.is_none() || state.verified != state.current) {
            state
                .verify(module)
                .map_err(|errors| PassError::IllFormed {
                    pass: name.to_string(),
                    errors,
                })?;
            state.counts.verifier_runs += 1;
        }
        Ok(changed)
    }
}

/// What the manager knows of the module it is given.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Input {
    /// Nothing: the first verification checks every function not known
    /// from [`Accepted::remembered`].
    Unknown,
    /// The verifier accepts it ([`PassManager::run_verified`]).
    Verified,
}

/// What a manager run remembers between passes: the module's current
/// identity and, per pass, the identities of modules it left unchanged.
///
/// Passes are deterministic functions of the module (and the seed, fixed for
/// one manager), so a pass that left a module unchanged leaves the same module
/// unchanged again: the pipeline's confirming round skips such reruns. The
/// verifier is not asked twice about the same module either: its answer depends
/// on nothing else.
///
/// Identities: with `eager` (debug builds) a module state is
/// its fingerprint ([`Module::fingerprint_of`] over each function's
/// [`ir::Function::fingerprint`]), computed after every pass. Otherwise
/// nothing is hashed once passes run: a pass that reports no change and grows
/// no arena left the module as it was; any other pass makes a new state, with
/// a fresh token as its identity, and a fresh token for each function it
/// reported changed or grew (every function if it reported nothing per
/// function, [`crate::per_function`]). Hashing a 100k-instruction function
/// after every changed pass cost about a tenth of the pipeline. Function
/// prints are computed only when the verifier's verdict on an earlier module
/// ([`Accepted::remembered`]) is there to compare with, and only for the
/// functions no pass changed before the first verification.
struct RunState {
    /// The identity of the module as it is now (`None` in eager mode until
    /// something compares it; always known otherwise).
    current: Option<u64>,
    /// With `current`: each function's identity (its fingerprint, or a token).
    funcs: Vec<u64>,
    /// Whether every module state is hashed at once
    /// ([`PassManager::hashes_every_module`]).
    eager: bool,
    /// The identity of the module the verifier last accepted.
    verified: Option<u64>,
    /// What the verifier accepted last (this run's last verified module, or
    /// before the first, the module [`crate::verified::verify_and_remember`]
    /// accepted on this thread).
    accepted: Option<Accepted>,
    /// (pass, identity) pairs: that pass left that module unchanged.
    fixed: Vec<(&'static str, u64)>,
    /// Per function, the sizes of its arenas (instructions, values, blocks)
    /// after the last pass.
    sizes: Vec<[usize; 3]>,
    /// The functions the last pass reported changed.
    dirty: Vec<usize>,
    /// Per function (not eager, with a remembered verdict): unchanged since
    /// the start and not hashed yet. Its identity is its print, computed at
    /// the first verification that compares it ([`RunState::verify`]); most
    /// functions are changed (and get a token) before that.
    unhashed: Vec<bool>,
    /// The last token handed out (not eager).
    token: u64,
    /// Per pass: per function, the identity (as in `funcs`) of the function
    /// the pass last left unchanged. A pass's work on one function depends
    /// on nothing but that function, the module's declarations and the
    /// function's index, so it leaves the same function unchanged again
    /// ([`RunState::skips_every_function`]); a pass that also reads its
    /// callees' call summaries forgets these facts for a run when the
    /// summaries changed ([`crate::per_function::callee_summaries`]).
    func_fixed: Vec<(&'static str, Vec<Option<u64>>)>,
    /// Per function: the pass about to run leaves it unchanged (`func_fixed`).
    skip: Vec<bool>,
    /// The declarations fingerprint of the module as it is now, when known:
    /// computed at a verification, kept while the passes that follow say they
    /// leave declarations alone ([`Pass::changes_declarations`]).
    decls: Option<u64>,
    /// The manager's own counters, added to the run's statistics at its end.
    counts: ManagerCounts,
}

/// The `manager` counters of one run, kept as plain numbers while passes run
/// (a statistics map update per pass run was 1 % of the oracle's time).
#[derive(Default)]
struct ManagerCounts {
    passes_run: u64,
    passes_skipped_unchanged: u64,
    verifier_runs: u64,
}

impl ManagerCounts {
    /// Add the counters that are not zero to `stats` (a counter never
    /// touched does not appear).
    fn add_to(&self, stats: &mut Stats) {
        for (rule, n) in [
            ("passes_run", self.passes_run),
            ("passes_skipped_unchanged", self.passes_skipped_unchanged),
            ("verifier_runs", self.verifier_runs),
        ] {
            if n > 0 {
                stats.add("manager", rule, n);
            }
        }
    }
}

/// The step between tokens: odd, so 2^64 tokens come before a repeat, and
/// spread over the 64 bits like the fingerprints they stand beside.
const TOKEN_STEP: u64 = 0x9E37_79B9_7F4A_7C15;

impl RunState {
    /// The state before the first pass; `verify` says whether the manager
    /// verifies (and so may compare with [`Accepted::remembered`]).
    fn new(module: &Module, eager: bool, verify: bool) -> RunState {
        let mut state = RunState {
            current: None,
            funcs: Vec::new(),
            eager,
            verified: None,
            accepted: if verify { Accepted::remembered() } else { None },
            fixed: Vec::new(),
            sizes: module.funcs.iter().map(arena_sizes).collect(),
            dirty: Vec::new(),
            unhashed: Vec::new(),
            token: 0x243F_6A88_85A3_08D3,
            func_fixed: Vec::new(),
            skip: Vec::new(),
            decls: None,
            counts: ManagerCounts::default(),
        };
        if eager {
            state.current(module);
        } else if state.accepted.is_some() {
            state.funcs = vec![0; module.funcs.len()];
            state.unhashed = vec![true; module.funcs.len()];
            state.current = Some(state.next_token());
        } else {
            state.funcs = (0..module.funcs.len())
                .map(|_| state.next_token())
                .collect();
            state.current = Some(state.next_token());
        }
        state
    }

    /// Record `module`, the module before the first pass, as accepted by the
    /// verifier (the caller's word, [`PassManager::run_verified`]): each
    /// function keeps its identity as long as no pass changes it, and a
    /// token stands for the declarations while the passes leave them alone,
    /// so the verifications after the passes check only what they changed.
    /// Debug builds (which hash every module state) hash the declarations
    /// too, and check the caller's word.
    fn accept_input(&mut self, module: &Module) {
        let decls = if self.eager {
            debug_assert!(
                ir::verify::verify_module(module).is_ok(),
                "run_verified was given a module the verifier rejects"
            );
            module.decls_fingerprint()
        } else {
            self.next_token()
        };
        if !self.eager {
            self.unhashed.clear();
            for i in 0..self.funcs.len() {
                self.funcs[i] = self.next_token();
            }
        }
        self.decls = Some(decls);
        self.accepted = Some(Accepted::assumed(decls, &self.funcs));
    }

    fn next_token(&mut self) -> u64 {
        self.token = self.token.wrapping_add(TOKEN_STEP);
        self.token
    }

    /// Record the arena sizes of `module`'s functions; returns whether they
    /// are those recorded before, and adds the functions whose sizes changed
    /// to `dirty`.
    fn update_sizes(&mut self, module: &Module) -> bool {
        let mut same = self.sizes.len() == module.funcs.len();
        self.sizes.resize(module.funcs.len(), [0; 3]);
        for (i, (recorded, f)) in self.sizes.iter_mut().zip(&module.funcs).enumerate() {
            let now = arena_sizes(f);
            if *recorded != now {
                same = false;
                self.dirty.push(i);
            }
            *recorded = now;
        }
        same
    }

    /// After pass `name` ran on `module` and returned `changed` (and
    /// `reported` says whether it reported its changed functions, now in
    /// `dirty`): update the module's identity. Returns whether the module is
    /// the one before.
    fn after_pass(&mut self, name: &str, module: &Module, changed: bool, reported: bool) -> bool {
        let before = self.current;
        let dirty_before = self.dirty.len();
        let same_sizes = self.update_sizes(module);
        if self.dirty.len() > dirty_before {
            // Functions that grew, after those reported (sorted, no repeats).
            self.dirty.sort_unstable();
            self.dirty.dedup();
        }
        // A pass that reports no change and left every arena its size left the
        // module as it was: its identity is the one before (hashing a big
        // module after every pass costs as much as a cheap pass).
        if !(changed || !same_sizes || self.eager) {
            return true;
        }
        if self.eager {
            // Debug builds check the claims: no change reported, none made;
            // no function left out of the report changed.
            let funcs_before = (cfg!(debug_assertions) && reported).then(|| self.funcs.clone());
            self.current = None;
            let now = self.current(module);
            debug_assert!(
                changed || !same_sizes || Some(now) == before,
                "pass {name} reported no change but changed the module"
            );
            if let Some(was) = funcs_before.filter(|was| was.len() == self.funcs.len()) {
                for (i, (was, is)) in was.iter().zip(&self.funcs).enumerate() {
                    assert!(
                        was == is || self.dirty.binary_search(&i).is_ok(),
                        "pass {name} changed function {i} without reporting it"
                    );
                }
            }
            return Some(now) == before;
        }
        // A new module state.
        self.funcs.resize(module.funcs.len(), 0);
        self.unhashed.resize(module.funcs.len(), false);
        if reported {
            for k in 0..self.dirty.len() {
                let i = self.dirty[k];
                self.funcs[i] = self.next_token();
                self.unhashed[i] = false;
            }
        } else {
            for i in 0..self.funcs.len() {
                self.funcs[i] = self.next_token();
            }
            self.unhashed.clear();
        }
        self.current = Some(self.next_token());
        false
    }

    /// The identity of `module`, the module as it is now (in eager mode,
    /// hashing each function once when not known yet).
    fn current(&mut self, module: &Module) -> u64 {
        if let Some(fp) = self.current {
            return fp;
        }
        function_prints(module, &mut self.funcs);
        let fp = module.fingerprint_of(self.funcs.iter().copied());
        self.current = Some(fp);
        fp
    }

    /// After pass `name` ran on `module`: forget the declarations fingerprint
    /// if the pass may have changed declarations (`may_change`); debug
    /// builds check that a pass saying it does not, did not.
    fn after_declarations(&mut self, name: &str, module: &Module, may_change: bool) {
        if may_change {
            self.decls = None;
        } else if let Some(was) = self.decls.filter(|_| cfg!(debug_assertions)) {
            assert_eq!(
                was,
                module.decls_fingerprint(),
                "pass {name} changed the declarations but says it leaves them alone"
            );
        }
    }

    /// Run the verifier on `module` (whose identity differs from the last
    /// verified one; only its functions that differ from those last accepted
    /// are checked, see [`crate::verified`]) and record it as verified.
    fn verify(&mut self, module: &Module) -> Result<(), Vec<VerifyError>> {
        let fp = self.current(module);
        for (i, unhashed) in self.unhashed.iter_mut().enumerate() {
            if std::mem::take(unhashed) {
                self.funcs[i] = module.funcs[i].fingerprint();
            }
        }
        let decls = *self.decls.get_or_insert_with(|| module.decls_fingerprint());
        self.accepted = Some(Accepted::verify_with_decls(
            self.accepted.take(),
            module,
            decls,
            &self.funcs,
        )?);
        self.verified = Some(fp);
        Ok(())
    }

    /// Fill `skip` with the functions `pass` is known to leave unchanged
    /// (`func_fixed`); returns whether that is every function (of at least
    /// one). Eager runs never skip: they run the pass on every function and
    /// check, after it, that those it would have skipped are unchanged
    /// ([`RunState::record_unchanged_functions`]).
    fn skips_every_function(&mut self, pass: &str, module: &Module) -> bool {
        self.skip.clear();
        let Some(k) = self.func_fixed.iter().position(|(p, _)| *p == pass) else {
            return false;
        };
        self.current(module);
        let known = &self.func_fixed[k].1;
        self.skip.extend((0..module.funcs.len()).map(|i| {
            let now = self.funcs.get(i);
            now.is_some() && known.get(i).copied().flatten() == now.copied()
        }));
        !self.eager && !self.skip.is_empty() && self.skip.iter().all(|&s| s)
    }

    /// After pass `pass` ran (`all_left`: it leaves every function as it is
    /// now, being unchanged or idempotent; `reported`: `dirty` holds the
    /// functions it changed, and those it reported at its fixed point,
    /// [`crate::per_function::report_at_fixed_point`], it leaves as they are
    /// now): record the functions it would leave unchanged, forgetting every
    /// such fact if
    /// `decls_may_differ`. Eager runs check that the functions the pass was
    /// known to leave unchanged (`skip`) are.
    fn record_unchanged_functions(
        &mut self,
        pass: &'static str,
        all_left: bool,
        reported: bool,
        decls_may_differ: bool,
    ) {
        if self.eager {
            for (i, _) in self.skip.iter().enumerate().filter(|(_, &s)| s) {
                let known = self
                    .func_fixed
                    .iter()
                    .find(|(p, _)| *p == pass)
                    .and_then(|(_, ids)| ids.get(i).copied().flatten());
                assert_eq!(
                    known,
                    self.funcs.get(i).copied(),
                    "pass {pass} changed function {i}, which it had left unchanged as it was"
                );
            }
        }
        if decls_may_differ {
            self.func_fixed.clear();
        }
        let k = match self.func_fixed.iter().position(|(p, _)| *p == pass) {
            Some(k) => k,
            None => {
                self.func_fixed.push((pass, Vec::new()));
                self.func_fixed.len() - 1
            }
        };
        let ids = &mut self.func_fixed[k].1;
        ids.clear();
        ids.extend(self.funcs.iter().enumerate().map(|(i, &id)| {
            let left = all_left
                || (reported
                    && (self.dirty.binary_search(&i).is_err()
                        || crate::per_function::at_fixed_point_reported(i)));
            left.then_some(id)
        }));
    }

    /// Whether `pass` is known to leave the current module unchanged.
    fn at_fixed_point(&mut self, pass: &str, module: &Module) -> bool {
        if !self.fixed.iter().any(|&(p, _)| p == pass) {
            return false;
        }
        let now = self.current(module);
        self.fixed.iter().any(|&(p, fp)| p == pass && fp == now)
    }
}

/// The sizes of `f`'s instruction, value and block arenas (passes only grow them).
fn arena_sizes(f: &ir::Function) -> [usize; 3] {
    [f.insts.len(), f.values.len(), f.blocks.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_pass_names_are_a_clear_error() {
        let err = PassManager::from_list("dce,frobnicate").expect_err("error");
        let msg = err.to_string();
        assert!(msg.contains("unknown pass 'frobnicate'"), "{msg}");
        assert!(msg.contains("dce"), "{msg}");
    }

    #[test]
    fn empty_lists_are_rejected() {
        assert!(matches!(
            PassManager::from_list(" , "),
            Err(PassError::Empty(_))
        ));
    }

    fn parse(text: &str) -> Module {
        ir::parse_module(text, "t.ir").unwrap().0
    }

    const DECLS: &str =
        "type P { x: i64 }\nfunc @f(%p: P) -> i64 {\nentry:\n  %a = load %p.x\n  ret %a\n}\n";

    #[test]
    fn the_declarations_print_is_kept_only_past_passes_that_leave_them_alone() {
        let m = parse(DECLS);
        let mut state = RunState::new(&m, false, true);
        state.decls = Some(m.decls_fingerprint());
        state.after_declarations("dce", &m, false);
        assert_eq!(state.decls, Some(m.decls_fingerprint()));
        state.after_declarations("other", &m, true);
        assert_eq!(state.decls, None);
        // Every pass of the pipeline says it leaves declarations alone.
        for name in PIPELINE {
            let pass = make_pass(name, 0, None).expect("a pass");
            assert!(!pass.changes_declarations(), "{name}");
        }
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "changed the declarations")]
    fn debug_builds_catch_a_pass_that_changes_declarations_it_says_it_keeps() {
        let mut m = parse(DECLS);
        let mut state = RunState::new(&m, true, true);
        state.decls = Some(m.decls_fingerprint());
        m.structs[0].fields[0].ty = ir::Type::object(ir::StructId::new(0));
        state.after_declarations("liar", &m, false);
    }

    const ALREADY_OPTIMAL: &str = "type P { x: i64 }\n\
        func @f(%p: P) -> i64 {\n\
        entry:\n  %a = load %p.x\n  ret %a\n}\n";

    #[test]
    fn a_pass_is_not_rerun_on_a_module_it_left_unchanged() {
        let mut m = parse(ALREADY_OPTIMAL);
        let stats = PassManager::from_list("pipeline")
            .unwrap()
            .run(&mut m)
            .unwrap();
        // lse, peeps, gvn and dce each run once; the second peeps sees the module
        // the first one left unchanged and is skipped. One round: nothing changed.
        assert_eq!(stats.get("manager", "passes_run"), 4);
        assert_eq!(stats.get("manager", "passes_skipped_unchanged"), 1);
    }

    #[test]
    fn the_verifier_is_asked_once_per_distinct_module() {
        let mut m = parse(ALREADY_OPTIMAL);
        let stats = PassManager::from_list("dce,dce,lse")
            .unwrap()
            .run(&mut m)
            .unwrap();
        assert_eq!(stats.get("manager", "verifier_runs"), 1);
        let mut m =
            parse("func @f() -> i64 {\nentry:\n  %a = add 1, 2\n  %b = add %a, 3\n  ret 7\n}\n");
        let stats = PassManager::from_list("dce,dce")
            .unwrap()
            .run(&mut m)
            .unwrap();
        // The first dce removes the dead adds (a new module: verified); the
        // second leaves it as it is (already verified).
        assert_eq!(stats.get("dce", "insts_removed"), 2);
        assert_eq!(stats.get("manager", "verifier_runs"), 1);
    }

    #[test]
    fn an_ill_formed_input_left_unchanged_is_still_reported() {
        // %b is used before its definition: the verifier rejects the module even
        // though dce changes nothing, and names the pass that ran last.
        let mut m =
            parse("func @f() -> i64 {\nentry:\n  %a = add %b, 1\n  %b = add 1, 2\n  ret %a\n}\n");
        let err = PassManager::from_list("dce")
            .unwrap()
            .run(&mut m)
            .unwrap_err();
        assert!(
            matches!(err, PassError::IllFormed { ref pass, .. } if pass == "dce"),
            "{err}"
        );
    }

    #[test]
    fn a_pass_that_only_grew_the_arenas_left_a_new_module() {
        // LSE creates a phi for %p.x at the join and deletes it again (nothing
        // loads it): it reports no change, but the instruction and value
        // arenas grew, so the module is a new one and the second lse runs.
        let mut m = parse(
            "type P { x: i64 }\nfunc @f(%p: P, %c: i64) {\nentry:\n  br %c, a, b\n\
             a:\n  store %p.x, 1\n  jmp j\nb:\n  store %p.x, 2\n  jmp j\nj:\n  ret\n}\n",
        );
        let insts_before = m.funcs[0].insts.len();
        let pm = PassManager::from_list("lse,lse").unwrap();
        let stats = pm.run(&mut m).unwrap();
        assert!(m.funcs[0].insts.len() > insts_before, "lse made a phi");
        assert_eq!(stats.get("lse", "phis_created"), 0);
        assert_eq!(stats.get("manager", "passes_run"), 2);
        assert_eq!(stats.get("manager", "passes_skipped_unchanged"), 0);
        // A pass that reports no change and grows nothing is not rerun.
        let stats = PassManager::from_list("dce,dce")
            .unwrap()
            .run(&mut m)
            .unwrap();
        assert_eq!(stats.get("manager", "passes_run"), 1);
        assert_eq!(stats.get("manager", "passes_skipped_unchanged"), 1);
    }

    const TWO_FUNCS: &str = "type P { x: i64 }\n\
        func @f(%p: P) -> i64 {\nentry:\n  %a = load %p.x\n  ret %a\n}\n\
        func @g(%p: P) -> i64 {\nentry:\n  %b = call @f(%p)\n  ret %b\n}\n";

    #[test]
    fn without_hashing_a_reported_function_gets_a_new_identity_and_the_rest_keep_theirs() {
        let m = parse(TWO_FUNCS);
        let mut s = RunState::new(&m, false, true);
        let (start, funcs) = (s.current.unwrap(), s.funcs.clone());
        assert_eq!(funcs.len(), 2);
        // No change reported, no arena grown: the same module.
        assert!(s.after_pass("dce", &m, false, false));
        assert_eq!((s.current, &s.funcs), (Some(start), &funcs));
        // @g reported changed: a new module, @f as it was.
        s.dirty = vec![1];
        assert!(!s.after_pass("lse", &m, true, true));
        assert_ne!(s.current, Some(start));
        assert_eq!(s.funcs[0], funcs[0]);
        assert_ne!(s.funcs[1], funcs[1]);
        // A change without a per-function report: every function is new.
        let (mid, now) = (s.current, s.funcs.clone());
        s.dirty.clear();
        assert!(!s.after_pass("dce", &m, true, false));
        assert_ne!(s.current, mid);
        assert!(s.funcs.iter().zip(&now).all(|(a, b)| a != b));
        // An arena that grew makes its function new, though nothing was reported.
        let mut grown = m.clone();
        let v = grown.funcs[0].values[0].clone();
        grown.funcs[0].values.push(v);
        let now = s.funcs.clone();
        assert!(!s.after_pass("lse", &grown, false, true));
        assert_ne!(s.funcs[0], now[0]);
        assert_eq!(s.funcs[1], now[1]);
    }

    #[test]
    fn with_a_remembered_verdict_only_functions_unchanged_at_the_first_check_are_hashed() {
        let m = parse(TWO_FUNCS);
        crate::verified::verify_and_remember(&m).expect("valid");
        let mut s = RunState::new(&m, false, true);
        assert_eq!(s.unhashed, [true, true]);
        // @g changed (a token), @f not: only @f is hashed, at the check.
        s.dirty = vec![1];
        assert!(!s.after_pass("lse", &m, true, true));
        assert_eq!(s.unhashed, [true, false]);
        let token = s.funcs[1];
        s.verify(&m).expect("valid");
        assert_eq!(s.funcs, [m.funcs[0].fingerprint(), token]);
        assert_eq!(s.unhashed, [false, false]);
        // A change reported for no function in particular: nothing left to hash.
        let mut s = RunState::new(&m, false, true);
        assert!(!s.after_pass("dce", &m, true, false));
        assert!(s.unhashed.is_empty());
        assert!(s.funcs.iter().all(|&f| f != m.funcs[0].fingerprint()));
    }

    #[test]
    fn without_hashing_only_reported_functions_are_verified_again() {
        let m = parse(TWO_FUNCS);
        let mut s = RunState::new(&m, false, true);
        s.verify(&m).expect("valid");
        // @f's return now names a value it does not have, and a pass reported @f.
        let mut broken = m.clone();
        let f = &mut broken.funcs[0];
        let ret = *f.blocks[f.layout[0].index()].insts.last().unwrap();
        f.insts[ret.index()].kind = ir::InstKind::Ret(Some(ir::Value::new(f.values.len() + 3)));
        s.dirty = vec![0];
        assert!(!s.after_pass("peeps", &broken, true, true));
        let errors = s.verify(&broken).expect_err("ill-formed");
        assert_eq!(errors, ir::verify::verify_module(&broken).unwrap_err());
        // Had the pass reported only @g, @f would not be checked again: the
        // report is what the verifier trusts (debug builds check it).
        let mut s = RunState::new(&m, false, true);
        s.verify(&m).expect("valid");
        s.dirty = vec![1];
        assert!(!s.after_pass("peeps", &broken, true, true));
        assert!(s.verify(&broken).is_ok());
    }

    #[test]
    fn with_a_verified_input_only_functions_a_pass_changed_are_checked() {
        let m = parse(TWO_FUNCS);
        // @f's return now names a value it does not have.
        let mut broken = m.clone();
        let f = &mut broken.funcs[0];
        let ret = *f.blocks[f.layout[0].index()].insts.last().unwrap();
        f.insts[ret.index()].kind = ir::InstKind::Ret(Some(ir::Value::new(f.values.len() + 3)));
        // A pass reported @f: it is checked, with the errors verify_module gives.
        let mut s = RunState::new(&m, false, true);
        s.accept_input(&m);
        s.dirty = vec![0];
        assert!(!s.after_pass("peeps", &broken, true, true));
        let errors = s.verify(&broken).expect_err("ill-formed");
        assert_eq!(errors, ir::verify::verify_module(&broken).unwrap_err());
        // Nothing hashed: @g, never changed, keeps the identity it was accepted with.
        let mut s = RunState::new(&m, false, true);
        s.accept_input(&m);
        let accepted_g = s.funcs[1];
        s.dirty = vec![1];
        assert!(!s.after_pass("peeps", &broken, true, true));
        assert!(s.verify(&broken).is_ok(), "the caller vouched for @f");
        assert_ne!(s.funcs[1], accepted_g);
        // A pass that may change declarations makes the next check a whole one.
        let mut s = RunState::new(&m, false, true);
        s.accept_input(&m);
        s.after_declarations("other", &broken, true);
        s.dirty = vec![1];
        assert!(!s.after_pass("other", &broken, true, true));
        assert!(s.verify(&broken).is_err());
    }

    #[test]
    fn run_verified_makes_the_modules_and_statistics_run_makes() {
        for text in [
            ALREADY_OPTIMAL,
            TWO_FUNCS,
            "func @f() -> i64 {\nentry:\n  %a = add 1, 2\n  %b = add %a, 3\n  ret 7\n}\n",
        ] {
            let m = parse(text);
            for list in ["pipeline", "dce,dce,lse", "gvn,peeps"] {
                let pm = PassManager::from_list(list).unwrap();
                let (mut a, mut b) = (m.clone(), m.clone());
                let sa = pm.run(&mut a).unwrap();
                let sb = pm.run_verified(&mut b).unwrap();
                assert_eq!(a, b, "{list}");
                assert_eq!(sa, sb, "{list}");
            }
        }
    }

    #[test]
    fn hashing_or_not_the_pipeline_makes_the_same_modules() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
        let mut files = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(root)];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "ir") {
                    files.push(p);
                }
            }
        }
        files.sort();
        let mut compared = 0;
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap();
            let Ok((m, _)) = ir::parse_module(&text, "t.ir") else {
                continue;
            };
            if ir::verify::verify_module(&m).is_err() {
                continue;
            }
            // `gvn,lse,gvn`: GVN after a pass that changed a callee's
            // summary (the pipeline runs LSE before GVN, which leaves GVN
            // no load to merge there).
            for list in ["pipeline", "lse,gvn,lse,dce,peeps,dce", "gvn,lse,gvn"] {
                let pm = PassManager::from_list(list).unwrap();
                let (mut eager, mut lazy) = (m.clone(), m.clone());
                let a = pm
                    .run_with(&mut eager, true, Input::Unknown)
                    .map(|s| s.get("manager", "verifier_runs"));
                let b = pm
                    .run_with(&mut lazy, false, Input::Unknown)
                    .map(|s| s.get("manager", "verifier_runs"));
                assert_eq!(a.is_ok(), b.is_ok(), "{}", path.display());
                assert_eq!(eager, lazy, "{} {list}", path.display());
                compared += 1;
            }
        }
        assert!(compared > 300, "{compared}");
    }

    #[test]
    fn without_hashing_a_function_a_pass_left_as_it_is_is_not_visited_again() {
        // @g folds (peeps changes it, so the module is new), @f is already
        // optimal: the second peeps visits neither (peeps is idempotent),
        // and the dce after it only @g, which the first dce changed.
        let text = "func @f(%a: i64) -> i64 {\nentry:\n  ret %a\n}\n\
            func @g() -> i64 {\nentry:\n  %x = add 1, 2\n  %y = add 5, 6\n  ret %x\n}\n";
        let pm = PassManager::from_list("dce,peeps,peeps,dce").unwrap();
        let (mut lazy, mut eager) = (parse(text), parse(text));
        let stats = pm.run_with(&mut lazy, false, Input::Unknown).unwrap();
        assert_eq!(stats.get("manager", "passes_run"), 3);
        assert_eq!(stats.get("manager", "passes_skipped_unchanged"), 1);
        // Hashing every module (debug builds), every pass visits every
        // function and the skips are checked instead: the same module.
        let stats = pm.run_with(&mut eager, true, Input::Unknown).unwrap();
        assert_eq!(stats.get("manager", "passes_run"), 4);
        assert_eq!(lazy, eager);
        assert_eq!(
            lazy.funcs[1].inst_iter().count(),
            1,
            "{}",
            ir::print::print_module(&lazy)
        );
    }

    #[test]
    #[should_panic(expected = "which it had left unchanged")]
    fn hashing_every_module_catches_a_pass_changing_what_it_left_unchanged() {
        let m = parse(TWO_FUNCS);
        let mut s = RunState::new(&m, true, true);
        s.record_unchanged_functions("peeps", true, true, false);
        assert!(
            !s.skips_every_function("peeps", &m),
            "eager runs never skip"
        );
        assert_eq!(s.skip, [true, true]);
        // The "pass" changes @f all the same.
        let mut changed = m.clone();
        let v = changed.funcs[0].values[0].clone();
        changed.funcs[0].values.push(v);
        s.dirty = vec![0];
        s.after_pass("peeps", &changed, true, true);
        s.record_unchanged_functions("peeps", false, true, false);
    }

    #[test]
    fn lists_keep_their_order() {
        let pm = PassManager::from_list("dce, pipeline,dce").unwrap();
        assert_eq!(pm.names(), ["dce", "pipeline", "dce"]);
    }
}
