//! The consistency checker shared by `rollfs fsck` and the crash explorer.
//!
//! It loads the image as a read-only mount would (newest valid checkpoint, NAT and SIT
//! with their journals) and then checks, without writing:
//!
//! - every node reachable from the root (and from the checkpoint's orphan list) is valid:
//!   CRC, node id, owner inode, type, NAT entry in use and pointing into the main area;
//! - no block and no node is owned twice; every data pointer is in the main area;
//! - SIT agrees with the tree: exactly the reachable blocks are valid, counts match;
//! - SSA agrees with the tree: each reachable block's summary names its owner;
//! - every NAT entry in use is reachable (no lost nodes);
//! - link counts match the directory entries, directories' parent links are right;
//! - inode block counts match, no data block lies past a file's size;
//! - dentry blocks validate, each entry lies in its name's hash bucket, no name appears
//!   twice in a directory, and each entry's type matches its inode;
//! - the checkpoint's counters match;
//! - with [`FsckOptions::verify_data`] (`rollfs fsck`, `rollfs scrub`): every data block
//!   matches the checksum beside its address; bad blocks are listed by path
//!   ([`FsckReport::bad_data`]), apart from the metadata problems;
//! - both superblock copies are intact and agree, and the checkpoint pack not in use is
//!   either valid or explained by an interrupted checkpoint write (or by a fresh mkfs).
//!
//! Every loop is bounded by the table sizes, so a corrupt image cannot make it run away.
//!
//! [`repair`] (`rollfs fsck --repair`) rebuilds what the check finds wrong: see
//! repair.rs.

use crate::checkpoint::{Checkpoint, RawCpHeader, CP_MAGIC};
use crate::device::BlockDevice;
use crate::dir;
use crate::error::{Error, Result};
use crate::fs::{Filesystem, MountOptions, Timestamp};
use crate::layout::*;
use crate::node::{self, inode, FileType, NodeType};
use crate::superblock::Superblock;
use crate::{Ino, Nid};
use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// What a check found. `problems` is empty for a clean image.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsckReport {
    pub problems: Vec<String>,
    pub inodes: u64,
    pub directories: u64,
    pub data_blocks: u64,
    pub node_blocks: u64,
    /// Reserved holes (`NEW_ADDR` pointers, `FEATURE_INCOMPAT_PREALLOC`) in reachable files.
    pub reserved_blocks: u64,
    pub checkpoint_version: u64,
    /// The fsync chain after the checkpoint, which the next read-write mount rolls forward
    /// (the counts above are the checkpoint's): node blocks in it and complete fsync
    /// batches (the inodes mount will recover, counted once each).
    pub pending_chain_nodes: u64,
    pub pending_inodes: u64,
    /// Data blocks read and checked against their checksums ([`FsckOptions::verify_data`]).
    pub data_blocks_verified: u64,
    /// Data blocks whose contents do not match their checksum: what a read of them gets
    /// EIO for. A repair cannot bring the bytes back; the file's other blocks are fine.
    pub bad_data: Vec<BadData>,
    /// Reachable inodes carrying each attribute flag (`chattr`), in the order immutable,
    /// append-only, no-dump, no-atime ([`ATTR_FLAG_NAMES`]).
    pub attr_flag_inodes: [u64; 4],
}

/// The attribute flags [`FsckReport::attr_flag_inodes`] counts, with their `iflags` bits,
/// as `lsattr` names them.
pub const ATTR_FLAG_NAMES: [(u16, &str); 4] = [
    (inode::IFLAG_IMMUTABLE, "immutable"),
    (inode::IFLAG_APPEND, "append-only"),
    (inode::IFLAG_NODUMP, "no-dump"),
    (inode::IFLAG_NOATIME, "no-atime"),
];

/// A data block that failed its checksum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadData {
    pub ino: Ino,
    /// A path of the file (its first name found), or `<orphan inode N>`.
    pub path: String,
    /// File block index (the byte offset is `index * 4096`).
    pub index: u64,
    /// Device block address.
    pub block: u32,
}

impl core::fmt::Display for BadData {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{}: bad data block at byte offset {} (inode {}, file block {}, device block {}): checksum mismatch",
            self.path,
            self.index * BLOCK_SIZE as u64,
            self.ino,
            self.index,
            self.block
        )
    }
}

impl FsckReport {
    /// No metadata problem and no bad data block.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty() && self.bad_data.is_empty()
    }
}

/// What a check reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FsckOptions {
    /// Read every data block and compare it with its checksum (images with data
    /// checksums). Costs a read of all file data; the metadata check reads only metadata
    /// and directories.
    pub verify_data: bool,
}

/// What [`repair`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// The check before the repair. When it is clean nothing was written.
    pub before: FsckReport,
    /// One line per change the repair made (what was wrong, where, and what was done).
    pub fixes: Vec<String>,
    /// Problems the repair saw but could not fix.
    pub unfixed: Vec<String>,
    /// The check after the repair.
    pub after: FsckReport,
}

