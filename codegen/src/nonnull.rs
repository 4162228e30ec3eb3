//! Which references are known non-null where, across blocks: a forward
//! must-analysis over the reachable blocks, so instruction selection can
//! drop a null check that an earlier access on every path already made.
//!
//! A block *checks* a value when one of its accesses null-checks it as base
//! ([`checked_base`]: such an access traps if the value is null, so past it
//! the value is not) or defines it with `new`/`newarray`. An SSA value never
//! changes between its definition and the next execution of that
//! definition, so a value checked on every path into a block is non-null all
//! through it, unless the block defines it (a phi or an instruction of a
//! loop makes a new value each iteration: what the last iteration checked
//! says nothing about it): `in(B) = ∩ out(P)` over B's predecessors,
//! `out(B) = (in(B) − defs(B)) ∪ checks(B)`, the entry's `in` empty, and
//! what B may assume is `in(B) − defs(B)`.
//!
//! For a loop header the intersection includes the edge from outside the
//! loop, where usually nothing is known yet. [`NonNull::steady`] gives, per
//! block, what its *retreating* predecessors (those at or after it in the
//! layout order: the back edges) all checked: the backend emits such a block
//! a second time for entries along those edges, without those checks (a
//! null check of a loop-invariant base runs once per loop entry, not once
//! per iteration; see `lower::FuncEmitter`).
//!
//! Cost: the sets range over the values some block checks (numbered
//! densely), not over every value, and a function whose sets would exceed
//! [`MAX_SET_WORDS`] in all (blocks × words) gets no cross-block knowledge
//! at all (every check stays: sound, only slower code), so memory and time
//! stay bounded on any function size.

use ir::{Block, Function, InstKind, Value};

/// The reference a null-checking instruction of `kind` checks: the base of
/// a field or element load or store, the array of `len`, the operand of
/// `nullcheck`, the array of `boundscheck` (`ir::effects::checked_by`).
pub fn checked_base(kind: &InstKind) -> Option<Value> {
    ir::effects::checked_by(kind).map(ir::effects::Checked::base)
}

/// The most words all blocks' sets of one table may take together (8 MiB);
/// a function beyond it is not analysed.
pub const MAX_SET_WORDS: usize = 1 << 20;

/// The result of the analysis for one function: per reachable block (by
/// its position in the layout order), bit sets over the values some block
/// checks (the tracked values).
pub struct NonNull {
    /// Words per set.
    words: usize,
    /// Per value of the function, its bit in the sets (`u32::MAX`: untracked,
    /// never known non-null).
    bit: Vec<u32>,
    /// Per bit, the tracked value.
    tracked: Vec<Value>,
    /// Per IR block, its position in the layout order (`usize::MAX`: unreachable).
    rank: Vec<usize>,
    /// Per position: the values non-null on entry.
    entry: Vec<u64>,
    /// Per position: the values every retreating predecessor checked
    /// (all zero without a retreating predecessor).
    steady: Vec<u64>,
}

fn has(set: &[u64], bit: u32) -> bool {
    let bit = bit as usize;
    set.get(bit / 64).is_some_and(|w| w >> (bit % 64) & 1 == 1)
}

/// The value `kind` (with result `result`) makes known non-null: the result
/// of `new`/`newarray`, or the base a null-checking access checks.
fn made_non_null(kind: &InstKind, result: Option<Value>) -> Option<Value> {
    match kind {
        InstKind::New(_) | InstKind::NewArray { .. } => result,
        kind => checked_base(kind),
    }
}

impl NonNull {
    /// Analyse `f`, whose reachable blocks in reverse postorder are `order`
    /// (the entry first).
    pub fn new(f: &Function, order: &[Block]) -> NonNull {
        NonNull::within(f, order, MAX_SET_WORDS)
    }

