//! The input-spec text of IR.md §7: parameter bindings, `let` helper objects,
//! global initial values and object literals, resolved to an [`InputSpec`];
//! and the printer that writes an [`InputSpec`] back as text.
//!
//! ```text
//! p = Point{x: 1, y: 2}, q = p, n = 5
//! h = Node{val: 1, next: h}                    ; a cycle
//! let c = Cell{v: 1}, a = [Cell]{c, c, null}
//! @count = 3, @head = Node{val: 7, next: null}
//! ```
//!
//! Bindings are separated by commas (a binding that starts a new line needs
//! none). Parameters are named as the printer names them ([`Names`]), without `%`.

use crate::entities::StructId;
use crate::error::{ParseError, Pos};
use crate::function::Function;
use crate::input::{InputObject, InputSpec, InputValue};
use crate::lexer::{is_ident, Cursor, Tok};
use crate::module::Module;
use crate::parse::ast::{Name, TypeExpr};
use crate::parse::syntax::parse_type;
use crate::print::Names;
use crate::types::{Base, Type};
use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt::Write;

type PResult<T> = Result<T, ParseError>;

/// How deeply object literals may nest inside each other.
const MAX_NESTING: usize = 256;

/// A written value.
#[derive(Debug)]
enum ExprKind {
    Int(i64),
    Null,
    Name(String),
    Struct(Name, Vec<(Name, Expr)>),
    Array(TypeExpr, Vec<Expr>),
}

#[derive(Debug)]
struct Expr {
    kind: ExprKind,
    pos: Pos,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum BindingKind {
    Param,
    Let,
    Global,
}

#[derive(Debug)]
struct Binding {
    kind: BindingKind,
    name: Name,
    expr: Expr,
}

fn parse_expr(c: &mut Cursor, depth: usize) -> PResult<Expr> {
    let t = *c.peek();
    if depth > MAX_NESTING {
        return Err(c.error_at(
            t.pos,
            format!("object literals nest more than {MAX_NESTING} deep"),
        ));
    }
    let kind = match t.tok {
        Tok::Int(i) => {
            c.next();
            ExprKind::Int(i)
        }
        Tok::Ident("null") => {
            c.next();
            ExprKind::Null
        }
        Tok::Ident(s) if c.peek_at(1).tok == Tok::Punct('{') => {
            let ty = Name {
                text: s.to_string(),
                pos: t.pos,
            };
            c.next();
            c.next();
            let mut fields = Vec::new();
            while !c.eat_punct('}') {
                let (f, pos) = c.expect_ident("a field name or '}'")?;
                c.expect_punct(':', "after the field name")?;
                let v = parse_expr(c, depth + 1)?;
                fields.push((
                    Name {
                        text: f.to_string(),
                        pos,
                    },
                    v,
                ));
                if !c.eat_punct(',') && c.peek().tok != Tok::Punct('}') {
                    return Err(c.expected("',' or '}' after a field value"));
                }
            }
            ExprKind::Struct(ty, fields)
        }
        Tok::Ident(s) => {
            c.next();
            ExprKind::Name(s.to_string())
        }
        Tok::Punct('[') => {
            let ty = parse_type(c, "an element type")?;
            if ty.dims == 0 {
                return Err(c.expected("an array type like '[i64]'"));
            }
            c.expect_punct('{', "after the array type")?;
            let mut elems = Vec::new();
            while !c.eat_punct('}') {
                elems.push(parse_expr(c, depth + 1)?);
                if !c.eat_punct(',') && c.peek().tok != Tok::Punct('}') {
                    return Err(c.expected("',' or '}' after an element"));
                }
            }
            ExprKind::Array(ty, elems)
        }
        _ => return Err(c.expected("a value (an integer, 'null', a name or an object literal)")),
    };
    Ok(Expr { kind, pos: t.pos })
}

fn parse_binding(c: &mut Cursor) -> PResult<Binding> {
    let mut kind = BindingKind::Param;
    if matches!(c.peek().tok, Tok::Ident(s) if s == "let") && c.peek_at(1).tok != Tok::Punct('=') {
        c.next();
        kind = BindingKind::Let;
    }
    let t = c.next();
    let text = match t.tok {
        Tok::Global(g) if kind == BindingKind::Param => {
            kind = BindingKind::Global;
            g.to_string()
        }
        Tok::Ident(s) => s.to_string(),
        Tok::Int(i) if i >= 0 && kind == BindingKind::Param => i.to_string(),
        other => {
            return Err(c.error_at(
                t.pos,
                format!(
                    "expected a binding like 'name = value' or '@global = value', found {other}"
                ),
            ))
        }
    };
    let name = Name { text, pos: t.pos };
    c.expect_punct('=', &format!("after '{}'", name.text))?;
    let expr = parse_expr(c, 0)?;
    Ok(Binding { kind, name, expr })
}

fn parse_bindings(c: &mut Cursor) -> PResult<Vec<Binding>> {
    let mut out = Vec::new();
    while c.peek().tok != Tok::Eof {
        out.push(parse_binding(c)?);
        let next = *c.peek();
        if !c.eat_punct(',') && !next.line_start && next.tok != Tok::Eof {
            return Err(c.expected("',' between bindings"));
        }
    }
    Ok(out)
}

/// Resolves parsed bindings against a function's parameters and the module.
struct Resolver<'a> {
    file: &'a str,
    m: &'a Module,
    bindings: &'a [Binding],
    /// Parameter and `let` names to their binding.
    by_name: FxHashMap<&'a str, usize>,
    /// The object allocated for a binding whose value is a literal.
    binding_obj: Vec<Option<usize>>,
    objects: Vec<Option<InputObject>>,
    object_types: Vec<Type>,
    object_names: Vec<Option<String>>,
}