impl RepairReport {
    /// True when the image is clean now (whether or not anything had to be fixed).
    pub fn is_clean(&self) -> bool {
        self.after.is_clean() && self.unfixed.is_empty()
    }
    /// True when the repair changed the image.
    pub fn changed(&self) -> bool {
        !self.fixes.is_empty()
    }
}

/// Stop collecting after this many problems: one corruption can cascade.
const PROBLEMS_MAX: usize = 200;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Owner {
    Node(Nid),
    Data { holder: Nid, ofs: u32 },
}

impl core::fmt::Display for Owner {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Owner::Node(n) => write!(f, "node {n}"),
            Owner::Data { holder, ofs } => write!(f, "data slot {ofs} of node {holder}"),
        }
    }
}

/// How a node is named in messages: `inode 7`, or `node 9 (direct node of inode 7)`.
/// What is wrong with an inode's `iflags` and its inline data, if anything: unknown bits,
/// inline data on an image without the feature or in anything but a regular file, an
/// inline size past the limit, node ids beside inline bytes, or bytes past the size that
/// are not zero (invariant 6: an extension would show them).
pub(crate) fn iflags_problem(ib: &crate::Block, inline_ok: bool) -> Option<&'static str> {
    let flags = inode::iflags(ib);
    if flags & !inode::IFLAGS_KNOWN != 0 {
        return Some("unknown iflags bits");
    }
    if !inode::is_inline(ib) {
        return None;
    }
    let size = inode::size(ib);
    if !inline_ok {
        Some("inline data on an image without the inline feature")
    } else if FileType::from_mode(inode::mode(ib) as u32) != Some(FileType::Regular) {
        Some("inline data in an inode that is not a regular file")
    } else if size > inode::INLINE_DATA_MAX as u64 {
        Some("inline data with a size past the inline limit")
    } else if (0..NIDS_PER_INODE).any(|i| inode::nid(ib, i) != NULL_NID) {
        Some("inline data beside node ids")
    } else if inode::inline_data(ib)[size as usize..].iter().any(|&x| x != 0) {
        Some("inline data: bytes past the size are not zero")
    } else {
        None
    }
}

pub(crate) fn node_desc(nid: Nid, ino: Ino, ty: NodeType) -> String {
    match ty {
        NodeType::Inode => format!("inode {nid}"),
        _ => format!("node {nid} ({} of inode {ino})", type_name(ty)),
    }
}

/// How a node type is named in messages.
pub(crate) fn type_name(ty: NodeType) -> &'static str {
    match ty {
        NodeType::Inode => "inode",
        NodeType::Direct => "direct node",
        NodeType::Indirect => "indirect node",
        NodeType::Xattr => "xattr node",
    }
}

/// Progress callback: (inodes checked so far, inodes in use). Called as the tree walk goes.
pub type Progress<'p> = &'p mut dyn FnMut(u64, u64);

struct Checker<'a, 'p, D: BlockDevice> {
    fs: Filesystem<&'a mut D>,
    progress: Progress<'p>,
    report: FsckReport,
    /// Blocks claimed by the walk: (address, owner), in claim order until
    /// [`Checker::settle_owners`] sorts them by address (one entry per block).
    owners: Vec<(u32, Owner)>,
    seen_nodes: BTreeSet<Nid>,
    /// Directory entries naming each inode.
    refs: BTreeMap<Ino, u32>,
    /// Mapped blocks (file block index, address) of each directory, from the tree walk.
    dir_blocks: BTreeMap<Ino, Vec<(u64, u32)>>,
    /// Subdirectories of each directory.
    subdirs: BTreeMap<Ino, u32>,
    inodes: BTreeSet<Ino>,
    verify_data: bool,
    /// The first name found for each inode: (directory, name), for paths in messages.
    names: BTreeMap<Ino, (Ino, Vec<u8>)>,
    /// Data blocks that failed their checksum: (inode, file block, address).
    bad: Vec<(Ino, u64, u32)>,
}

impl<D: BlockDevice> Checker<'_, '_, D> {
    fn problem(&mut self, p: String) {
        if self.report.problems.len() < PROBLEMS_MAX {
            self.report.problems.push(p);
        }
    }

    fn claim(&mut self, addr: u32, owner: Owner) {
        if !self.fs.geo.in_main(addr) {
            self.problem(format!("block address {addr} of {owner} is outside the main area"));
            return;
        }
        // Sorted and checked for blocks owned twice once the walk is done (`settle_owners`):
        // a push per block instead of a map insert (fsck claims every block of the image).
        self.owners.push((addr, owner));
    }

    /// Sorts the claimed blocks by address and reports each block claimed more than once
    /// (by the claim before and the claim that took it, in walk order); the last claim
    /// stays the block's owner.
    fn settle_owners(&mut self) {
        let mut owners = core::mem::take(&mut self.owners);
        // Stable: claims of one block stay in walk order.
        owners.sort_by_key(|&(addr, _)| addr);
        let mut kept: Vec<(u32, Owner)> = Vec::with_capacity(owners.len());
        for (addr, owner) in owners {
            match kept.last_mut() {
                Some(last) if last.0 == addr => {
                    let prev = last.1;
                    self.problem(format!("block {addr}: owned twice, by {prev} and by {owner}"));
                    last.1 = owner;
                }
                _ => kept.push((addr, owner)),
            }
        }
        self.owners = kept;
    }

