//! The effects table of IR.md §8 — the one place that says what each
//! instruction reads, writes, whether it may trap and whether it allocates.
//!
//! The abstract heap is a tree built per module:
//!
//! ```text
//! World
//! ├── Heap
//! │   ├── Fields      — one leaf per declared Type.field
//! │   ├── Elements    — one leaf per array element type E of [E]
//! │   └── Globals     — one leaf per global
//! ├── Alloc           — the allocator's state (object identity)
//! └── Output          — the output trace
//! ```
//!
//! Effects are over-approximations: every access an instruction makes (its own,
//! or the environment's during a step it causes) lies inside what it declares.

use crate::entities::{ExternId, GlobalId, Inst, Value};
use crate::function::{Function, ValueDef};
use crate::inst::{Addr, BinOp, Callee, FieldRef, InstKind};
use crate::module::{EffectLoc, Module};
use crate::types::Type;
use smallvec::SmallVec;

/// A node of the abstract heap tree.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum HeapNode {
    /// Everything: the root.
    World,
    /// Every memory slot (fields, elements, globals).
    Heap,
    /// Every field of every object.
    Fields,
    /// One declared field `T.f` of every object of type `T`.
    Field(FieldRef),
    /// Every element of every array.
    Elements,
    /// Every element of every array of element type `E` (the payload is `E`, not `[E]`).
    Element(Type),
    /// Every global.
    Globals,
    /// One global.
    Global(GlobalId),
    /// The allocator's state (object identity).
    Alloc,
    /// The output trace.
    Output,
}

impl HeapNode {
    /// The node directly above this one (`None` for `World`).
    pub fn parent(self) -> Option<HeapNode> {
        match self {
            HeapNode::World => None,
            HeapNode::Heap | HeapNode::Alloc | HeapNode::Output => Some(HeapNode::World),
            HeapNode::Fields | HeapNode::Elements | HeapNode::Globals => Some(HeapNode::Heap),
            HeapNode::Field(_) => Some(HeapNode::Fields),
            HeapNode::Element(_) => Some(HeapNode::Elements),
            HeapNode::Global(_) => Some(HeapNode::Globals),
        }
    }

    /// Whether `self` is `other` or one of its ancestors.
    pub fn contains(self, other: HeapNode) -> bool {
        let mut cur = Some(other);
        while let Some(n) = cur {
            if n == self {
                return true;
            }
            cur = n.parent();
        }
        false
    }

    /// Whether the two nodes share a location (one contains the other).
    pub fn overlaps(a: HeapNode, b: HeapNode) -> bool {
        a.contains(b) || b.contains(a)
    }
}

/// A set of heap nodes (a union; usually one or two entries).
pub type HeapSet = SmallVec<[HeapNode; 2]>;

/// The set holding `n` alone, built in place (`smallvec!` pushes, out of line).
#[inline]
fn one(n: HeapNode) -> HeapSet {
    SmallVec::from_buf_and_len([n, n], 1)
}

/// Whether any node of `a` overlaps any node of `b`.
pub fn sets_overlap(a: &[HeapNode], b: &[HeapNode]) -> bool {
    a.iter()
        .any(|&x| b.iter().any(|&y| HeapNode::overlaps(x, y)))
}

/// Whether and how an instruction may trap. Ordered: `Never < ResourceOnly < May`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Traps {
    /// Never traps.
    Never,
    /// Traps only on a resource limit (`heap_exhausted`), which makes an input
    /// inconclusive — an optimizer may remove such an instruction.
    ResourceOnly,
    /// May trap on some input.
    May,
}

/// What one instruction may do besides computing its result.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Effects {
    /// Heap nodes it may read.
    pub reads: HeapSet,
    /// Heap nodes it may write.
    pub writes: HeapSet,
    /// Whether it may trap.
    pub traps: Traps,
    /// Whether it allocates a fresh object or array.
    pub allocates: bool,
}

impl Effects {
    /// No effects at all (pure integer operations, phis, jumps).
    pub fn none() -> Effects {
        Effects {
            reads: SmallVec::new(),
            writes: SmallVec::new(),
            traps: Traps::Never,
            allocates: false,
        }
    }

