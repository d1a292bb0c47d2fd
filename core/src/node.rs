//! Node blocks: the footer every node carries, the inode layout, direct and indirect
//! nodes, and the mapping from a file block index to its place in the node tree.
//!
//! Node blocks are kept in memory as raw 4 KiB blocks and read and written through the
//! accessors here, so encode/decode is the identity and a node cannot drift from its
//! on-disk form. Every node read from the device passes [`validate`] before use.
//!
//! Tree shape (f2fs style): an inode holds `ADDRS_PER_INODE` data pointers and six node
//! ids: two direct nodes, two indirect nodes (each → `NIDS_PER_BLOCK` direct nodes) and two
//! double-indirect nodes. Direct nodes are numbered in file order ("dnode number" `d`), and
//! direct node `d` maps file blocks `ADDRS_PER_INODE + d * ADDRS_PER_BLOCK ..` — which
//! is what lets roll-forward recovery place a direct node from its footer alone.
//!
//! A data pointer (format 2) is a block address and the CRC32C of the block's 4096 bytes,
//! kept in two parallel arrays of the inode or direct node: the one node write that
//! publishes an address publishes its checksum, so every path that moves a pointer (fsync
//! batches, roll-forward, atomic commits, cleaning) moves the checksum with it.

use crate::codec::*;
use crate::error::{Error, Result};
use crate::layout::*;
use crate::{Block, BlockAddr, Nid};
use core::mem::{offset_of, size_of};
use zerocopy::little_endian::{I64, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

// ---- footer -------------------------------------------------------------------------

/// The footer every node block carries in its last 32 bytes (CRC last). FORMAT.md, section
/// "Node footer".
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct NodeFooter {
    pub nid: U32,
    pub ino: U32,
    /// Flag bits in the low byte, the node type in bits 8..15.
    pub flags: U32,
    pub ofs: U32,
    pub cp_version: U64,
    pub next_blkaddr: U32,
    pub crc: U32,
}

/// Any node block seen through its footer (an xattr node's payload is `xattr`'s business).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawNode {
    pub payload: [u8; NODE_FOOTER_OFFSET],
    pub footer: NodeFooter,
}

/// An indirect node: an array of child node ids, then the footer.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawSlotNode {
    pub slots: [U32; NIDS_PER_BLOCK as usize],
    pub footer: NodeFooter,
}

/// A direct node: the data pointers (addresses, then the checksums of the blocks they point
/// at, index for index), then the footer. FORMAT.md, section "Direct node".
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawDirectNode {
    pub addrs: [U32; ADDRS_PER_BLOCK as usize],
    pub data_crcs: [U32; ADDRS_PER_BLOCK as usize],
    pub footer: NodeFooter,
}

pub const DIRECT_OFF_ADDRS: usize = offset_of!(RawDirectNode, addrs); // 0
pub const DIRECT_OFF_DATA_CRCS: usize = offset_of!(RawDirectNode, data_crcs); // 2032

pub const FOOTER_OFF_NID: usize = NODE_FOOTER_OFFSET + offset_of!(NodeFooter, nid); // 4064
pub const FOOTER_OFF_INO: usize = NODE_FOOTER_OFFSET + offset_of!(NodeFooter, ino);
pub const FOOTER_OFF_FLAGS: usize = NODE_FOOTER_OFFSET + offset_of!(NodeFooter, flags);
pub const FOOTER_OFF_OFS: usize = NODE_FOOTER_OFFSET + offset_of!(NodeFooter, ofs);
pub const FOOTER_OFF_CP_VERSION: usize = NODE_FOOTER_OFFSET + offset_of!(NodeFooter, cp_version);
pub const FOOTER_OFF_NEXT_BLKADDR: usize = NODE_FOOTER_OFFSET + offset_of!(NodeFooter, next_blkaddr);
pub const FOOTER_OFF_CRC: usize = NODE_FOOTER_OFFSET + offset_of!(NodeFooter, crc); // == CRC_OFFSET

