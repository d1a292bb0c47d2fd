//! Atomic writes (what SQLite's batch-atomic-write mode uses through f2fs's ioctls).
//!
//! Between [`Filesystem::start_atomic_write`] and [`Filesystem::commit_atomic_write`],
//! writes to the file are staged: reads and `getattr` see them, the file's own fsyncs and
//! every checkpoint persist the file without them. Commit publishes all of them at once;
//! after a crash the file shows all of the transaction or none of it.
//!
//! **Where staged blocks live.** In memory first, up to a budget shared by every session
//! (`staging_blocks_max`: half the dirty-memory bound, at most an eighth of the capacity).
//! A write that would pass the budget
//! **spills** its session to a copy-on-write inode (f2fs's COW inode, for the reason f2fs
//! moved to one: staged pages pinned memory): a hidden inode with no name, an orphan from
//! its making, whose blocks are the staged blocks at the file's indexes. The session's
//! staged blocks move into it as its dirty data, and its later writes go there: they count
//! against the space the caller may use (so a user's staging is bounded by the device and
//! the root reserve, not by the daemon's memory) and the dirty-memory bound writes them back
//! like any dirty data (so a transaction may be larger than memory). Until issue 35 the
//! budget was a hard limit (ENOSPC past it): one user's open session then failed every
//! other user's commit (finding 7). A checkpoint during a spilled session persists its
//! blocks as the orphan's: a crash frees them at mount, and the file is as before.
//!
//! **Commit** first does everything that can fail (the fsync decision's reads, room and
//! node ids for the file's new tree nodes and those nodes, the summaries of staged blocks
//! already on the device, the session inode's tree for its eviction), then moves every
//! staged block to the file: one in memory into the file's write-back cache; one on the
//! device re-pointed (the file's pointer takes its address and checksum, its summary names
//! the file's node, the session inode's pointer is cleared). Then it is made durable:
//! - every staged block was in memory (the common, small transaction): one fsync batch of
//!   the file (data, nodes, the inode with the fsync mark and the CRC of every data block
//!   of the batch), submitted at once, one wait for completion, one flush. Recovery applies
//!   a batch only when its CRC verifies, and because commit waits for every write before
//!   the flush, a commit that returned is never lost — unlike f2fs, which skips that wait
//!   for atomic commits and accepts losing the last transaction (scenario "broken dnode
//!   chain", docs/INVARIANTS.md);
//! - some were on the device (a checkpoint wrote the spilled session's blocks): a
//!   checkpoint, which moves the pointers and drops the orphan in one commit (a
//!   roll-forward batch could not claim blocks the last checkpoint gives to an orphan).
//!
//! A commit also makes durable the names removed from the file's directory since the last
//! checkpoint: otherwise a crash could resurrect an unlinked rollback journal next to a
//! database whose later transactions were atomic, and SQLite would "roll back" committed
//! transactions with it. With namespace records it writes the records not yet in the chain
//! ahead of its batch when one of them removes a name there (or the directory is not known
//! for sure), and otherwise none, as the file's fsync; without records (or with records
//! incomplete) it checkpoints, once. The explorer holds it to this (`atomic-commit-name-back`).
//! [`Filesystem::abort_atomic_write`] drops the staged writes (and evicts the session inode).

use crate::device::BlockDevice;
use crate::error::{Error, Result};
use crate::fs::{CachedNode, Filesystem, Timestamp};
use crate::layout::{BLOCK_SIZE, NEW_ADDR, NULL_ADDR, NULL_NID};
use crate::node::{self, inode, FileType, NodeType, MAX_FILE_SIZE};
use crate::nsrec::NsRecord;
use crate::since_cp::CheckpointReason;
use crate::{zero_block, Block, Ino};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// An open session: the staged blocks held in memory, the hidden inode holding them once
/// the session spilled (then `blocks` is empty), and the file's size as the session sees
/// it.
#[derive(Debug, Clone, Default)]
pub struct AtomicSession {
    pub(crate) blocks: BTreeMap<u64, Box<Block>>,
    pub(crate) cow: Option<Ino>,
    pub(crate) size: u64,
    /// File blocks `first..end` cover every staged write (`end` 0: none yet).
    pub(crate) span: (u64, u64),
    /// Who started the session ([`Filesystem::start_atomic_write_for`]).
    pub(crate) owner: u32,
}

/// Where a staged block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Staged {
    /// In the write-back cache (dirty data of the session inode).
    Memory,
    /// On the device, at this address with this data checksum (a checkpoint wrote it).
    Device(u32, u32),
}

impl<D: BlockDevice> Filesystem<D> {
    /// Starts staging writes to `ino` (idempotent while a session is open), for owner 0
    /// (see [`Filesystem::start_atomic_write_for`]).
    pub fn start_atomic_write(&mut self, ino: Ino) -> Result<()> {
        self.start_atomic_write_for(ino, 0)
    }

