//! Operand and result checks for every placed instruction (reachable or not):
//! operands exist and are placed, have the types their positions need, every
//! referenced type, field, global, function, extern and label exists, and each
//! result is recorded with the type the instruction produces.

use super::describe::callee_name;
use super::{ssa, FnCtx, Site, VerifyError};
use crate::entities::{Block, Inst, Value};
use crate::function::{Function, InstData, ValueDef};
use crate::inst::{Addr, Callee, InstKind, UnOp};
use crate::module::{Extern, Module};
use crate::types::{Base, Type};
use std::fmt;

/// What result an instruction must have.
enum Expect {
    /// No result.
    Nothing,
    /// A result of exactly this type.
    Ty(Type),
    /// A result whose type cannot be determined (an error was already reported).
    Unknown,
}

/// Check every placed instruction, plus the function's signature (`sound`:
/// the structure check found every listed instruction placed where it is
/// listed, so the walk need not look each one up in `cx.placed`). With
/// `cx.dom` (a sound structure), each instruction of a reachable block also
/// gets its dominance check in the same walk: a non-phi instruction's
/// operands are tested where [`operand`] looks them up, and only an
/// instruction with a failing or broken operand (and every phi) goes through
/// [`ssa::check_dominance`]. Those errors are returned apart, for
/// [`ssa::check`] to report after the other CFG checks.
pub(super) fn check(cx: &mut FnCtx<'_>, sound: bool) -> Vec<VerifyError> {
    check_signature(cx);
    let mut dominance = Vec::new();
    // In layout order; each instruction once, where the structure check placed it.
    let f = cx.f;
    for &b in &f.layout {
        let Some(bd) = f.blocks.get(b.index()) else {
            continue;
        };
        let reachable = cx.dom.as_ref().is_some_and(|d| d.cfg.is_reachable(b));
        for (pos, &i) in bd.insts.iter().enumerate() {
            if !sound && cx.placed.get(i.index()) != Some(&Site::new(b, pos as u32)) {
                continue;
            }
            let data = &f.insts[i.index()];
            let phi = data.kind.is_phi();
            let tests_uses = reachable && !phi;
            if tests_uses {
                cx.use_at = Some((b, pos as u32));
                cx.use_suspect = false;
                if cfg!(debug_assertions) {
                    cx.uses_seen = 0;
                }
            }
            let expect = check_inst(cx, b, i, data);
            if tests_uses {
                cx.use_at = None;
                debug_assert_eq!(
                    cx.uses_seen,
                    count_operands(&data.kind),
                    "the typing check of {:?} skipped an operand",
                    data.kind
                );
            }
            check_result(cx, b, i, data.result, expect);
            if reachable && (phi || cx.use_suspect) {
                let before = cx.errors.len();
                if let Some(dom) = cx.dom.take() {
                    ssa::check_dominance(cx, &dom, b, pos, i);
                    cx.dom = Some(dom);
                }
                if cx.errors.len() > before {
                    dominance.extend(cx.errors.drain(before..));
                }
            }
        }
    }
    dominance
}

/// How many operands `kind` has (each use counted).
fn count_operands(kind: &InstKind) -> usize {
    let mut n = 0;
    kind.for_each_operand(|_| n += 1);
    n
}

/// Parameter values and types, and the return type.
fn check_signature(cx: &mut FnCtx<'_>) {
    let f = cx.f;
    for (k, &p) in f.params.iter().enumerate() {
        match f.values.get(p.index()) {
            None => cx.report(
                None,
                None,
                format!("parameter {k} is value #{}, which does not exist", p.0),
            ),
            Some(d) => {
                if d.def != ValueDef::Param(k as u32) {
                    cx.report(
                        None,
                        None,
                        format!(
                            "parameter {k} ({}) is not recorded as parameter {k}",
                            cx.val(p)
                        ),
                    );
                }
                if !valid_type(cx.m, d.ty) || d.ty == Type::NULL {
                    cx.report(
                        None,
                        None,
                        format!(
                            "parameter {} has an invalid type {}",
                            cx.val(p),
                            cx.ty(d.ty)
                        ),
                    );
                }
            }
        }
    }
    if let Some(r) = f.ret {
        if !valid_type(cx.m, r) || r == Type::NULL {
            cx.report(None, None, format!("invalid return type {}", cx.ty(r)));
        }
    }
}

/// Whether `t` names only existing types (and `null` is not wrapped in brackets).
pub(super) fn valid_type(m: &Module, t: Type) -> bool {
    match t.base {
        Base::I64 => true,
        Base::Struct(s) => s.index() < m.structs.len(),
        Base::Null => t.dims == 0,
    }
}

