//! fsck repair (`rollfs fsck --repair`): rebuilds the metadata from the tree reachable
//! from the root, rather than patching each inconsistency on its own.
//!
//! 1. **Load, tolerantly.** The superblock (first valid copy) and the newest valid
//!    checkpoint pack, as a mount does; but NAT and SIT blocks that fail their checks do
//!    not stop the load: their entries are unknown.
//! 2. **Walk the tree** from the root (directories breadth first), then the orphan list,
//!    then the inodes in the NAT that no name reached. Every node is taken through its NAT
//!    entry when that entry leads to a valid node of the right inode and type. When it
//!    does not (entry free or lost, wrong owner, bad address, CRC mismatch, wrong type),
//!    the main area is scanned once for node blocks (CRC with the volume seed, footer
//!    node id, owner and type, written before the checkpoint, not marked free by an
//!    intact SIT) and the newest copy is taken: the NAT entry is rebuilt. When there is no
//!    such copy the node is lost, and the pointer to it is cleared: a lost direct or
//!    indirect node leaves a hole in its file, a lost xattr node drops the attributes, a
//!    lost inode drops the directory entry naming it. A data pointer that leads outside
//!    the main area, into a node segment, past the file size, or to a block something
//!    else already owns is cleared too. The walk records who owns every block.
//! 3. **Namespace.** Entries naming a lost inode, a second name of a directory or a
//!    duplicated name are removed; an entry's type is set to its inode's; an entry stored
//!    in the wrong hash bucket is re-inserted. Inodes on the orphan list and unreachable
//!    inodes with no links are freed (what the next mount would do). Other unreachable
//!    inodes are linked into `/lost+found` as `#<ino>` when they hold something (a
//!    directory, or a file with data); unreachable empty files are freed, as e2fsck
//!    clears unattached zero-length inodes. Link counts are then set to the names found,
//!    and each directory's parent to the directory it lives in.
//! 4. **Tables.** The NAT is the walk's nodes; the SIT is exactly the owned blocks (type,
//!    wear and age kept where the old entry was readable); every SSA block is rewritten
//!    from the owners; block counts of inodes are set to what they map.
//! 5. **Roll forward** what was fsync'd after the checkpoint (as a mount would), on the
//!    rebuilt tables. If that fails on the damage, the repair starts over without it and
//!    says that those fsync'd changes are dropped.
//! 6. **Commit** with a normal checkpoint: every NAT and SIT block is rewritten into the
//!    slot the old checkpoint does not use, blocks are only written into segments the old
//!    checkpoint does not use (segments it still uses are held until the new checkpoint
//!    commits), and the header goes last. A crash before it leaves the old image as it
//!    was; the repair can simply be run again. A second checkpoint then makes both packs
//!    describe the repaired image (rewriting a destroyed pack). Damaged superblock copies
//!    are rewritten last.
//!
//! Nothing is written before step 6. Every loop is bounded by the table sizes.

use crate::checkpoint::{Checkpoint, LogPos};
use crate::codec;
use crate::device::{BlockDevice, WriteFlags};
use crate::dir::{self, EntryLoc};
use crate::error::{Error, Result};
use crate::fs::{CachedNode, Credentials, Filesystem, MountOptions, Timestamp};
use crate::fsck::{node_desc, type_name};
use crate::layout::*;
use crate::namei::DirIo;
use crate::nat::{Nat, NatEntry};
use crate::node::{self, inode, FileType, NodeType};
use crate::segment::{Log, SegmentManager};
use crate::sit::{SegEntry, Sit};
use crate::ssa::{RawSsaBlock, Ssa, Summary, SSA_MAGIC};
use crate::superblock::read_superblock;
use crate::{zero_block, Ino, Nid};
use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// At most this many per-segment SIT and SSA lines; the rest are counted in one line.
const SEGMENT_LINES_MAX: usize = 32;

/// A node block found by scanning the main area.
#[derive(Clone, Copy, Debug)]
struct NodeCopy {
    addr: u32,
    ino: Ino,
    ty: NodeType,
    version: u64,
}

/// Owner of a main-area block in the rebuilt tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    Node(Nid),
    Data { ino: Ino, holder: Nid, ofs: u32, idx: u64 },
}

impl Owner {
    /// The block's summary entry in a segment that ends up holding nodes (`node_segment`) or
    /// not: a data block in a node segment (data beside its chain) carries `SSA_OFS_DATA`.
    fn summary(self, node_segment: bool) -> Summary {
        match self {
            Owner::Node(nid) => Summary { nid, ofs: 0 },
            Owner::Data { holder, ofs, .. } => {
                let flag = if node_segment { crate::ssa::SSA_OFS_DATA } else { 0 };
                Summary { nid: holder, ofs: ofs as u16 | flag }
            }
        }
    }
}

impl core::fmt::Display for Owner {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Owner::Node(n) => write!(f, "node {n}"),
            Owner::Data { ino, idx, .. } => write!(f, "file block {idx} of inode {ino}"),
        }
    }
}

/// A change to a directory entry, applied once the tables are rebuilt.
enum DentryFix {
    Remove { dir: Ino, loc: EntryLoc, addr: u32, name: Vec<u8>, why: String },
    Retype { dir: Ino, loc: EntryLoc, addr: u32, name: Vec<u8>, ino: Ino, was: FileType, kind: FileType },
    Reinsert { dir: Ino, loc: EntryLoc, addr: u32, name: Vec<u8>, ino: Ino, kind: FileType },
}

/// Runs the repair; returns (fixes, problems left unfixed). See the module documentation.
pub(crate) fn run<D: BlockDevice>(dev: &mut D, now: Timestamp) -> Result<(Vec<String>, Vec<String>)> {
    let mut scan = None;
    match attempt(dev, now, true, &mut scan)? {
        Ok(out) => Ok(out),
        Err((version, e)) => {
            let (mut fixes, unfixed) = match attempt(dev, now, false, &mut scan)? {
                Ok(out) => out,
                Err((_, e)) => return Err(e),
            };
            fixes.insert(
                0,
                format!(
                    "roll-forward of what was fsync'd after checkpoint {version} failed ({e}): those changes are dropped"
                ),
            );
            Ok((fixes, unfixed))
        }
    }
}

type Attempt = core::result::Result<(Vec<String>, Vec<String>), (u64, Error)>;

