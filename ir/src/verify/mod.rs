//! The verifier: checks that a module is well-formed (IR.md §5).
//!
//! It runs after parsing and after every pass (in debug builds and harness
//! modes). It never panics, whatever the arenas contain: out-of-range ids,
//! missing terminators and empty layouts are reported as errors.
//!
//! Phases, each in its own module: [`structure`] (layout, terminators, phi
//! placement, `InstData.block`), [`typing`] (operands exist, are placed and have
//! the types their positions need; results have the recorded types), [`ssa`]
//! (phi entries match predecessor edges, the entry has no predecessors, every
//! use is dominated by its definition in reachable code), and [`decls`]
//! (module-level declarations). The dominance check of each instruction runs
//! inside the typing walk (one read of the function's instructions, and one
//! lookup of each operand, for both; the immediate dominators are computed
//! only if a query needs them); its errors are still reported after the other
//! SSA checks, in reverse post-order, as if it were a walk of its own.

mod decls;
mod describe;
mod ssa;
mod structure;
mod typing;

use crate::cfg::Cfg;
use crate::dom::{DomTree, Idoms};
use crate::entities::{Block, FuncId, Inst};
use crate::error::ParseError;
use crate::function::Function;
use crate::module::Module;
use crate::parse::LoadError;
use crate::source_map::SourceMap;
use std::cell::RefCell;
use std::fmt;

