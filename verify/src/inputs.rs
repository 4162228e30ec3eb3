//! Input instantiation: the several [`ir::InputSpec`]s one generated program
//! runs under, all derived from one seed. The first three have fixed aliasing
//! modes — every reference parameter its own object, every parameter of a type
//! the same object, random partial aliasing — and any further ones are random
//! partial. Contents are random: small and extreme integers, nulls, and
//! reference fields that point to themselves or to other input objects (cycles).

use crate::gen::rng::Rng;
use ir::{Base, Function, InputObject, InputSpec, InputValue, Module, Type};

/// How the reference parameters of one instantiation share objects.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AliasMode {
    /// Every reference parameter gets its own fresh object.
    Distinct,
    /// Parameters of the same type all get the same object.
    AllAliased,
    /// Each parameter is null, an earlier object of its type, or fresh.
    Partial,
}

/// The aliasing mode of instantiation number `k`.
pub fn mode_of(k: usize) -> AliasMode {
    match k {
        0 => AliasMode::Distinct,
        1 => AliasMode::AllAliased,
        _ => AliasMode::Partial,
    }
}

/// Most objects one input creates (bounds the heap and the output).
const MAX_OBJECTS: usize = 10;

struct Builder<'m> {
    m: &'m Module,
    rng: Rng,
    spec: InputSpec,
    /// The [`type_key`] of each object, in order.
    types: Vec<u64>,
}

/// A number that tells types apart, compared in one instruction (objects
/// are looked up by type for every slot that may share one).
fn type_key(ty: Type) -> u64 {
    let base = match ty.base {
        Base::I64 => 0,
        Base::Null => 1,
        Base::Struct(s) => 2 + s.index() as u64,
    };
    base << 8 | u64::from(ty.dims)
}

impl Builder<'_> {
    fn int(&mut self) -> i64 {
        const EXTREME: [i64; 4] = [i64::MIN, i64::MAX, -1, 1 << 40];
        match self.rng.below(10) {
            0 => EXTREME[self.rng.below(4) as usize],
            1 => 0,
            _ => self.rng.below(8) as i64 - 2,
        }
    }

    fn alloc(&mut self, ty: Type) -> usize {
        let obj = match ty.as_struct() {
            Some(s) => InputObject::Struct {
                ty: s,
                fields: vec![InputValue::Null; self.m.struct_decl(s).fields.len()],
            },
            None => {
                let len = if self.rng.chance(1, 40) {
                    0
                } else {
                    2 + self.rng.below(3) as usize
                };
                InputObject::Array {
                    elem: ty.elem().unwrap_or(Type::I64),
                    elems: vec![InputValue::Null; len],
                }
            }
        };
        self.spec.objects.push(obj);
        self.types.push(type_key(ty));
        self.spec.objects.len() - 1
    }

    fn existing(&mut self, ty: Type) -> Option<usize> {
        let key = type_key(ty);
        let n = self.types.iter().filter(|&&t| t == key).count();
        if n == 0 {
            return None;
        }
        let k = self.rng.below(n as u64) as usize;
        self.types
            .iter()
            .enumerate()
            .filter(|(_, &t)| t == key)
            .map(|(i, _)| i)
            .nth(k)
    }

    /// A value for a slot of type `ty` inside the heap: int, null, an existing object, or a new one.
    fn slot(&mut self, ty: Type) -> InputValue {
        if ty.is_int() {
            return InputValue::Int(self.int());
        }
        match self.rng.below(20) {
            0 => InputValue::Null,
            1..=8 => match self.existing(ty) {
                Some(o) => InputValue::Obj(o),
                None if self.spec.objects.len() < MAX_OBJECTS => InputValue::Obj(self.alloc(ty)),
                None => InputValue::Null,
            },
            _ if self.spec.objects.len() < MAX_OBJECTS => InputValue::Obj(self.alloc(ty)),
            _ => match self.existing(ty) {
                Some(o) => InputValue::Obj(o),
                None => InputValue::Null,
            },
        }
    }

    fn param(&mut self, ty: Type, mode: AliasMode) -> InputValue {
        if ty.is_int() {
            return InputValue::Int(self.int());
        }
        match mode {
            AliasMode::Distinct => InputValue::Obj(self.alloc(ty)),
            AliasMode::AllAliased => {
                InputValue::Obj(self.existing(ty).unwrap_or_else(|| self.alloc(ty)))
            }
            AliasMode::Partial => match self.rng.below(32) {
                0 => InputValue::Null,
                1..=12 => match self.existing(ty) {
                    Some(o) => InputValue::Obj(o),
                    None => InputValue::Obj(self.alloc(ty)),
                },
                _ => InputValue::Obj(self.alloc(ty)),
            },
        }
    }

    /// Fill every object's fields/elements (objects created while filling are filled too).
    fn fill(&mut self) {
        let m = self.m;
        let mut i = 0;
        while i < self.spec.objects.len() {
            // Slot by slot in order (filling may append objects, never reorder them).
            match self.spec.objects[i] {
                InputObject::Struct { ty, .. } => {
                    for (k, f) in m.struct_decl(ty).fields.iter().enumerate() {
                        let v = self.slot(f.ty);
                        self.set(i, k, v);
                    }
                }
                InputObject::Array { elem, ref elems } => {
                    for k in 0..elems.len() {
                        let v = self.slot(elem);
                        self.set(i, k, v);
                    }
                }
            }
            i += 1;
        }
    }

    /// Slot `k` of object `i` holds `v`.
    fn set(&mut self, i: usize, k: usize, v: InputValue) {
        match &mut self.spec.objects[i] {
            InputObject::Struct { fields, .. } => fields[k] = v,
            InputObject::Array { elems, .. } => elems[k] = v,
        }
    }
}

