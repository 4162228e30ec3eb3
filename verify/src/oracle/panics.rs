//! Catching panics of passes (and of the interpreter on optimized code) so that
//! they become findings instead of killing the harness. While a catch is in
//! progress on a thread, the panic hook records the message and location
//! silently; elsewhere the previous hook runs as usual.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

static INSTALL: Once = Once::new();

fn install_hook() {
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(|c| c.get()) {
                let msg = match info.payload().downcast_ref::<&str>() {
                    Some(s) => s.to_string(),
                    None => info
                        .payload()
                        .downcast_ref::<String>()
                        .cloned()
                        .unwrap_or_else(|| "<non-string panic>".to_string()),
                };
                let loc = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                LAST.with(|l| *l.borrow_mut() = Some(format!("{msg}{loc}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// Run `f`; a panic becomes `Err(message with location)`, printed nowhere.
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    let was = CATCHING.with(|c| c.replace(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(was));
    r.map_err(|_| {
        LAST.with(|l| l.borrow_mut().take())
            .unwrap_or_else(|| "<panic>".to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors_with_their_message() {
        let r: Result<(), String> = catch(|| panic!("boom {}", 7));
        let msg = r.unwrap_err();
        assert!(msg.starts_with("boom 7 at "), "{msg}");
        assert_eq!(catch(|| 5), Ok(5));
    }
}
