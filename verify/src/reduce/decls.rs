//! Dropping module-level declarations the candidate no longer needs: unused
//! functions, externs, globals, fields and types. Each removal renumbers the
//! ids after the removed one everywhere they occur (instructions, types,
//! declared effects and the input).

use super::edits::Edit;
use super::Candidate;
use ir::{Addr, Base, Callee, EffectLoc, FuncId, InputObject, InstKind, Module, StructId, Type};

/// Every declaration edit for the current candidate (tried one at a time; ids
/// shift after a success, so the reducer recomputes the list).
pub fn declaration_edits(c: &Candidate) -> Vec<Edit> {
    let m = &c.module;
    let mut out: Vec<Edit> = Vec::new();
    for k in 0..m.funcs.len() {
        out.push(Box::new(move |c: &Candidate| drop_func(c, FuncId::new(k))));
    }
    for k in 0..m.externs.len() {
        out.push(Box::new(move |c: &Candidate| drop_extern(c, k)));
    }
    for k in 0..m.globals.len() {
        out.push(Box::new(move |c: &Candidate| drop_global(c, k)));
    }
    for (s, decl) in m.structs.iter().enumerate() {
        for f in 0..decl.fields.len() {
            out.push(Box::new(move |c: &Candidate| drop_field(c, s, f)));
        }
    }
    for s in 0..m.structs.len() {
        out.push(Box::new(move |c: &Candidate| drop_struct(c, s)));
    }
    out
}

/// Every instruction kind of every function (placed or not), mutably.
fn for_each_inst_mut(m: &mut Module, mut f: impl FnMut(&mut InstKind)) {
    for func in &mut m.funcs {
        for i in &mut func.insts {
            f(&mut i.kind);
        }
    }
}

/// Whether any placed instruction satisfies `p`.
fn any_placed(m: &Module, p: impl Fn(&InstKind) -> bool) -> bool {
    m.funcs
        .iter()
        .any(|f| f.inst_iter().any(|i| p(&f.insts[i.index()].kind)))
}

/// Drop function `fid` when no other function calls it.
fn drop_func(c: &Candidate, fid: FuncId) -> Option<Candidate> {
    if fid == c.func || fid.index() >= c.module.funcs.len() {
        return None;
    }
    let called = c.module.funcs.iter().enumerate().any(|(k, f)| {
        k != fid.index()
            && f.inst_iter().any(|i| {
                matches!(f.insts[i.index()].kind,
                    InstKind::Call { callee: Callee::Func(g), .. } if g == fid)
            })
    });
    if called {
        return None;
    }
    let mut n = c.clone();
    n.module.funcs.remove(fid.index());
    let shift = |g: FuncId| {
        if g.index() > fid.index() {
            FuncId::new(g.index() - 1)
        } else {
            g
        }
    };
    for_each_inst_mut(&mut n.module, |k| {
        if let InstKind::Call {
            callee: Callee::Func(g),
            ..
        } = k
        {
            *g = shift(*g);
        }
    });
    n.func = shift(n.func);
    Some(n)
}

/// Drop extern `e` when nothing calls it.
fn drop_extern(c: &Candidate, e: usize) -> Option<Candidate> {
    if e >= c.module.externs.len()
        || any_placed(
            &c.module,
            |k| matches!(k, InstKind::Call { callee: Callee::Extern(x), .. } if x.index() == e),
        )
    {
        return None;
    }
    let mut n = c.clone();
    n.module.externs.remove(e);
    for_each_inst_mut(&mut n.module, |k| {
        if let InstKind::Call {
            callee: Callee::Extern(x),
            ..
        } = k
        {
            if x.index() > e {
                *x = ir::ExternId::new(x.index() - 1);
            }
        }
    });
    Some(n)
}

/// Rewrite the declared effects of every extern: `f` maps a location to its
/// new form, or `None` to drop it.
fn map_effects(m: &mut Module, mut f: impl FnMut(EffectLoc) -> Option<EffectLoc>) {
    for e in &mut m.externs {
        if let Some(eff) = &mut e.effects {
            eff.reads = eff.reads.iter().filter_map(|&l| f(l)).collect();
            eff.writes = eff.writes.iter().filter_map(|&l| f(l)).collect();
        }
    }
}

/// Drop global `g` when no instruction accesses it (declared effects on it go too).
fn drop_global(c: &Candidate, g: usize) -> Option<Candidate> {
    if g >= c.module.globals.len()
        || any_placed(&c.module, |k| match k {
            InstKind::Load { addr, .. } | InstKind::Store { addr, .. } => {
                matches!(addr, Addr::Global(x) if x.index() == g)
            }
            _ => false,
        })
    {
        return None;
    }
    let mut n = c.clone();
    n.module.globals.remove(g);
    if g < n.input.globals.len() {
        n.input.globals.remove(g);
    }
    let shift = |x: ir::GlobalId| {
        if x.index() > g {
            ir::GlobalId::new(x.index() - 1)
        } else {
            x
        }
    };
    for_each_inst_mut(&mut n.module, |k| {
        if let InstKind::Load { addr, .. } | InstKind::Store { addr, .. } = k {
            if let Addr::Global(x) = addr {
                *x = shift(*x);
            }
        }
    });
    map_effects(&mut n.module, |l| match l {
        EffectLoc::Global(x) if x.index() == g => None,
        EffectLoc::Global(x) => Some(EffectLoc::Global(shift(x))),
        other => Some(other),
    });
    super::input::compact(&mut n.input);
    Some(n)
}

