//! Control flow, phis, calls and fuel (IR.md §4, §7): parallel phi copies,
//! recursion and `stack_overflow`, `guard`, `unreachable`, exact fuel and steps.

mod support;
use interp::{Config, Outcome, TrapKind};
use ir::{FuncId, Type};
use support::*;

/// `count(n)`: `entry: jmp loop; loop: i = phi…; i2 = add i, 1; c = slt i2, n; br c, loop, done; done: ret i2`.
fn counting_loop(fx: &mut Fx) -> FuncId {
    fx.func("count", &[Type::I64], Some(Type::I64), |b, p| {
        let entry = b.current_block();
        let lp = b.create_block("loop");
        let done = b.create_block("done");
        b.jmp(lp);
        b.switch_to(lp);
        let i = b.phi(Type::I64, vec![]);
        let one = b.iconst(1);
        let i2 = b.binary(BinOp::Add, i, one);
        let zero = b.iconst(0);
        b.set_phi_entries(i, vec![(entry, zero), (lp, i2)]);
        let c = b.binary(BinOp::Slt, i2, p[0]);
        b.br(c, lp, done);
        b.switch_to(done);
        b.ret(Some(i2));
    })
}

#[test]
fn loop_needs_exactly_one_fuel_per_taken_branch() {
    let mut fx = Fx::new();
    let f = counting_loop(&mut fx);
    for n in [1i64, 2, 10, 1000] {
        let k = 1 + n as u64; // the entry jmp, then one br per iteration
        let ok = fx.run_with(f, &ints(&[n]), &Config::with_fuel(k));
        assert_eq!(
            ok.behaviour.to_string(),
            format!("outcome: return {n}\ntrace:\nheap:")
        );
        assert_eq!(ok.fuel_used, k);
        assert_eq!(ok.steps, 1 + 4 * n as u64 + 1);
        let short = fx.run_with(f, &ints(&[n]), &Config::with_fuel(k - 1));
        assert_eq!(
            short.behaviour.to_string(),
            "outcome: trap out_of_fuel\ntrace:\nheap:"
        );
        assert_eq!(short.fuel_used, k - 1);
        assert!(TrapKind::OutOfFuel.is_inconclusive());
    }
}

#[test]
fn ret_costs_no_fuel_and_zero_fuel_runs_straight_line_code() {
    let mut fx = Fx::new();
    let f = fx.func("main", &[Type::I64], Some(Type::I64), |b, p| {
        let r = b.binary(BinOp::Mul, p[0], p[0]);
        b.ret(Some(r));
    });
    let e = fx.run_with(f, &ints(&[9]), &Config::with_fuel(0));
    assert_eq!(e.behaviour.to_string(), "outcome: return 81\ntrace:\nheap:");
    assert_eq!((e.fuel_used, e.steps), (0, 2));
}

/// Phis read their operands in parallel on the edge taken: `a, b = b, a` each iteration.
fn swapping_loop(fx: &mut Fx, through_latch_block: bool) -> FuncId {
    fx.func("swap", &[Type::I64], Some(Type::I64), |b, p| {
        let entry = b.current_block();
        let lp = b.create_block("loop");
        let latch = b.create_block("latch");
        let done = b.create_block("done");
        b.jmp(lp);
        b.switch_to(lp);
        let a = b.phi(Type::I64, vec![]);
        let bb = b.phi(Type::I64, vec![]);
        let k = b.phi(Type::I64, vec![]);
        let one = b.iconst(1);
        let k2 = b.binary(BinOp::Add, k, one);
        let c = b.binary(BinOp::Slt, k2, p[0]);
        let back = if through_latch_block { latch } else { lp };
        b.br(c, back, done);
        b.switch_to(latch);
        b.jmp(lp);
        let (c1, c2, c0) = (b.iconst(1), b.iconst(2), b.iconst(0));
        b.set_phi_entries(a, vec![(entry, c1), (back, bb)]);
        b.set_phi_entries(bb, vec![(entry, c2), (back, a)]);
        b.set_phi_entries(k, vec![(entry, c0), (back, k2)]);
        b.switch_to(done);
        b.escape(a);
        b.escape(bb);
        b.ret(Some(k2));
    })
}

