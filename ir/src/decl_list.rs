//! Declaration tables shared between copies of a module.
//!
//! A module's types, globals and externs are each a [`DeclList`]: a list
//! that cloning shares (a reference count, not a copy of every name) and the
//! first change through `&mut` unshares (copy on write). Passes never change
//! declarations, so an optimized module, its original and every generated
//! module cloned from one template hold the same tables; comparing them then
//! stops at the pointer and their hash ([`DeclList::fingerprint`]) is
//! computed once per table.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

/// A list of declarations, shared between clones and copied on the first
/// change. It reads as a `Vec<T>` (through `Deref`) and changes as one
/// (through `DerefMut`); equality and hashing are those of the list.
pub struct DeclList<T>(Arc<Shared<T>>);

/// What clones of a [`DeclList`] share: the list and its hash, computed on
/// first use.
#[derive(Clone)]
struct Shared<T> {
    items: Vec<T>,
    fingerprint: OnceLock<u64>,
}

impl<T> DeclList<T> {
    /// A table holding `items`.
    pub fn new(items: Vec<T>) -> DeclList<T> {
        DeclList(Arc::new(Shared {
            items,
            fingerprint: OnceLock::new(),
        }))
    }
}

impl<T: Hash> DeclList<T> {
    /// A 64-bit hash of the list, computed once per shared table: clones
    /// answer from the first one's result until one of them changes.
    pub fn fingerprint(&self) -> u64 {
        *self.0.fingerprint.get_or_init(|| {
            let mut h = rustc_hash::FxHasher::default();
            self.0.items.hash(&mut h);
            h.finish()
        })
    }
}

impl<T> Default for DeclList<T> {
    fn default() -> DeclList<T> {
        DeclList::new(Vec::new())
    }
}

impl<T> Clone for DeclList<T> {
    fn clone(&self) -> DeclList<T> {
        DeclList(Arc::clone(&self.0))
    }
}

impl<T> Deref for DeclList<T> {
    type Target = Vec<T>;

    fn deref(&self) -> &Vec<T> {
        &self.0.items
    }
}

impl<T: Clone> DerefMut for DeclList<T> {
    /// The list, unshared first if other clones hold it; its cached hash is
    /// dropped, as the caller may change it.
    fn deref_mut(&mut self) -> &mut Vec<T> {
        let shared = Arc::make_mut(&mut self.0);
        shared.fingerprint = OnceLock::new();
        &mut shared.items
    }
}

impl<T: PartialEq> PartialEq for DeclList<T> {
    fn eq(&self, other: &DeclList<T>) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.items == other.0.items
    }
}

impl<T: Eq> Eq for DeclList<T> {}

impl<T: Hash> Hash for DeclList<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.items.hash(state);
    }
}

impl<T: fmt::Debug> fmt::Debug for DeclList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.items.fmt(f)
    }
}

impl<T> From<Vec<T>> for DeclList<T> {
    fn from(items: Vec<T>) -> DeclList<T> {
        DeclList::new(items)
    }
}

impl<T> FromIterator<T> for DeclList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> DeclList<T> {
        DeclList::new(iter.into_iter().collect())
    }
}

impl<'a, T> IntoIterator for &'a DeclList<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> std::slice::Iter<'a, T> {
        self.0.items.iter()
    }
}

impl<'a, T: Clone> IntoIterator for &'a mut DeclList<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;

    fn into_iter(self) -> std::slice::IterMut<'a, T> {
        self.deref_mut().iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::DeclList;

    #[test]
    fn clones_share_until_one_changes() {
        let a: DeclList<String> = vec!["x".to_string()].into();
        let mut b = a.clone();
        assert!(std::ptr::eq(a.as_ptr(), b.as_ptr()));
        b.push("y".to_string());
        assert_eq!(a.len(), 1);
        assert_eq!(b.len(), 2);
        assert_ne!(a, b);
    }

    #[test]
    fn equality_and_fingerprint_follow_the_contents() {
        let a: DeclList<String> = vec!["x".to_string()].into();
        let b: DeclList<String> = vec!["x".to_string()].into();
        assert_eq!(a, b);
        assert_eq!(a.fingerprint(), b.fingerprint());
        let mut c = a.clone();
        let before = c.fingerprint();
        c[0].push('z');
        assert_ne!(c.fingerprint(), before);
        assert_eq!(a.fingerprint(), before);
    }
}
