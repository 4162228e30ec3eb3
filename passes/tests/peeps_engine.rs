//! Tests of the peephole engine itself: the fixed-point check catches a
//! missing `add_dep`, the rule table is listed with names, seeds give the same
//! result, and random programs behave the same before and after
//! `peeps,gvn,dce` under many seeds.

mod peeps_support;

use passes::peeps::{rules, CheckMode, Peeps};
use passes::{Pass, PassManager, Stats};
use peeps_support::*;

fn nested_dep_module() -> ir::Module {
    let t = parse_test(&corpus_dir().join("peeps/phi_const_web_nested.ir"));
    load(&t)
}

fn run_peeps(
    m: &mut ir::Module,
    seed: u64,
    check: CheckMode,
    drop: Option<&'static str>,
) -> Result<bool, String> {
    let pass = Peeps {
        seed,
        check,
        drop_deps_of: drop,
    };
    pass.run_checked(m, &mut Stats::default())
}

#[test]
fn a_missing_add_dep_is_caught_by_the_fixed_point_check() {
    let mut caught = 0;
    for seed in 0..64 {
        let mut m = nested_dep_module();
        match run_peeps(&mut m, seed, CheckMode::FixedPoint, Some("phi_const_web")) {
            Ok(_) => {}
            Err(e) => {
                assert!(e.contains("phi_const_web"), "{e}");
                caught += 1;
            }
        }
    }
    assert!(caught > 0, "dropping the dependency was never noticed");
}

#[test]
fn checking_after_every_step_still_catches_a_missing_add_dep() {
    let caught = (0..64)
        .filter(|&seed| {
            let mut m = nested_dep_module();
            run_peeps(&mut m, seed, CheckMode::EveryStep, Some("phi_const_web")).is_err()
        })
        .count();
    assert!(caught > 0, "dropping the dependency was never noticed");
}

#[test]
fn instructions_on_the_depth_first_stack_count_as_waiting() {
    // Three chained `sdiv %x, -1`: the engine visits the inputs of a pulled
    // instruction first; checking after a rewrite deep in the chain once
    // blamed the instructions still on the stack.
    let t = parse_test(&corpus_dir().join("regressions/peeps_step_check_chained_sdiv.ir"));
    for seed in 0..64 {
        let mut m = load(&t);
        run_peeps(&mut m, seed, CheckMode::EveryStep, None)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let printed = ir::print_module(&m);
        assert!(!printed.contains("sdiv"), "seed {seed}:\n{printed}");
    }
}

#[test]
fn with_its_add_dep_the_nested_phi_web_always_folds() {
    for seed in 0..64 {
        let mut m = nested_dep_module();
        run_peeps(&mut m, seed, CheckMode::EveryStep, None).unwrap();
        let printed = ir::print_module(&m);
        assert!(!printed.contains("slt"), "seed {seed}:\n{printed}");
    }
}

#[test]
fn dropping_an_unrelated_rules_deps_changes_nothing() {
    // stacked_const's dependency is covered by the users of its inner
    // operation, so dropping it never breaks the invariant on this file.
    for seed in 0..16 {
        let mut m = nested_dep_module();
        run_peeps(&mut m, seed, CheckMode::EveryStep, Some("stacked_const")).unwrap();
    }
}

#[test]
fn the_rule_table_lists_every_rule_with_a_unique_name_and_its_shape() {
    let table = rules();
    assert!(table.len() >= 30);
    let mut names: Vec<&str> = table.iter().map(|r| r.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), table.len(), "duplicate rule names");
    for r in table {
        assert!(r.pattern.starts_with('('), "{}: {}", r.name, r.pattern);
        assert!(
            !r.rewrite.is_empty() && !r.condition.is_empty(),
            "{}",
            r.name
        );
    }
    for wanted in [
        "fold_binary",
        "stacked_const",
        "phi_same",
        "br_const",
        "cmp_flip",
    ] {
        assert!(table.iter().any(|r| r.name == wanted), "{wanted}");
    }
}

#[test]
fn rule_counts_go_to_stats() {
    let t = parse_test(&corpus_dir().join("peeps/stacked_add.ir"));
    let mut m = load(&t);
    let stats = PassManager::from_list("peeps")
        .unwrap()
        .run(&mut m)
        .unwrap();
    assert_eq!(stats.get("peeps", "stacked_const"), 2);
}

/// A tiny generator for random straight-line-plus-diamond programs.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn pick<'a>(&mut self, xs: &'a [&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

const OPS: &[&str] = &[
    "add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "sdiv", "srem", "eq", "ne",
    "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
];
const CONSTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "63",
    "64",
    "65",
    "127",
    "9223372036854775807",
    "-9223372036854775807",
];

