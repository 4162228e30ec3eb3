//! The pool of SSA values (and recently used addresses) the generator may use
//! at the current point. Scopes follow the control-flow shapes: a value defined
//! inside a branch or loop body is dropped when the region closes, so every use
//! the generator emits is dominated by its definition.

use ir::{Addr, Type, Value};

/// Values available at the current point, with scope marks.
#[derive(Default, Debug, Clone)]
pub struct Pool {
    vals: Vec<(Value, Type)>,
    addrs: Vec<Addr>,
    marks: Vec<(usize, usize)>,
}

impl Pool {
    /// Make `v` of type `ty` available.
    pub fn add(&mut self, v: Value, ty: Type) {
        self.vals.push((v, ty));
    }

    /// Remember `addr` as recently accessed (for repeated loads, store→load pairs).
    pub fn note_addr(&mut self, addr: Addr) {
        self.addrs.push(addr);
    }

    /// Open a nested region.
    pub fn push_scope(&mut self) {
        self.marks.push((self.vals.len(), self.addrs.len()));
    }

    /// Close the innermost region, forgetting what it defined.
    pub fn pop_scope(&mut self) {
        if let Some((v, a)) = self.marks.pop() {
            self.vals.truncate(v);
            self.addrs.truncate(a);
        }
    }

    /// The available values of type `ty`, oldest first.
    pub fn of_type(&self, ty: Type) -> impl Iterator<Item = Value> + '_ {
        self.vals
            .iter()
            .filter(move |(_, t)| *t == ty)
            .map(|(v, _)| *v)
    }

    /// The number of available values of type `ty`.
    pub fn count(&self, ty: Type) -> usize {
        self.of_type(ty).count()
    }

    /// The `k`-th available value of type `ty`, if any.
    pub fn nth(&self, ty: Type, k: usize) -> Option<Value> {
        self.of_type(ty).nth(k)
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
    fn scopes_forget_inner_values() {
        let mut p = Pool::default();
        p.add(Value::new(0), Type::I64);
        p.push_scope();
        p.add(Value::new(1), Type::I64);
        p.note_addr(Addr::Global(ir::GlobalId::new(0)));
        assert_eq!(p.count(Type::I64), 2);
        assert_eq!(p.addr_count(), 1);
        p.pop_scope();
        assert_eq!(p.count(Type::I64), 1);
        assert_eq!(p.addr_count(), 0);
        assert_eq!(p.nth(Type::I64, 0), Some(Value::new(0)));
    }
}
