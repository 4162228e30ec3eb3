//! Shapes for the sweep's rule floor (issue 10): forms a rule needs that the
//! rest of the generator makes too rarely for the rule to fire in 1 program
//! in 1,000 — an unsigned comparison with 0 that always holds (`ule 0, x`,
//! `uge x, 0`), a comparison masked with an even constant, a loop whose
//! latch has lost a location the loop carries, a loop with no exit that
//! stores (entered on almost no input: a run that enters it runs out of fuel,
//! which makes the input inconclusive), a loop that accumulates into a
//! location it first reads, a loop whose first trip certainly traps, a
//! branch whose two arms are the same certain trap, a comparison with the
//! greatest value or all ones that is always decided, a `newarray`
//! whose length a guard just made negative, a select over the operands of
//! its own (in)equality, a branch on `or x, K`, a select whose condition a
//! later branch decides, a branch whose two arms return the same
//! parameter or constant, and a store just before a loop tested at the top
//! that stores the location again. Most of these come with a near miss the rule
//! must leave alone (an ordering comparison, `K` = 0, different returned
//! values).

use super::checks::Open;
use super::Gen;
use ir::{Addr, BinOp, Block, StructId, Type, Value};

impl Gen<'_, '_, '_, '_> {
    /// One of the floor's shapes (those that make blocks only where control
    /// flow may nest).
    pub fn floor_shape(&mut self) {
        let nest = self.depth < self.cfg.max_depth;
        match self.c.weighted(&[6, 6, 2, 2, 2, 1, 2, 2, 1, 5, 3, 2, 2, 2]) {
            13 if nest => self.entry_store_loop(),
            12 if nest => self.equal_returns(),
            11 if nest => self.select_decided_below(),
            10 if nest => self.branch_on_or(),
            9 => self.select_of_compared(),
            8 if nest => self.bad_length_after_guard(),
            7 => self.extreme_comparison(),
            2 if nest => self.latch_reload(),
            3 if nest => self.store_spin(),
            4 if nest => self.accumulating_loop(),
            5 if nest => self.first_trip_trap(),
            6 if nest => self.equal_trapping_arms(),
            1 => self.masked_comparison(),
            _ => self.unsigned_at_least_zero(),
        }
    }

    /// `ule 0, x` or `uge x, 0`: always 1 (peeps' `ule_zero`, after the
    /// flip of `uge`).
    fn unsigned_at_least_zero(&mut self) {
        let x = self.int();
        let zero = self.b.iconst(0);
        let v = if self.c.chance(128) {
            self.b.binary(BinOp::Ule, zero, x)
        } else {
            self.b.binary(BinOp::Uge, x, zero)
        };
        self.pool.add(v, Type::I64);
    }

    /// `and (cmp a, b), c` with `c` even: 0, since a comparison is 0 or 1
    /// (peeps' `and_bool_even`); sometimes `c` odd (`and_bool_odd`).
    fn masked_comparison(&mut self) {
        let op = {
            use BinOp::*;
            self.c.pick(&[Eq, Ne, Slt, Sle, Ult, Ule])
        };
        let a = self.int();
        let b = self.int();
        let t = self.b.binary(op, a, b);
        let k = self.c.pick(&[2, 4, 64, 100, -2, i64::MIN, 3, -1]);
        let k = self.b.iconst(k);
        let v = self.b.binary(BinOp::And, t, k);
        self.pool.add(v, Type::I64);
    }

    /// `@gi` (with chance `global` in 256), else an integer field of a
    /// reference to a `s` object.
    fn int_location(&mut self, global: u8, s: StructId) -> Addr {
        if self.c.chance(global) {
            return Addr::Global(self.d.globals[0]);
        }
        let base = self.ref_of(Type::object(s));
        let field = self.c.pick(&self.d.int_fields_of(s));
        Addr::Field { base, field }
    }