    /// Starts staging writes to `ino` on behalf of `owner` (a driver passes the caller's
    /// uid): each owner's sessions together keep at most half the in-memory staging budget
    /// ([`Filesystem::staging_blocks_max`]); beyond it a session of theirs spills to the
    /// device. So one user's sessions held open cannot leave another's small transaction
    /// without memory to stage in — and so needing room and a node id for a spill that
    /// the first user may have taken too.
    pub fn start_atomic_write_for(&mut self, ino: Ino, owner: u32) -> Result<()> {
        self.check_writable()?;
        if self.inode_kind(ino)? != FileType::Regular {
            return Err(Error::Invalid("atomic write on a non-regular file"));
        }
        // A commit replaces data anywhere in the file: neither immutable nor append-only.
        self.refuse_protected(ino)?;
        if !self.atomic.contains_key(&ino) {
            // An inline file stays inline while the session stages (its block 0 is read from
            // the inode, `Location::Inline`): the commit converts it, so that starting a
            // session needs no block on a full device, as for an ordinary file.
            let size = inode::size(self.inode_ref(ino)?);
            self.atomic.insert(ino, AtomicSession { blocks: BTreeMap::new(), cow: None, size, span: (0, 0), owner });
        }
        Ok(())
    }

    /// Blocks staged in memory that all sessions together may hold before a write spills
    /// its session to the device: half the dirty-memory bound, and at most an eighth of
    /// the capacity (a transaction large for its device goes to the device early: its room
    /// is taken, and checked, as it is staged rather than all at the commit).
    fn staging_blocks_max(&self) -> u64 {
        (self.opts.dirty_bytes_max / BLOCK_SIZE as u64 / 2).min(self.capacity(true) / 8)
    }

    /// Moves session `ino`'s staged blocks into a new session inode (see the module
    /// header): makes the inode (a node id, a block), maps its tree for the staged blocks,
    /// and puts them in the write-back cache as its dirty data. Everything that can fail
    /// (room, ids) comes first; what the session says does not change, so it is not an
    /// operation's change (`Filesystem::op`).
    fn spill_session(&mut self, ino: Ino, now: Timestamp) -> Result<Ino> {
        let idxs: Vec<u64> = self.atomic[&ino].blocks.keys().copied().collect();
        // Blocks that fill holes of the file are new, as for any write; the inode is new;
        // the session inode's tree nodes (counted below, once it exists) too.
        let mut new_blocks = 1;
        for &idx in &idxs {
            if self.fills_new_block(ino, idx, false)? {
                new_blocks += 1;
            }
        }
        let nodes = tree_nodes_of(&idxs)?;
        self.ensure_space_for(idxs.len() as u64 + 1 + nodes, new_blocks + nodes, now)?;
        self.ensure_nids(1 + nodes, now)?;
        self.maintenance(|fs| {
            let size = fs.atomic[&ino].size;
            let cow = fs.make_session_inode(ino, size, now)?;
            let blocks = core::mem::take(&mut fs.atomic.get_mut(&ino).expect("session open").blocks);
            for (idx, b) in blocks {
                fs.put_dirty_block(cow, idx, b)?;
            }
            fs.atomic.get_mut(&ino).expect("session open").cow = Some(cow);
            fs.stats.atomic_spills += 1;
            Ok(cow)
        })
    }

    /// Makes the hidden inode of `ino`'s session (no name, no links, listed as an orphan so
    /// that a checkpoint names it and a crash frees what it holds).
    fn make_session_inode(&mut self, ino: Ino, size: u64, now: Timestamp) -> Result<Ino> {
        // The session inode is an orphan: refuse it (ENOSPC, nothing changed) rather than
        // let the next checkpoint overflow the orphan room and shut the filesystem down
        // (only images whose node ids outnumber that room can meet this).
        if self.orphans.len() as u64 >= self.orphan_capacity() {
            self.stats.enospc_returned += 1;
            return Err(Error::NoSpace);
        }
        let cow = self.nat.alloc(|nid| nid)?;
        let mut b = zero_block();
        node::init_footer(&mut b, cow, cow, NodeType::Inode, 0);
        inode::set_mode(&mut b, (FileType::Regular.mode_bits() | 0o600) as u16);
        inode::set_links(&mut b, 0);
        inode::set_pino(&mut b, ino);
        // The session's size (see `atomic_write`): every staged block lies within it.
        inode::set_size(&mut b, size);
        for (s, n) in [
            (inode::OFF_ATIME_SEC, inode::OFF_ATIME_NSEC),
            (inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC),
            (inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC),
            (inode::OFF_CRTIME_SEC, inode::OFF_CRTIME_NSEC),
        ] {
            inode::set_time(&mut b, s, n, now);
        }
        inode::set_generation(&mut b, self.next_generation);
        self.next_generation = self.next_generation.wrapping_add(1).max(1);
        self.nodes.insert(cow, CachedNode { block: b, dirty: true });
        self.dirty_nodes.insert(cow, cow);
        self.valid_inodes += 1;
        self.orphans.insert(cow);
        Ok(cow)
    }

