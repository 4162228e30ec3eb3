//! The printer: modules, functions and single instructions in the text format
//! of IR.md, in a form that [`crate::parse_module`] reads back.
//!
//! Value and block names come from [`Names`]: source names are kept, unnamed or
//! clashing values get fresh names, constants print inline as literals.

use crate::entities::{Block, Inst, Value};
use crate::function::{Function, ValueDef};
use crate::inst::{Addr, Callee, InstKind};
use crate::lexer::{is_ident, is_value_name};
use crate::module::{EffectLoc, Extern, Module};
use crate::types::Type;
use rustc_hash::FxHashSet;
use std::fmt::Write;

/// The printed names of one function's values and blocks.
///
/// Value names live in one text buffer (a span each), so naming a function of
/// a million values makes no allocation per value.
#[derive(Clone, Debug)]
pub struct Names {
    /// Every value's text, back to back.
    text: String,
    /// Each value's span of `text`.
    values: Vec<(u32, u32)>,
    blocks: Vec<String>,
}

/// The source name `n` if it can be printed as a value name.
fn valid(n: Option<&str>) -> Option<&str> {
    n.filter(|n| is_value_name(n))
}

/// Picks unique names: a wanted name if free, otherwise a numbered variant.
/// Names already taken are `borrowed` (source names, not copied) or `owned`
/// (names made up here).
struct Namer<'f> {
    borrowed: FxHashSet<&'f str>,
    owned: FxHashSet<String>,
}

impl<'f> Namer<'f> {
    fn new() -> Namer<'f> {
        Namer {
            borrowed: FxHashSet::default(),
            owned: FxHashSet::default(),
        }
    }

    fn taken(&self, name: &str) -> bool {
        self.borrowed.contains(name) || self.owned.contains(name)
    }

    /// Take `name` if it is free; true when it was.
    fn take(&mut self, name: &str) -> bool {
        !self.taken(name) && self.owned.insert(name.to_string())
    }

    fn unique(&mut self, wanted: Option<&str>, fallback: String) -> String {
        let base = match wanted {
            Some(w) if self.take(w) => return w.to_string(),
            Some(w) => w.to_string(),
            None if self.take(&fallback) => return fallback,
            None => fallback,
        };
        (1..)
            .map(|k| format!("{base}_{k}"))
            .find(|c| self.take(c))
            .unwrap_or(base)
    }
}

impl Names {
    /// Name every value and block of `f`. Source names are kept where they are
    /// valid and unique (the first one in text order wins); the rest get fresh
    /// names that clash with no other.
    pub fn new(f: &Function) -> Names {
        // Values that are printed as definitions, in text order.
        let mut order: Vec<Value> = f.params.clone();
        for inst in f.inst_iter() {
            order.extend(f.insts[inst.index()].result);
        }
        let mut seen = vec![false; f.values.len()];
        for &v in &order {
            if let Some(s) = seen.get_mut(v.index()) {
                *s = true;
            }
        }
        for (i, s) in seen.iter_mut().enumerate() {
            if !*s && matches!(f.values[i].def, ValueDef::Param(_) | ValueDef::Inst(_)) {
                order.push(Value::new(i));
                *s = true;
            }
        }
        drop(seen);
        // The source names kept, by value; the others get fresh names below.
        let mut namer = Namer::new();
        namer.borrowed.reserve(order.len());
        let mut kept: Vec<Option<&str>> = vec![None; f.values.len()];
        let mut fresh = Vec::new();
        for &v in &order {
            match valid(f.value_name(v)) {
                Some(n) if namer.borrowed.insert(n) => kept[v.index()] = Some(n),
                _ => fresh.push(v),
            }
        }
        // Reserve every valid source name so fresh names avoid all of them.
        for i in 0..f.values.len() {
            if let Some(n) = valid(f.value_name(Value::new(i))) {
                namer.borrowed.insert(n);
            }
        }
        let mut made: Vec<Option<String>> =
            vec![None; if fresh.is_empty() { 0 } else { f.values.len() }];
        for v in fresh {
            made[v.index()] = Some(namer.unique(valid(f.value_name(v)), format!("v{}", v.index())));
        }
        let mut text = String::with_capacity(f.values.len() * 6);
        let mut values = Vec::with_capacity(f.values.len());
        for (i, data) in f.values.iter().enumerate() {
            let start = text.len();
            match data.def {
                ValueDef::Const(c) => {
                    let _ = write!(text, "{c}");
                }
                ValueDef::Null => text.push_str("null"),
                _ => {
                    let name = kept[i].or_else(|| made.get(i).and_then(|m| m.as_deref()));
                    if let Some(n) = name {
                        text.push('%');
                        text.push_str(n);
                    }
                }
            }
            values.push((start as u32, text.len() as u32));
        }
        let mut in_layout = vec![false; f.blocks.len()];
        let mut block_order: Vec<Block> = Vec::with_capacity(f.blocks.len());
        for &b in &f.layout {
            if let Some(seen) = in_layout.get_mut(b.index()) {
                *seen = true;
            }
            block_order.push(b);
        }
        block_order.extend(
            (0..f.blocks.len())
                .filter(|&i| !in_layout[i])
                .map(Block::new),
        );
        let mut namer = Namer::new();
        let mut blocks = vec![String::new(); f.blocks.len()];
        for &b in &block_order {
            let name = &f.blocks[b.index()].name;
            let wanted = is_ident(name).then_some(name.as_str());
            blocks[b.index()] = namer.unique(wanted, format!("b{}", b.index()));
        }
        Names {
            text,
            values,
            blocks,
        }
    }

