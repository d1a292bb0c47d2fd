//! Deterministic randomness and hashing for the explorer.
//!
//! Everything the explorer chooses (workloads, completion order, surviving writes, torn
//! sectors, injected errors) comes from [`Rng`], a SplitMix64 generator: tiny, identical on
//! every platform, and seedable from a hash of the choice's coordinates so that any single
//! crash state can be regenerated without replaying the choices before it. [`Hasher64`]
//! (FNV-1a with a final mix) derives those seeds and digests trees and verdicts;
//! [`WordHasher`] (one multiply a word) digests device traces and images, and
//! [`block_hash`] a block's bytes.

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

/// One multiply-rotate step of the word hashes below.
#[inline(always)]
fn mix_word(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
}

/// The SplitMix64 finaliser.
#[inline(always)]
fn finish_mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hash of a block's bytes (every byte counts, and the length), for trace digests and
/// content hashes. Four independent lanes of 8-byte words: one chain of dependent
/// multiplies took ~1 us per 4 KiB block, a few percent of an exploration.
pub fn block_hash(b: &[u8]) -> u64 {
    let mut lanes: [u64; 4] =
        [0x243F_6A88_85A3_08D3, 0x1319_8A2E_0370_7344, 0xA409_3822_299F_31D0, 0x082E_FA98_EC4E_6C89];
    let mut chunks = b.chunks_exact(32);
    for c in &mut chunks {
        for (k, lane) in lanes.iter_mut().enumerate() {
            let v = u64::from_le_bytes(c[8 * k..8 * k + 8].try_into().unwrap());
            *lane = mix_word(*lane, v);
        }
    }
    let rest = chunks.remainder();
    let mut h = mix_word(b.len() as u64, lanes[0]);
    for lane in &lanes[1..] {
        h = mix_word(h, *lane);
    }
    for c in rest.chunks(8) {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        h = mix_word(h, u64::from_le_bytes(w));
    }
    finish_mix(h)
}

/// A digest of a sequence of words, one multiply per word ([`Hasher64`] is byte-wise
/// FNV, eight multiplies a word): for device traces, where only whether two runs saw the
/// same events matters. Not for seeds ([`Rng::derive`] keeps [`Hasher64`]).
#[derive(Debug, Clone)]
pub struct WordHasher(u64);

impl Default for WordHasher {
    fn default() -> Self {
        WordHasher::new()
    }
}

impl WordHasher {
    pub fn new() -> WordHasher {
        WordHasher(0x6A09_E667_F3BC_C908)
    }
    pub fn u64(&mut self, v: u64) {
        self.0 = mix_word(self.0, v);
    }
    pub fn finish(&self) -> u64 {
        finish_mix(self.0)
    }
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

    #[test]
    fn block_hash_sees_every_byte_and_the_length() {
        let base = vec![7u8; 4096];
        let h = block_hash(&base);
        for at in [0, 1, 8, 31, 32, 33, 4000, 4095] {
            let mut b = base.clone();
            b[at] ^= 1;
            assert_ne!(block_hash(&b), h, "a flipped byte {at}");
        }
        assert_ne!(block_hash(&base[..4095]), h);
        assert_ne!(block_hash(&[0u8; 3]), block_hash(&[0u8; 4]), "zero tails of different lengths");
        let mut w = WordHasher::new();
        w.u64(1);
        w.u64(2);
        let mut v = WordHasher::new();
        v.u64(2);
        v.u64(1);
        assert_ne!(w.finish(), v.finish(), "word order counts");
    }
}
