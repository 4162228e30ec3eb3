//! The control-flow analyses of a function (CFG, dominator tree, loops),
//! kept from pass to pass while the function's branches stay as they were.
//!
//! Most passes change instructions and leave the branches alone, yet each
//! asked for a fresh [`Cfg`] (and dominator tree, and loops) of the same
//! function. Here one [`Analyses`] per function of the module being
//! optimized (by index, [`in_function`]) keeps them; a pass asks
//! [`with_analyses`] and gets them, recomputed only if the function's
//! *CFG inputs* changed: its number of block slots, its layout, and the
//! successors of each layout block's last instruction. A [`Cfg`] is a pure
//! function of exactly these, and the dominator tree and loops are pure
//! functions of the CFG and the number of block slots, so an entry whose
//! inputs compare equal is the analysis a fresh computation would make —
//! whatever the pass manager was told about changes (debug builds check it
//! against a fresh computation all the same). The dominator tree and loops
//! are computed on the first request after the CFG changed.

use ir::{Block, Cfg, DomTree, Function, LoopInfo};
use std::cell::{Cell, OnceCell, RefCell};

/// The analyses of one function, valid for the CFG inputs they record.
#[derive(Default)]
pub struct Analyses {
    /// The CFG inputs the analyses were computed from ([`cfg_inputs`]).
    inputs: Vec<u32>,
    cfg: Cfg,
    dom: OnceCell<DomTree>,
    loops: OnceCell<LoopInfo>,
    /// Storage of an earlier dominator tree and loops, reused when computed again.
    spare_dom: Cell<DomTree>,
    spare_loops: Cell<LoopInfo>,
}

impl Analyses {
    /// Make the analyses those of `func`: kept if its CFG inputs are those
    /// recorded, recomputed otherwise. Returns whether they were kept.
    fn refresh(&mut self, func: &Function) -> bool {
        if !self.inputs.is_empty() && same_inputs(func, &self.inputs) {
            #[cfg(debug_assertions)]
            self.assert_fresh(func);
            return true;
        }
        cfg_inputs(func, &mut self.inputs);
        self.cfg.recompute(func);
        if let Some(d) = self.dom.take() {
            self.spare_dom.set(d);
        }
        if let Some(l) = self.loops.take() {
            self.spare_loops.set(l);
        }
        false
    }

    /// The CFG of the function.
    pub fn cfg(&self) -> &Cfg {
        &self.cfg
    }

    /// The dominator tree of the function (`func`, the function these
    /// analyses were asked for), computed on the first request.
    pub fn dom(&self, func: &Function) -> &DomTree {
        self.dom.get_or_init(|| {
            let mut d = self.spare_dom.take();
            d.recompute(func, &self.cfg);
            d
        })
    }

    /// The dominator tree of the function if a request computed it already
    /// ([`Analyses::dom`]); never computes it.
    pub fn dom_if_computed(&self) -> Option<&DomTree> {
        self.dom.get()
    }

    /// The loops of the function (`func`, as for [`Analyses::dom`]).
    pub fn loops(&self, func: &Function) -> &LoopInfo {
        let dom = self.dom(func);
        self.loops.get_or_init(|| {
            let mut l = self.spare_loops.take();
            l.recompute(func, &self.cfg, dom);
            l
        })
    }

    /// Panic unless the kept analyses are those a fresh computation makes.
    #[cfg(debug_assertions)]
    fn assert_fresh(&self, func: &Function) {
        let cfg = Cfg::new(func);
        let slots = func.blocks.len().max(cfg.num_block_slots());
        assert!(same_cfg(&self.cfg, &cfg, slots), "kept CFG is stale");
        let dom = DomTree::new(func, &cfg);
        if let Some(kept) = self.dom.get() {
            assert!(same_dom(kept, &dom, slots), "kept dominator tree is stale");
        }
        if let Some(kept) = self.loops.get() {
            let loops = LoopInfo::new(func, &cfg, &dom);
            assert!(same_loops(kept, &loops, slots), "kept loops are stale");
        }
    }
}

/// Everything [`Cfg::recompute`] reads of `func`, flat into `out`: the
/// number of block slots, the layout, and per layout block the successors
/// of its last instruction (`u32::MAX` ends each list).
fn cfg_inputs(func: &Function, out: &mut Vec<u32>) {
    out.clear();
    out.push(func.blocks.len() as u32);
    out.push(func.layout.len() as u32);
    out.extend(func.layout.iter().map(|b| b.0));
    for &b in &func.layout {
        out.extend(terminator_succs(func, b).map(|s| s.0));
        out.push(u32::MAX);
    }
}

/// The successors of the last instruction of block `b` of `func`, if any.
fn terminator_succs(func: &Function, b: Block) -> impl Iterator<Item = Block> + '_ {
    func.blocks
        .get(b.index())
        .and_then(|d| d.insts.last())
        .and_then(|&i| func.insts.get(i.index()))
        .into_iter()
        .flat_map(|data| data.kind.successors())
}

