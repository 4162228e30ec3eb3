//! Rendering a function's CFG as graphviz `dot` (`loadstar opt --emit dot`).

use ir::print::{print_inst, Names};
use ir::{Function, Module};
use std::fmt::Write;

/// One `digraph` per function: a node per block listing its instructions, an edge per CFG edge.
pub fn module_to_dot(module: &Module) -> String {
    let mut out = String::new();
    for func in &module.funcs {
        out.push_str(&function_to_dot(module, func));
    }
    out
}

/// The `digraph` of one function.
pub fn function_to_dot(module: &Module, func: &Function) -> String {
    let names = Names::new(func);
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&func.name));
    let _ = writeln!(out, "  node [shape=box, fontname=monospace];");
    for &b in &func.layout {
        let mut label = format!("{}:\\l", escape(names.block(b)));
        for &inst in &func.blocks[b.index()].insts {
            let _ = write!(
                label,
                "  {}\\l",
                escape(&print_inst(module, func, &names, inst))
            );
        }
        let _ = writeln!(
            out,
            "  \"{}\" [label=\"{}\"];",
            escape(names.block(b)),
            label
        );
        for succ in func.successors(b) {
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\";",
                escape(names.block(b)),
                escape(names.block(succ))
            );
        }
    }
    out.push_str("}\n");
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
