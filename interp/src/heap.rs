//! The heap: one flat arena of `u64` words that native code can share.
//!
//! Layout: word 0 is reserved (reference 0 is `null`); words `1..1+G` are the
//! globals block (global `g` lives at word `1+g`); objects follow. A reference
//! is the word offset of an object's header. A struct object is its header
//! followed by one word per field; an array is its header, its length, then one
//! word per element. Every word starts at zero (`0` / `null`).
//!
//! Header encoding: a struct of type `s` is `s << 1`; an array of type `[E]`
//! (with `[E]` = base `b`, `d` brackets) is `1 | d << 1 | code(b) << 9` where
//! `code(i64) = 0` and `code(T) = T + 1`.

use crate::config::{TrapKind, MAX_ARRAY_LEN};
use ir::{Base, InputObject, InputSpec, InputValue, Module, StructId, Type};

/// The word where the globals block starts.
pub const GLOBALS_BASE: usize = 1;

/// The header word of a struct object of type `s`.
pub fn struct_header(s: StructId) -> u64 {
    (s.0 as u64) << 1
}

/// The header word of an array whose elements have type `elem`.
pub fn array_header(elem: Type) -> u64 {
    let arr = elem.array_of();
    let code = match arr.base {
        Base::Struct(s) => s.0 as u64 + 1,
        _ => 0,
    };
    1 | (arr.dims as u64) << 1 | code << 9
}

/// The header word of objects of reference type `ty` (`None` for `i64`/`null`).
pub fn header_of_type(ty: Type) -> Option<u64> {
    if let Some(s) = ty.as_struct() {
        Some(struct_header(s))
    } else {
        ty.elem().map(array_header)
    }
}

/// What a header word says about its object.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Shape {
    /// A struct object of this type.
    Struct(StructId),
    /// An array with this element type.
    Array(Type),
}

/// Decode a header word.
pub fn decode_header(h: u64) -> Shape {
    if h & 1 == 0 {
        Shape::Struct(StructId((h >> 1) as u32))
    } else {
        let dims = ((h >> 1) & 0xff) as u8;
        let code = h >> 9;
        let base = if code == 0 {
            Base::I64
        } else {
            Base::Struct(StructId((code - 1) as u32))
        };
        Shape::Array(Type {
            base,
            dims: dims - 1,
        })
    }
}

/// The field types of every struct and the types of the globals, for walking the heap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Per struct, its field types in order.
    pub fields: Vec<Vec<Type>>,
    /// Per global, its type.
    pub globals: Vec<Type>,
    /// Per struct, the number of fields of all structs before it, then the
    /// total: field `k` of struct `s` has the flat index `field_base[s] + k`.
    pub field_base: Vec<usize>,
}

impl Layout {
    /// The layout of `m`'s types and globals.
    pub fn new(m: &Module) -> Layout {
        let mut field_base = Vec::with_capacity(m.structs.len() + 1);
        let mut total = 0;
        for s in &m.structs {
            field_base.push(total);
            total += s.fields.len();
        }
        field_base.push(total);
        Layout {
            fields: m
                .structs
                .iter()
                .map(|s| s.fields.iter().map(|f| f.ty).collect())
                .collect(),
            globals: m.globals.iter().map(|g| g.ty).collect(),
            field_base,
        }
    }

    /// The flat index of field `k` of struct `s` (see `field_base`), if it exists.
    pub fn flat_field(&self, s: StructId, k: usize) -> Option<usize> {
        let base = *self.field_base.get(s.index())?;
        let end = *self.field_base.get(s.index() + 1)?;
        let i = base + k;
        (i < end).then_some(i)
    }

    /// The number of fields of all structs together.
    pub fn field_count(&self) -> usize {
        self.field_base.last().copied().unwrap_or(0)
    }

    /// The slots of the object at `obj`: its shape, the word of slot 0 and the slot count.
    pub fn slots(&self, words: &[u64], obj: u64) -> (Shape, usize, usize) {
        let o = obj as usize;
        let shape = decode_header(words[o]);
        match shape {
            Shape::Struct(s) => (shape, o + 1, self.fields[s.index()].len()),
            Shape::Array(_) => (shape, o + 2, words[o + 1] as usize),
        }
    }

    /// The type of slot `k` of an object with shape `shape`.
    pub fn slot_type(&self, shape: Shape, k: usize) -> Type {
        match shape {
            Shape::Struct(s) => self.fields[s.index()][k],
            Shape::Array(e) => e,
        }
    }
}

