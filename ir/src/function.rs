//! Functions: blocks, instructions and values in arenas with typed indices.

use crate::entities::{Block, Inst, Value};
use crate::inst::InstKind;
use crate::types::Type;
use rustc_hash::FxHashMap;

/// Where a value comes from.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ValueDef {
    /// The function's parameter with this position.
    Param(u32),
    /// The result of an instruction.
    Inst(Inst),
    /// An integer constant (dominates everything; not placed in any block).
    Const(i64),
    /// The `null` reference constant.
    Null,
}

/// An SSA value's definition and type (its source name, if any, is in
/// [`Function::value_name`]).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ValueData {
    /// Where it comes from.
    pub def: ValueDef,
    /// Its type (`Type::NULL` for the null constant).
    pub ty: Type,
}

/// An instruction: what it does, its result, and the block it sits in.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct InstData {
    /// The operation and its operands.
    pub kind: InstKind,
    /// The value it defines, if it produces one.
    pub result: Option<Value>,
    /// The block it is placed in (`None` once removed from the layout).
    pub block: Option<Block>,
}

/// A basic block: a label and its instructions (phis first, a terminator last).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct BlockData {
    /// The label, without `:`.
    pub name: String,
    /// The instructions in order.
    pub insts: Vec<Inst>,
}

/// A function: an SSA control-flow graph.
///
/// Blocks, instructions and values live in arenas and are never renumbered;
/// `layout` gives the order of the blocks that are part of the function
/// (the first is the entry). A block removed from `layout` is dead.
#[derive(Clone, Debug)]
pub struct Function {
    /// The name without `@`.
    pub name: String,
    /// The parameters' values, in order (each a `ValueDef::Param`).
    pub params: Vec<Value>,
    /// The return type, if the function returns a value.
    pub ret: Option<Type>,
    /// Block arena.
    pub blocks: Vec<BlockData>,
    /// The blocks of the function in order; `layout[0]` is the entry.
    pub layout: Vec<Block>,
    /// Instruction arena.
    pub insts: Vec<InstData>,
    /// Value arena.
    pub values: Vec<ValueData>,
    /// The source names of the values (see [`Function::value_name`]).
    names: ValueNames,
    consts: FxHashMap<i64, Value>,
    null: Option<Value>,
}

impl PartialEq for Function {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.params == other.params
            && self.ret == other.ret
            && self.blocks == other.blocks
            && self.layout == other.layout
            && self.insts == other.insts
            && self.values == other.values
            && self.names == other.names
    }
}
impl Eq for Function {}

/// Hashes exactly what `==` compares (the interning caches are derived data).
impl std::hash::Hash for Function {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        self.params.hash(state);
        self.ret.hash(state);
        self.blocks.hash(state);
        self.layout.hash(state);
        self.insts.hash(state);
        self.values.hash(state);
        self.names.hash(state);
    }
}

impl Function {
    /// A function with no blocks yet.
    pub fn new(name: &str, ret: Option<Type>) -> Function {
        Function {
            name: name.to_string(),
            params: Vec::new(),
            ret,
            blocks: Vec::new(),
            layout: Vec::new(),
            insts: Vec::new(),
            values: Vec::new(),
            names: ValueNames::default(),
            consts: FxHashMap::default(),
            null: None,
        }
    }

    /// A 64-bit hash of the function's code ([`Function::code_fingerprint`]).
    pub fn fingerprint(&self) -> u64 {
        use std::hash::Hasher;
        let mut h = rustc_hash::FxHasher::default();
        self.code_fingerprint(&mut h);
        h.finish()
    }

