//! The deterministic hash the environment uses (no dependence on addresses or
//! on the process: the same inputs give the same bits on every machine).

/// The starting value of every hash chain.
pub const SEED: u64 = 0x6c6f_6164_7374_6172; // "loadstar"

/// The splitmix64 finaliser: a bijective avalanche of one word.
#[inline]
pub fn finalize(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fold `x` into the hash state `h`.
#[inline]
pub fn mix(h: u64, x: u64) -> u64 {
    finalize(h.rotate_left(23) ^ x.wrapping_add(0x9e37_79b9_7f4a_7c15))
}

/// The hash of a name (FNV-1a, then finalised).
pub fn hash_name(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    finalize(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixing_is_order_sensitive() {
        assert_ne!(mix(mix(SEED, 1), 2), mix(mix(SEED, 2), 1));
        assert_ne!(hash_name("a"), hash_name("b"));
        assert_eq!(mix(SEED, 5), mix(SEED, 5));
    }
}
