//! Edits of function bodies for the reducer: each edit is a closure from the
//! current candidate to a smaller candidate (or `None` when it no longer
//! applies). Edits refer to instructions and blocks by arena id, which stays
//! stable while instructions and blocks are detached, so one list of edits can
//! be tried in sequence against a candidate that keeps shrinking.
//!
//! Edits do not check well-formedness; the reducer runs the verifier on every
//! candidate and discards the ones it rejects.

use super::Candidate;
use ir::{Block, FuncId, Function, Inst, InstKind, Type, Value, ValueDef};
use std::collections::HashMap;

/// One edit: the smaller candidate, if the edit still applies.
pub type Edit = Box<dyn Fn(&Candidate) -> Option<Candidate>>;

/// Every placed non-terminator instruction of every function, in layout order.
pub fn removable_insts(c: &Candidate) -> Vec<(FuncId, Inst)> {
    let mut out = Vec::new();
    for (k, f) in c.module.funcs.iter().enumerate() {
        for i in f.inst_iter() {
            if !f.insts[i.index()].kind.is_terminator() {
                out.push((FuncId::new(k), i));
            }
        }
    }
    out
}

/// The value used in place of a removed result of type `ty`: a parameter of
/// that type when there is one, else `0` or `null`.
fn default_value(f: &mut Function, ty: Type) -> Value {
    if let Some(&p) = f.params.iter().find(|&&p| f.value_type(p) == ty) {
        return p;
    }
    if ty.is_int() {
        f.iconst(0)
    } else {
        f.null()
    }
}

/// Remove `inst` from `f`, replacing its result's uses by `with` (or a default).
fn remove_one(f: &mut Function, inst: Inst, with: Option<Value>) -> bool {
    let data = &f.insts[inst.index()];
    if data.block.is_none() || data.kind.is_terminator() {
        return false;
    }
    if let Some(r) = data.result {
        let ty = f.value_type(r);
        let v = with.unwrap_or_else(|| default_value(f, ty));
        if v == r {
            return false;
        }
        f.remove_inst(inst);
        f.replace_all_uses(r, v);
    } else {
        f.remove_inst(inst);
    }
    true
}

/// The candidate without the instructions `insts` (results replaced by defaults).
pub fn remove_insts(c: &Candidate, insts: &[(FuncId, Inst)]) -> Option<Candidate> {
    let mut out = c.clone();
    let mut any = false;
    for &(fid, i) in insts {
        any |= remove_one(&mut out.module.funcs[fid.index()], i, None);
    }
    any.then_some(out)
}

/// Values that may stand in for the result of `inst`: its operands of a
/// fitting type, parameters of the same type, then small constants or `null`.
fn replacements(f: &Function, inst: Inst) -> Vec<Replacement> {
    let data = &f.insts[inst.index()];
    let Some(r) = data.result else {
        return vec![Replacement::Default];
    };
    let ty = f.value_type(r);
    let mut out: Vec<Replacement> = Vec::new();
    let mut push = |x: Replacement| {
        if !out.contains(&x) {
            out.push(x)
        }
    };
    for v in data.kind.operands() {
        if v != r && f.value_type(v).fits(ty) {
            push(Replacement::Value(v));
        }
    }
    for &p in &f.params {
        if f.value_type(p) == ty {
            push(Replacement::Value(p));
        }
    }
    if ty.is_int() {
        push(Replacement::Const(0));
        push(Replacement::Const(1));
    } else {
        push(Replacement::Null);
    }
    out
}

/// What replaces a removed instruction's result.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Replacement {
    /// A parameter of the same type, else 0 / null.
    Default,
    /// An existing value.
    Value(Value),
    /// An integer constant.
    Const(i64),
    /// The null reference.
    Null,
}

/// For each instruction, one edit per replacement of its result (the first
/// that is accepted wins; later ones then no longer apply).
pub fn instruction_edits(c: &Candidate) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    for (fid, inst) in removable_insts(c) {
        for rep in replacements(c.module.func(fid), inst) {
            out.push(Box::new(move |c: &Candidate| {
                let mut n = c.clone();
                let f = &mut n.module.funcs[fid.index()];
                let with = match rep {
                    Replacement::Default => None,
                    Replacement::Value(v) => Some(v),
                    Replacement::Const(k) => Some(f.iconst(k)),
                    Replacement::Null => Some(f.null()),
                };
                remove_one(f, inst, with).then_some(n)
            }));
        }
    }
    out
}

