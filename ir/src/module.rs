//! Modules: type declarations, globals, externs and functions.

use crate::decl_list::DeclList;
use crate::entities::{ExternId, FuncId, GlobalId, StructId};
use crate::function::Function;
use crate::inst::FieldRef;
use crate::types::{Base, Type};

/// A field of a declared type.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FieldDecl {
    /// The field's name.
    pub name: String,
    /// The field's type (`i64` or a reference).
    pub ty: Type,
}

/// `type T { f: i64, g: T }`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct StructDecl {
    /// The type's name.
    pub name: String,
    /// Its fields, in declaration order.
    pub fields: Vec<FieldDecl>,
}

/// `global @g: T`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Global {
    /// The name without `@`.
    pub name: String,
    /// The global's type.
    pub ty: Type,
}

/// One location an extern declares it reads or writes.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum EffectLoc {
    /// `Type.field`.
    Field(FieldRef),
    /// `[E]`: every element of every array with element type `E` (stored here as `E`).
    Elements(Type),
    /// `@global`.
    Global(GlobalId),
}

/// The declared effects of an extern: it reads and writes nothing else.
/// `reads(none)` is an empty list; an absent `writes(...)` clause means it writes nothing.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct ExternEffects {
    /// What it may read.
    pub reads: Vec<EffectLoc>,
    /// What it may write.
    pub writes: Vec<EffectLoc>,
}

/// `extern @e(i64, Point) -> i64 reads(Point.x)`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Extern {
    /// The name without `@`.
    pub name: String,
    /// Parameter types.
    pub params: Vec<Type>,
    /// Return type, if any.
    pub ret: Option<Type>,
    /// Declared effects; `None` means it may read and write anything in reach.
    pub effects: Option<ExternEffects>,
}

/// A whole module. Its declarations are [`DeclList`]s: cloning a module
/// shares them (passes never change them) and copies the functions.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Module {
    /// Declared object types.
    pub structs: DeclList<StructDecl>,
    /// Globals, in declaration order.
    pub globals: DeclList<Global>,
    /// Extern declarations.
    pub externs: DeclList<Extern>,
    /// Functions.
    pub funcs: Vec<Function>,
}

impl Module {
    /// An empty module.
    pub fn new() -> Module {
        Module::default()
    }

    /// A 64-bit hash of the functions' code: blocks and their instruction
    /// lists, the layout, every instruction and every value's definition and
    /// type. Names (labels, value names) and declarations are left out: passes
    /// never change them. A module whose fingerprint a pass did not change is
    /// (up to a 2^-64 collision) the module it was, so the pass manager does not
    /// verify it again.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint_of(self.funcs.iter().map(Function::fingerprint))
    }

    /// [`Module::fingerprint`] from its functions' fingerprints
    /// ([`Function::fingerprint`], in order), for callers that keep those.
    pub fn fingerprint_of(&self, funcs: impl IntoIterator<Item = u64>) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        (self.structs.len(), self.globals.len(), self.externs.len()).hash(&mut h);
        for f in funcs {
            h.write_u64(f);
        }
        h.finish()
    }

    /// A 64-bit hash of what checking one function depends on besides its own
    /// code: the declarations (types, globals, externs, with their names) and
    /// every function's name and signature. Two modules with equal
    /// declaration fingerprints and an equal [`Function::fingerprint`] of `f`
    /// give the same verdict on `f` (`verify::verify_function`).
    pub fn decls_fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        h.write_u64(self.structs.fingerprint());
        h.write_u64(self.globals.fingerprint());
        h.write_u64(self.externs.fingerprint());
        self.funcs.len().hash(&mut h);
        for f in &self.funcs {
            f.name.hash(&mut h);
            f.ret.hash(&mut h);
            f.params.len().hash(&mut h);
            for p in &f.params {
                f.values.get(p.index()).map(|v| v.ty).hash(&mut h);
            }
        }
        h.finish()
    }

    /// The declaration of `s`.
    pub fn struct_decl(&self, s: StructId) -> &StructDecl {
        &self.structs[s.index()]
    }

    /// The declaration of field `f`.
    pub fn field(&self, f: FieldRef) -> &FieldDecl {
        &self.structs[f.ty.index()].fields[f.index as usize]
    }

    /// The type named `name`.
    pub fn struct_by_name(&self, name: &str) -> Option<StructId> {
        self.structs
            .iter()
            .position(|s| s.name == name)
            .map(StructId::new)
    }

    /// Field `name` of type `s`.
    pub fn field_by_name(&self, s: StructId, name: &str) -> Option<FieldRef> {
        self.structs[s.index()]
            .fields
            .iter()
            .position(|f| f.name == name)
            .map(|i| FieldRef {
                ty: s,
                index: i as u32,
            })
    }

    /// The global named `name` (without `@`).
    pub fn global_by_name(&self, name: &str) -> Option<GlobalId> {
        self.globals
            .iter()
            .position(|g| g.name == name)
            .map(GlobalId::new)
    }

    /// The extern named `name` (without `@`).
    pub fn extern_by_name(&self, name: &str) -> Option<ExternId> {
        self.externs
            .iter()
            .position(|e| e.name == name)
            .map(ExternId::new)
    }

    /// The function named `name` (without `@`).
    pub fn func_by_name(&self, name: &str) -> Option<FuncId> {
        self.funcs
            .iter()
            .position(|f| f.name == name)
            .map(FuncId::new)
    }

    /// The function `f`.
    pub fn func(&self, f: FuncId) -> &Function {
        &self.funcs[f.index()]
    }

    /// Add a type declaration.
    pub fn add_struct(&mut self, name: &str, fields: Vec<(&str, Type)>) -> StructId {
        let id = StructId::new(self.structs.len());
        self.structs.push(StructDecl {
            name: name.to_string(),
            fields: fields
                .into_iter()
                .map(|(n, ty)| FieldDecl {
                    name: n.to_string(),
                    ty,
                })
                .collect(),
        });
        id
    }

    /// Add a global.
    pub fn add_global(&mut self, name: &str, ty: Type) -> GlobalId {
        let id = GlobalId::new(self.globals.len());
        self.globals.push(Global {
            name: name.to_string(),
            ty,
        });
        id
    }

    /// Add an extern declaration.
    pub fn add_extern(&mut self, ext: Extern) -> ExternId {
        let id = ExternId::new(self.externs.len());
        self.externs.push(ext);
        id
    }

    /// Add a function.
    pub fn add_func(&mut self, f: Function) -> FuncId {
        let id = FuncId::new(self.funcs.len());
        self.funcs.push(f);
        id
    }

    /// The text form of a type (`i64`, `Point`, `[[i64]]`).
    pub fn type_name(&self, ty: Type) -> String {
        let base = match ty.base {
            Base::I64 => "i64".to_string(),
            Base::Struct(s) => self
                .structs
                .get(s.index())
                .map(|d| d.name.clone())
                .unwrap_or_else(|| format!("<bad type {}>", s.0)),
            Base::Null => return "null".to_string(),
        };
        let mut out = String::new();
        for _ in 0..ty.dims {
            out.push('[');
        }
        out.push_str(&base);
        for _ in 0..ty.dims {
            out.push(']');
        }
        out
    }

    /// The text form of a field, `Type.field`.
    pub fn field_name(&self, f: FieldRef) -> String {
        format!("{}.{}", self.structs[f.ty.index()].name, self.field(f).name)
    }
}
