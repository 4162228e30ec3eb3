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
    /// What the result is; `None` once found to be part of a cycle.
    target: Option<Target>,
    /// Whether some placed instruction uses `result`.
    used: bool,
}

/// No known call's result (in the index of [`replace_known_results`]).
const NONE: u32 = u32::MAX;

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
    // Per value: its position in `known` when it is a known call's result.
    let mut index = vec![NONE; func.values.len()];
    for (k, c) in known.iter().enumerate() {
        index[c.result.index()] = k as u32;
    }
    resolve_chains(&mut known, &index);
    mark_used(func, &mut known, &index);
    let mut to: Vec<Option<Value>> = Vec::with_capacity(known.len());
    for k in &known {
        let value = k
            .target
            .filter(|_| k.used)
            .and_then(|t| materialize(func, k.result, t));
        to.push(value);
    }
    let replaced = to.iter().flatten().count() as u64;
    if replaced == 0 {
        return 0;
    }
    func.for_each_placed_kind_mut(|kind| {
        kind.for_each_operand_mut(|v| {
            if let Some(&k) = index.get(v.index()).filter(|&&k| k != NONE) {
                if let Some(value) = to[k as usize] {
                    *v = value;
                }
            }
        })
    });
    replaced
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
        target: Some(target),
        used: false,
    })
}

/// Make each target final: a call's argument may be the result of another
/// known call (`index` maps a value to its position in `known`). The
/// chains end (each use is dominated by its definition); a cycle, possible
/// only in unreachable code, and every chain into one, get no target. Each
/// call is resolved once: O(number of calls).
fn resolve_chains(known: &mut [Known], index: &[u32]) {
    const UNSEEN: u8 = 0;
    const ON_CHAIN: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![UNSEEN; known.len()];
    let mut chain: Vec<usize> = Vec::new();
    let next = |known: &[Known], k: usize| match known[k].target {
        Some(Target::Val(v)) => index
            .get(v.index())
            .filter(|&&j| j != NONE)
            .map(|&j| j as usize),
        _ => None,
    };
    for start in 0..known.len() {
        if state[start] != UNSEEN {
            continue;
        }
        // Follow the chain from `start` to a call resolved already, a
        // target that is no known call's result, or a cycle.
        let mut k = start;
        let end = loop {
            state[k] = ON_CHAIN;
            chain.push(k);
            match next(known, k) {
                None => break known[k].target,
                Some(j) if state[j] == DONE => break known[j].target,
                Some(j) if state[j] == ON_CHAIN => break None,
                Some(j) => k = j,
            }
        };
        for k in chain.drain(..) {
            known[k].target = end;
            state[k] = DONE;
        }
    }
}

/// Set `used` for each known result some placed instruction uses.
fn mark_used(func: &Function, known: &mut [Known], index: &[u32]) {
    for inst in func.inst_iter() {
        func.insts[inst.index()].kind.for_each_operand(|v| {
            if let Some(&k) = index.get(v.index()).filter(|&&k| k != NONE) {
                known[k as usize].used = true;
            }
        });
    }
}

/// The value the call result `result` becomes (interning a constant) when
/// `target` fits its type: an argument of the call's type, an integer
/// constant for an `i64`, `null` for a reference.
fn materialize(func: &mut Function, result: Value, target: Target) -> Option<Value> {
    let ty = func.value_type(result);
    let value = match target {
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