    /// Address of the NAT block (in its current slot) that holds `nid`'s entry.
    fn nat_block_of(&self, nid: Nid) -> u64 {
        let i = nid / NAT_ENTRIES_PER_BLOCK;
        let slot = self.fs.nat.slots.get(i as usize).copied().unwrap_or(0);
        self.fs.geo.nat_addr(i, slot)
    }

    /// Claims and validates a node; returns false if it could not be used.
    fn claim_node(&mut self, nid: Nid, ino: Ino, ty: NodeType) -> bool {
        let what = type_name(ty);
        // Named only for a message: fsck claims every node of the image.
        let desc = || node_desc(nid, ino, ty);
        if !self.seen_nodes.insert(nid) {
            self.problem(format!("{}: referenced twice", desc()));
            return false;
        }
        let e = match self.fs.nat.get(nid) {
            Some(e) if !e.is_free() => e,
            _ => {
                let nb = self.nat_block_of(nid);
                self.problem(format!("{}: NAT entry is free (NAT block {nb})", desc()));
                return false;
            }
        };
        if e.ino != ino {
            let nb = self.nat_block_of(nid);
            self.problem(format!("{}: NAT entry names inode {} (NAT block {nb})", desc(), e.ino));
            return false;
        }
        if !self.fs.geo.in_main(e.addr) {
            let nb = self.nat_block_of(nid);
            self.problem(format!("{}: NAT address {} outside the main area (NAT block {nb})", desc(), e.addr));
            return false;
        }
        match self.fs.node_ref(nid) {
            Ok(b) => {
                if node::footer_type(b) != Some(ty) {
                    let found = node::footer_type(b).map(type_name).unwrap_or("unknown node");
                    self.problem(format!(
                        "block {}: node {nid} is a {found}, expected a {what} of inode {ino}",
                        e.addr
                    ));
                    return false;
                }
            }
            Err(err) => {
                self.problem(format!("{}: {err}", desc()));
                return false;
            }
        }
        self.claim(e.addr, Owner::Node(nid));
        self.report.node_blocks += 1;
        true
    }

    #[allow(clippy::too_many_arguments)] // one block's full context, for the messages
    fn check_data(
        &mut self,
        ino: Ino,
        holder: Nid,
        ofs: u32,
        idx: u64,
        (addr, crc): (u32, u32),
        size_blocks: u64,
        count: &mut u64,
    ) {
        if addr == NULL_ADDR {
            return;
        }
        if addr == NEW_ADDR {
            if self.fs.prealloc_on_disk {
                // A reserved hole: counted in `blocks` and in the checkpoint's total, owns
                // no block (and may lie past the size: fallocate's KEEP_SIZE).
                *count += 1;
                self.report.reserved_blocks += 1;
            } else {
                self.problem(format!("inode {ino}: file block {idx} marked unwritten on disk (node {holder})"));
            }
            return;
        }
        *count += 1;
        self.report.data_blocks += 1;
        if idx >= size_blocks {
            self.problem(format!("block {addr}: file block {idx} of inode {ino} lies past the file size"));
        }
        if let Some(v) = self.dir_blocks.get_mut(&ino) {
            v.push((idx, addr));
        }
        self.claim(addr, Owner::Data { holder, ofs });
        if self.verify_data && self.fs.data_checksums && self.fs.geo.in_main(addr) {
            let mut buf = crate::zero_block();
            match self.fs.dev.read(addr as u64, &mut buf) {
                Ok(()) => {
                    self.report.data_blocks_verified += 1;
                    if crate::codec::crc(&buf[..]) != crc {
                        self.bad.push((ino, idx, addr));
                    }
                }
                Err(e) => self.problem(format!("inode {ino}: file block {idx}: {}", Error::from(e))),
            }
        }
    }

    /// A path of `ino` from the names the directory walk found (bounded by the inode
    /// count: a cycle cannot make it run away).
    fn path_of(&self, ino: Ino) -> String {
        let mut parts: Vec<&[u8]> = Vec::new();
        let mut cur = ino;
        let bound = self.names.len() + 1;
        while cur != ROOT_INO {
            let Some((parent, name)) = self.names.get(&cur) else {
                return format!("<orphan inode {ino}>");
            };
            parts.push(name);
            cur = *parent;
            if parts.len() > bound {
                return format!("<inode {ino}>");
            }
        }
        let mut out = String::new();
        for p in parts.iter().rev() {
            out.push('/');
            out.push_str(&String::from_utf8_lossy(p));
        }
        if out.is_empty() {
            out.push('/');
        }
        out
    }

