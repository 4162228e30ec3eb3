//! `install!` sets loadstar's allocator options before `main` runs.

loadstar_alloc::install!();

#[test]
fn options_are_set_before_main() {
    let large_env = std::env::var_os("MIMALLOC_LARGE_OS_PAGES").is_some();
    for o in loadstar_alloc::OPTIONS {
        if std::env::var_os(o.env).is_none() && !large_env {
            assert_eq!(loadstar_alloc::option_value(o.id), o.value, "{}", o.env);
        }
    }
}
