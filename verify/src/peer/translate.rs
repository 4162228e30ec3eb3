//! A faithful translation of a loadstar module into LLVM 14 IR text, for the
//! LLVM peer (`loadstar peer`).
//!
//! The translation gives LLVM exactly the knowledge IR.md gives loadstar, no
//! more:
//! - every reference is an `i8*`; objects are `%s.T = type { fields }` and
//!   arrays `{ i64 len, [0 x E] }`, reached through `bitcast` + `getelementptr`;
//! - every field leaf, every element type, the array length and every global
//!   has its own TBAA scalar type under one root, so accesses to different
//!   leaves never alias and accesses to one leaf may (IR.md §8);
//! - allocation is `calloc` (LLVM knows fresh memory is zero and not aliased),
//!   with `heap_exhausted`/`bad_length` checks;
//! - null, bounds, zero-divisor and guard checks branch to a no-return trap
//!   call that, having no memory attributes, observes the whole heap — as a
//!   trap observes it (IR.md §7);
//! - externs, volatile steps and `escape` of a reference are opaque calls
//!   (an extern declared `reads(none)` without writes is
//!   `inaccessiblememonly`: it only advances the environment, and each call
//!   of it follows a call of `@ls.may_trap`, `readonly` and not `willreturn`,
//!   because an extern call may trap (IR.md's effects table) and a trap
//!   shows the whole heap — without it LLVM would delete a store the call's
//!   trap observes); a volatile access is the step followed by an LLVM
//!   `volatile` access;
//! - functions are `noinline`, so that loads and stores are counted per
//!   function on both sides; globals are external (they are observable).
//!
//! Fuel, the frame limit and the heap budget are not modelled: the peer
//! compares static code, not runs.
//!
//! The `lli` flavour ([`translate_modules_for_lli`], run by [`super::lli`])
//! differs in one place only: allocation calls `@ls.new(header, words)`, the
//! runtime's bump allocator into an arena laid out as the interpreter's.

use ir::cfg::Cfg;
use ir::{
    Addr, BinOp, Block, Callee, FieldRef, Function, InstKind, Module, Type, UnOp, Value, ValueDef,
};
use std::collections::HashMap;
use std::fmt::Write;

/// The name of the TBAA type node of array lengths, so that a counter can
/// leave the bounds checks' length loads out.
pub const LEN_TBAA_NAME: &str = "loadstar.len";

/// The LLVM name of module function `name`.
pub fn llvm_func_name(name: &str) -> String {
    format!("f.{name}")
}

/// A heap leaf of IR.md §8, as a TBAA scalar type.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Leaf {
    Field(FieldRef),
    Elements(Type),
    Len,
    Global(u32),
}

/// The trap kinds the translation raises (the interpreter's names).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
enum Trap {
    NullDeref = 1,
    OutOfBounds = 2,
    DivByZero = 3,
    GuardFailed = 4,
    Unreachable = 5,
    BadLength = 6,
    HeapExhausted = 7,
}

/// The interpreter's trap kind of the code `@ls.trap` is called with.
pub fn trap_kind(code: i64) -> Option<interp::TrapKind> {
    use interp::TrapKind as K;
    Some(match code {
        1 => K::NullDeref,
        2 => K::OutOfBounds,
        3 => K::DivByZero,
        4 => K::GuardFailed,
        5 => K::Unreachable,
        6 => K::BadLength,
        7 => K::HeapExhausted,
        _ => return None,
    })
}

impl Trap {
    fn label(self) -> &'static str {
        match self {
            Trap::NullDeref => "trap.null_deref",
            Trap::OutOfBounds => "trap.out_of_bounds",
            Trap::DivByZero => "trap.div_by_zero",
            Trap::GuardFailed => "trap.guard_failed",
            Trap::Unreachable => "trap.unreachable",
            Trap::BadLength => "trap.bad_length",
            Trap::HeapExhausted => "trap.heap_exhausted",
        }
    }
}

