//! A builder for functions, used by tests, the program generator and passes.
//!
//! It computes result types from the module (field types, global types, callee
//! return types) so callers only say what the instruction does.

use crate::entities::{Block, FuncId, GlobalId, Inst, StructId, Value};
use crate::function::Function;
use crate::inst::{Addr, BinOp, Callee, FieldRef, InstKind, UnOp};
use crate::module::Module;
use crate::types::Type;

/// Builds one function against a module's declarations.
pub struct FunctionBuilder<'m> {
    /// The module whose types, globals, externs and functions are referenced.
    pub module: &'m Module,
    /// The function under construction.
    pub func: Function,
    current: Option<Block>,
}

impl<'m> FunctionBuilder<'m> {
    /// Start a function named `name` returning `ret`.
    pub fn new(module: &'m Module, name: &str, ret: Option<Type>) -> Self {
        FunctionBuilder {
            module,
            func: Function::new(name, ret),
            current: None,
        }
    }

    /// Add a parameter.
    pub fn param(&mut self, name: &str, ty: Type) -> Value {
        self.func.add_param(Some(name), ty)
    }

    /// Add a block (the first one added is the entry) and make it current.
    pub fn block(&mut self, name: &str) -> Block {
        let b = self.func.add_block(name);
        self.current = Some(b);
        b
    }

    /// Add a block without switching to it.
    pub fn create_block(&mut self, name: &str) -> Block {
        self.func.add_block(name)
    }

    /// Continue appending to `b`.
    pub fn switch_to(&mut self, b: Block) {
        self.current = Some(b);
    }

    /// The block instructions are appended to.
    pub fn current_block(&self) -> Block {
        self.current.expect("FunctionBuilder: no current block")
    }

    /// The integer constant `c`.
    pub fn iconst(&mut self, c: i64) -> Value {
        self.func.iconst(c)
    }

    /// The null constant.
    pub fn null(&mut self) -> Value {
        self.func.null()
    }

    /// Append an instruction with the given result type.
    pub fn push(&mut self, kind: InstKind, ty: Option<Type>) -> (Inst, Option<Value>) {
        let b = self.current_block();
        self.func.append_inst(b, kind, ty)
    }

    fn value(&mut self, kind: InstKind, ty: Type) -> Value {
        self.push(kind, Some(ty)).1.expect("result")
    }

    fn effect(&mut self, kind: InstKind) -> Inst {
        self.push(kind, None).0
    }

    /// `op a, b`.
    pub fn binary(&mut self, op: BinOp, a: Value, b: Value) -> Value {
        self.value(InstKind::Binary(op, a, b), Type::I64)
    }

    /// `op a` (`copy` keeps the operand's type).
    pub fn unary(&mut self, op: UnOp, a: Value) -> Value {
        let ty = if op == UnOp::Copy {
            self.func.value_type(a)
        } else {
            Type::I64
        };
        self.value(InstKind::Unary(op, a), ty)
    }

