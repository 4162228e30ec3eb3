//! The syntax pass: tokens to an [`AstModule`], checking only the shape of the text.
//!
//! Instructions are one per line: an instruction must be followed by a line break,
//! and `ret` takes an operand exactly when one follows on the same line.

use super::ast::*;
use super::intern::{push_sized, Interner};
use crate::error::{ParseError, Pos};
use crate::inst::{BinOp, UnOp};
use crate::lexer::{Cursor, Tok};

/// The deepest array nesting the text may write (`[[...[i64]...]]`).
pub const MAX_DIMS: u8 = 32;

type PResult<T> = Result<T, ParseError>;

/// Parse a type: `i64`, `T`, or `[E]`.
pub fn parse_type(c: &mut Cursor, what: &str) -> PResult<TypeExpr> {
    let pos = c.peek().pos;
    let mut dims: u8 = 0;
    while c.peek().tok == Tok::Punct('[') {
        if dims == MAX_DIMS {
            return Err(c.error_at(pos, format!("array types nest at most {MAX_DIMS} deep")));
        }
        c.next();
        dims += 1;
    }
    let (base, _) = c.expect_ident(what)?;
    for _ in 0..dims {
        c.expect_punct(']', "to close the array type")?;
    }
    let base = if base == "i64" {
        None
    } else {
        Some(base.to_string())
    };
    Ok(TypeExpr { base, dims, pos })
}

fn expect_global<'s>(c: &mut Cursor<'s>, what: &str) -> PResult<Ident<'s>> {
    match c.peek().tok {
        Tok::Global(text) => Ok(Ident {
            text,
            pos: c.next().pos,
        }),
        _ => Err(c.expected(what)),
    }
}

/// What the syntax pass builds up: the interned value names and labels of
/// the function being parsed, and the module-wide vectors of the tree
/// (moved into the [`AstModule`] at the end).
#[derive(Default)]
struct Sink<'s> {
    values: Interner<'s>,
    labels: Interner<'s>,
    blocks: Vec<AstBlock<'s>>,
    insts: Vec<AstInst<'s>>,
    types: Vec<TypeExpr>,
    args: Vec<Operand<'s>>,
    phi_entries: Vec<(Local<'s>, Operand<'s>)>,
    at_uses: Vec<&'s str>,
    /// The text's line count.
    lines: usize,
}

impl<'s> Sink<'s> {
    fn value(&mut self, text: &'s str, pos: Pos) -> Local<'s> {
        let id = self.values.id(text);
        local(pos, id)
    }

    /// Make room for a text of `lines` lines: at most one instruction per
    /// line (reserved now), at most one block and about one new value name
    /// or label per line (a definition's), which only a big function grows
    /// to ([`push_sized`]).
    fn reserve(&mut self, lines: usize) {
        self.insts.reserve(lines);
        self.lines = lines;
        self.values.expect(lines);
        self.labels.expect(lines);
    }

    /// Keep a type written in an instruction.
    fn add_type(&mut self, ty: TypeExpr) -> TypeIdx {
        self.types.push(ty);
        TypeIdx(self.types.len() as u32 - 1)
    }
}

/// The run of `v` from index `start` to its end.
fn span_from<T>(v: &[T], start: usize) -> Span {
    Span {
        start: start as u32,
        len: (v.len() - start) as u32,
    }
}

/// The [`Local`] with id `id`, written at `pos`.
fn local<'s>(pos: Pos, id: u32) -> Local<'s> {
    Local {
        pos,
        id,
        src: std::marker::PhantomData,
    }
}

/// A `%name`, or an error `expected {what()}` (built only on failure).
fn expect_local<'s>(
    c: &mut Cursor<'s>,
    names: &mut Sink<'s>,
    what: impl FnOnce() -> String,
) -> PResult<Local<'s>> {
    match c.peek().tok {
        Tok::Local(text) => {
            let pos = c.next().pos;
            Ok(names.value(text, pos))
        }
        _ => Err(c.expected(&what())),
    }
}

/// A block label.
fn expect_label<'s>(c: &mut Cursor<'s>, names: &mut Sink<'s>) -> PResult<Local<'s>> {
    let (text, pos) = c.expect_ident("a block label")?;
    let id = names.labels.id(text);
    Ok(local(pos, id))
}