/// The module-wide state: TBAA nodes handed out so far.
struct ModuleCx<'m> {
    module: &'m Module,
    /// Put before every module-level name, so that several modules can share
    /// one LLVM module (`m3.`), or empty.
    prefix: String,
    /// The metadata id of this module's TBAA root.
    md_base: usize,
    leaves: Vec<Leaf>,
    leaf_ids: HashMap<Leaf, usize>,
    /// The `lli` flavour: allocate with `@ls.new` (see the module header).
    lli: bool,
}

impl ModuleCx<'_> {
    /// The metadata id of the access tag of `leaf` (ids are given out in
    /// pairs after the root `!B`: type node `B+2k+1`, tag `B+2k+2`).
    fn tag(&mut self, leaf: Leaf) -> usize {
        let k = match self.leaf_ids.get(&leaf) {
            Some(&k) => k,
            None => {
                let k = self.leaves.len();
                self.leaves.push(leaf.clone());
                self.leaf_ids.insert(leaf, k);
                k
            }
        };
        self.md_base + 2 * k + 2
    }

    fn leaf_name(&self, leaf: &Leaf) -> String {
        match leaf {
            Leaf::Field(f) => format!("loadstar.{}", self.module.field_name(*f)),
            Leaf::Elements(e) => format!("loadstar.[{}]", self.module.type_name(*e)),
            Leaf::Len => LEN_TBAA_NAME.to_string(),
            Leaf::Global(g) => format!("loadstar.@{}", self.module.globals[*g as usize].name),
        }
    }
}

/// LLVM type of a loadstar type: `i64`, or `i8*` for every reference.
/// Whether an extern only advances the environment (declared `reads(none)`
/// without writes): LLVM gets `inaccessiblememonly` for it, and a
/// `@ls.may_trap` call before each call for the trap it may take.
fn only_environment(e: &ir::Extern) -> bool {
    e.effects
        .as_ref()
        .is_some_and(|fx| fx.reads.is_empty() && fx.writes.is_empty())
}

fn llty(t: Type) -> &'static str {
    if t.is_int() {
        "i64"
    } else {
        "i8*"
    }
}

/// LLVM name of the array type whose elements have LLVM type `elem`.
fn array_ty(elem: Type) -> &'static str {
    if elem.is_int() {
        "%arr.i64"
    } else {
        "%arr.ref"
    }
}

/// Translate a verified module to LLVM 14 IR text.
pub fn translate_module(module: &Module) -> String {
    translate_modules(&[module])
}

/// The prefix of the names of module `k` of `n` translated together.
pub fn module_prefix(k: usize, n: usize) -> String {
    if n == 1 {
        String::new()
    } else {
        format!("m{k}.")
    }
}

/// Translate several verified modules into one LLVM module (so that one `opt`
/// run serves them all); module `k`'s names carry [`module_prefix`]`(k, n)`,
/// its functions are `@f.m{k}.NAME`, and each has its own TBAA root.
pub fn translate_modules(modules: &[&Module]) -> String {
    translate_flavour(modules, false)
}

/// [`translate_modules`] in the `lli` flavour: every `new`/`newarray` calls
/// `@ls.new(i64 header, i64 words)` (the interpreter's header word and arena
/// size of the object) instead of `calloc`.
pub fn translate_modules_for_lli(modules: &[&Module]) -> String {
    translate_flavour(modules, true)
}

