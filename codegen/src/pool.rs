//! Per-thread reuse of the big memory of a native execution: the strict
//! heap's reservation, the machine stack, the dense heap's buffer and the
//! code mapping.
//! Mapping and unmapping them for every execution cost most of a short run
//! (README "Native code"); each thread keeps one of each instead and resets
//! it between runs so that the next run starts from zeroed memory:
//!
//! - a strict heap's reservation ([`HeapMap`]) remembers the protection of
//!   each of its pages. A run sets exactly the protections its layout needs
//!   (object pages read+write, the guard page after each object PROT_NONE),
//!   but calls `mprotect` only for pages whose protection differs from what
//!   the previous run left, so a run that places objects where the last one
//!   did (the same inputs, the original and the optimized module) makes no
//!   `mprotect` at all. When the run ends every read+write page is zeroed in
//!   place (`memset`: the pages stay resident, so the next run takes no page
//!   fault); a long run of pages (a big array) is dropped instead
//!   (`MADV_DONTNEED`) and made PROT_NONE again, and so are the pages an
//!   earlier run left read+write past this run's last guard page when there
//!   are many of them;
//! - a stack comes back with its top pages zeroed in place and the rest of
//!   its read+write part dropped; its PROT_NONE guard page stays at the same
//!   distance below the top a fresh stack of the requested size would have;
//! - a dense buffer comes back with the words of the arena zeroed;
//! - a module's code mapping ([`CodeMap`]) comes back read+execute and is
//!   made read+write (never both) to take the next module's code.
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
        if self.len == 0 {
            return;
        }
        // SAFETY: the mapping is ours and nothing points into it any more.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

