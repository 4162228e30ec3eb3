//! Debugging aid: print the VCode of each function of an IR file and check its allocation.
fn main() {
    let path = std::env::args().nth(1).expect("usage: debug_vcode FILE");
    let text = std::fs::read_to_string(&path).unwrap();
    let (m, _) = ir::parse_module(&text, &path).unwrap();
    let env = codegen::regalloc::machine_env();
    for f in &m.funcs {
        let code = codegen::isel::select(&m, f, true, true);
        println!("func @{}", f.name);
        for (k, b) in code.blocks.iter().enumerate() {
            println!(
                "  block{k} params {:?} succs {:?} preds {:?}",
                b.params, b.succs, b.preds
            );
            for i in b.start..b.end {
                let d = &code.insts[i];
                println!("    {i}: {:?} {:?} args {:?}", d.inst, d.operands, d.args);
            }
        }
        if let Ok((out, _)) = codegen::regalloc::allocate(&code, &env, false) {
            for i in 0..code.insts.len() {
                println!("  {i}: {:?}", out.inst_allocs(regalloc2::Inst::new(i)));
            }
            for e in &out.edits {
                println!("  edit {:?}", e);
            }
        }
        match codegen::regalloc::allocate(&code, &env, true) {
            Ok((_, checked)) => println!("  ok ({checked:?})"),
            Err(e) => println!("  {e}"),
        }
    }
}
