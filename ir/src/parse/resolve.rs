//! The resolution pass: an [`AstModule`] to a [`Module`].
//!
//! Declarations are resolved first (types may refer to types declared later,
//! calls to functions defined later), then each function body in three steps:
//! create every block and every named result; infer result types to a fixpoint
//! (phis and loads may depend on values defined further down); and finally fill
//! in each instruction with resolved operands, fields and labels.

use super::ast::*;
use super::intern::Interner;
use crate::entities::{Block, ExternId, FuncId, GlobalId, StructId, Value};
use crate::error::{ParseError, Pos};
use crate::function::Function;
use crate::inst::{Addr, Callee, FieldRef, InstKind, UnOp};
use crate::module::{EffectLoc, Extern, ExternEffects, Module};
use crate::source_map::SourceMap;
use crate::types::{Base, Type};
use rustc_hash::FxHashMap;

type PResult<T> = Result<T, ParseError>;

/// What an `@name` refers to.
#[derive(Copy, Clone)]
enum AtName {
    Global(GlobalId),
    Extern(ExternId),
    Func(FuncId),
}

/// Module-level name tables.
pub(super) struct Decls<'a> {
    file: &'a str,
    structs: FxHashMap<&'a str, StructId>,
    /// Each declared field by type and name: a type may have thousands.
    fields: FxHashMap<(StructId, &'a str), u32>,
    /// Dense ids of the `@` names (numbered ones such as `@f12` by number,
    /// not hashed as strings: a call then reads neither a hash table of
    /// every function nor the callee's name far back in the text).
    at_ids: Interner<'a>,
    /// What each `@` name is, by its id in `at_ids`.
    at_names: Vec<AtName>,
    /// Return types of the module's functions (known before their bodies).
    func_rets: Vec<Option<Type>>,
}

impl<'a> Decls<'a> {
    pub(super) fn err(&self, pos: Pos, message: String) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            pos,
            message,
        }
    }

    fn resolve_type(&self, t: &TypeExpr) -> PResult<Type> {
        let base = match &t.base {
            None => Base::I64,
            Some(name) => match self.structs.get(name.as_str()) {
                Some(&s) => Base::Struct(s),
                None => return Err(self.err(t.pos, format!("unknown type '{name}'"))),
            },
        };
        Ok(Type { base, dims: t.dims })
    }

    fn define_at(&mut self, name: &Ident<'a>, what: AtName) -> PResult<()> {
        if self.at_ids.id(name.text) as usize != self.at_names.len() {
            return Err(self.err(name.pos, format!("@{} is defined twice", name.text)));
        }
        self.at_names.push(what);
        Ok(())
    }

    /// Whether the `@` name `name` is defined.
    pub(super) fn is_defined(&self, name: &str) -> bool {
        self.at(name).is_some()
    }

    /// What the `@` name `name` is, if it is defined.
    fn at(&self, name: &str) -> Option<AtName> {
        let id = self.at_ids.get(name)?;
        self.at_names.get(id as usize).copied()
    }
}

/// Resolve a syntax tree into a module and its source map, calling
/// `resolved` on each function as soon as its body is in the module (every
/// function's signature already is): a check that reads the function then
/// finds it still in the cache.
pub fn resolve_module<'a>(
    ast: &'a AstModule<'a>,
    file: &'a str,
    mut resolved: impl FnMut(&Module, FuncId),
) -> PResult<(Module, SourceMap)> {
    let (mut m, d, mut sm) = resolve_decls(ast, file)?;
    let mut scratch = Scratch::default();
    for (i, f) in ast.funcs.iter().enumerate() {
        resolve_body(&d, &mut m, ast, f, FuncId::new(i), &mut sm, &mut scratch)?;
        resolved(&m, FuncId::new(i));
    }
    Ok((m, sm))
}

/// Resolve body `f` of function `id` (whose header is in `m`) in place.
pub(super) fn resolve_body<'a>(
    d: &'a Decls<'a>,
    m: &mut Module,
    ast: &'a AstModule<'a>,
    f: &'a AstFunc<'a>,
    id: FuncId,
    sm: &mut SourceMap,
    scratch: &mut Scratch,
) -> PResult<()> {
    let i = id.index();
    sm.funcs.insert(id, f.pos);
    let func = std::mem::replace(&mut m.funcs[i], Function::new("", None));
    let func = FuncResolver::new(d, m, ast, func, id, sm, f).resolve(f, scratch)?;
    m.funcs[i] = func;
    Ok(())
}

