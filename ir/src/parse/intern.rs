//! Dense ids for the value names and block labels of one function, given by
//! the syntax pass so that the resolver looks names up in vectors.
//!
//! Most names are a short prefix and a decimal number (`%v12`, `%c997`,
//! `b42`): those find their id in a vector per prefix, indexed by the number,
//! so that names written in order read and write neighbouring slots (a hash
//! table of a big function scatters them over memory that no cache holds).
//! Other names of up to 16 bytes are packed into two words and hashed as
//! integers; longer ones are hashed as strings.

use rustc_hash::FxHashMap;

/// No id yet (a slot of a numbered series).
const NONE: u32 = u32::MAX;

/// Interns the names of one namespace of one function.
#[derive(Default)]
pub(crate) struct Interner<'s> {
    /// The series of numbered names, by packed prefix: an index into `series`.
    prefixes: FxHashMap<[u64; 2], u32>,
    /// The last prefix looked up and its series (names often share one).
    last_prefix: Option<([u64; 2], u32)>,
    /// Whether some numbered name is kept in the hash tables (a series could
    /// not grow to it): only then does a numbered name missing from its
    /// series need a look in them.
    diverted: bool,
    /// The ids of each prefix's names by number (`NONE` where unseen); the
    /// first `series_used` are in use, the rest keep their memory for later
    /// functions.
    series: Vec<Vec<u32>>,
    series_used: usize,
    /// The slots of all series together (bounded by the number of names, so
    /// that `%v4000000000` cannot make a vector of billions).
    slots: usize,
    /// Other names of up to 16 bytes, packed by [`pack`].
    short: FxHashMap<[u64; 2], u32>,
    /// Longer names.
    long: FxHashMap<&'s str, u32>,
    /// The distinct names of every function so far, by id from `base` on
    /// for the current one (whose next id is their number): kept, so that
    /// the syntax tree takes them all at once instead of a copy per function.
    names: Vec<&'s str>,
    /// Where the current function's names start in `names`.
    base: usize,
    /// About how many names there will be (see [`push_sized`]).
    expected: usize,
}

/// Vectors of a text's syntax past this length grow at once to the length
/// the text bounds (see [`push_sized`]).
const SIZED_FROM: usize = 4096;

/// Push `x` onto `v`, which will hold about `expected` elements: once past
/// [`SIZED_FROM`] it grows at once to that, not by doublings (each copy of a
/// big function's vector missed the cache on every line of it); smaller
/// vectors, or ones reused from function to function, grow as usual.
#[inline]
pub(super) fn push_sized<T>(v: &mut Vec<T>, x: T, expected: usize) {
    if v.len() == v.capacity() && v.len() >= SIZED_FROM {
        v.reserve(expected.saturating_sub(v.len()).max(1));
    }
    v.push(x);
}

/// `name` (at most 16 bytes) zero-padded into two words. Names are made of
/// identifier characters, never NUL, so distinct names pack differently.
#[inline]
fn pack(name: &str) -> [u64; 2] {
    let mut words = [0u64; 2];
    for (i, &b) in name.as_bytes().iter().take(16).enumerate() {
        words[i / 8] |= u64::from(b) << (8 * (i % 8));
    }
    words
}

/// `name` as a prefix of at most 16 bytes and the number it ends with, when
/// it ends with one written without leading zeros (so that each number has
/// one spelling) and below 2^31.
#[inline]
fn numbered(name: &str) -> Option<(&str, usize)> {
    let bytes = name.as_bytes();
    let (mut split, mut n, mut scale) = (bytes.len(), 0usize, 1usize);
    // At most 9 digits (below 10^9 < 2^31), read from the end.
    while split > 0 && bytes.len() - split < 9 {
        let d = bytes[split - 1].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        n += usize::from(d) * scale;
        scale *= 10;
        split -= 1;
    }
    let digits = bytes.len() - split;
    let more_digits = split > 0 && bytes[split - 1].is_ascii_digit();
    if digits == 0 || more_digits || split > 16 || (digits > 1 && bytes[split] == b'0') {
        return None;
    }
    Some((&name[..split], n))
}

