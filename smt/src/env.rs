//! The environment model (IR.md §6) for the SMT encoding. Step k of either
//! side is an uninterpreted function of (k, the step's name, its arguments,
//! the heap it may read as the environment sees it): the same inputs give the
//! same result and the same heap effect on both sides, whatever the real
//! environment is. The environment never sees or touches an object the
//! function allocated and never exposed (stored, returned, escaped or handed to
//! a step); every step is logged (name and arguments), and the two logs are
//! compared, so a different sequence of steps is a difference.

use crate::shared::{bv, is_fresh, word, Shared};
use crate::state::{word_array, State};
use ir::{EffectLoc, ExternId, Module, Type};
use z3::ast::{lambda_const, Array, Ast, Bool, Dynamic, BV};
use z3::Sort;

/// A heap leaf the environment may read or write.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Leaf {
    /// Field `[struct][field]`.
    Field(usize, usize),
    /// Elements of arrays with element type `Type`.
    Elems(Type),
    /// A global.
    Global(usize),
}

/// One environment step: its name, arguments, reach and result type.
pub struct StepSpec {
    /// The uninterpreted functions' name prefix (`ext.NAME` or `vol`).
    pub name: String,
    /// The arguments (at most four).
    pub args: Vec<BV>,
    /// Leaves it may read; `None`: every leaf.
    pub reads: Option<Vec<Leaf>>,
    /// Leaves it may write; `None`: every leaf.
    pub writes: Option<Vec<Leaf>>,
    /// The type of its result, if it has one.
    pub ret: Option<Type>,
}

impl StepSpec {
    /// The step of a volatile access with these arguments.
    pub fn volatile(args: Vec<BV>) -> StepSpec {
        StepSpec {
            name: "vol".to_string(),
            args,
            reads: None,
            writes: None,
            ret: None,
        }
    }

    /// The step of a call of extern `e` with arguments `args`.
    pub fn call(m: &Module, e: ExternId, args: Vec<BV>) -> Result<StepSpec, String> {
        let ext = &m.externs[e.index()];
        let leaf = |l: &EffectLoc| match *l {
            EffectLoc::Field(f) => Leaf::Field(f.ty.index(), f.index as usize),
            EffectLoc::Elements(t) => Leaf::Elems(t),
            EffectLoc::Global(g) => Leaf::Global(g.index()),
        };
        let (reads, writes) = match &ext.effects {
            None => (None, None),
            Some(eff) => {
                let writes: Vec<Leaf> = eff.writes.iter().map(leaf).collect();
                // A written slot's new value depends on its old one: writes are read too.
                let mut reads: Vec<Leaf> = eff.reads.iter().map(leaf).collect();
                reads.extend(
                    writes
                        .iter()
                        .copied()
                        .filter(|w| !eff.reads.iter().map(leaf).any(|r| r == *w)),
                );
                (Some(reads), Some(writes))
            }
        };
        Ok(StepSpec {
            name: format!("ext.{}", ext.name),
            args,
            reads,
            writes,
            ret: ext.ret,
        })
    }
}

/// Every leaf of the heap.
fn all_leaves(sh: &Shared) -> Vec<Leaf> {
    let mut out = Vec::new();
    for (si, s) in sh.fields0.iter().enumerate() {
        out.extend((0..s.len()).map(|fi| Leaf::Field(si, fi)));
    }
    out.extend(sh.elem_types.iter().map(|t| Leaf::Elems(*t)));
    out.extend((0..sh.globals0.len()).map(Leaf::Global));
    out
}

fn leaf_name(sh: &Shared, l: Leaf) -> String {
    match l {
        Leaf::Field(s, f) => format!("f{s}.{f}"),
        Leaf::Elems(t) => format!("e{}", sh.elem_index(t).unwrap_or(usize::MAX)),
        Leaf::Global(g) => format!("g{g}"),
    }
}

/// `fresh(x) && !exposed[x]`: an object the environment cannot see.
fn hidden(x: &BV, st: &State) -> Bool {
    let exp = st.heap.exposed.select(x).as_bool().expect("bool array");
    Bool::and(&[is_fresh(x), exp.not()])
}

