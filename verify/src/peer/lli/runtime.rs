//! The LLVM IR runtime that `lli-14` runs the translated modules with
//! ([`super`]): a driver `main` and the definitions of what the translation
//! leaves opaque (`@ls.new`, `@ls.trap`, `@ls.escape.*`, `@ls.may_trap`, `@ls.volatile`, the
//! externs `@x.*` and the globals `@g.*`).
//!
//! Memory is one static arena laid out exactly as the interpreter's
//! (`interp::heap`): word 0 reserved, the globals block at words `1..1+G` (the
//! module's globals are aliases of those words), then objects, each a header
//! word and its slots. A reference is the address of the word after its
//! header, so that the translation's `{ fields }` and `{ len, [0 x E] }`
//! land on the interpreter's words.
//!
//! The runtime talks to the parent process over its standard input and
//! output in little-endian 64-bit words (references as raw addresses):
//! - at start it sends `[0, arena address]`;
//! - it then reads commands: `[entry, n, arena words 0..n, nargs, args…]`
//!   runs entry function `entry` on a fresh arena; `[-1]` quits;
//! - an environment step (an extern call or a volatile access) sends
//!   `[1, callee, nargs, mask, args…, n, arena words 0..n]` and reads the
//!   step's result and the new arena words `0..n` (a step never allocates):
//!   the parent takes the step with the interpreter's own
//!   `loadstar_env_step`;
//! - `escape v` sends `[2, is_ref, v]`;
//! - the end of a run sends `[3, 0, returned]` or `[3, 1, trap code]`, then
//!   `n` and the arena words `0..n`; a trap `longjmp`s back to the driver.

use ir::{FuncId, Module};
use std::fmt::Write;

/// The `callee` of a volatile step (`interp::env::VOLATILE`).
pub const VOLATILE: u64 = u32::MAX as u64;

/// The fixed part of the runtime; `{N}` is the arena size in words, `{A}`
/// the argument buffer's.
const FIXED: &str = r#"; the lli runtime of loadstar peer --lli
@rt.arena = global [{N} x i64] zeroinitializer
@rt.bump = global i64 0
@rt.jb = global [64 x i64] zeroinitializer
@rt.io = global [4 x i64] zeroinitializer
@rt.args = global [{A} x i64] zeroinitializer

declare i64 @read(i32, i8*, i64)
declare i64 @write(i32, i8*, i64)
declare i32 @_setjmp(i8*) returns_twice
declare void @longjmp(i8*, i32) noreturn
declare void @exit(i32) noreturn
declare void @llvm.memset.p0i8.i64(i8*, i8, i64, i1)

define void @rt.xfer(i1 %out, i64* %p, i64 %n) {
entry:
  %b = bitcast i64* %p to i8*
  %bytes = shl i64 %n, 3
  br label %loop
loop:
  %done = phi i64 [ 0, %entry ], [ %next, %more ]
  %left = sub i64 %bytes, %done
  %z = icmp eq i64 %left, 0
  br i1 %z, label %ok, label %go
go:
  %q = getelementptr i8, i8* %b, i64 %done
  br i1 %out, label %w, label %r
w:
  %nw = call i64 @write(i32 1, i8* %q, i64 %left)
  br label %check
r:
  %nr = call i64 @read(i32 0, i8* %q, i64 %left)
  br label %check
check:
  %got = phi i64 [ %nw, %w ], [ %nr, %r ]
  %bad = icmp sle i64 %got, 0
  br i1 %bad, label %fail, label %more
more:
  %next = add i64 %done, %got
  br label %loop
fail:
  call void @exit(i32 3)
  unreachable
ok:
  ret void
}

define void @rt.send3(i64 %a, i64 %b, i64 %c) {
  %p0 = getelementptr [4 x i64], [4 x i64]* @rt.io, i64 0, i64 0
  %p1 = getelementptr [4 x i64], [4 x i64]* @rt.io, i64 0, i64 1
  %p2 = getelementptr [4 x i64], [4 x i64]* @rt.io, i64 0, i64 2
  store i64 %a, i64* %p0
  store i64 %b, i64* %p1
  store i64 %c, i64* %p2
  call void @rt.xfer(i1 true, i64* %p0, i64 3)
  ret void
}

