//! Where two array terms can differ, read off their structure, for the
//! pairing of environment steps ("the visible heaps of the two steps are
//! equal"). Both sides of a check start from the same initial arrays and
//! mostly make the same stores, so two heap leaves are usually `store`
//! chains (and `ite` merges) over a common term. The indices stored above
//! the common part are then the only places they can differ, and "the two
//! differ somewhere" — an existential with a free witness that the solver
//! must case-split over every store of both chains — becomes a disjunction
//! over those indices (mostly constant identities, which z3's rewriter
//! resolves at once). The rewrite is an equivalence, so no proof becomes
//! weaker and no alarm is added. (For the final heaps, `compare` keeps the
//! free witness: the disjunction measured slower there, docs/smt.md.)

use rustc_hash::FxHashMap;
use z3::ast::{Array, Ast, Bool, Dynamic, BV};

/// The most indices a difference set may have before the caller falls back
/// to a free witness (a disjunction that long is no cheaper).
pub const MAX_INDICES: usize = 48;

/// The most indices when every store of both terms is listed.
const MAX_ALL_INDICES: usize = 96;

/// The most pairs of terms one search visits.
const MAX_VISITS: usize = 4096;

/// "`a` and `b` differ at some word index `w` where `cond(w)`", built from
/// the terms' structure: a disjunction over the indices stored above their
/// common part, then, below a merge (`ite`), the same for each branch under
/// its condition, and a free witness `fresh` (kept apart from the indices
/// already covered) only where no structure is left. Exact (an equivalence),
/// so it can stand on either side of an implication. `at(arr, w)` reads a
/// position and `ne` says when two read values differ.
pub fn exists_diff<T: Ast>(
    a: &Array,
    b: &Array,
    fresh: &str,
    cond: impl Fn(&BV) -> Bool,
    ne: impl Fn(&T, &T) -> Bool,
    at: impl Fn(&Array, &BV) -> T,
) -> Bool {
    let mut f = Formula {
        fresh,
        cond: &cond,
        ne: &ne,
        at: &at,
        visits: 0,
    };
    let (da, db) = (Dynamic::from_ast(a), Dynamic::from_ast(b));
    if let Some(x) = f.differ(&da, &db, &[]) {
        return x;
    }
    // Too many merges to follow each branch: every index stored anywhere
    // in the two terms, and a witness off them unless both rest on one array.
    match stores_and_bases(&[da, db]) {
        Some((idx, bases)) => {
            let mut out: Vec<Bool> = idx.iter().map(|i| f.at_index(a, b, i, &[])).collect();
            if bases > 1 {
                out.push(f.witness(a, b, &idx));
            }
            crate::encode::or_all(&out)
        }
        None => f.witness(a, b, &[]),
    }
}

/// Every index stored in the `store`/`ite` structure of `roots`, and how
/// many distinct arrays that structure rests on; `None` past the limits.
fn stores_and_bases(roots: &[Dynamic]) -> Option<(Vec<BV>, usize)> {
    let mut seen: FxHashMap<usize, ()> = FxHashMap::default();
    let (mut idx, mut idx_ids, mut bases) = (Vec::new(), FxHashMap::default(), 0);
    let mut todo: Vec<Dynamic> = roots.to_vec();
    while let Some(t) = todo.pop() {
        if seen.insert(id(&t), ()).is_some() {
            continue;
        }
        if seen.len() > MAX_VISITS {
            return None;
        }
        if is_store(&t) {
            let i = t.nth_child(1)?;
            if idx_ids.insert(id(&i), ()).is_none() {
                idx.push(i.as_bv()?);
                if idx.len() > MAX_ALL_INDICES {
                    return None;
                }
            }
            todo.push(t.nth_child(0)?);
        } else if is_ite(&t) {
            todo.push(t.nth_child(1)?);
            todo.push(t.nth_child(2)?);
        } else {
            bases += 1;
        }
    }
    Some((idx, bases))
}