/// Check an operand exists and is placed; returns its type when it exists.
/// (Inlined at every use: the checks of a sound operand are a few loads and
/// compares, cheaper than a call.)
#[inline(always)]
fn operand(cx: &mut FnCtx<'_>, b: Block, i: Inst, v: Value) -> Option<Type> {
    let f = cx.f;
    if cfg!(debug_assertions) {
        cx.uses_seen += 1;
    }
    if let Some(d) = f.values.get(v.index()) {
        let sound = match d.def {
            ValueDef::Inst(_) => {
                let site = cx.value_site[v.index()].get();
                if let (Some((db, dp)), Some((ub, up))) = (site, cx.use_at) {
                    let available = if db == ub {
                        dp < up
                    } else {
                        cx.dom
                            .as_ref()
                            .is_some_and(|dom| dom.strictly_dominates(db, ub))
                    };
                    cx.use_suspect |= !available;
                }
                site.is_some()
            }
            ValueDef::Param(k) => f.params.get(k as usize) == Some(&v),
            ValueDef::Const(_) => d.ty == Type::I64,
            ValueDef::Null => d.ty == Type::NULL,
        };
        if sound {
            return Some(d.ty);
        }
    }
    report_operand(cx, b, i, v)
}

/// [`operand`] for an operand that is broken: report what is wrong.
#[cold]
#[inline(never)]
fn report_operand(cx: &mut FnCtx<'_>, b: Block, i: Inst, v: Value) -> Option<Type> {
    // A broken operand may still name a placed definition: the full
    // dominance check of the instruction looks at it.
    cx.use_suspect = true;
    let f = cx.f;
    let Some(d) = f.values.get(v.index()) else {
        cx.report(
            Some(b),
            Some(i),
            format!("operand value #{} does not exist", v.0),
        );
        return None;
    };
    match d.def {
        ValueDef::Inst(def) => {
            let defines = f
                .insts
                .get(def.index())
                .is_some_and(|x| x.result == Some(v));
            if !defines {
                cx.report(
                    Some(b),
                    Some(i),
                    format!(
                        "{} claims to be defined by an instruction that does not define it",
                        cx.val(v)
                    ),
                );
            } else if !cx.placed[def.index()].is_placed() {
                cx.report(
                    Some(b),
                    Some(i),
                    format!(
                        "use of {}, whose defining instruction is not placed in the function",
                        cx.val(v)
                    ),
                );
            }
        }
        ValueDef::Param(k) => {
            if f.params.get(k as usize) != Some(&v) {
                cx.report(
                    Some(b),
                    Some(i),
                    format!("{} claims to be parameter {k}, which it is not", cx.val(v)),
                );
            }
        }
        ValueDef::Const(_) => {
            if d.ty != Type::I64 {
                cx.report(
                    Some(b),
                    Some(i),
                    format!("integer constant {} has type {}", cx.val(v), cx.ty(d.ty)),
                );
            }
        }
        ValueDef::Null => {
            if d.ty != Type::NULL {
                cx.report(
                    Some(b),
                    Some(i),
                    format!("the null constant has type {}", cx.ty(d.ty)),
                );
            }
        }
    }
    Some(d.ty)
}

/// An operand that must be i64.
#[inline(always)]
fn int_operand(cx: &mut FnCtx<'_>, b: Block, i: Inst, v: Value, what: &str) {
    if let Some(t) = operand(cx, b, i, v) {
        if t != Type::I64 {
            report_not_int(cx, b, i, v, t, what);
        }
    }
}

/// [`int_operand`] for an operand of type `t`, not i64.
#[cold]
#[inline(never)]
fn report_not_int(cx: &mut FnCtx<'_>, b: Block, i: Inst, v: Value, t: Type, what: &str) {
    cx.report(
        Some(b),
        Some(i),
        format!("{what} {} has type {}, expected i64", cx.val(v), cx.ty(t)),
    );
}

/// The array operand of `len` or `boundscheck` (an array type or `null`).
fn array_operand(cx: &mut FnCtx<'_>, b: Block, i: Inst, a: Value, mn: &str) {
    if let Some(t) = operand(cx, b, i, a) {
        if !t.is_array() && t != Type::NULL {
            cx.report(
                Some(b),
                Some(i),
                format!(
                    "{mn} of {}, which has non-array type {}",
                    cx.val(a),
                    cx.ty(t)
                ),
            );
        }
    }
}