    /// Walks an inode's node tree, claiming every node and block.
    fn walk_inode(&mut self, ino: Ino) -> Option<FileType> {
        if !self.claim_node(ino, ino, NodeType::Inode) {
            return None;
        }
        self.inodes.insert(ino);
        self.report.inodes += 1;
        if self.report.inodes.is_multiple_of(256) {
            let total = self.fs.cp.valid_inodes as u64;
            (self.progress)(self.report.inodes, total);
        }
        // What the walk needs of the inode, taken out of the node cache's copy (the walk
        // loads other nodes meanwhile): its mapped slots (holes need no check), subtree
        // roots, xattr node and counts. A copy of the whole block per inode cost more.
        let inline_ok = self.fs.inline_data;
        let (mode, size, blocks, mapped, subtrees, x, flags_problem, iflags) = match self.fs.node_ref(ino) {
            Ok(ib) => (
                inode::mode(ib),
                inode::size(ib),
                inode::blocks(ib),
                inode::mapped_ptrs(ib).collect::<Vec<(u32, u32, u32)>>(),
                core::array::from_fn::<Nid, { node::SLOT_SUBTREES.len() }, _>(|slot| inode::nid(ib, slot)),
                inode::xattr_nid(ib),
                iflags_problem(ib, inline_ok),
                inode::iflags(ib),
            ),
            Err(_) => return None,
        };
        for (n, (bit, _)) in self.report.attr_flag_inodes.iter_mut().zip(ATTR_FLAG_NAMES) {
            *n += u64::from(iflags & bit != 0);
        }
        if let Some(p) = flags_problem {
            let addr = self.fs.nat_addr(ino);
            self.problem(format!("inode {ino} (block {addr}): {p}"));
        }
        let kind = FileType::from_mode(mode as u32)?;
        if kind == FileType::Directory {
            self.dir_blocks.insert(ino, Vec::new());
        }
        let size_blocks = match kind {
            FileType::Regular | FileType::Symlink | FileType::Directory => size.div_ceil(BLOCK_SIZE as u64),
            _ => 0,
        };
        let mut count = 0u64;
        for (ofs, addr, crc) in mapped {
            self.check_data(ino, ino, ofs, ofs as u64, (addr, crc), size_blocks, &mut count);
        }
        for (&(base, _, depth), &nid) in node::SLOT_SUBTREES.iter().zip(&subtrees) {
            if nid != NULL_NID {
                self.walk_subtree(ino, nid, depth, base, size_blocks, &mut count);
            }
        }
        if x != NULL_NID && self.claim_node(x, ino, NodeType::Xattr) {
            let addr = self.fs.nat_addr(x);
            if let Ok(b) = self.fs.node_ref(x) {
                if let Err(e) = crate::xattr::decode(b, addr) {
                    self.problem(format!("xattr node {x} of inode {ino}: {e}"));
                }
            }
        }
        if blocks != count {
            let addr = self.fs.nat_addr(ino);
            self.problem(format!("inode {ino} (block {addr}): block count {blocks}, but {count} blocks mapped"));
        }
        Some(kind)
    }

    fn walk_subtree(&mut self, ino: Ino, nid: Nid, depth: usize, base: u64, size_blocks: u64, count: &mut u64) {
        let ty = if depth == 0 { NodeType::Direct } else { NodeType::Indirect };
        if !self.claim_node(nid, ino, ty) {
            return;
        }
        // Only the mapped slots (holes need no check): `(slot, address or child id, crc)`.
        let slots: Vec<(u32, u32, u32)> = match self.fs.node_ref(nid) {
            Ok(b) if depth == 0 => node::mapped_ptrs(b).collect(),
            Ok(b) => (0..NIDS_PER_BLOCK).map(|i| (i, node::slot(b, i), 0)).filter(|&(_, v, _)| v != NULL_NID).collect(),
            Err(_) => return,
        };
        let span = node::entry_span(depth);
        for &(i, v, crc) in &slots {
            if depth == 0 {
                self.check_data(ino, nid, i, base + i as u64, (v, crc), size_blocks, count);
            } else {
                if v >= self.fs.nat.nid_count() {
                    let addr = self.fs.nat_addr(nid);
                    self.problem(format!("block {addr}: node {nid} of inode {ino}: child node id {v} out of range"));
                    continue;
                }
                self.walk_subtree(ino, v, depth - 1, base + i as u64 * span, size_blocks, count);
            }
        }
    }

