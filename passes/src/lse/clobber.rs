//! What an instruction does to tracked locations, asked of the effects table:
//! a plain store clobbers what may alias it; any other instruction clobbers
//! the locations whose heap leaf its writes overlap, except locations of
//! allocations that never escape, which neither the environment nor a callee
//! can reach (IR.md §6). A call of a module function does what its callee's
//! summary says ([`ir::summaries`]): a load is forwarded past a call that
//! cannot write its leaf, and a store stays unread across a call that
//! cannot read it.

use super::loc::Loc;
use crate::alias::{AliasAnalysis, AliasResult};
use ir::effects::{Effects, HeapNode};
use ir::summaries::Summaries;
use ir::{Function, Inst, Module, Value};

/// Clobber queries for one function.
pub struct Clobbers<'a> {
    /// Alias facts.
    pub alias: &'a AliasAnalysis,
    /// What calls of the module's functions may do.
    pub calls: &'a Summaries,
}

impl Clobbers<'_> {
    /// The effects of instruction `inst` of `func` (a function of `module`),
    /// with a call of a module function summarized.
    #[inline]
    pub fn effects(&self, module: &Module, func: &Function, inst: Inst) -> Effects {
        self.calls.inst_effects(module, func, inst)
    }

    /// How a plain access of `a` relates to one of `b`.
    pub fn alias(&self, func: &Function, a: Loc, b: Loc) -> AliasResult {
        if a == b {
            return AliasResult::Must;
        }
        self.alias.addrs(func, &a.addr(), &b.addr())
    }

    /// Whether `loc` belongs to an allocation no one else can reach.
    pub fn is_private(&self, loc: Loc) -> bool {
        loc.base().is_some_and(|b| self.is_private_value(b))
    }

    fn is_private_value(&self, v: Value) -> bool {
        self.alias.escape().is_unescaped_allocation(v)
    }

    /// Whether an instruction with effects `eff` (not a plain load or store) may write `loc`.
    pub fn effect_writes(&self, func: &Function, eff: &Effects, loc: Loc) -> bool {
        nodes_touch(&eff.writes, loc.leaf(func)) && !self.is_private(loc)
    }

    /// Whether an instruction with effects `eff` (not a plain load or store) may read `loc`.
    pub fn effect_reads(&self, func: &Function, eff: &Effects, loc: Loc) -> bool {
        nodes_touch(&eff.reads, loc.leaf(func)) && !self.is_private(loc)
    }

    /// Whether `eff` writes anything a trap or the caller could observe
    /// (heap slots of reachable objects, the output trace); allocation alone
    /// is invisible. `private_store` says the write goes to a private object.
    pub fn writes_observable(&self, eff: &Effects, private_store: bool) -> bool {
        !private_store && eff.writes.iter().any(|&w| w != HeapNode::Alloc)
    }
}

fn nodes_touch(nodes: &[HeapNode], leaf: HeapNode) -> bool {
    nodes.iter().any(|&n| HeapNode::overlaps(n, leaf))
}
