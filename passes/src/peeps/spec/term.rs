//! The rule language's abstract syntax before instantiation, and its reading
//! from s-expressions. A term is `?x` (any value), `#c` (any integer
//! constant), an integer literal, `null`, `self` (a phi's own value), `nop`
//! (nothing: a removed instruction), `(OP t ...)` where OP is an opcode, an
//! alternation `a|b|c` (a family, one instance per alternative) or `op` (the
//! root's opcode; at the root, every binary operation), or
//! `(if COND t1 t2)` (chosen while rewriting). A condition is `true`,
//! `false`, `(and ..)`, `(or ..)`, `(not c)`, `(= t1 t2)`, `(!= t1 t2)`,
//! `(no-trap t)`, `(not-const ?x)`, `(commutative op)` or `(dominates ?x)`.

use super::sexp::{parse_one, Sexp, SexpError};

/// An operation's name in a term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Head {
    /// One opcode, or alternatives (`sgt|sge`) instantiated position-wise.
    Names(Vec<String>),
    /// `op`: the root's opcode.
    Op,
}

/// A term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    /// `?x`: any value.
    Var(String),
    /// `#c`: any integer constant.
    Const(String),
    /// An integer literal.
    Lit(i64),
    /// The null reference.
    Null,
    /// `self`: the phi being matched (its value on an earlier iteration).
    SelfRef,
    /// `nop`: the instruction is removed.
    Nop,
    /// An operation applied to operands.
    App(Head, Vec<Term>),
    /// `(if c a b)`: `a` when `c` holds, else `b`, chosen at rewrite time.
    If(Box<Cond>, Box<Term>, Box<Term>),
}

/// A side condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    /// `true` / `false`.
    Bool(bool),
    /// All hold.
    And(Vec<Cond>),
    /// One holds.
    Or(Vec<Cond>),
    /// Does not hold.
    Not(Box<Cond>),
    /// Both constant expressions are defined and equal.
    Eq(Term, Term),
    /// Both are defined and differ.
    Ne(Term, Term),
    /// The constant expression evaluates without a trap.
    NoTrap(Term),
    /// The value is not an integer constant (a syntactic condition).
    NotConst(String),
    /// The root's opcode is commutative (decided per instance).
    Commutative,
    /// The value's definition strictly dominates the matched instruction's block.
    Dominates(String),
}

/// Read a term from text starting at `start` (line, column).
pub fn parse_term(text: &str, start: (usize, usize)) -> Result<Term, SexpError> {
    term(&parse_one(text, start)?)
}

/// Read a condition from text starting at `start` (line, column).
pub fn parse_cond(text: &str, start: (usize, usize)) -> Result<Cond, SexpError> {
    cond(&parse_one(text, start)?)
}

fn var_name(s: &Sexp, sigil: char) -> Result<String, SexpError> {
    match s {
        Sexp::Atom(a, _) if a.starts_with(sigil) && a.len() > 1 => Ok(a[1..].to_string()),
        _ => Err((format!("expected a `{sigil}name`"), s.pos())),
    }
}

fn term(s: &Sexp) -> Result<Term, SexpError> {
    match s {
        Sexp::Atom(a, p) => {
            if let Some(n) = a.strip_prefix('?').filter(|n| !n.is_empty()) {
                Ok(Term::Var(n.to_string()))
            } else if let Some(n) = a.strip_prefix('#').filter(|n| !n.is_empty()) {
                Ok(Term::Const(n.to_string()))
            } else if a == "null" {
                Ok(Term::Null)
            } else if a == "self" {
                Ok(Term::SelfRef)
            } else if a == "nop" {
                Ok(Term::Nop)
            } else if let Ok(v) = a.parse::<i64>() {
                Ok(Term::Lit(v))
            } else {
                Err((format!("`{a}` is not a term"), *p))
            }
        }
        Sexp::List(items, p) => {
            let Some(Sexp::Atom(h, _)) = items.first() else {
                return Err(("expected an operation name".to_string(), *p));
            };
            let args = &items[1..];
            if h == "if" {
                if args.len() != 3 {
                    return Err(("`if` takes a condition and two terms".to_string(), *p));
                }
                return Ok(Term::If(
                    Box::new(cond(&args[0])?),
                    Box::new(term(&args[1])?),
                    Box::new(term(&args[2])?),
                ));
            }
            let head = if h == "op" {
                Head::Op
            } else {
                Head::Names(h.split('|').map(str::to_string).collect())
            };
            let args = args.iter().map(term).collect::<Result<_, _>>()?;
            Ok(Term::App(head, args))
        }
    }
}

fn cond(s: &Sexp) -> Result<Cond, SexpError> {
    match s {
        Sexp::Atom(a, _) if a == "true" => Ok(Cond::Bool(true)),
        Sexp::Atom(a, _) if a == "false" => Ok(Cond::Bool(false)),
        Sexp::Atom(a, p) => Err((format!("`{a}` is not a condition"), *p)),
        Sexp::List(items, p) => {
            let Some(Sexp::Atom(h, _)) = items.first() else {
                return Err(("expected a condition name".to_string(), *p));
            };
            let args = &items[1..];
            let arity = |n: usize| {
                if args.len() == n {
                    Ok(())
                } else {
                    Err((format!("`{h}` takes {n} operand(s)"), *p))
                }
            };
            match h.as_str() {
                "and" => Ok(Cond::And(args.iter().map(cond).collect::<Result<_, _>>()?)),
                "or" => Ok(Cond::Or(args.iter().map(cond).collect::<Result<_, _>>()?)),
                "not" => {
                    arity(1)?;
                    Ok(Cond::Not(Box::new(cond(&args[0])?)))
                }
                "=" | "!=" => {
                    arity(2)?;
                    let (a, b) = (term(&args[0])?, term(&args[1])?);
                    Ok(if h == "=" {
                        Cond::Eq(a, b)
                    } else {
                        Cond::Ne(a, b)
                    })
                }
                "no-trap" => {
                    arity(1)?;
                    Ok(Cond::NoTrap(term(&args[0])?))
                }
                "not-const" => {
                    arity(1)?;
                    Ok(Cond::NotConst(var_name(&args[0], '?')?))
                }
                "dominates" => {
                    arity(1)?;
                    Ok(Cond::Dominates(var_name(&args[0], '?')?))
                }
                "commutative" => {
                    arity(1)?;
                    match &args[0] {
                        Sexp::Atom(a, _) if a == "op" => Ok(Cond::Commutative),
                        other => Err(("`commutative` takes `op`".to_string(), other.pos())),
                    }
                }
                _ => Err((format!("unknown condition `{h}`"), *p)),
            }
        }
    }
}
