//! Strict memory: a word-addressed heap whose objects sit against PROT_NONE
//! guard pages, so that generated code reading or writing past the end of an
//! object, or wider than 8 bytes at its last word, faults instead of silently
//! touching a neighbour.
//!
//! The strict heap keeps the interpreter's addressing (a reference is a word
//! offset from the heap base `r15`; header, length and slot words exactly as
//! in [`interp::heap`]), but leaves gaps in the address space: the globals
//! block and each of the first [`GUARDED_OBJECTS`] objects end exactly at a
//! page boundary, and the page after it is PROT_NONE. The whole span is one
//! reservation mapped PROT_NONE (never executable); the pages an object
//! occupies are made read+write when it is allocated. Words of those pages
//! before an object's header are zero and belong to no object.
//!
//! Objects after the first [`GUARDED_OBJECTS`] are packed one after another
//! (as in the dense heap) in read+write pages that grow with them: each
//! `mprotect` splits a mapping, and the kernel caps mappings per process
//! (`vm.max_map_count`, 65,530 by default), so guarding every object of a
//! long run is not possible. The end of the packed area is still followed by
//! a PROT_NONE page.
//!
//! The heap budget is counted in words exactly as the interpreter counts it
//! (the gaps are free), so `heap_exhausted` happens at the same allocation.
//! The interpreter's observation code and the environment step read the
//! objects through a slice over the span: they only visit words of reachable
//! objects, never the gaps.
//!
//! The reservation comes from the thread's pool ([`crate::pool::HeapMap`]),
//! which remembers each page's protection: placing an object sets exactly
//! the protections below its guard page (object pages read+write, guard
//! pages PROT_NONE), with an `mprotect` only where the last run's layout
//! differs, and when the heap is dropped its read+write pages are zeroed.
//! Pages past the current run's last guard page may still be read+write
//! (zero) from an earlier run with more objects until this run places
//! objects there; the guard page after every object is always PROT_NONE.

use crate::pool::{give_heap, take_heap, HeapMap};
use interp::heap::{array_header, struct_header, Arena, Heap, GLOBALS_BASE};
use interp::{TrapKind, MAX_ARRAY_LEN};
use ir::{StructId, Type};

/// How many objects get a guard page of their own (see the module docs).
pub const GUARDED_OBJECTS: usize = 256;

const PAGE: usize = 4096;

fn page_up(b: usize) -> usize {
    b.div_ceil(PAGE) * PAGE
}

/// A heap whose objects end against PROT_NONE guard pages.
pub struct StrictHeap {
    /// The reservation (PROT_NONE except the pages of objects).
    res: Option<HeapMap>,
    /// Its first byte.
    map: *mut u8,
    /// The bytes this heap may use (the pooled reservation may be larger).
    map_len: usize,
    /// End (byte offset) of the last guard page placed (globals, objects,
    /// packed area): every page below has exactly the protection the layout
    /// needs.
    frontier: usize,
    /// Byte offset of word 0 in the reservation.
    base: usize,
    /// Byte offset (from `map`) where the next object may start.
    cursor: usize,
    /// Byte offset (from `map`) of the end of the last object (or of the globals).
    end: usize,
    /// End (byte offset) of the read+write pages of the packed area.
    rw_end: usize,
    /// Words allocated, as the interpreter counts them (reserved word and globals included).
    used: usize,
    /// The most words the heap may hold.
    budget: usize,
    /// Objects placed against a guard page so far.
    guarded: usize,
}

// SAFETY: the heap owns its mapping; nothing else points into it once it moves.
unsafe impl Send for StrictHeap {}

impl StrictHeap {
    /// A heap with the reserved word and a zeroed globals block of `globals` words.
    pub fn new(globals: usize, budget: usize) -> Result<StrictHeap, TrapKind> {
        let size = GLOBALS_BASE + globals;
        if size > budget {
            return Err(TrapKind::HeapExhausted);
        }
        let head = page_up(8 * size);
        // Every guarded object wastes under two pages; one more guard at the end.
        let map_len = head + page_up(8 * budget) + (2 * GUARDED_OBJECTS + 2) * PAGE;
        let res = take_heap(map_len)
            .unwrap_or_else(|e| panic!("cannot reserve a strict heap of {map_len} bytes: {e}"));
        let mut h = StrictHeap {
            map: res.ptr(),
            res: Some(res),
            map_len,
            frontier: 0,
            base: head - 8 * size,
            cursor: head + PAGE,
            end: head,
            rw_end: 0,
            used: size,
            budget,
            guarded: 0,
        };
        h.place(0, head);
        Ok(h)
    }

