//! Checked accesses: the null checks and bounds checks real code puts before
//! a dereference, and asserts that end in `unreachable`. A check is a
//! triangle — `br cond, then, join` — whose `then` block holds the access;
//! values defined inside stay inside. Most accesses through a value that may
//! be null, and most indices that may be out of bounds, get a check, so that
//! deeper code runs on most inputs; the rest still trap.

use super::Gen;
use ir::{Addr, BinOp, Block, InstKind, Value};

/// Open checks, innermost last: the blocks where control continues once the
/// checked code ends.
#[must_use]
#[derive(Default)]
pub struct Open(Vec<Block>);

impl Open {
    /// Whether no check is open.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Gen<'_, '_, '_, '_> {
    /// Whether `v` may be null at run time as far as the generator knows: not
    /// a fresh allocation. Parameters count as non-null (inputs rarely bind
    /// them to null).
    pub fn may_be_null(&self, v: Value) -> bool {
        match self.b.func.def_inst(v) {
            None => self.b.func.params.iter().all(|&p| p != v),
            Some(i) => !matches!(
                self.b.func.inst(i).kind,
                InstKind::New(_) | InstKind::NewArray { .. }
            ),
        }
    }

    /// Open a triangle entered only when `cond` holds.
    pub fn open_when(&mut self, cond: Value, open: &mut Open) {
        let then_b = self.new_block();
        let join = self.new_block();
        self.b.br(cond, then_b, join);
        self.b.switch_to(then_b);
        self.pool.push_scope();
        open.0.push(join);
    }

    /// Close the checks opened by [`Self::open_when`], innermost first.
    pub fn close(&mut self, open: Open) {
        for join in open.0.into_iter().rev() {
            self.pool.pop_scope();
            self.b.jmp(join);
            self.b.switch_to(join);
        }
    }

    /// The checks before accessing `addr`: see [`Self::check_null`] and [`Self::check_bounds`].
    pub fn check_addr(&mut self, addr: &Addr) -> Open {
        let mut open = Open::default();
        match *addr {
            Addr::Field { base, .. } => self.check_null(base, &mut open),
            Addr::Elem { base, index } => {
                self.check_null(base, &mut open);
                self.check_bounds(base, index, &mut open);
            }
            Addr::Global(_) => {}
        }
        open
    }

    /// Before dereferencing `base`: usually a null check when it may be null.
    pub fn check_null(&mut self, base: Value, open: &mut Open) {
        if self.may_be_null(base) && self.c.weighted(&[1, 10]) == 1 {
            let null = self.b.null();
            let c = self.b.binary(BinOp::Ne, base, null);
            self.open_when(c, open);
        }
    }

    /// Before accessing `base[index]`: usually a bounds check (`index <u len`)
    /// unless the index is the constant 0 of an array known to be non-empty.
    pub fn check_bounds(&mut self, base: Value, index: Value, open: &mut Open) {
        let zero = self.b.func.as_const(index) == Some(0);
        if (!zero || self.may_be_null(base)) && self.c.weighted(&[1, 5]) == 1 {
            let n = self.b.len(base);
            let c = self.b.binary(BinOp::Ult, index, n);
            self.open_when(c, open);
        }
    }

    /// A condition for a guard or an assert: `odds` times in `odds + 1` one
    /// that holds (`x != 12345`), otherwise any condition.
    pub fn mostly_true(&mut self, odds: u32) -> Value {
        if self.c.weighted(&[1, odds]) == 0 {
            self.cond()
        } else {
            let x = self.int();
            let k = self.b.iconst(12345);
            self.b.binary(BinOp::Ne, x, k)
        }
    }

    /// `br c, ok, fail` with `fail: unreachable` — an assertion, mostly one that holds.
    pub fn assert(&mut self) {
        let c = self.mostly_true(4);
        let ok = self.new_block();
        let fail = self.new_block();
        self.b.br(c, ok, fail);
        self.b.switch_to(fail);
        self.b.unreachable();
        self.b.switch_to(ok);
    }
}
