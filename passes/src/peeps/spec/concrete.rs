//! The concrete meaning of an instance on a function of the IR: whether its
//! pattern matches an instruction (binding `?x` to values and `#c` to the
//! constants found), whether its condition holds, and the [`Change`] its
//! rewrite asks for. This is what the property test compares with the
//! hand-written matchers; integer arithmetic is `BinOp::eval` / `UnOp::eval`,
//! the very functions the SMT encoding is tested against.

use super::instance::{ICond, ITerm, Instance, Opc, Ty};
use crate::peeps::rule::{Change, Opnd};
use ir::{Block, DomTree, Function, Inst, InstKind, Type, Value};

/// What a match bound.
#[derive(Clone, Debug, Default)]
pub struct Bindings {
    /// `?x` → the value, by variable index.
    pub vars: Vec<Option<Value>>,
    /// `#c` → the constant, by constant index.
    pub consts: Vec<Option<i64>>,
    /// Label variables → the block, by variable index.
    pub labels: Vec<Option<Block>>,
    /// The matched instruction.
    pub root: Option<Inst>,
}

/// Evaluate a compile-time term (`None`: a trap, or not compile-time).
pub fn eval(t: &ITerm, consts: &[Option<i64>]) -> Option<i64> {
    match t {
        ITerm::Const(i) => consts[*i],
        ITerm::Lit(v) => Some(*v),
        ITerm::App(Opc::Bin(op), args) if args.len() == 2 => {
            op.eval(eval(&args[0], consts)?, eval(&args[1], consts)?)
        }
        ITerm::App(Opc::Un(op), args) if args.len() == 1 => Some(op.eval(eval(&args[0], consts)?)),
        ITerm::If(c, a, b) => {
            if holds_const(c, consts)? {
                eval(a, consts)
            } else {
                eval(b, consts)
            }
        }
        _ => None,
    }
}

/// A condition over constants only (`None` when it mentions a value).
fn holds_const(c: &ICond, consts: &[Option<i64>]) -> Option<bool> {
    Some(match c {
        ICond::Bool(b) => *b,
        ICond::And(cs) => {
            let mut all = true;
            for c in cs {
                all &= holds_const(c, consts)?;
            }
            all
        }
        ICond::Or(cs) => {
            let mut any = false;
            for c in cs {
                any |= holds_const(c, consts)?;
            }
            any
        }
        ICond::Not(c) => !holds_const(c, consts)?,
        ICond::Eq(a, b) => {
            matches!((eval(a, consts), eval(b, consts)), (Some(x), Some(y)) if x == y)
        }
        ICond::Ne(a, b) => {
            matches!((eval(a, consts), eval(b, consts)), (Some(x), Some(y)) if x != y)
        }
        ICond::NoTrap(t) => eval(t, consts).is_some(),
        ICond::NotConst(_) | ICond::Dominates(_) => return None,
    })
}

/// Whether `c` holds for the bindings `b` in `f`; `dominates` is decided
/// with `dom` (`None` without one).
pub fn holds(c: &ICond, b: &Bindings, f: &Function, dom: Option<&DomTree>) -> Option<bool> {
    Some(match c {
        ICond::And(cs) => {
            let mut all = true;
            for c in cs {
                all &= holds(c, b, f, dom)?;
            }
            all
        }
        ICond::Or(cs) => {
            let mut any = false;
            for c in cs {
                any |= holds(c, b, f, dom)?;
            }
            any
        }
        ICond::Not(c) => !holds(c, b, f, dom)?,
        ICond::NotConst(i) => f.as_const(b.vars[*i]?).is_none(),
        ICond::Dominates(i) => {
            let dom = dom?;
            match f.def_inst(b.vars[*i]?) {
                None => true,
                Some(d) => match (f.inst(d).block, f.inst(b.root?).block) {
                    (Some(db), Some(pb)) => dom.strictly_dominates(db, pb),
                    _ => false,
                },
            }
        }
        other => holds_const(other, &b.consts)?,
    })
}

/// Whether value `v` has type `ty` (any reference type for `Ref`).
fn has_type(f: &Function, v: Value, ty: Ty) -> bool {
    let t = f.value_type(v);
    match ty {
        Ty::I64 => t == Type::I64,
        Ty::Ref => t != Type::I64,
        Ty::Label | Ty::Unit | Ty::Heap => false,
    }
}

/// Match the instance's pattern against instruction `inst` of `f`.
pub fn match_inst(instance: &Instance, f: &Function, inst: Inst) -> Option<Bindings> {
    let mut b = Bindings {
        vars: vec![None; instance.vars.len()],
        consts: vec![None; instance.consts.len()],
        labels: vec![None; instance.vars.len()],
        root: Some(inst),
    };
    let ITerm::App(op, args) = &instance.pattern else {
        return None;
    };
    let ok = match (op, &f.inst(inst).kind) {
        // Every entry is `self` or matches one of the other terms.
        (Opc::Phi, InstKind::Phi(entries)) => {
            let me = f.inst(inst).result;
            entries.iter().all(|&(_, e)| {
                if Some(e) == me && args.contains(&ITerm::SelfRef) {
                    return true;
                }
                args.iter().filter(|a| **a != ITerm::SelfRef).any(|a| {
                    let mut t = b.clone();
                    let hit = match_value(instance, f, a, e, &mut t);
                    if hit {
                        b = t;
                    }
                    hit
                })
            })
        }
        (Opc::Br, InstKind::Br(c, t, e)) => {
            args.len() == 3
                && match_value(instance, f, &args[0], *c, &mut b)
                && bind_label(&args[1], *t, &mut b)
                && bind_label(&args[2], *e, &mut b)
        }
        (op, kind) => match_kind(instance, f, *op, args, kind, &mut b),
    };
    ok.then_some(b)
}

