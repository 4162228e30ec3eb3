//! Replaying a rule counterexample without z3: the instance's pattern and
//! replacement are evaluated on the model's operand values with the
//! interpreter's arithmetic (`BinOp::eval`, `UnOp::eval`). A counterexample
//! is reported only when the two outcomes really differ; otherwise it is a
//! checker bug (`unconfirmed`), as for functions (`docs/smt.md`).

use passes::peeps::spec::{ICond, ITerm, Instance, Opc, Ty};

/// What one side does on concrete operands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A value (for `guard`, `nop` and branches: 0 or the target).
    Value(i64),
    /// A trap of this kind.
    Trap(&'static str),
    /// A compile-time part of the replacement traps: it cannot be built.
    Undefined,
    /// A heap: the contents at every identity either side wrote.
    Heap(Vec<(i64, i64)>),
}

impl Outcome {
    /// The outcome as printed, for a result of type `ty`.
    pub fn show(&self, ty: Ty) -> String {
        match (self.clone(), ty) {
            (Outcome::Heap(cells), _) => {
                let cells: Vec<String> = cells
                    .iter()
                    .map(|(a, v)| format!("object #{}.f = {v}", *a as u64))
                    .collect();
                format!("heap with {}", cells.join(", "))
            }
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
    vars: Vec<i64>,
    /// Heaps made so far: the heap variable they start from and the stores
    /// on it (latest last); a heap value is an index here.
    heaps: Vec<(usize, Vec<(i64, i64)>)>,
    /// The initial contents of heap variable `i` at identity `a`.
    init: &'a dyn Fn(usize, i64) -> i64,
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
            (Opc::Load | Opc::Store, [_, p, ..]) if *p == 0 => trap("null_deref"),
            (Opc::Load, [h, p]) => Ok(self.read(*h, *p)),
            (Opc::Store, [h, p, x]) => {
                let (base, mut stores) = self.heaps[*h as usize].clone();
                stores.push((*p, *x));
                self.heaps.push((base, stores));
                Ok(self.heaps.len() as i64 - 1)
            }
            (Opc::Guard, [c]) if *c == 0 => trap("guard_failed"),
            (Opc::Phi, entries) => {
                let k = self.choices.get(self.phis).copied().unwrap_or(0);
                self.phis += 1;
                Ok(entries.get(k).copied().unwrap_or(0))
            }
            _ => Ok(0),
        }
    }

    /// Heap `h` at identity `p`.
    fn read(&self, h: i64, p: i64) -> i64 {
        let (base, stores) = &self.heaps[h as usize];
        stores
            .iter()
            .rev()
            .find(|s| s.0 == p)
            .map_or_else(|| (self.init)(*base, p), |s| s.1)
    }

    /// Two heaps (of one heap variable) as comparable outcomes: their
    /// contents at every identity either wrote.
    fn contents(&self, a: i64, b: i64) -> (Outcome, Outcome) {
        let mut at: Vec<i64> = [a, b]
            .iter()
            .flat_map(|&h| self.heaps[h as usize].1.iter().map(|s| s.0))
            .collect();
        at.sort_unstable();
        at.dedup();
        let cells = |h: i64| Outcome::Heap(at.iter().map(|&p| (p, self.read(h, p))).collect());
        (cells(a), cells(b))
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
    init: &dyn Fn(usize, i64) -> i64,
) -> Option<(Outcome, Outcome)> {
    let mut r = Replay {
        vars: vars.to_vec(),
        heaps: Vec::new(),
        init,
        consts,
        choices,
        phis: 0,
        me: 0,
        in_pattern: false,
    };
    for (i, (_, ty)) in inst.vars.iter().enumerate() {
        if *ty == Ty::Heap {
            r.vars[i] = r.heaps.len() as i64;
            r.heaps.push((i, Vec::new()));
        }
    }
    if !r.cond(&inst.cond) {
        return None;
    }
    let rhs = r.eval(&inst.rewrite, inst.rewrite.is_compile_time());
    r.me = rhs.clone().unwrap_or(0);
    r.in_pattern = true;
    let ITerm::App(op, args) = &inst.pattern else {
        return None;
    };
    let mut vals = Vec::new();
    for a in args {
        vals.push(r.eval(a, false).ok()?);
    }
    let lhs = r.apply(*op, &vals, false);
    if let (Ok(a), Ok(b), Ty::Heap) = (lhs.clone(), rhs.clone(), inst.ty) {
        return Some(r.contents(a, b));
    }
    let out = |s: Step| s.map_or_else(|o| o, Outcome::Value);
    Some((out(lhs), out(rhs)))
}
