//! The peephole rule table. Every rule states its pattern, side condition and
//! replacement in the rule language of [`super::spec`] next to the matcher
//! that implements exactly that: `loadstar verify --rules` proves the text
//! with z3, and the property test `passes/tests/rule_specs.rs` checks on
//! generated instructions that each matcher does what its text says. Integer semantics come from `ir::BinOp::eval`
//! and `ir::UnOp::eval`; a division whose evaluation traps is never folded.
//! Rules are tried in table order; the first that applies wins.

use super::rule::{Change, MatchCtx, Opnd, Rule};
use ir::{BinOp, Inst, InstKind, UnOp, Value};
use smallvec::SmallVec;

/// Every peephole rule, in the order they are tried.
pub fn rules() -> &'static [Rule] {
    RULES
}

/// The indices (in table order) of the rules whose pattern root can match an
/// instruction with mnemonic `mnemonic`: the root of a pattern names its
/// opcodes (`(add ?x 0)`, `(and|or ?x ?x)`), and `op` stands for every binary
/// operation. Computed once from the patterns themselves.
pub fn rules_for(kind: &InstKind) -> &'static [usize] {
    use std::sync::OnceLock;
    static TABLE: OnceLock<Vec<Vec<usize>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = vec![Vec::new(); DISPATCH_SLOTS];
        let named = BinOp::ALL
            .iter()
            .map(|&op| (binop_slot(op), op.name()))
            .chain(UnOp::ALL.iter().map(|&op| (unop_slot(op), op.name())))
            .chain(OTHER_DISPATCHED.iter().map(|&(slot, mn)| (slot, mn)));
        for (slot, mn) in named {
            let is_binary = BinOp::from_name(mn).is_some();
            table[slot] = RULES
                .iter()
                .enumerate()
                .filter(|(_, r)| pattern_root_matches(r.pattern, mn, is_binary))
                .map(|(k, _)| k)
                .collect();
        }
        table
    });
    dispatch_slot(kind).map_or(&[], |slot| table[slot].as_slice())
}

/// Whether a rule may match an instruction of `kind`: false for the kinds
/// no rule's pattern root can name (loads, stores, calls, jumps, ...). Asks
/// the kind only, not the table [`rules_for`] builds, so a true answer may
/// still find no candidate rule.
pub fn may_match(kind: &InstKind) -> bool {
    dispatch_slot(kind).is_some()
}

/// Slots of the dispatch table: one per binary operation, one per unary
/// operation, then the other mnemonics rules can match.
const DISPATCH_SLOTS: usize = BinOp::ALL.len() + UnOp::ALL.len() + OTHER_DISPATCHED.len();

/// The mnemonics besides the operations that have a dispatch slot.
const OTHER_DISPATCHED: [(usize, &str); 4] = [
    (OTHER_BASE, "select"),
    (OTHER_BASE + 1, "phi"),
    (OTHER_BASE + 2, "br"),
    (OTHER_BASE + 3, "guard"),
];

/// The first slot of [`OTHER_DISPATCHED`].
const OTHER_BASE: usize = BinOp::ALL.len() + UnOp::ALL.len();

fn binop_slot(op: BinOp) -> usize {
    op as usize
}

fn unop_slot(op: UnOp) -> usize {
    BinOp::ALL.len() + op as usize
}

/// The dispatch slot of an instruction's mnemonic (`None`: no rule has it
/// as its root). Agrees with [`InstKind::mnemonic`] on every kind.
fn dispatch_slot(kind: &InstKind) -> Option<usize> {
    match *kind {
        InstKind::Binary(op, ..) => Some(binop_slot(op)),
        InstKind::Unary(op, _) => Some(unop_slot(op)),
        InstKind::Select(..) => Some(OTHER_BASE),
        InstKind::Phi(_) => Some(OTHER_BASE + 1),
        InstKind::Br(..) => Some(OTHER_BASE + 2),
        InstKind::Guard(_) => Some(OTHER_BASE + 3),
        _ => None,
    }
}

/// Whether the root of `pattern` (`(root ...`) names `mnemonic`.
fn pattern_root_matches(pattern: &str, mnemonic: &str, is_binary: bool) -> bool {
    let root = pattern
        .trim_start_matches('(')
        .split(|c: char| c.is_whitespace() || c == '(' || c == '[')
        .next()
        .unwrap_or("");
    root.split('|')
        .any(|alt| alt == mnemonic || (alt == "op" && is_binary))
}

