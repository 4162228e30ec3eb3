//! Effect checking (IR.md §8): run a function while recording every memory
//! access each executed instruction makes — its own, the environment's during
//! a step it caused (extern calls, volatile accesses), and, for a `call`,
//! everything the callee does — and report each access that lies outside the
//! instruction's declared effects.
//!
//! A read must lie in some node of the instruction's `reads`, a write in some
//! node of its `writes` (`HeapNode::contains`); allocation is a write of
//! `Alloc`, `escape` a write of `Output`. The declarations come from
//! [`ir::effects::inst_effects`], a call of a module function's from its
//! callee's summary ([`ir::summaries`], what the optimizer relies on, so
//! every checked run checks the summaries too), unless the caller supplies
//! its own (which is how tests check that a too-small declaration is
//! caught).
//!
//! Locations are reported at the granularity of the abstract heap tree
//! (`Point.x`, `[i64] elements`, `@count`, `Alloc`, `Output`): that is what the
//! access hook of [`crate::access`] reports and what effects are declared over.

use crate::access::{AccessKind, AccessLoc, AccessObserver, Site};
use crate::config::Config;
use crate::exec::{Execution, InputError, Program, ValidInputs};
use crate::observe::Behaviour;
use ir::effects::{effect_loc_node, Effects, HeapNode};
use ir::summaries::{summarized_effects, Summaries};
use ir::{EffectLoc, FuncId, Function, InputSpec, Inst, Module, Names};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::RefCell;
use std::fmt;
use std::sync::OnceLock;

/// One access an instruction made outside its declared effects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectViolation {
    /// The instruction whose declaration is too small.
    pub site: Site,
    /// The function's name (without `@`).
    pub func_name: String,
    /// The instruction, printed with `ir::print_inst`.
    pub inst_text: String,
    /// Read or write.
    pub kind: AccessKind,
    /// The location accessed.
    pub loc: AccessLoc,
    /// The location in text form (`Point.x`, `[i64] elements`, `@count`, `Alloc`, `Output`).
    pub loc_text: String,
    /// The declared nodes of that kind, in text form.
    pub declared_text: String,
}

impl fmt::Display for EffectViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (verb, set) = match self.kind {
            AccessKind::Read => ("reads", "reads"),
            AccessKind::Write => ("writes", "writes"),
        };
        write!(
            f,
            "effect violation in @{}: `{}` {} {}, outside its declared {} {}",
            self.func_name, self.inst_text, verb, self.loc_text, set, self.declared_text
        )
    }
}

/// The abstract heap node an access location belongs to.
pub fn access_node(loc: AccessLoc) -> HeapNode {
    match loc {
        AccessLoc::Heap(l) => effect_loc_node(l),
        AccessLoc::Alloc => HeapNode::Alloc,
        AccessLoc::Output => HeapNode::Output,
    }
}

/// Whether an access of `kind` to `loc` lies inside `eff`.
pub fn access_allowed(eff: &Effects, kind: AccessKind, loc: AccessLoc) -> bool {
    node_allowed(eff, kind, access_node(loc))
}

/// Whether an access of `kind` to heap node `node` lies inside `eff`.
#[inline]
fn node_allowed(eff: &Effects, kind: AccessKind, node: HeapNode) -> bool {
    let declared = match kind {
        AccessKind::Read => &eff.reads,
        AccessKind::Write => &eff.writes,
    };
    // `World` contains every node (the most common declaration: volatile
    // steps, externs without declared effects): no walk up the tree for it.
    declared
        .iter()
        .any(|&n| n == HeapNode::World || n.contains(node))
}

/// The text form of an access location.
pub fn loc_text(m: &Module, loc: AccessLoc) -> String {
    match loc {
        AccessLoc::Heap(EffectLoc::Field(f)) => field_text(m, f),
        AccessLoc::Heap(EffectLoc::Elements(e)) => {
            format!("{} elements", m.type_name(e.array_of()))
        }
        AccessLoc::Heap(EffectLoc::Global(g)) => m.globals.get(g.index()).map_or_else(
            || format!("<global {}>", g.index()),
            |gl| format!("@{}", gl.name),
        ),
        AccessLoc::Alloc => "Alloc".to_string(),
        AccessLoc::Output => "Output".to_string(),
    }
}

/// The text form of a heap node.
pub fn node_text(m: &Module, n: HeapNode) -> String {
    match n {
        HeapNode::Field(f) => field_text(m, f),
        HeapNode::Element(e) => format!("{} elements", m.type_name(e.array_of())),
        HeapNode::Global(g) => loc_text(m, AccessLoc::Heap(EffectLoc::Global(g))),
        other => format!("{other:?}"),
    }
}

fn field_text(m: &Module, f: ir::FieldRef) -> String {
    let known = m
        .structs
        .get(f.ty.index())
        .is_some_and(|s| (f.index as usize) < s.fields.len());
    if known {
        m.field_name(f)
    } else {
        format!("<field {}.{}>", f.ty.index(), f.index)
    }
}