fn bind_label(t: &ITerm, blk: Block, b: &mut Bindings) -> bool {
    let ITerm::Var(i) = t else {
        return false;
    };
    match b.labels[*i] {
        Some(x) => x == blk,
        None => {
            b.labels[*i] = Some(blk);
            true
        }
    }
}

/// The block a label term chooses, and the one it does not (the same when
/// the term is a single label).
fn label(t: &ITerm, b: &Bindings, f: &Function, dom: Option<&DomTree>) -> Option<(Block, Block)> {
    match t {
        ITerm::Var(i) => b.labels[*i].map(|x| (x, x)),
        ITerm::If(c, x, y) => {
            let (x, y) = (label(x, b, f, dom)?.0, label(y, b, f, dom)?.0);
            Some(if holds(c, b, f, dom)? { (x, y) } else { (y, x) })
        }
        _ => None,
    }
}

fn match_kind(
    instance: &Instance,
    f: &Function,
    op: Opc,
    args: &[ITerm],
    kind: &InstKind,
    b: &mut Bindings,
) -> bool {
    let operands: Vec<Value> = match (op, kind) {
        (Opc::Bin(o), InstKind::Binary(k, x, y)) if o == *k => vec![*x, *y],
        (Opc::Un(o), InstKind::Unary(k, x)) if o == *k => vec![*x],
        (Opc::Select, InstKind::Select(c, x, y)) => vec![*c, *x, *y],
        (Opc::Guard, InstKind::Guard(c)) => vec![*c],
        _ => return false,
    };
    operands.len() == args.len()
        && args
            .iter()
            .zip(operands)
            .all(|(t, v)| match_value(instance, f, t, v, b))
}

fn match_value(instance: &Instance, f: &Function, t: &ITerm, v: Value, b: &mut Bindings) -> bool {
    match t {
        ITerm::Var(i) => {
            if !has_type(f, v, instance.vars[*i].1) {
                return false;
            }
            match b.vars[*i] {
                Some(w) => w == v,
                None => {
                    b.vars[*i] = Some(v);
                    true
                }
            }
        }
        ITerm::Const(i) => match (f.as_const(v), b.consts[*i]) {
            (Some(c), Some(d)) => c == d,
            (Some(c), None) => {
                b.consts[*i] = Some(c);
                true
            }
            (None, _) => false,
        },
        ITerm::Lit(n) => f.as_const(v) == Some(*n),
        ITerm::Null => matches!(f.values[v.index()].def, ir::ValueDef::Null),
        ITerm::App(op, args) => match f.def_inst(v) {
            Some(d) if f.inst(d).block.is_some() => {
                match_kind(instance, f, *op, args, &f.inst(d).kind, b)
            }
            _ => false,
        },
        _ => false,
    }
}

/// The operand a rewrite's argument becomes.
fn opnd(t: &ITerm, b: &Bindings) -> Option<Opnd> {
    match t {
        ITerm::Var(i) => Some(Opnd::Val(b.vars[*i]?)),
        t if t.is_compile_time() => Some(Opnd::Const(eval(t, &b.consts)?)),
        _ => None,
    }
}

/// The change the rewrite asks for on `inst` (`None` when it cannot be
/// made: a compile-time part traps, or the replacement's type is not the
/// result's — the typing discipline every rule obeys, `null` at a reference
/// type excepted).
pub fn expected_change(
    instance: &Instance,
    b: &Bindings,
    f: &Function,
    inst: Inst,
    dom: Option<&DomTree>,
) -> Option<Change> {
    let result = f.inst(inst).result;
    let mut w = &instance.rewrite;
    while let ITerm::If(c, x, y) = w {
        w = if holds(c, b, f, dom)? { x } else { y };
    }
    match w {
        ITerm::Nop => Some(Change::Remove),
        ITerm::App(Opc::Jmp, args) if args.len() == 1 => {
            let (target, dropped) = label(&args[0], b, f, dom)?;
            Some(Change::Jump { target, dropped })
        }
        ITerm::Var(i) => {
            let v = b.vars[*i]?;
            f.value_type(v)
                .fits(f.value_type(result?))
                .then_some(Change::Replace(Opnd::Val(v)))
        }
        // `null` fits every reference type: the one replacement of another type.
        ITerm::Null => {
            let null = f.values.iter().position(|d| d.def == ir::ValueDef::Null)?;
            f.value_type(result?)
                .is_ref()
                .then_some(Change::Replace(Opnd::Val(Value::new(null))))
        }
        t if t.is_compile_time() => {
            let c = eval(t, &b.consts)?;
            (f.value_type(result?) == Type::I64).then_some(Change::Replace(Opnd::Const(c)))
        }
        ITerm::App(Opc::Bin(op), args) if args.len() == 2 => {
            Some(Change::Binary(*op, opnd(&args[0], b)?, opnd(&args[1], b)?))
        }
        ITerm::App(Opc::Un(op), args) if args.len() == 1 => {
            Some(Change::Unary(*op, opnd(&args[0], b)?))
        }
        _ => None,
    }
}

/// The change the first instance that matches `inst` (with its condition
/// holding) asks for. `Err` when the instance needs a CFG fact and `dom` is `None`.
pub fn spec_change(
    instances: &[Instance],
    f: &Function,
    inst: Inst,
    dom: Option<&DomTree>,
) -> Result<Option<Change>, String> {
    for i in instances {
        if let Some(b) = match_inst(i, f, inst) {
            match holds(&i.cond, &b, f, dom) {
                Some(true) => return Ok(expected_change(i, &b, f, inst, dom)),
                Some(false) => {}
                None => return Err(format!("rule {} needs a CFG fact", i.rule)),
            }
        }
    }
    Ok(None)
}
