//! Call summaries (IR.md §8: a `call @f` reads and writes the World "unless
//! a summary says less"): what a call of each module function may do, read
//! off its body with the one effects table ([`crate::effects`]).
//!
//! A function's summary joins the effects of its instructions and the
//! summaries of the functions it calls. Calls that form a cycle (a
//! recursive function, or mutually recursive ones: a strongly connected
//! component of the call graph, found by Tarjan's algorithm) share one
//! summary, the join of the whole component: that is the least fixed point,
//! since each of them may run the others' instructions. Each component is
//! summarized once, after the components it calls, so the work is linear
//! in the size of the module.
//!
//! A function that may loop (an edge to a block not later in the layout,
//! so possibly a cycle) or recurse may not end; running out of fuel or of
//! frames makes an input inconclusive (IR.md §7), like a resource limit,
//! so its summary says it traps at least [`Traps::ResourceOnly`]
//! (docs/language.md, decision 22). A function with no `ret` never returns
//! to its caller. Sets of more than [`MAX_NODES`] heap nodes are widened to
//! the groups above them (`Fields`, `Elements`, `Globals`), which only
//! over-approximates. Summaries are computed only for functions some
//! function calls (and what those call).
//!
//! A summary also says what a call returns when every `ret` of the callee
//! returns the same thing ([`Returns`]): one integer constant, `null`, or
//! one of its parameters unchanged (looked at through `copy`). It is read
//! off the `ret`s alone, never assuming anything of a callee (a recursive
//! call's result is not known), so recursion needs no fixed point. And it
//! says which parameters the body never uses: what a call passes there
//! cannot matter.

use crate::effects::{inst_effects, Effects, HeapNode, HeapSet, Traps};
use crate::entities::FuncId;
use crate::entities::Value;
use crate::function::ValueDef;
use crate::inst::{Callee, InstKind, UnOp};
use crate::module::Module;

/// The most heap nodes a summary's reads (or writes) list before they are
/// widened to the groups above them.
pub const MAX_NODES: usize = 12;

/// The summaries of a module's functions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summaries {
    /// Per function: `None` when nobody calls it (not computed).
    of: Vec<Option<Summary>>,
    /// Whether some summary knows what its function returns, or of a
    /// parameter it never uses.
    any_call_facts: bool,
}

/// What a function returns whenever it returns: the same on every `ret`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Returns {
    /// This integer constant.
    Const(i64),
    /// The `null` reference.
    Null,
    /// Its parameter at this position, unchanged.
    Param(usize),
}

/// What the `ret`s of a function seen so far return.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum RetsSeen {
    /// No `ret` yet.
    None,
    /// Each the same.
    Same(Returns),
    /// Not all the same, or one not known.
    Varies,
}

impl RetsSeen {
    /// What the `ret`s return once a `ret` of `r` (`None`: not known) is seen.
    fn and(self, r: Option<Returns>) -> RetsSeen {
        match (self, r) {
            (RetsSeen::None, Some(r)) => RetsSeen::Same(r),
            (RetsSeen::Same(a), Some(r)) if a == r => self,
            _ => RetsSeen::Varies,
        }
    }

    /// The one thing every `ret` returns, if there is one.
    fn known(self) -> Option<Returns> {
        match self {
            RetsSeen::Same(r) => Some(r),
            _ => None,
        }
    }
}

/// What a call of one function may do.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Summary {
    /// The join of its instructions' effects and its callees' summaries.
    effects: Effects,
    /// Whether it has no `ret`: a call of it never comes back.
    never_returns: bool,
    /// What every `ret` of it returns, when that is one thing.
    returns: Option<Returns>,
    /// Bit `k` set: its parameter `k` (of the first 64) is never used.
    unused_params: u64,
}

