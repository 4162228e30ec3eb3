//! How a sweep thread checks its programs when the native oracle is on:
//! by default in a long-lived worker process of its own
//! (`codegen::worker`), forked once, that receives program numbers over a
//! pipe, generates and checks each program with native code run in-process,
//! and sends back its counters ([`super::wire`]).
//!
//! Nothing is lost when something goes wrong. A program the worker reports
//! findings for is checked again in the sweep's own process (findings do not
//! travel, and they are rare), with native code in one forked child per
//! compiled module (`codegen::isolate`). A worker that dies (a fault in
//! generated code, a hang past [`PROGRAM_TIMEOUT`], the OOM killer) is
//! replaced by a fresh one, and the program it was checking is checked again
//! the same way, so that its `native-crash` finding carries the input and the
//! disassembly around the fault; if that re-check finds nothing, the program
//! is still reported, as a `native-crash` naming how the worker ended.

use super::{check_one, program_seed, smt_sampled, SweepOptions};
use crate::gen::generate_from_seed;
use crate::inputs::instantiate_all;
use crate::oracle::{Finding, FindingKind, ProgramResult};
use codegen::isolate::Failure;
use codegen::worker::Worker;
use std::time::Duration;

/// How the sweep isolates native code (`--native-isolation`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// One long-lived worker process per sweep thread (the default).
    Worker,
    /// One forked child per compiled module (`codegen::isolate`).
    Fork,
    /// In the sweep's own process: fastest, but a fault kills the sweep.
    InProcess,
}

impl Isolation {
    /// Parse `worker`, `fork` or `none`.
    pub fn parse(s: &str) -> Option<Isolation> {
        match s {
            "worker" => Some(Isolation::Worker),
            "fork" => Some(Isolation::Fork),
            "none" => Some(Isolation::InProcess),
            _ => None,
        }
    }
}

/// How long a worker may take over one program (interpreter, passes and
/// native code of every plan; each run is bounded by fuel).
pub const PROGRAM_TIMEOUT: Duration = Duration::from_secs(30);

/// One sweep thread's way of checking programs.
pub struct ProgramChecker {
    /// Options for checking in this process (native isolated per module,
    /// unless the sweep asked for no isolation at all).
    direct: SweepOptions,
    /// Options the worker checks with (native code in the worker itself).
    served: SweepOptions,
    worker: Option<Worker>,
    /// Workers that died and were replaced.
    pub restarts: u64,
}

impl ProgramChecker {
    /// A checker for `opts`; forks its worker when the native oracle is on and
    /// `opts.isolation` is [`Isolation::Worker`]. Create checkers before
    /// spawning threads: a fork is safest while the process has one thread.
    pub fn new(opts: &SweepOptions) -> ProgramChecker {
        let mut direct = opts.clone();
        direct.oracle.isolate = opts.isolation != Isolation::InProcess;
        let mut served = opts.clone();
        served.oracle.isolate = false;
        let use_worker = opts.oracle.native && opts.isolation == Isolation::Worker;
        let worker = use_worker.then(|| spawn(&served)).flatten();
        ProgramChecker {
            direct,
            served,
            worker,
            restarts: 0,
        }
    }

    /// Check program `k` (see the module doc for what happens on failure).
    pub fn check(&mut self, k: u64) -> ProgramResult {
        // Programs the SMT oracle samples are checked here: its counters do
        // not travel over the wire, and they are rare (one in `smt_every`).
        let Some(worker) = self
            .worker
            .as_mut()
            .filter(|_| !smt_sampled(&self.direct, k))
        else {
            return check_one(&self.direct, k).1;
        };
        match worker.call(&k.to_le_bytes(), PROGRAM_TIMEOUT) {
            Ok(bytes) => match super::wire::decode(&bytes) {
                Some((r, 0)) => r,
                _ => check_one(&self.direct, k).1,
            },
            Err(failure) => {
                self.restarts += 1;
                self.worker = spawn(&self.served);
                let mut r = check_one(&self.direct, k).1;
                if r.findings.is_empty() {
                    r.findings.push(lost_program(&self.direct, k, &failure));
                }
                r
            }
        }
    }
}

/// Fork a worker that checks the programs it is sent with `opts`.
fn spawn(opts: &SweepOptions) -> Option<Worker> {
    // Install the oracle's panic hook before forking (it takes a lock).
    let _ = crate::oracle::panics::catch(|| ());
    Worker::spawn(|req: &[u8]| {
        let k = u64::from_le_bytes(req.try_into().unwrap_or_default());
        super::wire::encode(&check_one(opts, k).1)
    })
    .ok()
}

/// The finding for a program whose worker died when a re-check found nothing.
fn lost_program(opts: &SweepOptions, k: u64, failure: &Failure) -> Finding {
    let seed = program_seed(opts.seed, opts.shard.0, k);
    let g = generate_from_seed(seed, &opts.gen);
    let f = g.module.func(g.main);
    let inputs = instantiate_all(&g.module, f, crate::gen::rng::hash_seq(&[seed, 1]), 1);
    Finding {
        passes: "none".to_string(),
        kind: FindingKind::NativeCrash,
        part: format!("sweep worker: {}", failure.part()),
        detail: format!(
            "the sweep's worker process ended while checking this program: {failure}\n\
             (checked again with one child per compiled module, it showed nothing)"
        ),
        module: g.module.clone(),
        func: g.main,
        input: inputs.into_iter().next(),
        expected: None,
        actual: None,
        fuel: opts.oracle.fuel,
        seed: Some(seed),
    }
}
