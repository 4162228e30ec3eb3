//! Crash isolation: run a closure (the native executions of one module) in a
//! forked worker process that reports back over a pipe, so that generated code
//! that faults, hangs or corrupts the runtime never takes the caller down.
//!
//! Why `fork` per call rather than a pool of re-spawned `loadstar` workers: the
//! worker needs the compiled code, the module and the interpreter's baselines,
//! which a fork shares for free (copy-on-write) while a pool would have to
//! serialize the module and every behaviour both ways. Measured on the sweep
//! (README "Native code"), one fork per compiled module costs about as much as
//! compiling it.
//!
//! Fork safety in a multi-threaded process (the sweep runs `--jobs` threads):
//! only the forking thread exists in the child, and any lock another thread
//! held at the fork stays held forever. The child therefore does only this:
//! it installs signal handlers (`sigaltstack`, `sigaction`), closes every
//! descriptor but its pipe (`close_range`, so that concurrent forks by other
//! threads never keep our pipe open), runs the closure, writes to the pipe and
//! leaves with `_exit` (no destructors, no atexit, no stdio flush). The closure
//! runs the generated code and the runtime, which allocate through glibc's
//! malloc: glibc takes every arena lock around `fork` and resets them in the
//! child, so malloc is safe there (POSIX does not promise it; glibc does). The
//! closure must not print, take the stdio locks or spawn threads. A panic in it
//! is caught and ends the worker with exit code 101 (the panic hook may print).
//!
//! The signal handler (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP) runs on an
//! alternate stack, writes one fixed-size record — signal number, faulting
//! instruction pointer (from the `ucontext`), faulting address — with `write`
//! (async-signal-safe) and calls `_exit`. A worker that neither finishes nor
//! faults within the timeout is killed with SIGKILL; one killed otherwise (the
//! OOM killer) is reported by its signal.
//!
//! Protocol (child → parent): records `tag: u8, len: u32 (LE), payload`.
//! [`Reporter::send`] writes tag/payload records of the closure's choosing;
//! the handler writes tag [`TAG_SIGNAL`] with a 20-byte payload
//! `signo: i32, rip: u64, addr: u64`.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Record tag reserved for the signal handler's report.
pub const TAG_SIGNAL: u8 = 0xff;

/// How a worker ended when it did not finish normally.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A fatal signal, with the faulting instruction pointer and address when
    /// the handler could report them (not for SIGKILL and the like).
    Signal {
        /// The signal number.
        signo: i32,
        /// The instruction pointer at the fault (0 if unknown).
        rip: u64,
        /// The faulting address `si_addr` (0 if unknown).
        addr: u64,
    },
    /// Still running at the timeout (killed).
    Timeout,
    /// Exited with a non-zero code (101: the closure panicked).
    Exit(i32),
    /// The worker could not be started (fork or pipe failed).
    Spawn(String),
}

impl Failure {
    /// A short, digit-free description for finding signatures.
    pub fn part(&self) -> String {
        match self {
            Failure::Signal { signo, .. } => signal_name(*signo).to_string(),
            Failure::Timeout => "timeout".to_string(),
            Failure::Exit(101) => "worker panicked".to_string(),
            Failure::Exit(_) => "worker exited".to_string(),
            Failure::Spawn(_) => "worker not started".to_string(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Signal { signo, rip, addr } => write!(
                f,
                "killed by {} (signal {signo}) at rip {rip:#x}, address {addr:#x}",
                signal_name(*signo)
            ),
            Failure::Timeout => write!(f, "still running at the timeout (killed)"),
            Failure::Exit(c) => write!(f, "worker exited with code {c}"),
            Failure::Spawn(e) => write!(f, "cannot start a worker: {e}"),
        }
    }
}

/// The name of a signal (`SIGSEGV`), or `signal N`.
pub fn signal_name(signo: i32) -> &'static str {
    match signo {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGKILL => "SIGKILL",
        libc::SIGABRT => "SIGABRT",
        _ => "another signal",
    }
}

/// What a worker sent, and how it ended.
#[derive(Clone, Debug)]
pub struct WorkerReport {
    /// The records the closure sent, in order (tag, payload).
    pub records: Vec<(u8, Vec<u8>)>,
    /// `None` when the closure returned; else why the worker died.
    pub failure: Option<Failure>,
}

/// The child's end of the pipe.
pub struct Reporter {
    fd: i32,
}

impl Reporter {
    /// Send one record to the parent.
    pub fn send(&mut self, tag: u8, payload: &[u8]) {
        let mut buf = Vec::with_capacity(5 + payload.len());
        buf.push(tag);
        buf.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        buf.extend_from_slice(payload);
        write_all(self.fd, &buf);
    }
}

pub(crate) fn write_all(fd: i32, mut buf: &[u8]) {
    while !buf.is_empty() {
        // SAFETY: writing from a live buffer to our own descriptor.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        buf = &buf[n as usize..];
    }
}