/// What a function's body does by itself, before its callees are joined in.
struct Local {
    /// The join of its instructions' effects, calls of module functions aside.
    effects: Effects,
    /// The module functions it calls (maybe repeated).
    callees: Vec<FuncId>,
    /// Whether it has no `ret`.
    never_returns: bool,
    /// What its `ret`s return.
    rets: RetsSeen,
    /// Bit `k` set: no instruction uses parameter `k` (of the first 64).
    unused_params: u64,
    /// Whether it may loop (a jump back in the layout).
    loops: bool,
}

/// Not yet visited by the component search.
const UNVISITED: u32 = u32::MAX;

impl Summaries {
    /// The summaries of the functions module `m` calls (none when it has a
    /// single function, which can only call itself).
    pub fn of(m: &Module) -> Summaries {
        let n = m.funcs.len();
        if n < 2 {
            return Summaries::default();
        }
        // The search starts only at a call (most modules have none).
        let mut search: Option<Components> = None;
        for f in &m.funcs {
            for data in &f.insts {
                if let (
                    Some(_),
                    InstKind::Call {
                        callee: Callee::Func(g),
                        ..
                    },
                ) = (data.block, &data.kind)
                {
                    if g.index() < n {
                        let search = search.get_or_insert_with(|| Components::new(n));
                        search.run(m, g.index());
                    }
                }
            }
        }
        search.map_or_else(Summaries::default, |s| {
            let any_call_facts = s
                .done
                .iter()
                .flatten()
                .any(|s| s.returns.is_some() || s.unused_params != 0);
            Summaries {
                of: s.done,
                any_call_facts,
            }
        })
    }

    /// What every call of `callee` that returns returns, when its summary
    /// knows ([`Returns`]); `None` for a function without a summary.
    pub fn returns(&self, callee: FuncId) -> Option<Returns> {
        self.of.get(callee.index())?.as_ref()?.returns
    }

    /// The parameters of `callee` its body never uses (bit `k` for
    /// parameter `k`, of the first 64); 0 for a function without a summary.
    pub fn unused_params(&self, callee: FuncId) -> u64 {
        match self.of.get(callee.index()) {
            Some(Some(s)) => s.unused_params,
            _ => 0,
        }
    }

    /// Whether some summary knows what its function returns
    /// ([`Summaries::returns`]) or of a parameter it never uses
    /// ([`Summaries::unused_params`]).
    pub fn any_call_facts(&self) -> bool {
        self.any_call_facts
    }

    /// What a call of `callee` may do: its summary, or
    /// [`Effects::world`] when there is none.
    pub fn call_effects(&self, callee: FuncId) -> Effects {
        match self.of.get(callee.index()) {
            Some(Some(s)) => s.effects.clone(),
            _ => Effects::world(),
        }
    }

    /// Whether `kind` is a call of a module function that never returns (it
    /// has no `ret`: it traps, or runs forever, on every path).
    pub fn never_returns(&self, kind: &InstKind) -> bool {
        match *kind {
            InstKind::Call {
                callee: Callee::Func(g),
                ..
            } => matches!(self.of.get(g.index()), Some(Some(s)) if s.never_returns),
            _ => false,
        }
    }

    /// The effects of instruction `inst` of `f` (a function of `m`), with a
    /// call of a module function summarized.
    #[inline]
    pub fn inst_effects(&self, m: &Module, f: &crate::Function, inst: crate::Inst) -> Effects {
        summarized_effects(m, f, inst, || self)
    }

    /// Whether the call at `inst` of `f` is of a module function whose
    /// summary says less than [`Effects::world`] (for statistics).
    pub fn is_summarized_call(&self, f: &crate::Function, inst: crate::Inst) -> bool {
        match f.insts.get(inst.index()).map(|d| &d.kind) {
            Some(InstKind::Call {
                callee: Callee::Func(g),
                ..
            }) => matches!(self.of.get(g.index()), Some(Some(s)) if s.effects != Effects::world()),
            _ => false,
        }
    }
}

