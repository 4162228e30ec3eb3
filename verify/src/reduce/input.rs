//! Shrinking the input of a candidate: integers to 0, references to null,
//! arrays shortened, shared objects un-aliased (one reference gets its own
//! copy), and objects nothing refers to dropped.

use super::edits::Edit;
use super::Candidate;
use ir::{InputObject, InputSpec, InputValue};

/// Where an input value sits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Slot {
    /// Parameter `i`.
    Param(usize),
    /// Global `i`.
    Global(usize),
    /// Field or element `j` of object `i`.
    Member(usize, usize),
}

fn get(spec: &InputSpec, s: Slot) -> Option<InputValue> {
    match s {
        Slot::Param(i) => spec.params.get(i).copied(),
        Slot::Global(i) => spec.globals.get(i).copied(),
        Slot::Member(o, j) => members(spec.objects.get(o)?).get(j).copied(),
    }
}

fn set(spec: &mut InputSpec, s: Slot, v: InputValue) -> Option<()> {
    let slot = match s {
        Slot::Param(i) => spec.params.get_mut(i)?,
        Slot::Global(i) => spec.globals.get_mut(i)?,
        Slot::Member(o, j) => members_mut(spec.objects.get_mut(o)?).get_mut(j)?,
    };
    *slot = v;
    Some(())
}

fn members(o: &InputObject) -> &[InputValue] {
    match o {
        InputObject::Struct { fields, .. } => fields,
        InputObject::Array { elems, .. } => elems,
    }
}

fn members_mut(o: &mut InputObject) -> &mut Vec<InputValue> {
    match o {
        InputObject::Struct { fields, .. } => fields,
        InputObject::Array { elems, .. } => elems,
    }
}

fn slots(spec: &InputSpec) -> Vec<Slot> {
    let mut out: Vec<Slot> = (0..spec.params.len()).map(Slot::Param).collect();
    out.extend((0..spec.globals.len()).map(Slot::Global));
    for (o, obj) in spec.objects.iter().enumerate() {
        out.extend((0..members(obj).len()).map(|j| Slot::Member(o, j)));
    }
    out
}

/// Drop the objects no parameter or global reaches, renumbering the rest.
pub fn compact(spec: &mut InputSpec) {
    let mut reached = vec![false; spec.objects.len()];
    let mut stack: Vec<usize> = spec
        .params
        .iter()
        .chain(&spec.globals)
        .filter_map(|v| match v {
            InputValue::Obj(i) => Some(*i),
            _ => None,
        })
        .collect();
    while let Some(o) = stack.pop() {
        if o >= reached.len() || reached[o] {
            continue;
        }
        reached[o] = true;
        for v in members(&spec.objects[o]) {
            if let InputValue::Obj(i) = v {
                stack.push(*i);
            }
        }
    }
    if reached.iter().all(|&r| r) {
        return;
    }
    let mut new_index = vec![usize::MAX; reached.len()];
    let mut next = 0;
    for (o, &r) in reached.iter().enumerate() {
        if r {
            new_index[o] = next;
            next += 1;
        }
    }
    let remap = |v: &mut InputValue| {
        if let InputValue::Obj(i) = v {
            *i = new_index.get(*i).copied().unwrap_or(usize::MAX);
        }
    };
    let objects = std::mem::take(&mut spec.objects);
    let names = std::mem::take(&mut spec.object_names);
    for (o, mut obj) in objects.into_iter().enumerate() {
        if reached[o] {
            members_mut(&mut obj).iter_mut().for_each(remap);
            spec.objects.push(obj);
            if let Some(n) = names.get(o) {
                spec.object_names.push(n.clone());
            }
        }
    }
    spec.params.iter_mut().for_each(remap);
    spec.globals.iter_mut().for_each(remap);
}

/// One candidate with `f` applied to the input (then compacted).
fn input_edit(f: impl Fn(&mut InputSpec) -> Option<()> + 'static) -> Edit {
    Box::new(move |c: &Candidate| {
        let mut n = c.clone();
        f(&mut n.input)?;
        compact(&mut n.input);
        (n.input != c.input).then_some(n)
    })
}

/// Every input shrinking edit for the current candidate.
pub fn input_edits(c: &Candidate) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    let spec = &c.input;
    // Un-alias: every reference to an object after the first gets a copy.
    let mut seen = std::collections::HashSet::new();
    for s in slots(spec) {
        if let Some(InputValue::Obj(o)) = get(spec, s) {
            if !seen.insert(o) {
                out.push(input_edit(move |spec| {
                    let obj = spec.objects.get(o)?.clone();
                    spec.objects.push(obj);
                    if !spec.object_names.is_empty() {
                        spec.object_names.push(None);
                    }
                    set(spec, s, InputValue::Obj(spec.objects.len() - 1))
                }));
            }
        }
    }
    // Arrays: empty, then one element shorter.
    for (o, obj) in spec.objects.iter().enumerate() {
        if let InputObject::Array { elems, .. } = obj {
            if !elems.is_empty() {
                out.push(input_edit(move |spec| {
                    members_mut(spec.objects.get_mut(o)?).clear();
                    Some(())
                }));
                out.push(input_edit(move |spec| {
                    members_mut(spec.objects.get_mut(o)?).pop().map(|_| ())
                }));
            }
        }
    }
    // Values: references to null, integers to 0.
    for s in slots(spec) {
        match get(spec, s) {
            Some(InputValue::Obj(_)) => {
                out.push(input_edit(move |spec| set(spec, s, InputValue::Null)));
            }
            Some(InputValue::Int(k)) if k != 0 => {
                out.push(input_edit(move |spec| set(spec, s, InputValue::Int(0))));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_drops_unreached_objects_and_renumbers() {
        let mut spec = InputSpec {
            objects: vec![
                InputObject::Array {
                    elems: vec![],
                    elem: ir::Type::I64,
                },
                InputObject::Array {
                    elems: vec![InputValue::Int(3)],
                    elem: ir::Type::I64,
                },
            ],
            params: vec![InputValue::Obj(1), InputValue::Int(2)],
            globals: vec![],
            object_names: vec![Some("a".into()), Some("b".into())],
        };
        compact(&mut spec);
        assert_eq!(spec.objects.len(), 1);
        assert_eq!(spec.params[0], InputValue::Obj(0));
        assert_eq!(spec.object_names, vec![Some("b".to_string())]);
    }
}
