//! Reading the generator's decisions from fuzzer bytes.
//!
//! Every decision reads whole bytes in a fixed order, and when the bytes run
//! out every decision answers 0 — the simplest option (stop, first candidate,
//! smallest constant). So a short or truncated input always yields a small,
//! well-formed program, and shrinking the bytes shrinks the program.
//!
//! The bytes come from fuzzer input ([`Choices::new`]) or, for a seeded
//! program, straight from the seed's random stream ([`Choices::seeded`]): the
//! same bytes [`super::seed_bytes`] would fill in, made only as far as the
//! generator reads them (it reads about a tenth).

use super::rng::Rng;
use arbitrary::Unstructured;

/// The decision source of the generator.
pub struct Choices<'a, 'b> {
    src: Source<'a, 'b>,
}

/// Where the bytes come from.
enum Source<'a, 'b> {
    /// Fuzzer input, consumed as it is read.
    Input(&'b mut Unstructured<'a>),
    /// The first `left` bytes still unread of a random stream.
    Stream(Stream),
}

/// The bytes `Rng::fill` writes, one at a time: each 64-bit word of the
/// stream in little-endian order, `left` bytes in all.
struct Stream {
    rng: Rng,
    word: u64,
    in_word: u32,
    left: usize,
}

impl<'a, 'b> Choices<'a, 'b> {
    /// Decisions read from `u`.
    pub fn new(u: &'b mut Unstructured<'a>) -> Self {
        Choices {
            src: Source::Input(u),
        }
    }

    /// Decisions read from the first `len` bytes `Rng::new(seed).fill` makes:
    /// the same decisions as [`Choices::new`] on those bytes.
    pub fn seeded(seed: u64, len: usize) -> Choices<'static, 'static> {
        Choices {
            src: Source::Stream(Stream {
                rng: Rng::new(seed),
                word: 0,
                in_word: 0,
                left: len,
            }),
        }
    }

    /// The next byte, 0 once the input is exhausted.
    #[inline]
    pub fn byte(&mut self) -> u8 {
        match &mut self.src {
            Source::Input(u) => u.bytes(1).map(|b| b[0]).unwrap_or(0),
            Source::Stream(s) => s.byte(),
        }
    }

    /// A number in `0..n` (0 when `n <= 1` or the input is exhausted).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        if n <= 256 {
            self.byte() as usize % n
        } else {
            let hi = self.byte() as usize;
            let lo = self.byte() as usize;
            ((hi << 8) | lo) % n
        }
    }

    /// True with probability about `num / 256`; false once the input is exhausted.
    #[inline]
    pub fn chance(&mut self, num: u8) -> bool {
        let b = self.byte();
        b != 0 && b <= num
    }

    /// Continue a sequence: true unless the byte is 0 (so exhausted input stops).
    pub fn more(&mut self) -> bool {
        self.byte() != 0
    }

    /// An index chosen with the given weights; 0 once the input is exhausted.
    /// (Inlined: the weights are mostly constants, whose total then folds.)
    #[inline]
    pub fn weighted<const N: usize>(&mut self, weights: &[u32; N]) -> usize {
        let total: u32 = weights.iter().sum();
        if total == 0 {
            return 0;
        }
        let b = self.byte() as u32;
        if b == 0 {
            return 0;
        }
        let mut x = (b * 256 + self.byte() as u32) % total;
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        0
    }

    /// One element of a non-empty slice (the first when exhausted).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// A 64-bit seed from the next eight bytes (0 when exhausted).
    pub fn seed(&mut self) -> u64 {
        let mut s = 0u64;
        for _ in 0..8 {
            s = (s << 8) | self.byte() as u64;
        }
        s
    }
}

impl Stream {
    #[inline]
    fn byte(&mut self) -> u8 {
        if self.left == 0 {
            return 0;
        }
        self.left -= 1;
        if self.in_word == 0 {
            self.word = self.rng.next_u64();
            self.in_word = 8;
        }
        self.in_word -= 1;
        let b = self.word as u8;
        self.word >>= 8;
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhausted_input_answers_zero() {
        let mut u = Unstructured::new(&[]);
        let mut c = Choices::new(&mut u);
        assert_eq!(c.below(10), 0);
        assert!(!c.chance(255));
        assert!(!c.more());
        assert_eq!(c.weighted(&[1, 5, 9]), 0);
        assert_eq!(c.seed(), 0);
    }

    #[test]
    fn a_seeded_stream_reads_the_bytes_rng_fill_makes_and_then_zeros() {
        for (seed, len) in [(0, 0), (1, 3), (7, 8), (42, 29), (u64::MAX, 64)] {
            let mut bytes = vec![0u8; len];
            Rng::new(seed).fill(&mut bytes);
            let mut c = Choices::seeded(seed, len);
            let read: Vec<u8> = (0..len + 9).map(|_| c.byte()).collect();
            assert_eq!(&read[..len], &bytes[..], "seed {seed}");
            assert!(read[len..].iter().all(|&b| b == 0), "seed {seed}");
        }
    }

    #[test]
    fn weighted_respects_zero_weights() {
        let data: Vec<u8> = (1..=255).collect();
        let mut u = Unstructured::new(&data);
        let mut c = Choices::new(&mut u);
        for _ in 0..100 {
            assert_ne!(c.weighted(&[3, 0, 4]), 1);
        }
    }
}