/// The declarations seen so far, per instruction.
type DeclCache = FxHashMap<Site, Effects>;
/// Every `(instruction, kind, location)` already reported as a violation.
type SeenSet = FxHashSet<(Site, AccessKind, AccessLoc)>;

/// A checker's tables, kept per thread between [`run_checked_with`] calls.
#[derive(Default)]
struct CheckerTables {
    cache: DeclCache,
    seen: SeenSet,
}

/// Tables with more entries than this are not kept between runs.
const KEEP_TABLE_ENTRIES: usize = 1 << 12;

thread_local! {
    static CHECKER_TABLES: RefCell<CheckerTables> = RefCell::new(CheckerTables::default());
}

/// The declared effects ([`declared_effects`]) of every instruction of a
/// module, each computed on first use and kept for every later run.
pub struct DeclTable {
    /// Per function, the table index of its instruction 0 and its instruction count.
    base: Vec<(usize, usize)>,
    decls: Vec<OnceLock<Effects>>,
    /// The module's call summaries, computed at the first call asked about.
    calls: OnceLock<Summaries>,
}

impl DeclTable {
    /// An empty (lazy) table for `m`.
    pub fn new(m: &Module) -> DeclTable {
        let mut base = Vec::with_capacity(m.funcs.len());
        let mut total = 0;
        for f in &m.funcs {
            base.push((total, f.insts.len()));
            total += f.insts.len();
        }
        DeclTable {
            base,
            decls: (0..total).map(|_| OnceLock::new()).collect(),
            calls: OnceLock::new(),
        }
    }

    /// The declared effects of `site` in `m` (the module the table was built
    /// for), or `None` when the site is outside the module.
    fn get(&self, m: &Module, site: Site) -> Option<&Effects> {
        let &(base, len) = self.base.get(site.func.index())?;
        if site.inst.index() >= len {
            return None;
        }
        let cell = self.decls.get(base + site.inst.index())?;
        Some(cell.get_or_init(|| {
            summarized_effects(m, &m.funcs[site.func.index()], site.inst, || {
                self.calls.get_or_init(|| Summaries::of(m))
            })
        }))
    }
}

/// An [`AccessObserver`] that checks every access against declared effects.
pub struct EffectChecker<'m, F> {
    module: &'m Module,
    effects_of: F,
    /// Declarations shared between runs (only when `effects_of` is [`declared_effects`]).
    table: Option<&'m DeclTable>,
    cache: DeclCache,
    seen: SeenSet,
    violations: Vec<EffectViolation>,
}

impl<'m, F: FnMut(&Module, FuncId, Inst) -> Effects> EffectChecker<'m, F> {
    /// A checker for `module` taking declarations from `effects_of`.
    pub fn new(module: &'m Module, effects_of: F) -> Self {
        EffectChecker {
            module,
            effects_of,
            table: None,
            cache: FxHashMap::default(),
            seen: FxHashSet::default(),
            violations: Vec::new(),
        }
    }

    /// A checker reusing (cleared) tables; `table`, when given, must hold the
    /// same declarations as `effects_of`.
    fn with_tables(
        module: &'m Module,
        effects_of: F,
        table: Option<&'m DeclTable>,
        mut tables: CheckerTables,
    ) -> Self {
        tables.cache.clear();
        tables.seen.clear();
        EffectChecker {
            module,
            effects_of,
            table,
            cache: tables.cache,
            seen: tables.seen,
            violations: Vec::new(),
        }
    }

    /// The violations found so far, each (instruction, kind, location) once, in order of discovery.
    pub fn into_violations(self) -> Vec<EffectViolation> {
        self.violations
    }

    /// The violations and the tables (for reuse).
    fn into_parts(self) -> (Vec<EffectViolation>, CheckerTables) {
        let tables = CheckerTables {
            cache: self.cache,
            seen: self.seen,
        };
        (self.violations, tables)
    }

    fn violation(
        &self,
        site: Site,
        kind: AccessKind,
        loc: AccessLoc,
        eff: &Effects,
    ) -> EffectViolation {
        let m = self.module;
        let (func_name, inst_text) = match m.funcs.get(site.func.index()) {
            Some(f) => (f.name.clone(), print_one(m, f, site.inst)),
            None => (format!("<func {}>", site.func.index()), String::new()),
        };
        let declared = match kind {
            AccessKind::Read => &eff.reads,
            AccessKind::Write => &eff.writes,
        };
        let declared_text = if declared.is_empty() {
            "(none)".to_string()
        } else {
            let parts: Vec<String> = declared.iter().map(|&n| node_text(m, n)).collect();
            format!("({})", parts.join(", "))
        };
        EffectViolation {
            site,
            func_name,
            inst_text,
            kind,
            loc,
            loc_text: loc_text(m, loc),
            declared_text,
        }
    }
}

fn print_one(m: &Module, f: &Function, inst: Inst) -> String {
    ir::print_inst(m, f, &Names::new(f), inst)
}