    /// Feed the code of the function (not its names) to `h`; see
    /// [`crate::Module::fingerprint`].
    pub fn code_fingerprint<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        self.params.hash(h);
        self.ret.hash(h);
        self.layout.hash(h);
        self.blocks.len().hash(h);
        for b in &self.blocks {
            b.insts.hash(h);
        }
        self.insts.hash(h);
        self.values.len().hash(h);
        for v in &self.values {
            v.def.hash(h);
            v.ty.hash(h);
        }
    }

    /// Add a parameter of type `ty` named `name`.
    pub fn add_param(&mut self, name: Option<&str>, ty: Type) -> Value {
        let v = self.new_value(ValueDef::Param(self.params.len() as u32), ty, name);
        self.params.push(v);
        v
    }

    /// Create a value (used by the parser and the builder).
    pub fn new_value(&mut self, def: ValueDef, ty: Type, name: Option<&str>) -> Value {
        let v = Value::new(self.values.len());
        self.values.push(ValueData { def, ty });
        if let Some(name) = name {
            self.names.set(v, name);
        }
        v
    }

    /// The name `v` had in the source text, without `%` (the printer invents
    /// one for a value without).
    pub fn value_name(&self, v: Value) -> Option<&str> {
        self.names.get(v)
    }

    /// The first value whose source name is `name`.
    pub fn value_named(&self, name: &str) -> Option<Value> {
        (0..self.values.len())
            .map(Value::new)
            .find(|&v| self.value_name(v) == Some(name))
    }

    /// Give `v` the source name `name` (replacing any it had).
    pub fn set_value_name(&mut self, v: Value, name: &str) {
        self.names.set(v, name);
    }

    /// Make room for the names of values up to index `values`, `bytes` of
    /// text in all (the parser, which knows about how many there will be,
    /// grows the table once instead of copying it at every doubling).
    pub fn reserve_value_names(&mut self, values: usize, bytes: usize) {
        let ValueNames { text, spans } = &mut self.names;
        spans.reserve(values.saturating_sub(spans.len()));
        text.reserve(bytes.saturating_sub(text.len()));
    }

    /// The (interned) integer constant `c`.
    pub fn iconst(&mut self, c: i64) -> Value {
        if let Some(&v) = self.consts.get(&c) {
            return v;
        }
        let v = self.new_value(ValueDef::Const(c), Type::I64, None);
        self.consts.insert(c, v);
        v
    }

    /// The integer constant `c` if the function already has it (never
    /// creates one).
    pub fn existing_iconst(&self, c: i64) -> Option<Value> {
        self.consts.get(&c).copied()
    }

    /// The (interned) `null` constant.
    pub fn null(&mut self) -> Value {
        if let Some(v) = self.null {
            return v;
        }
        let v = self.new_value(ValueDef::Null, Type::NULL, None);
        self.null = Some(v);
        v
    }

    /// The entry block.
    pub fn entry(&self) -> Block {
        self.layout[0]
    }

    /// Append a new block labelled `name` to the layout.
    pub fn add_block(&mut self, name: &str) -> Block {
        let b = Block::new(self.blocks.len());
        self.blocks.push(BlockData {
            name: name.to_string(),
            insts: Vec::new(),
        });
        self.layout.push(b);
        b
    }

    /// Create an instruction (not yet placed in a block) with a result of type
    /// `result_ty`, if given. Returns the instruction and its result.
    pub fn create_inst(
        &mut self,
        kind: InstKind,
        result_ty: Option<Type>,
    ) -> (Inst, Option<Value>) {
        let inst = Inst::new(self.insts.len());
        let result = result_ty.map(|ty| self.new_value(ValueDef::Inst(inst), ty, None));
        self.insts.push(InstData {
            kind,
            result,
            block: None,
        });
        (inst, result)
    }

    /// Create an instruction and append it to `block`.
    pub fn append_inst(
        &mut self,
        block: Block,
        kind: InstKind,
        result_ty: Option<Type>,
    ) -> (Inst, Option<Value>) {
        let (inst, result) = self.create_inst(kind, result_ty);
        self.insts[inst.index()].block = Some(block);
        self.blocks[block.index()].insts.push(inst);
        (inst, result)
    }

    /// Insert an already created instruction into `block` at position `pos`.
    pub fn insert_inst(&mut self, block: Block, pos: usize, inst: Inst) {
        self.insts[inst.index()].block = Some(block);
        self.blocks[block.index()].insts.insert(pos, inst);
    }

    /// Remove `inst` from its block (the arena entry stays, detached).
    pub fn remove_inst(&mut self, inst: Inst) {
        if let Some(b) = self.insts[inst.index()].block.take() {
            self.blocks[b.index()].insts.retain(|&i| i != inst);
        }
    }

    /// Remove each of `insts` from its block, like [`Function::remove_inst`]
    /// on each in turn, but in one pass over each block concerned rather than
    /// one per instruction.
    pub fn remove_insts(&mut self, insts: &[Inst]) {
        if insts.len() <= 8 {
            insts.iter().for_each(|&i| self.remove_inst(i));
            return;
        }
        let mut gone = vec![false; self.insts.len()];
        let mut blocks = Vec::new();
        for &i in insts {
            if let Some(b) = self.insts[i.index()].block.take() {
                gone[i.index()] = true;
                blocks.push(b);
            }
        }
        blocks.sort_unstable();
        blocks.dedup();
        for b in blocks {
            self.blocks[b.index()].insts.retain(|i| !gone[i.index()]);
        }
    }

    /// Remove `block` from the layout (its instructions are detached).
    pub fn remove_block(&mut self, block: Block) {
        self.remove_blocks_where(|b| b == block);
    }

    /// Remove every layout block for which `dead` holds (their instructions
    /// are detached), in one pass over the layout: removing k blocks one by
    /// one would cost k passes. Returns how many went.
    pub fn remove_blocks_where(&mut self, mut dead: impl FnMut(Block) -> bool) -> usize {
        let before = self.layout.len();
        let mut gone = Vec::new();
        self.layout.retain(|&b| {
            let d = dead(b);
            if d {
                gone.push(b);
            }
            !d
        });
        for b in gone {
            for inst in std::mem::take(&mut self.blocks[b.index()].insts) {
                self.insts[inst.index()].block = None;
            }
        }
        before - self.layout.len()
    }

    /// The instruction `inst`.
    pub fn inst(&self, inst: Inst) -> &InstData {
        &self.insts[inst.index()]
    }

    /// The type of value `v`.
    pub fn value_type(&self, v: Value) -> Type {
        self.values[v.index()].ty
    }

    /// The definition of value `v`.
    pub fn value_def(&self, v: Value) -> ValueDef {
        self.values[v.index()].def
    }

    /// The integer constant `v` is, if it is one.
    pub fn as_const(&self, v: Value) -> Option<i64> {
        match self.values[v.index()].def {
            ValueDef::Const(c) => Some(c),
            _ => None,
        }
    }

    /// The instruction defining `v`, if it is an instruction result.
    pub fn def_inst(&self, v: Value) -> Option<Inst> {
        match self.values[v.index()].def {
            ValueDef::Inst(i) => Some(i),
            _ => None,
        }
    }

    /// The terminator of `block`, if it has one.
    pub fn terminator(&self, block: Block) -> Option<Inst> {
        let last = *self.blocks[block.index()].insts.last()?;
        self.insts[last.index()]
            .kind
            .is_terminator()
            .then_some(last)
    }

    /// The successors of `block` (from its terminator).
    pub fn successors(&self, block: Block) -> Vec<Block> {
        match self.terminator(block) {
            Some(t) => self.insts[t.index()].kind.successors().collect(),
            None => Vec::new(),
        }
    }

    /// Every instruction placed in the layout, block by block.
    pub fn inst_iter(&self) -> impl Iterator<Item = Inst> + '_ {
        self.layout
            .iter()
            .flat_map(move |b| self.blocks[b.index()].insts.iter().copied())
    }

    /// For each value, the placed instructions that use it (computed afresh; O(size)).
    pub fn compute_uses(&self) -> Vec<Vec<Inst>> {
        let mut uses = vec![Vec::new(); self.values.len()];
        for inst in self.inst_iter() {
            self.insts[inst.index()].kind.for_each_operand(|v| {
                let u: &mut Vec<Inst> = &mut uses[v.index()];
                if u.last() != Some(&inst) {
                    u.push(inst);
                }
            });
        }
        uses
    }

    /// Replace every use of `old` by `new` in placed instructions.
    pub fn replace_all_uses(&mut self, old: Value, new: Value) {
        self.for_each_placed_kind_mut(|kind| {
            kind.for_each_operand_mut(|v| {
                if *v == old {
                    *v = new;
                }
            })
        });
    }

    /// Call `f` on the kind of every instruction placed in the layout, block
    /// by block, to edit it in place.
    pub fn for_each_placed_kind_mut(&mut self, mut f: impl FnMut(&mut InstKind)) {
        let Function {
            layout,
            blocks,
            insts,
            ..
        } = self;
        for b in layout.iter() {
            for &inst in &blocks[b.index()].insts {
                f(&mut insts[inst.index()].kind);
            }
        }
    }

    /// The number of instructions placed in the layout.
    pub fn placed_inst_count(&self) -> usize {
        self.layout
            .iter()
            .map(|b| self.blocks[b.index()].insts.len())
            .sum()
    }
}