fn expect_name<'s>(c: &mut Cursor<'s>, what: &str) -> PResult<Ident<'s>> {
    let (text, pos) = c.expect_ident(what)?;
    Ok(Ident { text, pos })
}

/// One top-level item of the text (a function's body sits in the tree's
/// vectors, which its spans index).
pub enum Item<'s> {
    /// `type T { ... }`.
    Struct(AstStruct<'s>),
    /// `global @g: T`.
    Global(AstGlobal<'s>),
    /// `extern @e(...)`.
    Extern(AstExtern<'s>),
    /// `func @f(...) { ... }`.
    Func(AstFunc<'s>),
}

/// What [`parse_items`] hands on.
pub enum Event<'f, 's> {
    /// A function's header, before its body (which has no blocks yet).
    Header(&'f AstFunc<'s>),
    /// A whole item.
    Item(Item<'s>),
}

/// Parse the module's items in order, handing each to `each` (and each
/// function's header, before its body); function bodies go to `names`.
fn parse_items<'s>(
    c: &mut Cursor<'s>,
    names: &mut Sink<'s>,
    each: &mut dyn FnMut(&mut Sink<'s>, Event<'_, 's>) -> PResult<()>,
) -> PResult<()> {
    loop {
        let t = *c.peek();
        let item = match t.tok {
            Tok::Eof => return Ok(()),
            Tok::Ident("type") => {
                c.next();
                Item::Struct(parse_struct(c)?)
            }
            Tok::Ident("global") => {
                c.next();
                let name = expect_global(c, "a global name like '@g' after 'global'")?;
                c.expect_punct(':', "after the global's name")?;
                let ty = parse_type(c, "the global's type")?;
                Item::Global(AstGlobal { name, ty })
            }
            Tok::Ident("extern") => {
                c.next();
                Item::Extern(parse_extern(c)?)
            }
            Tok::Ident("func") => {
                c.next();
                Item::Func(parse_func(c, names, t.pos, each)?)
            }
            _ => return Err(c.expected("'type', 'global', 'extern' or 'func'")),
        };
        each(names, Event::Item(item))?;
    }
}

impl<'s> AstModule<'s> {
    /// Keep a parsed item.
    fn push(&mut self, item: Item<'s>) {
        match item {
            Item::Struct(s) => self.structs.push(s),
            Item::Global(g) => self.globals.push(g),
            Item::Extern(e) => self.externs.push(e),
            Item::Func(f) => self.funcs.push(f),
        }
    }

    /// Move the function bodies `names` holds into the tree (`names` keeps
    /// them empty, with their memory).
    fn take_bodies(&mut self, names: &mut Sink<'s>) {
        use std::mem::take;
        self.blocks = take(&mut names.blocks);
        self.value_names = names.values.all_names();
        self.label_names = names.labels.all_names();
        self.insts = take(&mut names.insts);
        self.types = take(&mut names.types);
        self.args = take(&mut names.args);
        self.phi_entries = take(&mut names.phi_entries);
        self.at_uses = take(&mut names.at_uses);
    }

    /// Give the bodies back to `names`; with `drop`, emptied of all but the
    /// value names and labels from `keep` on (those of the function being
    /// parsed, which has no blocks yet), for the next functions.
    fn give_bodies(&mut self, names: &mut Sink<'s>, drop: bool, keep: (usize, usize)) {
        fn back<T>(v: &mut Vec<T>, drop: bool) -> Vec<T> {
            let mut v = std::mem::take(v);
            if drop {
                v.clear();
            }
            v
        }
        fn back_from<'s>(v: &mut Vec<&'s str>, drop: bool, keep: usize) -> (Vec<&'s str>, usize) {
            let mut v = std::mem::take(v);
            let keep = keep.min(v.len());
            if drop {
                v.drain(..keep);
                return (v, 0);
            }
            (v, keep)
        }
        names.blocks = back(&mut self.blocks, drop);
        let (values, base) = back_from(&mut self.value_names, drop, keep.0);
        names.values.restore_names(values, base);
        let (labels, base) = back_from(&mut self.label_names, drop, keep.1);
        names.labels.restore_names(labels, base);
        names.insts = back(&mut self.insts, drop);
        names.types = back(&mut self.types, drop);
        names.args = back(&mut self.args, drop);
        names.phi_entries = back(&mut self.phi_entries, drop);
        names.at_uses = back(&mut self.at_uses, drop);
    }
}

/// Parse a whole module.
pub fn parse_module_syntax<'s>(c: &mut Cursor<'s>) -> PResult<AstModule<'s>> {
    let mut m = AstModule::default();
    let mut names = Sink::default();
    // At most one instruction, label or new name per line: reserved once,
    // the vectors are never copied while they grow.
    names.reserve(c.line_count());
    parse_items(c, &mut names, &mut |_, event| {
        if let Event::Item(item) = event {
            m.push(item);
        }
        Ok(())
    })?;
    m.take_bodies(&mut names);
    Ok(m)
}

/// Parse the module item by item, handing each to `each` as soon as it is
/// parsed (and each function's header before its body), with a tree that
/// holds the bodies of the functions parsed since `each` last returned
/// `true`: then they are dropped, their memory reused for the next ones, so
/// that the tree stays small and a body `each` resolves soon after its parse
/// is still in the cache.
pub fn parse_streaming<'s>(
    c: &mut Cursor<'s>,
    mut each: impl FnMut(&AstModule<'s>, Event<'_, 's>) -> PResult<bool>,
) -> PResult<()> {
    let mut work = AstModule::default();
    let mut names = Sink::default();
    // As in `parse_module_syntax`; only as much as the bodies kept at once
    // is ever touched.
    names.reserve(c.line_count());
    parse_items(c, &mut names, &mut |names, event| {
        // A header's function keeps its names (its parameters) when the
        // bodies before it are dropped.
        let keep = match event {
            Event::Header(_) => (names.values.base(), names.labels.base()),
            Event::Item(_) => (usize::MAX, usize::MAX),
        };
        work.take_bodies(names);
        let done = each(&work, event);
        work.give_bodies(names, matches!(done, Ok(true)), keep);
        done.map(drop)
    })
}

fn parse_struct<'s>(c: &mut Cursor<'s>) -> PResult<AstStruct<'s>> {
    let name = expect_name(c, "a type name after 'type'")?;
    c.expect_punct('{', "after the type's name")?;
    let mut fields = Vec::new();
    while !c.eat_punct('}') {
        let f = expect_name(c, "a field name or '}'")?;
        c.expect_punct(':', "after the field's name")?;
        let ty = parse_type(c, "the field's type")?;
        fields.push((f, ty));
        if !c.eat_punct(',') && c.peek().tok != Tok::Punct('}') {
            return Err(c.expected("',' or '}' after a field"));
        }
    }
    Ok(AstStruct { name, fields })
}

