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
#[derive(Clone, Debug)]
pub struct Names {
    values: Vec<String>,
    blocks: Vec<String>,
}

/// The source name `n` if it can be printed as a value name.
fn valid(n: &Option<String>) -> Option<&str> {
    n.as_deref().filter(|n| is_value_name(n))
}

/// Picks unique names: a wanted name if free, otherwise a numbered variant.
struct Namer {
    used: FxHashSet<String>,
}

impl Namer {
    fn unique(&mut self, wanted: Option<&str>, fallback: String) -> String {
        let base = match wanted {
            Some(w) if self.used.insert(w.to_string()) => return w.to_string(),
            Some(w) => w.to_string(),
            None if self.used.insert(fallback.clone()) => return fallback,
            None => fallback,
        };
        (1..)
            .map(|k| format!("{base}_{k}"))
            .find(|c| self.used.insert(c.clone()))
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
        // Reserve every valid source name so fresh names avoid all of them.
        let mut namer = Namer {
            used: FxHashSet::default(),
        };
        let reserved: FxHashSet<String> = f
            .values
            .iter()
            .filter_map(|d| valid(&d.name).map(str::to_string))
            .collect();
        let mut values = vec![String::new(); f.values.len()];
        let mut fresh = Vec::new();
        for &v in &order {
            let data = &f.values[v.index()];
            match valid(&data.name) {
                Some(n) if namer.used.insert(n.to_string()) => {
                    values[v.index()] = format!("%{n}");
                }
                _ => fresh.push(v),
            }
        }
        namer.used.extend(reserved);
        for v in fresh {
            let data = &f.values[v.index()];
            let name = namer.unique(valid(&data.name), format!("v{}", v.index()));
            values[v.index()] = format!("%{name}");
        }
        for (i, data) in f.values.iter().enumerate() {
            match data.def {
                ValueDef::Const(c) => values[i] = c.to_string(),
                ValueDef::Null => values[i] = "null".to_string(),
                _ => {}
            }
        }
        let mut block_order: Vec<Block> = f.layout.clone();
        let in_layout: FxHashSet<Block> = block_order.iter().copied().collect();
        block_order.extend(
            (0..f.blocks.len())
                .map(Block::new)
                .filter(|b| !in_layout.contains(b)),
        );
        let mut namer = Namer {
            used: FxHashSet::default(),
        };
        let mut blocks = vec![String::new(); f.blocks.len()];
        for &b in &block_order {
            let name = &f.blocks[b.index()].name;
            let wanted = is_ident(name).then_some(name.as_str());
            blocks[b.index()] = namer.unique(wanted, format!("b{}", b.index()));
        }
        Names { values, blocks }
    }

    /// How `v` is written: `%name`, an integer literal, or `null`.
    pub fn value(&self, v: Value) -> &str {
        self.values
            .get(v.index())
            .map_or("%<bad value>", |s| s.as_str())
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
        out.push_str(&print_function(m, f));
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
        EffectLoc::Field(f) => field_text(m, f.ty.index(), f.index as usize, true),
        EffectLoc::Elements(e) => m.type_name(e.array_of()),
        EffectLoc::Global(g) => global_name(m, g.index()),
    }
}

/// `Type.field` (qualified) or `field`, robust against out-of-range indices.
fn field_text(m: &Module, s: usize, i: usize, qualified: bool) -> String {
    let Some(decl) = m.structs.get(s) else {
        return "<bad field>".to_string();
    };
    let field = decl
        .fields
        .get(i)
        .map_or("<bad field>", |f| f.name.as_str());
    if qualified {
        format!("{}.{}", decl.name, field)
    } else {
        field.to_string()
    }
}

fn global_name(m: &Module, g: usize) -> String {
    m.globals
        .get(g)
        .map_or("@<bad global>".to_string(), |g| format!("@{}", g.name))
}