    /// Make bytes `from..to` read+write and the page after them a PROT_NONE
    /// guard page (only pages whose protection differs from what the pooled
    /// reservation's last run left are changed).
    fn place(&mut self, from: usize, to: usize) {
        assert!(to + PAGE <= self.map_len, "outside the strict heap");
        self.frontier = self.frontier.max(to + PAGE);
        let res = self.res.as_mut().expect("a live heap");
        if let Err(e) = res
            .set(from, to, true)
            .and_then(|()| res.set(to, to + PAGE, false))
        {
            panic!("mprotect of the strict heap failed: {e}");
        }
    }

    /// The address of word 0 (the heap base, `r15`).
    pub fn base_ptr(&mut self) -> *mut u64 {
        // SAFETY: `base` lies inside the reservation.
        unsafe { self.map.add(self.base).cast() }
    }

    /// How many words the span from word 0 to the end of the last object holds.
    pub fn span_words(&self) -> usize {
        (self.end - self.base) / 8
    }

    /// The span as a slice (its gaps are PROT_NONE: read only the words of objects).
    pub fn words(&self) -> &[u64] {
        // SAFETY: the span lies inside the reservation; callers read only
        // words of allocated objects and globals, which are read+write.
        unsafe { std::slice::from_raw_parts(self.map.add(self.base).cast(), self.span_words()) }
    }

    fn bump(&mut self, size: usize, header: u64) -> Result<u64, TrapKind> {
        if size > self.budget - self.used {
            return Err(TrapKind::HeapExhausted);
        }
        self.used += size;
        let start = if self.guarded < GUARDED_OBJECTS {
            self.guarded += 1;
            let end = page_up(self.cursor + 8 * size);
            let start = end - 8 * size;
            self.place(start / PAGE * PAGE, end);
            self.cursor = end + PAGE;
            if self.guarded == GUARDED_OBJECTS {
                self.rw_end = self.cursor;
            }
            self.end = end;
            start
        } else {
            let start = self.cursor;
            self.cursor += 8 * size;
            let want = page_up(self.cursor);
            if want > self.rw_end {
                self.place(self.rw_end, want);
                self.rw_end = want;
            }
            self.end = self.cursor;
            start
        };
        let at = (start - self.base) / 8;
        self.set_word(at, header);
        Ok(at as u64)
    }
}

impl Arena for StrictHeap {
    fn alloc_struct(&mut self, s: StructId, nfields: usize) -> Result<u64, TrapKind> {
        self.bump(1 + nfields, struct_header(s))
    }

    fn alloc_array(&mut self, elem: Type, len: i64) -> Result<u64, TrapKind> {
        self.alloc_array_with_header(array_header(elem), len)
    }

    fn set_word(&mut self, at: usize, v: u64) {
        assert!(
            8 * at + self.base < self.end,
            "word {at} outside the strict heap"
        );
        // SAFETY: the word lies in the read+write pages of an object or the globals.
        unsafe { *self.base_ptr().add(at) = v }
    }
}

impl StrictHeap {
    /// `newarray` with a pre-computed header.
    pub fn alloc_array_with_header(&mut self, header: u64, len: i64) -> Result<u64, TrapKind> {
        if !(0..=MAX_ARRAY_LEN).contains(&len) {
            return Err(TrapKind::BadLength);
        }
        let at = self.bump(2 + len as usize, header)?;
        self.set_word(at as usize + 1, len as u64);
        Ok(at)
    }
}

impl Drop for StrictHeap {
    fn drop(&mut self) {
        if let Some(r) = self.res.take() {
            give_heap(r, self.frontier);
        }
    }
}

/// The heap of one native execution: the interpreter's dense arena, or the
/// strict one.
pub enum NativeHeap {
    /// The interpreter's [`Heap`] (its capacity covers the budget, so it never moves).
    Dense(Heap),
    /// Objects against guard pages.
    Strict(StrictHeap),
}

impl NativeHeap {
    /// `new T`.
    pub fn alloc_struct(&mut self, s: StructId, nfields: usize) -> Result<u64, TrapKind> {
        match self {
            NativeHeap::Dense(h) => h.alloc_struct(s, nfields),
            NativeHeap::Strict(h) => Arena::alloc_struct(h, s, nfields),
        }
    }