/// One repair pass. The inner `Err` says roll-forward failed (nothing was written): the
/// caller runs the pass again without it.
fn attempt<D: BlockDevice>(
    dev: &mut D,
    now: Timestamp,
    roll_forward: bool,
    scan: &mut Option<BTreeMap<Nid, NodeCopy>>,
) -> Result<Attempt> {
    let sb = read_superblock(dev)?;
    let sb_damage = crate::fsck::superblock_damage(dev, &sb)?;
    let (cp, cp_pack) = Checkpoint::read_newest(dev, &sb.geometry)?;
    let pack_damage = crate::fsck::damaged_pack(dev, &sb.geometry, cp_pack, cp.version)?;
    // A grown image's size is its checkpoint's (the superblock keeps mkfs's).
    let geo = cp.geometry.unwrap_or(sb.geometry);
    let mut fixes = Vec::new();
    let (nat, nat_damage) = Nat::load_tolerant(dev, &geo, cp.nat_slots.clone(), &cp.nat_journal, cp.version)?;
    let (old_sit, sit_known, sit_damage) =
        Sit::load_tolerant(dev, &geo, cp.sit_slots.clone(), &cp.sit_journal, cp.version)?;
    note_damage(&mut fixes, "NAT", &nat_damage, "its entries are rebuilt from the node blocks");
    note_damage(&mut fixes, "SIT", &sit_damage, "its entries are rebuilt from the tree");
    let version = cp.version;
    let logs = cp.logs;
    // Nothing is allocated or freed while the tree is walked: an empty SIT will do.
    let sit0 = Sit::new_empty(&geo);
    let seg0 = SegmentManager::from_checkpoint(&geo, &sit0, logs)?;
    let opts = MountOptions { dirty_bytes_max: u64::MAX, discard: false, ssr: false, ..MountOptions::default() };
    let fs = Filesystem::assemble(dev, sb.clone(), cp, cp_pack, nat, sit0, seg0, &opts, now);
    if fs.read_only {
        return Err(Error::NotSupported("repair of an image with unknown read-only features"));
    }
    let mut r = Rebuild::new(fs, fixes, old_sit.entries, sit_known, scan.take(), now);
    let res = r.run(roll_forward, version, logs);
    *scan = r.scan.take();
    match res {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Ok(Err((version, e))),
        Err(e) => return Err(e),
    }
    let mut fixes = r.fixes;
    let unfixed = r.unfixed;
    let mut fs = r.fs;
    // Commit: the new checkpoint goes to the pack not in use (the destroyed one, if any).
    let p = 1 - fs.cp_pack;
    fs.checkpoint(true, now)?;
    let v = fs.cp.version;
    if let Some((pack, msg)) = &pack_damage {
        if *pack == p {
            fixes.push(format!("{msg}: rewritten with checkpoint {v}"));
        }
    }
    // The second checkpoint makes the other pack describe the repaired image as well.
    fs.checkpoint(true, now)?;
    fixes.push(format!("metadata rebuilt from the reachable tree: checkpoints {v} and {} written", fs.cp.version));
    let dev = fs.into_device();
    if !sb_damage.is_empty() {
        let good = sb.encode();
        for (addr, msg) in &sb_damage {
            dev.write(*addr, &good, WriteFlags::empty())?;
            fixes.push(format!("{msg}: rewritten from the copy in use"));
        }
        dev.wait_writes()?;
        dev.flush()?;
    }
    Ok(Ok((fixes, unfixed)))
}

/// One line per damaged table block (several bad entries of one block make one line).
fn note_damage(fixes: &mut Vec<String>, table: &str, damage: &[(u64, Error)], what: &str) {
    let mut seen = BTreeSet::new();
    for (addr, e) in damage {
        if seen.insert(*addr) {
            fixes.push(format!("{table} block {addr}: {e}: {what}"));
        }
    }
}

struct Rebuild<'a, D: BlockDevice> {
    fs: Filesystem<&'a mut D>,
    fixes: Vec<String>,
    unfixed: Vec<String>,
    /// The SIT as loaded, and which of its entries were readable.
    old_sit: Vec<SegEntry>,
    sit_known: Vec<bool>,
    /// Newest valid copy of every node in the main area, scanned on first need.
    scan: Option<BTreeMap<Nid, NodeCopy>>,
    owners: BTreeMap<u32, Owner>,
    /// Nodes of the rebuilt tree, with their owner inode.
    reached: BTreeMap<Nid, Ino>,
    inodes: BTreeMap<Ino, FileType>,
    /// Blocks mapped by each inode.
    counted: BTreeMap<Ino, u64>,
    /// Reserved holes (`NEW_ADDR`) of the tree kept (`FEATURE_INCOMPAT_PREALLOC`).
    reserved: u64,
    /// Mapped dentry blocks of each directory: (file block index, address).
    dir_blocks: BTreeMap<Ino, Vec<(u64, u32)>>,
    /// Directories that have their one name (the root counts as named).
    named_dirs: BTreeSet<Ino>,
    dentry_fixes: Vec<DentryFix>,
    to_lost_found: Vec<Ino>,
    freed_orphans: BTreeSet<Ino>,
    now: Timestamp,
}

impl<'a, D: BlockDevice> Rebuild<'a, D> {
    /// A rebuild of `fs` (the tree as the checkpoint has it, over an empty SIT) that has
    /// found nothing yet but `fixes`.
    fn new(
        fs: Filesystem<&'a mut D>,
        fixes: Vec<String>,
        old_sit: Vec<SegEntry>,
        sit_known: Vec<bool>,
        scan: Option<BTreeMap<Nid, NodeCopy>>,
        now: Timestamp,
    ) -> Self {
        Rebuild {
            fs,
            fixes,
            unfixed: Vec::new(),
            old_sit,
            sit_known,
            scan,
            owners: BTreeMap::new(),
            reached: BTreeMap::new(),
            inodes: BTreeMap::new(),
            counted: BTreeMap::new(),
            reserved: 0,
            dir_blocks: BTreeMap::new(),
            named_dirs: BTreeSet::new(),
            dentry_fixes: Vec::new(),
            to_lost_found: Vec::new(),
            freed_orphans: BTreeSet::new(),
            now,
        }
    }

    fn fix(&mut self, m: String) {
        self.fixes.push(m);
    }

    /// The whole pass but the commit. The inner `Err` is a failed roll-forward.
    fn run(&mut self, roll_forward: bool, version: u64, logs: [LogPos; LOG_COUNT]) -> Result<Result<()>> {
        // Everything hangs off the root. If its inode is lost, a new empty root is made
        // (after the tables are rebuilt) and what it held is found again as unreachable.
        let root_lost = match self.walk_inode(ROOT_INO) {
            Ok(FileType::Directory) => false,
            Ok(_) => return Err(Error::corrupt(self.fs.nat_addr(ROOT_INO), "root inode is not a directory")),
            Err(why) => {
                self.fix(format!(
                    "root directory (inode {ROOT_INO}) lost ({why}): a new empty root is made, and what it held \
                     goes to /lost+found"
                ));
                true
            }
        };
        self.named_dirs.insert(ROOT_INO);
        if !root_lost {
            self.walk_dirs(VecDeque::from(vec![ROOT_INO]))?;
        }
        self.orphans()?;
        self.unreachable()?;
        self.fix_block_counts()?;
        self.fix_iflags()?;
        self.rebuild_tables(logs)?;
        if root_lost {
            self.make_root();
        }
        if roll_forward {
            match self.fs.roll_forward(self.now) {
                Ok(rep) if rep.batches_applied > 0 => self.fix(format!(
                    "rolled forward {} fsync'd change(s) written after checkpoint {version}",
                    rep.batches_applied
                )),
                Ok(_) => {}
                Err(e) => return Ok(Err(e)),
            }
        }
        let g = self.fs.geo;
        self.fs.seg.open_full_logs(&g, &mut self.fs.sit, &mut self.fs.ssa)?;
        self.apply_dentry_fixes()?;
        self.link_lost_found()?;
        self.fix_links()?;
        Ok(Ok(()))
    }

    // ---- nodes ---------------------------------------------------------------------