/// Print one function (its signature, then each block of its layout).
pub fn print_function(m: &Module, f: &Function) -> String {
    let names = Names::new(f);
    let params: Vec<String> = f
        .params
        .iter()
        .map(|&p| format!("{}: {}", names.value(p), type_of(m, f, p)))
        .collect();
    let mut out = format!("func @{}({})", f.name, params.join(", "));
    if let Some(r) = f.ret {
        let _ = write!(out, " -> {}", m.type_name(r));
    }
    out.push_str(" {\n");
    for &b in &f.layout {
        let _ = writeln!(out, "{}:", names.block(b));
        for &inst in &f.blocks[b.index()].insts {
            let _ = writeln!(out, "  {}", print_inst(m, f, &names, inst));
        }
    }
    out.push_str("}\n");
    out
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
    let Some(data) = f.insts.get(inst.index()) else {
        return format!("<bad instruction {}>", inst.index());
    };
    let v = |x: Value| names.value(x).to_string();
    // A null base prints with its type, `(null: T)`, so the field or element
    // resolves when the text is parsed again (a pass may forward a stored null).
    let base_text = |base: Value, ty: String| {
        if f.values
            .get(base.index())
            .is_some_and(|d| d.def == ValueDef::Null)
        {
            format!("(null: {ty})")
        } else {
            v(base)
        }
    };
    let addr = |a: &Addr| match *a {
        Addr::Field { base, field } => format!(
            "{}.{}",
            base_text(base, m.type_name(Type::object(field.ty))),
            field_text(m, field.ty.index(), field.index as usize, false)
        ),
        Addr::Elem { base, index } => format!(
            "{}[{}]",
            base_text(base, m.type_name(null_array_type(m, f, data))),
            v(index)
        ),
        Addr::Global(g) => global_name(m, g.index()),
    };
    // In a value-merging instruction (copy, select, phi) whose recorded type is
    // a reference type, every `null` operand prints with that type,
    // `(null: T)`, so parsing the text again infers the same type. (Counting
    // on another operand to carry the type is not enough: in a cycle of phis
    // each names the other, and the parser has no type to start from.)
    let is_null = |x: Value| {
        f.values
            .get(x.index())
            .is_some_and(|d| d.def == ValueDef::Null)
    };
    let result_ty = data
        .result
        .and_then(|r| f.values.get(r.index()))
        .map(|d| d.ty);
    let typed_null = result_ty.filter(|t| t.is_ref() && *t != Type::NULL);
    let mv = |x: Value| match typed_null {
        Some(t) if is_null(x) => format!("(null: {})", m.type_name(t)),
        _ => v(x),
    };
    let mn = data.kind.mnemonic();
    let body = match &data.kind {
        InstKind::Unary(crate::inst::UnOp::Copy, a) => format!("{mn} {}", mv(*a)),
        InstKind::Binary(_, a, b) => format!("{mn} {}, {}", v(*a), v(*b)),
        InstKind::Unary(_, a) | InstKind::Len(a) | InstKind::Escape(a) | InstKind::Guard(a) => {
            format!("{mn} {}", v(*a))
        }
        InstKind::Select(c, a, b) => format!("{mn} {}, {}, {}", v(*c), mv(*a), mv(*b)),
        InstKind::New(s) => format!(
            "{mn} {}",
            m.structs
                .get(s.index())
                .map_or("<bad type>", |d| d.name.as_str())
        ),
        InstKind::NewArray { elem, len } => format!("{mn} {}, {}", type_text(m, *elem), v(*len)),
        InstKind::Load { addr: a, .. } => format!("{mn} {}", addr(a)),
        InstKind::Store { addr: a, value, .. } => format!("{mn} {}, {}", addr(a), v(*value)),
        InstKind::Call { callee, args } => {
            let name = match *callee {
                Callee::Func(id) => m.funcs.get(id.index()).map(|f| f.name.as_str()),
                Callee::Extern(id) => m.externs.get(id.index()).map(|e| e.name.as_str()),
            };
            let args: Vec<String> = args.iter().map(|&a| v(a)).collect();
            format!(
                "{mn} @{}({})",
                name.unwrap_or("<bad callee>"),
                args.join(", ")
            )
        }
        InstKind::Phi(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|&(b, x)| format!("[{}: {}]", names.block(b), mv(x)))
                .collect();
            format!("{mn} {}", entries.join(", "))
        }
        InstKind::Jmp(t) => format!("{mn} {}", names.block(*t)),
        InstKind::Br(c, t, e) => {
            format!("{mn} {}, {}, {}", v(*c), names.block(*t), names.block(*e))
        }
        InstKind::Ret(Some(x)) => format!("{mn} {}", v(*x)),
        InstKind::Ret(None) | InstKind::Unreachable => mn.to_string(),
    };
    match data.result {
        Some(r) => format!("{} = {body}", names.value(r)),
        None => body,
    }
}
