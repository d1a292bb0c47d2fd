//! The superblock: geometry, format version and features, in two identical copies
//! (blocks 0 and 1). Written once by mkfs; read at mount, where the first copy that passes
//! its checks is used, so one destroyed copy costs nothing.

use crate::codec::*;
use crate::error::{Error, Result};
use crate::layout::*;
use crate::{zero_block, Block};
use alloc::boxed::Box;
use alloc::vec::Vec;

pub const SB_MAGIC: u32 = 0x5346_4C52; // "RLFS" in little-endian bytes
pub const FORMAT_VERSION_MAJOR: u16 = 1;
pub const FORMAT_VERSION_MINOR: u16 = 0;

/// Feature bits a mount may ignore.
pub const FEATURE_COMPAT_ATOMIC_WRITE: u32 = 1 << 0;
/// Feature bits this code understands; an image with other incompatible bits is refused.
pub const FEATURE_INCOMPAT_SUPPORTED: u32 = 0;
pub const FEATURE_RO_COMPAT_SUPPORTED: u32 = 0;

pub const SB_OFF_MAGIC: usize = 0;
pub const SB_OFF_VERSION_MAJOR: usize = 4;
pub const SB_OFF_VERSION_MINOR: usize = 6;
pub const SB_OFF_FEATURE_COMPAT: usize = 8;
pub const SB_OFF_FEATURE_INCOMPAT: usize = 12;
pub const SB_OFF_FEATURE_RO_COMPAT: usize = 16;
pub const SB_OFF_BLOCK_SIZE_LOG2: usize = 20;
pub const SB_OFF_TOTAL_BLOCKS: usize = 24;
pub const SB_OFF_SEGMENT_BLOCKS: usize = 32;
pub const SB_OFF_CP_PACK_BLOCKS: usize = 36;
pub const SB_OFF_NAT_START: usize = 40;
pub const SB_OFF_NAT_BLOCKS: usize = 44;
pub const SB_OFF_SIT_START: usize = 48;
pub const SB_OFF_SIT_BLOCKS: usize = 52;
pub const SB_OFF_SSA_START: usize = 56;
pub const SB_OFF_MAIN_START: usize = 60;
pub const SB_OFF_MAIN_SEGMENTS: usize = 64;
pub const SB_OFF_NID_COUNT: usize = 68;
pub const SB_OFF_RESERVED_SEGMENTS: usize = 72;
pub const SB_OFF_ROOT_INO: usize = 76;
pub const SB_OFF_UUID: usize = 80;
pub const SB_OFF_LABEL: usize = 96;
pub const SB_LABEL_MAX: usize = 32;
pub const SB_OFF_CREATE_SEC: usize = 128;
pub const SB_OFF_CREATE_NSEC: usize = 136;
/// Key of the directory name hash (`dir::name_hash_keyed`); all zero on images made
/// before it existed, which keep the unkeyed hash.
pub const SB_OFF_HASH_SEED: usize = 140;
/// Root reserve chosen at mkfs: 0 = not chosen (the mount's default applies), else the
/// percentage of the device plus one (1..=51).
pub const SB_OFF_ROOT_RESERVE: usize = 156;
pub const SB_USED_BYTES: usize = 160;
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
}

impl Superblock {
    pub fn encode(&self) -> Box<Block> {
        let g = &self.geometry;
        let mut b = zero_block();
        put_u32(&mut b[..], SB_OFF_MAGIC, SB_MAGIC);
        put_u16(&mut b[..], SB_OFF_VERSION_MAJOR, self.version_major);
        put_u16(&mut b[..], SB_OFF_VERSION_MINOR, self.version_minor);
        put_u32(&mut b[..], SB_OFF_FEATURE_COMPAT, self.feature_compat);
        put_u32(&mut b[..], SB_OFF_FEATURE_INCOMPAT, self.feature_incompat);
        put_u32(&mut b[..], SB_OFF_FEATURE_RO_COMPAT, self.feature_ro_compat);
        put_u32(&mut b[..], SB_OFF_BLOCK_SIZE_LOG2, BLOCK_SIZE_LOG2);
        put_u64(&mut b[..], SB_OFF_TOTAL_BLOCKS, g.total_blocks);
        put_u32(&mut b[..], SB_OFF_SEGMENT_BLOCKS, g.segment_blocks);
        put_u32(&mut b[..], SB_OFF_CP_PACK_BLOCKS, g.cp_pack_blocks);
        put_u32(&mut b[..], SB_OFF_NAT_START, g.nat_start);
        put_u32(&mut b[..], SB_OFF_NAT_BLOCKS, g.nat_blocks);
        put_u32(&mut b[..], SB_OFF_SIT_START, g.sit_start);
        put_u32(&mut b[..], SB_OFF_SIT_BLOCKS, g.sit_blocks);
        put_u32(&mut b[..], SB_OFF_SSA_START, g.ssa_start);
        put_u32(&mut b[..], SB_OFF_MAIN_START, g.main_start);
        put_u32(&mut b[..], SB_OFF_MAIN_SEGMENTS, g.main_segments);
        put_u32(&mut b[..], SB_OFF_NID_COUNT, g.nid_count);
        put_u32(&mut b[..], SB_OFF_RESERVED_SEGMENTS, g.reserved_segments);
        put_u32(&mut b[..], SB_OFF_ROOT_INO, self.root_ino);
        b[SB_OFF_UUID..SB_OFF_UUID + 16].copy_from_slice(&self.uuid);
        let n = self.label.len().min(SB_LABEL_MAX);
        b[SB_OFF_LABEL..SB_OFF_LABEL + n].copy_from_slice(&self.label[..n]);
        put_i64(&mut b[..], SB_OFF_CREATE_SEC, self.create_sec);
        put_u32(&mut b[..], SB_OFF_CREATE_NSEC, self.create_nsec);
        b[SB_OFF_HASH_SEED..SB_OFF_HASH_SEED + 16].copy_from_slice(&self.hash_seed);
        debug_assert!(self.root_reserve_pct.is_none_or(|p| p <= ROOT_RESERVE_PCT_MAX));
        put_u32(&mut b[..], SB_OFF_ROOT_RESERVE, self.root_reserve_pct.map_or(0, |p| p + 1));
        seal(&mut b);
        b
    }

