//! Observable behaviour (IR.md §7): the outcome, the output trace and the final
//! heap as seen from the roots, with objects named `#0, #1, …` in the order of
//! the canonical breadth-first walk.

use crate::config::TrapKind;
use crate::heap::{Layout, Shape, GLOBALS_BASE};
use ir::{Module, StructId, Type};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A name in a heap entry (a global, type or field name): shared, so
/// observing a heap never copies names.
pub type Name = Arc<str>;

/// A value as an observer sees it: references only by walk number.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Observed {
    /// An integer.
    Int(i64),
    /// `null`.
    Null,
    /// The object the heap walk numbered `#n`.
    Obj(u32),
}

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observed::Int(i) => write!(f, "{i}"),
            Observed::Null => f.write_str("null"),
            Observed::Obj(n) => write!(f, "#{n}"),
        }
    }
}

/// How an execution ended.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Outcome {
    /// `ret v` (`None` for a void `ret`).
    Return(Option<Observed>),
    /// A trap.
    Trap(TrapKind),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Return(None) => f.write_str("return"),
            Outcome::Return(Some(v)) => write!(f, "return {v}"),
            Outcome::Trap(t) => write!(f, "trap {t}"),
        }
    }
}

/// One entry of the heap line.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum HeapEntry {
    /// `@name = value`.
    Global {
        /// The global's name without `@`.
        name: Name,
        /// Its final value.
        value: Observed,
    },
    /// `#n = Type{field: value, …}`.
    Struct {
        /// The walk number.
        id: u32,
        /// The type's name.
        ty: Name,
        /// Field names in declaration order, shared by every object of the
        /// type (so building or dropping an entry touches no name).
        fields: Arc<[Name]>,
        /// Field values, one per name in `fields`.
        values: Vec<Observed>,
    },
    /// `#n = [E]{v, …}`.
    Array {
        /// The walk number.
        id: u32,
        /// The array type's name, e.g. `[i64]`.
        ty: Name,
        /// The elements.
        elems: Vec<Observed>,
    },
}

impl fmt::Display for HeapEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeapEntry::Global { name, value } => write!(f, "@{name} = {value}"),
            HeapEntry::Struct {
                id,
                ty,
                fields,
                values,
            } => {
                write!(f, "#{id} = {ty}{{")?;
                for (k, (name, v)) in fields.iter().zip(values).enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name}: {v}")?;
                }
                f.write_str("}")
            }
            HeapEntry::Array { id, ty, elems } => {
                write!(f, "#{id} = {ty}{{")?;
                for (k, v) in elems.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// The observable behaviour of one execution. Two executions are equivalent
/// exactly when their behaviours are equal (`==`), equivalently when their
/// three printed lines are equal.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Behaviour {
    /// Return or trap.
    pub outcome: Outcome,
    /// The values passed to `escape`, in order.
    pub trace: Vec<Observed>,
    /// Globals in declaration order, then every object the walk meets, in walk order.
    pub heap: Vec<HeapEntry>,
}

fn write_list<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    label: &str,
    sep: &str,
    items: &[T],
) -> fmt::Result {
    f.write_str(label)?;
    for (k, it) in items.iter().enumerate() {
        f.write_str(if k == 0 { " " } else { sep })?;
        write!(f, "{it}")?;
    }
    Ok(())
}

impl fmt::Display for Behaviour {
    /// Exactly three lines: `outcome: …`, `trace: …`, `heap: …` (no trailing newline).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "outcome: {}", self.outcome)?;
        write_list(f, "trace:", ", ", &self.trace)?;
        f.write_str("\n")?;
        write_list(f, "heap:", "; ", &self.heap)
    }
}

/// A raw value at the end of an execution, before numbering.
#[derive(Copy, Clone, Debug)]
pub enum RawValue {
    /// An integer.
    Int(i64),
    /// A reference word (0 = null).
    Ref(u64),
}

/// The raw final state of an execution, before numbering.
pub struct FinalState<'a> {
    /// The arena.
    pub words: &'a [u64],
    /// The reference arguments at entry.
    pub entry_roots: &'a [u64],
    /// The returned value, if the function returned one.
    pub returned: Option<RawValue>,
    /// Escaped objects in escape order.
    pub escaped: &'a [u64],
    /// The output trace.
    pub trace: &'a [RawValue],
    /// The trap, if the execution trapped.
    pub trap: Option<TrapKind>,
}