/// An operand that must fit `expected`.
#[inline(always)]
fn fitting_operand(
    cx: &mut FnCtx<'_>,
    b: Block,
    i: Inst,
    v: Value,
    expected: Type,
    what: impl fmt::Display,
) {
    if let Some(t) = operand(cx, b, i, v) {
        if !t.fits(expected) {
            report_misfit(cx, b, i, v, t, expected, &what);
        }
    }
}

/// [`fitting_operand`] for an operand of type `t`, which does not fit `expected`.
#[cold]
#[inline(never)]
fn report_misfit(
    cx: &mut FnCtx<'_>,
    b: Block,
    i: Inst,
    v: Value,
    t: Type,
    expected: Type,
    what: &dyn fmt::Display,
) {
    cx.report(
        Some(b),
        Some(i),
        format!(
            "{what} {} has type {}, expected {}",
            cx.val(v),
            cx.ty(t),
            cx.ty(expected)
        ),
    );
}

/// A branch target must exist and be in the layout.
#[inline]
fn label(cx: &mut FnCtx<'_>, b: Block, i: Inst, target: Block) {
    if !cx.block_in_layout(target) {
        report_label(cx, b, i, target);
    }
}

/// [`label`] for a target that is not in the layout.
#[cold]
#[inline(never)]
fn report_label(cx: &mut FnCtx<'_>, b: Block, i: Inst, target: Block) {
    cx.report(
        Some(b),
        Some(i),
        format!(
            "branch to block #{} ({}), which is not in the function",
            target.0,
            cx.label(target)
        ),
    );
}

