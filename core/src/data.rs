//! File data: where block `(ino, idx)` is ([`Filesystem::locate`]) and reading it — whole
//! reads, reads planned for a driver that reads the device outside its lock
//! ([`ReadPlan`]), and the blocks the dentry code reads.
//!
//! **The one lookup order** (every read and plan of a file follows it; write-back, truncation
//! and a write's partial blocks use steps 2 and 3, the file's own block, through
//! [`Filesystem::read_block_opt`]):
//! 1. the file's open atomic session, if it staged the block (in memory, or in its session
//!    inode once spilled): what the file reads as until commit or abort;
//! 2. the write-back cache (dirty blocks), unless cleaning moved the block with a checksum
//!    it had failed (`gc_kept_crcs`): then its cached bytes are the corrupt ones and a read
//!    is EIO (cleaning never launders a bad block), and write-back keeps that checksum;
//! 3. the device, at the address the file's node holds, checked against the checksum next
//!    to it (`NULL_ADDR`: a hole, read as zeros).
//!
//! The batched reader ([`Filesystem::read_blocks`]) asks steps 2 and 3 for a range at once
//! (pointers a node at a time, adjacent device blocks in one request) through the same
//! step 2 (`readable_dirty`) and pointer walk.
//!
//! **Where data is** (`lseek`'s SEEK_DATA and SEEK_HOLE, [`Filesystem::seek_step`], and
//! `copy_range`'s runs): a block is data when one of the three steps has it — staged by
//! the session, in the write-back cache, or a pointer to a block on the device (not
//! `NULL_ADDR`, nor `NEW_ADDR`, whose block the cache holds) — and a hole otherwise,
//! without reading any block's contents. A hole that fallocate reserved is a
//! hole (it is never in the cache nor mapped; ext4 answers the same for unwritten extents
//! with no cached pages). The walk goes down the node tree a node at a time, passes a
//! missing node's whole span in one step, and counts the nodes it visits against a budget,
//! so that one call holds the filesystem for a bounded time whatever the file's size.

use crate::error::{Error, Result};
use crate::fs::Filesystem;
use crate::layout::*;
use crate::node::{self, inode, BlockPath, FileType, NodeType};
use crate::{zero_block, Block, BlockAddr, BlockDevice, Ino};
use alloc::boxed::Box;
use alloc::vec::Vec;

/// Blocks in one device read of a file's adjacent blocks at most (1 MiB: FUSE's largest
/// read request, and a bound on what one read holds up the filesystem for).
pub(crate) const READ_RUN_BLOCKS_MAX: usize = 256;

/// Where the contents of a file block are now (see the module header for the order).
#[derive(Debug)]
pub(crate) enum Location {
    /// Staged by the file's open atomic session: the block as the session holds it.
    Staged(Box<Block>),
    /// In the write-back cache.
    Dirty,
    /// In the write-back cache, moved by cleaning with the checksum it failed: reading it is
    /// EIO.
    KeptBad,
    /// On the device at `addr` (its node's pointer; `NULL_ADDR` is a hole), checked
    /// against `crc`.
    Device { addr: BlockAddr, crc: u32 },
    /// Block 0 of an inline file: its bytes, from the inode (`inline.rs`).
    Inline(Box<Block>),
}

/// Adjacent device blocks that [`Filesystem::read_planned`] left for its caller to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRun {
    /// Byte offset in the caller's buffer of the run's first block.
    pub buf_offset: usize,
    /// Device address of the first block.
    pub addr: u64,
    /// Blocks in the run.
    pub blocks: usize,
    /// Each block's checksum, in order, when the filesystem keeps data checksums.
    pub crcs: Option<Vec<u32>>,
}

impl PlannedRun {
    /// Whether `data` (the run's blocks as read) matches the checksums. Always true on a
    /// filesystem without data checksums.
    pub fn verify(&self, data: &[Block]) -> bool {
        match &self.crcs {
            None => data.len() == self.blocks,
            Some(c) => c.len() == data.len() && c.iter().zip(data).all(|(&crc, b)| crate::codec::crc(&b[..]) == crc),
        }
    }
}

/// What [`Filesystem::read_planned`] did: `len` bytes of the caller's buffer are the read's
/// result once the `runs` are read into it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadPlan {
    pub len: usize,
    pub runs: Vec<PlannedRun>,
    /// Whole blocks of the buffer that are holes of the file, already zeroed in it (left as
    /// they are by [`Filesystem::plan_read`]), in order and coalesced. Information only
    /// (nothing to read): a caller that copies the result elsewhere may skip them. Not every
    /// zero block is listed (e.g. a partial block of a hole, or a cached block cleaning
    /// dropped), but every listed one is a hole.
    pub holes: Vec<PlannedHole>,
}

/// Adjacent whole blocks of a planned read's buffer that read as zeros because the file
/// has no block there (see [`ReadPlan::holes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedHole {
    /// Byte offset in the caller's buffer of the first block.
    pub buf_offset: usize,
    /// Blocks in the hole.
    pub blocks: usize,
}

