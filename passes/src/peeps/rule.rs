//! What a peephole rule is: a name, its pattern, side condition and
//! replacement written out as data (the rule language of [`super::spec`]:
//! `?x` any value, `#c` any integer constant, integers are literals; proved
//! by `loadstar verify --rules`), and the matcher that implements it. A matcher only looks; it returns a
//! [`Change`] and never edits the function, so the fixed-point check can ask
//! every rule about every instruction without side effects.

use super::cfg_state::CfgState;
use ir::{BinOp, Block, DomTree, Function, Inst, InstKind, Type, UnOp, Value};

/// An operand of a replacement: an existing value or a constant to intern.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Opnd {
    /// An existing SSA value.
    Val(Value),
    /// An integer constant.
    Const(i64),
}

/// The edit a rule asks for.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Change {
    /// Every use of the instruction's result becomes this operand; the instruction goes.
    Replace(Opnd),
    /// The instruction becomes this binary operation (same result value).
    Binary(BinOp, Opnd, Opnd),
    /// The instruction becomes this unary operation (same result value).
    Unary(UnOp, Opnd),
    /// A `br` becomes `jmp target`; `dropped` loses the edge from this block.
    Jump {
        /// Where control now always goes.
        target: Block,
        /// The successor that loses one edge.
        dropped: Block,
    },
    /// The instruction (which has no result) is deleted.
    Remove,
}

/// A peephole rule.
#[derive(Copy, Clone)]
pub struct Rule {
    /// Its name, used in statistics.
    pub name: &'static str,
    /// The instruction shape it matches.
    pub pattern: &'static str,
    /// What must also hold (`true` when nothing).
    pub condition: &'static str,
    /// What the instruction becomes.
    pub rewrite: &'static str,
    /// The implementation: `Some(change)` when the rule applies to `inst`.
    pub matcher: fn(&mut MatchCtx<'_>, Inst) -> Option<Change>,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} => {} if {}",
            self.name, self.pattern, self.rewrite, self.condition
        )
    }
}

/// What a matcher may look at, and where it records distant dependencies.
pub struct MatchCtx<'a> {
    /// The function (read-only while matching).
    pub func: &'a Function,
    /// Where [`MatchCtx::dom`] comes from.
    dom: DomSource<'a>,
    /// `(distant, dependent)` pairs registered by failing matchers.
    pub deps: Vec<(Inst, Inst)>,
    /// The rule being tried (set by the engine).
    pub rule: &'static str,
    /// Test hook: dependencies registered by this rule are dropped.
    pub drop_deps_of: Option<&'static str>,
    current: Option<Inst>,
}

/// A dominator tree given, or one built from a CFG on first use.
#[derive(Copy, Clone)]
enum DomSource<'a> {
    Ready(&'a DomTree),
    Lazy(&'a CfgState),
}

impl<'a> MatchCtx<'a> {
    /// A context over `func` with dominator tree `dom`.
    pub fn new(func: &'a Function, dom: &'a DomTree, drop_deps_of: Option<&'static str>) -> Self {
        Self::with_dom(func, DomSource::Ready(dom), drop_deps_of)
    }

    /// A context whose dominator tree is the one of `cfgs`' snapshot, built
    /// when a rule first asks for it.
    pub(crate) fn with_lazy_dom(
        func: &'a Function,
        cfgs: &'a CfgState,
        drop_deps_of: Option<&'static str>,
    ) -> Self {
        Self::with_dom(func, DomSource::Lazy(cfgs), drop_deps_of)
    }

    fn with_dom(
        func: &'a Function,
        dom: DomSource<'a>,
        drop_deps_of: Option<&'static str>,
    ) -> Self {
        MatchCtx {
            func,
            dom,
            deps: Vec::new(),
            rule: "",
            drop_deps_of,
            current: None,
        }
    }

    /// A dominator tree of the function. It may be stale after edges were
    /// removed, which only makes its answers conservative.
    pub fn dom(&self) -> &'a DomTree {
        match self.dom {
            DomSource::Ready(dom) => dom,
            DomSource::Lazy(cfgs) => cfgs.tree(self.func),
        }
    }

    /// Set the instruction being matched (dependencies are registered for it).
    pub fn set_current(&mut self, inst: Inst) {
        self.current = Some(inst);
    }

    /// The instruction being matched looked at `distant` and failed because of
    /// what it saw there: revisit it when `distant` changes.
    pub fn add_dep(&mut self, distant: Inst) {
        if self.drop_deps_of == Some(self.rule) {
            return;
        }
        if let Some(cur) = self.current {
            if cur != distant {
                self.deps.push((distant, cur));
            }
        }
    }

    /// The kind of instruction `inst`.
    pub fn kind(&self, inst: Inst) -> &'a InstKind {
        &self.func.insts[inst.index()].kind
    }

    /// The constant `v` is, if any.
    pub fn konst(&self, v: Value) -> Option<i64> {
        self.func.as_const(v)
    }

    /// The placed instruction defining `v`, if any.
    pub fn def(&self, v: Value) -> Option<Inst> {
        let d = self.func.def_inst(v)?;
        self.func.insts[d.index()].block.map(|_| d)
    }

    /// The type of `v`.
    pub fn ty(&self, v: Value) -> Type {
        self.func.value_type(v)
    }

    /// The result value of `inst`.
    pub fn result(&self, inst: Inst) -> Option<Value> {
        self.func.insts[inst.index()].result
    }

    /// `Replace(v)` when `v` has exactly the type of `inst`'s result (so every
    /// use keeps its meaning and the printed form still parses), or is the
    /// `null` constant and the result a reference (`null` fits every
    /// reference type: docs/language.md, decisions 14 and 15).
    pub fn replace_by(&self, inst: Inst, v: Value) -> Option<Change> {
        let r = self.result(inst)?;
        self.ty(v)
            .fits(self.ty(r))
            .then_some(Change::Replace(Opnd::Val(v)))
    }

    /// `Replace(c)` for an `i64` result.
    pub fn replace_by_const(&self, inst: Inst, c: i64) -> Option<Change> {
        let r = self.result(inst)?;
        (self.ty(r) == Type::I64).then_some(Change::Replace(Opnd::Const(c)))
    }
}
