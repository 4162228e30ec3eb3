//! Adversarial module shapes for the scaling benchmarks: each builds the IR
//! text of a module with about `n` instructions, shaped to defeat one kind of
//! shortcut (a scan per merge, a walk per copy, a deep dominator tree, ...).
//! Shared by `benches/scaling.rs`, `examples/scaling_ratios.rs` and the
//! scaling test, so the table, the bench and the test measure the same code.

#![allow(dead_code)]

use std::fmt::Write;

/// One shape: its name, what it stresses and its text builder.
pub struct Shape {
    /// The name used in bench ids and the ratio table.
    pub name: &'static str,
    /// What the shape is.
    pub what: &'static str,
    /// The module text with about `n` instructions.
    pub build: fn(usize) -> String,
}

/// Every shape, in table order.
pub const SHAPES: &[Shape] = &[
    Shape {
        name: "same_expr_block",
        what: "many identical pure expressions in one block",
        build: same_expr_block,
    },
    Shape {
        name: "same_expr_chain",
        what: "one identical expression per block of a chain",
        build: same_expr_chain,
    },
    Shape {
        name: "reverse_copies",
        what: "a copy chain whose blocks are laid out in reverse order",
        build: reverse_copies,
    },
    Shape {
        name: "copies_then_mem",
        what: "a long copy chain, then loads and stores through the last copy",
        build: copies_then_mem,
    },
    Shape {
        name: "wide_load",
        what: "one load with n users",
        build: wide_load,
    },
    Shape {
        name: "alias_diamonds",
        what: "diamonds with loads and stores through two may-alias parameters",
        build: alias_diamonds,
    },
    Shape {
        name: "gvn_mixed",
        what: "passes/benches/peeps.rs mixed: folds, canonicalizations, diamonds",
        build: gvn_mixed,
    },
    Shape {
        name: "nested_diamonds",
        what: "deeply nested diamonds (a deep dominator tree)",
        build: nested_diamonds,
    },
    Shape {
        name: "repeated_tests",
        what: "a chain testing one condition and one null test again and again",
        build: repeated_tests,
    },
    Shape {
        name: "phi_web",
        what: "a loop carrying a long web of phis that name each other",
        build: phi_web,
    },
    Shape {
        name: "congruent_ivs",
        what: "a loop with n/3 induction variables in three congruence classes",
        build: congruent_ivs,
    },
    Shape {
        name: "many_locations",
        what: "a thousand live field locations, reloaded after diamonds",
        build: many_locations,
    },
    Shape {
        name: "huge_block",
        what: "one huge block of mixed memory and arithmetic",
        build: huge_block,
    },
    Shape {
        name: "many_functions",
        what: "many small functions calling each other",
        build: many_functions,
    },
    Shape {
        name: "call_results",
        what: "a chain of n calls of a function that returns its argument",
        build: call_results,
    },
    Shape {
        name: "young_allocs",
        what: "one block of fresh objects that all escape at its end",
        build: young_allocs,
    },
];

/// `%e_i = add %x, 1` repeated in one block, folded into a xor chain.
pub fn same_expr_block(n: usize) -> String {
    let k = n / 2;
    let mut s = String::from("func @main(%x: i64) -> i64 {\nentry:\n  %s0 = add %x, 0\n");
    for i in 1..=k {
        writeln!(s, "  %e{i} = add %x, 1\n  %s{i} = xor %s{}, %e{i}", i - 1).unwrap();
    }
    writeln!(s, "  ret %s{k}\n}}").unwrap();
    s
}

/// The same expression once per block of a jump chain.
pub fn same_expr_chain(n: usize) -> String {
    let k = n / 3;
    let mut s = String::from("func @main(%x: i64) -> i64 {\nentry:\n  %s0 = add %x, 0\n  jmp b1\n");
    for i in 1..=k {
        writeln!(
            s,
            "b{i}:\n  %e{i} = add %x, 1\n  %s{i} = xor %s{}, %e{i}\n  jmp b{}",
            i - 1,
            i + 1
        )
        .unwrap();
    }
    writeln!(s, "b{}:\n  ret %s{k}\n}}", k + 1).unwrap();
    s
}

/// A copy chain, one copy per block, with the blocks written last-first.
pub fn reverse_copies(n: usize) -> String {
    let k = n / 2;
    let mut s = String::from("func @main(%x: i64) -> i64 {\nentry:\n  %c0 = copy %x\n  jmp b1\n");
    writeln!(s, "b{}:\n  ret %c{k}", k + 1).unwrap();
    for i in (1..=k).rev() {
        writeln!(s, "b{i}:\n  %c{i} = copy %c{}\n  jmp b{}", i - 1, i + 1).unwrap();
    }
    s.push_str("}\n");
    s
}

