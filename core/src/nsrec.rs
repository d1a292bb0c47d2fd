//! Namespace records (issue 38; DESIGN.md, *Namespace records in the chain*; FORMAT.md,
//! *Record node*): one directory-entry change since the last checkpoint — a create, a link,
//! an unlink or a rename — as a logical record ([`NsRecord`]), and the **record node** that
//! carries records in the warm node chain, encoded and decoded here.
//!
//! This module owns the format only: what a record says and how records are packed into a
//! node block ([`pack`]) and read back from one ([`decode`]). Keeping the list since the
//! checkpoint, writing record nodes before an fsync batch and replaying them at roll-forward
//! are the jobs of `since_cp`, `nschain` and `recovery` (on images with the feature bit
//! `FEATURE_INCOMPAT_NS_RECORDS` only).
//!
//! Invariants the encoding keeps, checked by [`decode`] on every node read back (a record
//! node that breaks one is corruption, named with its block):
//! - a record lies whole inside one node (a rename is applied whole or not at all: a torn
//!   record node fails its CRC and ends the chain before it);
//! - the records of a node are numbered: `first_seq` is the number, since the checkpoint, of
//!   the node's first record, so a reader can tell that no record node is missing between
//!   two it meets (each node's `first_seq` = the previous node's `first_seq + count`);
//! - every name is 1..=255 bytes without `/` or NUL and is not `.` or `..`; every length field
//!   agrees with the bytes that follow; nothing follows the last record but zeros.

use crate::error::{Error, Result};
use crate::layout::{NAME_MAX, NODE_FOOTER_OFFSET};
use crate::node::{self, FileType};
use crate::{Block, Ino, Timestamp};
use alloc::vec::Vec;
use core::mem::size_of;
use zerocopy::little_endian::{I64, U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The node type of a record node (bits 8..15 of the footer's flags; FORMAT.md, *Node
/// footer*). Its footer `nid` and `ino` are 0: a record node is reached only through the
/// chain, never through the NAT.
pub const NODE_TYPE_RECORD: u8 = 5;

/// The record node's header, at offset 0 of its payload. FORMAT.md, *Record node*.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawRecordNodeHeader {
    /// Records in the node, at least 1.
    pub count: U16,
    /// Bytes the records take after the header.
    pub bytes: U16,
    /// Number of the node's first record since the checkpoint (records count from 0).
    pub first_seq: U32,
}

/// The fixed part every record starts with. FORMAT.md, *Namespace record*.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawRecord {
    /// [`RecordOp`] code.
    pub op: u8,
    /// Per operation: [`FLAG_RMDIR`] (unlink), [`FLAG_EXCHANGE`] (rename).
    pub flags: u8,
    /// The record's whole length in bytes, this part included.
    pub len: U16,
    pub name_len: u8,
    /// The rename's target name; 0 for the other operations.
    pub name2_len: u8,
    pub reserved: U16,
    /// The inode the record is about: created, linked, unlinked, renamed.
    pub ino: U32,
    /// The directory of `name`.
    pub dir: U32,
    /// The rename's target directory; 0 for the other operations.
    pub dir2: U32,
    /// The rename's inode at the target before it (0: none; exchange: the other inode).
    pub ino2: U32,
    /// The operation's time: the directories' new mtime and ctime, a new inode's times.
    pub time_sec: I64,
    pub time_nsec: U32,
    pub reserved2: U32,
}

/// What a create record adds after [`RawRecord`]: the new inode's attributes.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawCreateAttrs {
    /// File type and permission bits, as the inode's `mode`.
    pub mode: U16,
    /// The attribute flags the inode started with (inherited from its directory).
    pub iflags: U16,
    pub uid: U32,
    pub gid: U32,
    pub rdev: U32,
    pub generation: U32,
    /// A symlink's target length (its bytes follow the name); 0 for other types.
    pub target_len: U16,
    pub reserved: U16,
}

