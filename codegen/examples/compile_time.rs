//! Profiling aid: compile an IR file N times with the options `run --native`
//! uses (for callgrind: `valgrind --tool=callgrind compile_time FILE 3`).
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: compile_time FILE [N]");
    let n: usize = args.next().map_or(1, |s| s.parse().expect("a count"));
    let text = std::fs::read_to_string(&path).unwrap();
    let (m, _) = ir::parse_module(&text, &path).unwrap();
    let insts: usize = m.funcs.iter().map(|f| f.placed_inst_count()).sum();
    let start = std::time::Instant::now();
    for _ in 0..n {
        std::hint::black_box(codegen::compile(&m).expect("compiles"));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{insts} IR instructions x {n}: {:.0} instructions/s",
        (insts * n) as f64 / secs
    );
}