/// Half the instructions are a copy chain from `%p`; the other half load
/// and store through the last copy (and through `%q`, which may alias).
pub fn copies_then_mem(n: usize) -> String {
    let k = n / 2;
    let mut s = String::from(
        "type T { a: i64, b: i64 }\nfunc @main(%p: T, %q: T) -> i64 {\nentry:\n  %c0 = copy %p\n",
    );
    for i in 1..=k {
        writeln!(s, "  %c{i} = copy %c{}", i - 1).unwrap();
    }
    s.push_str("  %s0 = add 0, 0\n");
    for j in 1..=k / 4 {
        writeln!(
            s,
            "  store %c{k}.a, {j}\n  %l{j} = load %c{k}.a\n  store %q.b, %l{j}\n  %s{j} = add %s{}, %l{j}",
            j - 1
        )
        .unwrap();
    }
    writeln!(s, "  ret %s{}\n}}", k / 4).unwrap();
    s
}

/// One load with about `n` users, each folded into a xor chain.
pub fn wide_load(n: usize) -> String {
    let k = n / 2;
    let mut s = String::from(
        "type T { a: i64 }\nfunc @main(%p: T) -> i64 {\nentry:\n  %v = load %p.a\n  %s0 = add %v, 0\n",
    );
    for i in 1..=k {
        writeln!(s, "  %a{i} = add %v, {i}\n  %s{i} = xor %s{}, %a{i}", i - 1).unwrap();
    }
    writeln!(s, "  ret %s{k}\n}}").unwrap();
    s
}

/// Diamonds whose arms store through one of two may-alias parameters and
/// whose join reloads through the other.
pub fn alias_diamonds(n: usize) -> String {
    let k = n / 12;
    let mut s = String::from(
        "type T { a: i64, b: i64 }\nfunc @main(%p: T, %q: T, %c: i64) -> i64 {\nentry:\n  %s0 = load %p.a\n  jmp j0\n",
    );
    for i in 0..k {
        writeln!(
            s,
            "j{i}:\n  %x{i} = load %p.a\n  %y{i} = load %q.b\n  br %c, l{i}, r{i}\n\
             l{i}:\n  store %p.a, %x{i}\n  store %q.b, %s{i}\n  jmp m{i}\n\
             r{i}:\n  store %q.a, %y{i}\n  %z{i} = load %p.b\n  jmp m{i}\n\
             m{i}:\n  %u{i} = load %q.a\n  %s{} = add %u{i}, %x{i}\n  jmp j{}",
            i + 1,
            i + 1
        )
        .unwrap();
    }
    writeln!(s, "j{k}:\n  ret %s{k}\n}}").unwrap();
    s
}

/// Blocks of 8 mixed operations joined by branches on folded constants and
/// phis (the `mixed` function of `benches/peeps.rs`).
pub fn gvn_mixed(n: usize) -> String {
    let mut s = String::from("func @main(%x: i64, %y: i64) -> i64 {\nentry:\n  %a0 = add %x, 0\n");
    let blocks = n / 10;
    for b in 0..blocks {
        let p = format!("%a{b}");
        writeln!(s, "  %m{b} = mul 3, {p}").unwrap();
        writeln!(s, "  %s{b} = sub %m{b}, 0").unwrap();
        writeln!(s, "  %c{b} = sgt %s{b}, %y").unwrap();
        writeln!(s, "  %k{b} = add 2, 5").unwrap();
        writeln!(s, "  %d{b} = xor %s{b}, %s{b}").unwrap();
        writeln!(s, "  %e{b} = add %d{b}, %k{b}").unwrap();
        writeln!(s, "  %t{b} = add %c{b}, %e{b}").unwrap();
        writeln!(s, "  br 1, l{b}, r{b}").unwrap();
        writeln!(s, "l{b}:\n  jmp j{b}\nr{b}:\n  jmp j{b}\nj{b}:").unwrap();
        writeln!(s, "  %a{} = phi [l{b}: %t{b}], [r{b}: %x]", b + 1).unwrap();
    }
    writeln!(s, "  ret %a{blocks}\n}}").unwrap();
    s
}

