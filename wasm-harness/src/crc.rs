//! CRC-32C for the guest's checksums (`rollfs_host.crc32c_append`, ABI.md): the `crc32c`
//! crate's result, computed by carry-less multiplication on 512-bit registers where the CPU
//! has them (VPCLMULQDQ). The guest checksums every block it reads or writes (nodes, dentry
//! blocks, metadata) through this call: with the crate's SSE 4.2 path (8 bytes a cycle) it
//! was 7 % of an exploration's time; folding 64 bytes per multiply pair is about four
//! times faster on a 4 KiB block. Elsewhere, and for short buffers, the crate computes it.
//!
//! Folding (reflected CRC, bit k of the stream the coefficient of x^(N-1-k)): a 128-bit
//! chunk with low half L and high half H, moved D bits further along the message, becomes
//! L·x^(D+64) + H·x^D (mod P), which is `clmul(L, x^(D+63) mod P) ^ clmul(H, x^(D-1) mod
//! P)` with each constant bit-reflected into a 64-bit word (`clmul` of reflected operands
//! multiplies by one more x). The folded 128 bits followed by the rest of the message have
//! the message's CRC, which the CRC32 instruction then finishes.

/// CRC-32C of `data` continuing from `crc` (as `crc32c::crc32c_append`).
pub fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if data.len() >= FOLD_MIN_BYTES && x86::available() {
            // SAFETY: the CPU has every feature `fold` is compiled for (checked above).
            return unsafe { x86::fold(crc, data) };
        }
    }
    crc32c::crc32c_append(crc, data)
}

/// Buffers shorter than this go to the crate (the fold needs two 64-byte blocks).
const FOLD_MIN_BYTES: usize = 256;

/// x^e mod P (P the CRC-32C polynomial 0x1EDC6F41), bit-reflected into a 64-bit word
/// (the coefficient of x^m at bit 63 - m), as the fold multiplies.
const fn xpow_mod_reflected(e: u32) -> u64 {
    const P: u64 = 0x1_1EDC_6F41;
    let mut r: u64 = 1;
    let mut i = 0;
    while i < e {
        r <<= 1;
        if r & (1 << 32) != 0 {
            r ^= P;
        }
        i += 1;
    }
    let mut out = 0u64;
    let mut m = 0;
    while m < 32 {
        if r & (1 << m) != 0 {
            out |= 1 << (63 - m);
        }
        m += 1;
    }
    out
}

/// (low, high) multipliers that move a 128-bit chunk `d` bits along.
const fn fold_keys(d: u32) -> (u64, u64) {
    (xpow_mod_reflected(d + 63), xpow_mod_reflected(d - 1))
}

