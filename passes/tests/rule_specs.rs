//! The proof of the peephole rules (`loadstar verify --rules`) is of the rule
//! texts; this property test ties each text to the code that runs. On
//! generated instructions (every binary and unary operation, `select` and
//! `guard`, over i64 and reference operands, with edge constants, repeated
//! operands, masks of comparisons, a last result against a literal and nested definitions), each rule's hand-written matcher returns
//! exactly the change that its text asks for: it fires if and only if the
//! pattern matches and the condition holds, and its rewrite is the text's
//! replacement (same operation, same operands, same folded constant).
//! `phi_same` and `br_const`, whose conditions are CFG facts (dominance),
//! and `phi_null`, are checked the same way on generated loops and branches; `phi_const_web`
//! follows phi webs its two-leaf text does not describe (see `docs/smt.md`).

use ir::cfg::Cfg;
use ir::dom::DomTree;
use ir::{BinOp, Function};
use passes::peeps::spec::{concrete::spec_change, table_spec, RuleSpec};
use passes::peeps::{rules, MatchCtx};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use std::cell::RefCell;

const EDGES: [i64; 14] = [
    0,
    1,
    -1,
    2,
    -2,
    3,
    63,
    64,
    65,
    127,
    -64,
    i64::MIN,
    i64::MAX,
    7,
];

/// One generated instruction: a kind selector and operand selectors.
type Gen = (u8, u16, u16, u16, u16, i64);

/// Text of a function over `%x, %y: i64` and `%p, %q: Obj` with the
/// generated instructions, each result added to its pool.
fn program(insts: &[Gen]) -> String {
    let mut ints: Vec<String> = vec!["%x".into(), "%y".into()];
    let mut refs: Vec<String> = vec!["%p".into(), "%q".into(), "null".into()];
    let mut body = String::new();
    let mut last_op = BinOp::Add;
    // The last `eq`/`ne` of two values: its result, operands and whether
    // they are references (a select over its operands is the arms rules' shape).
    let mut last_cmp: Option<(String, String, String, bool)> = None;
    let lit = |sel: u16, wild: i64| {
        let k = sel as usize % (EDGES.len() + 1);
        EDGES.get(k).copied().unwrap_or(wild).to_string()
    };
    let int = |ints: &Vec<String>, sel: u16, wild: i64| {
        // Half the time a value of the pool (recent ones more often), else a literal.
        if sel.is_multiple_of(2) {
            ints[ints.len() - 1 - (sel as usize / 2) % ints.len().min(3)].clone()
        } else {
            lit(sel / 2, wild)
        }
    };
    let rf =
        |refs: &Vec<String>, sel: u16| refs[refs.len() - 1 - sel as usize % refs.len()].clone();
    for (k, &(kind, a, b, c, d, wild)) in insts.iter().enumerate() {
        let r = format!("%t{k}");
        match kind % 8 {
            0..=3 => {
                // Now and then the previous operation again (stacked constants).
                let op = if d % 5 == 1 {
                    last_op
                } else {
                    BinOp::ALL[(a as usize) % BinOp::ALL.len()]
                };
                last_op = op;
                if d % 5 == 2 {
                    // A mask of the last result (often a comparison: its bits).
                    let x = ints[ints.len() - 1].clone();
                    body += &format!("  {r} = and {x}, {}\n", lit(c, wild));
                } else if d % 5 == 3 {
                    // The last result (often a comparison: 0 or 1) against
                    // a literal, as the known-bits rules need (now and then
                    // `ult`, for a mask below a constant).
                    let x = ints[ints.len() - 1].clone();
                    let op = if b % 4 == 0 { BinOp::Ult } else { op };
                    body += &format!("  {r} = {} {x}, {}\n", op.name(), lit(c, wild));
                } else if op.accepts_refs() && d.is_multiple_of(3) {
                    let (x, y) = (rf(&refs, b), rf(&refs, c));
                    body += &format!("  {r} = {} {x}, {y}\n", op.name());
                    last_cmp = is_eq_ne(op).then(|| (r.clone(), x, y, true));
                } else {
                    let x = int(&ints, b, wild);
                    let y = if d.is_multiple_of(4) {
                        x.clone()
                    } else {
                        int(&ints, c, wild)
                    };
                    body += &format!("  {r} = {} {x}, {y}\n", op.name());
                    last_cmp = is_eq_ne(op).then(|| (r.clone(), x, y, false));
                }
                ints.push(r);
            }
            4 | 5 => {
                let op = ["neg", "not", "copy"][a as usize % 3];
                if op == "copy" && d.is_multiple_of(2) {
                    body += &format!("  {r} = copy {}\n", rf(&refs, b));
                    refs.push(r);
                } else {
                    body += &format!("  {r} = {op} {}\n", int(&ints, b, wild));
                    ints.push(r);
                }
            }
            6 => {
                let cnd = int(&ints, a, wild);
                if a % 3 == 0 && last_cmp.is_none() {
                    // No comparison to select over: make one (each of the
                    // four arms rules needs its shape often enough).
                    let op = if c.is_multiple_of(2) { "eq" } else { "ne" };
                    let (x, y) = (int(&ints, c / 2, wild), int(&ints, d, wild));
                    let cmp = format!("{r}c");
                    body += &format!("  {cmp} = {op} {x}, {y}\n");
                    last_cmp = Some((cmp, x, y, false));
                }
                if let Some((cmp, x, y, is_ref)) = last_cmp.take().filter(|_| a % 3 == 0) {
                    // A select over the operands of the last comparison,
                    // in either order.
                    let (x, y) = if b.is_multiple_of(2) { (x, y) } else { (y, x) };
                    body += &format!("  {r} = select {cmp}, {x}, {y}\n");
                    if is_ref {
                        refs.push(r)
                    } else {
                        ints.push(r)
                    }
                } else if d.is_multiple_of(2) {
                    let (x, y) = (
                        rf(&refs, b),
                        rf(&refs, if d.is_multiple_of(4) { b } else { c }),
                    );
                    body += &format!("  {r} = select {cnd}, {x}, {y}\n");
                    refs.push(r);
                } else {
                    let x = int(&ints, b, wild);
                    let y = if d % 4 == 1 {
                        x.clone()
                    } else {
                        int(&ints, c, wild)
                    };
                    body += &format!("  {r} = select {cnd}, {x}, {y}\n");
                    ints.push(r);
                }
            }
            _ => body += &format!("  guard {}\n", int(&ints, a, wild)),
        }
    }
    format!(
        "type Obj {{ f: i64 }}\nfunc @f(%x: i64, %y: i64, %p: Obj, %q: Obj) -> i64 {{\nentry:\n{body}  ret %x\n}}\n"
    )
}

