//! Text rendering of instructions, values and blocks for verifier messages.
//!
//! This is deliberately one small, range-checked function family: it must work
//! on garbage (bad ids render as `<bad …>`). Once the printer is merged,
//! [`describe_inst`] can be swapped for the printer's instruction printer.

use crate::entities::{Block, Inst, Value};
use crate::function::{Function, ValueDef};
use crate::inst::{Addr, Callee, InstKind};
use crate::module::Module;

/// One instruction in (approximately) the text format, e.g. `%r = add %a, 1`.
pub(crate) fn describe_inst(m: &Module, f: &Function, inst: Inst) -> String {
    let Some(data) = f.insts.get(inst.index()) else {
        return format!("<bad instruction {}>", inst.0);
    };
    let v = |x: Value| value_name(f, x);
    let body = match &data.kind {
        InstKind::Binary(op, a, b) => format!("{} {}, {}", op.name(), v(*a), v(*b)),
        InstKind::Unary(op, a) => format!("{} {}", op.name(), v(*a)),
        InstKind::Select(c, a, b) => format!("select {}, {}, {}", v(*c), v(*a), v(*b)),
        InstKind::New(s) => format!("new {}", m.type_name(crate::types::Type::object(*s))),
        InstKind::NewArray { elem, len } => {
            format!("newarray {}, {}", m.type_name(*elem), v(*len))
        }
        InstKind::Load { addr, .. } => {
            format!("{} {}", data.kind.mnemonic(), describe_addr(m, f, addr))
        }
        InstKind::Store { addr, value, .. } => format!(
            "{} {}, {}",
            data.kind.mnemonic(),
            describe_addr(m, f, addr),
            v(*value)
        ),
        InstKind::Len(a) => format!("len {}", v(*a)),
        InstKind::Call { callee, args } => {
            let args: Vec<String> = args.iter().map(|&a| v(a)).collect();
            format!("call {}({})", callee_name(m, *callee), args.join(", "))
        }
        InstKind::Escape(a) => format!("escape {}", v(*a)),
        InstKind::Guard(c) => format!("guard {}", v(*c)),
        InstKind::NullCheck(a) => format!("nullcheck {}", v(*a)),
        InstKind::BoundsCheck(a, i) => format!("boundscheck {}, {}", v(*a), v(*i)),
        InstKind::Phi(entries) => {
            let es: Vec<String> = entries
                .iter()
                .map(|&(b, x)| format!("[{}: {}]", block_label(f, b), v(x)))
                .collect();
            format!("phi {}", es.join(", "))
        }
        InstKind::Jmp(t) => format!("jmp {}", block_label(f, *t)),
        InstKind::Br(c, t, e) => format!(
            "br {}, {}, {}",
            v(*c),
            block_label(f, *t),
            block_label(f, *e)
        ),
        InstKind::Ret(Some(x)) => format!("ret {}", v(*x)),
        InstKind::Ret(None) => "ret".to_string(),
        InstKind::Unreachable => "unreachable".to_string(),
    };
    match data.result {
        Some(r) => format!("{} = {}", value_name(f, r), body),
        None => body,
    }
}

/// `%o.f`, `%a[%i]` or `@g`.
fn describe_addr(m: &Module, f: &Function, addr: &Addr) -> String {
    match *addr {
        Addr::Field { base, field } => {
            let fname = m
                .structs
                .get(field.ty.index())
                .and_then(|s| s.fields.get(field.index as usize))
                .map_or_else(
                    || format!("<bad field {}>", field.index),
                    |d| d.name.clone(),
                );
            format!("{}.{}", value_name(f, base), fname)
        }
        Addr::Elem { base, index } => {
            format!("{}[{}]", value_name(f, base), value_name(f, index))
        }
        Addr::Global(g) => m.globals.get(g.index()).map_or_else(
            || format!("@<bad global {}>", g.0),
            |d| format!("@{}", d.name),
        ),
    }
}

/// `@name` of a call target.
pub(crate) fn callee_name(m: &Module, c: Callee) -> String {
    let name = match c {
        Callee::Func(id) => m.funcs.get(id.index()).map(|x| x.name.clone()),
        Callee::Extern(id) => m.externs.get(id.index()).map(|x| x.name.clone()),
    };
    let bad = || match c {
        Callee::Func(id) => format!("@<bad function #{}>", id.0),
        Callee::Extern(id) => format!("@<bad extern #{}>", id.0),
    };
    name.map_or_else(bad, |n| format!("@{n}"))
}

/// A value as an operand: `%name`, `%vN` when unnamed, constants inline, `null`.
pub(crate) fn value_name(f: &Function, v: Value) -> String {
    match f.values.get(v.index()) {
        None => format!("%<bad value {}>", v.0),
        Some(d) => match (&d.def, f.value_name(v)) {
            (ValueDef::Const(c), _) => c.to_string(),
            (ValueDef::Null, _) => "null".to_string(),
            (_, Some(n)) => format!("%{n}"),
            (_, None) => format!("%v{}", v.0),
        },
    }
}

/// A block's label (or `<bad block N>`).
pub(crate) fn block_label(f: &Function, b: Block) -> String {
    f.blocks
        .get(b.index())
        .map_or_else(|| format!("<bad block {}>", b.0), |d| d.name.clone())
}