const _: () = {
    assert!(size_of::<NodeFooter>() == NODE_FOOTER_SIZE);
    assert!(size_of::<RawNode>() == BLOCK_SIZE);
    assert!(size_of::<RawSlotNode>() == BLOCK_SIZE);
    assert!(size_of::<RawDirectNode>() == BLOCK_SIZE);
    assert!(DIRECT_OFF_ADDRS == 0);
    assert!(DIRECT_OFF_DATA_CRCS == 2032);
    assert!(offset_of!(RawDirectNode, footer) == NODE_FOOTER_OFFSET);
    assert!(offset_of!(RawNode, footer) == NODE_FOOTER_OFFSET);
    assert!(offset_of!(RawSlotNode, footer) == NODE_FOOTER_OFFSET);
    assert!(FOOTER_OFF_NID == 4064);
    assert!(FOOTER_OFF_INO == 4068);
    assert!(FOOTER_OFF_FLAGS == 4072);
    assert!(FOOTER_OFF_OFS == 4076);
    assert!(FOOTER_OFF_CP_VERSION == 4080);
    assert!(FOOTER_OFF_NEXT_BLKADDR == 4088);
    assert!(FOOTER_OFF_CRC == CRC_OFFSET);
};

fn footer(b: &Block) -> &NodeFooter {
    &view::<RawNode>(b).footer
}
fn footer_mut(b: &mut Block) -> &mut NodeFooter {
    &mut view_mut::<RawNode>(b).footer
}

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
    footer(b).nid.get()
}
pub fn footer_ino(b: &Block) -> u32 {
    footer(b).ino.get()
}
pub fn footer_flags(b: &Block) -> u32 {
    footer(b).flags.get() & FLAG_MASK
}
pub fn footer_type(b: &Block) -> Option<NodeType> {
    NodeType::from_u8((footer(b).flags.get() >> TYPE_SHIFT) as u8)
}
pub fn footer_ofs(b: &Block) -> u32 {
    footer(b).ofs.get()
}
pub fn footer_cp_version(b: &Block) -> u64 {
    footer(b).cp_version.get()
}
pub fn footer_next_blkaddr(b: &Block) -> BlockAddr {
    footer(b).next_blkaddr.get()
}

/// Initialises a fresh node block's identity (the rest of the footer is set at write).
pub fn init_footer(b: &mut Block, nid: Nid, ino: u32, ty: NodeType, ofs: u32) {
    let f = footer_mut(b);
    f.nid.set(nid);
    f.ino.set(ino);
    f.flags.set((ty as u32) << TYPE_SHIFT);
    f.ofs.set(ofs);
}

pub fn set_footer_flags(b: &mut Block, flags: u32) {
    let f = &mut footer_mut(b).flags;
    f.set((f.get() & !FLAG_MASK) | (flags & FLAG_MASK));
}

/// Stamps the footer's log fields and seals the node just before it is written.
pub fn seal_for_write(b: &mut Block, cp_version: u64, next_blkaddr: BlockAddr, seed: u32) {
    let f = footer_mut(b);
    f.cp_version.set(cp_version);
    f.next_blkaddr.set(next_blkaddr);
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
        if FileType::from_mode(inode::mode(b) as u32).is_none() {
            return Err(Error::corrupt(addr, "inode: invalid file type in mode"));
        }
        if inode::name_len(b) as usize > NAME_MAX {
            return Err(Error::corrupt(addr, "inode: name length over 255"));
        }
    }
    Ok(ty)
}

/// Reads entry `i` of an indirect node's nid array.
pub fn slot(b: &Block, i: u32) -> u32 {
    debug_assert!(i < NIDS_PER_BLOCK);
    view::<RawSlotNode>(b).slots[i as usize].get()
}
pub fn set_slot(b: &mut Block, i: u32, v: u32) {
    debug_assert!(i < NIDS_PER_BLOCK);
    view_mut::<RawSlotNode>(b).slots[i as usize].set(v)
}

/// Reads the address of data pointer `i` of a direct node.
pub fn addr(b: &Block, i: u32) -> BlockAddr {
    debug_assert!(i < ADDRS_PER_BLOCK);
    view::<RawDirectNode>(b).addrs[i as usize].get()
}
/// Reads the checksum of data pointer `i` of a direct node.
pub fn data_crc(b: &Block, i: u32) -> u32 {
    debug_assert!(i < ADDRS_PER_BLOCK);
    view::<RawDirectNode>(b).data_crcs[i as usize].get()
}
/// The mapped data pointers of a direct node, in slot order: `(slot, address, checksum)`
/// for every slot whose address is not [`NULL_ADDR`]. A walk over a node's pointers (fsck)
/// skips the holes here, without a call per empty slot.
pub fn mapped_ptrs(b: &Block) -> impl Iterator<Item = (u32, BlockAddr, u32)> + '_ {
    let r = view::<RawDirectNode>(b);
    mapped(&r.addrs, &r.data_crcs)
}

