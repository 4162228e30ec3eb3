//! Test support: build small modules with `ir::FunctionBuilder`, inputs with a
//! tiny spec builder, and run them, comparing the three printed lines.

#![allow(dead_code)]

use interp::{Config, Execution, Program};
use ir::{
    Extern, ExternEffects, FieldRef, FuncId, FunctionBuilder, GlobalId, InputObject, InputSpec,
    InputValue, Module, StructId, Type, Value,
};

#[allow(unused_imports)]
pub use ir::{BinOp, Callee, UnOp};

/// A module under construction with the usual test types.
pub struct Fx {
    pub m: Module,
    pub point: StructId,
    pub node: StructId,
}

impl Fx {
    /// `type Point { x: i64, y: i64 }` and `type Node { val: i64, next: Node }`, no globals.
    pub fn new() -> Fx {
        let mut m = Module::new();
        let point = m.add_struct("Point", vec![("x", Type::I64), ("y", Type::I64)]);
        let node = m.add_struct("Node", vec![("val", Type::I64), ("next", Type::I64)]);
        // Fix the self reference now that the id exists.
        m.structs[node.index()].fields[1].ty = Type::object(node);
        Fx { m, point, node }
    }

    pub fn px(&self) -> FieldRef {
        FieldRef {
            ty: self.point,
            index: 0,
        }
    }
    pub fn py(&self) -> FieldRef {
        FieldRef {
            ty: self.point,
            index: 1,
        }
    }
    pub fn val(&self) -> FieldRef {
        FieldRef {
            ty: self.node,
            index: 0,
        }
    }
    pub fn next(&self) -> FieldRef {
        FieldRef {
            ty: self.node,
            index: 1,
        }
    }
    pub fn point_ty(&self) -> Type {
        Type::object(self.point)
    }
    pub fn node_ty(&self) -> Type {
        Type::object(self.node)
    }

    pub fn global(&mut self, name: &str, ty: Type) -> GlobalId {
        self.m.add_global(name, ty)
    }

    /// An extern without declared effects.
    pub fn ext(&mut self, name: &str, params: Vec<Type>, ret: Option<Type>) -> ir::ExternId {
        self.m.add_extern(Extern {
            name: name.into(),
            params,
            ret,
            effects: None,
        })
    }

    /// An extern with declared effects.
    pub fn ext_fx(
        &mut self,
        name: &str,
        params: Vec<Type>,
        ret: Option<Type>,
        reads: Vec<ir::EffectLoc>,
        writes: Vec<ir::EffectLoc>,
    ) -> ir::ExternId {
        self.m.add_extern(Extern {
            name: name.into(),
            params,
            ret,
            effects: Some(ExternEffects { reads, writes }),
        })
    }

    /// Add function `name(params) -> ret` whose entry block is built by `body`.
    pub fn func(
        &mut self,
        name: &str,
        params: &[Type],
        ret: Option<Type>,
        body: impl FnOnce(&mut FunctionBuilder, &[Value]),
    ) -> FuncId {
        let id = FuncId::new(self.m.funcs.len());
        let f = {
            let mut b = FunctionBuilder::new(&self.m, name, ret);
            let ps: Vec<Value> = params
                .iter()
                .enumerate()
                .map(|(i, &t)| b.param(&format!("p{i}"), t))
                .collect();
            b.block("entry");
            body(&mut b, &ps);
            b.finish()
        };
        self.m.add_func(f);
        id
    }

    pub fn run(&self, f: FuncId, inputs: &InputSpec) -> Execution {
        Program::new(&self.m).run(f, inputs, &Config::default())
    }

    pub fn run_with(&self, f: FuncId, inputs: &InputSpec, config: &Config) -> Execution {
        Program::new(&self.m).run(f, inputs, config)
    }

    /// The three printed lines of running `f` on `inputs`.
    pub fn show(&self, f: FuncId, inputs: &InputSpec) -> String {
        self.run(f, inputs).behaviour.to_string()
    }
}

/// Builds an [`InputSpec`].
#[derive(Default, Clone)]
pub struct Spec(pub InputSpec);

impl Spec {
    pub fn new() -> Spec {
        Spec::default()
    }
    /// Add an object; returns a value referring to it.
    pub fn obj(&mut self, ty: StructId, fields: Vec<InputValue>) -> InputValue {
        self.0.objects.push(InputObject::Struct { ty, fields });
        InputValue::Obj(self.0.objects.len() - 1)
    }
    /// Add an array; returns a value referring to it.
    pub fn arr(&mut self, elem: Type, elems: Vec<InputValue>) -> InputValue {
        self.0.objects.push(InputObject::Array { elem, elems });
        InputValue::Obj(self.0.objects.len() - 1)
    }
    /// Set a field of an already added object (to build cycles).
    pub fn set(&mut self, obj: InputValue, k: usize, v: InputValue) {
        if let (InputValue::Obj(i), InputObject::Struct { fields, .. }) =
            (obj, &mut self.0.objects.get_mut(obj_index(obj)).unwrap())
        {
            let _ = i;
            fields[k] = v;
        }
    }
    pub fn params(mut self, ps: Vec<InputValue>) -> InputSpec {
        self.0.params = ps;
        self.0
    }
    pub fn globals(&mut self, gs: Vec<InputValue>) {
        self.0.globals = gs;
    }
}

fn obj_index(v: InputValue) -> usize {
    match v {
        InputValue::Obj(i) => i,
        _ => panic!("not an object"),
    }
}

/// Inputs that are just integers.
pub fn ints(vs: &[i64]) -> InputSpec {
    InputSpec {
        params: vs.iter().map(|&v| InputValue::Int(v)).collect(),
        ..InputSpec::default()
    }
}

pub fn int(v: i64) -> InputValue {
    InputValue::Int(v)
}
pub const NULL: InputValue = InputValue::Null;