macro_rules! rule {
    ($name:literal, $pat:literal, $cond:literal, $rw:literal, $m:expr) => {
        Rule {
            name: $name,
            pattern: $pat,
            condition: $cond,
            rewrite: $rw,
            matcher: $m,
        }
    };
}

static RULES: &[Rule] = &[
    rule!(
        "fold_binary",
        "(op #a #b)",
        "(no-trap (op #a #b))",
        "(op #a #b)",
        fold_binary
    ),
    rule!("fold_unary", "(neg|not #a)", "true", "(op #a)", fold_unary),
    rule!("copy", "(copy ?x)", "true", "?x", copy),
    rule!("add_zero", "(add ?x 0)", "true", "?x", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::Add,
        0
    )
    .and_then(|x| cx.replace_by(i, x))),
    rule!("sub_zero", "(sub ?x 0)", "true", "?x", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::Sub,
        0
    )
    .and_then(|x| cx.replace_by(i, x))),
    rule!("mul_one", "(mul ?x 1)", "true", "?x", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::Mul,
        1
    )
    .and_then(|x| cx.replace_by(i, x))),
    rule!("mul_zero", "(mul ?x 0)", "true", "0", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::Mul,
        0
    )
    .and_then(|_| cx.replace_by_const(i, 0))),
    rule!("and_zero", "(and ?x 0)", "true", "0", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::And,
        0
    )
    .and_then(|_| cx.replace_by_const(i, 0))),
    rule!("and_ones", "(and ?x -1)", "true", "?x", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::And,
        -1
    )
    .and_then(|x| cx.replace_by(i, x))),
    // A comparison is 0 or 1: only bit 0 of the mask matters. The root
    // repeats `and` once per comparison so that the inner alternation picks
    // each (docs/smt.md: an alternation of the root's width picks its position).
    rule!(
        "and_bool_even",
        "(and|and|and|and|and|and (eq|ne|slt|sle|ult|ule ?a ?b) #c)",
        "(= (and #c 1) 0)",
        "0",
        |cx, i| and_bool(cx, i, 0).and_then(|_| cx.replace_by_const(i, 0))
    ),
    rule!(
        "and_bool_odd",
        "(and|and|and|and|and|and (eq|ne|slt|sle|ult|ule ?a ?b) #c)",
        "(= (and #c 1) 1)",
        "(eq|ne|slt|sle|ult|ule ?a ?b)",
        |cx, i| and_bool(cx, i, 1).map(|(op, a, b)| Change::Binary(op, Opnd::Val(a), Opnd::Val(b)))
    ),
    rule!("or_zero", "(or ?x 0)", "true", "?x", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::Or,
        0
    )
    .and_then(|x| cx.replace_by(i, x))),
    rule!("or_ones", "(or ?x -1)", "true", "-1", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::Or,
        -1
    )
    .and_then(|_| cx.replace_by_const(i, -1))),
    rule!("xor_zero", "(xor ?x 0)", "true", "?x", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::Xor,
        0
    )
    .and_then(|x| cx.replace_by(i, x))),
    rule!("sdiv_one", "(sdiv ?x 1)", "true", "?x", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::Sdiv,
        1
    )
    .and_then(|x| cx.replace_by(i, x))),
    rule!(
        "sdiv_minus_one",
        "(sdiv ?x -1)",
        "true",
        "(neg ?x)",
        |cx, i| bin_rhs(cx, i, BinOp::Sdiv, -1).map(|x| Change::Unary(UnOp::Neg, Opnd::Val(x)))
    ),
    rule!(
        "srem_unit",
        "(srem ?x #c)",
        "(or (= #c 1) (= #c -1))",
        "0",
        srem_unit
    ),
    rule!("sub_self", "(sub ?x ?x)", "true", "0", |cx, i| {
        same_operands(cx, i, &[BinOp::Sub]).and_then(|_| cx.replace_by_const(i, 0))
    }),
    rule!("xor_self", "(xor ?x ?x)", "true", "0", |cx, i| {
        same_operands(cx, i, &[BinOp::Xor]).and_then(|_| cx.replace_by_const(i, 0))
    }),
    rule!("and_or_self", "(and|or ?x ?x)", "true", "?x", |cx, i| {
        same_operands(cx, i, &[BinOp::And, BinOp::Or]).and_then(|x| cx.replace_by(i, x))
    }),
    rule!(
        "cmp_self_true",
        "(eq|sle|sge|ule|uge ?x ?x)",
        "true",
        "1",
        |cx, i| same_operands(
            cx,
            i,
            &[BinOp::Eq, BinOp::Sle, BinOp::Sge, BinOp::Ule, BinOp::Uge]
        )
        .and_then(|_| cx.replace_by_const(i, 1))
    ),
    rule!(
        "cmp_self_false",
        "(ne|slt|sgt|ult|ugt ?x ?x)",
        "true",
        "0",
        |cx, i| same_operands(
            cx,
            i,
            &[BinOp::Ne, BinOp::Slt, BinOp::Sgt, BinOp::Ult, BinOp::Ugt]
        )
        .and_then(|_| cx.replace_by_const(i, 0))
    ),
    rule!("ult_zero", "(ult ?x 0)", "true", "0", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::Ult,
        0
    )
    .and_then(|_| cx.replace_by_const(i, 0))),
    rule!("ule_zero", "(ule 0 ?x)", "true", "1", |cx, i| bin_lhs(
        cx,
        i,
        BinOp::Ule,
        0
    )
    .and_then(|_| cx.replace_by_const(i, 1))),
    // No value is unsigned-above all ones.
    rule!("ult_ones", "(ult -1 ?x)", "true", "0", |cx, i| bin_lhs(
        cx,
        i,
        BinOp::Ult,
        -1
    )
    .and_then(|_| cx.replace_by_const(i, 0))),
    // Every value is unsigned-at-most all ones, and none is signed-below
    // the least or signed-above the greatest value (issue 13: `sgt MIN,
    // %x` is `slt %x, MIN` once `cmp_flip` turned it, and always false).
    rule!("ule_ones", "(ule ?x -1)", "true", "1", |cx, i| bin_rhs(
        cx,
        i,
        BinOp::Ule,
        -1
    )
    .and_then(|_| cx.replace_by_const(i, 1))),
    rule!(
        "slt_min",
        "(slt ?x -9223372036854775808)",
        "true",
        "0",
        |cx, i| bin_rhs(cx, i, BinOp::Slt, i64::MIN).and_then(|_| cx.replace_by_const(i, 0))
    ),
    rule!(
        "slt_max",
        "(slt 9223372036854775807 ?x)",
        "true",
        "0",
        |cx, i| bin_lhs(cx, i, BinOp::Slt, i64::MAX).and_then(|_| cx.replace_by_const(i, 0))
    ),
    rule!(
        "sle_min",
        "(sle -9223372036854775808 ?x)",
        "true",
        "1",
        |cx, i| bin_lhs(cx, i, BinOp::Sle, i64::MIN).and_then(|_| cx.replace_by_const(i, 1))
    ),
    rule!(
        "sle_max",
        "(sle ?x 9223372036854775807)",
        "true",
        "1",
        |cx, i| bin_rhs(cx, i, BinOp::Sle, i64::MAX).and_then(|_| cx.replace_by_const(i, 1))
    ),
    // Known bits decide an equality: a comparison is 0 or 1, so it never
    // equals a constant with another bit set (the root repeats `eq`/`ne` as
    // `and_bool_even`'s does, to pick each inner comparison).
    rule!(
        "bool_eq_other",
        "(eq|eq|eq|eq|eq|eq (eq|ne|slt|sle|ult|ule ?a ?b) #c)",
        "(!= (and #c 1) #c)",
        "0",
        |cx, i| bool_vs_other(cx, i, BinOp::Eq).and_then(|_| cx.replace_by_const(i, 0))
    ),
    rule!(
        "bool_ne_other",
        "(ne|ne|ne|ne|ne|ne (eq|ne|slt|sle|ult|ule ?a ?b) #c)",
        "(!= (and #c 1) #c)",
        "1",
        |cx, i| bool_vs_other(cx, i, BinOp::Ne).and_then(|_| cx.replace_by_const(i, 1))
    ),
    // `and ?x #m` has no bit outside `#m`: it never equals a constant that
    // has one, so the comparison answers as for two different values.
    rule!(
        "mask_cmp_other",
        "(eq|ne (and ?x #m) #c)",
        "(!= (and #c #m) #c)",
        "(op 0 1)",
        mask_cmp_other
    ),
    // `and ?x #m` has no bit outside `#m`, so it is unsigned-at-most `#m`:
    // below any constant above `#m` (issue 13).
    rule!(
        "mask_ult_above",
        "(ult (and ?x #m) #c)",
        "(= (ult #m #c) 1)",
        "1",
        mask_ult_above
    ),
    rule!(
        "shift_zero",
        "(shl|lshr|ashr ?x #c)",
        "(= (and #c 63) 0)",
        "?x",
        shift_zero
    ),
    rule!(
        "shift_mask",
        "(shl|lshr|ashr ?x #c)",
        "(!= (and #c 63) #c)",
        "(op ?x (and #c 63))",
        shift_mask
    ),
    // IR.md masks the amount: a shift of 0 is 0 whatever it is.
    rule!(
        "shift_of_zero",
        "(shl|lshr|ashr 0 ?x)",
        "true",
        "0",
        shift_of_zero
    ),
    rule!("double_neg", "(neg (neg ?x))", "true", "?x", |cx, i| {
        double_unary(cx, i, UnOp::Neg)
    }),
    rule!("double_not", "(not (not ?x))", "true", "?x", |cx, i| {
        double_unary(cx, i, UnOp::Not)
    }),
    rule!(
        "select_const",
        "(select #c ?a ?b)",
        "true",
        "(if (!= #c 0) ?a ?b)",
        select_const
    ),
    rule!(
        "select_same",
        "(select ?c ?a ?a)",
        "true",
        "?a",
        select_same
    ),
    // A select between the two operands of its own (in)equality is the one
    // it picks when they differ, and when they are equal both arms are that
    // value (issue 13: `select (ne %v, null), %v, null` is `%v`).
    rule!(
        "select_ne_arms",
        "(select (ne ?a ?b) ?a ?b)",
        "true",
        "?a",
        |cx, i| select_cmp_arms(cx, i, BinOp::Ne, false)
    ),
    rule!(
        "select_eq_arms",
        "(select (eq ?a ?b) ?b ?a)",
        "true",
        "?a",
        |cx, i| select_cmp_arms(cx, i, BinOp::Eq, false)
    ),
    // Their mirrors, with the arms the other way round: the select is the
    // second operand (`select (eq a, b), a, b` is `b`; LLVM folds it too).
    rule!(
        "select_ne_arms_swapped",
        "(select (ne ?a ?b) ?b ?a)",
        "true",
        "?b",
        |cx, i| select_cmp_arms(cx, i, BinOp::Ne, true)
    ),
    rule!(
        "select_eq_arms_swapped",
        "(select (eq ?a ?b) ?a ?b)",
        "true",
        "?b",
        |cx, i| select_cmp_arms(cx, i, BinOp::Eq, true)
    ),
    rule!(
        "commute_const_right",
        "(op #c ?x)",
        "(and (commutative op) (not-const ?x))",
        "(op ?x #c)",
        commute_const_right
    ),
    rule!(
        "cmp_flip",
        "(sgt|sge|ugt|uge ?a ?b)",
        "true",
        "(slt|sle|ult|ule ?b ?a)",
        cmp_flip
    ),
    rule!(
        "sub_const",
        "(sub ?x #c)",
        "(and (not-const ?x) (!= #c 0))",
        "(add ?x (neg #c))",
        sub_const
    ),
    rule!(
        "stacked_const",
        "(add|mul|and|or|xor (op ?x #c1) #c2)",
        "true",
        "(op ?x (op #c1 #c2))",
        stacked_const
    ),
    rule!("phi_null", "(phi null self)", "true", "null", phi_null),
    rule!(
        "phi_same",
        "(phi ?v self)",
        "(dominates ?v)",
        "?v",
        phi_same
    ),
    rule!(
        "phi_const_web",
        "(op (phi #k1 #k2) #c)",
        "(and (no-trap (op #k1 #c)) (no-trap (op #k2 #c)) (= (op #k1 #c) (op #k2 #c)))",
        "(op #k1 #c)",
        phi_const_web
    ),
    rule!(
        "br_const",
        "(br #c ?t ?f)",
        "true",
        "(jmp (if (!= #c 0) ?t ?f))",
        br_const
    ),
    rule!("guard_const", "(guard #c)", "(!= #c 0)", "nop", guard_const),
    // `or ?x #c` has every bit of `#c` set: non-zero when `#c` is (issue 13).
    rule!(
        "br_or_nonzero",
        "(br (or ?x #c) ?t ?f)",
        "(!= #c 0)",
        "(jmp (if (!= #c 0) ?t ?f))",
        br_or_nonzero
    ),
];