/// `(slot, address, checksum)` of the slots of two parallel pointer arrays that are mapped.
fn mapped<'a>(addrs: &'a [U32], crcs: &'a [U32]) -> impl Iterator<Item = (u32, BlockAddr, u32)> + 'a {
    debug_assert_eq!(addrs.len(), crcs.len());
    addrs.iter().zip(crcs).enumerate().filter_map(|(i, (a, c))| {
        let a = a.get();
        (a != NULL_ADDR).then(|| (i as u32, a, c.get()))
    })
}

/// Sets data pointer `i` of a direct node: the address and the checksum together.
pub fn set_ptr(b: &mut Block, i: u32, addr: BlockAddr, crc: u32) {
    debug_assert!(i < ADDRS_PER_BLOCK);
    let r = view_mut::<RawDirectNode>(b);
    r.addrs[i as usize].set(addr);
    r.data_crcs[i as usize].set(crc);
}

/// The type of a file, as the on-disk format encodes it: the `S_IFMT` bits of an inode's
/// mode ([`inode::mode`]) and a dentry record's type code (`dir.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileType {
    Regular,
    Directory,
    Symlink,
    CharDevice,
    BlockDevice,
    Fifo,
    Socket,
}

impl FileType {
    pub const S_IFMT: u32 = 0o170000;
    /// The `S_IFMT` bits of a mode.
    pub fn mode_bits(self) -> u32 {
        match self {
            FileType::Regular => 0o100000,
            FileType::Directory => 0o040000,
            FileType::Symlink => 0o120000,
            FileType::CharDevice => 0o020000,
            FileType::BlockDevice => 0o060000,
            FileType::Fifo => 0o010000,
            FileType::Socket => 0o140000,
        }
    }
    pub fn from_mode(mode: u32) -> Option<FileType> {
        Some(match mode & Self::S_IFMT {
            0o100000 => FileType::Regular,
            0o040000 => FileType::Directory,
            0o120000 => FileType::Symlink,
            0o020000 => FileType::CharDevice,
            0o060000 => FileType::BlockDevice,
            0o010000 => FileType::Fifo,
            0o140000 => FileType::Socket,
            _ => return None,
        })
    }
    /// The dentry file-type code (as in Linux `DT_*` >> 12 convention: mode >> 12).
    pub fn dentry_code(self) -> u8 {
        (self.mode_bits() >> 12) as u8
    }
    pub fn from_dentry_code(code: u8) -> Option<FileType> {
        FileType::from_mode((code as u32) << 12)
    }
}

/// The inode layout: a fixed header, then the address array and the node ids.
pub mod inode {
    use super::*;

    /// `iflags` bit: the file's bytes are in the inode's pointer area (inline data,
    /// `FEATURE_INCOMPAT_INLINE`): a regular file of at most [`INLINE_DATA_MAX`] bytes
    /// that never had a block. FORMAT.md, *Inode*; DESIGN.md, *Inline data*.
    pub const IFLAG_INLINE_DATA: u16 = 1 << 0;
    /// `iflags` bits the user sets with `chattr` (FS_IOC_SETFLAGS): immutable (`i`: no
    /// change of the file's data, attributes or names), append-only (`a`: writes at the end
    /// only, no removal), no-dump (`d`: stored for dump(8), no effect here) and no-atime
    /// (`A`: stored; rollfs never updates atime anyway). Any file type may carry them on
    /// disk; only regular files and directories can be given them. FORMAT.md, *Inode*;
    /// DESIGN.md, *File attribute flags*.
    pub const IFLAG_IMMUTABLE: u16 = 1 << 1;
    pub const IFLAG_APPEND: u16 = 1 << 2;
    pub const IFLAG_NODUMP: u16 = 1 << 3;
    pub const IFLAG_NOATIME: u16 = 1 << 4;
    /// The attribute bits above, together.
    pub const IFLAGS_ATTR: u16 = IFLAG_IMMUTABLE | IFLAG_APPEND | IFLAG_NODUMP | IFLAG_NOATIME;
    /// Every `iflags` bit this code knows; an inode with another is corrupt.
    pub const IFLAGS_KNOWN: u16 = IFLAG_INLINE_DATA | IFLAGS_ATTR;
    /// Bytes an inline inode holds: its pointer and checksum arrays (bytes 384..4040).
    pub const INLINE_DATA_MAX: usize = OFF_NIDS - OFF_ADDRS;