/// The effects of instruction `inst` of `f` (a function of `m`), a call of
/// a module function's from the summaries `calls` gives (asked only then).
#[inline]
pub fn summarized_effects<'s>(
    m: &Module,
    f: &crate::Function,
    inst: crate::Inst,
    calls: impl FnOnce() -> &'s Summaries,
) -> Effects {
    match f.insts.get(inst.index()).map(|d| &d.kind) {
        Some(InstKind::Call {
            callee: Callee::Func(g),
            ..
        }) => calls().call_effects(*g),
        _ => inst_effects(m, f, inst),
    }
}

/// Tarjan's strongly connected components of the call graph, iteratively
/// (a chain of calls can be as long as the module), each component
/// summarized as it completes.
struct Components {
    /// Per function: its visit number, or [`UNVISITED`].
    index: Vec<u32>,
    /// Per function: the lowest visit number it reaches on the stack.
    low: Vec<u32>,
    on_stack: Vec<bool>,
    /// The functions of components not yet complete.
    stack: Vec<usize>,
    /// What each visited function's body does by itself.
    local: Vec<Option<Local>>,
    /// The summaries of completed components.
    done: Vec<Option<Summary>>,
    /// Per visited function on the path: the next of its callees to look at.
    path: Vec<(usize, usize)>,
    next: u32,
    /// Block positions in the layout (storage reused between functions).
    pos: Vec<usize>,
}