    /// A location accessed before a counted loop whose body loads it and
    /// stores a new value to it (so LSE carries it in a header phi), and
    /// whose latch LSE's state no longer knows it at: the body ends in an
    /// irreducible pair of blocks (a block entered by an edge not yet
    /// visited starts with nothing known), or the latch is also the target
    /// of a block no path reaches. LSE completes the phi with a load at the
    /// end of the latch (`lse.latch_loads_inserted`).
    fn latch_reload(&mut self) {
        let addr = self.int_location(96, self.d.node);
        let open = self.check_addr(&addr);
        let before = self.b.load(addr.clone(), false);
        self.pool.add(before, Type::I64);
        let pre = self.b.current_block();
        let header = self.new_block();
        let body = self.new_block();
        let exit = self.new_block();
        let trips = 1 + self.c.below(4) as i64;
        self.b.jmp(header);
        self.b.switch_to(header);
        let i = self.b.phi(Type::I64, vec![]);
        let k = self.b.iconst(trips);
        let c = self.b.binary(BinOp::Slt, i, k);
        self.b.br(c, body, exit);
        self.b.switch_to(body);
        let v = self.b.load(addr.clone(), false);
        let op = self.c.pick(&[BinOp::Add, BinOp::Xor, BinOp::Mul]);
        let x = self.int();
        let w = self.b.binary(op, v, x);
        self.b.store(addr.clone(), w, false);
        let latch = if self.c.chance(128) {
            self.irreducible_tail(i)
        } else {
            let latch = self.new_block();
            self.b.jmp(latch);
            let dead = self.new_block();
            self.b.switch_to(dead);
            self.b.jmp(latch);
            latch
        };
        self.b.switch_to(latch);
        self.end_counted_loop((pre, header, exit), i, addr, open);
    }

    /// The end of a counted loop over a location: the current block (the
    /// latch) adds 1 to `i` and jumps to `header`, `i`'s phi takes 0 from
    /// `pre`; then `exit` is current, `i` and `addr` go to the pool and the
    /// checks `open` opened close.
    fn end_counted_loop(
        &mut self,
        (pre, header, exit): (Block, Block, Block),
        i: Value,
        addr: Addr,
        open: Open,
    ) {
        let latch = self.b.current_block();
        let one = self.b.iconst(1);
        let i1 = self.b.binary(BinOp::Add, i, one);
        self.b.jmp(header);
        let zero = self.b.iconst(0);
        self.b.set_phi_entries(i, vec![(pre, zero), (latch, i1)]);
        self.b.switch_to(exit);
        self.pool.add(i, Type::I64);
        self.pool.note_addr(addr);
        self.close(open);
    }

    /// Two empty blocks `A` and `B` that branch to each other (the current
    /// block enters `A` on the first trip of loop counter `i`, `B` after)
    /// until a counter from 0 reaches 2, then to a new block, which is
    /// returned (not yet current).
    fn irreducible_tail(&mut self, i: Value) -> Block {
        let one = self.b.iconst(1);
        let c = self.b.binary(BinOp::Slt, i, one);
        let from = self.b.current_block();
        let (a, bb, out) = (self.new_block(), self.new_block(), self.new_block());
        self.b.br(c, a, bb);
        let zero = self.b.iconst(0);
        let k = self.b.iconst(2);
        let mut ends = Vec::with_capacity(2);
        for (this, other) in [(a, bb), (bb, a)] {
            self.b.switch_to(this);
            let n = self.b.phi(Type::I64, vec![]);
            let n1 = self.b.binary(BinOp::Add, n, one);
            let more = self.b.binary(BinOp::Slt, n1, k);
            self.b.br(more, other, out);
            ends.push((n, n1));
        }
        let [(na, na1), (nb, nb1)] = [ends[0], ends[1]];
        self.b.set_phi_entries(na, vec![(from, zero), (bb, nb1)]);
        self.b.set_phi_entries(nb, vec![(from, zero), (a, na1)]);
        out
    }

    /// `br x == K, L, join` with `L` a loop with no exit that only stores
    /// (to globals and to the fields of a fresh object: nothing in it can
    /// trap), so DCE deletes its stores (`dce.stores_in_loops_without_exit`).
    /// `K` is a number no input holds, or (one time in eight) a small one
    /// that some inputs hold: those inputs run out of fuel (inconclusive).
    fn store_spin(&mut self) {
        let c = self.rarely_true();
        let obj = self.b.new_object(self.d.pair);
        let spin = self.new_block();
        let join = self.new_block();
        self.b.br(c, spin, join);
        self.b.switch_to(spin);
        self.pool.push_scope();
        let stores = 1 + self.c.below(3);
        for _ in 0..stores {
            let addr = if self.c.chance(128) {
                Addr::Global(self.c.pick(&self.d.globals))
            } else {
                Addr::Field {
                    base: obj,
                    field: self.c.pick(self.d.fields_of(self.d.pair)),
                }
            };
            let ty = self.b.addr_type(&addr);
            let v = self.value_of(ty);
            self.b.store(addr, v, false);
        }
        self.pool.pop_scope();
        self.b.jmp(spin);
        self.b.switch_to(join);
        self.pool.add(obj, self.d.t_pair());
    }