/// The binary operation of `inst` and its operands.
fn binary(cx: &MatchCtx<'_>, inst: Inst) -> Option<(BinOp, Value, Value)> {
    match *cx.kind(inst) {
        InstKind::Binary(op, a, b) => Some((op, a, b)),
        _ => None,
    }
}

/// `x` when `inst` is `(op x c)`.
fn bin_rhs(cx: &MatchCtx<'_>, inst: Inst, op: BinOp, c: i64) -> Option<Value> {
    let (o, a, b) = binary(cx, inst)?;
    (o == op && cx.konst(b) == Some(c)).then_some(a)
}

/// `x` when `inst` is `(op c x)`.
fn bin_lhs(cx: &MatchCtx<'_>, inst: Inst, op: BinOp, c: i64) -> Option<Value> {
    let (o, a, b) = binary(cx, inst)?;
    (o == op && cx.konst(a) == Some(c)).then_some(b)
}

/// `x` when `inst` is `(op x x)` for one of `ops`.
fn same_operands(cx: &MatchCtx<'_>, inst: Inst, ops: &[BinOp]) -> Option<Value> {
    let (o, a, b) = binary(cx, inst)?;
    (ops.contains(&o) && a == b).then_some(a)
}

/// The comparisons a `(and (cmp ?a ?b) #c)` rule matches (those left after
/// `cmp_flip`).
const BOOL_CMPS: [BinOp; 6] = [
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Slt,
    BinOp::Sle,
    BinOp::Ult,
    BinOp::Ule,
];

