//! Use lists: for each value, the placed instructions that use it, in one
//! compact table (computed in one pass over the function, storage reused).

use crate::entities::{Inst, Value};
use crate::function::Function;

/// For each value of a function, the placed instructions that name it as an
/// operand (each user once per value, in layout order), as of the last
/// [`UseList::recompute`]. Edits made afterwards are not reflected.
#[derive(Default, Clone, Debug)]
pub struct UseList {
    /// `start[v]..start[v + 1]` indexes `users` for value `v`.
    start: Vec<u32>,
    users: Vec<Inst>,
}

impl UseList {
    /// Rebuild the lists for `func` (O(size of the function)).
    pub fn recompute(&mut self, func: &Function) {
        let n = func.values.len();
        self.start.clear();
        self.start.resize(n + 2, 0);
        // Count users per value (offset by two so the prefix sum leaves each
        // value's start at index v + 1, then filling shifts it to v).
        for inst in func.inst_iter() {
            let mut last = None;
            func.insts[inst.index()].kind.for_each_operand(|v| {
                if last != Some(v) {
                    self.start[v.index() + 2] += 1;
                }
                last = Some(v);
            });
        }
        for i in 2..self.start.len() {
            self.start[i] += self.start[i - 1];
        }
        self.users.clear();
        self.users.resize(self.start[n + 1] as usize, Inst::new(0));
        for inst in func.inst_iter() {
            let mut last = None;
            func.insts[inst.index()].kind.for_each_operand(|v| {
                if last != Some(v) {
                    let slot = &mut self.start[v.index() + 1];
                    self.users[*slot as usize] = inst;
                    *slot += 1;
                }
                last = Some(v);
            });
        }
        self.start.pop();
    }

    /// The instructions that used `v` at the last recompute (an instruction
    /// naming `v` in two non-adjacent operands appears twice).
    pub fn users(&self, v: Value) -> &[Inst] {
        match (self.start.get(v.index()), self.start.get(v.index() + 1)) {
            (Some(&a), Some(&b)) => &self.users[a as usize..b as usize],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_match_compute_uses() {
        let text = "func @f(%x: i64, %y: i64) -> i64 {\nentry:\n  %a = add %x, %x\n  %b = mul %a, %y\n  \
                    br %b, l, r\nl:\n  jmp j\nr:\n  jmp j\nj:\n  %p = phi [l: %a], [r: %x]\n  %c = add %p, %a\n  ret %c\n}\n";
        let (m, _) = crate::parse_module(text, "t.ir").unwrap();
        let f = &m.funcs[0];
        let mut u = UseList::default();
        u.recompute(f);
        let expect = f.compute_uses();
        for v in 0..f.values.len() {
            let v = Value::new(v);
            let mut got = u.users(v).to_vec();
            got.dedup();
            assert_eq!(got, expect[v.index()], "value {v:?}");
        }
        assert!(u.users(Value::new(f.values.len() + 5)).is_empty());
        // Two users of %x: %a (once, though it names %x twice) and the phi.
        assert_eq!(u.users(f.params[0]).len(), 2);
    }
}
