//! A dense table of the module's function signatures, for checking calls
//! while a module is parsed: a call reads its callee's parameter types from
//! one module-wide vector instead of reaching into the callee's own arrays
//! (in a module of many functions, memory far from the caller's).

use crate::entities::FuncId;
#[cfg(test)]
use crate::module::Module;
use crate::types::Type;

/// Parameter and return types of every function of a module, by [`FuncId`].
#[derive(Debug, PartialEq)]
pub(crate) struct FuncSigs {
    /// Where each function's parameter types start in `params` (one more
    /// entry than functions: the end of the last).
    starts: Vec<u32>,
    /// The parameter types of every function, one function after the other.
    params: Vec<Type>,
    /// The return type of each function.
    rets: Vec<Option<Type>>,
}

impl FuncSigs {
    /// An empty table with room for `funcs` functions; add each function
    /// with [`FuncSigs::push_param`] then [`FuncSigs::end_func`].
    pub fn with_capacity(funcs: usize) -> FuncSigs {
        let mut starts = Vec::with_capacity(funcs + 1);
        starts.push(0);
        FuncSigs {
            starts,
            params: Vec::with_capacity(2 * funcs),
            rets: Vec::with_capacity(funcs),
        }
    }

    /// The next parameter type of the function being added.
    pub fn push_param(&mut self, ty: Type) {
        self.params.push(ty);
    }

    /// End the function being added, with return type `ret`.
    pub fn end_func(&mut self, ret: Option<Type>) {
        self.rets.push(ret);
        self.starts.push(self.params.len() as u32);
    }

    /// The signatures of `m`'s functions, each as the verifier reads it in
    /// place (a parameter whose value is missing counts as `i64`).
    #[cfg(test)]
    pub fn of(m: &Module) -> FuncSigs {
        let mut sigs = FuncSigs::with_capacity(m.funcs.len());
        for f in &m.funcs {
            for p in &f.params {
                sigs.push_param(f.values.get(p.index()).map_or(Type::I64, |d| d.ty));
            }
            sigs.end_func(f.ret);
        }
        sigs
    }

    /// The return type of `f` (`None` also when `f` is not in the table).
    pub fn ret(&self, f: FuncId) -> Option<Type> {
        self.rets.get(f.index()).copied().flatten()
    }

    /// The parameter types and return type of `f`, if it exists.
    pub fn get(&self, f: FuncId) -> Option<(&[Type], Option<Type>)> {
        let &ret = self.rets.get(f.index())?;
        let (start, end) = (self.starts[f.index()], self.starts[f.index() + 1]);
        Some((&self.params[start as usize..end as usize], ret))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_function_has_its_own_parameters_and_return_type() {
        let src = "type T { a: i64 }\n\
                   func @f(%p: T, %x: i64) -> i64 {\nentry:\n  ret %x\n}\n\
                   func @g() {\nentry:\n  ret\n}\n\
                   func @h(%q: [i64]) -> T {\nentry:\n  ret null\n}\n";
        let (m, _) = crate::parse_module(src, "t").unwrap();
        let sigs = FuncSigs::of(&m);
        let t = Type::I64;
        let s = m.funcs[0].values[m.funcs[0].params[0].index()].ty;
        let arr = m.funcs[2].values[m.funcs[2].params[0].index()].ty;
        assert_eq!(sigs.get(FuncId::new(0)), Some((&[s, t][..], Some(t))));
        assert_eq!(sigs.get(FuncId::new(1)), Some((&[][..], None)));
        assert_eq!(sigs.get(FuncId::new(2)), Some((&[arr][..], Some(s))));
        assert_eq!(sigs.get(FuncId::new(3)), None);
        assert_ne!(s, t);
        assert_ne!(arr, t);
    }

    #[test]
    fn calls_checked_while_parsing_fail_as_after_parsing() {
        // Calls of functions defined later (so still without a body), with
        // too few arguments, an argument of the wrong type, and a result of
        // the wrong type: the table the parser builds gives the errors that
        // reading each callee in the finished module gives.
        let src = "type T { a: i64 }\n\
                   func @main(%p: T, %x: i64) -> i64 {\nentry:\n  %a = call @f(%p)\n  \
                   %b = call @f(%x, %x)\n  %c = call @g(%p)\n  %d = add %c, 1\n  ret %a\n}\n\
                   func @f(%p: T, %x: i64) -> i64 {\nentry:\n  ret %x\n}\n\
                   func @g(%q: T) -> T {\nentry:\n  ret %q\n}\n";
        let (m, _) = crate::parse_module(src, "t").unwrap();
        let after = crate::verify_module(&m).unwrap_err();
        assert!(after.len() >= 3, "{after:?}");
        match crate::parse_verified(src, "t") {
            Err(crate::LoadError::Verify(errors, _)) => assert_eq!(errors, after),
            other => panic!("expected verifier errors, got {:?}", other.map(|_| ())),
        }
    }
}
