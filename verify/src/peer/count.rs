//! Counting the memory accesses left in a function: loadstar's loads and
//! stores (field, element and global; volatile ones included; not those that
//! certainly trap before accessing anything), and the LLVM
//! `load`/`store` instructions of `opt`'s output (the bounds checks' length
//! loads, which loadstar writes as `len`, left out; a `memset` counts as a
//! store, a `memcpy` as a load and a store).

use super::translate::{llvm_func_name, LEN_TBAA_NAME};
use ir::cfg::Cfg;
use ir::{Function, InstKind};
use std::collections::HashMap;

/// Loads and stores of one function.
#[derive(Copy, Clone, Default, Debug, PartialEq, Eq)]
pub struct Accesses {
    /// Loads.
    pub loads: usize,
    /// Stores.
    pub stores: usize,
}

impl Accesses {
    /// Loads plus stores.
    pub fn total(self) -> usize {
        self.loads + self.stores
    }

    /// Both counts added.
    pub fn plus(self, o: Accesses) -> Accesses {
        Accesses {
            loads: self.loads + o.loads,
            stores: self.stores + o.stores,
        }
    }
}

/// The loads and stores in the reachable blocks of a loadstar function (not
/// those that trap whenever they run: they access nothing), and
/// how many of those loads nothing uses: kept only for the trap they may
/// raise (LLVM, whose null and bounds checks are separate instructions,
/// deletes such a load and keeps the check).
pub fn count_function(f: &Function) -> (Accesses, usize) {
    let cfg = Cfg::new(f);
    let mut used = vec![false; f.values.len()];
    for &b in &f.layout {
        for &i in &f.blocks[b.index()].insts {
            f.insts[i.index()]
                .kind
                .for_each_operand(|v| used[v.index()] = true);
        }
    }
    let (mut n, mut unused) = (Accesses::default(), 0);
    for &b in f.layout.iter().filter(|&&b| cfg.is_reachable(b)) {
        for &i in &f.blocks[b.index()].insts {
            let d = &f.insts[i.index()];
            if ir::effects::certain_trap(f, i).is_some() {
                // It traps before it touches memory (a volatile access of
                // `null` takes its step, then traps): no access happens,
                // as in LLVM, whose access after its null check is dead.
                continue;
            }
            match d.kind {
                InstKind::Load { volatile, .. } => {
                    n.loads += 1;
                    let result_unused = d.result.is_some_and(|r| !used[r.index()]);
                    unused += usize::from(!volatile && result_unused);
                }
                InstKind::Store { .. } => n.stores += 1,
                _ => {}
            }
        }
    }
    (n, unused)
}

/// The TBAA access tags (metadata ids) whose type node is the array length's.
fn len_tags(text: &str) -> Vec<String> {
    let mut nodes: HashMap<&str, &str> = HashMap::new();
    for line in text.lines() {
        if let Some((id, body)) = line.split_once(" = !{") {
            if id.starts_with('!') && !id.contains(' ') {
                nodes.insert(id, body.trim_end_matches('}'));
            }
        }
    }
    let len_node: Vec<&str> = nodes
        .iter()
        .filter(|(_, b)| b.starts_with(&format!("!\"{LEN_TBAA_NAME}\"")))
        .map(|(id, _)| *id)
        .collect();
    nodes
        .iter()
        .filter(|(_, b)| {
            let first = b.split(',').next().unwrap_or("").trim();
            len_node.contains(&first)
        })
        .map(|(id, _)| id.to_string())
        .collect()
}

/// The loads and stores of each function in LLVM IR text, by the loadstar
/// name of the function (`@f.NAME` is `NAME`).
pub fn count_llvm(text: &str) -> HashMap<String, Accesses> {
    let skip = len_tags(text);
    let is_len = |line: &str| {
        line.split("!tbaa ")
            .nth(1)
            .map(|t| t.split([',', ' ']).next().unwrap_or(""))
            .is_some_and(|t| skip.iter().any(|s| s == t))
    };
    let prefix = llvm_func_name("");
    let mut out = HashMap::new();
    let mut current: Option<(String, Accesses)> = None;
    for line in text.lines() {
        if line.starts_with("define ") {
            let name = line
                .split_once(&format!("@{prefix}"))
                .and_then(|(_, rest)| rest.split_once('('))
                .map(|(n, _)| n.trim_matches('"').to_string());
            current = name.map(|n| (n, Accesses::default()));
            continue;
        }
        if line == "}" {
            if let Some((n, a)) = current.take() {
                out.insert(n, a);
            }
            continue;
        }
        let Some((_, acc)) = current.as_mut() else {
            continue;
        };
        let t = line.trim_start();
        let rhs = t.split_once(" = ").map_or(t, |(_, r)| r);
        if rhs.starts_with("load ") && !is_len(t) {
            acc.loads += 1;
        } else if (rhs.starts_with("store ") && !is_len(t)) || rhs.contains("@llvm.memset") {
            acc.stores += 1;
        } else if rhs.contains("@llvm.memcpy") || rhs.contains("@llvm.memmove") {
            acc.loads += 1;
            acc.stores += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llvm_counts_skip_length_loads_and_count_intrinsics() {
        let text = "define i64 @f.main(i8* %a) {\n\
            b0:\n  %1 = load i64, i64* %p, align 8, !tbaa !4\n\
              %2 = load i64, i64* %q, align 8, !tbaa !2\n\
              store i64 1, i64* %q, align 8, !tbaa !2\n\
              call void @llvm.memset.p0i8.i64(i8* %a, i8 0, i64 16, i1 false)\n\
              ret i64 %2\n}\n\
            define void @f.other() {\n  ret void\n}\n\
            !1 = !{!\"loadstar.Point.x\", !0, i64 0}\n!2 = !{!1, !1, i64 0}\n\
            !3 = !{!\"loadstar.len\", !0, i64 0}\n!4 = !{!3, !3, i64 0}\n";
        let c = count_llvm(text);
        assert_eq!(
            c["main"],
            Accesses {
                loads: 1,
                stores: 2
            }
        );
        assert_eq!(c["other"], Accesses::default());
    }

    #[test]
    fn accesses_that_certainly_trap_are_not_counted() {
        let text = "type Node { val: i64 }\n\
            func @main(%p: Node) -> i64 {\nentry:\n\
              %a = load.volatile (null: [i64])[0]\n\
              %b = load.volatile %p.val\n\
              store %p.val, 1\n\
              %c = load (null: Node).val\n\
              ret %b\n}\n";
        let (m, _) = ir::parse::parse_module(text, "t.ir").unwrap();
        let (n, unused) = count_function(&m.funcs[0]);
        assert_eq!(
            n,
            Accesses {
                loads: 1,
                stores: 1
            }
        );
        assert_eq!(unused, 0);
    }
}
