//! Hashed dentry blocks: how a directory's entries are stored and found.
//!
//! This module owns the dentry block format (encoding, validation), the name hash, the
//! geometry of the multi-level hash table and the directory operations built on them
//! (lookup, insert, remove, retarget, ordered iteration, emptiness). It does no I/O of its
//! own: the filesystem hands in a [`DirBlocks`] that maps a directory's block index to its
//! data blocks.
//!
//! CONTRACT (implemented by the directory module; the rest of the core relies on it):
//!
//! A directory's entries live in *dentry blocks*, which are the data blocks of the
//! directory inode (file block index `idx`), reached through [`DirBlocks`]. Unused indexes
//! are holes. Lookup is not a linear scan: entries are placed in a multi-level hash table
//! as in f2fs. Level `l` (0-based) has `buckets(l)` buckets of `BLOCKS_PER_BUCKET(l)`
//! blocks; a name with hash `h` can only live in bucket `h % buckets(l)` of each level, so
//! lookup reads at most `depth × blocks_per_bucket` blocks. `depth` (levels in use) is kept
//! in the directory inode by the caller and only grows.
//!
//! "." and ".." are not stored; the caller synthesises them (readdir cookies 1 and 2).
//! A stored entry's cookie is `3 + ` a keyed permutation ([`Cookies`]) of its *position*
//! `block_idx * SLOTS_PER_BLOCK + slot`: stable while the entry exists, so readdir can
//! resume after any entry, and meaningless without the directory's key, so a listing does
//! not tell its reader which level and bucket each name hashed to.
//!
//! Names are hashed with a key of their directory ([`DirBlocks::hash_key`]): on images
//! with [`crate::superblock::FEATURE_INCOMPAT_DIR_V2`], one derived from the superblock's
//! secret `hash_seed` and the directory's inode number and generation
//! ([`dir_hash_key`]), so what a user learns about the hash in one directory says nothing
//! about another; on older images the `hash_seed` itself.
//!
//! Every dentry block read is validated (magic, CRC, bitmap/name-length consistency) and a
//! bad one is `Error::Corrupt { block: <idx given by DirBlocks::addr_of or idx>, reason }`.
//!
//! # Table geometry
//!
//! * `buckets(l) = 2^min(l, MAX_BUCKET_LOG2)`: doubling per level keeps small directories
//!   small (a one-entry directory is one block), the cap keeps the deepest levels from
//!   exploding the file size.
//! * `blocks_per_bucket(l)` is [`BLOCKS_PER_BUCKET_LOW`] below [`HIGH_LEVEL`] and
//!   [`BLOCKS_PER_BUCKET_HIGH`] from it on (as f2fs does at half its maximum depth): once
//!   the bucket count stops growing, deeper levels still add capacity per bucket, which
//!   bounds how many levels many names sharing a bucket can consume.
//! * With [`MAX_DEPTH`] = 64 the largest block index is `max_block_index(64) - 1 = 696_317`
//!   (below 2^20, far below 2^32), for a capacity of about 140 million name slots; a
//!   1,000,000-entry directory of short names needs about 14 levels.
//! * Inserts fill levels from 0, so lower levels are (nearly) full and about half of a large
//!   directory's entries sit in its deepest level; lookups therefore search deepest first.
//!
//! # Block format
//!
//! See `docs/FORMAT.md`, section "Dentry block" (the constants below are named after it).
//! Slots of a long name are consecutive and lie within one block; the first slot's record
//! is the entry, the following ones ("continuations") are marked used in the bitmap and
//! their records are all zero. Every unused slot has a zero record and zero name bytes, so
//! an image is canonical and a stray byte is detected.

use crate::codec::{self, CRC_OFFSET};
use crate::error::{Error, Result};
use crate::layout::{BLOCK_SIZE, NAME_MAX};
use crate::node::FileType;
use crate::{Block, Ino};
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem::{offset_of, size_of};
use zerocopy::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

// ---------------------------------------------------------------------------------------
// Block format constants
// ---------------------------------------------------------------------------------------

/// "DENT" read as a little-endian u32.
pub const DENTRY_MAGIC: u32 = 0x544E_4544;

/// A dentry block as it is on disk. FORMAT.md, section "Dentry block".
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawDentryBlock {
    pub magic: U32,
    /// The block's own index in the directory: a block written at the wrong index (or read
    /// through a stale mapping) is detected instead of being mistaken for another bucket.
    pub idx: U32,
    /// Overflow distance: in the first block of a bucket of the deepest level, how many of
    /// the following buckets of that level may hold names of this bucket (directories of
    /// [`crate::superblock::FEATURE_INCOMPAT_DIR_V2`] images only); zero everywhere else.
    pub overflow: U32,
    /// Used slots (entries and their continuation slots).
    pub count: U16,
    pub reserved1: U16,
    pub bitmap: [u8; BITMAP_SIZE],
    pub records: [DentryRecord; SLOTS_PER_BLOCK],
    pub names: [[u8; SLOT_NAME_LEN]; SLOTS_PER_BLOCK],
    pub tail: U32,
    pub crc: U32,
}

/// One slot's record: the entry for the first slot of a name, all zero otherwise.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy)]
#[repr(C)]
pub struct DentryRecord {
    pub hash: U32,
    pub ino: U32,
    pub name_len: U16,
    pub file_type: u8,
    pub reserved: u8,
}

pub const HDR_MAGIC_OFFSET: usize = offset_of!(RawDentryBlock, magic);
pub const HDR_IDX_OFFSET: usize = offset_of!(RawDentryBlock, idx);
pub const HDR_OVERFLOW_OFFSET: usize = offset_of!(RawDentryBlock, overflow);
pub const HDR_COUNT_OFFSET: usize = offset_of!(RawDentryBlock, count);
pub const HDR_RESERVED1_OFFSET: usize = offset_of!(RawDentryBlock, reserved1);
pub const HEADER_SIZE: usize = 16;

/// Bytes of a dentry record: hash u32, ino u32, name_len u16, file_type u8, reserved u8.
pub const RECORD_SIZE: usize = 12;
pub const REC_HASH: usize = offset_of!(DentryRecord, hash);
pub const REC_INO: usize = offset_of!(DentryRecord, ino);
pub const REC_NAME_LEN: usize = offset_of!(DentryRecord, name_len);
pub const REC_TYPE: usize = offset_of!(DentryRecord, file_type);
pub const REC_RESERVED: usize = offset_of!(DentryRecord, reserved);

// The layout FORMAT.md states (format 1.0), checked at compile time.
const _: () = {
    assert!(size_of::<RawDentryBlock>() == BLOCK_SIZE);
    assert!(size_of::<DentryRecord>() == RECORD_SIZE);
    assert!(HDR_MAGIC_OFFSET == 0);
    assert!(HDR_IDX_OFFSET == 4);
    assert!(HDR_OVERFLOW_OFFSET == 8);
    assert!(HDR_COUNT_OFFSET == 12);
    assert!(HDR_RESERVED1_OFFSET == 14);
    assert!(offset_of!(RawDentryBlock, bitmap) == HEADER_SIZE);
    assert!(REC_HASH == 0);
    assert!(REC_INO == 4);
    assert!(REC_NAME_LEN == 8);
    assert!(REC_TYPE == 10);
    assert!(REC_RESERVED == 11);
    assert!(BITMAP_OFFSET == 16);
    assert!(RECORDS_OFFSET == 48);
    assert!(NAMES_OFFSET == 2472);
    assert!(TAIL_OFFSET == 4088);
    assert!(offset_of!(RawDentryBlock, crc) == CRC_OFFSET);
};

/// Name bytes per slot; a name of `n` bytes takes `ceil(n / 8)` consecutive slots.
pub const SLOT_NAME_LEN: usize = 8;

/// Bitmap bytes for `slots` slots, padded to 8 bytes so the records start aligned.
const fn bitmap_size(slots: usize) -> usize {
    slots.div_ceil(8).div_ceil(8) * 8
}

/// Bytes used by header, bitmap, records, names and CRC for `slots` slots.
const fn block_bytes_for(slots: usize) -> usize {
    HEADER_SIZE + bitmap_size(slots) + slots * (RECORD_SIZE + SLOT_NAME_LEN) + 4
}

/// Largest slot count whose block fits in 4096 bytes.
const fn max_slots() -> usize {
    let mut s = 0;
    while block_bytes_for(s + 1) <= BLOCK_SIZE {
        s += 1;
    }
    s
}

/// Slots (records + name slots) per dentry block: 202.
pub const SLOTS_PER_BLOCK: usize = max_slots();
/// Bitmap of slot usage: bit `s` is bit `s % 8` (LSB first) of byte `s / 8`. 32 bytes.
pub const BITMAP_OFFSET: usize = offset_of!(RawDentryBlock, bitmap);
pub const BITMAP_SIZE: usize = bitmap_size(SLOTS_PER_BLOCK);
/// Records, one per slot: offset 48.
pub const RECORDS_OFFSET: usize = offset_of!(RawDentryBlock, records);
/// Name slots, 8 bytes per slot: offset 2472.
pub const NAMES_OFFSET: usize = offset_of!(RawDentryBlock, names);
/// Unused u32 between the names and the CRC (4088..4092), always zero.
pub const TAIL_OFFSET: usize = offset_of!(RawDentryBlock, tail);

const _: () = assert!(TAIL_OFFSET + 4 == CRC_OFFSET);
const _: () = assert!(SLOTS_PER_BLOCK <= u16::MAX as usize);
// The longest name must fit in one block.
const _: () = assert!(NAME_MAX.div_ceil(SLOT_NAME_LEN) <= SLOTS_PER_BLOCK);

// ---------------------------------------------------------------------------------------
// Table geometry
// ---------------------------------------------------------------------------------------

/// Most levels a directory can have.
pub const MAX_DEPTH: u32 = 64;
/// Buckets per level stop doubling at 2^12 = 4096 (reached at level 12).
pub const MAX_BUCKET_LOG2: u32 = 12;
/// Blocks per bucket for levels below [`HIGH_LEVEL`].
pub const BLOCKS_PER_BUCKET_LOW: u32 = 2;
/// Blocks per bucket for levels [`HIGH_LEVEL`] and above.
pub const BLOCKS_PER_BUCKET_HIGH: u32 = 4;
/// First level with [`BLOCKS_PER_BUCKET_HIGH`] blocks per bucket (half of [`MAX_DEPTH`]).
pub const HIGH_LEVEL: u32 = MAX_DEPTH / 2;
/// First cookie of a stored entry; 1 and 2 are "." and "..".
pub const FIRST_COOKIE: u64 = 3;

/// Buckets in level `level`.
pub const fn buckets(level: u32) -> u64 {
    let log2 = if level < MAX_BUCKET_LOG2 { level } else { MAX_BUCKET_LOG2 };
    1u64 << log2
}

/// Blocks per bucket in level `level`.
pub const fn blocks_per_bucket(level: u32) -> u64 {
    if level < HIGH_LEVEL {
        BLOCKS_PER_BUCKET_LOW as u64
    } else {
        BLOCKS_PER_BUCKET_HIGH as u64
    }
}

/// `LEVEL_START[l]`: first block index of level `l`; `LEVEL_START[MAX_DEPTH]` is the end.
const LEVEL_START: [u64; MAX_DEPTH as usize + 1] = {
    let mut t = [0u64; MAX_DEPTH as usize + 1];
    let mut l = 0;
    while l < MAX_DEPTH as usize {
        t[l + 1] = t[l] + buckets(l as u32) * blocks_per_bucket(l as u32);
        l += 1;
    }
    t
};

const _: () = assert!(LEVEL_START[MAX_DEPTH as usize] < (1u64 << 32));

/// Exclusive end of the block indexes a directory of `depth` levels can use
/// (`depth` is clamped to [`MAX_DEPTH`]).
pub fn max_block_index(depth: u32) -> u64 {
    LEVEL_START[depth.min(MAX_DEPTH) as usize]
}

/// First block index of the bucket that names with hash `hash` use in level `level`
/// (`level < MAX_DEPTH`).
/// One past the highest block index an insert into a directory of depth `depth` can write
/// (inserts land at the first level with room, at most level `depth`).
pub fn insert_blocks_end(depth: u32) -> u64 {
    LEVEL_START[(depth as usize + 1).min(MAX_DEPTH as usize)]
}

pub fn bucket_start(level: u32, hash: u32) -> u64 {
    let level = level.min(MAX_DEPTH - 1);
    let bucket = hash as u64 % buckets(level);
    LEVEL_START[level as usize] + bucket * blocks_per_bucket(level)
}

/// Level and bucket of block index `idx`, or `None` beyond the deepest level.
pub fn block_position(idx: u64) -> Option<(u32, u64)> {
    let mut level = 0;
    while level < MAX_DEPTH {
        let end = LEVEL_START[level as usize + 1];
        if idx < end {
            let bucket = (idx - LEVEL_START[level as usize]) / blocks_per_bucket(level);
            return Some((level, bucket));
        }
        level += 1;
    }
    None
}

/// The deepest level, the only one whose full buckets overflow (into the following
/// buckets of the same level) on [`crate::superblock::FEATURE_INCOMPAT_DIR_V2`] images.
pub const OVERFLOW_LEVEL: u32 = MAX_DEPTH - 1;
/// Largest overflow distance: every other bucket of the deepest level.
pub const MAX_OVERFLOW: u32 = (buckets(OVERFLOW_LEVEL) - 1) as u32;