/// Diamonds nested inside each other's then-arm, so the dominator tree is as
/// deep as the nesting; the same expression and a load sit at every level.
pub fn nested_diamonds(n: usize) -> String {
    let k = n / 9;
    let mut s =
        String::from("type T { a: i64 }\nfunc @main(%p: T, %x: i64) -> i64 {\nentry:\n  jmp o0\n");
    for i in 0..k {
        writeln!(
            s,
            "o{i}:\n  %e{i} = add %x, 7\n  %l{i} = load %p.a\n  %c{i} = slt %l{i}, %e{i}\n  br %c{i}, o{}, e{i}\n\
             e{i}:\n  store %p.a, %e{i}\n  jmp c{i}",
            i + 1
        )
        .unwrap();
    }
    writeln!(
        s,
        "o{k}:\n  jmp c{k}\nc{k}:\n  %r{k} = add %x, 0\n  jmp c{}",
        k - 1
    )
    .unwrap();
    for i in (0..k).rev() {
        writeln!(
            s,
            "c{i}:\n  %r{i} = phi [c{}: %r{}], [e{i}: %e{i}]",
            i + 1,
            i + 1
        )
        .unwrap();
        if i > 0 {
            writeln!(s, "  jmp c{}", i - 1).unwrap();
        }
    }
    s.push_str("  ret %r0\n}\n");
    s
}

/// Stages of 11 instructions, each testing the parameter `%c` again (a
/// branch the first test decides), then `%p` against `null` and loading
/// through it on the non-null arm, then a branch whose arms both return the
/// same value: the decided-branch walk, the null facts of branch edges and
/// the equal-arms fold, with a dominator tree as deep as the chain.
pub fn repeated_tests(n: usize) -> String {
    let k = (n / 11).max(1);
    let mut s = String::from(
        "type T { a: i64 }\nfunc @main(%c: i64, %p: T, %x: i64) -> i64 {\nentry:\n  jmp b0\n",
    );
    for i in 0..k {
        let next = i + 1;
        writeln!(
            s,
            "b{i}:\n  br %c, m{i}, o{i}\no{i}:\n  ret {i}\n\
             m{i}:\n  %t{i} = ne %p, null\n  br %t{i}, n{i}, z{i}\nz{i}:\n  ret -1\n\
             n{i}:\n  %v{i} = load %p.a\n  %w{i} = slt %v{i}, %x\n  br %w{i}, s{i}, u{i}\n\
             s{i}:\n  %a{i} = add %v{i}, 1\n  jmp j{i}\nu{i}:\n  jmp j{i}\n\
             j{i}:\n  escape %v{i}\n  jmp b{next}"
        )
        .unwrap();
    }
    writeln!(s, "b{k}:\n  ret %x\n}}").unwrap();
    s
}

/// A loop whose header carries `n/2` phis, each fed by its neighbour around
/// the back edge (one long phi cycle), plus a chain of joins of phis.
pub fn phi_web(n: usize) -> String {
    let k = n / 2;
    let mut s = String::from(
        "func @main(%x: i64, %n: i64) -> i64 {\nentry:\n  jmp h\nh:\n  %i = phi [entry: 0], [h: %i1]\n",
    );
    for j in 0..k {
        writeln!(s, "  %p{j} = phi [entry: %x], [h: %p{}]", (j + 1) % k).unwrap();
    }
    s.push_str("  %i1 = add %i, 1\n  %c = slt %i1, %n\n  br %c, h, x\nx:\n  %s0 = add %p0, 0\n");
    for j in 1..k / 2 {
        writeln!(s, "  %s{j} = xor %s{}, %p{j}", j - 1).unwrap();
    }
    writeln!(s, "  ret %s{}\n}}", k / 2 - 1).unwrap();
    s
}

/// A loop whose header carries `n/3` induction variables from 0, stepping
/// by 1, 2 or 3 (three classes of congruent phis, which GVN's optimistic
/// numbering finds in two rounds), summed after the loop.
pub fn congruent_ivs(n: usize) -> String {
    let k = (n / 3).max(1);
    let mut s = String::from(
        "func @main(%n: i64) -> i64 {\nentry:\n  jmp h\nh:\n  %i = phi [entry: 0], [b: %i1]\n",
    );
    for j in 0..k {
        writeln!(s, "  %v{j} = phi [entry: 0], [b: %w{j}]").unwrap();
    }
    s.push_str("  %c = slt %i, %n\n  br %c, b, x\nb:\n  %i1 = add %i, 1\n");
    for j in 0..k {
        writeln!(s, "  %w{j} = add %v{j}, {}", j % 3 + 1).unwrap();
    }
    s.push_str("  jmp h\nx:\n  %s0 = add %v0, 0\n");
    for j in 1..k {
        writeln!(s, "  %s{j} = xor %s{}, %v{j}", j - 1).unwrap();
    }
    writeln!(s, "  ret %s{}\n}}", k - 1).unwrap();
    s
}

