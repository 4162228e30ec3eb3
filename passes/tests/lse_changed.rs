//! LSE's "changed" answer when all it did was give a load it keeps (for its
//! bounds trap) a known value: the load's uses were rewritten, so it changed
//! the function; run again, it finds nothing more to rewrite.

use passes::lse::Lse;
use passes::manager::Pass;
use passes::stats::Stats;

#[test]
fn a_kept_load_whose_uses_change_is_a_change() {
    let text = "func @main(%i: i64) -> i64 {\n\
                entry:\n  %a = newarray i64, 4\n  %x = load %a[%i]\n  escape %a\n  ret %x\n}\n";
    let (mut module, _) = ir::parse_module(text, "kept.ir").expect("parses");
    let mut stats = Stats::default();
    assert!(
        Lse::default().run(&mut module, &mut stats),
        "ret %x became ret 0"
    );
    assert_eq!(stats.get("lse", "loads_fresh_kept_for_trap"), 1);
    let printed = ir::print::print_module(&module);
    assert!(printed.contains("load %a[%i]"), "{printed}");
    assert!(printed.contains("ret 0"), "{printed}");
    assert!(
        !Lse::default().run(&mut module, &mut stats),
        "nothing left to rewrite"
    );
}
