//! The input-spec text of IR.md §7: bindings, aliasing, cycles, `let` helpers,
//! globals, nested literals and arrays; clear errors; and print → parse round trips.

use ir::{
    parse_input_spec, parse_module, print_input_spec, InputObject, InputSpec, InputValue, Module,
    Pos,
};
use proptest::prelude::*;

const MODULE: &str = "\
type Point { x: i64, y: i64 }
type Node { val: i64, next: Node }
type Cell { v: i64 }
global @count: i64
global @head: Node
func @f(%p: Point, %q: Point, %n: i64, %h: Node, %a: [Cell]) {
entry:
  ret
}
";

fn module() -> Module {
    parse_module(MODULE, "m.ir").unwrap().0
}

fn spec(text: &str) -> InputSpec {
    let m = module();
    parse_input_spec(text, "<--input>", &m, &m.funcs[0]).unwrap_or_else(|e| panic!("{e}"))
}

fn assert_error(text: &str, col: u32, msg: &str) {
    let m = module();
    let e = parse_input_spec(text, "test.ir:3", &m, &m.funcs[0]).unwrap_err();
    assert!(
        e.message.contains(msg),
        "message {:?} lacks {:?}",
        e.message,
        msg
    );
    assert_eq!(e.pos, Pos { line: 1, col }, "{e}");
    assert_eq!(e.file, "test.ir:3");
}

const BASIC: &str = "p = Point{x: 1, y: 2}, q = p, n = 5, h = null, a = null";

#[test]
fn aliased_parameters_share_one_object() {
    let s = spec(BASIC);
    assert_eq!(s.params[0], InputValue::Obj(0));
    assert_eq!(s.params[1], InputValue::Obj(0));
    assert_eq!(s.params[2], InputValue::Int(5));
    assert_eq!(s.objects.len(), 1);
    assert!(matches!(&s.objects[0], InputObject::Struct { fields, .. }
        if fields == &[InputValue::Int(1), InputValue::Int(2)]));
}

#[test]
fn globals_default_to_zero_and_null() {
    let s = spec(BASIC);
    assert_eq!(s.globals, vec![InputValue::Int(0), InputValue::Null]);
    let s = spec(&format!("{BASIC}, @count = 0x10, @head = Node{{val: -7}}"));
    assert_eq!(s.globals[0], InputValue::Int(16));
    let InputValue::Obj(o) = s.globals[1] else {
        panic!()
    };
    assert!(matches!(&s.objects[o], InputObject::Struct { fields, .. }
        if fields == &[InputValue::Int(-7), InputValue::Null]));
}

#[test]
fn a_name_may_be_used_before_its_binding_so_cycles_can_be_written() {
    let s = spec("h = Node{val: 1, next: h}, q = p, p = Point{}, n = 0, a = null");
    let InputValue::Obj(h) = s.params[3] else {
        panic!()
    };
    assert!(matches!(&s.objects[h], InputObject::Struct { fields, .. }
        if fields == &[InputValue::Int(1), InputValue::Obj(h)]));
    assert_eq!(s.params[0], s.params[1]);
}

#[test]
fn nested_literals_and_let_helpers_and_arrays() {
    let s = spec(
        "p = null, q = null, n = 1\n\
         h = Node{val: 1, next: Node{val: 2}}   ; nested literal\n\
         let c = Cell{v: 1}, a = [Cell]{c, c, null}",
    );
    let InputValue::Obj(h) = s.params[3] else {
        panic!()
    };
    let InputObject::Struct { fields, .. } = &s.objects[h] else {
        panic!()
    };
    let InputValue::Obj(inner) = fields[1] else {
        panic!()
    };
    assert!(
        matches!(&s.objects[inner], InputObject::Struct { fields, .. }
        if fields == &[InputValue::Int(2), InputValue::Null])
    );
    let InputValue::Obj(a) = s.params[4] else {
        panic!()
    };
    let InputObject::Array { elems, .. } = &s.objects[a] else {
        panic!()
    };
    assert_eq!(elems[0], elems[1]);
    assert_eq!(elems[2], InputValue::Null);
    assert_eq!(s.objects.len(), 4);
}

#[test]
fn errors_name_the_problem_and_its_column() {
    assert_error("p = Pt{}", 5, "unknown type 'Pt'");
    assert_error("p = Point{z: 1}", 11, "unknown field 'z' of type Point");
    assert_error("p = zz", 5, "unknown name 'zz'");
    assert_error("zz = 1", 1, "unknown parameter 'zz' of @f");
    assert_error("@nope = 1", 1, "unknown global @nope");
    assert_error("p = 5", 5, "expected Point, found the integer 5");
    assert_error(
        "p = Node{}",
        5,
        "expected Point, found a value of type Node",
    );
    assert_error(
        "let c = Cell{}, a = [i64]{1}",
        21,
        "type mismatch for parameter 'a': expected [Cell], found a value of type [i64]",
    );
    assert_error(
        "let c = Point{}, a = [Cell]{c}",
        29,
        "element 0 of [Cell]: expected Cell",
    );
    assert_error("n = 1, n = 2", 8, "parameter 'n' is bound twice");
    assert_error("let c = 1, let c = 2", 16, "name 'c' is bound twice");
    assert_error("@count = 1, @count = 2", 13, "global @count is bound twice");
    assert_error("p = q, q = p", 5, "never reaches a value");
    assert_error(
        "p = null, q = null, n = 1, h = null",
        36,
        "missing binding for parameter 'a'",
    );
    assert_error("p = null q = null", 10, "expected ',' between bindings");
}