    /// Reads and writes everything and may trap (unknown code).
    pub fn world() -> Effects {
        Effects {
            reads: one(HeapNode::World),
            writes: one(HeapNode::World),
            traps: Traps::May,
            allocates: false,
        }
    }

    /// Whether it may trap on some input (resource limits included).
    pub fn may_trap(&self) -> bool {
        self.traps != Traps::Never
    }

    /// No reads, no writes, no trap, no allocation: only its result matters.
    pub fn is_pure(&self) -> bool {
        self.reads_nothing() && self.writes_nothing() && !self.may_trap() && !self.allocates
    }

    /// Reads no heap node.
    #[inline]
    pub fn reads_nothing(&self) -> bool {
        self.reads.is_empty()
    }

    /// Writes no heap node.
    #[inline]
    pub fn writes_nothing(&self) -> bool {
        self.writes.is_empty()
    }

    /// Whether DCE may delete the instruction when its result is unused: it
    /// writes nothing but the allocator's state and traps at most on resource
    /// limits. (Terminators are never "unused"; callers do not ask about them.)
    #[inline]
    pub fn removable_if_unused(&self) -> bool {
        self.writes.iter().all(|&w| w == HeapNode::Alloc) && self.traps <= Traps::ResourceOnly
    }
}

/// What an instruction proves about its operands when it completes without
/// trapping: the checks of IR.md §4's accesses (and loadstar's `nullcheck`
/// and `boundscheck`, which are those checks alone).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Checked {
    /// The reference is non-null (a field access, `len`, `nullcheck`).
    NonNull(Value),
    /// The array is non-null and the index is in `0..len` (an element
    /// access, `boundscheck`).
    InBounds(Value, Value),
}

impl Checked {
    /// The reference known non-null past the check.
    #[inline]
    pub fn base(self) -> Value {
        match self {
            Checked::NonNull(b) | Checked::InBounds(b, _) => b,
        }
    }

    /// The instruction that makes exactly this check and nothing else
    /// (`nullcheck`, `boundscheck`).
    pub fn check(self) -> InstKind {
        match self {
            Checked::NonNull(b) => InstKind::NullCheck(b),
            Checked::InBounds(a, i) => InstKind::BoundsCheck(a, i),
        }
    }
}

/// Whether `kind` is a check alone: exactly the [`Checked::check`] of what
/// it checks (no result, no read, no write).
#[inline]
pub fn is_check(kind: &InstKind) -> bool {
    checked_by(kind).is_some_and(|c| c.check() == *kind)
}

/// What `kind` checks (`None` for an instruction that checks no reference).
/// A volatile access checks like a plain one (after its environment step).
#[inline]
pub fn checked_by(kind: &InstKind) -> Option<Checked> {
    match kind {
        InstKind::Load { addr, .. } | InstKind::Store { addr, .. } => match *addr {
            Addr::Field { base, .. } => Some(Checked::NonNull(base)),
            Addr::Elem { base, index } => Some(Checked::InBounds(base, index)),
            Addr::Global(_) => None,
        },
        InstKind::Len(a) | InstKind::NullCheck(a) => Some(Checked::NonNull(*a)),
        InstKind::BoundsCheck(a, i) => Some(Checked::InBounds(*a, *i)),
        _ => None,
    }
}

/// How instruction `kind` can be written when its trap is all that matters
/// (its result unused; it writes nothing): the instruction that traps exactly
/// when `kind` does, the same way, and reads only what decides that trap. A
/// field or element access or `len` becomes its check
/// ([`Checked::check`], no result); `sdiv`/`srem %x, %d` becomes the same
/// operation of `%d` by `%d` (IR.md: it traps `div_by_zero` only when the
/// divisor is 0, whatever the dividend; its result stays). `None` for
/// anything else, and for a division whose dividend is a constant already
/// (nothing there to free).
pub fn trap_alone(f: &Function, kind: &InstKind) -> Option<InstKind> {
    match *kind {
        InstKind::Binary(op, a, b) if op.may_trap() => {
            (a != b && f.as_const_checked(a).is_none()).then_some(InstKind::Binary(op, b, b))
        }
        _ => checked_by(kind).map(Checked::check),
    }
}

/// The largest length `newarray` accepts (IR.md §4).
pub const MAX_ARRAY_LEN: i64 = 65536;