fn random_program(seed: u64) -> String {
    let mut g = Gen(seed);
    let mut vals: Vec<String> = vec!["%x".into(), "%y".into()];
    let mut body = String::new();
    let operand = |g: &mut Gen, vals: &Vec<String>| -> String {
        if g.next().is_multiple_of(3) {
            g.pick(CONSTS).to_string()
        } else {
            vals[(g.next() % vals.len() as u64) as usize].clone()
        }
    };
    let mut k = 0;
    let mut emit = |g: &mut Gen, vals: &mut Vec<String>, body: &mut String, n: usize| {
        for _ in 0..n {
            let name = format!("%v{k}");
            k += 1;
            let line = match g.next() % 8 {
                0 => format!(
                    "{name} = {} {}",
                    g.pick(&["neg", "not", "copy"]),
                    operand(g, vals)
                ),
                1 => format!(
                    "{name} = select {}, {}, {}",
                    operand(g, vals),
                    operand(g, vals),
                    operand(g, vals)
                ),
                _ => {
                    let op = g.pick(OPS);
                    let a = operand(g, vals);
                    let b = if g.next().is_multiple_of(4) {
                        a.clone()
                    } else {
                        operand(g, vals)
                    };
                    format!("{name} = {op} {a}, {b}")
                }
            };
            body.push_str("  ");
            body.push_str(&line);
            body.push('\n');
            vals.push(name);
        }
    };
    emit(&mut g, &mut vals, &mut body, 6);
    let c = operand(&mut g, &vals);
    body.push_str(&format!("  br {c}, a, b\na:\n"));
    let mut va = vals.clone();
    emit(&mut g, &mut va, &mut body, 4);
    let ra = va.last().unwrap().clone();
    body.push_str("  jmp j\nb:\n");
    let mut vb = vals.clone();
    emit(&mut g, &mut vb, &mut body, 4);
    let rb = vb.last().unwrap().clone();
    body.push_str(&format!("  jmp j\nj:\n  %p = phi [a: {ra}], [b: {rb}]\n"));
    vals.push("%p".into());
    emit(&mut g, &mut vals, &mut body, 4);
    let r = vals.last().unwrap().clone();
    format!("func @main(%x: i64, %y: i64) -> i64 {{\nentry:\n{body}  escape %p\n  ret {r}\n}}\n")
}

#[test]
fn random_programs_behave_the_same_under_every_seed() {
    let inputs = [
        "x = 0, y = 0",
        "x = 1, y = -1",
        "x = -9223372036854775807, y = -1",
        "x = 64, y = 3",
        "x = 7, y = 0",
    ];
    for prog in 0..150 {
        let text = random_program(prog);
        let (m, _) = ir::parse_module(&text, "rand").unwrap_or_else(|e| panic!("{e}\n{text}"));
        ir::verify_module(&m).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        let mut first: Option<String> = None;
        for seed in 0..8 {
            let mut opt = m.clone();
            PassManager::from_list("peeps,gvn,dce")
                .unwrap()
                .with_seed(seed)
                .run(&mut opt)
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            let printed = ir::print_module(&opt);
            for input in inputs {
                assert_eq!(
                    behaviour(&m, input),
                    behaviour(&opt, input),
                    "program {prog}, seed {seed}, input {input}\n{text}\n--- optimized ---\n{printed}"
                );
            }
            match &first {
                None => first = Some(printed),
                Some(f) => assert_eq!(f, &printed, "program {prog}: seed {seed} differs\n{text}"),
            }
        }
    }
}

#[test]
fn a_function_over_the_window_size_is_rewritten_through_its_user_lists() {
    // Over 1,024 instructions the engine builds its user lists in the
    // worklist's fill walk, not at the first edit: every `add %v, 0` of the
    // chain must still be replaced in its user, down to `ret %x`.
    let n = 2_000;
    let mut text = String::from("func @main(%x: i64) -> i64 {\nentry:\n  %a0 = add %x, 0\n");
    for k in 1..n {
        text.push_str(&format!("  %a{k} = add %a{}, 0\n", k - 1));
    }
    text.push_str(&format!("  ret %a{}\n}}\n", n - 1));
    for seed in 0..4 {
        let (mut m, _) = ir::parse_module(&text, "chain.ir").unwrap();
        assert!(run_peeps(&mut m, seed, CheckMode::FixedPoint, None).unwrap());
        let printed = ir::print_module(&m);
        assert!(!printed.contains("add"), "seed {seed}:\n{printed}");
        assert!(printed.contains("ret %x"), "seed {seed}:\n{printed}");
    }
}

#[test]
fn a_function_over_the_window_size_finds_its_phis_by_block() {
    // Over 1,024 instructions the engine finds a block's phis among those
    // the function came in with, indexed by block: every folded branch must
    // still drop its phi entries, and every merge collapse the phis of the
    // merged block (two per join, listed in either order of the arms).
    let k = 300;
    let mut text = String::from(
        "func @main(%x: i64, %y: i64) -> i64 {\nentry:\n  %a0 = add %x, 0\n  jmp h0\n",
    );
    for b in 0..k {
        text.push_str(&format!(
            "h{b}:\n  %c{b} = add %a{b}, 1\n  br 1, l{b}, r{b}\nl{b}:\n  jmp j{b}\nr{b}:\n  jmp j{b}\n\
             j{b}:\n  %q{b} = phi [l{b}: %c{b}], [r{b}: %x]\n  %p{b} = phi [r{b}: %y], [l{b}: %c{b}]\n  \
             %a{n} = add %q{b}, %p{b}\n  jmp h{n}\n",
            n = b + 1
        ));
    }
    text.push_str(&format!("h{k}:\n  ret %a{k}\n}}\n"));
    peeps_under_every_seed(&text, |seed, m, printed| {
        ir::verify_module(m).unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
        assert!(
            !printed.contains("phi") && !printed.contains("br "),
            "seed {seed}:\n{printed}"
        );
        assert_eq!(
            m.funcs[0].layout.len(),
            1,
            "seed {seed}: every block merged"
        );
    });
}

