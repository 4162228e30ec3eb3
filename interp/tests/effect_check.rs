//! Effect checking: accesses inside the declared effects are clean; accesses
//! outside a (deliberately) too-small declaration are reported with the
//! instruction and the location.

use interp::effect_check::{declared_effects, run_checked, run_checked_with};
use interp::{AccessKind, AccessLoc, AccessLog, Config, EffectViolation, Program};
use ir::effects::{Effects, HeapNode};
use ir::{FuncId, Inst, InstKind, Module};

fn parse(src: &str) -> Module {
    ir::parse_module(src, "test.ir").expect("parses").0
}

fn main_of(m: &Module) -> FuncId {
    m.func_by_name("main").expect("has @main")
}

fn run(m: &Module, input: &str) -> Vec<EffectViolation> {
    let f = main_of(m);
    let spec = ir::parse_input_spec(input, "<input>", m, m.func(f)).expect("input");
    let (_, v) = run_checked(&Program::new(m), f, &spec, &Config::default()).expect("runs");
    v
}

fn run_with(
    m: &Module,
    input: &str,
    effects_of: impl FnMut(&Module, FuncId, Inst) -> Effects,
) -> Vec<EffectViolation> {
    let f = main_of(m);
    let spec = ir::parse_input_spec(input, "<input>", m, m.func(f)).expect("input");
    let (_, v) =
        run_checked_with(&Program::new(m), f, &spec, &Config::default(), effects_of).expect("runs");
    v
}

/// Every access the run made (to make sure a clean result is not vacuous).
fn log(m: &Module, input: &str) -> AccessLog {
    let f = main_of(m);
    let spec = ir::parse_input_spec(input, "<input>", m, m.func(f)).expect("input");
    let mut log = AccessLog::new();
    Program::new(m)
        .run_observed(f, &spec, &Config::default(), &mut log)
        .expect("runs");
    log
}

fn is_kind(m: &Module, f: FuncId, i: Inst, pred: fn(&InstKind) -> bool) -> bool {
    pred(&m.func(f).inst(i).kind)
}

const DECLARED_EXTERN: &str = "
type Point { x: i64, y: i64 }
extern @bump(Point) -> i64 reads(Point.x) writes(Point.x)
func @main(%p: Point) -> i64 {
entry:
  %r = call @bump(%p)
  %r2 = call @bump(%p)
  %x = load %p.x
  %s0 = add %r, %r2
  %s = add %s0, %x
  ret %s
}
";

#[test]
fn extern_with_declared_writes_staying_inside_is_clean() {
    let m = parse(DECLARED_EXTERN);
    let input = "p = Point{x: 1, y: 2}";
    assert_eq!(run(&m, input), vec![]);
    // The step did write Point.x (the check was not vacuous) and nothing else.
    let writes: Vec<AccessLoc> = log(&m, input)
        .entries
        .iter()
        .filter(|(_, k, _)| *k == AccessKind::Write)
        .map(|&(_, _, l)| l)
        .collect();
    assert!(!writes.is_empty());
    assert!(writes
        .iter()
        .all(|l| matches!(l, AccessLoc::Heap(ir::EffectLoc::Field(f)) if f.index == 0)));
}

#[test]
fn undeclared_extern_checked_against_a_too_small_declaration_is_caught() {
    // The program runs an extern that may touch everything; the declarations
    // are taken from a module that claims it touches only Point.x.
    let wild = parse(&DECLARED_EXTERN.replace(" reads(Point.x) writes(Point.x)", ""));
    let claimed = parse(DECLARED_EXTERN);
    let v = run_with(&wild, "p = Point{x: 1, y: 2}", |_, f, i| {
        declared_effects(&claimed, f, i)
    });
    assert!(!v.is_empty(), "the Point.y write must be caught");
    let y = v
        .iter()
        .find(|v| v.kind == AccessKind::Write && v.loc_text == "Point.y")
        .expect("a write of Point.y");
    assert!(y.inst_text.starts_with("%r") && y.inst_text.ends_with(" = call @bump(%p)"));
    assert_eq!(y.func_name, "main");
    assert_eq!(
        y.to_string(),
        format!(
            "effect violation in @main: `{}` writes Point.y, outside its declared writes (Point.x)",
            y.inst_text
        )
    );
    // Reads of Point.y (the result depends on every readable slot) are caught too.
    assert!(v
        .iter()
        .any(|v| v.kind == AccessKind::Read && v.loc_text == "Point.y"));
    // Nothing else in the function is blamed.
    assert!(v.iter().all(|v| v.inst_text.contains("call @bump")));
    // Each (instruction, kind, location) once.
    let mut keys: Vec<_> = v.iter().map(|v| (v.site, v.kind, v.loc)).collect();
    let n = keys.len();
    keys.dedup();
    assert_eq!(keys.len(), n);
}

