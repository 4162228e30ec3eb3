//! Running a function-level transformation over every function of a module,
//! and telling the pass manager which functions a pass changed.
//!
//! A pass that works function by function reports each function it changed
//! ([`report_changed`]; [`each_function_detached`] does it for its callers);
//! the pass manager runs each pass inside [`tracked`] and so knows, without
//! hashing the module, which functions may differ. A pass that reports
//! nothing is taken to have changed every function when it reports a change.
//!
//! The manager also names the module state a pass runs on ([`tracked_in`]):
//! the call summaries of a module state are computed once, whichever pass
//! asks first ([`callee_summaries`]).

use ir::summaries::Summaries;
use ir::{Function, Module};
use std::cell::RefCell;

/// What the running pass said about the functions it changed.
#[derive(Default)]
struct Report {
    /// Inside [`tracked`].
    active: bool,
    /// The pass reported per function (even if it changed none).
    reported: bool,
    /// The functions (by index) it reported changed, in order, maybe repeated.
    changed: Vec<usize>,
    /// The functions (by index) the pass reported left at its own fixed
    /// point ([`report_at_fixed_point`]), maybe repeated.
    at_fixed_point: Vec<usize>,
    /// Per function (by index): the pass is known to leave it unchanged, so
    /// it need not look at it ([`skipped`]).
    skip: Vec<bool>,
    /// The pass dropped `skip` ([`forget_skips`]).
    skips_forgotten: bool,
    /// The identity the pass manager gave the module state the pass runs
    /// on ([`tracked_in`]), if it gave one.
    module: Option<u64>,
}

thread_local! {
    static REPORT: RefCell<Report> = RefCell::new(Report::default());
    /// The call summaries of the module state with this identity (see
    /// [`tracked_in`]): the first pass of that state to ask computes them.
    static SUMMARIES: RefCell<Option<(u64, Summaries)>> = const { RefCell::new(None) };
}

/// The running pass works function by function and reports every function it
/// changes with [`report_changed`] (a call with no report then means it changed
/// none). Outside [`tracked`] it does nothing.
pub fn report_per_function() {
    REPORT.with(|r| {
        let mut r = r.borrow_mut();
        if r.active {
            r.reported = true;
        }
    });
}

/// The running pass changed function `index` (see [`report_per_function`]).
pub fn report_changed(index: usize) {
    REPORT.with(|r| {
        let mut r = r.borrow_mut();
        if r.active {
            r.reported = true;
            r.changed.push(index);
        }
    });
}

/// The running pass left function `index` at its own fixed point: run again
/// on it as it is now, the pass would change nothing (the pass manager then
/// skips it there, [`at_fixed_point_reported`]). Outside [`tracked`] it does
/// nothing.
pub fn report_at_fixed_point(index: usize) {
    REPORT.with(|r| {
        let mut r = r.borrow_mut();
        if r.active {
            r.at_fixed_point.push(index);
        }
    });
}

/// Whether the last pass run inside [`tracked`] reported function `index`
/// at its own fixed point ([`report_at_fixed_point`]).
pub fn at_fixed_point_reported(index: usize) -> bool {
    REPORT.with(|r| r.borrow().at_fixed_point.binary_search(&index).is_ok())
}

/// The running pass reads more than each function, the declarations and its
/// index this time (DCE: call summaries of other functions that changed since
/// its last run), so what the pass manager knows about the functions it
/// leaves unchanged does not hold: it visits every function, and the manager
/// neither skips nor checks skips for this run ([`skips_forgotten`]).
pub fn forget_skips() {
    REPORT.with(|r| {
        let mut r = r.borrow_mut();
        if r.active {
            r.skip.clear();
            r.skips_forgotten = true;
        }
    });
}

/// The call summaries of `module` ([`ir::summaries`]) for a pass whose work
/// on a function reads the summaries of its callees (`dce`, `lse`, `gvn`);
/// `last` holds the summaries that pass ran with last time, and gets these.
/// When they differ, a function the pass left unchanged may change now (a
/// callee lost an effect), so the pass forgets the manager's skips
/// ([`forget_skips`]).
///
/// Inside [`tracked_in`] with a module identity, the summaries of that
/// module state are computed once and kept for the passes that follow on
/// it (about a third of the pipeline's passes run on a module the pass
/// before them left unchanged).
pub fn callee_summaries<'s>(module: &Module, last: &'s mut Option<Summaries>) -> &'s Summaries {
    let id = REPORT.with(|r| {
        let r = r.borrow();
        r.module.filter(|_| r.active)
    });
    let Some(id) = id else {
        let now = Summaries::of(module);
        if last.as_ref() != Some(&now) {
            forget_skips();
            *last = Some(now);
        }
        return last.get_or_insert_with(Summaries::default);
    };
    SUMMARIES.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.as_ref().map(|(k, _)| *k) != Some(id) {
            *kept = Some((id, Summaries::of(module)));
        }
        let (_, now) = kept.as_ref().expect("kept above");
        if last.as_ref() != Some(now) {
            forget_skips();
            *last = Some(now.clone());
        }
    });
    last.get_or_insert_with(Summaries::default)
}

