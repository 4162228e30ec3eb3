//! The pool of SSA values (and recently used addresses) the generator may use
//! at the current point. Scopes follow the control-flow shapes: a value defined
//! inside a branch or loop body is dropped when the region closes, so every use
//! the generator emits is dominated by its definition.

use ir::{Addr, Type, Value};
use std::cell::RefCell;

thread_local! {
    /// The emptied pools of finished functions, whose buffers the next
    /// functions reuse (a pool is several small vectors).
    static SPARE: RefCell<Vec<Pool>> = const { RefCell::new(Vec::new()) };
}

/// Values available at the current point, with scope marks.
#[derive(Default, Debug, Clone)]
pub struct Pool {
    /// The available values, one list per type (oldest first), so counting
    /// and indexing the values of a type never walks the others.
    lists: Vec<(Type, Vec<Value>)>,
    /// The list each value went to, in the order they were added (closing a
    /// scope takes the newest ones back off).
    added: Vec<usize>,
    addrs: Vec<Addr>,
    marks: Vec<(usize, usize)>,
}

impl Pool {
    /// An empty pool (with the buffers of a finished one, when there is one).
    pub fn new() -> Pool {
        SPARE
            .try_with(|s| s.borrow_mut().pop())
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Hand the buffers, emptied, to the next [`Pool::new`]: nothing of
    /// what this pool held survives (every list, log and mark is cleared).
    pub fn recycle(mut self) {
        for (_, l) in &mut self.lists {
            l.clear();
        }
        self.added.clear();
        self.addrs.clear();
        self.marks.clear();
        let _ = SPARE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.len() < 4 {
                    s.push(self);
                }
            }
        });
    }

    /// Make `v` of type `ty` available.
    pub fn add(&mut self, v: Value, ty: Type) {
        let i = match self.lists.iter().position(|(t, _)| *t == ty) {
            Some(i) => i,
            None => {
                self.lists.push((ty, Vec::with_capacity(16)));
                self.lists.len() - 1
            }
        };
        self.lists[i].1.push(v);
        self.added.push(i);
    }

    /// Remember `addr` as recently accessed (for repeated loads, store→load pairs).
    pub fn note_addr(&mut self, addr: Addr) {
        self.addrs.push(addr);
    }

    /// Open a nested region.
    pub fn push_scope(&mut self) {
        self.marks.push((self.added.len(), self.addrs.len()));
    }

    /// Close the innermost region, forgetting what it defined.
    pub fn pop_scope(&mut self) {
        if let Some((v, a)) = self.marks.pop() {
            for i in self.added.drain(v..).rev() {
                self.lists[i].1.pop();
            }
            self.addrs.truncate(a);
        }
    }

    /// The available values of type `ty`, oldest first.
    fn list(&self, ty: Type) -> &[Value] {
        self.lists
            .iter()
            .find(|(t, _)| *t == ty)
            .map_or(&[], |(_, l)| l.as_slice())
    }

    /// The available values of type `ty`, oldest first.
    pub fn of_type(&self, ty: Type) -> impl Iterator<Item = Value> + '_ {
        self.list(ty).iter().copied()
    }

    /// The number of available values of type `ty`.
    pub fn count(&self, ty: Type) -> usize {
        self.list(ty).len()
    }

    /// The `k`-th available value of type `ty`, if any.
    pub fn nth(&self, ty: Type, k: usize) -> Option<Value> {
        self.list(ty).get(k).copied()
    }

    /// The `k`-th most recent remembered address.
    pub fn recent_addr(&self, k: usize) -> Option<&Addr> {
        let n = self.addrs.len();
        (k < n).then(|| &self.addrs[n - 1 - k])
    }

    /// How many addresses are remembered.
    pub fn addr_count(&self) -> usize {
        self.addrs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_reusing_a_finished_one_s_buffers_starts_empty() {
        for _ in 0..3 {
            let mut p = Pool::new();
            assert_eq!(p.count(Type::I64), 0);
            assert_eq!(p.nth(Type::I64, 0), None);
            assert_eq!(p.addr_count(), 0);
            p.push_scope();
            p.add(Value::new(3), Type::I64);
            p.note_addr(Addr::Global(ir::GlobalId::new(0)));
            p.push_scope();
            p.recycle();
        }
        let mut p = Pool::new();
        p.pop_scope();
        assert_eq!(p.count(Type::I64), 0);
    }

    #[test]
    fn scopes_forget_inner_values() {
        let mut p = Pool::default();
        p.add(Value::new(0), Type::I64);
        p.push_scope();
        p.add(Value::new(1), Type::I64);
        p.add(Value::new(2), Type::NULL);
        p.note_addr(Addr::Global(ir::GlobalId::new(0)));
        assert_eq!(p.count(Type::I64), 2);
        assert_eq!(p.nth(Type::I64, 1), Some(Value::new(1)));
        assert_eq!(p.nth(Type::NULL, 0), Some(Value::new(2)));
        assert_eq!(p.addr_count(), 1);
        p.pop_scope();
        assert_eq!(p.count(Type::I64), 1);
        assert_eq!(p.count(Type::NULL), 0);
        assert_eq!(p.addr_count(), 0);
        assert_eq!(p.nth(Type::I64, 0), Some(Value::new(0)));
    }
}
