//! Resolving a module while it is parsed, for well-formed texts.
//!
//! [`super::resolve`] resolves a function body once the whole text is a
//! syntax tree; in a big module that tree has long left the cache when the
//! resolver reads it. Here each item is resolved as soon as it is parsed,
//! and a function body as soon as every `@` name it uses is declared (at
//! once when it calls only functions written before it, after the next
//! function when it calls that one), while its tree is still in the cache;
//! the tree of the bodies resolved is then dropped and its memory reused.
//!
//! Only the well-formed way is taken here: at the first problem of any
//! kind (a syntax or name error, a type used before its declaration, a
//! body still waiting at the end of the text) this gives up, and the text
//! is parsed again the usual way, so that every error is exactly the one
//! that way reports. On success the module and source map are those of
//! [`super::resolve::resolve_module`]: every declaration gets the same id
//! in the same order, and a body is resolved only once every declaration it
//! names is in the module, with the same contents as at the end.

use super::ast::{AstFunc, AstModule};
use super::resolve::{resolve_body, Decls, Scratch};
use super::syntax::{Event, Item};
use crate::entities::{FuncId, StructId};
use crate::error::{ParseError, Pos};
use crate::module::Module;
use crate::source_map::SourceMap;
use rustc_hash::FxHashMap;

type PResult<T> = Result<T, ParseError>;

/// A parsed function whose body waits for `@` names not declared yet.
struct Pending<'s> {
    id: FuncId,
    f: AstFunc<'s>,
    /// How many of its uses of `@` names are still undeclared.
    missing: u32,
}

/// The state of a module being resolved as it is parsed.
pub(super) struct Streaming<'s, F> {
    m: Module,
    d: Decls<'s>,
    sm: SourceMap,
    scratch: Scratch,
    /// The functions parsed since the tree was last dropped (`None` once
    /// resolved).
    pending: Vec<Option<Pending<'s>>>,
    /// How many of `pending` are not resolved yet.
    unresolved: usize,
    /// The entries of `pending` waiting for each undeclared `@` name, once
    /// per use.
    waiting: FxHashMap<&'s str, Vec<u32>>,
    /// Entries of `pending` whose names are all declared.
    ready: Vec<u32>,
    /// Called on each function once its body is in the module.
    resolved: F,
}

impl<'s, F: FnMut(&Module, FuncId)> Streaming<'s, F> {
    /// An empty module; errors name `file`; `resolved` sees each function
    /// once its body is resolved.
    pub(super) fn new(file: &'s str, resolved: F) -> Self {
        Streaming {
            m: Module::new(),
            d: Decls::new(file),
            sm: SourceMap {
                file: file.to_string(),
                ..SourceMap::default()
            },
            scratch: Scratch::default(),
            pending: Vec::new(),
            unresolved: 0,
            waiting: FxHashMap::default(),
            ready: Vec::new(),
            resolved,
        }
    }

    /// Resolve what `event` brings, just parsed (a function's body in
    /// `ast`), and every body it completes the declarations of. `true` when
    /// no body of `ast` is still waiting (the tree may be dropped).
    pub(super) fn event(&mut self, ast: &AstModule<'s>, event: Event<'_, 's>) -> PResult<bool> {
        let item = match event {
            Event::Header(f) => {
                // Declared before its body: a body calling the function
                // written after it is resolved before that function's body
                // is parsed.
                self.d.add_func(&mut self.m, ast, f)?;
                self.sm.insts.push(Vec::new());
                self.declared(f.name.text);
                return self.resolve_ready(ast);
            }
            Event::Item(item) => item,
        };
        match item {
            Item::Struct(s) => {
                // A field of a type declared further down: give up.
                let sid = StructId::new(self.m.structs.len());
                self.d.add_struct(&mut self.m, &s)?;
                self.d.struct_fields(&mut self.m, &s, sid)?;
            }
            Item::Global(g) => {
                self.d.add_global(&mut self.m, &g)?;
                self.declared(g.name.text);
            }
            Item::Extern(e) => {
                let i = self.m.externs.len();
                self.d.add_extern(&mut self.m, &e)?;
                // An effect on a global declared further down: give up.
                self.d.extern_effects(&mut self.m, &e, i)?;
                self.declared(e.name.text);
            }
            Item::Func(f) => {
                let id = FuncId::new(self.m.funcs.len() - 1);
                let slot = self.pending.len() as u32;
                let mut missing = 0;
                for &name in &ast.at_uses[f.at_uses.range()] {
                    if !self.d.is_defined(name) {
                        self.waiting.entry(name).or_default().push(slot);
                        missing += 1;
                    }
                }
                self.pending.push(Some(Pending { id, f, missing }));
                self.unresolved += 1;
                if missing == 0 {
                    self.ready.push(slot);
                }
            }
        }
        self.resolve_ready(ast)
    }

    /// Resolve the bodies whose names are all declared; `true` when none
    /// is left waiting.
    fn resolve_ready(&mut self, ast: &AstModule<'s>) -> PResult<bool> {
        while let Some(slot) = self.ready.pop() {
            let Some(p) = self.pending[slot as usize].take() else {
                continue;
            };
            let d = &self.d;
            resolve_body(
                d,
                &mut self.m,
                ast,
                &p.f,
                p.id,
                &mut self.sm,
                &mut self.scratch,
            )?;
            (self.resolved)(&self.m, p.id);
            self.unresolved -= 1;
        }
        if self.unresolved == 0 {
            self.pending.clear();
            return Ok(true);
        }
        Ok(false)
    }

    /// `@name` is declared now: the bodies waiting for it wait for one name
    /// fewer.
    fn declared(&mut self, name: &str) {
        let Some(slots) = self.waiting.remove(name) else {
            return;
        };
        for slot in slots {
            if let Some(p) = &mut self.pending[slot as usize] {
                p.missing -= 1;
                if p.missing == 0 {
                    self.ready.push(slot);
                }
            }
        }
    }

    /// The module and its source map, once the whole text is parsed; an
    /// error if a body still waits (for a name never declared).
    pub(super) fn finish(self) -> PResult<(Module, SourceMap)> {
        if self.unresolved != 0 {
            return Err(self.d.err(
                Pos { line: 1, col: 1 },
                "a body waits for an undeclared name".to_string(),
            ));
        }
        Ok((self.m, self.sm))
    }
}