    /// How `v` is written: `%name`, an integer literal, or `null`.
    pub fn value(&self, v: Value) -> &str {
        self.values
            .get(v.index())
            .map_or("%<bad value>", |&(a, b)| &self.text[a as usize..b as usize])
    }

    /// The label of block `b` (without `:`).
    pub fn block(&self, b: Block) -> &str {
        self.blocks
            .get(b.index())
            .map_or("<bad block>", |s| s.as_str())
    }
}

/// Print a whole module: types, globals, externs, then functions.
pub fn print_module(m: &Module) -> String {
    let mut out = String::new();
    for s in &m.structs {
        let fields: Vec<String> = s
            .fields
            .iter()
            .map(|f| format!("{}: {}", f.name, m.type_name(f.ty)))
            .collect();
        if fields.is_empty() {
            let _ = writeln!(out, "type {} {{}}", s.name);
        } else {
            let _ = writeln!(out, "type {} {{ {} }}", s.name, fields.join(", "));
        }
    }
    for g in &m.globals {
        let _ = writeln!(out, "global @{}: {}", g.name, m.type_name(g.ty));
    }
    for e in &m.externs {
        let _ = writeln!(out, "{}", print_extern(m, e));
    }
    for f in &m.funcs {
        if !out.is_empty() {
            out.push('\n');
        }
        write_function(&mut out, m, f);
    }
    out
}

