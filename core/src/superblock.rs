//! The superblock: geometry, format version and features, in two identical copies
//! (blocks 0 and 1). Written once by mkfs; read at mount, where the first copy that passes
//! its checks is used, so one destroyed copy costs nothing.

use crate::codec::*;
use crate::error::{Error, Result};
use crate::layout::*;
use crate::{zero_block, Block};
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem::{offset_of, size_of};
use zerocopy::little_endian::{I64, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

pub const SB_MAGIC: u32 = 0x5346_4C52; // "RLFS" in little-endian bytes
/// Format 2 added a checksum beside every data block address (format 1 images are refused
/// with a message that says so).
pub const FORMAT_VERSION_MAJOR: u16 = 2;
pub const FORMAT_VERSION_MINOR: u16 = 1;

/// Feature bits a mount may ignore.
pub const FEATURE_COMPAT_ATOMIC_WRITE: u32 = 1 << 0;
/// Directories, version 2: names are hashed with a key of their directory, derived from
/// `hash_seed` and the directory's inode number and generation (`dir::dir_hash_key`), and a
/// bucket full in every level overflows into the following buckets of the deepest level
/// (the overflow distance in the dentry block header) instead of refusing the name. An
/// older reader would look names up in the wrong buckets, hence incompatible.
pub const FEATURE_INCOMPAT_DIR_V2: u32 = 1 << 0;
/// Persistent reservations: a hole reserved by `fallocate` is the pointer value
/// `NEW_ADDR` in the node that maps it (it reads as zeros), counted in the checkpoint's
/// `reserved_blocks` and in the inode's `blocks`. An older reader would take `NEW_ADDR` on
/// disk for corruption, hence incompatible. DESIGN.md, *Format 3*.
pub const FEATURE_INCOMPAT_PREALLOC: u32 = 1 << 1;
/// Inline data: a regular file of at most `INLINE_DATA_MAX` bytes that never had a block
/// keeps its bytes in its inode's pointer area (`iflags` bit `IFLAG_INLINE_DATA`). An older
/// reader would take the bytes for pointers, hence incompatible. DESIGN.md, *Inline data*.
pub const FEATURE_INCOMPAT_INLINE: u32 = 1 << 2;
/// Room to grow (`mkfs --max-size`, `rollfs resize`): the NAT, SIT and SSA areas and the
/// checkpoint packs are laid out for `max_main_segments` segments, and each checkpoint
/// header records the size the filesystem has (which a resize raises). An older reader
/// would find the areas out of place and take a checkpoint's size for the superblock's,
/// hence incompatible. DESIGN.md, *Growing an image*.
pub const FEATURE_INCOMPAT_GROW: u32 = 1 << 3;
/// Namespace records: every directory-entry change since the checkpoint is written as a
/// record node (node type 5, `nsrec.rs`) in the warm node chain before the fsync batch that
/// needs it, and roll-forward replays records and batches in chain order. An older reader's
/// roll-forward would stop at the first record node and lose the fsyncs after it, hence
/// incompatible. DESIGN.md, *Namespace records in the chain*.
pub const FEATURE_INCOMPAT_NS_RECORDS: u32 = 1 << 4;
/// Data beside its chain: a small fsync batch's data blocks are written in the warm node
/// log right after its nodes (its inode's `next_blkaddr` skips them), so the batch is one
/// device range; their summary entries carry [`crate::ssa::SSA_OFS_DATA`]. An older reader
/// would find data pointers into node segments (its fsck and repair clear them), hence
/// incompatible. DESIGN.md, *Data beside its chain*.
pub const FEATURE_INCOMPAT_MIXED_NODE: u32 = 1 << 5;
/// Summaries of open segments in the checkpoint: the summary block of each segment a log is
/// writing at a checkpoint travels in the checkpoint's payload (its entries up to the last
/// owned block) instead of being written to its SSA slot, so a checkpoint writes no
/// scattered summary blocks for segments still being filled. An older reader would read
/// the stale slots of those segments, hence incompatible. DESIGN.md, *SSA of open segments
/// in the checkpoint payload*.
pub const FEATURE_INCOMPAT_CP_SUMMARIES: u32 = 1 << 6;
/// Feature bits this code understands; an image with other incompatible bits is refused.
pub const FEATURE_INCOMPAT_SUPPORTED: u32 = FEATURE_INCOMPAT_DIR_V2
    | FEATURE_INCOMPAT_PREALLOC
    | FEATURE_INCOMPAT_INLINE
    | FEATURE_INCOMPAT_GROW
    | FEATURE_INCOMPAT_NS_RECORDS
    | FEATURE_INCOMPAT_MIXED_NODE
    | FEATURE_INCOMPAT_CP_SUMMARIES;

/// The reason of the error for a superblock with incompatible feature bits this code does
/// not know (a newer rollfs made the image): the CLI names the bits (`native/src/probe.rs`).
pub const UNSUPPORTED_FEATURE_REASON: &str = "superblock: unsupported incompatible feature";
/// Data checksums: every data pointer's checksum is the CRC32C of its block, and reads verify
/// it. Read-only compatible: a reader that ignores it reads correct data unverified, but a
/// writer that ignored it would leave wrong checksums behind.
pub const FEATURE_RO_COMPAT_DATASUM: u32 = 1 << 0;
pub const FEATURE_RO_COMPAT_SUPPORTED: u32 = FEATURE_RO_COMPAT_DATASUM;

/// The superblock as it is on disk: one whole block, little-endian, CRC in the last four
/// bytes (as every checksummed block). FORMAT.md, section "Superblock".
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawSuperblock {
    pub magic: U32,
    pub version_major: U16,
    pub version_minor: U16,
    pub feature_compat: U32,
    pub feature_incompat: U32,
    pub feature_ro_compat: U32,
    pub block_size_log2: U32,
    pub total_blocks: U64,
    pub segment_blocks: U32,
    pub cp_pack_blocks: U32,
    pub nat_start: U32,
    pub nat_blocks: U32,
    pub sit_start: U32,
    pub sit_blocks: U32,
    pub ssa_start: U32,
    pub main_start: U32,
    pub main_segments: U32,
    pub nid_count: U32,
    pub reserved_segments: U32,
    pub root_ino: U32,
    pub uuid: [u8; 16],
    /// Zero-padded; a label of exactly `SB_LABEL_MAX` bytes has no terminator.
    pub label: [u8; SB_LABEL_MAX],
    pub create_sec: I64,
    pub create_nsec: U32,
    /// Key of the directory name hash (`dir::name_hash_keyed`); all zero on images made
    /// before it existed, which keep the unkeyed hash.
    pub hash_seed: [u8; 16],
    /// Root reserve chosen at mkfs: 0 = not chosen (the mount's default applies), else the
    /// percentage of the device plus one (1..=51).
    pub root_reserve: U32,
    /// `FEATURE_INCOMPAT_GROW`: the largest device `rollfs resize` may grow to, in blocks
    /// (`mkfs --max-size`); 0 without the feature.
    pub max_blocks: U64,
    /// `FEATURE_INCOMPAT_GROW`: segments the metadata areas have room for; 0 without it.
    pub max_main_segments: U32,
    /// `FEATURE_INCOMPAT_GROW`: the overprovisioning percentage mkfs was given (0..=50), so
    /// that a resize sizes the cleaner's reserve as mkfs would; 0 without the feature.
    pub overprovision_pct: U32,
    pub reserved: [u8; CRC_OFFSET - SB_USED_BYTES],
    pub crc: U32,
}

pub const SB_OFF_MAGIC: usize = offset_of!(RawSuperblock, magic);
pub const SB_OFF_VERSION_MAJOR: usize = offset_of!(RawSuperblock, version_major);
pub const SB_OFF_VERSION_MINOR: usize = offset_of!(RawSuperblock, version_minor);
pub const SB_OFF_FEATURE_COMPAT: usize = offset_of!(RawSuperblock, feature_compat);
pub const SB_OFF_FEATURE_INCOMPAT: usize = offset_of!(RawSuperblock, feature_incompat);
pub const SB_OFF_FEATURE_RO_COMPAT: usize = offset_of!(RawSuperblock, feature_ro_compat);
pub const SB_OFF_BLOCK_SIZE_LOG2: usize = offset_of!(RawSuperblock, block_size_log2);
pub const SB_OFF_TOTAL_BLOCKS: usize = offset_of!(RawSuperblock, total_blocks);
pub const SB_OFF_SEGMENT_BLOCKS: usize = offset_of!(RawSuperblock, segment_blocks);
pub const SB_OFF_CP_PACK_BLOCKS: usize = offset_of!(RawSuperblock, cp_pack_blocks);
pub const SB_OFF_NAT_START: usize = offset_of!(RawSuperblock, nat_start);
pub const SB_OFF_NAT_BLOCKS: usize = offset_of!(RawSuperblock, nat_blocks);
pub const SB_OFF_SIT_START: usize = offset_of!(RawSuperblock, sit_start);
pub const SB_OFF_SIT_BLOCKS: usize = offset_of!(RawSuperblock, sit_blocks);
pub const SB_OFF_SSA_START: usize = offset_of!(RawSuperblock, ssa_start);
pub const SB_OFF_MAIN_START: usize = offset_of!(RawSuperblock, main_start);
pub const SB_OFF_MAIN_SEGMENTS: usize = offset_of!(RawSuperblock, main_segments);
pub const SB_OFF_NID_COUNT: usize = offset_of!(RawSuperblock, nid_count);
pub const SB_OFF_RESERVED_SEGMENTS: usize = offset_of!(RawSuperblock, reserved_segments);
pub const SB_OFF_ROOT_INO: usize = offset_of!(RawSuperblock, root_ino);
pub const SB_OFF_UUID: usize = offset_of!(RawSuperblock, uuid);
pub const SB_OFF_LABEL: usize = offset_of!(RawSuperblock, label);
pub const SB_LABEL_MAX: usize = 32;
pub const SB_OFF_CREATE_SEC: usize = offset_of!(RawSuperblock, create_sec);
pub const SB_OFF_CREATE_NSEC: usize = offset_of!(RawSuperblock, create_nsec);
pub const SB_OFF_HASH_SEED: usize = offset_of!(RawSuperblock, hash_seed);
pub const SB_OFF_ROOT_RESERVE: usize = offset_of!(RawSuperblock, root_reserve);
pub const SB_OFF_MAX_BLOCKS: usize = offset_of!(RawSuperblock, max_blocks);
pub const SB_OFF_MAX_MAIN_SEGMENTS: usize = offset_of!(RawSuperblock, max_main_segments);
pub const SB_OFF_OVERPROVISION_PCT: usize = offset_of!(RawSuperblock, overprovision_pct);
/// Bytes of the superblock in use; the rest up to the CRC is reserved and zero.
pub const SB_USED_BYTES: usize = 176;

// The layout FORMAT.md states (format 1.0), checked at compile time: any change to the
// struct that moves a byte of an existing image fails the build.
const _: () = {
    assert!(size_of::<RawSuperblock>() == BLOCK_SIZE);
    assert!(SB_OFF_MAGIC == 0);
    assert!(SB_OFF_VERSION_MAJOR == 4);
    assert!(SB_OFF_VERSION_MINOR == 6);
    assert!(SB_OFF_FEATURE_COMPAT == 8);
    assert!(SB_OFF_FEATURE_INCOMPAT == 12);
    assert!(SB_OFF_FEATURE_RO_COMPAT == 16);
    assert!(SB_OFF_BLOCK_SIZE_LOG2 == 20);
    assert!(SB_OFF_TOTAL_BLOCKS == 24);
    assert!(SB_OFF_SEGMENT_BLOCKS == 32);
    assert!(SB_OFF_CP_PACK_BLOCKS == 36);
    assert!(SB_OFF_NAT_START == 40);
    assert!(SB_OFF_NAT_BLOCKS == 44);
    assert!(SB_OFF_SIT_START == 48);
    assert!(SB_OFF_SIT_BLOCKS == 52);
    assert!(SB_OFF_SSA_START == 56);
    assert!(SB_OFF_MAIN_START == 60);
    assert!(SB_OFF_MAIN_SEGMENTS == 64);
    assert!(SB_OFF_NID_COUNT == 68);
    assert!(SB_OFF_RESERVED_SEGMENTS == 72);
    assert!(SB_OFF_ROOT_INO == 76);
    assert!(SB_OFF_UUID == 80);
    assert!(SB_OFF_LABEL == 96);
    assert!(SB_OFF_CREATE_SEC == 128);
    assert!(SB_OFF_CREATE_NSEC == 136);
    assert!(SB_OFF_HASH_SEED == 140);
    assert!(SB_OFF_ROOT_RESERVE == 156);
    assert!(SB_OFF_MAX_BLOCKS == 160);
    assert!(SB_OFF_MAX_MAIN_SEGMENTS == 168);
    assert!(SB_OFF_OVERPROVISION_PCT == 172);
    assert!(offset_of!(RawSuperblock, reserved) == SB_USED_BYTES);
    assert!(offset_of!(RawSuperblock, crc) == CRC_OFFSET);
};

/// Largest root reserve mkfs accepts, in percent of the device.
pub const ROOT_RESERVE_PCT_MAX: u32 = 50;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superblock {
    pub version_major: u16,
    pub version_minor: u16,
    pub feature_compat: u32,
    pub feature_incompat: u32,
    pub feature_ro_compat: u32,
    pub geometry: Geometry,
    pub root_ino: u32,
    pub uuid: [u8; 16],
    pub label: Vec<u8>,
    pub create_sec: i64,
    pub create_nsec: u32,
    /// Secret key of the directory name hash, drawn at random by mkfs (zero: unkeyed).
    pub hash_seed: [u8; 16],
    /// Root reserve chosen at mkfs, in percent of the device (None: the mount's default).
    pub root_reserve_pct: Option<u32>,
    /// The largest device `rollfs resize` may grow the filesystem to, in blocks
    /// (`mkfs --max-size`; [`FEATURE_INCOMPAT_GROW`]); 0 without room to grow.
    pub max_blocks: u64,
    /// The overprovisioning percentage mkfs was given, kept with room to grow (a resize
    /// sizes the cleaner's reserve from it); 0 without.
    pub overprovision_pct: u32,
}

impl Superblock {
    /// True when the image keeps a CRC32C beside every data block address
    /// ([`FEATURE_RO_COMPAT_DATASUM`]).
    pub fn data_checksums(&self) -> bool {
        self.feature_ro_compat & FEATURE_RO_COMPAT_DATASUM != 0
    }

    /// True when directories hash with per-directory keys and full buckets overflow
    /// ([`FEATURE_INCOMPAT_DIR_V2`]).
    pub fn dir_v2(&self) -> bool {
        self.feature_incompat & FEATURE_INCOMPAT_DIR_V2 != 0
    }

    /// True when fallocate's reservations are `NEW_ADDR` pointers on disk
    /// ([`FEATURE_INCOMPAT_PREALLOC`]).
    pub fn prealloc_on_disk(&self) -> bool {
        self.feature_incompat & FEATURE_INCOMPAT_PREALLOC != 0
    }

    /// True when the image has room to grow ([`FEATURE_INCOMPAT_GROW`]).
    pub fn can_grow(&self) -> bool {
        self.feature_incompat & FEATURE_INCOMPAT_GROW != 0
    }

    /// True when the fsync chain carries namespace records ([`FEATURE_INCOMPAT_NS_RECORDS`]).
    pub fn ns_records(&self) -> bool {
        self.feature_incompat & FEATURE_INCOMPAT_NS_RECORDS != 0
    }

    /// True when small fsync batches write their data in the warm node log after their nodes
    /// ([`FEATURE_INCOMPAT_MIXED_NODE`]).
    pub fn mixed_node(&self) -> bool {
        self.feature_incompat & FEATURE_INCOMPAT_MIXED_NODE != 0
    }

    /// True when checkpoints carry the summaries of open segments in their payload
    /// ([`FEATURE_INCOMPAT_CP_SUMMARIES`]).
    pub fn cp_summaries(&self) -> bool {
        self.feature_incompat & FEATURE_INCOMPAT_CP_SUMMARIES != 0
    }

    /// True when new small files keep their bytes in the inode ([`FEATURE_INCOMPAT_INLINE`]).
    pub fn inline_data(&self) -> bool {
        self.feature_incompat & FEATURE_INCOMPAT_INLINE != 0
    }

    pub fn encode(&self) -> Box<Block> {
        let g = &self.geometry;
        debug_assert!(self.root_reserve_pct.is_none_or(|p| p <= ROOT_RESERVE_PCT_MAX));
        let mut b = zero_block();
        let r: &mut RawSuperblock = view_mut(&mut b);
        r.magic.set(SB_MAGIC);
        r.version_major.set(self.version_major);
        r.version_minor.set(self.version_minor);
        r.feature_compat.set(self.feature_compat);
        r.feature_incompat.set(self.feature_incompat);
        r.feature_ro_compat.set(self.feature_ro_compat);
        r.block_size_log2.set(BLOCK_SIZE_LOG2);
        r.total_blocks.set(g.total_blocks);
        r.segment_blocks.set(g.segment_blocks);
        r.cp_pack_blocks.set(g.cp_pack_blocks);
        r.nat_start.set(g.nat_start);
        r.nat_blocks.set(g.nat_blocks);
        r.sit_start.set(g.sit_start);
        r.sit_blocks.set(g.sit_blocks);
        r.ssa_start.set(g.ssa_start);
        r.main_start.set(g.main_start);
        r.main_segments.set(g.main_segments);
        r.nid_count.set(g.nid_count);
        r.reserved_segments.set(g.reserved_segments);
        r.root_ino.set(self.root_ino);
        r.uuid = self.uuid;
        let n = self.label.len().min(SB_LABEL_MAX);
        r.label[..n].copy_from_slice(&self.label[..n]);
        r.create_sec.set(self.create_sec);
        r.create_nsec.set(self.create_nsec);
        r.hash_seed = self.hash_seed;
        r.root_reserve.set(self.root_reserve_pct.map_or(0, |p| p + 1));
        r.max_blocks.set(self.max_blocks);
        r.max_main_segments.set(g.max_main_segments);
        r.overprovision_pct.set(self.overprovision_pct);
        seal(&mut b);
        b
    }

    /// Decodes and validates one superblock copy read from block `addr`.
    pub fn decode(addr: u64, b: &Block) -> Result<Superblock> {
        let bad = |reason| Err(Error::corrupt(addr, reason));
        let r: &RawSuperblock = view(b);
        if r.magic.get() != SB_MAGIC {
            return bad("superblock: bad magic (not a rollfs image)");
        }
        if !crc_ok(b) {
            return bad("superblock: checksum mismatch");
        }
        let version_major = r.version_major.get();
        if version_major == 1 {
            return bad("superblock: format 1 image (made before data checksums); this rollfs reads format 2: \
                 copy the files off with rollfs 0.1 and make a new image");
        }
        if version_major != FORMAT_VERSION_MAJOR {
            return bad("superblock: unsupported format version");
        }
        let feature_incompat = r.feature_incompat.get();
        if feature_incompat & !FEATURE_INCOMPAT_SUPPORTED != 0 {
            return bad(UNSUPPORTED_FEATURE_REASON);
        }
        if r.block_size_log2.get() != BLOCK_SIZE_LOG2 {
            return bad("superblock: unsupported block size");
        }
        let geometry = raw_geometry(r);
        let (max_blocks, overprovision_pct) =
            room_to_grow(r, feature_incompat, &geometry).map_err(|w| Error::corrupt(addr, w))?;
        geometry.validate().map_err(|e| match e {
            Error::Corrupt { reason, .. } => Error::corrupt(addr, reason),
            e => e,
        })?;
        let root_ino = r.root_ino.get();
        if root_ino != ROOT_INO {
            return bad("superblock: unexpected root inode number");
        }
        let label_len = r.label.iter().position(|&c| c == 0).unwrap_or(SB_LABEL_MAX);
        let root_reserve_pct = match r.root_reserve.get() {
            0 => None,
            v if v - 1 <= ROOT_RESERVE_PCT_MAX => Some(v - 1),
            _ => return bad("superblock: root reserve above 50 %"),
        };
        Ok(Superblock {
            version_major,
            version_minor: r.version_minor.get(),
            feature_compat: r.feature_compat.get(),
            feature_incompat,
            feature_ro_compat: r.feature_ro_compat.get(),
            geometry,
            root_ino,
            uuid: r.uuid,
            label: r.label[..label_len].to_vec(),
            create_sec: r.create_sec.get(),
            create_nsec: r.create_nsec.get(),
            hash_seed: r.hash_seed,
            root_reserve_pct,
            max_blocks,
            overprovision_pct,
        })
    }
}

/// The geometry fields of a raw superblock, unchecked.
fn raw_geometry(r: &RawSuperblock) -> Geometry {
    Geometry {
        total_blocks: r.total_blocks.get(),
        segment_blocks: r.segment_blocks.get(),
        cp_pack_blocks: r.cp_pack_blocks.get(),
        nat_start: r.nat_start.get(),
        nat_blocks: r.nat_blocks.get(),
        sit_start: r.sit_start.get(),
        sit_blocks: r.sit_blocks.get(),
        ssa_start: r.ssa_start.get(),
        main_start: r.main_start.get(),
        main_segments: r.main_segments.get(),
        nid_count: r.nid_count.get(),
        reserved_segments: r.reserved_segments.get(),
        max_main_segments: r.max_main_segments.get(),
    }
}

/// The room-to-grow fields (`max_blocks`, `overprovision_pct`), checked: set exactly with
/// [`FEATURE_INCOMPAT_GROW`], the maximum size holding the room the areas have.
fn room_to_grow(
    r: &RawSuperblock,
    feature_incompat: u32,
    g: &Geometry,
) -> core::result::Result<(u64, u32), &'static str> {
    let max_blocks = r.max_blocks.get();
    let overprovision_pct = r.overprovision_pct.get();
    let grow = feature_incompat & FEATURE_INCOMPAT_GROW != 0;
    if grow != (g.max_main_segments != 0) || grow != (max_blocks != 0) || (!grow && overprovision_pct != 0) {
        return Err("superblock: room to grow given without FEATURE_INCOMPAT_GROW, or the feature without it");
    }
    if grow && (max_blocks < g.max_main_end() || max_blocks > u32::MAX as u64) {
        return Err("superblock: maximum size smaller than the room to grow, or past 32-bit block addresses");
    }
    if overprovision_pct > 50 {
        return Err("superblock: overprovisioning above 50 %");
    }
    Ok((max_blocks, overprovision_pct))
}