    fn run(&mut self) {
        let mut queue: VecDeque<Ino> = VecDeque::new();
        let mut dirs_seen: BTreeSet<Ino> = BTreeSet::new();
        if self.walk_inode(ROOT_INO) != Some(FileType::Directory) {
            self.problem(String::from("root inode missing or not a directory"));
            return;
        }
        queue.push_back(ROOT_INO);
        dirs_seen.insert(ROOT_INO);
        // Bounded: each directory is queued once, and there are at most nid_count inodes.
        while let Some(d) = queue.pop_front() {
            self.report.directories += 1;
            let depth = match self.fs.inode_ref(d) {
                Ok(b) => inode::dir_depth(b),
                Err(e) => {
                    self.problem(format!("directory {d}: {e}"));
                    continue;
                }
            };
            let end = dir::max_block_index(depth);
            if depth > dir::MAX_DEPTH {
                let addr = self.fs.nat_addr(d);
                self.problem(format!("directory {d} (block {addr}): depth {depth} beyond the maximum"));
            }
            let blocks = self.dir_blocks.remove(&d).unwrap_or_default();
            let mut names: BTreeSet<Vec<u8>> = BTreeSet::new();
            let mut buf = crate::zero_block();
            let overflow = self.fs.superblock().dir_v2();
            let key = match self.fs.dir_hash_key(d) {
                Ok(k) => k,
                Err(e) => {
                    self.problem(format!("directory {d}: {e}"));
                    continue;
                }
            };
            // Overflow distances of the deepest level's buckets (by the block holding
            // each), and the entries found outside their own bucket there: checked against
            // each other once every block is read.
            let mut distances: BTreeMap<u64, u32> = BTreeMap::new();
            let mut overflowed: Vec<(u64, u32, u32, Vec<u8>)> = Vec::new();
            for (idx, addr) in blocks {
                if idx >= end {
                    self.problem(format!(
                        "block {addr}: dentry block {idx} of directory {d} lies beyond its depth {depth}"
                    ));
                    continue;
                }
                if let Err(e) = self.fs.dev.read(addr as u64, &mut buf) {
                    self.problem(format!("directory {d}: {}", Error::from(e)));
                    continue;
                }
                let db = match dir::decode_block(idx, &buf, addr as u64) {
                    Ok(db) => db,
                    Err(e) => {
                        self.problem(format!("directory {d}: dentry block {idx}: {e}"));
                        continue;
                    }
                };
                let placed = if overflow {
                    if db.overflow() != 0 {
                        distances.insert(idx, db.overflow());
                    }
                    db.check_placement_with(
                        &key,
                        Some(&mut |home, distance, name: &[u8]| overflowed.push((home, distance, addr, name.to_vec()))),
                    )
                } else {
                    db.check_placement_keyed(&key)
                };
                if let Err(r) = placed {
                    self.problem(format!("block {addr}: dentry block {idx} of directory {d}: {r}"));
                }
                for e in db.entries() {
                    // Spelled out only for a message (most entries have none).
                    let name = || String::from_utf8_lossy(e.name).into_owned();
                    if !names.insert(e.name.to_vec()) {
                        let name = name();
                        self.problem(format!("block {addr}: directory {d} holds the name {name:?} twice"));
                        continue;
                    }
                    *self.refs.entry(e.ino).or_insert(0) += 1;
                    self.names.entry(e.ino).or_insert_with(|| (d, e.name.to_vec()));
                    let kind = if self.inodes.contains(&e.ino) {
                        self.fs.inode_kind(e.ino).ok()
                    } else {
                        match self.fs.nat.get(e.ino) {
                            Some(n) if n.ino == e.ino && !n.is_free() => self.walk_inode(e.ino),
                            _ => {
                                let name = name();
                                self.problem(format!(
                                    "block {addr}: entry {name:?} of directory {d} points to free inode {}",
                                    e.ino
                                ));
                                continue;
                            }
                        }
                    };
                    let Some(kind) = kind else { continue };
                    if kind != e.kind {
                        let name = name();
                        self.problem(format!(
                            "block {addr}: entry {name:?} of directory {d} has type {:?} but inode {} is {kind:?}",
                            e.kind, e.ino
                        ));
                    }
                    if kind == FileType::Directory {
                        *self.subdirs.entry(d).or_insert(0) += 1;
                        if !dirs_seen.insert(e.ino) {
                            let name = name();
                            self.problem(format!("directory {} has more than one name ({name:?} in {d})", e.ino));
                            continue;
                        }
                        match self.fs.inode_ref(e.ino) {
                            Ok(b) if inode::pino(b) != d => {
                                let p = inode::pino(b);
                                let a = self.fs.nat_addr(e.ino);
                                let name = name();
                                self.problem(format!(
                                    "directory {} (block {a}, {name:?}) records parent {p}, but lives in {d}",
                                    e.ino
                                ));
                            }
                            _ => {}
                        }
                        queue.push_back(e.ino);
                    }
                }
            }
            // An entry past its own bucket must be within that bucket's overflow distance:
            // lookup reads no further.
            for (home, distance, addr, name) in overflowed {
                let have = distances.get(&home).copied().unwrap_or(0);
                if distance > have {
                    let name = String::from_utf8_lossy(&name);
                    self.problem(format!(
                        "block {addr}: entry {name:?} of directory {d} lies {distance} buckets past its own, \
                         beyond that bucket's overflow distance {have}: lookup cannot find it"
                    ));
                }
            }
        }
        // Orphans: unlinked but open at the checkpoint; their blocks are still owned.
        let orphans = self.fs.cp.orphans.clone();
        for o in orphans {
            if self.inodes.contains(&o) {
                self.problem(format!("orphan list: inode {o} is still linked"));
                continue;
            }
            if !self.fs.nat.get(o).is_some_and(|e| e.ino == o && !e.is_free()) {
                self.problem(format!("orphan list: inode {o} is not in use"));
                continue;
            }
            if self.walk_inode(o).is_some() {
                if let Ok(b) = self.fs.inode_ref(o) {
                    if inode::links(b) != 0 {
                        let l = inode::links(b);
                        self.problem(format!("orphan list: inode {o} has {l} links"));
                    }
                }
            }
        }
        self.check_links();
        self.check_tables();
    }