    /// Why node `nid` cannot be used through its NAT entry as the `ty` of inode `ino`;
    /// `Ok(address)` when it can.
    fn check_current(&mut self, nid: Nid, ino: Ino, ty: NodeType) -> core::result::Result<u32, String> {
        let e = match self.fs.nat.get(nid) {
            Some(e) => e,
            None => return Err(String::from("node id out of range")),
        };
        if e.is_free() {
            return Err(String::from("its NAT entry is free"));
        }
        if e.ino != ino {
            return Err(format!("its NAT entry names inode {}", e.ino));
        }
        if !self.fs.geo.in_main(e.addr) {
            return Err(format!("its NAT address {} is outside the main area", e.addr));
        }
        let b = match self.fs.node_ref(nid) {
            Ok(b) => b,
            Err(err) => return Err(format!("{err}")),
        };
        match node::footer_type(b) {
            Some(t) if t == ty => {}
            t => {
                let found = t.map(type_name).unwrap_or("unknown node");
                return Err(format!("block {} holds a {found}", e.addr));
            }
        }
        if ty == NodeType::Xattr {
            if let Err(err) = crate::xattr::decode(b, e.addr as u64) {
                return Err(format!("{err}"));
            }
        }
        Ok(e.addr)
    }

    /// Takes node `nid` into the rebuilt tree as the `ty` of inode `ino`, through its NAT
    /// entry or, failing that, the newest valid copy in the main area (rebuilding the
    /// entry). `Err(why)` when it is lost.
    fn resolve(&mut self, nid: Nid, ino: Ino, ty: NodeType) -> core::result::Result<u32, String> {
        if nid == NULL_NID || nid >= self.fs.nat.nid_count() {
            return Err(format!("node id {nid} out of range"));
        }
        if let Some(&other) = self.reached.get(&nid) {
            return Err(format!("node {nid} is already part of inode {other}"));
        }
        let addr = match self.check_current(nid, ino, ty) {
            Ok(a) => a,
            Err(why) => {
                self.fs.nodes.remove(&nid);
                let Some(c) = self.newest_copy(nid, ino, ty)? else {
                    return Err(why);
                };
                let old = self.fs.nat.get(nid).unwrap_or_default();
                self.fs.nat.set(nid, NatEntry { ino, addr: c.addr });
                self.fs.dir_parents.forget(nid);
                match self.check_current(nid, ino, ty) {
                    Ok(a) => {
                        self.fix(format!(
                            "{}: {why}; NAT entry rebuilt from its newest valid copy, block {a} (checkpoint \
                             version {})",
                            node_desc(nid, ino, ty),
                            c.version
                        ));
                        a
                    }
                    Err(_) => {
                        self.fs.nodes.remove(&nid);
                        self.fs.nat.set(nid, old);
                        return Err(why);
                    }
                }
            }
        };
        self.reached.insert(nid, ino);
        match self.owners.get(&addr).copied() {
            Some(Owner::Data { ino: o, holder, ofs, idx }) => {
                // A node block is what it says it is (CRC, identity); the data pointer to
                // it is the wrong one.
                self.clear_slot(holder, ofs);
                if let Some(c) = self.counted.get_mut(&o) {
                    *c = c.saturating_sub(1);
                }
                self.fix(format!("block {addr}: file block {idx} of inode {o} points at node {nid}: dropped (hole)"));
            }
            Some(Owner::Node(_)) | None => {}
        }
        self.owners.insert(addr, Owner::Node(nid));
        Ok(addr)
    }

    /// The newest copy of node `nid` in the main area, if it belongs to `ino` and has type
    /// `ty` (scanning the main area the first time).
    fn newest_copy(&mut self, nid: Nid, ino: Ino, ty: NodeType) -> core::result::Result<Option<NodeCopy>, String> {
        if self.scan.is_none() {
            let s = self.scan_main().map_err(|e| format!("{e}"))?;
            self.scan = Some(s);
        }
        let c = self.scan.as_ref().and_then(|s| s.get(&nid)).copied();
        Ok(c.filter(|c| c.ino == ino && c.ty == ty && !self.owners.contains_key(&c.addr)))
    }

    /// Scans the main area for node blocks written before the checkpoint: valid CRC (with
    /// the volume seed), node id in range, known type, and not marked free by an intact
    /// SIT entry. Segments an intact SIT says hold data, or nothing, are skipped. Keeps
    /// the newest copy of each node (checkpoint version, then SIT-valid, then address).
    fn scan_main(&mut self) -> Result<BTreeMap<Nid, NodeCopy>> {
        let g = self.fs.geo;
        let cp_version = self.fs.cp.version;
        let mut best: BTreeMap<Nid, (u64, bool, u32, NodeCopy)> = BTreeMap::new();
        let mut buf = zero_block();
        for segno in 0..g.main_segments {
            let known = self.sit_known[segno as usize];
            let e = self.old_sit[segno as usize];
            if known && (e.valid == 0 || (1..=3).contains(&e.seg_type)) {
                continue;
            }
            for off in 0..g.segment_blocks {
                if known && !e.is_valid(off) {
                    continue;
                }
                let addr = g.seg_start(segno) + off;
                self.fs.dev.read(addr as u64, &mut buf)?;
                let nid = node::footer_nid(&buf);
                let Some(ty) = node::footer_type(&buf) else { continue };
                let version = node::footer_cp_version(&buf);
                if nid == NULL_NID
                    || nid >= self.fs.nat.nid_count()
                    || version >= cp_version
                    || !codec::crc_ok_seeded(&buf, self.fs.seed)
                {
                    continue;
                }
                let c = NodeCopy { addr, ino: node::footer_ino(&buf), ty, version };
                let key = (version, known, addr);
                if best.get(&nid).is_none_or(|b| (b.0, b.1, b.2) < key) {
                    best.insert(nid, (key.0, key.1, key.2, c));
                }
            }
        }
        Ok(best.into_iter().map(|(n, b)| (n, b.3)).collect())
    }

    /// Clears the data pointer at slot `ofs` of node `holder` (an inode or a direct node).
    fn clear_slot(&mut self, holder: Nid, ofs: u32) {
        let _ = self.fs.set_holder_slot(holder, ofs, NULL_ADDR, 0);
    }

    // ---- the tree --------------------------------------------------------------------

    /// Walks inode `ino` and everything under it into the rebuilt tree.
    fn walk_inode(&mut self, ino: Ino) -> core::result::Result<FileType, String> {
        if let Some(&k) = self.inodes.get(&ino) {
            return Ok(k);
        }
        self.resolve(ino, ino, NodeType::Inode)?;
        let ib = match self.fs.node_ref(ino) {
            Ok(b) => alloc::boxed::Box::new(*b),
            Err(e) => return Err(format!("{e}")),
        };
        let kind = FileType::from_mode(inode::mode(&ib) as u32).unwrap_or(FileType::Regular);
        self.inodes.insert(ino, kind);
        self.counted.insert(ino, 0);
        if kind == FileType::Directory {
            self.dir_blocks.insert(ino, Vec::new());
        }
        let size_blocks = match kind {
            FileType::Regular | FileType::Symlink | FileType::Directory => inode::size(&ib).div_ceil(BLOCK_SIZE as u64),
            _ => 0,
        };
        for ofs in 0..ADDRS_PER_INODE {
            let a = inode::addr(&ib, ofs);
            if !self.data(ino, ino, ofs, ofs as u64, a, size_blocks) {
                self.clear_slot(ino, ofs);
            }
        }
        for (slot, &(base, span, depth)) in node::SLOT_SUBTREES.iter().enumerate() {
            let nid = inode::nid(&ib, slot);
            if nid != NULL_NID && !self.walk_subtree(ino, nid, depth, base, span, size_blocks) {
                if let Ok(b) = self.fs.node_mut(ino) {
                    inode::set_nid(b, slot, NULL_NID);
                }
            }
        }
        let x = inode::xattr_nid(&ib);
        if x != NULL_NID {
            if let Err(why) = self.resolve(x, ino, NodeType::Xattr) {
                self.fix(format!("inode {ino}: xattr node {x} lost ({why}): its extended attributes are dropped"));
                if let Ok(b) = self.fs.node_mut(ino) {
                    inode::set_xattr_nid(b, NULL_NID);
                }
            }
        }
        Ok(kind)
    }