/// Four 128-bit lanes folded over four lanes (512 bits), and one lane over the next.
const KEYS_512: (u64, u64) = fold_keys(512);
const KEYS_128: (u64, u64) = fold_keys(128);

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{KEYS_128, KEYS_512};
    use std::arch::x86_64::*;

    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("vpclmulqdq")
            && std::is_x86_feature_detected!("pclmulqdq")
            && std::is_x86_feature_detected!("sse4.2")
    }

    /// One 128-bit lane moved 128 bits along and added to `next`.
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse2")]
    fn fold_128(acc: __m128i, next: __m128i, keys: __m128i) -> __m128i {
        let lo = _mm_clmulepi64_si128(acc, keys, 0x00);
        let hi = _mm_clmulepi64_si128(acc, keys, 0x11);
        _mm_xor_si128(_mm_xor_si128(lo, hi), next)
    }

    /// CRC-32C of `data` (at least 128 bytes) continuing from `crc`.
    ///
    /// # Safety
    /// The CPU must have AVX-512F, VPCLMULQDQ, PCLMULQDQ and SSE 4.2 ([`available`]).
    #[target_feature(enable = "avx512f,vpclmulqdq,pclmulqdq,sse4.1,sse4.2")]
    pub unsafe fn fold(crc: u32, data: &[u8]) -> u32 {
        debug_assert!(data.len() >= 128);
        let (blocks, tail) = data.split_at(data.len() / 64 * 64);
        // SAFETY (every use): `i + 64 <= blocks.len()`; an unaligned load.
        macro_rules! load {
            ($i:expr) => {
                unsafe { _mm512_loadu_si512(blocks.as_ptr().add($i) as *const __m512i) }
            };
        }
        // The register's starting value enters as the first four bytes (xored), inverted as
        // the crate's CRC is.
        let mut acc = _mm512_xor_si512(load!(0), _mm512_castsi128_si512(_mm_cvtsi32_si128(!crc as i32)));
        let k512 = _mm512_set_epi64(
            KEYS_512.1 as i64,
            KEYS_512.0 as i64,
            KEYS_512.1 as i64,
            KEYS_512.0 as i64,
            KEYS_512.1 as i64,
            KEYS_512.0 as i64,
            KEYS_512.1 as i64,
            KEYS_512.0 as i64,
        );
        let mut i = 64;
        while i < blocks.len() {
            let lo = _mm512_clmulepi64_epi128(acc, k512, 0x00);
            let hi = _mm512_clmulepi64_epi128(acc, k512, 0x11);
            // lo ^ hi ^ next in one instruction (truth table 0x96: three-way xor).
            acc = _mm512_ternarylogic_epi64(lo, hi, load!(i), 0x96);
            i += 64;
        }
        // The four lanes into one, earliest first.
        let k128 = _mm_set_epi64x(KEYS_128.1 as i64, KEYS_128.0 as i64);
        let mut x = _mm512_extracti32x4_epi32(acc, 0);
        x = fold_128(x, _mm512_extracti32x4_epi32(acc, 1), k128);
        x = fold_128(x, _mm512_extracti32x4_epi32(acc, 2), k128);
        x = fold_128(x, _mm512_extracti32x4_epi32(acc, 3), k128);
        // Whole 16-byte chunks of the tail folded in the same way.
        let mut chunks = tail.chunks_exact(16);
        for c in &mut chunks {
            // SAFETY: `c` is 16 bytes; an unaligned load.
            let next = unsafe { _mm_loadu_si128(c.as_ptr() as *const __m128i) };
            x = fold_128(x, next, k128);
        }
        // The folded 128 bits, then the last bytes, through the CRC32 instruction (from
        // zero: the starting value is already in).
        let mut r = _mm_crc32_u64(0, _mm_cvtsi128_si64(x) as u64);
        r = _mm_crc32_u64(r, _mm_extract_epi64(x, 1) as u64);
        let mut r = r as u32;
        for &b in chunks.remainder() {
            r = _mm_crc32_u8(r, b);
        }
        !r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The fold gives the crate's CRC for every length around its blocks' edges, every
    /// alignment and starting value (where the CPU folds; elsewhere both are the crate).
    #[test]
    fn fold_matches_the_crate() {
        let mut rng = Rng::derive(&[0xC2C]);
        let data: Vec<u8> = (0..9000).map(|_| rng.next_u64() as u8).collect();
        let mut lens: Vec<usize> = (0..700).collect();
        lens.extend([4092, 4096, 4100, 8191, 8192, 8900]);
        for len in lens {
            for start in [0usize, 1, 7, 13] {
                let init = rng.next_u64() as u32;
                let d = &data[start..start + len];
                assert_eq!(crc32c_append(init, d), crc32c::crc32c_append(init, d), "len {len} at {start}");
            }
        }
    }

    #[test]
    fn keys_are_powers_of_x() {
        // x^31 mod P is x^31 itself (degree below 32): bit 63 - 31 = 32.
        assert_eq!(xpow_mod_reflected(31), 1 << 32);
        assert_eq!(xpow_mod_reflected(0), 1 << 63);
    }
}