impl<F: FnMut(&Module, FuncId, Inst) -> Effects> AccessObserver for EffectChecker<'_, F> {
    fn access(&mut self, stack: &[Site], kind: AccessKind, loc: AccessLoc) {
        let node = access_node(loc);
        let module = self.module;
        for &site in stack {
            let effects_of = &mut self.effects_of;
            let eff = match self.table.and_then(|t| t.get(module, site)) {
                Some(eff) => eff,
                None => self
                    .cache
                    .entry(site)
                    .or_insert_with(|| effects_of(module, site.func, site.inst)),
            };
            // Allowed accesses need no memory; each violation is reported once.
            if !node_allowed(eff, kind, node) && self.seen.insert((site, kind, loc)) {
                let eff = eff.clone();
                let v = self.violation(site, kind, loc, &eff);
                self.violations.push(v);
            }
        }
    }

    fn access_all(&mut self, stack: &[Site], accesses: &[(AccessKind, AccessLoc)]) {
        // A step caused by instructions that may touch anything (the usual
        // extern call or volatile access) cannot violate: nothing to check.
        let module = self.module;
        let unchecked = self.table.is_some_and(|t| {
            stack
                .iter()
                .all(|&site| t.get(module, site).is_some_and(allows_everything))
        });
        if unchecked {
            return;
        }
        for &(kind, loc) in accesses {
            self.access(stack, kind, loc);
        }
    }
}

/// Whether `eff` allows every access (reads and writes `World`: volatile
/// steps, externs without declared effects, calls of functions making them).
fn allows_everything(eff: &Effects) -> bool {
    eff.reads.contains(&HeapNode::World) && eff.writes.contains(&HeapNode::World)
}

/// The declared effects of IR.md §8 for an instruction of `module` (a
/// call of a module function: its callee's summary, computed for this one
/// question; [`DeclTable`] keeps them).
pub fn declared_effects(module: &Module, func: FuncId, inst: Inst) -> Effects {
    match module.funcs.get(func.index()) {
        Some(f) => {
            let calls = OnceLock::new();
            summarized_effects(module, f, inst, || {
                calls.get_or_init(|| Summaries::of(module))
            })
        }
        None => Effects::world(),
    }
}

/// Run `func` of `program` on `inputs`, checking every access against the
/// effects table; returns the execution and every violation found.
pub fn run_checked(
    program: &Program<'_>,
    func: FuncId,
    inputs: &InputSpec,
    config: &Config,
) -> Result<(Execution, Vec<EffectViolation>), InputError> {
    run_checked_valid(program, func, &program.validate(func, inputs)?, config)
}

/// [`run_checked`] on inputs validated once ([`Program::validate`]), e.g. by
/// the program they are compared with (validated again when its parameter
/// types or layout differ from this program's).
pub fn run_checked_valid(
    program: &Program<'_>,
    func: FuncId,
    inputs: &ValidInputs<'_>,
    config: &Config,
) -> Result<(Execution, Vec<EffectViolation>), InputError> {
    check_run(
        program.module(),
        declared_effects,
        Some(program.decl_table()),
        |checker| program.run_valid_observed(func, inputs, config, checker),
    )
}

/// [`run_checked_valid`], comparing the behaviour with `expected` as the run
/// ends ([`Program::run_valid_against`]): the execution's behaviour is
/// `None` when it equals `expected`, else the behaviour.
pub fn run_checked_valid_against(
    program: &Program<'_>,
    func: FuncId,
    inputs: &ValidInputs<'_>,
    config: &Config,
    expected: &Behaviour,
) -> Result<(Execution<Option<Behaviour>>, Vec<EffectViolation>), InputError> {
    check_run(
        program.module(),
        declared_effects,
        Some(program.decl_table()),
        |checker| program.run_valid_against(func, inputs, config, checker, expected),
    )
}

/// Like [`run_checked`], with the declarations taken from `effects_of`
/// (called once per executed instruction) instead of the effects table.
pub fn run_checked_with<F: FnMut(&Module, FuncId, Inst) -> Effects>(
    program: &Program<'_>,
    func: FuncId,
    inputs: &InputSpec,
    config: &Config,
    effects_of: F,
) -> Result<(Execution, Vec<EffectViolation>), InputError> {
    let valid = program.validate(func, inputs)?;
    check_run(program.module(), effects_of, None, |checker| {
        program.run_valid_observed(func, &valid, config, checker)
    })
}

/// `run` with an effect checker on `module` taking declarations from
/// `effects_of` (and `table`, when given, holding the same declarations).
fn check_run<'m, F: FnMut(&Module, FuncId, Inst) -> Effects, B>(
    module: &'m Module,
    effects_of: F,
    table: Option<&'m DeclTable>,
    run: impl FnOnce(&mut EffectChecker<'m, F>) -> Result<Execution<B>, InputError>,
) -> Result<(Execution<B>, Vec<EffectViolation>), InputError> {
    // Taken out (not borrowed): a nested or panicking run leaves a clean pool.
    let tables = CHECKER_TABLES.with(|t| t.take());
    let mut checker = EffectChecker::with_tables(module, effects_of, table, tables);
    let exec = run(&mut checker);
    let (violations, tables) = checker.into_parts();
    if tables.seen.len() <= KEEP_TABLE_ENTRIES {
        CHECKER_TABLES.with(|t| t.replace(tables));
    }
    Ok((exec?, violations))
}