fn parse_extern<'s>(c: &mut Cursor<'s>) -> PResult<AstExtern<'s>> {
    let name = expect_global(c, "an extern name like '@e' after 'extern'")?;
    c.expect_punct('(', "after the extern's name")?;
    let mut params = Vec::new();
    if !c.eat_punct(')') {
        loop {
            params.push(parse_type(c, "a parameter type")?);
            if c.eat_punct(')') {
                break;
            }
            c.expect_punct(',', "or ')' after a parameter type")?;
        }
    }
    let ret = parse_ret(c)?;
    let mut ext = AstExtern {
        name,
        params,
        ret,
        reads: None,
        writes: None,
    };
    loop {
        let pos = c.peek().pos;
        let slot = if c.eat_word("reads") {
            &mut ext.reads
        } else if c.eat_word("writes") {
            &mut ext.writes
        } else {
            return Ok(ext);
        };
        if slot.is_some() {
            return Err(c.error_at(pos, "this effects clause is written twice".to_string()));
        }
        *slot = Some(parse_locs(c)?);
    }
}

fn parse_locs<'s>(c: &mut Cursor<'s>) -> PResult<Vec<AstLoc<'s>>> {
    c.expect_punct('(', "after 'reads' or 'writes'")?;
    if c.eat_word("none") {
        c.expect_punct(')', "after 'none'")?;
        return Ok(Vec::new());
    }
    let mut locs = Vec::new();
    loop {
        let loc = match &c.peek().tok {
            Tok::Global(_) => AstLoc::Global(expect_global(c, "a global")?),
            Tok::Punct('[') => AstLoc::Elements(parse_type(c, "an element type")?),
            Tok::Ident(_) => {
                let ty = expect_name(c, "a type name")?;
                c.expect_punct('.', "between the type and the field in 'Type.field'")?;
                let field = expect_name(c, "a field name after 'Type.'")?;
                AstLoc::Field(ty, field)
            }
            _ => return Err(c.expected("'Type.field', '[E]', '@global' or 'none'")),
        };
        locs.push(loc);
        if c.eat_punct(')') {
            return Ok(locs);
        }
        c.expect_punct(',', "or ')' after an effect location")?;
    }
}