/// The `ret` of a default value for `f`'s return type.
fn default_ret(f: &mut Function) -> InstKind {
    match f.ret {
        None => InstKind::Ret(None),
        Some(t) if t.is_int() => InstKind::Ret(Some(f.iconst(0))),
        Some(_) => InstKind::Ret(Some(f.null())),
    }
}

/// Set the terminator of `block` to `kind`, then drop unreachable blocks and
/// phi entries of edges that no longer exist.
fn retarget(f: &mut Function, block: Block, kind: InstKind) -> bool {
    let Some(t) = f.terminator(block) else {
        return false;
    };
    if f.insts[t.index()].kind == kind {
        return false;
    }
    f.insts[t.index()].kind = kind;
    cleanup_cfg(f);
    true
}

/// Remove blocks unreachable from the entry, and phi entries whose edge is gone.
pub fn cleanup_cfg(f: &mut Function) {
    if f.layout.is_empty() {
        return;
    }
    let mut reachable = std::collections::HashSet::new();
    let mut stack = vec![f.entry()];
    while let Some(b) = stack.pop() {
        if reachable.insert(b) {
            stack.extend(f.successors(b));
        }
    }
    for b in f.layout.clone() {
        if !reachable.contains(&b) {
            f.remove_block(b);
        }
    }
    // Edge counts into each block.
    let mut edges: HashMap<(Block, Block), usize> = HashMap::new();
    for &b in &f.layout {
        for s in f.successors(b) {
            *edges.entry((b, s)).or_default() += 1;
        }
    }
    for b in f.layout.clone() {
        for &i in &f.blocks[b.index()].insts {
            if let InstKind::Phi(entries) = &mut f.insts[i.index()].kind {
                let mut used: HashMap<Block, usize> = HashMap::new();
                entries.retain(|(p, _)| {
                    let n = used.entry(*p).or_default();
                    *n += 1;
                    *n <= edges.get(&(*p, b)).copied().unwrap_or(0)
                });
            }
        }
    }
}

/// For every `br`: a `jmp` to either side; for every `br` and `jmp`: a `ret`
/// of a default value (cutting off what follows).
pub fn terminator_edits(c: &Candidate) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    for (k, f) in c.module.funcs.iter().enumerate() {
        let fid = FuncId::new(k);
        for &b in &f.layout {
            let Some(t) = f.terminator(b) else { continue };
            match f.insts[t.index()].kind {
                InstKind::Br(..) => {
                    for side in [0, 1] {
                        out.push(Box::new(move |c: &Candidate| {
                            let mut n = c.clone();
                            let f = &mut n.module.funcs[fid.index()];
                            let t = f.terminator(b)?;
                            let InstKind::Br(_, then, els) = f.insts[t.index()].kind else {
                                return None;
                            };
                            let to = if side == 0 { then } else { els };
                            retarget(f, b, InstKind::Jmp(to)).then_some(n)
                        }));
                    }
                }
                InstKind::Jmp(_) => {}
                _ => continue,
            }
            out.push(Box::new(move |c: &Candidate| {
                let mut n = c.clone();
                let f = &mut n.module.funcs[fid.index()];
                if !matches!(
                    f.insts[f.terminator(b)?.index()].kind,
                    InstKind::Br(..) | InstKind::Jmp(_)
                ) {
                    return None;
                }
                let ret = default_ret(f);
                retarget(f, b, ret).then_some(n)
            }));
        }
    }
    out
}

/// Merge each block ending in `jmp S` with `S` when it is `S`'s only predecessor.
pub fn merge_edits(c: &Candidate) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    for (k, f) in c.module.funcs.iter().enumerate() {
        let fid = FuncId::new(k);
        for &b in &f.layout {
            out.push(Box::new(move |c: &Candidate| {
                let mut n = c.clone();
                merge_into(&mut n.module.funcs[fid.index()], b).then_some(n)
            }));
        }
    }
    out
}