fn translate_flavour(modules: &[&Module], lli: bool) -> String {
    let mut out = String::new();
    out.push_str("; translated by loadstar peer\n");
    out.push_str("%arr.i64 = type { i64, [0 x i64] }\n%arr.ref = type { i64, [0 x i8*] }\n");
    out.push_str(
        "declare noalias i8* @calloc(i64, i64) nounwind\n\
         declare void @ls.trap(i64) noreturn nounwind\n\
         declare void @ls.escape.i64(i64) inaccessiblememonly nounwind\n\
         declare void @ls.escape.ref(i8*) nounwind\n\
         declare void @ls.may_trap() readonly nounwind\n\
         declare void @ls.volatile(i8*, i64, i64, i8*, i64) nounwind\n",
    );
    if lli {
        out.push_str("declare noalias i8* @ls.new(i64, i64) nounwind\n");
    }
    let mut metadata = String::new();
    let mut md_base = 0;
    for (k, module) in modules.iter().enumerate() {
        let mut cx = ModuleCx {
            module,
            prefix: module_prefix(k, modules.len()),
            md_base,
            leaves: Vec::new(),
            leaf_ids: HashMap::new(),
            lli,
        };
        translate_one(&mut cx, &mut out);
        let _ = writeln!(metadata, "!{md_base} = !{{!\"loadstar tbaa {k}\"}}");
        for j in 0..cx.leaves.len() {
            let name = cx.leaf_name(&cx.leaves[j]);
            let node = md_base + 2 * j + 1;
            let _ = writeln!(metadata, "!{node} = !{{!\"{name}\", !{md_base}, i64 0}}");
            let _ = writeln!(metadata, "!{} = !{{!{node}, !{node}, i64 0}}", node + 1);
        }
        md_base += 2 * cx.leaves.len() + 1;
    }
    out.push('\n');
    out.push_str(&metadata);
    out
}

/// The types, globals, externs and functions of one module.
fn translate_one(cx: &mut ModuleCx<'_>, out: &mut String) {
    let module = cx.module;
    let pre = cx.prefix.clone();
    for s in &module.structs {
        let fields: Vec<&str> = s.fields.iter().map(|f| llty(f.ty)).collect();
        let _ = writeln!(out, "%s.{pre}{} = type {{ {} }}", s.name, fields.join(", "));
    }
    for g in &module.globals {
        let _ = writeln!(out, "@g.{pre}{} = external global {}", g.name, llty(g.ty));
    }
    for e in &module.externs {
        let params: Vec<&str> = e.params.iter().map(|t| llty(*t)).collect();
        let ret = e.ret.map_or("void", llty);
        let attrs = if only_environment(e) {
            "inaccessiblememonly nounwind"
        } else {
            "nounwind"
        };
        let _ = writeln!(
            out,
            "declare {ret} @x.{pre}{}({}) {attrs}",
            e.name,
            params.join(", ")
        );
    }
    for f in &module.funcs {
        out.push('\n');
        FuncCx::new(cx, f).emit(out);
    }
}

/// Translation state of one function.
struct FuncCx<'a, 'm> {
    cx: &'a mut ModuleCx<'m>,
    f: &'a Function,
    cfg: Cfg,
    body: String,
    temps: usize,
    splits: usize,
    block: Block,
    traps: Vec<Trap>,
}

impl<'a, 'm> FuncCx<'a, 'm> {
    fn new(cx: &'a mut ModuleCx<'m>, f: &'a Function) -> Self {
        FuncCx {
            cx,
            f,
            cfg: Cfg::new(f),
            body: String::new(),
            temps: 0,
            splits: 0,
            block: Block::new(0),
            traps: Vec::new(),
        }
    }

    fn temp(&mut self) -> String {
        self.temps += 1;
        format!("%t{}", self.temps)
    }

    /// The operand text of `v` (constants inline).
    fn op(&self, v: Value) -> String {
        match self.f.values[v.index()].def {
            ValueDef::Const(c) => c.to_string(),
            ValueDef::Null => "null".to_string(),
            _ => format!("%v{}", v.0),
        }
    }

    /// `TY op` for `v`, typed by `v`'s own type.
    fn typed(&self, v: Value) -> String {
        format!("{} {}", llty(self.f.values[v.index()].ty), self.op(v))
    }

    fn result(&self, v: Option<Value>) -> String {
        v.map(|v| format!("%v{}", v.0)).unwrap_or_default()
    }

    fn line(&mut self, s: &str) {
        self.body.push_str("  ");
        self.body.push_str(s);
        self.body.push('\n');
    }