/// Position of the entry at `loc`: `block_idx × SLOTS_PER_BLOCK + slot`. Positions order a
/// listing; a cookie is a keyed permutation of one ([`Cookies`]).
pub fn position_of(loc: EntryLoc) -> u64 {
    loc.block_idx * SLOTS_PER_BLOCK as u64 + loc.slot as u64
}

/// Positions a directory can have: every slot of every level.
pub const POSITIONS: u64 = LEVEL_START[MAX_DEPTH as usize] * SLOTS_PER_BLOCK as u64;

/// First block index of bucket `bucket` of level `level` (`bucket < buckets(level)`).
fn bucket_first_block(level: u32, bucket: u64) -> u64 {
    LEVEL_START[level as usize] + bucket * blocks_per_bucket(level)
}

/// True for the first block of a bucket of the deepest level: the only blocks that may
/// carry an overflow distance.
pub fn holds_overflow_distance(idx: u64) -> bool {
    let start = LEVEL_START[OVERFLOW_LEVEL as usize];
    (start..LEVEL_START[MAX_DEPTH as usize]).contains(&idx)
        && (idx - start).is_multiple_of(blocks_per_bucket(OVERFLOW_LEVEL))
}

/// For an entry with hash `hash` in block `idx`: `Some(distance)` when the block lies in
/// the deepest level, in another bucket than the name's own, `distance` buckets after it
/// (wrapping around); `None` otherwise. Such an entry is where it belongs when the
/// overflow distance of its own bucket ([`DentryBlock::overflow`] of the block
/// [`overflow_home`] names) is at least `distance`.
pub fn overflow_distance(idx: u64, hash: u32) -> Option<u32> {
    let (level, bucket) = block_position(idx)?;
    let n = buckets(level);
    let home = hash as u64 % n;
    (level == OVERFLOW_LEVEL && bucket != home).then(|| ((bucket + n - home) % n) as u32)
}

/// Block index holding the overflow distance of the deepest-level bucket of names with
/// hash `hash`.
pub fn overflow_home(hash: u32) -> u64 {
    bucket_start(OVERFLOW_LEVEL, hash)
}

// ---------------------------------------------------------------------------------------
// Name hash
// ---------------------------------------------------------------------------------------

/// The 32-bit hash of a name: FNV-1a (offset basis 0x811C9DC5, prime 0x01000193) over the
/// name bytes, then the MurmurHash3 `fmix32` finalizer. FNV-1a alone mixes its low bits
/// poorly, and the bucket is chosen from the low bits (`hash % 2^k`), hence the finalizer.
/// Deterministic and seedless: the hash is part of the on-disk format.
pub fn name_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0x811C_9DC5;
    for &b in name {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^= h >> 16;
    h
}

/// Key of the directory name hash: the superblock's `hash_seed`, drawn at random by mkfs.
/// All zero (images made before the seed existed): the unkeyed [`name_hash`].
pub type HashKey = [u8; 16];

/// The unkeyed hash's key.
pub const NO_HASH_KEY: HashKey = [0; 16];

/// The hash a directory of a filesystem with hash key `key` places `name` by: SipHash-2-4
/// keyed with `key` (k0 = bytes 0..8, k1 = bytes 8..16, little-endian), folded to 32 bits
/// (`low ^ high`); [`name_hash`] when `key` is all zero.
///
/// Why keyed: with a public hash anyone can compute, offline, thousands of names that all
/// fall in the bucket of a name someone else will need (`pub/victim.lock`) and fill that
/// bucket in every level of a shared directory, so that the victim's create fails. With a
/// secret per-filesystem key (SipHash is a PRF) that takes filling the directory instead.
pub fn name_hash_keyed(key: &HashKey, name: &[u8]) -> u32 {
    if *key == NO_HASH_KEY {
        return name_hash(name);
    }
    let h = siphash24(key, name);
    (h ^ (h >> 32)) as u32
}

/// SipHash-2-4 (Aumasson and Bernstein, 2012).
pub fn siphash24(key: &HashKey, m: &[u8]) -> u64 {
    let mut v = SipKey::new(key).0;
    let round = sip_round;
    let compress = |v: &mut [u64; 4], w: u64| {
        v[3] ^= w;
        round(v);
        round(v);
        v[0] ^= w;
    };
    let mut chunks = m.chunks_exact(8);
    for c in &mut chunks {
        compress(&mut v, u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
    }
    let mut last = [0u8; 8];
    let rest = chunks.remainder();
    last[..rest.len()].copy_from_slice(rest);
    last[7] = m.len() as u8;
    compress(&mut v, u64::from_le_bytes(last));
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// SipHash-2-4 state after the key is loaded, for hashing many short messages with one key.
#[derive(Clone, Copy)]
struct SipKey([u64; 4]);

impl SipKey {
    fn new(key: &HashKey) -> SipKey {
        let k0 = u64::from_le_bytes([key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7]]);
        let k1 = u64::from_le_bytes([key[8], key[9], key[10], key[11], key[12], key[13], key[14], key[15]]);
        SipKey([
            k0 ^ 0x736f_6d65_7073_6575,
            k1 ^ 0x646f_7261_6e64_6f6d,
            k0 ^ 0x6c79_6765_6e65_7261,
            k1 ^ 0x7465_6462_7974_6573,
        ])
    }

    /// `siphash24(key, m)` for a message of at most 7 bytes, given as its final word (the
    /// bytes little-endian, the length in the top byte).
    #[inline(always)]
    fn hash_last_word(&self, w: u64) -> u64 {
        let mut v = self.0;
        v[3] ^= w;
        sip_round(&mut v);
        sip_round(&mut v);
        v[0] ^= w;
        v[2] ^= 0xff;
        for _ in 0..4 {
            sip_round(&mut v);
        }
        v[0] ^ v[1] ^ v[2] ^ v[3]
    }
}

#[inline(always)]
fn sip_round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17) ^ v[2];
    v[2] = v[2].rotate_left(32);
}

/// One 64-bit word derived from the filesystem's `hash_seed` for directory `ino` of
/// generation `generation`: SipHash-2-4 keyed by the seed of the 10 bytes
/// `00 ‖ kind ‖ le32(ino) ‖ le32(generation)`. The leading zero byte keeps these messages
/// apart from names, which never contain NUL (on images without per-directory keys the
/// seed also hashes names directly).
fn derive_word(seed: &HashKey, kind: u8, ino: Ino, generation: u32) -> u64 {
    let mut m = [0u8; 10];
    m[1] = kind;
    m[2..6].copy_from_slice(&ino.to_le_bytes());
    m[6..10].copy_from_slice(&generation.to_le_bytes());
    siphash24(seed, &m)
}

fn derive_key(seed: &HashKey, kinds: [u8; 2], ino: Ino, generation: u32) -> HashKey {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&derive_word(seed, kinds[0], ino, generation).to_le_bytes());
    k[8..].copy_from_slice(&derive_word(seed, kinds[1], ino, generation).to_le_bytes());
    k
}

/// The name hash key of directory `ino` (generation `generation`) on an image with
/// per-directory keys ([`crate::superblock::FEATURE_INCOMPAT_DIR_V2`]): bytes 0..8 are
/// `derive(1)`, bytes 8..16 `derive(2)`, little-endian (see [`derive_word`]). A reused
/// inode number has another generation, hence another key.
pub fn dir_hash_key(seed: &HashKey, ino: Ino, generation: u32) -> HashKey {
    derive_key(seed, [1, 2], ino, generation)
}

/// The key of directory `ino`'s readdir cookie permutation ([`Cookies`]), on every image:
/// `derive(3)`, `derive(4)` as for [`dir_hash_key`]. Cookies are not stored, so this
/// needs no feature bit.
pub fn dir_cookie_key(seed: &HashKey, ino: Ino, generation: u32) -> HashKey {
    derive_key(seed, [3, 4], ino, generation)
}

/// Bits of the cookie permutation's domain: cookies are `3 + c` with `c < 2^62`, so below
/// 2^63 (a positive `off_t`). Positions use 28 of these bits ([`POSITIONS`]).
pub const COOKIE_BITS: u32 = 62;
/// Feistel rounds of the cookie permutation.
pub const COOKIE_ROUNDS: u8 = 4;
const COOKIE_HALF: u32 = COOKIE_BITS / 2;
const COOKIE_HALF_MASK: u64 = (1 << COOKIE_HALF) - 1;

/// Where a listing resumes, from the cookie it was given ([`Cookies::resume`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// From the first entry (cookies 0, 1 and 2: nothing or only "." and ".." listed).
    Start,
    /// After the entry at this position (which may have been removed since).
    After(u64),
    /// Nothing more: a cookie no listing of this directory handed out.
    End,
}

/// The readdir cookies of one directory: `3 + E(position)`, where `E` is a balanced
/// Feistel network over [`COOKIE_BITS`] bits, [`COOKIE_ROUNDS`] rounds, with round function
/// `F_i(x) = SipHash-2-4(key, [i] ‖ le32(x)) mod 2^31` and the directory's cookie key
/// ([`dir_cookie_key`]). A cookie reveals nothing about the entry's position (its level
/// and bucket, hence its hash) to whoever lacks the key; the directory inverts it to
/// resume a listing.
pub struct Cookies(SipKey);

impl Cookies {
    pub fn new(key: &HashKey) -> Cookies {
        Cookies(SipKey::new(key))
    }

    #[inline(always)]
    fn round(&self, i: u8, x: u64) -> u64 {
        // The 5-byte message [i, x0, x1, x2, x3] as SipHash's final word.
        self.0.hash_last_word(i as u64 | x << 8 | 5 << 56) & COOKIE_HALF_MASK
    }

    /// The permutation `E` (of `0 .. 2^62`).
    fn encrypt(&self, p: u64) -> u64 {
        let (mut l, mut r) = (p >> COOKIE_HALF & COOKIE_HALF_MASK, p & COOKIE_HALF_MASK);
        for i in 0..COOKIE_ROUNDS {
            (l, r) = (r, l ^ self.round(i, r));
        }
        l << COOKIE_HALF | r
    }

    fn decrypt(&self, c: u64) -> u64 {
        let (mut l, mut r) = (c >> COOKIE_HALF & COOKIE_HALF_MASK, c & COOKIE_HALF_MASK);
        for i in (0..COOKIE_ROUNDS).rev() {
            (l, r) = (r ^ self.round(i, l), l);
        }
        l << COOKIE_HALF | r
    }

    /// The cookie of the entry at position `pos` (`pos < POSITIONS`).
    pub fn cookie(&self, pos: u64) -> u64 {
        FIRST_COOKIE + self.encrypt(pos)
    }

    /// The position whose cookie is `cookie`, if any.
    pub fn position(&self, cookie: u64) -> Option<u64> {
        let c = cookie.checked_sub(FIRST_COOKIE)?;
        if c >> COOKIE_BITS != 0 {
            return None;
        }
        Some(self.decrypt(c)).filter(|&p| p < POSITIONS)
    }

    /// Where a listing given `cookie` (the last one it returned; 0, 1 or 2 for none or "."
    /// and "..") goes on. A cookie that is no entry's ends the listing.
    pub fn resume(&self, cookie: u64) -> Resume {
        if cookie < FIRST_COOKIE {
            return Resume::Start;
        }
        self.position(cookie).map_or(Resume::End, Resume::After)
    }
}

/// Slots a name of `len` bytes occupies.
fn slots_for(len: usize) -> usize {
    len.div_ceil(SLOT_NAME_LEN)
}

/// Rejects names no directory can hold. The caller checks too; this keeps the module safe
/// on its own.
fn check_name(name: &[u8]) -> Result<()> {
    if name.is_empty() {
        return Err(Error::Invalid("empty file name"));
    }
    if name.len() > NAME_MAX {
        return Err(Error::NameTooLong);
    }
    if name.iter().any(|&b| b == 0 || b == b'/') {
        return Err(Error::Invalid("file name contains NUL or '/'"));
    }
    Ok(())
}