    /// An inode block as it is on disk: the 384-byte header, the address array, the six
    /// node ids and the node footer. FORMAT.md, section "Inode".
    #[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
    #[repr(C)]
    pub struct RawInode {
        pub mode: U16,
        pub iflags: U16,
        pub uid: U32,
        pub gid: U32,
        pub links: U32,
        pub size: U64,
        pub blocks: U64,
        pub atime_sec: I64,
        pub atime_nsec: U32,
        pub mtime_nsec: U32,
        pub mtime_sec: I64,
        pub ctime_sec: I64,
        pub ctime_nsec: U32,
        pub crtime_nsec: U32,
        pub crtime_sec: I64,
        pub generation: U32,
        pub xattr_nid: U32,
        pub pino: U32,
        pub rdev: U32,
        pub dir_depth: U32,
        pub name_len: U16,
        pub reserved0: [u8; 2],
        /// The name the inode was last linked under, `name_len` bytes, zero-padded.
        pub name: [u8; NAME_MAX],
        pub reserved1: [u8; 1],
        /// Fields only meaningful in an fsync-marked inode in the node chain (the commit
        /// record of an fsync batch): the lowest file block freed by truncation since the
        /// previous fsync (u64::MAX: none), and the CRC32C and count of the data blocks of
        /// the batch.
        pub trunc_block: U64,
        pub batch_crc: U32,
        pub batch_blocks: U32,
        /// `FEATURE_INCOMPAT_NS_RECORDS`: how many namespace records the chain holds before
        /// the batch (since the checkpoint): roll-forward applies the batch only after all of
        /// them (0 on other images).
        pub batch_records: U32,
        pub reserved2: [u8; 4],
        pub addrs: [U32; ADDRS_PER_INODE as usize],
        /// CRC32C of the data block each address points at (format 2).
        pub data_crcs: [U32; ADDRS_PER_INODE as usize],
        pub nids: [U32; NIDS_PER_INODE],
        pub footer: NodeFooter,
    }

    pub const OFF_MODE: usize = offset_of!(RawInode, mode);
    pub const OFF_IFLAGS: usize = offset_of!(RawInode, iflags);
    pub const OFF_UID: usize = offset_of!(RawInode, uid);
    pub const OFF_GID: usize = offset_of!(RawInode, gid);
    pub const OFF_LINKS: usize = offset_of!(RawInode, links);
    pub const OFF_SIZE: usize = offset_of!(RawInode, size);
    pub const OFF_BLOCKS: usize = offset_of!(RawInode, blocks);
    pub const OFF_ATIME_SEC: usize = offset_of!(RawInode, atime_sec);
    pub const OFF_ATIME_NSEC: usize = offset_of!(RawInode, atime_nsec);
    pub const OFF_MTIME_NSEC: usize = offset_of!(RawInode, mtime_nsec);
    pub const OFF_MTIME_SEC: usize = offset_of!(RawInode, mtime_sec);
    pub const OFF_CTIME_SEC: usize = offset_of!(RawInode, ctime_sec);
    pub const OFF_CTIME_NSEC: usize = offset_of!(RawInode, ctime_nsec);
    pub const OFF_CRTIME_NSEC: usize = offset_of!(RawInode, crtime_nsec);
    pub const OFF_CRTIME_SEC: usize = offset_of!(RawInode, crtime_sec);
    pub const OFF_GENERATION: usize = offset_of!(RawInode, generation);
    pub const OFF_XATTR_NID: usize = offset_of!(RawInode, xattr_nid);
    pub const OFF_PINO: usize = offset_of!(RawInode, pino);
    pub const OFF_RDEV: usize = offset_of!(RawInode, rdev);
    pub const OFF_DIR_DEPTH: usize = offset_of!(RawInode, dir_depth);
    pub const OFF_NAME_LEN: usize = offset_of!(RawInode, name_len);
    pub const OFF_NAME: usize = offset_of!(RawInode, name); // 255 bytes
    pub const OFF_TRUNC_BLOCK: usize = offset_of!(RawInode, trunc_block);
    pub const OFF_BATCH_CRC: usize = offset_of!(RawInode, batch_crc);
    pub const OFF_BATCH_BLOCKS: usize = offset_of!(RawInode, batch_blocks);
    pub const OFF_ADDRS: usize = offset_of!(RawInode, addrs); // 384
    pub const OFF_DATA_CRCS: usize = offset_of!(RawInode, data_crcs); // 2212
    pub const OFF_NIDS: usize = offset_of!(RawInode, nids); // 4040