impl<'s> Interner<'s> {
    /// The id of `name`, a new one (the next integer) the first time it is seen.
    #[inline]
    pub fn id(&mut self, name: &'s str) -> u32 {
        if let Some((prefix, n)) = numbered(name) {
            let next = self.count() as u32;
            let series = self.series_of(prefix);
            if let Some(&id) = self.series[series].get(n).filter(|&&id| id != NONE) {
                return id;
            }
            // Not in the series; it may be among the other names (when the
            // series could not grow to it).
            if self.diverted {
                if let Some(id) = self.other(name) {
                    return id;
                }
            }
            // The series grows to `n` while all series together hold at most
            // a few slots per name (and a few thousand to start with).
            let budget = 4 * self.count() + 4096;
            let ids = &mut self.series[series];
            let grow = (n + 1).saturating_sub(ids.len());
            if self.slots + grow <= budget {
                if grow > 0 {
                    ids.resize(n + 1, NONE);
                    self.slots += grow;
                }
                ids[n] = next;
                push_sized(&mut self.names, name, self.expected);
                return next;
            }
            self.diverted = true;
        } else if let Some(id) = self.other(name) {
            return id;
        }
        let next = self.count() as u32;
        if name.len() <= 16 {
            self.short.insert(pack(name), next);
        } else {
            self.long.insert(name, next);
        }
        push_sized(&mut self.names, name, self.expected);
        next
    }

    /// The id of `name` if it has one (a look-up that interns nothing).
    #[inline]
    pub fn get(&self, name: &str) -> Option<u32> {
        if let Some((prefix, n)) = numbered(name) {
            let found = self
                .prefixes
                .get(&pack(prefix))
                .and_then(|&s| self.series[s as usize].get(n))
                .copied()
                .filter(|&id| id != NONE);
            if found.is_some() || !self.diverted {
                return found;
            }
        }
        self.other(name)
    }

    /// The id of `name` among the names kept in the hash tables.
    #[inline]
    fn other(&self, name: &str) -> Option<u32> {
        if name.len() <= 16 {
            if self.short.is_empty() {
                return None;
            }
            self.short.get(&pack(name)).copied()
        } else {
            self.long.get(name).copied()
        }
    }

    /// The index in `series` of the names starting with `prefix`.
    #[inline]
    fn series_of(&mut self, prefix: &str) -> usize {
        let key = pack(prefix);
        if let Some((last, s)) = self.last_prefix {
            if last == key {
                return s as usize;
            }
        }
        let next = self.series_used as u32;
        let s = *self.prefixes.entry(key).or_insert(next) as usize;
        self.last_prefix = Some((key, s as u32));
        if s == self.series_used {
            if self.series.len() == s {
                self.series.push(Vec::new());
            }
            self.series_used += 1;
        }
        s
    }

    /// Expect about `names` names in all (see [`push_sized`]).
    pub fn expect(&mut self, names: usize) {
        self.expected = names;
    }

    /// The number of distinct names of the current function.
    fn count(&self) -> usize {
        self.names.len() - self.base
    }

    /// The distinct names of the current function, by id.
    pub fn names(&self) -> &[&'s str] {
        &self.names[self.base..]
    }

    /// Where the current function's names start in [`Interner::all_names`].
    pub fn base(&self) -> usize {
        self.base
    }