/// The effects of instruction `inst` of `f` (a function of module `m`).
pub fn inst_effects(m: &Module, f: &Function, inst: Inst) -> Effects {
    effects_with(f, inst, |e| {
        let (reads, writes) = extern_effects(m, e);
        Effects {
            reads,
            writes,
            traps: Traps::May,
            allocates: false,
        }
    })
}

/// The effects of instruction `inst` of `f` where they do not depend on the
/// module: every instruction but a call of an extern (`None`), whose effects
/// are the extern's declaration. A call of a function is [`Effects::world`].
pub fn local_inst_effects(f: &Function, inst: Inst) -> Option<Effects> {
    let data = f.insts.get(inst.index())?;
    match data.kind {
        InstKind::Call {
            callee: Callee::Extern(_),
            ..
        } => None,
        _ => Some(effects_with(f, inst, |_| Effects::world())),
    }
}

/// The effects of `inst`, a call of an extern having `of_extern`'s. Inlined
/// into both callers, so [`inst_effects`] costs what it did as one function.
#[inline(always)]
fn effects_with(f: &Function, inst: Inst, of_extern: impl FnOnce(ExternId) -> Effects) -> Effects {
    let Some(data) = f.insts.get(inst.index()) else {
        return Effects::world();
    };
    match &data.kind {
        InstKind::Binary(op, _, b) => {
            let mut e = Effects::none();
            if op.may_trap() && !is_nonzero_const(f, *b) {
                e.traps = Traps::May;
            }
            e
        }
        InstKind::Unary(..) | InstKind::Select(..) | InstKind::Phi(_) => Effects::none(),
        InstKind::Jmp(_) | InstKind::Br(..) | InstKind::Ret(_) => Effects::none(),
        InstKind::New(_) => allocation(Traps::ResourceOnly),
        InstKind::NewArray { len, .. } => {
            let ok_len = f
                .as_const_checked(*len)
                .is_some_and(|n| (0..=MAX_ARRAY_LEN).contains(&n));
            allocation(if ok_len {
                Traps::ResourceOnly
            } else {
                Traps::May
            })
        }
        InstKind::Load { addr, volatile } => {
            if *volatile {
                return Effects::world();
            }
            Effects {
                reads: one(addr_node(f, addr)),
                writes: SmallVec::new(),
                traps: addr_traps(f, addr),
                allocates: false,
            }
        }
        InstKind::Store { addr, volatile, .. } => {
            if *volatile {
                return Effects::world();
            }
            Effects {
                reads: SmallVec::new(),
                writes: one(addr_node(f, addr)),
                traps: addr_traps(f, addr),
                allocates: false,
            }
        }
        InstKind::Len(a) | InstKind::NullCheck(a) => Effects {
            traps: if may_be_null(f, *a) {
                Traps::May
            } else {
                Traps::Never
            },
            ..Effects::none()
        },
        InstKind::Call { callee, .. } => match *callee {
            Callee::Func(_) => Effects::world(),
            Callee::Extern(e) => of_extern(e),
        },
        InstKind::Escape(v) => Effects {
            reads: if escapes_an_object(f, *v) {
                one(HeapNode::Heap)
            } else {
                SmallVec::new()
            },
            writes: one(HeapNode::Output),
            traps: Traps::Never,
            allocates: false,
        },
        InstKind::Guard(c) => Effects {
            traps: if is_nonzero_const(f, *c) {
                Traps::Never
            } else {
                Traps::May
            },
            ..Effects::none()
        },
        InstKind::BoundsCheck(..) | InstKind::Unreachable => Effects {
            traps: Traps::May,
            ..Effects::none()
        },
    }
}

/// The reference whose being `null` makes instruction `inst` trap
/// `null_deref` (the base of a field or element access, volatile or not,
/// the array of `len`, the reference of a check): once the instruction has run,
/// it is not null.
#[inline]
pub fn null_checked(f: &Function, inst: Inst) -> Option<Value> {
    checked_by(&f.insts.get(inst.index())?.kind).map(Checked::base)
}

