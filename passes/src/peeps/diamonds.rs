//! Empty diamonds: `br c, a, b` where `a` and `b` are empty blocks (a lone
//! `jmp j`, entered only from this branch) into one join `j` whose phis take
//! the same value from both becomes `jmp a` — either way the program reaches
//! `j` with the same values, and a `br` never traps (issue 13). `b` is then
//! unreachable; the CFG cleanup removes it and merges the rest. Counted as
//! `peeps.empty_diamonds`.

use super::branch_folds::{edges_agree, lone_jmp};
use super::engine::Engine;
use ir::{Block, Inst, InstKind};

impl Engine<'_> {
    /// Turn the empty diamonds `found` (`(br, a, b)`, found by
    /// [`Engine::same_empty_arms`] in the walk of `branch_folds`) into jumps;
    /// whether one was.
    pub(crate) fn apply_empty_diamonds(&mut self, found: &mut Vec<(Inst, Block, Block)>) -> bool {
        if found.is_empty() {
            return false;
        }
        // Each arm must be entered from this branch alone.
        self.current_edges();
        let (func, cfg) = (&*self.func, &self.s.bufs.cfg);
        found.retain(|&(term, a, b)| {
            let me = func.insts[term.index()].block;
            me.is_some() && cfg.single_pred(a) == me && cfg.single_pred(b) == me
        });
        if found.is_empty() {
            return false;
        }
        self.ensure_users();
        self.before_cfg_change();
        for &(term, a, b) in found.iter() {
            let me = self.func.insts[term.index()].block.expect("placed");
            self.func.insts[term.index()].kind = InstKind::Jmp(a);
            self.drop_edge(me, b);
            self.report.empty_diamonds += 1;
        }
        true
    }

    /// Whether `a` and `b` are each a lone `jmp` to one join whose phis
    /// take the same value from both.
    pub(crate) fn same_empty_arms(&self, a: Block, b: Block) -> bool {
        match (lone_jmp(self.func, a), lone_jmp(self.func, b)) {
            (Some(j), Some(k)) => {
                j == k && j != a && j != b && edges_agree(self.func, self.cfgs.has_phis(), j, a, b)
            }
            _ => false,
        }
    }
}