pub const RECORD_NODE_HEADER_LEN: usize = size_of::<RawRecordNodeHeader>(); // 8
pub const RECORD_FIXED_LEN: usize = size_of::<RawRecord>(); // 40
pub const CREATE_ATTRS_LEN: usize = size_of::<RawCreateAttrs>(); // 24
/// Bytes of records a node holds: its payload after the header.
pub const RECORD_NODE_BYTES_MAX: usize = NODE_FOOTER_OFFSET - RECORD_NODE_HEADER_LEN; // 4056
/// The longest symlink target a create record carries with a name of `NAME_MAX` bytes
/// (a longer one is not expressible: its fsync keeps the checkpoint).
pub const RECORD_SYMLINK_TARGET_MAX: usize = RECORD_NODE_BYTES_MAX - RECORD_FIXED_LEN - CREATE_ATTRS_LEN - NAME_MAX; // 3737

/// `flags` of an unlink record: the entry removed is a directory (rmdir).
pub const FLAG_RMDIR: u8 = 1;
/// `flags` of a rename record: RENAME_EXCHANGE (the two entries swap inodes).
pub const FLAG_EXCHANGE: u8 = 2;

/// The operation of a record (its `op` byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordOp {
    Create = 1,
    Link = 2,
    Unlink = 3,
    Rename = 4,
}

impl RecordOp {
    fn from_u8(v: u8) -> Option<RecordOp> {
        Some(match v {
            1 => RecordOp::Create,
            2 => RecordOp::Link,
            3 => RecordOp::Unlink,
            4 => RecordOp::Rename,
            _ => return None,
        })
    }
}

/// A new inode's attributes, as its create record carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateAttrs {
    pub mode: u16,
    pub iflags: u16,
    pub uid: u32,
    pub gid: u32,
    pub rdev: u32,
    pub generation: u32,
    /// A symlink's target (empty for the other file types).
    pub target: Vec<u8>,
}

/// One directory-entry change since the checkpoint, in the order the operations ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NsRecord {
    /// `ino` was created as `dir/name` (mknod, create, mkdir, symlink).
    Create { dir: Ino, name: Vec<u8>, ino: Ino, attrs: CreateAttrs, time: Timestamp },
    /// `ino` got the new name `dir/name` (a hard link).
    Link { dir: Ino, name: Vec<u8>, ino: Ino, time: Timestamp },
    /// `dir/name`, which named `ino`, was removed (unlink; rmdir when `rmdir`).
    Unlink { dir: Ino, name: Vec<u8>, ino: Ino, rmdir: bool, time: Timestamp },
    /// `dir/name` (inode `ino`) was renamed to `dir2/name2`, which named `ino2` before
    /// (0: nothing; with `exchange`, the inode that moves the other way).
    Rename { dir: Ino, name: Vec<u8>, ino: Ino, dir2: Ino, name2: Vec<u8>, ino2: Ino, exchange: bool, time: Timestamp },
}

impl NsRecord {
    /// The bytes the record takes in a record node.
    pub fn encoded_len(&self) -> usize {
        RECORD_FIXED_LEN
            + match self {
                NsRecord::Create { name, attrs, .. } => CREATE_ATTRS_LEN + name.len() + attrs.target.len(),
                NsRecord::Link { name, .. } | NsRecord::Unlink { name, .. } => name.len(),
                NsRecord::Rename { name, name2, .. } => name.len() + name2.len(),
            }
    }

    /// Whether a record node can carry the record: it is [within bounds](Self::within_bounds)
    /// and its encoding decodes to exactly this record (every field as the decoder accepts
    /// it: a time whose nanoseconds a caller left at 10^9 or more does not). The writer
    /// keeps exactly what the replay reads back; what cannot be expressed is made durable
    /// by a checkpoint instead (a record the decoder refused would fail the mount after a
    /// crash).
    pub fn expressible(&self) -> bool {
        if !self.within_bounds() {
            return false;
        }
        let mut buf = alloc::vec![0u8; self.encoded_len()];
        self.encode(&mut buf);
        matches!(decode_record(&buf), Ok((ref r, len)) if len == buf.len() && r == self)
    }

    /// Names of at most `NAME_MAX` bytes, a symlink target of at most
    /// [`RECORD_SYMLINK_TARGET_MAX`] (and one exactly when the record creates a symlink).
    fn within_bounds(&self) -> bool {
        let names_ok = |n: &[u8]| name_ok(n);
        match self {
            NsRecord::Create { name, attrs, .. } => {
                names_ok(name)
                    && attrs.target.len() <= RECORD_SYMLINK_TARGET_MAX
                    && (attrs.target.is_empty() != (FileType::from_mode(attrs.mode as u32) == Some(FileType::Symlink)))
            }
            NsRecord::Link { name, .. } | NsRecord::Unlink { name, .. } => names_ok(name),
            NsRecord::Rename { name, name2, .. } => names_ok(name) && names_ok(name2),
        }
    }