/// Whether `op` is `eq` or `ne`.
fn is_eq_ne(op: BinOp) -> bool {
    matches!(op, BinOp::Eq | BinOp::Ne)
}

/// Check every rule on every instruction of `f`; count the rules that fired.
fn check_function(
    cfg_rules: bool,
    f: &Function,
    specs: &[RuleSpec],
    fired: &mut [u64],
    text: &str,
) -> Result<(), String> {
    let cfg = Cfg::new(f);
    let dom = DomTree::new(f, &cfg);
    for inst in f.inst_iter() {
        for (k, rule) in rules().iter().enumerate() {
            let mut cx = MatchCtx::new(f, &dom, None);
            cx.set_current(inst);
            if rule.name == WEB_RULE || CFG_RULES.contains(&rule.name) != cfg_rules {
                continue;
            }
            let got = (rule.matcher)(&mut cx, inst);
            let want = spec_change(&specs[k].instances, f, inst, Some(&dom))?;
            if got != want {
                return Err(format!(
                    "rule {}: on `{:?}` the matcher gives {got:?} but the text says {want:?}\n{text}",
                    rule.name,
                    f.inst(inst).kind
                ));
            }
            fired[k] += u64::from(got.is_some());
        }
    }
    Ok(())
}

/// The rules whose conditions are CFG facts: checked on [`cfg_program`]s.
const CFG_RULES: [&str; 4] = ["phi_same", "phi_null", "br_const", "br_or_nonzero"];

/// The rule whose text states a two-leaf web: not compared.
const WEB_RULE: &str = "phi_const_web";