/// Forget the call summaries kept for a module identity: identities are
/// tokens of one manager run, so a new run starts without them.
pub fn forget_kept_summaries() {
    SUMMARIES.with(|kept| *kept.borrow_mut() = None);
}

/// Whether the last pass run inside [`tracked`] called [`forget_skips`].
pub fn skips_forgotten() -> bool {
    REPORT.with(|r| r.borrow().skips_forgotten)
}

/// Whether the running pass may leave function `index` alone: the pass
/// manager knows the pass leaves it unchanged (see [`tracked`]). A pass
/// that works function by function asks before each function.
pub fn skipped(index: usize) -> bool {
    REPORT.with(|r| {
        let r = r.borrow();
        r.active && r.skip.get(index).copied().unwrap_or(false)
    })
}

/// Run `pass` (one pass over a module) and return its result and whether it
/// reported per function; if it did, `changed` (cleared first) holds the
/// functions it changed, sorted, without repeats; if not, any function may
/// have changed. `skip` (by function index) says which functions the pass
/// is known to leave unchanged ([`skipped`]).
pub fn tracked<R>(changed: &mut Vec<usize>, skip: &[bool], pass: impl FnOnce() -> R) -> (R, bool) {
    tracked_in(None, changed, skip, pass)
}

/// [`tracked`], on the module state the pass manager identifies by `module`
/// (`None`: none given). Equal identities within one manager run must mean
/// equal modules: the call summaries computed for one are reused for the
/// other ([`callee_summaries`]; the manager calls
/// [`forget_kept_summaries`] when its run starts).
pub fn tracked_in<R>(
    module: Option<u64>,
    changed: &mut Vec<usize>,
    skip: &[bool],
    pass: impl FnOnce() -> R,
) -> (R, bool) {
    /// Ends the report even if the pass panics.
    struct Active;
    impl Drop for Active {
        fn drop(&mut self) {
            REPORT.with(|r| r.borrow_mut().active = false);
        }
    }
    REPORT.with(|r| {
        let mut r = r.borrow_mut();
        r.active = true;
        r.reported = false;
        r.changed.clear();
        r.at_fixed_point.clear();
        r.skip.clear();
        r.skip.extend_from_slice(skip);
        r.skips_forgotten = false;
        r.module = module;
    });
    let guard = Active;
    let out = pass();
    drop(guard);
    let reported = REPORT.with(|r| {
        let mut r = r.borrow_mut();
        // Sorted, so that the manager's question per function is a search.
        r.at_fixed_point.sort_unstable();
        r.at_fixed_point.dedup();
        changed.clear();
        changed.append(&mut r.changed);
        r.reported
    });
    changed.sort_unstable();
    changed.dedup();
    (out, reported)
}

