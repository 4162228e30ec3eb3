//! Strict memory (`codegen::strict`): with the heap's objects against
//! PROT_NONE guard pages, the backend's out-of-object accesses fault where the
//! dense heap lets them silently touch a neighbour. Each case runs the planted
//! bug's code twice in crash-isolated workers: dense (no fault) and strict
//! (SIGSEGV on the guard page).

use codegen::isolate::{run_isolated, Failure};
use codegen::{CompileOptions, NativeProgram};
use ir::zoo::{self, Bug};
use std::sync::Mutex;
use std::time::Duration;

/// The zoo's selection is process-wide: one case at a time.
static LOCK: Mutex<()> = Mutex::new(());

/// How a native run in a worker ended: its behaviour, or the worker's failure.
fn run_in_worker(text: &str, input: &str, strict: bool) -> Result<String, Failure> {
    let (m, _) = ir::parse_module(text, "t.ir").expect("parses");
    ir::verify_module(&m).expect("verifies");
    let main = m.func_by_name("main").expect("@main");
    let spec = ir::parse_input_spec(input, "<input>", &m, m.func(main)).expect("input parses");
    let mut native = NativeProgram::with_options(&m, CompileOptions::default()).unwrap();
    native.set_strict(strict);
    let report = run_isolated(Duration::from_secs(20), |rep| {
        let b = native
            .run(main, &spec, &interp::Config::default())
            .behaviour;
        rep.send(1, b.to_string().as_bytes());
    });
    match report.failure {
        Some(f) => Err(f),
        None => Ok(String::from_utf8_lossy(&report.records[0].1).into_owned()),
    }
}

fn interpret(text: &str, input: &str) -> String {
    let (m, _) = ir::parse_module(text, "t.ir").unwrap();
    let main = m.func_by_name("main").unwrap();
    let spec = ir::parse_input_spec(input, "<input>", &m, m.func(main)).unwrap();
    interp::Program::new(&m)
        .run(main, &spec, &interp::Config::default())
        .behaviour
        .to_string()
}

fn assert_segv(r: Result<String, Failure>) {
    match r {
        Err(Failure::Signal { signo, addr, .. }) => {
            assert_eq!(signo, 11, "SIGSEGV");
            assert_eq!(addr % 4096, 0, "the fault is at the start of a guard page");
        }
        other => panic!("expected a SIGSEGV on a guard page, got {other:?}"),
    }
}

/// `native-wide-store` writes the word after `p.b`: `q`'s header. Storing 0
/// (the header of `Pair`, type 0) leaves the dense heap bit-identical, so the
/// dense run matches the interpreter and the bug goes unseen; the strict heap
/// puts a guard page right after `p.b`.
#[test]
fn a_widened_store_past_a_struct_faults_only_in_strict_mode() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let text = "type Pair { a: i64, b: i64 }\n\
                func @main(%p: Pair, %q: Pair) -> i64 {\nentry:\n  store %p.b, 0\n  %x = load %q.a\n  ret %x\n}\n";
    let input = "p = Pair{a: 1, b: 2}, q = Pair{a: 3, b: 4}";
    let want = interpret(text, input);
    zoo::inject(Bug::NativeWideStore);
    let dense = run_in_worker(text, input, false);
    let strict = run_in_worker(text, input, true);
    zoo::clear();
    assert_eq!(dense.expect("the dense run completes"), want);
    assert_segv(strict);
    // Without the bug, strict memory changes nothing.
    assert_eq!(run_in_worker(text, input, true).unwrap(), want);
}

/// `native-const-index-no-bounds` drops the bounds check of `a[2]` on a
/// two-element array: the dense heap returns the next array's header word, the
/// strict heap faults one word past the end.
#[test]
fn a_read_one_past_the_end_of_an_array_faults_in_strict_mode() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let text =
        "func @main(%a: [i64], %b: [i64]) -> i64 {\nentry:\n  %x = load %a[2]\n  ret %x\n}\n";
    let input = "a = [i64]{1, 2}, b = [i64]{5}";
    let want = interpret(text, input);
    assert!(want.contains("trap out_of_bounds"), "{want}");
    zoo::inject(Bug::NativeConstIndexNoBounds);
    let dense = run_in_worker(text, input, false);
    let strict = run_in_worker(text, input, true);
    zoo::clear();
    let dense = dense.expect("the dense run completes");
    assert!(dense.contains("outcome: return"), "{dense}");
    assert_segv(strict);
    assert_eq!(run_in_worker(text, input, true).unwrap(), want);
}

/// `loadstar run --native --strict` prints the behaviour of a sound program,
/// and reports the planted widened store's fault with its disassembly, exit 1.
#[test]
fn the_cli_runs_strict_native_code_in_a_worker() {
    let dir = std::env::temp_dir().join(format!("loadstar-strict-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("wide.ir");
    std::fs::write(
        &file,
        "type Pair { a: i64, b: i64 }\nfunc @main(%p: Pair, %q: Pair) -> i64 {\nentry:\n  store %p.b, 0\n  %x = load %q.a\n  ret %x\n}\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_loadstar"))
            .arg("run")
            .arg(&file)
            .args(["--input", "p = Pair{a: 1, b: 2}, q = Pair{a: 3, b: 4}"])
            .args(extra)
            .output()
            .unwrap()
    };
    let interp = run(&[]);
    let strict = run(&["--native", "--strict"]);
    assert_eq!(strict.status.code(), Some(0));
    assert_eq!(strict.stdout, interp.stdout);
    let bug = run(&["--native", "--strict", "--inject", "native-wide-store"]);
    let err = String::from_utf8_lossy(&bug.stderr);
    assert_eq!(bug.status.code(), Some(1), "{err}");
    assert!(err.contains("SIGSEGV") && err.contains("=> "), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