    /// Writes the record at the start of `out` (at least [`encoded_len`](Self::encoded_len)
    /// bytes). The record must be [`expressible`](Self::expressible).
    fn encode(&self, out: &mut [u8]) {
        debug_assert!(self.within_bounds(), "encoding a record no node can carry");
        let len = self.encoded_len();
        let out = &mut out[..len];
        out.fill(0);
        let (fixed, rest) = out.split_at_mut(RECORD_FIXED_LEN);
        let r = RawRecord::mut_from_bytes(fixed).expect("record header size");
        r.len.set(len as u16);
        let (op, time) = match self {
            NsRecord::Create { dir, name, ino, attrs, time } => {
                r.dir.set(*dir);
                r.ino.set(*ino);
                r.name_len = name.len() as u8;
                let (a, rest) = rest.split_at_mut(CREATE_ATTRS_LEN);
                let c = RawCreateAttrs::mut_from_bytes(a).expect("create attributes size");
                c.mode.set(attrs.mode);
                c.iflags.set(attrs.iflags);
                c.uid.set(attrs.uid);
                c.gid.set(attrs.gid);
                c.rdev.set(attrs.rdev);
                c.generation.set(attrs.generation);
                c.target_len.set(attrs.target.len() as u16);
                rest[..name.len()].copy_from_slice(name);
                rest[name.len()..name.len() + attrs.target.len()].copy_from_slice(&attrs.target);
                (RecordOp::Create, time)
            }
            NsRecord::Link { dir, name, ino, time } => {
                r.dir.set(*dir);
                r.ino.set(*ino);
                r.name_len = name.len() as u8;
                rest[..name.len()].copy_from_slice(name);
                (RecordOp::Link, time)
            }
            NsRecord::Unlink { dir, name, ino, rmdir, time } => {
                r.dir.set(*dir);
                r.ino.set(*ino);
                r.name_len = name.len() as u8;
                r.flags = if *rmdir { FLAG_RMDIR } else { 0 };
                rest[..name.len()].copy_from_slice(name);
                (RecordOp::Unlink, time)
            }
            NsRecord::Rename { dir, name, ino, dir2, name2, ino2, exchange, time } => {
                r.dir.set(*dir);
                r.ino.set(*ino);
                r.dir2.set(*dir2);
                r.ino2.set(*ino2);
                r.name_len = name.len() as u8;
                r.name2_len = name2.len() as u8;
                r.flags = if *exchange { FLAG_EXCHANGE } else { 0 };
                rest[..name.len()].copy_from_slice(name);
                rest[name.len()..name.len() + name2.len()].copy_from_slice(name2);
                (RecordOp::Rename, time)
            }
        };
        r.op = op as u8;
        r.time_sec.set(time.sec);
        r.time_nsec.set(time.nsec);
    }
}

/// A name a record may carry: what `namei::check_name` accepts.
fn name_ok(n: &[u8]) -> bool {
    !n.is_empty() && n.len() <= NAME_MAX && !n.contains(&b'/') && !n.contains(&0) && n != b"." && n != b".."
}

/// Packs records from the front of `records` into the payload of record node `b` (a zeroed
/// block; its footer is set to a record node's, to be sealed by the writer) numbered from
/// `first_seq`; returns how many it took (at least one when `records` is not empty: every
/// expressible record fits an empty node).
pub fn pack(b: &mut Block, records: &[NsRecord], first_seq: u32) -> usize {
    let payload = &mut b[..NODE_FOOTER_OFFSET];
    payload.fill(0);
    let (mut used, mut count) = (0usize, 0usize);
    // Bounded by the records given and by the node's room.
    for r in records {
        let len = r.encoded_len();
        if used + len > RECORD_NODE_BYTES_MAX || count == u16::MAX as usize {
            break;
        }
        r.encode(&mut payload[RECORD_NODE_HEADER_LEN + used..]);
        used += len;
        count += 1;
    }
    assert!(count > 0 || records.is_empty(), "a record larger than a node was packed");
    let h = RawRecordNodeHeader::mut_from_bytes(&mut b[..RECORD_NODE_HEADER_LEN]).expect("header size");
    h.count.set(count as u16);
    h.bytes.set(used as u16);
    h.first_seq.set(first_seq);
    init_record_footer(b);
    count
}