thread_local! {
    static HEAPS: RefCell<Option<HeapMap>> = const { RefCell::new(None) };
    static STACKS: RefCell<Option<Reservation>> = const { RefCell::new(None) };
    static DENSE: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// A code mapping (read+execute) and how many of its bytes were written.
    static CODE: RefCell<Option<(Reservation, usize)>> = const { RefCell::new(None) };
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

/// Runs of at least this many read+write pages are dropped (`MADV_DONTNEED`)
/// and made PROT_NONE at a reset rather than zeroed in place.
const ZERO_IN_PLACE_PAGES: usize = 64;

/// A heap reservation that remembers the protection of each page (see the
/// module docs): PROT_NONE when fresh, never executable.
pub struct HeapMap {
    res: Reservation,
    /// Per page: read+write (`true`) or PROT_NONE.
    rw: Vec<bool>,
    /// Every page at or past this one is PROT_NONE.
    hi: usize,
}

impl HeapMap {
    /// The first byte.
    pub fn ptr(&self) -> *mut u8 {
        self.res.ptr
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.res.len
    }

    /// Whether the reservation is empty (never: reservations are at least a page).
    pub fn is_empty(&self) -> bool {
        self.res.len == 0
    }

    /// Give bytes `from..to` (page-aligned, inside) the protection `rw`
    /// (read+write or PROT_NONE), calling `mprotect` only for the pages
    /// whose protection differs.
    pub fn set(&mut self, from: usize, to: usize, rw: bool) -> io::Result<()> {
        assert!(from.is_multiple_of(PAGE) && to.is_multiple_of(PAGE) && to <= self.res.len);
        let (mut p, end) = (from / PAGE, to / PAGE);
        while p < end {
            if self.rw[p] == rw {
                p += 1;
                continue;
            }
            let q = (p..end).find(|&q| self.rw[q] == rw).unwrap_or(end);
            let prot = if rw {
                libc::PROT_READ | libc::PROT_WRITE
            } else {
                libc::PROT_NONE
            };
            self.res.protect(p * PAGE, q * PAGE, prot)?;
            self.rw[p..q].fill(rw);
            if rw {
                self.hi = self.hi.max(q);
            }
            p = q;
        }
        Ok(())
    }

    /// Whether byte `at` lies in a read+write page.
    pub fn is_rw(&self, at: usize) -> bool {
        self.rw.get(at / PAGE).copied().unwrap_or(false)
    }

    /// Zero every read+write page (see the module docs); `frontier` is the
    /// end of the last guard page the run used.
    fn reset(&mut self, frontier: usize) -> io::Result<()> {
        let frontier = frontier.div_ceil(PAGE).min(self.rw.len());
        let stale = self.rw[frontier.min(self.hi)..self.hi]
            .iter()
            .filter(|&&r| r)
            .count();
        let mut p = 0;
        let mut hi = 0;
        while p < self.hi {
            if !self.rw[p] {
                p += 1;
                continue;
            }
            let q = (p..self.hi).find(|&q| !self.rw[q]).unwrap_or(self.hi);
            let drop =
                q - p >= ZERO_IN_PLACE_PAGES || (p >= frontier && stale > ZERO_IN_PLACE_PAGES);
            if drop {
                self.res.protect(p * PAGE, q * PAGE, libc::PROT_NONE)?;
                self.rw[p..q].fill(false);
                self.res.discard(p * PAGE, q * PAGE)?;
            } else {
                // SAFETY: pages p..q are read+write pages of this mapping and
                // nothing borrows their contents any more.
                unsafe { std::ptr::write_bytes(self.res.ptr.add(p * PAGE), 0, (q - p) * PAGE) };
                hi = q;
            }
            p = q;
        }
        self.hi = hi;
        Ok(())
    }
}

/// A heap reservation of at least `len` bytes whose read+write pages are all
/// zero: the thread's pooled one if it is large enough, else a fresh
/// PROT_NONE one.
pub fn take_heap(len: usize) -> io::Result<HeapMap> {
    let len = page_up(len.max(1));
    let pooled = HEAPS
        .try_with(|p| {
            let mut p = p.borrow_mut();
            if p.as_ref().is_some_and(|h| h.res.len >= len) {
                p.take()
            } else {
                None
            }
        })
        .ok()
        .flatten();
    match pooled {
        Some(h) => Ok(h),
        None => Ok(HeapMap {
            res: Reservation::map(len)?,
            rw: vec![false; len / PAGE],
            hi: 0,
        }),
    }
}

/// Give back a heap reservation whose run used bytes `0..frontier`: its
/// read+write pages are zeroed and it is pooled (or unmapped if the reset
/// fails, or the pool holds a larger one).
pub fn give_heap(mut h: HeapMap, frontier: usize) {
    if h.reset(frontier).is_ok() {
        let _ = HEAPS.try_with(move |p| {
            let mut p = p.borrow_mut();
            if p.as_ref().is_none_or(|q| q.res.len < h.res.len) {
                *p = Some(h);
            }
        });
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

/// Bytes below a stack's top that a reset zeroes in place (the frames of a
/// typical run and the runtime calls' stack); the rest is dropped.
const STACK_ZERO_IN_PLACE: usize = 4 * PAGE;

impl Drop for Stack {
    fn drop(&mut self) {
        if let Some(r) = self.res.take() {
            // Only bytes PAGE..top were read+write for this run's code.
            let keep = self.top.saturating_sub(STACK_ZERO_IN_PLACE).max(PAGE);
            // SAFETY: bytes keep..top are read+write pages of the stack and
            // the run that used them is over.
            unsafe { std::ptr::write_bytes(r.ptr.add(keep), 0, self.top - keep) };
            if r.discard(PAGE, keep).is_ok() {
                give_to(&STACKS, r);
            }
        }
    }
}

/// Machine code mapped read+execute, never writable while executable: it
/// is written while read+write, then flipped (W^X). When dropped, the
/// mapping goes back to the thread's pool, and the next module's code is
/// written into it after flipping it back to read+write (two `mprotect`s
/// instead of mapping, faulting in and unmapping fresh pages per module).
pub struct CodeMap {
    res: Reservation,
    /// Bytes written so far (zero past them).
    written: usize,
}

// SAFETY: the mapping is owned and, once sealed, never written: sharing
// read+execute memory between threads is sound.
unsafe impl Send for CodeMap {}
// SAFETY: as above; `&CodeMap` only reads the code's address.
unsafe impl Sync for CodeMap {}

impl CodeMap {
    /// `code` mapped read+execute (the thread's pooled mapping if it is
    /// large enough, else a fresh one).
    pub fn new(code: &[u8]) -> io::Result<CodeMap> {
        let len = page_up(code.len().max(1));
        let pooled = CODE
            .try_with(|p| {
                let mut p = p.borrow_mut();
                if p.as_ref().is_some_and(|(r, _)| r.len >= len) {
                    p.take()
                } else {
                    None
                }
            })
            .ok()
            .flatten();
        let mut map = match pooled {
            Some((res, written)) => CodeMap { res, written },
            None => CodeMap {
                res: Reservation::map(len)?,
                written: 0,
            },
        };
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        map.res.protect(0, map.res.len, rw)?;
        // SAFETY: the mapping is read+write now (and not executable), owned
        // by `map`; old code past the new one is zeroed.
        unsafe {
            std::ptr::copy_nonoverlapping(code.as_ptr(), map.res.ptr, code.len());
            if map.written > code.len() {
                std::ptr::write_bytes(map.res.ptr.add(code.len()), 0, map.written - code.len());
            }
        }
        map.written = code.len();
        map.res
            .protect(0, map.res.len, libc::PROT_READ | libc::PROT_EXEC)?;
        Ok(map)
    }

    /// The address of the first byte.
    pub fn as_ptr(&self) -> *const u8 {
        self.res.ptr
    }
}

impl Drop for CodeMap {
    fn drop(&mut self) {
        let res = std::mem::replace(
            &mut self.res,
            Reservation {
                ptr: std::ptr::null_mut(),
                len: 0,
            },
        );
        if res.len == 0 {
            return;
        }
        // (A reservation the pool does not take is unmapped.)
        let entry = (res, self.written);
        let _ = CODE.try_with(move |p| {
            let mut p = p.borrow_mut();
            if p.as_ref().is_none_or(|(q, _)| q.len < entry.0.len) {
                *p = Some(entry);
            }
        });
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
        HEAPS.with(|p| p.borrow().as_ref().map_or(0, |h| h.res.ptr as usize)),
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

    /// Run `f` in a forked worker and say whether it died of SIGSEGV.
    fn segfaults(f: impl FnOnce()) -> bool {
        let report = crate::isolate::run_isolated(std::time::Duration::from_secs(10), |_| f());
        matches!(report.failure, Some(crate::isolate::Failure::Signal { signo, .. }) if signo == libc::SIGSEGV)
    }

    #[test]
    fn a_pooled_heap_comes_back_zero_with_its_protections_remembered() {
        let mut h = take_heap(16 * PAGE).unwrap();
        let at = h.ptr();
        h.set(2 * PAGE, 5 * PAGE, true).unwrap();
        h.set(5 * PAGE, 6 * PAGE, false).unwrap();
        // SAFETY: the pages were just made read+write.
        unsafe { std::ptr::write_bytes(h.ptr().add(2 * PAGE), 0xab, 3 * PAGE) };
        give_heap(h, 6 * PAGE);
        // A smaller request reuses it: the same pages are still read+write
        // (no mprotect needed to use them again) and read zero.
        let mut h = take_heap(8 * PAGE).unwrap();
        assert_eq!(h.ptr(), at, "the reservation is reused");
        assert!((2..5).all(|p| h.is_rw(p * PAGE)) && !h.is_rw(5 * PAGE) && !h.is_rw(PAGE));
        assert!(words_of(&h.res, 2 * PAGE, 5 * PAGE).iter().all(|&w| w == 0));
        // Setting them again changes nothing; a page that must become a
        // guard page does, and faults.
        h.set(2 * PAGE, 4 * PAGE, true).unwrap();
        h.set(4 * PAGE, 5 * PAGE, false).unwrap();
        assert!(!h.is_rw(4 * PAGE));
        let guard = h.ptr().wrapping_add(4 * PAGE) as usize;
        assert!(segfaults(|| {
            // SAFETY: deliberately touching the guard page (in a worker).
            unsafe { std::hint::black_box(std::ptr::read_volatile(guard as *const u64)) };
        }));
        // A run that used only pages 0..4: page 2..4 is zeroed in place.
        h.set(0, 2 * PAGE, true).unwrap();
        give_heap(h, 5 * PAGE);
        let h = take_heap(8 * PAGE).unwrap();
        assert!(words_of(&h.res, 0, 4 * PAGE).iter().all(|&w| w == 0));
        give_heap(h, 5 * PAGE);
        let big = take_heap(64 * PAGE).unwrap();
        assert_ne!(big.ptr(), at);
        assert_eq!(big.len(), 64 * PAGE);
    }

    #[test]
    fn a_code_map_is_reused_runs_and_is_never_writable() {
        // mov eax, 7; ret
        let seven = [0xb8, 7, 0, 0, 0, 0xc3];
        let c = CodeMap::new(&seven).unwrap();
        let at = c.as_ptr();
        // SAFETY: the bytes are a complete function returning 7.
        let f: extern "C" fn() -> u32 = unsafe { std::mem::transmute(c.as_ptr()) };
        assert_eq!(f(), 7);
        drop(c);
        // mov eax, 9; ret (shorter code after longer: the rest reads zero)
        let c = CodeMap::new(&[0xb8, 9, 0, 0, 0, 0xc3, 0x90]).unwrap();
        assert_eq!(c.as_ptr(), at, "the mapping is reused");
        // SAFETY: as above.
        let f: extern "C" fn() -> u32 = unsafe { std::mem::transmute(c.as_ptr()) };
        assert_eq!(f(), 9);
        drop(c);
        let c = CodeMap::new(&[0xc3]).unwrap();
        // SAFETY: reading the (readable) code bytes.
        let rest = unsafe { std::slice::from_raw_parts(c.as_ptr().add(1), 7) };
        assert!(rest.iter().all(|&b| b == 0), "{rest:?}");
        let p = c.as_ptr() as usize;
        assert!(segfaults(|| {
            // SAFETY: deliberately writing executable code (in a worker).
            unsafe { std::ptr::write_volatile(p as *mut u8, 0x90) };
        }));
    }

    #[test]
    fn long_runs_of_pages_are_dropped_and_protected_again() {
        let n = ZERO_IN_PLACE_PAGES + 2;
        let mut h = take_heap((n + 4) * PAGE).unwrap();
        h.set(PAGE, (n + 1) * PAGE, true).unwrap();
        // SAFETY: the pages were just made read+write.
        unsafe { std::ptr::write_bytes(h.ptr().add(PAGE), 0x5a, n * PAGE) };
        let at = h.ptr() as usize;
        give_heap(h, (n + 2) * PAGE);
        let mut h = take_heap((n + 4) * PAGE).unwrap();
        assert_eq!(h.ptr() as usize, at);
        assert!((1..=n).all(|p| !h.is_rw(p * PAGE)), "PROT_NONE again");
        h.set(PAGE, (n + 1) * PAGE, true).unwrap();
        assert!(words_of(&h.res, PAGE, (n + 1) * PAGE)
            .iter()
            .all(|&w| w == 0));
        give_heap(h, (n + 2) * PAGE);
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