    /// Decodes and validates one superblock copy read from block `addr`.
    pub fn decode(addr: u64, b: &Block) -> Result<Superblock> {
        let bad = |reason| Err(Error::corrupt(addr, reason));
        if get_u32(b, SB_OFF_MAGIC) != SB_MAGIC {
            return bad("superblock: bad magic (not a rollfs image)");
        }
        if !crc_ok(b) {
            return bad("superblock: checksum mismatch");
        }
        let version_major = get_u16(b, SB_OFF_VERSION_MAJOR);
        if version_major != FORMAT_VERSION_MAJOR {
            return bad("superblock: unsupported format version");
        }
        let feature_incompat = get_u32(b, SB_OFF_FEATURE_INCOMPAT);
        if feature_incompat & !FEATURE_INCOMPAT_SUPPORTED != 0 {
            return bad("superblock: unsupported incompatible feature");
        }
        if get_u32(b, SB_OFF_BLOCK_SIZE_LOG2) != BLOCK_SIZE_LOG2 {
            return bad("superblock: unsupported block size");
        }
        let geometry = Geometry {
            total_blocks: get_u64(b, SB_OFF_TOTAL_BLOCKS),
            segment_blocks: get_u32(b, SB_OFF_SEGMENT_BLOCKS),
            cp_pack_blocks: get_u32(b, SB_OFF_CP_PACK_BLOCKS),
            nat_start: get_u32(b, SB_OFF_NAT_START),
            nat_blocks: get_u32(b, SB_OFF_NAT_BLOCKS),
            sit_start: get_u32(b, SB_OFF_SIT_START),
            sit_blocks: get_u32(b, SB_OFF_SIT_BLOCKS),
            ssa_start: get_u32(b, SB_OFF_SSA_START),
            main_start: get_u32(b, SB_OFF_MAIN_START),
            main_segments: get_u32(b, SB_OFF_MAIN_SEGMENTS),
            nid_count: get_u32(b, SB_OFF_NID_COUNT),
            reserved_segments: get_u32(b, SB_OFF_RESERVED_SEGMENTS),
        };
        geometry.validate().map_err(|e| match e {
            Error::Corrupt { reason, .. } => Error::corrupt(addr, reason),
            e => e,
        })?;
        let root_ino = get_u32(b, SB_OFF_ROOT_INO);
        if root_ino != ROOT_INO {
            return bad("superblock: unexpected root inode number");
        }
        let mut uuid = [0u8; 16];
        uuid.copy_from_slice(&b[SB_OFF_UUID..SB_OFF_UUID + 16]);
        let label_bytes = &b[SB_OFF_LABEL..SB_OFF_LABEL + SB_LABEL_MAX];
        let label_len = label_bytes.iter().position(|&c| c == 0).unwrap_or(SB_LABEL_MAX);
        let root_reserve_pct = match get_u32(b, SB_OFF_ROOT_RESERVE) {
            0 => None,
            v if v - 1 <= ROOT_RESERVE_PCT_MAX => Some(v - 1),
            _ => return bad("superblock: root reserve above 50 %"),
        };
        Ok(Superblock {
            version_major,
            version_minor: get_u16(b, SB_OFF_VERSION_MINOR),
            feature_compat: get_u32(b, SB_OFF_FEATURE_COMPAT),
            feature_incompat,
            feature_ro_compat: get_u32(b, SB_OFF_FEATURE_RO_COMPAT),
            geometry,
            root_ino,
            uuid,
            label: label_bytes[..label_len].to_vec(),
            create_sec: get_i64(b, SB_OFF_CREATE_SEC),
            create_nsec: get_u32(b, SB_OFF_CREATE_NSEC),
            hash_seed: {
                let mut s = [0u8; 16];
                s.copy_from_slice(&b[SB_OFF_HASH_SEED..SB_OFF_HASH_SEED + 16]);
                s
            },
            root_reserve_pct,
        })
    }
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