/// The comparison and its operands when `inst` is `and (cmp a b), c` with
/// `c & 1 == bit`.
fn and_bool(cx: &mut MatchCtx<'_>, inst: Inst, bit: i64) -> Option<(BinOp, Value, Value)> {
    let (op, x, c) = binary(cx, inst)?;
    (op == BinOp::And && cx.konst(c)? & 1 == bit).then_some(())?;
    // (When the operand becomes a comparison, `cmp_flip`, this instruction
    // is revisited as its user.)
    match *cx.kind(cx.def(x)?) {
        InstKind::Binary(cmp, a, b) if BOOL_CMPS.contains(&cmp) => Some((cmp, a, b)),
        _ => None,
    }
}

/// `Some(())` when `inst` is `op (cmp a b), c` with `c` neither 0 nor 1 (a
/// bit set outside the comparison's bit 0).
fn bool_vs_other(cx: &mut MatchCtx<'_>, inst: Inst, op: BinOp) -> Option<()> {
    let (o, x, c) = binary(cx, inst)?;
    let c = cx.konst(c)?;
    (o == op && c & 1 != c).then_some(())?;
    // (As in `and_bool`: the operand's definition is this instruction's
    // operand, so when it changes this instruction is revisited as its user.)
    match *cx.kind(cx.def(x)?) {
        InstKind::Binary(cmp, ..) if BOOL_CMPS.contains(&cmp) => Some(()),
        _ => None,
    }
}