    /// Branch to the trap block of `kind` when the i1 `cond` holds; code
    /// continues in a fresh block.
    fn trap_if(&mut self, cond: &str, kind: Trap) {
        if !self.traps.contains(&kind) {
            self.traps.push(kind);
        }
        self.splits += 1;
        let next = format!("b{}.s{}", self.block.0, self.splits);
        let _ = writeln!(
            self.body,
            "  br i1 {cond}, label %{}, label %{next}\n{next}:",
            kind.label()
        );
    }

    fn null_check(&mut self, base: Value) {
        let t = self.temp();
        let line = format!("{t} = icmp eq i8* {}, null", self.op(base));
        self.line(&line);
        self.trap_if(&t, Trap::NullDeref);
    }

    /// Load the length of array `base` (already null-checked) into a temp.
    fn load_len(&mut self, base: Value) -> String {
        let p = self.temp();
        let line = format!("{p} = bitcast i8* {} to i64*", self.op(base));
        self.line(&line);
        let tag = self.cx.tag(Leaf::Len);
        let n = self.temp();
        self.line(&format!("{n} = load i64, i64* {p}, align 8, !tbaa !{tag}"));
        n
    }

    /// The checks of an element access `base[index]` (also `boundscheck`):
    /// null, then `index < len` unsigned.
    fn bounds_check(&mut self, base: Value, index: Value) {
        self.null_check(base);
        let n = self.load_len(base);
        let ok = self.temp();
        let line = format!("{ok} = icmp uge i64 {}, {n}", self.op(index));
        self.line(&line);
        self.trap_if(&ok, Trap::OutOfBounds);
    }

    /// The address of `addr` as a typed pointer temp (checks emitted), its
    /// LLVM value type and TBAA tag.
    fn address(&mut self, addr: &Addr, value_ty: Type) -> (String, &'static str, usize) {
        match *addr {
            Addr::Field { base, field } => {
                self.null_check(base);
                let s = &self.cx.module.structs[field.ty.index()];
                let sty = format!("%s.{}{}", self.cx.prefix, s.name);
                let vty = llty(s.fields[field.index as usize].ty);
                let p = self.temp();
                let line = format!("{p} = bitcast i8* {} to {sty}*", self.op(base));
                self.line(&line);
                let q = self.temp();
                self.line(&format!(
                    "{q} = getelementptr inbounds {sty}, {sty}* {p}, i32 0, i32 {}",
                    field.index
                ));
                (q, vty, self.cx.tag(Leaf::Field(field)))
            }
            Addr::Elem { base, index } => {
                self.bounds_check(base, index);
                // A `null` base has no element type of its own (the access
                // always traps): the accessed value's type stands in.
                let elem = self.f.values[base.index()].ty.elem().unwrap_or(value_ty);
                let aty = array_ty(elem);
                let p = self.temp();
                let line = format!("{p} = bitcast i8* {} to {aty}*", self.op(base));
                self.line(&line);
                let q = self.temp();
                let line = format!(
                    "{q} = getelementptr inbounds {aty}, {aty}* {p}, i32 0, i32 1, i64 {}",
                    self.op(index)
                );
                self.line(&line);
                (q, llty(elem), self.cx.tag(Leaf::Elements(elem)))
            }
            Addr::Global(g) => {
                let gl = &self.cx.module.globals[g.index()];
                let vty = llty(gl.ty);
                (
                    format!("@g.{}{}", self.cx.prefix, gl.name),
                    vty,
                    self.cx.tag(Leaf::Global(g.0)),
                )
            }
        }
    }

