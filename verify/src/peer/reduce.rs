//! Reducing a missed optimization: the structural reducer
//! ([`crate::reduce::reduce_with`]) with the predicate "LLVM still keeps
//! fewer loads and stores than loadstar", and the result as a `; test: peer`
//! text test (docs/filetests.md).

use super::{compare, PeerError, Standing};
use crate::oracle::{Finding, FindingKind};
use crate::reduce::{reduce_with, Candidate, Limits, Reduction};
use ir::{FuncId, Module};
use passes::PassManager;

/// A missed-optimization finding for `module` (the function is only the
/// reducer's anchor: the comparison covers every function).
pub fn missed_finding(module: &Module, passes: &str, detail: String) -> Finding {
    Finding {
        passes: passes.to_string(),
        kind: FindingKind::MissedOptimization,
        part: "llvm fewer".to_string(),
        detail,
        module: module.clone(),
        func: module.func_by_name("main").unwrap_or(FuncId::new(0)),
        input: None,
        expected: None,
        actual: None,
        fuel: 0,
        seed: None,
    }
}

/// Shrink `module` while LLVM's `opt -O2` still keeps fewer loads and stores
/// than loadstar's `pm`; `Ok(None)` when it does not to begin with, an error
/// when the first comparison cannot be made (candidates that cannot be
/// compared are simply not kept).
pub fn reduce_missed(
    module: &Module,
    pm: &PassManager,
    limits: &Limits,
) -> Result<Option<Reduction>, PeerError> {
    let passes = pm.names().join(",");
    let first = compare(module, pm)?;
    if first.standing() != Standing::More {
        return Ok(None);
    }
    let finding = missed_finding(module, &passes, first.render(&passes));
    let mut recheck = |c: &Candidate| {
        compare(&c.module, pm)
            .ok()
            .filter(|r| r.standing() == Standing::More)
            .map(|r| missed_finding(&c.module, &passes, r.render(&passes)))
    };
    Ok(Some(reduce_with(&finding, &mut recheck, limits)))
}

/// The reduced module as a `; test: peer` text test that pins both counts.
pub fn peer_test_text(r: &Reduction, pm: &PassManager) -> String {
    let passes = pm.names().join(",");
    let module = &r.finding.module;
    let pin = compare(module, pm)
        .map(|rep| rep.pin_line())
        .unwrap_or_default();
    let mut out = format!(
        "; Missed optimization: LLVM 14's opt -O2 keeps fewer loads and stores than\n\
         ; loadstar's `{passes}` (reduced from {} to {} instructions by `loadstar peer --reduce`).\n",
        r.insts_before, r.insts_after
    );
    for line in r.finding.detail.lines() {
        out.push_str(&format!(";   | {line}\n"));
    }
    out.push_str(&format!("; test: peer {passes}\n; peer: {pin}\n"));
    out.push_str(&ir::print::print_module(module));
    out
}