impl<'a> Resolver<'a> {
    fn err(&self, pos: Pos, message: String) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            pos,
            message,
        }
    }

    fn struct_named(&self, n: &Name) -> PResult<StructId> {
        self.m
            .struct_by_name(&n.text)
            .ok_or_else(|| self.err(n.pos, format!("unknown type '{}'", n.text)))
    }

    fn resolve_type(&self, t: &TypeExpr) -> PResult<Type> {
        let base = match &t.base {
            None => Base::I64,
            Some(n) => match self.m.struct_by_name(n) {
                Some(s) => Base::Struct(s),
                None => return Err(self.err(t.pos, format!("unknown type '{n}'"))),
            },
        };
        Ok(Type { base, dims: t.dims })
    }

    /// The type of a literal, without evaluating its contents.
    fn literal_type(&self, e: &Expr) -> PResult<Option<Type>> {
        Ok(match &e.kind {
            ExprKind::Struct(ty, _) => Some(Type::object(self.struct_named(ty)?)),
            ExprKind::Array(ty, _) => Some(self.resolve_type(ty)?),
            _ => None,
        })
    }

    fn alloc(&mut self, ty: Type, name: Option<String>) -> usize {
        self.objects.push(None);
        self.object_types.push(ty);
        self.object_names.push(name);
        self.objects.len() - 1
    }

    fn value_type(&self, v: InputValue) -> Type {
        match v {
            InputValue::Int(_) => Type::I64,
            InputValue::Null => Type::NULL,
            InputValue::Obj(i) => self.object_types[i],
        }
    }

    /// What a name stands for, following `q = p` aliases.
    fn name_value(&self, name: &str, pos: Pos) -> PResult<InputValue> {
        let mut chain = vec![name.to_string()];
        let mut current = name;
        loop {
            let Some(&b) = self.by_name.get(current) else {
                return Err(self.err(pos, format!("unknown name '{current}'")));
            };
            if let Some(o) = self.binding_obj[b] {
                return Ok(InputValue::Obj(o));
            }
            match &self.bindings[b].expr.kind {
                ExprKind::Int(i) => return Ok(InputValue::Int(*i)),
                ExprKind::Null => return Ok(InputValue::Null),
                ExprKind::Name(next) => {
                    let looped = chain.iter().any(|c| c == next);
                    chain.push(next.clone());
                    if looped {
                        return Err(self.err(
                            pos,
                            format!(
                                "'{name}' never reaches a value: the names form a cycle ({})",
                                chain.join(" = ")
                            ),
                        ));
                    }
                    current = next;
                }
                ExprKind::Struct(..) | ExprKind::Array(..) => {
                    return Err(self.err(pos, format!("'{current}' has no object")));
                }
            }
        }
    }

    fn check(&self, v: InputValue, expected: Option<Type>, pos: Pos, what: &str) -> PResult<()> {
        let Some(expected) = expected else {
            return Ok(());
        };
        let found = self.value_type(v);
        if found.fits(expected) {
            return Ok(());
        }
        let found_text = match v {
            InputValue::Int(i) => format!("the integer {i}"),
            _ => format!("a value of type {}", self.m.type_name(found)),
        };
        Err(self.err(
            pos,
            format!(
                "type mismatch for {what}: expected {}, found {found_text}",
                self.m.type_name(expected)
            ),
        ))
    }

    /// Evaluate `e`; `obj` is the object preallocated for a top-level literal.
    fn eval(
        &mut self,
        e: &Expr,
        expected: Option<Type>,
        what: &str,
        obj: Option<usize>,
    ) -> PResult<InputValue> {
        let v = match &e.kind {
            ExprKind::Int(i) => InputValue::Int(*i),
            ExprKind::Null => InputValue::Null,
            ExprKind::Name(n) => self.name_value(n, e.pos)?,
            ExprKind::Struct(ty, fields) => {
                let s = self.struct_named(ty)?;
                let o = match obj {
                    Some(o) => o,
                    None => self.alloc(Type::object(s), None),
                };
                let decl = self.m.struct_decl(s);
                let mut values: Vec<InputValue> =
                    decl.fields.iter().map(|f| default_value(f.ty)).collect();
                let mut seen = FxHashSet::default();
                for (f, fe) in fields {
                    let Some(fr) = self.m.field_by_name(s, &f.text) else {
                        return Err(self.err(
                            f.pos,
                            format!("unknown field '{}' of type {}", f.text, ty.text),
                        ));
                    };
                    if !seen.insert(fr.index) {
                        return Err(self.err(f.pos, format!("field '{}' is given twice", f.text)));
                    }
                    let fty = self.m.field(fr).ty;
                    let what = format!("field '{}' of {}", f.text, ty.text);
                    values[fr.index as usize] = self.eval(fe, Some(fty), &what, None)?;
                }
                self.objects[o] = Some(InputObject::Struct {
                    ty: s,
                    fields: values,
                });
                InputValue::Obj(o)
            }
            ExprKind::Array(ty, elems) => {
                let aty = self.resolve_type(ty)?;
                let o = match obj {
                    Some(o) => o,
                    None => self.alloc(aty, None),
                };
                let elem = aty.elem().unwrap_or(Type::I64);
                let mut values = Vec::with_capacity(elems.len());
                for (i, x) in elems.iter().enumerate() {
                    let what = format!("element {i} of {}", self.m.type_name(aty));
                    values.push(self.eval(x, Some(elem), &what, None)?);
                }
                self.objects[o] = Some(InputObject::Array {
                    elem,
                    elems: values,
                });
                InputValue::Obj(o)
            }
        };
        self.check(v, expected, e.pos, what)?;
        Ok(v)
    }
}