#[test]
fn phis_are_parallel_copies_on_br_and_jmp_edges() {
    for latch in [false, true] {
        let mut fx = Fx::new();
        let f = swapping_loop(&mut fx, latch);
        assert_eq!(
            fx.show(f, &ints(&[1])),
            "outcome: return 1\ntrace: 1, 2\nheap:"
        );
        assert_eq!(
            fx.show(f, &ints(&[2])),
            "outcome: return 2\ntrace: 2, 1\nheap:"
        );
        assert_eq!(
            fx.show(f, &ints(&[3])),
            "outcome: return 3\ntrace: 1, 2\nheap:"
        );
    }
}

#[test]
fn br_on_any_nonzero_and_diamond_phi() {
    let mut fx = Fx::new();
    let f = fx.func("main", &[Type::I64], Some(Type::I64), |b, p| {
        let t = b.create_block("then");
        let e = b.create_block("else");
        let j = b.create_block("join");
        b.br(p[0], t, e);
        b.switch_to(t);
        b.jmp(j);
        b.switch_to(e);
        b.jmp(j);
        b.switch_to(j);
        let (ten, twenty) = (b.iconst(10), b.iconst(20));
        let r = b.phi(Type::I64, vec![(t, ten), (e, twenty)]);
        b.ret(Some(r));
    });
    assert_eq!(
        fx.show(f, &ints(&[-5])),
        "outcome: return 10\ntrace:\nheap:"
    );
    assert_eq!(fx.show(f, &ints(&[0])), "outcome: return 20\ntrace:\nheap:");
    assert_eq!(fx.run(f, &ints(&[0])).fuel_used, 2);
}

#[test]
fn guard_and_unreachable_trap() {
    let mut fx = Fx::new();
    let g = fx.func("g", &[Type::I64], Some(Type::I64), |b, p| {
        b.escape(p[0]);
        b.guard(p[0]);
        b.ret(Some(p[0]));
    });
    assert_eq!(
        fx.show(g, &ints(&[3])),
        "outcome: return 3\ntrace: 3\nheap:"
    );
    assert_eq!(
        fx.show(g, &ints(&[0])),
        "outcome: trap guard_failed\ntrace: 0\nheap:"
    );
    let u = fx.func("u", &[], None, |b, _| {
        let one = b.iconst(1);
        b.escape(one);
        b.unreachable();
    });
    assert_eq!(
        fx.show(u, &ints(&[])),
        "outcome: trap unreachable\ntrace: 1\nheap:"
    );
}

#[test]
fn void_return_prints_bare_return() {
    let mut fx = Fx::new();
    let f = fx.func("main", &[], None, |b, _| {
        b.ret(None);
    });
    assert_eq!(fx.show(f, &ints(&[])), "outcome: return\ntrace:\nheap:");
}

#[test]
fn calls_pass_arguments_and_return_values() {
    let mut fx = Fx::new();
    let double = fx.func("double", &[Type::I64], Some(Type::I64), |b, p| {
        let r = b.binary(BinOp::Add, p[0], p[0]);
        b.ret(Some(r));
    });
    let log = fx.func("log", &[Type::I64], None, |b, p| {
        b.escape(p[0]);
        b.ret(None);
    });
    let main = fx.func("main", &[Type::I64], Some(Type::I64), |b, p| {
        let (_, d) = b.call(Callee::Func(double), vec![p[0]]);
        let d = d.unwrap();
        b.call(Callee::Func(log), vec![d]);
        let (_, dd) = b.call(Callee::Func(double), vec![d]);
        b.ret(dd);
    });
    let e = fx.run(main, &ints(&[5]));
    assert_eq!(
        e.behaviour.to_string(),
        "outcome: return 20\ntrace: 10\nheap:"
    );
    assert_eq!(e.fuel_used, 3, "one unit per call");
    assert_eq!(e.steps, 4 + 2 + 2 + 2);
}