/// Whether [`cfg_inputs`] of `func` would be `inputs` (compared as they
/// are read, without building them).
fn same_inputs(func: &Function, inputs: &[u32]) -> bool {
    let layout = func.layout.len();
    let Some((head, mut rest)) = inputs.split_at_checked(2 + layout) else {
        return false;
    };
    if head[0] != func.blocks.len() as u32
        || head[1] != layout as u32
        || head[2..].iter().zip(&func.layout).any(|(&x, b)| x != b.0)
    {
        return false;
    }
    for &b in &func.layout {
        for s in terminator_succs(func, b) {
            match rest.split_first() {
                Some((&x, tail)) if x == s.0 => rest = tail,
                _ => return false,
            }
        }
        match rest.split_first() {
            Some((&u32::MAX, tail)) => rest = tail,
            _ => return false,
        }
    }
    rest.is_empty()
}

/// Whether two CFGs over `slots` block slots agree on everything they tell.
pub fn same_cfg(a: &Cfg, b: &Cfg, slots: usize) -> bool {
    a.entry() == b.entry()
        && a.rpo() == b.rpo()
        && (0..slots).map(Block::new).all(|x| {
            a.in_layout(x) == b.in_layout(x) && a.succs(x) == b.succs(x) && a.preds(x) == b.preds(x)
        })
}

/// Whether two dominator trees over `slots` block slots agree.
pub fn same_dom(a: &DomTree, b: &DomTree, slots: usize) -> bool {
    a.preorder() == b.preorder()
        && (0..slots)
            .map(Block::new)
            .all(|x| a.idom(x) == b.idom(x) && a.children(x) == b.children(x))
}

/// Whether two loop forests over `slots` block slots agree.
pub fn same_loops(a: &LoopInfo, b: &LoopInfo, slots: usize) -> bool {
    a.loops() == b.loops()
        && a.irreducible_edges() == b.irreducible_edges()
        && (0..slots)
            .map(Block::new)
            .all(|x| a.loop_of(x) == b.loop_of(x))
}

/// How many functions (the first ones of a module) keep analyses of their
/// own; the others share one entry, as if asked outside [`in_function`]. A
/// module of thousands of small functions would otherwise allocate (and
/// keep) a CFG, a dominator tree and loops for each of them.
const KEPT_FUNCTIONS: usize = 64;

/// Per function of the module being optimized, its analyses; and the
/// function being worked on.
#[derive(Default)]
struct Store {
    /// Boxed: a request moves them out (leaving `None`) and back in.
    slots: Vec<Option<Box<Analyses>>>,
    /// The index of the function being worked on ([`in_function`]).
    current: Option<usize>,
    /// The analyses asked for outside [`in_function`].
    loose: Option<Box<Analyses>>,
}

thread_local! {
    static STORE: RefCell<Store> = RefCell::new(Store::default());
}

/// Run `f` as work on function `index` of the module: [`with_analyses`]
/// inside it uses (and keeps) that function's analyses.
pub fn in_function<R>(index: usize, f: impl FnOnce() -> R) -> R {
    /// Restores the function worked on before, even if `f` panics.
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            STORE.with(|s| s.borrow_mut().current = self.0);
        }
    }
    let before = STORE.with(|s| s.borrow_mut().current.replace(index));
    let _restore = Restore(before);
    f()
}

/// Run `f` with the analyses of `func` (the function being worked on, see
/// [`in_function`]), kept from earlier requests when its CFG inputs are
/// unchanged. A nested request gets analyses of its own.
pub fn with_analyses<R>(func: &Function, f: impl FnOnce(&Analyses) -> R) -> R {
    let (index, mut analyses) = take_slot();
    analyses.refresh(func);
    let out = f(&analyses);
    put_back(index, analyses);
    out
}

/// [`with_analyses`] for a pass that edits `func` meanwhile (the analyses
/// stay those of `func` as it was when asked).
pub fn with_analyses_mut<R>(
    func: &mut Function,
    f: impl FnOnce(&Analyses, &mut Function) -> R,
) -> R {
    let (index, mut analyses) = take_slot();
    analyses.refresh(func);
    let out = f(&analyses, func);
    put_back(index, analyses);
    out
}

/// The function being worked on and its analyses, taken out of the store.
fn take_slot() -> (Option<usize>, Box<Analyses>) {
    STORE.with(|s| {
        let mut s = s.borrow_mut();
        let index = s.current.filter(|&i| i < KEPT_FUNCTIONS);
        let taken = match index {
            Some(i) => {
                if s.slots.len() <= i {
                    s.slots.resize_with(i + 1, Option::default);
                }
                s.slots[i].take()
            }
            None => s.loose.take(),
        };
        (index, taken.unwrap_or_default())
    })
}

/// Put analyses taken by [`take_slot`] back.
fn put_back(index: Option<usize>, analyses: Box<Analyses>) {
    STORE.with(|s| {
        let mut s = s.borrow_mut();
        match index {
            Some(i) => s.slots[i] = Some(analyses),
            None => s.loose = Some(analyses),
        }
    });
}

