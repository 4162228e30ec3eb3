//! The progress line of `sweep` and `zoo` is for terminals only: with stdout
//! and stderr piped (CI logs), the output carries no escape codes at all.

mod support;
use support::loadstar_all as loadstar_piped;

#[test]
fn a_piped_sweep_prints_its_summary_without_escape_codes() {
    let dir = std::env::temp_dir().join(format!("loadstar-progress-{}", std::process::id()));
    let (code, all) = loadstar_piped(&[
        "sweep",
        "--seconds",
        "1",
        "--jobs",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{all}");
    assert!(all.contains("programs"), "{all}");
    assert!(
        !all.contains('\x1b'),
        "escape codes in piped output:\n{all:?}"
    );
    assert!(
        !all.contains('\r'),
        "carriage returns in piped output:\n{all:?}"
    );
}

#[cfg(feature = "bug-zoo")]
#[test]
fn a_piped_zoo_prints_its_table_without_escape_codes() {
    let (code, all) = loadstar_piped(&[
        "zoo",
        "--seconds-per-bug",
        "2",
        "--bugs",
        "peeps-fold-div-zero",
    ]);
    assert!(code == 0 || code == 1, "{all}");
    assert!(all.contains("| `peeps-fold-div-zero` |"), "{all}");
    assert!(
        !all.contains('\x1b'),
        "escape codes in piped output:\n{all:?}"
    );
    assert!(
        !all.contains('\r'),
        "carriage returns in piped output:\n{all:?}"
    );
}