/// The zero value of a slot of type `t`: 0 or null.
fn default_value(t: Type) -> InputValue {
    if t.is_int() {
        InputValue::Int(0)
    } else {
        InputValue::Null
    }
}

/// The input-spec names of `f`'s parameters (their printed names without `%`).
fn param_names(f: &Function) -> Vec<String> {
    let names = Names::new(f);
    f.params
        .iter()
        .map(|&p| names.value(p).trim_start_matches('%').to_string())
        .collect()
}

/// Parse an input spec for `f` of `m`. `file` labels errors (e.g. `test.ir:3`).
pub fn parse_input_spec(
    text: &str,
    file: &str,
    m: &Module,
    f: &Function,
) -> Result<InputSpec, ParseError> {
    let mut c = Cursor::new(text, file);
    let bindings = parse_bindings(&mut c);
    let bindings = c.finish(bindings)?;
    let end = c.peek().pos;
    let params = param_names(f);
    let param_index: FxHashMap<&str, usize> = params
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut r = Resolver {
        file,
        m,
        bindings: &bindings,
        by_name: FxHashMap::default(),
        binding_obj: vec![None; bindings.len()],
        objects: Vec::new(),
        object_types: Vec::new(),
        object_names: Vec::new(),
    };
    let mut param_binding: Vec<Option<usize>> = vec![None; params.len()];
    let mut global_binding = vec![None; m.globals.len()];
    for (i, b) in bindings.iter().enumerate() {
        let n = b.name.text.as_str();
        match b.kind {
            BindingKind::Global => {
                let Some(g) = m.global_by_name(n) else {
                    return Err(r.err(b.name.pos, format!("unknown global @{n}")));
                };
                if global_binding[g.index()].replace(i).is_some() {
                    return Err(r.err(b.name.pos, format!("global @{n} is bound twice")));
                }
                continue;
            }
            BindingKind::Param => {
                let Some(&p) = param_index.get(n) else {
                    return Err(r.err(
                        b.name.pos,
                        format!(
                            "unknown parameter '{n}' of @{} (its parameters are: {}; \
                             write 'let {n} = ...' for a helper object)",
                            f.name,
                            params.join(", ")
                        ),
                    ));
                };
                if param_binding[p].replace(i).is_some() {
                    return Err(r.err(b.name.pos, format!("parameter '{n}' is bound twice")));
                }
            }
            BindingKind::Let => {}
        }
        if r.by_name.insert(n, i).is_some() {
            return Err(r.err(b.name.pos, format!("name '{n}' is bound twice")));
        }
    }
    // Top-level literals get their objects first, so names can refer to them.
    for (i, b) in bindings.iter().enumerate() {
        if let Some(ty) = r.literal_type(&b.expr)? {
            let name = (b.kind != BindingKind::Global).then(|| b.name.text.clone());
            r.binding_obj[i] = Some(r.alloc(ty, name));
        }
    }
    let mut values = vec![InputValue::Null; bindings.len()];
    for (i, b) in bindings.iter().enumerate() {
        let (expected, what) = match b.kind {
            BindingKind::Param => {
                let p = param_index[b.name.text.as_str()];
                (
                    Some(f.value_type(f.params[p])),
                    format!("parameter '{}'", b.name.text),
                )
            }
            BindingKind::Global => {
                let g = m.global_by_name(&b.name.text);
                (
                    g.map(|g| m.globals[g.index()].ty),
                    format!("@{}", b.name.text),
                )
            }
            BindingKind::Let => (None, format!("'{}'", b.name.text)),
        };
        values[i] = r.eval(&b.expr, expected, &what, r.binding_obj[i])?;
    }
    let mut spec = InputSpec::default();
    for (p, b) in param_binding.iter().enumerate() {
        match b {
            Some(b) => spec.params.push(values[*b]),
            None => {
                return Err(r.err(
                    end,
                    format!("missing binding for parameter '{}'", params[p]),
                ))
            }
        }
    }
    for (g, b) in global_binding.iter().enumerate() {
        spec.globals.push(match b {
            Some(b) => values[*b],
            None => default_value(m.globals[g].ty),
        });
    }
    for (i, o) in r.objects.into_iter().enumerate() {
        let Some(o) = o else {
            return Err(ParseError {
                file: file.to_string(),
                pos: end,
                message: format!("object {i} was never filled in"),
            });
        };
        spec.objects.push(o);
    }
    spec.object_names = r.object_names;
    Ok(spec)
}

