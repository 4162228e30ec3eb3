//! Per-thread storage that the verifier, the passes and the interpreter reuse
//! from run to run, so that a warm run allocates (almost) nothing.

use std::cell::RefCell;
use std::thread::LocalKey;

/// Run `f` with this thread's value in `key`, then keep it for the next call.
///
/// The value is borrowed where it is (not moved out and back: some values,
/// the verifier's, are large structs); a nested use on the same thread starts
/// from a fresh default, and a panic inside `f` leaves a fresh default behind
/// rather than half-updated buffers. `f` should leave the value small enough
/// to keep (callers drop oversized buffers before returning).
pub fn with_reused<T: Default + 'static, R>(
    key: &'static LocalKey<RefCell<T>>,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    key.with(|cell| match cell.try_borrow_mut() {
        Ok(mut value) => {
            let kept = ResetOnUnwind(&mut *value);
            f(&mut *kept.0)
        }
        Err(_) => f(&mut T::default()),
    })
}

/// A borrowed value that is reset to its default if the borrower unwinds.
struct ResetOnUnwind<'a, T: Default>(&'a mut T);

impl<T: Default> Drop for ResetOnUnwind<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            *self.0 = T::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static POOL: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    }

    #[test]
    fn the_value_is_kept_between_calls() {
        with_reused(&POOL, |v| v.push(1));
        with_reused(&POOL, |v| v.push(2));
        assert_eq!(with_reused(&POOL, |v| v.clone()), vec![1, 2]);
    }

    #[test]
    fn a_nested_use_starts_fresh_and_the_outer_value_wins() {
        with_reused(&POOL, |outer| {
            outer.push(7);
            let inner = with_reused(&POOL, |inner| {
                inner.push(9);
                inner.clone()
            });
            assert_eq!(inner, vec![9]);
        });
        assert_eq!(with_reused(&POOL, |v| v.clone()), vec![7]);
    }

    #[test]
    fn a_panic_in_a_nested_use_leaves_the_outer_value_alone() {
        with_reused(&POOL, |outer| {
            outer.clear();
            outer.push(5);
            let r = std::panic::catch_unwind(|| {
                with_reused(&POOL, |inner: &mut Vec<u32>| {
                    inner.push(6);
                    panic!("nested");
                })
            });
            assert!(r.is_err());
            outer.push(8);
        });
        assert_eq!(with_reused(&POOL, |v| v.clone()), vec![5, 8]);
    }

    #[test]
    fn a_panic_leaves_a_fresh_value_behind() {
        with_reused(&POOL, |v| v.push(3));
        let r = std::panic::catch_unwind(|| {
            with_reused(&POOL, |v: &mut Vec<u32>| {
                v.push(4);
                panic!("mid-run");
            })
        });
        assert!(r.is_err());
        assert!(with_reused(&POOL, |v| v.is_empty()));
    }
}
