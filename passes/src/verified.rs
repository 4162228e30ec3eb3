//! Verification that skips what the verifier already accepted.
//!
//! The verdict on a function depends only on its own code and on the
//! module's declarations (types, globals, externs, every function's name and
//! signature): a function whose code fingerprint ([`ir::Function::fingerprint`])
//! and declarations fingerprint ([`Module::decls_fingerprint`]) are those of a
//! function the verifier accepted is accepted again, so only the others are
//! checked, and the result is that of checking the whole module. The pass
//! manager verifies this way after every pass; [`verify_and_remember`] seeds
//! it for the pass manager runs that follow on the same thread. The oracle
//! instead checks each original program with [`verify_kept`] and optimizes
//! copies with [`crate::PassManager::run_verified`], which needs no prints.

use ir::verify::{verify_declarations, verify_function_with_cfg, VerifyError};
use ir::{FuncId, Module};
use std::cell::RefCell;

/// What the verifier accepted: a module's declarations fingerprint and the
/// fingerprint of each of its functions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accepted {
    decls: u64,
    funcs: Vec<u64>,
}

thread_local! {
    /// The module [`verify_and_remember`] last accepted on this thread.
    static REMEMBERED: RefCell<Option<Accepted>> = const { RefCell::new(None) };
}

/// Put the fingerprint of every function of `m` into `out` (cleared first).
pub fn function_prints(m: &Module, out: &mut Vec<u64>) {
    out.clear();
    out.extend(m.funcs.iter().map(ir::Function::fingerprint));
}

impl Accepted {
    /// The module [`verify_and_remember`] last accepted on this thread.
    pub fn remembered() -> Option<Accepted> {
        REMEMBERED.with(|r| r.borrow().clone())
    }

    /// What a caller vouches the verifier accepted: declarations and
    /// functions with the identities `decls` and `funcs` (fingerprints, or
    /// tokens that stand for them within one pass manager run).
    pub(crate) fn assumed(decls: u64, funcs: &[u64]) -> Accepted {
        Accepted {
            decls,
            funcs: funcs.to_vec(),
        }
    }

    /// Check `m`, whose functions have the fingerprints `funcs`, given that
    /// `before` (when known) was accepted: with the same declarations, only
    /// the functions whose fingerprint differs are checked; otherwise the
    /// whole module. Returns what is now accepted.
    pub fn verify(
        before: Option<Accepted>,
        m: &Module,
        funcs: &[u64],
    ) -> Result<Accepted, Vec<VerifyError>> {
        Accepted::verify_with_decls(before, m, m.decls_fingerprint(), funcs)
    }

    /// [`Accepted::verify`] for a module whose declarations fingerprint
    /// ([`Module::decls_fingerprint`]) is `decls`, already known.
    pub fn verify_with_decls(
        before: Option<Accepted>,
        m: &Module,
        decls: u64,
        funcs: &[u64],
    ) -> Result<Accepted, Vec<VerifyError>> {
        let same_decls = before
            .as_ref()
            .is_some_and(|b| b.decls == decls && b.funcs.len() == funcs.len());
        let mut accepted = match before {
            Some(b) if same_decls => {
                let mut errors = Vec::new();
                for (i, (&was, &now)) in b.funcs.iter().zip(funcs).enumerate() {
                    if was != now {
                        if let Err(mut e) = verify_with_kept_cfg(m, i) {
                            errors.append(&mut e);
                        }
                    }
                }
                if !errors.is_empty() {
                    return Err(errors);
                }
                b
            }
            _ => {
                verify_kept(m)?;
                Accepted {
                    decls,
                    funcs: Vec::new(),
                }
            }
        };
        accepted.decls = decls;
        accepted.funcs.clear();
        accepted.funcs.extend_from_slice(funcs);
        Ok(accepted)
    }
}

/// Check function `i` of `m` with its CFG as the passes keep it
/// ([`crate::analyses`]): computed once for the verifier and the passes
/// that run on the function next (or found there, when a pass left the
/// branches alone); and with its dominator tree when a pass computed it.
fn verify_with_kept_cfg(m: &Module, i: usize) -> Result<(), Vec<VerifyError>> {
    let f = &m.funcs[i];
    crate::analyses::in_function(i, || {
        crate::analyses::with_analyses(f, |a| {
            verify_function_with_cfg(m, FuncId::new(i), a.cfg(), a.dom_if_computed())
        })
    })
}