/// The pipe's write end in the worker, for the signal handler.
static REPORT_FD: AtomicI32 = AtomicI32::new(-1);

const FATAL: [i32; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGTRAP,
];

extern "C" fn on_fault(signo: i32, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo and ucontext to an SA_SIGINFO
    // handler; only async-signal-safe calls (write, _exit) follow.
    unsafe {
        let addr = (*info).si_addr() as u64;
        let uc = uctx as *const libc::ucontext_t;
        let rip = (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] as u64;
        let mut rec = [0u8; 25];
        rec[0] = TAG_SIGNAL;
        rec[1..5].copy_from_slice(&20u32.to_le_bytes());
        rec[5..9].copy_from_slice(&signo.to_le_bytes());
        rec[9..17].copy_from_slice(&rip.to_le_bytes());
        rec[17..25].copy_from_slice(&addr.to_le_bytes());
        let fd = REPORT_FD.load(Ordering::Relaxed);
        libc::write(fd, rec.as_ptr().cast(), rec.len());
        libc::_exit(128 + signo);
    }
}

/// In the child: alternate signal stack, handlers, close foreign descriptors
/// (all but 0-2 and `fd`, where the handler reports).
///
/// # Safety
/// Only called in a freshly forked child.
unsafe fn child_setup(fd: i32) {
    child_setup_keeping(fd, &[fd]);
}

/// [`child_setup`] keeping the descriptors of `keep` (ascending) open too.
///
/// # Safety
/// Only called in a freshly forked child.
pub(crate) unsafe fn child_setup_keeping(fd: i32, keep: &[i32]) {
    REPORT_FD.store(fd, Ordering::Relaxed);
    const ALT: usize = 64 * 1024;
    let stack = libc::mmap(
        std::ptr::null_mut(),
        ALT,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
        -1,
        0,
    );
    if stack != libc::MAP_FAILED {
        let ss = libc::stack_t {
            ss_sp: stack,
            ss_flags: 0,
            ss_size: ALT,
        };
        libc::sigaltstack(&ss, std::ptr::null_mut());
    }
    for &sig in &FATAL {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_fault as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESETHAND;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
    // Keep 0-2 (a panic message may go to stderr) and our pipes.
    let mut from = 3;
    for &k in keep {
        if k > from {
            libc::syscall(libc::SYS_close_range, from as u32, (k - 1) as u32, 0u32);
        }
        from = from.max(k + 1);
    }
    libc::syscall(libc::SYS_close_range, from as u32, u32::MAX, 0u32);
}

/// Run `work` in a forked worker with `timeout`; collect what it sent and how
/// it ended. The caller's process is never affected by what `work` does.
pub fn run_isolated(timeout: Duration, work: impl FnOnce(&mut Reporter)) -> WorkerReport {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return spawn_failure(std::io::Error::last_os_error());
    }
    let [rd, wr] = fds;
    // SAFETY: the child only runs `child_setup`, `work` and `_exit` (module doc).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: closing our own descriptors.
        unsafe {
            libc::close(rd);
            libc::close(wr);
        }
        return spawn_failure(e);
    }
    if pid == 0 {
        // SAFETY: we are the child; it never returns into the caller.
        unsafe {
            libc::close(rd);
            child_setup(wr);
            let mut rep = Reporter { fd: wr };
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&mut rep)));
            libc::_exit(if ok.is_ok() { 0 } else { 101 });
        }
    }
    // SAFETY: the parent closes its copy of the write end.
    unsafe { libc::close(wr) };
    let (bytes, timed_out) = read_until_eof(rd, timeout);
    // SAFETY: closing our read end; then reap the child (killed if late).
    let status = unsafe {
        libc::close(rd);
        if timed_out {
            libc::kill(pid, libc::SIGKILL);
        }
        reap(pid)
    };
    let mut records = parse_records(&bytes);
    let signal = records
        .iter()
        .position(|(t, p)| *t == TAG_SIGNAL && p.len() == 20)
        .map(|i| records.remove(i).1);
    let failure = if timed_out {
        Some(Failure::Timeout)
    } else {
        failure_of(signal.as_deref(), status)
    };
    WorkerReport { records, failure }
}

/// How a worker ended, from the signal handler's record (if it sent one)
/// and its wait status; `None` for a clean exit.
pub(crate) fn failure_of(signal: Option<&[u8]>, status: i32) -> Option<Failure> {
    if let Some(p) = signal.filter(|p| p.len() == 20) {
        Some(Failure::Signal {
            signo: i32::from_le_bytes(p[0..4].try_into().unwrap()),
            rip: u64::from_le_bytes(p[4..12].try_into().unwrap()),
            addr: u64::from_le_bytes(p[12..20].try_into().unwrap()),
        })
    } else if libc::WIFSIGNALED(status) {
        Some(Failure::Signal {
            signo: libc::WTERMSIG(status),
            rip: 0,
            addr: 0,
        })
    } else if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) != 0 {
        Some(Failure::Exit(libc::WEXITSTATUS(status)))
    } else {
        None
    }
}

