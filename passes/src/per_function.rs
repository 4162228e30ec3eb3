//! Running a function-level transformation over every function of a module.

use ir::{Function, Module};

/// Run `f` on each function in turn, with the function taken out of `module`
/// (its slot holds an empty placeholder meanwhile) so that `f` can edit it while
/// reading the module's declarations. Returns whether any call reported a change.
pub fn each_function_detached(
    module: &mut Module,
    mut f: impl FnMut(&Module, &mut Function) -> bool,
) -> bool {
    let mut changed = false;
    for i in 0..module.funcs.len() {
        let mut func = std::mem::replace(&mut module.funcs[i], Function::new("", None));
        changed |= f(module, &mut func);
        module.funcs[i] = func;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_is_visited_detached_and_put_back() {
        let text =
            "func @a() -> i64 {\nentry:\n  ret 1\n}\nfunc @b() -> i64 {\nentry:\n  ret 2\n}\n";
        let mut m = ir::parse_module(text, "t.ir").unwrap().0;
        let before = m.clone();
        let mut seen = Vec::new();
        let changed = each_function_detached(&mut m, |module, func| {
            // The function's own slot is the placeholder while it is out.
            assert!(module.funcs.iter().all(|g| g.name != func.name));
            seen.push(func.name.clone());
            func.name == "b"
        });
        assert!(changed);
        assert_eq!(seen, ["a", "b"]);
        assert_eq!(m, before);
    }
}
