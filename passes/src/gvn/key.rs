//! GVN keys: which instructions may be numbered, and the normalized form two
//! equivalent instructions share (commutative operands sorted, comparisons
//! turned one way, phi entries sorted). Memory behaviour is asked of
//! `ir::effects`, never decided by opcode.

use ir::effects::{inst_effects, Effects};
use ir::{Addr, BinOp, Block, Callee, Function, Inst, InstKind, Module, Value};

/// The identity of a numbered instruction.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Key {
    /// A pure (possibly trapping) operation, normalized.
    Op(InstKind),
    /// A phi: its block and its sorted entries.
    Phi(Block, Vec<(Block, Value)>),
    /// A plain load of this address.
    Load(Addr),
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

/// Classify `inst` of `f`.
pub fn classify(m: &Module, f: &Function, inst: Inst) -> Class {
    classify_with_effects(m, f, inst).0
}

/// Classify `inst` of `f`, also handing back its effects when they were
/// needed to decide (so that the caller does not ask `ir::effects` twice).
pub fn classify_with_effects(m: &Module, f: &Function, inst: Inst) -> (Class, Option<Effects>) {
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
            let mut e = entries.clone();
            e.sort_by_key(|&(blk, v)| (blk, v));
            return (Class::Scoped(Key::Phi(b, e)), None);
        }
        _ => {}
    }
    #[cfg(feature = "bug-zoo")]
    if crate::zoo::active(crate::zoo::Bug::GvnMergeNew) && matches!(kind, InstKind::New(_)) {
        // Planted: `new T` numbered like a pure expression of T.
        return (Class::Scoped(Key::Op(kind.clone())), None);
    }
    let eff = inst_effects(m, f, inst);
    let class = if !eff.writes_nothing() || eff.allocates {
        Class::Skip
    } else if !eff.reads_nothing() {
        match kind {
            InstKind::Load {
                addr,
                volatile: false,
            } => Class::Load(Key::Load(addr.clone())),
            _ => Class::Skip,
        }
    } else {
        Class::Scoped(Key::Op(normalize(kind.clone())))
    };
    (class, Some(eff))
}

/// The canonical form of a pure operation.
pub fn normalize(kind: InstKind) -> InstKind {
    match kind {
        InstKind::Binary(op, a, b) if op.is_commutative() && b < a => InstKind::Binary(op, b, a),
        InstKind::Binary(op, a, b) => match op {
            BinOp::Sgt => InstKind::Binary(BinOp::Slt, b, a),
            BinOp::Sge => InstKind::Binary(BinOp::Sle, b, a),
            BinOp::Ugt => InstKind::Binary(BinOp::Ult, b, a),
            BinOp::Uge => InstKind::Binary(BinOp::Ule, b, a),
            _ => InstKind::Binary(op, a, b),
        },
        k => k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commutative_operands_and_flipped_comparisons_share_a_key() {
        let (a, b) = (Value::new(1), Value::new(2));
        assert_eq!(
            normalize(InstKind::Binary(BinOp::Add, b, a)),
            normalize(InstKind::Binary(BinOp::Add, a, b))
        );
        assert_eq!(
            normalize(InstKind::Binary(BinOp::Sgt, a, b)),
            normalize(InstKind::Binary(BinOp::Slt, b, a))
        );
        assert_ne!(
            normalize(InstKind::Binary(BinOp::Sub, b, a)),
            normalize(InstKind::Binary(BinOp::Sub, a, b))
        );
    }
}
