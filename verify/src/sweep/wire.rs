//! The counters of one checked program as bytes, so that a sweep worker
//! process can send them to its parent (`sweep::pool`). Findings do not
//! travel: the worker sends how many it had, and the parent checks that
//! program again itself to get them (they are rare and deterministic).
//!
//! Format (text): one line of numbers — valid, runs, inconclusive, trapping,
//! param_aliasing_runs, param_aliasing, sharing, plans_run, native_modules,
//! native_reused, native_skipped, native_runs, regalloc_checked, findings — then one line per
//! trap kind `t\tNAME\tN` and per pass counter `s\tPASS\tRULE\tN`.

use crate::oracle::ProgramResult;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::sync::Mutex;

/// Encode `r`'s counters (its findings only by number).
pub fn encode(r: &ProgramResult) -> Vec<u8> {
    let mut s = String::new();
    let nums = [
        r.valid as u64,
        r.runs,
        r.inconclusive,
        r.trapping,
        r.param_aliasing_runs,
        r.param_aliasing as u64,
        r.sharing as u64,
        r.plans_run,
        r.native_modules,
        r.native_reused,
        r.native_skipped,
        r.native_runs,
        r.regalloc_checked as u64,
        r.findings.len() as u64,
    ];
    let line: Vec<String> = nums.iter().map(u64::to_string).collect();
    s.push_str(&line.join(" "));
    s.push('\n');
    for (k, n) in &r.trap_kinds {
        let _ = writeln!(s, "t\t{k}\t{n}");
    }
    for (pass, rules) in &r.stats.passes() {
        for (rule, n) in rules {
            let _ = writeln!(s, "s\t{pass}\t{rule}\t{n}");
        }
    }
    s.into_bytes()
}

/// Decode what [`encode`] wrote: the counters (no findings) and the number
/// of findings the worker had. `None` if the bytes are not such a record.
pub fn decode(bytes: &[u8]) -> Option<(ProgramResult, u64)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    let nums: Vec<u64> = lines
        .next()?
        .split(' ')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let &[valid, runs, inconclusive, trapping, param_aliasing_runs, param_aliasing, sharing, plans_run, native_modules, native_reused, native_skipped, native_runs, regalloc_checked, findings] =
        nums.as_slice()
    else {
        return None;
    };
    let mut r = ProgramResult {
        valid: valid != 0,
        runs,
        inconclusive,
        trapping,
        param_aliasing_runs,
        param_aliasing: param_aliasing != 0,
        sharing: sharing != 0,
        plans_run,
        native_modules,
        native_reused,
        native_skipped,
        native_runs,
        regalloc_checked: regalloc_checked != 0,
        ..ProgramResult::default()
    };
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["t", kind, n] => {
                r.trap_kinds.insert(kind.to_string(), n.parse().ok()?);
            }
            ["s", pass, rule, n] => r.stats.add(intern(pass), intern(rule), n.parse().ok()?),
            _ => return None,
        }
    }
    Some((r, findings))
}

/// A `'static` copy of a counter name (each distinct name is leaked once;
/// there are as many as the passes have counters).
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&n) = names.get(name) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_round_trip() {
        let mut r = ProgramResult {
            valid: true,
            runs: 3,
            inconclusive: 1,
            trapping: 1,
            param_aliasing_runs: 2,
            param_aliasing: true,
            sharing: false,
            plans_run: 6,
            native_modules: 4,
            native_reused: 3,
            native_skipped: 2,
            native_runs: 8,
            regalloc_checked: true,
            ..ProgramResult::default()
        };
        r.trap_kinds.insert("null_deref".into(), 1);
        r.stats.add("lse", "forwarded loads", 5);
        r.stats.add("peeps", "add-zero", 2);
        let (back, findings) = decode(&encode(&r)).expect("decodes");
        assert_eq!(findings, 0);
        assert_eq!(format!("{back:?}"), format!("{r:?}"));
        assert!(decode(b"1 2 3\n").is_none());
        assert!(decode(b"not numbers").is_none());
    }
}
