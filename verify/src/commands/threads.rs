//! Work over generated programs on several threads (the surveys of `loadstar
//! peer --generated`, with or without `--lli`): each thread takes the next
//! program number, keeps its own state, and all stop at the first error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Run `work(state, k)` for every `k` in `0..n` on `jobs` threads, each with
/// a state made by `init` and handed to `finish` when the numbers run out;
/// the first error (with the `k` it happened at, or `n` from `finish`).
pub fn over_programs<S, E: Send>(
    n: u64,
    jobs: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, u64) -> Result<(), E> + Sync,
    finish: impl Fn(S) -> Result<(), E> + Sync,
) -> Result<(), (u64, E)> {
    let next = AtomicU64::new(0);
    let error = Mutex::new(None);
    let fail = |k: u64, e: E| {
        let mut slot = error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert((k, e));
    };
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                let mut state = init();
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let stopped = error.lock().unwrap_or_else(|p| p.into_inner()).is_some();
                    if k >= n || stopped {
                        break;
                    }
                    if let Err(e) = work(&mut state, k) {
                        return fail(k, e);
                    }
                }
                if let Err(e) = finish(state) {
                    fail(n, e);
                }
            });
        }
    });
    match error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