/// The names of a struct type and of its fields.
struct StructNames {
    name: Name,
    fields: Arc<[Name]>,
}

/// The names a module's heap entries print with, each built once, on first use.
pub struct HeapNames {
    globals: Vec<OnceLock<Name>>,
    structs: Vec<OnceLock<StructNames>>,
    /// Element types of the array types the module mentions, with their array names.
    arrays: Vec<(Type, OnceLock<Name>)>,
}

impl HeapNames {
    /// A (lazy) name table for `m`; `types` are types the module mentions
    /// (any others are named when met, without caching).
    pub fn new(m: &Module, types: impl IntoIterator<Item = Type>) -> HeapNames {
        let mut arrays: Vec<(Type, OnceLock<Name>)> = Vec::new();
        for t in types {
            // `[[E]]` holds `[E]` arrays: every array type up to `t`'s depth.
            for dims in 0..t.dims {
                let elem = Type { base: t.base, dims };
                if !arrays.iter().any(|(e, _)| *e == elem) {
                    arrays.push((elem, OnceLock::new()));
                }
            }
        }
        HeapNames {
            globals: m.globals.iter().map(|_| OnceLock::new()).collect(),
            structs: m.structs.iter().map(|_| OnceLock::new()).collect(),
            arrays,
        }
    }

    fn global(&self, m: &Module, g: usize) -> &Name {
        self.globals[g].get_or_init(|| Name::from(m.globals[g].name.as_str()))
    }

    fn struct_names(&self, m: &Module, s: StructId) -> &StructNames {
        self.structs[s.index()].get_or_init(|| {
            let decl = m.struct_decl(s);
            StructNames {
                name: Name::from(decl.name.as_str()),
                fields: decl
                    .fields
                    .iter()
                    .map(|f| Name::from(f.name.as_str()))
                    .collect(),
            }
        })
    }

    fn array(&self, m: &Module, elem: Type) -> Name {
        let make = || Name::from(m.type_name(elem.array_of()));
        match self.arrays.iter().find(|(e, _)| *e == elem) {
            Some((_, cell)) => cell.get_or_init(make).clone(),
            None => make(),
        }
    }
}

/// A walk number slot that no object holds.
const UNNUMBERED: u32 = u32::MAX;

/// Buffers [`observe_with`] reuses between calls.
#[derive(Default)]
pub struct ObserveScratch {
    /// Objects in walk order.
    order: Vec<u64>,
    /// Per arena word: the walk number of the object whose header is there, or
    /// [`UNNUMBERED`] (every entry is [`UNNUMBERED`] between calls).
    number: Vec<u32>,
}

impl ObserveScratch {
    /// Drop buffers grown beyond `words` words.
    pub fn trim(&mut self, words: usize) {
        if self.number.len() > words {
            *self = ObserveScratch::default();
        }
    }
}

/// Observe the final state: walk from the roots and name every object.
pub fn observe(m: &Module, layout: &Layout, st: &FinalState) -> Behaviour {
    let names = HeapNames::new(m, std::iter::empty());
    observe_with(m, layout, &names, &mut ObserveScratch::default(), st)
}

/// The behaviour of a run whose inputs alone exceed the heap budget: it traps
/// `trap` before its first instruction, with an empty trace and the globals
/// at their defaults (the interpreter and the native executor report it alike).
pub fn trapped_at_entry(
    m: &Module,
    layout: &Layout,
    names: &HeapNames,
    scratch: &mut ObserveScratch,
    trap: TrapKind,
) -> Behaviour {
    with_entry_trap_state(layout, trap, |st| {
        observe_with(m, layout, names, scratch, st)
    })
}

/// `f` of the final state of a run that traps `trap` before its first
/// instruction (see [`trapped_at_entry`]).
pub fn with_entry_trap_state<R>(
    layout: &Layout,
    trap: TrapKind,
    f: impl FnOnce(&FinalState) -> R,
) -> R {
    let empty = vec![0; 1 + layout.globals.len()];
    f(&FinalState {
        words: &empty,
        entry_roots: &[],
        returned: None,
        escaped: &[],
        trace: &[],
        trap: Some(trap),
    })
}

