//! Statistical properties of the generator over fixed seeds (so every failure
//! reproduces): the share of trapping inputs and of each trap kind, the size
//! tail and its eviction of LSE's tracked locations, and the constructs it
//! promises (recursion, `unreachable`, null bases of every reference type,
//! phi cycles of references, reference-typed selects with `null`, arrays of
//! references holding `null`, externs whose declared effects overlap the
//! caller's locations, blocks no path reaches).

use ir::{Addr, Callee, Function, InstKind, Module, Type, Value};
use passes::{Pass, Stats};
use std::collections::BTreeMap;
use verify::gen::{generate_from_seed, GenConfig, Generated};
use verify::inputs::instantiate_all;
use verify::oracle::{check_program, OracleConfig};

/// Seeds of the form used by the sweep (program `k` of seed 0, shard 0).
fn seeds(n: u64) -> impl Iterator<Item = u64> {
    (0..n).map(|k| verify::sweep::program_seed(0, 0, k))
}

#[test]
fn trapping_inputs_are_ten_to_twenty_percent_and_every_kind_happens() {
    let cfg = GenConfig::default();
    let ocfg = OracleConfig::default();
    let (mut runs, mut trapping) = (0u64, 0u64);
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    for seed in seeds(2000) {
        let g = generate_from_seed(seed, &cfg);
        let inputs = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let r = check_program(&g.module, g.main, &inputs, &[], &ocfg);
        runs += r.runs - r.inconclusive;
        trapping += r.trapping;
        for (k, n) in r.trap_kinds {
            *kinds.entry(k).or_default() += n;
        }
    }
    let share = trapping as f64 / runs as f64;
    eprintln!("trapping {trapping} of {runs} inputs: {kinds:?}");
    assert!((0.10..=0.20).contains(&share), "trapping share {share:.3}");
    for kind in [
        "null_deref",
        "out_of_bounds",
        "div_by_zero",
        "guard_failed",
        "bad_length",
        "unreachable",
    ] {
        let n = kinds.get(kind).copied().unwrap_or(0);
        assert!(
            n as f64 >= 0.005 * runs as f64,
            "{kind}: {n} of {runs} inputs ({kinds:?})"
        );
    }
}

/// The most locations LSE's forwarding ever tracks at once in `m` is above its cap.
fn evicts(m: &Module) -> bool {
    let mut m = m.clone();
    let mut stats = Stats::default();
    passes::lse::Lse::default().run(&mut m, &mut stats);
    stats.get("lse", "evictions") > 0
}

#[test]
fn about_one_program_in_twenty_is_large_and_overflows_lse_s_cap() {
    let cfg = GenConfig::default();
    let n = 2000;
    let (mut tail, mut evicting, mut flagged) = (0, 0, 0);
    for seed in seeds(n) {
        let g = generate_from_seed(seed, &cfg);
        let size = g.module.func(g.main).placed_inst_count();
        // `Generated::tail` (what `verify --generated` reports apart): a
        // program outside the tail is never large.
        assert!(g.tail || size < 150, "seed {seed}: {size} instructions");
        flagged += usize::from(g.tail);
        if (150..=400).contains(&size) {
            tail += 1;
            evicting += evicts(&g.module) as usize;
        }
    }
    let share = tail as f64 / n as f64;
    eprintln!("{tail} of {n} programs large, {evicting} of them evict");
    assert!((0.03..=0.08).contains(&share), "size tail share {share:.3}");
    assert!(flagged >= tail, "{flagged} flagged, {tail} large");
    assert!(
        evicting * 10 >= tail * 8,
        "only {evicting} of {tail} large programs evict"
    );
}

#[test]
fn without_the_tail_no_program_is_large() {
    let cfg = GenConfig {
        tail_chance: 0,
        ..GenConfig::default()
    };
    for seed in seeds(300) {
        let g = generate_from_seed(seed, &cfg);
        assert!(g.module.func(g.main).placed_inst_count() < 150);
    }
}

#[test]
fn same_seed_same_program_also_in_the_tail() {
    let cfg = GenConfig::default();
    let mut large = 0;
    for seed in seeds(200) {
        let a = generate_from_seed(seed, &cfg);
        let b = generate_from_seed(seed, &cfg);
        assert_eq!(ir::print_module(&a.module), ir::print_module(&b.module));
        large += (a.module.func(a.main).placed_inst_count() >= 150) as usize;
    }
    assert!(large > 0, "no large program among 200 seeds");
}

/// The constructs one program contains.
#[derive(Default, Debug)]
struct Seen {
    recursion: usize,
    unreachable: usize,
    dead_block: usize,
    ref_select_null: usize,
    ref_phi_cycle: usize,
    null_phi_cycle: usize,
    null_elem_store: usize,
    overlapping_extern: usize,
    helper_call: usize,
    null_bases: BTreeMap<String, usize>,
}

fn is_null(f: &Function, v: Value) -> bool {
    f.value_type(v) == Type::NULL
}