fn check_depth(depth: u32) -> Result<()> {
    if depth > MAX_DEPTH {
        // The depth comes from the directory inode; its block is not known here.
        return Err(Error::corrupt(0, "directory inode: dentry depth beyond the maximum"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Interface with the filesystem
// ---------------------------------------------------------------------------------------

/// Access to a directory's data blocks, provided by the filesystem.
pub trait DirBlocks {
    /// Reads dentry block `idx`; `None` when it is a hole (never written).
    fn read(&mut self, idx: u64) -> Result<Option<Box<Block>>>;
    /// [`Self::read`], or a copy of the block that passed this module's validation as block
    /// `idx` before and is unchanged since: `(block, true)`, which is not validated again.
    /// By default every block is read.
    fn read_cached(&mut self, idx: u64) -> Result<Option<(Box<Block>, bool)>> {
        Ok(self.read(idx)?.map(|b| (b, false)))
    }
    /// Block `idx`, as [`Self::read_cached`] just read it, passed validation (it may be
    /// kept for the next [`Self::read_cached`]).
    fn validated(&mut self, idx: u64, block: &Block) {
        let _ = (idx, block);
    }
    /// Writes dentry block `idx` (the block is already sealed by this module).
    fn write(&mut self, idx: u64, block: Box<Block>) -> Result<()>;
    /// Device address of block `idx` for error messages (0 if unknown).
    fn addr_of(&mut self, idx: u64) -> u64 {
        let _ = idx;
        0
    }
    /// The key this directory's names are hashed with ([`name_hash_keyed`]): the
    /// directory's own ([`dir_hash_key`]) on images with per-directory keys, else the
    /// filesystem's `hash_seed`. Unkeyed by default.
    fn hash_key(&mut self) -> Result<HashKey> {
        Ok(NO_HASH_KEY)
    }
    /// The key of this directory's readdir cookies ([`dir_cookie_key`], [`Cookies`]).
    /// All zero by default (still a permutation, one anyone can compute).
    fn cookie_key(&mut self) -> Result<HashKey> {
        Ok(NO_HASH_KEY)
    }
    /// Whether names whose bucket is full in every level may overflow into the following
    /// buckets of the deepest level ([`crate::superblock::FEATURE_INCOMPAT_DIR_V2`]).
    /// Without it such a name is refused (`Error::DirectoryFull`), and a block carrying an
    /// overflow distance is corrupt. Off by default.
    fn overflow(&self) -> bool {
        false
    }
}

/// Where an entry was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryLoc {
    pub block_idx: u64,
    pub slot: u32,
}

/// One stored entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub ino: Ino,
    pub kind: FileType,
    pub name: Vec<u8>,
    pub cookie: u64,
}

// ---------------------------------------------------------------------------------------
// One dentry block
// ---------------------------------------------------------------------------------------

/// A validated dentry block. It can only be built by [`decode_block`] (or as an empty
/// block), and every mutation keeps it valid, so accessors may trust its structure.
#[derive(Clone)]
pub struct DentryBlock {
    idx: u64,
    buf: Box<Block>,
}

/// One entry of a block, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawEntry<'a> {
    pub slot: u32,
    pub hash: u32,
    pub ino: Ino,
    pub kind: FileType,
    pub name: &'a [u8],
}

// The helpers below run for every slot of every block read (a lookup in a large directory
// validates a few dozen blocks), and the test profile builds with opt-level 1, which does
// not inline ordinary small functions; hence `inline(always)` and word-sized loads.

#[inline(always)]
fn rec_off(slot: usize) -> usize {
    RECORDS_OFFSET + slot * RECORD_SIZE
}

#[inline(always)]
fn name_off(slot: usize) -> usize {
    NAMES_OFFSET + slot * SLOT_NAME_LEN
}

#[inline(always)]
fn rd16(b: &Block, off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

// `try_into` from a slice of the right length cannot fail (the `map_or` default is never
// used); unlike `copy_from_slice`, it becomes a single load at opt-level 1.
#[inline(always)]
fn rd32(b: &Block, off: usize) -> u32 {
    b[off..off + 4].try_into().map_or(0, u32::from_le_bytes)
}

#[inline(always)]
fn rd64(b: &Block, off: usize) -> u64 {
    b[off..off + 8].try_into().map_or(0, u64::from_le_bytes)
}

const BYTE_ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = BYTE_ONES << 7;

/// The high bit of each byte of `v` that is zero, and nothing else (exact, no borrows
/// between bytes: `(x & 0x7F) + 0x7F` cannot carry out of a byte).
#[inline(always)]
fn zero_bytes(v: u64) -> u64 {
    let low7 = !HIGH_BITS;
    !(((v & low7).wrapping_add(low7)) | v | low7)
}

#[inline(always)]
fn bit(buf: &Block, slot: usize) -> bool {
    buf[BITMAP_OFFSET + slot / 8] & (1 << (slot % 8)) != 0
}

/// Dentry file-type codes (`mode >> 12`) of the seven file types: 1 FIFO, 2 character
/// device, 4 directory, 6 block device, 8 regular, 10 symlink, 12 socket.
const VALID_TYPE_CODES: u16 = 1 << 1 | 1 << 2 | 1 << 4 | 1 << 6 | 1 << 8 | 1 << 10 | 1 << 12;

const BITMAP_WORDS: usize = BITMAP_SIZE / 8;

#[inline(always)]
fn load_bitmap(b: &Block) -> [u64; BITMAP_WORDS] {
    let mut bitmap = [0u64; BITMAP_WORDS];
    for (w, word) in bitmap.iter_mut().enumerate() {
        *word = rd64(b, BITMAP_OFFSET + 8 * w);
    }
    bitmap
}

#[inline(always)]
fn bitmap_bit(bitmap: &[u64; BITMAP_WORDS], slot: usize) -> bool {
    (bitmap[slot / 64] >> (slot % 64)) & 1 != 0
}

fn raw(b: &Block) -> &RawDentryBlock {
    codec::view(b)
}
fn raw_mut(b: &mut Block) -> &mut RawDentryBlock {
    codec::view_mut(b)
}

/// Receives an entry of the deepest level found outside its name's bucket: the block
/// holding its bucket's overflow distance, the distance the entry needs, its name.
pub type Overflowed<'a> = dyn FnMut(u64, u32, &[u8]) + 'a;

impl DentryBlock {
    /// A new block holding no entries, for index `idx` (which must be below 2^32, as every
    /// index of the table is).
    pub fn empty(idx: u64) -> DentryBlock {
        let mut buf = crate::zero_block();
        let r = raw_mut(&mut buf);
        r.magic.set(DENTRY_MAGIC);
        r.idx.set(idx as u32);
        DentryBlock { idx, buf }
    }

    /// Validates `buf` as dentry block `idx`. The reason of a failure is returned bare; the
    /// caller attaches the block address.
    ///
    /// Every block a lookup or insert touches goes through here, so it is one pass over the
    /// slots with word-sized loads rather than a byte walk.
    fn parse(idx: u64, buf: Box<Block>) -> core::result::Result<DentryBlock, &'static str> {
        let b: &Block = &buf;
        let r = raw(b);
        if r.magic.get() != DENTRY_MAGIC {
            return Err("dentry block: bad magic");
        }
        if !codec::crc_ok(b) {
            return Err("dentry block: bad checksum");
        }
        if r.idx.get() as u64 != idx {
            return Err("dentry block: stored index differs from its position in the directory");
        }
        if r.reserved1.get() != 0 || r.tail.get() != 0 {
            return Err("dentry block: reserved field not zero");
        }
        let overflow = r.overflow.get();
        if overflow != 0 {
            if !holds_overflow_distance(idx) {
                return Err("dentry block: overflow distance outside the first block of a deepest-level bucket");
            }
            if overflow > MAX_OVERFLOW {
                return Err("dentry block: overflow distance beyond the level's buckets");
            }
        }
        let bitmap = load_bitmap(b);
        let mut used = 0;
        for w in bitmap {
            used += w.count_ones();
        }
        // Bits past the last slot are padding.
        if bitmap[BITMAP_WORDS - 1] >> (SLOTS_PER_BLOCK % 64) != 0 {
            return Err("dentry block: bitmap bit set beyond the last slot");
        }
        if r.count.get() as u32 != used {
            return Err("dentry block: used-slot count does not match the bitmap");
        }

        // Bytes of the current name not yet checked: nonzero while in a name's slots.
        let mut rest = 0usize;
        // High bit of a byte set where some name word holds a '/'.
        let mut slashes = 0u64;
        for s in 0..SLOTS_PER_BLOCK {
            let r = rec_off(s);
            let lo = rd64(b, r); // hash, ino
            let hi = rd32(b, r + 8); // name_len, file type, reserved
            let in_use = bitmap_bit(&bitmap, s);
            if rest > 0 {
                if !in_use {
                    return Err("dentry block: name slot not marked used");
                }
                if lo != 0 || hi != 0 {
                    return Err("dentry block: continuation record not zeroed");
                }
            } else {
                let len = (hi & 0xFFFF) as usize;
                if len == 0 {
                    if in_use {
                        return Err("dentry block: name slot with no entry before it");
                    }
                    if lo != 0 || hi != 0 {
                        return Err("dentry block: free slot not zeroed");
                    }
                } else {
                    if !in_use {
                        return Err("dentry block: entry slot not marked used");
                    }
                    if len > NAME_MAX {
                        return Err("dentry block: name longer than 255 bytes");
                    }
                    if s + slots_for(len) > SLOTS_PER_BLOCK {
                        return Err("dentry block: name runs past the last slot");
                    }
                    if lo >> 32 == 0 {
                        return Err("dentry block: entry with inode number 0");
                    }
                    let code = (hi >> 16) & 0xFF;
                    if code >= 16 || VALID_TYPE_CODES & (1 << code) == 0 {
                        return Err("dentry block: bad file type");
                    }
                    if hi >> 24 != 0 {
                        return Err("dentry block: reserved field not zero");
                    }
                    rest = len;
                }
            }
            // The slot's 8 name bytes: `k` name bytes (nonzero), then zeros.
            let k = rest.min(SLOT_NAME_LEN);
            rest -= k;
            let w = rd64(b, name_off(s));
            let zeros = zero_bytes(w);
            let want = if k == SLOT_NAME_LEN { 0 } else { HIGH_BITS << (8 * k) };
            if zeros != want {
                return Err(if k == 0 {
                    "dentry block: free slot not zeroed"
                } else if zeros & !want != 0 {
                    "dentry block: name contains NUL or '/'"
                } else {
                    "dentry block: name padding not zero"
                });
            }
            slashes |= zero_bytes(w ^ (BYTE_ONES * b'/' as u64));
        }
        // Free slots and padding are zero (checked above), so any '/' is in a name.
        if slashes != 0 {
            return Err("dentry block: name contains NUL or '/'");
        }
        Ok(DentryBlock { idx, buf })
    }

    /// Index of this block in the directory.
    pub fn idx(&self) -> u64 {
        self.idx
    }

    /// Used slots (entries and their continuation slots).
    pub fn used_slots(&self) -> u32 {
        raw(&self.buf).count.get() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.used_slots() == 0
    }

    /// Overflow distance: in the first block of a deepest-level bucket, how many following
    /// buckets may hold names of this bucket (0..=[`MAX_OVERFLOW`]); 0 in every other block.
    pub fn overflow(&self) -> u32 {
        raw(&self.buf).overflow.get()
    }

    /// Sets the overflow distance (only on a block where [`holds_overflow_distance`]).
    fn set_overflow(&mut self, distance: u32) {
        debug_assert!(holds_overflow_distance(self.idx) && distance <= MAX_OVERFLOW);
        raw_mut(&mut self.buf).overflow.set(distance);
    }

    fn entry_at(&self, s: usize) -> Option<RawEntry<'_>> {
        if s >= SLOTS_PER_BLOCK || !bit(&self.buf, s) {
            return None;
        }
        let r = raw(&self.buf);
        let rec = &r.records[s];
        let len = rec.name_len.get() as usize;
        if len == 0 {
            return None; // a continuation slot
        }
        // Validated at parse; `get` keeps even a broken invariant from panicking.
        let name = r.names.as_flattened().get(s * SLOT_NAME_LEN..s * SLOT_NAME_LEN + len)?;
        Some(RawEntry {
            slot: s as u32,
            hash: rec.hash.get(),
            ino: rec.ino.get(),
            kind: FileType::from_dentry_code(rec.file_type)?,
            name,
        })
    }

    /// The entries of the block in slot order.
    pub fn entries(&self) -> impl Iterator<Item = RawEntry<'_>> + '_ {
        let mut s = 0usize;
        core::iter::from_fn(move || {
            while s < SLOTS_PER_BLOCK {
                let here = s;
                match self.entry_at(here) {
                    Some(e) => {
                        s = here + slots_for(e.name.len()).max(1);
                        return Some(e);
                    }
                    None => s = here + 1,
                }
            }
            None
        })
    }

    /// Inode and type of the entry whose first slot is `slot` (`(0, Regular)` if there is
    /// none, which callers rule out by finding the entry first).
    fn target(&self, slot: usize) -> (Ino, FileType) {
        self.entry_at(slot).map_or((0, FileType::Regular), |e| (e.ino, e.kind))
    }

    /// The entry named `name` (with hash `hash`), if present.
    pub fn find(&self, hash: u32, name: &[u8]) -> Option<RawEntry<'_>> {
        // Free and continuation records are all zero, so a record whose hash and name
        // length match is an entry head; no bitmap walk is needed to pick candidates.
        let b: &Block = &self.buf;
        for s in 0..SLOTS_PER_BLOCK {
            let r = rec_off(s);
            if rd32(b, r + REC_HASH) == hash && rd16(b, r + REC_NAME_LEN) as usize == name.len() {
                match self.entry_at(s) {
                    Some(e) if e.name == name => return Some(e),
                    _ => {}
                }
            }
        }
        None
    }

    /// First slot of a run of `need` free slots (first fit).
    fn find_free(&self, need: usize) -> Option<usize> {
        if need == 0 || self.used_slots() as usize + need > SLOTS_PER_BLOCK {
            return None;
        }
        let mut run = 0;
        for s in 0..SLOTS_PER_BLOCK {
            if bit(&self.buf, s) {
                run = 0;
            } else {
                run += 1;
                if run == need {
                    return Some(s + 1 - need);
                }
            }
        }
        None
    }

    fn set_bit(&mut self, s: usize, on: bool) {
        let m = 1u8 << (s % 8);
        let byte = &mut raw_mut(&mut self.buf).bitmap[s / 8];
        if on {
            *byte |= m;
        } else {
            *byte &= !m;
        }
    }

    /// Stores an entry at `slot`, whose `slots_for(name.len())` slots must be free and the
    /// name valid (checked by the callers in this module).
    fn put(&mut self, slot: usize, hash: u32, name: &[u8], ino: Ino, kind: FileType) {
        let n = slots_for(name.len());
        let count = self.used_slots() as usize + n;
        let r = raw_mut(&mut self.buf);
        r.records[slot] = DentryRecord {
            hash: hash.into(),
            ino: ino.into(),
            name_len: (name.len() as u16).into(),
            file_type: kind.dentry_code(),
            reserved: 0,
        };
        let o = slot * SLOT_NAME_LEN;
        r.names.as_flattened_mut()[o..o + name.len()].copy_from_slice(name);
        r.count.set(count as u16);
        for s in slot..slot + n {
            self.set_bit(s, true);
        }
    }

    /// Clears the entry whose first slot is `slot` (and its continuation slots).
    fn clear(&mut self, slot: usize) {
        let len = match self.entry_at(slot) {
            Some(e) => e.name.len(),
            None => return,
        };
        let n = slots_for(len);
        let count = (self.used_slots() as usize).saturating_sub(n);
        let r = raw_mut(&mut self.buf);
        r.records[slot..slot + n].as_mut_bytes().fill(0);
        r.names[slot..slot + n].as_mut_bytes().fill(0);
        r.count.set(count as u16);
        for s in slot..slot + n {
            self.set_bit(s, false);
        }
    }

    /// Checks what structural validation leaves out because it costs a hash per entry:
    /// every stored hash is the hash of its name, and the name belongs to the bucket this
    /// block is part of (a misplaced entry would be listed by readdir but never found by
    /// lookup). For fsck, on an unkeyed filesystem; see [`DentryBlock::check_placement_keyed`].
    pub fn check_placement(&self) -> core::result::Result<(), &'static str> {
        self.check_placement_keyed(&NO_HASH_KEY)
    }

    /// [`DentryBlock::check_placement`] for a directory whose names are hashed with `key`.
    pub fn check_placement_keyed(&self, key: &HashKey) -> core::result::Result<(), &'static str> {
        self.check_placement_with(key, None)
    }

    /// [`DentryBlock::check_placement_keyed`] for a directory whose full buckets may
    /// overflow (`DirBlocks::overflow`): an entry of the deepest level outside its name's
    /// bucket is handed to `overflowed` (the block holding its bucket's overflow distance,
    /// the distance it needs, the name) instead of being an error, for the caller to check
    /// against that block ([`DentryBlock::overflow`]) once it has read it. `None`: every
    /// entry must be in its own bucket.
    pub fn check_placement_with(
        &self,
        key: &HashKey,
        mut overflowed: Option<&mut Overflowed<'_>>,
    ) -> core::result::Result<(), &'static str> {
        let (level, bucket) = match block_position(self.idx) {
            Some(p) => p,
            None => return Err("dentry block: index beyond the deepest level"),
        };
        if self.overflow() != 0 && overflowed.is_none() {
            return Err("dentry block: overflow distance in a directory without overflow");
        }
        for e in self.entries() {
            if name_hash_keyed(key, e.name) != e.hash {
                return Err("dentry block: stored hash is not the hash of the name");
            }
            if e.hash as u64 % buckets(level) != bucket {
                match (overflowed.as_mut(), overflow_distance(self.idx, e.hash)) {
                    (Some(f), Some(distance)) => f(overflow_home(e.hash), distance, e.name),
                    _ => return Err("dentry block: entry in the wrong hash bucket"),
                }
            }
        }
        Ok(())
    }

    /// Seals the block (CRC) and hands back its bytes for writing.
    pub fn into_sealed(mut self) -> Box<Block> {
        codec::seal(&mut self.buf);
        self.buf
    }
}