/// `depth(n) = n == 0 ? 0 : 1 + depth(n - 1)`.
fn depth_fn(fx: &mut Fx) -> FuncId {
    let me = FuncId::new(fx.m.funcs.len());
    fx.func("depth", &[Type::I64], Some(Type::I64), |b, p| {
        let base = b.create_block("base");
        let rec = b.create_block("rec");
        b.br(p[0], rec, base);
        b.switch_to(base);
        let zero = b.iconst(0);
        b.ret(Some(zero));
        b.switch_to(rec);
        let one = b.iconst(1);
        let m1 = b.binary(BinOp::Sub, p[0], one);
        let (_, r) = b.call_func_with_ret(me, vec![m1], Some(Type::I64));
        let s = b.binary(BinOp::Add, r.unwrap(), one);
        b.ret(Some(s));
    })
}

#[test]
fn recursion_up_to_64_frames_and_stack_overflow_beyond() {
    let mut fx = Fx::new();
    let f = depth_fn(&mut fx);
    assert_eq!(
        fx.show(f, &ints(&[10])),
        "outcome: return 10\ntrace:\nheap:"
    );
    // depth(63) uses 64 frames (the entry frame included).
    assert_eq!(
        fx.show(f, &ints(&[63])),
        "outcome: return 63\ntrace:\nheap:"
    );
    assert_eq!(
        fx.show(f, &ints(&[64])),
        "outcome: trap stack_overflow\ntrace:\nheap:"
    );
    let small = Config {
        max_depth: 3,
        ..Config::default()
    };
    assert_eq!(
        fx.run_with(f, &ints(&[2]), &small).behaviour.to_string(),
        "outcome: return 2\ntrace:\nheap:"
    );
    assert_eq!(
        fx.run_with(f, &ints(&[3]), &small).behaviour.outcome,
        Outcome::Trap(TrapKind::StackOverflow)
    );
    assert!(TrapKind::StackOverflow.is_inconclusive());
}

#[test]
fn trap_inside_a_callee_keeps_the_trace_and_step_count_is_exact() {
    let mut fx = Fx::new();
    let div = fx.func("div", &[Type::I64, Type::I64], Some(Type::I64), |b, p| {
        b.escape(p[1]);
        let q = b.binary(BinOp::Sdiv, p[0], p[1]);
        b.escape(q);
        b.ret(Some(q));
    });
    let main = fx.func("main", &[Type::I64], Some(Type::I64), |b, p| {
        let seven = b.iconst(7);
        let (_, q) = b.call(Callee::Func(div), vec![seven, p[0]]);
        let r = b.binary(BinOp::Add, q.unwrap(), seven);
        b.ret(Some(r));
    });
    let ok = fx.run(main, &ints(&[2]));
    assert_eq!(
        ok.behaviour.to_string(),
        "outcome: return 10\ntrace: 2, 3\nheap:"
    );
    assert_eq!(ok.steps, 3 + 4);
    let bad = fx.run(main, &ints(&[0]));
    assert_eq!(
        bad.behaviour.to_string(),
        "outcome: trap div_by_zero\ntrace: 0\nheap:"
    );
    // main: call; div: escape, sdiv (the trapping one counts).
    assert_eq!(bad.steps, 3);
}

#[test]
fn fuel_boundary_with_calls() {
    let mut fx = Fx::new();
    let f = depth_fn(&mut fx);
    // depth(n): n calls, one br per frame (n + 1 frames).
    let k = 5 + 6;
    assert_eq!(
        fx.run_with(f, &ints(&[5]), &Config::with_fuel(k))
            .behaviour
            .outcome
            .to_string(),
        "return 5"
    );
    assert_eq!(
        fx.run_with(f, &ints(&[5]), &Config::with_fuel(k - 1))
            .behaviour
            .outcome,
        Outcome::Trap(TrapKind::OutOfFuel)
    );
}