impl ReadPlan {
    /// Notes the whole block at `buf_offset` as a hole, merging it with the hole before
    /// when adjacent (blocks are noted in increasing order).
    pub(crate) fn note_hole(&mut self, buf_offset: usize) {
        match self.holes.last_mut() {
            Some(h) if h.buf_offset + h.blocks * BLOCK_SIZE == buf_offset => h.blocks += 1,
            _ => self.holes.push(PlannedHole { buf_offset, blocks: 1 }),
        }
    }
}

impl<D: BlockDevice> Filesystem<D> {
    /// Where block `idx` of `ino` is, in the one lookup order (module header): the session's
    /// staged block first, then the file's own ([`Self::locate_committed`]).
    pub(crate) fn locate(&mut self, ino: Ino, idx: u64) -> Result<Location> {
        if let Some(b) = self.staged_block(ino, idx)? {
            return Ok(Location::Staged(b));
        }
        self.locate_committed(ino, idx)
    }

    /// [`Self::locate`] without the atomic session: the file's own block (what a commit
    /// replaces; what write-back, truncation and the dentry code see).
    pub(crate) fn locate_committed(&mut self, ino: Ino, idx: u64) -> Result<Location> {
        if let Some(l) = self.locate_in_memory(ino, idx) {
            return Ok(l);
        }
        if idx == 0 && self.is_inline(ino)? {
            let mut b = zero_block();
            self.inline_read(ino, 0, &mut b[..])?;
            return Ok(Location::Inline(b));
        }
        let (addr, crc) = self.get_ptr(ino, idx)?;
        Ok(Location::Device { addr, crc })
    }

    /// Step 2 of the order for the batched reader: the write-back cache's block when its
    /// bytes may be read (not a bad block cleaning is moving with its kept checksum: that
    /// is `None` too, and [`Self::read_block_opt`] then reports it). Reads nothing.
    fn readable_dirty(&self, ino: Ino, idx: u64) -> Option<&Block> {
        let b = self.data.get(&(ino, idx))?;
        (!self.gc_kept_crcs.contains_key(&(ino, idx))).then_some(&**b)
    }

    /// Step 2 of the order alone: whether the write-back cache has the block, and whether
    /// its bytes may be read. Reads nothing.
    pub(crate) fn locate_in_memory(&self, ino: Ino, idx: u64) -> Option<Location> {
        if !self.data.contains_key(&(ino, idx)) {
            return None;
        }
        Some(if self.gc_kept_crcs.contains_key(&(ino, idx)) { Location::KeptBad } else { Location::Dirty })
    }

    /// The checksum write-back records for block `idx` of `ino` with contents of checksum
    /// `content_crc`: the kept one of a bad block cleaning moved, else its own.
    pub(crate) fn writeback_crc(&self, ino: Ino, idx: u64, content_crc: Option<u32>) -> u32 {
        match self.gc_kept_crcs.get(&(ino, idx)) {
            Some(&kept) => kept,
            None => content_crc.unwrap_or(0),
        }
    }

    /// The contents of block `idx` of `ino` at `loc` (from [`Self::locate`]): `None` for a
    /// hole.
    pub(crate) fn read_located(&mut self, ino: Ino, idx: u64, loc: Location) -> Result<Option<Box<Block>>> {
        match loc {
            Location::Staged(b) | Location::Inline(b) => Ok(Some(b)),
            Location::Dirty => Ok(self.data.get(&(ino, idx)).cloned()),
            Location::KeptBad => {
                // A bad block that cleaning is moving with its old checksum: its cached bytes
                // are the corrupt ones (until a checkpoint publishes the move, or for good if
                // the cleaning stopped on an error). Never return or modify them.
                self.stats.data_checksum_errors += 1;
                let (addr, _) = self.get_ptr(ino, idx)?;
                Err(Error::DataChecksum { ino, index: idx, block: addr as u64 })
            }
            Location::Device { addr, crc } => self.read_block_at(ino, idx, addr, crc),
        }
    }

    /// Reads the file's own block `idx` (not the session's): `None` for a hole.
    pub(crate) fn read_block_opt(&mut self, ino: Ino, idx: u64) -> Result<Option<Box<Block>>> {
        let loc = self.locate_committed(ino, idx)?;
        self.read_located(ino, idx, loc)
    }

    /// Reads up to `buf.len()` bytes at `offset`; returns the count (0 at or past EOF).
    pub fn read(&mut self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.reading(|fs| fs.read_inner(ino, offset, buf, None, true))
    }