/// The builder of [`exists_diff`]'s formula.
struct Formula<'a, T> {
    fresh: &'a str,
    cond: &'a dyn Fn(&BV) -> Bool,
    ne: &'a dyn Fn(&T, &T) -> Bool,
    at: &'a dyn Fn(&Array, &BV) -> T,
    visits: usize,
}

/// `w` is none of `excl` (pairs of distinct numerals are left out).
fn not_in(w: &BV, excl: &[BV]) -> Vec<Bool> {
    excl.iter()
        .filter(|e| match (w.as_u64(), e.as_u64()) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        })
        .map(|e| w.eq(e).not())
        .collect()
}

impl<T: Ast> Formula<'_, T> {
    /// A difference at some `w` outside `excl` with a free witness.
    fn witness(&self, a: &Array, b: &Array, excl: &[BV]) -> Bool {
        let w = BV::fresh_const(self.fresh, 64);
        self.at_index(a, b, &w, excl)
    }

    fn at_index(&self, a: &Array, b: &Array, w: &BV, excl: &[BV]) -> Bool {
        let mut cs = vec![(self.cond)(w)];
        cs.extend(not_in(w, excl));
        cs.push((self.ne)(&(self.at)(a, w), &(self.at)(b, w)));
        Bool::and(&cs)
    }

    /// "`a` and `b` differ at some `w` outside `excl` with `cond(w)`"; `None`
    /// past the size limits.
    fn differ(&mut self, a: &Dynamic, b: &Dynamic, excl: &[BV]) -> Option<Bool> {
        if id(a) == id(b) {
            return Some(Bool::from_bool(false));
        }
        self.visits += 1;
        if self.visits > MAX_VISITS {
            return None;
        }
        let (sa, sb) = (spine(a), spine(b));
        let in_b: FxHashMap<usize, usize> =
            sb.iter().enumerate().map(|(k, t)| (id(t), k)).collect();
        let common = sa
            .iter()
            .enumerate()
            .find_map(|(k, t)| in_b.get(&id(t)).map(|&j| (k, j)));
        let (pa, pb) = common.unwrap_or((sa.len() - 1, sb.len() - 1));
        let mut idx: Vec<BV> = Vec::new();
        for s in sa[..pa].iter().chain(&sb[..pb]) {
            let i = s.nth_child(1)?.as_bv()?;
            let known = |v: &BV| id(&Dynamic::from_ast(v)) == id(&Dynamic::from_ast(&i));
            if !idx.iter().any(known) && !excl.iter().any(known) {
                idx.push(i);
            }
        }
        if idx.len() + excl.len() > MAX_INDICES {
            return None;
        }
        let (aa, ab) = (a.as_array()?, b.as_array()?);
        let mut out: Vec<Bool> = idx
            .iter()
            .map(|i| self.at_index(&aa, &ab, i, excl))
            .collect();
        if common.is_none() {
            let mut excl2 = excl.to_vec();
            excl2.extend(idx);
            let (ba, bb) = (&sa[pa], &sb[pb]);
            let branches = |t: &Dynamic| -> Option<(Bool, Dynamic, Dynamic)> {
                if !is_ite(t) {
                    return None;
                }
                Some((t.nth_child(0)?.as_bool()?, t.nth_child(1)?, t.nth_child(2)?))
            };
            let rest = match (branches(ba), branches(bb)) {
                (Some((c, x1, x2)), Some((d, y1, y2)))
                    if id(&Dynamic::from_ast(&c)) == id(&Dynamic::from_ast(&d)) =>
                {
                    let (p, q) = (
                        self.differ(&x1, &y1, &excl2)?,
                        self.differ(&x2, &y2, &excl2)?,
                    );
                    c.ite(&p, &q)
                }
                (Some((c, x1, x2)), _) => {
                    let (p, q) = (self.differ(&x1, bb, &excl2)?, self.differ(&x2, bb, &excl2)?);
                    c.ite(&p, &q)
                }
                (None, Some((d, y1, y2))) => {
                    let (p, q) = (self.differ(ba, &y1, &excl2)?, self.differ(ba, &y2, &excl2)?);
                    d.ite(&p, &q)
                }
                (None, None) => self.witness(&ba.as_array()?, &bb.as_array()?, &excl2),
            };
            out.push(rest);
        }
        Some(crate::encode::or_all(&out))
    }
}