/// `eq|ne (and x m), c` with a bit of `c` outside `m`: `eq` is 0, `ne` is 1.
fn mask_cmp_other(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, x, c) = binary(cx, inst)?;
    let c = cx.konst(c)?;
    if !matches!(op, BinOp::Eq | BinOp::Ne) {
        return None;
    }
    // (The mask is the operand's definition: revisited as its user.)
    match *cx.kind(cx.def(x)?) {
        InstKind::Binary(BinOp::And, _, m) if cx.konst(m).is_some_and(|m| c & m != c) => {
            cx.replace_by_const(inst, i64::from(op == BinOp::Ne))
        }
        _ => None,
    }
}

/// `ult (and x m), c` with `m <u c`: 1.
fn mask_ult_above(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, x, c) = binary(cx, inst)?;
    let c = cx.konst(c)? as u64;
    if op != BinOp::Ult {
        return None;
    }
    // (The mask is the operand's definition: revisited as its user.)
    match *cx.kind(cx.def(x)?) {
        InstKind::Binary(BinOp::And, _, m) if cx.konst(m).is_some_and(|m| (m as u64) < c) => {
            cx.replace_by_const(inst, 1)
        }
        _ => None,
    }
}

fn fold_binary(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, a, b) = binary(cx, inst)?;
    #[cfg(feature = "bug-zoo")]
    if let Some(v) = zoo_wrong_fold(cx, op, a, b) {
        return cx.replace_by_const(inst, v);
    }
    let v = op.eval(cx.konst(a)?, cx.konst(b)?)?;
    cx.replace_by_const(inst, v)
}

