//! Instantiation of a rule: one instance per opcode of its family (the
//! alternatives of its root, or every binary operation for a root `op`) and
//! per well-typed assignment of types to its `?` variables (i64, reference,
//! block label, heap), like VeriISLE's per-type instantiations. Static conditions
//! (`commutative`) are decided here; an instance whose condition is `false`
//! is dropped.

use super::term::{Cond, Head, Term};
use ir::{BinOp, UnOp};

/// An opcode of an instance.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Opc {
    /// A binary operation.
    Bin(BinOp),
    /// A unary operation.
    Un(UnOp),
    /// `select c, a, b`.
    Select,
    /// A phi: the value of whichever entry's edge was taken.
    Phi,
    /// `br c, T, F`: the target taken.
    Br,
    /// `jmp T`.
    Jmp,
    /// `guard c`: traps `guard_failed` when c = 0.
    Guard,
    /// `(load h p)`: field `p.f` in heap `h` (`null_deref` when p is null).
    Load,
    /// `(store h p v)`: heap `h` with `p.f = v` (`null_deref` when p is null).
    Store,
}

impl Opc {
    fn from_name(s: &str) -> Option<Opc> {
        if let Some(op) = BinOp::from_name(s) {
            return Some(Opc::Bin(op));
        }
        if let Some(op) = UnOp::from_name(s) {
            return Some(Opc::Un(op));
        }
        Some(match s {
            "select" => Opc::Select,
            "phi" => Opc::Phi,
            "br" => Opc::Br,
            "jmp" => Opc::Jmp,
            "guard" => Opc::Guard,
            "load" => Opc::Load,
            "store" => Opc::Store,
            _ => return None,
        })
    }

    /// Its mnemonic.
    pub fn name(self) -> &'static str {
        match self {
            Opc::Bin(op) => op.name(),
            Opc::Un(op) => op.name(),
            Opc::Select => "select",
            Opc::Phi => "phi",
            Opc::Br => "br",
            Opc::Jmp => "jmp",
            Opc::Guard => "guard",
            Opc::Load => "load",
            Opc::Store => "store",
        }
    }
}

/// The type of a term in an instance.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    /// An integer.
    I64,
    /// A (nullable) reference.
    Ref,
    /// A block label (operands of `br` and `jmp`).
    Label,
    /// No value (`guard`, `br`, `nop`).
    Unit,
    /// The contents of one field leaf: identity → word (LSE's folds).
    Heap,
}

impl Ty {
    /// Its name in listings.
    pub fn name(self) -> &'static str {
        match self {
            Ty::I64 => "i64",
            Ty::Ref => "ref",
            Ty::Label => "label",
            Ty::Unit => "unit",
            Ty::Heap => "heap",
        }
    }
}

/// A term of an instance: variables are indices into the instance's lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ITerm {
    /// `?x`: index into [`Instance::vars`].
    Var(usize),
    /// `#c`: index into [`Instance::consts`].
    Const(usize),
    /// An integer literal.
    Lit(i64),
    /// The null reference.
    Null,
    /// The phi being matched.
    SelfRef,
    /// Nothing (a removed instruction).
    Nop,
    /// An operation.
    App(Opc, Vec<ITerm>),
    /// A choice made at rewrite time.
    If(Box<ICond>, Box<ITerm>, Box<ITerm>),
}

impl ITerm {
    /// True when no `?` variable or `self` occurs in it: the rewrite computes
    /// it while compiling (a constant), and the matched instruction's operands
    /// must be constants for the pattern to match.
    pub fn is_compile_time(&self) -> bool {
        match self {
            ITerm::Var(_) | ITerm::SelfRef | ITerm::Nop => false,
            ITerm::Const(_) | ITerm::Lit(_) | ITerm::Null => true,
            ITerm::App(_, args) => args.iter().all(ITerm::is_compile_time),
            ITerm::If(_, a, b) => a.is_compile_time() && b.is_compile_time(),
        }
    }
}

/// A condition of an instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ICond {
    /// Decided.
    Bool(bool),
    /// All hold.
    And(Vec<ICond>),
    /// One holds.
    Or(Vec<ICond>),
    /// Does not hold.
    Not(Box<ICond>),
    /// Both defined and equal.
    Eq(ITerm, ITerm),
    /// Both defined and different.
    Ne(ITerm, ITerm),
    /// Evaluates without a trap.
    NoTrap(ITerm),
    /// Variable is not a constant (syntactic).
    NotConst(usize),
    /// Variable's definition dominates the matched instruction (CFG fact).
    Dominates(usize),
}

