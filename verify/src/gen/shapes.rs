//! Control-flow shapes: diamonds and triangles with merging phis, counted
//! loops (a counter phi compared with a small constant, so the trip count is
//! bounded) that may carry a reference around for pointer chasing, and an
//! irreducible pair of blocks entered from both sides, bounded the same way.

use super::Gen;
use ir::{Addr, BinOp, Block, Type, Value};

impl Gen<'_, '_, '_, '_> {
    /// A statement budget for a nested region.
    fn nested_len(&mut self) -> usize {
        1 + self.c.below(5)
    }

    /// A type for a merging phi.
    fn phi_type(&mut self) -> Type {
        if self.c.weighted(&[3, 1]) == 0 {
            Type::I64
        } else {
            self.d.t_node()
        }
    }

    /// Generate a nested region in its own scope; returns the value of type
    /// `ty` chosen at its end (for a phi) and the block it ends in.
    fn scoped_region(&mut self, ty: Option<Type>) -> (Option<Value>, Block) {
        self.pool.push_scope();
        self.depth += 1;
        let n = self.nested_len();
        self.region(n);
        self.depth -= 1;
        let v = ty.map(|t| self.merged_value(t));
        let end = self.b.current_block();
        self.pool.pop_scope();
        (v, end)
    }

    /// The value a region hands to the phi that merges it: any value of the
    /// type; often the newest one (after a nested diamond, its phi); or, for
    /// integers, a constant expression that only folding reveals — so phis
    /// form webs over constants, as flags and inlined constants do.
    fn merged_value(&mut self, ty: Type) -> Value {
        let n = self.pool.count(ty);
        match self.c.weighted(&[3, 2, 2]) {
            1 if n > 0 => self.pool.nth(ty, n - 1).expect("newest"),
            2 if ty.is_int() => {
                let op = self.c.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul]);
                let a = self.c.pick(&[1, 2, 3, 4]);
                let b = self.c.pick(&[0, 1, 2, 5]);
                let (a, b) = (self.b.iconst(a), self.b.iconst(b));
                self.b.binary(op, a, b)
            }
            _ => self.value_of(ty),
        }
    }

    /// `br c, then, else` (or a triangle) joined by a phi.
    pub fn diamond(&mut self) {
        let ty = self.c.chance(200).then(|| self.phi_type());
        // A diamond that merges a value usually tests a value of the program
        // (a constant condition folds the merge away before anything sees it).
        let n = self.pool.count(Type::I64);
        let c = if ty.is_some() && n > 0 && self.c.chance(160) {
            let k = self.c.below(n);
            self.pool.nth(Type::I64, k).expect("int in pool")
        } else {
            self.cond()
        };
        let head = self.b.current_block();
        let then_b = self.new_block();
        let join = self.new_block();
        let triangle = self.c.chance(64);
        // Sometimes each arm also hands on an operation of its value, whose
        // phi equals the same operation of the phis (GVN's phi of ops).
        let of_ops =
            (!triangle && ty.is_some_and(|t| t.is_int()) && self.c.chance(48)).then(|| {
                self.c
                    .pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Xor])
            });
        let else_b = if triangle { join } else { self.new_block() };
        // A triangle's other phi entry comes from before the branch: choose it now.
        let head_value = match (triangle, ty) {
            (true, Some(t)) => Some(self.value_of(t)),
            _ => None,
        };
        self.b.br(c, then_b, else_b);
        self.b.switch_to(then_b);
        let (tv, t_end) = self.scoped_region(ty);
        let t_op = of_ops.zip(tv).map(|(op, v)| self.arm_op(op, v));
        self.b.jmp(join);
        let (ev, e_end, e_op) = if triangle {
            (head_value, head, None)
        } else {
            self.b.switch_to(else_b);
            let (v, end) = self.scoped_region(ty);
            let op = of_ops.zip(v).map(|(op, v)| self.arm_op(op, v));
            self.b.jmp(join);
            (v, end, op)
        };
        self.b.switch_to(join);
        if let (Some(ty), Some(tv), Some(ev)) = (ty, tv, ev) {
            let phi = self.b.phi(ty, vec![(t_end, tv), (e_end, ev)]);
            self.pool.add(phi, ty);
            // The phis of the operations and of their other operands (the
            // operation of the phis comes after every phi).
            let ops = of_ops
                .zip(t_op.zip(e_op))
                .map(|(op, ((ta, tr), (ea, er)))| {
                    let q = self.b.phi(ty, vec![(t_end, ta), (e_end, ea)]);
                    let x = self.b.phi(ty, vec![(t_end, tr), (e_end, er)]);
                    (op, q, x)
                });
            // Sometimes the same merge twice (as duplicated code leaves it).
            if self.c.chance(40) {
                let dup = self.b.phi(ty, vec![(t_end, tv), (e_end, ev)]);
                self.pool.add(dup, ty);
            }
            // A test of the merged value against a constant, as after an `if`.
            if ty.is_int() && self.c.chance(100) {
                let op = self.c.pick(&[BinOp::Slt, BinOp::Eq, BinOp::Ne, BinOp::Sgt]);
                let k = self.c.pick(&[0, 1, 5, 10, 100]);
                let k = self.b.iconst(k);
                let t = self.b.binary(op, phi, k);
                self.pool.add(t, Type::I64);
                // The phi stays the newest value: an enclosing region may end with it.
                self.pool.add(phi, ty);
            }
            if let Some((op, q, x)) = ops {
                let y = self.b.binary(op, phi, q);
                self.pool.add(x, ty);
                self.pool.add(y, ty);
                self.pool.add(phi, ty);
            }
        }
    }

    /// `op v, a` for an integer `a` of the program, emitted where the
    /// builder is: the other operand and the result.
    fn arm_op(&mut self, op: BinOp, v: Value) -> (Value, Value) {
        let a = self.int();
        (a, self.b.binary(op, v, a))
    }

    /// A counted loop: `i` from 0 while `i < K` (K ≤ 4), optionally carrying a
    /// `Node` that the body may advance along `next`.
    pub fn counted_loop(&mut self) {
        let pre = self.b.current_block();
        let header = self.new_block();
        let body = self.new_block();
        let exit = self.new_block();
        let trips = self.c.below(5) as i64;
        let carry = self.c.chance(120);
        let init = carry.then(|| self.ref_of(self.d.t_node()));
        // Sometimes two reference phis that swap each other every trip.
        let swap = if self.c.chance(40) {
            let tys = self.d.ref_types();
            let ty = self.c.pick(&tys);
            Some((ty, self.swap_inits(ty)))
        } else {
            None
        };
        // Sometimes a second counter, mostly one that counts like `i` (GVN
        // merges the two), else one from 1 or by 2 (kept apart).
        let twin = self
            .c
            .chance(48)
            .then(|| self.c.pick(&[(0, 1), (0, 1), (0, 1), (1, 1), (0, 2)]));
        self.b.jmp(header);
        self.b.switch_to(header);
        let i = self.b.phi(Type::I64, vec![]);
        let j = twin.map(|_| self.b.phi(Type::I64, vec![]));
        let node = init.map(|_| self.b.phi(self.d.t_node(), vec![]));
        let swapped = swap.map(|(ty, _)| (self.b.phi(ty, vec![]), self.b.phi(ty, vec![])));
        let k = self.b.iconst(trips);
        let mut c = self.b.binary(BinOp::Slt, i, k);
        // A list walk usually also stops at the end of the list.
        if let Some(n) = node {
            if self.c.weighted(&[1, 7]) == 1 {
                let null = self.b.null();
                let more = self.b.binary(BinOp::Ne, n, null);
                c = self.b.binary(BinOp::And, c, more);
            }
        }
        self.b.br(c, body, exit);
        self.b.switch_to(body);
        self.pool.push_scope();
        self.pool.add(i, Type::I64);
        if let Some(j) = j {
            self.pool.add(j, Type::I64);
        }
        if let Some(n) = node {
            self.pool.add(n, self.d.t_node());
        }
        if let (Some((ty, _)), Some((a, _))) = (swap, swapped) {
            self.pool.add(a, ty);
        }
        self.depth += 1;
        let n = self.nested_len();
        self.region(n);
        self.depth -= 1;
        let next = node.map(|n| {
            if self.c.chance(160) {
                let field = self.d.fields[1];
                self.b.load(Addr::Field { base: n, field }, false)
            } else {
                self.value_of(self.d.t_node())
            }
        });
        let one = self.b.iconst(1);
        let i1 = self.b.binary(BinOp::Add, i, one);
        let j1 = j.zip(twin).map(|(j, (_, step))| {
            let step = self.b.iconst(step);
            self.b.binary(BinOp::Add, j, step)
        });
        let latch = self.b.current_block();
        self.b.jmp(header);
        self.pool.pop_scope();
        let zero = self.b.iconst(0);
        self.b.set_phi_entries(i, vec![(pre, zero), (latch, i1)]);
        if let (Some(j), Some(j1), Some((start, _))) = (j, j1, twin) {
            let start = self.b.iconst(start);
            self.b.set_phi_entries(j, vec![(pre, start), (latch, j1)]);
        }
        if let (Some(n), Some(init), Some(next)) = (node, init, next) {
            self.b.set_phi_entries(n, vec![(pre, init), (latch, next)]);
        }
        if let (Some((_, (x, y))), Some((a, b))) = (swap, swapped) {
            self.b.set_phi_entries(a, vec![(pre, x), (latch, b)]);
            self.b.set_phi_entries(b, vec![(pre, y), (latch, a)]);
        }
        self.b.switch_to(exit);
        // The header dominates the exit: its values stay usable.
        self.pool.add(i, Type::I64);
        if let Some(n) = node {
            self.pool.add(n, self.d.t_node());
        }
    }

    /// A rotated (bottom-tested) loop, the shape loop rotation leaves behind:
    /// the body runs first, then `i + 1 < K` (K ≤ 4) decides whether to go
    /// around again, so the latch both loops back and exits.
    pub fn rotated_loop(&mut self) {
        let pre = self.b.current_block();
        let body = self.new_block();
        let exit = self.new_block();
        let trips = 1 + self.c.below(4) as i64;
        self.b.jmp(body);
        self.b.switch_to(body);
        let i = self.b.phi(Type::I64, vec![]);
        self.pool.push_scope();
        self.pool.add(i, Type::I64);
        self.depth += 1;
        let n = self.nested_len();
        self.region(n);
        self.depth -= 1;
        let one = self.b.iconst(1);
        let i1 = self.b.binary(BinOp::Add, i, one);
        let k = self.b.iconst(trips);
        let c = self.b.binary(BinOp::Slt, i1, k);
        let latch = self.b.current_block();
        self.b.br(c, body, exit);
        self.pool.pop_scope();
        let zero = self.b.iconst(0);
        self.b.set_phi_entries(i, vec![(pre, zero), (latch, i1)]);
        self.b.switch_to(exit);
        // The latch dominates the exit; the count after the loop stays usable.
        self.pool.add(i1, Type::I64);
    }

    /// Two blocks `A` and `B`, each entered from before the region and from the
    /// other: irreducible control flow, bounded by counters that both advance.
    pub fn irreducible(&mut self) {
        let pre = self.b.current_block();
        let c = self.cond();
        let a = self.new_block();
        let bb = self.new_block();
        let exit = self.new_block();
        let limit = 1 + self.c.below(4) as i64;
        self.b.br(c, a, bb);
        let zero = self.b.iconst(0);
        let one = self.b.iconst(1);
        let k = self.b.iconst(limit);
        // A
        self.b.switch_to(a);
        let ia = self.b.phi(Type::I64, vec![]);
        let ia1 = self.b.binary(BinOp::Add, ia, one);
        self.pool.push_scope();
        self.pool.add(ia1, Type::I64);
        self.depth += 1;
        let n = self.nested_len();
        self.region(n);
        let ca = self.b.binary(BinOp::Slt, ia1, k);
        let a_end = self.b.current_block();
        self.b.br(ca, bb, exit);
        self.pool.pop_scope();
        // B
        self.b.switch_to(bb);
        let ib = self.b.phi(Type::I64, vec![]);
        let ib1 = self.b.binary(BinOp::Add, ib, one);
        self.pool.push_scope();
        self.pool.add(ib1, Type::I64);
        let n = self.nested_len();
        self.region(n);
        let cb = self.b.binary(BinOp::Slt, ib1, k);
        let b_end = self.b.current_block();
        self.b.br(cb, a, exit);
        self.pool.pop_scope();
        self.depth -= 1;
        self.b.set_phi_entries(ia, vec![(pre, zero), (b_end, ib1)]);
        self.b.set_phi_entries(ib, vec![(pre, zero), (a_end, ia1)]);
        self.b.switch_to(exit);
        let ix = self.b.phi(Type::I64, vec![(a_end, ia1), (b_end, ib1)]);
        self.pool.add(ix, Type::I64);
    }
}