/// The zoo's planted constant-folding bugs: `sdiv x, 0` folded to 0
/// (`peeps-fold-div-zero`), and `sdiv MIN, -1` evaluated as a saturating wide
/// division, `i64::MAX` (`peeps-sdiv-min`).
#[cfg(feature = "bug-zoo")]
fn zoo_wrong_fold(cx: &MatchCtx<'_>, op: BinOp, a: Value, b: Value) -> Option<i64> {
    use crate::zoo::{active, Bug};
    if op != BinOp::Sdiv {
        return None;
    }
    match (cx.konst(a), cx.konst(b)?) {
        (_, 0) if active(Bug::PeepsFoldDivZero) => Some(0),
        (Some(i64::MIN), -1) if active(Bug::PeepsSdivMin) => {
            Some((i64::MIN as i128 / -1i128).min(i64::MAX as i128) as i64)
        }
        _ => None,
    }
}

fn fold_unary(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    match *cx.kind(inst) {
        InstKind::Unary(op @ (UnOp::Neg | UnOp::Not), a) => {
            cx.replace_by_const(inst, op.eval(cx.konst(a)?))
        }
        _ => None,
    }
}

fn copy(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    match *cx.kind(inst) {
        InstKind::Unary(UnOp::Copy, a) => cx.replace_by(inst, a),
        _ => None,
    }
}

fn srem_unit(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, _, b) = binary(cx, inst)?;
    let c = cx.konst(b)?;
    (op == BinOp::Srem && (c == 1 || c == -1)).then_some(())?;
    cx.replace_by_const(inst, 0)
}

fn is_shift(op: BinOp) -> bool {
    matches!(op, BinOp::Shl | BinOp::Lshr | BinOp::Ashr)
}

fn shift_zero(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, a, b) = binary(cx, inst)?;
    (is_shift(op) && cx.konst(b)? & 63 == 0).then_some(())?;
    cx.replace_by(inst, a)
}

fn shift_mask(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, a, b) = binary(cx, inst)?;
    let c = cx.konst(b)?;
    (is_shift(op) && c & 63 != c).then_some(Change::Binary(op, Opnd::Val(a), Opnd::Const(c & 63)))
}

fn shift_of_zero(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, a, _) = binary(cx, inst)?;
    (is_shift(op) && cx.konst(a) == Some(0)).then_some(())?;
    cx.replace_by_const(inst, 0)
}

fn double_unary(cx: &mut MatchCtx<'_>, inst: Inst, op: UnOp) -> Option<Change> {
    let InstKind::Unary(o, a) = *cx.kind(inst) else {
        return None;
    };
    if o != op {
        return None;
    }
    match *cx.kind(cx.def(a)?) {
        InstKind::Unary(inner, x) if inner == op => cx.replace_by(inst, x),
        _ => None,
    }
}

fn select_const(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let InstKind::Select(c, a, b) = *cx.kind(inst) else {
        return None;
    };
    let pick = if cx.konst(c)? != 0 { a } else { b };
    cx.replace_by(inst, pick)
}

fn select_same(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    match *cx.kind(inst) {
        InstKind::Select(_, a, b) if a == b => cx.replace_by(inst, a),
        _ => None,
    }
}

/// `a` when `inst` is `select (ne a, b), a, b` (`op` = `ne`) or
/// `select (eq a, b), b, a` (`op` = `eq`): either way the arm the
/// comparison picks when `a != b`, and both arms are `a` when `a == b`.
/// With `swapped` arms (`select (ne a, b), b, a`, `select (eq a, b), a, b`)
/// it is `b`, by the same argument.
fn select_cmp_arms(cx: &mut MatchCtx<'_>, inst: Inst, op: BinOp, swapped: bool) -> Option<Change> {
    let InstKind::Select(c, x, y) = *cx.kind(inst) else {
        return None;
    };
    let cmp = cx.def(c)?;
    let (o, a, b) = binary(cx, cmp)?;
    let picks_a = (op == BinOp::Ne) != swapped;
    let arms = if picks_a { (a, b) } else { (b, a) };
    if o != op || (x, y) != arms {
        // The comparison may still be turned into this shape (its constant
        // moved right): revisit when it changes.
        if matches!(o, BinOp::Eq | BinOp::Ne) {
            cx.add_dep(cmp);
        }
        return None;
    }
    cx.replace_by(inst, if swapped { b } else { a })
}