/// Makes `b`'s footer a record node's: `nid` 0, `ino` 0 (the group tag, [`set_group_tag`]), type [`NODE_TYPE_RECORD`], no
/// flags, `ofs` 0 (the log fields are set when the node is sealed for its write). The
/// `NodeType` enum does not name the type: no reader through the NAT may accept one.
pub fn init_record_footer(b: &mut Block) {
    node::init_footer(b, 0, 0, node::NodeType::Inode, 0);
    let off = node::FOOTER_OFF_FLAGS;
    b[off..off + 4].copy_from_slice(&((NODE_TYPE_RECORD as u32) << 8).to_le_bytes());
}

/// Whether block `b`'s footer says record node (nid 0, type 5; its `ino` is the group tag).
/// Its CRC, version and chain position are the chain walk's to check, as for every node of
/// the chain.
pub fn is_record_node(b: &Block) -> bool {
    let flags = u32::from_le_bytes(b[node::FOOTER_OFF_FLAGS..node::FOOTER_OFF_FLAGS + 4].try_into().unwrap());
    ((flags >> 8) & 0xff) as u8 == NODE_TYPE_RECORD && node::footer_nid(b) == 0
}

/// Group tag of a record node that more record nodes of the same fsync follow (FORMAT.md,
/// *Record node*): its records apply only with the whole group.
pub const GROUP_MORE: u32 = u32::MAX;

/// A record node's group tag (its footer's `ino`): 0, no group (the node stands alone);
/// [`GROUP_MORE`]; else `1 + G`, the last record node of an fsync, after which G batches of
/// the same fsync follow and must all be complete for the group's records to apply.
pub fn group_tag(b: &Block) -> u32 {
    node::footer_ino(b)
}

/// Sets record node `b`'s group tag ([`group_tag`]), before it is sealed.
pub fn set_group_tag(b: &mut Block, tag: u32) {
    b[node::FOOTER_OFF_INO..node::FOOTER_OFF_INO + 4].copy_from_slice(&tag.to_le_bytes());
}

/// A record node read back: the number of its first record and its records, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordNode {
    pub first_seq: u32,
    pub records: Vec<NsRecord>,
}

/// Decodes record node `b`, read from block `addr` (named in the error). Every field is
/// checked (the module header's invariants); the block's CRC is the caller's to have
/// checked.
pub fn decode(b: &Block, addr: u64) -> Result<RecordNode> {
    let bad = |reason| Error::corrupt(addr, reason);
    if !is_record_node(b) {
        return Err(bad("record node: footer is not a record node's"));
    }
    let h = RawRecordNodeHeader::ref_from_bytes(&b[..RECORD_NODE_HEADER_LEN]).expect("header size");
    let (count, bytes) = (h.count.get() as usize, h.bytes.get() as usize);
    if count == 0 {
        return Err(bad("record node: no records"));
    }
    if bytes > RECORD_NODE_BYTES_MAX {
        return Err(bad("record node: records past the payload"));
    }
    let area = &b[RECORD_NODE_HEADER_LEN..RECORD_NODE_HEADER_LEN + bytes];
    if b[RECORD_NODE_HEADER_LEN + bytes..NODE_FOOTER_OFFSET].iter().any(|&x| x != 0) {
        return Err(bad("record node: bytes after the last record"));
    }
    let mut records = Vec::with_capacity(count);
    let mut pos = 0usize;
    // Bounded: `count` ≤ 65,535 and every record takes at least RECORD_FIXED_LEN bytes of
    // the `bytes` checked above.
    for _ in 0..count {
        let (rec, len) = decode_record(&area[pos..]).map_err(bad)?;
        records.push(rec);
        pos += len;
    }
    if pos != bytes {
        return Err(bad("record node: byte count disagrees with its records"));
    }
    Ok(RecordNode { first_seq: h.first_seq.get(), records })
}