/// Validates `block` as dentry block `idx` (magic, CRC, stored index, reserved fields,
/// bitmap against count and records, name lengths, names, inode numbers, file types).
/// Never panics; a bad block is `Error::Corrupt { block: addr_for_errors, .. }`.
pub fn decode_block(idx: u64, block: &Block, addr_for_errors: u64) -> Result<DentryBlock> {
    DentryBlock::parse(idx, Box::new(*block)).map_err(|r| Error::corrupt(addr_for_errors, r))
}

/// Address to report for a bad block `idx`: the device address if known, else the index.
fn err_addr(d: &mut dyn DirBlocks, idx: u64) -> u64 {
    match d.addr_of(idx) {
        0 => idx,
        a => a,
    }
}

/// Reads and validates block `idx`; `None` for a hole.
fn read_block(d: &mut dyn DirBlocks, idx: u64) -> Result<Option<DentryBlock>> {
    match d.read_cached(idx)? {
        None => Ok(None),
        // Validated when it was read, and unchanged since (`DirBlocks::read_cached`).
        Some((buf, true)) => Ok(Some(DentryBlock { idx, buf })),
        Some((buf, false)) => match DentryBlock::parse(idx, buf) {
            // Only images whose buckets overflow write overflow distances.
            Ok(b) if b.overflow() != 0 && !d.overflow() => {
                Err(Error::corrupt(err_addr(d, idx), "dentry block: overflow distance in a directory without overflow"))
            }
            Ok(b) => {
                d.validated(idx, &b.buf);
                Ok(Some(b))
            }
            Err(reason) => Err(Error::corrupt(err_addr(d, idx), reason)),
        },
    }
}

// ---------------------------------------------------------------------------------------
// Directory operations
// ---------------------------------------------------------------------------------------

/// Finds `name` in a directory of `depth` levels: reads only the name's bucket in each
/// level (deepest level first, see [`locate`]), at most `depth × BLOCKS_PER_BUCKET_HIGH`
/// blocks.
pub fn lookup(d: &mut dyn DirBlocks, depth: u32, name: &[u8]) -> Result<Option<(EntryLoc, Ino, FileType)>> {
    check_name(name)?;
    check_depth(depth)?;
    let hash = name_hash_keyed(&d.hash_key()?, name);
    lookup_hashed(d, depth, name, hash)
}

fn lookup_hashed(
    d: &mut dyn DirBlocks,
    depth: u32,
    name: &[u8],
    hash: u32,
) -> Result<Option<(EntryLoc, Ino, FileType)>> {
    Ok(locate(d, depth, name, hash)?.map(|(b, loc)| {
        // `locate` found the entry at `loc` in `b`.
        let (ino, kind) = b.target(loc.slot as usize);
        (loc, ino, kind)
    }))
}

/// Finds the block holding `name` and the entry's place in it.
///
/// Levels are searched deepest first. Names are unique, so the order does not change the
/// result, but inserts fill levels from 0, leaving about half of a large directory's
/// entries in its deepest level and most of the rest in the one above: deepest first, a
/// hit costs a few reads instead of nearly `2 × depth`. A miss reads every level either way.
/// Only a miss in a directory of all [`MAX_DEPTH`] levels whose bucket for the name
/// overflowed ([`DentryBlock::overflow`]) reads on: the following buckets of the deepest
/// level, as many as its overflow distance says.
fn locate(d: &mut dyn DirBlocks, depth: u32, name: &[u8], hash: u32) -> Result<Option<(DentryBlock, EntryLoc)>> {
    let mut overflow = 0;
    for level in (0..depth.min(MAX_DEPTH)).rev() {
        let start = bucket_start(level, hash);
        for idx in start..start + blocks_per_bucket(level) {
            if let Some(b) = read_block(d, idx)? {
                if let Some(slot) = b.find(hash, name).map(|e| e.slot) {
                    return Ok(Some((b, EntryLoc { block_idx: idx, slot })));
                }
                if level == OVERFLOW_LEVEL && idx == start {
                    // Zero unless `d.overflow()` (checked by `read_block`).
                    overflow = b.overflow();
                }
            }
        }
    }
    // Bounded by MAX_OVERFLOW (validated): the level's other buckets, each once.
    for k in 1..=overflow as u64 {
        let bucket = (hash as u64 % buckets(OVERFLOW_LEVEL) + k) % buckets(OVERFLOW_LEVEL);
        let start = bucket_first_block(OVERFLOW_LEVEL, bucket);
        for idx in start..start + blocks_per_bucket(OVERFLOW_LEVEL) {
            if let Some(b) = read_block(d, idx)? {
                if let Some(slot) = b.find(hash, name).map(|e| e.slot) {
                    return Ok(Some((b, EntryLoc { block_idx: idx, slot })));
                }
            }
        }
    }
    Ok(None)
}

/// Adds `name → ino` (the caller has checked that the name is absent). Uses the first
/// level, from 0, whose bucket for the name has a run of free slots long enough; when
/// none of the `*depth` levels has, the next level is used and `*depth` grows (the caller
/// stores it in the inode). When the name's bucket is full in all [`MAX_DEPTH`] levels:
/// with `d.overflow()`, the name goes to the first of the following buckets of the deepest
/// level with room (wrapping around), and the overflow distance of its own bucket grows to
/// cover it; without, or when the whole deepest level is full, `Error::DirectoryFull`.
/// At most `MAX_DEPTH × BLOCKS_PER_BUCKET_HIGH` blocks are read, plus those of the deepest
/// level when the name's bucket is full everywhere; at most two are written.
pub fn insert(d: &mut dyn DirBlocks, depth: &mut u32, name: &[u8], ino: Ino, kind: FileType) -> Result<EntryLoc> {
    check_name(name)?;
    let hash = name_hash_keyed(&d.hash_key()?, name);
    insert_hashed(d, depth, name, hash, ino, kind)
}

fn insert_hashed(
    d: &mut dyn DirBlocks,
    depth: &mut u32,
    name: &[u8],
    hash: u32,
    ino: Ino,
    kind: FileType,
) -> Result<EntryLoc> {
    check_depth(*depth)?;
    if ino == 0 {
        return Err(Error::Invalid("directory entry for inode number 0"));
    }
    let need = slots_for(name.len());
    // Levels at and beyond `*depth` are holes in a consistent directory, so the loop
    // normally ends at level `*depth` at the latest; reading them anyway means stale data
    // there is reported rather than overwritten.
    for level in 0..MAX_DEPTH {
        let start = bucket_start(level, hash);
        for idx in start..start + blocks_per_bucket(level) {
            let mut b = match read_block(d, idx)? {
                Some(b) => b,
                None => DentryBlock::empty(idx),
            };
            // The caller's absence check covers every level; seeing the name here means
            // the directory and the caller disagree, which must not produce a duplicate.
            if b.find(hash, name).is_some() {
                return Err(Error::Exists);
            }
            if let Some(slot) = b.find_free(need) {
                b.put(slot, hash, name, ino, kind);
                d.write(idx, b.into_sealed())?;
                if level >= *depth {
                    *depth = level + 1;
                }
                return Ok(EntryLoc { block_idx: idx, slot: slot as u32 });
            }
        }
    }
    if d.overflow() {
        return insert_overflow(d, depth, name, hash, ino, kind);
    }
    Err(Error::DirectoryFull)
}

/// [`insert`] of a name whose bucket is full in every level, into the following buckets of
/// the deepest level.
///
/// Crash and failure atomicity: both blocks written (the entry's, then the bucket's first
/// block with its wider overflow distance) are dentry blocks, which reach the device only
/// in a checkpoint, together. Everything is read before the first write; the second write
/// rewrites a block read just now, whose mapping exists (a full bucket has no holes).
fn insert_overflow(
    d: &mut dyn DirBlocks,
    depth: &mut u32,
    name: &[u8],
    hash: u32,
    ino: Ino,
    kind: FileType,
) -> Result<EntryLoc> {
    let need = slots_for(name.len());
    let n = buckets(OVERFLOW_LEVEL);
    let home_idx = overflow_home(hash);
    let Some(mut home) = read_block(d, home_idx)? else {
        // Only a bucket without room gets here, and a hole has room.
        return Err(Error::corrupt(err_addr(d, home_idx), "dentry block: full bucket with a hole"));
    };
    // Bounded: the level's other buckets, each once.
    for k in 1..n {
        let start = bucket_first_block(OVERFLOW_LEVEL, (hash as u64 % n + k) % n);
        for idx in start..start + blocks_per_bucket(OVERFLOW_LEVEL) {
            let mut b = match read_block(d, idx)? {
                Some(b) => b,
                None => DentryBlock::empty(idx),
            };
            if b.find(hash, name).is_some() {
                return Err(Error::Exists);
            }
            if let Some(slot) = b.find_free(need) {
                b.put(slot, hash, name, ino, kind);
                d.write(idx, b.into_sealed())?;
                if home.overflow() < k as u32 {
                    home.set_overflow(k as u32);
                    d.write(home_idx, home.into_sealed())?;
                }
                *depth = MAX_DEPTH;
                return Ok(EntryLoc { block_idx: idx, slot: slot as u32 });
            }
        }
    }
    Err(Error::DirectoryFull)
}

/// Removes `name`; returns what it pointed to, or `None` if absent. An emptied block stays
/// allocated (as an empty dentry block) and is reused by later inserts.
pub fn remove(d: &mut dyn DirBlocks, depth: u32, name: &[u8]) -> Result<Option<(Ino, FileType)>> {
    check_name(name)?;
    check_depth(depth)?;
    let hash = name_hash_keyed(&d.hash_key()?, name);
    let (mut b, loc) = match locate(d, depth, name, hash)? {
        Some(found) => found,
        None => return Ok(None),
    };
    let (ino, kind) = b.target(loc.slot as usize);
    b.clear(loc.slot as usize);
    d.write(loc.block_idx, b.into_sealed())?;
    Ok(Some((ino, kind)))
}