/// The reference whose being `null` is the only way instruction `inst` may
/// trap (a plain field access, `len` or `nullcheck`; `None` for one that
/// cannot trap, and for element accesses, which may also leave the bounds,
/// and volatile ones, which take an environment step first): where that
/// reference is known not to be null, the instruction cannot trap.
#[inline]
pub fn traps_only_on_null(f: &Function, inst: Inst) -> Option<Value> {
    let kind = &f.insts.get(inst.index())?.kind;
    let volatile = matches!(
        kind,
        InstKind::Load { volatile: true, .. } | InstKind::Store { volatile: true, .. }
    );
    match checked_by(kind)? {
        Checked::NonNull(base) if !volatile && may_be_null(f, base) => Some(base),
        _ => None,
    }
}

/// How an instruction that traps whenever it runs can be written.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum CertainTrap {
    /// Its trap comes before it does anything else: this check alone
    /// (`nullcheck`, `boundscheck`) traps the same way, with no read, write
    /// or result.
    Check(InstKind),
    /// The same instruction with the operands that do not decide its trap
    /// replaced by ones already there (`sdiv %x, 0` becomes `sdiv 0, 0`:
    /// the same `div_by_zero`, and `%x` may go); its result stays.
    Operands(InstKind),
    /// It is already the cheapest way to trap so (a `guard 0`, a division of
    /// a constant by `0`, a `newarray` of a bad constant length,
    /// `unreachable`, a check), or
    /// it does something observable before its trap (a volatile access takes
    /// its environment step first): it stays as it is.
    Keep,
}

/// Whether instruction `inst` of `f` traps on every execution that reaches
/// it, whatever its inputs, and how to write that trap most cheaply
/// ([`CertainTrap`]): an access or check of the `null` constant, or of a
/// `copy` or `select` certainly `null` (`null_deref`); an element access of
/// a constant negative index, or of a constant index (or the `len` of a
/// constant-length `newarray`) past the constant length of a `newarray` (`out_of_bounds`,
/// or `null_deref` first: an access of a `null` array becomes `nullcheck`,
/// whatever its index); `guard 0`; `sdiv`/`srem` by `0` (its dividend made
/// the `0`, [`CertainTrap::Operands`]); `newarray` of a
/// constant length out of range; `unreachable`. `None` when some execution
/// may go past it.
pub fn certain_trap(f: &Function, inst: Inst) -> Option<CertainTrap> {
    let kind = &f.insts.get(inst.index())?.kind;
    let const_of = |v: Value| f.as_const_checked(v);
    match kind {
        InstKind::Binary(op, a, b) => {
            if !op.may_trap() || const_of(*b) != Some(0) {
                None
            } else if const_of(*a).is_some() {
                Some(CertainTrap::Keep)
            } else {
                trap_alone(f, kind).map(CertainTrap::Operands)
            }
        }
        InstKind::Guard(c) => (const_of(*c) == Some(0)).then_some(CertainTrap::Keep),
        InstKind::NewArray { len, .. } => const_of(*len)
            .is_some_and(|n| !(0..=MAX_ARRAY_LEN).contains(&n))
            .then_some(CertainTrap::Keep),
        InstKind::Unreachable => Some(CertainTrap::Keep),
        _ => {
            let checked = checked_by(kind)?;
            // A `null` array traps `null_deref` whatever the index: its
            // check is `nullcheck` alone, and what computed the index may go.
            let checked = match checked {
                Checked::NonNull(b) if is_null_const(f, b) => checked,
                Checked::InBounds(a, _) if is_null_const(f, a) => Checked::NonNull(a),
                Checked::InBounds(a, i) if index_out_of_bounds(f, a, i) => checked,
                _ => return None,
            };
            let volatile = matches!(
                kind,
                InstKind::Load { volatile: true, .. } | InstKind::Store { volatile: true, .. }
            );
            Some(if volatile || checked.check() == *kind {
                CertainTrap::Keep
            } else {
                CertainTrap::Check(checked.check())
            })
        }
    }
}

/// Whether `v` is the `null` constant, or certainly it: a `copy` of it, a
/// `select` of it on both arms or on the arm a constant condition picks
/// (followed at most 8 deep).
fn is_null_const(f: &Function, v: Value) -> bool {
    is_null_within(f, v, 8)
}