    fn check_links(&mut self) {
        let inodes: Vec<Ino> = self.inodes.iter().copied().collect();
        let orphans: BTreeSet<Ino> = self.fs.cp.orphans.iter().copied().collect();
        for ino in inodes {
            if orphans.contains(&ino) {
                continue;
            }
            let Ok(b) = self.fs.inode_ref(ino) else {
                continue;
            };
            let links = inode::links(b);
            let kind = FileType::from_mode(inode::mode(b) as u32);
            let want = if kind == Some(FileType::Directory) {
                2 + self.subdirs.get(&ino).copied().unwrap_or(0)
            } else {
                self.refs.get(&ino).copied().unwrap_or(0)
            };
            if links != want {
                let addr = self.fs.nat_addr(ino);
                if kind == Some(FileType::Directory) {
                    let n = want - 2;
                    self.problem(format!("directory {ino} (block {addr}): link count {links}, but {n} subdirectories"));
                } else {
                    self.problem(format!("inode {ino} (block {addr}): link count {links}, but {want} names found"));
                }
            }
        }
    }

    fn sit_problem(&mut self, (unowned, first, last): (bool, u32, u32)) {
        let g = self.fs.geo;
        let what = if unowned { "valid in the SIT but owned by nothing" } else { "in use but free in the SIT" };
        let (s0, s1) = (g.segno_of(first), g.segno_of(last));
        let segs = if s0 == s1 { format!("segment {s0}") } else { format!("segments {s0}..={s1}") };
        if first == last {
            self.problem(format!("block {first}: {what} ({segs})"));
        } else {
            self.problem(format!("blocks {first}..={last}: {what} ({segs})"));
        }
    }

    /// The checkpoint header's counters against what the walk found (`sit_valid`: the
    /// SIT's valid blocks).
    fn check_counters(&mut self, sit_valid: u64) {
        let cp = &self.fs.cp;
        let (blocks, inodes, reserved) = (cp.valid_blocks, cp.valid_inodes as u64, cp.reserved_blocks);
        if sit_valid != blocks {
            self.problem(format!("checkpoint counts {blocks} valid blocks, SIT has {sit_valid}"));
        }
        if self.report.inodes != inodes {
            self.problem(format!("checkpoint counts {inodes} inodes, {} found", self.report.inodes));
        }
        if self.report.reserved_blocks != reserved {
            self.problem(format!(
                "checkpoint counts {reserved} reserved blocks, {} found",
                self.report.reserved_blocks
            ));
        }
    }

    fn check_tables(&mut self) {
        self.settle_owners();
        // Every NAT entry in use must have been reached.
        let used: Vec<(Nid, u32)> = self.fs.nat.iter_used().map(|(n, e)| (n, e.ino)).collect();
        for (nid, ino) in used {
            if !self.seen_nodes.contains(&nid) {
                let addr = self.fs.nat_addr(nid);
                let what = if nid == ino { "inode" } else { "node" };
                self.problem(format!("block {addr}: {what} {nid} (of inode {ino}) is in the NAT but unreachable"));
            }
        }
        // SIT against the ownership map.
        let g = self.fs.geo;
        let mut sit_valid = 0u64;
        // Runs of consecutive blocks with the same disagreement make one message.
        // (valid but unowned?, first, last)
        let mut run: Option<(bool, u32, u32)> = None;
        // `owners` holds main-area addresses only (`claim`), sorted and unique
        // (`settle_owners`): walked beside the blocks instead of looked up per block.
        let owned: Vec<u32> = self.owners.iter().map(|(a, _)| *a).collect();
        let mut next_owned = 0usize;
        // Whole bytes: a geometry's segment size is a power of two of at least
        // SEGMENT_BLOCKS_MIN blocks (`Geometry::validate`).
        let seg_bytes = (g.segment_blocks / 8) as usize;
        for segno in 0..g.main_segments {
            let e = *self.fs.sit.get(segno);
            sit_valid += e.valid as u64;
            let start = g.seg_start(segno);
            let end = start + g.segment_blocks;
            // The segment's owned blocks as a bitmap: most segments agree with the SIT
            // whole, and then no block of theirs needs a look (an fsck of a crash image
            // spent a tenth of its time in the per-block loop below).
            let mut bits = [0u8; crate::layout::SIT_BITMAP_BYTES];
            let first_owned = next_owned;
            while next_owned < owned.len() && owned[next_owned] < end {
                let off = owned[next_owned] - start;
                bits[(off / 8) as usize] |= 1 << (off % 8);
                next_owned += 1;
            }
            if bits[..seg_bytes] == e.bitmap[..seg_bytes] {
                // No block disagrees: a run of disagreeing blocks ends at this segment.
                if let Some(r) = run.take() {
                    self.sit_problem(r);
                }
                continue;
            }
            let mut k = first_owned;
            for off in 0..g.segment_blocks {
                let addr = start + off;
                let is_owned = k < next_owned && owned[k] == addr;
                if is_owned {
                    k += 1;
                }
                let bad = match (e.is_valid(off), is_owned) {
                    (true, false) => Some(true),
                    (false, true) => Some(false),
                    _ => None,
                };
                match (run, bad) {
                    (Some((k, first, last)), Some(b)) if k == b && last + 1 == addr => run = Some((k, first, addr)),
                    (_, b) => {
                        if let Some(r) = run.take() {
                            self.sit_problem(r);
                        }
                        run = b.map(|k| (k, addr, addr));
                    }
                }
            }
        }
        if let Some(r) = run {
            self.sit_problem(r);
        }
        self.check_counters(sit_valid);
        self.check_summaries();
    }