#[test]
fn a_big_function_folds_everything_though_its_memory_operations_start_off_the_worklist() {
    // Over 1,024 instructions the worklist starts with only the
    // instructions some rule may match (here not the loads and stores):
    // every fold must still happen, the fixed-point check must pass, and
    // every seed must give the same function.
    let n = 600;
    let mut text = String::from(
        "type T { a: i64 }\nfunc @main(%p: T, %x: i64) -> i64 {\nentry:\n  %a0 = add %x, 0\n",
    );
    for k in 1..n {
        text.push_str(&format!(
            "  %l{k} = load %p.a\n  %m{k} = mul %l{k}, 1\n  %a{k} = add %a{}, %m{k}\n  \
             %z{k} = sub %a{k}, %a{k}\n  store %p.a, %z{k}\n",
            k - 1
        ));
    }
    text.push_str(&format!("  ret %a{}\n}}\n", n - 1));
    peeps_under_every_seed(&text, |_, _, printed| {
        assert!(
            !printed.contains("mul") && !printed.contains("sub"),
            "{printed}"
        );
        assert_eq!(printed.matches("store %p.a, 0").count(), n - 1, "{printed}");
    });
}

/// Run peeps on `text`'s single function (over 1,024 instructions) with
/// the fixed-point check on, under seeds 0-3: each run must change the
/// function, pass `check` (given the seed, the module and its text) and
/// print the same module as the first.
fn peeps_under_every_seed(text: &str, check: impl Fn(u64, &ir::Module, &str)) {
    let (m0, _) = ir::parse_module(text, "big.ir").unwrap();
    assert!(m0.funcs[0].insts.len() > 1_024);
    let mut first = None;
    for seed in 0..4 {
        let mut m = m0.clone();
        assert!(run_peeps(&mut m, seed, CheckMode::FixedPoint, None).unwrap());
        let printed = ir::print_module(&m);
        check(seed, &m, &printed);
        match &first {
            None => first = Some(printed),
            Some(f) => assert_eq!(f, &printed, "seed {seed} differs"),
        }
    }
}

/// How many branches `peeps` decides by a dominating branch in `text`;
/// the blocks this leaves unreachable must be gone (the cleanup after the
/// walk must not reuse the block edges the walk read).
fn decided_in(text: &str) -> u64 {
    let mut m = ir::parse_module(text, "t.ir").unwrap().0;
    let stats = PassManager::from_list("peeps")
        .unwrap()
        .run(&mut m)
        .unwrap();
    let f = &m.funcs[0];
    let cfg = ir::cfg::Cfg::new(f);
    assert!(f.layout.iter().all(|&b| cfg.is_reachable(b)), "{text}");
    stats.get("peeps", "decided_branches")
}

/// The decided-branches walk is skipped when no block with a fact on a
/// tested root dominates another block or tests that root itself; each of
/// these functions has a branch decided only through one of the cases that
/// keep the walk (the skip must not drop any).
#[test]
fn the_decided_branches_walk_runs_whenever_a_fact_reaches_a_branch() {
    let ends = "a:\n  escape 1\n  ret 1\nb:\n  escape 2\n  ret 2\nr:\n  escape 3\n  ret 3\n}\n";
    let cases = [
        // `e` tests the root of its own fact (and dominates nothing: `a`
        // and `b` are also entered from `q`, entered from `entry` alone).
        "entry:\n  br %c, e, q\ne:\n  br %c, a, b\nq:\n  br %x, a, b\n",
        // `e` dominates `s`, entered from `e` alone.
        "entry:\n  br %c, e, r\ne:\n  escape 4\n  jmp s\ns:\n  escape 5\n  br %c, a, b\n",
        // `e` dominates the join `s`: its other way in, `q`, is entered
        // from `e` (not from `entry`, the branch that gave the fact).
        "entry:\n  br %c, e, r\ne:\n  br %x, q, s\nq:\n  escape 6\n  jmp s\n\
         s:\n  escape 7\n  br %c, a, b\n",
    ];
    for body in cases {
        let text = format!("func @main(%c: i64, %x: i64) -> i64 {{\n{body}{ends}");
        assert_eq!(decided_in(&text), 1, "{text}");
    }
    // A fact inside one arm of a diamond decides nothing (the walk is skipped).
    let diamond = "func @main(%c: i64) -> i64 {\nentry:\n  br %c, l, m\nl:\n  escape 1\n  jmp m\n\
                   m:\n  escape 2\n  br %c, a, b\na:\n  ret 1\nb:\n  ret 2\n}\n";
    assert_eq!(decided_in(diamond), 0);
}