impl<'a> Decls<'a> {
    /// No declarations yet; errors name `file`.
    pub(super) fn new(file: &'a str) -> Self {
        Decls {
            file,
            structs: FxHashMap::default(),
            fields: FxHashMap::default(),
            at_ids: Interner::default(),
            at_names: Vec::new(),
            func_rets: Vec::new(),
        }
    }

    /// Declare the name of type `s` (its fields come later: types may
    /// refer to types declared after them).
    pub(super) fn add_struct(&mut self, m: &mut Module, s: &AstStruct<'a>) -> PResult<()> {
        let id = m.add_struct(s.name.text, Vec::new());
        if self.structs.insert(s.name.text, id).is_some() {
            return Err(self.err(
                s.name.pos,
                format!("type '{}' is defined twice", s.name.text),
            ));
        }
        Ok(())
    }

    /// Resolve the fields of type `s`, the `sid`th.
    pub(super) fn struct_fields(
        &mut self,
        m: &mut Module,
        s: &AstStruct<'a>,
        sid: StructId,
    ) -> PResult<()> {
        let mut fields = Vec::new();
        for (k, (f, ty)) in s.fields.iter().enumerate() {
            if self.fields.insert((sid, f.text), k as u32).is_some() {
                return Err(self.err(
                    f.pos,
                    format!(
                        "field '{}' of type {} is defined twice",
                        f.text, s.name.text
                    ),
                ));
            }
            fields.push(crate::module::FieldDecl {
                name: f.text.to_string(),
                ty: self.resolve_type(ty)?,
            });
        }
        m.structs[sid.index()].fields = fields;
        Ok(())
    }

    /// Declare global `g`.
    pub(super) fn add_global(&mut self, m: &mut Module, g: &AstGlobal<'a>) -> PResult<()> {
        let ty = self.resolve_type(&g.ty)?;
        let id = m.add_global(g.name.text, ty);
        self.define_at(&g.name, AtName::Global(id))
    }

    /// Declare extern `e` (its effects come later: they may name globals
    /// declared after it).
    pub(super) fn add_extern(&mut self, m: &mut Module, e: &AstExtern<'a>) -> PResult<()> {
        let params = e
            .params
            .iter()
            .map(|t| self.resolve_type(t))
            .collect::<PResult<_>>()?;
        let ret = e.ret.as_ref().map(|t| self.resolve_type(t)).transpose()?;
        let id = ExternId::new(m.externs.len());
        self.define_at(&e.name, AtName::Extern(id))?;
        m.add_extern(Extern {
            name: e.name.text.to_string(),
            params,
            ret,
            effects: None,
        });
        Ok(())
    }

    /// Resolve the effects clauses of extern `e`, the `i`th.
    pub(super) fn extern_effects(
        &self,
        m: &mut Module,
        e: &AstExtern<'_>,
        i: usize,
    ) -> PResult<()> {
        if e.reads.is_none() && e.writes.is_none() {
            return Ok(());
        }
        let locs = |l: &Option<Vec<AstLoc>>| -> PResult<Vec<EffectLoc>> {
            l.iter()
                .flatten()
                .map(|l| resolve_loc(self, m, l))
                .collect()
        };
        let effects = ExternEffects {
            reads: locs(&e.reads)?,
            writes: locs(&e.writes)?,
        };
        m.externs[i].effects = Some(effects);
        Ok(())
    }

    /// Declare the function of header `f` (its parameter names in `ast`),
    /// without its body.
    pub(super) fn add_func(
        &mut self,
        m: &mut Module,
        ast: &AstModule<'_>,
        f: &AstFunc<'a>,
    ) -> PResult<FuncId> {
        let ret = f.ret.as_ref().map(|t| self.resolve_type(t)).transpose()?;
        let mut func = Function::new(f.name.text, ret);
        for (p, ty) in &f.params {
            let ty = self.resolve_type(ty)?;
            func.add_param(
                Some(ast.value_names[f.value_names.range()][p.id as usize]),
                ty,
            );
        }
        let id = m.add_func(func);
        self.define_at(&f.name, AtName::Func(id))?;
        self.func_rets.push(ret);
        Ok(id)
    }
}

