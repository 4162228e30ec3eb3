//! The environment model (IR.md §6) for the SMT encoding. Step k of either
//! side is an uninterpreted function of (k, the step's name, its arguments,
//! the heap it may read as the environment sees it): the same inputs give the
//! same result and the same heap effect on both sides, whatever the real
//! environment is. The environment never sees or touches an object the
//! function allocated and never exposed (stored, returned, escaped or handed to
//! a step); every step is logged (name and arguments), and the two logs are
//! compared, so a different sequence of steps is a difference.

use crate::diff::exists_diff;
use crate::encode::{select, select_arr};
use crate::shared::{bv, is_fresh, word, Shared};
use crate::state::Alloc;
use crate::state::{word_array, State, STEP_COLUMNS};
use ir::{EffectLoc, ExternId, Module, Type};
use z3::ast::{Array, Ast, Bool, BV};

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
    /// The arguments (at most `STEP_COLUMNS - 1`).
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

/// `fresh(x) && !exposed[x]`: an object the environment cannot see.
fn hidden(x: &BV, st: &State) -> Bool {
    hidden_in(x, &st.heap.exposed)
}

/// The leaf's current contents and which objects are exposed: the environment
/// sees every slot except those of objects the function allocated and keeps
/// hidden (see [`Slot::differs`]).
fn visible(sh: &Shared, l: Leaf, st: &State) -> Option<Slot> {
    let exp = st.heap.exposed.clone();
    match l {
        Leaf::Field(s, f) => Some(Slot::Words(st.heap.fields.get(s)?.get(f)?.clone(), exp)),
        Leaf::Elems(t) => Some(Slot::Rows(st.heap.elems[sh.elem_index(t)?].clone(), exp)),
        Leaf::Global(g) => Some(Slot::Word(st.heap.globals.get(g)?.clone())),
    }
}

/// The contents of a leaf: a global's word, a field's array, or the element
/// rows (with the exposed-objects array that says which slots are visible).
#[derive(Clone)]
pub enum Slot {
    /// A global.
    Word(BV),
    /// A field leaf: identity → word.
    Words(Array, Array),
    /// An element leaf: identity → (index → word).
    Rows(Array, Array),
}

/// `fresh(x) && !exposed[x]`.
pub fn hidden_in(x: &BV, exposed: &Array) -> Bool {
    let e = exposed.select(x).as_bool().expect("bool array");
    Bool::and(&[is_fresh(x), e.not()])
}

impl Slot {
    /// "The two differ somewhere the environment can see", with a free
    /// witness for arrays. A slot counts when its object is initial or exposed
    /// on both sides: if the environment's reach differs between the sides,
    /// some such slot on the path to the difference differs already.
    pub fn differs(&self, other: &Slot) -> Bool {
        let seen = |w: &BV, ea: &Array, eb: &Array| {
            let both = Bool::and(&[hidden_in(w, ea).not(), hidden_in(w, eb).not()]);
            Bool::or(&[is_fresh(w).not(), both])
        };
        match (self, other) {
            (Slot::Word(a), Slot::Word(b)) => a.eq(b).not(),
            (Slot::Words(a, ea), Slot::Words(b, eb)) => exists_diff(
                a,
                b,
                "w!env",
                |w| seen(w, ea, eb),
                |x: &BV, y: &BV| x.eq(y).not(),
                select,
            ),
            (Slot::Rows(a, ea), Slot::Rows(b, eb)) => exists_diff(
                a,
                b,
                "w!env",
                |w| seen(w, ea, eb),
                |x: &Array, y: &Array| {
                    let i = BV::fresh_const("w!envi", 64);
                    select(x, &i).eq(select(y, &i)).not()
                },
                select_arr,
            ),
            _ => Bool::from_bool(true),
        }
    }

    /// Whether the two are the very same terms.
    pub fn same_terms(&self, other: &Slot) -> bool {
        match (self, other) {
            (Slot::Word(a), Slot::Word(b)) => a.get_z3_ast() == b.get_z3_ast(),
            (Slot::Words(a, ea), Slot::Words(b, eb)) | (Slot::Rows(a, ea), Slot::Rows(b, eb)) => {
                a.get_z3_ast() == b.get_z3_ast() && ea.get_z3_ast() == eb.get_z3_ast()
            }
            _ => false,
        }
    }

    /// `if c then self else other` (two slots of one kind).
    pub fn choose(&self, c: &Bool, other: &Slot) -> Slot {
        match (self, other) {
            (Slot::Word(a), Slot::Word(b)) => Slot::Word(c.ite(a, b)),
            (Slot::Words(a, e), Slot::Words(b, _)) => Slot::Words(c.ite(a, b), e.clone()),
            (Slot::Rows(a, e), Slot::Rows(b, _)) => Slot::Rows(c.ite(a, b), e.clone()),
            _ => other.clone(),
        }
    }

