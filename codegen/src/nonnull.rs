//! Which references are known non-null where, across blocks: a forward
//! must-analysis over the reachable blocks, so instruction selection can
//! drop a null check that an earlier access on every path already made.
//!
//! A block *checks* a value when one of its accesses null-checks it as base
//! ([`checked_base`]: such an access traps if the value is null, so past it
//! the value is not) or defines it with `new`/`newarray`. SSA values never
//! change, so a value checked on every path into a block is non-null all
//! through it: `in(B) = ∩ out(P)` over B's predecessors, `out(B) = in(B) ∪
//! checks(B)`, the entry's `in` empty.
//!
//! For a loop header the intersection includes the edge from outside the
//! loop, where usually nothing is known yet. [`NonNull::steady`] gives, per
//! block, what its *retreating* predecessors (those at or after it in the
//! layout order: the back edges) all checked: the backend emits such a block
//! a second time for entries along those edges, without those checks (a
//! null check of a loop-invariant base runs once per loop entry, not once
//! per iteration; see `lower::FuncEmitter`).

use ir::{Addr, Block, Function, InstKind, Value};

/// The reference a null-checking access of `kind` checks: the base of a
/// field or element load or store, or the array of `len`.
pub fn checked_base(kind: &InstKind) -> Option<Value> {
    match kind {
        InstKind::Load { addr, .. } | InstKind::Store { addr, .. } => match *addr {
            Addr::Field { base, .. } | Addr::Elem { base, .. } => Some(base),
            Addr::Global(_) => None,
        },
        InstKind::Len(a) => Some(*a),
        _ => None,
    }
}

/// A set of values.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Bits(Vec<u64>);

impl Bits {
    fn empty(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn full(n: usize) -> Bits {
        Bits(vec![!0; n.div_ceil(64)])
    }
    fn insert(&mut self, v: Value) {
        self.0[v.index() / 64] |= 1 << (v.index() % 64);
    }
    fn contains(&self, v: Value) -> bool {
        self.0[v.index() / 64] >> (v.index() % 64) & 1 == 1
    }
    fn intersect(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a &= b;
        }
    }
    fn union(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    fn values(&self) -> impl Iterator<Item = Value> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |k| bits >> k & 1 == 1)
                .map(move |k| Value((w * 64 + k) as u32))
        })
    }
}

/// The result of the analysis for one function.
pub struct NonNull {
    /// Per IR block: the values non-null on entry (`None`: unreachable).
    entry: Vec<Option<Bits>>,
    /// Per IR block: the values every retreating predecessor checked
    /// (`None`: no retreating predecessor).
    steady: Vec<Option<Bits>>,
}

impl NonNull {
    /// Analyse `f`, whose reachable blocks in reverse postorder are `order`
    /// (the entry first).
    pub fn new(f: &Function, order: &[Block]) -> NonNull {
        let n = f.values.len();
        let nb = f.blocks.len();
        let mut checks: Vec<Option<Bits>> = vec![None; nb];
        let mut rank = vec![usize::MAX; nb];
        for (k, &b) in order.iter().enumerate() {
            rank[b.index()] = k;
            let mut c = Bits::empty(n);
            for &i in &f.blocks[b.index()].insts {
                let data = f.inst(i);
                if let Some(v) = checked_base(&data.kind) {
                    c.insert(v);
                }
                if let (InstKind::New(_) | InstKind::NewArray { .. }, Some(r)) =
                    (&data.kind, data.result)
                {
                    c.insert(r);
                }
            }
            checks[b.index()] = Some(c);
        }
        let mut preds: Vec<Vec<Block>> = vec![Vec::new(); nb];
        for &b in order {
            for s in f.successors(b) {
                if rank.get(s.index()).is_some_and(|&r| r != usize::MAX)
                    && !preds[s.index()].contains(&b)
                {
                    preds[s.index()].push(b);
                }
            }
        }
        // out(B), optimistic (everything) until B is first computed.
        let mut out: Vec<Bits> = vec![Bits::full(n); nb];
        let mut entry: Vec<Option<Bits>> = vec![None; nb];
        let mut changed = true;
        while changed {
            changed = false;
            for (k, &b) in order.iter().enumerate() {
                let inn = if k == 0 {
                    Bits::empty(n)
                } else {
                    let mut s = Bits::full(n);
                    for p in &preds[b.index()] {
                        s.intersect(&out[p.index()]);
                    }
                    s
                };
                let mut o = inn.clone();
                o.union(checks[b.index()].as_ref().expect("reachable"));
                if o != out[b.index()] {
                    out[b.index()] = o;
                    changed = true;
                }
                entry[b.index()] = Some(inn);
            }
        }
        let mut steady = vec![None; nb];
        for (k, &b) in order.iter().enumerate().skip(1) {
            let mut s: Option<Bits> = None;
            for p in preds[b.index()].iter().filter(|p| rank[p.index()] >= k) {
                s.get_or_insert_with(|| Bits::full(n))
                    .intersect(&out[p.index()]);
            }
            steady[b.index()] = s;
        }
        NonNull { entry, steady }
    }

    /// The values known non-null when block `b` starts (any entry).
    pub fn on_entry(&self, b: Block) -> Vec<Value> {
        self.entry[b.index()]
            .as_ref()
            .map_or_else(Vec::new, |s| s.values().collect())
    }

    /// Whether `b` has retreating predecessors (it heads a loop) and every
    /// one of them checked `v`.
    pub fn steady(&self, b: Block, v: Value) -> bool {
        self.steady[b.index()]
            .as_ref()
            .is_some_and(|s| s.contains(v))
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
        assert_eq!(nn.on_entry(block("head")), [o], "only what `entry` made");
        assert!(nn.on_entry(block("then")).contains(&p));
        let latch = nn.on_entry(block("latch"));
        assert!(latch.contains(&p) && latch.contains(&o), "{latch:?}");
        assert!(!latch.contains(&q), "checked on one path only");
        let done = nn.on_entry(block("done"));
        assert!(done.contains(&p) && done.contains(&o) && !done.contains(&q));
        // The back edge (from latch) checked %p and made %o; not %q.
        assert!(nn.steady(block("head"), p) && nn.steady(block("head"), o));
        assert!(!nn.steady(block("head"), q));
        // Blocks without a back edge into them have no second copy.
        assert!(!nn.steady(block("latch"), p) && !nn.steady(block("done"), p));
    }
}
