//! Lists of instructions, one per slot (a value or an instruction), in the
//! order they were appended: the engine's user lists (per value, the
//! instructions that may use it) and its distant dependencies (per
//! instruction, the instructions to revisit when it changes). The lists
//! share one arena of linked nodes (appended at the tail, forgotten when a
//! list is taken), so that a run costs one 8-byte head/tail pair per slot
//! and one 8-byte node per entry, written in order, instead of a list object
//! each: at 100k instructions, a 24-byte inline list per value outgrew the
//! cache, and emptying them all read every one.

use ir::Inst;

/// No node.
const NIL: u32 = u32::MAX;

/// One list per slot.
#[derive(Default)]
pub(crate) struct InstLists {
    /// Per slot: the first and last node of its list.
    ends: Vec<(u32, u32)>,
    /// The nodes: an entry and the next node of its list.
    nodes: Vec<(Inst, u32)>,
    /// The slots whose list got a first node since the last reset (all
    /// other lists are empty), while they are at most a quarter of them.
    started: Vec<u32>,
    /// More lists were started than `started` holds: a reset empties all.
    untracked: bool,
}

/// A walk over one list's entries, by node (the nodes stay where they are
/// while more are appended, so the walk may outlive a borrow of the lists).
#[derive(Copy, Clone)]
pub(crate) struct Cursor(u32);

impl InstLists {
    /// `n` empty lists (or more), keeping the storage: only the lists
    /// started since the last reset are emptied (at 100k instructions,
    /// emptying them all wrote 800 kB for the few that had entries), or
    /// all of them in one sweep when many were started (the user lists:
    /// noting each first one cost more than the sweep).
    pub(crate) fn reset(&mut self, n: usize) {
        if std::mem::take(&mut self.untracked) {
            self.ends.fill((NIL, NIL));
        } else {
            for &i in &self.started {
                self.ends[i as usize] = (NIL, NIL);
            }
        }
        self.started.clear();
        self.grow(n);
        self.nodes.clear();
    }

    /// Make room for `n` lists (the new ones empty).
    pub(crate) fn grow(&mut self, n: usize) {
        if self.ends.len() < n {
            self.ends.resize(n, (NIL, NIL));
        }
    }

    /// How many lists there are.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Append `entry` to the list of slot `at` unless it is already last.
    #[inline]
    pub(crate) fn push(&mut self, at: usize, entry: Inst) {
        let (head, tail) = self.ends[at];
        if tail != NIL && self.nodes[tail as usize].0 == entry {
            return;
        }
        let node = self.nodes.len() as u32;
        self.nodes.push((entry, NIL));
        if head == NIL {
            self.ends[at] = (node, node);
            if self.started.len() < self.ends.len() / 4 {
                self.started.push(at as u32);
            } else {
                self.untracked = true;
            }
        } else {
            self.nodes[tail as usize].1 = node;
            self.ends[at].1 = node;
        }
    }

    /// A walk over the list of slot `at` (which stays as it is).
    pub(crate) fn first(&self, at: usize) -> Cursor {
        Cursor(self.ends.get(at).map_or(NIL, |e| e.0))
    }

    /// Empty the list of slot `at`; returns a walk over what it held.
    pub(crate) fn take(&mut self, at: usize) -> Cursor {
        match self.ends.get_mut(at) {
            Some(e) => Cursor(std::mem::replace(e, (NIL, NIL)).0),
            None => Cursor(NIL),
        }
    }

    /// The entry at `cursor`, moving it on; `None` at the end of its list.
    pub(crate) fn next(&self, cursor: &mut Cursor) -> Option<Inst> {
        let (entry, next) = *self.nodes.get(cursor.0 as usize)?;
        cursor.0 = next;
        Some(entry)
    }

    /// Empty the list of slot `at`, calling `f` on its entries in order.
    pub(crate) fn take_each(&mut self, at: usize, mut f: impl FnMut(Inst)) {
        let mut cursor = self.take(at);
        while let Some(entry) = self.next(&mut cursor) {
            f(entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry of the list of slot `at`, taking it when `take`.
    fn entries(d: &mut InstLists, at: usize, take: bool) -> Vec<usize> {
        let mut cursor = if take { d.take(at) } else { d.first(at) };
        std::iter::from_fn(|| d.next(&mut cursor))
            .map(|i| i.index())
            .collect()
    }

    #[test]
    fn lists_keep_their_order_skip_back_to_back_repeats_and_empty_when_taken() {
        let mut d = InstLists::default();
        d.reset(3);
        for x in [5, 5, 6, 5, 7] {
            d.push(0, Inst::new(x));
        }
        d.push(1, Inst::new(9));
        assert_eq!(entries(&mut d, 0, false), [5, 6, 5, 7]);
        assert_eq!(entries(&mut d, 0, true), [5, 6, 5, 7]);
        assert!(entries(&mut d, 0, true).is_empty());
        d.push(0, Inst::new(8));
        let mut seen = Vec::new();
        d.take_each(0, |i| seen.push(i.index()));
        d.take_each(1, |i| seen.push(i.index()));
        assert_eq!(seen, [8, 9]);
    }

    #[test]
    fn a_taken_list_can_be_walked_while_others_grow() {
        let mut d = InstLists::default();
        d.reset(2);
        d.push(0, Inst::new(1));
        d.push(0, Inst::new(2));
        let mut cursor = d.take(0);
        let mut seen = Vec::new();
        while let Some(i) = d.next(&mut cursor) {
            seen.push(i.index());
            d.push(0, Inst::new(i.index() + 10));
            d.push(1, i);
        }
        assert_eq!(seen, [1, 2]);
        assert_eq!(entries(&mut d, 0, false), [11, 12]);
        assert_eq!(entries(&mut d, 1, false), [1, 2]);
    }

    #[test]
    fn a_reset_empties_the_lists_left_with_entries() {
        for filled in [1, 8] {
            let mut d = InstLists::default();
            d.reset(16);
            (0..filled).for_each(|k| d.push(k, Inst::new(2)));
            d.push(3, Inst::new(0));
            d.take_each(3, |_| {});
            d.reset(2);
            assert_eq!(d.len(), 16);
            assert!((0..16).all(|k| entries(&mut d, k, false).is_empty()));
            d.push(1, Inst::new(0));
            assert_eq!(entries(&mut d, 1, true), [0]);
        }
    }

    #[test]
    fn grown_lists_start_empty_and_walks_past_the_end_are_empty() {
        let mut d = InstLists::default();
        d.reset(1);
        d.grow(5);
        d.push(4, Inst::new(3));
        assert_eq!(entries(&mut d, 4, false), [3]);
        assert!(entries(&mut d, 9, true).is_empty());
    }
}