/// The arena and its budget.
#[derive(Clone, Debug)]
pub struct Heap {
    /// Every word of the arena.
    pub words: Vec<u64>,
    /// The most words the arena may hold.
    pub budget: usize,
}

impl Heap {
    /// A heap holding only the reserved word and a zeroed globals block.
    pub fn new(globals: usize, budget: usize) -> Result<Heap, TrapKind> {
        Heap::new_in(Vec::new(), globals, budget)
    }

    /// Like [`Heap::new`], reusing `words`' allocation for the arena.
    pub fn new_in(mut words: Vec<u64>, globals: usize, budget: usize) -> Result<Heap, TrapKind> {
        let size = GLOBALS_BASE + globals;
        if size > budget {
            return Err(TrapKind::HeapExhausted);
        }
        words.clear();
        words.resize(size, 0);
        Ok(Heap { words, budget })
    }

    fn bump(&mut self, size: usize, header: u64) -> Result<u64, TrapKind> {
        let at = self.words.len();
        if size > self.budget - at {
            return Err(TrapKind::HeapExhausted);
        }
        self.words.resize(at + size, 0);
        self.words[at] = header;
        Ok(at as u64)
    }

    /// `new T` for a struct with `nfields` fields.
    pub fn alloc_struct(&mut self, s: StructId, nfields: usize) -> Result<u64, TrapKind> {
        self.bump(1 + nfields, struct_header(s))
    }

    /// `newarray E, len` with a pre-computed header.
    #[inline]
    pub fn alloc_array_with_header(&mut self, header: u64, len: i64) -> Result<u64, TrapKind> {
        if !(0..=MAX_ARRAY_LEN).contains(&len) {
            return Err(TrapKind::BadLength);
        }
        let at = self.bump(2 + len as usize, header)?;
        self.words[at as usize + 1] = len as u64;
        Ok(at)
    }

    /// `newarray elem, len`.
    pub fn alloc_array(&mut self, elem: Type, len: i64) -> Result<u64, TrapKind> {
        self.alloc_array_with_header(array_header(elem), len)
    }
}

/// The initial state built from an input spec: the heap and the parameter words.
pub struct InitialState {
    /// The heap with the globals and the input objects.
    pub heap: Heap,
    /// One word per parameter.
    pub params: Vec<u64>,
}

/// Why an input spec does not fit a function.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

fn check_value(
    spec: &InputSpec,
    v: InputValue,
    ty: Type,
    what: &dyn Fn() -> String,
) -> Result<(), InputError> {
    let ok = match v {
        InputValue::Int(_) => ty.is_int(),
        InputValue::Null => ty.is_ref(),
        InputValue::Obj(i) => match spec.objects.get(i) {
            Some(InputObject::Struct { ty: s, .. }) => ty.as_struct() == Some(*s),
            Some(InputObject::Array { elem, .. }) => ty.elem() == Some(*elem),
            None => false,
        },
    };
    if ok {
        Ok(())
    } else {
        Err(InputError(format!(
            "{}: value {v:?} does not fit type {ty:?}",
            what()
        )))
    }
}

/// Check that `spec` fits `param_types` and the module's globals and objects.
pub fn validate_inputs(
    m: &Module,
    param_types: &[Type],
    spec: &InputSpec,
) -> Result<(), InputError> {
    if spec.params.len() != param_types.len() {
        return Err(InputError(format!(
            "expected {} parameters, the input binds {}",
            param_types.len(),
            spec.params.len()
        )));
    }
    if !spec.globals.is_empty() && spec.globals.len() != m.globals.len() {
        return Err(InputError(format!(
            "expected {} globals, the input gives {}",
            m.globals.len(),
            spec.globals.len()
        )));
    }
    for (i, (&v, &ty)) in spec.params.iter().zip(param_types).enumerate() {
        check_value(spec, v, ty, &|| format!("parameter {i}"))?;
    }
    for (i, (&v, g)) in spec.globals.iter().zip(&m.globals).enumerate() {
        check_value(spec, v, g.ty, &|| format!("global {i}"))?;
    }
    for (i, obj) in spec.objects.iter().enumerate() {
        match obj {
            InputObject::Struct { ty, fields } => {
                let decl = m
                    .structs
                    .get(ty.index())
                    .ok_or_else(|| InputError(format!("object {i}: unknown type")))?;
                if fields.len() != decl.fields.len() {
                    return Err(InputError(format!("object {i}: wrong field count")));
                }
                for (k, (&v, f)) in fields.iter().zip(&decl.fields).enumerate() {
                    check_value(spec, v, f.ty, &|| format!("object {i} field {k}"))?;
                }
            }
            InputObject::Array { elem, elems } => {
                if elems.len() as i64 > MAX_ARRAY_LEN {
                    return Err(InputError(format!("object {i}: array too long")));
                }
                if let Base::Struct(s) = elem.base {
                    if s.index() >= m.structs.len() {
                        return Err(InputError(format!("object {i}: unknown type")));
                    }
                }
                for (k, &v) in elems.iter().enumerate() {
                    check_value(spec, v, *elem, &|| format!("object {i} element {k}"))?;
                }
            }
        }
    }
    Ok(())
}

