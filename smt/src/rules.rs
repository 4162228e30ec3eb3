//! Proofs of peephole rules: each instance of a rule (see
//! `passes::peeps::spec`) becomes one z3 query over 64-bit words, "the
//! condition holds, the pattern's instruction runs, and the replacement does
//! not behave the same", which must be unsatisfiable. Values, references
//! (0 is `null`) and block labels are words; arithmetic is
//! [`crate::encode::binary`], the encoding of functions. Behaving the same
//! means: the replacement is defined (its compile-time parts do not trap),
//! it traps exactly when the instruction traps and with the same kind, and
//! otherwise gives the same value. A satisfying model is a counterexample,
//! printed as concrete operand values once a concrete replay
//! ([`crate::rule_replay`]) confirms that the two sides differ.

use crate::encode::binary;
use crate::encode::select;
use crate::rule_replay::{replay, Outcome};
use crate::shared::{bv, word};
use ir::{BinOp, UnOp};
use passes::peeps::spec::{ICond, ITerm, Instance, Opc, Ty};
use std::time::{Duration, Instant};
use z3::ast::{Array, Bool, BV};
use z3::{FuncDecl, Params, SatResult, Solver, Sort};

/// The answer for one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleVerdict {
    /// The replacement behaves as the instruction for every operand value.
    Proved,
    /// Operand values on which they differ (`x = 5, c = 0`) and both behaviours.
    Counterexample(String),
    /// The solver gave up.
    Unknown(String),
    /// z3 found operands the concrete replay does not confirm: a checker bug.
    Unconfirmed(String),
}

/// Trap codes of an outcome (0: none).
const DIV_BY_ZERO: u64 = 1;
const GUARD_FAILED: u64 = 2;
const NULL_DEREF: u64 = 3;

/// What a term evaluates to: its value, its trap code (8 bits, 0 when it
/// does not trap) and whether it is defined (compile-time parts do not trap).
struct Ev {
    v: BV,
    /// The value when the term is a heap (then `v` is unused).
    heap: Option<Array>,
    trap: BV,
    def: Bool,
}

struct Enc {
    /// Evaluating the pattern: every operation there is an instruction.
    in_pattern: bool,
    vars: Vec<BV>,
    /// The heap variables' contents (identity → word), by variable index.
    heaps: Vec<Option<Array>>,
    consts: Vec<BV>,
    me: BV,
    /// Facts assumed: nested instructions of the pattern completed.
    assume: Vec<Bool>,
    /// The entry each phi takes in this query, in evaluation order.
    choices: Vec<usize>,
    /// Phis evaluated so far.
    phis: usize,
    /// `mul`, `sdiv` and `srem` results are uninterpreted functions of their
    /// operands (a proof then holds for the real operations too).
    abstract_ops: bool,
}

fn code(c: u64) -> BV {
    BV::from_u64(c, 8)
}

impl Enc {
    /// Evaluate `t`; `ct` when the term is computed while compiling (a
    /// trap there makes it undefined instead of an outcome).
    fn eval(&mut self, t: &ITerm, ct: bool) -> Ev {
        let plain = |v: BV| Ev {
            v,
            heap: None,
            trap: code(0),
            def: Bool::from_bool(true),
        };
        match t {
            ITerm::Var(i) => Ev {
                heap: self.heaps[*i].clone(),
                ..plain(self.vars[*i].clone())
            },
            ITerm::Const(i) => plain(self.consts[*i].clone()),
            ITerm::Lit(n) => plain(bv(*n)),
            ITerm::Null | ITerm::Nop => plain(bv(0)),
            ITerm::SelfRef => plain(self.me.clone()),
            ITerm::If(c, a, b) => {
                let c = self.cond(c);
                let (a, b) = (self.eval(a, ct), self.eval(b, ct));
                Ev {
                    v: c.ite(&a.v, &b.v),
                    heap: None,
                    trap: c.ite(&a.trap, &b.trap),
                    def: c.ite(&a.def, &b.def),
                }
            }
            ITerm::App(op, args) => {
                let args: Vec<Ev> = args
                    .iter()
                    .map(|a| self.eval(a, ct || (!self.in_pattern && a.is_compile_time())))
                    .collect();
                self.apply(*op, &args, ct)
            }
        }
    }