    /// Walks the subtree of node `nid` mapping file blocks `base..base + span`. Returns
    /// false when the node is lost (the caller clears its pointer).
    fn walk_subtree(&mut self, ino: Ino, nid: Nid, depth: usize, base: u64, span: u64, size_blocks: u64) -> bool {
        let ty = if depth == 0 { NodeType::Direct } else { NodeType::Indirect };
        if let Err(why) = self.resolve(nid, ino, ty) {
            let hole = if base >= size_blocks {
                String::from("nothing of the file lay there")
            } else {
                format!("file blocks {base}..{} are now a hole", (base + span).min(size_blocks))
            };
            self.fix(format!("inode {ino}: {} {nid} lost ({why}): {hole}", type_name(ty)));
            return false;
        }
        let slots: Vec<u32> = match self.fs.node_ref(nid) {
            Ok(b) if depth == 0 => (0..ADDRS_PER_BLOCK).map(|i| node::addr(b, i)).collect(),
            Ok(b) => (0..NIDS_PER_BLOCK).map(|i| node::slot(b, i)).collect(),
            Err(_) => return false,
        };
        let child_span = node::entry_span(depth);
        for (i, &v) in slots.iter().enumerate() {
            let keep = if depth == 0 {
                self.data(ino, nid, i as u32, base + i as u64, v, size_blocks)
            } else if v == NULL_NID {
                true
            } else {
                self.walk_subtree(ino, v, depth - 1, base + i as u64 * child_span, child_span, size_blocks)
            };
            if !keep {
                if let Ok(b) = self.fs.node_mut(nid) {
                    if depth == 0 {
                        node::set_ptr(b, i as u32, NULL_ADDR, 0);
                    } else {
                        node::set_slot(b, i as u32, NULL_NID);
                    }
                }
            }
        }
        true
    }

    /// Takes data block `addr` (file block `idx` of `ino`, slot `ofs` of node `holder`)
    /// into the rebuilt tree. Returns false when its pointer must be cleared.
    fn data(&mut self, ino: Ino, holder: Nid, ofs: u32, idx: u64, addr: u32, size_blocks: u64) -> bool {
        if addr == NULL_ADDR {
            return true;
        }
        if addr == NEW_ADDR && self.fs.prealloc_on_disk {
            // A reserved hole: kept, counted in `blocks` and in the reservations' total.
            *self.counted.entry(ino).or_insert(0) += 1;
            self.reserved += 1;
            return true;
        }
        let why = if addr == NEW_ADDR {
            String::from("is marked unwritten on disk")
        } else if !self.fs.geo.in_main(addr) {
            format!("points to block {addr}, outside the main area")
        } else if idx >= size_blocks {
            format!("at block {addr} lies past the file size")
        } else if self.in_node_segment(addr) && !self.data_beside_chain(addr, holder, ofs) {
            format!("points to block {addr}, in a segment of node blocks")
        } else if let Some(o) = self.owners.get(&addr) {
            format!("at block {addr} is already owned by {o}")
        } else {
            self.owners.insert(addr, Owner::Data { ino, holder, ofs, idx });
            *self.counted.entry(ino).or_insert(0) += 1;
            if let Some(v) = self.dir_blocks.get_mut(&ino) {
                v.push((idx, addr));
            }
            return true;
        };
        self.fix(format!("inode {ino}: file block {idx} {why}: dropped (hole)"));
        false
    }

    /// Whether block `addr` of a node segment is data written beside an fsync batch's nodes
    /// for slot `ofs` of `holder`: on an image with the feature, and as the old summary says
    /// (with the data flag). A pointer into a node segment that its summary does not name
    /// (damage) is cleared, as on an image without it.
    fn data_beside_chain(&mut self, addr: u32, holder: Nid, ofs: u32) -> bool {
        if !self.fs.mixed_node {
            return false;
        }
        let want = Summary { nid: holder, ofs: ofs as u16 | crate::ssa::SSA_OFS_DATA };
        let (g, version) = (self.fs.geo, self.fs.cp.version);
        match self.fs.ssa.get(&mut self.fs.dev, &g, addr, version) {
            Ok(s) => s == want,
            // The summary block is damaged or unreadable: the repair rebuilds it from the
            // tree, so it cannot be what decides (dropping the pointer lost fsync'd,
            // checkpointed data: review 53). The block itself does: data unless it is the
            // node the NAT places there.
            Err(_) => !self.nat_node_at(addr),
        }
    }

    /// Whether block `addr` holds a node block (seeded CRC) whose NAT entry names `addr`.
    /// A block that cannot be read is not taken for a node (its pointer is kept, as a data
    /// block's read error is reported by the data checks, not by dropping the pointer).
    fn nat_node_at(&mut self, addr: u32) -> bool {
        let mut b = crate::zero_block();
        if self.fs.dev.read(addr as u64, &mut b).is_err() || !crate::codec::crc_ok_seeded(&b, self.fs.seed) {
            return false;
        }
        let nid = node::footer_nid(&b);
        node::footer_type(&b).is_some() && self.fs.nat.get(nid).is_some_and(|e| e.addr == addr)
    }

    fn in_node_segment(&self, addr: u32) -> bool {
        let s = self.fs.geo.segno_of(addr) as usize;
        self.sit_known[s] && (4..=6).contains(&self.old_sit[s].seg_type)
    }

    // ---- directories -------------------------------------------------------------------

