//! LSE on programs whose address bases become the constant `null` (after
//! forwarding a stored null, or through a copy of a typed null): the output
//! stays well-formed. The element slots of `[i64]` and `[Node]` once shared
//! the key `(null, i)`, and a `Node` load was replaced by an integer. The
//! programs are the regression files `corpus/regressions/lse_null_*.ir`.

use passes::PassManager;
use std::path::Path;

fn null_base_regressions() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("lse_null_") && n.ends_with(".ir"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn lse_output_is_well_formed_when_bases_become_null() {
    let files = null_base_regressions();
    assert!(files.len() >= 4, "{files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let (m, _) = ir::parse_module(&text, "t.ir").unwrap();
        for list in ["lse", "lse,peeps,lse", "pipeline"] {
            let mut opt = m.clone();
            PassManager::from_list(list)
                .unwrap()
                .run(&mut opt)
                .unwrap_or_else(|e| panic!("{} after {list}: {e}", path.display()));
            ir::verify_module(&opt)
                .unwrap_or_else(|e| panic!("{} after {list}: {e:?}", path.display()));
        }
    }
}

#[test]
fn a_load_through_a_null_base_is_not_forwarded_from_another_array_type() {
    let src = "type Node { val: i64, next: Node }\nfunc @main() -> Node {\nentry:\n  store (null: [i64])[0], 5\n  %x = load (null: [Node])[0]\n  ret %x\n}\n";
    let (mut m, _) = ir::parse_module(src, "t.ir").unwrap();
    PassManager::from_list("lse").unwrap().run(&mut m).unwrap();
    let printed = ir::print_module(&m);
    assert!(printed.contains("%x = load (null: [Node])[0]"), "{printed}");
    assert!(printed.contains("ret %x"), "{printed}");
}
