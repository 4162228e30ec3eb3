//! The allocator `loadstar` ships, shared by the binary, the benches and the
//! examples so that every measurement sees the same memory behaviour:
//! mimalloc, configured at process start for a compiler's workload.
//!
//! Install it with [`install!`] at the root of a binary, bench or example.
//! The options ([`OPTIONS`]) are set by a constructor that runs before `main`
//! (after mimalloc's own process initialization, before the first arena is
//! reserved); an option whose `MIMALLOC_*` environment variable is set keeps
//! the environment's value, so experiments can still override it.

pub use mimalloc::MiMalloc;

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
        static LOADSTAR_GLOBAL_ALLOCATOR: $crate::MiMalloc = $crate::MiMalloc;

        #[cfg(target_os = "linux")]
        #[used]
        #[link_section = ".init_array"]
        static LOADSTAR_ALLOC_CONFIGURE: extern "C" fn() = $crate::configure_at_startup;
    };
}

#[cfg(test)]
mod tests {
    use super::*;

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
