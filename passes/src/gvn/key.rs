//! GVN keys: which instructions may be numbered, and the normalized form two
//! equivalent instructions share (commutative operands sorted, comparisons
//! turned one way, phi entries sorted). Memory behaviour is asked of
//! `ir::effects`, never decided by opcode.
//!
//! A key is 16 bytes and owns no heap memory: an operation's opcode and up
//! to three operands inline, a phi's block and a span of its sorted entries
//! in a [`KeyArena`] (one buffer for every phi key of a run), so numbering
//! allocates nothing per instruction and a table entry fits in 28 bytes.

use ir::effects::{inst_effects, Effects};
use ir::{Addr, BinOp, Callee, Function, Inst, InstKind, Module, Value};

/// The identity of a numbered instruction: an opcode tag and three words.
///
/// Equality is structural: two phi keys are the same only through
/// [`KeyArena::same`], which compares their entries (the words of a phi
/// key name its arena span). `Hash` agrees with `==`: fit for maps of
/// operation keys, not of phi keys.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Key {
    tag: u32,
    ops: [u32; 3],
}

/// Key tags: the kind in the high byte, a sub-opcode in the low one.
const BINARY: u32 = 1 << 8;
const UNARY: u32 = 2 << 8;
const SELECT: u32 = 3 << 8;
const LEN: u32 = 4 << 8;
const GUARD: u32 = 5 << 8;
/// Only the bug zoo numbers `new T`.
#[cfg(feature = "bug-zoo")]
const NEW: u32 = 6 << 8;
/// `ops`: the block, the span's start and its length (in entries).
const PHI: u32 = 7 << 8;
const LOAD_FIELD: u32 = 8 << 8;
const LOAD_ELEM: u32 = 9 << 8;
const LOAD_GLOBAL: u32 = 10 << 8;
/// `nullcheck`, `boundscheck`: a dominated identical check is redundant.
const NULLCHECK: u32 = 11 << 8;
const BOUNDSCHECK: u32 = 12 << 8;

impl Key {
    fn new(tag: u32, a: u32, b: u32, c: u32) -> Key {
        Key {
            tag,
            ops: [a, b, c],
        }
    }
}

/// How an instruction takes part in numbering.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Class {
    /// Not numbered.
    Skip,
    /// Numbered in the dominator-scoped table.
    Scoped(Key),
    /// A load: numbered only while no write in between may touch it.
    Load(Key),
}

/// The out-of-line part of phi keys: their sorted entries, packed as
/// `block << 32 | value`, in one buffer that grows and shrinks like a stack
/// (a scope's keys are dropped with the scope).
#[derive(Default)]
pub struct KeyArena {
    words: Vec<u64>,
}

impl KeyArena {
    /// How many words are in use (a mark to [`KeyArena::truncate`] back to).
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether no key has interned anything.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Drop the words from `len` on (keys made since that mark).
    pub fn truncate(&mut self, len: usize) {
        self.words.truncate(len);
    }

    /// The entries of phi key `k`.
    fn span(&self, k: &Key) -> &[u64] {
        let start = k.ops[1] as usize;
        &self.words[start..start + k.ops[2] as usize]
    }

    /// Whether `a` and `b` name the same operation.
    #[inline]
    pub fn same(&self, a: &Key, b: &Key) -> bool {
        if a.tag != PHI || b.tag != PHI {
            return a == b;
        }
        a.ops[0] == b.ops[0] && a.ops[2] == b.ops[2] && self.span(a) == self.span(b)
    }

    /// The hash of `k` (equal for keys that are [`KeyArena::same`]).
    #[inline]
    pub fn hash(&self, k: &Key) -> u32 {
        let mix = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        let mut h = mix(u64::from(k.tag), u64::from(k.ops[0]));
        if k.tag == PHI {
            for &w in self.span(k) {
                h = mix(h, w);
            }
        } else {
            h = mix(h, u64::from(k.ops[1]) | u64::from(k.ops[2]) << 32);
        }
        (h >> 32) as u32
    }

    /// The two youngest (highest-numbered) distinct values `k` names, the
    /// youngest first ([`NO_ANCHOR`] where it names fewer): the table files
    /// a key next to the first, or the second when the first one's line is
    /// full, so that keys made one after the other, which mostly name values
    /// made one after the other, sit side by side. (The second is there for
    /// a value many keys name: a constant, which a function may number after
    /// all its instructions.)
    #[inline]
    pub fn anchors(&self, k: &Key) -> [u32; 2] {
        let [a, b, c] = k.ops;
        match k.tag & !0xff {
            BINARY => youngest_two([a, b]),
            UNARY | LEN | GUARD => [a, NO_ANCHOR],
            SELECT => youngest_two([a, b, c]),
            PHI => youngest_two(self.span(k).iter().map(|&w| w as u32)),
            _ => [NO_ANCHOR; 2],
        }
    }

