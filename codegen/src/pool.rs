//! Per-thread reuse of the big memory of a native execution: the strict
//! heap's PROT_NONE reservation, the machine stack and the dense heap's
//! buffer. Mapping and unmapping them for every execution cost most of a
//! short run (README "Native code"); each thread keeps one of each instead
//! and resets it between runs so that the next run starts from exactly the
//! state a fresh mapping gives:
//!
//! - a reservation comes back with the pages a run made read+write turned
//!   PROT_NONE again and dropped (`MADV_DONTNEED`: they read as zero when
//!   next made accessible); only that prefix is touched, one `mprotect` and
//!   one `madvise`, which also merges the split mappings back into one;
//! - a stack comes back with its read+write part dropped the same way, and
//!   its PROT_NONE guard page stays at the same distance below the top a
//!   fresh stack of the requested size would have;
//! - a dense buffer comes back with the words of the arena zeroed.
//!
//! A reset that fails unmaps the memory instead of pooling it. Nothing here
//! is ever executable. The pools are thread-local, so a forked worker
//! (`crate::worker`, `crate::isolate`) owns a private copy-on-write copy of
//! its parent thread's pool, which it resets and reuses without touching the
//! parent's.

use std::cell::RefCell;
use std::io;

const PAGE: usize = 4096;

fn page_up(b: usize) -> usize {
    b.div_ceil(PAGE) * PAGE
}