/// The declarations of `ast` and every function's header, resolved: the
/// module without bodies, its name tables, and a source map ready for the
/// bodies.
fn resolve_decls<'a>(
    ast: &'a AstModule<'a>,
    file: &'a str,
) -> PResult<(Module, Decls<'a>, SourceMap)> {
    let mut m = Module::new();
    let mut d = Decls::new(file);
    for s in &ast.structs {
        d.add_struct(&mut m, s)?;
    }
    for (i, s) in ast.structs.iter().enumerate() {
        d.struct_fields(&mut m, s, StructId::new(i))?;
    }
    for g in &ast.globals {
        d.add_global(&mut m, g)?;
    }
    for e in &ast.externs {
        d.add_extern(&mut m, e)?;
    }
    // Sized once: a module of many small functions grows none of these.
    m.funcs.reserve_exact(ast.funcs.len());
    d.func_rets.reserve_exact(ast.funcs.len());
    d.at_names
        .reserve_exact(ast.globals.len() + ast.externs.len() + ast.funcs.len());
    for f in &ast.funcs {
        d.add_func(&mut m, ast, f)?;
    }
    // Effects clauses may name globals declared after the extern.
    for (i, e) in ast.externs.iter().enumerate() {
        d.extern_effects(&mut m, e, i)?;
    }
    let mut sm = SourceMap {
        file: file.to_string(),
        insts: vec![Vec::new(); ast.funcs.len()],
        ..SourceMap::default()
    };
    sm.funcs.reserve(ast.funcs.len());
    Ok((m, d, sm))
}

fn resolve_loc(d: &Decls, m: &Module, l: &AstLoc<'_>) -> PResult<EffectLoc> {
    match l {
        AstLoc::Field(ty, field) => {
            let Some(&s) = d.structs.get(ty.text) else {
                return Err(d.err(ty.pos, format!("unknown type '{}'", ty.text)));
            };
            let f = field_of(d, m, s, field)?;
            Ok(EffectLoc::Field(f))
        }
        AstLoc::Elements(t) => {
            let ty = d.resolve_type(t)?;
            match ty.elem() {
                Some(e) => Ok(EffectLoc::Elements(e)),
                None => Err(d.err(t.pos, "expected an array type '[E]'".to_string())),
            }
        }
        AstLoc::Global(g) => match d.at(g.text) {
            Some(AtName::Global(id)) => Ok(EffectLoc::Global(id)),
            _ => Err(d.err(g.pos, format!("unknown global @{}", g.text))),
        },
    }
}

fn field_of(d: &Decls, m: &Module, s: StructId, field: &Ident<'_>) -> PResult<FieldRef> {
    let index = d.fields.get(&(s, field.text)).copied();
    index.map(|index| FieldRef { ty: s, index }).ok_or_else(|| {
        d.err(
            field.pos,
            format!(
                "unknown field '{}' of type {}",
                field.text,
                m.struct_decl(s).name
            ),
        )
    })
}

/// Functions of more instructions than this have their arenas sized before
/// they are filled.
const BIG_FUNCTION: usize = 1024;

/// The per-function tables of [`FuncResolver`], kept from one function to
/// the next (cleared, not freed): a module of many small functions then
/// allocates none of them per function.
#[derive(Default)]
pub(super) struct Scratch {
    values: Vec<Option<Value>>,
    blocks: Vec<Option<Block>>,
    known: Vec<Option<Type>>,
}

/// Resolves one function body.
struct FuncResolver<'a> {
    d: &'a Decls<'a>,
    m: &'a Module,
    /// The syntax tree (its instructions and side vectors).
    ast: &'a AstModule<'a>,
    func: Function,
    id: FuncId,
    sm: &'a mut SourceMap,
    /// The value of each value name, by its [`Local`] id.
    values: Vec<Option<Value>>,
    /// The block of each label, by its [`Local`] id.
    blocks: Vec<Option<Block>>,
    /// Inferred types, by value index (`None` while unknown).
    known: Vec<Option<Type>>,
    /// The text of each value name, by its [`Local`] id.
    value_names: &'a [&'a str],
    /// The text of each label, by its [`Local`] id.
    label_names: &'a [&'a str],
}

impl<'a> FuncResolver<'a> {
    fn new(
        d: &'a Decls<'a>,
        m: &'a Module,
        ast: &'a AstModule<'a>,
        func: Function,
        id: FuncId,
        sm: &'a mut SourceMap,
        f: &'a AstFunc<'a>,
    ) -> Self {
        FuncResolver {
            d,
            m,
            ast,
            func,
            id,
            sm,
            values: Vec::new(),
            blocks: Vec::new(),
            known: Vec::new(),
            value_names: &ast.value_names[f.value_names.range()],
            label_names: &ast.label_names[f.label_names.range()],
        }
    }

    /// The text of value name `n`.
    fn vname(&self, n: &Local<'_>) -> &'a str {
        self.value_names[n.id as usize]
    }

    /// The written type `t`.
    fn texpr(&self, t: TypeIdx) -> &'a TypeExpr {
        &self.ast.types[t.0 as usize]
    }