    /// [`Filesystem::read`] for a driver that reads the device itself, outside its lock:
    /// everything the read needs from memory (cached and staged blocks, holes, partial
    /// blocks) is copied into `buf` now, and the whole blocks that must come from the
    /// device are returned as runs of adjacent addresses, to be read into `buf` at their
    /// offsets and checked with [`PlannedRun::verify`]. The result is what `read` would
    /// have returned at this moment as long as the blocks are read before the device's
    /// next [`BlockDevice::reuse_fence`]; a caller that cannot tell (or whose check fails)
    /// calls `read` instead, which also reports any error properly.
    pub fn read_planned(&mut self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<ReadPlan> {
        let mut plan = ReadPlan::default();
        plan.len = self.reading(|fs| fs.read_inner(ino, offset, buf, Some(&mut plan), true))?;
        Ok(plan)
    }

    /// [`Filesystem::read_planned`] that leaves the whole blocks of holes as they are in
    /// `buf` too, not only those of the runs: for a caller that knows what the listed holes
    /// hold (zeros) and takes from `buf` only the bytes outside the runs and holes — the
    /// simulator's dump of a file that is megabytes of holes, which would otherwise zero
    /// them all.
    pub fn plan_read(&mut self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<ReadPlan> {
        let mut plan = ReadPlan::default();
        plan.len = self.reading(|fs| fs.read_inner(ino, offset, buf, Some(&mut plan), false))?;
        Ok(plan)
    }

    fn read_inner(
        &mut self,
        ino: Ino,
        offset: u64,
        buf: &mut [u8],
        mut plan: Option<&mut ReadPlan>,
        fill_holes: bool,
    ) -> Result<usize> {
        match self.inode_kind(ino)? {
            FileType::Regular | FileType::Symlink => {}
            FileType::Directory => return Err(Error::IsDir),
            _ => return Err(Error::Invalid("read of a special file")),
        }
        let size = match self.atomic.get(&ino).map(|s| s.size) {
            Some(s) => s,
            None if self.is_inline(ino)? => return self.inline_read(ino, offset, buf),
            None => inode::size(self.inode_ref(ino)?),
        };
        if offset >= size {
            return Ok(0);
        }
        let n = ((size - offset) as usize).min(buf.len());
        let mut done = 0usize;
        while done < n {
            let pos = offset + done as u64;
            let idx = pos / BLOCK_SIZE as u64;
            let in_blk = (pos % BLOCK_SIZE as u64) as usize;
            let len = (BLOCK_SIZE - in_blk).min(n - done);
            if in_blk == 0 && n - done >= BLOCK_SIZE {
                // Whole blocks: read straight into the caller's buffer, adjacent device
                // blocks in one request.
                let whole = (n - done) / BLOCK_SIZE;
                let (blocks, _) = buf[done..done + whole * BLOCK_SIZE].as_chunks_mut::<BLOCK_SIZE>();
                self.read_blocks(ino, idx, blocks, plan.as_deref_mut().map(|p| (p, done)), fill_holes)?;
                done += whole * BLOCK_SIZE;
                continue;
            }
            let loc = self.locate(ino, idx)?;
            match self.read_located(ino, idx, loc)? {
                Some(b) => buf[done..done + len].copy_from_slice(&b[in_blk..in_blk + len]),
                None => buf[done..done + len].fill(0),
            }
            done += len;
        }
        Ok(n)
    }

    /// Block `idx` of `ino` as staged by its open session, if the session staged it.
    pub(crate) fn staged_block(&mut self, ino: Ino, idx: u64) -> Result<Option<Box<Block>>> {
        let cow = match self.atomic.get(&ino) {
            None => return Ok(None),
            Some(s) => match s.cow {
                None => return Ok(s.blocks.get(&idx).cloned()),
                Some(cow) => cow,
            },
        };
        self.read_block_opt(cow, idx)
    }

    /// A directory's block `idx` for the dentry code: a clean block validated before comes
    /// from the [`crate::dcache`] (`true`); else as [`Self::read_block_opt`] reads it, noted
    /// so that the cache keeps it once it passes validation.
    pub(crate) fn read_dentry_block(&mut self, ino: Ino, idx: u64) -> Result<Option<(Box<Block>, bool)>> {
        // Only the block this call reads from the device may be kept.
        self.dentry_cache.forget_pending();
        if self.data.contains_key(&(ino, idx)) {
            // A dirty block (a run of creates rewrites the same few): validated again only
            // when it differs from the copy that last passed.
            let Some(b) = self.read_block_opt(ino, idx)? else { return Ok(None) };
            let same = self.dentry_cache.dirty_validated(ino, idx, &b);
            return Ok(Some((b, same)));
        }
        let (addr, crc) = self.get_ptr(ino, idx)?;
        if let Some(b) = self.dentry_cache.get(addr, idx, crc) {
            return Ok(Some((b, true)));
        }
        let b = self.read_block_at(ino, idx, addr, crc)?;
        if b.is_some() {
            self.dentry_cache.read_from_device(ino, idx, addr, crc);
        }
        Ok(b.map(|b| (b, false)))
    }

    /// A pointer of a block that is not in memory, as a reader sees it: a reserved hole on
    /// disk (`NEW_ADDR`, `FEATURE_INCOMPAT_PREALLOC`) reads as a hole. Without the feature
    /// `NEW_ADDR` stays, and the reader reports it as corruption (only a block in the
    /// write-back cache has it there).
    pub(crate) fn reserved_as_hole(&self, addr: BlockAddr) -> BlockAddr {
        if addr == NEW_ADDR && self.prealloc_on_disk {
            NULL_ADDR
        } else {
            addr
        }
    }

    /// Block `idx` of `ino` from device address `addr` (its node's pointer), checked
    /// against the data checksum `crc`; `None` for a hole.
    fn read_block_at(&mut self, ino: Ino, idx: u64, addr: BlockAddr, crc: u32) -> Result<Option<Box<Block>>> {
        let addr = self.reserved_as_hole(addr);
        if addr == NULL_ADDR {
            return Ok(None);
        }
        if addr == NEW_ADDR || !self.geo.in_main(addr) {
            return Err(Error::corrupt(self.nat_addr(ino), "data pointer outside the main area"));
        }
        let mut b = zero_block();
        let checksums = self.data_checksums;
        // Every block read from the device is checked against the checksum its node holds:
        // flash that returns flipped or stale bytes gets EIO, never the bytes; a block that
        // fails is read once more first (`read_twice_if`: a misread is not an error).
        let bad = crate::read_twice_if(
            &mut self.dev,
            addr as u64,
            &mut b,
            |b| checksums && crate::codec::crc(&b[..]) != crc,
            |&bad| bad,
        )?;
        self.stats.device_reads += 1;
        if bad && !crate::mutant!("mutant-device-read-no-crc") {
            self.stats.data_checksum_errors += 1;
            return Err(Error::DataChecksum { ino, index: idx, block: addr as u64 });
        }
        Ok(Some(b))
    }

    /// The data pointers of file blocks `idx..` up to the end of the node that maps `idx`
    /// (the inode or a direct node), at most `max` of them, appended to `out`: one walk
    /// down the node tree for all of them. A node missing on the way makes them all holes
    /// (`NULL_ADDR`, checksum 0), as [`Self::get_ptr`] gives for each. For the reader of
    /// blocks not in memory: a reserved hole on disk is a hole here too
    /// ([`Self::reserved_as_hole`]).
    pub(crate) fn get_ptrs(&mut self, ino: Ino, idx: u64, max: u64, out: &mut Vec<(BlockAddr, u32)>) -> Result<()> {
        debug_assert!(max > 0);
        let from = out.len();
        match node::block_path(idx)? {
            BlockPath::Inode { ofs } => {
                let end = (u64::from(ofs) + max).min(u64::from(ADDRS_PER_INODE)) as u32;
                let b = self.inode_ref(ino)?;
                out.extend((ofs..end).map(|o| (inode::addr(b, o), inode::data_crc(b, o))));
            }
            BlockPath::Node { slot, depth, idx: path, ofs, .. } => {
                let end = (u64::from(ofs) + max).min(u64::from(ADDRS_PER_BLOCK)) as u32;
                let mut nid = inode::nid(self.inode_ref(ino)?, slot);
                for &i in path.iter().take(depth) {
                    if nid == NULL_NID {
                        break;
                    }
                    nid = node::slot(self.child(nid, ino, NodeType::Indirect)?, i);
                }
                if nid == NULL_NID {
                    out.extend((ofs..end).map(|_| (NULL_ADDR, 0)));
                } else {
                    let b = self.child(nid, ino, NodeType::Direct)?;
                    out.extend((ofs..end).map(|o| (node::addr(b, o), node::data_crc(b, o))));
                }
            }
        }
        if self.prealloc_on_disk {
            for p in &mut out[from..] {
                p.0 = self.reserved_as_hole(p.0);
            }
        }
        Ok(())
    }

    /// Reads the whole blocks `idx..idx + out.len()` of `ino` into `out`, as
    /// [`Filesystem::read_block_opt`] would one by one (holes read as zeros), except that
    /// blocks on the device at adjacent addresses are read in one device request per run
    /// (a sequential read of a file written sequentially is one request per
    /// [`READ_RUN_BLOCKS_MAX`] blocks) and straight into `out`, with no copy, and that the
    /// node tree is walked once per node, not once per block ([`Self::get_ptrs`]). Every
    /// block read from the device is verified against its pointer's checksum.
    ///
    /// With `plan` (the caller's list and the byte offset of `out` in its buffer), the
    /// device runs are not read but appended to the list, their blocks in `out` left as
    /// they are (see [`Filesystem::read_planned`]); with `fill_holes` false, so are the
    /// holes (listed in the plan; see [`Filesystem::plan_read`]).
    pub(crate) fn read_blocks(
        &mut self,
        ino: Ino,
        idx: u64,
        out: &mut [Block],
        mut plan: Option<(&mut ReadPlan, usize)>,
        fill_holes: bool,
    ) -> Result<()> {
        debug_assert!(fill_holes || plan.is_some(), "only a planned read may leave holes unwritten");
        if self.atomic.contains_key(&ino) {
            return self.read_blocks_staged(ino, idx, out, plan, fill_holes);
        }
        // The run being gathered: its first device address, its first slot in `out`, and
        // the checksums of its blocks in order.
        let mut run: Option<(BlockAddr, usize)> = None;
        let mut crcs: Vec<u32> = Vec::new();
        // Pointers of blocks `ptrs_from..ptrs_from + ptrs.len()` (fetched a node at a time,
        // only for a block not in memory: a block served from memory needs no pointer, and
        // reading it must not fail on a node it does not need).
        let mut ptrs: Vec<(BlockAddr, u32)> = Vec::new();
        let mut ptrs_from = idx;
        // Blocks of the range in the write-back cache and staged by an atomic write, each
        // looked up once here instead of once per block.
        let end = idx + out.len() as u64;
        let cached: Vec<u64> = self.data.range((ino, idx)..(ino, end)).map(|(&(_, i), _)| i).collect();
        let mut cached_at = 0usize;
        // One step past the last block, to read the run gathered last.
        for i in 0..=out.len() {
            let fidx = idx + i as u64;
            let in_data = cached.get(cached_at) == Some(&fidx);
            if in_data {
                cached_at += 1;
            }
            let in_memory = i < out.len() && in_data;
            // Past the end, in memory (served below, after the run before it) or a hole:
            // no address.
            let (addr, crc) = if i == out.len() || in_memory {
                (NULL_ADDR, 0)
            } else {
                if fidx < ptrs_from || fidx >= ptrs_from + ptrs.len() as u64 {
                    ptrs.clear();
                    ptrs_from = fidx;
                    self.get_ptrs(ino, fidx, end - fidx, &mut ptrs)?;
                }
                ptrs[(fidx - ptrs_from) as usize]
            };
            if let Some((first, at)) = run {
                let len = i - at;
                if addr != NULL_ADDR && u64::from(first) + len as u64 == u64::from(addr) && len < READ_RUN_BLOCKS_MAX {
                    crcs.push(crc);
                    continue;
                }
                let base = plan.as_mut().map(|(v, base)| (&mut **v, *base));
                self.read_run_or_plan(ino, idx + at as u64, first, &mut out[at..i], &crcs, base, at)?;
                run = None;
            }
            if i == out.len() {
                break;
            }
            if addr != NULL_ADDR {
                if addr == NEW_ADDR || !self.geo.in_main(addr) {
                    return Err(Error::corrupt(self.nat_addr(ino), "data pointer outside the main area"));
                }
                run = Some((addr, i));
                crcs.clear();
                crcs.push(crc);
                continue;
            }
            if !in_memory {
                if fill_holes {
                    out[i].fill(0);
                }
                if let Some((p, base)) = plan.as_mut() {
                    p.note_hole(*base + i * BLOCK_SIZE);
                }
                continue;
            }
            match self.readable_dirty(ino, fidx) {
                Some(b) => out[i].copy_from_slice(&b[..]),
                // A cached block cleaning is moving with a kept checksum: the error, as
                // for one block.
                _ => match self.read_block_opt(ino, fidx)? {
                    Some(b) => out[i].copy_from_slice(&b[..]),
                    None => out[i].fill(0),
                },
            }
        }
        Ok(())
    }

    /// [`Self::read_blocks`] of a file with an open atomic session: block by block, each
    /// the session's staged block if it has one (in memory or on the device), else the
    /// file's. No device runs are planned (a session's file is read through the lock).
    fn read_blocks_staged(
        &mut self,
        ino: Ino,
        idx: u64,
        out: &mut [Block],
        mut plan: Option<(&mut ReadPlan, usize)>,
        fill_holes: bool,
    ) -> Result<()> {
        for (i, slot) in out.iter_mut().enumerate() {
            let fidx = idx + i as u64;
            let loc = self.locate(ino, fidx)?;
            match self.read_located(ino, fidx, loc)? {
                Some(b) => slot.copy_from_slice(&b[..]),
                None => {
                    if fill_holes {
                        slot.fill(0);
                    }
                    if let Some((p, base)) = plan.as_mut() {
                        p.note_hole(*base + i * BLOCK_SIZE);
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads a run now, or appends it to the caller's plan (`at`: its first slot in the
    /// blocks `plan`'s offset refers to).
    #[allow(clippy::too_many_arguments)]
    fn read_run_or_plan(
        &mut self,
        ino: Ino,
        idx: u64,
        addr: BlockAddr,
        out: &mut [Block],
        crcs: &[u32],
        plan: Option<(&mut ReadPlan, usize)>,
        at: usize,
    ) -> Result<()> {
        match plan {
            None => self.read_run_verified(ino, idx, addr, out, crcs),
            Some((p, base)) => {
                self.stats.device_reads += out.len() as u64;
                p.runs.push(PlannedRun {
                    buf_offset: base + at * BLOCK_SIZE,
                    addr: u64::from(addr),
                    blocks: out.len(),
                    crcs: self.data_checksums.then(|| crcs.to_vec()),
                });
                Ok(())
            }
        }
    }

    /// One device read of the adjacent blocks `out` from `addr` (file blocks from `idx`),
    /// each checked against its checksum in `crcs`.
    fn read_run_verified(
        &mut self,
        ino: Ino,
        idx: u64,
        addr: BlockAddr,
        out: &mut [Block],
        crcs: &[u32],
    ) -> Result<()> {
        debug_assert_eq!(out.len(), crcs.len());
        self.dev.read_run(u64::from(addr), out)?;
        self.stats.device_reads += out.len() as u64;
        if self.data_checksums && !crate::mutant!("mutant-device-read-no-crc") {
            for (k, (b, &crc)) in out.iter_mut().zip(crcs).enumerate() {
                let at = u64::from(addr) + k as u64;
                let ok = |b: &Block| crate::codec::crc(&b[..]) == crc;
                if ok(b) {
                    continue;
                }
                // A block that fails is read once more (as `read_twice_if` does).
                self.dev.read(at, b)?;
                if !ok(b) {
                    self.stats.data_checksum_errors += 1;
                    return Err(Error::DataChecksum { ino, index: idx + k as u64, block: u64::from(addr) + k as u64 });
                }
            }
        }
        Ok(())
    }
}

/// Whether a data pointer names a block on the device.
fn on_device(addr: BlockAddr) -> bool {
    addr != NULL_ADDR && addr != NEW_ADDR
}

/// What [`Filesystem::seek_step`] looks for: `lseek`'s SEEK_DATA or SEEK_HOLE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeekWhence {
    /// The start of the first data at or after the offset.
    Data,
    /// The start of the first hole at or after the offset (the end of the file is one).
    Hole,
}

/// What one [`Filesystem::seek_step`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeekStep {
    /// The offset `lseek` returns.
    Found(u64),
    /// ENXIO: the offset is at or past the end of the file, or (SEEK_DATA) no data follows it.
    NotFound,
    /// The step's node budget ran out: what was asked is not in `offset..at`; ask again
    /// from `at` (always past the offset asked, so that steps make progress).
    Resume(u64),
}

/// What a search of file blocks `from..end` found: the block, nothing in the whole range,
/// or nothing before the block where its node budget ran out (always past `from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    Found(u64),
    Clear,
    Stopped(u64),
}

impl Scan {
    /// The end of what this result says about `from..end`: blocks before it are known.
    fn bound(self, end: u64) -> u64 {
        match self {
            Scan::Found(i) | Scan::Stopped(i) => i,
            Scan::Clear => end,
        }
    }

    /// This result narrowed by `other`, a search of `from..self.bound(end)`: the earlier
    /// block found, or the earlier point where knowledge stops.
    fn narrow(self, other: Scan) -> Scan {
        match other {
            Scan::Clear => self,
            o => o,
        }
    }
}

impl<D: BlockDevice> Filesystem<D> {
    /// `lseek(SEEK_DATA | SEEK_HOLE)` of `ino` from byte `offset`, visiting at most about
    /// `max_nodes` tree nodes (a walk down the tree in progress is finished: up to three
    /// more per file searched); see the module header for what counts as data. Reads no
    /// block contents; a node that cannot be read is the error, never a guess. A caller
    /// that holds a lock for it resumes with [`SeekStep::Resume`] after releasing it.
    pub fn seek_step(&mut self, ino: Ino, offset: u64, whence: SeekWhence, max_nodes: usize) -> Result<SeekStep> {
        self.reading(|fs| fs.seek_inner(ino, offset, whence, max_nodes))
    }

    /// [`Filesystem::seek_step`] to the end: `None` for ENXIO.
    pub fn seek_data_hole(&mut self, ino: Ino, offset: u64, whence: SeekWhence) -> Result<Option<u64>> {
        let mut at = offset;
        // Bounded: every resumption is past the offset before it, and an unlimited budget
        // does not stop at all.
        loop {
            match self.seek_step(ino, at, whence, usize::MAX)? {
                SeekStep::Found(o) => return Ok(Some(o)),
                SeekStep::NotFound => return Ok(None),
                SeekStep::Resume(next) => at = next,
            }
        }
    }

    fn seek_inner(&mut self, ino: Ino, offset: u64, whence: SeekWhence, max_nodes: usize) -> Result<SeekStep> {
        match self.inode_kind(ino)? {
            FileType::Regular => {}
            FileType::Directory => return Err(Error::IsDir),
            _ => return Err(Error::Invalid("seek for data or holes in a special file")),
        }
        let size = self.size_seen(ino)?;
        if offset >= size {
            return Ok(SeekStep::NotFound);
        }
        let bs = BLOCK_SIZE as u64;
        let (from, end) = (offset / bs, size.div_ceil(bs));
        let mut budget = max_nodes;
        let scan = match whence {
            SeekWhence::Data => self.next_data(ino, from, end, &mut budget)?,
            SeekWhence::Hole => self.next_hole(ino, from, end, &mut budget)?,
        };
        Ok(match (scan, whence) {
            (Scan::Found(i), _) => SeekStep::Found((i * bs).clamp(offset, size)),
            (Scan::Clear, SeekWhence::Data) => SeekStep::NotFound,
            // The end of the file is a hole.
            (Scan::Clear, SeekWhence::Hole) => SeekStep::Found(size),
            (Scan::Stopped(i), _) => SeekStep::Resume(i * bs),
        })
    }

    /// The size of `ino` as reads see it: its open session's, else the inode's.
    pub(crate) fn size_seen(&mut self, ino: Ino) -> Result<u64> {
        match self.atomic.get(&ino) {
            Some(s) => Ok(s.size),
            None => Ok(inode::size(self.inode_ref(ino)?)),
        }
    }

    /// The first block of `from..end` of `ino` that is data as reads see it (module header),
    /// `None` when there is none: a whole search, for a caller that keeps the range small.
    pub(crate) fn next_data_block(&mut self, ino: Ino, from: u64, end: u64) -> Result<Option<u64>> {
        let mut unlimited = usize::MAX;
        let scan = self.next_data(ino, from, end, &mut unlimited)?;
        whole_scan(scan)
    }

    /// [`Self::next_data_block`] for a hole.
    pub(crate) fn next_hole_block(&mut self, ino: Ino, from: u64, end: u64) -> Result<Option<u64>> {
        let mut unlimited = usize::MAX;
        let scan = self.next_hole(ino, from, end, &mut unlimited)?;
        whole_scan(scan)
    }

    /// The first data block of `from..end` of `ino` as reads see it: the earliest of the
    /// session's (staged in memory, or its inode's own data once spilled) and the file's
    /// own.
    fn next_data(&mut self, ino: Ino, from: u64, end: u64, budget: &mut usize) -> Result<Scan> {
        if from >= end {
            return Ok(Scan::Clear);
        }
        let (staged, cow) = match self.atomic.get(&ino) {
            Some(s) => (s.blocks.range(from..end).next().map(|(&i, _)| i), s.cow),
            None => (None, None),
        };
        let mut scan = staged.map_or(Scan::Clear, Scan::Found);
        scan = scan.narrow(self.next_own_data(ino, from, scan.bound(end), budget)?);
        if let Some(cow) = cow {
            scan = scan.narrow(self.next_own_data(cow, from, scan.bound(end), budget)?);
        }
        Ok(scan)
    }

    /// The first hole of `from..end` of `ino` as reads see it: a block that is a hole of
    /// the file and of its session. The candidates leapfrog: each source's next hole from
    /// the last candidate, until all agree.
    fn next_hole(&mut self, ino: Ino, from: u64, end: u64, budget: &mut usize) -> Result<Scan> {
        if from >= end {
            return Ok(Scan::Clear);
        }
        let mut h = from;
        // Bounded: every round but the last moves `h` forward, and `h` stays below `end`;
        // a round after the budget ran out is not started.
        loop {
            if *budget == 0 && h > from {
                return Ok(Scan::Stopped(h));
            }
            let before = h;
            match self.next_own_hole(ino, h, end, budget)? {
                Scan::Found(i) => h = i,
                other => return Ok(other),
            }
            let cow = match self.atomic.get(&ino) {
                None => None,
                Some(s) => {
                    // Past the run of blocks staged in memory that starts at `h`.
                    for &i in s.blocks.range(h..end).map(|(i, _)| i) {
                        if i != h {
                            break;
                        }
                        h += 1;
                    }
                    s.cow
                }
            };
            if h >= end {
                return Ok(Scan::Clear);
            }
            if let Some(cow) = cow {
                match self.next_own_hole(cow, h, end, budget)? {
                    Scan::Found(i) => h = i,
                    other => return Ok(other),
                }
            }
            if h == before {
                return Ok(Scan::Found(h));
            }
        }
    }

    /// The first block of `from..end` that file `f` itself has (in the write-back cache or
    /// mapped), leaving any session aside.
    fn next_own_data(&mut self, f: Ino, from: u64, end: u64, budget: &mut usize) -> Result<Scan> {
        let cached = self.data.range((f, from)..(f, end)).next().map(|(&(_, i), _)| i);
        Ok(match self.next_ptr(f, from, cached.unwrap_or(end), true, budget)? {
            Scan::Clear => cached.map_or(Scan::Clear, Scan::Found),
            s => s,
        })
    }

    /// The first block of `from..end` that file `ino` itself may hold (cached or mapped),
    /// visiting at most about `max_nodes` nodes: `Some(block)` (a block of it, or where
    /// the budget stopped the search: always past `from`), `None` when there is none. A
    /// missing node's whole span is passed in one step: the scrub skips holes with it.
    pub(crate) fn next_own_block_bounded(
        &mut self,
        ino: Ino,
        from: u64,
        end: u64,
        max_nodes: usize,
    ) -> Result<Option<u64>> {
        let mut budget = max_nodes;
        Ok(match self.next_own_data(ino, from, end, &mut budget)? {
            Scan::Found(i) | Scan::Stopped(i) => Some(i),
            Scan::Clear => None,
        })
    }

    /// The first block of `from..end` that file `f` itself does not have (neither cached
    /// nor mapped).
    fn next_own_hole(&mut self, f: Ino, from: u64, end: u64, budget: &mut usize) -> Result<Scan> {
        let mut h = from;
        // Bounded: every round passes a run of cached blocks (a block written since it was
        // last written back: its pointer is `NEW_ADDR`, or its old address).
        loop {
            match self.next_ptr(f, h, end, false, budget)? {
                Scan::Found(i) => h = i,
                other => return Ok(other),
            }
            let start = h;
            for &(_, i) in self.data.range((f, h)..(f, end)).map(|(k, _)| k) {
                if i != h {
                    break;
                }
                h += 1;
            }
            if h == start {
                return Ok(Scan::Found(h));
            }
            if h >= end {
                return Ok(Scan::Clear);
            }
        }
    }

    /// [`Self::next_ptr`] of an inline file: its bytes are its block 0 (when it has any),
    /// which counts as mapped; it maps nothing else.
    fn next_inline_ptr(&mut self, f: Ino, from: u64, end: u64, mapped: bool) -> Result<Scan> {
        let data0 = inode::size(self.inode_ref(f)?) > 0;
        let first = match (mapped, from == 0 && data0) {
            (true, true) => Some(0),
            (true, false) => None,
            (false, at0) => Some(from + at0 as u64),
        };
        Ok(first.filter(|&i| i < end).map_or(Scan::Clear, Scan::Found))
    }

    /// The first block of `from..end` of `f` whose own pointer (in the inode or a direct
    /// node) points at the device (`mapped`) or does not (`!mapped`: `NULL_ADDR`, or
    /// `NEW_ADDR`, whose block is in the write-back cache, where the callers look): a walk
    /// down the tree a node at a time, a missing node passed as a hole of its whole span,
    /// each node visited counted against `budget`. At least one walk down is made whatever
    /// the budget (progress); after that, an exhausted budget stops the search where it got
    /// to.
    fn next_ptr(&mut self, f: Ino, from: u64, end: u64, mapped: bool, budget: &mut usize) -> Result<Scan> {
        if self.is_inline(f)? {
            return self.next_inline_ptr(f, from, end, mapped);
        }
        let (a, p) = (u64::from(ADDRS_PER_INODE), u64::from(ADDRS_PER_BLOCK));
        let mut idx = from;
        // Bounded: every round returns, or moves `idx` past the node it looked at (a direct
        // node, a missing node's span, or the empty children of an indirect node).
        while idx < end {
            if *budget == 0 && idx > from {
                return Ok(Scan::Stopped(idx));
            }
            let (slot, depth, path, ofs, dnode) = match node::block_path(idx)? {
                BlockPath::Inode { ofs } => {
                    let stop = end.min(a) as u32;
                    let b = self.inode_ref(f)?;
                    if let Some(o) = (ofs..stop).find(|&o| on_device(inode::addr(b, o)) == mapped) {
                        return Ok(Scan::Found(u64::from(o)));
                    }
                    idx = a;
                    continue;
                }
                BlockPath::Node { slot, depth, idx: path, ofs, dnode } => (slot, depth, path, ofs, dnode),
            };
            let (base, span, _) = node::SLOT_SUBTREES[slot];
            let mut nid = inode::nid(self.inode_ref(f)?, slot);
            // The node at `level` below the inode (0: the one the slot names), and its span.
            let (mut node_base, mut node_span) = (base, span);
            let mut level = 0;
            // Bounded by the tree's depth (at most two indirect levels).
            idx = loop {
                if nid == NULL_NID {
                    if !mapped {
                        return Ok(Scan::Found(idx));
                    }
                    break node_base + node_span;
                }
                *budget = budget.saturating_sub(1);
                if level == depth {
                    let first = node::dnode_first_block(dnode);
                    let stop = (end - first).min(p) as u32;
                    let b = self.child(nid, f, NodeType::Direct)?;
                    if let Some(o) = (ofs..stop).find(|&o| on_device(node::addr(b, o)) == mapped) {
                        return Ok(Scan::Found(first + u64::from(o)));
                    }
                    break first + p;
                }
                let child_span = node::entry_span(depth - level);
                let i = path[level];
                let b = self.child(nid, f, NodeType::Indirect)?;
                let child = node::slot(b, i);
                if child == NULL_NID {
                    if !mapped {
                        return Ok(Scan::Found(idx));
                    }
                    // On to the next child that exists (an in-memory scan of this node).
                    let next = (i + 1..NIDS_PER_BLOCK).find(|&j| node::slot(b, j) != NULL_NID);
                    break next.map_or(node_base + node_span, |j| node_base + u64::from(j) * child_span);
                }
                nid = child;
                node_base += u64::from(i) * child_span;
                node_span = child_span;
                level += 1;
            };
        }
        Ok(Scan::Clear)
    }
}

/// The answer of a scan run without a budget: found, or none in the range.
fn whole_scan(scan: Scan) -> Result<Option<u64>> {
    match scan {
        Scan::Found(i) => Ok(Some(i)),
        Scan::Clear => Ok(None),
        Scan::Stopped(_) => Err(Error::Invalid("an unlimited seek stopped")),
    }
}
