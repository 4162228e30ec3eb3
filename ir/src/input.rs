//! Resolved execution inputs (IR.md §7): the initial heap, parameter bindings
//! and global values of one execution. The text form is parsed by
//! [`crate::input_text`]; the program generator builds these directly.

use crate::entities::StructId;
use crate::types::Type;

/// The initial value of a parameter, global, field or element.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum InputValue {
    /// An integer.
    Int(i64),
    /// The null reference.
    Null,
    /// A reference to `InputSpec::objects[i]`.
    Obj(usize),
}

/// One object of the initial heap.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum InputObject {
    /// An object of a declared type with one value per field, in declaration order.
    Struct {
        ty: StructId,
        fields: Vec<InputValue>,
    },
    /// An array with element type `elem` and these elements.
    Array { elem: Type, elems: Vec<InputValue> },
}

/// Everything one execution starts from. Several parameters (and globals, and
/// fields) may name the same object: that is how inputs choose aliasing.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct InputSpec {
    /// The initial heap.
    pub objects: Vec<InputObject>,
    /// One value per parameter of the function, in order.
    pub params: Vec<InputValue>,
    /// One value per global of the module, in declaration order.
    pub globals: Vec<InputValue>,
    /// The names the objects had in the text (`let c = ...`, or the binding
    /// that introduced them), used when printing the spec back; may be empty.
    pub object_names: Vec<Option<String>>,
}
