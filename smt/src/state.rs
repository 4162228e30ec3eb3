//! The symbolic state of one side at a program point: SSA values, the typed
//! heap (one array per field leaf, per element type and for lengths, indexed by
//! identity), the globals, which fresh objects were exposed, the output trace
//! and the log of environment steps; and merging two states under a condition.

use crate::shared::{word, Shared};
use rustc_hash::FxHashMap;
use z3::ast::{Array, Ast, Bool, BV};
use z3::Sort;

/// How many columns the environment step log has: the name, then arguments.
pub const STEP_COLUMNS: usize = 17;

/// The typed heap of one side.
#[derive(Clone)]
pub struct Heap {
    /// `[struct][field]`: identity → value.
    pub fields: Vec<Vec<Array>>,
    /// Per element type (see [`Shared::elem_types`]): identity → (index → value).
    pub elems: Vec<Array>,
    /// Per element type: identity → length.
    pub lens: Vec<Array>,
    /// The globals.
    pub globals: Vec<BV>,
    /// Identity → whether the reference was ever stored, returned, escaped or
    /// handed to the environment (only meaningful for fresh identities).
    pub exposed: Array,
}

/// The state of one side at a program point.
#[derive(Clone)]
pub struct State {
    /// The latest value of every SSA value defined so far on the path.
    pub vals: FxHashMap<ir::Value, BV>,
    /// The heap.
    pub heap: Heap,
    /// Length of the output trace.
    pub trace_len: BV,
    /// The output trace: position → value.
    pub trace: Array,
    /// Environment steps taken.
    pub steps: BV,
    /// The values `steps` may have here (paths merge), to pair only steps
    /// whose numbers can be equal.
    pub step_counts: Vec<u64>,
    /// Step log: one array per column (name id, arguments), step number → word.
    pub step_log: Vec<Array>,
    /// The identities allocated so far on some path here, with what they are.
    pub allocated: Vec<(BV, Alloc)>,
    /// Per allocation site (within its inlining context): how many objects it
    /// allocated so far on this path (absent: none). The n-th object of a site
    /// gets the same identity on both sides whatever the shape of the CFG.
    pub alloc_counts: FxHashMap<u64, BV>,
}

/// What an allocated identity is: an object of a struct, or an array of an element slot.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Alloc {
    /// `new T`.
    Struct(usize),
    /// `newarray E, n`, by the index of E in [`Shared::elem_types`].
    Array(usize),
}

impl State {
    /// The state at entry: the shared initial heap, nothing exposed, empty trace and log.
    pub fn initial(sh: &Shared) -> State {
        let w = word();
        let zero = BV::from_i64(0, 64);
        State {
            vals: FxHashMap::default(),
            heap: Heap {
                fields: sh.fields0.clone(),
                elems: sh.elems0.clone(),
                lens: sh.lens0.clone(),
                globals: sh.globals0.clone(),
                exposed: Array::const_array(&w, &Bool::from_bool(false)),
            },
            trace_len: zero.clone(),
            trace: Array::const_array(&w, &zero),
            steps: zero.clone(),
            step_counts: vec![0],
            step_log: (0..STEP_COLUMNS)
                .map(|_| Array::const_array(&w, &zero))
                .collect(),
            allocated: Vec::new(),
            alloc_counts: FxHashMap::default(),
        }
    }

    /// `if c then a else b`, part by part; values defined in only one are dropped.
    pub fn merge(c: &Bool, a: &State, b: &State) -> State {
        let mut vals = FxHashMap::default();
        for (k, va) in &a.vals {
            if let Some(vb) = b.vals.get(k) {
                vals.insert(*k, ite(c, va, vb));
            }
        }
        State {
            vals,
            heap: Heap {
                fields: a
                    .heap
                    .fields
                    .iter()
                    .zip(&b.heap.fields)
                    .map(|(x, y)| x.iter().zip(y).map(|(p, q)| ite(c, p, q)).collect())
                    .collect(),
                elems: zip_ite(c, &a.heap.elems, &b.heap.elems),
                lens: zip_ite(c, &a.heap.lens, &b.heap.lens),
                globals: zip_ite(c, &a.heap.globals, &b.heap.globals),
                exposed: ite(c, &a.heap.exposed, &b.heap.exposed),
            },
            trace_len: ite(c, &a.trace_len, &b.trace_len),
            trace: ite(c, &a.trace, &b.trace),
            steps: ite(c, &a.steps, &b.steps),
            step_counts: {
                let mut v = a.step_counts.clone();
                v.extend(b.step_counts.iter().filter(|x| !a.step_counts.contains(x)));
                v
            },
            step_log: zip_ite(c, &a.step_log, &b.step_log),
            allocated: union(&a.allocated, &b.allocated),
            alloc_counts: merge_counts(c, &a.alloc_counts, &b.alloc_counts),
        }
    }

    /// Mark reference `r` as exposed. Only fresh identities are ever asked
    /// about, so a reference that is surely initial (null, a parameter, a
    /// global's initial value: [`Shared::new`] assumes them not fresh) is
    /// left out, which keeps the array to the identities that matter.
    pub fn expose(&mut self, r: &BV) {
        if !surely_initial(r) {
            self.heap.exposed = self.heap.exposed.store(r, &Bool::from_bool(true));
        }
    }
}

/// Whether `r` is null, a shared input (`param#i`, `@g`) or a choice
/// between such terms.
fn surely_initial(r: &BV) -> bool {
    if let Some(v) = r.as_u64() {
        return v & crate::shared::FRESH_BIT == 0;
    }
    let Ok(d) = r.safe_decl() else { return false };
    let name = d.name();
    match r.num_children() {
        0 => name.starts_with("param#") || name.starts_with('@'),
        3 if name == "if" || name == "ite" => r
            .children()
            .iter()
            .skip(1)
            .all(|c| c.as_bv().is_some_and(|c| surely_initial(&c))),
        _ => false,
    }
}

/// `if c then a else b`, without building a node when both are the same term.
/// (z3 shares equal terms, so the pointer test is the structural one.)
pub fn ite<T: Ast + Clone>(c: &Bool, a: &T, b: &T) -> T {
    if a.get_z3_ast() == b.get_z3_ast() {
        a.clone()
    } else {
        c.ite(a, b)
    }
}

/// Both lists of allocations, each identity once.
fn union(a: &[(BV, Alloc)], b: &[(BV, Alloc)]) -> Vec<(BV, Alloc)> {
    let mut out = a.to_vec();
    for x in b {
        if !out.iter().any(|y| y.0.get_z3_ast() == x.0.get_z3_ast()) {
            out.push(x.clone());
        }
    }
    out
}

/// The allocation counts under `if c then a else b` (a site absent on one side counted 0).
fn merge_counts(c: &Bool, a: &FxHashMap<u64, BV>, b: &FxHashMap<u64, BV>) -> FxHashMap<u64, BV> {
    let zero = BV::from_u64(0, 64);
    let mut out = FxHashMap::default();
    for k in a.keys().chain(b.keys()) {
        if out.contains_key(k) {
            continue;
        }
        let (x, y) = (a.get(k).unwrap_or(&zero), b.get(k).unwrap_or(&zero));
        out.insert(*k, ite(c, x, y));
    }
    out
}

fn zip_ite<T: Ast + Clone>(c: &Bool, a: &[T], b: &[T]) -> Vec<T> {
    a.iter().zip(b).map(|(x, y)| ite(c, x, y)).collect()
}

/// The sort of an array of words indexed by words.
pub fn word_array() -> Sort {
    Sort::array(&word(), &word())
}