/// Instantiation `k` of the inputs of `f` in module `m`, from `seed`.
pub fn instantiate(m: &Module, f: &Function, seed: u64, k: usize) -> InputSpec {
    let mode = mode_of(k);
    // Parameters may each get an object, and filling adds up to MAX_OBJECTS.
    let room = MAX_OBJECTS.max(f.params.len() + 1);
    let mut b = Builder {
        m,
        rng: Rng::new(crate::gen::rng::hash_seq(&[seed, k as u64])),
        spec: InputSpec {
            objects: Vec::with_capacity(room),
            params: Vec::with_capacity(f.params.len()),
            globals: Vec::with_capacity(m.globals.len()),
            object_names: Vec::new(),
        },
        types: Vec::with_capacity(room),
    };
    for &p in &f.params {
        let ty = f.value_type(p);
        let v = b.param(ty, mode);
        b.spec.params.push(v);
    }
    for g in &m.globals {
        let ty = g.ty;
        let v = if ty.is_int() {
            InputValue::Int(b.int())
        } else if b.rng.chance(1, 8) {
            InputValue::Null
        } else {
            b.slot(ty)
        };
        b.spec.globals.push(v);
    }
    b.fill();
    b.spec
}

/// `n` instantiations (the three modes first) of the inputs of `f`.
pub fn instantiate_all(m: &Module, f: &Function, seed: u64, n: usize) -> Vec<InputSpec> {
    (0..n).map(|k| instantiate(m, f, seed, k)).collect()
}

/// Whether two reference parameters are bound to the same object.
pub fn params_alias(spec: &InputSpec) -> bool {
    let objs: Vec<usize> = spec
        .params
        .iter()
        .filter_map(|v| match v {
            InputValue::Obj(o) => Some(*o),
            _ => None,
        })
        .collect();
    (0..objs.len()).any(|i| objs[i + 1..].contains(&objs[i]))
}

/// Whether some object is referenced from two places (parameters, globals,
/// fields, elements): a parameter and a loaded field may then be the same object.
pub fn shares_objects(spec: &InputSpec) -> bool {
    let mut seen = vec![0u32; spec.objects.len()];
    let mut count = |v: &InputValue| {
        if let InputValue::Obj(o) = v {
            if let Some(s) = seen.get_mut(*o) {
                *s += 1;
            }
        }
    };
    spec.params.iter().for_each(&mut count);
    spec.globals.iter().for_each(&mut count);
    for o in &spec.objects {
        match o {
            InputObject::Struct { fields, .. } => fields.iter().for_each(&mut count),
            InputObject::Array { elems, .. } => elems.iter().for_each(&mut count),
        }
    }
    seen.iter().any(|&n| n >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_keys_tell_types_apart() {
        let s = |k| Type::object(ir::StructId::new(k));
        let tys = [
            Type::I64,
            Type::NULL,
            s(0),
            s(1),
            Type::I64.array_of(),
            s(0).array_of(),
            s(0).array_of().array_of(),
        ];
        for a in tys {
            for b in tys {
                assert_eq!(type_key(a) == type_key(b), a == b, "{a:?} {b:?}");
            }
        }
    }
}