    // The layout FORMAT.md states (format 2.0), checked at compile time.
    const _: () = {
        assert!(size_of::<RawInode>() == BLOCK_SIZE);
        assert!(OFF_MODE == 0);
        assert!(OFF_IFLAGS == 2);
        assert!(OFF_UID == 4);
        assert!(OFF_GID == 8);
        assert!(OFF_LINKS == 12);
        assert!(OFF_SIZE == 16);
        assert!(OFF_BLOCKS == 24);
        assert!(OFF_ATIME_SEC == 32);
        assert!(OFF_ATIME_NSEC == 40);
        assert!(OFF_MTIME_NSEC == 44);
        assert!(OFF_MTIME_SEC == 48);
        assert!(OFF_CTIME_SEC == 56);
        assert!(OFF_CTIME_NSEC == 64);
        assert!(OFF_CRTIME_NSEC == 68);
        assert!(OFF_CRTIME_SEC == 72);
        assert!(OFF_GENERATION == 80);
        assert!(OFF_XATTR_NID == 84);
        assert!(OFF_PINO == 88);
        assert!(OFF_RDEV == 92);
        assert!(OFF_DIR_DEPTH == 96);
        assert!(OFF_NAME_LEN == 100);
        assert!(OFF_NAME == 104);
        assert!(OFF_TRUNC_BLOCK == 360);
        assert!(OFF_BATCH_CRC == 368);
        assert!(OFF_BATCH_BLOCKS == 372);
        assert!(OFF_ADDRS == INODE_HEADER_SIZE);
        assert!(OFF_DATA_CRCS == 2212);
        assert!(OFF_NIDS == 4040);
        assert!(INLINE_DATA_MAX == 3656);
        assert!(offset_of!(RawInode, footer) == NODE_FOOTER_OFFSET);
    };

    fn raw(b: &Block) -> &RawInode {
        view(b)
    }
    fn raw_mut(b: &mut Block) -> &mut RawInode {
        view_mut(b)
    }