    /// "The two are equal" (for outputs, which are constants).
    pub fn same(&self, other: &Slot) -> Bool {
        match (self, other) {
            (Slot::Word(a), Slot::Word(b)) => a.eq(b),
            (Slot::Words(a, _), Slot::Words(b, _)) | (Slot::Rows(a, _), Slot::Rows(b, _)) => {
                a.eq(b)
            }
            _ => Bool::from_bool(false),
        }
    }
}

/// One environment step as encoded on one side: what went in and what came out.
/// The steps of the two sides are paired after encoding (see [`pair_steps`]).
pub struct StepRecord {
    /// The step's name (`ext.NAME` or `vol`).
    pub name: String,
    /// The step number.
    pub k: BV,
    /// The values the step number may have.
    pub k_values: Vec<u64>,
    /// The arguments, padded with zeros.
    pub args: Vec<BV>,
    /// The leaves it reads, as it sees them.
    pub inputs: Vec<Slot>,
    /// Its result and the new contents of the leaves it writes (fresh
    /// constants, or chosen from the partner's).
    pub outputs: Vec<Slot>,
    /// A number for the step, unique within its side.
    pub id: usize,
    /// The other side's step whose outputs this one's were built from (its
    /// pairing is in the outputs already).
    pub paired: Option<usize>,
}

/// The environment is deterministic: a step of the original and a step of the
/// optimized function with the same number, name, arguments and visible heap
/// have the same result and the same effect. "Same visible heap" is a universal
/// statement on the left of an implication, so each gets a free witness and the
/// constraint stays quantifier-free.
pub fn pair_steps(a: &[StepRecord], b: &[StepRecord]) -> Vec<Bool> {
    let mut out = Vec::new();
    for x in a {
        for y in b
            .iter()
            .filter(|y| y.name == x.name && y.paired != Some(x.id))
        {
            if !x.k_values.iter().any(|i| y.k_values.contains(i)) {
                continue; // the step numbers cannot be equal: nothing to pair
            }
            let mut differ = inputs_differ(x, &y.k, &y.args, &y.inputs);
            let same: Vec<Bool> = x
                .outputs
                .iter()
                .zip(&y.outputs)
                .map(|(p, q)| p.same(q))
                .collect();
            differ.push(Bool::and(&same));
            out.push(Bool::or(&differ));
        }
    }
    out
}

/// The ways step `x` and a step with number `k`, arguments `args` and
/// visible heap `inputs` can differ (the step's name is the same).
fn inputs_differ(x: &StepRecord, k: &BV, args: &[BV], inputs: &[Slot]) -> Vec<Bool> {
    let mut differ = vec![x.k.eq(k).not()];
    differ.extend(x.args.iter().zip(args).map(|(p, q)| p.eq(q).not()));
    differ.extend(x.inputs.iter().zip(inputs).map(|(p, q)| p.differs(q)));
    differ
}

