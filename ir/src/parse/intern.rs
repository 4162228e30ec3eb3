//! Dense ids for the value names and block labels of one function, given by
//! the syntax pass so that the resolver looks names up in vectors.
//!
//! A name of up to 16 bytes (nearly all of them) is packed into two words and
//! hashed as integers: no string hashing, no comparison that reads the text
//! of an earlier line, and growing the table never reads the source again.

use rustc_hash::FxHashMap;

/// Interns the names of one namespace of one function.
#[derive(Default)]
pub(crate) struct Interner<'s> {
    /// Names of up to 16 bytes, packed by [`pack`].
    short: FxHashMap<[u64; 2], u32>,
    /// Longer names.
    long: FxHashMap<&'s str, u32>,
    /// The distinct names, by id (the next id is its length).
    names: Vec<&'s str>,
}

/// `name` (at most 16 bytes) zero-padded into two words. Names are made of
/// identifier characters, never NUL, so distinct names pack differently.
fn pack(name: &str) -> [u64; 2] {
    let mut bytes = [0u8; 16];
    bytes[..name.len()].copy_from_slice(name.as_bytes());
    let (lo, hi) = bytes.split_at(8);
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    [word(lo), word(hi)]
}

impl<'s> Interner<'s> {
    /// The id of `name`, a new one (the next integer) the first time it is seen.
    #[inline]
    pub fn id(&mut self, name: &'s str) -> u32 {
        let next = self.names.len() as u32;
        let id = if name.len() <= 16 {
            *self.short.entry(pack(name)).or_insert(next)
        } else {
            *self.long.entry(name).or_insert(next)
        };
        if id == next {
            self.names.push(name);
        }
        id
    }

    /// The distinct names seen, by id (taken out: the interner keeps its
    /// tables but no longer knows them by id).
    pub fn take_names(&mut self) -> Vec<&'s str> {
        std::mem::take(&mut self.names)
    }

    /// Forget every name (keeping the tables' memory for the next function).
    pub fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
        self.names.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_stable_for_short_and_long_names() {
        let mut i = Interner::default();
        let long = "a_name_longer_than_sixteen_bytes";
        assert_eq!(i.id("x"), 0);
        assert_eq!(i.id("x1"), 1);
        assert_eq!(i.id(long), 2);
        assert_eq!(i.id("x"), 0);
        assert_eq!(i.id("exactly_16_bytes"), 3);
        assert_eq!(i.id(long), 2);
        assert_eq!(i.id("exactly_16_byte"), 4);
        let names = i.take_names();
        assert_eq!(names.len(), 5);
        assert_eq!(names[2], long);
        assert_eq!(names[4], "exactly_16_byte");
        i.clear();
        assert_eq!(i.id("x1"), 0);
    }
}