    /// The environment step that comes before a volatile access: its
    /// arguments are the base, the index and the stored value (IR.md §6);
    /// the last says which of them the step has (the interpreter's `VF_*` bits).
    fn volatile_step(&mut self, addr: &Addr, stored: Option<Value>) {
        use interp::lower::{VF_BASE, VF_INDEX, VF_VALUE, VF_VALUE_REF};
        let (r, i, mut flags) = match *addr {
            Addr::Field { base, .. } => (self.op(base), "0".to_string(), VF_BASE),
            Addr::Elem { base, index } => (self.op(base), self.op(index), VF_BASE | VF_INDEX),
            Addr::Global(_) => ("null".to_string(), "0".to_string(), 0),
        };
        let (v, rv) = match stored {
            Some(s) if self.f.values[s.index()].ty.is_ref() => {
                flags |= VF_VALUE | VF_VALUE_REF;
                ("0".to_string(), self.op(s))
            }
            Some(s) => {
                flags |= VF_VALUE;
                (self.op(s), "null".to_string())
            }
            None => ("0".to_string(), "null".to_string()),
        };
        self.line(&format!(
            "call void @ls.volatile(i8* {r}, i64 {i}, i64 {v}, i8* {rv}, i64 {flags})"
        ));
    }

    /// Allocate `size` zeroed bytes; in the `lli` flavour, `words` arena
    /// words of an object with this `header`.
    fn alloc(&mut self, size: &str, header: u64, words: &str) -> String {
        let p = self.temp();
        if self.cx.lli {
            self.line(&format!(
                "{p} = call i8* @ls.new(i64 {header}, i64 {words})"
            ));
        } else {
            self.line(&format!(
                "{p} = call noalias i8* @calloc(i64 1, i64 {size})"
            ));
        }
        let t = self.temp();
        self.line(&format!("{t} = icmp eq i8* {p}, null"));
        self.trap_if(&t, Trap::HeapExhausted);
        p
    }