    fn apply(&mut self, op: Opc, args: &[Ev], ct: bool) -> Ev {
        let zero = bv(0);
        let nz = |x: &BV| x.eq(&zero).not();
        let mut heap = None;
        let (v, own): (BV, Bool) = match (op, args) {
            (Opc::Load, [h, p]) => (
                h.heap.as_ref().map_or(bv(0), |h| select(h, &p.v)),
                p.v.eq(&zero),
            ),
            (Opc::Store, [h, p, x]) => {
                heap = h.heap.as_ref().map(|h| h.store(&p.v, &x.v));
                (bv(0), p.v.eq(&zero))
            }
            (Opc::Bin(o), [a, b]) => {
                let traps = if o.may_trap() {
                    b.v.eq(&zero)
                } else {
                    Bool::from_bool(false)
                };
                let costly = matches!(o, BinOp::Mul | BinOp::Sdiv | BinOp::Srem);
                let v = if self.abstract_ops && costly {
                    let w = Sort::bitvector(64);
                    let f = FuncDecl::new(format!("abstract_{}", o.name()), &[&w, &w], &w);
                    f.apply(&[&a.v, &b.v]).as_bv().expect("a word")
                } else {
                    binary(o, &a.v, &b.v)
                };
                (v, traps)
            }
            (Opc::Un(o), [a]) => (
                match o {
                    UnOp::Neg => a.v.bvneg(),
                    UnOp::Not => a.v.bvnot(),
                    UnOp::Copy => a.v.clone(),
                },
                Bool::from_bool(false),
            ),
            (Opc::Select, [c, a, b]) | (Opc::Br, [c, a, b]) => {
                (nz(&c.v).ite(&a.v, &b.v), Bool::from_bool(false))
            }
            (Opc::Jmp, [t]) => (t.v.clone(), Bool::from_bool(false)),
            (Opc::Guard, [c]) => (bv(0), c.v.eq(&zero)),
            (Opc::Phi, entries) => {
                // The entry of whichever edge was taken: one query per choice
                // (cheaper for z3 than a free selector over costly terms).
                let k = self.choices.get(self.phis).copied().unwrap_or(0);
                self.phis += 1;
                (
                    entries.get(k).map_or(bv(0), |e| e.v.clone()),
                    Bool::from_bool(false),
                )
            }
            _ => (bv(0), Bool::from_bool(false)),
        };
        let own_code = match op {
            Opc::Guard => code(GUARD_FAILED),
            Opc::Load | Opc::Store => code(NULL_DEREF),
            _ => code(DIV_BY_ZERO),
        };
        let mut def = Bool::and(&args.iter().map(|a| a.def.clone()).collect::<Vec<_>>());
        if args.is_empty() {
            def = Bool::from_bool(true);
        }
        if ct {
            return Ev {
                v,
                heap,
                trap: code(0),
                def: Bool::and(&[def, own.not()]),
            };
        }
        // The first trap in evaluation order: operands, then the operation.
        let mut trap = own.ite(&own_code, &code(0));
        for a in args.iter().rev() {
            trap = a.trap.eq(code(0)).ite(&trap, &a.trap);
        }
        Ev { v, heap, trap, def }
    }

    fn cond(&mut self, c: &ICond) -> Bool {
        match c {
            ICond::Bool(b) => Bool::from_bool(*b),
            ICond::And(cs) => Bool::and(&cs.iter().map(|c| self.cond(c)).collect::<Vec<_>>()),
            ICond::Or(cs) => Bool::or(&cs.iter().map(|c| self.cond(c)).collect::<Vec<_>>()),
            ICond::Not(c) => self.cond(c).not(),
            ICond::Eq(a, b) | ICond::Ne(a, b) => {
                let (x, y) = (self.eval(a, true), self.eval(b, true));
                let same = x.v.eq(&y.v);
                let rel = if matches!(c, ICond::Eq(..)) {
                    same
                } else {
                    same.not()
                };
                Bool::and(&[x.def, y.def, rel])
            }
            ICond::NoTrap(t) => self.eval(t, true).def,
            // Syntactic and CFG conditions only narrow where a rule applies:
            // proving without them proves more.
            ICond::NotConst(_) | ICond::Dominates(_) => Bool::from_bool(true),
        }
    }
}

/// The number of entries of each phi of `t`, in evaluation order (operands first).
fn phi_arities(t: &ITerm, out: &mut Vec<usize>) {
    match t {
        ITerm::App(op, args) => {
            args.iter().for_each(|a| phi_arities(a, out));
            if *op == Opc::Phi {
                out.push(args.len());
            }
        }
        ITerm::If(_, a, b) => {
            phi_arities(a, out);
            phi_arities(b, out);
        }
        _ => {}
    }
}

/// Prove one instance within `timeout_ms` per query; returns the verdict and
/// the time. A pattern with phis is proved for each choice of their entries.
pub fn prove_instance(inst: &Instance, timeout_ms: u32) -> (RuleVerdict, Duration) {
    let start = Instant::now();
    let mut arities = Vec::new();
    phi_arities(&inst.pattern, &mut arities);
    let combos: usize = arities.iter().product();
    for n in 0..combos {
        let mut rest = n;
        let choices: Vec<usize> = arities
            .iter()
            .map(|&a| {
                let k = rest % a;
                rest /= a;
                k
            })
            .collect();
        // First with the costly operations abstracted (quick when the rule
        // holds for any function there, as for phi webs), then exactly.
        let quick = prove_choice(inst, choices.clone(), (timeout_ms / 10).max(1), true);
        if quick == RuleVerdict::Proved {
            continue;
        }
        let v = prove_choice(inst, choices, timeout_ms, false);
        if v != RuleVerdict::Proved {
            return (v, start.elapsed());
        }
    }
    (RuleVerdict::Proved, start.elapsed())
}