/// One instantiation of a rule.
#[derive(Clone, Debug)]
pub struct Instance {
    /// The rule's name.
    pub rule: String,
    /// The root opcode of this instance.
    pub root: Opc,
    /// The `?` variables and their types.
    pub vars: Vec<(String, Ty)>,
    /// The `#` constants (all i64).
    pub consts: Vec<String>,
    /// What is matched.
    pub pattern: ITerm,
    /// What must hold.
    pub cond: ICond,
    /// What the instruction becomes.
    pub rewrite: ITerm,
    /// The type of the matched instruction's result (`Unit` when none).
    pub ty: Ty,
}

impl Instance {
    /// A short description: root opcode and variable types (`add`, `eq x:ref`).
    pub fn label(&self) -> String {
        let mut s = self.root.name().to_string();
        for (n, t) in &self.vars {
            s.push_str(&format!(" {n}:{}", t.name()));
        }
        s
    }
}

/// The instances of a rule given by its pattern, condition and rewrite.
pub fn instantiate(
    rule: &str,
    pattern: &Term,
    cond: &Cond,
    rewrite: &Term,
) -> Result<Vec<Instance>, String> {
    let Term::App(root_head, _) = pattern else {
        return Err("a pattern must be an operation `(OP ...)`".to_string());
    };
    let family: Vec<Opc> = match root_head {
        Head::Op => BinOp::ALL.iter().map(|&o| Opc::Bin(o)).collect(),
        Head::Names(alts) => alts
            .iter()
            .map(|a| Opc::from_name(a).ok_or_else(|| format!("unknown opcode `{a}`")))
            .collect::<Result<_, _>>()?,
    };
    let mut names = Names::default();
    names.collect(pattern);
    names.collect(rewrite);
    names.collect_cond(cond);
    let mut out = Vec::new();
    for (i, &root) in family.iter().enumerate() {
        let r = Resolver {
            root,
            index: i,
            width: family.len(),
            names: &names,
        };
        let (p, c, w) = (r.term(pattern)?, simplify(r.cond(cond)?), r.term(rewrite)?);
        if c == ICond::Bool(false) {
            continue;
        }
        let n = names.vars.len();
        const TYS: [Ty; 4] = [Ty::I64, Ty::Ref, Ty::Label, Ty::Heap];
        for code in 0..TYS.len().pow(n as u32) {
            let tys: Vec<Ty> = (0..n)
                .map(|k| TYS[code / TYS.len().pow(k as u32) % TYS.len()])
                .collect();
            let mut inst = Instance {
                rule: rule.to_string(),
                root,
                vars: names.vars.iter().cloned().zip(tys).collect(),
                consts: names.consts.clone(),
                pattern: p.clone(),
                cond: c.clone(),
                rewrite: w.clone(),
                ty: Ty::Unit,
            };
            if let Some(ty) = well_typed(&inst) {
                inst.ty = ty;
                out.push(inst);
            }
        }
    }
    if out.is_empty() {
        return Err("no well-typed instance".to_string());
    }
    Ok(out)
}

#[derive(Default)]
struct Names {
    vars: Vec<String>,
    consts: Vec<String>,
}

impl Names {
    fn collect(&mut self, t: &Term) {
        match t {
            Term::Var(n) if !self.vars.contains(n) => self.vars.push(n.clone()),
            Term::Const(n) if !self.consts.contains(n) => self.consts.push(n.clone()),
            Term::App(_, args) => args.iter().for_each(|a| self.collect(a)),
            Term::If(c, a, b) => {
                self.collect_cond(c);
                self.collect(a);
                self.collect(b);
            }
            _ => {}
        }
    }

    fn collect_cond(&mut self, c: &Cond) {
        match c {
            Cond::And(cs) | Cond::Or(cs) => cs.iter().for_each(|c| self.collect_cond(c)),
            Cond::Not(c) => self.collect_cond(c),
            Cond::Eq(a, b) | Cond::Ne(a, b) => {
                self.collect(a);
                self.collect(b);
            }
            Cond::NoTrap(t) => self.collect(t),
            Cond::NotConst(n) | Cond::Dominates(n) if !self.vars.contains(n) => {
                self.vars.push(n.clone())
            }
            _ => {}
        }
    }
}