    pub fn in_atomic_write(&self, ino: Ino) -> bool {
        self.atomic.contains_key(&ino)
    }

    /// The bytes an open session of `ino` staged writes into (a range covering all of
    /// them), or `None` when there is no session or nothing staged. A driver that keeps a
    /// page cache drops these pages at an abort (the kernel's copies hold the aborted
    /// data), not the whole file's.
    pub fn staged_span(&self, ino: Ino) -> Option<(u64, u64)> {
        let s = self.atomic.get(&ino)?;
        let (first, end) = s.span;
        (end > first).then(|| (first * BLOCK_SIZE as u64, end.saturating_mul(BLOCK_SIZE as u64)))
    }

    /// Drops the staged writes: the file is as it was before the session. A spilled
    /// session's inode is evicted with them; every read that needs comes first, so a read
    /// that fails (EIO, a node failing its checksum) returns the error with the session
    /// still open, as it was (invariant 7), and the abort can be retried. A write that fails
    /// during the eviction shuts the filesystem down. On a read-only filesystem the session
    /// inode stays an orphan, evicted at the next mount.
    pub fn abort_atomic_write(&mut self, ino: Ino) -> Result<()> {
        let Some(cow) = self.atomic.get(&ino).map(|s| s.cow) else { return Ok(()) };
        let evict = cow.filter(|_| !self.read_only);
        if let Some(cow) = evict {
            self.prefetch_for_evict(cow)?;
        }
        self.atomic.remove(&ino);
        self.stats.atomic_aborts += 1;
        if let Some(cow) = evict {
            if let Err(e) = self.evict_inode(cow) {
                // Half evicted: nothing half done may be checkpointed.
                return self.fail(e);
            }
        }
        Ok(())
    }

    /// Drops a session whose handle is gone (a driver's release after a failed
    /// [`Filesystem::abort_atomic_write`]): never fails; a session inode that cannot be
    /// evicted now stays an orphan, evicted at the unmount or the next mount.
    pub fn discard_atomic_write(&mut self, ino: Ino) {
        if let Some(s) = self.atomic.remove(&ino) {
            self.stats.atomic_aborts += 1;
            if let Some(cow) = s.cow {
                self.drop_session_inode(cow);
            }
        }
    }

    /// Evicts a session inode, best effort (see [`Filesystem::abort_atomic_write`]).
    pub(crate) fn drop_session_inode(&mut self, cow: Ino) {
        if self.read_only || self.prefetch_for_evict(cow).is_err() {
            return;
        }
        if let Err(e) = self.evict_inode(cow) {
            // Half evicted: nothing half done may be checkpointed.
            let _ = self.fail::<()>(e);
        }
    }

    /// Makes every staged write durable at once. On error nothing has changed and the
    /// session is kept, so the caller can retry or abort it — except after an I/O error,
    /// which leaves the filesystem read-only (it shut down; see DESIGN.md).
    pub fn commit_atomic_write(&mut self, ino: Ino, now: Timestamp) -> Result<()> {
        self.check_writable()?;
        if !self.atomic.contains_key(&ino) {
            return Err(Error::Invalid("no atomic write in progress"));
        }
        // Made immutable or append-only since the session started: the commit would
        // rewrite it. The session stays open, to be aborted.
        self.refuse_protected(ino)?;
        self.in_fsync = true;
        let r = self.op(|fs| fs.commit_atomic_inner(ino, now));
        self.in_fsync = false;
        // A commit that failed after its decision (for room, in phase 1) leaves no riders
        // for a later commit or fsync to write (`group_riders`), and no choice of records.
        self.group_riders.clear();
        self.since_cp.take_selected();
        if r.is_err() {
            self.stats.atomic_commit_failures += 1;
        }
        r
    }

    fn commit_atomic_inner(&mut self, ino: Ino, now: Timestamp) -> Result<()> {
        // The staged blocks go into the file's tree: an inline file becomes an ordinary one
        // first (maintenance: a commit that fails after it changed nothing a reader sees).
        self.uninline(ino, now)?;
        match self.atomic[&ino].cow {
            None => self.commit_in_memory(ino, now),
            Some(cow) => self.commit_spilled(ino, cow, now),
        }
    }

