//! Buffers the engine reuses from one run to the next: the per-value user
//! lists, the per-instruction dependency lists, the worklist and the small
//! temporaries of matching and CFG cleanup. The pass runs four times per
//! pipeline on functions of a few dozen instructions, so allocating these
//! afresh each time would cost more than the rewriting itself. One set is kept
//! per thread; a run takes it, clears what it uses, and gives it back.

use super::block_graph::BlockGraph;
use super::engine::InstList;
use super::worklist::Worklist;
use ir::{Block, Inst};
use std::cell::Cell;

/// Temporaries of one engine run (cleared before each use).
#[derive(Default)]
pub(crate) struct Buffers {
    /// The depth-first stack of `drain`.
    pub(crate) stack: Vec<Inst>,
    /// `(distant, dependent)` pairs registered while matching one instruction.
    pub(crate) match_deps: Vec<(Inst, Inst)>,
    /// The phis of one block, collected before they are edited.
    pub(crate) phis: Vec<Inst>,
    /// Blocks found unreachable by the CFG cleanup.
    pub(crate) dead: Vec<Block>,
    /// Predecessors and reachability for the CFG cleanup.
    pub(crate) graph: BlockGraph,
    /// Per block slot: merged away by the CFG cleanup.
    pub(crate) gone: Vec<bool>,
}

/// Everything an engine run can reuse.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Per value: instructions that may use it.
    pub(crate) users: Vec<InstList>,
    /// Per instruction: instructions to revisit when it changes.
    pub(crate) deps: Vec<InstList>,
    /// The worklist.
    pub(crate) work: Worklist,
    /// The small temporaries.
    pub(crate) bufs: Buffers,
}

/// Functions bigger than this (in value or instruction slots) do not leave
/// their buffers behind, so one huge function does not pin its memory.
const KEEP_LIMIT: usize = 1 << 16;

thread_local! {
    static SCRATCH: Cell<Scratch> = Cell::new(Scratch::default());
}

/// This thread's buffers (empty ones when another run holds them).
pub(crate) fn take() -> Scratch {
    SCRATCH.with(Cell::take)
}

/// Hand the buffers back for the next run on this thread.
pub(crate) fn give_back(scratch: Scratch) {
    if scratch.users.len() <= KEEP_LIMIT && scratch.deps.len() <= KEEP_LIMIT {
        SCRATCH.with(|s| s.set(scratch));
    }
}

/// Make `lists` `n` empty lists, keeping the storage of those that stay.
pub(crate) fn reset_lists(lists: &mut Vec<InstList>, n: usize) {
    lists.truncate(n);
    for list in lists.iter_mut() {
        list.clear();
    }
    lists.resize_with(n, InstList::new);
}