    /// A rotated loop (`i` from 0, at most four trips) whose body first
    /// loads a location nothing before it accessed, then stores a new value
    /// to it: LSE promotes it to a register, with the load hoisted into the
    /// pre-header (`lse.promoted_loads_hoisted`).
    fn accumulating_loop(&mut self) {
        let addr = self.int_location(128, self.d.pair);
        let open = self.check_addr(&addr);
        let x = self.int();
        let op = self.c.pick(&[BinOp::Add, BinOp::Xor, BinOp::Sub]);
        let trips = 1 + self.c.below(4) as i64;
        let pre = self.b.current_block();
        let body = self.new_block();
        let exit = self.new_block();
        self.b.jmp(body);
        self.b.switch_to(body);
        let i = self.b.phi(Type::I64, vec![]);
        let v = self.b.load(addr.clone(), false);
        let w = self.b.binary(op, v, x);
        self.b.store(addr.clone(), w, false);
        let one = self.b.iconst(1);
        let i1 = self.b.binary(BinOp::Add, i, one);
        let k = self.b.iconst(trips);
        let c = self.b.binary(BinOp::Slt, i1, k);
        self.b.br(c, body, exit);
        let zero = self.b.iconst(0);
        self.b.set_phi_entries(i, vec![(pre, zero), (body, i1)]);
        self.b.switch_to(exit);
        self.pool.add(w, Type::I64);
        self.pool.note_addr(addr);
        self.close(open);
    }

    /// A store of a location just before a loop tested at the top (`i` from
    /// 0, zero to three trips) whose body stores it again: LSE promotes it,
    /// and as the loop may exit before its store, the exit stores take over
    /// the pre-header's store (`lse.promoted_entry_stores_sunk`).
    fn entry_store_loop(&mut self) {
        let addr = self.int_location(128, self.d.pair);
        let open = self.check_addr(&addr);
        let (first, x) = (self.int(), self.int());
        let op = self.c.pick(&[BinOp::Add, BinOp::Xor, BinOp::Mul]);
        let k = self.b.iconst(self.c.below(4) as i64);
        self.b.store(addr.clone(), first, false);
        let pre = self.b.current_block();
        let (header, body, exit) = (self.new_block(), self.new_block(), self.new_block());
        self.b.jmp(header);
        self.b.switch_to(header);
        let i = self.b.phi(Type::I64, vec![]);
        let c = self.b.binary(BinOp::Slt, i, k);
        self.b.br(c, body, exit);
        self.b.switch_to(body);
        let w = self.b.binary(op, i, x);
        self.b.store(addr.clone(), w, false);
        self.end_counted_loop((pre, header, exit), i, addr, open);
    }

    /// A list walk whose cursor starts at `null` and whose header reads
    /// through it before any test: the first trip traps (`null_deref`), which
    /// DCE sees by putting the phis' values from before the loop in their
    /// place (`dce.first_visit_traps`).
    fn first_trip_trap(&mut self) {
        let next = self.ref_of(self.d.t_node());
        let trips = 1 + self.c.below(3) as i64;
        let pre = self.b.current_block();
        let header = self.new_block();
        let latch = self.new_block();
        let exit = self.new_block();
        self.b.jmp(header);
        self.b.switch_to(header);
        let n = self.b.phi(self.d.t_node(), vec![]);
        let i = self.b.phi(Type::I64, vec![]);
        let v = self.b.load_field(n, self.d.fields[0]);
        let k = self.b.iconst(trips);
        let c = self.b.binary(BinOp::Slt, i, k);
        self.b.br(c, latch, exit);
        self.b.switch_to(latch);
        let one = self.b.iconst(1);
        let i1 = self.b.binary(BinOp::Add, i, one);
        self.b.jmp(header);
        let (null, zero) = (self.b.null(), self.b.iconst(0));
        self.b.set_phi_entries(n, vec![(pre, null), (latch, next)]);
        self.b.set_phi_entries(i, vec![(pre, zero), (latch, i1)]);
        self.b.switch_to(exit);
        self.pool.add(v, Type::I64);
    }

