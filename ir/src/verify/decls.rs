//! Module-level checks: declared types, globals and externs name only existing
//! types, fields and globals, and each name is declared once in its namespace.

use super::typing::valid_type;
use super::VerifyError;
use crate::decl_list::DeclList;
use crate::module::{EffectLoc, Extern, Global, Module, StructDecl};
use crate::types::Type;
use std::cell::RefCell;

/// Declaration lists the checks last accepted on this thread, held here so
/// that they cannot change while they equal a module's.
struct Accepted {
    structs: DeclList<StructDecl>,
    globals: DeclList<Global>,
    externs: DeclList<Extern>,
}

impl Accepted {
    /// Whether `m` declares exactly these types, globals and externs.
    fn matches(&self, m: &Module) -> bool {
        m.structs == self.structs && m.globals == self.globals && m.externs == self.externs
    }
}

thread_local! {
    static ACCEPTED: RefCell<Option<Accepted>> = const { RefCell::new(None) };
}

/// Check the declarations of `m` (not the function bodies). The lists of
/// types, globals and externs are checked once for all modules that share
/// them (generated programs, a module and its optimized copies); the
/// functions' names every time.
pub(super) fn check(m: &Module) -> Vec<VerifyError> {
    let known = ACCEPTED.with(|a| a.borrow().as_ref().is_some_and(|a| a.matches(m)));
    let mut errors = if known { Vec::new() } else { check_lists(m) };
    if !known && errors.is_empty() {
        let accepted = Accepted {
            structs: m.structs.clone(),
            globals: m.globals.clone(),
            externs: m.externs.clone(),
        };
        ACCEPTED.with(|a| *a.borrow_mut() = Some(accepted));
    }
    check_func_names(m, &mut errors);
    errors
}

/// An error of the module's declarations at `location`.
fn decl_error(location: String, message: String) -> VerifyError {
    VerifyError {
        func: None,
        block: None,
        inst: None,
        location,
        message,
    }
}

/// The checks of the types, globals and externs: their types, effects and
/// names (functions aside).
fn check_lists(m: &Module) -> Vec<VerifyError> {
    let mut errors = Vec::new();
    let mut report = |location, message| errors.push(decl_error(location, message));
    let struct_repeats = Repeats::new(m.structs.iter().map(|s| s.name.as_str()));
    for (si, s) in m.structs.iter().enumerate() {
        if struct_repeats.is_repeat(si, || m.structs[..si].iter().any(|o| o.name == s.name)) {
            report(
                format!("type {}", s.name),
                "the type is declared twice".into(),
            );
        }
        let field_repeats = Repeats::new(s.fields.iter().map(|f| f.name.as_str()));
        for (fi, fd) in s.fields.iter().enumerate() {
            if !valid_type(m, fd.ty) || fd.ty == Type::NULL {
                report(
                    format!("type {}, field {}", s.name, fd.name),
                    format!("invalid field type {}", m.type_name(fd.ty)),
                );
            }
            if field_repeats.is_repeat(fi, || s.fields[..fi].iter().any(|o| o.name == fd.name)) {
                report(
                    format!("type {}, field {}", s.name, fd.name),
                    "the field is declared twice".into(),
                );
            }
        }
    }
    for g in &m.globals {
        if !valid_type(m, g.ty) || g.ty == Type::NULL {
            report(
                format!("global @{}", g.name),
                format!("invalid type {}", m.type_name(g.ty)),
            );
        }
    }
    for e in &m.externs {
        let loc = || format!("extern @{}", e.name);
        for &t in e.params.iter().chain(&e.ret) {
            if !valid_type(m, t) || t == Type::NULL {
                report(loc(), format!("invalid type {}", m.type_name(t)));
            }
        }
        if let Some(eff) = &e.effects {
            for l in eff.reads.iter().chain(&eff.writes) {
                let ok = match *l {
                    EffectLoc::Field(f) => m
                        .structs
                        .get(f.ty.index())
                        .is_some_and(|s| (f.index as usize) < s.fields.len()),
                    EffectLoc::Elements(t) => {
                        valid_type(m, t) && t != Type::NULL && t.dims < u8::MAX
                    }
                    EffectLoc::Global(g) => g.index() < m.globals.len(),
                };
                if !ok {
                    report(
                        loc(),
                        format!("declared effect {l:?} names something that does not exist"),
                    );
                }
            }
        }
    }
    // Globals, externs and functions share the `@` namespace.
    let globals = m.globals.iter().map(|g| g.name.as_str());
    let externs = m.externs.iter().map(|e| e.name.as_str());
    let at_repeats = Repeats::new(globals.clone().chain(externs.clone()));
    let ng = m.globals.len();
    for (k, name) in globals.enumerate() {
        if at_repeats.is_repeat(k, || declared_before(m, k, 0, 0, name)) {
            report_twice(&mut report, "global", name);
        }
    }
    for (k, name) in externs.enumerate() {
        if at_repeats.is_repeat(ng + k, || declared_before(m, ng, k, 0, name)) {
            report_twice(&mut report, "extern", name);
        }
    }
    errors
}

