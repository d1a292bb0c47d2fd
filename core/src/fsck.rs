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
//! - dentry blocks validate and each entry's type matches its inode;
//! - the checkpoint's counters match.
//!
//! Every loop is bounded by the table sizes, so a corrupt image cannot make it run away.

use crate::device::BlockDevice;
use crate::dir;
use crate::error::{Error, Result};
use crate::fs::{FileType, Filesystem, MountOptions, Timestamp};
use crate::layout::*;
use crate::namei::DirIo;
use crate::node::{self, inode, NodeType};
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
    pub checkpoint_version: u64,
}

impl FsckReport {
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Stop collecting after this many problems: one corruption can cascade.
const PROBLEMS_MAX: usize = 200;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Owner {
    Node(Nid),
    Data { holder: Nid, ofs: u32 },
}

/// Progress callback: (inodes checked so far, inodes in use). Called as the tree walk goes.
pub type Progress<'p> = &'p mut dyn FnMut(u64, u64);

struct Checker<'a, 'p, D: BlockDevice> {
    fs: Filesystem<&'a mut D>,
    progress: Progress<'p>,
    report: FsckReport,
    owners: BTreeMap<u32, Owner>,
    seen_nodes: BTreeSet<Nid>,
    /// Directory entries naming each inode.
    refs: BTreeMap<Ino, u32>,
    /// Subdirectories of each directory.
    subdirs: BTreeMap<Ino, u32>,
    inodes: BTreeSet<Ino>,
}

impl<D: BlockDevice> Checker<'_, '_, D> {
    fn problem(&mut self, p: String) {
        if self.report.problems.len() < PROBLEMS_MAX {
            self.report.problems.push(p);
        }
    }

    fn claim(&mut self, addr: u32, owner: Owner) {
        if !self.fs.geo.in_main(addr) {
            self.problem(format!("block address {addr} of {owner:?} is outside the main area"));
            return;
        }
        if let Some(prev) = self.owners.insert(addr, owner) {
            self.problem(format!("block {addr} owned twice: by {prev:?} and by {owner:?}"));
        }
    }

    /// Claims and validates a node; returns false if it could not be used.
    fn claim_node(&mut self, nid: Nid, ino: Ino, ty: NodeType) -> bool {
        if !self.seen_nodes.insert(nid) {
            self.problem(format!("node {nid} referenced twice (inode {ino})"));
            return false;
        }
        let e = match self.fs.nat.get(nid) {
            Some(e) if !e.is_free() => e,
            _ => {
                self.problem(format!("inode {ino} points to node {nid}, which the NAT says is free"));
                return false;
            }
        };
        if e.ino != ino {
            self.problem(format!("node {nid}: NAT owner {} differs from inode {ino}", e.ino));
            return false;
        }
        if !self.fs.geo.in_main(e.addr) {
            self.problem(format!("node {nid}: NAT address {} outside the main area", e.addr));
            return false;
        }
        match self.fs.node_ref(nid) {
            Ok(b) => {
                if node::footer_type(b) != Some(ty) {
                    self.problem(format!("node {nid} at block {}: expected {ty:?}", e.addr));
                    return false;
                }
            }
            Err(err) => {
                self.problem(format!("node {nid} (inode {ino}): {err}"));
                return false;
            }
        }
        self.claim(e.addr, Owner::Node(nid));
        self.report.node_blocks += 1;
        true
    }