fn commute_const_right(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, a, b) = binary(cx, inst)?;
    let ca = cx.konst(a)?;
    (op.is_commutative() && cx.konst(b).is_none()).then_some(Change::Binary(
        op,
        Opnd::Val(b),
        Opnd::Const(ca),
    ))
}

fn cmp_flip(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, a, b) = binary(cx, inst)?;
    let flipped = match op {
        BinOp::Sgt => BinOp::Slt,
        BinOp::Sge => BinOp::Sle,
        BinOp::Ugt => BinOp::Ult,
        BinOp::Uge => BinOp::Ule,
        _ => return None,
    };
    Some(Change::Binary(flipped, Opnd::Val(b), Opnd::Val(a)))
}

fn sub_const(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, a, b) = binary(cx, inst)?;
    let c = cx.konst(b)?;
    (op == BinOp::Sub && c != 0 && cx.konst(a).is_none())
        .then(|| Change::Binary(BinOp::Add, Opnd::Val(a), Opnd::Const(c.wrapping_neg())))
}

fn stacked_const(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, a, b) = binary(cx, inst)?;
    if !matches!(
        op,
        BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor
    ) {
        return None;
    }
    let c2 = cx.konst(b)?;
    let inner = cx.def(a)?;
    match *cx.kind(inner) {
        InstKind::Binary(iop, x, ic) if iop == op => match cx.konst(ic) {
            Some(c1) => Some(Change::Binary(
                op,
                Opnd::Val(x),
                Opnd::Const(op.eval(c1, c2)?),
            )),
            None => {
                // The inner operation may still get its constant (or be
                // rewritten into this shape): revisit when it changes.
                cx.add_dep(inner);
                None
            }
        },
        _ => {
            cx.add_dep(inner);
            None
        }
    }
}

fn phi_same(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let InstKind::Phi(entries) = cx.kind(inst) else {
        return None;
    };
    let me = cx.result(inst)?;
    let mut unique = None;
    for &(_, v) in entries {
        if v == me || Some(v) == unique {
            continue;
        }
        if unique.is_some() {
            return None;
        }
        unique = Some(v);
    }
    let v = unique?;
    if let Some(d) = cx.func.def_inst(v) {
        let db = cx.func.insts[d.index()].block?;
        let pb = cx.func.insts[inst.index()].block?;
        if !cx.dom().strictly_dominates(db, pb) {
            return None;
        }
    }
    cx.replace_by(inst, v)
}

/// A phi whose entries are all `null` (or the phi itself) is `null`:
/// `null` fits every reference type (docs/language.md, decision 15), as
/// where LSE forwards a stored `null`. Tried before `phi_same`, which would
/// also fold it (with a dominance question it does not need).
fn phi_null(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let InstKind::Phi(entries) = cx.kind(inst) else {
        return None;
    };
    let me = cx.result(inst)?;
    let mut null = None;
    for &(_, v) in entries {
        if v == me {
            continue;
        }
        if cx.func.values[v.index()].def != ir::ValueDef::Null {
            return None;
        }
        null = Some(v);
    }
    Some(Change::Replace(Opnd::Val(null?)))
}

/// The most constants a phi web may contribute before the rule gives up.
const WEB_LIMIT: usize = 16;

/// Collect the constants reachable from `v` through phis; `false` when a
/// non-constant leaf (or too big a web) is found.
fn web_constants(
    cx: &mut MatchCtx<'_>,
    v: Value,
    depth: usize,
    seen: &mut SmallVec<[Inst; WEB_LIMIT]>,
    out: &mut SmallVec<[i64; WEB_LIMIT + 1]>,
) -> bool {
    if let Some(c) = cx.konst(v) {
        if !out.contains(&c) {
            out.push(c);
        }
        return out.len() <= WEB_LIMIT;
    }
    let Some(phi) = cx.def(v) else {
        return false;
    };
    if seen.contains(&phi) {
        return true;
    }
    let InstKind::Phi(entries) = cx.kind(phi) else {
        return false;
    };
    if depth > 0 {
        // A phi beyond the immediate operand: when it changes, this
        // instruction is not among its users, so ask to be revisited.
        #[cfg(not(feature = "bug-zoo"))]
        cx.add_dep(phi);
        #[cfg(feature = "bug-zoo")]
        if !crate::zoo::active(crate::zoo::Bug::PeepsMissingDep) {
            // (Planted, Simple ch. 9: otherwise the distant dependency is forgotten.)
            cx.add_dep(phi);
        }
    }
    if depth >= 3 || seen.len() >= WEB_LIMIT {
        return false;
    }
    seen.push(phi);
    entries
        .iter()
        .all(|&(_, e)| web_constants(cx, e, depth + 1, seen, out))
}