fn prove_choice(
    inst: &Instance,
    choices: Vec<usize>,
    timeout_ms: u32,
    abstract_ops: bool,
) -> RuleVerdict {
    let mut e = Enc {
        in_pattern: true,
        vars: inst
            .vars
            .iter()
            .map(|(n, _)| BV::new_const(format!("?{n}"), 64))
            .collect(),
        heaps: inst
            .vars
            .iter()
            .map(|(n, t)| {
                (*t == Ty::Heap).then(|| Array::new_const(format!("?{n}"), &word(), &word()))
            })
            .collect(),
        consts: inst
            .consts
            .iter()
            .map(|n| BV::new_const(format!("#{n}"), 64))
            .collect(),
        me: BV::new_const("self", 64),
        assume: Vec::new(),
        choices,
        phis: 0,
        abstract_ops,
    };
    // The pattern: its nested instructions ran before it without trapping.
    let lhs = match &inst.pattern {
        ITerm::App(op, args) => {
            let args: Vec<Ev> = args.iter().map(|a| e.eval(a, false)).collect();
            for a in &args {
                e.assume.push(a.trap.eq(code(0)));
            }
            e.apply(*op, &args, false)
        }
        other => e.eval(other, false),
    };
    e.in_pattern = false;
    let cond = e.cond(&inst.cond);
    let rhs = e.eval(&inst.rewrite, inst.rewrite.is_compile_time());
    // `self` is the phi's value on an earlier visit: by induction, already
    // the replacement's.
    e.assume.push(e.me.eq(&rhs.v));
    let same = Bool::and(&[
        rhs.def.clone(),
        lhs.trap.eq(&rhs.trap),
        lhs.trap.eq(code(0)).implies(match (&lhs.heap, &rhs.heap) {
            (Some(a), Some(b)) => a.eq(b),
            _ => lhs.v.eq(&rhs.v),
        }),
    ]);
    let solver = Solver::new();
    let mut p = Params::new();
    p.set_u32("timeout", timeout_ms.max(1));
    solver.set_params(&p);
    for a in &e.assume {
        solver.assert(a);
    }
    solver.assert(&cond);
    solver.assert(same.not());
    match solver.check() {
        SatResult::Unsat => RuleVerdict::Proved,
        SatResult::Unknown => RuleVerdict::Unknown(
            solver
                .get_reason_unknown()
                .unwrap_or_else(|| "unknown".to_string()),
        ),
        SatResult::Sat => {
            let m = solver.get_model().expect("a model after sat");
            let val = |t: &BV| m.eval(t, true).and_then(|v| v.as_u64()).unwrap_or(0) as i64;
            let vars: Vec<i64> = e.vars.iter().map(val).collect();
            let consts: Vec<i64> = e.consts.iter().map(val).collect();
            let init =
                |i: usize, a: i64| e.heaps[i].as_ref().map_or(0, |h| val(&select(h, &bv(a))));
            describe(inst, &vars, &consts, &e.choices, &init)
        }
    }
}

/// The counterexample line for a model, after replaying it concretely.
fn describe(
    inst: &Instance,
    vars: &[i64],
    consts: &[i64],
    choices: &[usize],
    init: &dyn Fn(usize, i64) -> i64,
) -> RuleVerdict {
    let mut parts = Vec::new();
    for ((n, ty), &v) in inst.vars.iter().zip(vars) {
        parts.push(match ty {
            Ty::Label => format!("{n} = block {v}"),
            Ty::Heap => format!("{n} = a heap"),
            _ => format!("{n} = {}", Outcome::Value(v).show(*ty)),
        });
    }
    for (n, &v) in inst.consts.iter().zip(consts) {
        parts.push(format!("{n} = {v}"));
    }
    if !choices.is_empty() {
        parts.push(format!("phi entries taken {choices:?}"));
    }
    let operands = if parts.is_empty() {
        "any operands".to_string()
    } else {
        parts.join(", ")
    };
    match replay(inst, vars, consts, choices, init) {
        Some((l, r)) if l != r => RuleVerdict::Counterexample(format!(
            "{operands}; instruction: {}, replacement: {}",
            l.show(inst.ty),
            r.show(inst.ty)
        )),
        _ => RuleVerdict::Unconfirmed(format!(
            "{operands}: the concrete replay does not tell the two apart (a checker bug)"
        )),
    }
}