/// Check operands of `i` (whose data is `data`) and say what result it must have.
fn check_inst(cx: &mut FnCtx<'_>, b: Block, i: Inst, data: &InstData) -> Expect {
    match data.kind {
        InstKind::Binary(op, x, y) => {
            if op.accepts_refs() {
                let (tx, ty) = (operand(cx, b, i, x), operand(cx, b, i, y));
                if let (Some(tx), Some(ty)) = (tx, ty) {
                    let ok = (tx.is_int() && ty.is_int())
                        || (tx.is_ref()
                            && ty.is_ref()
                            && (tx == ty || tx == Type::NULL || ty == Type::NULL));
                    if !ok {
                        cx.report(Some(b), Some(i), format!("{} compares {} and {}: operands must both be i64 or both references of the same type (or null)", op.name(), cx.ty(tx), cx.ty(ty)));
                    }
                }
            } else {
                int_operand(cx, b, i, x, "operand");
                int_operand(cx, b, i, y, "operand");
            }
            Expect::Ty(Type::I64)
        }
        InstKind::Unary(UnOp::Copy, x) => operand(cx, b, i, x).map_or(Expect::Unknown, Expect::Ty),
        InstKind::Unary(_, x) => {
            int_operand(cx, b, i, x, "operand");
            Expect::Ty(Type::I64)
        }
        InstKind::Select(c, x, y) => {
            int_operand(cx, b, i, c, "condition");
            let (tx, ty) = (operand(cx, b, i, x), operand(cx, b, i, y));
            match (tx, ty) {
                (Some(tx), Some(ty)) if tx == ty => Expect::Ty(tx),
                (Some(tx), Some(ty)) if tx == Type::NULL && ty.is_ref() => Expect::Ty(ty),
                (Some(tx), Some(ty)) if ty == Type::NULL && tx.is_ref() => Expect::Ty(tx),
                (Some(tx), Some(ty)) => {
                    cx.report(
                        Some(b),
                        Some(i),
                        format!(
                            "select arms have different types {} and {}",
                            cx.ty(tx),
                            cx.ty(ty)
                        ),
                    );
                    Expect::Unknown
                }
                _ => Expect::Unknown,
            }
        }
        InstKind::New(s) => {
            if s.index() < cx.m.structs.len() {
                Expect::Ty(Type::object(s))
            } else {
                cx.report(
                    Some(b),
                    Some(i),
                    format!("new of type #{}, which is not declared", s.0),
                );
                Expect::Unknown
            }
        }
        InstKind::NewArray { elem, len } => {
            int_operand(cx, b, i, len, "array length");
            if !valid_type(cx.m, elem) || elem == Type::NULL || elem.dims == u8::MAX {
                cx.report(
                    Some(b),
                    Some(i),
                    format!("newarray of invalid element type {}", cx.ty(elem)),
                );
                Expect::Unknown
            } else {
                Expect::Ty(elem.array_of())
            }
        }
        InstKind::Load { ref addr, .. } => match slot_type(cx, b, i, addr) {
            Some(t) => Expect::Ty(t),
            None => Expect::Unknown,
        },
        InstKind::Store {
            ref addr, value, ..
        } => {
            match slot_type(cx, b, i, addr) {
                Some(t) => fitting_operand(cx, b, i, value, t, "stored value"),
                None => {
                    operand(cx, b, i, value);
                }
            }
            Expect::Nothing
        }
        InstKind::Len(a) => {
            array_operand(cx, b, i, a, "len");
            Expect::Ty(Type::I64)
        }
        InstKind::BoundsCheck(a, x) => {
            array_operand(cx, b, i, a, "boundscheck");
            int_operand(cx, b, i, x, "index");
            Expect::Nothing
        }
        InstKind::NullCheck(a) => {
            if let Some(t) = operand(cx, b, i, a) {
                if !t.is_ref() {
                    cx.report(
                        Some(b),
                        Some(i),
                        format!(
                            "nullcheck of {}, which has non-reference type {}",
                            cx.val(a),
                            cx.ty(t)
                        ),
                    );
                }
            }
            Expect::Nothing
        }
        InstKind::Call { callee, ref args } => check_call(cx, b, i, callee, args),
        InstKind::Escape(v) => {
            operand(cx, b, i, v);
            Expect::Nothing
        }
        InstKind::Guard(c) => {
            int_operand(cx, b, i, c, "guard condition");
            Expect::Nothing
        }
        InstKind::Phi(ref entries) => {
            let rt = data
                .result
                .and_then(|r| cx.f.values.get(r.index()))
                .map(|d| d.ty);
            for &(_, v) in entries {
                match rt {
                    Some(t) => fitting_operand(cx, b, i, v, t, "phi operand"),
                    None => {
                        operand(cx, b, i, v);
                    }
                }
            }
            match rt {
                Some(t) if valid_type(cx.m, t) => Expect::Ty(t),
                Some(t) => {
                    cx.report(
                        Some(b),
                        Some(i),
                        format!("phi of invalid type {}", cx.ty(t)),
                    );
                    Expect::Unknown
                }
                None => {
                    cx.report(Some(b), Some(i), "a phi must define a value");
                    Expect::Unknown
                }
            }
        }
        InstKind::Jmp(t) => {
            label(cx, b, i, t);
            Expect::Nothing
        }
        InstKind::Br(c, t, e) => {
            int_operand(cx, b, i, c, "branch condition");
            label(cx, b, i, t);
            label(cx, b, i, e);
            Expect::Nothing
        }
        InstKind::Ret(v) => {
            match (v, cx.f.ret) {
                (Some(v), Some(rt)) => fitting_operand(cx, b, i, v, rt, "returned value"),
                (Some(v), None) => {
                    operand(cx, b, i, v);
                    cx.report(
                        Some(b),
                        Some(i),
                        "ret with a value in a function without a return type",
                    );
                }
                (None, Some(rt)) => {
                    cx.report(
                        Some(b),
                        Some(i),
                        format!("ret without a value in a function returning {}", cx.ty(rt)),
                    );
                }
                (None, None) => {}
            }
            Expect::Nothing
        }
        InstKind::Unreachable => Expect::Nothing,
    }
}

/// The type of the slot `addr` names (checking base, index and names), if known.
fn slot_type(cx: &mut FnCtx<'_>, b: Block, i: Inst, addr: &Addr) -> Option<Type> {
    match *addr {
        Addr::Field { base, field } => {
            let decl =
                cx.m.structs
                    .get(field.ty.index())
                    .and_then(|s| s.fields.get(field.index as usize));
            let base_ty = operand(cx, b, i, base);
            let Some(decl) = decl else {
                cx.report(
                    Some(b),
                    Some(i),
                    format!(
                        "field #{} of type #{} does not exist",
                        field.index, field.ty.0
                    ),
                );
                return None;
            };
            let owner = Type::object(field.ty);
            if let Some(t) = base_ty {
                if !t.fits(owner) {
                    cx.report(
                        Some(b),
                        Some(i),
                        format!(
                            "base {} has type {}, but field {} belongs to {}",
                            cx.val(base),
                            cx.ty(t),
                            cx.m.field_name(field),
                            cx.ty(owner)
                        ),
                    );
                }
            }
            Some(decl.ty)
        }
        Addr::Elem { base, index } => {
            int_operand(cx, b, i, index, "array index");
            let t = operand(cx, b, i, base)?;
            if let Some(e) = t.elem() {
                Some(e)
            } else {
                if t != Type::NULL {
                    cx.report(
                        Some(b),
                        Some(i),
                        format!(
                            "element access on {}, which has non-array type {}",
                            cx.val(base),
                            cx.ty(t)
                        ),
                    );
                }
                None
            }
        }
        Addr::Global(g) => match cx.m.globals.get(g.index()) {
            Some(d) => Some(d.ty),
            None => {
                cx.report(Some(b), Some(i), format!("global #{} does not exist", g.0));
                None
            }
        },
    }
}

