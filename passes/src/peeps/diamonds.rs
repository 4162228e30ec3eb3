//! Empty diamonds: `br c, a, b` where `a` and `b` are empty blocks (a lone
//! `jmp j`, entered only from this branch) into one join `j` whose phis take
//! the same value from both becomes `jmp a` — either way the program reaches
//! `j` with the same values, and a `br` never traps (issue 13). `b` is then
//! unreachable; the CFG cleanup removes it and merges the rest. Counted as
//! `peeps.empty_diamonds`.

use super::engine::Engine;
use ir::{Block, Inst, InstKind};

impl Engine<'_> {
    /// Turn every empty diamond into a jump; whether one was found.
    pub(crate) fn remove_empty_diamonds(&mut self) -> bool {
        let mut found: Vec<(Inst, Block, Block)> = Vec::new();
        for &me in &self.func.layout {
            let Some(term) = self.func.terminator(me) else {
                continue;
            };
            if let InstKind::Br(_, a, b) = self.func.insts[term.index()].kind {
                if a != b && self.same_empty_arms(a, b) {
                    found.push((term, a, b));
                }
            }
        }
        if found.is_empty() {
            return false;
        }
        // Each arm must be entered from this branch alone.
        let mut cfg = std::mem::take(&mut self.s.bufs.cfg);
        cfg.recompute(self.func);
        found.retain(|&(term, a, b)| {
            let me = self.func.insts[term.index()].block;
            me.is_some() && cfg.single_pred(a) == me && cfg.single_pred(b) == me
        });
        self.s.bufs.cfg = cfg;
        if found.is_empty() {
            return false;
        }
        self.ensure_users();
        self.before_cfg_change();
        for &(term, a, b) in &found {
            let me = self.func.insts[term.index()].block.expect("placed");
            self.func.insts[term.index()].kind = InstKind::Jmp(a);
            self.drop_edge(me, b);
            self.report.empty_diamonds += 1;
        }
        true
    }

    /// Whether `a` and `b` are each a lone `jmp` to one join whose phis
    /// take the same value from both.
    fn same_empty_arms(&self, a: Block, b: Block) -> bool {
        let lone_jmp = |x: Block| match self.func.blocks[x.index()].insts.as_slice() {
            [only] => match self.func.insts[only.index()].kind {
                InstKind::Jmp(j) => Some(j),
                _ => None,
            },
            _ => None,
        };
        let (Some(j), Some(k)) = (lone_jmp(a), lone_jmp(b)) else {
            return false;
        };
        if j != k || j == a || j == b {
            return false;
        }
        self.func.blocks[j.index()].insts.iter().all(|&p| {
            let InstKind::Phi(entries) = &self.func.insts[p.index()].kind else {
                return true;
            };
            let from = |x: Block| entries.iter().find(|e| e.0 == x).map(|e| e.1);
            from(a) == from(b)
        })
    }
}