    /// The SSA against the ownership map (taken: the last check that needs it).
    fn check_summaries(&mut self) {
        let g = self.fs.geo;
        let owners = core::mem::take(&mut self.owners);
        let version = self.fs.cp.version;
        for &(addr, owner) in &owners {
            let want = match owner {
                Owner::Node(nid) => (nid, 0u16),
                Owner::Data { holder, ofs } => {
                    // In a node segment a data block's entry carries the data flag (data
                    // beside its chain), which only images with the feature write.
                    let s = self.fs.data_summary(addr, holder, ofs);
                    if s.ofs & crate::ssa::SSA_OFS_DATA != 0 && !self.fs.mixed_node {
                        self.problem(format!(
                            "block {addr}: {owner} lies in a node segment (segment {}), on an image without data beside its chain",
                            g.segno_of(addr)
                        ));
                    }
                    (s.nid, s.ofs)
                }
            };
            match self.fs.ssa.get(&mut self.fs.dev, &g, addr, version) {
                Ok(s) if (s.nid, s.ofs) == want => {}
                Ok(s) => self.problem(format!(
                    "block {addr}: summary (SSA) says node {} slot {}, but its owner is {owner}",
                    s.nid, s.ofs
                )),
                Err(e) => self.problem(format!("block {addr}: summary unreadable: {e}")),
            }
        }
    }
}

/// Checks the metadata of the image on `dev` as a mount would see it (newest valid
/// checkpoint), without writing. An `Err` means the image could not be checked at all
/// (unreadable superblock or checkpoint, I/O error); problems found are in the report.
pub fn check<D: BlockDevice>(dev: &mut D) -> Result<FsckReport> {
    check_with(dev, &FsckOptions::default(), &mut |_, _| {})
}

/// [`check`] (metadata only), reporting progress (inodes checked, inodes in use).
pub fn check_with_progress<D: BlockDevice>(dev: &mut D, progress: Progress<'_>) -> Result<FsckReport> {
    check_with(dev, &FsckOptions::default(), progress)
}

/// [`check`] with options (data verification), reporting progress.
pub fn check_with<D: BlockDevice>(dev: &mut D, fsck_opts: &FsckOptions, progress: Progress<'_>) -> Result<FsckReport> {
    let mut early = match header_problems(dev) {
        Ok(p) => p,
        Err(e @ Error::Io { .. }) => return Err(e),
        Err(_) => Vec::new(), // the mount below reports it
    };
    let opts = MountOptions { read_only: true, ..MountOptions::default() };
    let fs = match Filesystem::mount_inner(&mut *dev, &opts, Timestamp::default(), false) {
        Ok(fs) => fs,
        Err(e @ Error::Io { .. }) => return Err(e),
        Err(e) => {
            early.push(format!("cannot mount: {e}"));
            return Ok(FsckReport { problems: early, ..Default::default() });
        }
    };
    let version = fs.cp.version;
    let mut c = Checker {
        fs,
        progress,
        report: FsckReport { checkpoint_version: version, problems: early, ..Default::default() },
        owners: Vec::new(),
        seen_nodes: BTreeSet::new(),
        refs: BTreeMap::new(),
        dir_blocks: BTreeMap::new(),
        subdirs: BTreeMap::new(),
        inodes: BTreeSet::new(),
        verify_data: fsck_opts.verify_data,
        names: BTreeMap::new(),
        bad: Vec::new(),
    };
    c.run();
    let bad = core::mem::take(&mut c.bad);
    c.report.bad_data =
        bad.into_iter().map(|(ino, index, block)| BadData { ino, path: c.path_of(ino), index, block }).collect();
    match c.fs.pending_recovery() {
        Ok((nodes, inodes)) => {
            c.report.pending_chain_nodes = nodes;
            c.report.pending_inodes = inodes;
        }
        Err(e @ Error::Io { .. }) => return Err(e),
        Err(e) => c.report.problems.push(format!("fsync chain: {e}")),
    }
    let (done, total) = (c.report.inodes, c.fs.cp.valid_inodes as u64);
    (c.progress)(done, total);
    Ok(c.report)
}

