//! Splitting CFG edges: a new block on the edge `from -> to`, or one block
//! that several edges into a block go through, so that code can run on those
//! edges alone (store promotion's exit stores).

use crate::{Block, Function, Inst, InstKind, Value};

/// Put a new block (labelled `name`, holding only `jmp to`) on the edge
/// `from -> to`: `from`'s terminator branches to it instead, and the phis
/// of `to` take their `from` entry from it. Returns the new block, or `None`
/// when `from` has no terminator branching to `to`.
pub fn split_edge(func: &mut Function, from: Block, to: Block, name: &str) -> Option<Block> {
    let term = func.terminator(from)?;
    if !func.inst(term).kind.successors().any(|s| s == to) {
        return None;
    }
    let mid = func.add_block(name);
    func.append_inst(mid, InstKind::Jmp(to), None);
    for s in func.insts[term.index()].kind.successors_mut() {
        if *s == to {
            *s = mid;
        }
    }
    redirect_phi_entries(func, to, from, mid);
    Some(mid)
}

/// Put one new block (labelled `name`, holding only `jmp to`) on the edges
/// from each of `froms` to `to`: they branch to it instead, and each phi of
/// `to` takes those entries from it (one value, or a phi of them in the new
/// block). Returns the new block, or `None` when some of `froms` does not
/// branch to `to`.
pub fn split_edges(func: &mut Function, froms: &[Block], to: Block, name: &str) -> Option<Block> {
    let terms: Vec<_> = froms
        .iter()
        .map(|&f| func.terminator(f))
        .collect::<Option<_>>()?;
    if terms
        .iter()
        .any(|&t| !func.inst(t).kind.successors().any(|s| s == to))
    {
        return None;
    }
    let mid = func.add_block(name);
    for &t in &terms {
        for s in func.insts[t.index()].kind.successors_mut() {
            if *s == to {
                *s = mid;
            }
        }
    }
    let mut merged: Vec<Inst> = Vec::new();
    for k in 0..func.blocks[to.index()].insts.len() {
        let i = func.blocks[to.index()].insts[k];
        let InstKind::Phi(entries) = &mut func.insts[i.index()].kind else {
            break;
        };
        let moved: Vec<(Block, Value)> = entries
            .iter()
            .filter(|(p, _)| froms.contains(p))
            .copied()
            .collect();
        entries.retain(|(p, _)| !froms.contains(p));
        let value = match moved.as_slice() {
            [(_, v), rest @ ..] if rest.iter().all(|(_, w)| w == v) => *v,
            _ => {
                let ty = func.insts[i.index()].result.map(|r| func.value_type(r));
                let (phi, result) = func.create_inst(InstKind::Phi(moved), ty);
                merged.push(phi);
                result.expect("a phi has a result")
            }
        };
        if let InstKind::Phi(entries) = &mut func.insts[i.index()].kind {
            entries.push((mid, value));
        }
    }
    for (pos, phi) in merged.into_iter().enumerate() {
        func.insert_inst(mid, pos, phi);
    }
    func.append_inst(mid, InstKind::Jmp(to), None);
    Some(mid)
}

/// Make the phis of `block` take their `old` entry from predecessor `new`.
pub fn redirect_phi_entries(func: &mut Function, block: Block, old: Block, new: Block) {
    for k in 0..func.blocks[block.index()].insts.len() {
        let i = func.blocks[block.index()].insts[k];
        match &mut func.insts[i.index()].kind {
            InstKind::Phi(entries) => {
                for (p, _) in entries.iter_mut() {
                    if *p == old {
                        *p = new;
                    }
                }
            }
            _ => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_edge_runs_its_block_and_keeps_the_phis() {
        let text = "func @f(%c: i64) -> i64 {\nentry:\n  br %c, a, j\na:\n  jmp j\n\
            j:\n  %x = phi [entry: 1], [a: 2]\n  ret %x\n}\n";
        let mut m = crate::parse_module(text, "t.ir").unwrap().0;
        let f = &mut m.funcs[0];
        let entry = f.entry();
        let j = f.layout[2];
        let mid = split_edge(f, entry, j, "mid").expect("an edge");
        assert_eq!(f.successors(entry), vec![f.layout[1], mid]);
        assert_eq!(f.successors(mid), vec![j]);
        let phi = f.blocks[j.index()].insts[0];
        match &f.inst(phi).kind {
            InstKind::Phi(e) => assert_eq!(
                e.iter().map(|p| p.0).collect::<Vec<_>>(),
                [mid, f.layout[1]]
            ),
            k => panic!("not a phi: {k:?}"),
        }
        crate::verify::verify_module(&m).expect("well formed");
        assert!(split_edge(&mut m.funcs[0], j, entry, "no").is_none());
    }

    #[test]
    fn split_edges_merge_the_phi_entries_they_take() {
        let text = "func @f(%c: i64, %d: i64) -> i64 {\nentry:\n  br %c, a, j\n\
            a:\n  br %d, b, j\nb:\n  jmp j\n\
            j:\n  %x = phi [entry: 1], [a: 2], [b: 3]\n  %y = phi [entry: 5], [a: 5], [b: 6]\n  ret %x\n}\n";
        let mut m = crate::parse_module(text, "t.ir").unwrap().0;
        let f = &mut m.funcs[0];
        let (entry, a, b, j) = (f.layout[0], f.layout[1], f.layout[2], f.layout[3]);
        let mid = split_edges(f, &[entry, a], j, "mid").expect("edges");
        assert_eq!(f.successors(entry), vec![a, mid]);
        assert_eq!(f.successors(a), vec![b, mid]);
        // %x needs a phi in the new block, %y takes 5 from it.
        assert_eq!(f.blocks[mid.index()].insts.len(), 2);
        crate::verify::verify_module(&m).expect("well formed");
        let printed = crate::print_module(&m);
        assert!(printed.contains("[b: 3], [mid: %"), "{printed}");
        assert!(printed.contains("[b: 6], [mid: 5]"), "{printed}");
        assert!(split_edges(&mut m.funcs[0], &[b], a, "no").is_none());
    }
}
