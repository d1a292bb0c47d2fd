//! Little-endian field access, typed block views and the CRC32C convention shared by
//! every checksummed block.
//!
//! On-disk structures are `#[repr(C)]` structs of `zerocopy::little_endian` fields (and byte
//! arrays), deriving `FromBytes`, `IntoBytes`, `KnownLayout`, `Immutable` and `Unaligned`:
//! every byte pattern is a valid value, the layout has no padding, and the alignment is 1,
//! so a block is read and written through them by safe code only (the core keeps
//! `#![forbid(unsafe_code)]`). Each module asserts at compile time that its types have the
//! sizes and field offsets FORMAT.md states. [`view`] and [`view_mut`] give the typed view
//! of a whole block; [`get_u32`] and friends remain for the few places (payload streams,
//! tests, fuzzers) that address raw bytes.
//!
//! Every checksummed block in rollfs keeps its CRC32C in its last four bytes
//! ([`CRC_OFFSET`]), covering bytes `0..CRC_OFFSET`. One convention for all block types
//! keeps the verification code single and the format easy to state.

use crate::layout::BLOCK_SIZE;
use crate::Block;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// Offset of the CRC32C in every checksummed block.
pub const CRC_OFFSET: usize = BLOCK_SIZE - 4;

/// The typed view of a whole block as the on-disk structure `T` (a type of exactly
/// [`BLOCK_SIZE`] bytes and alignment 1: checked at compile time, so the cast cannot fail).
#[inline]
pub fn view<T: FromBytes + KnownLayout + Immutable + Unaligned>(b: &Block) -> &T {
    const { assert!(core::mem::size_of::<T>() == BLOCK_SIZE) };
    match T::ref_from_bytes(&b[..]) {
        Ok(t) => t,
        // Unreachable: the size is asserted above and `Unaligned` rules out misalignment.
        Err(_) => unreachable!("block view: size or alignment"),
    }
}

/// The mutable typed view of a whole block (see [`view`]).
#[inline]
pub fn view_mut<T: FromBytes + IntoBytes + KnownLayout + Unaligned>(b: &mut Block) -> &mut T {
    const { assert!(core::mem::size_of::<T>() == BLOCK_SIZE) };
    match T::mut_from_bytes(&mut b[..]) {
        Ok(t) => t,
        Err(_) => unreachable!("block view: size or alignment"),
    }
}

#[inline]
pub fn get_u8(b: &[u8], off: usize) -> u8 {
    b[off]
}
#[inline]
pub fn get_u16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}
#[inline]
pub fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}
#[inline]
pub fn get_u64(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}
#[inline]
pub fn get_i64(b: &[u8], off: usize) -> i64 {
    get_u64(b, off) as i64
}
#[inline]
pub fn put_u8(b: &mut [u8], off: usize, v: u8) {
    b[off] = v;
}
#[inline]
pub fn put_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
#[inline]
pub fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
#[inline]
pub fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}
#[inline]
pub fn put_i64(b: &mut [u8], off: usize, v: i64) {
    put_u64(b, off, v as u64);
}

#[cfg(feature = "embedder-crc32c")]
#[allow(unsafe_code)]
extern "Rust" {
    /// CRC32C of `bytes` continued from `seed` (`crc32c::crc32c_append`), defined by the
    /// embedding that enables `embedder-crc32c`. It must be that function exactly: every
    /// checksum on disk is compared with it.
    fn rollfs_crc32c_append(seed: u32, bytes: &[u8]) -> u32;
}

/// CRC32C continued from `seed` (0 starts a fresh CRC): the one place the core computes it.
#[inline]
#[cfg_attr(feature = "embedder-crc32c", allow(unsafe_code))]
fn crc32c_append(seed: u32, bytes: &[u8]) -> u32 {
    #[cfg(feature = "embedder-crc32c")]
    {
        // SAFETY: the embedding that enables the feature defines the function with this
        // signature (the linker refuses a build where it is missing).
        unsafe { rollfs_crc32c_append(seed, bytes) }
    }
    #[cfg(not(feature = "embedder-crc32c"))]
    {
        crc32c::crc32c_append(seed, bytes)
    }
}

/// CRC32C of a byte slice.
pub fn crc(bytes: &[u8]) -> u32 {
    crc32c_append(0, bytes)
}