    /// The key of a phi in `block` with `entries` (interned, sorted).
    pub fn phi(&mut self, block: ir::Block, entries: &[(ir::Block, Value)]) -> Key {
        let start = self.words.len();
        self.words.extend(
            entries
                .iter()
                .map(|&(b, v)| u64::from(b.0) << 32 | u64::from(v.0)),
        );
        self.words[start..].sort_unstable();
        Key::new(PHI, block.0, start as u32, entries.len() as u32)
    }
}

/// No value (an anchor of [`KeyArena::anchors`]).
pub const NO_ANCHOR: u32 = u32::MAX;

/// The two highest distinct values of `values`, the highest first.
fn youngest_two(values: impl IntoIterator<Item = u32>) -> [u32; 2] {
    let mut top = [NO_ANCHOR; 2];
    for v in values {
        if top[0] == NO_ANCHOR || v > top[0] {
            top = [v, top[0]];
        } else if v != top[0] && (top[1] == NO_ANCHOR || v > top[1]) {
            top[1] = v;
        }
    }
    top
}

/// Classify `inst` of `f`, also handing back its effects when they were
/// needed to decide (so that the caller does not ask `ir::effects` twice).
/// A phi's entries are interned in `arena`.
pub fn classify_with_effects(
    m: &Module,
    f: &Function,
    inst: Inst,
    arena: &mut KeyArena,
) -> (Class, Option<Effects>) {
    let kind = &f.insts[inst.index()].kind;
    match kind {
        k if k.is_terminator() => return (Class::Skip, None),
        // A call is an environment step or another frame: two are never one.
        InstKind::Call {
            callee: Callee::Func(_) | Callee::Extern(_),
            ..
        } => return (Class::Skip, None),
        InstKind::Phi(entries) => {
            let Some(b) = f.insts[inst.index()].block else {
                return (Class::Skip, None);
            };
            return (Class::Scoped(arena.phi(b, entries)), None);
        }
        _ => {}
    }
    #[cfg(feature = "bug-zoo")]
    if crate::zoo::active(crate::zoo::Bug::GvnMergeNew) {
        if let InstKind::New(t) = kind {
            // Planted: `new T` numbered like a pure expression of T.
            return (Class::Scoped(Key::new(NEW, t.0, 0, 0)), None);
        }
    }
    let eff = inst_effects(m, f, inst);
    let class = if !eff.writes_nothing() || eff.allocates {
        Class::Skip
    } else if !eff.reads_nothing() {
        match kind {
            InstKind::Load {
                addr,
                volatile: false,
            } => Class::Load(load_key(addr)),
            _ => Class::Skip,
        }
    } else {
        op_key(kind, |v| v).map_or(Class::Skip, Class::Scoped)
    };
    (class, Some(eff))
}

/// The key of a plain load of `addr`.
fn load_key(addr: &Addr) -> Key {
    match *addr {
        Addr::Field { base, field } => Key::new(LOAD_FIELD, base.0, field.ty.0, field.index),
        Addr::Elem { base, index } => Key::new(LOAD_ELEM, base.0, index.0, 0),
        Addr::Global(g) => Key::new(LOAD_GLOBAL, g.0, 0, 0),
    }
}

/// The key of pure operation `kind` with each operand `v` read as `map(v)`,
/// normalized like [`normalize`]; `None` for an instruction that is no
/// pure operation (its effects decide whether it is one: every kind they
/// can call pure has a key here).
#[inline]
pub fn op_key(kind: &InstKind, map: impl Fn(Value) -> Value) -> Option<Key> {
    Some(match *kind {
        InstKind::Binary(op, a, b) => {
            let (op, a, b) = normalize_binary(op, map(a), map(b));
            Key::new(BINARY | op as u32, a.0, b.0, 0)
        }
        InstKind::Unary(op, a) => Key::new(UNARY | op as u32, map(a).0, 0, 0),
        InstKind::Select(c, a, b) => Key::new(SELECT, map(c).0, map(a).0, map(b).0),
        InstKind::Len(a) => Key::new(LEN, map(a).0, 0, 0),
        InstKind::Guard(c) => Key::new(GUARD, map(c).0, 0, 0),
        InstKind::NullCheck(a) => Key::new(NULLCHECK, map(a).0, 0, 0),
        InstKind::BoundsCheck(a, i) => Key::new(BOUNDSCHECK, map(a).0, map(i).0, 0),
        InstKind::New(_)
        | InstKind::NewArray { .. }
        | InstKind::Load { .. }
        | InstKind::Store { .. }
        | InstKind::Call { .. }
        | InstKind::Escape(_)
        | InstKind::Phi(_)
        | InstKind::Jmp(_)
        | InstKind::Br(..)
        | InstKind::Ret(_)
        | InstKind::Unreachable => return None,
    })
}