/// The heap reachable from the roots (params, then globals) in a canonical
/// numbering, so specs can be compared regardless of object order.
fn canonical(s: &InputSpec) -> (Vec<String>, Vec<String>) {
    let mut ids: Vec<Option<usize>> = vec![None; s.objects.len()];
    let mut queue = std::collections::VecDeque::new();
    let name = |v: InputValue,
                ids: &mut Vec<Option<usize>>,
                q: &mut std::collections::VecDeque<usize>| match v {
        InputValue::Int(i) => format!("{i}"),
        InputValue::Null => "null".into(),
        InputValue::Obj(o) => {
            let next = ids.iter().flatten().count();
            let id = *ids[o].get_or_insert_with(|| {
                q.push_back(o);
                next
            });
            format!("#{id}")
        }
    };
    let roots: Vec<String> = s
        .params
        .iter()
        .chain(&s.globals)
        .map(|&v| name(v, &mut ids, &mut queue))
        .collect();
    let mut heap = Vec::new();
    while let Some(o) = queue.pop_front() {
        let (head, vals) = match &s.objects[o] {
            InputObject::Struct { ty, fields } => (format!("{ty:?}"), fields.clone()),
            InputObject::Array { elem, elems } => (format!("{elem:?}"), elems.clone()),
        };
        let vals: Vec<String> = vals
            .into_iter()
            .map(|v| name(v, &mut ids, &mut queue))
            .collect();
        heap.push(format!("{head}{{{}}}", vals.join(",")));
    }
    (roots, heap)
}

#[test]
fn printing_writes_objects_at_their_first_parameter_and_helpers_as_lets() {
    let m = module();
    let s = spec("q = p, p = Point{x: 1}, n = 5, let c = Cell{v: 3}, a = [Cell]{c, c}, h = null");
    let text = print_input_spec(&s, &m, &m.funcs[0]);
    assert_eq!(
        text,
        "p = Point{x: 1, y: 0}, q = p, n = 5, h = null, a = [Cell]{c, c}, \
         @count = 0, @head = null, let c = Cell{v: 3}"
    );
    assert_eq!(canonical(&spec(&text)), canonical(&s));
}

fn random_spec(m: &Module, seed: u64) -> InputSpec {
    let mut r = seed | 1;
    let mut next = move |n: usize| {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        (r % n.max(1) as u64) as usize
    };
    let n_objs = next(6);
    // Decide every object's type first, then fill slots with fitting values.
    let kinds: Vec<usize> = (0..n_objs).map(|_| next(4)).collect(); // Point, Node, Cell, [Cell]
    let of_kind = |k: usize| -> Vec<usize> { (0..n_objs).filter(|&i| kinds[i] == k).collect() };
    let pick_ref = |k: usize, next: &mut dyn FnMut(usize) -> usize| {
        let c = of_kind(k);
        if c.is_empty() || next(4) == 0 {
            InputValue::Null
        } else {
            InputValue::Obj(c[next(c.len())])
        }
    };
    let int = |next: &mut dyn FnMut(usize) -> usize| match next(4) {
        0 => i64::MIN,
        1 => -(next(50) as i64),
        _ => next(1000) as i64,
    };
    let node = m.struct_by_name("Node").unwrap();
    let point = m.struct_by_name("Point").unwrap();
    let cell = m.struct_by_name("Cell").unwrap();
    let mut objects = Vec::new();
    for &k in &kinds {
        objects.push(match k {
            0 => InputObject::Struct {
                ty: point,
                fields: vec![
                    InputValue::Int(int(&mut next)),
                    InputValue::Int(int(&mut next)),
                ],
            },
            1 => InputObject::Struct {
                ty: node,
                fields: vec![InputValue::Int(int(&mut next)), pick_ref(1, &mut next)],
            },
            2 => InputObject::Struct {
                ty: cell,
                fields: vec![InputValue::Int(int(&mut next))],
            },
            _ => InputObject::Array {
                elem: ir::Type::object(cell),
                elems: (0..next(4)).map(|_| pick_ref(2, &mut next)).collect(),
            },
        });
    }
    let params = vec![
        pick_ref(0, &mut next),
        pick_ref(0, &mut next),
        InputValue::Int(int(&mut next)),
        pick_ref(1, &mut next),
        pick_ref(3, &mut next),
    ];
    let globals = vec![InputValue::Int(int(&mut next)), pick_ref(1, &mut next)];
    let names = (0..n_objs)
        .map(|i| (next(2) == 0).then(|| format!("obj{i}")))
        .collect();
    InputSpec {
        objects,
        params,
        globals,
        object_names: names,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn printed_specs_parse_back_to_the_same_heap(seed in any::<u64>()) {
        let m = module();
        let s = random_spec(&m, seed);
        let text = print_input_spec(&s, &m, &m.funcs[0]);
        let back = parse_input_spec(&text, "<gen>", &m, &m.funcs[0])
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        prop_assert_eq!(back.objects.len(), s.objects.len());
        prop_assert_eq!(canonical(&back), canonical(&s));
    }

    #[test]
    fn arbitrary_spec_text_never_panics(text in "\\PC{0,120}") {
        let m = module();
        let _ = parse_input_spec(&text, "<fuzz>", &m, &m.funcs[0]);
    }
}