/// An owned anonymous private mapping, PROT_NONE when fresh (never executable).
pub struct Reservation {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the reservation owns its mapping; nothing else points into it once it moves.
unsafe impl Send for Reservation {}

impl Reservation {
    /// A fresh PROT_NONE reservation of `len` bytes (a multiple of the page size).
    fn map(len: usize) -> io::Result<Reservation> {
        // SAFETY: a fresh anonymous private mapping, owned by the reservation.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Reservation {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The first byte.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the reservation is empty (never: reservations are at least a page).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Make bytes `from..to` (page-aligned, inside) read+write.
    pub fn protect_rw(&self, from: usize, to: usize) -> io::Result<()> {
        self.protect(from, to, libc::PROT_READ | libc::PROT_WRITE)
    }

    fn protect(&self, from: usize, to: usize, prot: libc::c_int) -> io::Result<()> {
        if to <= from {
            return Ok(());
        }
        assert!(from.is_multiple_of(PAGE) && to.is_multiple_of(PAGE) && to <= self.len);
        // SAFETY: the range lies inside the mapping this reservation owns.
        let r = unsafe { libc::mprotect(self.ptr.add(from).cast(), to - from, prot) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Drop the pages of bytes `from..to` (page-aligned, inside): they read as
    /// zero when next touched.
    fn discard(&self, from: usize, to: usize) -> io::Result<()> {
        if to <= from {
            return Ok(());
        }
        assert!(from.is_multiple_of(PAGE) && to.is_multiple_of(PAGE) && to <= self.len);
        // SAFETY: the range lies inside the mapping this reservation owns, and
        // nothing borrows its contents any more.
        let r = unsafe { libc::madvise(self.ptr.add(from).cast(), to - from, libc::MADV_DONTNEED) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: the mapping is ours and nothing points into it any more.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

thread_local! {
    static HEAPS: RefCell<Option<Reservation>> = const { RefCell::new(None) };
    static STACKS: RefCell<Option<Reservation>> = const { RefCell::new(None) };
    static DENSE: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Take the pooled reservation of `pool` if it holds at least `len` bytes.
fn take_from(
    pool: &'static std::thread::LocalKey<RefCell<Option<Reservation>>>,
    len: usize,
) -> Option<Reservation> {
    pool.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.as_ref().is_some_and(|r| r.len >= len) {
            p.take()
        } else {
            None
        }
    })
    .ok()
    .flatten()
}

/// Pool `r` (already reset) unless the pool holds a larger one.
fn give_to(pool: &'static std::thread::LocalKey<RefCell<Option<Reservation>>>, r: Reservation) {
    let _ = pool.try_with(move |p| {
        let mut p = p.borrow_mut();
        if p.as_ref().is_none_or(|q| q.len < r.len) {
            *p = Some(r);
        }
    });
}

/// A PROT_NONE reservation of at least `len` bytes in the state of a fresh
/// mapping: the thread's pooled one if it is large enough, else a new one.
pub fn take_reservation(len: usize) -> io::Result<Reservation> {
    let len = page_up(len.max(1));
    match take_from(&HEAPS, len) {
        Some(r) => Ok(r),
        None => Reservation::map(len),
    }
}

/// Give back a reservation of which only bytes `0..dirty` were ever made
/// read+write: they are made PROT_NONE and dropped, and the reservation is
/// pooled (or unmapped if that fails).
pub fn give_reservation(r: Reservation, dirty: usize) {
    let dirty = page_up(dirty).min(r.len);
    if r.protect(0, dirty, libc::PROT_NONE).is_ok() && r.discard(0, dirty).is_ok() {
        give_to(&HEAPS, r);
    }
}

/// A machine stack: read+write pages above one PROT_NONE guard page, taken
/// from the thread's pool and given back (reset) when dropped.
pub struct Stack {
    res: Option<Reservation>,
    top: usize,
}

impl Stack {
    /// A stack with `bytes` (rounded up to pages) between its top and its
    /// guard page, every byte zero.
    pub fn take(bytes: usize) -> io::Result<Stack> {
        let top = PAGE + page_up(bytes);
        let res = match take_from(&STACKS, top) {
            Some(r) => r,
            None => {
                let r = Reservation::map(top)?;
                r.protect_rw(PAGE, top)?;
                r
            }
        };
        Ok(Stack {
            res: Some(res),
            top,
        })
    }

    /// The 16-byte-aligned top of the stack (it grows down to the guard page).
    pub fn top(&mut self) -> *mut u8 {
        let res = self.res.as_ref().expect("a live stack");
        // SAFETY: `top` lies inside the reservation (at most one past its end).
        unsafe { res.ptr.add(self.top) }
    }

    /// The address of the guard page.
    pub fn guard(&self) -> *const u8 {
        self.res.as_ref().expect("a live stack").ptr
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        if let Some(r) = self.res.take() {
            if r.discard(PAGE, r.len).is_ok() {
                give_to(&STACKS, r);
            }
        }
    }
}

/// An empty buffer with capacity for at least `words` words (the thread's
/// pooled one if it is large enough; its words are zero).
pub fn take_words(words: usize) -> Vec<u64> {
    let v = DENSE
        .try_with(|d| std::mem::take(&mut *d.borrow_mut()))
        .unwrap_or_default();
    if v.capacity() >= words {
        v
    } else {
        Vec::with_capacity(words)
    }
}

/// Give back a dense arena's buffer: its words are zeroed and it is pooled
/// unless the pool holds a larger one.
pub fn give_words(mut v: Vec<u64>) {
    v.fill(0);
    v.clear();
    let _ = DENSE.try_with(move |d| {
        let mut d = d.borrow_mut();
        if d.capacity() < v.capacity() {
            *d = v;
        }
    });
}

/// The addresses of the thread's pooled reservation, stack and dense buffer
/// (0 when the pool is empty), to test that executions reuse them.
#[cfg(test)]
pub(crate) fn pooled() -> [usize; 3] {
    let addr = |p: &RefCell<Option<Reservation>>| p.borrow().as_ref().map_or(0, |r| r.ptr as usize);
    [
        HEAPS.with(addr),
        STACKS.with(addr),
        DENSE.with(|d| {
            if d.borrow().capacity() > 0 {
                d.borrow().as_ptr() as usize
            } else {
                0
            }
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words_of(r: &Reservation, from: usize, to: usize) -> &[u64] {
        // SAFETY: the caller made the range read+write.
        unsafe { std::slice::from_raw_parts(r.ptr.add(from).cast(), (to - from) / 8) }
    }

    #[test]
    fn a_pooled_reservation_comes_back_protected_and_zero() {
        let r = take_reservation(16 * PAGE).unwrap();
        let at = r.ptr;
        r.protect_rw(2 * PAGE, 5 * PAGE).unwrap();
        // SAFETY: the pages were just made read+write.
        unsafe { std::ptr::write_bytes(r.ptr.add(2 * PAGE), 0xab, 3 * PAGE) };
        give_reservation(r, 5 * PAGE);
        // A smaller request reuses it; a larger one would map a new one.
        let r = take_reservation(8 * PAGE).unwrap();
        assert_eq!(r.ptr, at, "the reservation is reused");
        r.protect_rw(0, 6 * PAGE).unwrap();
        assert!(words_of(&r, 0, 6 * PAGE).iter().all(|&w| w == 0));
        give_reservation(r, 6 * PAGE);
        let big = take_reservation(64 * PAGE).unwrap();
        assert_ne!(big.ptr, at);
        assert_eq!(big.len(), 64 * PAGE);
    }

    #[test]
    fn a_pooled_stack_is_reused_zero_and_keeps_its_guard_distance() {
        let mut s = Stack::take(8 * PAGE).unwrap();
        let top = s.top();
        // SAFETY: the stack's read+write part lies below its top.
        unsafe { std::ptr::write_bytes(top.sub(8 * PAGE), 0xcd, 8 * PAGE) };
        drop(s);
        let mut s = Stack::take(3 * PAGE).unwrap();
        assert_eq!(s.guard(), top.wrapping_sub(9 * PAGE) as *const u8, "reused");
        let top = s.top();
        assert_eq!(top as usize - s.guard() as usize, 4 * PAGE);
        let res = s.res.as_ref().unwrap();
        assert!(words_of(res, PAGE, res.len).iter().all(|&w| w == 0));
    }

    #[test]
    fn a_pooled_buffer_is_reused_and_zeroed() {
        let mut v = take_words(1000);
        v.resize(700, 7);
        let at = v.as_ptr();
        give_words(v);
        let mut v = take_words(500);
        assert_eq!(v.as_ptr(), at);
        assert!(v.is_empty());
        // SAFETY: reading the spare capacity that `give_words` zeroed.
        unsafe { v.set_len(700) };
        assert!(v.iter().all(|&w| w == 0));
    }
}