fn parse_ret(c: &mut Cursor) -> PResult<Option<TypeExpr>> {
    if c.peek().tok == Tok::Arrow {
        c.next();
        Ok(Some(parse_type(c, "a return type after '->'")?))
    } else {
        Ok(None)
    }
}

fn parse_func<'s>(
    c: &mut Cursor<'s>,
    names: &mut Sink<'s>,
    pos: Pos,
    each: &mut dyn FnMut(&mut Sink<'s>, Event<'_, 's>) -> PResult<()>,
) -> PResult<AstFunc<'s>> {
    names.values.clear();
    names.labels.clear();
    let name = expect_global(c, "a function name like '@f' after 'func'")?;
    c.expect_punct('(', "after the function's name")?;
    let mut params = Vec::new();
    if !c.eat_punct(')') {
        loop {
            let p = expect_local(c, names, || "a parameter name like '%p'".to_string())?;
            c.expect_punct(':', "after the parameter's name")?;
            let ty = parse_type(c, "the parameter's type")?;
            params.push((p, ty));
            if c.eat_punct(')') {
                break;
            }
            c.expect_punct(',', "or ')' after a parameter")?;
        }
    }
    let ret = parse_ret(c)?;
    c.expect_punct('{', "to open the function body")?;
    let mut func = AstFunc {
        pos,
        name,
        params,
        ret,
        blocks: Span::default(),
        value_names: run_of(&names.values),
        label_names: run_of(&names.labels),
        at_uses: Span::default(),
    };
    each(names, Event::Header(&func))?;
    let first_block = names.blocks.len();
    let first_use = names.at_uses.len();
    loop {
        let t = *c.peek();
        match t.tok {
            Tok::Punct('}') => {
                c.next();
                break;
            }
            Tok::Ident(label) if c.peek_at(1).tok == Tok::Punct(':') => {
                let label = local(t.pos, names.labels.id(label));
                c.next();
                c.next();
                let start = names.insts.len() as u32;
                let block = AstBlock {
                    label,
                    insts: Span { start, len: 0 },
                };
                push_sized(&mut names.blocks, block, names.lines);
            }
            Tok::Eof => return Err(c.expected("'}' to close the function body")),
            _ => {
                let inst = parse_inst(c, names)?;
                if names.blocks.len() == first_block {
                    return Err(c.error_at(
                        inst.pos,
                        "expected a block label like 'entry:' before the first instruction"
                            .to_string(),
                    ));
                }
                names.insts.push(inst);
                if let Some(block) = names.blocks.last_mut() {
                    block.insts.len += 1;
                }
                let next = c.peek();
                if !next.line_start && next.tok != Tok::Eof {
                    return Err(c.expected("the end of the line after the instruction"));
                }
            }
        }
    }
    if names.blocks.len() == first_block {
        return Err(c.error_at(pos, format!("function @{} has no blocks", func.name.text)));
    }
    func.blocks = span_from(&names.blocks, first_block);
    func.value_names = run_of(&names.values);
    func.label_names = run_of(&names.labels);
    func.at_uses = span_from(&names.at_uses, first_use);
    Ok(func)
}

/// The current function's names in the module-wide list of `interner`.
fn run_of(interner: &Interner) -> Span {
    Span {
        start: interner.base() as u32,
        len: interner.names().len() as u32,
    }
}

/// Describe the operand position for messages: "first", "second", ...
fn ordinal(i: usize) -> &'static str {
    ["first", "second", "third"]
        .get(i)
        .copied()
        .unwrap_or("next")
}