/// [`observe`] with a module's name table and reused buffers.
pub fn observe_with(
    m: &Module,
    layout: &Layout,
    names: &HeapNames,
    scratch: &mut ObserveScratch,
    st: &FinalState,
) -> Behaviour {
    number_objects(layout, scratch, st);
    let behaviour = build(m, layout, names, &scratch.numbering(), st);
    scratch.forget_numbers();
    behaviour
}

/// Whether `st` observes as `expected`: exactly `observe_with(..) ==
/// *expected`, decided while walking, without building the behaviour (the
/// usual answer for an optimized run compared with its original).
pub fn observes_as(
    m: &Module,
    layout: &Layout,
    names: &HeapNames,
    scratch: &mut ObserveScratch,
    st: &FinalState,
    expected: &Behaviour,
) -> bool {
    number_objects(layout, scratch, st);
    let same = matches(m, layout, names, &scratch.numbering(), st, expected);
    scratch.forget_numbers();
    same
}

/// The canonical walk's result: objects in walk order, and per arena word
/// the walk number of the object whose header is there.
struct Numbering<'s> {
    order: &'s [u64],
    number: &'s [u32],
}

impl Numbering<'_> {
    /// How an observer sees `v`.
    fn observed(&self, v: RawValue) -> Observed {
        match v {
            RawValue::Int(i) => Observed::Int(i),
            RawValue::Ref(0) => Observed::Null,
            // Every traced or returned reference is a root, hence numbered.
            RawValue::Ref(r) => match self.number.get(r as usize) {
                Some(&n) if n != UNNUMBERED => Observed::Obj(n),
                _ => Observed::Null,
            },
        }
    }

    /// How an observer sees a slot word of type reference (`is_ref`) or `i64`.
    fn word(&self, w: u64, is_ref: bool) -> Observed {
        if is_ref {
            self.observed(RawValue::Ref(w))
        } else {
            Observed::Int(w as i64)
        }
    }

    /// The outcome of the run ending in `st`.
    fn outcome(&self, st: &FinalState) -> Outcome {
        match st.trap {
            Some(t) => Outcome::Trap(t),
            None => Outcome::Return(st.returned.map(|v| self.observed(v))),
        }
    }
}

impl ObserveScratch {
    fn numbering(&self) -> Numbering<'_> {
        Numbering {
            order: &self.order,
            number: &self.number,
        }
    }

    /// Reset the numbers of the last walk (every entry is [`UNNUMBERED`] between calls).
    fn forget_numbers(&mut self) {
        for &o in &self.order {
            self.number[o as usize] = UNNUMBERED;
        }
    }
}

/// The canonical breadth-first walk of `st` from its roots into `scratch`.
fn number_objects(layout: &Layout, scratch: &mut ObserveScratch, st: &FinalState) {
    let words = st.words;
    let ObserveScratch { order, number } = scratch;
    order.clear();
    if number.len() < words.len() {
        number.resize(words.len(), UNNUMBERED);
    }
    let number: &mut [u32] = number;
    let visit = |o: u64, number: &mut [u32], order: &mut Vec<u64>| {
        if o != 0 && number[o as usize] == UNNUMBERED {
            number[o as usize] = order.len() as u32;
            order.push(o);
        }
    };
    for (g, ty) in layout.globals.iter().enumerate() {
        if ty.is_ref() {
            visit(words[GLOBALS_BASE + g], number, order);
        }
    }
    for &r in st.entry_roots {
        visit(r, number, order);
    }
    if let Some(RawValue::Ref(r)) = st.returned {
        visit(r, number, order);
    }
    for &r in st.escaped {
        visit(r, number, order);
    }
    let mut next = 0;
    while next < order.len() {
        let obj = order[next];
        next += 1;
        let (shape, first, n) = layout.slots(words, obj);
        for k in 0..n {
            if layout.slot_type(shape, k).is_ref() {
                visit(words[first + k], number, order);
            }
        }
    }
}