    /// A binary operation. loadstar's mnemonics are LLVM's instruction and
    /// `icmp` predicate names; the shifts mask their amount, the divisions
    /// check for zero and map `MIN / -1`.
    fn binary(&mut self, op: BinOp, a: Value, b: Value, r: &str) {
        let ty = llty(self.f.values[a.index()].ty);
        let (oa, ob, name) = (self.op(a), self.op(b), op.name());
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor => {
                self.line(&format!("{r} = {name} i64 {oa}, {ob}"));
            }
            BinOp::Shl | BinOp::Lshr | BinOp::Ashr => {
                let m = self.temp();
                self.line(&format!("{m} = and i64 {ob}, 63"));
                self.line(&format!("{r} = {name} i64 {oa}, {m}"));
            }
            BinOp::Sdiv | BinOp::Srem => {
                let z = self.temp();
                self.line(&format!("{z} = icmp eq i64 {ob}, 0"));
                self.trap_if(&z, Trap::DivByZero);
                let (m, n, both, d) = (self.temp(), self.temp(), self.temp(), self.temp());
                self.line(&format!("{m} = icmp eq i64 {oa}, {}", i64::MIN));
                self.line(&format!("{n} = icmp eq i64 {ob}, -1"));
                self.line(&format!("{both} = and i1 {m}, {n}"));
                // MIN / -1 = MIN and MIN % -1 = 0: exactly what dividing by 1 gives.
                self.line(&format!("{d} = select i1 {both}, i64 1, i64 {ob}"));
                self.line(&format!("{r} = {name} i64 {oa}, {d}"));
            }
            _ => {
                let c = self.temp();
                self.line(&format!("{c} = icmp {name} {ty} {oa}, {ob}"));
                self.line(&format!("{r} = zext i1 {c} to i64"));
            }
        }
    }

    fn cond(&mut self, c: Value) -> String {
        let t = self.temp();
        let line = format!("{t} = icmp ne i64 {}, 0", self.op(c));
        self.line(&line);
        t
    }

    fn call_args(&self, args: &[Value]) -> String {
        args.iter()
            .map(|a| self.typed(*a))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn inst(&mut self, kind: &InstKind, result: Option<Value>) {
        let r = self.result(result);
        let rty = result.map(|v| llty(self.f.values[v.index()].ty));
        match kind {
            InstKind::Binary(op, a, b) => self.binary(*op, *a, *b, &r),
            InstKind::Unary(op, a) => {
                let oa = self.op(*a);
                match op {
                    UnOp::Neg => self.line(&format!("{r} = sub i64 0, {oa}")),
                    UnOp::Not => self.line(&format!("{r} = xor i64 {oa}, -1")),
                    UnOp::Copy => {
                        let ty = rty.unwrap_or("i64");
                        self.line(&format!("{r} = select i1 true, {ty} {oa}, {ty} {oa}"))
                    }
                }
            }
            InstKind::Select(c, a, b) => {
                let t = self.cond(*c);
                let ty = rty.unwrap_or("i64");
                let line = format!(
                    "{r} = select i1 {t}, {ty} {}, {ty} {}",
                    self.op(*a),
                    self.op(*b)
                );
                self.line(&line);
            }
            InstKind::New(s) => {
                let fields = self.cx.module.structs[s.index()].fields.len();
                let header = interp::heap::struct_header(*s);
                let p = self.alloc(
                    &(8 * fields.max(1)).to_string(),
                    header,
                    &(1 + fields).to_string(),
                );
                self.line(&format!("{r} = select i1 true, i8* {p}, i8* {p}"));
            }
            InstKind::NewArray { elem, len } => {
                let n = self.op(*len);
                let bad = self.temp();
                self.line(&format!("{bad} = icmp ugt i64 {n}, 65536"));
                self.trap_if(&bad, Trap::BadLength);
                let (w, size) = (self.temp(), self.temp());
                self.line(&format!("{w} = shl i64 {n}, 3"));
                self.line(&format!("{size} = add i64 {w}, 8"));
                let words = format!("{size}.w");
                if self.cx.lli {
                    self.line(&format!("{words} = add i64 {n}, 2"));
                }
                let p = self.alloc(&size, interp::heap::array_header(*elem), &words);
                let lp = self.temp();
                self.line(&format!("{lp} = bitcast i8* {p} to i64*"));
                let tag = self.cx.tag(Leaf::Len);
                self.line(&format!("store i64 {n}, i64* {lp}, align 8, !tbaa !{tag}"));
                self.line(&format!("{r} = select i1 true, i8* {p}, i8* {p}"));
            }
            InstKind::Load { addr, volatile } => {
                if *volatile {
                    self.volatile_step(addr, None);
                }
                let ty = result.map_or(Type::I64, |v| self.f.values[v.index()].ty);
                let (p, vty, tag) = self.address(addr, ty);
                let vol = if *volatile { "volatile " } else { "" };
                self.line(&format!(
                    "{r} = load {vol}{vty}, {vty}* {p}, align 8, !tbaa !{tag}"
                ));
            }
            InstKind::Store {
                addr,
                value,
                volatile,
            } => {
                if *volatile {
                    self.volatile_step(addr, Some(*value));
                }
                let ty = self.f.values[value.index()].ty;
                let (p, vty, tag) = self.address(addr, ty);
                let vol = if *volatile { "volatile " } else { "" };
                let line = format!(
                    "store {vol}{vty} {}, {vty}* {p}, align 8, !tbaa !{tag}",
                    self.op(*value)
                );
                self.line(&line);
            }
            InstKind::Len(a) => {
                self.null_check(*a);
                let n = self.load_len(*a);
                self.line(&format!("{r} = add i64 {n}, 0"));
            }
            InstKind::Call { callee, args } => {
                let name = match callee {
                    Callee::Func(f) => format!(
                        "@{}",
                        llvm_func_name(&format!(
                            "{}{}",
                            self.cx.prefix,
                            self.cx.module.func(*f).name
                        ))
                    ),
                    Callee::Extern(e) => {
                        if only_environment(&self.cx.module.externs[e.index()]) {
                            self.line("call void @ls.may_trap()");
                        }
                        format!(
                            "@x.{}{}",
                            self.cx.prefix,
                            self.cx.module.externs[e.index()].name
                        )
                    }
                };
                let a = self.call_args(args);
                match rty {
                    Some(ty) => self.line(&format!("{r} = call {ty} {name}({a})")),
                    None => self.line(&format!("call void {name}({a})")),
                }
            }
            InstKind::Escape(v) => {
                let line = if self.f.values[v.index()].ty.is_int() {
                    format!("call void @ls.escape.i64(i64 {})", self.op(*v))
                } else {
                    format!("call void @ls.escape.ref(i8* {})", self.op(*v))
                };
                self.line(&line);
            }
            InstKind::NullCheck(a) => self.null_check(*a),
            InstKind::BoundsCheck(a, i) => self.bounds_check(*a, *i),
            InstKind::Guard(c) => {
                let t = self.temp();
                let line = format!("{t} = icmp eq i64 {}, 0", self.op(*c));
                self.line(&line);
                self.trap_if(&t, Trap::GuardFailed);
            }
            InstKind::Phi(entries) => {
                let ty = rty.unwrap_or("i64");
                let arms: Vec<String> = entries
                    .iter()
                    .filter(|(b, _)| self.cfg.is_reachable(*b))
                    .map(|(b, v)| format!("[ {}, %b{}.end ]", self.op(*v), b.0))
                    .collect();
                if arms.is_empty() {
                    // Only unreachable predecessors: the block itself is unreachable.
                    self.line(&format!("{r} = select i1 true, {ty} undef, {ty} undef"));
                } else {
                    self.line(&format!("{r} = phi {ty} {}", arms.join(", ")));
                }
            }
            InstKind::Jmp(t) => self.line(&format!("br label %b{}", t.0)),
            InstKind::Br(c, t, e) => {
                let k = self.cond(*c);
                self.line(&format!("br i1 {k}, label %b{}, label %b{}", t.0, e.0));
            }
            InstKind::Ret(v) => match v {
                Some(v) => {
                    let line = format!("ret {}", self.typed_as(*v, self.f.ret));
                    self.line(&line)
                }
                None => self.line("ret void"),
            },
            InstKind::Unreachable => {
                if !self.traps.contains(&Trap::Unreachable) {
                    self.traps.push(Trap::Unreachable);
                }
                self.line(&format!("br label %{}", Trap::Unreachable.label()));
            }
        }
    }

    /// `TY op` with the type the position requires (a `null` has no type of its own).
    fn typed_as(&self, v: Value, want: Option<Type>) -> String {
        match want {
            Some(t) => format!("{} {}", llty(t), self.op(v)),
            None => self.typed(v),
        }
    }

    fn emit(mut self, out: &mut String) {
        let f = self.f;
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{} %v{}", llty(f.values[p.index()].ty), p.0))
            .collect();
        let ret = f.ret.map_or("void", llty);
        let _ = writeln!(
            out,
            "define {ret} @{}({}) noinline nounwind {{",
            llvm_func_name(&format!("{}{}", self.cx.prefix, f.name)),
            params.join(", ")
        );
        for &b in &f.layout {
            if !self.cfg.is_reachable(b) {
                continue;
            }
            self.block = b;
            self.splits = 0;
            let _ = writeln!(self.body, "b{}:", b.0);
            let insts = &f.blocks[b.index()].insts;
            for &inst in insts {
                let data = &f.insts[inst.index()];
                if data.kind.is_terminator() {
                    // The terminator sits in a block of its own, so that phis
                    // can name it whatever checks split the block before it.
                    let _ = writeln!(self.body, "  br label %b{}.end\nb{}.end:", b.0, b.0);
                }
                self.inst(&data.kind, data.result);
            }
        }
        for kind in std::mem::take(&mut self.traps) {
            let _ = writeln!(
                self.body,
                "{}:\n  call void @ls.trap(i64 {})\n  unreachable",
                kind.label(),
                kind as i64
            );
        }
        out.push_str(&self.body);
        out.push_str("}\n");
    }
}
