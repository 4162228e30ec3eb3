//! Pure integer operations (IR.md §4): wrapping, shifts by `b & 63`, signed
//! division with its traps and edge cases, comparisons, `select`, `copy`.

mod support;
use interp::{Observed, Outcome, TrapKind};
use ir::Type;
use support::*;

fn binop(op: BinOp, a: i64, b: i64) -> Outcome {
    let mut fx = Fx::new();
    let f = fx.func("main", &[Type::I64, Type::I64], Some(Type::I64), |b, p| {
        let r = b.binary(op, p[0], p[1]);
        b.ret(Some(r));
    });
    fx.run(f, &ints(&[a, b])).behaviour.outcome
}

fn ret(v: i64) -> Outcome {
    Outcome::Return(Some(Observed::Int(v)))
}

#[test]
fn add_sub_mul_wrap() {
    assert_eq!(binop(BinOp::Add, 3, 4), ret(7));
    assert_eq!(binop(BinOp::Add, i64::MAX, 1), ret(i64::MIN));
    assert_eq!(binop(BinOp::Sub, i64::MIN, 1), ret(i64::MAX));
    assert_eq!(binop(BinOp::Mul, i64::MAX, 2), ret(-2));
    assert_eq!(binop(BinOp::Mul, -3, 5), ret(-15));
}

#[test]
fn bitwise() {
    assert_eq!(binop(BinOp::And, 0b1100, 0b1010), ret(0b1000));
    assert_eq!(binop(BinOp::Or, 0b1100, 0b1010), ret(0b1110));
    assert_eq!(binop(BinOp::Xor, 0b1100, 0b1010), ret(0b0110));
}

#[test]
fn shifts_use_low_six_bits() {
    assert_eq!(binop(BinOp::Shl, 1, 3), ret(8));
    assert_eq!(binop(BinOp::Shl, 1, 64), ret(1));
    assert_eq!(binop(BinOp::Shl, 1, 65), ret(2));
    assert_eq!(binop(BinOp::Shl, 1, -1), ret(i64::MIN));
    assert_eq!(binop(BinOp::Lshr, -1, 63), ret(1));
    assert_eq!(binop(BinOp::Lshr, -8, 64), ret(-8));
    assert_eq!(binop(BinOp::Ashr, -8, 1), ret(-4));
    assert_eq!(binop(BinOp::Ashr, i64::MIN, 63), ret(-1));
    assert_eq!(binop(BinOp::Ashr, 16, 66), ret(4));
}

#[test]
fn signed_division_edge_cases() {
    assert_eq!(binop(BinOp::Sdiv, 7, 2), ret(3));
    assert_eq!(binop(BinOp::Sdiv, -7, 2), ret(-3));
    assert_eq!(binop(BinOp::Srem, -7, 2), ret(-1));
    assert_eq!(binop(BinOp::Srem, 7, -2), ret(1));
    assert_eq!(binop(BinOp::Sdiv, i64::MIN, -1), ret(i64::MIN));
    assert_eq!(binop(BinOp::Srem, i64::MIN, -1), ret(0));
    assert_eq!(binop(BinOp::Sdiv, 1, 0), Outcome::Trap(TrapKind::DivByZero));
    assert_eq!(binop(BinOp::Srem, 1, 0), Outcome::Trap(TrapKind::DivByZero));
}

#[test]
fn comparisons_signed_and_unsigned() {
    let cases = [
        (BinOp::Eq, 5, 5, 1),
        (BinOp::Eq, 5, 6, 0),
        (BinOp::Ne, 5, 6, 1),
        (BinOp::Slt, -1, 0, 1),
        (BinOp::Ult, -1, 0, 0),
        (BinOp::Sle, 3, 3, 1),
        (BinOp::Ule, 0, -1, 1),
        (BinOp::Sgt, 0, -1, 1),
        (BinOp::Ugt, 0, -1, 0),
        (BinOp::Sge, i64::MIN, i64::MAX, 0),
        (BinOp::Uge, i64::MIN, i64::MAX, 1),
    ];
    for (op, a, b, want) in cases {
        assert_eq!(binop(op, a, b), ret(want), "{op:?} {a} {b}");
    }
}

#[test]
fn every_binop_agrees_with_the_ir_evaluator() {
    let samples = [0, 1, -1, 2, 63, 64, -64, i64::MIN, i64::MAX, 12345, -98765];
    for op in BinOp::ALL {
        for &a in &samples {
            for &b in &samples {
                let want = match op.eval(a, b) {
                    Some(v) => ret(v),
                    None => Outcome::Trap(TrapKind::DivByZero),
                };
                assert_eq!(binop(op, a, b), want, "{op:?} {a} {b}");
            }
        }
    }
}

#[test]
fn unary_select_copy() {
    let mut fx = Fx::new();
    let f = fx.func("main", &[Type::I64, Type::I64], Some(Type::I64), |b, p| {
        let n = b.unary(UnOp::Neg, p[0]);
        let t = b.unary(UnOp::Not, p[1]);
        let c = b.unary(UnOp::Copy, n);
        let s = b.select(p[1], c, t);
        b.escape(n);
        b.escape(t);
        b.escape(s);
        b.ret(Some(s));
    });
    assert_eq!(
        fx.show(f, &ints(&[i64::MIN, 0])),
        "outcome: return -1\ntrace: -9223372036854775808, -1, -1\nheap:"
    );
    assert_eq!(
        fx.show(f, &ints(&[5, 7])),
        "outcome: return -5\ntrace: -5, -8, -5\nheap:"
    );
}

#[test]
fn literal_operands_work_anywhere() {
    let mut fx = Fx::new();
    let f = fx.func("main", &[], Some(Type::I64), |b, _| {
        let three = b.iconst(3);
        let one = b.iconst(1);
        let r = b.binary(BinOp::Sub, three, one);
        b.ret(Some(r));
    });
    assert_eq!(fx.show(f, &ints(&[])), "outcome: return 2\ntrace:\nheap:");
}
