//! The random program generator: fuzzer bytes in, a well-formed module out.
//!
//! [`generate`] reads every decision from an [`arbitrary::Unstructured`] in a
//! fixed order through [`choices::Choices`], so it never fails: when the bytes
//! run out every decision takes its simplest option and the program ends. The
//! programs are shaped for a load/store optimizer: several reference parameters
//! of the same and of different types, pointer chasing, arrays, globals, fresh
//! allocations, externs with and without declared effects, volatile accesses,
//! `escape`, `guard`, diamonds, bounded loops, irreducible regions, traps, and a
//! bias toward repeated accesses of one location through different SSA values.
//!
//! Accesses through values that may be null (loaded references, calls, phis)
//! and indices that may be out of bounds are usually checked first, as real
//! code does, so most inputs run to the end; every trap kind still happens.
//! About one program in twenty is a large one (150–400 instructions) that
//! keeps more than 32 locations live at once. The helper `@main` calls may be
//! recursive (depth bounded by a masked counter), and it shares the caller's
//! objects and globals.
//!
//! Submodules: [`decls`] (types, globals, externs), [`pool`] (available values),
//! [`insts`] (straight-line instruction choice), [`shapes`] (control flow),
//! [`checks`] (null and bounds checks, asserts), [`nulls`] (null bases, phi
//! cycles of references), [`big`] (the size tail's wide record, dead blocks),
//! [`floor`] (forms rare rules need, for the sweep's rule floor).

pub mod big;
pub mod checks;
pub mod choices;
pub mod decls;
pub mod floor;
pub mod insts;
pub mod nulls;
pub mod pool;
pub mod rng;
pub mod shapes;

use arbitrary::Unstructured;
use choices::Choices;
use decls::Decls;
use ir::{FuncId, FunctionBuilder, Module, Type, Value};
use pool::Pool;

/// Knobs of the generator.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Roughly how many instructions `@main` gets (the helper is extra).
    pub target_insts: usize,
    /// How deeply control-flow shapes nest.
    pub max_depth: usize,
    /// Whether to generate a helper function that `@main` may call.
    pub helper: bool,
    /// Chance (in 256ths) that a program is a large one (the size tail).
    pub tail_chance: u8,
    /// The instruction budget range of a large program.
    pub tail_insts: (usize, usize),
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            target_insts: 35,
            max_depth: 2,
            helper: true,
            tail_chance: 13,
            tail_insts: (150, 400),
        }
    }
}

impl GenConfig {
    /// The first decision of every program: its instruction budget, and
    /// whether it is in the size tail.
    fn choose_size(&self, c: &mut Choices<'_, '_>) -> (usize, bool) {
        if self.tail_chance > 0 && c.chance(self.tail_chance) {
            let (lo, hi) = self.tail_insts;
            (lo + c.below(hi.saturating_sub(lo) + 1), true)
        } else {
            (self.target_insts, false)
        }
    }
}

/// A generated program.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The module.
    pub module: Module,
    /// The function to run (`@main`).
    pub main: FuncId,
    /// Whether it is a large program of the size tail ([`GenConfig::tail_chance`]).
    pub tail: bool,
}

/// Build a module from `u`'s bytes. Never fails; always well-formed.
pub fn generate(u: &mut Unstructured<'_>, cfg: &GenConfig) -> Generated {
    generate_with(&mut Choices::new(u), cfg)
}

/// [`generate`] with the decisions read from `c`.
fn generate_with(c: &mut Choices<'_, '_>, cfg: &GenConfig) -> Generated {
    let (mut module, decls) = Decls::new_module();
    let (target, tail) = cfg.choose_size(c);
    let main_cfg = GenConfig {
        target_insts: target,
        ..cfg.clone()
    };
    let helper = if cfg.helper && c.chance(160) {
        let small = GenConfig {
            target_insts: (cfg.target_insts / 5).max(3),
            max_depth: 1,
            helper: false,
            tail_chance: 0,
            tail_insts: cfg.tail_insts,
        };
        let f = build_helper(&module, decls, c, &small);
        let ret = f.ret;
        Some((module.add_func(f), ret))
    } else {
        None
    };
    let main = {
        let mut g = Gen::new(&module, decls, c, &main_cfg, "main", helper);
        g.tail = tail;
        let n0 = g.b.param("p0", decls.t_node());
        let n1 = g.b.param("p1", decls.t_node());
        g.pool.add(n0, decls.t_node());
        g.pool.add(n1, decls.t_node());
        let extra = [
            decls.t_node(),
            decls.t_pair(),
            decls.t_pair(),
            Type::I64.array_of(),
            Type::I64,
            decls.t_node().array_of(),
        ];
        let n_extra = g.c.below(5);
        for name in &["p2", "p3", "p4", "p5"][..n_extra] {
            let ty = g.c.pick(&extra);
            let v = g.b.param(name, ty);
            g.pool.add(v, ty);
        }
        g.body();
        g.finish()
    };
    let main = module.add_func(main);
    Generated { module, main, tail }
}