fn print_extern(m: &Module, e: &Extern) -> String {
    let params: Vec<String> = e.params.iter().map(|&t| m.type_name(t)).collect();
    let mut s = format!("extern @{}({})", e.name, params.join(", "));
    if let Some(r) = e.ret {
        let _ = write!(s, " -> {}", m.type_name(r));
    }
    if let Some(eff) = &e.effects {
        let locs = |ls: &[EffectLoc]| -> String {
            ls.iter()
                .map(|&l| print_loc(m, l))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !eff.reads.is_empty() {
            let _ = write!(s, " reads({})", locs(&eff.reads));
        }
        if !eff.writes.is_empty() {
            let _ = write!(s, " writes({})", locs(&eff.writes));
        }
        if eff.reads.is_empty() && eff.writes.is_empty() {
            s.push_str(" reads(none)");
        }
    }
    s
}

fn print_loc(m: &Module, l: EffectLoc) -> String {
    match l {
        EffectLoc::Field(f) => field_text(m, f.ty.index(), f.index as usize),
        EffectLoc::Elements(e) => m.type_name(e.array_of()),
        EffectLoc::Global(g) => global_name(m, g.index()),
    }
}

/// `Type.field`, robust against out-of-range indices.
fn field_text(m: &Module, s: usize, i: usize) -> String {
    match m.structs.get(s) {
        Some(decl) => format!("{}.{}", decl.name, field_name(m, s, i)),
        None => "<bad field>".to_string(),
    }
}

/// The name of field `i` of type `s`, robust against out-of-range indices.
fn field_name(m: &Module, s: usize, i: usize) -> &str {
    m.structs
        .get(s)
        .and_then(|decl| decl.fields.get(i))
        .map_or("<bad field>", |f| f.name.as_str())
}

fn global_name(m: &Module, g: usize) -> String {
    m.globals
        .get(g)
        .map_or("@<bad global>".to_string(), |g| format!("@{}", g.name))
}

/// Print one function (its signature, then each block of its layout).
pub fn print_function(m: &Module, f: &Function) -> String {
    let mut out = String::new();
    write_function(&mut out, m, f);
    out
}

/// [`print_function`], appending to `out`.
fn write_function(out: &mut String, m: &Module, f: &Function) {
    let names = Names::new(f);
    out.reserve(f.insts.len() * 24);
    let _ = write!(out, "func @{}(", f.name);
    for (k, &p) in f.params.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}: {}", names.value(p), type_of(m, f, p));
    }
    out.push(')');
    if let Some(r) = f.ret {
        let _ = write!(out, " -> {}", m.type_name(r));
    }
    out.push_str(" {\n");
    for &b in &f.layout {
        out.push_str(names.block(b));
        out.push_str(":\n");
        for &inst in &f.blocks[b.index()].insts {
            out.push_str("  ");
            write_inst(out, m, f, &names, inst);
            out.push('\n');
        }
    }
    out.push_str("}\n");
}

fn type_of(m: &Module, f: &Function, v: Value) -> String {
    f.values
        .get(v.index())
        .map_or("<bad value>".to_string(), |d| m.type_name(d.ty))
}

fn type_text(m: &Module, t: Type) -> String {
    m.type_name(t)
}

/// The array type to write for a `null` element base: the load's result type
/// or the stored value's type as element (a reference element type when the
/// stored value is `null` too; any one fits, the access traps either way).
fn null_array_type(m: &Module, f: &Function, data: &crate::function::InstData) -> Type {
    let ty_of = |v: Value| f.values.get(v.index()).map_or(Type::NULL, |d| d.ty);
    let elem = match &data.kind {
        InstKind::Load { .. } => data.result.map_or(Type::NULL, ty_of),
        InstKind::Store { value, .. } => ty_of(*value),
        _ => Type::NULL,
    };
    if elem != Type::NULL {
        return elem.array_of();
    }
    if m.structs.is_empty() {
        Type::I64.array_of().array_of()
    } else {
        Type::object(crate::entities::StructId::new(0)).array_of()
    }
}

/// Print one instruction on one line without indentation, e.g. `%c = add %a, 5`.
pub fn print_inst(m: &Module, f: &Function, names: &Names, inst: Inst) -> String {
    let mut out = String::new();
    write_inst(&mut out, m, f, names, inst);
    out
}