    /// [`NonNull::new`] with at most `max_words` words per table (blocks ×
    /// words per set); beyond it nothing is known.
    fn within(f: &Function, order: &[Block], max_words: usize) -> NonNull {
        let nb = order.len();
        let mut rank = vec![usize::MAX; f.blocks.len()];
        for (k, &b) in order.iter().enumerate() {
            rank[b.index()] = k;
        }
        // Number the values some block checks.
        let mut bit = vec![u32::MAX; f.values.len()];
        let mut tracked = Vec::new();
        for &b in order {
            for &i in &f.blocks[b.index()].insts {
                let data = f.inst(i);
                if let Some(v) = made_non_null(&data.kind, data.result) {
                    if bit[v.index()] == u32::MAX {
                        bit[v.index()] = tracked.len() as u32;
                        tracked.push(v);
                    }
                }
            }
        }
        let mut words = tracked.len().div_ceil(64);
        if nb.saturating_mul(words) > max_words {
            // Too big to analyse: nothing is known, every check stays.
            words = 0;
            tracked.clear();
        }
        let mut nn = NonNull {
            words,
            bit,
            tracked,
            rank,
            entry: vec![0; nb * words],
            steady: vec![0; nb * words],
        };
        if words == 0 {
            return nn;
        }
        let mut checks = vec![0u64; nb * words];
        // Per position: every tracked value the block does not define.
        let mut kept = vec![!0u64; nb * words];
        for (k, &b) in order.iter().enumerate() {
            let c = &mut checks[k * words..(k + 1) * words];
            let d = &mut kept[k * words..(k + 1) * words];
            for &i in &f.blocks[b.index()].insts {
                let data = f.inst(i);
                if let Some(r) = data.result {
                    let t = nn.bit[r.index()] as usize;
                    if t != u32::MAX as usize {
                        d[t / 64] &= !(1 << (t % 64));
                    }
                }
                if let Some(v) = made_non_null(&data.kind, data.result) {
                    let t = nn.bit[v.index()] as usize;
                    c[t / 64] |= 1 << (t % 64);
                }
            }
        }
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); nb];
        for (k, &b) in order.iter().enumerate() {
            for s in f.successors(b) {
                match nn.rank.get(s.index()) {
                    Some(&r) if r != usize::MAX && !preds[r].contains(&k) => preds[r].push(k),
                    _ => {}
                }
            }
        }
        // out(B), optimistic (everything) until B is first computed.
        let mut out = vec![!0u64; nb * words];
        let mut changed = true;
        while changed {
            changed = false;
            for (k, ps) in preds.iter().enumerate() {
                let inn = k * words;
                for w in 0..words {
                    let mut x = if k == 0 { 0 } else { !0 };
                    for &p in ps {
                        x &= out[p * words + w];
                    }
                    let x = x & kept[inn + w];
                    nn.entry[inn + w] = x;
                    let o = x | checks[inn + w];
                    if out[inn + w] != o {
                        out[inn + w] = o;
                        changed = true;
                    }
                }
            }
        }
        for (k, ps) in preds.iter().enumerate().skip(1) {
            let back: Vec<usize> = ps.iter().copied().filter(|&p| p >= k).collect();
            if back.is_empty() {
                continue;
            }
            for w in 0..words {
                let x = back.iter().fold(!0, |x, &p| x & out[p * words + w]);
                nn.steady[k * words + w] = x & kept[k * words + w];
            }
        }
        nn
    }

    /// The bits of block `b`'s row of `table`.
    fn row<'t>(&self, table: &'t [u64], b: Block) -> &'t [u64] {
        match self.rank.get(b.index()) {
            Some(&k) if k != usize::MAX => &table[k * self.words..(k + 1) * self.words],
            _ => &[],
        }
    }

    /// The values known non-null when block `b` starts (any entry), none
    /// of them defined by `b`.
    pub fn on_entry(&self, b: Block) -> impl Iterator<Item = Value> + '_ {
        let tracked = &self.tracked;
        self.row(&self.entry, b)
            .iter()
            .enumerate()
            .flat_map(move |(w, &bits)| {
                let mut left = bits;
                std::iter::from_fn(move || {
                    (left != 0).then(|| {
                        let k = left.trailing_zeros();
                        left &= left - 1;
                        tracked[w * 64 + k as usize]
                    })
                })
            })
    }

    /// Whether `b` has retreating predecessors (it heads a loop), every one
    /// of them checked `v`, and `b` does not define `v`.
    pub fn steady(&self, b: Block, v: Value) -> bool {
        self.bit
            .get(v.index())
            .is_some_and(|&t| t != u32::MAX && has(self.row(&self.steady, b), t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = "
type P { x: i64 }
func @f(%p: P, %q: P, %c: i64) -> i64 {
entry:
  %o = new P
  jmp head
head:
  %i = phi [entry: 0], [latch: %i2]
  %v = load %p.x
  br %c, then, latch
then:
  %w = load %q.x
  jmp latch
latch:
  %i2 = add %i, %v
  %more = slt %i2, 10
  br %more, head, done
done:
  %z = load %p.x
  %y = load %o.x
  ret %z
}
";

    #[test]
    fn a_value_checked_on_every_path_is_known_and_a_loop_header_knows_its_back_edges() {
        let (m, _) = ir::parse_module(LOOP, "loop").expect("parses");
        ir::verify_module(&m).expect("verifies");
        let f = &m.funcs[0];
        let block =
            |name: &str| Block(f.blocks.iter().position(|b| b.name == name).expect("block") as u32);
        let value = |name: &str| {
            let names = ir::Names::new(f);
            (0..f.values.len() as u32)
                .map(Value)
                .find(|&v| names.value(v) == name)
                .expect("value")
        };
        let (p, q, o) = (value("%p"), value("%q"), value("%o"));
        // The layout is a reverse postorder here.
        let nn = NonNull::new(f, &f.layout);
        let on_entry = |b: &str| nn.on_entry(block(b)).collect::<Vec<_>>();
        assert_eq!(on_entry("head"), [o], "only what `entry` made");
        assert!(on_entry("then").contains(&p));
        let latch = on_entry("latch");
        assert!(latch.contains(&p) && latch.contains(&o), "{latch:?}");
        assert!(!latch.contains(&q), "checked on one path only");
        let done = on_entry("done");
        assert!(done.contains(&p) && done.contains(&o) && !done.contains(&q));
        // The back edge (from latch) checked %p and made %o; not %q.
        assert!(nn.steady(block("head"), p) && nn.steady(block("head"), o));
        assert!(!nn.steady(block("head"), q));
        // Blocks without a back edge into them have no second copy.
        assert!(!nn.steady(block("latch"), p) && !nn.steady(block("done"), p));
    }

    #[test]
    fn sets_range_over_checked_values_and_a_function_over_budget_knows_nothing() {
        let (m, _) = ir::parse_module(LOOP, "loop").expect("parses");
        let f = &m.funcs[0];
        let latch = Block(f.blocks.iter().position(|b| b.name == "latch").unwrap() as u32);
        let head = Block(f.blocks.iter().position(|b| b.name == "head").unwrap() as u32);
        // %p, %q and %o are the checked values: one word per set.
        let nn = NonNull::new(f, &f.layout);
        assert_eq!((nn.words, nn.tracked.len()), (1, 3));
        assert_eq!(nn.on_entry(latch).count(), 2);
        // Five blocks of one word: a budget of 4 words is exceeded.
        let none = NonNull::within(f, &f.layout, 4);
        assert_eq!(none.on_entry(latch).count(), 0);
        assert!(f.params.iter().all(|&p| !none.steady(head, p)));
        let just = NonNull::within(f, &f.layout, 5);
        assert_eq!(just.on_entry(latch).count(), 2);
    }

    /// A loop whose header loads a reference and checks it (by storing
    /// through it), where the back edge's block checks it again: each
    /// iteration loads a new value, which may be null although the last
    /// iteration's was not (corpus/regressions/native_loop_defined_base.ir).
    const REDEFINED: &str = "
type Node { val: i64, next: Node }
func @main(%p1: Node) -> i64 {
entry:
  jmp b1
b1:
  %n = phi [entry: %p1], [b4: %v3]
  %v3 = load %p1.next
  store %v3.val, 1
  store %p1.next, null
  jmp b4
b4:
  %v22 = load %v3.val
  %w = load %n.val
  jmp b1
}
";

    #[test]
    fn a_value_the_block_defines_is_not_known_from_the_last_iteration() {
        let (m, _) = ir::parse_module(REDEFINED, "redefined").expect("parses");
        ir::verify_module(&m).expect("verifies");
        let f = &m.funcs[0];
        let names = ir::Names::new(f);
        let value = |name: &str| {
            (0..f.values.len() as u32)
                .map(Value)
                .find(|&v| names.value(v) == name)
                .expect("value")
        };
        let b1 = Block(1);
        let nn = NonNull::new(f, &f.layout);
        let (p1, v3, n) = (value("%p1"), value("%v3"), value("%n"));
        assert!(nn.steady(b1, p1), "a parameter stays checked");
        assert!(!nn.steady(b1, v3), "loaded anew each iteration");
        assert!(!nn.steady(b1, n), "a phi is a new value each iteration");
        assert!(nn.on_entry(Block(2)).any(|v| v == v3), "checked in b1");
    }
}