/// The z3 identity of a term (z3 shares equal terms).
fn id(t: &Dynamic) -> usize {
    t.get_z3_ast().as_ptr() as usize
}

/// The name of `t`'s head symbol, when it is an application.
fn head(t: &Dynamic) -> Option<String> {
    t.safe_decl().ok().map(|d| d.name())
}

fn is_store(t: &Dynamic) -> bool {
    t.num_children() == 3 && head(t).as_deref() == Some("store")
}

fn is_ite(t: &Dynamic) -> bool {
    t.num_children() == 3 && matches!(head(t).as_deref(), Some("if") | Some("ite"))
}

/// The store spine of `t`: `t`, its array argument while that is a `store`, …
fn spine(t: &Dynamic) -> Vec<Dynamic> {
    let mut out = vec![t.clone()];
    let mut cur = t.clone();
    while is_store(&cur) {
        cur = cur.nth_child(0).expect("store has an array");
        out.push(cur.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::select;
    use crate::shared::{bv, word};
    use z3::{SatResult, Solver};

    fn differ(a: &Array, b: &Array) -> Bool {
        let ne = |x: &BV, y: &BV| x.eq(y).not();
        exists_diff(a, b, "w!test", |_| Bool::from_bool(true), ne, select)
    }

    fn sat(cs: &[Bool]) -> SatResult {
        let s = Solver::new();
        cs.iter().for_each(|c| s.assert(c));
        s.check()
    }

    #[test]
    fn the_formula_is_exact_and_names_the_stored_indices() {
        let h = Array::new_const("h", &word(), &word());
        let common = h.store(&bv(1), &bv(10)).store(&bv(2), &bv(20));
        let (x, y, z) = (
            BV::new_const("x", 64),
            BV::new_const("y", 64),
            BV::new_const("z", 64),
        );
        let a = common.store(&bv(3), &x);
        let b = common.store(&bv(4), &y).store(&bv(3), &z);
        let f = differ(&a, &b);
        assert!(!f.to_string().contains("w!test"), "{f}");
        // a and b differ exactly when x != z or h'[4] != y.
        let really = Bool::or(&[x.eq(&z).not(), select(&common, &bv(4)).eq(&y).not()]);
        assert_eq!(sat(&[f.iff(&really).not()]), SatResult::Unsat);
        assert_eq!(differ(&a, &a).as_bool(), Some(false));
        // Below a merge, each branch under its condition.
        let c = Bool::new_const("c");
        let m = c.ite(&a, &common.store(&bv(6), &x));
        let f = differ(&m, &common);
        assert!(!f.to_string().contains("w!test"), "{f}");
        let really = c.ite(
            &select(&common, &bv(3)).eq(&x).not(),
            &select(&common, &bv(6)).eq(&x).not(),
        );
        assert_eq!(sat(&[f.iff(&really).not()]), SatResult::Unsat);
        // No common part: a witness, kept off the indices stored above.
        let g = Array::new_const("g", &word(), &word());
        let same_stores = g.store(&bv(1), &bv(10)).store(&bv(2), &bv(20));
        let f = differ(&a, &same_stores.store(&bv(3), &x));
        assert!(f.to_string().contains("w!test"), "{f}");
        assert_eq!(sat(&[f.clone(), h.eq(&g)]), SatResult::Unsat);
        assert_eq!(sat(&[f]), SatResult::Sat);
    }
}