/// Argument count and types against the callee's signature; the result is its return type.
fn check_call(cx: &mut FnCtx<'_>, b: Block, i: Inst, callee: Callee, args: &[Value]) -> Expect {
    let Some(sig) = Signature::of(cx.m, callee) else {
        cx.report(
            Some(b),
            Some(i),
            format!(
                "call of {}, which does not exist",
                callee_name(cx.m, callee)
            ),
        );
        for &a in args {
            operand(cx, b, i, a);
        }
        return Expect::Unknown;
    };
    if sig.num_params() != args.len() {
        cx.report(
            Some(b),
            Some(i),
            format!(
                "{} takes {} argument(s), but {} were passed",
                callee_name(cx.m, callee),
                sig.num_params(),
                args.len()
            ),
        );
    }
    for (k, &a) in args.iter().enumerate() {
        match sig.param(k) {
            Some(pt) => fitting_operand(cx, b, i, a, pt, format_args!("argument {}", k + 1)),
            None => {
                operand(cx, b, i, a);
            }
        }
    }
    match sig.ret() {
        Some(t) => Expect::Ty(t),
        None => Expect::Nothing,
    }
}

/// The signature of an existing call target, read in place.
enum Signature<'m> {
    /// A function: its parameter values' types (i64 for a broken parameter value).
    Func(&'m Function),
    /// An extern: its declared parameter types.
    Extern(&'m Extern),
}

impl<'m> Signature<'m> {
    /// The signature of `callee`, if it exists in `m`.
    fn of(m: &'m Module, callee: Callee) -> Option<Signature<'m>> {
        match callee {
            Callee::Func(id) => m.funcs.get(id.index()).map(Signature::Func),
            Callee::Extern(id) => m.externs.get(id.index()).map(Signature::Extern),
        }
    }

    fn num_params(&self) -> usize {
        match self {
            Signature::Func(g) => g.params.len(),
            Signature::Extern(e) => e.params.len(),
        }
    }

    /// The type of parameter `k`, if there is one.
    fn param(&self, k: usize) -> Option<Type> {
        match self {
            Signature::Func(g) => {
                let &p = g.params.get(k)?;
                Some(g.values.get(p.index()).map_or(Type::I64, |d| d.ty))
            }
            Signature::Extern(e) => e.params.get(k).copied(),
        }
    }

    fn ret(&self) -> Option<Type> {
        match self {
            Signature::Func(g) => g.ret,
            Signature::Extern(e) => e.ret,
        }
    }
}

/// The result value of `i`, `result`, must be present exactly when expected,
/// be defined by `i`, and be recorded with the produced type.
fn check_result(cx: &mut FnCtx<'_>, b: Block, i: Inst, result: Option<Value>, expect: Expect) {
    let Some(r) = result else {
        if matches!(expect, Expect::Ty(_)) {
            cx.report(
                Some(b),
                Some(i),
                "the instruction produces a value but has no result",
            );
        }
        return;
    };
    let Some(d) = cx.f.values.get(r.index()) else {
        cx.report(
            Some(b),
            Some(i),
            format!("result value #{} does not exist", r.0),
        );
        return;
    };
    if d.def != ValueDef::Inst(i) {
        cx.report(
            Some(b),
            Some(i),
            format!(
                "result {} is not recorded as defined by this instruction",
                cx.val(r)
            ),
        );
    }
    match expect {
        Expect::Nothing => {
            cx.report(
                Some(b),
                Some(i),
                format!(
                    "the instruction produces no value, but has result {}",
                    cx.val(r)
                ),
            );
        }
        // `null` fits any reference type: `copy null` may be recorded as `Node`.
        Expect::Ty(t) if !t.fits(d.ty) => {
            cx.report(
                Some(b),
                Some(i),
                format!(
                    "result {} is recorded as {}, but the instruction produces {}",
                    cx.val(r),
                    cx.ty(d.ty),
                    cx.ty(t)
                ),
            );
        }
        _ => {}
    }
}