fn build_helper(
    module: &Module,
    decls: &Decls,
    c: &mut Choices<'_, '_>,
    cfg: &GenConfig,
) -> ir::Function {
    let mut g = Gen::new(module, decls, c, cfg, "helper", None);
    let h = g.b.param("h", decls.t_node());
    let k = g.b.param("k", Type::I64);
    g.pool.add(h, decls.t_node());
    g.b.block("entry");
    // Sometimes recursive: at most one self-call, on `(k & 7) - 1` while it
    // is positive, so the depth stays below 8 frames.
    if g.c.chance(100) {
        let seven = g.b.iconst(7);
        let depth = g.b.binary(ir::BinOp::And, k, seven);
        g.recurse = Some((FuncId::new(module.funcs.len()), depth));
        g.pool.add(depth, Type::I64);
    } else {
        g.pool.add(k, Type::I64);
    }
    g.body_from_entry();
    g.finish()
}

/// The state of generating one function.
pub struct Gen<'m, 'c, 'a, 'b> {
    /// The function under construction.
    pub b: FunctionBuilder<'m>,
    /// Where decisions come from.
    pub c: &'c mut Choices<'a, 'b>,
    /// The module's shared declarations.
    pub d: &'m Decls,
    /// Values usable at the current point.
    pub pool: Pool,
    /// Knobs.
    pub cfg: &'m GenConfig,
    /// Current nesting depth of control-flow shapes.
    pub depth: usize,
    /// The helper function `@main` may call, with its return type.
    pub helper: Option<(FuncId, Option<Type>)>,
    /// In a recursive helper: the function itself and its depth counter
    /// (cleared once the one self-call is emitted).
    pub recurse: Option<(FuncId, Value)>,
    /// Whether this is a large program of the size tail.
    pub tail: bool,
    blocks: usize,
}

impl<'m, 'c, 'a, 'b> Gen<'m, 'c, 'a, 'b> {
    fn new(
        module: &'m Module,
        d: &'m Decls,
        c: &'c mut Choices<'a, 'b>,
        cfg: &'m GenConfig,
        name: &str,
        helper: Option<(FuncId, Option<Type>)>,
    ) -> Self {
        let mut b = FunctionBuilder::new(module, name, Some(Type::I64));
        // Room for what the budget makes (it may run over by a statement),
        // so the arenas do not grow step by step.
        let f = &mut b.func;
        f.insts.reserve(cfg.target_insts + 24);
        f.values.reserve(cfg.target_insts + 24);
        f.blocks.reserve(cfg.target_insts / 2 + 8);
        f.layout.reserve(cfg.target_insts / 2 + 8);
        Gen {
            b,
            c,
            d,
            pool: Pool::new(),
            cfg,
            depth: 0,
            helper,
            recurse: None,
            tail: false,
            blocks: 0,
        }
    }

    /// The finished function (the pool's buffers go to the next function).
    fn finish(self) -> ir::Function {
        self.pool.recycle();
        self.b.finish()
    }

    /// Whether the instruction budget still has room.
    pub fn budget_left(&self) -> bool {
        self.b.func.insts.len() < self.cfg.target_insts
    }

    /// A fresh block (not current).
    pub fn new_block(&mut self) -> ir::Block {
        self.blocks += 1;
        let mut buf = [0u8; 24];
        self.b.create_block(numbered(&mut buf, b'b', self.blocks))
    }

    /// The whole body: entry block, statements until the budget or the bytes run out, `ret`.
    fn body(&mut self) {
        self.b.block("entry");
        self.body_from_entry();
    }

    /// [`Self::body`] once the entry block exists.
    fn body_from_entry(&mut self) {
        if self.tail {
            self.wide_record();
        }
        self.region(usize::MAX);
        if self.c.chance(96) {
            let v = self.any_value();
            self.b.escape(v);
        }
        let r = self.int();
        self.b.ret(Some(r));
        if self.c.chance(10) {
            self.dead_block();
        }
    }

    /// Up to `max_stmts` statements at the current point.
    pub fn region(&mut self, max_stmts: usize) {
        let mut n = 0;
        while n < max_stmts && self.budget_left() && self.c.more() {
            self.statement();
            n += 1;
        }
    }

    /// An i64 operand: a small or extreme constant, or an available value.
    pub fn int(&mut self) -> Value {
        const CONSTS: [i64; 10] = [0, 1, 2, -1, 3, 7, 100, i64::MIN, 5, 64];
        let n = self.pool.count(Type::I64);
        if n > 0 && self.c.weighted(&[2, 5]) == 1 {
            let k = self.c.below(n);
            return self.pool.nth(Type::I64, n - 1 - k).expect("int in pool");
        }
        let k = self.c.pick(&CONSTS);
        self.b.iconst(k)
    }

    /// An int of the pool (any, counted from the newest), or an [`Self::int`]
    /// operand when the pool has none.
    pub fn pool_int(&mut self) -> Value {
        let n = self.pool.count(Type::I64);
        if n == 0 {
            return self.int();
        }
        let k = self.c.below(n);
        self.pool.nth(Type::I64, n - 1 - k).expect("int in pool")
    }

