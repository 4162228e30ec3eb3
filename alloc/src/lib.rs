//! The allocator `loadstar` ships, shared by the binary, the benches and the
//! examples so that every measurement sees the same memory behaviour:
//! mimalloc, configured at process start for a compiler's workload.
//!
//! Install it with [`install!`] at the root of a binary, bench or example.
//! The options ([`OPTIONS`]) are set by a constructor that runs before `main`
//! (after mimalloc's own process initialization, before the first arena is
//! reserved); an option whose `MIMALLOC_*` environment variable is set keeps
//! the environment's value, so experiments can still override it.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// The global allocator [`install!`] declares: mimalloc, entered by its
/// plain `mi_malloc`/`mi_zalloc`/`mi_realloc` whenever the layout asks for
/// no more than word alignment (every mimalloc block is word-aligned: block
/// sizes are whole words and pages start 16-byte aligned), and by the
/// `_aligned` entry points otherwise. The `mimalloc` crate's `MiMalloc`
/// always takes the aligned entry points, whose extra checks cost about 20
/// instructions on each of the oracle's ~530 allocations per program (2 %
/// of its time).
pub struct Allocator;

/// The largest alignment that every block of mimalloc has.
const WORD_ALIGN: usize = std::mem::size_of::<usize>();

// SAFETY: every entry point returns memory from mimalloc of at least
// `layout.size()` bytes aligned to `layout.align()` (the plain entry points
// only when the alignment is at most a word, which every block has), or null;
// `dealloc` and `realloc` receive only pointers mimalloc handed out.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD_ALIGN {
            libmimalloc_sys::mi_malloc(layout.size()) as *mut u8
        } else {
            libmimalloc_sys::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD_ALIGN {
            libmimalloc_sys::mi_zalloc(layout.size()) as *mut u8
        } else {
            libmimalloc_sys::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        libmimalloc_sys::mi_free(ptr as *mut c_void);
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD_ALIGN {
            libmimalloc_sys::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
        } else {
            libmimalloc_sys::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align())
                as *mut u8
        }
    }
}

/// One mimalloc option and the value loadstar sets.
#[derive(Clone, Copy, Debug)]
pub struct AllocOption {
    /// The option's environment variable (which, when set, wins).
    pub env: &'static str,
    /// mimalloc's option number (`mi_option_t`).
    pub id: libmimalloc_sys::mi_option_t,
    /// The value set at startup.
    pub value: i64,
}

/// mimalloc's `mi_option_purge_delay` (not exported by `libmimalloc-sys`
/// for mimalloc v3; the enum position in v3's `mimalloc.h`).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The options loadstar runs with:
/// - `purge_delay = -1`: never hand freed pages back to the OS. A compiler
///   run frees and reallocates module-sized tables pass after pass; purging
///   them made the kernel clear the same pages again and again (a 1M
///   instruction `opt` spent 1.7 s of 6.3 s in the kernel, 0.17 s without).
///   Memory stays bounded by the peak live size (pages are reused, not
///   returned).
/// - `allow_large_os_pages = 1`: back arenas with 2 MiB pages
///   (`MADV_HUGEPAGE` under transparent huge pages), so that module-sized side
///   tables cost a few TLB entries instead of thousands.
pub const OPTIONS: &[AllocOption] = &[
    AllocOption {
        env: "MIMALLOC_PURGE_DELAY",
        id: MI_OPTION_PURGE_DELAY,
        value: -1,
    },
    AllocOption {
        env: "MIMALLOC_ALLOW_LARGE_OS_PAGES",
        id: libmimalloc_sys::mi_option_large_os_pages,
        value: 1,
    },
];

/// Sets [`OPTIONS`] (each unless its environment variable, or its legacy
/// name for large pages, is set). Called by the constructor [`install!`]
/// declares; calling it again is harmless.
pub fn configure() {
    for o in OPTIONS {
        let overridden = std::env::var_os(o.env).is_some()
            || (o.id == libmimalloc_sys::mi_option_large_os_pages
                && std::env::var_os("MIMALLOC_LARGE_OS_PAGES").is_some());
        if !overridden {
            // SAFETY: `mi_option_set` only stores a value in mimalloc's option
            // table; the id is one of mimalloc's options.
            unsafe { libmimalloc_sys::mi_option_set(o.id, o.value as _) };
        }
    }
}

/// The current value of a mimalloc option (for tests and reports).
pub fn option_value(id: libmimalloc_sys::mi_option_t) -> i64 {
    // SAFETY: reads mimalloc's option table.
    unsafe { libmimalloc_sys::mi_option_get(id) as i64 }
}

/// The constructor [`install!`] registers: runs [`configure`] before `main`.
pub extern "C" fn configure_at_startup() {
    configure();
}

/// Declares mimalloc as the global allocator and registers a constructor
/// that sets loadstar's allocator options before `main` (on Linux; elsewhere
/// call [`configure`] first thing in `main`).
#[macro_export]
macro_rules! install {
    () => {
        #[global_allocator]
        static LOADSTAR_GLOBAL_ALLOCATOR: $crate::Allocator = $crate::Allocator;

        #[cfg(target_os = "linux")]
        #[used]
        #[link_section = ".init_array"]
        static LOADSTAR_ALLOC_CONFIGURE: extern "C" fn() = $crate::configure_at_startup;
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocate, fill, grow, shrink and free blocks of every alignment the
    /// two paths take, checking alignment, zeroing and that contents survive
    /// a reallocation.
    #[test]
    fn blocks_have_their_alignment_and_keep_their_contents() {
        let a = Allocator;
        for align in [1usize, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [align, 3 * align, 24, 1000, 5000, 300_000] {
                if size % align != 0 {
                    continue;
                }
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero-sized layout; the block is used only
                // within its size and freed once, by the same allocator.
                unsafe {
                    let z = a.alloc_zeroed(layout);
                    assert!(!z.is_null());
                    assert_eq!(z as usize % align, 0, "zeroed {size}/{align}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    a.dealloc(z, layout);
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "alloc {size}/{align}");
                    for i in 0..size {
                        *p.add(i) = (i % 251) as u8;
                    }
                    let grown = a.realloc(p, layout, 2 * size);
                    assert_eq!(grown as usize % align, 0, "grown {size}/{align}");
                    let big = Layout::from_size_align(2 * size, align).unwrap();
                    // Half the size, rounded up to a whole multiple of the alignment.
                    let half = size / 2 + align - (size / 2) % align;
                    let shrunk = a.realloc(grown, big, half);
                    assert_eq!(shrunk as usize % align, 0, "shrunk {size}/{align}");
                    for i in 0..size / 2 {
                        assert_eq!(*shrunk.add(i), (i % 251) as u8);
                    }
                    a.dealloc(shrunk, Layout::from_size_align(half, align).unwrap());
                }
            }
        }
    }

    #[test]
    fn configure_sets_every_option_the_environment_leaves_alone() {
        configure();
        for o in OPTIONS {
            if std::env::var_os(o.env).is_none()
                && std::env::var_os("MIMALLOC_LARGE_OS_PAGES").is_none()
            {
                assert_eq!(option_value(o.id), o.value, "{}", o.env);
            }
        }
    }
}
