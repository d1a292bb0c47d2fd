//! Deterministic randomness and hashing for the explorer.
//!
//! Everything the explorer chooses (workloads, completion order, surviving writes, torn
//! sectors, injected errors) comes from [`Rng`], a SplitMix64 generator: tiny, identical on
//! every platform, and seedable from a hash of the choice's coordinates so that any single
//! crash state can be regenerated without replaying the choices before it. [`Hasher64`]
//! (FNV-1a with a final mix) digests traces, trees and verdicts for determinism checks.

/// SplitMix64 (Steele, Lea, Flood 2014).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator for one coordinate of the exploration, e.g. `(seed, case, point)`.
    pub fn derive(parts: &[u64]) -> Rng {
        let mut h = Hasher64::new();
        for p in parts {
            h.u64(*p);
        }
        Rng(h.finish())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by rejection so that it has no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let v = self.next_u64();
            if v < zone {
                return v % n;
            }
        }
    }

    /// True with probability `num/den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// FNV-1a over bytes with a SplitMix finaliser (for better low bits).
#[derive(Debug, Clone)]
pub struct Hasher64(u64);

impl Default for Hasher64 {
    fn default() -> Self {
        Hasher64::new()
    }
}

impl Hasher64 {
    pub fn new() -> Hasher64 {
        Hasher64(0xcbf2_9ce4_8422_2325)
    }
    pub fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= x as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    pub fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Hash of one 4 KiB block, for trace digests (cheaper than hashing bytes one by one).
pub fn block_hash(b: &[u8]) -> u64 {
    let mut h: u64 = 0x243F_6A88_85A3_08D3;
    for chunk in b.chunks_exact(8) {
        let v = u64::from_le_bytes(chunk.try_into().unwrap());
        h = (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // First outputs of SplitMix64 seeded with 0 (reference implementation).
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn below_is_in_range() {
        let mut r = Rng::new(7);
        for n in 1..100 {
            assert!(r.below(n) < n);
        }
    }
}