/// A type with 1,000 fields, all stored, then reloaded after each of many
/// diamonds whose arms write one field through a may-alias parameter.
pub fn many_locations(n: usize) -> String {
    let fields = 1000;
    let mut s = String::from("type Big {");
    for f in 0..fields {
        write!(s, "{} f{f}: i64", if f == 0 { "" } else { "," }).unwrap();
    }
    s.push_str(" }\nfunc @main(%p: Big, %q: Big, %c: i64) -> i64 {\nentry:\n  %s0 = add 0, 0\n");
    let mut v = 0usize;
    let mut blocks = 0usize;
    while v < n / 3 {
        let f = v % fields;
        writeln!(
            s,
            "  store %p.f{f}, {v}\n  %l{v} = load %p.f{}\n  %s{} = add %s{v}, %l{v}",
            (f * 7) % fields,
            v + 1
        )
        .unwrap();
        v += 1;
        if v.is_multiple_of(50) {
            writeln!(
                s,
                "  br %c, l{blocks}, r{blocks}\nl{blocks}:\n  store %q.f{}, 1\n  jmp m{blocks}\nr{blocks}:\n  jmp m{blocks}\nm{blocks}:",
                blocks % fields
            )
            .unwrap();
            blocks += 1;
        }
    }
    writeln!(s, "  ret %s{v}\n}}").unwrap();
    s
}

/// One block of `n` instructions: fresh objects, arrays, loads and stores
/// through parameters, arithmetic, escapes and extern calls.
pub fn huge_block(n: usize) -> String {
    let mut s = String::from(
        "type T { a: i64, b: i64, n: T }\nglobal @g: i64\nextern @ro(i64) -> i64 reads(T.a)\n\
         func @main(%p: T, %q: T, %arr: [i64], %x: i64) -> i64 {\nentry:\n  %s0 = add %x, 0\n",
    );
    let k = n / 8;
    for i in 0..k {
        let j = i + 1;
        writeln!(
            s,
            "  %o{i} = new T\n  store %o{i}.a, %s{i}\n  store %p.b, %s{i}\n  %a{i} = load %q.a\n\
             %e{i} = load %arr[{}]\n  %f{i} = mul %a{i}, %e{i}\n  %t{i} = add %f{i}, %s{i}\n  %s{j} = sub %t{i}, %x",
            i % 16
        )
        .unwrap();
        if i % 64 == 63 {
            writeln!(s, "  %r{i} = call @ro(%s{j})\n  store @g, %r{i}").unwrap();
        }
    }
    writeln!(s, "  ret %s{k}\n}}").unwrap();
    s
}

/// `n/10` functions of about ten instructions; each calls the next.
pub fn many_functions(n: usize) -> String {
    let k = n / 10;
    let mut s = String::from("type T { a: i64 }\n");
    for i in 0..k {
        let name = if i == 0 {
            "main".to_string()
        } else {
            format!("f{i}")
        };
        writeln!(
            s,
            "func @{name}(%p: T, %x: i64) -> i64 {{\nentry:\n  %a = load %p.a\n  %b = add %a, %x\n  \
             store %p.a, %b\n  %c = load %p.a\n  %d = add %x, 1\n  %e = add %x, 1\n  br %x, l, r\n\
             l:\n  jmp r\nr:"
        )
        .unwrap();
        if i + 1 < k {
            writeln!(s, "  %r = call @f{}(%p, %d)\n  ret %r\n}}", i + 1).unwrap();
        } else {
            s.push_str("  %r = add %c, %e\n  ret %r\n}\n");
        }
    }
    s
}

/// A chain of `n` calls of a function that returns its argument, each
/// passing the previous call's result: GVN's call facts (session 13) once
/// looked each operand up in a list of every known call.
pub fn call_results(n: usize) -> String {
    let mut s = String::from(
        "func @id(%a: i64) -> i64 {\nentry:\n  ret %a\n}\n\nfunc @main(%x: i64) -> i64 {\nentry:\n",
    );
    let mut prev = "%x".to_string();
    for i in 0..n {
        writeln!(s, "  %c{i} = call @id({prev})").unwrap();
        prev = format!("%c{i}");
    }
    writeln!(s, "  ret {prev}\n}}").unwrap();
    s
}

/// One block of `n/4` fresh objects, each stored twice, that all escape
/// (through an extern call) only at its end: LSE's set of allocations not
/// escaped yet (session 13) once held them in a list searched per step.
pub fn young_allocs(n: usize) -> String {
    let k = n / 4;
    let mut s =
        String::from("type N { v: i64 }\nextern @sink(N)\n\nfunc @main(%x: i64) {\nentry:\n");
    for i in 0..k {
        writeln!(
            s,
            "  %o{i} = new N\n  store %o{i}.v, %x\n  store %o{i}.v, 1"
        )
        .unwrap();
    }
    for i in 0..k {
        writeln!(s, "  call @sink(%o{i})").unwrap();
    }
    s.push_str("  ret\n}\n");
    s
}