fn is_null_within(f: &Function, v: Value, depth: u32) -> bool {
    let def = f.values.get(v.index()).map(|d| d.def);
    let i = match def {
        Some(ValueDef::Null) => return true,
        Some(ValueDef::Inst(i)) if depth > 0 => i,
        _ => return false,
    };
    let d = depth - 1;
    match f.insts.get(i.index()).map(|x| &x.kind) {
        Some(InstKind::Unary(crate::inst::UnOp::Copy, x)) => is_null_within(f, *x, d),
        Some(InstKind::Select(c, a, b)) => match f.as_const_checked(*c) {
            Some(k) => is_null_within(f, if k != 0 { *a } else { *b }, d),
            None => is_null_within(f, *a, d) && is_null_within(f, *b, d),
        },
        _ => false,
    }
}

/// The length of `a` when it is a `newarray` of a constant length.
fn fresh_len(f: &Function, a: Value) -> Option<i64> {
    let Some(ValueDef::Inst(i)) = f.values.get(a.index()).map(|d| d.def) else {
        return None;
    };
    match f.insts.get(i.index()).map(|d| &d.kind) {
        Some(InstKind::NewArray { len, .. }) => f.as_const_checked(*len),
        _ => None,
    }
}

/// The length of array `a` when it is made by a `newarray` of a constant
/// length `newarray` accepts (an array's length never changes: IR.md §8).
pub fn fresh_array_len(f: &Function, a: Value) -> Option<i64> {
    fresh_len(f, a).filter(|n| (0..=MAX_ARRAY_LEN).contains(n))
}

/// The constant `v` is: an integer constant, or the `len` of a `newarray`
/// of constant length.
fn const_or_fresh_len(f: &Function, v: Value) -> Option<i64> {
    match f.values.get(v.index()).map(|d| d.def)? {
        ValueDef::Const(k) => Some(k),
        ValueDef::Inst(i) => match f.insts.get(i.index()).map(|d| &d.kind) {
            Some(InstKind::Len(a)) => fresh_len(f, *a),
            _ => None,
        },
        _ => None,
    }
}

/// Whether index `index` is a constant outside every array (negative) or
/// past the length of `base`, a `newarray` of constant length (the index
/// may also be the `len` of such an array), or is the very length operand
/// of the `newarray` that made `base` (`ult n, n` is false).
fn index_out_of_bounds(f: &Function, base: Value, index: Value) -> bool {
    if new_array_len(f, base) == Some(index) {
        return true;
    }
    let Some(k) = const_or_fresh_len(f, index) else {
        return false;
    };
    k < 0 || fresh_len(f, base).is_some_and(|n| k >= n)
}

/// The length operand of the `newarray` that made `a`, if one did.
fn new_array_len(f: &Function, a: Value) -> Option<Value> {
    let Some(ValueDef::Inst(i)) = f.values.get(a.index()).map(|d| d.def) else {
        return None;
    };
    match f.insts.get(i.index()).map(|d| &d.kind) {
        Some(InstKind::NewArray { len, .. }) => Some(*len),
        _ => None,
    }
}

/// What a call of extern `e` reads and writes: World/World without declared
/// effects, else exactly the declared leaves, plus a read of `Output` (the set
/// of escaped objects, which is part of every step's reach).
pub fn extern_effects(m: &Module, e: ExternId) -> (HeapSet, HeapSet) {
    let declared = m.externs.get(e.index()).and_then(|x| x.effects.as_ref());
    match declared {
        None => (one(HeapNode::World), one(HeapNode::World)),
        // Every environment step also reads which objects have escaped (its reach
        // includes them, IR.md §6): that set is part of the output, so an extern
        // never moves across an `escape`, whatever else it declares.
        Some(eff) => (
            eff.reads
                .iter()
                .map(|&l| effect_loc_node(l))
                .chain(std::iter::once(HeapNode::Output))
                .collect(),
            declared_writes(eff),
        ),
    }
}

/// The heap leaves an extern's declared `writes(...)` name.
#[cfg(not(feature = "bug-zoo"))]
fn declared_writes(eff: &crate::module::ExternEffects) -> HeapSet {
    eff.writes.iter().map(|&l| effect_loc_node(l)).collect()
}