/// Run `f` on each function in turn, with the function taken out of `module`
/// (its slot holds an empty placeholder meanwhile) so that `f` can edit it while
/// reading the module's declarations. Returns whether any call reported a
/// change, and reports each function whose call did ([`report_changed`]).
/// Functions the pass manager knows `f` leaves unchanged are not visited
/// ([`skipped`]).
pub fn each_function_detached(
    module: &mut Module,
    mut f: impl FnMut(&Module, &mut Function) -> bool,
) -> bool {
    report_per_function();
    let mut changed = false;
    for i in 0..module.funcs.len() {
        if skipped(i) {
            continue;
        }
        let mut func = std::mem::replace(&mut module.funcs[i], Function::new("", None));
        if crate::analyses::in_function(i, || f(module, &mut func)) {
            changed = true;
            report_changed(i);
        }
        module.funcs[i] = func;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_is_visited_detached_and_put_back() {
        let text =
            "func @a() -> i64 {\nentry:\n  ret 1\n}\nfunc @b() -> i64 {\nentry:\n  ret 2\n}\n";
        let mut m = ir::parse_module(text, "t.ir").unwrap().0;
        let before = m.clone();
        let mut seen = Vec::new();
        let changed = each_function_detached(&mut m, |module, func| {
            // The function's own slot is the placeholder while it is out.
            assert!(module.funcs.iter().all(|g| g.name != func.name));
            seen.push(func.name.clone());
            func.name == "b"
        });
        assert!(changed);
        assert_eq!(seen, ["a", "b"]);
        assert_eq!(m, before);
    }

    #[test]
    fn changed_call_summaries_forget_the_skips() {
        let text = "func @g() -> i64 {\nentry:\n  ret 1\n}\n\
                    func @main() -> i64 {\nentry:\n  %r = call @g()\n  ret %r\n}\n";
        let m = ir::parse_module(text, "t.ir").unwrap().0;
        let mut last = None;
        // The first run has nothing to compare with: it forgets.
        tracked(&mut Vec::new(), &[true, true], || {
            callee_summaries(&m, &mut last);
            assert!(!skipped(0) && !skipped(1));
        });
        assert!(skips_forgotten());
        // The same summaries: the skips stand.
        tracked(&mut Vec::new(), &[true, false], || {
            let calls = callee_summaries(&m, &mut last);
            assert!(calls.call_effects(ir::FuncId::new(0)).writes_nothing());
            assert!(skipped(0));
        });
        assert!(!skips_forgotten());
        // @g now writes: the summaries differ, so @main may change.
        let m2 = ir::parse_module(&text.replace("  ret 1", "  escape 1\n  ret 1"), "t.ir")
            .unwrap()
            .0;
        tracked(&mut Vec::new(), &[true, false], || {
            callee_summaries(&m2, &mut last);
            assert!(!skipped(0));
        });
        assert!(skips_forgotten());
    }

    #[test]
    fn call_summaries_are_kept_per_module_identity_until_forgotten() {
        let text = "func @g() -> i64 {\nentry:\n  ret 1\n}\n\
                    func @main() -> i64 {\nentry:\n  %r = call @g()\n  ret %r\n}\n";
        let m = ir::parse_module(text, "t.ir").unwrap().0;
        let writes = ir::parse_module(&text.replace("  ret 1", "  escape 1\n  ret 1"), "t.ir")
            .unwrap()
            .0;
        let g = ir::FuncId::new(0);
        forget_kept_summaries();
        let (mut a, mut b) = (None, None);
        tracked_in(Some(7), &mut Vec::new(), &[], || {
            assert!(callee_summaries(&m, &mut a)
                .call_effects(g)
                .writes_nothing());
        });
        // The same identity stands for the same module: what was computed
        // for it is what another pass gets (here, told a module it is not,
        // the kept summaries show).
        tracked_in(Some(7), &mut Vec::new(), &[], || {
            assert!(callee_summaries(&writes, &mut b)
                .call_effects(g)
                .writes_nothing());
        });
        // A new identity, or none, computes them.
        tracked_in(Some(8), &mut Vec::new(), &[], || {
            assert!(!callee_summaries(&writes, &mut b)
                .call_effects(g)
                .writes_nothing());
        });
        let mut c = None;
        tracked(&mut Vec::new(), &[], || {
            assert!(callee_summaries(&m, &mut c)
                .call_effects(g)
                .writes_nothing());
        });
        // A new manager run forgets them: identity 8 is computed again.
        forget_kept_summaries();
        tracked_in(Some(8), &mut Vec::new(), &[], || {
            assert!(callee_summaries(&m, &mut b)
                .call_effects(g)
                .writes_nothing());
        });
        assert!(
            skips_forgotten(),
            "the summaries differ from the last run's"
        );
        forget_kept_summaries();
    }

    #[test]
    fn tracked_runs_say_which_functions_were_reported_changed() {
        let text =
            "func @a() -> i64 {\nentry:\n  ret 1\n}\nfunc @b() -> i64 {\nentry:\n  ret 2\n}\n";
        let mut m = ir::parse_module(text, "t.ir").unwrap().0;
        let mut changed = vec![7];
        let (any, reported) = tracked(&mut changed, &[], || {
            each_function_detached(&mut m, |_, func| func.name == "b")
        });
        assert!(any);
        assert_eq!((reported, changed.as_slice()), (true, &[1][..]));
        // Reported, none changed.
        let (any, reported) = tracked(&mut changed, &[], || {
            each_function_detached(&mut m, |_, _| false)
        });
        assert!(!any);
        assert_eq!((reported, changed.as_slice()), (true, &[][..]));
        // A function the manager says the pass leaves unchanged is not visited.
        let (any, _) = tracked(&mut changed, &[true, false], || {
            each_function_detached(&mut m, |_, func| {
                assert_eq!(func.name, "b");
                true
            })
        });
        assert!(any);
        assert_eq!(changed, [1]);
        assert!(!skipped(0), "only inside `tracked`");
        // A function reported at the pass's fixed point is told the manager.
        tracked(&mut changed, &[], || {
            report_changed(1);
            report_at_fixed_point(1);
        });
        assert!(at_fixed_point_reported(1) && !at_fixed_point_reported(0));
        tracked(&mut changed, &[], || ());
        assert!(!at_fixed_point_reported(1), "cleared at the next pass");
        // A pass that reports nothing: unknown.
        let (_, reported) = tracked(&mut changed, &[], || true);
        assert!(!reported);
        // Repeats are merged, and nothing is recorded outside `tracked`.
        let (_, reported) = tracked(&mut changed, &[], || {
            report_changed(1);
            report_changed(0);
            report_changed(1);
        });
        assert_eq!((reported, changed.as_slice()), (true, &[0, 1][..]));
        report_changed(0);
        let (_, reported) = tracked(&mut changed, &[], || ());
        assert_eq!((reported, changed.as_slice()), (false, &[][..]));
        // A pass that panics ends its report.
        let caught = std::panic::catch_unwind(|| {
            tracked(&mut Vec::new(), &[], || {
                report_changed(0);
                panic!("a pass bug")
            })
        });
        assert!(caught.is_err());
        report_changed(1);
        assert!(REPORT.with(|r| !r.borrow().active && r.borrow().changed == [0]));
    }
}