define i64 @rt.recv1() {
  %p0 = getelementptr [4 x i64], [4 x i64]* @rt.io, i64 0, i64 0
  call void @rt.xfer(i1 false, i64* %p0, i64 1)
  %v = load i64, i64* %p0
  ret i64 %v
}

define void @rt.send_arena() {
  %n = load i64, i64* @rt.bump
  %p0 = getelementptr [4 x i64], [4 x i64]* @rt.io, i64 0, i64 0
  store i64 %n, i64* %p0
  call void @rt.xfer(i1 true, i64* %p0, i64 1)
  %a = getelementptr [{N} x i64], [{N} x i64]* @rt.arena, i64 0, i64 0
  call void @rt.xfer(i1 true, i64* %a, i64 %n)
  ret void
}

define i64 @rt.step(i64 %callee, i64 %nargs, i64 %mask, i64* %args) {
  %p0 = getelementptr [4 x i64], [4 x i64]* @rt.io, i64 0, i64 0
  %p3 = getelementptr [4 x i64], [4 x i64]* @rt.io, i64 0, i64 3
  store i64 %mask, i64* %p3
  call void @rt.send3(i64 1, i64 %callee, i64 %nargs)
  call void @rt.xfer(i1 true, i64* %p3, i64 1)
  call void @rt.xfer(i1 true, i64* %args, i64 %nargs)
  call void @rt.send_arena()
  %r = call i64 @rt.recv1()
  %n = load i64, i64* @rt.bump
  %a = getelementptr [{N} x i64], [{N} x i64]* @rt.arena, i64 0, i64 0
  call void @rt.xfer(i1 false, i64* %a, i64 %n)
  ret i64 %r
}

define i8* @ls.new(i64 %header, i64 %words) nounwind {
entry:
  %at = load i64, i64* @rt.bump
  %end = add i64 %at, %words
  %full = icmp ugt i64 %end, {LAST}
  br i1 %full, label %none, label %ok
none:
  ret i8* null
ok:
  store i64 %end, i64* @rt.bump
  %h = getelementptr [{N} x i64], [{N} x i64]* @rt.arena, i64 0, i64 %at
  store i64 %header, i64* %h
  %s = getelementptr i64, i64* %h, i64 1
  %p = bitcast i64* %s to i8*
  ; An array's length is written here too, so that the arena parses even
  ; where `opt` deleted the translation's store of it (the array is dead).
  %odd = and i64 %header, 1
  %arr = icmp ne i64 %odd, 0
  br i1 %arr, label %len, label %done
len:
  %n = sub i64 %words, 2
  store i64 %n, i64* %s
  br label %done
done:
  ret i8* %p
}

define void @ls.trap(i64 %kind) noreturn nounwind {
  call void @rt.send3(i64 3, i64 1, i64 %kind)
  call void @rt.send_arena()
  %jb = bitcast [64 x i64]* @rt.jb to i8*
  call void @longjmp(i8* %jb, i32 1)
  unreachable
}

define void @ls.escape.i64(i64 %v) nounwind {
  call void @rt.send3(i64 2, i64 0, i64 %v)
  ret void
}

define void @ls.may_trap() nounwind {
  ret void
}

define void @ls.escape.ref(i8* %p) nounwind {
  %v = ptrtoint i8* %p to i64
  call void @rt.send3(i64 2, i64 1, i64 %v)
  ret void
}

define void @ls.volatile(i8* %r, i64 %i, i64 %v, i8* %rv, i64 %flags) nounwind {
  %buf = alloca [4 x i64]
  %p0 = getelementptr [4 x i64], [4 x i64]* %buf, i64 0, i64 0
  %p1 = getelementptr [4 x i64], [4 x i64]* %buf, i64 0, i64 1
  %p2 = getelementptr [4 x i64], [4 x i64]* %buf, i64 0, i64 2
  %p3 = getelementptr [4 x i64], [4 x i64]* %buf, i64 0, i64 3
  %wr = ptrtoint i8* %r to i64
  %wrv = ptrtoint i8* %rv to i64
  store i64 %wr, i64* %p0
  store i64 %i, i64* %p1
  store i64 %v, i64* %p2
  store i64 %wrv, i64* %p3
  %x = call i64 @rt.step(i64 {VOLATILE}, i64 4, i64 %flags, i64* %p0)
  ret void
}

