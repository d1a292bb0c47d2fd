//! Node blocks: the footer every node carries, the inode layout, direct and indirect
//! nodes, and the mapping from a file block index to its place in the node tree.
//!
//! Node blocks are kept in memory as raw 4 KiB blocks and read and written through the
//! accessors here, so encode/decode is the identity and a node cannot drift from its
//! on-disk form. Every node read from the device passes [`validate`] before use.
//!
//! Tree shape (f2fs style): an inode holds `ADDRS_PER_INODE` block addresses and six node
//! ids: two direct nodes, two indirect nodes (each → `NIDS_PER_BLOCK` direct nodes) and two
//! double-indirect nodes. Direct nodes are numbered in file order ("dnode number" `d`), and
//! direct node `d` maps file blocks `ADDRS_PER_INODE + d * ADDRS_PER_BLOCK ..` — which
//! is what lets roll-forward recovery place a direct node from its footer alone.

use crate::codec::*;
use crate::error::{Error, Result};
use crate::layout::*;
use crate::{Block, BlockAddr, Nid};

// ---- footer -------------------------------------------------------------------------
pub const FOOTER_OFF_NID: usize = NODE_FOOTER_OFFSET; // 4064
pub const FOOTER_OFF_INO: usize = NODE_FOOTER_OFFSET + 4;
pub const FOOTER_OFF_FLAGS: usize = NODE_FOOTER_OFFSET + 8;
pub const FOOTER_OFF_OFS: usize = NODE_FOOTER_OFFSET + 12;
pub const FOOTER_OFF_CP_VERSION: usize = NODE_FOOTER_OFFSET + 16;
pub const FOOTER_OFF_NEXT_BLKADDR: usize = NODE_FOOTER_OFFSET + 24;
pub const FOOTER_OFF_CRC: usize = NODE_FOOTER_OFFSET + 28; // == CRC_OFFSET

/// Footer flag bits (low byte of the flags word).
pub const FLAG_COLD: u32 = 1 << 0;
pub const FLAG_FSYNC: u32 = 1 << 1;
pub const FLAG_DENTRY: u32 = 1 << 2;
const FLAG_MASK: u32 = 0xff;
const TYPE_SHIFT: u32 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeType {
    Inode = 1,
    Direct = 2,
    Indirect = 3,
    Xattr = 4,
}

impl NodeType {
    fn from_u8(v: u8) -> Option<NodeType> {
        Some(match v {
            1 => NodeType::Inode,
            2 => NodeType::Direct,
            3 => NodeType::Indirect,
            4 => NodeType::Xattr,
            _ => return None,
        })
    }
}

pub fn footer_nid(b: &Block) -> Nid {
    get_u32(b, FOOTER_OFF_NID)
}
pub fn footer_ino(b: &Block) -> u32 {
    get_u32(b, FOOTER_OFF_INO)
}
pub fn footer_flags(b: &Block) -> u32 {
    get_u32(b, FOOTER_OFF_FLAGS) & FLAG_MASK
}
pub fn footer_type(b: &Block) -> Option<NodeType> {
    NodeType::from_u8((get_u32(b, FOOTER_OFF_FLAGS) >> TYPE_SHIFT) as u8)
}
pub fn footer_ofs(b: &Block) -> u32 {
    get_u32(b, FOOTER_OFF_OFS)
}
pub fn footer_cp_version(b: &Block) -> u64 {
    get_u64(b, FOOTER_OFF_CP_VERSION)
}
pub fn footer_next_blkaddr(b: &Block) -> BlockAddr {
    get_u32(b, FOOTER_OFF_NEXT_BLKADDR)
}

/// Initialises a fresh node block's identity (the rest of the footer is set at write).
pub fn init_footer(b: &mut Block, nid: Nid, ino: u32, ty: NodeType, ofs: u32) {
    put_u32(b, FOOTER_OFF_NID, nid);
    put_u32(b, FOOTER_OFF_INO, ino);
    put_u32(b, FOOTER_OFF_FLAGS, (ty as u32) << TYPE_SHIFT);
    put_u32(b, FOOTER_OFF_OFS, ofs);
}

pub fn set_footer_flags(b: &mut Block, flags: u32) {
    let v = get_u32(b, FOOTER_OFF_FLAGS);
    put_u32(b, FOOTER_OFF_FLAGS, (v & !FLAG_MASK) | (flags & FLAG_MASK));
}

/// Stamps the footer's log fields and seals the node just before it is written.
pub fn seal_for_write(b: &mut Block, cp_version: u64, next_blkaddr: BlockAddr, seed: u32) {
    put_u64(b, FOOTER_OFF_CP_VERSION, cp_version);
    put_u32(b, FOOTER_OFF_NEXT_BLKADDR, next_blkaddr);
    seal_seeded(b, seed);
}

