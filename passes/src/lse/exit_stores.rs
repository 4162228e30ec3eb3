//! The stores store promotion makes on the exits of a loop: one per
//! promoted location and exit block, made only where the original had
//! stored that location (docs/language.md, decision 21).
//!
//! An exit block entered only by one edge from the loop, with no exit store
//! to wait for the loop to go around, gets the stores first thing after its
//! phis. Any other exit block gets a new block that all the loop's edges to
//! it go through (the phis of the exit take those entries from it): there,
//! a phi merges each location's value over the edges, the stores every edge
//! needs are made, and a store some edge makes only once the loop went
//! around (an exiting block that may run before the trip's store, as in a
//! loop tested at the top) sits in a block of its own, entered when a phi
//! of the edges' flags says the original stored.

use super::loc::Loc;
use ir::cfg::Cfg;
use ir::loops::Loop;
use ir::split_edge::{split_edge, split_edges};
use ir::{Block, Function, InstKind, Type, Value};

/// A store to make on one exit edge of a loop.
pub struct ExitStore {
    /// The promoted location.
    pub loc: Loc,
    /// The exiting block.
    pub from: Block,
    /// The value to store.
    pub value: Value,
    /// The location's type.
    pub ty: Type,
    /// Made only when the loop went around (`from` may run before the
    /// trip's store of `loc`).
    pub guarded: bool,
}

/// What [`place`] made, for statistics.
#[derive(Clone, Copy, Debug, Default)]
pub struct Placed {
    /// Exit blocks made to hold exit stores.
    pub blocks: u64,
    /// Stores made only when the loop went around.
    pub guarded: u64,
}

/// Make the exit stores `stores` of loop `lp` (whose CFG before any edge
/// was split is `cfg`); `went_around` is a header phi, 1 once a latch was
/// passed, given when some store is guarded.
pub fn place(
    func: &mut Function,
    cfg: &Cfg,
    lp: &Loop,
    stores: &[ExitStore],
    went_around: Option<Value>,
) -> Placed {
    let mut placed = Placed::default();
    for &exit in &lp.exits {
        let mut froms: Vec<Block> = stores
            .iter()
            .map(|x| x.from)
            .filter(|&b| func.successors(b).contains(&exit))
            .collect();
        froms.dedup();
        if froms.is_empty() {
            continue;
        }
        let here: Vec<&ExitStore> = stores.iter().filter(|x| froms.contains(&x.from)).collect();
        if froms.len() == 1 && cfg.preds(exit).len() == 1 && here.iter().all(|x| !x.guarded) {
            insert_stores(func, exit, here.iter().map(|x| (x.loc, x.value)));
            continue;
        }
        // Labels after the exit's own (the printer's renaming of clashing
        // labels is a search per clash: one shared label would make it
        // quadratic in the number of loops).
        let label = func.blocks[exit.index()].name.clone();
        let block =
            split_edges(func, &froms, exit, &format!("{label}_promoted")).expect("exit edges");
        placed.blocks += 1;
        let mut locs: Vec<Loc> = Vec::new();
        for x in &here {
            if !locs.contains(&x.loc) {
                locs.push(x.loc);
            }
        }
        // Per location: its value, and whether (by which flag) it waits.
        let mut plain: Vec<(Loc, Value)> = Vec::new();
        let mut waiting: Vec<(Loc, Value, Value)> = Vec::new();
        for loc in locs {
            let edges: Vec<&&ExitStore> = here.iter().filter(|x| x.loc == loc).collect();
            let ty = edges[0].ty;
            let value = merge(func, block, ty, edges.iter().map(|x| (x.from, x.value)));
            if edges.iter().all(|x| !x.guarded) {
                plain.push((loc, value));
                continue;
            }
            let flag = went_around.expect("a guarded store has its flag");
            let one = func.iconst(1);
            let flags = edges
                .iter()
                .map(|x| (x.from, if x.guarded { flag } else { one }));
            let stored = merge(func, block, Type::I64, flags);
            waiting.push((loc, value, stored));
        }
        insert_stores(func, block, plain.into_iter());
        let mut cur = block;
        for (k, (loc, value, stored)) in waiting.into_iter().enumerate() {
            let next =
                split_edge(func, cur, exit, &format!("{label}_next{k}")).expect("the exit edge");
            let then =
                split_edge(func, cur, next, &format!("{label}_stored{k}")).expect("the new edge");
            let term = func.terminator(cur).expect("a jmp");
            func.insts[term.index()].kind = InstKind::Br(stored, then, next);
            insert_store(func, then, 0, loc, value);
            placed.guarded += 1;
            cur = next;
        }
    }
    placed
}

/// The value of `entries` (one per predecessor of `block`, which all of
/// them branch to): the one value when they agree, else a phi at the top
/// of `block`.
fn merge(
    func: &mut Function,
    block: Block,
    ty: Type,
    entries: impl Iterator<Item = (Block, Value)>,
) -> Value {
    let entries: Vec<(Block, Value)> = entries.collect();
    if entries.iter().all(|e| e.1 == entries[0].1) {
        return entries[0].1;
    }
    let (phi, result) = func.create_inst(InstKind::Phi(entries), Some(ty));
    func.insert_inst(block, 0, phi);
    result.expect("a phi has a result")
}

/// Insert `store loc, value` for each of `stores`, in order, after the
/// phis of block `b`.
fn insert_stores(func: &mut Function, b: Block, stores: impl Iterator<Item = (Loc, Value)>) {
    let first = func.blocks[b.index()]
        .insts
        .iter()
        .take_while(|&&i| func.inst(i).kind.is_phi())
        .count();
    for (pos, (loc, value)) in (first..).zip(stores) {
        insert_store(func, b, pos, loc, value);
    }
}

/// Insert `store loc, value` into block `b` at `pos`.
fn insert_store(func: &mut Function, b: Block, pos: usize, loc: Loc, value: Value) {
    let (store, _) = func.create_inst(
        InstKind::Store {
            addr: loc.addr(),
            value,
            volatile: false,
        },
        None,
    );
    func.insert_inst(b, pos, store);
}