define i32 @main() {
entry:
  %base = ptrtoint [{N} x i64]* @rt.arena to i64
  call void @rt.send3(i64 0, i64 %base, i64 0)
  br label %loop
loop:
  %cmd = call i64 @rt.recv1()
  %quit = icmp eq i64 %cmd, -1
  br i1 %quit, label %end, label %run
run:
  %n = call i64 @rt.recv1()
  %old = load i64, i64* @rt.bump
  %dirty = icmp ugt i64 %old, %n
  br i1 %dirty, label %clear, label %fill
clear:
  %from = getelementptr [{N} x i64], [{N} x i64]* @rt.arena, i64 0, i64 %n
  %from8 = bitcast i64* %from to i8*
  %count = sub i64 %old, %n
  %bytes = shl i64 %count, 3
  call void @llvm.memset.p0i8.i64(i8* %from8, i8 0, i64 %bytes, i1 false)
  br label %fill
fill:
  %a = getelementptr [{N} x i64], [{N} x i64]* @rt.arena, i64 0, i64 0
  call void @rt.xfer(i1 false, i64* %a, i64 %n)
  store i64 %n, i64* @rt.bump
  %na = call i64 @rt.recv1()
  %args = getelementptr [{A} x i64], [{A} x i64]* @rt.args, i64 0, i64 0
  call void @rt.xfer(i1 false, i64* %args, i64 %na)
  %jb = bitcast [64 x i64]* @rt.jb to i8*
  %j = call i32 @_setjmp(i8* %jb) returns_twice
  %trapped = icmp ne i32 %j, 0
  br i1 %trapped, label %loop, label %go
go:
  %v = call i64 @rt.dispatch(i64 %cmd, i64* %args)
  call void @rt.send3(i64 3, i64 0, i64 %v)
  call void @rt.send_arena()
  br label %loop
end:
  ret i32 0
}
"#;

/// The runtime for `modules` translated together (module `k`'s names carry
/// `translate::module_prefix(k, n)`), with an arena of `arena_words` words.
/// Entry `e` of the driver runs function `funcs[e]` of module `e`; only the
/// externs a module calls get a definition (the rest stay declarations,
/// never linked), so that `lli` compiles no more than the runs need.
pub fn runtime(modules: &[&Module], funcs: &[FuncId], arena_words: usize) -> String {
    let n = arena_words + 2;
    let args = modules
        .iter()
        .zip(funcs)
        .map(|(m, f)| m.func(*f).params.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut out = FIXED
        .replace("{N}", &n.to_string())
        .replace("{A}", &args.to_string())
        .replace("{LAST}", &(n - 1).to_string())
        .replace("{VOLATILE}", &VOLATILE.to_string());
    let mut dispatch = String::new();
    for (k, (m, &f)) in modules.iter().zip(funcs).enumerate() {
        let pre = super::super::translate::module_prefix(k, modules.len());
        globals(&mut out, m, &pre, n);
        externs(&mut out, m, &pre);
        entry_wrapper(&mut out, m.func(f), &pre, k);
        let _ = write!(dispatch, " i64 {k}, label %e{k}");
    }
    let _ = writeln!(
        out,
        "\ndefine i64 @rt.dispatch(i64 %e, i64* %a) {{\n  switch i64 %e, label %bad [{dispatch} ]\nbad:\n  call void @exit(i32 4)\n  unreachable"
    );
    for e in 0..funcs.len() {
        let _ = writeln!(
            out,
            "e{e}:\n  %r{e} = call i64 @rt.run.{e}(i64* %a)\n  ret i64 %r{e}"
        );
    }
    out.push_str("}\n");
    out
}

fn llty(t: ir::Type) -> &'static str {
    if t.is_int() {
        "i64"
    } else {
        "i8*"
    }
}

/// The module's globals as aliases of the arena's globals block.
fn globals(out: &mut String, m: &Module, pre: &str, n: usize) {
    for (g, decl) in m.globals.iter().enumerate() {
        let word = format!(
            "getelementptr inbounds ([{n} x i64], [{n} x i64]* @rt.arena, i64 0, i64 {})",
            interp::heap::GLOBALS_BASE + g
        );
        let target = if decl.ty.is_int() {
            format!("i64, i64* {word}")
        } else {
            format!("i8*, i8** bitcast (i64* {word} to i8**)")
        };
        let _ = writeln!(out, "@g.{pre}{} = alias {target}", decl.name);
    }
}