/// Validates a node block read from `addr`, expected to be node `nid` (CRC, identity, type).
pub fn validate(b: &Block, addr: u64, nid: Nid, seed: u32) -> Result<NodeType> {
    if !crc_ok_seeded(b, seed) {
        return Err(Error::corrupt(addr, "node: checksum mismatch"));
    }
    if footer_nid(b) != nid {
        return Err(Error::corrupt(addr, "node: footer nid does not match the NAT"));
    }
    let ty = footer_type(b).ok_or(Error::corrupt(addr, "node: unknown node type"))?;
    if ty == NodeType::Inode {
        if footer_ino(b) != nid {
            return Err(Error::corrupt(addr, "inode: footer ino differs from its nid"));
        }
        if crate::fs::FileType::from_mode(inode::mode(b) as u32).is_none() {
            return Err(Error::corrupt(addr, "inode: invalid file type in mode"));
        }
        if inode::name_len(b) as usize > NAME_MAX {
            return Err(Error::corrupt(addr, "inode: name length over 255"));
        }
    }
    Ok(ty)
}

/// Reads entry `i` of a direct node's address array or an indirect node's nid array.
pub fn slot(b: &Block, i: u32) -> u32 {
    debug_assert!(i < ADDRS_PER_BLOCK);
    get_u32(b, i as usize * 4)
}
pub fn set_slot(b: &mut Block, i: u32, v: u32) {
    debug_assert!(i < ADDRS_PER_BLOCK);
    put_u32(b, i as usize * 4, v)
}

/// The inode layout: a fixed header, then the address array and the node ids.
pub mod inode {
    use super::*;
    pub const OFF_MODE: usize = 0;
    pub const OFF_IFLAGS: usize = 2;
    pub const OFF_UID: usize = 4;
    pub const OFF_GID: usize = 8;
    pub const OFF_LINKS: usize = 12;
    pub const OFF_SIZE: usize = 16;
    pub const OFF_BLOCKS: usize = 24;
    pub const OFF_ATIME_SEC: usize = 32;
    pub const OFF_ATIME_NSEC: usize = 40;
    pub const OFF_MTIME_NSEC: usize = 44;
    pub const OFF_MTIME_SEC: usize = 48;
    pub const OFF_CTIME_SEC: usize = 56;
    pub const OFF_CTIME_NSEC: usize = 64;
    pub const OFF_CRTIME_NSEC: usize = 68;
    pub const OFF_CRTIME_SEC: usize = 72;
    pub const OFF_GENERATION: usize = 80;
    pub const OFF_XATTR_NID: usize = 84;
    pub const OFF_PINO: usize = 88;
    pub const OFF_RDEV: usize = 92;
    pub const OFF_DIR_DEPTH: usize = 96;
    pub const OFF_NAME_LEN: usize = 100;
    pub const OFF_NAME: usize = 104; // 255 bytes
    /// Fields only meaningful in an fsync-marked inode in the node chain (the commit record
    /// of an fsync batch): the lowest file block freed by truncation since the previous
    /// fsync (u64::MAX: none), and the CRC32C and count of the data blocks of the batch.
    pub const OFF_TRUNC_BLOCK: usize = 360;
    pub const OFF_BATCH_CRC: usize = 368;
    pub const OFF_BATCH_BLOCKS: usize = 372;
    pub const OFF_ADDRS: usize = INODE_HEADER_SIZE; // 384
    pub const OFF_NIDS: usize = OFF_ADDRS + ADDRS_PER_INODE as usize * 4; // 4040