/// The source names of a function's values, kept apart from the value arena:
/// the passes, which never read names, walk 32 bytes per value instead of 56,
/// and cloning or dropping a function costs one allocation for all its names
/// rather than one per name.
#[derive(Clone, Default, Debug)]
struct ValueNames {
    /// Every name, one after the other.
    text: String,
    /// By value index: where its name sits in `text` (start, end); `NO_NAME`
    /// as the start, or an index past the end, for a value without one.
    spans: Vec<(u32, u32)>,
}

/// The start of the span of a value without a name.
const NO_NAME: u32 = u32::MAX;

impl ValueNames {
    fn get(&self, v: Value) -> Option<&str> {
        match self.spans.get(v.index()) {
            Some(&(start, end)) if start != NO_NAME => {
                Some(&self.text[start as usize..end as usize])
            }
            _ => None,
        }
    }

    fn set(&mut self, v: Value, name: &str) {
        if self.spans.len() <= v.index() {
            self.spans.resize(v.index() + 1, (NO_NAME, 0));
        }
        let start = self.text.len();
        self.text.push_str(name);
        let span = (start, self.text.len());
        let span = (u32::try_from(span.0), u32::try_from(span.1));
        match span {
            (Ok(s), Ok(e)) if s != NO_NAME && e != NO_NAME => self.spans[v.index()] = (s, e),
            // Over 4 GiB of names: keep the value unnamed (the printer names it).
            _ => self.text.truncate(start),
        }
    }

    /// The named values with their names, in value order.
    fn iter(&self) -> impl Iterator<Item = (usize, &str)> + '_ {
        (0..self.spans.len()).filter_map(|i| self.get(Value::new(i)).map(|n| (i, n)))
    }
}

/// Names compare as the value → name map they hold (not as their storage).
impl PartialEq for ValueNames {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}
impl Eq for ValueNames {}

impl std::hash::Hash for ValueNames {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for (i, n) in self.iter() {
            i.hash(state);
            n.hash(state);
        }
    }
}