    pub fn mode(b: &Block) -> u16 {
        raw(b).mode.get()
    }
    pub fn set_mode(b: &mut Block, v: u16) {
        raw_mut(b).mode.set(v)
    }
    pub fn iflags(b: &Block) -> u16 {
        raw(b).iflags.get()
    }
    pub fn set_iflags(b: &mut Block, v: u16) {
        raw_mut(b).iflags.set(v)
    }
    pub fn uid(b: &Block) -> u32 {
        raw(b).uid.get()
    }
    pub fn set_uid(b: &mut Block, v: u32) {
        raw_mut(b).uid.set(v)
    }
    pub fn gid(b: &Block) -> u32 {
        raw(b).gid.get()
    }
    pub fn set_gid(b: &mut Block, v: u32) {
        raw_mut(b).gid.set(v)
    }
    pub fn links(b: &Block) -> u32 {
        raw(b).links.get()
    }
    pub fn set_links(b: &mut Block, v: u32) {
        raw_mut(b).links.set(v)
    }
    pub fn size(b: &Block) -> u64 {
        raw(b).size.get()
    }
    pub fn set_size(b: &mut Block, v: u64) {
        raw_mut(b).size.set(v)
    }
    pub fn blocks(b: &Block) -> u64 {
        raw(b).blocks.get()
    }
    pub fn set_blocks(b: &mut Block, v: u64) {
        raw_mut(b).blocks.set(v)
    }
    /// One of the four timestamps, named by its fields' offsets (`OFF_ATIME_SEC`,
    /// `OFF_ATIME_NSEC`, ...).
    pub fn time(b: &Block, sec_off: usize, nsec_off: usize) -> crate::Timestamp {
        debug_assert!(is_time_pair(sec_off, nsec_off));
        crate::Timestamp::new(get_i64(b, sec_off), get_u32(b, nsec_off))
    }
    pub fn set_time(b: &mut Block, sec_off: usize, nsec_off: usize, t: crate::Timestamp) {
        debug_assert!(is_time_pair(sec_off, nsec_off));
        put_i64(b, sec_off, t.sec);
        put_u32(b, nsec_off, t.nsec);
    }
    fn is_time_pair(sec_off: usize, nsec_off: usize) -> bool {
        [
            (OFF_ATIME_SEC, OFF_ATIME_NSEC),
            (OFF_MTIME_SEC, OFF_MTIME_NSEC),
            (OFF_CTIME_SEC, OFF_CTIME_NSEC),
            (OFF_CRTIME_SEC, OFF_CRTIME_NSEC),
        ]
        .contains(&(sec_off, nsec_off))
    }
    pub fn generation(b: &Block) -> u32 {
        raw(b).generation.get()
    }
    pub fn set_generation(b: &mut Block, v: u32) {
        raw_mut(b).generation.set(v)
    }
    pub fn xattr_nid(b: &Block) -> Nid {
        raw(b).xattr_nid.get()
    }
    pub fn set_xattr_nid(b: &mut Block, v: Nid) {
        raw_mut(b).xattr_nid.set(v)
    }
    pub fn pino(b: &Block) -> u32 {
        raw(b).pino.get()
    }
    pub fn set_pino(b: &mut Block, v: u32) {
        raw_mut(b).pino.set(v)
    }
    pub fn rdev(b: &Block) -> u32 {
        raw(b).rdev.get()
    }
    pub fn set_rdev(b: &mut Block, v: u32) {
        raw_mut(b).rdev.set(v)
    }
    pub fn dir_depth(b: &Block) -> u32 {
        raw(b).dir_depth.get()
    }
    pub fn set_dir_depth(b: &mut Block, v: u32) {
        raw_mut(b).dir_depth.set(v)
    }
    pub fn name_len(b: &Block) -> u16 {
        raw(b).name_len.get()
    }
    /// The name the inode was last linked under (for roll-forward of dentry-marked inodes).
    pub fn name(b: &Block) -> &[u8] {
        let r = raw(b);
        let n = (r.name_len.get() as usize).min(NAME_MAX);
        &r.name[..n]
    }
    pub fn set_name(b: &mut Block, name: &[u8]) {
        let n = name.len().min(NAME_MAX);
        let r = raw_mut(b);
        r.name.fill(0);
        r.name[..n].copy_from_slice(&name[..n]);
        r.name_len.set(n as u16);
    }
    pub fn trunc_block(b: &Block) -> u64 {
        raw(b).trunc_block.get()
    }
    pub fn set_batch(b: &mut Block, trunc_block: u64, crc: u32, blocks: u32) {
        let r = raw_mut(b);
        r.trunc_block.set(trunc_block);
        r.batch_crc.set(crc);
        r.batch_blocks.set(blocks);
    }
    pub fn set_batch_records(b: &mut Block, records: u32) {
        raw_mut(b).batch_records.set(records);
    }
    pub fn batch_records(b: &Block) -> u32 {
        raw(b).batch_records.get()
    }
    pub fn batch_crc(b: &Block) -> u32 {
        raw(b).batch_crc.get()
    }
    pub fn batch_blocks(b: &Block) -> u32 {
        raw(b).batch_blocks.get()
    }
    /// Data pointer `i` of the inode. An inline inode's pointer area holds bytes, not
    /// pointers: it maps nothing ([`NULL_ADDR`]), so that every walk over pointers (reads,
    /// truncation, eviction, cleaning, fsck, repair, recovery) sees it as all holes and never
    /// takes its bytes for addresses; the code that reads inline bytes asks
    /// [`is_inline`] first.
    pub fn addr(b: &Block, i: u32) -> BlockAddr {
        debug_assert!(i < ADDRS_PER_INODE);
        if is_inline(b) {
            return NULL_ADDR;
        }
        raw(b).addrs[i as usize].get()
    }
    /// The checksum of pointer `i` (0 for an inline inode: see [`addr`]).
    pub fn data_crc(b: &Block, i: u32) -> u32 {
        debug_assert!(i < ADDRS_PER_INODE);
        if is_inline(b) {
            return 0;
        }
        raw(b).data_crcs[i as usize].get()
    }
    /// The mapped data pointers of an inode: `(slot, address, checksum)` for every slot
    /// whose address is not [`NULL_ADDR`] ([`super::mapped_ptrs`] for a direct node); none
    /// for an inline inode.
    pub fn mapped_ptrs(b: &Block) -> impl Iterator<Item = (u32, BlockAddr, u32)> + '_ {
        let r = raw(b);
        let n = if is_inline(b) { 0 } else { r.addrs.len() };
        super::mapped(&r.addrs[..n], &r.data_crcs[..n])
    }
    /// Sets data pointer `i` of the inode: the address and the checksum together. Never on
    /// an inline inode (its bytes would be overwritten): it is converted first
    /// (`Filesystem::uninline`).
    pub fn set_ptr(b: &mut Block, i: u32, addr: BlockAddr, crc: u32) {
        debug_assert!(i < ADDRS_PER_INODE);
        assert!(!is_inline(b), "a pointer set in an inline inode");
        let r = raw_mut(b);
        r.addrs[i as usize].set(addr);
        r.data_crcs[i as usize].set(crc);
    }
    pub fn nid(b: &Block, i: usize) -> Nid {
        debug_assert!(i < NIDS_PER_INODE);
        raw(b).nids[i].get()
    }
    /// Sets the access, modification, change and creation times to `now` (a new inode).
    pub fn set_all_times(b: &mut Block, now: crate::Timestamp) {
        for (s, n) in [
            (OFF_ATIME_SEC, OFF_ATIME_NSEC),
            (OFF_MTIME_SEC, OFF_MTIME_NSEC),
            (OFF_CTIME_SEC, OFF_CTIME_NSEC),
            (OFF_CRTIME_SEC, OFF_CRTIME_NSEC),
        ] {
            set_time(b, s, n, now);
        }
    }
    /// Whether the inode keeps its file's bytes in its pointer area ([`IFLAG_INLINE_DATA`]).
    pub fn is_inline(b: &Block) -> bool {
        iflags(b) & IFLAG_INLINE_DATA != 0
    }
    /// The inline bytes of an inode ([`INLINE_DATA_MAX`] of them; those past the size are
    /// zero, invariant 6). Meaningful only when [`is_inline`].
    pub fn inline_data(b: &Block) -> &[u8] {
        &b[OFF_ADDRS..OFF_ADDRS + INLINE_DATA_MAX]
    }
    pub fn inline_data_mut(b: &mut Block) -> &mut [u8] {
        &mut b[OFF_ADDRS..OFF_ADDRS + INLINE_DATA_MAX]
    }
    /// Turns inline data on (an empty file: the area zeroed) or off (the area zeroed: all
    /// holes, no node ids, as an inode that never had data).
    pub fn set_inline(b: &mut Block, on: bool) {
        inline_data_mut(b).fill(0);
        let f = iflags(b);
        set_iflags(b, if on { f | IFLAG_INLINE_DATA } else { f & !IFLAG_INLINE_DATA });
    }
    pub fn set_nid(b: &mut Block, i: usize, v: Nid) {
        debug_assert!(i < NIDS_PER_INODE);
        raw_mut(b).nids[i].set(v)
    }
}