const PLAIN: &str = "
type Point { x: i64, y: i64 }
global @count: i64
func @main(%p: Point, %a: [i64]) -> i64 {
entry:
  store %p.x, 5
  %e = load %a[2]
  store @count, %e
  %o = new Point
  escape %p
  ret %e
}
";

#[test]
fn plain_instructions_are_clean_under_the_effects_table() {
    let m = parse(PLAIN);
    let input = "p = Point{x: 1, y: 2}, a = [i64]{1, 2, 3}";
    assert_eq!(run(&m, input), vec![]);
    assert!(log(&m, input).entries.len() >= 6);
}

#[test]
fn a_store_declared_pure_is_caught_with_instruction_and_location() {
    let m = parse(PLAIN);
    let main = main_of(&m);
    let v = run_with(
        &m,
        "p = Point{x: 1, y: 2}, a = [i64]{1, 2, 3}",
        |m, f, i| {
            if f == main && is_kind(m, f, i, |k| matches!(k, InstKind::Store { .. })) {
                Effects::none()
            } else {
                declared_effects(m, f, i)
            }
        },
    );
    let texts: Vec<String> = v.iter().map(|v| v.to_string()).collect();
    assert_eq!(
        texts,
        vec![
            "effect violation in @main: `store %p.x, 5` writes Point.x, outside its declared writes (none)",
            "effect violation in @main: `store @count, %e` writes @count, outside its declared writes (none)",
        ]
    );
}

#[test]
fn element_reads_allocation_and_output_are_checked() {
    let m = parse(PLAIN);
    let main = main_of(&m);
    let v = run_with(
        &m,
        "p = Point{x: 1, y: 2}, a = [i64]{1, 2, 3}",
        |m, f, i| {
            let mut e = declared_effects(m, f, i);
            if f == main {
                e.reads
                    .retain(|n| !matches!(n, HeapNode::Element(_) | HeapNode::Heap));
                e.writes
                    .retain(|n| !matches!(n, HeapNode::Alloc | HeapNode::Output));
            }
            e
        },
    );
    let locs: Vec<(AccessKind, &str, &str)> = v
        .iter()
        .map(|v| (v.kind, v.loc_text.as_str(), v.inst_text.as_str()))
        .collect();
    assert!(locs.contains(&(AccessKind::Read, "[i64] elements", "%e = load %a[2]")));
    assert!(locs.contains(&(AccessKind::Write, "Alloc", "%o = new Point")));
    assert!(locs.contains(&(AccessKind::Write, "Output", "escape %p")));
    assert!(locs.contains(&(AccessKind::Read, "Point.x", "escape %p")));
}

const CALLS: &str = "
type Point { x: i64, y: i64 }
func @set(%q: Point) {
entry:
  store %q.y, 9
  ret
}
func @main(%p: Point) -> i64 {
entry:
  call @set(%p)
  %v = load.volatile %p.x
  ret %v
}
";

#[test]
fn callee_and_volatile_accesses_are_attributed_to_the_causing_instruction() {
    let m = parse(CALLS);
    assert_eq!(run(&m, "p = Point{x: 1, y: 2}"), vec![]);
    let main = main_of(&m);
    let v = run_with(&m, "p = Point{x: 1, y: 2}", |m, f, i| {
        if f == main && !is_kind(m, f, i, |k| matches!(k, InstKind::Ret(_))) {
            Effects::none()
        } else {
            declared_effects(m, f, i)
        }
    });
    // The callee's own store is fine (its declaration holds); the call
    // instruction in @main made it and declared nothing.
    assert!(v.iter().any(|v| v.inst_text == "call @set(%p)"
        && v.loc_text == "Point.y"
        && v.kind == AccessKind::Write));
    assert!(v.iter().all(|v| v.func_name == "main"));
    // The volatile load: its own read of Point.x and the environment step's writes.
    assert!(v
        .iter()
        .any(|v| v.inst_text == "%v = load.volatile %p.x" && v.kind == AccessKind::Read));
    assert!(v
        .iter()
        .any(|v| v.inst_text == "%v = load.volatile %p.x" && v.kind == AccessKind::Write));
}