/// One well-formedness violation.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub struct VerifyError {
    /// The function it is in; `None` for module-level declarations (types,
    /// globals, externs, duplicate names).
    pub func: Option<FuncId>,
    /// The block it is in, if any.
    pub block: Option<Block>,
    /// The instruction it is about, if any.
    pub inst: Option<Inst>,
    /// Where, in words: `@main, block 'join': %r = add %a, %x`.
    pub location: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Check one function of `m` (not the module's declarations; see [`verify_module`]).
pub fn verify_function(m: &Module, f: FuncId) -> Result<(), Vec<VerifyError>> {
    with_thread_verifier(|v| v.verify_function(m, f))
}

/// [`verify_function`] for a caller that keeps the function's CFG (and
/// maybe its dominator tree): `cfg` must be the CFG [`Cfg::new`] computes for
/// it, `dom` the tree [`DomTree::new`] computes from that CFG (a pass
/// manager that keeps them from pass to pass hands its own over instead of
/// having them computed again). The verdict is that of [`verify_function`].
pub fn verify_function_with_cfg(
    m: &Module,
    f: FuncId,
    cfg: &Cfg,
    dom: Option<&DomTree>,
) -> Result<(), Vec<VerifyError>> {
    with_thread_verifier(|v| v.check_function(m, f, Some((cfg, dom))))
}

/// The checks of the module's declarations alone (types, globals, externs,
/// names and signatures): [`verify_module`] is these, then every function's.
pub fn verify_declarations(m: &Module) -> Vec<VerifyError> {
    decls::check(m)
}

/// Check the module's declarations and every function.
pub fn verify_module(m: &Module) -> Result<(), Vec<VerifyError>> {
    with_thread_verifier(|v| v.verify_module(m))
}

/// Verify the module `resolve` builds, one function at a time as it is
/// resolved (`resolve` calls its argument on each): the result of
/// [`verify_module`] on the finished module, in the same order (declarations
/// first), or `resolve`'s own error (which wins).
pub(crate) fn verify_as_resolved(
    resolve: impl FnOnce(&mut dyn FnMut(&Module, FuncId)) -> Result<(Module, SourceMap), ParseError>,
) -> Result<(Module, SourceMap), LoadError> {
    let mut errors = Vec::new();
    let resolved = with_thread_verifier(|v| {
        resolve(&mut |m, f| {
            if let Err(mut e) = v.verify_function(m, f) {
                errors.append(&mut e);
            }
        })
    });
    let (m, map) = resolved.map_err(LoadError::Parse)?;
    let mut all = decls::check(&m);
    if all.is_empty() && errors.is_empty() {
        return Ok((m, map));
    }
    all.append(&mut errors);
    Err(LoadError::Verify(all, map))
}

thread_local! {
    /// The buffers [`verify_module`] and [`verify_function`] reuse on this thread.
    static THREAD_VERIFIER: RefCell<Verifier> = RefCell::new(Verifier::new());
}

/// Run `run` with this thread's verifier (a fresh one if it is busy).
fn with_thread_verifier<R>(run: impl FnOnce(&mut Verifier) -> R) -> R {
    crate::reuse::with_reused(&THREAD_VERIFIER, run)
}

/// The verifier with its working buffers, reused from one function to the
/// next: a well-formed function is checked without allocating once the
/// buffers have grown. [`verify_module`] and [`verify_function`] use one per thread.
#[derive(Default)]
pub struct Verifier {
    placed: Vec<Site>,
    value_site: Vec<Site>,
    in_layout: Vec<bool>,
    layout_blocks: Vec<Block>,
    cfg: Cfg,
    /// The immediate dominators of `cfg`, computed when a query needs them.
    idoms: RefCell<Idoms>,
    /// The buffers of the dominance queries answered by a search.
    searches: RefCell<ssa::SearchBuffers>,
}

impl Verifier {
    /// A verifier with empty buffers.
    pub fn new() -> Verifier {
        Verifier::default()
    }

    /// Check one function of `m` (as the free function [`verify_function`]).
    pub fn verify_function(&mut self, m: &Module, f: FuncId) -> Result<(), Vec<VerifyError>> {
        self.check_function(m, f, None)
    }

    /// [`Verifier::verify_function`] with the function's CFG when the caller
    /// has it (see [`verify_function_with_cfg`]), computed here otherwise.
    fn check_function(
        &mut self,
        m: &Module,
        f: FuncId,
        given: Option<(&Cfg, Option<&DomTree>)>,
    ) -> Result<(), Vec<VerifyError>> {
        let Some(func) = m.funcs.get(f.index()) else {
            return Err(vec![VerifyError {
                func: Some(f),
                block: None,
                inst: None,
                location: format!("function #{}", f.0),
                message: "no such function in the module".to_string(),
            }]);
        };
        let mut cx = FnCtx::new(m, f, func, self);
        let sound = structure::check(&mut cx, &mut self.layout_blocks);
        if sound {
            let (cfg, tree) = match given {
                Some(given) => given,
                None => {
                    ssa::prepare(&cx, &mut self.cfg);
                    (&self.cfg, None)
                }
            };
            cx.dom = Some(ssa::Dominance::new(cfg, &self.idoms, &self.searches).with_tree(tree));
            let dominance = typing::check(&mut cx, sound);
            ssa::check(&mut cx, cfg, dominance);
        } else {
            typing::check(&mut cx, sound);
        }
        self.placed = cx.placed;
        self.value_site = cx.value_site;
        self.in_layout = cx.in_layout;
        if cx.errors.is_empty() {
            Ok(())
        } else {
            Err(cx.errors)
        }
    }

    /// Check the module's declarations and every function (as the free function
    /// [`verify_module`]).
    pub fn verify_module(&mut self, m: &Module) -> Result<(), Vec<VerifyError>> {
        let mut errors = decls::check(m);
        for i in 0..m.funcs.len() {
            if let Err(mut e) = self.verify_function(m, FuncId::new(i)) {
                errors.append(&mut e);
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Where a placed instruction is: its block and position, packed in one word
/// (zero for none) so that the per-function tables of sites are cleared by a
/// memset and compared in one instruction.
#[derive(Copy, Clone, Default, PartialEq, Eq, Debug)]
pub(crate) struct Site(u64);

impl Site {
    /// Not placed.
    const NONE: Site = Site(0);

    /// Position `pos` of block `b`.
    #[inline]
    fn new(b: Block, pos: u32) -> Site {
        Site((u64::from(b.0) + 1) << 32 | u64::from(pos))
    }

    /// The block and position, if placed.
    #[inline]
    fn get(self) -> Option<(Block, u32)> {
        let block = (self.0 >> 32) as u32;
        (block != 0).then(|| (Block(block - 1), self.0 as u32))
    }

    /// Whether this is a site at all.
    #[inline]
    fn is_placed(self) -> bool {
        self != Site::NONE
    }
}

/// Shared state of the checks of one function.
pub(crate) struct FnCtx<'a> {
    m: &'a Module,
    fid: FuncId,
    f: &'a Function,
    errors: Vec<VerifyError>,
    /// For every instruction in the arena: the layout block listing it and its position.
    placed: Vec<Site>,
    /// For every value in the arena: the block and position of its
    /// definition, when that is a placed instruction which has the value as
    /// its result (filled by the structure check, read for each operand).
    value_site: Vec<Site>,
    /// For every block in the arena: whether it is in the layout.
    in_layout: Vec<bool>,
    /// Whether some block has a phi after a non-phi (reported by the
    /// structure check); otherwise each block's phis are the run at its start.
    misplaced_phis: bool,
    /// Dominance between the blocks, once the structure is known to be sound.
    dom: Option<ssa::Dominance<'a>>,
    /// While the typing walk checks a non-phi instruction of a reachable
    /// block (with `dom`): its block and position. Each operand the typing
    /// check looks up is then also tested for availability there, so the
    /// operand is read once for both checks.
    use_at: Option<(Block, u32)>,
    /// An operand of the instruction at `use_at` failed that test or is
    /// broken: the instruction gets the full dominance check
    /// ([`ssa::check_dominance`]), which words the errors.
    use_suspect: bool,
    /// Operands the typing check looked up for the instruction at `use_at`
    /// (counted in debug builds, to check that it looks at all of them).
    uses_seen: usize,
}

impl<'a> FnCtx<'a> {
    /// The context for checking `f`, taking over the verifier's `placed`,
    /// `value_site` and `in_layout` buffers (cleared and sized for `f`).
    fn new(m: &'a Module, fid: FuncId, f: &'a Function, v: &mut Verifier) -> Self {
        let mut placed = std::mem::take(&mut v.placed);
        placed.clear();
        placed.resize(f.insts.len(), Site::NONE);
        let mut value_site = std::mem::take(&mut v.value_site);
        value_site.clear();
        value_site.resize(f.values.len(), Site::NONE);
        let mut in_layout = std::mem::take(&mut v.in_layout);
        in_layout.clear();
        in_layout.resize(f.blocks.len(), false);
        FnCtx {
            m,
            fid,
            f,
            errors: Vec::new(),
            placed,
            value_site,
            in_layout,
            misplaced_phis: false,
            dom: None,
            use_at: None,
            use_suspect: false,
            uses_seen: 0,
        }
    }

    /// Record an error at `block` / `inst`.
    #[cold]
    #[inline(never)]
    fn report(&mut self, block: Option<Block>, inst: Option<Inst>, message: impl Into<String>) {
        let mut location = format!("@{}", self.f.name);
        if let Some(b) = block {
            location.push_str(&format!(", block '{}'", describe::block_label(self.f, b)));
        }
        if let Some(i) = inst {
            location.push_str(": ");
            location.push_str(&describe::describe_inst(self.m, self.f, i));
        }
        self.errors.push(VerifyError {
            func: Some(self.fid),
            block,
            inst,
            location,
            message: message.into(),
        });
    }

    /// Whether `b` exists and is in the layout.
    fn block_in_layout(&self, b: Block) -> bool {
        self.in_layout.get(b.index()).copied().unwrap_or(false)
    }

    /// The label of `b`, quoted.
    fn label(&self, b: Block) -> String {
        format!("'{}'", describe::block_label(self.f, b))
    }

    /// The operand spelling of a value.
    fn val(&self, v: crate::entities::Value) -> String {
        describe::value_name(self.f, v)
    }

    /// The text of a type.
    fn ty(&self, t: crate::types::Type) -> String {
        self.m.type_name(t)
    }
}
