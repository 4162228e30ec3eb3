//! Test helpers shared by the cfg_*, verify_* and effects_* tests: a sample
//! module and a thin layer over `ir::FunctionBuilder` with blocks and values
//! looked up by name, so tests read like the IR text they stand for.
#![allow(dead_code)]

use ir::verify::{verify_function, VerifyError};
use ir::{
    Block, Extern, ExternEffects, ExternId, FieldRef, FuncId, Function, FunctionBuilder, GlobalId,
    Module, StructId, Type, Value,
};
use std::ops::{Deref, DerefMut};

/// The declarations of the sample module (IR.md §1).
pub struct Sample {
    pub m: Module,
    pub point: StructId,
    pub node: StructId,
    pub px: FieldRef,
    pub py: FieldRef,
    pub val: FieldRef,
    pub next: FieldRef,
    pub count: GlobalId,
    pub head: GlobalId,
    pub mystery: ExternId,
    pub length: ExternId,
}

/// `type Point {x, y}`, `type Node {val, next: Node}`, `@count: i64`, `@head: Node`,
/// `extern @mystery(i64, Point) -> i64`, `extern @length(Point) -> i64 reads(Point.x)`.
pub fn sample() -> Sample {
    let mut m = Module::new();
    let point = m.add_struct("Point", vec![("x", Type::I64), ("y", Type::I64)]);
    let node = m.add_struct("Node", vec![("val", Type::I64)]);
    m.structs[node.index()].fields.push(ir::FieldDecl {
        name: "next".into(),
        ty: Type::object(node),
    });
    let count = m.add_global("count", Type::I64);
    let head = m.add_global("head", Type::object(node));
    let mystery = m.add_extern(Extern {
        name: "mystery".into(),
        params: vec![Type::I64, Type::object(point)],
        ret: Some(Type::I64),
        effects: None,
    });
    let px = FieldRef {
        ty: point,
        index: 0,
    };
    let length = m.add_extern(Extern {
        name: "length".into(),
        params: vec![Type::object(point)],
        ret: Some(Type::I64),
        effects: Some(ExternEffects {
            reads: vec![ir::EffectLoc::Field(px)],
            writes: vec![],
        }),
    });
    Sample {
        m,
        point,
        node,
        px,
        py: FieldRef {
            ty: point,
            index: 1,
        },
        val: FieldRef { ty: node, index: 0 },
        next: FieldRef { ty: node, index: 1 },
        count,
        head,
        mystery,
        length,
    }
}

/// A `FunctionBuilder` with blocks created on first mention by label.
pub struct Fb<'m> {
    pub b: FunctionBuilder<'m>,
}

impl<'m> Fb<'m> {
    /// Start `@name` returning `ret`.
    pub fn new(m: &'m Module, name: &str, ret: Option<Type>) -> Self {
        Fb {
            b: FunctionBuilder::new(m, name, ret),
        }
    }

    /// The block labelled `name`, created (appended to the layout) on first mention.
    pub fn label(&mut self, name: &str) -> Block {
        if let Some(i) = self.b.func.blocks.iter().position(|d| d.name == name) {
            return Block::new(i);
        }
        self.b.create_block(name)
    }

    /// Continue appending to block `name` (creating it if needed).
    pub fn at(&mut self, name: &str) -> Block {
        let b = self.label(name);
        self.b.switch_to(b);
        b
    }

    /// Give `v` the source name `name` (so messages say `%name`).
    pub fn named(&mut self, v: Value, name: &str) -> Value {
        self.b.func.set_value_name(v, name);
        v
    }

    /// The integer constant `c`.
    pub fn c(&mut self, c: i64) -> Value {
        self.b.iconst(c)
    }

    /// The function built so far.
    pub fn finish(self) -> Function {
        self.b.finish()
    }
}

impl<'m> Deref for Fb<'m> {
    type Target = FunctionBuilder<'m>;
    fn deref(&self) -> &Self::Target {
        &self.b
    }
}

impl DerefMut for Fb<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.b
    }
}

/// The block labelled `name` in `f`.
pub fn blk(f: &Function, name: &str) -> Block {
    Block::new(
        f.blocks
            .iter()
            .position(|d| d.name == name)
            .unwrap_or_else(|| panic!("no block {name}")),
    )
}

/// The value with source name `name` in `f`.
pub fn val(f: &Function, name: &str) -> Value {
    f.value_named(name)
        .unwrap_or_else(|| panic!("no value %{name}"))
}

/// Add `f` to a copy of `m` and verify it.
pub fn verify_in(m: &Module, f: Function) -> Result<(), Vec<VerifyError>> {
    let mut m = m.clone();
    let id = m.add_func(f);
    verify_function(&m, id)
}

/// Verify and return the error messages (empty when well-formed).
pub fn messages(m: &Module, f: Function) -> Vec<String> {
    match verify_in(m, f) {
        Ok(()) => Vec::new(),
        Err(es) => es.iter().map(|e| e.to_string()).collect(),
    }
}

/// Assert the function verifies.
pub fn assert_ok(m: &Module, f: Function) {
    let ms = messages(m, f);
    assert!(ms.is_empty(), "expected no errors, got:\n{}", ms.join("\n"));
}

/// Assert the verifier reports an error whose text contains `needle`.
pub fn assert_err(m: &Module, f: Function, needle: &str) {
    let ms = messages(m, f);
    assert!(
        ms.iter().any(|e| e.contains(needle)),
        "expected an error containing {needle:?}, got:\n{}",
        ms.join("\n")
    );
}

/// A function made only of control flow: `shape(&[("entry", &["a", "b"]), ...])`
/// gives each block a terminator with those successors (none → `ret`, one →
/// `jmp`, two → `br %c`). The first block is the entry.
pub fn shape(edges: &[(&str, &[&str])]) -> (Module, Function) {
    let m = Module::new();
    let f = {
        let mut fb = Fb::new(&m, "shape", None);
        for (name, _) in edges {
            fb.label(name);
        }
        let c = fb.param("c", Type::I64);
        for (name, succs) in edges {
            fb.at(name);
            match succs {
                [] => {
                    fb.ret(None);
                }
                [t] => {
                    let t = fb.label(t);
                    fb.jmp(t);
                }
                [t, e] => {
                    let (t, e) = (fb.label(t), fb.label(e));
                    fb.br(c, t, e);
                }
                _ => panic!("at most two successors"),
            }
        }
        fb.finish()
    };
    (m, f)
}

/// The function id a module gets for its next function.
pub fn next_id(m: &Module) -> FuncId {
    FuncId::new(m.funcs.len())
}
