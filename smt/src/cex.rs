//! Counterexamples: a z3 model of the shared inputs turned into an input of
//! IR.md §7 (the initial heap reachable from the parameters and globals).

use crate::encode::{select, select_arr};
use crate::shared::{Shared, FRESH_BIT, MAX_LEN};
use ir::{Function, InputObject, InputSpec, InputValue, Module, Type};
use rustc_hash::FxHashMap;
use z3::ast::BV;
use z3::Model;

/// Build the input the model describes for function `f` of `m`.
pub fn extract(model: &Model, sh: &Shared, m: &Module, f: &Function) -> InputSpec {
    let mut b = Builder {
        model,
        sh,
        m,
        objects: Vec::new(),
        ids: FxHashMap::default(),
        todo: Vec::new(),
        read: Default::default(),
    };
    let read = sh.len_reads.iter().map(|(e, t)| (*e, b.eval(t))).collect();
    b.read = read;
    let params = f
        .params
        .iter()
        .zip(&sh.params)
        .map(|(p, t)| b.value(f.value_type(*p), t))
        .collect();
    let globals = m
        .globals
        .iter()
        .zip(&sh.globals0)
        .map(|(g, t)| b.value(g.ty, t))
        .collect();
    while let Some((idx, ty, id)) = b.todo.pop() {
        b.fill(idx, ty, id);
    }
    let n = b.objects.len();
    InputSpec {
        objects: b.objects,
        params,
        globals,
        object_names: vec![None; n],
    }
}

struct Builder<'a> {
    model: &'a Model,
    sh: &'a Shared,
    m: &'a Module,
    objects: Vec<InputObject>,
    ids: FxHashMap<(Type, u64), usize>,
    todo: Vec<(usize, Type, u64)>,
    read: rustc_hash::FxHashSet<(usize, u64)>,
}

impl Builder<'_> {
    fn eval(&self, t: &BV) -> u64 {
        self.model
            .eval(t, true)
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    }

    /// The input value of a slot of type `ty` holding term `t`.
    fn value(&mut self, ty: Type, t: &BV) -> InputValue {
        let v = self.eval(t);
        if ty.is_int() {
            return InputValue::Int(v as i64);
        }
        if v == 0 || v & FRESH_BIT != 0 || ty == Type::NULL {
            return InputValue::Null;
        }
        if let Some(&i) = self.ids.get(&(ty, v)) {
            return InputValue::Obj(i);
        }
        let idx = self.objects.len();
        self.objects.push(match ty.as_struct() {
            Some(s) => InputObject::Struct {
                ty: s,
                fields: Vec::new(),
            },
            None => InputObject::Array {
                elem: ty.elem().unwrap_or(Type::I64),
                elems: Vec::new(),
            },
        });
        self.ids.insert((ty, v), idx);
        self.todo.push((idx, ty, v));
        InputValue::Obj(idx)
    }

    /// Fill in the contents of object `idx` (of type `ty`, identity `id`).
    fn fill(&mut self, idx: usize, ty: Type, id: u64) {
        let idt = BV::from_u64(id, 64);
        if let Some(s) = ty.as_struct() {
            let decls: Vec<Type> = self.m.struct_decl(s).fields.iter().map(|f| f.ty).collect();
            let fields = decls
                .iter()
                .enumerate()
                .map(|(fi, fty)| {
                    let t = select(&self.sh.fields0[s.index()][fi], &idt);
                    self.value(*fty, &t)
                })
                .collect();
            self.objects[idx] = InputObject::Struct { ty: s, fields };
            return;
        }
        let Some(e) = ty.elem() else { return };
        let Some(ei) = self.sh.elem_index(e) else {
            return;
        };
        let len = if self.read.contains(&(ei, id)) {
            (self.eval(&select(&self.sh.lens0[ei], &idt)) as i64).clamp(0, MAX_LEN)
        } else {
            0
        };
        let row = select_arr(&self.sh.elems0[ei], &idt);
        let elems = (0..len)
            .map(|i| self.value(e, &select(&row, &BV::from_i64(i, 64))))
            .collect();
        self.objects[idx] = InputObject::Array { elem: e, elems };
    }
}
