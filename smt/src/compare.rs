//! When two encoded executions differ observably (IR.md §7), as one condition
//! per part. The observable heap is approximated from above without false
//! alarms on dead objects: every object that existed initially is compared
//! slot by slot (neither side can reach an initial object the other cannot, so
//! unreachable ones are equal anyway), and an object allocated during the run
//! is compared when both sides exposed it (stored its reference somewhere,
//! returned, escaped it or handed it to the environment) — an object neither
//! side ever let out of registers is not observable. Allocated objects match
//! across the sides by allocation site and iteration (see the encoder).
//! "Some slot differs" is an existential: each part gets a free witness, so
//! the query stays quantifier-free.

use crate::encode::{select, select_arr, Summary};
use crate::shared::{bv, is_fresh, Shared};
use crate::state::{State, STEP_COLUMNS};
use z3::ast::{Bool, BV};

/// Whether `x` is compared: initial, or exposed by both sides.
fn compared(x: &BV, a: &State, b: &State) -> Bool {
    let ea = a.heap.exposed.select(x).as_bool().expect("bool array");
    let eb = b.heap.exposed.select(x).as_bool().expect("bool array");
    Bool::or(&[is_fresh(x).not(), Bool::and(&[ea, eb])])
}

/// The named conditions under which `a` (original) and `b` (optimized) differ.
pub fn differences(
    sh: &Shared,
    a: &Summary,
    b: &Summary,
    returns_value: bool,
) -> Vec<(String, Bool)> {
    let mut out = Vec::new();
    out.push(("outcome".to_string(), a.code.eq(&b.code).not()));
    if returns_value {
        let both_return = Bool::and(&[a.code.eq(bv(0)), b.code.eq(bv(0))]);
        out.push((
            "returned value".to_string(),
            Bool::and(&[both_return, a.ret.eq(&b.ret).not()]),
        ));
    }
    let (sa, sb) = (&a.state, &b.state);
    out.push((
        "trace length".to_string(),
        sa.trace_len.eq(&sb.trace_len).not(),
    ));
    let i = BV::fresh_const("w!trace", 64);
    out.push((
        "trace value".to_string(),
        Bool::and(&[
            i.bvult(&sa.trace_len),
            select(&sa.trace, &i).eq(select(&sb.trace, &i)).not(),
        ]),
    ));
    out.push((
        "environment step count".to_string(),
        sa.steps.eq(&sb.steps).not(),
    ));
    let k = BV::fresh_const("w!step", 64);
    let cols: Vec<Bool> = (0..STEP_COLUMNS)
        .map(|c| {
            select(&sa.step_log[c], &k)
                .eq(select(&sb.step_log[c], &k))
                .not()
        })
        .collect();
    out.push((
        "environment step".to_string(),
        Bool::and(&[k.bvult(&sa.steps), Bool::or(&cols)]),
    ));
    for (g, (x, y)) in sa.heap.globals.iter().zip(&sb.heap.globals).enumerate() {
        out.push((format!("heap: global #{g}"), x.eq(y).not()));
    }
    for (s, (fa, fb)) in sa.heap.fields.iter().zip(&sb.heap.fields).enumerate() {
        for (f, (x, y)) in fa.iter().zip(fb).enumerate() {
            let w = BV::fresh_const("w!obj", 64);
            out.push((
                format!("heap: field #{s}.{f}"),
                Bool::and(&[compared(&w, sa, sb), select(x, &w).eq(select(y, &w)).not()]),
            ));
        }
    }
    for (e, ty) in sh.elem_types.iter().enumerate() {
        let _ = ty;
        let w = BV::fresh_const("w!arr", 64);
        let i = BV::fresh_const("w!idx", 64);
        let (ra, rb) = (
            select_arr(&sa.heap.elems[e], &w),
            select_arr(&sb.heap.elems[e], &w),
        );
        out.push((
            format!("heap: elements #{e}"),
            Bool::and(&[
                compared(&w, sa, sb),
                select(&ra, &i).eq(select(&rb, &i)).not(),
            ]),
        ));
        let w = BV::fresh_const("w!len", 64);
        out.push((
            format!("heap: length #{e}"),
            Bool::and(&[
                compared(&w, sa, sb),
                select(&sa.heap.lens[e], &w)
                    .eq(select(&sb.heap.lens[e], &w))
                    .not(),
            ]),
        ));
    }
    out
}