/// The verdict of [`ir::verify::verify_module`] on `m` (same errors, same
/// order), each function checked with the CFG the passes keep for it
/// ([`crate::analyses`]), computed here for the passes that run on it next.
/// Nothing is hashed: a caller that then optimizes a copy of `m` with
/// [`crate::PassManager::run_verified`] needs no fingerprints.
pub fn verify_kept(m: &Module) -> Result<(), Vec<VerifyError>> {
    let mut errors = verify_declarations(m);
    for i in 0..m.funcs.len() {
        if let Err(mut e) = verify_with_kept_cfg(m, i) {
            errors.append(&mut e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Verify `m` (the verdict of [`ir::verify::verify_module`]) and, when it is
/// accepted, remember it for the pass manager runs that follow on this thread.
pub fn verify_and_remember(m: &Module) -> Result<(), Vec<VerifyError>> {
    let mut funcs = Vec::new();
    function_prints(m, &mut funcs);
    let before = REMEMBERED.with(|r| r.borrow_mut().take());
    let accepted = Accepted::verify(before, m, &funcs)?;
    REMEMBERED.with(|r| *r.borrow_mut() = Some(accepted));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::verify::verify_module;

    fn parse(text: &str) -> Module {
        ir::parse_module(text, "t.ir").unwrap().0
    }

    const TWO: &str = "type P { x: i64 }\n\
        func @g(%p: P) -> i64 {\nentry:\n  %a = load %p.x\n  ret %a\n}\n\
        func @f(%p: P) -> i64 {\nentry:\n  %b = call @g(%p)\n  ret %b\n}\n";

    fn accept(m: &Module) -> Accepted {
        let mut funcs = Vec::new();
        function_prints(m, &mut funcs);
        Accepted::verify(None, m, &funcs).expect("valid")
    }

    fn check(before: &Accepted, m: &Module) -> Result<Accepted, Vec<VerifyError>> {
        let mut funcs = Vec::new();
        function_prints(m, &mut funcs);
        Accepted::verify(Some(before.clone()), m, &funcs)
    }

    #[test]
    fn a_changed_function_is_checked_again() {
        let m = parse(TWO);
        let before = accept(&m);
        // @f's return now names a value @f does not have.
        let mut broken = m.clone();
        let f = &mut broken.funcs[1];
        let ret = *f.blocks[f.layout[0].index()].insts.last().unwrap();
        f.insts[ret.index()].kind = ir::InstKind::Ret(Some(ir::Value::new(f.values.len() + 3)));
        let errors = check(&before, &broken).expect_err("ill-formed");
        assert!(
            errors.iter().all(|e| e.func == Some(FuncId::new(1))),
            "{errors:?}"
        );
        assert_eq!(errors, verify_module(&broken).unwrap_err());
    }

    #[test]
    fn changed_declarations_check_the_whole_module() {
        let m = parse(TWO);
        let before = accept(&m);
        // No code changes, but `P.x` now holds a `P`: @g's load (an i64)
        // no longer types, and only a whole-module check sees it.
        let mut broken = m.clone();
        broken.structs[0].fields[0].ty = ir::Type::object(ir::StructId::new(0));
        let errors = check(&before, &broken).expect_err("ill-formed");
        assert_eq!(errors, verify_module(&broken).unwrap_err());
    }

    #[test]
    fn what_was_accepted_is_not_checked_again_and_is_remembered() {
        let m = parse(TWO);
        let before = accept(&m);
        let again = check(&before, &m).expect("still valid");
        assert_eq!(again, before);
        verify_and_remember(&m).expect("valid");
        assert_eq!(Accepted::remembered(), Some(before));
        // An ill-formed module is reported and not remembered.
        let mut bad = m.clone();
        bad.structs[0].fields[0].ty = ir::Type::object(ir::StructId::new(0));
        assert!(verify_and_remember(&bad).is_err());
        assert_eq!(Accepted::remembered(), None);
    }
}