#[test]
fn each_violation_is_reported_once() {
    let src = "
type Point { x: i64, y: i64 }
func @main(%p: Point, %n: i64) -> i64 {
entry:
  jmp loop
loop:
  %i = phi [entry: 0], [loop: %j]
  store %p.x, %i
  %j = add %i, 1
  %c = slt %j, %n
  br %c, loop, done
done:
  ret %j
}
";
    let m = parse(src);
    let v = run_with(&m, "p = Point{x: 1, y: 2}, n = 5", |_, _, _| {
        Effects::none()
    });
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].inst_text, "store %p.x, %i");
}

/// `access_allowed` (whose `World` test skips the walk up the tree) gives
/// the verdict of the definition, "some declared node contains the access's
/// node", for every declared node and every kind of access location.
#[test]
fn access_verdicts_follow_heap_tree_containment() {
    use interp::effect_check::{access_allowed, access_node};
    use ir::{EffectLoc, FieldRef, GlobalId, StructId, Type};
    let field = |ty, index| {
        AccessLoc::Heap(EffectLoc::Field(FieldRef {
            ty: StructId(ty),
            index,
        }))
    };
    let locs = [
        field(0, 0),
        field(0, 1),
        field(1, 0),
        AccessLoc::Heap(EffectLoc::Elements(Type::I64)),
        AccessLoc::Heap(EffectLoc::Global(GlobalId::new(0))),
        AccessLoc::Heap(EffectLoc::Global(GlobalId::new(1))),
        AccessLoc::Alloc,
        AccessLoc::Output,
    ];
    // Every node of the tree these locations live in: theirs and their ancestors.
    let mut nodes: Vec<HeapNode> = Vec::new();
    for &loc in &locs {
        let mut cur = Some(access_node(loc));
        while let Some(n) = cur {
            if !nodes.contains(&n) {
                nodes.push(n);
            }
            cur = n.parent();
        }
    }
    assert!(nodes.contains(&HeapNode::World) && nodes.contains(&HeapNode::Fields));
    let mut allowed_by_world = 0;
    for &declared in &nodes {
        for kind in [AccessKind::Read, AccessKind::Write] {
            let mut eff = Effects::none();
            match kind {
                AccessKind::Read => eff.reads.push(declared),
                AccessKind::Write => eff.writes.push(declared),
            }
            for &loc in &locs {
                let want = declared.contains(access_node(loc));
                assert_eq!(
                    access_allowed(&eff, kind, loc),
                    want,
                    "{declared:?} {loc:?}"
                );
                // The other kind declares nothing: never allowed.
                let other = match kind {
                    AccessKind::Read => AccessKind::Write,
                    AccessKind::Write => AccessKind::Read,
                };
                assert!(!access_allowed(&eff, other, loc), "{declared:?} {loc:?}");
                allowed_by_world += (declared == HeapNode::World && want) as u32;
            }
        }
    }
    assert_eq!(allowed_by_world, 2 * locs.len() as u32);
    assert!(!access_allowed(
        &Effects {
            reads: [HeapNode::Fields].into_iter().collect(),
            ..Effects::none()
        },
        AccessKind::Read,
        AccessLoc::Alloc
    ));
}

/// A call of a module function is checked against its callee's summary
/// (`ir::summaries`): what the optimizer relies on. A correct summary
/// leaves a clean run; the same call claimed to write nothing is caught,
/// at the call, for the callee's store.
#[test]
fn calls_are_checked_against_their_callees_summaries() {
    let m = parse(
        "type Point { x: i64, y: i64 }
func @set(%q: Point) -> i64 {
entry:
  store %q.y, 3
  %v = load %q.x
  %w = add %v, %v
  ret %w
}
func @main(%p: Point) -> i64 {
entry:
  %r = call @set(%p)
  ret %r
}
",
    );
    let f = main_of(&m);
    let call = m.func(f).inst_iter().next().expect("the call");
    let summary = declared_effects(&m, f, call);
    assert_ne!(summary, Effects::world(), "a summary, not World");
    assert_eq!(summary.writes.len(), 1);
    assert!(run(&m, "p = Point{x: 1, y: 2}").is_empty());
    assert!(
        log(&m, "p = Point{x: 1, y: 2}").entries.len() >= 2,
        "not vacuous"
    );
    let v = run_with(&m, "p = Point{x: 1, y: 2}", |m, g, i| {
        let mut e = declared_effects(m, g, i);
        if g == f && i == call {
            e.writes.clear();
        }
        e
    });
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!((v[0].site.inst, v[0].kind), (call, AccessKind::Write));
}