struct Resolver<'a> {
    root: Opc,
    index: usize,
    width: usize,
    names: &'a Names,
}

impl Resolver<'_> {
    fn var(&self, n: &str) -> usize {
        self.names
            .vars
            .iter()
            .position(|v| v == n)
            .expect("collected")
    }

    fn head(&self, h: &Head) -> Result<Opc, String> {
        match h {
            Head::Op => Ok(self.root),
            Head::Names(alts) if alts.len() == 1 => {
                Opc::from_name(&alts[0]).ok_or_else(|| format!("unknown opcode `{}`", alts[0]))
            }
            Head::Names(alts) if alts.len() == self.width => Opc::from_name(&alts[self.index])
                .ok_or_else(|| format!("unknown opcode `{}`", alts[self.index])),
            Head::Names(alts) => Err(format!(
                "`{}` has {} alternatives but the root has {}",
                alts.join("|"),
                alts.len(),
                self.width
            )),
        }
    }

    fn term(&self, t: &Term) -> Result<ITerm, String> {
        Ok(match t {
            Term::Var(n) => ITerm::Var(self.var(n)),
            Term::Const(n) => ITerm::Const(
                self.names
                    .consts
                    .iter()
                    .position(|c| c == n)
                    .expect("collected"),
            ),
            Term::Lit(v) => ITerm::Lit(*v),
            Term::Null => ITerm::Null,
            Term::SelfRef => ITerm::SelfRef,
            Term::Nop => ITerm::Nop,
            Term::App(h, args) => ITerm::App(
                self.head(h)?,
                args.iter()
                    .map(|a| self.term(a))
                    .collect::<Result<_, _>>()?,
            ),
            Term::If(c, a, b) => ITerm::If(
                Box::new(self.cond(c)?),
                Box::new(self.term(a)?),
                Box::new(self.term(b)?),
            ),
        })
    }

    fn cond(&self, c: &Cond) -> Result<ICond, String> {
        Ok(match c {
            Cond::Bool(b) => ICond::Bool(*b),
            Cond::And(cs) => ICond::And(cs.iter().map(|c| self.cond(c)).collect::<Result<_, _>>()?),
            Cond::Or(cs) => ICond::Or(cs.iter().map(|c| self.cond(c)).collect::<Result<_, _>>()?),
            Cond::Not(c) => ICond::Not(Box::new(self.cond(c)?)),
            Cond::Eq(a, b) => ICond::Eq(self.term(a)?, self.term(b)?),
            Cond::Ne(a, b) => ICond::Ne(self.term(a)?, self.term(b)?),
            Cond::NoTrap(t) => ICond::NoTrap(self.term(t)?),
            Cond::NotConst(n) => ICond::NotConst(self.var(n)),
            Cond::Dominates(n) => ICond::Dominates(self.var(n)),
            Cond::Commutative => ICond::Bool(match self.root {
                Opc::Bin(op) => op.is_commutative(),
                _ => false,
            }),
        })
    }
}

/// Fold decided parts of a condition.
fn simplify(c: ICond) -> ICond {
    match c {
        ICond::And(cs) => {
            let cs: Vec<ICond> = cs.into_iter().map(simplify).collect();
            if cs.contains(&ICond::Bool(false)) {
                return ICond::Bool(false);
            }
            let rest: Vec<ICond> = cs.into_iter().filter(|c| *c != ICond::Bool(true)).collect();
            match rest.len() {
                0 => ICond::Bool(true),
                1 => rest.into_iter().next().expect("one"),
                _ => ICond::And(rest),
            }
        }
        ICond::Or(cs) => {
            let cs: Vec<ICond> = cs.into_iter().map(simplify).collect();
            if cs.contains(&ICond::Bool(true)) {
                return ICond::Bool(true);
            }
            let rest: Vec<ICond> = cs
                .into_iter()
                .filter(|c| *c != ICond::Bool(false))
                .collect();
            match rest.len() {
                0 => ICond::Bool(false),
                1 => rest.into_iter().next().expect("one"),
                _ => ICond::Or(rest),
            }
        }
        ICond::Not(c) => match simplify(*c) {
            ICond::Bool(b) => ICond::Bool(!b),
            c => ICond::Not(Box::new(c)),
        },
        c => c,
    }
}

