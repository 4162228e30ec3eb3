//! The engine's distant dependencies: per instruction, the instructions to
//! revisit when it changes, in registration order. The lists share one arena
//! of linked nodes (appended at the tail, forgotten when a list is revisited),
//! so that a run costs one 8-byte head/tail pair per instruction instead of a
//! list object each: most instructions never get a dependent.

use ir::Inst;

/// No node.
const NIL: u32 = u32::MAX;

/// One list per instruction slot.
#[derive(Default)]
pub(crate) struct DepLists {
    /// Per instruction slot: the first and last node of its list.
    ends: Vec<(u32, u32)>,
    /// The nodes: a dependent and the next node of its list.
    nodes: Vec<(Inst, u32)>,
    /// The instruction slots whose list got a first node since the last
    /// reset (all other lists are empty).
    started: Vec<u32>,
}

impl DepLists {
    /// `n` empty lists (or more), keeping the storage: only the lists
    /// started since the last reset are emptied (at 100k instructions,
    /// emptying them all wrote 800 kB for the few that had dependents).
    pub(crate) fn reset(&mut self, n: usize) {
        for &i in &self.started {
            self.ends[i as usize] = (NIL, NIL);
        }
        self.started.clear();
        if self.ends.len() < n {
            self.ends.resize(n, (NIL, NIL));
        }
        self.nodes.clear();
    }

    /// How many lists there are.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Append `dependent` to the list of `distant` unless it is already last.
    pub(crate) fn push(&mut self, distant: Inst, dependent: Inst) {
        let (head, tail) = self.ends[distant.index()];
        if tail != NIL && self.nodes[tail as usize].0 == dependent {
            return;
        }
        let node = self.nodes.len() as u32;
        self.nodes.push((dependent, NIL));
        if head == NIL {
            self.ends[distant.index()] = (node, node);
            self.started.push(distant.index() as u32);
        } else {
            self.nodes[tail as usize].1 = node;
            self.ends[distant.index()].1 = node;
        }
    }

    /// Empty the list of `inst`, calling `f` on its dependents in order.
    pub(crate) fn take(&mut self, inst: Inst, mut f: impl FnMut(Inst)) {
        let (mut node, _) = std::mem::replace(&mut self.ends[inst.index()], (NIL, NIL));
        while node != NIL {
            let (dependent, next) = self.nodes[node as usize];
            f(dependent);
            node = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_keep_their_order_skip_back_to_back_repeats_and_empty_when_taken() {
        let mut d = DepLists::default();
        d.reset(3);
        let (a, b) = (Inst::new(0), Inst::new(1));
        for x in [5, 5, 6, 5, 7] {
            d.push(a, Inst::new(x));
        }
        d.push(b, Inst::new(9));
        let mut seen = Vec::new();
        d.take(a, |i| seen.push(i.index()));
        assert_eq!(seen, [5, 6, 5, 7]);
        seen.clear();
        d.take(a, |i| seen.push(i.index()));
        assert!(seen.is_empty());
        d.push(a, Inst::new(8));
        d.take(a, |i| seen.push(i.index()));
        d.take(b, |i| seen.push(i.index()));
        assert_eq!(seen, [8, 9]);
    }

    #[test]
    fn a_reset_empties_the_lists_left_with_dependents() {
        let mut d = DepLists::default();
        d.reset(4);
        d.push(Inst::new(1), Inst::new(2));
        d.push(Inst::new(3), Inst::new(0));
        d.take(Inst::new(3), |_| {});
        d.reset(2);
        let mut seen = Vec::new();
        (0..4).for_each(|i| d.take(Inst::new(i), |x| seen.push(x)));
        assert!(seen.is_empty());
        d.push(Inst::new(1), Inst::new(0));
        d.take(Inst::new(1), |x| seen.push(x));
        assert_eq!(seen, [Inst::new(0)]);
    }
}