/// Take one environment step from `st` under path condition `pc`: log it,
/// apply its heap effect, and return its result (if it has one). The step is
/// recorded in `records` for the pairing.
pub fn env_step(
    sh: &mut Shared,
    spec: &StepSpec,
    pc: &Bool,
    st: &mut State,
    records: &mut Vec<StepRecord>,
    earlier: &[StepRecord],
) -> Option<BV> {
    let k = st.steps.clone();
    let name_id = name_hash(&spec.name);
    st.step_log[0] = st.step_log[0].store(&k, &BV::from_u64(name_id, 64));
    for (j, a) in spec.args.iter().enumerate() {
        st.step_log[j + 1] = st.step_log[j + 1].store(&k, a);
    }
    st.steps = st.steps.bvadd(bv(1)).simplify();
    let k_values = std::mem::take(&mut st.step_counts);
    st.step_counts = k_values.iter().map(|c| c + 1).collect();
    let all = sh.env_leaves.clone().unwrap_or_else(|| all_leaves(sh));
    let reads = spec.reads.clone().unwrap_or_else(|| all.clone());
    let writes = spec.writes.clone().unwrap_or(all);
    let args: Vec<BV> = (0..STEP_COLUMNS - 1)
        .map(|j| spec.args.get(j).cloned().unwrap_or_else(|| bv(0)))
        .collect();
    let inputs: Vec<Slot> = reads.iter().filter_map(|l| visible(sh, *l, st)).collect();
    // A step of the other side with the very same inputs (same terms) has the
    // same outputs: reuse its constants, so the two encodings stay identical
    // terms as long as the code does the same.
    let twin = earlier.iter().find(|r| {
        r.name == spec.name
            && r.k_values.len() == 1
            && r.k_values == k_values
            && same_terms(&r.args, &args)
            && r.inputs.len() == inputs.len()
            && r.inputs.iter().zip(&inputs).all(|(a, b)| a.same_terms(b))
    });
    // Otherwise the other side's step at the same place (same name, same
    // possible step numbers) is the likely partner: this step's outputs are
    // `if inputs equal then its outputs else fresh`, which says exactly what
    // the pairing constraint of the two would, but keeps the two heaps one
    // term apart from the partner's instead of two unrelated arrays.
    let partner = match twin {
        Some(r) => Some((r, None)),
        None => earlier
            .iter()
            .find(|r| {
                r.name == spec.name
                    && r.k_values == k_values
                    && r.args.len() == args.len()
                    && r.inputs.len() == inputs.len()
            })
            .map(|r| {
                (
                    r,
                    Some(Bool::or(&inputs_differ(r, &k, &args, &inputs)).not()),
                )
            }),
    };
    let paired = partner.as_ref().map(|(r, _)| r.id);
    let mut reused = partner.map(|(r, m)| (r.outputs.iter(), m));
    let mut next = |fresh: &dyn Fn() -> Slot| match reused.as_mut() {
        Some((it, m)) => match (it.next(), m) {
            (Some(s), None) => s.clone(),
            (Some(s), Some(m)) => s.choose(m, &fresh()),
            (None, _) => fresh(),
        },
        None => fresh(),
    };
    let mut outputs = Vec::new();
    let result = spec.ret.map(|ty| {
        let fresh = || Slot::Word(BV::fresh_const(&format!("{}.ret", spec.name), 64));
        let Slot::Word(r) = next(&fresh) else {
            unreachable!("a result is a word")
        };
        if ty.is_ref() {
            let ok = Bool::or(&[r.eq(bv(0)), hidden(&r, st).not()]);
            sh.assumptions.push(pc.implies(&ok));
        }
        outputs.push(Slot::Word(r.clone()));
        r
    });
    // The new contents: the environment's, except on hidden objects, which keep theirs.
    let old = st.clone();
    for l in &writes {
        match *l {
            Leaf::Field(s, fi) => {
                let Some(cur) = old.heap.fields.get(s).and_then(|v| v.get(fi)) else {
                    continue;
                };
                let fresh = || {
                    Slot::Words(
                        Array::fresh_const("env.w", &word(), &word()),
                        old.heap.exposed.clone(),
                    )
                };
                let Slot::Words(new, _) = next(&fresh) else {
                    unreachable!("field output")
                };
                outputs.push(Slot::Words(new.clone(), old.heap.exposed.clone()));
                let mut arr = new;
                for (id, a) in &old.allocated {
                    if *a == Alloc::Struct(s) {
                        arr = keep_hidden(&arr, id, &old, select(cur, id), select);
                    }
                }
                st.heap.fields[s][fi] = arr;
            }
            Leaf::Elems(t) => {
                let Some(ei) = sh.elem_index(t) else { continue };
                let fresh = || {
                    Slot::Rows(
                        Array::fresh_const("env.e", &word(), &word_array()),
                        old.heap.exposed.clone(),
                    )
                };
                let Slot::Rows(new, _) = next(&fresh) else {
                    unreachable!("element output")
                };
                outputs.push(Slot::Rows(new.clone(), old.heap.exposed.clone()));
                let mut arr = new;
                let cur = &old.heap.elems[ei];
                for (id, a) in &old.allocated {
                    if *a == Alloc::Array(ei) {
                        arr = keep_hidden(&arr, id, &old, select_arr(cur, id), select_arr);
                    }
                }
                st.heap.elems[ei] = arr;
            }
            Leaf::Global(g) => {
                if g < st.heap.globals.len() {
                    let fresh = || Slot::Word(BV::fresh_const("env.g", 64));
                    let Slot::Word(new) = next(&fresh) else {
                        unreachable!("global output")
                    };
                    outputs.push(Slot::Word(new.clone()));
                    st.heap.globals[g] = new;
                }
            }
        }
    }
    let id = records.len();
    records.push(StepRecord {
        name: spec.name.clone(),
        k,
        k_values,
        args,
        inputs,
        outputs,
        id,
        paired,
    });
    result
}

/// `arr` with object `id`'s slot set back to `old_slot` when `id` is hidden
/// in `old` (the environment cannot touch it), decided here when the
/// exposed set says so without the solver.
fn keep_hidden<T: Ast>(
    arr: &Array,
    id: &BV,
    old: &State,
    old_slot: T,
    at: impl Fn(&Array, &BV) -> T,
) -> Array {
    let h = hidden(id, old).simplify();
    match h.as_bool() {
        Some(false) => arr.clone(),
        Some(true) => arr.store(id, &old_slot),
        None => arr.store(id, &h.ite(&old_slot, &at(arr, id))),
    }
}

fn same_terms(a: &[BV], b: &[BV]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.get_z3_ast() == y.get_z3_ast())
}

/// A stable number for a step name (the step log records it).
fn name_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}
