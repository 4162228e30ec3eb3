use passes::PassManager;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let passes = std::env::args().nth(2).unwrap_or("lse".into());
    let text = std::fs::read_to_string(&path).unwrap();
    let (mut m, _) = ir::parse_module(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    ir::verify::verify_module(&m).unwrap_or_else(|e| panic!("{e:?}"));
    let stats = PassManager::from_list(&passes)
        .unwrap()
        .run(&mut m)
        .unwrap_or_else(|e| panic!("{e}"));
    print!("{}", ir::print_module(&m));
    println!("{}", stats.to_json());
}