fn parse_operand<'s>(c: &mut Cursor<'s>, names: &mut Sink<'s>, what: &str) -> PResult<Operand<'s>> {
    parse_operand_with(c, names, || what.to_string())
}

/// [`parse_operand`] with the description of the operand built only on failure.
fn parse_operand_with<'s>(
    c: &mut Cursor<'s>,
    names: &mut Sink<'s>,
    what: impl FnOnce() -> String,
) -> PResult<Operand<'s>> {
    let t = *c.peek();
    let op = match t.tok {
        Tok::Local(text) => Operand::Value(names.value(text, t.pos)),
        Tok::Int(i) => Operand::Int(i),
        Tok::Ident("null") => Operand::Null,
        Tok::Punct('(') => {
            c.next();
            let ty = parse_typed_null(c)?;
            return Ok(Operand::TypedNull(names.add_type(ty)));
        }
        _ => return Err(c.expected(&what())),
    };
    c.next();
    Ok(op)
}

/// The rest of `(null: T)` after the `(`: the type T.
fn parse_typed_null(c: &mut Cursor) -> PResult<TypeExpr> {
    let (word, pos) = c.expect_ident("'null' after '('")?;
    if word != "null" {
        return Err(c.error_at(pos, format!("expected 'null' after '(', found '{word}'")));
    }
    c.expect_punct(':', "after 'null' in '(null: T)'")?;
    let ty = parse_type(c, "the type in '(null: T)'")?;
    c.expect_punct(')', "to close '(null: T)'")?;
    Ok(ty)
}

/// `N` comma-separated operands of instruction `mn`.
fn parse_operands<'s, const N: usize>(
    c: &mut Cursor<'s>,
    names: &mut Sink<'s>,
    mn: &str,
) -> PResult<[Operand<'s>; N]> {
    let mut out = [const { Operand::Null }; N];
    for (i, slot) in out.iter_mut().enumerate() {
        if i > 0 {
            c.expect_punct_with(',', || {
                format!("after the {} operand of '{mn}'", ordinal(i - 1))
            })?;
        }
        *slot = parse_operand_with(c, names, || {
            format!(
                "the {} operand of '{mn}' (a value, an integer or 'null')",
                ordinal(i)
            )
        })?;
    }
    Ok(out)
}

fn parse_addr<'s>(c: &mut Cursor<'s>, names: &mut Sink<'s>, mn: &str) -> PResult<AstAddr<'s>> {
    if let Tok::Global(_) = c.peek().tok {
        let g = expect_global(c, "a global")?;
        names.at_uses.push(g.text);
        return Ok(AstAddr::Global(g));
    }
    let base = if c.eat_punct('(') {
        let ty = parse_typed_null(c)?;
        let pos = ty.pos;
        AddrBase::Null(names.add_type(ty), pos)
    } else {
        AddrBase::Value(expect_local(c, names, || {
            format!(
                "an address ('%o.field', '%a[index]', '(null: T).field' or '@global') after '{mn}'"
            )
        })?)
    };
    if c.eat_punct('.') {
        let field = expect_name(c, "a field name after '.'")?;
        Ok(AstAddr::Field(base, field))
    } else if c.eat_punct('[') {
        let index = parse_operand(c, names, "an index (a value or an integer) after '['")?;
        c.expect_punct(']', "after the index")?;
        Ok(AstAddr::Elem(base, index))
    } else {
        Err(c.expected(&format!(
            "'.field' or '[index]' after the base value of '{mn}'"
        )))
    }
}