/// Removes the entry whose first slot is at `loc`, whatever its name hashes to; returns
/// what it pointed to, or `None` if no entry starts there. For fsck repair, which removes
/// entries a lookup by name may not reach (misplaced, duplicated or dangling ones).
pub fn remove_at(d: &mut dyn DirBlocks, loc: EntryLoc) -> Result<Option<(Ino, FileType)>> {
    if loc.block_idx >= max_block_index(MAX_DEPTH) {
        return Err(Error::Invalid("dentry location beyond the directory"));
    }
    let mut b = match read_block(d, loc.block_idx)? {
        Some(b) => b,
        None => return Ok(None),
    };
    let slot = loc.slot as usize;
    let Some(e) = b.entry_at(slot) else { return Ok(None) };
    let (ino, kind) = (e.ino, e.kind);
    b.clear(slot);
    d.write(loc.block_idx, b.into_sealed())?;
    Ok(Some((ino, kind)))
}

/// Points the existing entry at `loc` (from [`lookup`]) to `ino` of type `kind`; used by
/// rename over an existing name and by RENAME_EXCHANGE. The name and its place stay.
pub fn set_entry(d: &mut dyn DirBlocks, loc: EntryLoc, ino: Ino, kind: FileType) -> Result<()> {
    if ino == 0 {
        return Err(Error::Invalid("directory entry for inode number 0"));
    }
    if loc.block_idx >= max_block_index(MAX_DEPTH) {
        return Err(Error::Invalid("dentry location beyond the directory"));
    }
    let mut b = match read_block(d, loc.block_idx)? {
        Some(b) => b,
        None => return Err(Error::Invalid("dentry location is a hole")),
    };
    let slot = loc.slot as usize;
    if b.entry_at(slot).is_none() {
        return Err(Error::Invalid("dentry location holds no entry"));
    }
    let rec = &mut raw_mut(&mut b.buf).records[slot];
    rec.ino.set(ino);
    rec.file_type = kind.dentry_code();
    d.write(loc.block_idx, b.into_sealed())
}

