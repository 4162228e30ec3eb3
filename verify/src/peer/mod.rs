//! LLVM as a peer: translate a module to LLVM IR ([`translate`]), optimize it
//! with LLVM 14's `opt -O2`, and compare the loads and stores each function
//! keeps with what loadstar's own passes keep ([`count`]). A function where
//! LLVM keeps fewer is a missed optimization of loadstar's.

pub mod count;
pub mod lli;
pub mod reduce;
pub mod survey;
pub mod translate;

use count::{count_function, count_llvm, Accesses};

use ir::Module;
use passes::PassManager;
use std::io::Write;
use std::process::{Command, Stdio};

/// The `opt` binary: `LOADSTAR_OPT` if set, else `opt-14`.
pub fn opt_binary() -> String {
    std::env::var("LOADSTAR_OPT").unwrap_or_else(|_| "opt-14".to_string())
}

/// The LLVM pipeline the peer runs: `-O2`, with loop unrolling and
/// vectorization off so that static access counts stay per source access
/// (unrolling multiplies them, vectorizing merges them).
pub const OPT_ARGS: [&str; 6] = [
    "-O2",
    "-S",
    "-unroll-threshold=0",
    "-vectorize-loops=false",
    "-vectorize-slp=false",
    "-",
];

/// Why the peer could not give an answer.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// `opt` could not be started.
    #[error("cannot run `{0}` (install llvm-14 or set LOADSTAR_OPT): {1}")]
    NoOpt(String, std::io::Error),
    /// `opt` rejected the translation: a bug of the translator.
    #[error("`{0}` rejected the translated module (a translator bug): {1}")]
    Rejected(String, String),
    /// loadstar's own passes failed.
    #[error("loadstar's passes failed: {0}")]
    Passes(String),
}

/// Run `opt -O2` on LLVM IR text and return the optimized text.
pub fn run_opt(llvm: &str) -> Result<String, PeerError> {
    let bin = opt_binary();
    let mut child = Command::new(&bin)
        .args(OPT_ARGS)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| PeerError::NoOpt(bin.clone(), e))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let text = llvm.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| PeerError::NoOpt(bin.clone(), e))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(PeerError::Rejected(
            bin,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Who keeps fewer loads and stores.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// loadstar keeps fewer than LLVM.
    Fewer,
    /// Both keep as many.
    Same,
    /// loadstar keeps more: a missed optimization.
    More,
}

impl Standing {
    fn of(loadstar: usize, llvm: usize) -> Standing {
        match loadstar.cmp(&llvm) {
            std::cmp::Ordering::Less => Standing::Fewer,
            std::cmp::Ordering::Equal => Standing::Same,
            std::cmp::Ordering::Greater => Standing::More,
        }
    }

    /// The word the reports print.
    pub fn word(self) -> &'static str {
        match self {
            Standing::Fewer => "loadstar fewer",
            Standing::Same => "same",
            Standing::More => "llvm fewer",
        }
    }
}

/// One function compared.
#[derive(Clone, Debug)]
pub struct FuncPeer {
    /// Its name, without `@`.
    pub name: String,
    /// Accesses in the original.
    pub original: Accesses,
    /// Accesses after loadstar's passes.
    pub loadstar: Accesses,
    /// Accesses after `opt -O2`.
    pub llvm: Accesses,
    /// Loads loadstar keeps whose result nothing uses (see [`count::count_function`]).
    pub unused_loads: usize,
}

impl FuncPeer {
    /// Who keeps fewer.
    pub fn standing(&self) -> Standing {
        Standing::of(self.loadstar.total(), self.llvm.total())
    }
}

/// A module compared.
#[derive(Clone, Debug)]
pub struct ModulePeer {
    /// Each function, in module order.
    pub funcs: Vec<FuncPeer>,
    /// The translation given to LLVM.
    pub llvm_in: String,
    /// What `opt -O2` made of it.
    pub llvm_out: String,
}

impl ModulePeer {
    /// Sums over the functions: original, loadstar, LLVM.
    pub fn totals(&self) -> (Accesses, Accesses, Accesses) {
        self.funcs.iter().fold(Default::default(), |(o, l, m), f| {
            (o.plus(f.original), l.plus(f.loadstar), m.plus(f.llvm))
        })
    }

    /// The value of a peer test's `; peer:` line: the loads + stores each keeps.
    pub fn pin_line(&self) -> String {
        let (_, loadstar, llvm) = self.totals();
        format!("loadstar {}, llvm {}", loadstar.total(), llvm.total())
    }

    /// Who keeps fewer over the whole module.
    pub fn standing(&self) -> Standing {
        let (_, l, m) = self.totals();
        Standing::of(l.total(), m.total())
    }

    /// The comparison as a table.
    pub fn render(&self, passes: &str) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<20} {:>10} {:>12} {:>10}  verdict",
            "function",
            "original",
            format!("loadstar({passes})"),
            "llvm -O2"
        );
        let cell = |a: Accesses| format!("{}L+{}S", a.loads, a.stores);
        for f in &self.funcs {
            let _ = writeln!(
                out,
                "{:<20} {:>10} {:>12} {:>10}  {}",
                format!("@{}", f.name),
                cell(f.original),
                cell(f.loadstar),
                cell(f.llvm),
                f.standing().word()
            );
        }
        let (o, l, m) = self.totals();
        let _ = writeln!(
            out,
            "{:<20} {:>10} {:>12} {:>10}  {}",
            "total",
            cell(o),
            cell(l),
            cell(m),
            self.standing().word()
        );
        out
    }
}

/// The functions of `module` after `pm`, with their access counts beside
/// LLVM's (`llvm`: counts by LLVM function name; `prefix`: this module's).
fn func_peers(
    module: &Module,
    pm: &PassManager,
    llvm: &std::collections::HashMap<String, Accesses>,
    prefix: &str,
) -> Result<Vec<FuncPeer>, PeerError> {
    let mut optimized = module.clone();
    pm.run(&mut optimized)
        .map_err(|e| PeerError::Passes(e.to_string()))?;
    Ok(module
        .funcs
        .iter()
        .zip(&optimized.funcs)
        .map(|(o, p)| {
            let (loadstar, unused_loads) = count_function(p);
            FuncPeer {
                name: o.name.clone(),
                original: count_function(o).0,
                loadstar,
                unused_loads,
                llvm: llvm
                    .get(&format!("{prefix}{}", o.name))
                    .copied()
                    .unwrap_or_default(),
            }
        })
        .collect())
}

/// Compare `module` optimized by `pm` with `module` translated and optimized by LLVM.
pub fn compare(module: &Module, pm: &PassManager) -> Result<ModulePeer, PeerError> {
    let llvm_in = translate::translate_module(module);
    let llvm_out = run_opt(&llvm_in)?;
    let funcs = func_peers(module, pm, &count_llvm(&llvm_out), "")?;
    Ok(ModulePeer {
        funcs,
        llvm_in,
        llvm_out,
    })
}

/// [`compare`] for several modules with one `opt` run (their LLVM texts are
/// not kept).
pub fn compare_many(modules: &[&Module], pm: &PassManager) -> Result<Vec<ModulePeer>, PeerError> {
    let llvm_out = run_opt(&translate::translate_modules(modules))?;
    let counts = count_llvm(&llvm_out);
    modules
        .iter()
        .enumerate()
        .map(|(k, m)| {
            let prefix = translate::module_prefix(k, modules.len());
            Ok(ModulePeer {
                funcs: func_peers(m, pm, &counts, &prefix)?,
                llvm_in: String::new(),
                llvm_out: String::new(),
            })
        })
        .collect()
}