    pub fn mode(b: &Block) -> u16 {
        get_u16(b, OFF_MODE)
    }
    pub fn set_mode(b: &mut Block, v: u16) {
        put_u16(b, OFF_MODE, v)
    }
    pub fn iflags(b: &Block) -> u16 {
        get_u16(b, OFF_IFLAGS)
    }
    pub fn set_iflags(b: &mut Block, v: u16) {
        put_u16(b, OFF_IFLAGS, v)
    }
    pub fn uid(b: &Block) -> u32 {
        get_u32(b, OFF_UID)
    }
    pub fn set_uid(b: &mut Block, v: u32) {
        put_u32(b, OFF_UID, v)
    }
    pub fn gid(b: &Block) -> u32 {
        get_u32(b, OFF_GID)
    }
    pub fn set_gid(b: &mut Block, v: u32) {
        put_u32(b, OFF_GID, v)
    }
    pub fn links(b: &Block) -> u32 {
        get_u32(b, OFF_LINKS)
    }
    pub fn set_links(b: &mut Block, v: u32) {
        put_u32(b, OFF_LINKS, v)
    }
    pub fn size(b: &Block) -> u64 {
        get_u64(b, OFF_SIZE)
    }
    pub fn set_size(b: &mut Block, v: u64) {
        put_u64(b, OFF_SIZE, v)
    }
    pub fn blocks(b: &Block) -> u64 {
        get_u64(b, OFF_BLOCKS)
    }
    pub fn set_blocks(b: &mut Block, v: u64) {
        put_u64(b, OFF_BLOCKS, v)
    }
    pub fn time(b: &Block, sec_off: usize, nsec_off: usize) -> crate::Timestamp {
        crate::Timestamp::new(get_i64(b, sec_off), get_u32(b, nsec_off))
    }
    pub fn set_time(b: &mut Block, sec_off: usize, nsec_off: usize, t: crate::Timestamp) {
        put_i64(b, sec_off, t.sec);
        put_u32(b, nsec_off, t.nsec);
    }
    pub fn generation(b: &Block) -> u32 {
        get_u32(b, OFF_GENERATION)
    }
    pub fn set_generation(b: &mut Block, v: u32) {
        put_u32(b, OFF_GENERATION, v)
    }
    pub fn xattr_nid(b: &Block) -> Nid {
        get_u32(b, OFF_XATTR_NID)
    }
    pub fn set_xattr_nid(b: &mut Block, v: Nid) {
        put_u32(b, OFF_XATTR_NID, v)
    }
    pub fn pino(b: &Block) -> u32 {
        get_u32(b, OFF_PINO)
    }
    pub fn set_pino(b: &mut Block, v: u32) {
        put_u32(b, OFF_PINO, v)
    }
    pub fn rdev(b: &Block) -> u32 {
        get_u32(b, OFF_RDEV)
    }
    pub fn set_rdev(b: &mut Block, v: u32) {
        put_u32(b, OFF_RDEV, v)
    }
    pub fn dir_depth(b: &Block) -> u32 {
        get_u32(b, OFF_DIR_DEPTH)
    }
    pub fn set_dir_depth(b: &mut Block, v: u32) {
        put_u32(b, OFF_DIR_DEPTH, v)
    }
    pub fn name_len(b: &Block) -> u16 {
        get_u16(b, OFF_NAME_LEN)
    }
    /// The name the inode was last linked under (for roll-forward of dentry-marked inodes).
    pub fn name(b: &Block) -> &[u8] {
        let n = (name_len(b) as usize).min(NAME_MAX);
        &b[OFF_NAME..OFF_NAME + n]
    }
    pub fn set_name(b: &mut Block, name: &[u8]) {
        let n = name.len().min(NAME_MAX);
        b[OFF_NAME..OFF_NAME + NAME_MAX].fill(0);
        b[OFF_NAME..OFF_NAME + n].copy_from_slice(&name[..n]);
        put_u16(b, OFF_NAME_LEN, n as u16);
    }
    pub fn trunc_block(b: &Block) -> u64 {
        get_u64(b, OFF_TRUNC_BLOCK)
    }
    pub fn set_batch(b: &mut Block, trunc_block: u64, crc: u32, blocks: u32) {
        put_u64(b, OFF_TRUNC_BLOCK, trunc_block);
        put_u32(b, OFF_BATCH_CRC, crc);
        put_u32(b, OFF_BATCH_BLOCKS, blocks);
    }
    pub fn batch_crc(b: &Block) -> u32 {
        get_u32(b, OFF_BATCH_CRC)
    }
    pub fn batch_blocks(b: &Block) -> u32 {
        get_u32(b, OFF_BATCH_BLOCKS)
    }
    pub fn addr(b: &Block, i: u32) -> BlockAddr {
        debug_assert!(i < ADDRS_PER_INODE);
        get_u32(b, OFF_ADDRS + i as usize * 4)
    }
    pub fn set_addr(b: &mut Block, i: u32, v: BlockAddr) {
        debug_assert!(i < ADDRS_PER_INODE);
        put_u32(b, OFF_ADDRS + i as usize * 4, v)
    }
    pub fn nid(b: &Block, i: usize) -> Nid {
        debug_assert!(i < NIDS_PER_INODE);
        get_u32(b, OFF_NIDS + i * 4)
    }
    pub fn set_nid(b: &mut Block, i: usize, v: Nid) {
        debug_assert!(i < NIDS_PER_INODE);
        put_u32(b, OFF_NIDS + i * 4, v)
    }
}

// ---- file block index → tree position ------------------------------------------------

const A: u64 = ADDRS_PER_INODE as u64;
const P: u64 = ADDRS_PER_BLOCK as u64;

/// Number of file blocks the tree can map.
pub const MAX_FILE_BLOCKS: u64 = A + 2 * P + 2 * P * P + 2 * P * P * P;
/// Largest file size in bytes.
pub const MAX_FILE_SIZE: u64 = MAX_FILE_BLOCKS * BLOCK_SIZE as u64;