/// Computes and stores the block's CRC (covering bytes `0..CRC_OFFSET`).
pub fn seal(block: &mut Block) {
    let c = crc(&block[..CRC_OFFSET]);
    put_u32(block, CRC_OFFSET, c);
}

/// True when the block's stored CRC matches its contents.
pub fn crc_ok(block: &Block) -> bool {
    crc(&block[..CRC_OFFSET]) == get_u32(block, CRC_OFFSET)
}

/// CRC32C continued from `seed`: node blocks are sealed with a seed derived from the
/// volume UUID, so that node blocks left on the device by an earlier filesystem can never
/// pass as this filesystem's (roll-forward walks raw log positions and must not be fooled).
pub fn crc_seeded(seed: u32, bytes: &[u8]) -> u32 {
    crc32c_append(seed, bytes)
}

pub fn seal_seeded(block: &mut Block, seed: u32) {
    let c = crc_seeded(seed, &block[..CRC_OFFSET]);
    put_u32(block, CRC_OFFSET, c);
}

pub fn crc_ok_seeded(block: &Block, seed: u32) -> bool {
    crc_seeded(seed, &block[..CRC_OFFSET]) == get_u32(block, CRC_OFFSET)
}

// ---- footer of NAT, SIT and SSA blocks --------------------------------------------------

use crate::error::{Error, Result};
use crate::layout::{META_FOOTER_OFFSET, META_FOOTER_SIZE};
use core::mem::{offset_of, size_of};
use zerocopy::little_endian::{U32, U64};

/// The footer of NAT, SIT and SSA blocks (the last 24 bytes, CRC last).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct MetaFooter {
    pub magic: U32,
    /// The block's index in its table (for SSA blocks: the segment number).
    pub index: U32,
    /// The checkpoint that wrote the block.
    pub cp_version: U64,
    pub reserved: [u8; 4],
    pub crc: U32,
}

/// Any NAT, SIT or SSA block seen only through its footer.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawMetaBlock {
    pub payload: [u8; META_FOOTER_OFFSET],
    pub footer: MetaFooter,
}

pub const META_OFF_MAGIC: usize = META_FOOTER_OFFSET + offset_of!(MetaFooter, magic);
pub const META_OFF_INDEX: usize = META_FOOTER_OFFSET + offset_of!(MetaFooter, index);
pub const META_OFF_CP_VERSION: usize = META_FOOTER_OFFSET + offset_of!(MetaFooter, cp_version);

const _: () = {
    assert!(size_of::<MetaFooter>() == META_FOOTER_SIZE);
    assert!(size_of::<RawMetaBlock>() == BLOCK_SIZE);
    assert!(offset_of!(RawMetaBlock, footer) == META_FOOTER_OFFSET);
    assert!(META_OFF_MAGIC == 4072);
    assert!(META_OFF_INDEX == 4076);
    assert!(META_OFF_CP_VERSION == 4080);
    assert!(META_FOOTER_OFFSET + offset_of!(MetaFooter, reserved) == 4088);
    assert!(META_FOOTER_OFFSET + offset_of!(MetaFooter, crc) == CRC_OFFSET);
};

/// Stamps and seals a NAT/SIT/SSA block written by checkpoint `cp_version`.
pub fn meta_seal(block: &mut Block, magic: u32, index: u32, cp_version: u64) {
    let f = &mut view_mut::<RawMetaBlock>(block).footer;
    f.magic.set(magic);
    f.index.set(index);
    f.cp_version.set(cp_version);
    f.reserved = [0; 4];
    seal(block);
}

/// Checks a NAT/SIT/SSA block read from `addr`: CRC, magic, index, and that it was written
/// no later than the checkpoint being loaded (`cp_version`).
pub fn meta_check(block: &Block, addr: u64, magic: u32, index: u32, cp_version: u64, what: &'static str) -> Result<()> {
    let f = &view::<RawMetaBlock>(block).footer;
    if f.magic.get() != magic {
        return Err(Error::corrupt(addr, what));
    }
    if !crc_ok(block) {
        return Err(Error::corrupt(addr, "metadata block: checksum mismatch"));
    }
    if f.index.get() != index {
        return Err(Error::corrupt(addr, "metadata block: wrong index (misplaced block)"));
    }
    if f.cp_version.get() > cp_version {
        return Err(Error::corrupt(addr, "metadata block: newer than its checkpoint"));
    }
    Ok(())
}
