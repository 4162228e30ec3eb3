//! The fixed-point check follows `LOADSTAR_CHECK_FIXPOINT` (alone in this
//! test binary, because it sets the process environment).

use passes::peeps::{default_check_mode, CheckMode, CHECK_ENV};

#[test]
fn the_environment_variable_selects_the_check_mode() {
    std::env::set_var(CHECK_ENV, "0");
    assert_eq!(default_check_mode(), CheckMode::Off);
    std::env::set_var(CHECK_ENV, "step");
    assert_eq!(default_check_mode(), CheckMode::EveryStep);
    std::env::set_var(CHECK_ENV, "1");
    assert_eq!(default_check_mode(), CheckMode::FixedPoint);
    std::env::remove_var(CHECK_ENV);
    // Unset: on in debug builds, off in release builds (harness modes and the
    // corpus runner force it on through `PassManager::with_invariant_checks`).
    let expected = if cfg!(debug_assertions) {
        CheckMode::FixedPoint
    } else {
        CheckMode::Off
    };
    assert_eq!(default_check_mode(), expected);
}