    /// `br x == K, T, join`, with `T` a branch on a comparison whose two
    /// arms are the same certain trap (`nullcheck null` or `guard 0`) then
    /// `unreachable`: peeps makes the branch a jump
    /// (`peeps.equal_trapping_arms`). `K` is a number no input holds, or
    /// (one time in eight) a small one that some inputs hold, so few inputs
    /// trap here.
    fn equal_trapping_arms(&mut self) {
        let (left, right, join) = self.rare_fork();
        let null_trap = self.c.chance(128);
        for arm in [left, right] {
            self.b.switch_to(arm);
            if null_trap {
                let null = self.b.null();
                self.b.nullcheck(null);
            } else {
                let zero = self.b.iconst(0);
                self.b.guard(zero);
            }
            self.b.unreachable();
        }
        self.b.switch_to(join);
    }

    /// A comparison with i64 MAX or all ones that is always decided:
    /// `slt MAX, x` (or `sgt x, MAX`), `sle x, MAX` (or `sge MAX, x`),
    /// `ule x, -1` (or `uge -1, x`): peeps' `slt_max`, `sle_max` and
    /// `ule_ones`, after the flip of the second forms.
    fn extreme_comparison(&mut self) {
        let x = self.int();
        let (max, ones) = (self.b.iconst(i64::MAX), self.b.iconst(-1));
        let v = match self.c.below(6) {
            0 => self.b.binary(BinOp::Slt, max, x),
            1 => self.b.binary(BinOp::Sgt, x, max),
            2 => self.b.binary(BinOp::Sle, x, max),
            3 => self.b.binary(BinOp::Sge, max, x),
            4 => self.b.binary(BinOp::Ule, x, ones),
            _ => self.b.binary(BinOp::Uge, ones, x),
        };
        self.pool.add(v, Type::I64);
    }

    /// `br x == K, T, join`, with `T` `guard (slt n, 0)` then `newarray
    /// i64, n`: a certain `bad_length` trap (`dce.bad_lengths_after_guards`),
    /// on few inputs (see [`Self::rarely_true`]).
    fn bad_length_after_guard(&mut self) {
        let c = self.rarely_true();
        let (test, join) = (self.new_block(), self.new_block());
        self.b.br(c, test, join);
        self.b.switch_to(test);
        let n = self.int();
        let zero = self.b.iconst(0);
        let negative = self.b.binary(BinOp::Slt, n, zero);
        self.b.guard(negative);
        self.b.new_array(Type::I64, n);
        self.b.jmp(join);
        self.b.switch_to(join);
    }

    /// `br x == K, T, join`, with `T` `br (slt a, b), left, right`: the
    /// two arms and `join` of a fork few inputs reach (see
    /// [`Self::rarely_true`]); all three empty, none current.
    fn rare_fork(&mut self) -> (Block, Block, Block) {
        let c = self.rarely_true();
        let (test, join) = (self.new_block(), self.new_block());
        self.b.br(c, test, join);
        self.b.switch_to(test);
        let (a, b) = (self.int(), self.int());
        let d = self.b.binary(BinOp::Slt, a, b);
        let (left, right) = (self.new_block(), self.new_block());
        self.b.br(d, left, right);
        (left, right, join)
    }

    /// `select (ne a, b), a, b` or `select (eq a, b), b, a` over integers or
    /// (one time in four) `Node` references, `b` sometimes a constant or
    /// `null`: `a` (peeps' `select_ne_arms`, `select_eq_arms`). Half the
    /// time the arms are swapped: then it is `b` (`select_ne_arms_swapped`,
    /// `select_eq_arms_swapped`). One time in four an integer one compares
    /// with `slt` or `ult` instead: a minimum or maximum, which the rules
    /// leave.
    fn select_of_compared(&mut self) {
        let (a, b, ty) = if self.c.chance(64) {
            let ty = self.d.t_node();
            (self.ref_of(ty), self.value_of(ty), ty)
        } else {
            (self.pool_int(), self.int(), Type::I64)
        };
        let op = if ty.is_int() && self.c.chance(64) {
            self.c.pick(&[BinOp::Slt, BinOp::Ult])
        } else if self.c.chance(128) {
            BinOp::Eq
        } else {
            BinOp::Ne
        };
        let t = self.b.binary(op, a, b);
        let swapped = self.c.chance(128);
        let (x, y) = if (op == BinOp::Eq) != swapped {
            (b, a)
        } else {
            (a, b)
        };
        let v = self.b.select(t, x, y);
        self.pool.add(v, ty);
    }