/// Rewrites every superblock copy that does not decode to `sb` (the copy in use) from it,
/// then flushes; returns how many were rewritten. A read-write mount calls it: a crash
/// between the two copies' writes (`rollfs tune` writes copy 1, flushes, then copy 0) or
/// inside one leaves them different, and nothing else would ever bring them back together
/// (fsck would report the image unclean for good; review 53, F2). Only the copy not in use
/// is written, so a crash during this write leaves the copy in use whole. A copy that cannot
/// be read is left (the mount has the copy it needs); a failed write is returned.
pub(crate) fn heal_copies<D: crate::BlockDevice>(dev: &mut D, sb: &Superblock) -> Result<u32> {
    let good = sb.encode();
    let mut buf = zero_block();
    let mut healed = 0;
    for &addr in SUPERBLOCK_ADDRS.iter() {
        if dev.read(addr, &mut buf).is_err() {
            continue;
        }
        if matches!(Superblock::decode(addr, &buf), Ok(copy) if copy == *sb) {
            continue;
        }
        dev.write(addr, &good, crate::device::WriteFlags::empty())?;
        healed += 1;
    }
    if healed > 0 {
        dev.wait_writes()?;
        dev.flush()?;
    }
    Ok(healed)
}

/// Reads both copies and returns the first valid one. If neither is valid, the error of
/// copy 0 is returned (an I/O error wins over corruption, so the user sees the real cause).
pub fn read_superblock<D: crate::BlockDevice>(dev: &mut D) -> Result<Superblock> {
    let mut first_err = None;
    let mut buf = zero_block();
    for &addr in SUPERBLOCK_ADDRS.iter() {
        let r = dev.read(addr, &mut buf).map_err(Error::from).and_then(|_| Superblock::decode(addr, &buf));
        match r {
            Ok(sb) => {
                if sb.geometry.total_blocks > dev.block_count() {
                    return Err(Error::corrupt(addr, "superblock: device smaller than the filesystem"));
                }
                return Ok(sb);
            }
            Err(e) => {
                if first_err.is_none() || matches!(e, Error::Io { .. }) {
                    first_err = Some(e);
                }
            }
        }
    }
    Err(first_err.unwrap_or(Error::corrupt(0, "superblock: unreadable")))
}