    /// Commit of a session whose staged blocks are all in memory (it never spilled).
    fn commit_in_memory(&mut self, ino: Ino, now: Timestamp) -> Result<()> {
        let idxs: Vec<u64> = self.atomic[&ino].blocks.keys().copied().collect();
        let n = idxs.len() as u64;
        let partial = crate::mutant!("mutant-atomic-partial-commit");
        // How the commit will be made durable, decided first: the decision reads the file's
        // ancestors and their entries (a renamed directory above it, a stale recorded
        // parent), and a read that failed after the staged data entered the write-back
        // cache would leave a "failed" transaction visible, for the next sync to persist.
        // A checkpoint made for room below only clears what the decision looks at, so it
        // stays true (at worst one checkpoint more).
        let late = crate::mutant!("mutant-eio-change-before-read");
        let decision = if late { None } else { Some(self.commit_decision(ino)?) };
        // Phase 1: everything that can fail for lack of room, before anything visible
        // changes (a checkpoint in here never sees staged blocks: they are not in the
        // write-back cache yet). Room for the data and the tree nodes the commit adds,
        // node ids for those nodes, then the nodes themselves, mapped empty (a reader sees
        // the same holes through an empty direct node as without it).
        if partial {
            self.ensure_space(n + 2, now)?;
        } else {
            let nodes = self.nodes_missing(ino, &idxs)?;
            // Only blocks that fill holes add to what is in use; overwrites need room to be
            // written, as for a plain write (a full filesystem still commits them).
            let mut holes = 0;
            for &idx in &idxs {
                if self.fills_new_block(ino, idx, false)? {
                    holes += 1;
                }
            }
            self.ensure_space_for(n + nodes + 2, holes + nodes, now)?;
            self.ensure_nids(nodes, now)?;
            for &idx in &idxs {
                self.map_for_write(ino, idx)?;
            }
        }
        let session = self.atomic.remove(&ino).expect("checked by the caller");
        self.note_change();
        self.touch(now);
        // Phase 2: cannot run out of room. A failure here (an I/O error reading a node) would
        // leave part of the transaction in the write-back cache, so the filesystem stops
        // writing rather than let a later checkpoint persist half of it.
        let r = (|| {
            for (idx, block) in session.blocks {
                self.put_dirty_block(ino, idx, block)?;
            }
            let b = self.inode_mut(ino)?;
            if session.size != inode::size(b) {
                inode::set_size(b, session.size);
            }
            inode::set_time(b, inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC, now);
            inode::set_time(b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
            Ok(())
        })();
        if let Err(e) = r {
            return if partial { Err(e) } else { self.fail(e) };
        }
        self.since_cp.resized(ino);
        let (checkpoint, records) = match decision {
            Some(d) => d,
            // Mutant: decided after the change, as before issue 35.
            None => self.commit_checkpoint_reason(ino)?,
        };
        let t = self.fsync_submit_decided(ino, false, checkpoint, records, now)?;
        let t = self.write_riders(t, now)?;
        if t.flush_needed {
            self.finish_batch(crate::mutant!("mutant-atomic-no-wait"))?;
        }
        self.stats.atomic_commits += 1;
        Ok(())
    }

    /// Commit of a session that spilled to session inode `cow`.
    fn commit_spilled(&mut self, ino: Ino, cow: Ino, now: Timestamp) -> Result<()> {
        let size = self.atomic[&ino].size;
        let partial = crate::mutant!("mutant-atomic-partial-commit");
        // How the commit will be made durable, decided first: the decision reads the file's
        // ancestors and their entries (a renamed directory above it, a stale recorded
        // parent), and a read that failed after the staged data had moved would leave a
        // "failed" transaction visible, for the next sync to persist. A checkpoint made for
        // room below only clears what the decision looks at, so it stays true (at worst one
        // checkpoint more).
        let late = crate::mutant!("mutant-eio-change-before-read");
        let decision = if late { None } else { Some(self.commit_decision(ino)?) };
        // Phase 1: everything that can fail, before anything changes. The staged blocks
        // and where they are (reads the session inode's tree), room and node ids for the
        // file's tree nodes the commit adds, then those nodes, mapped empty (a reader sees
        // the same holes through an empty direct node as without it), the summaries of the
        // blocks that change owner, and the session inode's tree for its eviction.
        let idxs: Vec<u64> = self.staged_blocks(cow)?.iter().map(|(i, _)| *i).collect();
        if partial {
            self.ensure_space(idxs.len() as u64 + 2, now)?;
        } else {
            // The staged blocks are in use already (the session inode's): only the file's
            // new tree nodes add to what is in use.
            let nodes = self.nodes_missing(ino, &idxs)?;
            self.ensure_space_for(nodes + 2, nodes, now)?;
            self.ensure_nids(nodes, now)?;
            for &idx in &idxs {
                self.map_for_write(ino, idx)?;
            }
        }
        // Where each staged block is, after any checkpoint or cleaning made for room above
        // (a checkpoint writes the session inode's dirty blocks to the device; cleaning
        // brings moved ones back into memory).
        let staged = self.staged_blocks(cow)?;
        let spilled = staged.iter().any(|(_, w)| matches!(w, Staged::Device(..)));
        if !partial {
            for (_, w) in &staged {
                if let Staged::Device(addr, _) = *w {
                    self.ssa.get(&mut self.dev, &self.geo, addr, self.cp.version)?;
                }
            }
            self.prefetch_for_evict(cow)?;
        }
        self.atomic.remove(&ino);
        self.note_change();
        self.touch(now);
        // Phase 2: cannot run out of room. A failure here (an I/O error reading a node) would
        // leave part of the transaction published, so the filesystem stops writing rather
        // than let a later checkpoint persist half of it (`Filesystem::op`).
        for (idx, w) in staged {
            match w {
                Staged::Memory => self.move_cached_staged(ino, cow, idx)?,
                Staged::Device(addr, crc) => {
                    let (holder, ofs, _) = self.map_for_write(cow, idx)?;
                    self.set_holder_slot(holder, ofs, NULL_ADDR, 0)?;
                    self.repoint(ino, idx, addr, crc)?;
                }
            }
        }
        let b = self.inode_mut(ino)?;
        if size != inode::size(b) {
            inode::set_size(b, size);
        }
        inode::set_time(b, inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC, now);
        inode::set_time(b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
        self.since_cp.resized(ino);
        // The session inode holds nothing of the file's now (every moved block's pointer
        // cleared): its eviction frees its nodes and the older copies it still points at.
        self.evict_inode(cow)?;
        let (checkpoint, records) = match decision {
            Some(d) => d,
            // Mutant: decided after the change, as before issue 35.
            None => self.commit_checkpoint_reason(ino)?,
        };
        let spilled = spilled && !crate::mutant!("mutant-spilled-commit-by-batch");
        let reason = checkpoint.or(spilled.then_some(CheckpointReason::Spilled));
        let t = self.fsync_submit_decided(ino, false, reason, records, now).and_then(|t| self.write_riders(t, now))?;
        if t.flush_needed {
            self.finish_batch(crate::mutant!("mutant-atomic-no-wait"))?;
        }
        self.stats.atomic_commits += 1;
        Ok(())
    }

    /// Points file block `idx` of `ino` at `addr` (a block the device holds, with data
    /// checksum `crc`), which the session inode held: the file's old block there is freed,
    /// and the block's summary names its new owner (cleaning finds owners through it).
    /// Commit of a spilled session: moves staged block `idx`, cached in session inode `cow`,
    /// into the write-back cache of the file `ino`.
    fn move_cached_staged(&mut self, ino: Ino, cow: Ino, idx: u64) -> Result<()> {
        let block = self.data.remove(&(cow, idx)).ok_or(Error::Invalid("staged block not cached"))?;
        self.gc_cold.remove(&(cow, idx));
        if let Some(c) = self.gc_kept_crcs.remove(&(cow, idx)) {
            self.gc_kept_crcs.insert((ino, idx), c);
        }
        // The session inode's pointer stays when it is an older copy of the block that a
        // checkpoint wrote (freed with the inode); a `NEW_ADDR` one (never written) goes,
        // since without its cached block it would read as a reserved hole
        // (`FEATURE_INCOMPAT_PREALLOC`) to the session inode's eviction.
        let (holder, ofs, old) = self.map_for_write(cow, idx)?;
        if old == NEW_ADDR {
            self.set_holder_slot(holder, ofs, NULL_ADDR, 0)?;
        }
        self.put_dirty_block(ino, idx, block)
    }

    fn repoint(&mut self, ino: Ino, idx: u64, addr: u32, crc: u32) -> Result<()> {
        let (holder, ofs, old) = self.map_for_write(ino, idx)?;
        let was_cached = self.data.remove(&(ino, idx)).is_some();
        if was_cached {
            // A dirty block of the file from before the session: replaced.
            self.gc_cold.remove(&(ino, idx));
        } else if old == NEW_ADDR && self.prealloc_on_disk {
            // A reserved hole on disk (not a dirty block's `NEW_ADDR`): spent.
            self.prealloc.release_on_disk(1);
        }
        self.gc_kept_crcs.remove(&(ino, idx));
        self.set_holder_slot(holder, ofs, addr, crc)?;
        if old == NULL_ADDR {
            let b = self.inode_mut(ino)?;
            let n = inode::blocks(b);
            inode::set_blocks(b, n.saturating_add(1));
        } else {
            self.seg.invalidate(&self.geo, &mut self.sit, old)?;
        }
        self.prealloc.release_range(ino, idx, idx + 1);
        // The staged block keeps the kind of entry its segment needs (data flag in a node
        // segment: `Filesystem::data_summary`).
        let summary = self.data_summary(addr, holder, ofs);
        self.ssa.set(&mut self.dev, &self.geo, addr, summary, self.cp.version)?;
        self.dentry_cache.forget(addr);
        Ok(())
    }

    /// The staged blocks of session inode `cow`, by file index, and where each is. Reads
    /// the session inode's tree (bounded by its nodes); changes nothing.
    fn staged_blocks(&mut self, cow: Ino) -> Result<Vec<(u64, Staged)>> {
        let mut out: BTreeMap<u64, Staged> = BTreeMap::new();
        for (&(_, idx), _) in self.data.range((cow, 0)..=(cow, u64::MAX)) {
            out.insert(idx, Staged::Memory);
        }
        let ib = self.inode_block(cow)?;
        let a = crate::layout::ADDRS_PER_INODE;
        for ofs in 0..a {
            let addr = inode::addr(&ib, ofs);
            if addr != NULL_ADDR && addr != NEW_ADDR {
                out.entry(ofs as u64).or_insert(Staged::Device(addr, inode::data_crc(&ib, ofs)));
            }
        }
        let mut dnodes: Vec<crate::Nid> = Vec::new();
        for (slot, &(_, _, depth)) in node::SLOT_SUBTREES.iter().enumerate() {
            let nid = inode::nid(&ib, slot);
            if nid != NULL_NID {
                self.collect_dnodes(cow, nid, depth, &mut dnodes)?;
            }
        }
        for d in dnodes {
            let b = self.tree_child(d, cow, NodeType::Direct)?;
            let first = node::dnode_first_block(node::footer_ofs(b) as u64);
            for ofs in 0..crate::layout::ADDRS_PER_BLOCK {
                let addr = node::addr(b, ofs);
                if addr != NULL_ADDR && addr != NEW_ADDR {
                    out.entry(first + ofs as u64).or_insert(Staged::Device(addr, node::data_crc(b, ofs)));
                }
            }
        }
        Ok(out.into_iter().collect())
    }

    /// Direct nodes under node `nid` of `ino` at `depth` (0: `nid` is one). Bounded by the
    /// tree's nodes and depth.
    fn collect_dnodes(&mut self, ino: Ino, nid: crate::Nid, depth: usize, out: &mut Vec<crate::Nid>) -> Result<()> {
        if depth == 0 {
            out.push(nid);
            return Ok(());
        }
        let kids: Vec<crate::Nid> = {
            let b = self.tree_child(nid, ino, NodeType::Indirect)?;
            (0..crate::layout::NIDS_PER_BLOCK).map(|i| node::slot(b, i)).filter(|&c| c != NULL_NID).collect()
        };
        for k in kids {
            self.collect_dnodes(ino, k, depth - 1, out)?;
        }
        Ok(())
    }

    /// What a commit of `ino` decides before it changes anything: why it must checkpoint
    /// (if it must), whether the namespace records not yet in the chain go before its batch
    /// ([`Self::commit_checkpoint_reason`]), and the other files whose batches ride with
    /// those records ([`Filesystem::riders`], kept in `group_riders` for the records' group
    /// and [`Filesystem::write_riders`]; a rider that needs a checkpoint makes the commit
    /// one). A commit that writes no record names no rider, as a file's fsync.
    fn commit_decision(&mut self, ino: Ino) -> Result<(Option<CheckpointReason>, bool)> {
        // Empty here: every fsync and commit empties it when it ends (`commit_atomic_write`).
        debug_assert!(self.group_riders.is_empty(), "riders left over from an earlier fsync or commit");
        let (reason, records) = self.commit_checkpoint_reason(ino)?;
        if reason.is_some() || !records {
            return Ok((reason, records));
        }
        Ok(match self.riders(ino, FileType::Regular)? {
            Ok(riders) => {
                self.group_riders = riders;
                (None, true)
            }
            Err(r) => (Some(r), true),
        })
    }

    /// Why a commit of `ino` must be made durable by a checkpoint (None: its batch can),
    /// and whether the namespace records not yet in the chain go before that batch. Those
    /// of a file's fsync ([`Filesystem::fsync_decision`]), and also every name removed from
    /// the file's directory since the last checkpoint (see the module header): without
    /// records, or with records incomplete, by a checkpoint; with records, by writing the
    /// records when one not yet in the chain removes a name there
    /// ([`Self::commit_needs_records`]). Reads the file's inode, ancestors and their
    /// entries; changes nothing.
    fn commit_checkpoint_reason(&mut self, ino: Ino) -> Result<(Option<CheckpointReason>, bool)> {
        let carried = self.records_in_chain() && self.since_cp.ns_records().1;
        if self.since_cp.any_name_removed() && !carried {
            let (known, pino) = self.known_directory(ino)?;
            if !known || self.since_cp.dir_lost_a_name(pino) {
                return Ok((Some(CheckpointReason::DirLostAName), false));
            }
        }
        let needs = if carried { self.commit_needs_records(ino)? } else { None };
        let (reason, records) = self.fsync_decision_for(ino, FileType::Regular, needs.is_some())?;
        // The file's directory not known: every record (a removal in any directory may be
        // beside one of its names); else the removals in its directory, with what they
        // depend on, and the file's own.
        let (all, dir) = match needs {
            Some(Some(dir)) => (false, dir),
            Some(None) => (true, 0),
            None => (false, 0),
        };
        self.choose_records(ino, FileType::Regular, records, all, |r| dir != 0 && record_removes_a_name_in(r, dir))?;
        Ok((reason, records))
    }

    /// Whether the file's directory is known for sure, and which it is: the recorded parent
    /// is the file's directory only if it holds the recorded entry. A link made in another
    /// directory and removed again (its history hidden by a checkpoint) leaves it naming
    /// that other directory, and a name removed from the file's real directory — SQLite's
    /// journal — would go unseen and come back after a crash beside the committed database.
    /// A file with several names has several directories: not known.
    fn known_directory(&mut self, ino: Ino) -> Result<(bool, Ino)> {
        let b = self.inode_ref(ino)?;
        let (links, pino, name) = (inode::links(b), inode::pino(b), inode::name(b).to_vec());
        let known =
            links == 1 && (crate::mutant!("mutant-stale-parent") || self.records_its_entry(ino, pino, &name)?);
        Ok((known, pino))
    }

    /// Whether a commit of `ino` must write namespace records not yet in the chain where its
    /// fsync would write none: `Some(Some(dir))` when one of them removes or replaces a name
    /// in the file's directory `dir` (SQLite's journal deleted beside the database): those,
    /// and what they depend on (`Filesystem::choose_records`); `Some(None)` when that
    /// directory is not known for sure: all of them. Otherwise (`None`) it writes none, and
    /// another user's pending renames elsewhere — a large file written, never fsync'd and
    /// renamed over a name — do not ride it (review 52, F2: root's commit took 26 ms
    /// instead of 8.8 ms while they did). Reads the file's inode and its directory's entry;
    /// changes nothing.
    fn commit_needs_records(&mut self, ino: Ino) -> Result<Option<Option<Ino>>> {
        if self.since_cp.ns_all_written() {
            return Ok(None);
        }
        if crate::mutant!("mutant-commit-skips-journal-records") {
            return Ok(None);
        }
        let (known, pino) = self.known_directory(ino)?;
        if !known {
            return Ok(Some(None));
        }
        let lost = self.since_cp.ns_unwritten().any(|(_, r)| record_removes_a_name_in(r, pino));
        Ok(lost.then_some(Some(pino)))
    }

    /// Stages a write into an open session: in memory while every session's in-memory
    /// blocks stay within the budget, else into the session's inode (spilling it first).
    pub(crate) fn atomic_write(&mut self, ino: Ino, offset: u64, data: &[u8], now: Timestamp) -> Result<()> {
        let end = offset.checked_add(data.len() as u64).ok_or(Error::FileTooBig)?;
        if end > MAX_FILE_SIZE {
            return Err(Error::FileTooBig);
        }
        if data.is_empty() {
            return Ok(());
        }
        let first = offset / BLOCK_SIZE as u64;
        let last = (end - 1) / BLOCK_SIZE as u64;
        {
            let s = self.atomic.get_mut(&ino).expect("session open");
            s.span = if s.span.1 == 0 { (first, last + 1) } else { (s.span.0.min(first), s.span.1.max(last + 1)) };
        }
        // Only the first and last blocks can be partial: their old bytes (staged, else the
        // file's) are read before anything is staged, so that a read that fails (EIO, a bad
        // data checksum) leaves the session as it was (failure atomicity: the next commit
        // must not publish half of a write that returned an error).
        let span = |idx: u64| {
            let blk_start = idx * BLOCK_SIZE as u64;
            (blk_start, offset.max(blk_start), end.min(blk_start + BLOCK_SIZE as u64))
        };
        let mut old_partial: BTreeMap<u64, Box<Block>> = BTreeMap::new();
        for idx in [first, last] {
            let (_, from, to) = span(idx);
            if to - from < BLOCK_SIZE as u64 && !old_partial.contains_key(&idx) {
                let b = match self.staged_block(ino, idx)? {
                    Some(b) => b,
                    None => self.read_block_opt(ino, idx)?.unwrap_or_else(zero_block),
                };
                old_partial.insert(idx, b);
            }
        }
        let total = last - first + 1;
        let mut blocks = Vec::with_capacity(total.min(1 << 16) as usize);
        let mut done = 0usize;
        for idx in first..=last {
            let (blk_start, from, to) = span(idx);
            let mut b = old_partial.remove(&idx).unwrap_or_else(zero_block);
            let len = (to - from) as usize;
            let in_blk = (from - blk_start) as usize;
            b[in_blk..in_blk + len].copy_from_slice(&data[done..done + len]);
            done += len;
            blocks.push((idx, b));
        }
        // In memory, while every session's staged blocks together stay within the budget:
        // beyond it this session spills (once), and the blocks go to its inode.
        let mut cow = self.atomic[&ino].cow;
        if cow.is_none() {
            let s = &self.atomic[&ino];
            let in_memory: u64 = self.atomic.values().map(|s| s.blocks.len() as u64).sum();
            let owners: u64 = self.atomic.values().filter(|o| o.owner == s.owner).map(|o| o.blocks.len() as u64).sum();
            let adds = blocks.iter().filter(|(i, _)| !s.blocks.contains_key(i)).count() as u64;
            let max = self.staging_blocks_max();
            if in_memory + adds <= max && owners + adds <= max / 2 {
                let s = self.atomic.get_mut(&ino).expect("session open");
                for (idx, b) in blocks {
                    s.blocks.insert(idx, b);
                }
                s.size = s.size.max(end);
                self.note_change();
                return Ok(());
            }
            cow = Some(self.spill_session(ino, now)?);
        }
        let cow = cow.expect("spilled above");
        // Room and node ids as for a plain write: a block not staged yet that fills a hole
        // of the file (not one fallocate reserved for it) is new, held to the caller's share
        // of the space, which bounds what it stages; one that overwrites a block of the file
        // (or fills a reserved hole) is not, as for a plain overwrite, so that a full
        // filesystem still commits overwrites (it needs room to be written, which the
        // physical check finds or makes by cleaning; the commit frees the old block).
        let mut new_blocks = 0;
        for idx in first..=last {
            if self.fills_new_block(cow, idx, false)? && self.fills_new_block(ino, idx, false)? {
                new_blocks += 1;
            }
        }
        let idxs: Vec<u64> = (first..=last).collect();
        let nodes = self.nodes_missing(cow, &idxs)?;
        self.ensure_space_for(total + nodes, new_blocks + nodes, now)?;
        self.ensure_nids(nodes, now)?;
        for &idx in &idxs {
            self.map_for_write(cow, idx)?;
        }
        for (idx, b) in blocks {
            self.put_dirty_block(cow, idx, b)?;
        }
        let s = self.atomic.get_mut(&ino).expect("session open");
        s.size = s.size.max(end);
        // The session inode's size is the session's: its blocks (staged whole, their other
        // bytes the file's) lie within it, and past it they are zero, as in any file.
        let size = s.size;
        inode::set_size(self.inode_mut(cow)?, size);
        Ok(())
    }
}

impl<D: BlockDevice> Filesystem<D> {
    /// Grows an open session's size to `end` without staging a block: the file reads as
    /// zeros up to it, and the commit publishes the size (a copy of a source's hole past
    /// the end, `copy_range`). The staged span covers the growth, so that an abort drops
    /// the kernel's pages of it too.
    pub(crate) fn grow_session(&mut self, ino: Ino, end: u64) -> Result<()> {
        if end > MAX_FILE_SIZE {
            return Err(Error::FileTooBig);
        }
        let Some(s) = self.atomic.get(&ino) else { return Err(Error::Invalid("no atomic write in progress")) };
        if end <= s.size {
            return Ok(());
        }
        let (old, cow) = (s.size, s.cow);
        // The session inode is read first: a read that fails then changes nothing.
        if let Some(cow) = cow {
            self.inode_ref(cow)?;
        }
        let (first, last_end) = (old / BLOCK_SIZE as u64, end.div_ceil(BLOCK_SIZE as u64));
        let s = self.atomic.get_mut(&ino).expect("session open");
        s.size = end;
        s.span = if s.span.1 == 0 { (first, last_end) } else { (s.span.0.min(first), s.span.1.max(last_end)) };
        self.note_change();
        if let Some(cow) = cow {
            inode::set_size(self.inode_mut(cow)?, end);
        }
        Ok(())
    }
}

/// Whether record `r` removes or replaces a name in directory `dir`: an unlink or rmdir
/// there, a rename out of it, or a rename (or exchange) over one of its names.
fn record_removes_a_name_in(r: &NsRecord, dir: Ino) -> bool {
    match r {
        NsRecord::Unlink { dir: d, .. } => *d == dir,
        NsRecord::Rename { dir: d, dir2, ino2, .. } => *d == dir || (*dir2 == dir && *ino2 != 0),
        NsRecord::Create { .. } | NsRecord::Link { .. } => false,
    }
}

/// Tree nodes (direct and indirect) a file with no nodes yet needs to map every block of
/// `idxs`: what a new session inode takes for the blocks spilled into it.
fn tree_nodes_of(idxs: &[u64]) -> Result<u64> {
    let mut nodes: alloc::collections::BTreeSet<(usize, usize, u32, u32)> = alloc::collections::BTreeSet::new();
    for &idx in idxs {
        if let node::BlockPath::Node { slot, depth, idx: path, .. } = node::block_path(idx)? {
            for level in 0..=depth {
                nodes.insert((slot, level, if level >= 1 { path[0] } else { 0 }, if level >= 2 { path[1] } else { 0 }));
            }
        }
    }
    Ok(nodes.len() as u64)
}