/// Drop field `f` of type `s` when no instruction accesses it.
fn drop_field(c: &Candidate, s: usize, f: usize) -> Option<Candidate> {
    let hit = |fr: ir::FieldRef| fr.ty.index() == s && fr.index as usize == f;
    if c.module.structs.get(s)?.fields.get(f).is_none()
        || any_placed(&c.module, |k| match k {
            InstKind::Load { addr, .. } | InstKind::Store { addr, .. } => {
                matches!(addr, Addr::Field { field, .. } if hit(*field))
            }
            _ => false,
        })
    {
        return None;
    }
    let mut n = c.clone();
    n.module.structs[s].fields.remove(f);
    let shift = |fr: ir::FieldRef| {
        if fr.ty.index() == s && fr.index as usize > f {
            ir::FieldRef {
                ty: fr.ty,
                index: fr.index - 1,
            }
        } else {
            fr
        }
    };
    for_each_inst_mut(&mut n.module, |k| {
        if let InstKind::Load { addr, .. } | InstKind::Store { addr, .. } = k {
            if let Addr::Field { field, .. } = addr {
                *field = shift(*field);
            }
        }
    });
    map_effects(&mut n.module, |l| match l {
        EffectLoc::Field(fr) if hit(fr) => None,
        EffectLoc::Field(fr) => Some(EffectLoc::Field(shift(fr))),
        other => Some(other),
    });
    for obj in &mut n.input.objects {
        if let InputObject::Struct { ty, fields } = obj {
            if ty.index() == s && f < fields.len() {
                fields.remove(f);
            }
        }
    }
    super::input::compact(&mut n.input);
    Some(n)
}

/// Every type written anywhere in the module, mutably.
fn for_each_type_mut(m: &mut Module, mut f: impl FnMut(&mut Type)) {
    for s in &mut m.structs {
        s.fields.iter_mut().for_each(|d| f(&mut d.ty));
    }
    m.globals.iter_mut().for_each(|g| f(&mut g.ty));
    for e in &mut m.externs {
        e.params.iter_mut().for_each(&mut f);
        e.ret.iter_mut().for_each(&mut f);
        if let Some(eff) = &mut e.effects {
            for l in eff.reads.iter_mut().chain(eff.writes.iter_mut()) {
                if let EffectLoc::Elements(t) = l {
                    f(t);
                }
            }
        }
    }
    for func in &mut m.funcs {
        func.ret.iter_mut().for_each(&mut f);
        func.values.iter_mut().for_each(|v| f(&mut v.ty));
        for i in &mut func.insts {
            if let InstKind::NewArray { elem, .. } = &mut i.kind {
                f(elem);
            }
        }
    }
}

/// Drop type `s` when no type, allocation, field access, effect or input object mentions it.
fn drop_struct(c: &Candidate, s: usize) -> Option<Candidate> {
    if s >= c.module.structs.len() {
        return None;
    }
    let mut n = c.clone();
    let mut used = false;
    for_each_type_mut(&mut n.module, |t| {
        used |= t.base == Base::Struct(StructId::new(s))
    });
    for_each_inst_mut(&mut n.module, |k| match k {
        InstKind::New(x) => used |= x.index() == s,
        InstKind::Load { addr, .. } | InstKind::Store { addr, .. } => {
            used |= matches!(addr, Addr::Field { field, .. } if field.ty.index() == s)
        }
        _ => {}
    });
    map_effects(&mut n.module, |l| {
        used |= matches!(l, EffectLoc::Field(fr) if fr.ty.index() == s);
        Some(l)
    });
    used |= n.input.objects.iter().any(|o| match o {
        InputObject::Struct { ty, .. } => ty.index() == s,
        InputObject::Array { elem, .. } => elem.base == Base::Struct(StructId::new(s)),
    });
    if used {
        return None;
    }
    n.module.structs.remove(s);
    let shift = |x: StructId| {
        if x.index() > s {
            StructId::new(x.index() - 1)
        } else {
            x
        }
    };
    let shift_ty = |t: &mut Type| {
        if let Base::Struct(x) = t.base {
            t.base = Base::Struct(shift(x));
        }
    };
    for_each_type_mut(&mut n.module, shift_ty);
    for_each_inst_mut(&mut n.module, |k| match k {
        InstKind::New(x) => *x = shift(*x),
        InstKind::Load { addr, .. } | InstKind::Store { addr, .. } => {
            if let Addr::Field { field, .. } = addr {
                field.ty = shift(field.ty);
            }
        }
        _ => {}
    });
    map_effects(&mut n.module, |l| match l {
        EffectLoc::Field(fr) => Some(EffectLoc::Field(ir::FieldRef {
            ty: shift(fr.ty),
            index: fr.index,
        })),
        EffectLoc::Elements(mut t) => {
            shift_ty(&mut t);
            Some(EffectLoc::Elements(t))
        }
        other => Some(other),
    });
    for o in &mut n.input.objects {
        match o {
            InputObject::Struct { ty, .. } => *ty = shift(*ty),
            InputObject::Array { elem, .. } => shift_ty(elem),
        }
    }
    Some(n)
}