/// The heap leaves an extern's declared `writes(...)` name — or, with the zoo's
/// `effects-missing-write` planted, none: a table entry missing its write, so
/// passes move accesses across the call and the effect checker sees the
/// environment write outside the declaration.
#[cfg(feature = "bug-zoo")]
fn declared_writes(eff: &crate::module::ExternEffects) -> HeapSet {
    if crate::zoo::active(crate::zoo::Bug::EffectsMissingWrite) {
        return SmallVec::new();
    }
    eff.writes.iter().map(|&l| effect_loc_node(l)).collect()
}

/// The heap leaf a declared extern effect location names.
pub fn effect_loc_node(loc: EffectLoc) -> HeapNode {
    match loc {
        EffectLoc::Field(f) => HeapNode::Field(f),
        EffectLoc::Elements(e) => HeapNode::Element(e),
        EffectLoc::Global(g) => HeapNode::Global(g),
    }
}

/// Every leaf of the module's heap tree: one `Field` per declared field (in
/// declaration order), one `Element(E)` per array element type that appears in
/// the module (in order of first appearance; `[[i64]]` contributes `[i64]` and
/// `i64`), one `Global` per global, then `Alloc` and `Output`.
pub fn module_heap_leaves(m: &Module) -> Vec<HeapNode> {
    let mut leaves = Vec::new();
    for (si, s) in m.structs.iter().enumerate() {
        for fi in 0..s.fields.len() {
            leaves.push(HeapNode::Field(FieldRef {
                ty: crate::entities::StructId::new(si),
                index: fi as u32,
            }));
        }
    }
    let mut elems: Vec<Type> = Vec::new();
    let mut note = |t: Type| {
        let mut t = t;
        while let Some(e) = t.elem() {
            if !elems.contains(&e) {
                elems.push(e);
            }
            t = e;
        }
    };
    for s in &m.structs {
        s.fields.iter().for_each(|fd| note(fd.ty));
    }
    m.globals.iter().for_each(|g| note(g.ty));
    for x in &m.externs {
        x.params.iter().copied().for_each(&mut note);
        x.ret.into_iter().for_each(&mut note);
        if let Some(eff) = &x.effects {
            for loc in eff.reads.iter().chain(&eff.writes) {
                if let EffectLoc::Elements(e) = *loc {
                    note(e.array_of_checked().unwrap_or(e));
                }
            }
        }
    }
    for f in &m.funcs {
        f.ret.into_iter().for_each(&mut note);
        f.values.iter().for_each(|v| note(v.ty));
        for i in &f.insts {
            if let InstKind::NewArray { elem, .. } = i.kind {
                if let Some(t) = elem.array_of_checked() {
                    note(t);
                }
            }
        }
    }
    leaves.extend(elems.into_iter().map(HeapNode::Element));
    leaves.extend((0..m.globals.len()).map(|g| HeapNode::Global(GlobalId::new(g))));
    leaves.push(HeapNode::Alloc);
    leaves.push(HeapNode::Output);
    leaves
}

/// Reads and writes the allocator's state.
fn allocation(traps: Traps) -> Effects {
    Effects {
        reads: one(HeapNode::Alloc),
        writes: one(HeapNode::Alloc),
        traps,
        allocates: true,
    }
}

/// The heap leaf a (non-volatile) address names. An element access whose base
/// has no array type (the `null` constant) is conservatively every element.
fn addr_node(f: &Function, addr: &Addr) -> HeapNode {
    match *addr {
        Addr::Field { field, .. } => HeapNode::Field(field),
        Addr::Elem { base, .. } => value_type(f, base)
            .and_then(Type::elem)
            .map_or(HeapNode::Elements, HeapNode::Element),
        Addr::Global(g) => HeapNode::Global(g),
    }
}

/// Fields trap only through a possibly-null base; elements unless the base is
/// a `newarray` of constant length and the index certainly below it.
fn addr_traps(f: &Function, addr: &Addr) -> Traps {
    match *addr {
        Addr::Field { base, .. } if !may_be_null(f, base) => Traps::Never,
        Addr::Elem { base, index } if index_in_fresh_bounds(f, base, index) => Traps::Never,
        Addr::Field { .. } | Addr::Elem { .. } => Traps::May,
        Addr::Global(_) => Traps::Never,
    }
}