/// The behaviour of the run ending in `st`, walked into `walk`.
fn build(
    m: &Module,
    layout: &Layout,
    names: &HeapNames,
    walk: &Numbering<'_>,
    st: &FinalState,
) -> Behaviour {
    let words = st.words;
    let mut heap = Vec::with_capacity(m.globals.len() + walk.order.len());
    for (g, decl) in m.globals.iter().enumerate() {
        heap.push(HeapEntry::Global {
            name: names.global(m, g).clone(),
            value: walk.word(words[GLOBALS_BASE + g], decl.ty.is_ref()),
        });
    }
    for (id, &obj) in walk.order.iter().enumerate() {
        let (shape, first, n) = layout.slots(words, obj);
        let id = id as u32;
        heap.push(match shape {
            Shape::Struct(s) => {
                let decl = m.struct_decl(s);
                let sn = names.struct_names(m, s);
                HeapEntry::Struct {
                    id,
                    ty: sn.name.clone(),
                    fields: sn.fields.clone(),
                    values: decl
                        .fields
                        .iter()
                        .enumerate()
                        .map(|(k, fd)| walk.word(words[first + k], fd.ty.is_ref()))
                        .collect(),
                }
            }
            Shape::Array(e) => HeapEntry::Array {
                id,
                ty: names.array(m, e),
                elems: (0..n)
                    .map(|k| walk.word(words[first + k], e.is_ref()))
                    .collect(),
            },
        });
    }
    Behaviour {
        outcome: walk.outcome(st),
        trace: st.trace.iter().map(|&v| walk.observed(v)).collect(),
        heap,
    }
}

/// Whether [`build`] would give a behaviour equal to `expected`: the same
/// comparisons `==` makes, field by field, on values observed as walked.
fn matches(
    m: &Module,
    layout: &Layout,
    names: &HeapNames,
    walk: &Numbering<'_>,
    st: &FinalState,
    expected: &Behaviour,
) -> bool {
    let nglobals = m.globals.len();
    if walk.outcome(st) != expected.outcome
        || st.trace.len() != expected.trace.len()
        || expected.heap.len() != nglobals + walk.order.len()
    {
        return false;
    }
    let trace_same = st
        .trace
        .iter()
        .zip(&expected.trace)
        .all(|(&v, e)| walk.observed(v) == *e);
    let (globals, objects) = expected.heap.split_at(nglobals);
    let words = st.words;
    let globals_same = m
        .globals
        .iter()
        .zip(globals)
        .enumerate()
        .all(|(g, (decl, e))| {
            matches!(e, HeapEntry::Global { name, value }
            if *value == walk.word(words[GLOBALS_BASE + g], decl.ty.is_ref())
                && same_shared(name, names.global(m, g)))
        });
    trace_same
        && globals_same
        && walk
            .order
            .iter()
            .zip(objects)
            .enumerate()
            .all(|(id, (&obj, e))| {
                let (shape, first, n) = layout.slots(words, obj);
                match (shape, e) {
                    (
                        Shape::Struct(s),
                        HeapEntry::Struct {
                            id: eid,
                            ty,
                            fields,
                            values,
                        },
                    ) => {
                        let decl = m.struct_decl(s);
                        let sn = names.struct_names(m, s);
                        *eid as usize == id
                            && values.len() == decl.fields.len()
                            && decl
                                .fields
                                .iter()
                                .zip(values)
                                .enumerate()
                                .all(|(k, (fd, v))| {
                                    walk.word(words[first + k], fd.ty.is_ref()) == *v
                                })
                            && same_shared(ty, &sn.name)
                            && same_shared(fields, &sn.fields)
                    }
                    (Shape::Array(el), HeapEntry::Array { id: eid, ty, elems }) => {
                        *eid as usize == id
                            && elems.len() == n
                            && elems
                                .iter()
                                .enumerate()
                                .all(|(k, v)| walk.word(words[first + k], el.is_ref()) == *v)
                            && same_shared(ty, &names.array(m, el))
                    }
                    _ => false,
                }
            })
}

/// `a == b` for shared names and name lists, trying the pointer first
/// (`Arc`'s own `==` compares the contents of an unsized value every time).
fn same_shared<T: ?Sized + PartialEq>(a: &Arc<T>, b: &Arc<T>) -> bool {
    Arc::ptr_eq(a, b) || **a == **b
}