/// Where the address of a file block lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockPath {
    /// In the inode's own address array.
    Inode { ofs: u32 },
    /// Through inode nid slot `slot` (0..6) and `depth` levels of indirection
    /// (0 = slot points at the direct node). `idx[0..depth]` are the indexes in the
    /// indirect nodes on the way; `ofs` is the index in the direct node; `dnode` its number.
    Node { slot: usize, depth: usize, idx: [u32; 2], ofs: u32, dnode: u64 },
}

pub fn block_path(file_block: u64) -> Result<BlockPath> {
    let mut i = file_block;
    if i < A {
        return Ok(BlockPath::Inode { ofs: i as u32 });
    }
    i -= A;
    let dnode = i / P;
    let ofs = (i % P) as u32;
    if i < 2 * P {
        return Ok(BlockPath::Node { slot: (i / P) as usize, depth: 0, idx: [0, 0], ofs, dnode });
    }
    i -= 2 * P;
    if i < 2 * P * P {
        let slot = 2 + (i / (P * P)) as usize;
        let rem = i % (P * P);
        return Ok(BlockPath::Node { slot, depth: 1, idx: [(rem / P) as u32, 0], ofs, dnode });
    }
    i -= 2 * P * P;
    if i < 2 * P * P * P {
        let slot = 4 + (i / (P * P * P)) as usize;
        let rem = i % (P * P * P);
        let idx = [(rem / (P * P)) as u32, ((rem / P) % P) as u32];
        return Ok(BlockPath::Node { slot, depth: 2, idx, ofs, dnode });
    }
    Err(Error::FileTooBig)
}

/// First file block mapped by direct node number `dnode`.
pub fn dnode_first_block(dnode: u64) -> u64 {
    A + dnode * P
}

/// The footer `ofs` of an indirect node: the dnode number of the first direct node under it,
/// with bit 31 set for the upper level of a double-indirect tree.
pub fn indirect_ofs(path: &BlockPath, level: usize) -> u32 {
    match *path {
        BlockPath::Node { slot, depth, idx, .. } => {
            // dnode number of the first direct node under this indirect node.
            let base = match slot {
                2 | 3 => 2 + (slot as u64 - 2) * P,
                _ => 2 + 2 * P + (slot as u64 - 4) * P * P,
            };
            let v = if depth == 2 && level == 1 { base + idx[0] as u64 * P } else { base };
            let top = if depth == 2 && level == 0 { 1u32 << 31 } else { 0 };
            (v as u32) | top
        }
        BlockPath::Inode { .. } => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_path_boundaries() {
        assert_eq!(block_path(0).unwrap(), BlockPath::Inode { ofs: 0 });
        assert_eq!(block_path(A - 1).unwrap(), BlockPath::Inode { ofs: (A - 1) as u32 });
        assert!(matches!(block_path(A).unwrap(), BlockPath::Node { slot: 0, depth: 0, ofs: 0, dnode: 0, .. }));
        assert!(matches!(block_path(A + P).unwrap(), BlockPath::Node { slot: 1, depth: 0, ofs: 0, dnode: 1, .. }));
        assert!(matches!(
            block_path(A + 2 * P).unwrap(),
            BlockPath::Node { slot: 2, depth: 1, idx: [0, 0], ofs: 0, dnode: 2 }
        ));
        assert!(matches!(block_path(A + 2 * P + P * P).unwrap(), BlockPath::Node { slot: 3, depth: 1, .. }));
        let dd = A + 2 * P + 2 * P * P;
        assert!(matches!(block_path(dd).unwrap(), BlockPath::Node { slot: 4, depth: 2, idx: [0, 0], .. }));
        assert!(matches!(block_path(dd + P * P * P).unwrap(), BlockPath::Node { slot: 5, depth: 2, .. }));
        assert_eq!(block_path(MAX_FILE_BLOCKS), Err(Error::FileTooBig));
        // At least 4 TiB files.
        const { assert!(MAX_FILE_SIZE >= 4u64 << 40) };
        // dnode numbering is dense and matches the first block of each direct node.
        for fb in [A, A + P, A + 2 * P, A + 2 * P + 5 * P + 3, dd + 7 * P + 1] {
            if let BlockPath::Node { dnode, ofs, .. } = block_path(fb).unwrap() {
                assert_eq!(dnode_first_block(dnode) + ofs as u64, fb);
            } else {
                panic!();
            }
        }
    }

    #[test]
    fn inode_layout_fits() {
        assert_eq!(inode::OFF_NIDS + NIDS_PER_INODE * 4, NODE_FOOTER_OFFSET);
        assert_eq!(FOOTER_OFF_CRC, CRC_OFFSET);
        const { assert!(inode::OFF_NAME + NAME_MAX <= INODE_HEADER_SIZE) };
    }
}
