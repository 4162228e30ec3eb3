//! Long-lived crash-isolated workers: a forked process that serves requests
//! over a pair of pipes until it dies, so that the price of isolation is one
//! fork per worker life instead of one per compiled module (see
//! [`crate::isolate`] for the one-shot kind and the fork-safety rules, which
//! apply here too: fork from a single-threaded moment when you can, the
//! serving closure must not print or take locks another thread may hold).
//!
//! Protocol. Parent → worker: `len: u32 (LE), request bytes`. Worker →
//! parent: one record `tag 1, len: u32 (LE), response bytes` per request. The
//! worker's fault handler writes its [`crate::isolate::TAG_SIGNAL`] record
//! (signal, faulting rip and address) to the response pipe and exits; a worker
//! that does not answer within the call's timeout is killed. Either way
//! [`Worker::call`] returns the [`Failure`] and the worker is gone: the caller
//! spawns a new one (and decides what to do with the request that killed it).

use crate::isolate::{
    child_setup_keeping, failure_of, parse_records, reap, write_all, Failure, TAG_SIGNAL,
};
use std::time::{Duration, Instant};

/// Record tag of a response.
const TAG_RESPONSE: u8 = 1;

/// A forked worker process serving requests with the closure it was spawned with.
pub struct Worker {
    pid: i32,
    /// Parent's write end of the request pipe.
    to: i32,
    /// Parent's read end of the response pipe.
    from: i32,
    /// Bytes read past the last complete record.
    pending: Vec<u8>,
}

impl Worker {
    /// Fork a worker that answers each request with `serve(request)`. A panic
    /// in `serve` ends the worker (exit code 101); so does a fault (its
    /// handler reports the signal) or the parent closing the request pipe.
    pub fn spawn(mut serve: impl FnMut(&[u8]) -> Vec<u8>) -> Result<Worker, Failure> {
        let (req_rd, req_wr) = pipe()?;
        let (resp_rd, resp_wr) = match pipe() {
            Ok(p) => p,
            Err(e) => {
                close_all(&[req_rd, req_wr]);
                return Err(e);
            }
        };
        // SAFETY: the child only serves requests over its pipes and `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            close_all(&[req_rd, req_wr, resp_rd, resp_wr]);
            return Err(Failure::Spawn(std::io::Error::last_os_error().to_string()));
        }
        if pid == 0 {
            close_all(&[req_wr, resp_rd]);
            let mut keep = [req_rd, resp_wr];
            keep.sort_unstable();
            // SAFETY: we are the freshly forked child; it never returns.
            unsafe {
                child_setup_keeping(resp_wr, &keep);
                let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    while let Some(req) = read_frame(req_rd) {
                        let resp = serve(&req);
                        let mut buf = Vec::with_capacity(5 + resp.len());
                        buf.push(TAG_RESPONSE);
                        buf.extend_from_slice(&(resp.len() as u32).to_le_bytes());
                        buf.extend_from_slice(&resp);
                        write_all(resp_wr, &buf);
                    }
                }));
                libc::_exit(if ok.is_ok() { 0 } else { 101 });
            }
        }
        close_all(&[req_rd, resp_wr]);
        Ok(Worker {
            pid,
            to: req_wr,
            from: resp_rd,
            pending: Vec::new(),
        })
    }

    /// The worker's process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Send `request` and wait up to `timeout` for the response. On `Err` the
    /// worker has died (or was killed at the timeout) and has been reaped;
    /// spawn a new one.
    pub fn call(&mut self, request: &[u8], timeout: Duration) -> Result<Vec<u8>, Failure> {
        let mut frame = Vec::with_capacity(4 + request.len());
        frame.extend_from_slice(&(request.len() as u32).to_le_bytes());
        frame.extend_from_slice(request);
        // A dead worker makes this write fail (EPIPE; SIGPIPE is ignored by
        // the Rust runtime); the read below then sees end of file.
        write_all(self.to, &frame);
        let deadline = Instant::now() + timeout;
        let mut buf = [0u8; 4096];
        loop {
            let mut records = parse_records(&self.pending);
            if let Some(i) = records.iter().position(|(t, _)| *t == TAG_RESPONSE) {
                let used: usize = records[..=i].iter().map(|(_, p)| 5 + p.len()).sum();
                self.pending.drain(..used);
                return Ok(records.swap_remove(i).1);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                // SAFETY: killing our own child.
                unsafe { libc::kill(self.pid, libc::SIGKILL) };
                return Err(self.finish(Some(Failure::Timeout)));
            }
            let mut pfd = libc::pollfd {
                fd: self.from,
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
            // SAFETY: one live pollfd.
            let r = unsafe { libc::poll(&mut pfd, 1, ms) };
            if r <= 0 {
                continue; // timeout (checked above) or EINTR
            }
            // SAFETY: reading into a live buffer.
            let n = unsafe { libc::read(self.from, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            if n <= 0 {
                return Err(self.finish(None));
            }
            self.pending.extend_from_slice(&buf[..n as usize]);
        }
    }

    /// Reap the worker after end of file (or a kill); how it ended.
    fn finish(&mut self, forced: Option<Failure>) -> Failure {
        let status = reap(self.pid);
        self.pid = 0;
        let records = parse_records(&self.pending);
        let signal = records
            .iter()
            .find(|(t, p)| *t == TAG_SIGNAL && p.len() == 20)
            .map(|(_, p)| p.as_slice());
        forced
            .or_else(|| failure_of(signal, status))
            .unwrap_or(Failure::Exit(0))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        close_all(&[self.to, self.from]);
        if self.pid > 0 {
            // Closing the request pipe ends the worker's loop; reap it.
            reap(self.pid);
        }
    }
}

fn pipe() -> Result<(i32, i32), Failure> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Failure::Spawn(std::io::Error::last_os_error().to_string()));
    }
    Ok((fds[0], fds[1]))
}