/// Calls `f` for each stored entry after the one whose cookie is `after_cookie` (all of
/// them for a cookie below [`FIRST_COOKIE`]), in position order, until `f` returns false.
/// Reads only indexes below `max_block_index(depth)`, starting at the block of
/// `after_cookie`'s position; a hole costs one `read`. A cookie that no entry of this
/// directory can have lists nothing.
pub fn iterate(d: &mut dyn DirBlocks, depth: u32, after_cookie: u64, f: &mut dyn FnMut(Entry) -> bool) -> Result<()> {
    check_depth(depth)?;
    let cookies = Cookies::new(&d.cookie_key()?);
    let after = match cookies.resume(after_cookie) {
        Resume::Start => None,
        Resume::After(pos) => Some(pos),
        Resume::End => return Ok(()),
    };
    let first = after.map_or(0, |p| p / SLOTS_PER_BLOCK as u64);
    for idx in first..max_block_index(depth) {
        let b = match read_block(d, idx)? {
            Some(b) => b,
            None => continue,
        };
        for e in b.entries() {
            let pos = position_of(EntryLoc { block_idx: idx, slot: e.slot });
            if after.is_some_and(|a| pos <= a) {
                continue;
            }
            let cookie = cookies.cookie(pos);
            let entry = Entry { ino: e.ino, kind: e.kind, name: e.name.to_vec(), cookie };
            if !f(entry) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Checks an entry a listing returned (for checkers such as the crash explorer's dump):
/// its cookie is the position of an entry of that name (cookies of this directory), and
/// that position is where lookup searches: the name's bucket of the block's level or, in
/// the deepest level of a directory whose buckets overflow, within its bucket's overflow
/// distance. `Ok(Ok(loc))` for a well placed entry, `Ok(Err(reason))` otherwise.
pub fn check_listed(
    d: &mut dyn DirBlocks,
    name: &[u8],
    cookie: u64,
) -> Result<core::result::Result<EntryLoc, &'static str>> {
    let Some(pos) = Cookies::new(&d.cookie_key()?).position(cookie) else {
        return Ok(Err("the cookie is no position of this directory"));
    };
    let loc = EntryLoc { block_idx: pos / SLOTS_PER_BLOCK as u64, slot: (pos % SLOTS_PER_BLOCK as u64) as u32 };
    let b = read_block(d, loc.block_idx)?;
    let Some(e) = b.as_ref().and_then(|b| b.entry_at(loc.slot as usize)) else {
        return Ok(Err("no entry at the cookie's position"));
    };
    if e.name != name {
        return Ok(Err("another name at the cookie's position"));
    }
    let hash = name_hash_keyed(&d.hash_key()?, name);
    let Some((level, bucket)) = block_position(loc.block_idx) else {
        return Ok(Err("entry beyond the deepest level"));
    };
    if bucket == hash as u64 % buckets(level) {
        return Ok(Ok(loc));
    }
    let Some(distance) = overflow_distance(loc.block_idx, hash).filter(|_| d.overflow()) else {
        return Ok(Err("entry outside its name's hash bucket"));
    };
    let home = read_block(d, overflow_home(hash))?.map_or(0, |b| b.overflow());
    Ok(if distance <= home { Ok(loc) } else { Err("entry beyond its bucket's overflow distance") })
}

/// True when the directory stores no entry (every block below `max_block_index(depth)` is
/// a hole or empty). Every existing block is read and validated.
pub fn is_empty(d: &mut dyn DirBlocks, depth: u32) -> Result<bool> {
    check_depth(depth)?;
    for idx in 0..max_block_index(depth) {
        if let Some(b) = read_block(d, idx)? {
            if !b.is_empty() {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{get_u16, get_u32, put_u16, put_u32, put_u8};
    use alloc::collections::BTreeMap;
    use alloc::collections::BTreeSet;
    use alloc::format;
    use alloc::vec;
    extern crate std;

    fn all_zero(b: &[u8]) -> bool {
        b.iter().all(|&x| x == 0)
    }

    /// In-memory directory that counts reads.
    #[derive(Default)]
    struct Mem {
        blocks: BTreeMap<u64, Box<Block>>,
        reads: u64,
        writes: u64,
        key: HashKey,
        cookie_key: HashKey,
        overflow: bool,
    }

    impl DirBlocks for Mem {
        fn read(&mut self, idx: u64) -> Result<Option<Box<Block>>> {
            self.reads += 1;
            Ok(self.blocks.get(&idx).cloned())
        }
        fn write(&mut self, idx: u64, block: Box<Block>) -> Result<()> {
            self.writes += 1;
            self.blocks.insert(idx, block);
            Ok(())
        }
        fn addr_of(&mut self, idx: u64) -> u64 {
            1000 + idx
        }
        fn hash_key(&mut self) -> Result<HashKey> {
            Ok(self.key)
        }
        fn cookie_key(&mut self) -> Result<HashKey> {
            Ok(self.cookie_key)
        }
        fn overflow(&self) -> bool {
            self.overflow
        }
    }

    #[test]
    fn siphash24_matches_the_reference_vectors_and_core() {
        let key: HashKey = core::array::from_fn(|i| i as u8);
        let msg: Vec<u8> = (0u8..64).collect();
        // The paper's appendix and the reference implementation's vectors.
        assert_eq!(siphash24(&key, &[]), 0x726f_db47_dd0e_0e31);
        assert_eq!(siphash24(&key, &msg[..15]), 0xa129_ca61_49be_45e5);
        #[allow(deprecated)]
        for len in 0..64 {
            use core::hash::Hasher;
            let mut h = core::hash::SipHasher::new_with_keys(
                u64::from_le_bytes(key[..8].try_into().unwrap()),
                u64::from_le_bytes(key[8..].try_into().unwrap()),
            );
            h.write(&msg[..len]);
            assert_eq!(siphash24(&key, &msg[..len]), h.finish(), "length {len}");
        }
    }

    /// A keyed directory finds every name, fsck's placement check needs the key, and names
    /// that collide in every level under the unkeyed hash spread out under a key.
    #[test]
    fn keyed_directories_place_by_the_key() {
        let key: HashKey = *b"0123456789abcdef";
        let mut d = Mem { key, ..Default::default() };
        let mut depth = 0;
        // 3000 names sharing the unkeyed hash's low 12 bits: one bucket in every level.
        let target = name_hash(b"victim.lock") & 0xfff;
        let colliding: Vec<Vec<u8>> =
            (0u32..).map(name).filter(|n| name_hash(n) & 0xfff == target).take(3000).collect();
        for (i, n) in colliding.iter().enumerate() {
            insert(&mut d, &mut depth, n, 10 + i as u32, FileType::Regular).unwrap();
        }
        for (i, n) in colliding.iter().enumerate() {
            assert_eq!(lookup(&mut d, depth, n).unwrap().map(|(_, ino, _)| ino), Some(10 + i as u32));
        }
        let mut unkeyed_ok = true;
        for (idx, b) in &d.blocks {
            let db = decode_block(*idx, b, 0).unwrap();
            db.check_placement_keyed(&key).unwrap();
            unkeyed_ok &= db.check_placement().is_ok();
        }
        assert!(!unkeyed_ok, "without the key, fsck would see misplaced entries");
        // The same names without a key pile into one bucket per level.
        let mut u = Mem::default();
        let mut udepth = 0;
        for (i, n) in colliding.iter().enumerate() {
            insert(&mut u, &mut udepth, n, 10 + i as u32, FileType::Regular).unwrap();
        }
        std::eprintln!("3000 colliding names: {udepth} levels unkeyed, {depth} keyed");
        assert!(udepth >= 2 * depth, "unkeyed: {udepth} levels, keyed: {depth}");
        assert_eq!(remove(&mut d, depth, &colliding[7]).unwrap(), Some((17, FileType::Regular)));
        assert_eq!(lookup(&mut d, depth, &colliding[7]).unwrap(), None);
    }

    fn name(i: u32) -> Vec<u8> {
        format!("file-{i}").into_bytes()
    }

    fn all_entries(d: &mut Mem, depth: u32, after: u64) -> Vec<Entry> {
        let mut v = Vec::new();
        iterate(d, depth, after, &mut |e| {
            v.push(e);
            true
        })
        .unwrap();
        v
    }

    /// The numbers stated in docs/FORMAT-dentry.fragment.md.
    #[test]
    fn format_constants_match_the_spec() {
        assert_eq!(DENTRY_MAGIC.to_le_bytes(), *b"DENT");
        assert_eq!(SLOTS_PER_BLOCK, 202);
        assert_eq!(BITMAP_OFFSET, 16);
        assert_eq!(BITMAP_SIZE, 32);
        assert_eq!(RECORDS_OFFSET, 48);
        assert_eq!(NAMES_OFFSET, 2472);
        assert_eq!(TAIL_OFFSET, 4088);
        assert_eq!(CRC_OFFSET, 4092);
        assert_eq!(RECORD_SIZE, 12);
        assert_eq!(SLOT_NAME_LEN, 8);
        assert_eq!(MAX_DEPTH, 64);
        assert_eq!(MAX_BUCKET_LOG2, 12);
        assert_eq!(HIGH_LEVEL, 32);
        assert_eq!((BLOCKS_PER_BUCKET_LOW, BLOCKS_PER_BUCKET_HIGH), (2, 4));
        assert_eq!(max_block_index(1), 2);
        assert_eq!(max_block_index(2), 6);
        assert_eq!(max_block_index(12), 8190);
        assert_eq!(max_block_index(32), 8190 + 20 * 8192);
        assert_eq!(max_block_index(64), 696_318);
        assert_eq!(bucket_start(3, 13), 14 + 5 * 2);
        assert_eq!(bucket_start(40, 0xFFFF_FFFF), max_block_index(40) + 4095 * 4);
        // Hash test vectors.
        assert_eq!(name_hash_keyed(&NO_HASH_KEY, b"hello.txt"), name_hash(b"hello.txt"), "zero key: unkeyed");
        assert_eq!(name_hash(b""), 0xAB3E_7C0B);
        assert_eq!(name_hash(b"a"), 0x1A80_B1B3);
        assert_eq!(name_hash(b"hello.txt"), 0x7814_CDEB);
        // An empty block's layout.
        let e = DentryBlock::empty(7).into_sealed();
        assert_eq!(&e[0..4], b"DENT");
        assert_eq!(get_u32(&e[..], 4), 7);
        assert_eq!(get_u32(&e[..], CRC_OFFSET), codec::crc(&e[..4092]));
    }

    #[test]
    fn block_position_inverts_bucket_start() {
        for level in 0..MAX_DEPTH {
            for h in [0u32, 1, 2, 3, 77, 4095, 4096, 0xDEAD_BEEF, u32::MAX] {
                let s = bucket_start(level, h);
                for k in 0..blocks_per_bucket(level) {
                    assert_eq!(block_position(s + k), Some((level, h as u64 % buckets(level))));
                }
            }
        }
        assert_eq!(block_position(max_block_index(MAX_DEPTH)), None);
    }

    #[test]
    fn insert_lookup_remove_round_trip() {
        let mut d = Mem::default();
        let mut depth = 0;
        assert!(is_empty(&mut d, depth).unwrap());
        assert_eq!(lookup(&mut d, depth, b"x").unwrap(), None);
        let loc = insert(&mut d, &mut depth, b"x", 5, FileType::Regular).unwrap();
        assert_eq!(depth, 1);
        assert_eq!(lookup(&mut d, depth, b"x").unwrap(), Some((loc, 5, FileType::Regular)));
        assert!(!is_empty(&mut d, depth).unwrap());
        let loc2 = insert(&mut d, &mut depth, b"dir", 6, FileType::Directory).unwrap();
        assert_ne!(loc, loc2);
        assert_eq!(lookup(&mut d, depth, b"dir").unwrap(), Some((loc2, 6, FileType::Directory)));
        assert_eq!(remove(&mut d, depth, b"x").unwrap(), Some((5, FileType::Regular)));
        assert_eq!(remove(&mut d, depth, b"x").unwrap(), None);
        assert_eq!(lookup(&mut d, depth, b"x").unwrap(), None);
        assert_eq!(remove(&mut d, depth, b"dir").unwrap(), Some((6, FileType::Directory)));
        assert!(is_empty(&mut d, depth).unwrap());
        // Emptied blocks stay as valid empty blocks.
        assert!(!d.blocks.is_empty());
        assert!(all_entries(&mut d, depth, 0).is_empty());
    }

    #[test]
    fn every_file_type_round_trips() {
        let kinds = [
            FileType::Regular,
            FileType::Directory,
            FileType::Symlink,
            FileType::CharDevice,
            FileType::BlockDevice,
            FileType::Fifo,
            FileType::Socket,
        ];
        let mut d = Mem::default();
        let mut depth = 0;
        for (i, k) in kinds.iter().enumerate() {
            insert(&mut d, &mut depth, &name(i as u32), i as u32 + 1, *k).unwrap();
        }
        for (i, k) in kinds.iter().enumerate() {
            let (_, ino, kind) = lookup(&mut d, depth, &name(i as u32)).unwrap().unwrap();
            assert_eq!((ino, kind), (i as u32 + 1, *k));
        }
    }

    #[test]
    fn long_and_short_names() {
        let mut d = Mem::default();
        let mut depth = 0;
        let mut names = Vec::new();
        for len in [1usize, 2, 7, 8, 9, 15, 16, 17, 64, 100, 254, 255] {
            for c in [b'a', b'z'] {
                names.push(vec![c; len]);
            }
        }
        for (i, n) in names.iter().enumerate() {
            insert(&mut d, &mut depth, n, i as u32 + 1, FileType::Regular).unwrap();
        }
        for (i, n) in names.iter().enumerate() {
            let (_, ino, _) = lookup(&mut d, depth, n).unwrap().unwrap();
            assert_eq!(ino, i as u32 + 1);
        }
        let seen: BTreeSet<Vec<u8>> = all_entries(&mut d, depth, 0).into_iter().map(|e| e.name).collect();
        assert_eq!(seen, names.iter().cloned().collect());
        // A prefix of a stored name is a different name.
        assert_eq!(lookup(&mut d, depth, &[b'a'; 254][..253]).unwrap(), None);
        for n in &names {
            assert!(remove(&mut d, depth, n).unwrap().is_some());
        }
        assert!(is_empty(&mut d, depth).unwrap());
        for b in d.blocks.values() {
            let blk = decode_block(get_u32(&b[..], 4) as u64, b, 0).unwrap();
            assert!(blk.is_empty());
            // Cleared slots leave no trace.
            assert!(all_zero(&b[BITMAP_OFFSET..CRC_OFFSET]));
        }
    }

    #[test]
    fn bad_names_and_arguments_are_rejected() {
        let mut d = Mem::default();
        let mut depth = 0;
        let long = vec![b'a'; 256];
        assert_eq!(insert(&mut d, &mut depth, b"", 1, FileType::Regular), Err(Error::Invalid("empty file name")));
        assert!(matches!(insert(&mut d, &mut depth, b"a/b", 1, FileType::Regular), Err(Error::Invalid(_))));
        assert!(matches!(insert(&mut d, &mut depth, b"a\0b", 1, FileType::Regular), Err(Error::Invalid(_))));
        assert_eq!(insert(&mut d, &mut depth, &long, 1, FileType::Regular), Err(Error::NameTooLong));
        assert!(matches!(insert(&mut d, &mut depth, b"a", 0, FileType::Regular), Err(Error::Invalid(_))));
        assert!(matches!(lookup(&mut d, depth, b"/"), Err(Error::Invalid(_))));
        assert!(matches!(remove(&mut d, depth, b""), Err(Error::Invalid(_))));
        assert!(matches!(lookup(&mut d, MAX_DEPTH + 1, b"a"), Err(Error::Corrupt { .. })));
        assert!(matches!(iterate(&mut d, MAX_DEPTH + 1, 0, &mut |_| true), Err(Error::Corrupt { .. })));
        assert_eq!(depth, 0);
        assert!(d.blocks.is_empty());
        // set_entry on a hole, a free slot, a continuation slot, and past the table.
        assert!(matches!(
            set_entry(&mut d, EntryLoc { block_idx: 0, slot: 0 }, 3, FileType::Regular),
            Err(Error::Invalid(_))
        ));
        let loc = insert(&mut d, &mut depth, b"abcdefghij", 9, FileType::Regular).unwrap();
        for slot in [loc.slot + 1, loc.slot + 2, 201, 202, u32::MAX] {
            assert!(matches!(
                set_entry(&mut d, EntryLoc { block_idx: loc.block_idx, slot }, 3, FileType::Regular),
                Err(Error::Invalid(_))
            ));
        }
        assert!(matches!(
            set_entry(&mut d, EntryLoc { block_idx: u64::MAX, slot: 0 }, 3, FileType::Regular),
            Err(Error::Invalid(_))
        ));
        // A duplicate seen during insert is refused rather than stored twice.
        assert_eq!(insert(&mut d, &mut depth, b"abcdefghij", 10, FileType::Regular), Err(Error::Exists));
    }

    #[test]
    fn set_entry_retargets() {
        let mut d = Mem::default();
        let mut depth = 0;
        let la = insert(&mut d, &mut depth, b"a", 10, FileType::Regular).unwrap();
        let lb = insert(&mut d, &mut depth, b"b", 20, FileType::Directory).unwrap();
        // Exchange.
        set_entry(&mut d, la, 20, FileType::Directory).unwrap();
        set_entry(&mut d, lb, 10, FileType::Regular).unwrap();
        assert_eq!(lookup(&mut d, depth, b"a").unwrap(), Some((la, 20, FileType::Directory)));
        assert_eq!(lookup(&mut d, depth, b"b").unwrap(), Some((lb, 10, FileType::Regular)));
        let names: Vec<_> = all_entries(&mut d, depth, 0).into_iter().map(|e| (e.name, e.ino)).collect();
        assert_eq!(names.len(), 2);
        assert!(names.contains(&(b"a".to_vec(), 20)));
    }

    /// Names forced onto one hash: they share a bucket at every level, so they fill bucket
    /// after bucket and grow the depth; the name comparison after the hash match tells them
    /// apart. Then the table runs out of levels.
    #[test]
    fn identical_hashes_overflow_buckets_and_grow_depth() {
        let mut d = Mem::default();
        let mut depth = 0;
        let h = 0x1234_5678;
        // 255-byte names take 32 slots: 6 per block.
        let long = |i: u32| {
            let mut n = format!("{i:08}").into_bytes();
            n.resize(255, b'x');
            n
        };
        let per_chain: u32 = (0..MAX_DEPTH).map(|l| blocks_per_bucket(l) as u32).sum::<u32>() * 6;
        assert_eq!(per_chain, 1152);
        let mut last_depth = 0;
        for i in 0..per_chain {
            let loc = insert_hashed(&mut d, &mut depth, &long(i), h, i + 1, FileType::Regular).unwrap();
            assert!(depth >= last_depth && depth <= last_depth + 1);
            last_depth = depth;
            let (level, bucket) = block_position(loc.block_idx).unwrap();
            assert_eq!(level, depth - 1);
            assert_eq!(bucket, h as u64 % buckets(level));
        }
        assert_eq!(depth, MAX_DEPTH);
        assert_eq!(
            insert_hashed(&mut d, &mut depth, &long(per_chain), h, 1, FileType::Regular),
            Err(Error::DirectoryFull)
        );
        assert_eq!(depth, MAX_DEPTH);
        for i in (0..per_chain).step_by(37) {
            let (_, ino, _) = lookup_hashed(&mut d, depth, &long(i), h).unwrap().unwrap();
            assert_eq!(ino, i + 1);
        }
        // Removing one frees room at its level, which the next insert reuses.
        let (loc, _, _) = lookup_hashed(&mut d, depth, &long(7), h).unwrap().unwrap();
        let mut blk = read_block(&mut d, loc.block_idx).unwrap().unwrap();
        blk.clear(loc.slot as usize);
        d.write(loc.block_idx, blk.into_sealed()).unwrap();
        let again = insert_hashed(&mut d, &mut depth, &long(9999), h, 5, FileType::Fifo).unwrap();
        assert_eq!(again, loc);
    }

    /// The cookie permutation: a bijection of the 62-bit domain that [`Cookies::position`]
    /// inverts, computed with the one-word SipHash path, keyed (another key, other
    /// cookies), and tolerant of garbage.
    #[test]
    fn cookies_are_a_keyed_permutation_of_positions() {
        let key: HashKey = *b"cookie-key-16-by";
        let sip = SipKey::new(&key);
        for (i, x) in [(0u8, 0u64), (5, 0x7FFF_FFFF), (3, 0x1234_5678)] {
            let mut m = vec![i];
            m.extend_from_slice(&(x as u32).to_le_bytes());
            assert_eq!(sip.hash_last_word(i as u64 | x << 8 | 5 << 56), siphash24(&key, &m));
        }
        let (a, b) = (Cookies::new(&key), Cookies::new(&[7; 16]));
        let mut seen = BTreeSet::new();
        let mut same = 0;
        for pos in (0..POSITIONS).step_by(9973).chain([POSITIONS - 1, 1, 2, 202, 203]) {
            let c = a.cookie(pos);
            assert!((FIRST_COOKIE..1 << 63).contains(&c));
            assert_eq!(a.position(c), Some(pos));
            assert_eq!(a.resume(c), Resume::After(pos));
            assert!(seen.insert(c), "two positions with cookie {c}");
            same += (b.cookie(pos) == c) as u32;
        }
        assert_eq!(same, 0, "another key gives other cookies");
        // Consecutive positions (one block's entries) get unrelated cookies.
        let run: Vec<u64> = (0..202).map(|p| a.cookie(p)).collect();
        assert!(run.windows(2).filter(|w| w[0] < w[1]).count() < 150, "cookies follow positions");
        assert!(run.iter().all(|&c| c > 1 << 40), "cookies of the first block are small");
        for c in [0, 1, 2] {
            assert_eq!(a.resume(c), Resume::Start);
        }
        // Garbage: beyond the domain, or a value whose preimage is no position.
        assert_eq!(a.resume(u64::MAX), Resume::End);
        assert_eq!(a.resume(FIRST_COOKIE + (1 << COOKIE_BITS)), Resume::End);
        let garbage = (0u64..).map(|i| FIRST_COOKIE + i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % (1 << COOKIE_BITS));
        let stray = garbage.take(1000).filter(|&c| a.position(c).is_none()).count();
        assert!(stray > 990, "almost every 62-bit value is no position's cookie ({stray})");
        assert_eq!(a.encrypt(a.decrypt(0x3FFF_FFFF_FFFF_FFFF)), 0x3FFF_FFFF_FFFF_FFFF);
    }

    /// Per-directory keys differ by inode number and by generation (a reused number).
    #[test]
    fn directory_keys_depend_on_the_directory() {
        let seed: HashKey = core::array::from_fn(|i| i as u8);
        let k = dir_hash_key(&seed, 5, 1);
        assert_ne!(k, dir_hash_key(&seed, 6, 1));
        assert_ne!(k, dir_hash_key(&seed, 5, 2));
        assert_ne!(k, dir_hash_key(&[9; 16], 5, 1));
        assert_ne!(k, dir_cookie_key(&seed, 5, 1));
        assert_eq!(u64::from_le_bytes(k[..8].try_into().unwrap()), siphash24(&seed, &[0, 1, 5, 0, 0, 0, 1, 0, 0, 0]));
        assert_eq!(u64::from_le_bytes(k[8..].try_into().unwrap()), siphash24(&seed, &[0, 2, 5, 0, 0, 0, 1, 0, 0, 0]));
    }

    fn long(i: u32) -> Vec<u8> {
        let mut n = format!("{i:08}").into_bytes();
        n.resize(255, b'x');
        n
    }

    /// Names forced onto one hash fill their bucket in all 64 levels (1152 names of 255
    /// bytes); with overflow the next ones go to the following buckets of the deepest level
    /// (here wrapping from bucket 4095 to 0, then 1), found again by lookup and removed.
    /// Lookups of names of other buckets do not read the overflowed names' buckets.
    #[test]
    fn full_bucket_overflows_into_the_following_buckets_of_the_deepest_level() {
        let mut d = Mem { overflow: true, ..Default::default() };
        let mut depth = 0;
        let h = 0x1234_5FFF; // bucket 4095 from level 12 on
        for i in 0..1152 {
            insert_hashed(&mut d, &mut depth, &long(i), h, i + 1, FileType::Regular).unwrap();
        }
        assert_eq!(depth, MAX_DEPTH);
        let home_idx = overflow_home(h);
        assert_eq!(block_position(home_idx), Some((OVERFLOW_LEVEL, 4095)));
        let home = |d: &mut Mem| read_block(d, home_idx).unwrap().unwrap().overflow();
        assert_eq!(home(&mut d), 0);
        // A miss of this bucket reads it in every level: 32 × 2 + 32 × 4 blocks.
        let miss_reads = |d: &mut Mem, hash: u32| {
            let before = d.reads;
            assert!(lookup_hashed(d, MAX_DEPTH, b"absent", hash).unwrap().is_none());
            d.reads - before
        };
        assert_eq!(miss_reads(&mut d, h), 192);
        // 24 more fill bucket 0 of the deepest level, then bucket 1.
        let mut locs = Vec::new();
        for i in 1152..1152 + 30 {
            let before = d.writes;
            let loc = insert_hashed(&mut d, &mut depth, &long(i), h, i + 1, FileType::Regular).unwrap();
            assert!(d.writes - before <= 2, "an overflowing insert writes at most two blocks");
            locs.push(loc);
        }
        assert_eq!(depth, MAX_DEPTH);
        assert_eq!(block_position(locs[0].block_idx), Some((OVERFLOW_LEVEL, 0)));
        assert_eq!(block_position(locs[29].block_idx), Some((OVERFLOW_LEVEL, 1)));
        assert_eq!(home(&mut d), 2);
        assert_eq!(miss_reads(&mut d, h), 192 + 2 * 4, "a miss of the full bucket reads its overflow too");
        // Names of bucket 0 share its blocks with the overflow but do not read on.
        assert_eq!(miss_reads(&mut d, 0x1000), 192);
        for (k, i) in (1152..1182).enumerate() {
            assert_eq!(lookup_hashed(&mut d, depth, &long(i), h).unwrap(), Some((locs[k], i + 1, FileType::Regular)));
        }
        for i in (0..1152).step_by(101) {
            assert_eq!(lookup_hashed(&mut d, depth, &long(i), h).unwrap().map(|x| x.1), Some(i + 1));
        }
        // The overflowed entries lie within distance 2 of their bucket (the placement
        // checks, which hash the names, run on real names in core/tests/dirhash.rs).
        let mut outside = Vec::new();
        for (&idx, b) in &d.blocks {
            for e in decode_block(idx, b, 0).unwrap().entries() {
                outside.extend(overflow_distance(idx, e.hash).map(|dist| (overflow_home(e.hash), dist)));
            }
        }
        assert_eq!(outside.len(), 30);
        assert!(outside.iter().all(|&(b, dist)| b == home_idx && (1..=2).contains(&dist)));
        // The listing holds them all, once.
        let all = all_entries(&mut d, depth, 0);
        assert_eq!(all.len(), 1182);
        // Removing an overflowed name and one of the home bucket: the next insert takes the
        // home bucket's slot (the lowest level with room), then the overflow slot.
        assert_eq!(remove_hashed(&mut d, depth, &long(1160), h), Some(1161));
        assert_eq!(lookup_hashed(&mut d, depth, &long(1160), h).unwrap(), None);
        assert_eq!(remove_hashed(&mut d, depth, &long(3), h), Some(4));
        let a = insert_hashed(&mut d, &mut depth, &long(5000), h, 5001, FileType::Fifo).unwrap();
        assert_ne!(block_position(a.block_idx).unwrap().0, OVERFLOW_LEVEL);
        let b = insert_hashed(&mut d, &mut depth, &long(5001), h, 5002, FileType::Fifo).unwrap();
        assert_eq!(b, locs[1160 - 1152]);
        assert_eq!(home(&mut d), 2, "the distance never shrinks");
        assert_eq!(
            insert_hashed(&mut d, &mut depth, &long(5001), h, 1, FileType::Regular),
            Err(Error::Exists),
            "a name in the overflow is seen by the insert's duplicate check"
        );
    }

    /// In a directory below full depth (every real one but an attacked one), lookups with
    /// overflow on read exactly the blocks they read without: a miss reads its bucket in
    /// every level, a hit no more.
    #[test]
    fn overflow_costs_lookups_in_other_directories_nothing() {
        let key: HashKey = *b"per-dir-key-0123";
        let mut reads = Vec::new();
        for overflow in [false, true] {
            let mut d = Mem { key, overflow, ..Default::default() };
            let mut depth = 0;
            for i in 0..20_000 {
                insert(&mut d, &mut depth, &name(i), i + 1, FileType::Regular).unwrap();
            }
            let before = d.reads;
            for i in (0..20_000).step_by(7) {
                assert!(lookup(&mut d, depth, &name(i)).unwrap().is_some());
            }
            let hits = d.reads - before;
            let before = d.reads;
            for i in 0..1000 {
                assert!(lookup(&mut d, depth, format!("absent-{i}").as_bytes()).unwrap().is_none());
            }
            let misses = d.reads - before;
            let per_miss: u64 = (0..depth).map(blocks_per_bucket).sum();
            assert_eq!(misses, 1000 * per_miss);
            reads.push((depth, hits, misses));
        }
        assert_eq!(reads[0], reads[1], "(depth, reads of 2858 hits, reads of 1000 misses)");
    }

    fn remove_hashed(d: &mut Mem, depth: u32, name: &[u8], hash: u32) -> Option<Ino> {
        let (mut b, loc) = locate(d, depth, name, hash).unwrap()?;
        let ino = b.target(loc.slot as usize).0;
        b.clear(loc.slot as usize);
        d.write(loc.block_idx, b.into_sealed()).unwrap();
        Some(ino)
    }

    /// A block full of 255-byte names (6 of 32 slots, 10 slots left: too few for another),
    /// with hash `hash`.
    fn full_block(idx: u64, hash: u32, first: u32) -> Box<Block> {
        let mut b = DentryBlock::empty(idx);
        for k in 0..6 {
            b.put(k * 32, hash, &long(first + k as u32), 1, FileType::Regular);
        }
        b.into_sealed()
    }

    /// When the name's bucket is full in every level and so is the whole deepest level, the
    /// insert ends (after reading that level once) with `DirectoryFull`, changing nothing.
    /// Without overflow (older images) a full bucket is `DirectoryFull` at once, and a block
    /// carrying an overflow distance is corrupt.
    #[test]
    fn a_full_deepest_level_refuses_and_older_images_never_overflow() {
        let h = 77;
        let mut d = Mem { overflow: true, ..Default::default() };
        for level in 0..MAX_DEPTH {
            let start = if level == OVERFLOW_LEVEL { max_block_index(OVERFLOW_LEVEL) } else { bucket_start(level, h) };
            let end =
                if level == OVERFLOW_LEVEL { max_block_index(MAX_DEPTH) } else { start + blocks_per_bucket(level) };
            for idx in start..end {
                let hash = if level == OVERFLOW_LEVEL { (idx - start) as u32 / 4 } else { h };
                d.blocks.insert(idx, full_block(idx, hash, idx as u32 * 8));
            }
        }
        let mut depth = MAX_DEPTH;
        let (reads, writes) = (d.reads, d.writes);
        assert_eq!(insert_hashed(&mut d, &mut depth, &long(9999), h, 1, FileType::Regular), Err(Error::DirectoryFull));
        assert_eq!(d.writes, writes);
        assert!(d.reads - reads <= 192 + 1 + 4095 * 4, "{} reads", d.reads - reads);

        let mut old = Mem { blocks: d.blocks.clone(), ..Default::default() };
        assert_eq!(
            insert_hashed(&mut old, &mut depth, &long(9999), h, 1, FileType::Regular),
            Err(Error::DirectoryFull)
        );
        assert_eq!(old.reads, 192, "without overflow: the name's bucket in every level");
        let home_idx = overflow_home(h);
        let mut b = decode_block(home_idx, &old.blocks[&home_idx], 0).unwrap();
        b.set_overflow(3);
        old.blocks.insert(home_idx, b.into_sealed());
        assert_eq!(
            lookup_hashed(&mut old, MAX_DEPTH, b"x", h).map(|_| ()),
            Err(Error::corrupt(1000 + home_idx, "dentry block: overflow distance in a directory without overflow"))
        );
        let b = decode_block(home_idx, &old.blocks[&home_idx], 0).unwrap();
        assert_eq!(b.check_placement(), Err("dentry block: overflow distance in a directory without overflow"));
        // Where a distance may be, and how large.
        let mut raw = *old.blocks[&home_idx];
        put_u32(&mut raw, HDR_OVERFLOW_OFFSET, MAX_OVERFLOW + 1);
        codec::seal(&mut raw);
        assert_eq!(corrupt_reason(home_idx, &raw), "dentry block: overflow distance beyond the level's buckets");
        let mut raw = *full_block(home_idx + 1, h, 0);
        put_u32(&mut raw, HDR_OVERFLOW_OFFSET, 1);
        codec::seal(&mut raw);
        assert_eq!(
            corrupt_reason(home_idx + 1, &raw),
            "dentry block: overflow distance outside the first block of a deepest-level bucket"
        );
    }

    /// Two real names with the same 32-bit hash (found by a birthday search).
    #[test]
    fn real_hash_collision() {
        let (a, b) = COLLIDING;
        assert_ne!(a, b);
        assert_eq!(name_hash(a), name_hash(b));
        let mut d = Mem::default();
        let mut depth = 0;
        let la = insert(&mut d, &mut depth, a, 1, FileType::Regular).unwrap();
        let lb = insert(&mut d, &mut depth, b, 2, FileType::Symlink).unwrap();
        assert_eq!(lookup(&mut d, depth, a).unwrap(), Some((la, 1, FileType::Regular)));
        assert_eq!(lookup(&mut d, depth, b).unwrap(), Some((lb, 2, FileType::Symlink)));
        assert_eq!(remove(&mut d, depth, a).unwrap(), Some((1, FileType::Regular)));
        assert_eq!(lookup(&mut d, depth, a).unwrap(), None);
        assert_eq!(lookup(&mut d, depth, b).unwrap(), Some((lb, 2, FileType::Symlink)));
    }

    /// Both hash to 0x27C249A3.
    const COLLIDING: (&[u8], &[u8]) = (b"f6059", b"f264602");

    #[test]
    fn bucket_overflow_grows_depth() {
        let mut d = Mem::default();
        let mut depth = 0;
        // Level 0 is one bucket of two blocks: 404 one-slot names fill it.
        for i in 0..(2 * SLOTS_PER_BLOCK as u32) {
            insert(&mut d, &mut depth, format!("{i:x}").as_bytes(), i + 1, FileType::Regular).unwrap();
            assert_eq!(depth, 1, "level 0 fills before level 1 is used");
        }
        insert(&mut d, &mut depth, b"one-more", 9999, FileType::Regular).unwrap();
        assert_eq!(depth, 2);
        assert_eq!(d.blocks.len(), 3);
        assert_eq!(lookup(&mut d, depth, b"one-more").unwrap().unwrap().1, 9999);
    }

    #[test]
    fn hundred_thousand_entries() {
        const N: u32 = 100_000;
        let mut d = Mem::default();
        let mut depth = 0;
        let mut locs = Vec::with_capacity(N as usize);
        for i in 0..N {
            locs.push(insert(&mut d, &mut depth, &name(i), i + 1, FileType::Regular).unwrap());
        }
        let max_reads: u64 = (0..depth).map(blocks_per_bucket).sum();
        assert!(max_reads <= depth as u64 * BLOCKS_PER_BUCKET_HIGH as u64);
        for i in 0..N {
            let before = d.reads;
            let got = lookup(&mut d, depth, &name(i)).unwrap();
            assert_eq!(got, Some((locs[i as usize], i + 1, FileType::Regular)));
            assert!(d.reads - before <= max_reads);
        }
        let before = d.reads;
        assert_eq!(lookup(&mut d, depth, b"absent").unwrap(), None);
        assert_eq!(d.reads - before, max_reads, "a miss reads exactly its bucket in every level");

        // Full listing: every entry once, in position order, cookies unique and of the
        // directory's permutation.
        let all = all_entries(&mut d, depth, 0);
        assert_eq!(all.len(), N as usize);
        let cookies = Cookies::new(&NO_HASH_KEY);
        let positions: Vec<u64> = all.iter().map(|e| cookies.position(e.cookie).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
        assert!(all.windows(2).any(|w| w[0].cookie > w[1].cookie), "cookies do not follow positions");
        let mut seen = vec![false; N as usize];
        for e in &all {
            let i = e.ino - 1;
            assert_eq!(e.name, name(i));
            assert_eq!(e.cookie, cookies.cookie(position_of(locs[i as usize])));
            assert!(e.cookie >= FIRST_COOKIE && e.cookie < 1 << 63);
            assert!(!core::mem::replace(&mut seen[i as usize], true));
        }
        // Resuming after any cookie yields exactly the rest (sampled, plus the edges).
        let mut resume_points: Vec<usize> = (0..all.len()).step_by(9973).collect();
        resume_points.push(all.len() - 1);
        for &k in &resume_points {
            let mut got = Vec::new();
            iterate(&mut d, depth, all[k].cookie, &mut |e| {
                got.push(e.cookie);
                got.len() < 5
            })
            .unwrap();
            let want: Vec<u64> = all[k + 1..].iter().take(5).map(|e| e.cookie).collect();
            assert_eq!(got, want);
        }
        // The synthetic cookies (".", "..") start the listing; the cookie of a position
        // with no entry (a removed one) resumes after it; garbage ends the listing.
        let first = |d: &mut Mem, c: u64| {
            let mut first = None;
            iterate(d, depth, c, &mut |e| {
                first = Some(e.cookie);
                false
            })
            .unwrap();
            first
        };
        for c in [0, 1, 2] {
            assert_eq!(first(&mut d, c), Some(all[0].cookie));
        }
        let k = (500..).find(|&k| positions[k + 1] > positions[k] + 1).unwrap();
        assert_eq!(
            first(&mut d, cookies.cookie(positions[k] + 1)),
            Some(all[k + 1].cookie),
            "a position with no entry"
        );
        for c in [u64::MAX, 1 << 63, FIRST_COOKIE + (1 << COOKIE_BITS), cookies.cookie(POSITIONS - 1) ^ 1] {
            let want = cookies.position(c).and_then(|p| positions.iter().position(|&q| q > p)).map(|k| all[k].cookie);
            assert_eq!(first(&mut d, c), want, "cookie {c:#x}");
        }
        assert!(d.blocks.len() as u64 <= max_block_index(depth), "blocks beyond the table");

        for i in 0..N {
            assert_eq!(remove(&mut d, depth, &name(i)).unwrap(), Some((i + 1, FileType::Regular)));
        }
        assert!(is_empty(&mut d, depth).unwrap());
        assert!(all_entries(&mut d, depth, 0).is_empty());
    }

    /// A valid block with a mix of entries, for the corruption tests.
    fn sample_block() -> Box<Block> {
        let mut b = DentryBlock::empty(5);
        let mut slot = 0;
        for (i, len) in [1usize, 8, 9, 30, 255, 3].iter().enumerate() {
            let n = vec![b'a' + i as u8; *len];
            b.put(slot, name_hash(&n), &n, 100 + i as u32, FileType::Regular);
            slot += slots_for(*len) + 1; // leave a free slot between entries
        }
        b.into_sealed()
    }

    fn reseal(mut b: Box<Block>) -> Box<Block> {
        codec::seal(&mut b);
        b
    }

    fn corrupt_reason(idx: u64, b: &Block) -> &'static str {
        match decode_block(idx, b, 42) {
            Err(Error::Corrupt { block: 42, reason }) => reason,
            other => panic!("expected corruption, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn sample_block_is_valid() {
        let b = sample_block();
        let blk = decode_block(5, &b, 0).unwrap();
        assert_eq!(blk.entries().count(), 6);
        assert_eq!(blk.used_slots(), (1 + 1 + 2 + 4 + 32 + 1) as u32);
    }

    #[test]
    fn every_single_bit_flip_is_detected() {
        let good = sample_block();
        for byte in 0..BLOCK_SIZE {
            for bitno in 0..8 {
                let mut b = good.clone();
                b[byte] ^= 1 << bitno;
                let _ = corrupt_reason(5, &b);
            }
        }
    }

    #[test]
    fn specific_corruptions() {
        let good = sample_block();
        let mut b = good.clone();
        b[0] = b'X';
        assert_eq!(corrupt_reason(5, &reseal(b)), "dentry block: bad magic");
        assert_eq!(corrupt_reason(6, &good), "dentry block: stored index differs from its position in the directory");
        assert_eq!(
            corrupt_reason(5 + (1 << 32), &good),
            "dentry block: stored index differs from its position in the directory"
        );
        let mut b = good.clone();
        b[100] ^= 1;
        assert_eq!(corrupt_reason(5, &b), "dentry block: bad checksum");
        // Zeroed block (e.g. an unwritten block read as data).
        assert_eq!(corrupt_reason(0, &[0u8; BLOCK_SIZE]), "dentry block: bad magic");
        // An entry whose slot is not marked used (count adjusted to the bitmap).
        let b = reseal({
            let mut b = good.clone();
            b[BITMAP_OFFSET] &= !1;
            let c = get_u16(&b[..], HDR_COUNT_OFFSET) - 1;
            put_u16(&mut b[..], HDR_COUNT_OFFSET, c);
            b
        });
        assert_eq!(corrupt_reason(5, &b), "dentry block: entry slot not marked used");

        let with = |f: &dyn Fn(&mut Block)| {
            let mut b = good.clone();
            f(&mut b);
            reseal(b)
        };
        // name_len 0 on a used head slot.
        let b = with(&|b| put_u16(b, rec_off(0) + REC_NAME_LEN, 0));
        assert_eq!(corrupt_reason(5, &b), "dentry block: name slot with no entry before it");
        let b = with(&|b| put_u16(b, rec_off(0) + REC_NAME_LEN, 256));
        assert_eq!(corrupt_reason(5, &b), "dentry block: name longer than 255 bytes");
        // The 8-byte name at slot 2 grown into the free slot 3.
        let b = with(&|b| put_u16(b, rec_off(2) + REC_NAME_LEN, 9));
        assert_eq!(corrupt_reason(5, &b), "dentry block: name slot not marked used");
        let b = with(&|b| put_u16(b, rec_off(0) + REC_NAME_LEN, 2));
        assert_eq!(corrupt_reason(5, &b), "dentry block: name contains NUL or '/'");
        // The 8-byte name at slot 2 shortened to 7: its last byte becomes padding.
        let b = with(&|b| put_u16(b, rec_off(2) + REC_NAME_LEN, 7));
        assert_eq!(corrupt_reason(5, &b), "dentry block: name padding not zero");
        let b = with(&|b| put_u32(b, rec_off(0) + REC_INO, 0));
        assert_eq!(corrupt_reason(5, &b), "dentry block: entry with inode number 0");
        let b = with(&|b| put_u8(b, rec_off(0) + REC_TYPE, 0));
        assert_eq!(corrupt_reason(5, &b), "dentry block: bad file type");
        let b = with(&|b| put_u8(b, rec_off(0) + REC_RESERVED, 1));
        assert_eq!(corrupt_reason(5, &b), "dentry block: reserved field not zero");
        let b = with(&|b| put_u32(b, HDR_OVERFLOW_OFFSET, 1));
        assert_eq!(
            corrupt_reason(5, &b),
            "dentry block: overflow distance outside the first block of a deepest-level bucket"
        );
        let b = with(&|b| b[TAIL_OFFSET] = 1);
        assert_eq!(corrupt_reason(5, &b), "dentry block: reserved field not zero");
        let b = with(&|b| put_u16(b, HDR_COUNT_OFFSET, 3));
        assert_eq!(corrupt_reason(5, &b), "dentry block: used-slot count does not match the bitmap");
        // Garbage bitmap: padding bits, stray bits (count adjusted so the walk sees them).
        let b = with(&|b| b[BITMAP_OFFSET + BITMAP_SIZE - 1] = 0x80);
        assert_eq!(corrupt_reason(5, &b), "dentry block: bitmap bit set beyond the last slot");
        let b = with(&|b| {
            b[BITMAP_OFFSET + 24] = 0xFF;
            let c = get_u16(b, HDR_COUNT_OFFSET) + 8;
            put_u16(b, HDR_COUNT_OFFSET, c);
        });
        assert_eq!(corrupt_reason(5, &b), "dentry block: name slot with no entry before it");
        // A free slot with leftovers.
        let b = with(&|b| b[name_off(200)] = b'q');
        assert_eq!(corrupt_reason(5, &b), "dentry block: free slot not zeroed");
        // A continuation with a record.
        let b = with(&|b| put_u32(b, rec_off(5) + REC_HASH, 1));
        assert_eq!(corrupt_reason(5, &b), "dentry block: continuation record not zeroed");
        // Bad bytes in a name.
        let b = with(&|b| b[name_off(0)] = b'/');
        assert_eq!(corrupt_reason(5, &b), "dentry block: name contains NUL or '/'");
        // A name that would run past the last slot.
        let b = with(&|b| {
            b.fill(0);
            put_u32(b, HDR_MAGIC_OFFSET, DENTRY_MAGIC);
            put_u32(b, HDR_IDX_OFFSET, 5);
            put_u16(b, HDR_COUNT_OFFSET, 1);
            b[BITMAP_OFFSET + 201 / 8] = 1 << (201 % 8);
            put_u16(b, rec_off(201) + REC_NAME_LEN, 9);
            put_u32(b, rec_off(201) + REC_INO, 1);
            put_u8(b, rec_off(201) + REC_TYPE, FileType::Regular.dentry_code());
        });
        assert_eq!(corrupt_reason(5, &b), "dentry block: name runs past the last slot");
    }

    #[test]
    fn corrupt_block_in_directory_reports_its_address() {
        let mut d = Mem::default();
        let mut depth = 0;
        insert(&mut d, &mut depth, b"a", 1, FileType::Regular).unwrap();
        let idx = *d.blocks.keys().next().unwrap();
        d.blocks.get_mut(&idx).unwrap()[20] ^= 4;
        let want = Err(Error::Corrupt { block: 1000 + idx, reason: "dentry block: bad checksum" });
        assert_eq!(lookup(&mut d, depth, b"a").map(|_| ()), want);
        assert_eq!(iterate(&mut d, depth, 0, &mut |_| true), want);
        assert_eq!(is_empty(&mut d, depth).map(|_| ()), want);
        assert_eq!(insert(&mut d, &mut depth, b"b", 2, FileType::Regular).map(|_| ()), want);
        assert_eq!(remove(&mut d, depth, b"a").map(|_| ()), want);
    }

    #[test]
    fn placement_check() {
        let mut d = Mem::default();
        let mut depth = 0;
        for i in 0..2000 {
            insert(&mut d, &mut depth, &name(i), i + 1, FileType::Regular).unwrap();
        }
        for (&idx, b) in &d.blocks {
            decode_block(idx, b, 0).unwrap().check_placement().unwrap();
        }
        // An entry with a wrong hash, or in the wrong bucket.
        let mut b = DentryBlock::empty(2);
        b.put(0, 1, b"x", 1, FileType::Regular);
        assert_eq!(b.check_placement(), Err("dentry block: stored hash is not the hash of the name"));
        let n = (0u32..).map(name).find(|n| name_hash(n) & 1 == 0).unwrap();
        let mut b = DentryBlock::empty(max_block_index(1) + 2); // level 1, bucket 1
        b.put(0, name_hash(&n), &n, 1, FileType::Regular);
        assert_eq!(b.check_placement(), Err("dentry block: entry in the wrong hash bucket"));
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            /// Random bytes: never a panic; only the expected errors.
            #[test]
            fn random_blocks_never_panic(bytes in proptest::collection::vec(any::<u8>(), BLOCK_SIZE), idx in 0u64..10) {
                let mut b = [0u8; BLOCK_SIZE];
                b.copy_from_slice(&bytes);
                prop_assert!(decode_block(idx, &b, 1).is_err());
                // Make it get past magic, index and CRC, so the structural checks see it.
                put_u32(&mut b, HDR_MAGIC_OFFSET, DENTRY_MAGIC);
                put_u32(&mut b, HDR_IDX_OFFSET, idx as u32);
                codec::seal(&mut b);
                match decode_block(idx, &b, 1) {
                    Ok(blk) => { let _ = blk.entries().count(); }
                    Err(e) => {
                        let ok = matches!(e, Error::Corrupt { block: 1, .. });
                        prop_assert!(ok, "unexpected error {:?}", e);
                    }
                }
            }

            /// Targeted damage to a valid block, resealed: rejected or still coherent.
            #[test]
            fn mutated_blocks_are_rejected_or_coherent(
                edits in proptest::collection::vec((0usize..CRC_OFFSET, any::<u8>()), 1..8),
                structural in any::<bool>(),
            ) {
                let mut b = sample_block();
                for (off, v) in edits {
                    // Half the cases aim at the header, bitmap and records.
                    let off = if structural { off % NAMES_OFFSET } else { off };
                    b[off] = v;
                }
                let b = reseal(b);
                if let Ok(blk) = decode_block(5, &b, 1) {
                    let mut used = 0;
                    for e in blk.entries() {
                        prop_assert!(!e.name.is_empty() && e.name.len() <= NAME_MAX);
                        prop_assert!(e.ino != 0);
                        used += slots_for(e.name.len());
                    }
                    prop_assert_eq!(used as u32, blk.used_slots());
                    // Mutations on a decoded block keep it decodable.
                    let mut blk = blk;
                    let first = blk.entries().next().map(|e| e.slot);
                    if let Some(s) = first {
                        blk.clear(s as usize);
                    }
                    if let Some(s) = blk.find_free(32) {
                        blk.put(s, 9, &[b'k'; 255], 3, FileType::Socket);
                    }
                    let again = blk.into_sealed();
                    prop_assert!(decode_block(5, &again, 1).is_ok());
                }
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            /// Random operation sequences agree with a model.
            #[test]
            fn operations_match_a_model(ops in proptest::collection::vec((0u8..3, 0u32..300, 1usize..40), 1..300)) {
                let mut d = Mem::default();
                let mut depth = 0;
                let mut model: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
                for (op, key, len) in ops {
                    let mut n = format!("{key}-").into_bytes();
                    n.resize(len.max(n.len()), b'.');
                    match op {
                        0 => {
                            if model.contains_key(&n) {
                                continue;
                            }
                            insert(&mut d, &mut depth, &n, key + 1, FileType::Regular).unwrap();
                            model.insert(n, key + 1);
                        }
                        1 => {
                            let got = remove(&mut d, depth, &n).unwrap().map(|x| x.0);
                            prop_assert_eq!(got, model.remove(&n));
                        }
                        _ => {
                            let got = lookup(&mut d, depth, &n).unwrap().map(|x| x.1);
                            prop_assert_eq!(got, model.get(&n).copied());
                        }
                    }
                }
                let listed: BTreeMap<Vec<u8>, u32> =
                    all_entries(&mut d, depth, 0).into_iter().map(|e| (e.name, e.ino)).collect();
                prop_assert_eq!(&listed, &model);
                prop_assert_eq!(is_empty(&mut d, depth).unwrap(), model.is_empty());
            }
        }
    }
}