/// Whether `base` is a `newarray` of constant length (in range) and `index`
/// certainly in `0..length` ([`index_range`]): the element access can
/// neither meet `null` nor leave the bounds.
fn index_in_fresh_bounds(f: &Function, base: Value, index: Value) -> bool {
    let Some(ValueDef::Inst(i)) = f.values.get(base.index()).map(|d| d.def) else {
        return false;
    };
    let Some(InstKind::NewArray { len, .. }) = f.insts.get(i.index()).map(|d| &d.kind) else {
        return false;
    };
    match (f.as_const_checked(*len), index_range(f, index)) {
        (Some(n), Some((lo, hi))) => (0..=MAX_ARRAY_LEN).contains(&n) && 0 <= lo && hi < n,
        _ => false,
    }
}

/// Bounds `lo..=hi` that integer `v` always lies in, when its definition
/// gives some: a constant; `and x, c` with a constant `c >= 0` (`0..=c`:
/// the mask keeps no bit `c` lacks); `lshr x, k` with `k & 63` not 0
/// (`0..=u64::MAX >> k`); a comparison (`0..=1`). Indices of accesses of
/// fresh arrays are in range by it (`and %x, 1` or `ne %x, 1` indexing a
/// `newarray` of length 3).
pub fn index_range(f: &Function, v: Value) -> Option<(i64, i64)> {
    let def = f.values.get(v.index())?.def;
    let i = match def {
        ValueDef::Const(k) => return Some((k, k)),
        ValueDef::Inst(i) => i,
        _ => return None,
    };
    match f.insts.get(i.index()).map(|d| &d.kind)? {
        InstKind::Binary(BinOp::And, a, b) => {
            let c = match (f.as_const_checked(*a), f.as_const_checked(*b)) {
                (_, Some(c)) if c >= 0 => c,
                (Some(c), _) if c >= 0 => c,
                _ => return None,
            };
            Some((0, c))
        }
        InstKind::Binary(BinOp::Lshr, _, k) => {
            let k = f.as_const_checked(*k)? & 63;
            (k != 0).then(|| (0, (u64::MAX >> k) as i64))
        }
        InstKind::Binary(
            BinOp::Eq
            | BinOp::Ne
            | BinOp::Slt
            | BinOp::Sle
            | BinOp::Sgt
            | BinOp::Sge
            | BinOp::Ult
            | BinOp::Ule
            | BinOp::Ugt
            | BinOp::Uge,
            _,
            _,
        ) => Some((0, 1)),
        _ => None,
    }
}

/// Whether `v` may be null: only results of `new`/`newarray` are known non-null.
#[inline]
fn may_be_null(f: &Function, v: Value) -> bool {
    let Some(ValueDef::Inst(i)) = f.values.get(v.index()).map(|d| d.def) else {
        return true;
    };
    !matches!(
        f.insts.get(i.index()).map(|d| &d.kind),
        Some(InstKind::New(_) | InstKind::NewArray { .. })
    )
}

/// Whether `v` is an integer constant other than 0.
fn is_nonzero_const(f: &Function, v: Value) -> bool {
    f.as_const_checked(v).is_some_and(|c| c != 0)
}

/// Whether escaping `v` exposes an object (a reference other than the `null` constant).
fn escapes_an_object(f: &Function, v: Value) -> bool {
    match f.values.get(v.index()) {
        Some(d) => d.ty.is_ref() && d.def != ValueDef::Null,
        None => true,
    }
}

fn value_type(f: &Function, v: Value) -> Option<Type> {
    f.values.get(v.index()).map(|d| d.ty)
}

/// Small range-checked helpers used by the analyses (never panic on bad ids).
trait CheckedExt {
    fn as_const_checked(&self, v: Value) -> Option<i64>;
}

impl CheckedExt for Function {
    fn as_const_checked(&self, v: Value) -> Option<i64> {
        match self.values.get(v.index())?.def {
            ValueDef::Const(c) => Some(c),
            _ => None,
        }
    }
}

/// Range-checked `array_of` (a type already 255 brackets deep has no array type).
trait ArrayOfChecked {
    fn array_of_checked(self) -> Option<Type>;
}

impl ArrayOfChecked for Type {
    fn array_of_checked(self) -> Option<Type> {
        (self.dims < u8::MAX && self.base != crate::types::Base::Null).then(|| self.array_of())
    }
}