    /// An available reference of type `ty`, creating a fresh one when there is none.
    pub fn ref_of(&mut self, ty: Type) -> Value {
        let n = self.pool.count(ty);
        if n > 0 {
            // Half the time one of the oldest values (parameters first): fewer null chains.
            let k = if self.c.chance(128) {
                self.c.below(n.min(2))
            } else {
                self.c.below(n)
            };
            return self.pool.nth(ty, k).expect("ref in pool");
        }
        self.fresh(ty)
    }

    /// A fresh allocation of `ty` (an object, or a small array), added to the pool.
    pub fn fresh(&mut self, ty: Type) -> Value {
        let v = match ty.as_struct() {
            Some(s) => self.b.new_object(s),
            None => {
                let elem = ty.elem().unwrap_or(Type::I64);
                let len = 2 + self.c.below(3) as i64;
                let len = self.b.iconst(len);
                self.b.new_array(elem, len)
            }
        };
        self.pool.add(v, ty);
        v
    }

    /// A value for a slot of type `ty`: an int operand, or a reference (sometimes null).
    pub fn value_of(&mut self, ty: Type) -> Value {
        if ty.is_int() {
            return self.int();
        }
        if self.c.chance(12) {
            return self.b.null();
        }
        self.ref_of(ty)
    }

    /// Any available value (int or reference), for `escape`.
    pub fn any_value(&mut self) -> Value {
        if self.c.chance(80) {
            let tys = self.d.ref_types();
            let ty = self.c.pick(&tys);
            if self.pool.count(ty) > 0 {
                return self.ref_of(ty);
            }
        }
        self.int()
    }

    /// A branch condition: an available int, or a fresh comparison.
    pub fn cond(&mut self) -> Value {
        use ir::BinOp::*;
        if self.c.chance(100) {
            return self.int();
        }
        let op = self.c.pick(&[Slt, Eq, Ne, Sgt, Ult, Sle]);
        let a = self.int();
        let b = self.int();
        self.b.binary(op, a, b)
    }
}

/// `prefix` and the decimal digits of `n`, written in `buf` (a block name,
/// without the formatting machinery: every block needs one).
fn numbered(buf: &mut [u8; 24], prefix: u8, mut n: usize) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    at -= 1;
    buf[at] = prefix;
    std::str::from_utf8(&buf[at..]).expect("ASCII digits")
}

/// Generate the program for a 64-bit seed (its bytes come from [`rng::Rng`];
/// a program of the size tail gets proportionally more of them): the program
/// [`generate`] makes of [`seed_bytes`]`(seed)`, its bytes made as it reads them.
pub fn generate_from_seed(seed: u64, cfg: &GenConfig) -> Generated {
    generate_with(&mut Choices::seeded(seed, seed_len(seed, cfg)), cfg)
}

/// The generator bytes of seed `seed`: [`generate`] on them is
/// [`generate_from_seed`]`(seed)` (64 bytes per budgeted instruction).
pub fn seed_bytes(seed: u64, cfg: &GenConfig) -> Vec<u8> {
    let mut bytes = vec![0u8; seed_len(seed, cfg)];
    rng::Rng::new(seed).fill(&mut bytes);
    bytes
}

/// How many bytes seed `seed` has (the size decision is read from its first ones).
fn seed_len(seed: u64, cfg: &GenConfig) -> usize {
    let (target, _) = cfg.choose_size(&mut Choices::seeded(seed, 8));
    64 * target.max(cfg.target_insts).max(8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rng::Rng;

    fn gen_from(bytes: &[u8]) -> Generated {
        let mut u = Unstructured::new(bytes);
        generate(&mut u, &GenConfig::default())
    }

    #[test]
    fn empty_input_gives_a_minimal_valid_program() {
        let g = gen_from(&[]);
        assert!(ir::verify_module(&g.module).is_ok());
        assert_eq!(g.module.func(g.main).name, "main");
        assert!(g.module.func(g.main).placed_inst_count() <= 2);
    }

    #[test]
    fn a_seed_makes_the_program_of_its_bytes() {
        for tail_chance in [0, 13, 255] {
            let cfg = GenConfig {
                tail_chance,
                ..GenConfig::default()
            };
            for seed in (0..40).chain([u64::MAX]) {
                let bytes = seed_bytes(seed, &cfg);
                let a = generate(&mut Unstructured::new(&bytes), &cfg);
                let b = generate_from_seed(seed, &cfg);
                assert_eq!(a.module, b.module, "seed {seed}");
                assert_eq!((a.main, a.tail), (b.main, b.tail), "seed {seed}");
            }
        }
    }

    #[test]
    fn numbered_names_are_the_formatted_ones() {
        for n in [0, 1, 9, 10, 99, 100, 12345, usize::MAX] {
            assert_eq!(numbered(&mut [0; 24], b'b', n), format!("b{n}"));
        }
    }

    #[test]
    fn same_bytes_same_program() {
        let mut bytes = vec![0u8; 600];
        Rng::new(3).fill(&mut bytes);
        let a = ir::print_module(&gen_from(&bytes).module);
        let b = ir::print_module(&gen_from(&bytes).module);
        assert_eq!(a, b);
    }
}