// ---- file block index → tree position ------------------------------------------------

const A: u64 = ADDRS_PER_INODE as u64;
/// Data pointers per direct node.
const P: u64 = ADDRS_PER_BLOCK as u64;
/// Children per indirect node.
const N: u64 = NIDS_PER_BLOCK as u64;

/// Number of file blocks the tree can map.
pub const MAX_FILE_BLOCKS: u64 = A + 2 * P + 2 * N * P + 2 * N * N * P;
/// Largest file size in bytes.
pub const MAX_FILE_SIZE: u64 = MAX_FILE_BLOCKS * BLOCK_SIZE as u64;

/// First file block, span in file blocks and depth (0: a direct node, 1: an indirect node
/// over direct nodes, 2: double indirect) of the subtree under each inode node-id slot.
pub const SLOT_SUBTREES: [(u64, u64, usize); NIDS_PER_INODE] = [
    (A, P, 0),
    (A + P, P, 0),
    (A + 2 * P, N * P, 1),
    (A + 2 * P + N * P, N * P, 1),
    (A + 2 * P + 2 * N * P, N * N * P, 2),
    (A + 2 * P + 2 * N * P + N * N * P, N * N * P, 2),
];

/// Entries of a tree node at `depth` (data pointers of a direct node, child ids of an
/// indirect node).
pub const fn entries_at(depth: usize) -> u32 {
    if depth == 0 {
        ADDRS_PER_BLOCK
    } else {
        NIDS_PER_BLOCK
    }
}