/// The leaf's current contents as the environment sees them (hidden objects
/// read as zero), and its sort.
fn visible(sh: &Shared, l: Leaf, st: &State) -> Option<(Dynamic, Sort)> {
    let x = BV::new_const("lam!x", 64);
    let h = hidden(&x, st);
    match l {
        Leaf::Field(s, f) => {
            let arr = st.heap.fields.get(s)?.get(f)?;
            let body = h.ite(&bv(0), &arr.select(&x).as_bv()?);
            Some((
                Dynamic::from_ast(&lambda_const(&[&x], &Dynamic::from_ast(&body))),
                word_array(),
            ))
        }
        Leaf::Elems(t) => {
            let ei = sh.elem_index(t)?;
            let zeros = Array::const_array(&word(), &bv(0));
            let body = h.ite(&zeros, &st.heap.elems[ei].select(&x).as_array()?);
            let sort = Sort::array(&word(), &word_array());
            Some((
                Dynamic::from_ast(&lambda_const(&[&x], &Dynamic::from_ast(&body))),
                sort,
            ))
        }
        Leaf::Global(g) => Some((Dynamic::from_ast(st.heap.globals.get(g)?), word())),
    }
}

/// Take one environment step from `st` under path condition `pc`: log it,
/// apply its heap effect, and return its result (if it has one).
pub fn env_step(sh: &mut Shared, spec: &StepSpec, pc: &Bool, st: &mut State) -> Option<BV> {
    let k = st.steps.clone();
    let name_id = name_hash(&spec.name);
    st.step_log[0] = st.step_log[0].store(&k, &BV::from_u64(name_id, 64));
    for (j, a) in spec.args.iter().enumerate() {
        st.step_log[j + 1] = st.step_log[j + 1].store(&k, a);
    }
    st.steps = st.steps.bvadd(bv(1));
    let all = all_leaves(sh);
    let reads = spec.reads.clone().unwrap_or_else(|| all.clone());
    let writes = spec.writes.clone().unwrap_or(all);
    let mut dom_terms: Vec<Dynamic> = vec![Dynamic::from_ast(&k)];
    let mut dom_sorts: Vec<Sort> = vec![word()];
    for j in 0..4 {
        let a = spec.args.get(j).cloned().unwrap_or_else(|| bv(0));
        dom_terms.push(Dynamic::from_ast(&a));
        dom_sorts.push(word());
    }
    let mut sig = String::new();
    for l in &reads {
        if let Some((t, s)) = visible(sh, *l, st) {
            dom_terms.push(t);
            dom_sorts.push(s);
            sig.push_str(&leaf_name(sh, *l));
            sig.push(',');
        }
    }
    let dargs: Vec<&dyn Ast> = dom_terms.iter().map(|d| d as &dyn Ast).collect();
    let result = spec.ret.map(|ty| {
        let f = sh.env_func(&format!("{}.ret({sig})", spec.name), &dom_sorts, &word());
        let r = f.apply(&dargs).as_bv().expect("word result");
        if ty.is_ref() {
            let ok = Bool::or(&[r.eq(bv(0)), hidden(&r, st).not()]);
            sh.assumptions.push(pc.implies(&ok));
        }
        r
    });
    let old = st.clone();
    for l in &writes {
        let name = format!("{}.w{}({sig})", spec.name, leaf_name(sh, *l));
        match *l {
            Leaf::Field(s, fi) => {
                let Some(cur) = old.heap.fields.get(s).and_then(|v| v.get(fi)) else {
                    continue;
                };
                let new = sh.env_func(&name, &dom_sorts, &word_array()).apply(&dargs);
                let new = new.as_array().expect("array");
                let x = BV::new_const("lam!x", 64);
                let body = hidden(&x, &old).ite(
                    &cur.select(&x).as_bv().expect("word"),
                    &new.select(&x).as_bv().expect("word"),
                );
                st.heap.fields[s][fi] = lambda_const(&[&x], &Dynamic::from_ast(&body));
            }
            Leaf::Elems(t) => {
                let Some(ei) = sh.elem_index(t) else { continue };
                let sort = Sort::array(&word(), &word_array());
                let new = sh.env_func(&name, &dom_sorts, &sort).apply(&dargs);
                let new = new.as_array().expect("array");
                let x = BV::new_const("lam!x", 64);
                let cur = &old.heap.elems[ei];
                let body = hidden(&x, &old).ite(
                    &cur.select(&x).as_array().expect("row"),
                    &new.select(&x).as_array().expect("row"),
                );
                st.heap.elems[ei] = lambda_const(&[&x], &Dynamic::from_ast(&body));
            }
            Leaf::Global(g) => {
                if g < st.heap.globals.len() {
                    let new = sh.env_func(&name, &dom_sorts, &word()).apply(&dargs);
                    st.heap.globals[g] = new.as_bv().expect("word");
                }
            }
        }
    }
    result
}

/// A stable number for a step name (the step log records it).
fn name_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}