/// Decodes what follows a create record's fixed part (`rest`: its attributes, name and
/// symlink target).
fn decode_create(
    rest: &[u8],
    dir: Ino,
    ino: Ino,
    name_len: usize,
    time: Timestamp,
) -> core::result::Result<NsRecord, &'static str> {
    let a = rest.get(..CREATE_ATTRS_LEN).ok_or("record node: create record too short")?;
    let c = RawCreateAttrs::ref_from_bytes(a).map_err(|_| "record node: create attributes")?;
    let t = c.target_len.get() as usize;
    if c.reserved.get() != 0 {
        return Err("record node: reserved field not zero");
    }
    if rest.len() != CREATE_ATTRS_LEN + name_len + t {
        return Err("record node: create record length disagrees with its names");
    }
    let attrs = CreateAttrs {
        mode: c.mode.get(),
        iflags: c.iflags.get(),
        uid: c.uid.get(),
        gid: c.gid.get(),
        rdev: c.rdev.get(),
        generation: c.generation.get(),
        target: rest[CREATE_ATTRS_LEN + name_len..].to_vec(),
    };
    if FileType::from_mode(attrs.mode as u32).is_none() {
        return Err("record node: invalid file type in a create record");
    }
    if attrs.iflags & !node::inode::IFLAGS_ATTR != 0 {
        return Err("record node: unknown attribute flag in a create record");
    }
    let name = rest[CREATE_ATTRS_LEN..CREATE_ATTRS_LEN + name_len].to_vec();
    Ok(NsRecord::Create { dir, name, ino, attrs, time })
}

/// Decodes the record at the start of `area`; returns it and its length.
fn decode_record(area: &[u8]) -> core::result::Result<(NsRecord, usize), &'static str> {
    let fixed = area.get(..RECORD_FIXED_LEN).ok_or("record node: a record past the byte count")?;
    let r = RawRecord::ref_from_bytes(fixed).map_err(|_| "record node: record header")?;
    let len = r.len.get() as usize;
    if len < RECORD_FIXED_LEN || len > area.len() {
        return Err("record node: record length out of range");
    }
    let op = RecordOp::from_u8(r.op).ok_or("record node: unknown operation")?;
    let rest = &area[RECORD_FIXED_LEN..len];
    if r.reserved.get() != 0 || r.reserved2.get() != 0 {
        return Err("record node: reserved field not zero");
    }
    let time = Timestamp::new(r.time_sec.get(), r.time_nsec.get());
    if time.nsec >= 1_000_000_000 {
        return Err("record node: nanoseconds out of range");
    }
    let (n1, n2) = (r.name_len as usize, r.name2_len as usize);
    let (ino, dir, dir2, ino2) = (r.ino.get(), r.dir.get(), r.dir2.get(), r.ino2.get());
    if ino == 0 || dir == 0 {
        return Err("record node: a record without its inode or directory");
    }
    let two = op == RecordOp::Rename;
    if !two && (n2 != 0 || dir2 != 0 || ino2 != 0) {
        return Err("record node: rename fields in another record");
    }
    let allowed_flags = match op {
        RecordOp::Unlink => FLAG_RMDIR,
        RecordOp::Rename => FLAG_EXCHANGE,
        _ => 0,
    };
    if r.flags & !allowed_flags != 0 {
        return Err("record node: unknown flag");
    }
    let rec = match op {
        RecordOp::Create => decode_create(rest, dir, ino, n1, time)?,
        RecordOp::Link | RecordOp::Unlink => {
            if rest.len() != n1 {
                return Err("record node: record length disagrees with its name");
            }
            let name = rest.to_vec();
            if op == RecordOp::Link {
                NsRecord::Link { dir, name, ino, time }
            } else {
                NsRecord::Unlink { dir, name, ino, rmdir: r.flags & FLAG_RMDIR != 0, time }
            }
        }
        RecordOp::Rename => {
            if rest.len() != n1 + n2 {
                return Err("record node: record length disagrees with its names");
            }
            if dir2 == 0 {
                return Err("record node: a rename without its target directory");
            }
            let exchange = r.flags & FLAG_EXCHANGE != 0;
            if exchange && ino2 == 0 {
                return Err("record node: an exchange without its second inode");
            }
            let (name, name2) = (rest[..n1].to_vec(), rest[n1..].to_vec());
            NsRecord::Rename { dir, name, ino, dir2, name2, ino2, exchange, time }
        }
    };
    if !rec.within_bounds() {
        return Err("record node: a name or symlink target out of range");
    }
    Ok((rec, len))
}