    /// Reads the directories breadth first from `queue`, walking every inode their
    /// entries name and recording what must change in them.
    fn walk_dirs(&mut self, mut queue: VecDeque<Ino>) -> Result<()> {
        // Bounded: a directory is queued once, when it gets its one name.
        while let Some(d) = queue.pop_front() {
            let mut depth = match self.fs.inode_ref(d) {
                Ok(b) => inode::dir_depth(b),
                Err(_) => continue,
            };
            if depth > dir::MAX_DEPTH {
                self.fix(format!("directory {d}: depth {depth} beyond the maximum: set to {}", dir::MAX_DEPTH));
                depth = dir::MAX_DEPTH;
                inode::set_dir_depth(self.fs.node_mut(d)?, depth);
            }
            let blocks = self.dir_blocks.remove(&d).unwrap_or_default();
            let mut names: BTreeSet<Vec<u8>> = BTreeSet::new();
            let mut buf = zero_block();
            let overflow = self.fs.superblock().dir_v2();
            let key = self.fs.dir_hash_key(d)?;
            // The deepest level's overflow distances, and the entries there outside their
            // own bucket (re-inserted unless within that bucket's distance).
            let mut distances: BTreeMap<u64, u32> = BTreeMap::new();
            let mut overflowed: Vec<(u64, u32, DentryFix)> = Vec::new();
            for (idx, addr) in blocks {
                let Some(Owner::Data { holder, ofs, .. }) = self.owners.get(&addr).copied() else { continue };
                let Some((level, bucket)) = dir::block_position(idx) else {
                    self.drop_dir_block(d, idx, addr, holder, ofs, "index beyond the deepest level");
                    continue;
                };
                if level >= depth {
                    self.fix(format!(
                        "directory {d}: depth {depth} does not cover its dentry block {idx} (block {addr}): set to {}",
                        level + 1
                    ));
                    depth = level + 1;
                    inode::set_dir_depth(self.fs.node_mut(d)?, depth);
                }
                self.fs.dev.read(addr as u64, &mut buf)?;
                let db = match dir::decode_block(idx, &buf, addr as u64) {
                    Ok(db) => db,
                    Err(Error::Corrupt { reason, .. }) => {
                        self.drop_dir_block(d, idx, addr, holder, ofs, reason);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                if db.overflow() != 0 {
                    if !overflow {
                        self.drop_dir_block(
                            d,
                            idx,
                            addr,
                            holder,
                            ofs,
                            "overflow distance on an image without overflow",
                        );
                        continue;
                    }
                    distances.insert(idx, db.overflow());
                }
                for e in db.entries() {
                    let loc = EntryLoc { block_idx: idx, slot: e.slot };
                    let name = e.name.to_vec();
                    if !names.insert(name.clone()) {
                        let why = String::from("duplicates an earlier entry of the same name");
                        self.dentry_fixes.push(DentryFix::Remove { dir: d, loc, addr, name, why });
                        continue;
                    }
                    let kind = match self.walk_inode(e.ino) {
                        Ok(k) => k,
                        Err(why) => {
                            let why = format!("names inode {}, which is lost ({why})", e.ino);
                            self.dentry_fixes.push(DentryFix::Remove { dir: d, loc, addr, name, why });
                            continue;
                        }
                    };
                    if kind == FileType::Directory && !self.named_dirs.insert(e.ino) {
                        let why = format!("is a second name of directory {}", e.ino);
                        self.dentry_fixes.push(DentryFix::Remove { dir: d, loc, addr, name, why });
                        continue;
                    }
                    if kind != e.kind {
                        self.dentry_fixes.push(DentryFix::Retype {
                            dir: d,
                            loc,
                            addr,
                            name: name.clone(),
                            ino: e.ino,
                            was: e.kind,
                            kind,
                        });
                    }
                    let hashed = dir::name_hash_keyed(&key, &name) == e.hash;
                    let home = e.hash as u64 % dir::buckets(level) == bucket;
                    let fix = DentryFix::Reinsert { dir: d, loc, addr, name, ino: e.ino, kind };
                    match dir::overflow_distance(idx, e.hash) {
                        _ if hashed && home => {}
                        Some(distance) if hashed && overflow => {
                            overflowed.push((dir::overflow_home(e.hash), distance, fix))
                        }
                        _ => self.dentry_fixes.push(fix),
                    }
                    if kind == FileType::Directory {
                        queue.push_back(e.ino);
                    }
                }
            }
            for (home, distance, fix) in overflowed {
                if distance > distances.get(&home).copied().unwrap_or(0) {
                    self.dentry_fixes.push(fix);
                }
            }
        }
        Ok(())
    }

    /// A dentry block that cannot be read as one: its pointer is cleared, and the files
    /// it named are found again as unreachable inodes.
    fn drop_dir_block(&mut self, d: Ino, idx: u64, addr: u32, holder: Nid, ofs: u32, why: &str) {
        self.clear_slot(holder, ofs);
        self.owners.remove(&addr);
        if let Some(c) = self.counted.get_mut(&d) {
            *c = c.saturating_sub(1);
        }
        self.fix(format!(
            "directory {d}: dentry block {idx} at block {addr}: {why}: dropped (the files it named go to /lost+found)"
        ));
    }

    /// The checkpoint's orphan list: inodes unlinked while open. The mount after a crash
    /// frees them; so does the repair (by leaving them out of the rebuilt tree).
    fn orphans(&mut self) -> Result<()> {
        let mut seen = BTreeSet::new();
        let list = self.fs.cp.orphans.clone();
        for o in list {
            if !seen.insert(o) {
                continue;
            }
            if self.inodes.contains_key(&o) {
                self.fix(format!("orphan list: inode {o} is still linked: entry dropped (the file is kept)"));
                continue;
            }
            match self.check_current(o, o, NodeType::Inode) {
                Ok(addr) => {
                    self.freed_orphans.insert(o);
                    self.fix(format!("orphan inode {o} at block {addr} (unlinked while open at the crash): freed"));
                }
                Err(why) => self.fix(format!("orphan list: inode {o} is not an inode in use ({why}): entry dropped")),
            }
        }
        Ok(())
    }

    /// Inodes in the NAT that no name reached: freed, or linked into /lost+found.
    fn unreachable(&mut self) -> Result<()> {
        let lost: Vec<Nid> = self
            .fs
            .nat
            .iter_used()
            .filter(|(n, e)| {
                e.ino == *n && *n != ROOT_INO && !self.reached.contains_key(n) && !self.freed_orphans.contains(n)
            })
            .map(|(n, _)| n)
            .collect();
        // (nid, kind, links, size, pino)
        let mut cands: Vec<(Ino, FileType, u32, u64, Ino, u32)> = Vec::new();
        for ino in lost {
            match self.check_current(ino, ino, NodeType::Inode) {
                Ok(addr) => {
                    let Ok(b) = self.fs.node_ref(ino) else { continue };
                    let kind = FileType::from_mode(inode::mode(b) as u32).unwrap_or(FileType::Regular);
                    cands.push((ino, kind, inode::links(b), inode::size(b), inode::pino(b), addr));
                }
                Err(why) => {
                    let addr = self.fs.nat_addr(ino);
                    self.fix(format!(
                        "node {ino} (NAT address {addr}): unreachable and not a valid inode ({why}): freed"
                    ));
                }
            }
        }
        let lost_dirs: BTreeSet<Ino> =
            cands.iter().filter(|c| c.1 == FileType::Directory && c.2 > 0).map(|c| c.0).collect();
        // Directories first, tops of lost subtrees before the rest (which their walk may
        // reach); then files that no lost directory held.
        for pass in 0..3 {
            for &(ino, kind, links, size, pino, addr) in &cands {
                if self.inodes.contains_key(&ino) {
                    continue;
                }
                let is_dir = kind == FileType::Directory;
                match pass {
                    0 if !is_dir || links == 0 || (pino != ino && lost_dirs.contains(&pino)) => continue,
                    1 if !is_dir || links == 0 => continue,
                    _ => {}
                }
                if links == 0 {
                    self.fix(format!("inode {ino} at block {addr}: no name, no links and not an orphan: freed"));
                    continue;
                }
                let holds_something = is_dir || (kind == FileType::Symlink) || size > 0;
                if !holds_something {
                    self.fix(format!("inode {ino} at block {addr}: no name and empty ({kind:?}): freed"));
                    continue;
                }
                if self.walk_inode(ino).is_err() {
                    continue;
                }
                self.to_lost_found.push(ino);
                if is_dir {
                    self.named_dirs.insert(ino);
                    self.walk_dirs(VecDeque::from(vec![ino]))?;
                }
            }
        }
        // Nodes still unreached are freed by the rebuild; say so for those of live inodes,
        // and for those whose inode is gone (not for the nodes of inodes freed above).
        let cand_inos: BTreeSet<Ino> = cands.iter().map(|c| c.0).collect();
        let rest: Vec<(Nid, NatEntry)> =
            self.fs.nat.iter_used().filter(|(n, _)| !self.reached.contains_key(n)).collect();
        for (nid, e) in rest {
            if e.ino == nid {
                continue;
            }
            if self.inodes.contains_key(&e.ino) {
                self.fix(format!(
                    "node {nid} of inode {} at block {}: no longer part of its inode's tree: freed",
                    e.ino, e.addr
                ));
            } else if !self.freed_orphans.contains(&e.ino) && !cand_inos.contains(&e.ino) {
                self.fix(format!("node {nid} of inode {} at block {}: its inode is gone: freed", e.ino, e.addr));
            }
        }
        Ok(())
    }

    /// Sets every inode's block count to the blocks its tree maps.
    fn fix_block_counts(&mut self) -> Result<()> {
        let counted: Vec<(Ino, u64)> = self.counted.iter().map(|(i, c)| (*i, *c)).collect();
        for (ino, c) in counted {
            let have = inode::blocks(self.fs.node_ref(ino)?);
            if have != c {
                let addr = self.fs.nat_addr(ino);
                self.fix(format!("inode {ino} (block {addr}): block count {have}, but {c} blocks mapped: set to {c}"));
                inode::set_blocks(self.fs.node_mut(ino)?, c);
            }
        }
        Ok(())
    }

    /// Repairs what fsck's `iflags_problem` reports of an inode (inline data, DESIGN.md
    /// *Inline data*): unknown bits are cleared; an inline size past the limit becomes the
    /// limit (the bytes there are all the file has); bytes past the size are zeroed
    /// (invariant 6: an extension would show them); the flag on anything but a regular file
    /// is dropped (its area held bytes, never pointers: it maps nothing, as before). Inline
    /// data beside node ids, or on an image without the feature, is reported unfixed.
    fn fix_iflags(&mut self) -> Result<()> {
        let inos: Vec<Ino> = self.counted.keys().copied().collect();
        let inline_ok = self.fs.inline_data;
        for ino in inos {
            // Bounded: each round clears one problem (unknown bits, then inline damage).
            for _ in 0..2 {
                let Some(p) = crate::fsck::iflags_problem(self.fs.node_ref(ino)?, inline_ok) else { break };
                let addr = self.fs.nat_addr(ino);
                let b = self.fs.node_mut(ino)?;
                let flags = inode::iflags(b);
                if flags & !inode::IFLAGS_KNOWN != 0 {
                    inode::set_iflags(b, flags & inode::IFLAGS_KNOWN);
                } else if !inline_ok || (0..NIDS_PER_INODE).any(|i| inode::nid(b, i) != NULL_NID) {
                    self.unfixed.push(format!("inode {ino} (block {addr}): {p}"));
                    break;
                } else if FileType::from_mode(inode::mode(b) as u32) != Some(FileType::Regular) {
                    inode::set_inline(b, false);
                } else {
                    let size = inode::size(b).min(inode::INLINE_DATA_MAX as u64);
                    inode::set_size(b, size);
                    inode::inline_data_mut(b)[size as usize..].fill(0);
                }
                self.fix(format!("inode {ino} (block {addr}): {p}: repaired"));
            }
        }
        Ok(())
    }

    // ---- tables ------------------------------------------------------------------------

    /// Rebuilds NAT, SIT and SSA from the walk, and the segment states from them.
    fn rebuild_tables(&mut self, logs: [LogPos; LOG_COUNT]) -> Result<()> {
        let g = self.fs.geo;
        let version = self.fs.cp.version;
        // NAT: exactly the reached nodes. Freed node ids are not reused before the
        // repair's checkpoint commits.
        let unreached: Vec<Nid> =
            self.fs.nat.iter_used().filter(|(n, _)| !self.reached.contains_key(n)).map(|(n, _)| n).collect();
        for nid in unreached {
            self.fs.nat.free(nid);
            self.fs.nodes.remove(&nid);
            self.fs.dirty_nodes.remove(&nid);
            self.fs.dir_parents.forget(nid);
        }
        self.fs.nat.rewrite_all_blocks();
        // SIT: exactly the owned blocks.
        let mut entries: Vec<SegEntry> = (0..g.main_segments as usize)
            .map(|s| {
                let mut e = if self.sit_known[s] { self.old_sit[s] } else { SegEntry::default() };
                e.valid = 0;
                e.bitmap = [0; SIT_BITMAP_BYTES];
                e
            })
            .collect();
        let mut has_node = vec![false; g.main_segments as usize];
        let mut has_data = vec![false; g.main_segments as usize];
        for (&addr, o) in &self.owners {
            let s = g.segno_of(addr) as usize;
            let off = g.blkoff_of(addr);
            entries[s].bitmap[(off / 8) as usize] |= 1 << (off % 8);
            entries[s].valid += 1;
            match o {
                Owner::Node(_) => has_node[s] = true,
                Owner::Data { .. } => has_data[s] = true,
            }
        }
        let mut lines = 0usize;
        let mut more = 0usize;
        for s in 0..g.main_segments as usize {
            let e = &mut entries[s];
            if has_node[s] && !(4..=6).contains(&e.seg_type) {
                e.seg_type = Log::WarmNode.seg_type();
            } else if has_data[s] && !has_node[s] && !(1..=3).contains(&e.seg_type) {
                e.seg_type = Log::WarmData.seg_type();
            }
            if !self.sit_known[s] && e.valid > 0 {
                e.mtime = self.now.sec.max(0) as u64;
            }
            let old = &self.old_sit[s];
            let changed =
                !self.sit_known[s] || old.valid != e.valid || old.bitmap != e.bitmap || old.seg_type != e.seg_type;
            if changed && (self.sit_known[s] || e.valid > 0) {
                if lines < SEGMENT_LINES_MAX {
                    lines += 1;
                    let m = sit_fix_line(&g, s, self.sit_known[s].then_some(old), e);
                    self.fixes.push(m);
                } else {
                    more += 1;
                }
            }
        }
        if more > 0 {
            self.fix(format!("SIT: {more} more segments rebuilt"));
        }
        // Segments the old checkpoint still uses (by its SIT, or unknown) stay untouched
        // until the repair's checkpoint commits.
        let held: BTreeSet<u32> = (0..g.main_segments)
            .filter(|&s| !self.sit_known[s as usize] || self.old_sit[s as usize].valid > 0)
            .collect();
        // SSA: every segment with owned blocks, every held one and the open logs' get a
        // fresh summary, compared with the old one for the report.
        let mut ssa = Ssa::with_slots(&g, self.fs.cp.ssa_slots.clone());
        let mut resets: BTreeSet<u32> = held.clone();
        resets.extend((0..g.main_segments).filter(|&s| entries[s as usize].valid > 0));
        resets.extend(logs.iter().map(|l| l.segno));
        for &s in &resets {
            ssa.reset(s);
        }
        for (&addr, o) in &self.owners {
            let node_segment = entries[g.segno_of(addr) as usize].holds_nodes();
            ssa.set(&mut self.fs.dev, &g, addr, o.summary(node_segment), version)?;
        }
        self.compare_ssa(&entries)?;
        let (old_blocks, old_inodes) = (self.fs.cp.valid_blocks, self.fs.cp.valid_inodes);
        let blocks: u64 = entries.iter().map(|e| e.valid as u64).sum();
        let inodes = self.inodes.len() as u32;
        if old_blocks != blocks || old_inodes != inodes {
            self.fix(format!(
                "checkpoint counters: {old_blocks} valid blocks and {old_inodes} inodes recorded, {blocks} and \
                 {inodes} in the tree: corrected"
            ));
        }
        let mut sit = Sit::new_empty(&g);
        sit.slots = self.fs.cp.sit_slots.clone();
        sit.replace_all(entries);
        let seg = match SegmentManager::from_checkpoint(&g, &sit, logs) {
            Ok(seg) => seg,
            Err(e) => {
                self.fix(format!("checkpoint log positions: {e}: every log moves to a fresh segment"));
                let mut full = logs;
                for l in full.iter_mut() {
                    l.blkoff = g.segment_blocks;
                }
                SegmentManager::from_checkpoint(&g, &sit, full)?
            }
        };
        (self.fs.sit, self.fs.ssa, self.fs.seg) = (sit, ssa, seg);
        self.fs.seg.ssr_into_node_segments = self.fs.mixed_node;
        self.fs.seg.pin(&held);
        self.set_counters();
        Ok(())
    }

    /// The inode and reservation counts of the repaired image: what the tree keeps.
    fn set_counters(&mut self) {
        self.fs.valid_inodes = self.inodes.len() as u32;
        if self.reserved != self.fs.cp.reserved_blocks {
            let old = self.fs.cp.reserved_blocks;
            self.fix(format!("checkpoint counts {old} reserved blocks, {} in the tree: corrected", self.reserved));
        }
        self.fs.prealloc = crate::prealloc::Reservations::with_total(self.reserved);
    }

    /// Reports the SSA blocks whose owners differ from the rebuilt ones.
    fn compare_ssa(&mut self, entries: &[SegEntry]) -> Result<()> {
        let g = self.fs.geo;
        let version = self.fs.cp.version;
        let mut by_seg: BTreeMap<u32, Vec<(u32, Summary)>> = BTreeMap::new();
        for (&addr, o) in &self.owners {
            let node_segment = entries[g.segno_of(addr) as usize].holds_nodes();
            by_seg.entry(g.segno_of(addr)).or_default().push((g.blkoff_of(addr), o.summary(node_segment)));
        }
        let mut lines = 0usize;
        let mut more = 0usize;
        let mut buf = zero_block();
        for (segno, owned) in by_seg {
            debug_assert!(entries[segno as usize].valid > 0);
            // A segment a log was filling has its summary in the checkpoint's payload
            // (`FEATURE_INCOMPAT_CP_SUMMARIES`); its slot is stale.
            if let Some(sum) = self.fs.cp.summaries.iter().find(|s| s.segno == segno) {
                let wrong = owned
                    .iter()
                    .filter(|(off, s)| sum.entries.get(*off as usize).copied().unwrap_or_default() != *s)
                    .count();
                if wrong > 0 {
                    self.fix(format!(
                        "SSA of segment {segno} (in the checkpoint): {wrong} block owners wrong: rewritten"
                    ));
                }
                continue;
            }
            let addr = g.ssa_addr(segno, self.fs.cp.ssa_slots[segno as usize]);
            self.fs.dev.read(addr, &mut buf)?;
            let m = match codec::meta_check(&buf, addr, SSA_MAGIC, segno, version, "SSA block: bad magic") {
                Err(e) => Some(format!("SSA of segment {segno}: {e}: rewritten")),
                Ok(()) => {
                    let raw = &codec::view::<RawSsaBlock>(&buf).entries;
                    let wrong = owned
                        .iter()
                        .filter(|(off, s)| {
                            let e = &raw[*off as usize];
                            e.nid.get() != s.nid || e.ofs.get() != s.ofs
                        })
                        .count();
                    (wrong > 0).then(|| {
                        format!("SSA of segment {segno} (block {addr}): {wrong} block owners wrong: rewritten")
                    })
                }
            };
            if let Some(m) = m {
                if lines < SEGMENT_LINES_MAX {
                    lines += 1;
                    self.fixes.push(m);
                } else {
                    more += 1;
                }
            }
        }
        if more > 0 {
            self.fix(format!("SSA: {more} more segments rewritten"));
        }
        Ok(())
    }

    // ---- namespace ---------------------------------------------------------------------

    fn apply_dentry_fixes(&mut self) -> Result<()> {
        let fixes = core::mem::take(&mut self.dentry_fixes);
        // Removals first: a misplaced entry is re-inserted only if its name is then free.
        let (removes, rest): (Vec<_>, Vec<_>) = fixes.into_iter().partition(|f| matches!(f, DentryFix::Remove { .. }));
        for f in removes.into_iter().chain(rest) {
            match f {
                DentryFix::Remove { dir, loc, addr, name, why } => {
                    let n = show(&name);
                    match dir::remove_at(&mut DirIo { fs: &mut self.fs, ino: dir }, loc) {
                        Ok(Some(_)) => self.fix(format!("block {addr}: entry {n} of directory {dir} {why}: removed")),
                        Ok(None) => {}
                        Err(e) => self.unfixed.push(format!("block {addr}: entry {n} of directory {dir} {why}: {e}")),
                    }
                }
                DentryFix::Retype { dir, loc, addr, name, ino, was, kind } => {
                    let n = show(&name);
                    match dir::set_entry(&mut DirIo { fs: &mut self.fs, ino: dir }, loc, ino, kind) {
                        Ok(()) => self.fix(format!(
                            "block {addr}: entry {n} of directory {dir} has type {was:?}, but inode {ino} is {kind:?}: corrected"
                        )),
                        Err(e) => self.unfixed.push(format!("block {addr}: entry {n} of directory {dir}: {e}")),
                    }
                }
                DentryFix::Reinsert { dir, loc, addr, name, ino, kind } => {
                    let n = show(&name);
                    let removed = dir::remove_at(&mut DirIo { fs: &mut self.fs, ino: dir }, loc);
                    let r = match removed {
                        Ok(_) => self.fs.dir_insert(dir, &name, ino, kind),
                        Err(e) => Err(e),
                    };
                    match r {
                        Ok(()) => self.fix(format!(
                            "block {addr}: entry {n} of directory {dir} is not in its name's hash bucket: re-inserted"
                        )),
                        Err(Error::Exists) => self.fix(format!(
                            "block {addr}: entry {n} of directory {dir} is not in its name's hash bucket and the name \
                             exists: removed"
                        )),
                        Err(e) => self.unfixed.push(format!("block {addr}: entry {n} of directory {dir}: {e}")),
                    }
                }
            }
        }
        Ok(())
    }

    /// A new, empty root directory in place of a lost one.
    fn make_root(&mut self) {
        let mut b = zero_block();
        node::init_footer(&mut b, ROOT_INO, ROOT_INO, NodeType::Inode, 0);
        inode::set_mode(&mut b, (FileType::Directory.mode_bits() | 0o755) as u16);
        inode::set_links(&mut b, 2);
        for (s, n) in [
            (inode::OFF_ATIME_SEC, inode::OFF_ATIME_NSEC),
            (inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC),
            (inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC),
            (inode::OFF_CRTIME_SEC, inode::OFF_CRTIME_NSEC),
        ] {
            inode::set_time(&mut b, s, n, self.now);
        }
        inode::set_pino(&mut b, ROOT_INO);
        inode::set_generation(&mut b, 1);
        self.fs.nat.set(ROOT_INO, NatEntry { ino: ROOT_INO, addr: NEW_ADDR });
        // A new root: what was recorded of the old tree's directories no longer holds.
        self.fs.dir_parents.clear();
        self.fs.nodes.insert(ROOT_INO, CachedNode { block: b, dirty: true });
        self.fs.dirty_nodes.insert(ROOT_INO, ROOT_INO);
        self.fs.valid_inodes += 1;
        self.inodes.insert(ROOT_INO, FileType::Directory);
    }

    /// Links the unreachable inodes worth keeping into /lost+found as `#<ino>`.
    fn link_lost_found(&mut self) -> Result<()> {
        if self.to_lost_found.is_empty() {
            return Ok(());
        }
        let lf = match self.lost_found() {
            Ok(lf) => lf,
            Err(e) => {
                for &ino in &self.to_lost_found {
                    self.unfixed.push(format!("inode {ino} has no name, and /lost+found cannot be made: {e}"));
                }
                return Ok(());
            }
        };
        let list = core::mem::take(&mut self.to_lost_found);
        for ino in list {
            let kind = self.inodes.get(&ino).copied().unwrap_or(FileType::Regular);
            let mut linked = None;
            // Bounded: a few candidate names.
            for k in 0..16u32 {
                let name = if k == 0 { format!("#{ino}") } else { format!("#{ino}.{k}") };
                match self.fs.dir_lookup(lf, name.as_bytes()) {
                    Ok(None) => {}
                    Ok(Some(_)) => continue,
                    Err(e) => {
                        self.unfixed.push(format!("inode {ino}: cannot link into /lost+found: {e}"));
                        break;
                    }
                }
                match self.fs.dir_insert(lf, name.as_bytes(), ino, kind) {
                    Ok(()) => linked = Some(name),
                    Err(e) => self.unfixed.push(format!("inode {ino}: cannot link into /lost+found: {e}")),
                }
                break;
            }
            let Some(name) = linked else { continue };
            let size = inode::size(self.fs.inode_ref(ino)?);
            let b = self.fs.inode_mut(ino)?;
            inode::set_name(b, name.as_bytes());
            inode::set_pino(b, lf);
            self.fs.dir_parents.forget(ino);
            self.fix(format!("inode {ino} ({kind:?}, {size} bytes) had no name: linked as /lost+found/{name}"));
        }
        Ok(())
    }

    /// The /lost+found directory, made if there is none.
    fn lost_found(&mut self) -> Result<Ino> {
        // Bounded: a few candidate names.
        for k in 0..16u32 {
            let name = if k == 0 { String::from("lost+found") } else { format!("lost+found.{k}") };
            match self.fs.dir_lookup(ROOT_INO, name.as_bytes())? {
                Some((_, ino, FileType::Directory)) => return Ok(ino),
                Some(_) => continue,
                None => {
                    let root = Credentials::default();
                    let a = self.fs.mkdir(ROOT_INO, name.as_bytes(), 0o700, root, self.now)?;
                    self.inodes.insert(a.ino, FileType::Directory);
                    self.fix(format!("created /{name} (inode {})", a.ino));
                    return Ok(a.ino);
                }
            }
        }
        Err(Error::Exists)
    }

    /// Counts the names of every inode from the root down, and sets link counts (and
    /// directories' parents) to match.
    fn fix_links(&mut self) -> Result<()> {
        let mut refs: BTreeMap<Ino, u32> = BTreeMap::new();
        let mut subdirs: BTreeMap<Ino, u32> = BTreeMap::new();
        let mut parent: BTreeMap<Ino, Ino> = BTreeMap::new();
        let mut queue = VecDeque::from(vec![ROOT_INO]);
        parent.insert(ROOT_INO, ROOT_INO);
        // Bounded: each directory is queued once (when first named).
        while let Some(d) = queue.pop_front() {
            let depth = self.fs.dir_depth(d)?;
            let mut entries = Vec::new();
            let r = dir::iterate(&mut DirIo { fs: &mut self.fs, ino: d }, depth, 2, &mut |e: dir::Entry| {
                entries.push(e);
                true
            });
            if let Err(e) = r {
                self.unfixed.push(format!("directory {d}: {e}"));
                continue;
            }
            for e in entries {
                *refs.entry(e.ino).or_insert(0) += 1;
                if e.kind == FileType::Directory && !parent.contains_key(&e.ino) {
                    parent.insert(e.ino, d);
                    *subdirs.entry(d).or_insert(0) += 1;
                    queue.push_back(e.ino);
                }
            }
        }
        let inos: BTreeSet<Ino> = refs.keys().copied().chain(core::iter::once(ROOT_INO)).collect();
        for ino in inos {
            if self.fs.check_ino(ino).is_err() {
                continue;
            }
            let addr = self.fs.nat_addr(ino);
            let b = self.fs.inode_ref(ino)?;
            let is_dir = FileType::from_mode(inode::mode(b) as u32) == Some(FileType::Directory);
            let (links, pino) = (inode::links(b), inode::pino(b));
            let want =
                if is_dir { 2 + subdirs.get(&ino).copied().unwrap_or(0) } else { refs.get(&ino).copied().unwrap_or(0) };
            if links != want {
                let m = if is_dir {
                    format!(
                        "directory {ino} (block {addr}): link count {links}, but {} subdirectories: set to {want}",
                        want - 2
                    )
                } else {
                    format!("inode {ino} (block {addr}): link count {links}, but {want} names found: set to {want}")
                };
                self.fix(m);
                inode::set_links(self.fs.inode_mut(ino)?, want);
            }
            if is_dir {
                if let Some(&p) = parent.get(&ino) {
                    if pino != p {
                        self.fix(format!(
                            "directory {ino} (block {addr}): records parent {pino}, but lives in {p}: corrected"
                        ));
                        inode::set_pino(self.fs.inode_mut(ino)?, p);
                        self.fs.dir_parents.forget(ino);
                    }
                }
            }
        }
        Ok(())
    }
}

/// A name for messages.
fn show(name: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(name))
}

/// The repair's report line for SIT segment `s`, rebuilt as `e` (`old`: its readable entry).
fn sit_fix_line(g: &Geometry, s: usize, old: Option<&SegEntry>, e: &SegEntry) -> String {
    let start = g.seg_start(s as u32);
    let end = start + g.segment_blocks;
    match old {
        None => format!("SIT segment {s} (blocks {start}..{end}): entry unreadable: rebuilt, {} valid blocks", e.valid),
        Some(old) if old.valid != e.valid => format!(
            "SIT segment {s} (blocks {start}..{end}): {} valid blocks recorded, {} in use: count and bitmap rebuilt",
            old.valid, e.valid
        ),
        Some(old) if old.bitmap != e.bitmap => {
            format!("SIT segment {s} (blocks {start}..{end}): valid-block bitmap wrong: rebuilt")
        }
        Some(old) => format!("SIT segment {s}: type {} does not match its blocks: set to {}", old.seg_type, e.seg_type),
    }
}