/// Problems of the blocks a mount reads before the tables: a damaged superblock copy
/// (mount uses the other), and a checkpoint pack that is damaged in a way no interrupted
/// checkpoint write explains (mount uses the other pack). `Err` when the superblock or
/// both packs are unusable: the mount reports that.
fn header_problems<D: BlockDevice>(dev: &mut D) -> Result<Vec<String>> {
    let sb = crate::superblock::read_superblock(dev)?;
    let mut out: Vec<String> = superblock_damage(dev, &sb)?.into_iter().map(|(_, m)| m).collect();
    let (cp, pack) = Checkpoint::read_newest(dev, &sb.geometry)?;
    if let Some((_, m)) = damaged_pack(dev, &sb.geometry, pack, cp.version)? {
        out.push(m);
    }
    Ok(out)
}

/// Superblock copies that do not match the one in use: (address, message).
pub(crate) fn superblock_damage<D: BlockDevice>(dev: &mut D, sb: &Superblock) -> Result<Vec<(u64, String)>> {
    let mut out = Vec::new();
    let mut buf = crate::zero_block();
    for (i, &addr) in SUPERBLOCK_ADDRS.iter().enumerate() {
        dev.read(addr, &mut buf)?;
        match Superblock::decode(addr, &buf) {
            Ok(copy) if copy == *sb => {}
            Ok(_) => out.push((addr, format!("superblock copy {i} (block {addr}): differs from the copy in use"))),
            Err(e) => out.push((addr, format!("superblock copy {i}: {e}"))),
        }
    }
    Ok(out)
}

/// The checkpoint pack not in use (`1 - pack`), if it is damaged in a way that neither a
/// checkpoint write cut short by a crash (its header still names this pack, with an
/// older version or a newer one) nor a fresh mkfs (pack 1 never written while the
/// version in use is 1) explains. Returns (pack, message).
pub(crate) fn damaged_pack<D: BlockDevice>(
    dev: &mut D,
    geo: &Geometry,
    pack: usize,
    version: u64,
) -> Result<Option<(usize, String)>> {
    let other = 1 - pack;
    let base = geo.cp_pack_addr(other);
    let what = format!("checkpoint pack {other} (block {base})");
    let using = format!("pack {pack} (version {version}) is in use");
    match Checkpoint::read_pack(dev, geo, other) {
        Ok(Some(_)) => return Ok(None),
        Err(e @ Error::Io { .. }) => return Err(e),
        Err(e) => return Ok(Some((other, format!("{what}: {e}; {using}")))),
        Ok(None) => {}
    }
    let mut h = crate::zero_block();
    dev.read(base, &mut h)?;
    let r: &RawCpHeader = crate::codec::view(&h);
    let magic = r.magic.get();
    let v = r.version.get();
    // Never written since mkfs: marked unused (zeros from mkfs before the marker).
    if (magic == 0 || magic == crate::checkpoint::CP_UNUSED_MAGIC) && version == 1 {
        return Ok(None);
    }
    let reason = if magic != CP_MAGIC {
        "bad magic"
    } else if r.pack.get() != other as u32 {
        "header names the other pack"
    } else if v != version {
        // Older: the pack before the one in use. Newer: a checkpoint write cut short (its
        // version is the one in use plus 1, or plus a mount's jump: `version_jump`).
        return Ok(None);
    } else {
        "version out of sequence"
    };
    Ok(Some((other, format!("{what}: destroyed ({reason}); {using}"))))
}

/// Repairs the image on `dev` (`rollfs fsck --repair`): checks it, and if the check finds
/// anything, rebuilds the metadata from the tree reachable from the root and writes a
/// fresh checkpoint (see repair.rs for what is repaired and what is lost), then
/// checks again. `now` stamps what the repair changes. Nothing is written when the check
/// is clean. An `Err` is an I/O error, or an image too damaged to repair (no superblock,
/// no valid checkpoint pack, the root directory lost); nothing is written then either.
pub fn repair<D: BlockDevice>(dev: &mut D, now: Timestamp) -> Result<RepairReport> {
    repair_with_progress(dev, now, &mut |_, _| {})
}

/// [`repair`], reporting the progress of the first check.
pub fn repair_with_progress<D: BlockDevice>(
    dev: &mut D,
    now: Timestamp,
    progress: Progress<'_>,
) -> Result<RepairReport> {
    repair_with(dev, now, &FsckOptions::default(), progress)
}

/// [`repair`] with check options: with [`FsckOptions::verify_data`] the checks before and
/// after read every data block, so the report lists the bad ones (which a repair cannot
/// bring back: `after.bad_data`, and the repair is not clean while they remain).
pub fn repair_with<D: BlockDevice>(
    dev: &mut D,
    now: Timestamp,
    fsck_opts: &FsckOptions,
    progress: Progress<'_>,
) -> Result<RepairReport> {
    let before = check_with(dev, fsck_opts, progress)?;
    // Bad data blocks are not the repair's to fix (their bytes are gone): only metadata.
    if before.problems.is_empty() {
        let after = before.clone();
        return Ok(RepairReport { before, after, ..Default::default() });
    }
    let (fixes, unfixed) = crate::repair::run(dev, now)?;
    let after = check_with(dev, fsck_opts, &mut |_, _| {})?;
    Ok(RepairReport { before, fixes, unfixed, after })
}