    /// `newarray` with a pre-computed header.
    pub fn alloc_array_with_header(&mut self, header: u64, len: i64) -> Result<u64, TrapKind> {
        match self {
            NativeHeap::Dense(h) => h.alloc_array_with_header(header, len),
            NativeHeap::Strict(h) => h.alloc_array_with_header(header, len),
        }
    }

    /// The address of word 0 (`r15`).
    pub fn base_ptr(&mut self) -> *mut u64 {
        match self {
            NativeHeap::Dense(h) => h.words.as_mut_ptr(),
            NativeHeap::Strict(h) => h.base_ptr(),
        }
    }

    /// The words from word 0 to the end of the last object.
    pub fn words(&self) -> &[u64] {
        match self {
            NativeHeap::Dense(h) => &h.words,
            NativeHeap::Strict(h) => h.words(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_end_at_a_page_boundary_and_keep_the_budget() {
        let mut h = StrictHeap::new(3, 100).unwrap();
        let a = h
            .alloc_array_with_header(array_header(Type::I64), 5)
            .unwrap();
        let s = Arena::alloc_struct(&mut h, StructId(0), 2).unwrap();
        for (obj, size) in [(a, 7), (s, 3)] {
            let end = h.base + 8 * (obj as usize + size);
            assert!(
                end.is_multiple_of(PAGE),
                "object {obj} ends at a page boundary"
            );
        }
        assert_eq!(h.words()[a as usize + 1], 5);
        assert_eq!(h.words()[s as usize], struct_header(StructId(0)));
        // 1 + 3 + 7 + 3 = 14 words used of 100: 86 more fit, 87 do not.
        assert_eq!(
            h.alloc_array_with_header(array_header(Type::I64), 85),
            Err(TrapKind::HeapExhausted)
        );
        assert!(h
            .alloc_array_with_header(array_header(Type::I64), 84)
            .is_ok());
        assert_eq!(
            h.alloc_array_with_header(array_header(Type::I64), -1),
            Err(TrapKind::BadLength)
        );
    }

    #[test]
    fn objects_past_the_guarded_ones_are_packed() {
        let mut h = StrictHeap::new(0, 1 << 20).unwrap();
        let mut last = 0;
        for _ in 0..GUARDED_OBJECTS + 10 {
            last = Arena::alloc_struct(&mut h, StructId(1), 1).unwrap();
        }
        let prev = last - 2;
        assert_eq!(h.words()[prev as usize], struct_header(StructId(1)));
        assert_eq!(h.words()[last as usize], struct_header(StructId(1)));
    }

    /// Read `width` bytes at word `at` of a fresh strict heap holding `a` =
    /// `[i64]{1, 2, 3}` then `b` = `Pair{..}`, in a crash-isolated worker.
    fn read_in_worker(word_of: fn(u64) -> u64, wide: bool) -> Option<crate::isolate::Failure> {
        let report = crate::isolate::run_isolated(std::time::Duration::from_secs(10), |_| {
            let mut h = StrictHeap::new(1, 1 << 10).unwrap();
            let a = h
                .alloc_array_with_header(array_header(Type::I64), 3)
                .unwrap();
            Arena::alloc_struct(&mut h, StructId(0), 2).unwrap();
            let p = h.base_ptr().wrapping_add(word_of(a) as usize);
            // SAFETY: deliberately touching the guard page (in a worker).
            unsafe {
                if wide {
                    std::hint::black_box(std::ptr::read_volatile(p.cast::<u128>()));
                } else {
                    std::hint::black_box(std::ptr::read_volatile(p));
                }
            }
        });
        report.failure
    }

    #[test]
    fn a_widened_or_one_past_the_end_read_hits_the_guard_page() {
        let segv = |f: Option<crate::isolate::Failure>| matches!(f, Some(crate::isolate::Failure::Signal { signo, .. }) if signo == libc::SIGSEGV);
        // The last element (word a + 4), 8 bytes: fine; 16 bytes: faults.
        assert_eq!(read_in_worker(|a| a + 4, false), None);
        assert!(segv(read_in_worker(|a| a + 4, true)));
        // One word past the end faults.
        assert!(segv(read_in_worker(|a| a + 5, false)));
    }
}