/// `word = ptrtoint`/as-is of an argument of type `t` named `v`; the text
/// of the line(s) and the word's name.
fn as_word(t: ir::Type, v: &str, tmp: &str) -> (String, String) {
    if t.is_int() {
        (String::new(), v.to_string())
    } else {
        (
            format!("  {tmp} = ptrtoint i8* {v} to i64\n"),
            tmp.to_string(),
        )
    }
}

/// Each extern the module calls as an environment step with its index as
/// the callee.
fn externs(out: &mut String, m: &Module, pre: &str) {
    let mut called = vec![false; m.externs.len()];
    for f in &m.funcs {
        for d in &f.insts {
            if let ir::InstKind::Call {
                callee: ir::Callee::Extern(e),
                ..
            } = d.kind
            {
                called[e.index()] = true;
            }
        }
    }
    for (x, e) in m.externs.iter().enumerate() {
        if !called[x] {
            continue;
        }
        let params: Vec<String> = e
            .params
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{} %a{i}", llty(*t)))
            .collect();
        let ret = e.ret.map_or("void", llty);
        let np = e.params.len().max(1);
        let _ = writeln!(
            out,
            "\ndefine {ret} @x.{pre}{}({}) nounwind {{\n  %buf = alloca [{np} x i64]",
            e.name,
            params.join(", ")
        );
        for (i, t) in e.params.iter().enumerate() {
            let (line, w) = as_word(*t, &format!("%a{i}"), &format!("%w{i}"));
            let _ = write!(
                out,
                "{line}  %p{i} = getelementptr [{np} x i64], [{np} x i64]* %buf, i64 0, i64 {i}\n  store i64 {w}, i64* %p{i}\n"
            );
        }
        let _ = writeln!(
            out,
            "  %b = getelementptr [{np} x i64], [{np} x i64]* %buf, i64 0, i64 0\n  %r = call i64 @rt.step(i64 {x}, i64 {}, i64 0, i64* %b)",
            e.params.len()
        );
        match e.ret {
            None => out.push_str("  ret void\n}\n"),
            Some(t) if t.is_int() => out.push_str("  ret i64 %r\n}\n"),
            Some(_) => out.push_str("  %q = inttoptr i64 %r to i8*\n  ret i8* %q\n}\n"),
        }
    }
}

/// `@rt.run.E(i64* args) -> i64`: call the function with its arguments read
/// from the words at `args` (references as addresses), its result as a word.
fn entry_wrapper(out: &mut String, f: &ir::Function, pre: &str, entry: usize) {
    let name = super::super::translate::llvm_func_name(&format!("{pre}{}", f.name));
    let types: Vec<&str> = f
        .params
        .iter()
        .map(|p| llty(f.values[p.index()].ty))
        .collect();
    let ret = f.ret.map_or("void", llty);
    let _ = writeln!(out, "\ndeclare {ret} @{name}({})", types.join(", "));
    let _ = writeln!(out, "define i64 @rt.run.{entry}(i64* %a) {{");
    let mut args = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        let t = f.values[p.index()].ty;
        let _ = writeln!(
            out,
            "  %p{i} = getelementptr i64, i64* %a, i64 {i}\n  %w{i} = load i64, i64* %p{i}"
        );
        if t.is_int() {
            args.push(format!("i64 %w{i}"));
        } else {
            let _ = writeln!(out, "  %r{i} = inttoptr i64 %w{i} to i8*");
            args.push(format!("i8* %r{i}"));
        }
    }
    let call = format!("@{name}({})", args.join(", "));
    match f.ret {
        None => {
            let _ = writeln!(out, "  call void {call}\n  ret i64 0\n}}");
        }
        Some(t) if t.is_int() => {
            let _ = writeln!(out, "  %v = call i64 {call}\n  ret i64 %v\n}}");
        }
        Some(_) => {
            let _ = writeln!(
                out,
                "  %v = call i8* {call}\n  %w = ptrtoint i8* %v to i64\n  ret i64 %w\n}}"
            );
        }
    }
}