/// Inputs validated once (`Program::validate`) run on another program with
/// the same signature and layout unchanged; a program whose parameter types
/// or struct layout differ validates them again and refuses them, with the
/// message a fresh validation gives (the proof never goes stale).
#[test]
fn validated_inputs_are_validated_again_when_the_signature_differs() {
    use interp::effect_check::run_checked_valid;
    let point = "type Point { x: i64, y: i64 }
func @main(%p: Point) -> i64 {
entry:
  %x = load %p.x
  ret %x
}";
    let a = parse(point);
    let f = main_of(&a);
    let spec =
        ir::parse_input_spec("p = Point{x: 7, y: 2}", "<input>", &a, a.func(f)).expect("input");
    let prog_a = Program::new(&a);
    let valid = prog_a.validate(f, &spec).expect("fits");
    // The same module again: accepted, same run as a fresh check.
    let same = parse(point);
    let prog_same = Program::new(&same);
    let (e1, _) = run_checked_valid(&prog_same, f, &valid, &Config::default()).expect("fits");
    let (e2, _) = run_checked(&prog_same, f, &spec, &Config::default()).expect("fits");
    assert_eq!(e1, e2);
    assert_eq!(e1.behaviour.outcome.to_string(), "return 7");
    // Another parameter type, then another struct layout: validated again.
    for other in [
        "type Point { x: i64, y: i64 }
func @main(%p: i64) -> i64 {
entry:
  ret %p
}",
        "type Point { x: i64 }
func @main(%p: Point) -> i64 {
entry:
  %x = load %p.x
  ret %x
}",
    ] {
        let m = parse(other);
        let prog = Program::new(&m);
        let fresh = prog.validate(f, &spec).expect_err("does not fit");
        let err =
            run_checked_valid(&prog, f, &valid, &Config::default()).expect_err("validated again");
        assert_eq!(err, fresh);
    }
}

/// A validated input keeps the initial heap its first run built and later
/// runs start from a copy: the same executions as fresh runs, under a
/// budget the inputs no longer fit (heap_exhausted, as a fresh run) and on
/// a program with another globals block (a copy would be misplaced there).
#[test]
fn a_kept_initial_heap_gives_the_runs_of_a_fresh_build() {
    use interp::effect_check::run_checked_valid;
    let src = |globals: &str| {
        format!(
            "type Point {{ x: i64, y: i64 }}
{globals}func @main(%p: Point, %a: [i64]) -> i64 {{
entry:
  %x = load %p.x
  %e = load %a[1]
  %s = add %x, %e
  store %p.y, %s
  ret %s
}}"
        )
    };
    let a = parse(&src(""));
    let f = main_of(&a);
    let input = "p = Point{x: 7, y: 2}, a = [i64]{5, 6, 7}";
    let spec = ir::parse_input_spec(input, "<input>", &a, a.func(f)).expect("input");
    let prog = Program::new(&a);
    let valid = prog.validate(f, &spec).expect("fits");
    let fresh = |p: &Program, budget: usize| {
        let config = Config {
            heap_words: budget,
            ..Config::default()
        };
        run_checked(p, f, &spec, &config).expect("fits").0
    };
    for budget in [Config::default().heap_words, 8, 64, 4] {
        let config = Config {
            heap_words: budget,
            ..Config::default()
        };
        let (e, _) = run_checked_valid(&prog, f, &valid, &config).expect("fits");
        assert_eq!(e, fresh(&prog, budget), "budget {budget}");
    }
    assert_eq!(
        run_checked_valid(
            &prog,
            f,
            &valid,
            &Config {
                heap_words: 8,
                ..Config::default()
            }
        )
        .expect("fits")
        .0
        .behaviour
        .outcome
        .to_string(),
        "trap heap_exhausted"
    );
    let b = parse(&src("global @g: i64\n"));
    let prog_b = Program::new(&b);
    let (e, _) = run_checked_valid(&prog_b, f, &valid, &Config::default()).expect("fits");
    assert_eq!(e, fresh(&prog_b, Config::default().heap_words));
    assert!(
        e.behaviour.to_string().contains("@g = 0"),
        "{}",
        e.behaviour
    );
}