    #[allow(clippy::too_many_arguments)] // one block's full context, for the messages
    fn check_data(&mut self, ino: Ino, holder: Nid, ofs: u32, idx: u64, addr: u32, size_blocks: u64, count: &mut u64) {
        if addr == NULL_ADDR {
            return;
        }
        if addr == NEW_ADDR {
            self.problem(format!("inode {ino}: block {idx} marked unwritten on disk"));
            return;
        }
        *count += 1;
        self.report.data_blocks += 1;
        if idx >= size_blocks {
            self.problem(format!("inode {ino}: data block {idx} lies past the file size"));
        }
        self.claim(addr, Owner::Data { holder, ofs });
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
        let ib = match self.fs.node_ref(ino) {
            Ok(b) => alloc::boxed::Box::new(*b),
            Err(_) => return None,
        };
        let kind = FileType::from_mode(inode::mode(&ib) as u32)?;
        let size = inode::size(&ib);
        let size_blocks = match kind {
            FileType::Regular | FileType::Symlink | FileType::Directory => size.div_ceil(BLOCK_SIZE as u64),
            _ => 0,
        };
        let mut count = 0u64;
        for ofs in 0..ADDRS_PER_INODE {
            self.check_data(ino, ino, ofs, ofs as u64, inode::addr(&ib, ofs), size_blocks, &mut count);
        }
        let bases = [
            (ADDRS_PER_INODE as u64, 0usize),
            (ADDRS_PER_INODE as u64 + ADDRS_PER_BLOCK as u64, 0),
            (ADDRS_PER_INODE as u64 + 2 * ADDRS_PER_BLOCK as u64, 1),
            (ADDRS_PER_INODE as u64 + 2 * ADDRS_PER_BLOCK as u64 + (ADDRS_PER_BLOCK as u64).pow(2), 1),
            (ADDRS_PER_INODE as u64 + 2 * ADDRS_PER_BLOCK as u64 + 2 * (ADDRS_PER_BLOCK as u64).pow(2), 2),
            (
                ADDRS_PER_INODE as u64
                    + 2 * ADDRS_PER_BLOCK as u64
                    + 2 * (ADDRS_PER_BLOCK as u64).pow(2)
                    + (ADDRS_PER_BLOCK as u64).pow(3),
                2,
            ),
        ];
        for (slot, &(base, depth)) in bases.iter().enumerate() {
            let nid = inode::nid(&ib, slot);
            if nid != NULL_NID {
                self.walk_subtree(ino, nid, depth, base, size_blocks, &mut count);
            }
        }
        let x = inode::xattr_nid(&ib);
        if x != NULL_NID && self.claim_node(x, ino, NodeType::Xattr) {
            let addr = self.fs.nat_addr(x);
            if let Ok(b) = self.fs.node_ref(x) {
                if let Err(e) = crate::xattr::decode(b, addr) {
                    self.problem(format!("inode {ino}: {e}"));
                }
            }
        }
        if inode::blocks(&ib) != count {
            self.problem(format!("inode {ino}: block count {} but {count} blocks mapped", inode::blocks(&ib)));
        }
        Some(kind)
    }