/// Print `spec` as input text for `f` of `m` that [`parse_input_spec`] reads
/// back to an equal spec (up to the numbering of objects).
pub fn print_input_spec(spec: &InputSpec, m: &Module, f: &Function) -> String {
    let params = param_names(f);
    // An object is written out at the first parameter that refers to it, if that
    // parameter's name can be used as a reference; the rest become `let`s.
    let mut owner: Vec<Option<usize>> = vec![None; spec.objects.len()];
    for (p, v) in spec.params.iter().enumerate() {
        if let InputValue::Obj(o) = *v {
            let name = params.get(p).map_or("", |s| s.as_str());
            if o < owner.len() && owner[o].is_none() && is_ref_name(name) {
                owner[o] = Some(p);
            }
        }
    }
    let mut used: FxHashSet<String> = params.iter().cloned().collect();
    let mut obj_names = Vec::with_capacity(spec.objects.len());
    for (i, own) in owner.iter().enumerate() {
        let name = match own {
            Some(p) => params[*p].clone(),
            None => {
                let wanted = spec
                    .object_names
                    .get(i)
                    .and_then(|n| n.as_deref())
                    .filter(|n| is_ref_name(n) && !used.contains(*n));
                let name = match wanted {
                    Some(n) => n.to_string(),
                    None => (0..)
                        .map(|k| {
                            if k == 0 {
                                format!("o{i}")
                            } else {
                                format!("o{i}_{k}")
                            }
                        })
                        .find(|c| !used.contains(c))
                        .unwrap_or_default(),
                };
                used.insert(name.clone());
                name
            }
        };
        obj_names.push(name);
    }
    let value = |v: &InputValue| match *v {
        InputValue::Int(i) => i.to_string(),
        InputValue::Null => "null".to_string(),
        InputValue::Obj(o) => obj_names
            .get(o)
            .cloned()
            .unwrap_or_else(|| "null".to_string()),
    };
    let literal = |o: usize| -> String {
        match spec.objects.get(o) {
            Some(InputObject::Struct { ty, fields }) => {
                let decl = m.structs.get(ty.index());
                let mut s = decl.map_or("<bad type>".to_string(), |d| d.name.clone());
                let fs: Vec<String> = fields
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let fname = decl
                            .and_then(|d| d.fields.get(i))
                            .map_or("<bad field>", |f| f.name.as_str());
                        format!("{fname}: {}", value(v))
                    })
                    .collect();
                let _ = write!(s, "{{{}}}", fs.join(", "));
                s
            }
            Some(InputObject::Array { elem, elems }) => {
                let es: Vec<String> = elems.iter().map(value).collect();
                format!("{}{{{}}}", m.type_name(elem.array_of()), es.join(", "))
            }
            None => "null".to_string(),
        }
    };
    let mut parts = Vec::new();
    for (p, v) in spec.params.iter().enumerate() {
        let name = params.get(p).map_or("?", |s| s.as_str());
        let text = match *v {
            InputValue::Obj(o) if owner.get(o) == Some(&Some(p)) => literal(o),
            _ => value(v),
        };
        parts.push(format!("{name} = {text}"));
    }
    for (g, v) in spec.globals.iter().enumerate() {
        if let Some(decl) = m.globals.get(g) {
            parts.push(format!("@{} = {}", decl.name, value(v)));
        }
    }
    for (o, own) in owner.iter().enumerate() {
        if own.is_none() {
            parts.push(format!("let {} = {}", obj_names[o], literal(o)));
        }
    }
    parts.join(", ")
}

/// True when `name` can be written in a value position to mean a binding.
fn is_ref_name(name: &str) -> bool {
    is_ident(name) && name != "null"
}