    /// `br (or x, K), T, F` joined by a phi of one operation of `x` in each
    /// arm: with `K` non-zero the `or` is never 0, so the branch goes to `T`
    /// (peeps' `br_or_nonzero`); one time in four `K` is 0 and it stays.
    fn branch_on_or(&mut self) {
        let x = self.pool_int();
        let k = if self.c.chance(64) {
            0
        } else {
            self.c.pick(&[1, 4, 8, 3, i64::MIN])
        };
        let k = self.b.iconst(k);
        let c = self.b.binary(BinOp::Or, x, k);
        self.arms_on(c, x);
    }

    /// `s = select c, x, K` (or `select c, K, x`), `c` a comparison of a
    /// pooled integer, then `br c, T, F` with a use of `s` in each arm
    /// (merged by a phi): in the arm where `c` picks `K`, `s` is `K`
    /// (`dce.select_arms_known_from_edges`); in the other it stays.
    fn select_decided_below(&mut self) {
        let op = self.c.pick(&[BinOp::Slt, BinOp::Eq, BinOp::Ne, BinOp::Ult]);
        let a = self.pool_int();
        let b = self.int();
        let c = self.b.binary(op, a, b);
        let x = self.int();
        let k = self.c.pick(&[0, 1, 7, -1]);
        let k = self.b.iconst(k);
        let s = if self.c.chance(128) {
            self.b.select(c, x, k)
        } else {
            self.b.select(c, k, x)
        };
        self.arms_on(c, s);
    }

    /// `br c, T, F`, each arm one operation of `v` with an integer of the
    /// program, merged by a phi at the join (current after), which goes to
    /// the pool.
    fn arms_on(&mut self, c: Value, v: Value) {
        let (t, f, join) = (self.new_block(), self.new_block(), self.new_block());
        self.b.br(c, t, f);
        let mut ends = [(t, v); 2];
        for (arm, end) in [t, f].into_iter().zip(&mut ends) {
            self.b.switch_to(arm);
            let op = self
                .c
                .pick(&[BinOp::Add, BinOp::Xor, BinOp::Mul, BinOp::Sub]);
            let y = self.int();
            *end = (arm, self.b.binary(op, v, y));
            self.b.jmp(join);
        }
        self.b.switch_to(join);
        let phi = self.b.phi(Type::I64, ends.to_vec());
        self.pool.add(phi, Type::I64);
    }

    /// `br x == K, T, join`, with `T` a branch on a comparison whose two
    /// arms both `ret` the same integer parameter or constant: DCE merges
    /// the two return blocks (`dce.return_blocks_merged`). One time in four
    /// the second arm returns another value and both stay. Few inputs
    /// return here (see [`Self::rarely_true`]).
    fn equal_returns(&mut self) {
        let (left, right, join) = self.rare_fork();
        let v = self.returnable();
        let w = if self.c.chance(64) {
            self.returnable()
        } else {
            v
        };
        for (arm, r) in [(left, v), (right, w)] {
            self.b.switch_to(arm);
            self.b.ret(Some(r));
        }
        self.b.switch_to(join);
    }

    /// An integer parameter of the function (one time in two, when it has
    /// one) or a small constant: a value a lone `ret` may merge on.
    fn returnable(&mut self) -> Value {
        let params = &self.b.func.params;
        let ints: Vec<Value> = params
            .iter()
            .copied()
            .filter(|&p| self.b.func.value_type(p) == Type::I64)
            .collect();
        if !ints.is_empty() && self.c.chance(128) {
            return self.c.pick(&ints);
        }
        let k = self.c.pick(&[0, 1, -1, 7]);
        self.b.iconst(k)
    }

    /// `x == K` for a pooled integer `x`, with `K` a number no input holds
    /// or (one time in eight) a small one that some inputs hold: the guard
    /// of a shape few inputs should enter.
    fn rarely_true(&mut self) -> Value {
        let x = self.pool_int();
        let k = if self.c.chance(32) { 5 } else { 12345 };
        let k = self.b.iconst(k);
        self.b.binary(BinOp::Eq, x, k)
    }
}