/// The pattern's type when pattern, condition and rewrite type-check, with
/// the rewrite of the pattern's type.
fn well_typed(inst: &Instance) -> Option<Ty> {
    let tc = Typer { inst };
    let pt = tc.ty(&inst.pattern)?;
    let rt = tc.ty(&inst.rewrite)?;
    // A value becomes a value of its type; an instruction without one, `nop`
    // or another instruction without one.
    let ok = tc.cond(&inst.cond)
        && if pt == ANY {
            rt == ANY
        } else {
            Typer::unify(pt, rt) == Some(pt)
        };
    ok.then_some(pt)
}

/// The type of `self` (a phi's own value): agrees with any value type.
const ANY: Ty = Ty::Unit;

struct Typer<'a> {
    inst: &'a Instance,
}

impl Typer<'_> {
    /// Same type, `self` agreeing with any value type.
    fn unify(a: Ty, b: Ty) -> Option<Ty> {
        match (a, b) {
            (x, y) if x == y => Some(x),
            (ANY, y) if y != Ty::Label && y != Ty::Heap => Some(y),
            (x, ANY) if x != Ty::Label && x != Ty::Heap => Some(x),
            _ => None,
        }
    }

    fn ty(&self, t: &ITerm) -> Option<Ty> {
        match t {
            ITerm::Var(i) => Some(self.inst.vars[*i].1),
            ITerm::Const(_) | ITerm::Lit(_) => Some(Ty::I64),
            ITerm::Null => Some(Ty::Ref),
            ITerm::SelfRef | ITerm::Nop => Some(ANY),
            ITerm::If(c, a, b) => {
                if !self.cond(c) {
                    return None;
                }
                Self::unify(self.ty(a)?, self.ty(b)?)
            }
            ITerm::App(op, args) => {
                let tys: Vec<Ty> = args.iter().map(|a| self.ty(a)).collect::<Option<_>>()?;
                let value = |t: Ty| matches!(t, Ty::I64 | Ty::Ref | ANY);
                match (op, tys.as_slice()) {
                    (Opc::Bin(op), [a, b]) => {
                        let u = Self::unify(*a, *b)?;
                        (u == Ty::I64 || (op.accepts_refs() && (u == Ty::Ref || u == ANY)))
                            .then_some(Ty::I64)
                    }
                    (Opc::Un(UnOp::Copy), [a]) => value(*a).then_some(*a),
                    (Opc::Un(_), [a]) => (*a == Ty::I64).then_some(Ty::I64),
                    (Opc::Select, [c, a, b]) => {
                        let u = Self::unify(*a, *b)?;
                        (*c == Ty::I64 && value(u)).then_some(u)
                    }
                    (Opc::Phi, [first, rest @ ..]) => {
                        let u = rest.iter().try_fold(*first, |u, t| Self::unify(u, *t))?;
                        (value(u) && u != ANY).then_some(u)
                    }
                    (Opc::Br, [c, t, f]) => {
                        (*c == Ty::I64 && *t == Ty::Label && *f == Ty::Label).then_some(ANY)
                    }
                    (Opc::Jmp, [t]) => (*t == Ty::Label).then_some(ANY),
                    (Opc::Guard, [c]) => (*c == Ty::I64).then_some(ANY),
                    (Opc::Load, [h, p]) => (*h == Ty::Heap && *p == Ty::Ref).then_some(Ty::I64),
                    (Opc::Store, [h, p, v]) => {
                        (*h == Ty::Heap && *p == Ty::Ref && matches!(v, Ty::I64 | Ty::Ref))
                            .then_some(Ty::Heap)
                    }
                    _ => None,
                }
            }
        }
    }

    fn cond(&self, c: &ICond) -> bool {
        match c {
            ICond::Bool(_) => true,
            ICond::And(cs) | ICond::Or(cs) => cs.iter().all(|c| self.cond(c)),
            ICond::Not(c) => self.cond(c),
            ICond::Eq(a, b) | ICond::Ne(a, b) => match (self.ty(a), self.ty(b)) {
                (Some(x), Some(y)) => Self::unify(x, y).is_some_and(|t| t != Ty::Heap),
                _ => false,
            },
            ICond::NoTrap(t) => self.ty(t).is_some(),
            ICond::NotConst(i) => self.inst.vars[*i].1 == Ty::I64,
            ICond::Dominates(i) => matches!(self.inst.vars[*i].1, Ty::I64 | Ty::Ref),
        }
    }
}