/// Analyses whose CFG inputs are longer than this are not kept past a
/// pass manager run ([`end_run`]).
const KEEP_INPUTS: usize = 1 << 12;

/// The end of a pass manager run: drop the analyses of large functions, so
/// that their storage is not held until the next module; the others stay
/// as warm storage (and are reused if the next module's function at that
/// index has the same CFG inputs).
pub fn end_run() {
    STORE.with(|s| {
        let mut s = s.borrow_mut();
        for slot in s.slots.iter_mut() {
            if slot.as_ref().is_some_and(|a| a.inputs.len() > KEEP_INPUTS) {
                *slot = None;
            }
        }
    });
}

/// Drop every kept analysis, as at the start of a new process. The scaling
/// table calls it before each timed run: without it, a run on a function
/// within [`KEEP_INPUTS`] reused the CFG and dominator tree the run before
/// it left (the same module again), while one past it computed them, so
/// the N → 10N ratios compared unequal work.
pub fn forget_all() {
    STORE.with(|s| *s.borrow_mut() = Store::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Function {
        ir::parse_module(text, "t.ir").unwrap().0.funcs.remove(0)
    }

    const LOOP: &str = "func @f(%n: i64) -> i64 {\nentry:\n  jmp head\n\
        head:\n  %i = phi [entry: 0], [body: %j]\n  %c = slt %i, %n\n  br %c, body, exit\n\
        body:\n  %j = add %i, 1\n  jmp head\nexit:\n  ret %i\n}\n";

    #[test]
    fn analyses_are_kept_while_the_branches_are_unchanged() {
        let mut f = parse(LOOP);
        let mut a = Analyses::default();
        assert!(!a.refresh(&f));
        assert_eq!(a.loops(&f).loops().len(), 1);
        // An instruction changes, the branches do not: kept, loops included.
        let add = f.blocks[2].insts[0];
        f.insts[add.index()].kind =
            ir::InstKind::Binary(ir::BinOp::Add, ir::Value::new(0), ir::Value::new(0));
        assert!(a.refresh(&f));
        assert!(a.loops.get().is_some());
        // The back edge goes: recomputed, and the loop is gone.
        let jmp = *f.blocks[2].insts.last().unwrap();
        f.insts[jmp.index()].kind = ir::InstKind::Jmp(Block::new(3));
        assert!(!a.refresh(&f));
        assert!(a.dom.get().is_none() && a.loops.get().is_none());
        assert_eq!(a.loops(&f).loops().len(), 0);
        let fresh = Cfg::new(&f);
        assert!(same_cfg(a.cfg(), &fresh, f.blocks.len()));
        assert!(same_dom(a.dom(&f), &DomTree::new(&f, &fresh), 4));
        // Another layout order (same edges): recomputed.
        f.layout.swap(2, 3);
        assert!(!a.refresh(&f));
    }

    #[test]
    fn each_function_index_has_its_own_analyses() {
        let f = parse(LOOP);
        let g = parse("func @g() {\nentry:\n  ret\n}\n");
        let blocks =
            |i, func: &Function| in_function(i, || with_analyses(func, |a| a.cfg().rpo().len()));
        assert_eq!(blocks(0, &f), 4);
        assert_eq!(blocks(1, &g), 1);
        assert_eq!(with_analyses(&g, |a| a.cfg().rpo().len()), 1);
        // Past the first functions, all share the entry of no function.
        assert_eq!(blocks(KEPT_FUNCTIONS, &f), 4);
        STORE.with(|s| {
            let s = s.borrow();
            let rpo = |i: usize| s.slots[i].as_ref().unwrap().cfg.rpo().len();
            assert_eq!((rpo(0), rpo(1), s.slots.len()), (4, 1, 2));
            assert_eq!(s.loose.as_ref().unwrap().cfg.rpo().len(), 4);
            assert_eq!(s.current, None);
        });
        // A nested request starts from empty analyses and leaves the outer ones.
        in_function(0, || {
            with_analyses(&f, |outer| {
                with_analyses(&g, |inner| assert_eq!(inner.cfg().rpo().len(), 1));
                assert_eq!(outer.cfg().rpo().len(), 4);
            })
        });
        assert_eq!(blocks(0, &f), 4);
        // The end of a run keeps small functions' analyses only.
        STORE.with(|s| {
            let mut s = s.borrow_mut();
            s.slots[1]
                .as_mut()
                .unwrap()
                .inputs
                .resize(KEEP_INPUTS + 1, 0);
        });
        end_run();
        STORE.with(|s| {
            let s = s.borrow();
            assert_eq!(s.slots[0].as_ref().unwrap().cfg.rpo().len(), 4);
            assert!(s.slots[1].is_none());
        });
        // Forgetting drops them all.
        forget_all();
        STORE.with(|s| {
            let s = s.borrow();
            assert!(s.slots.is_empty() && s.loose.is_none());
        });
    }
}
