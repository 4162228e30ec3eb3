//! What a call site learns from its callee's summary ([`ir::summaries`]),
//! the calls themselves staying (what a call does, its traps included, is
//! left to DCE, which removes it only when its summary lets it):
//!
//! - its result, when every `ret` of the callee returns the same integer
//!   constant, `null`, or one of its parameters unchanged
//!   ([`ir::summaries::Returns`]): every use of the result reads the
//!   constant (or the call's argument) instead. A use sees the value only
//!   where the call has returned, since the call dominates each use of its
//!   result;
//! - its arguments for parameters the callee never uses: they become `0`
//!   (or `null`), so a value computed only to be passed there (a load, an
//!   object that would escape through the call) is no longer used.

use crate::stats::Stats;
use ir::summaries::{Returns, Summaries};
use ir::{Callee, Function, Inst, InstKind, Type, Value, ValueDef};

/// Apply what the summaries in `calls` say of the calls of `func` (see the
/// module header), counting into `stats`; returns whether `func` changed.
pub fn apply_call_facts(calls: &Summaries, func: &mut Function, stats: &mut Stats) -> bool {
    if !calls.any_call_facts() {
        return false;
    }
    let known = replace_known_results(calls, func);
    if known > 0 {
        stats.add("gvn", "call_results_known", known);
    }
    let dropped = drop_unused_args(calls, func);
    if dropped > 0 {
        stats.add("gvn", "unused_call_args_dropped", dropped);
    }
    known + dropped > 0
}

/// What a call's result is known to be.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Target {
    /// This value of the function (an argument of the call).
    Val(Value),
    /// This integer constant.
    Const(i64),
    /// The `null` reference.
    Null,
}

/// A call whose result is known.
struct Known {
    result: Value,
    target: Target,
    /// Whether some placed instruction uses `result`.
    used: bool,
}

/// Replace the uses of every call result of `func` its callee's summary in
/// `calls` knows; returns how many calls' results had uses replaced.
fn replace_known_results(calls: &Summaries, func: &mut Function) -> u64 {
    let mut known: Vec<Known> = func
        .inst_iter()
        .filter_map(|inst| known_result(calls, func, inst))
        .collect();
    if known.is_empty() {
        return 0;
    }
    resolve_chains(&mut known);
    mark_used(func, &mut known);
    let values: Vec<(Value, Value)> = known
        .iter()
        .filter(|k| k.used)
        .filter_map(|k| Some((k.result, materialize(func, k)?)))
        .collect();
    if values.is_empty() {
        return 0;
    }
    func.for_each_placed_kind_mut(|kind| {
        kind.for_each_operand_mut(|v| {
            if let Some(&(_, to)) = values.iter().find(|&&(r, _)| r == *v) {
                *v = to;
            }
        })
    });
    values.len() as u64
}

/// The known result of `inst`, if it is a call of a module function whose
/// summary in `calls` says what it returns.
fn known_result(calls: &Summaries, func: &Function, inst: Inst) -> Option<Known> {
    let data = &func.insts[inst.index()];
    let InstKind::Call {
        callee: Callee::Func(g),
        args,
    } = &data.kind
    else {
        return None;
    };
    let result = data.result?;
    let target = match calls.returns(*g)? {
        Returns::Param(k) => Target::Val(*args.get(k)?),
        Returns::Const(c) => Target::Const(c),
        Returns::Null => Target::Null,
    };
    Some(Known {
        result,
        target,
        used: false,
    })
}

/// Make each target final: a call's argument may be the result of another
/// known call. The chains end (each use is dominated by its definition); a
/// cycle, possible only in unreachable code, is dropped.
fn resolve_chains(known: &mut Vec<Known>) {
    let n = known.len();
    let next = |known: &[Known], t: Target| match t {
        Target::Val(v) => known.iter().find(|k| k.result == v).map(|k| k.target),
        _ => None,
    };
    let mut cyclic = vec![false; n];
    for (i, flag) in cyclic.iter_mut().enumerate() {
        let mut t = known[i].target;
        let mut steps = 0;
        while let Some(t2) = next(known, t) {
            steps += 1;
            if steps > n {
                *flag = true;
                break;
            }
            t = t2;
        }
        known[i].target = t;
    }
    let mut flags = cyclic.into_iter();
    known.retain(|_| !flags.next().unwrap_or(true));
}

/// Set `used` for each known result some placed instruction uses.
fn mark_used(func: &Function, known: &mut [Known]) {
    for inst in func.inst_iter() {
        func.insts[inst.index()].kind.for_each_operand(|v| {
            if let Some(k) = known.iter_mut().find(|k| k.result == v) {
                k.used = true;
            }
        });
    }
}

/// The value `k`'s result becomes (interning a constant), when it fits the
/// result's type: an argument of the call's type, an integer constant for
/// an `i64`, `null` for a reference.
fn materialize(func: &mut Function, k: &Known) -> Option<Value> {
    let ty = func.value_type(k.result);
    let value = match k.target {
        Target::Val(v) => v,
        Target::Const(c) if ty == Type::I64 => func.iconst(c),
        Target::Null if ty.is_ref() => func.null(),
        Target::Const(_) | Target::Null => return None,
    };
    func.value_type(value).fits(ty).then_some(value)
}

/// Pass `0` (or `null`) for every argument of a call of `func` whose
/// parameter the callee never uses (per `calls`) and that is not that
/// already; returns how many arguments changed.
fn drop_unused_args(calls: &Summaries, func: &mut Function) -> u64 {
    let mut dropped: Vec<(Inst, usize)> = Vec::new();
    for inst in func.inst_iter() {
        let InstKind::Call {
            callee: Callee::Func(g),
            args,
        } = &func.insts[inst.index()].kind
        else {
            continue;
        };
        let unused = calls.unused_params(*g);
        if unused == 0 {
            continue;
        }
        for (k, &a) in args.iter().enumerate().take(64) {
            if unused & (1 << k) != 0 && !is_placeholder(func, a) {
                dropped.push((inst, k));
            }
        }
    }
    for &(inst, k) in &dropped {
        let InstKind::Call { args, .. } = &func.insts[inst.index()].kind else {
            continue;
        };
        let ty = func.value_type(args[k]);
        let placeholder = if ty.is_ref() {
            func.null()
        } else {
            func.iconst(0)
        };
        if let InstKind::Call { args, .. } = &mut func.insts[inst.index()].kind {
            args[k] = placeholder;
        }
    }
    dropped.len() as u64
}

/// Whether `v` is what [`drop_unused_args`] passes: `0`, or `null`.
fn is_placeholder(func: &Function, v: Value) -> bool {
    matches!(func.value_def(v), ValueDef::Const(0) | ValueDef::Null)
}
