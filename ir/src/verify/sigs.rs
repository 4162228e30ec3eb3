//! A dense table of the module's function signatures, for checking calls
//! while a module is parsed: a call reads its callee's parameter types from
//! one module-wide vector instead of reaching into the callee's own arrays
//! (in a module of many functions, memory far from the caller's).

use crate::entities::FuncId;
use crate::module::Module;
use crate::types::Type;

/// Parameter and return types of every function of a module, by [`FuncId`].
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
    /// The signatures of `m`'s functions, each as the verifier reads it in
    /// place (a parameter whose value is missing counts as `i64`).
    pub fn of(m: &Module) -> FuncSigs {
        let mut sigs = FuncSigs {
            starts: Vec::with_capacity(m.funcs.len() + 1),
            params: Vec::new(),
            rets: Vec::with_capacity(m.funcs.len()),
        };
        for f in &m.funcs {
            sigs.starts.push(sigs.params.len() as u32);
            sigs.params.extend(
                f.params
                    .iter()
                    .map(|p| f.values.get(p.index()).map_or(Type::I64, |d| d.ty)),
            );
            sigs.rets.push(f.ret);
        }
        sigs.starts.push(sigs.params.len() as u32);
        sigs
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
}