/// [`print_inst`], appending to `out` (no formatting machinery for the
/// common instructions: names are copied in place).
fn write_inst(out: &mut String, m: &Module, f: &Function, names: &Names, inst: Inst) {
    let Some(data) = f.insts.get(inst.index()) else {
        let _ = write!(out, "<bad instruction {}>", inst.index());
        return;
    };
    let is_null = |x: Value| {
        f.values
            .get(x.index())
            .is_some_and(|d| d.def == ValueDef::Null)
    };
    // A null base prints with its type, `(null: T)`, so the field or element
    // resolves when the text is parsed again (a pass may forward a stored null).
    let base = |out: &mut String, base: Value, ty: &dyn Fn() -> Type| {
        if is_null(base) {
            let _ = write!(out, "(null: {})", m.type_name(ty()));
        } else {
            out.push_str(names.value(base));
        }
    };
    let addr = |out: &mut String, a: &Addr| match *a {
        Addr::Field { base: b, field } => {
            base(out, b, &|| Type::object(field.ty));
            out.push('.');
            out.push_str(field_name(m, field.ty.index(), field.index as usize));
        }
        Addr::Elem { base: b, index } => {
            base(out, b, &|| null_array_type(m, f, data));
            out.push('[');
            out.push_str(names.value(index));
            out.push(']');
        }
        Addr::Global(g) => match m.globals.get(g.index()) {
            Some(g) => {
                out.push('@');
                out.push_str(&g.name);
            }
            None => out.push_str("@<bad global>"),
        },
    };
    // In a value-merging instruction (copy, select, phi) whose recorded type is
    // a reference type, every `null` operand prints with that type,
    // `(null: T)`, so parsing the text again infers the same type. (Counting
    // on another operand to carry the type is not enough: in a cycle of phis
    // each names the other, and the parser has no type to start from.)
    let result_ty = data
        .result
        .and_then(|r| f.values.get(r.index()))
        .map(|d| d.ty);
    let typed_null = result_ty.filter(|t| t.is_ref() && *t != Type::NULL);
    let mv = |out: &mut String, x: Value| match typed_null {
        Some(t) if is_null(x) => {
            let _ = write!(out, "(null: {})", m.type_name(t));
        }
        _ => out.push_str(names.value(x)),
    };
    let v = |out: &mut String, x: Value| out.push_str(names.value(x));
    if let Some(r) = data.result {
        out.push_str(names.value(r));
        out.push_str(" = ");
    }
    out.push_str(data.kind.mnemonic());
    match &data.kind {
        InstKind::Unary(crate::inst::UnOp::Copy, a) => {
            out.push(' ');
            mv(out, *a);
        }
        InstKind::Binary(_, a, b) => {
            out.push(' ');
            v(out, *a);
            out.push_str(", ");
            v(out, *b);
        }
        InstKind::Unary(_, a)
        | InstKind::Len(a)
        | InstKind::Escape(a)
        | InstKind::Guard(a)
        | InstKind::NullCheck(a) => {
            out.push(' ');
            v(out, *a);
        }
        InstKind::BoundsCheck(a, i) => {
            out.push(' ');
            v(out, *a);
            out.push_str(", ");
            v(out, *i);
        }
        InstKind::Select(c, a, b) => {
            out.push(' ');
            v(out, *c);
            out.push_str(", ");
            mv(out, *a);
            out.push_str(", ");
            mv(out, *b);
        }
        InstKind::New(s) => {
            out.push(' ');
            out.push_str(
                m.structs
                    .get(s.index())
                    .map_or("<bad type>", |d| d.name.as_str()),
            );
        }
        InstKind::NewArray { elem, len } => {
            let _ = write!(out, " {}, ", type_text(m, *elem));
            v(out, *len);
        }
        InstKind::Load { addr: a, .. } => {
            out.push(' ');
            addr(out, a);
        }
        InstKind::Store { addr: a, value, .. } => {
            out.push(' ');
            addr(out, a);
            out.push_str(", ");
            v(out, *value);
        }
        InstKind::Call { callee, args } => {
            let name = match *callee {
                Callee::Func(id) => m.funcs.get(id.index()).map(|f| f.name.as_str()),
                Callee::Extern(id) => m.externs.get(id.index()).map(|e| e.name.as_str()),
            };
            out.push_str(" @");
            out.push_str(name.unwrap_or("<bad callee>"));
            out.push('(');
            for (k, &a) in args.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                v(out, a);
            }
            out.push(')');
        }
        InstKind::Phi(entries) => {
            out.push(' ');
            for (k, &(b, x)) in entries.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                out.push('[');
                out.push_str(names.block(b));
                out.push_str(": ");
                mv(out, x);
                out.push(']');
            }
        }
        InstKind::Jmp(t) => {
            out.push(' ');
            out.push_str(names.block(*t));
        }
        InstKind::Br(c, t, e) => {
            out.push(' ');
            v(out, *c);
            out.push_str(", ");
            out.push_str(names.block(*t));
            out.push_str(", ");
            out.push_str(names.block(*e));
        }
        InstKind::Ret(Some(x)) => {
            out.push(' ');
            v(out, *x);
        }
        InstKind::Ret(None) | InstKind::Unreachable => {}
    }
}