/// Report each function whose name a global, an extern or an earlier
/// function already has.
fn check_func_names(m: &Module, errors: &mut Vec<VerifyError>) {
    let mut report = |location, message| errors.push(decl_error(location, message));
    let globals = m.globals.iter().map(|g| g.name.as_str());
    let externs = m.externs.iter().map(|e| e.name.as_str());
    let funcs = m.funcs.iter().map(|f| f.name.as_str());
    let at_repeats = Repeats::new(globals.chain(externs).chain(funcs.clone()));
    let (ng, ne) = (m.globals.len(), m.externs.len());
    for (k, name) in funcs.enumerate() {
        if at_repeats.is_repeat(ng + ne + k, || declared_before(m, ng, ne, k, name)) {
            report_twice(&mut report, "function", name);
        }
    }
}

/// Which names of a list repeat an earlier one. Few names are compared by a
/// scan (no allocation); for many, a hash set marks the repeats once, so that
/// a module of thousands of functions or a type of thousands of fields is
/// checked in linear time.
struct Repeats(Option<Vec<bool>>);

impl Repeats {
    fn new<'a>(names: impl Iterator<Item = &'a str> + Clone) -> Repeats {
        if names.clone().nth(16).is_none() {
            return Repeats(None);
        }
        let mut seen = rustc_hash::FxHashSet::default();
        Repeats(Some(names.map(|n| !seen.insert(n)).collect()))
    }

    /// Whether name `k` repeats an earlier one; `scan` answers by comparing
    /// with the earlier names, for short lists.
    fn is_repeat(&self, k: usize, scan: impl FnOnce() -> bool) -> bool {
        match &self.0 {
            Some(marks) => marks[k],
            None => scan(),
        }
    }
}

/// Whether one of the first `globals` globals, `externs` externs or `funcs`
/// functions is called `name`.
fn declared_before(m: &Module, globals: usize, externs: usize, funcs: usize, name: &str) -> bool {
    m.globals[..globals].iter().any(|g| g.name == name)
        || m.externs[..externs].iter().any(|e| e.name == name)
        || m.funcs[..funcs].iter().any(|f| f.name == name)
}

/// Report a second declaration of `@name` (a `kind`: global, extern or function).
fn report_twice(report: &mut impl FnMut(String, String), kind: &str, name: &str) {
    report(
        format!("{kind} @{name}"),
        "the name @".to_string() + name + " is declared twice",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Twenty functions (over the scan limit, so the hash-set path) with one
    /// name repeated, and a type of twenty fields with one repeated.
    #[test]
    fn repeats_are_found_among_many_declarations() {
        let mut m = Module::new();
        let names: Vec<String> = (0..20).map(|f| format!("f{}", f % 19)).collect();
        let fields: Vec<(&str, Type)> = names.iter().map(|n| (n.as_str(), Type::I64)).collect();
        m.add_struct("T", fields);
        for k in 0..20 {
            let name = format!("g{}", if k == 17 { 3 } else { k });
            m.funcs.push(crate::Function::new(&name, None));
        }
        let errors = check(&m);
        let twice: Vec<&str> = errors.iter().map(|e| e.location.as_str()).collect();
        assert_eq!(twice, ["type T, field f0", "function @g3"], "{errors:?}");
    }

    /// A module sharing the accepted declaration lists still has its
    /// functions' names checked, and a copy whose lists changed is checked
    /// again.
    #[test]
    fn accepted_lists_are_not_trusted_after_a_change() {
        let mut m = Module::new();
        m.add_global("g", Type::I64);
        assert!(check(&m).is_empty());
        let mut named = m.clone();
        named.funcs.push(crate::Function::new("g", None));
        let errors = check(&named);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].location, "function @g");
        let mut changed = m.clone();
        changed.globals[0].ty = Type::NULL;
        assert_eq!(check(&changed).len(), 1);
        assert!(check(&m).is_empty());
    }
}