/// Merge the successor of `b` into `b` (see [`merge_edits`]).
fn merge_into(f: &mut Function, b: Block) -> bool {
    if !f.layout.contains(&b) {
        return false;
    }
    let Some(t) = f.terminator(b) else {
        return false;
    };
    let InstKind::Jmp(s) = f.insts[t.index()].kind else {
        return false;
    };
    let preds = f
        .layout
        .iter()
        .flat_map(|&p| f.successors(p))
        .filter(|&x| x == s)
        .count();
    if s == b || s == f.entry() || preds != 1 {
        return false;
    }
    f.remove_inst(t);
    // Phis of `s` have the single entry from `b`: their uses take that value.
    let phis: Vec<Inst> = f.blocks[s.index()]
        .insts
        .iter()
        .copied()
        .filter(|i| f.insts[i.index()].kind.is_phi())
        .collect();
    for i in phis {
        let v = match &f.insts[i.index()].kind {
            InstKind::Phi(entries) => entries.first().map(|e| e.1),
            _ => None,
        };
        let r = f.insts[i.index()].result;
        f.remove_inst(i);
        if let (Some(r), Some(v)) = (r, v) {
            f.replace_all_uses(r, v);
        }
    }
    for i in std::mem::take(&mut f.blocks[s.index()].insts) {
        f.insts[i.index()].block = Some(b);
        f.blocks[b.index()].insts.push(i);
    }
    f.layout.retain(|&x| x != s);
    // Phi entries of `s`'s successors now come from `b`.
    for x in f.layout.clone() {
        for &i in &f.blocks[x.index()].insts {
            if let InstKind::Phi(entries) = &mut f.insts[i.index()].kind {
                for e in entries.iter_mut() {
                    if e.0 == s {
                        e.0 = b;
                    }
                }
            }
        }
    }
    true
}

/// For every parameter of every function: drop it, replacing its uses by
/// another parameter of its type or a constant/null, and removing the
/// argument from every call (and from the input, for the function that runs).
pub fn param_edits(c: &Candidate) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    for (k, f) in c.module.funcs.iter().enumerate() {
        let fid = FuncId::new(k);
        for (pos, &p) in f.params.iter().enumerate() {
            let ty = f.value_type(p);
            let mut withs: Vec<Option<usize>> = f
                .params
                .iter()
                .enumerate()
                .filter(|&(q, &v)| q != pos && f.value_type(v) == ty)
                .map(|(q, _)| Some(q))
                .collect();
            withs.push(None);
            for with in withs {
                out.push(Box::new(move |c: &Candidate| drop_param(c, fid, pos, with)));
            }
        }
    }
    out
}

/// Drop parameter `pos` of `fid` (uses become parameter `with`, or 0/null).
fn drop_param(c: &Candidate, fid: FuncId, pos: usize, with: Option<usize>) -> Option<Candidate> {
    let mut n = c.clone();
    {
        let f = &mut n.module.funcs[fid.index()];
        let p = *f.params.get(pos)?;
        let ty = f.value_type(p);
        let v = match with {
            Some(q) => *f.params.get(q).filter(|&&v| f.value_type(v) == ty)?,
            None if ty.is_int() => f.iconst(0),
            None => f.null(),
        };
        f.replace_all_uses(p, v);
        f.params.remove(pos);
        f.values[p.index()].def = ValueDef::Param(u32::MAX);
        for (k, &q) in f.params.clone().iter().enumerate() {
            f.values[q.index()].def = ValueDef::Param(k as u32);
        }
    }
    for g in &mut n.module.funcs {
        let placed: Vec<Inst> = g.inst_iter().collect();
        for i in placed {
            if let InstKind::Call {
                callee: ir::Callee::Func(callee),
                args,
            } = &mut g.insts[i.index()].kind
            {
                if *callee == fid && pos < args.len() {
                    args.remove(pos);
                }
            }
        }
    }
    if fid == n.func {
        if pos >= n.input.params.len() {
            return None;
        }
        n.input.params.remove(pos);
        super::input::compact(&mut n.input);
    }
    Some(n)
}
