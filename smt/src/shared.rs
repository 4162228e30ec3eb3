//! What the two sides of a check share: the inputs (parameters, the initial
//! heap, the initial globals), the assumptions that make an input well-typed,
//! and the environment's uninterpreted functions. Both functions start from the
//! very same terms, so every aliasing of the inputs is covered at once.

use ir::{Module, Type};
use z3::ast::{Array, Bool, BV};
use z3::{FuncDecl, Sort};

/// Bit 63 marks the identity of an object allocated during the execution;
/// initial objects have it clear, `null` is 0.
pub const FRESH_BIT: u64 = 1 << 63;

/// The largest length of an array (IR.md §4 `bad_length`).
pub const MAX_LEN: i64 = 65536;

/// A 64-bit constant.
pub fn bv(v: i64) -> BV {
    BV::from_i64(v, 64)
}

/// Whether identity `x` is of an object allocated during the execution.
pub fn is_fresh(x: &BV) -> Bool {
    x.extract(63, 63).eq(BV::from_u64(1, 1))
}

/// The sort of values, identities and indices.
pub fn word() -> Sort {
    Sort::bitvector(64)
}

/// The shared inputs and the environment model of one check.
pub struct Shared {
    /// One term per parameter.
    pub params: Vec<BV>,
    /// Initial contents of each field leaf, `[struct][field]`: identity → value.
    pub fields0: Vec<Vec<Array>>,
    /// Every array element type the modules mention, in a fixed order.
    pub elem_types: Vec<Type>,
    /// Initial elements per element type: identity → (index → value).
    pub elems0: Vec<Array>,
    /// Initial lengths per element type: identity → length.
    pub lens0: Vec<Array>,
    /// Initial value of each global.
    pub globals0: Vec<BV>,
    /// Facts about the inputs (well-typedness): asserted in every query.
    pub assumptions: Vec<Bool>,
    /// Facts tried first when looking for a counterexample (small arrays), dropped if unsat.
    pub preferences: Vec<Bool>,
    /// Every array identity whose length the functions read (a counterexample
    /// gives the other arrays length 0: nothing depends on them).
    pub len_reads: Vec<(usize, BV)>,
    /// The leaves a step without declared effects reads and writes (`None`:
    /// every leaf; see [`crate::reach`]).
    pub env_leaves: Option<Vec<crate::env::Leaf>>,
}

impl Shared {
    /// Fresh inputs for functions of `m` with parameters of types `params`;
    /// `others` are more modules whose array types must be covered.
    pub fn new(m: &Module, param_types: &[Type], others: &[&Module]) -> Shared {
        let w = word();
        let arr = Sort::array(&w, &w);
        let fields0 = m
            .structs
            .iter()
            .enumerate()
            .map(|(si, s)| {
                (0..s.fields.len())
                    .map(|fi| {
                        Array::new_const(
                            format!("{}.{}#{si}.{fi}", s.name, s.fields[fi].name),
                            &w,
                            &w,
                        )
                    })
                    .collect()
            })
            .collect();
        let mut elem_types = Vec::new();
        for module in std::iter::once(m).chain(others.iter().copied()) {
            collect_elem_types(module, &mut elem_types);
        }
        let elems0 = elem_types
            .iter()
            .enumerate()
            .map(|(i, _)| Array::new_const(format!("elems#{i}"), &w, &arr))
            .collect();
        let lens0 = elem_types
            .iter()
            .enumerate()
            .map(|(i, _)| Array::new_const(format!("lens#{i}"), &w, &w))
            .collect();
        let globals0: Vec<BV> = m
            .globals
            .iter()
            .map(|g| BV::new_const(format!("@{}", g.name), 64))
            .collect();
        let params: Vec<BV> = (0..param_types.len())
            .map(|i| BV::new_const(format!("param#{i}"), 64))
            .collect();
        let mut assumptions = Vec::new();
        let initial_refs = params
            .iter()
            .zip(param_types)
            .chain(globals0.iter().zip(m.globals.iter().map(|g| &g.ty)));
        for (v, ty) in initial_refs {
            if ty.is_ref() {
                assumptions.push(is_fresh(v).not());
            }
        }
        Shared {
            params,
            fields0,
            elem_types,
            elems0,
            lens0,
            globals0,
            assumptions,
            preferences: Vec::new(),
            len_reads: Vec::new(),
            env_leaves: None,
        }
    }
}

impl Shared {
    /// The position of element type `e` in [`Shared::elem_types`].
    pub fn elem_index(&self, e: Type) -> Option<usize> {
        self.elem_types.iter().position(|t| *t == e)
    }

    /// The uninterpreted function `name` (z3 identifies functions by name and
    /// signature, so both sides get the same one).
    pub fn env_func(&self, name: &str, domain: &[Sort], range: &Sort) -> FuncDecl {
        let refs: Vec<&Sort> = domain.iter().collect();
        FuncDecl::new(name, &refs, range)
    }
}

/// Add every array element type of `m` (and the element types inside them) to `out`.
fn collect_elem_types(m: &Module, out: &mut Vec<Type>) {
    let mut add = |mut t: Type| {
        while let Some(e) = t.elem() {
            if !out.contains(&e) {
                out.push(e);
            }
            t = e;
        }
    };
    m.structs
        .iter()
        .flat_map(|s| &s.fields)
        .for_each(|f| add(f.ty));
    m.globals.iter().for_each(|g| add(g.ty));
    for e in &m.externs {
        e.params.iter().for_each(|t| add(*t));
        e.ret.iter().for_each(|t| add(*t));
    }
    for f in &m.funcs {
        f.values.iter().for_each(|v| add(v.ty));
        for i in &f.insts {
            if let ir::InstKind::NewArray { elem, .. } = i.kind {
                add(elem.array_of());
            }
        }
    }
}