fn phi_const_web(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let (op, a, b) = binary(cx, inst)?;
    let c = cx.konst(b)?;
    let phi = cx.def(a)?;
    if !cx.kind(phi).is_phi() {
        return None;
    }
    let (mut seen, mut out) = (SmallVec::new(), SmallVec::new());
    if !web_constants(cx, a, 0, &mut seen, &mut out) || out.is_empty() {
        return None;
    }
    let first = op.eval(out[0], c)?;
    for &k in &out[1..] {
        if op.eval(k, c)? != first {
            return None;
        }
    }
    cx.replace_by_const(inst, first)
}

fn br_const(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let InstKind::Br(c, t, f) = *cx.kind(inst) else {
        return None;
    };
    let c = cx.konst(c)?;
    let (target, dropped) = if c != 0 { (t, f) } else { (f, t) };
    jump_if_phis_agree(cx, inst, t, f).then_some(Change::Jump { target, dropped })
}

/// Whether `br` `inst` to `t` and `f` may become a jump: two edges into one
/// block only when its phis agree on both.
fn jump_if_phis_agree(cx: &MatchCtx<'_>, inst: Inst, t: ir::Block, f: ir::Block) -> bool {
    if t != f {
        return true;
    }
    let Some(me) = cx.func.insts[inst.index()].block else {
        return false;
    };
    cx.func.blocks[t.index()]
        .insts
        .iter()
        .all(|&p| match cx.kind(p) {
            InstKind::Phi(entries) => {
                let mut vals = entries.iter().filter(|e| e.0 == me).map(|e| e.1);
                let first = vals.next();
                vals.all(|v| Some(v) == first)
            }
            _ => true,
        })
}

/// `br (or x c), t, f` with `c != 0`: `jmp t` (as `br_const` for `t == f`).
fn br_or_nonzero(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    let InstKind::Br(c, t, f) = *cx.kind(inst) else {
        return None;
    };
    // (The condition is the operand's definition: revisited as its user.)
    match *cx.kind(cx.def(c)?) {
        InstKind::Binary(BinOp::Or, _, k) if cx.konst(k).is_some_and(|k| k != 0) => {
            jump_if_phis_agree(cx, inst, t, f).then_some(Change::Jump {
                target: t,
                dropped: f,
            })
        }
        _ => None,
    }
}

fn guard_const(cx: &mut MatchCtx<'_>, inst: Inst) -> Option<Change> {
    match *cx.kind(inst) {
        InstKind::Guard(c) if cx.konst(c).is_some_and(|c| c != 0) => Some(Change::Remove),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::Block;

    /// The rules whose pattern root names `kind`'s mnemonic, found by name.
    fn rules_by_mnemonic(kind: &InstKind) -> Vec<usize> {
        let mn = kind.mnemonic();
        let is_binary = BinOp::from_name(mn).is_some();
        RULES
            .iter()
            .enumerate()
            .filter(|(_, r)| pattern_root_matches(r.pattern, mn, is_binary))
            .map(|(k, _)| k)
            .collect()
    }

    #[test]
    fn the_dispatch_table_agrees_with_the_mnemonics() {
        let (v, b) = (Value::new(0), Block::new(0));
        let kinds = BinOp::ALL
            .iter()
            .map(|&op| InstKind::Binary(op, v, v))
            .chain(UnOp::ALL.iter().map(|&op| InstKind::Unary(op, v)))
            .chain([
                InstKind::Select(v, v, v),
                InstKind::Phi(vec![(b, v)]),
                InstKind::Br(v, b, b),
                InstKind::Guard(v),
                InstKind::Jmp(b),
                InstKind::Len(v),
                InstKind::Escape(v),
                InstKind::Ret(None),
                InstKind::Unreachable,
            ]);
        let mut nonempty = 0;
        for kind in kinds {
            assert_eq!(rules_for(&kind), rules_by_mnemonic(&kind), "{kind:?}");
            assert!(may_match(&kind) || rules_for(&kind).is_empty(), "{kind:?}");
            nonempty += usize::from(!rules_for(&kind).is_empty());
        }
        assert_eq!(nonempty, BinOp::ALL.len() + UnOp::ALL.len() + 4);
    }
}