fn close_all(fds: &[i32]) {
    for &fd in fds {
        // SAFETY: closing descriptors we own.
        unsafe { libc::close(fd) };
    }
}

/// Read exactly `buf.len()` bytes; `false` at end of file or on an error.
fn read_exact(fd: i32, mut buf: &mut [u8]) -> bool {
    while !buf.is_empty() {
        // SAFETY: reading into a live buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return false;
        }
        buf = &mut buf[n as usize..];
    }
    true
}

/// One request frame, or `None` when the parent closed the pipe.
fn read_frame(fd: i32) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    if !read_exact(fd, &mut len) {
        return None;
    }
    let mut req = vec![0u8; u32::from_le_bytes(len) as usize];
    read_exact(fd, &mut req).then_some(req)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(10);

    fn echo_or_die(req: &[u8]) -> Vec<u8> {
        match req {
            b"fault" => {
                // SAFETY: deliberately faulting in the worker.
                unsafe { std::ptr::read_volatile(0x18 as *const u64) };
                unreachable!()
            }
            b"hang" => loop {
                std::thread::sleep(Duration::from_millis(10));
            },
            b"panic" => panic!("asked to"),
            _ => [req, b"!"].concat(),
        }
    }

    #[test]
    fn one_worker_serves_many_requests() {
        let mut w = Worker::spawn(echo_or_die).expect("spawn");
        let pid = w.pid();
        for i in 0..50u32 {
            let req = i.to_string().into_bytes();
            assert_eq!(w.call(&req, T).unwrap(), [&req[..], b"!"].concat());
        }
        assert_eq!(w.pid(), pid, "the same process answered every request");
        let big = vec![7u8; 100_000];
        assert_eq!(w.call(&big, T).unwrap().len(), 100_001);
    }

    #[test]
    fn a_fault_a_hang_a_panic_and_a_kill_end_the_worker_and_a_new_one_serves() {
        let mut w = Worker::spawn(echo_or_die).expect("spawn");
        match w.call(b"fault", T) {
            Err(Failure::Signal { signo, addr, rip }) => {
                assert_eq!((signo, addr), (libc::SIGSEGV, 0x18));
                assert_ne!(rip, 0);
            }
            other => panic!("expected SIGSEGV, got {other:?}"),
        }
        let mut w = Worker::spawn(echo_or_die).expect("respawn");
        assert_eq!(w.call(b"a", T).unwrap(), b"a!");
        assert_eq!(
            w.call(b"hang", Duration::from_millis(200)),
            Err(Failure::Timeout)
        );
        let mut w = Worker::spawn(echo_or_die).expect("respawn");
        assert_eq!(w.call(b"panic", T), Err(Failure::Exit(101)));
        // Killed from outside while it works on a request.
        let mut w = Worker::spawn(echo_or_die).expect("respawn");
        let pid = w.pid();
        let killer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            // SAFETY: killing the worker this test spawned.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        });
        let r = w.call(b"hang", T);
        killer.join().unwrap();
        assert!(
            matches!(
                r,
                Err(Failure::Signal {
                    signo: libc::SIGKILL,
                    ..
                })
            ),
            "{r:?}"
        );
        let mut w = Worker::spawn(echo_or_die).expect("respawn");
        assert_eq!(w.call(b"b", T).unwrap(), b"b!");
    }
}