    /// The instructions of block `b`.
    fn insts(&self, b: &AstBlock<'_>) -> &'a [AstInst<'a>] {
        &self.ast.insts[b.insts.range()]
    }

    /// The text of label `n`.
    fn lname(&self, n: &Local<'_>) -> &'a str {
        self.label_names[n.id as usize]
    }

    fn err(&self, pos: Pos, message: String) -> ParseError {
        self.d.err(pos, message)
    }

    /// The resolved function; its tables go back to `scratch`.
    fn resolve(mut self, f: &AstFunc<'a>, scratch: &mut Scratch) -> PResult<Function> {
        self.values = std::mem::take(&mut scratch.values);
        self.values.clear();
        self.values.resize(self.value_names.len(), None);
        self.blocks = std::mem::take(&mut scratch.blocks);
        self.blocks.clear();
        self.blocks.resize(self.label_names.len(), None);
        for (&v, (p, _)) in self.func.params.iter().zip(&f.params) {
            if self.values[p.id as usize].replace(v).is_some() {
                return Err(self.err(p.pos, format!("value %{} is defined twice", self.vname(p))));
            }
        }
        self.known = std::mem::take(&mut scratch.known);
        self.known.clear();
        self.known
            .extend(self.func.values.iter().map(|v| Some(v.ty)));
        let blocks = &self.ast.blocks[f.blocks.range()];
        let n_insts: usize = blocks.iter().map(|b| b.insts.len as usize).sum();
        self.sm.insts[self.id.index()].reserve_exact(n_insts);
        self.func.insts.reserve_exact(n_insts);
        self.func.values.reserve(n_insts);
        // In a big function each arena grows once: at 100k instructions the
        // vectors copied at every doubling were a tenth of parse + verify's
        // cache misses. (Names of up to 8 bytes, as `%v12345`, fit the text
        // reserved.) Small functions grow as before, in the cache.
        if n_insts > BIG_FUNCTION {
            let names = self.func.values.len() + n_insts;
            self.func.reserve_value_names(names, 8 * names);
            self.func.blocks.reserve_exact(blocks.len());
            self.func.layout.reserve_exact(blocks.len());
        }
        for b in blocks {
            let id = self.func.add_block(self.lname(&b.label));
            self.func.blocks[id.index()]
                .insts
                .reserve_exact(b.insts.len as usize);
            if self.blocks[b.label.id as usize].replace(id).is_some() {
                return Err(self.err(
                    b.label.pos,
                    format!("block label '{}' is defined twice", self.lname(&b.label)),
                ));
            }
        }
        // Step 1: place every instruction and name every result.
        let mut placed = Vec::with_capacity(n_insts);
        for (bi, b) in blocks.iter().enumerate() {
            let block = self.func.layout[bi];
            for inst in self.insts(b) {
                let produces = self.produces_value(inst)?;
                match (&inst.result, produces) {
                    (Some(r), false) => {
                        return Err(self.err(
                            r.pos,
                            format!(
                                "'{}' produces no value, so it cannot be assigned to %{}",
                                inst.op.mnemonic(),
                                self.vname(r)
                            ),
                        ))
                    }
                    (None, true) => {
                        return Err(self.err(
                            inst.pos,
                            format!(
                                "'{}' produces a value: write '%name = {} ...'",
                                inst.op.mnemonic(),
                                inst.op.mnemonic()
                            ),
                        ))
                    }
                    _ => {}
                }
                let (id, result) = self.func.append_inst(
                    block,
                    InstKind::Unreachable,
                    produces.then_some(Type::I64),
                );
                debug_assert_eq!(self.sm.insts[self.id.index()].len(), id.index());
                self.sm.insts[self.id.index()].push(inst.pos);
                if let (Some(r), Some(v)) = (&inst.result, result) {
                    if self.values[r.id as usize].replace(v).is_some() {
                        return Err(
                            self.err(r.pos, format!("value %{} is defined twice", self.vname(r)))
                        );
                    }
                    self.func.set_value_name(v, self.vname(r));
                }
                placed.push((id, result, inst));
            }
        }
        self.known.resize(self.func.values.len(), None);
        // Step 2: check that every name used exists and infer result types.
        self.infer_types(&placed)?;
        for (_, result, _) in &placed {
            if let Some(v) = result {
                if let Some(t) = self.known[v.index()] {
                    self.func.values[v.index()].ty = t;
                }
            }
        }
        // Step 3: fill in the instructions.
        for (id, _, inst) in &placed {
            let kind = self.build(&inst.op)?;
            self.func.insts[id.index()].kind = kind;
        }
        scratch.values = self.values;
        scratch.blocks = self.blocks;
        scratch.known = self.known;
        Ok(self.func)
    }

    fn produces_value(&self, inst: &AstInst<'_>) -> PResult<bool> {
        Ok(match &inst.op {
            AstOp::Binary(..)
            | AstOp::Unary(..)
            | AstOp::Select(..)
            | AstOp::New(_)
            | AstOp::NewArray(..)
            | AstOp::Load(..)
            | AstOp::Len(_)
            | AstOp::Phi(_) => true,
            AstOp::Call(callee, _) => self.callee(callee)?.1.is_some(),
            _ => false,
        })
    }

    fn callee(&self, name: &Ident<'_>) -> PResult<(Callee, Option<Type>)> {
        match self.d.at(name.text) {
            Some(AtName::Func(f)) => Ok((Callee::Func(f), self.d.func_rets[f.index()])),
            Some(AtName::Extern(e)) => Ok((Callee::Extern(e), self.m.externs[e.index()].ret)),
            Some(AtName::Global(_)) => Err(self.err(
                name.pos,
                format!("@{} is a global, not a function or extern", name.text),
            )),
            None => Err(self.err(
                name.pos,
                format!("unknown function or extern @{}", name.text),
            )),
        }
    }

    fn global(&self, name: &Ident<'_>) -> PResult<GlobalId> {
        match self.d.at(name.text) {
            Some(AtName::Global(g)) => Ok(g),
            Some(_) => Err(self.err(
                name.pos,
                format!("@{} is a function or extern, not a global", name.text),
            )),
            None => Err(self.err(name.pos, format!("unknown global @{}", name.text))),
        }
    }

    fn value(&self, name: &Local<'_>) -> PResult<Value> {
        self.values
            .get(name.id as usize)
            .copied()
            .flatten()
            .ok_or_else(|| self.err(name.pos, format!("unknown value %{}", self.vname(name))))
    }

    fn block(&self, name: &Local<'_>) -> PResult<Block> {
        self.blocks
            .get(name.id as usize)
            .copied()
            .flatten()
            .ok_or_else(|| {
                self.err(
                    name.pos,
                    format!("unknown block label '{}'", self.lname(name)),
                )
            })
    }

    fn check_operand(&self, o: &Operand<'_>) -> PResult<()> {
        match o {
            Operand::Value(n) => self.value(n).map(drop),
            Operand::TypedNull(t) => match self.d.resolve_type(self.texpr(*t))? {
                ty if ty.is_ref() => Ok(()),
                ty => Err(self.err(
                    self.texpr(*t).pos,
                    format!("'(null: {})' needs a reference type", self.m.type_name(ty)),
                )),
            },
            Operand::Int(_) | Operand::Null => Ok(()),
        }
    }

    fn check_base(&self, b: &AddrBase<'_>) -> PResult<()> {
        match b {
            AddrBase::Value(n) => self.value(n).map(drop),
            AddrBase::Null(t, _) => self.d.resolve_type(self.texpr(*t)).map(drop),
        }
    }

    fn check_addr(&self, a: &AstAddr<'_>) -> PResult<()> {
        match a {
            AstAddr::Field(b, _) => self.check_base(b),
            AstAddr::Elem(b, i) => {
                self.check_base(b)?;
                self.check_operand(i)
            }
            AstAddr::Global(g) => self.global(g).map(drop),
        }
    }

    fn check_names(&self, op: &AstOp<'_>) -> PResult<()> {
        let ops = |os: &[&Operand<'_>]| os.iter().try_for_each(|o| self.check_operand(o));
        match op {
            AstOp::Binary(_, a, b) => ops(&[a, b]),
            AstOp::Select(c, a, b) => ops(&[c, a, b]),
            AstOp::Unary(_, a)
            | AstOp::Len(a)
            | AstOp::Escape(a)
            | AstOp::Guard(a)
            | AstOp::NullCheck(a)
            | AstOp::NewArray(_, a) => ops(&[a]),
            AstOp::BoundsCheck(a, i) => ops(&[a, i]),
            AstOp::New(_) | AstOp::Unreachable => Ok(()),
            AstOp::Load(addr, _) => self.check_addr(addr),
            AstOp::Store(addr, v, _) => {
                self.check_addr(addr)?;
                ops(&[v])
            }
            AstOp::Call(_, args) => self.ast.args[args.range()]
                .iter()
                .try_for_each(|o| self.check_operand(o)),
            AstOp::Phi(entries) => {
                self.ast.phi_entries[entries.range()]
                    .iter()
                    .try_for_each(|(l, v)| {
                        self.block(l)?;
                        self.check_operand(v)
                    })
            }
            AstOp::Jmp(l) => self.block(l).map(drop),
            AstOp::Br(c, t, e) => {
                self.check_operand(c)?;
                self.block(t)?;
                self.block(e).map(drop)
            }
            AstOp::Ret(v) => v.iter().try_for_each(|o| self.check_operand(o)),
        }
    }

    /// The type of an operand, if already known.
    fn operand_type(&self, o: &Operand<'_>) -> Option<Type> {
        match o {
            Operand::Int(_) => Some(Type::I64),
            Operand::Null => Some(Type::NULL),
            Operand::TypedNull(t) => self.d.resolve_type(self.texpr(*t)).ok(),
            Operand::Value(n) => self
                .values
                .get(n.id as usize)
                .copied()
                .flatten()
                .and_then(|v| self.known[v.index()]),
        }
    }

    /// The type of a value-merging result (phi, select, copy): the first known
    /// non-null operand type; `null` when all are known to be null.
    fn merge_type<'o, 's: 'o>(&self, ops: impl Iterator<Item = &'o Operand<'s>>) -> Option<Type> {
        let mut all_known = true;
        for o in ops {
            match self.operand_type(o) {
                Some(t) if t != Type::NULL => return Some(t),
                Some(_) => {}
                None => all_known = false,
            }
        }
        all_known.then_some(Type::NULL)
    }

    /// The static type of an address base (`None` while still unknown).
    fn base_type(&self, base: &AddrBase<'_>) -> PResult<Option<Type>> {
        match base {
            AddrBase::Value(n) => Ok(self.known[self.value(n)?.index()]),
            AddrBase::Null(t, _) => Ok(Some(self.d.resolve_type(self.texpr(*t))?)),
        }
    }

    /// How to name an address base of type `ty` in errors.
    fn base_text(&self, base: &AddrBase<'_>, ty: Type) -> String {
        match base {
            AddrBase::Value(n) => format!("%{}", self.vname(n)),
            AddrBase::Null(..) => format!("(null: {})", self.m.type_name(ty)),
        }
    }

    fn base_struct(&self, base: &AddrBase<'_>, field: &Ident<'_>) -> PResult<Option<FieldRef>> {
        let Some(t) = self.base_type(base)? else {
            return Ok(None);
        };
        match t.as_struct() {
            Some(s) => field_of(self.d, self.m, s, field).map(Some),
            None => Err(self.err(
                base.pos(),
                format!(
                    "{} has type {}, which has no fields",
                    self.base_text(base, t),
                    self.m.type_name(t)
                ),
            )),
        }
    }

    fn base_elem(&self, base: &AddrBase<'_>) -> PResult<Option<Type>> {
        let Some(t) = self.base_type(base)? else {
            return Ok(None);
        };
        match t.elem() {
            Some(e) => Ok(Some(e)),
            None => Err(self.err(
                base.pos(),
                format!(
                    "{} has type {}, which is not an array",
                    self.base_text(base, t),
                    self.m.type_name(t)
                ),
            )),
        }
    }

    fn base_value(&mut self, base: &AddrBase<'_>) -> PResult<Value> {
        match base {
            AddrBase::Value(n) => self.value(n),
            AddrBase::Null(..) => Ok(self.func.null()),
        }
    }

    fn new_struct(&self, name: &Ident<'_>) -> PResult<StructId> {
        self.d
            .structs
            .get(name.text)
            .copied()
            .ok_or_else(|| self.err(name.pos, format!("unknown type '{}'", name.text)))
    }

    /// The result type of `op`, or `None` when it depends on a type not yet known.
    fn infer(&self, op: &AstOp<'_>) -> PResult<Option<Type>> {
        Ok(match op {
            AstOp::Unary(UnOp::Copy, a) => self.merge_type([a].into_iter()),
            AstOp::Select(_, a, b) => self.merge_type([a, b].into_iter()),
            AstOp::Phi(entries) => {
                self.merge_type(self.ast.phi_entries[entries.range()].iter().map(|(_, v)| v))
            }
            AstOp::New(name) => Some(Type::object(self.new_struct(name)?)),
            AstOp::NewArray(t, _) => Some(self.d.resolve_type(self.texpr(*t))?.array_of()),
            AstOp::Load(AstAddr::Field(b, f), _) => {
                self.base_struct(b, f)?.map(|f| self.m.field(f).ty)
            }
            AstOp::Load(AstAddr::Elem(b, _), _) => self.base_elem(b)?,
            AstOp::Load(AstAddr::Global(g), _) => Some(self.m.globals[self.global(g)?.index()].ty),
            AstOp::Call(callee, _) => self.callee(callee)?.1,
            _ => Some(Type::I64),
        })
    }

    /// Check the names each instruction uses (before its type is inferred)
    /// and infer every result type: the first round does both in one walk of
    /// the syntax tree, later rounds retry what waited for a later definition.
    fn infer_types(
        &mut self,
        placed: &[(crate::Inst, Option<Value>, &AstInst<'_>)],
    ) -> PResult<()> {
        let mut pending: Vec<(Value, &AstInst)> = Vec::new();
        let mut before = 0;
        for &(_, r, inst) in placed {
            self.check_names(&inst.op)?;
            if let Some(v) = r {
                before += 1;
                match self.infer(&inst.op)? {
                    Some(t) => self.known[v.index()] = Some(t),
                    None => pending.push((v, inst)),
                }
            }
        }
        if !pending.is_empty() {
            // Uses came before definitions (blocks laid out out of order):
            // order the rest definitions-first, so that the next round
            // settles all but cycles instead of one link of each chain.
            pending = self.dependencies_first(pending);
        }
        let mut progressed = pending.len() < before;
        while !pending.is_empty() {
            if !progressed {
                self.default_merges(&pending)?;
                pending.retain(|(v, _)| self.known[v.index()].is_none());
                if pending.is_empty() {
                    break;
                }
            }
            let before = pending.len();
            let mut still = Vec::new();
            for (v, inst) in pending {
                match self.infer(&inst.op)? {
                    Some(t) => self.known[v.index()] = Some(t),
                    None => still.push((v, inst)),
                }
            }
            pending = still;
            progressed = pending.len() < before;
        }
        Ok(())
    }

    /// A round made no progress: merges that only see each other (or null)
    /// are null; without such a merge, a definition depends on itself.
    fn default_merges(&mut self, pending: &[(Value, &AstInst<'_>)]) -> PResult<()> {
        let mut defaulted = false;
        for (v, inst) in pending {
            if matches!(
                inst.op,
                AstOp::Phi(_) | AstOp::Select(..) | AstOp::Unary(UnOp::Copy, _)
            ) {
                self.known[v.index()] = Some(Type::NULL);
                defaulted = true;
            }
        }
        if !defaulted {
            // The first in the layout (results are numbered in layout order).
            let (_, inst) = *pending.iter().min_by_key(|(v, _)| v.index()).unwrap();
            let name = inst.result.as_ref().map_or("?", |r| self.vname(r));
            return Err(self.err(
                inst.pos,
                format!("cannot infer the type of %{name}: its definition depends on itself"),
            ));
        }
        Ok(())
    }

    /// The values whose types the inferred type of `op` waits for.
    fn type_deps(&self, op: &AstOp<'_>, mut f: impl FnMut(Value)) {
        let mut operand = |o: &Operand<'_>| {
            if let Operand::Value(n) = o {
                if let Ok(v) = self.value(n) {
                    f(v);
                }
            }
        };
        match op {
            AstOp::Unary(UnOp::Copy, a) => operand(a),
            AstOp::Select(_, a, b) => {
                operand(a);
                operand(b);
            }
            AstOp::Phi(entries) => self.ast.phi_entries[entries.range()]
                .iter()
                .for_each(|(_, v)| operand(v)),
            AstOp::Load(
                AstAddr::Field(AddrBase::Value(n), _) | AstAddr::Elem(AddrBase::Value(n), _),
                _,
            ) => {
                if let Ok(v) = self.value(n) {
                    f(v);
                }
            }
            _ => {}
        }
    }

    /// `pending` reordered so that each value comes after the pending values
    /// its type waits for (a depth-first post-order; cycles are cut anywhere).
    fn dependencies_first<'i>(
        &self,
        pending: Vec<(Value, &'i AstInst<'a>)>,
    ) -> Vec<(Value, &'i AstInst<'a>)> {
        const NONE: u32 = u32::MAX;
        let mut slot = vec![NONE; self.known.len()];
        for (i, (v, _)) in pending.iter().enumerate() {
            slot[v.index()] = i as u32;
        }
        // The pending dependencies of each pending value, flattened.
        let mut start = Vec::with_capacity(pending.len() + 1);
        let mut deps: Vec<u32> = Vec::new();
        for (_, inst) in &pending {
            start.push(deps.len());
            self.type_deps(&inst.op, |d| {
                if let Some(&s) = slot.get(d.index()) {
                    if s != NONE {
                        deps.push(s);
                    }
                }
            });
        }
        start.push(deps.len());
        let mut order = Vec::with_capacity(pending.len());
        let mut seen = vec![false; pending.len()];
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for root in 0..pending.len() {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            stack.push((root as u32, start[root]));
            while let Some(top) = stack.last_mut() {
                let (node, next) = (top.0 as usize, top.1);
                if next < start[node + 1] {
                    top.1 += 1;
                    let d = deps[next] as usize;
                    if !seen[d] {
                        seen[d] = true;
                        stack.push((d as u32, start[d]));
                    }
                } else {
                    order.push(node);
                    stack.pop();
                }
            }
        }
        order.into_iter().map(|i| pending[i]).collect()
    }

    fn operand(&mut self, o: &Operand<'_>) -> PResult<Value> {
        Ok(match o {
            Operand::Value(n) => self.value(n)?,
            Operand::Int(i) => self.func.iconst(*i),
            Operand::Null | Operand::TypedNull(_) => self.func.null(),
        })
    }

    fn addr(&mut self, a: &AstAddr<'_>) -> PResult<Addr> {
        Ok(match a {
            AstAddr::Field(b, f) => {
                let base = self.base_value(b)?;
                let field = self.base_struct(b, f)?.ok_or_else(|| {
                    self.err(
                        b.pos(),
                        "the type of the address base is unknown".to_string(),
                    )
                })?;
                Addr::Field { base, field }
            }
            AstAddr::Elem(b, i) => {
                let base = self.base_value(b)?;
                if self.base_elem(b)?.is_none() {
                    return Err(self.err(
                        b.pos(),
                        "the type of the address base is unknown".to_string(),
                    ));
                }
                let index = self.operand(i)?;
                Addr::Elem { base, index }
            }
            AstAddr::Global(g) => Addr::Global(self.global(g)?),
        })
    }

    fn build(&mut self, op: &AstOp<'_>) -> PResult<InstKind> {
        Ok(match op {
            AstOp::Binary(o, a, b) => InstKind::Binary(*o, self.operand(a)?, self.operand(b)?),
            AstOp::Unary(o, a) => InstKind::Unary(*o, self.operand(a)?),
            AstOp::Select(c, a, b) => {
                InstKind::Select(self.operand(c)?, self.operand(a)?, self.operand(b)?)
            }
            AstOp::New(n) => InstKind::New(self.new_struct(n)?),
            AstOp::NewArray(t, n) => InstKind::NewArray {
                elem: self.d.resolve_type(self.texpr(*t))?,
                len: self.operand(n)?,
            },
            AstOp::Load(a, volatile) => InstKind::Load {
                addr: self.addr(a)?,
                volatile: *volatile,
            },
            AstOp::Store(a, v, volatile) => InstKind::Store {
                addr: self.addr(a)?,
                value: self.operand(v)?,
                volatile: *volatile,
            },
            AstOp::Len(a) => InstKind::Len(self.operand(a)?),
            AstOp::Call(c, args) => InstKind::Call {
                callee: self.callee(c)?.0,
                args: self.ast.args[args.range()]
                    .iter()
                    .map(|a| self.operand(a))
                    .collect::<PResult<_>>()?,
            },
            AstOp::Escape(a) => InstKind::Escape(self.operand(a)?),
            AstOp::Guard(a) => InstKind::Guard(self.operand(a)?),
            AstOp::NullCheck(a) => InstKind::NullCheck(self.operand(a)?),
            AstOp::BoundsCheck(a, i) => InstKind::BoundsCheck(self.operand(a)?, self.operand(i)?),
            AstOp::Phi(entries) => InstKind::Phi(
                self.ast.phi_entries[entries.range()]
                    .iter()
                    .map(|(l, v)| Ok((self.block(l)?, self.operand(v)?)))
                    .collect::<PResult<_>>()?,
            ),
            AstOp::Jmp(l) => InstKind::Jmp(self.block(l)?),
            AstOp::Br(c, t, e) => InstKind::Br(self.operand(c)?, self.block(t)?, self.block(e)?),
            AstOp::Ret(v) => InstKind::Ret(v.as_ref().map(|v| self.operand(v)).transpose()?),
            AstOp::Unreachable => InstKind::Unreachable,
        })
    }
}