/// Build the initial heap and parameter words from a validated spec.
/// Fails with `heap_exhausted` when the inputs do not fit the budget.
pub fn build_initial(
    layout: &Layout,
    spec: &InputSpec,
    budget: usize,
) -> Result<InitialState, TrapKind> {
    let mut params = Vec::new();
    let heap = build_initial_in(
        layout,
        spec,
        budget,
        Vec::new(),
        &mut params,
        &mut Vec::new(),
    )?;
    Ok(InitialState { heap, params })
}

/// [`build_initial`] into reused buffers: the arena reuses `words`' allocation,
/// `params` receives one word per parameter, `addrs` is scratch.
pub fn build_initial_in(
    layout: &Layout,
    spec: &InputSpec,
    budget: usize,
    words: Vec<u64>,
    params: &mut Vec<u64>,
    addrs: &mut Vec<u64>,
) -> Result<Heap, TrapKind> {
    let mut heap = Heap::new_in(words, layout.globals.len(), budget)?;
    fill_initial(&mut heap, spec, params, addrs)?;
    Ok(heap)
}

/// An arena objects can be allocated in: the interpreter's [`Heap`], or
/// another word-addressed arena with the same header layout (the native
/// executor's strict heap, whose objects sit against guard pages).
pub trait Arena {
    /// `new T` for a struct with `nfields` fields: the new reference.
    fn alloc_struct(&mut self, s: StructId, nfields: usize) -> Result<u64, TrapKind>;
    /// `newarray elem, len`: the new reference.
    fn alloc_array(&mut self, elem: Type, len: i64) -> Result<u64, TrapKind>;
    /// Write `v` at word `at` (a word of an allocated object or a global).
    fn set_word(&mut self, at: usize, v: u64);
}

impl Arena for Heap {
    fn alloc_struct(&mut self, s: StructId, nfields: usize) -> Result<u64, TrapKind> {
        Heap::alloc_struct(self, s, nfields)
    }
    fn alloc_array(&mut self, elem: Type, len: i64) -> Result<u64, TrapKind> {
        Heap::alloc_array(self, elem, len)
    }
    fn set_word(&mut self, at: usize, v: u64) {
        self.words[at] = v;
    }
}

/// Allocate the objects of the validated `spec` in `arena` (whose globals
/// block is already there, zeroed), fill them and the globals, and put one
/// word per parameter in `params`; `addrs` is scratch.
pub fn fill_initial<A: Arena>(
    arena: &mut A,
    spec: &InputSpec,
    params: &mut Vec<u64>,
    addrs: &mut Vec<u64>,
) -> Result<(), TrapKind> {
    addrs.clear();
    for obj in &spec.objects {
        let a = match obj {
            InputObject::Struct { ty, fields } => arena.alloc_struct(*ty, fields.len())?,
            InputObject::Array { elem, elems } => arena.alloc_array(*elem, elems.len() as i64)?,
        };
        addrs.push(a);
    }
    let addrs: &[u64] = addrs;
    let word = |v: InputValue| match v {
        InputValue::Int(i) => i as u64,
        InputValue::Null => 0,
        InputValue::Obj(i) => addrs[i],
    };
    for (obj, &a) in spec.objects.iter().zip(addrs) {
        let (first, vals) = match obj {
            InputObject::Struct { fields, .. } => (a as usize + 1, fields),
            InputObject::Array { elems, .. } => (a as usize + 2, elems),
        };
        for (k, &v) in vals.iter().enumerate() {
            arena.set_word(first + k, word(v));
        }
    }
    for (g, &v) in spec.globals.iter().enumerate() {
        arena.set_word(GLOBALS_BASE + g, word(v));
    }
    params.clear();
    params.extend(spec.params.iter().map(|&v| word(v)));
    Ok(())
}