fn parse_inst<'s>(c: &mut Cursor<'s>, names: &mut Sink<'s>) -> PResult<AstInst<'s>> {
    let pos = c.peek().pos;
    let result = if let Tok::Local(text) = c.peek().tok {
        let r = expect_local(c, names, || "a value name".to_string())?;
        c.expect_punct_with('=', || format!("after '%{text}'"))?;
        Some(r)
    } else {
        None
    };
    let (mut mn, mn_pos) = c.expect_ident("an instruction")?;
    if (mn == "load" || mn == "store") && c.peek().tok == Tok::Punct('.') {
        c.next();
        let (w, _) = c.expect_ident("'volatile' after '.'")?;
        if w != "volatile" {
            return Err(c.error_at(
                mn_pos,
                format!("unknown instruction '{mn}.{w}' (did you mean '{mn}.volatile'?)"),
            ));
        }
        mn = if mn == "load" {
            "load.volatile"
        } else {
            "store.volatile"
        };
    }
    let op = match mn {
        "select" => {
            let [x, a, b] = parse_operands(c, names, "select")?;
            AstOp::Select(x, a, b)
        }
        "new" => AstOp::New(expect_name(c, "a type name after 'new'")?),
        "newarray" => {
            let ty = parse_type(c, "an element type after 'newarray'")?;
            c.expect_punct(',', "after the element type of 'newarray'")?;
            let len = parse_operand(c, names, "the length operand of 'newarray'")?;
            AstOp::NewArray(names.add_type(ty), len)
        }
        "load" | "load.volatile" => AstOp::Load(parse_addr(c, names, mn)?, mn != "load"),
        "store" | "store.volatile" => {
            let addr = parse_addr(c, names, mn)?;
            c.expect_punct_with(',', || format!("after the address of '{mn}'"))?;
            let v = parse_operand_with(c, names, || format!("the value operand of '{mn}'"))?;
            AstOp::Store(addr, v, mn != "store")
        }
        "len" => AstOp::Len(parse_operand(c, names, "the operand of 'len'")?),
        "escape" => AstOp::Escape(parse_operand(c, names, "the operand of 'escape'")?),
        "guard" => AstOp::Guard(parse_operand(c, names, "the operand of 'guard'")?),
        "nullcheck" => AstOp::NullCheck(parse_operand(c, names, "the operand of 'nullcheck'")?),
        "boundscheck" => {
            let [a, i] = parse_operands(c, names, "boundscheck")?;
            AstOp::BoundsCheck(a, i)
        }
        "call" => {
            let callee = expect_global(c, "a callee like '@f' after 'call'")?;
            names.at_uses.push(callee.text);
            c.expect_punct('(', "after the callee")?;
            let start = names.args.len();
            if !c.eat_punct(')') {
                loop {
                    let arg =
                        parse_operand(c, names, "an argument (a value, an integer or 'null')")?;
                    names.args.push(arg);
                    if c.eat_punct(')') {
                        break;
                    }
                    c.expect_punct(',', "or ')' after an argument")?;
                }
            }
            AstOp::Call(callee, span_from(&names.args, start))
        }
        "phi" => {
            let start = names.phi_entries.len();
            loop {
                c.expect_punct('[', "to open a phi entry like '[label: %v]'")?;
                let l = expect_label(c, names)?;
                c.expect_punct(':', "after the label of a phi entry")?;
                let v = parse_operand(c, names, "the value of a phi entry")?;
                c.expect_punct(']', "to close the phi entry")?;
                names.phi_entries.push((l, v));
                if !c.eat_punct(',') {
                    break;
                }
            }
            AstOp::Phi(span_from(&names.phi_entries, start))
        }
        "jmp" => AstOp::Jmp(expect_label(c, names)?),
        "br" => {
            let cond = parse_operand(c, names, "the condition of 'br'")?;
            c.expect_punct(',', "after the condition of 'br'")?;
            let t = expect_label(c, names)?;
            c.expect_punct(',', "after the first label of 'br'")?;
            let e = expect_label(c, names)?;
            AstOp::Br(cond, t, e)
        }
        "ret" => {
            let next = c.peek();
            if next.line_start || next.tok == Tok::Eof {
                AstOp::Ret(None)
            } else {
                AstOp::Ret(Some(parse_operand(c, names, "the operand of 'ret'")?))
            }
        }
        "unreachable" => AstOp::Unreachable,
        // The operations last: the keywords above are told apart by one
        // string comparison each, the operations by a table search.
        m => {
            if let Some(op) = BinOp::from_name(m) {
                let [a, b] = parse_operands(c, names, m)?;
                AstOp::Binary(op, a, b)
            } else if let Some(op) = UnOp::from_name(m) {
                let [a] = parse_operands(c, names, m)?;
                AstOp::Unary(op, a)
            } else {
                return Err(c.error_at(mn_pos, format!("unknown instruction '{mn}'")));
            }
        }
    };
    Ok(AstInst { pos, result, op })
}