    fn walk_subtree(&mut self, ino: Ino, nid: Nid, depth: usize, base: u64, size_blocks: u64, count: &mut u64) {
        let ty = if depth == 0 { NodeType::Direct } else { NodeType::Indirect };
        if !self.claim_node(nid, ino, ty) {
            return;
        }
        let slots: Vec<u32> = match self.fs.node_ref(nid) {
            Ok(b) => (0..ADDRS_PER_BLOCK).map(|i| node::slot(b, i)).collect(),
            Err(_) => return,
        };
        let span = (ADDRS_PER_BLOCK as u64).pow(depth as u32);
        for (i, &v) in slots.iter().enumerate() {
            if depth == 0 {
                self.check_data(ino, nid, i as u32, base + i as u64, v, size_blocks, count);
            } else if v != NULL_NID {
                if v >= self.fs.nat.nid_count() {
                    self.problem(format!("node {nid}: child node id {v} out of range"));
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
            let mut entries = Vec::new();
            let r = dir::iterate(&mut DirIo { fs: &mut self.fs, ino: d }, depth, 2, &mut |e: dir::Entry| {
                entries.push(e);
                true
            });
            if let Err(e) = r {
                self.problem(format!("directory {d}: {e}"));
            }
            for e in entries {
                let name = String::from_utf8_lossy(&e.name).into_owned();
                *self.refs.entry(e.ino).or_insert(0) += 1;
                let kind = if self.inodes.contains(&e.ino) {
                    self.fs.inode_kind(e.ino).ok()
                } else {
                    match self.fs.nat.get(e.ino) {
                        Some(n) if n.ino == e.ino && !n.is_free() => self.walk_inode(e.ino),
                        _ => {
                            self.problem(format!("directory {d}: entry {name:?} points to free inode {}", e.ino));
                            continue;
                        }
                    }
                };
                let Some(kind) = kind else { continue };
                if kind != e.kind {
                    self.problem(format!(
                        "directory {d}: entry {name:?} has type {:?} but inode {} is {kind:?}",
                        e.kind, e.ino
                    ));
                }
                if kind == FileType::Directory {
                    *self.subdirs.entry(d).or_insert(0) += 1;
                    if !dirs_seen.insert(e.ino) {
                        self.problem(format!("directory {} has more than one name", e.ino));
                        continue;
                    }
                    match self.fs.inode_ref(e.ino) {
                        Ok(b) if inode::pino(b) != d => {
                            let p = inode::pino(b);
                            self.problem(format!(
                                "directory {} ({name:?}) records parent {p}, but lives in {d}",
                                e.ino
                            ));
                        }
                        _ => {}
                    }
                    queue.push_back(e.ino);
                }
            }
        }
        // Orphans: unlinked but open at the checkpoint; their blocks are still owned.
        let orphans = self.fs.cp.orphans.clone();
        for o in orphans {
            if self.inodes.contains(&o) {
                self.problem(format!("orphan inode {o} is still linked"));
                continue;
            }
            if self.walk_inode(o).is_some() {
                if let Ok(b) = self.fs.inode_ref(o) {
                    if inode::links(b) != 0 {
                        let l = inode::links(b);
                        self.problem(format!("orphan inode {o} has {l} links"));
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
                self.problem(format!("inode {ino}: link count {links}, but {want} found"));
            }
        }
    }

    fn check_tables(&mut self) {
        // Every NAT entry in use must have been reached.
        let used: Vec<(Nid, u32)> = self.fs.nat.iter_used().map(|(n, e)| (n, e.ino)).collect();
        for (nid, ino) in used {
            if !self.seen_nodes.contains(&nid) {
                self.problem(format!("lost node {nid} (inode {ino}): in the NAT but unreachable"));
            }
        }
        // SIT against the ownership map.
        let g = self.fs.geo;
        let mut sit_valid = 0u64;
        for segno in 0..g.main_segments {
            let e = *self.fs.sit.get(segno);
            sit_valid += e.valid as u64;
            for off in 0..g.segment_blocks {
                let addr = g.seg_start(segno) + off;
                let owned = self.owners.contains_key(&addr);
                if e.is_valid(off) && !owned {
                    self.problem(format!("block {addr}: valid in the SIT but owned by nothing"));
                } else if !e.is_valid(off) && owned {
                    self.problem(format!("block {addr}: in use but free in the SIT"));
                }
            }
        }
        if sit_valid != self.fs.cp.valid_blocks {
            let v = self.fs.cp.valid_blocks;
            self.problem(format!("checkpoint counts {v} valid blocks, SIT has {sit_valid}"));
        }
        if self.report.inodes != self.fs.cp.valid_inodes as u64 {
            let v = self.fs.cp.valid_inodes;
            self.problem(format!("checkpoint counts {v} inodes, {} found", self.report.inodes));
        }
        // SSA against the ownership map.
        let owners: Vec<(u32, Owner)> = self.owners.iter().map(|(a, o)| (*a, *o)).collect();
        let version = self.fs.cp.version;
        for (addr, owner) in owners {
            let want = match owner {
                Owner::Node(nid) => (nid, 0u16),
                Owner::Data { holder, ofs } => (holder, ofs as u16),
            };
            match self.fs.ssa.get(&mut self.fs.dev, &g, addr, version) {
                Ok(s) if (s.nid, s.ofs) == want => {}
                Ok(s) => self.problem(format!("block {addr}: summary says ({}, {}), owner is {owner:?}", s.nid, s.ofs)),
                Err(e) => self.problem(format!("block {addr}: summary unreadable: {e}")),
            }
        }
    }
}

/// Checks the image on `dev` as a mount would see it (newest valid checkpoint), without
/// writing. An `Err` means the image could not be checked at all (unreadable superblock or
/// checkpoint, I/O error); problems found are in the report.
pub fn check<D: BlockDevice>(dev: &mut D) -> Result<FsckReport> {
    check_with_progress(dev, &mut |_, _| {})
}

/// [`check`], reporting progress (inodes checked, inodes in use) for a progress bar.
pub fn check_with_progress<D: BlockDevice>(dev: &mut D, progress: Progress<'_>) -> Result<FsckReport> {
    let opts = MountOptions { read_only: true, ..MountOptions::default() };
    let fs = match Filesystem::mount_inner(dev, &opts, Timestamp::default(), false) {
        Ok(fs) => fs,
        Err(e @ Error::Io { .. }) => return Err(e),
        Err(e) => return Ok(FsckReport { problems: alloc::vec![format!("cannot mount: {e}")], ..Default::default() }),
    };
    let version = fs.cp.version;
    let mut c = Checker {
        fs,
        progress,
        report: FsckReport { checkpoint_version: version, ..Default::default() },
        owners: BTreeMap::new(),
        seen_nodes: BTreeSet::new(),
        refs: BTreeMap::new(),
        subdirs: BTreeMap::new(),
        inodes: BTreeSet::new(),
    };
    c.run();
    let (done, total) = (c.report.inodes, c.fs.cp.valid_inodes as u64);
    (c.progress)(done, total);
    Ok(c.report)
}