    /// The names of every function so far, one function after the other
    /// (taken out: the interner starts again empty).
    pub fn all_names(&mut self) -> Vec<&'s str> {
        self.base = 0;
        std::mem::take(&mut self.names)
    }

    /// Put back the names [`Interner::all_names`] took, the current
    /// function's from `base` on (the earlier ones may have been dropped).
    pub fn restore_names(&mut self, names: Vec<&'s str>, base: usize) {
        self.base = base;
        self.names = names;
    }

    /// Forget every name (keeping the tables' memory for the next function;
    /// the names stay in [`Interner::all_names`]).
    pub fn clear(&mut self) {
        self.prefixes.clear();
        for s in &mut self.series[..self.series_used] {
            s.clear();
        }
        self.series_used = 0;
        self.slots = 0;
        self.last_prefix = None;
        self.diverted = false;
        self.short.clear();
        self.long.clear();
        self.base = self.names.len();
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
        let names = i.names();
        assert_eq!(names.len(), 5);
        assert_eq!(names[2], long);
        assert_eq!(names[4], "exactly_16_byte");
        i.clear();
        assert_eq!(i.id("x1"), 0);
        // The next function's names follow the first's in the module-wide list.
        assert_eq!((i.base(), i.names()), (5, &["x1"][..]));
        let all = i.all_names();
        assert_eq!((all.len(), all[5]), (6, "x1"));
    }

    #[test]
    fn numbered_names_have_one_id_each_wherever_they_are_kept() {
        let mut i = Interner::default();
        // Leading zeros, a bare number, a long prefix, a number too big for
        // a series: each is a name of its own, found again by its spelling.
        let names = [
            "v1",
            "v01",
            "v10",
            "1",
            "01",
            "0",
            "v0",
            "a_prefix_of_17_by1",
            "v4000000000",
            "v999999999",
            "w999999",
            "w1",
            "v2",
        ];
        for (k, n) in names.iter().enumerate() {
            assert_eq!(i.id(n), k as u32, "{n}");
        }
        for (k, n) in names.iter().enumerate().rev() {
            assert_eq!(i.id(n), k as u32, "{n}");
            assert_eq!(i.get(n), Some(k as u32), "{n}");
        }
        assert_eq!(i.names(), names);
        // Looking up interns nothing: unseen names (numbered, in a known
        // series or not, short, long) have no id, before and after.
        for n in ["v3", "v02", "u1", "x", "a_name_longer_than_sixteen_bytes"] {
            assert_eq!(i.get(n), None, "{n}");
        }
        assert_eq!(i.names().len(), names.len());
        i.clear();
        assert_eq!(i.id("v10"), 0);
        assert_eq!(i.id("v1"), 1);
        assert_eq!(i.id("w999999"), 2);
        assert_eq!(i.id("v10"), 0);
    }

    #[test]
    fn a_big_vector_grows_once_to_the_expected_length_and_a_small_one_as_usual() {
        let mut v: Vec<u32> = Vec::new();
        let mut copies = 0;
        for x in 0..3 * SIZED_FROM as u32 {
            let before = v.capacity();
            push_sized(&mut v, x, 3 * SIZED_FROM);
            copies += usize::from(v.capacity() != before);
            if v.len() <= SIZED_FROM {
                assert!(v.capacity() <= 2 * SIZED_FROM, "grew early");
            }
        }
        assert_eq!(v, (0..3 * SIZED_FROM as u32).collect::<Vec<_>>());
        // The doublings up to `SIZED_FROM`, then one step to the end.
        assert_eq!(v.capacity(), 3 * SIZED_FROM);
        assert!(copies <= SIZED_FROM.ilog2() as usize + 2, "{copies} copies");
        // Past the expected length it still grows (by at least one).
        push_sized(&mut v, 7, 3 * SIZED_FROM);
        assert_eq!((v.len(), v[3 * SIZED_FROM]), (3 * SIZED_FROM + 1, 7));
        // Names interned past `SIZED_FROM` keep their ids.
        let mut i = Interner::default();
        i.expect(2 * SIZED_FROM);
        let names: Vec<String> = (0..2 * SIZED_FROM).map(|k| format!("n{k}x")).collect();
        for (k, n) in names.iter().enumerate() {
            assert_eq!(i.id(n), k as u32);
        }
        assert_eq!(i.names().len(), names.len());
    }

    #[test]
    fn numbered_names_split_into_prefix_and_number() {
        assert_eq!(numbered("v12"), Some(("v", 12)));
        assert_eq!(numbered("12"), Some(("", 12)));
        assert_eq!(numbered("0"), Some(("", 0)));
        assert_eq!(numbered("v0"), Some(("v", 0)));
        assert_eq!(numbered("v012"), None);
        assert_eq!(numbered("v"), None);
        assert_eq!(numbered("v1234567890"), None);
        assert_eq!(numbered("a_prefix_of_17_by1"), None);
        assert_eq!(numbered("a_prefix_of_16_b1"), Some(("a_prefix_of_16_b", 1)));
    }
}
