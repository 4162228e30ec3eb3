//! Types of the IR (IR.md §2): `i64`, nullable object references and nullable array references.

use crate::entities::{ArrayDims, StructId};

/// The innermost element of a type, below any array brackets.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Base {
    /// 64-bit integer (also booleans).
    I64,
    /// A reference to an object of a declared type.
    Struct(StructId),
    /// The type of the `null` literal: compatible with every reference type.
    Null,
}

/// A type: a [`Base`] wrapped in `dims` array brackets. `Copy`, canonical, no interning.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Type {
    /// The innermost element type.
    pub base: Base,
    /// How many array brackets wrap it (`[[i64]]` has 2).
    pub dims: ArrayDims,
}

impl Type {
    /// `i64`.
    pub const I64: Type = Type {
        base: Base::I64,
        dims: 0,
    };
    /// The type of the `null` literal.
    pub const NULL: Type = Type {
        base: Base::Null,
        dims: 0,
    };

    /// A reference to an object of type `s`.
    pub fn object(s: StructId) -> Type {
        Type {
            base: Base::Struct(s),
            dims: 0,
        }
    }

    /// The array type whose elements have type `self` (`E` → `[E]`).
    pub fn array_of(self) -> Type {
        Type {
            base: self.base,
            dims: self.dims + 1,
        }
    }

    /// For an array type `[E]`, the element type `E`.
    pub fn elem(self) -> Option<Type> {
        if self.dims > 0 && self.base != Base::Null {
            Some(Type {
                base: self.base,
                dims: self.dims - 1,
            })
        } else {
            None
        }
    }

    /// True for `i64`.
    pub fn is_int(self) -> bool {
        self == Type::I64
    }

    /// True for every reference type (objects, arrays, and the null literal's type).
    pub fn is_ref(self) -> bool {
        !self.is_int()
    }

    /// True for an array reference type.
    pub fn is_array(self) -> bool {
        self.dims > 0 && self.base != Base::Null
    }

    /// The struct this is a reference to, when it is a plain object reference.
    pub fn as_struct(self) -> Option<StructId> {
        match (self.base, self.dims) {
            (Base::Struct(s), 0) => Some(s),
            _ => None,
        }
    }

    /// Whether a value of type `self` may be used where `expected` is required
    /// (equal types, or `null` where any reference is expected).
    pub fn fits(self, expected: Type) -> bool {
        self == expected || (self == Type::NULL && expected.is_ref())
    }
}
