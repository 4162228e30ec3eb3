//! Buffers the engine reuses from one run to the next: the per-value user
//! lists, the per-instruction dependency lists, the worklist and the small
//! temporaries of matching and CFG cleanup. The pass runs four times per
//! pipeline on functions of a few dozen instructions, so allocating these
//! afresh each time would cost more than the rewriting itself. One set is kept
//! per thread; a run borrows it and clears what it uses.

use super::block_edges::BlockEdges;
use super::block_phis::BlockPhis;
use super::deps::InstLists;
use super::worklist::Worklist;
use ir::{Block, Inst};
use std::cell::RefCell;

/// Temporaries of one engine run (cleared before each use).
#[derive(Default)]
pub(crate) struct Buffers {
    /// The depth-first stack of `drain`.
    pub(crate) stack: Vec<Inst>,
    /// `(distant, dependent)` pairs registered while matching one instruction.
    pub(crate) match_deps: Vec<(Inst, Inst)>,
    /// Blocks that lost an instruction since the last compaction (repeats allowed).
    pub(crate) dirty: Vec<Block>,
    /// Per instruction slot, one bit: detached by this run.
    pub(crate) gone: Vec<u64>,
    /// The phis of one block, collected before they are edited.
    pub(crate) phis: Vec<Inst>,
    /// The phis of the function as it came in, in layout order and by
    /// block (the engine never creates one).
    pub(crate) phis_in: BlockPhis,
    /// Blocks found unreachable by the CFG cleanup.
    pub(crate) dead: Vec<Block>,
    /// Predecessors and reachability for the CFG cleanup.
    pub(crate) cfg: BlockEdges,
    /// Per block slot: the block the CFG cleanup merged it into.
    pub(crate) merged_into: Vec<Option<Block>>,
    /// Empty diamonds found by the branch walk (`br`, arm, arm).
    pub(crate) diamonds: Vec<(Inst, Block, Block)>,
    /// Branches with equal arms found by the branch walk.
    pub(crate) equal_arms: Vec<Inst>,
    /// The roots of the conditions of the other branches of the walk.
    pub(crate) branches: Vec<ir::Value>,
    /// Every branch of the walk: its block, its condition and its two
    /// targets.
    pub(crate) branch_edges: Vec<(Block, ir::Value, Block, Block)>,
}

/// Everything an engine run can reuse.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Per value: instructions that may use it.
    pub(crate) users: InstLists,
    /// Per instruction: instructions to revisit when it changes.
    pub(crate) deps: InstLists,
    /// The worklist.
    pub(crate) work: Worklist,
    /// The small temporaries.
    pub(crate) bufs: Buffers,
}

/// Functions bigger than this (in value or instruction slots) do not leave
/// their buffers behind, so one huge function does not pin its memory. Up to
/// it, the buffers stay: a pipeline runs the pass several times, and fresh
/// N-sized buffers on every run cost page faults at every size that matters.
const KEEP_LIMIT: usize = 1 << 21;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Run `f` with this thread's buffers (fresh ones should they be in use).
pub(crate) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    ir::reuse::with_reused(&SCRATCH, |scratch| {
        let result = f(scratch);
        if scratch.users.len() > KEEP_LIMIT || scratch.deps.len() > KEEP_LIMIT {
            *scratch = Scratch::default();
        }
        result
    })
}