/// Reap `pid` (retrying on EINTR); its wait status.
pub(crate) fn reap(pid: i32) -> i32 {
    let mut status = 0;
    // SAFETY: waiting for our own child.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
    }
    status
}

fn spawn_failure(e: std::io::Error) -> WorkerReport {
    WorkerReport {
        records: Vec::new(),
        failure: Some(Failure::Spawn(e.to_string())),
    }
}

/// Read `fd` to end of file; `true` if the deadline passed first.
fn read_until_eof(fd: i32, timeout: Duration) -> (Vec<u8>, bool) {
    let deadline = Instant::now() + timeout;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (out, true);
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one live pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return (out, false);
        }
        if r == 0 {
            continue;
        }
        // SAFETY: reading into a live buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n == 0 {
            return (out, false);
        }
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return (out, false);
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
}

/// Split the byte stream into records (a truncated tail is dropped).
pub(crate) fn parse_records(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while bytes.len() >= 5 {
        let len = u32::from_le_bytes(bytes[1..5].try_into().unwrap()) as usize;
        if bytes.len() < 5 + len {
            break;
        }
        out.push((bytes[0], bytes[5..5 + len].to_vec()));
        bytes = &bytes[5 + len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(10);

    #[test]
    fn records_come_back() {
        let r = run_isolated(T, |rep| {
            rep.send(1, b"hello");
            rep.send(2, &[]);
        });
        assert_eq!(r.failure, None);
        assert_eq!(r.records, vec![(1, b"hello".to_vec()), (2, vec![])]);
    }

    #[test]
    fn a_segfault_is_reported_with_its_address_and_the_caller_survives() {
        let r = run_isolated(T, |rep| {
            rep.send(7, b"before");
            // SAFETY: deliberately faulting in the worker.
            unsafe { std::ptr::read_volatile(0x10 as *const u64) };
        });
        assert_eq!(r.records, vec![(7, b"before".to_vec())]);
        match r.failure {
            Some(Failure::Signal { signo, rip, addr }) => {
                assert_eq!(signo, libc::SIGSEGV);
                assert_eq!(addr, 0x10);
                assert_ne!(rip, 0);
            }
            other => panic!("expected a SIGSEGV report, got {other:?}"),
        }
        let again = run_isolated(T, |rep| rep.send(3, b"next"));
        assert_eq!(again.failure, None);
        assert_eq!(again.records.len(), 1);
    }

    #[test]
    fn a_hang_times_out_and_a_panic_is_an_exit() {
        let r = run_isolated(Duration::from_millis(200), |_| loop {
            std::hint::spin_loop();
        });
        assert_eq!(r.failure, Some(Failure::Timeout));
        let r = run_isolated(T, |_| std::panic::panic_any(0u8));
        assert_eq!(r.failure, Some(Failure::Exit(101)));
        assert_eq!(Failure::Exit(101).part(), "worker panicked");
    }

    #[test]
    fn sabotaged_native_code_faults_or_hangs_in_the_worker_only() {
        use crate::{CompileOptions, NativeProgram, Sabotage};
        let text = "func @main(%n: i64) -> i64 {\nentry:\n  %a = add %n, 1\n  ret %a\n}\n";
        let (m, _) = ir::parse_module(text, "t.ir").expect("parses");
        let fid = m.func_by_name("main").unwrap();
        let input = ir::parse_input_spec("n = 4", "<input>", &m, m.func(fid)).expect("input");
        let config = interp::Config::default();
        let run = |s: Option<Sabotage>, timeout| {
            let p = NativeProgram::with_sabotage(&m, CompileOptions::default(), s).unwrap();
            let r = run_isolated(timeout, |rep| {
                let e = p.run(fid, &input, &config);
                rep.send(1, e.behaviour.to_string().as_bytes());
            });
            let around = match &r.failure {
                Some(Failure::Signal { rip, .. }) => p.disassembly_around(*rip, 2),
                _ => String::new(),
            };
            (r, around)
        };
        let (r, around) = run(Some(Sabotage::Fault), T);
        assert!(
            matches!(
                r.failure,
                Some(Failure::Signal {
                    signo: libc::SIGSEGV,
                    ..
                })
            ),
            "{:?}",
            r.failure
        );
        assert!(around.contains("=> ") && around.contains("hlt"), "{around}");
        let (r, _) = run(Some(Sabotage::Hang), Duration::from_millis(300));
        assert_eq!(r.failure, Some(Failure::Timeout));
        let (r, _) = run(None, T);
        assert_eq!(r.failure, None);
        assert_eq!(r.records.len(), 1);
    }
}