/// The canonical operator and operands of `op a, b`.
#[inline]
fn normalize_binary(op: BinOp, a: Value, b: Value) -> (BinOp, Value, Value) {
    if op.is_commutative() {
        return if b < a { (op, b, a) } else { (op, a, b) };
    }
    match op {
        BinOp::Sgt => (BinOp::Slt, b, a),
        BinOp::Sge => (BinOp::Sle, b, a),
        BinOp::Ugt => (BinOp::Ult, b, a),
        BinOp::Uge => (BinOp::Ule, b, a),
        _ => (op, a, b),
    }
}

/// The canonical form of a pure operation (what [`op_key`] numbers).
pub fn normalize(kind: InstKind) -> InstKind {
    match kind {
        InstKind::Binary(op, a, b) => {
            let (op, a, b) = normalize_binary(op, a, b);
            InstKind::Binary(op, a, b)
        }
        k => k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::Block;

    #[test]
    fn commutative_operands_and_flipped_comparisons_share_a_key() {
        let (a, b) = (Value::new(1), Value::new(2));
        let key = |k: &InstKind| op_key(k, |v| v);
        let bin = |op, x, y| InstKind::Binary(op, x, y);
        // (kind, kind, same key?)
        let pairs = [
            (bin(BinOp::Add, b, a), bin(BinOp::Add, a, b), true),
            (bin(BinOp::Sgt, a, b), bin(BinOp::Slt, b, a), true),
            (bin(BinOp::Sub, b, a), bin(BinOp::Sub, a, b), false),
            (bin(BinOp::Sub, a, b), bin(BinOp::Add, a, b), false),
            (InstKind::Len(a), InstKind::Guard(a), false),
        ];
        for (x, y, same) in pairs {
            assert_eq!(key(&x) == key(&y), same, "{x:?} / {y:?}");
            assert_eq!(normalize(x.clone()) == normalize(y.clone()), same);
        }
        assert_eq!(key(&InstKind::Jmp(Block::new(0))), None);
        // Operands are read through the map.
        assert_eq!(
            op_key(&InstKind::Unary(ir::UnOp::Neg, b), |_| a),
            key(&InstKind::Unary(ir::UnOp::Neg, a))
        );
    }

    #[test]
    fn a_key_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Key>(), 16);
    }

    #[test]
    fn phi_keys_compare_their_sorted_entries() {
        let (b0, b1, b2) = (Block::new(0), Block::new(1), Block::new(2));
        let (x, y) = (Value::new(3), Value::new(4));
        let mut arena = KeyArena::default();
        let p = arena.phi(b2, &[(b0, x), (b1, y)]);
        let q = arena.phi(b2, &[(b1, y), (b0, x)]);
        let other_block = arena.phi(b1, &[(b0, x), (b1, y)]);
        let other_value = arena.phi(b2, &[(b0, y), (b1, y)]);
        assert_ne!(p, q, "different spans");
        assert!(arena.same(&p, &q));
        assert_eq!(arena.hash(&p), arena.hash(&q));
        assert!(!arena.same(&p, &other_block));
        assert!(!arena.same(&p, &other_value));
        let len = Key::new(LEN, x.0, 0, 0);
        assert_eq!(arena.anchors(&p), [y.0, x.0]);
        assert_eq!(arena.anchors(&len), [x.0, NO_ANCHOR]);
        let sel = op_key(&InstKind::Select(x, y, x), |v| v).unwrap();
        assert_eq!(arena.anchors(&sel), [y.0, x.0]);
        let same = op_key(&InstKind::Binary(BinOp::Sub, x, x), |v| v).unwrap();
        assert_eq!(arena.anchors(&same), [x.0, NO_ANCHOR]);
        let global = load_key(&Addr::Global(ir::GlobalId::new(7)));
        assert_eq!(arena.anchors(&global), [NO_ANCHOR; 2]);
        assert!(!arena.same(&p, &len) && !arena.same(&len, &p));
        assert_eq!(arena.len(), 8);
        arena.truncate(2);
        assert!(!arena.is_empty());
    }
}