/// The runners' seed: fixed, so that "every rule fired" is a fact of the
/// test rather than of the run (with a random seed and 6,000 cases, rules
/// the generated instructions reach 2-5 times a run sometimes never fired,
/// and CI failed at random; 24,000 cases make every rule fire at least 10
/// times on seeds 1-8). `RULE_SPECS_SEED=N` explores another seed.
fn fixed_seed() -> RngSeed {
    let seed = std::env::var("RULE_SPECS_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    RngSeed::Fixed(seed.unwrap_or(16))
}

#[test]
fn every_matcher_does_what_its_rule_text_says() {
    let specs: Vec<RuleSpec> = rules().iter().map(|r| table_spec(r).unwrap()).collect();
    let fired = RefCell::new(vec![0u64; rules().len()]);
    let mut runner = TestRunner::new(Config {
        cases: 24_000,
        failure_persistence: None,
        rng_seed: fixed_seed(),
        ..Config::default()
    });
    let gen = prop::collection::vec(any::<Gen>(), 1..5);
    let result = runner.run(&gen, |insts| {
        let text = program(&insts);
        let (m, _) = ir::parse::parse_module(&text, "gen.ir")
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        check_function(false, &m.funcs[0], &specs, &mut fired.borrow_mut(), &text)
            .map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // How often each rule fired, least first (the CFG rules are counted by
    // the other test).
    let mut counts: Vec<(u64, &str)> = rules()
        .iter()
        .enumerate()
        .filter(|(_, r)| r.name != WEB_RULE && !CFG_RULES.contains(&r.name))
        .map(|(k, r)| (fired.borrow()[k], r.name))
        .collect();
    counts.sort();
    eprintln!("least fired: {:?}", &counts[..5]);
    for (k, name) in counts {
        assert!(
            k > 0,
            "rule {name} never fired: the test says nothing about it"
        );
    }
}

/// A loop whose phis take their entries from a few values (the phi itself
/// included), entered by a branch on a constant or a value, with both
/// targets the same now and then (the entry edges' phi entries then agree).
fn cfg_program(g: &(u8, u8, u8, u8, u8, u8)) -> String {
    let &(c1, c2, e1, e2, r2, same) = g;
    let cond = |c: u8| ["0", "1", "-1", "%y", "%o"][c as usize % 5];
    let e1 = ["%a", "%x", "5", "%y"][e1 as usize % 4];
    let e2 = ["%v", "%a", "%x", "%n", "5"][e2 as usize % 5];
    let r1 = ["%p", "null"][(r2 as usize / 3) % 2];
    let r2 = ["%w", "%p", "null"][r2 as usize % 3];
    let (head, entries, rentries) = if same % 3 == 0 {
        (
            format!("br {}, loop, loop", cond(c1)),
            format!("[entry: {e1}], [entry: {e1}]"),
            format!("[entry: {r1}], [entry: {r1}]"),
        )
    } else {
        (
            format!("br {}, loop, exit", cond(c1)),
            format!("[entry: {e1}]"),
            format!("[entry: {r1}]"),
        )
    };
    format!(
        "type Obj {{ f: i64 }}\nfunc @f(%x: i64, %y: i64, %p: Obj) -> i64 {{\nentry:\n  %a = add %x, 1\n  %o = or %y, 2\n  {head}\nloop:\n  %v = phi {entries}, [loop: {e2}]\n  %w = phi {rentries}, [loop: {r2}]\n  %n = add %v, 1\n  br {}, loop, exit\nexit:\n  ret %x\n}}\n",
        cond(c2)
    )
}

#[test]
fn the_cfg_rules_do_what_their_text_says() {
    let specs: Vec<RuleSpec> = rules().iter().map(|r| table_spec(r).unwrap()).collect();
    let fired = RefCell::new(vec![0u64; rules().len()]);
    let mut runner = TestRunner::new(Config {
        cases: 1000,
        failure_persistence: None,
        rng_seed: fixed_seed(),
        ..Config::default()
    });
    let result = runner.run(&any::<(u8, u8, u8, u8, u8, u8)>(), |g| {
        let text = cfg_program(&g);
        let Ok((m, _)) = ir::parse::parse_module(&text, "gen.ir") else {
            return Ok(());
        };
        check_function(true, &m.funcs[0], &specs, &mut fired.borrow_mut(), &text)
            .map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    for name in CFG_RULES {
        let k = rules().iter().position(|r| r.name == name).unwrap();
        assert!(fired.borrow()[k] > 0, "rule {name} never fired");
    }
}