fn scan(g: &Generated, seen: &mut Seen) {
    let m = &g.module;
    let mut flags = [false; 9];
    let mut null_base_types = Vec::new();
    for (fid, f) in m.funcs.iter().enumerate() {
        let reach = reachable(f);
        for b in &f.layout {
            if !reach.contains(b) {
                flags[2] = true;
            }
            for &i in &f.blocks[b.index()].insts {
                let inst = f.inst(i);
                match &inst.kind {
                    InstKind::Call {
                        callee: Callee::Func(c),
                        ..
                    } => {
                        flags[0] |= c.index() == fid;
                        flags[8] |= c.index() != fid;
                    }
                    InstKind::Call {
                        callee: Callee::Extern(e),
                        ..
                    } => {
                        let name = &m.externs[e.index()].name;
                        flags[7] |= name == "relink" || name == "shuffle";
                    }
                    InstKind::Unreachable => flags[1] = true,
                    InstKind::Select(_, x, y) => {
                        let ty = f.value_type(inst.result.expect("select result"));
                        flags[3] |= ty.is_ref() && (is_null(f, *x) || is_null(f, *y));
                    }
                    InstKind::Phi(entries) => {
                        let me = inst.result.expect("phi result");
                        if f.value_type(me).is_ref() {
                            for &(_, v) in entries {
                                if names_phi(f, v, me) {
                                    flags[4] = true;
                                    flags[5] |= entries.iter().any(|&(_, w)| is_null(f, w));
                                }
                            }
                        }
                    }
                    InstKind::Store {
                        addr: Addr::Elem { .. },
                        value,
                        ..
                    } if is_null(f, *value) => flags[6] = true,
                    InstKind::Load { addr, .. } | InstKind::Store { addr, .. } => {
                        if let Some(base) = addr_base(addr) {
                            if loaded_from_nulled_global(f, base) {
                                null_base_types.push(m.type_name(f.value_type(base)));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    let counters = [
        &mut seen.recursion,
        &mut seen.unreachable,
        &mut seen.dead_block,
        &mut seen.ref_select_null,
        &mut seen.ref_phi_cycle,
        &mut seen.null_phi_cycle,
        &mut seen.null_elem_store,
        &mut seen.overlapping_extern,
        &mut seen.helper_call,
    ];
    for (c, f) in counters.into_iter().zip(flags) {
        *c += f as usize;
    }
    null_base_types.sort();
    null_base_types.dedup();
    for t in null_base_types {
        *seen.null_bases.entry(t).or_default() += 1;
    }
}

fn addr_base(addr: &Addr) -> Option<Value> {
    match *addr {
        Addr::Field { base, .. } | Addr::Elem { base, .. } => Some(base),
        Addr::Global(_) => None,
    }
}

/// `base = load @g` right after `store @g, null`: a base a forwarding pass sees as `null`.
fn loaded_from_nulled_global(f: &Function, base: Value) -> bool {
    let Some(i) = f.def_inst(base) else {
        return false;
    };
    let InstKind::Load {
        addr: Addr::Global(g),
        ..
    } = f.inst(i).kind
    else {
        return false;
    };
    let Some(b) = f.inst(i).block else {
        return false;
    };
    let insts = &f.blocks[b.index()].insts;
    let at = insts.iter().position(|&x| x == i).unwrap_or(0);
    at > 0
        && matches!(f.inst(insts[at - 1]).kind,
            InstKind::Store { addr: Addr::Global(h), value, .. } if h == g && is_null(f, value))
}

/// Whether `v` is a phi with `target` among its operands.
fn names_phi(f: &Function, v: Value, target: Value) -> bool {
    f.def_inst(v).is_some_and(|i| match &f.inst(i).kind {
        InstKind::Phi(entries) => entries.iter().any(|&(_, w)| w == target),
        _ => false,
    })
}

fn reachable(f: &Function) -> Vec<ir::Block> {
    let mut seen = vec![f.entry()];
    let mut stack = vec![f.entry()];
    while let Some(b) = stack.pop() {
        let Some(&last) = f.blocks[b.index()].insts.last() else {
            continue;
        };
        let succs: Vec<ir::Block> = match f.inst(last).kind {
            InstKind::Jmp(t) => vec![t],
            InstKind::Br(_, t, e) => vec![t, e],
            _ => vec![],
        };
        for s in succs {
            if !seen.contains(&s) {
                seen.push(s);
                stack.push(s);
            }
        }
    }
    seen
}

#[test]
fn the_promised_constructs_appear() {
    let cfg = GenConfig::default();
    let n = 2000;
    let mut seen = Seen::default();
    for seed in seeds(n) {
        scan(&generate_from_seed(seed, &cfg), &mut seen);
    }
    eprintln!("{seen:?}");
    // Each construct in at least 1 program in 200 (most are far more common).
    let floor = (n / 200) as usize;
    for (name, k) in [
        ("recursion", seen.recursion),
        ("unreachable", seen.unreachable),
        ("dead block", seen.dead_block),
        ("reference select with null", seen.ref_select_null),
        ("phi cycle of references", seen.ref_phi_cycle),
        ("phi cycle of references over null", seen.null_phi_cycle),
        ("null stored into an array element", seen.null_elem_store),
        (
            "extern with overlapping declared effects",
            seen.overlapping_extern,
        ),
        ("call of a module function", seen.helper_call),
    ] {
        assert!(k >= floor, "{name}: {k} of {n} programs ({seen:?})");
    }
    for ty in ["Node", "Pair", "[i64]", "[Node]"] {
        let k = seen.null_bases.get(ty).copied().unwrap_or(0);
        assert!(k >= floor, "null base of type {ty}: {k} ({seen:?})");
    }
}

#[test]
fn programs_with_the_new_shapes_print_and_parse_back() {
    // Phi cycles over `null` once printed bare `null` (issue 10): every
    // generated program, the size tail included, must round-trip exactly.
    let cfg = GenConfig::default();
    for seed in seeds(2000) {
        let g = generate_from_seed(seed, &cfg);
        let text = ir::print_module(&g.module);
        let (m2, _) = ir::parse_module(&text, "gen.ir")
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        assert_eq!(ir::print_module(&m2), text, "seed {seed}");
    }
}

/// The programs (of `n` seeds) in which each of the rule floor's rules
/// fires when its pass runs alone on the generated module.
fn floor_rule_programs(n: u64) -> BTreeMap<&'static str, usize> {
    const RULES: [(&str, &str, &str); 15] = [
        ("peeps", "peeps", "ule_zero"),
        ("peeps", "peeps", "and_bool_even"),
        ("lse", "lse", "latch_loads_inserted"),
        ("lse", "lse", "promoted_loads_hoisted"),
        ("lse", "lse", "promoted_entry_stores_sunk"),
        ("dce", "dce", "stores_in_loops_without_exit"),
        ("dce", "dce", "first_visit_traps"),
        ("peeps", "peeps", "equal_trapping_arms"),
        ("peeps", "peeps", "br_or_nonzero"),
        ("dce", "dce", "return_blocks_merged"),
        ("dce", "dce", "select_arms_known_from_edges"),
        ("peeps", "peeps", "select_ne_arms"),
        ("peeps", "peeps", "select_eq_arms"),
        ("peeps", "peeps", "select_ne_arms_swapped"),
        ("peeps", "peeps", "select_eq_arms_swapped"),
    ];
    let cfg = GenConfig::default();
    let mut fired: BTreeMap<&'static str, usize> = RULES.iter().map(|r| (r.2, 0)).collect();
    for seed in seeds(n) {
        let g = generate_from_seed(seed, &cfg);
        for plan in ["peeps", "lse", "dce"] {
            let mut m = g.module.clone();
            let pm = passes::PassManager::from_list(plan).expect("a pass");
            let stats = pm.run(&mut m).expect("the pass runs");
            for &(p, pass, rule) in &RULES {
                if p == plan && stats.get(pass, rule) > 0 {
                    *fired.get_mut(rule).expect("a floor rule") += 1;
                }
            }
        }
    }
    fired
}

#[test]
fn the_rule_floor_s_rules_fire_in_two_programs_in_a_thousand() {
    // The sweep lists a rule that fires in fewer than 1 program in 1,000 as
    // rarely exercised; the first four were, and the last two fired in
    // about 1.2 and 1.4 programs per 1,000, before `gen::floor` made their
    // forms; `equal_trapping_arms` fired in 2 of 73,009 sweep programs.
    // `br_or_nonzero`, `return_blocks_merged`, `select_arms_known_from_edges`,
    // `select_ne_arms` and `select_eq_arms` fired in 395, 400, 213, 99 and 18
    // of session 15's 551,887 sweep programs, and `promoted_entry_stores_sunk`
    // in about 1 per 1,000; the two swapped select rules are session 16's
    // (the floor's select shape makes them too).
    let n = 2000;
    let fired = floor_rule_programs(n);
    eprintln!("{fired:?} of {n} programs");
    for (rule, k) in fired {
        assert!(k * 500 >= n as usize, "{rule}: {k} of {n} programs");
    }
}

#[test]
fn few_inputs_enter_a_loop_without_exit() {
    // An input that enters one runs out of fuel: inconclusive, skipped by
    // the oracle after 10,000 steps of the original.
    let cfg = GenConfig::default();
    let ocfg = OracleConfig::default();
    let (mut runs, mut inconclusive) = (0u64, 0u64);
    for seed in seeds(2000) {
        let g = generate_from_seed(seed, &cfg);
        let inputs = instantiate_all(&g.module, g.module.func(g.main), seed, 3);
        let r = check_program(&g.module, g.main, &inputs, &[], &ocfg);
        runs += r.runs;
        inconclusive += r.inconclusive;
    }
    eprintln!("{inconclusive} of {runs} inputs inconclusive");
    assert!(
        inconclusive * 500 <= runs,
        "{inconclusive} of {runs} inputs"
    );
}