    /// `select c, a, b`.
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let ta = self.func.value_type(a);
        let ty = if ta == Type::NULL {
            self.func.value_type(b)
        } else {
            ta
        };
        self.value(InstKind::Select(c, a, b), ty)
    }

    /// `new T`.
    pub fn new_object(&mut self, s: StructId) -> Value {
        self.value(InstKind::New(s), Type::object(s))
    }

    /// `newarray E, n`.
    pub fn new_array(&mut self, elem: Type, len: Value) -> Value {
        self.value(InstKind::NewArray { elem, len }, elem.array_of())
    }

    /// The type a load from `addr` produces.
    pub fn addr_type(&self, addr: &Addr) -> Type {
        match *addr {
            Addr::Field { field, .. } => self.module.field(field).ty,
            Addr::Elem { base, .. } => self
                .func
                .value_type(base)
                .elem()
                .expect("element load from a non-array"),
            Addr::Global(g) => self.module.globals[g.index()].ty,
        }
    }

    /// `load addr` (or `load.volatile`).
    pub fn load(&mut self, addr: Addr, volatile: bool) -> Value {
        let ty = self.addr_type(&addr);
        self.value(InstKind::Load { addr, volatile }, ty)
    }

    /// `load %base.field`.
    pub fn load_field(&mut self, base: Value, field: FieldRef) -> Value {
        self.load(Addr::Field { base, field }, false)
    }

    /// `load %base[index]`.
    pub fn load_elem(&mut self, base: Value, index: Value) -> Value {
        self.load(Addr::Elem { base, index }, false)
    }

    /// `load @g`.
    pub fn load_global(&mut self, g: GlobalId) -> Value {
        self.load(Addr::Global(g), false)
    }

    /// `store addr, value` (or `store.volatile`).
    pub fn store(&mut self, addr: Addr, value: Value, volatile: bool) -> Inst {
        self.effect(InstKind::Store {
            addr,
            value,
            volatile,
        })
    }

    /// `store %base.field, value`.
    pub fn store_field(&mut self, base: Value, field: FieldRef, value: Value) -> Inst {
        self.store(Addr::Field { base, field }, value, false)
    }

    /// `store %base[index], value`.
    pub fn store_elem(&mut self, base: Value, index: Value, value: Value) -> Inst {
        self.store(Addr::Elem { base, index }, value, false)
    }

    /// `store @g, value`.
    pub fn store_global(&mut self, g: GlobalId, value: Value) -> Inst {
        self.store(Addr::Global(g), value, false)
    }

    /// `len a`.
    pub fn len(&mut self, a: Value) -> Value {
        self.value(InstKind::Len(a), Type::I64)
    }

    /// `call` of a module function or extern; `ret` is the callee's return type
    /// (looked up when `None` and the callee is already in the module).
    pub fn call(&mut self, callee: Callee, args: Vec<Value>) -> (Inst, Option<Value>) {
        let ret = match callee {
            Callee::Extern(e) => self.module.externs[e.index()].ret,
            Callee::Func(f) => self.module.funcs.get(f.index()).and_then(|f| f.ret),
        };
        self.push(InstKind::Call { callee, args }, ret)
    }

    /// `call @f(args)` of a function that is not in the module yet (e.g. itself).
    pub fn call_func_with_ret(
        &mut self,
        f: FuncId,
        args: Vec<Value>,
        ret: Option<Type>,
    ) -> (Inst, Option<Value>) {
        self.push(
            InstKind::Call {
                callee: Callee::Func(f),
                args,
            },
            ret,
        )
    }

    /// `escape v`.
    pub fn escape(&mut self, v: Value) -> Inst {
        self.effect(InstKind::Escape(v))
    }

    /// `guard c`.
    pub fn guard(&mut self, c: Value) -> Inst {
        self.effect(InstKind::Guard(c))
    }

    /// `nullcheck r`.
    pub fn nullcheck(&mut self, r: Value) -> Inst {
        self.effect(InstKind::NullCheck(r))
    }

    /// `boundscheck a, i`.
    pub fn boundscheck(&mut self, a: Value, i: Value) -> Inst {
        self.effect(InstKind::BoundsCheck(a, i))
    }

    /// `phi` of type `ty`; entries may be filled in later with [`Self::set_phi_entries`].
    pub fn phi(&mut self, ty: Type, entries: Vec<(Block, Value)>) -> Value {
        self.value(InstKind::Phi(entries), ty)
    }

    /// Replace the entries of the phi defining `phi`.
    pub fn set_phi_entries(&mut self, phi: Value, entries: Vec<(Block, Value)>) {
        let inst = self.func.def_inst(phi).expect("phi value");
        self.func.insts[inst.index()].kind = InstKind::Phi(entries);
    }

    /// `jmp target`.
    pub fn jmp(&mut self, target: Block) -> Inst {
        self.effect(InstKind::Jmp(target))
    }

    /// `br c, then, else`.
    pub fn br(&mut self, c: Value, then_b: Block, else_b: Block) -> Inst {
        self.effect(InstKind::Br(c, then_b, else_b))
    }

    /// `ret v` / `ret`.
    pub fn ret(&mut self, v: Option<Value>) -> Inst {
        self.effect(InstKind::Ret(v))
    }

    /// `unreachable`.
    pub fn unreachable(&mut self) -> Inst {
        self.effect(InstKind::Unreachable)
    }

    /// The finished function.
    pub fn finish(self) -> Function {
        self.func
    }
}