impl Components {
    fn new(n: usize) -> Components {
        Components {
            index: vec![UNVISITED; n],
            low: vec![UNVISITED; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            local: (0..n).map(|_| None).collect(),
            done: (0..n).map(|_| None).collect(),
            path: Vec::new(),
            next: 0,
            pos: Vec::new(),
        }
    }

    /// Summarize `root` and every function it calls, directly or not.
    fn run(&mut self, m: &Module, root: usize) {
        if self.index[root] != UNVISITED {
            return;
        }
        self.visit(m, root);
        while let Some(&mut (v, ref mut k)) = self.path.last_mut() {
            let callees = &self.local[v].as_ref().expect("visited").callees;
            if let Some(&w) = callees.get(*k) {
                *k += 1;
                let w = w.index();
                if self.index[w] == UNVISITED {
                    self.visit(m, w);
                } else if self.on_stack[w] {
                    self.low[v] = self.low[v].min(self.index[w]);
                }
                continue;
            }
            self.path.pop();
            if self.low[v] == self.index[v] {
                self.complete(v);
            }
            if let Some(&(parent, _)) = self.path.last() {
                self.low[parent] = self.low[parent].min(self.low[v]);
            }
        }
    }

    /// Enter function `v`: number it and read its body.
    fn visit(&mut self, m: &Module, v: usize) {
        self.index[v] = self.next;
        self.low[v] = self.next;
        self.next += 1;
        self.on_stack[v] = true;
        self.stack.push(v);
        self.path.push((v, 0));
        let mut local = local_of(m, FuncId::new(v), &mut self.pos);
        // A callee outside the module is unknown code.
        let n = self.index.len();
        if local.callees.iter().any(|g| g.index() >= n) {
            local.callees.retain(|g| g.index() < n);
            join(&mut local.effects, &Effects::world());
        }
        self.local[v] = Some(local);
    }

    /// `v` is the root of a component: summarize its functions together.
    fn complete(&mut self, v: usize) {
        let at = self
            .stack
            .iter()
            .rposition(|&w| w == v)
            .expect("on the stack");
        let members: Vec<usize> = self.stack.drain(at..).collect();
        for &w in &members {
            self.on_stack[w] = false;
        }
        let mut effects = Effects::none();
        let mut may_not_end = members.len() > 1;
        for &w in &members {
            let local = self.local[w].as_ref().expect("visited");
            join(&mut effects, &local.effects);
            may_not_end |= local.loops;
            for g in &local.callees {
                match &self.done[g.index()] {
                    Some(s) => join(&mut effects, &s.effects),
                    // Only a member of this component is not done yet.
                    None => may_not_end = true,
                }
            }
        }
        if may_not_end {
            effects.traps = effects.traps.max(Traps::ResourceOnly);
        }
        for &w in &members {
            let local = self.local[w].take().expect("visited");
            self.done[w] = Some(Summary {
                effects: effects.clone(),
                never_returns: local.never_returns,
                returns: local.rets.known(),
                unused_params: local.unused_params,
            });
        }
    }
}

/// What function `g`'s body does by itself; `pos` is storage for block
/// positions.
fn local_of(m: &Module, g: FuncId, pos: &mut Vec<usize>) -> Local {
    let f = &m.funcs[g.index()];
    pos.clear();
    pos.resize(f.blocks.len(), usize::MAX);
    for (k, b) in f.layout.iter().enumerate() {
        pos[b.index()] = k;
    }
    let mut local = Local {
        effects: Effects::none(),
        callees: Vec::new(),
        never_returns: true,
        rets: RetsSeen::None,
        unused_params: all_params(f.params.len()),
        loops: false,
    };
    for (k, &b) in f.layout.iter().enumerate() {
        for &i in &f.blocks[b.index()].insts {
            let kind = &f.insts[i.index()].kind;
            match *kind {
                InstKind::Call {
                    callee: Callee::Func(h),
                    ..
                } => local.callees.push(h),
                _ => join(&mut local.effects, &inst_effects(m, f, i)),
            }
            kind.for_each_operand(|v| {
                if let ValueDef::Param(k) = f.value_def(v) {
                    local.unused_params &= !(1u64.checked_shl(k).unwrap_or(0));
                }
            });
            if let InstKind::Ret(v) = *kind {
                local.never_returns = false;
                local.rets = local.rets.and(v.and_then(|v| returned(f, v)));
            }
            // A jump back (or out of the layout) may close a loop.
            if kind
                .successors()
                .any(|s| pos.get(s.index()).is_none_or(|&p| p <= k))
            {
                local.loops = true;
            }
        }
    }
    local
}

/// The bits of the first `n` parameters (of at most 64).
fn all_params(n: usize) -> u64 {
    match n {
        0 => 0,
        1..=63 => (1u64 << n) - 1,
        _ => u64::MAX,
    }
}

/// What value `v` of `f` is, when it is a constant, `null` or a parameter,
/// looked at through `copy` instructions.
fn returned(f: &crate::Function, mut v: Value) -> Option<Returns> {
    // A chain of copies is at most as long as the function (a cycle, only
    // possible in unreachable code, stops there).
    for _ in 0..=f.insts.len() {
        match f.value_def(v) {
            ValueDef::Const(c) => return Some(Returns::Const(c)),
            ValueDef::Null => return Some(Returns::Null),
            ValueDef::Param(k) => return Some(Returns::Param(k as usize)),
            ValueDef::Inst(i) => match f.insts[i.index()].kind {
                InstKind::Unary(UnOp::Copy, x) => v = x,
                _ => return None,
            },
        }
    }
    None
}

/// `into` becomes the join of itself and `e`.
fn join(into: &mut Effects, e: &Effects) {
    join_nodes(&mut into.reads, &e.reads);
    join_nodes(&mut into.writes, &e.writes);
    into.traps = into.traps.max(e.traps);
    into.allocates |= e.allocates;
}

/// `into` becomes the union of itself and `nodes`, widened past [`MAX_NODES`].
fn join_nodes(into: &mut HeapSet, nodes: &[HeapNode]) {
    for &n in nodes {
        if into.iter().any(|&x| x.contains(n)) {
            continue;
        }
        into.retain(|x| !n.contains(*x));
        into.push(n);
    }
    if into.len() > MAX_NODES {
        let leaves = std::mem::take(into);
        for n in leaves {
            let group = match n {
                HeapNode::Field(_) | HeapNode::Element(_) | HeapNode::Global(_) => {
                    n.parent().unwrap_or(n)
                }
                _ => n,
            };
            join_nodes(into, &[group]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effects::Traps;

    fn summaries(text: &str) -> (Module, Summaries) {
        let (m, _) = crate::parse::parse_module(text, "t.ir").unwrap();
        let s = Summaries::of(&m);
        (m, s)
    }

    fn id(m: &Module, name: &str) -> FuncId {
        FuncId::new(m.funcs.iter().position(|f| f.name == name).unwrap())
    }

    #[test]
    fn a_function_of_pure_instructions_has_no_effects() {
        let (m, s) = summaries(
            "global @g: i64\n\
             func @h(%x: i64) -> i64 {\nentry:\n  %y = add %x, 1\n  %z = load @g\n  br %y, a, b\na:\n  ret %z\nb:\n  ret 0\n}\n\
             func @main() -> i64 {\nentry:\n  %r = call @h(1)\n  ret 0\n}\n",
        );
        let e = s.call_effects(id(&m, "h"));
        assert_eq!(e.traps, Traps::Never);
        assert!(e.writes_nothing() && e.removable_if_unused());
        assert!(!e.reads_nothing());
    }

    #[test]
    fn traps_and_writes_are_kept_loops_and_recursion_only_may_not_end() {
        let (m, s) = summaries(
            "type Node { next: Node }\n\
             func @lp(%x: i64) -> i64 {\nentry:\n  jmp h\nh:\n  br %x, h, out\nout:\n  ret 0\n}\n\
             func @rec(%x: i64) -> i64 {\nentry:\n  %r = call @rec(%x)\n  ret 0\n}\n\
             func @ld(%p: Node) -> i64 {\nentry:\n  %n = load %p.next\n  ret 0\n}\n\
             func @st(%p: Node) -> i64 {\nentry:\n  %n = new Node\n  store %n.next, %p\n  escape %n\n  ret 0\n}\n\
             func @main(%p: Node) -> i64 {\nentry:\n  %a = call @lp(1)\n  %b = call @rec(1)\n  %c = call @ld(%p)\n  %d = call @st(%p)\n  ret 0\n}\n",
        );
        for f in ["ld", "st"] {
            assert!(!s.call_effects(id(&m, f)).removable_if_unused(), "{f}");
        }
        // Not ending is a resource limit (IR.md §7: inconclusive).
        for f in ["lp", "rec"] {
            let e = s.call_effects(id(&m, f));
            assert_eq!(e.traps, Traps::ResourceOnly, "{f}");
            assert!(e.writes_nothing() && e.removable_if_unused(), "{f}");
        }
        // Not called: no summary.
        assert_eq!(s.call_effects(id(&m, "main")), Effects::world());
    }

    #[test]
    fn mutually_recursive_functions_share_the_join_of_their_bodies() {
        let (m, s) = summaries(
            "type T { a: i64, b: i64 }\nglobal @g: i64\n\
             func @even(%p: T, %n: i64) -> i64 {\nentry:\n  %x = load %p.a\n  br %n, o, z\no:\n  %r = call @odd(%p, %n)\n  ret %r\nz:\n  ret %x\n}\n\
             func @odd(%p: T, %n: i64) -> i64 {\nentry:\n  %m = sub %n, 1\n  %r = call @even(%p, %m)\n  %k = call @leaf()\n  ret %r\n}\n\
             func @leaf() -> i64 {\nentry:\n  store @g, 1\n  ret 0\n}\n\
             func @main(%p: T) -> i64 {\nentry:\n  %r = call @even(%p, 3)\n  ret %r\n}\n",
        );
        let (even, odd) = (
            s.call_effects(id(&m, "even")),
            s.call_effects(id(&m, "odd")),
        );
        assert_eq!(even, odd);
        let a = HeapNode::Field(crate::inst::FieldRef {
            ty: crate::entities::StructId::new(0),
            index: 0,
        });
        let g = HeapNode::Global(crate::entities::GlobalId::new(0));
        assert_eq!(even.reads.as_slice(), &[a]);
        assert_eq!(even.writes.as_slice(), &[g]);
        // `load %p.a` may trap on null.
        assert_eq!(even.traps, Traps::May);
        let leaf = s.call_effects(id(&m, "leaf"));
        assert_eq!((leaf.traps, leaf.reads.len()), (Traps::Never, 0));
    }

    #[test]
    fn long_lists_of_nodes_widen_to_their_groups() {
        let mut fields = String::new();
        let mut body = String::new();
        for k in 0..=MAX_NODES {
            fields.push_str(&format!("f{k}: i64, "));
            body.push_str(&format!("  %l{k} = load %p.f{k}\n"));
        }
        let text = format!(
            "type T {{ {fields} }}\nglobal @g: i64\n\
             func @h(%p: T) -> i64 {{\nentry:\n{body}  %y = load @g\n  ret 0\n}}\n\
             func @main(%p: T) -> i64 {{\nentry:\n  %r = call @h(%p)\n  ret 0\n}}\n"
        );
        let (m, s) = summaries(&text);
        let e = s.call_effects(id(&m, "h"));
        let g = HeapNode::Global(crate::entities::GlobalId::new(0));
        assert_eq!(e.reads.as_slice(), &[HeapNode::Fields, g]);
        assert!(e.writes_nothing());
    }

    #[test]
    fn a_function_without_ret_never_returns() {
        let (m, s) = summaries(
            "func @t() -> i64 {\nentry:\n  guard 0\n  unreachable\n}\n\
             func @u() -> i64 {\nentry:\n  ret 0\n}\n\
             func @main() -> i64 {\nentry:\n  %a = call @t()\n  %b = call @u()\n  ret 0\n}\n",
        );
        let main = &m.funcs[id(&m, "main").index()];
        let call = |k: usize| &main.insts[main.blocks[main.entry().index()].insts[k].index()].kind;
        assert!(s.never_returns(call(0)));
        assert!(!s.never_returns(call(1)));
        assert!(!s.call_effects(id(&m, "t")).removable_if_unused());
    }

    #[test]
    fn what_every_ret_returns_is_known_and_nothing_else() {
        let (m, s) = summaries(
            "type T { a: i64 }\n\
             func @c(%k: i64) -> i64 {\nentry:\n  br %k, a, b\na:\n  ret 7\nb:\n  %x = copy 7\n  ret %x\n}\n\
             func @p(%k: i64, %t: T) -> T {\nentry:\n  %y = copy %t\n  %z = copy %y\n  ret %z\n}\n\
             func @n(%k: i64) -> T {\nentry:\n  ret null\n}\n\
             func @two(%k: i64) -> i64 {\nentry:\n  br %k, a, b\na:\n  ret %k\nb:\n  ret 0\n}\n\
             func @rec(%k: i64) -> i64 {\nentry:\n  %r = call @rec(%k)\n  ret %r\n}\n\
             func @main(%t: T) -> i64 {\nentry:\n  %a = call @c(1)\n  %b = call @p(1, %t)\n  %c = call @n(1)\n  %d = call @two(1)\n  %e = call @rec(1)\n  ret 0\n}\n",
        );
        assert_eq!(s.returns(id(&m, "c")), Some(Returns::Const(7)));
        assert_eq!(s.returns(id(&m, "p")), Some(Returns::Param(1)));
        assert_eq!(s.returns(id(&m, "n")), Some(Returns::Null));
        for f in ["two", "rec", "main"] {
            assert_eq!(s.returns(id(&m, f)), None, "{f}");
        }
        assert!(s.any_call_facts());
    }

    #[test]
    fn parameters_no_instruction_uses_are_unused() {
        let (m, s) = summaries(
            "func @h(%a: i64, %b: i64, %c: i64) -> i64 {\nentry:\n  %x = add %b, 1\n  ret %x\n}\n\
             func @main() -> i64 {\nentry:\n  %r = call @h(1, 2, 3)\n  ret %r\n}\n",
        );
        assert_eq!(s.unused_params(id(&m, "h")), 0b101);
        // Not called: no summary, nothing known.
        assert_eq!(s.unused_params(id(&m, "main")), 0);
        assert_eq!(s.returns(id(&m, "h")), None);
        assert_eq!(all_params(64), u64::MAX);
        assert_eq!(all_params(0), 0);
    }
}
