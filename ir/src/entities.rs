//! Typed indices into the arenas of a module and a function.

macro_rules! entity {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            /// The index this entity has in its arena.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
            /// The entity with arena index `i`.
            #[inline]
            pub fn new(i: usize) -> Self {
                Self(i as u32)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

entity!(
    /// A declared object type (`type Point { ... }`) in [`crate::Module::structs`].
    StructId,
    "struct"
);
entity!(
    /// A global in [`crate::Module::globals`].
    GlobalId,
    "global"
);
entity!(
    /// An extern declaration in [`crate::Module::externs`].
    ExternId,
    "extern"
);
entity!(
    /// A function in [`crate::Module::funcs`].
    FuncId,
    "func"
);
entity!(
    /// A basic block of a function ([`crate::Function::blocks`]).
    Block,
    "block"
);
entity!(
    /// An instruction of a function ([`crate::Function::insts`]), phis and terminators included.
    Inst,
    "inst"
);
entity!(
    /// An SSA value: a parameter, an instruction result, or a constant.
    Value,
    "v"
);

/// Array nesting depth of a type: 0 for `i64`/`T`, 1 for `[i64]`, 2 for `[[T]]`, …
pub type ArrayDims = u8;
