//! Call summaries (IR.md §8: a `call @f` reads and writes the World "unless
//! a summary says less"): what a call of each module function may do, read
//! off its body with the one effects table ([`crate::effects`]).
//!
//! A function's summary joins the effects of its instructions (the summaries
//! of the functions it calls included); a function that may loop (an edge
//! to a block not later in the layout, so possibly a cycle) or that calls
//! itself, directly or not, may not end, which is observable like a trap,
//! so its summary says it may trap. A function with no `ret` never returns
//! to its caller. Summaries are computed only for functions some function
//! calls, once per pass run.

use crate::effects::{inst_effects, Effects};
use crate::entities::FuncId;
use crate::inst::{Callee, InstKind};
use crate::module::Module;

/// The summaries of a module's functions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summaries {
    /// Per function: `None` when nobody calls it (not computed).
    of: Vec<Option<Summary>>,
}

/// What a call of one function may do.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Summary {
    /// The join of its instructions' effects.
    effects: Effects,
    /// Whether it has no `ret`: a call of it never comes back.
    never_returns: bool,
}

/// Progress of a function's summary while they are computed.
enum State {
    Todo,
    InProgress,
    Done(Summary),
}

impl Summaries {
    /// The summaries of the functions module `m` calls (none when it has a
    /// single function, which can only call itself).
    pub fn of(m: &Module) -> Summaries {
        if m.funcs.len() < 2 {
            return Summaries::default();
        }
        let mut state: Vec<State> = m.funcs.iter().map(|_| State::Todo).collect();
        for f in &m.funcs {
            for data in &f.insts {
                if data.block.is_none() {
                    continue;
                }
                if let InstKind::Call {
                    callee: Callee::Func(g),
                    ..
                } = data.kind
                {
                    summarize(m, g, &mut state);
                }
            }
        }
        Summaries {
            of: state
                .into_iter()
                .map(|s| match s {
                    State::Done(s) => Some(s),
                    _ => None,
                })
                .collect(),
        }
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
        match f.insts.get(inst.index()).map(|d| &d.kind) {
            Some(InstKind::Call {
                callee: Callee::Func(g),
                ..
            }) => self.call_effects(*g),
            _ => inst_effects(m, f, inst),
        }
    }
}

/// Compute the summary of `g` (and of what it calls) into `state`.
fn summarize(m: &Module, g: FuncId, state: &mut [State]) -> Option<Summary> {
    match state.get(g.index())? {
        State::Done(s) => return Some(s.clone()),
        // A call cycle: it may not end.
        State::InProgress => return None,
        State::Todo => {}
    }
    state[g.index()] = State::InProgress;
    let f = &m.funcs[g.index()];
    let mut pos = vec![usize::MAX; f.blocks.len()];
    for (k, b) in f.layout.iter().enumerate() {
        pos[b.index()] = k;
    }
    let mut effects = Effects::none();
    let mut never_returns = true;
    for (k, &b) in f.layout.iter().enumerate() {
        for &i in &f.blocks[b.index()].insts {
            let kind = &f.insts[i.index()].kind;
            let e = match *kind {
                InstKind::Call {
                    callee: Callee::Func(h),
                    ..
                } => summarize(m, h, state).map_or_else(Effects::world, |s| s.effects),
                _ => inst_effects(m, f, i),
            };
            join(&mut effects, &e);
            never_returns &= !matches!(kind, InstKind::Ret(_));
            // A jump back (or out of the layout) may close a loop.
            if kind.successors().any(|s| pos[s.index()] <= k) {
                effects.traps = crate::effects::Traps::May;
            }
        }
    }
    let s = Summary {
        effects,
        never_returns,
    };
    state[g.index()] = State::Done(s.clone());
    Some(s)
}

/// `into` becomes the join of itself and `e`.
fn join(into: &mut Effects, e: &Effects) {
    for &r in &e.reads {
        if !into.reads.contains(&r) {
            into.reads.push(r);
        }
    }
    for &w in &e.writes {
        if !into.writes.contains(&w) {
            into.writes.push(w);
        }
    }
    into.traps = into.traps.max(e.traps);
    into.allocates |= e.allocates;
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
    fn loops_recursion_traps_and_writes_are_kept() {
        let (m, s) = summaries(
            "type Node { next: Node }\n\
             func @lp(%x: i64) -> i64 {\nentry:\n  jmp h\nh:\n  br %x, h, out\nout:\n  ret 0\n}\n\
             func @rec(%x: i64) -> i64 {\nentry:\n  %r = call @rec(%x)\n  ret 0\n}\n\
             func @ld(%p: Node) -> i64 {\nentry:\n  %n = load %p.next\n  ret 0\n}\n\
             func @st(%p: Node) -> i64 {\nentry:\n  %n = new Node\n  store %n.next, %p\n  escape %n\n  ret 0\n}\n\
             func @main(%p: Node) -> i64 {\nentry:\n  %a = call @lp(1)\n  %b = call @rec(1)\n  %c = call @ld(%p)\n  %d = call @st(%p)\n  ret 0\n}\n",
        );
        for f in ["lp", "rec", "ld", "st"] {
            assert!(!s.call_effects(id(&m, f)).removable_if_unused(), "{f}");
        }
        // Not called: no summary.
        assert_eq!(s.call_effects(id(&m, "main")), Effects::world());
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
}
