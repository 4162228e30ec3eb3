//! Replaying a rule counterexample without z3: the instance's pattern and
//! replacement are evaluated on the model's operand values with the
//! interpreter's arithmetic (`BinOp::eval`, `UnOp::eval`). A counterexample
//! is reported only when the two outcomes really differ; otherwise it is a
//! checker bug (`unconfirmed`), as for functions (`docs/smt.md`).

use passes::peeps::spec::{ICond, ITerm, Instance, Opc, Ty};

/// What one side does on concrete operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A value (for `guard`, `nop` and branches: 0 or the target).
    Value(i64),
    /// A trap of this kind.
    Trap(&'static str),
    /// A compile-time part of the replacement traps: it cannot be built.
    Undefined,
}

impl Outcome {
    /// The outcome as printed, for a result of type `ty`.
    pub fn show(self, ty: Ty) -> String {
        match (self, ty) {
            (Outcome::Value(0), Ty::Ref) => "null".to_string(),
            (Outcome::Value(v), Ty::Ref) => format!("object #{}", v as u64),
            (Outcome::Value(_), Ty::Unit) => "continues".to_string(),
            (Outcome::Value(v), _) => v.to_string(),
            (Outcome::Trap(k), _) => format!("trap {k}"),
            (Outcome::Undefined, _) => "undefined (a compile-time trap)".to_string(),
        }
    }
}

struct Replay<'a> {
    vars: &'a [i64],
    consts: &'a [i64],
    choices: &'a [usize],
    phis: usize,
    me: i64,
    in_pattern: bool,
}

type Step = Result<i64, Outcome>;

impl Replay<'_> {
    fn eval(&mut self, t: &ITerm, ct: bool) -> Step {
        match t {
            ITerm::Var(i) => Ok(self.vars[*i]),
            ITerm::Const(i) => Ok(self.consts[*i]),
            ITerm::Lit(n) => Ok(*n),
            ITerm::Null | ITerm::Nop => Ok(0),
            ITerm::SelfRef => Ok(self.me),
            ITerm::If(c, a, b) => {
                if self.cond(c) {
                    self.eval(a, ct)
                } else {
                    self.eval(b, ct)
                }
            }
            ITerm::App(op, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    let sub = ct || (!self.in_pattern && a.is_compile_time());
                    vals.push(self.eval(a, sub)?);
                }
                self.apply(*op, &vals, ct)
            }
        }
    }

    fn apply(&mut self, op: Opc, v: &[i64], ct: bool) -> Step {
        let trap = |kind| {
            Err(if ct {
                Outcome::Undefined
            } else {
                Outcome::Trap(kind)
            })
        };
        match (op, v) {
            (Opc::Bin(o), [a, b]) => o.eval(*a, *b).map_or_else(|| trap("div_by_zero"), Ok),
            (Opc::Un(o), [a]) => Ok(o.eval(*a)),
            (Opc::Select | Opc::Br, [c, a, b]) => Ok(if *c != 0 { *a } else { *b }),
            (Opc::Jmp, [t]) => Ok(*t),
            (Opc::Guard, [c]) if *c == 0 => trap("guard_failed"),
            (Opc::Phi, entries) => {
                let k = self.choices.get(self.phis).copied().unwrap_or(0);
                self.phis += 1;
                Ok(entries.get(k).copied().unwrap_or(0))
            }
            _ => Ok(0),
        }
    }

    fn cond(&mut self, c: &ICond) -> bool {
        match c {
            ICond::Bool(b) => *b,
            ICond::And(cs) => cs.iter().all(|c| self.cond(c)),
            ICond::Or(cs) => cs.iter().any(|c| self.cond(c)),
            ICond::Not(c) => !self.cond(c),
            ICond::Eq(a, b) => {
                matches!((self.eval(a, true), self.eval(b, true)), (Ok(x), Ok(y)) if x == y)
            }
            ICond::Ne(a, b) => {
                matches!((self.eval(a, true), self.eval(b, true)), (Ok(x), Ok(y)) if x != y)
            }
            ICond::NoTrap(t) => self.eval(t, true).is_ok(),
            ICond::NotConst(_) | ICond::Dominates(_) => true,
        }
    }
}

/// The outcomes of the pattern's instruction and of the replacement on these
/// operands (`None` when the condition does not hold or a nested instruction
/// of the pattern traps: not an input the rule applies to).
pub fn replay(
    inst: &Instance,
    vars: &[i64],
    consts: &[i64],
    choices: &[usize],
) -> Option<(Outcome, Outcome)> {
    let mut r = Replay {
        vars,
        consts,
        choices,
        phis: 0,
        me: 0,
        in_pattern: false,
    };
    if !r.cond(&inst.cond) {
        return None;
    }
    let rhs = r.eval(&inst.rewrite, inst.rewrite.is_compile_time());
    r.me = rhs.unwrap_or(0);
    r.in_pattern = true;
    let ITerm::App(op, args) = &inst.pattern else {
        return None;
    };
    let mut vals = Vec::new();
    for a in args {
        vals.push(r.eval(a, false).ok()?);
    }
    let lhs = r.apply(*op, &vals, false);
    let out = |s: Step| s.map_or_else(|o| o, Outcome::Value);
    Some((out(lhs), out(rhs)))
}