/// File blocks one entry of a tree node at `depth` spans: 1 for a direct node's pointer,
/// a whole direct node's span for an indirect node's child, and so on.
pub const fn entry_span(depth: usize) -> u64 {
    match depth {
        0 => 1,
        1 => P,
        _ => N * P,
    }
}

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
    if file_block < A {
        return Ok(BlockPath::Inode { ofs: file_block as u32 });
    }
    if file_block >= MAX_FILE_BLOCKS {
        return Err(Error::FileTooBig);
    }
    // Every direct node maps P blocks, so its number and the index in it follow directly.
    let dnode = (file_block - A) / P;
    let ofs = ((file_block - A) % P) as u32;
    for (slot, &(base, span, depth)) in SLOT_SUBTREES.iter().enumerate() {
        if file_block >= base + span {
            continue;
        }
        let rem = file_block - base;
        let idx = match depth {
            0 => [0, 0],
            1 => [(rem / P) as u32, 0],
            _ => [(rem / (N * P)) as u32, ((rem / P) % N) as u32],
        };
        return Ok(BlockPath::Node { slot, depth, idx, ofs, dnode });
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
                2 | 3 => 2 + (slot as u64 - 2) * N,
                _ => 2 + 2 * N + (slot as u64 - 4) * N * N,
            };
            let v = if depth == 2 && level == 1 { base + idx[0] as u64 * N } else { base };
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
        assert!(matches!(
            block_path(A + 2 * P + N * P - 1).unwrap(),
            BlockPath::Node { slot: 2, depth: 1, idx: [i, 0], .. } if i as u64 == N - 1
        ));
        assert!(matches!(block_path(A + 2 * P + N * P).unwrap(), BlockPath::Node { slot: 3, depth: 1, .. }));
        let dd = A + 2 * P + 2 * N * P;
        assert!(matches!(block_path(dd).unwrap(), BlockPath::Node { slot: 4, depth: 2, idx: [0, 0], .. }));
        assert!(matches!(
            block_path(dd + N * P + P).unwrap(),
            BlockPath::Node { slot: 4, depth: 2, idx: [1, 1], ofs: 0, .. }
        ));
        assert!(matches!(block_path(dd + N * N * P).unwrap(), BlockPath::Node { slot: 5, depth: 2, .. }));
        assert!(matches!(block_path(MAX_FILE_BLOCKS - 1).unwrap(), BlockPath::Node { slot: 5, depth: 2, .. }));
        assert_eq!(block_path(MAX_FILE_BLOCKS), Err(Error::FileTooBig));
        // Files of almost 4 TiB (3.91 TiB; f2fs: 3.94 TiB). Format 1 mapped 7.8 TiB before
        // a data pointer took 8 bytes; the device itself is at most 16 TiB.
        const { assert!(MAX_FILE_SIZE >= 3_900_000_000_000 && MAX_FILE_SIZE < 4u64 << 40) };
        // dnode numbering is dense and matches the first block of each direct node, and the
        // indirect nodes' footer numbers name the first direct node under them.
        for fb in [A, A + P, A + 2 * P, A + 2 * P + 5 * P + 3, dd + 7 * P + 1, dd + N * P + 2 * P + 9] {
            let path = block_path(fb).unwrap();
            let BlockPath::Node { dnode, ofs, depth, idx, .. } = path else { panic!() };
            assert_eq!(dnode_first_block(dnode) + ofs as u64, fb);
            if depth >= 1 {
                let lowest = indirect_ofs(&path, depth - 1) as u64 & !(1u64 << 31);
                assert_eq!(lowest + idx[depth - 1] as u64, dnode, "file block {fb}");
            }
        }
    }

    #[test]
    fn mapped_ptrs_list_exactly_the_slots_with_an_address() {
        let mut d = crate::zero_block();
        init_footer(&mut d, 9, 7, NodeType::Direct, 1);
        let last = ADDRS_PER_BLOCK - 1;
        for (i, a, c) in [(0, 100, 1), (5, NEW_ADDR, 0), (last, 200, 3)] {
            set_ptr(&mut d, i, a, c);
        }
        // A checksum without an address is no mapping.
        view_mut::<RawDirectNode>(&mut d).data_crcs[7].set(9);
        let got: alloc::vec::Vec<_> = mapped_ptrs(&d).collect();
        assert_eq!(got, [(0, 100, 1), (5, NEW_ADDR, 0), (last, 200, 3)]);
        let mut ib = crate::zero_block();
        init_footer(&mut ib, 7, 7, NodeType::Inode, 0);
        let last = ADDRS_PER_INODE - 1;
        inode::set_ptr(&mut ib, last, 300, 4);
        inode::set_ptr(&mut ib, 1, 301, 5);
        let got: alloc::vec::Vec<_> = inode::mapped_ptrs(&ib).collect();
        assert_eq!(got, [(1, 301, 5), (last, 300, 4)]);
        assert_eq!(mapped_ptrs(&crate::zero_block()).count(), 0);
    }

    #[test]
    fn inode_layout_fits() {
        assert_eq!(inode::OFF_NIDS + NIDS_PER_INODE * 4, NODE_FOOTER_OFFSET);
        assert_eq!(FOOTER_OFF_CRC, CRC_OFFSET);
        const { assert!(inode::OFF_NAME + NAME_MAX <= INODE_HEADER_SIZE) };
    }
}
