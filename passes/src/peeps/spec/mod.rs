//! The rule language in which every peephole rule states its pattern, side
//! condition and replacement (`docs/smt.md` describes it): parsing
//! ([`term`]), instantiation per opcode and per type ([`instance`]), the
//! concrete meaning on IR functions used by the property test that ties each
//! rule's text to its matcher ([`concrete`]), and rule files ([`file`]).
//! The SMT proofs of the instances live in the `smt` crate.

pub mod concrete;
pub mod file;
pub mod instance;
mod sexp;
pub mod term;

pub use instance::{instantiate, ICond, ITerm, Instance, Opc, Ty};
pub use term::{Cond, Term};

use super::rule::Rule;

/// A rule read from text: its name and the instances to prove.
#[derive(Clone, Debug)]
pub struct RuleSpec {
    /// The rule's name.
    pub name: String,
    /// Its instances (per opcode of the family and per type).
    pub instances: Vec<Instance>,
}

/// Read the three texts of a rule; `at` gives the (line, column) where each
/// text starts, for error positions. Errors are `(message, (line, column))`.
pub fn parse_rule(
    name: &str,
    texts: [(&str, (usize, usize)); 3],
) -> Result<RuleSpec, (String, (usize, usize))> {
    let [(p, pp), (c, cp), (w, wp)] = texts;
    let pattern = term::parse_term(p, pp)?;
    let cond = term::parse_cond(c, cp)?;
    let rewrite = term::parse_term(w, wp)?;
    let instances = instantiate(name, &pattern, &cond, &rewrite).map_err(|e| (e, pp))?;
    Ok(RuleSpec {
        name: name.to_string(),
        instances,
    })
}

/// The specification of a rule of the peephole table.
pub fn table_spec(rule: &Rule) -> Result<RuleSpec, String> {
    parse_rule(
        rule.name,
        [
            (rule.pattern, (1, 1)),
            (rule.condition, (1, 1)),
            (rule.rewrite, (1, 1)),
        ],
    )
    .map_err(|(m, (l, c))| format!("rule {}: {l}:{c}: {m}", rule.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_rule_parses_and_has_instances() {
        for r in crate::peeps::rules() {
            let s = table_spec(r).unwrap_or_else(|e| panic!("{e}"));
            assert!(!s.instances.is_empty(), "{}", r.name);
        }
    }

    #[test]
    fn families_instantiate_per_opcode_and_type() {
        let spec = |p, c, w| parse_rule("t", [(p, (1, 1)), (c, (1, 1)), (w, (1, 1))]).unwrap();
        assert_eq!(spec("(op #a #b)", "true", "(op #a #b)").instances.len(), 21);
        // eq and ne take references too; sle only integers.
        assert_eq!(spec("(eq|sle ?x ?x)", "true", "1").instances.len(), 3);
        // Only the commutative operations survive the static condition.
        assert_eq!(
            spec("(op #c ?x)", "(commutative op)", "(op ?x #c)")
                .instances
                .len(),
            7
        );
        let pos = (1, 1);
        assert!(parse_rule("t", [("(frob ?x)", pos), ("true", pos), ("?x", pos)]).is_err());
        assert!(parse_rule("t", [("(add ?x)", pos), ("true", pos), ("?x", pos)]).is_err());
        assert!(parse_rule(
            "t",
            [
                ("(sgt|sge ?a ?b)", pos),
                ("true", pos),
                ("(slt ?b ?a)", pos)
            ]
        )
        .is_ok());
        assert!(parse_rule(
            "t",
            [
                ("(sgt|sge ?a ?b)", pos),
                ("true", pos),
                ("(slt|sle|ult ?b ?a)", pos)
            ]
        )
        .is_err());
    }
}
