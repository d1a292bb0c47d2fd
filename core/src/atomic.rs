//! Atomic writes (what SQLite's batch-atomic-write mode uses through f2fs's ioctls).
//!
//! Between [`Filesystem::start_atomic_write`] and [`Filesystem::commit_atomic_write`],
//! writes to the file are staged in memory: reads and `getattr` see them, checkpoints and
//! other fsyncs do not. Commit moves them into the write-back cache and writes the file's
//! whole state as one fsync batch: data, nodes, and the inode carrying the fsync mark and
//! the CRC of every data block of the batch. All of it is submitted at once, then one wait
//! for completion and one flush. Recovery applies a batch only when its CRC verifies, so
//! after a crash the file shows all of the transaction or none of it; and because commit
//! waits for every write before the flush, a commit that returned is never lost — unlike
//! f2fs, which skips that wait for atomic commits and accepts losing the last transaction
//! (scenario "broken dnode chain", docs/INVARIANTS.md). The cost of the wait is measured in the simulator (see DESIGN.md).
//! A commit also makes durable the names removed from the file's directory since the last
//! checkpoint (by checkpointing, once): otherwise a crash could resurrect an unlinked
//! rollback journal next to a database whose later transactions were atomic, and SQLite
//! would "roll back" committed transactions with it.
//! [`Filesystem::abort_atomic_write`] drops the staged writes.

use crate::device::BlockDevice;
use crate::error::{Error, Result};
use crate::fs::{FileType, Filesystem, Timestamp};
use crate::layout::BLOCK_SIZE;
use crate::node::{inode, MAX_FILE_SIZE};
use crate::{zero_block, Block, Ino};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;

/// Staged writes of one file.
#[derive(Debug, Clone, Default)]
pub struct AtomicSession {
    pub(crate) blocks: BTreeMap<u64, Box<Block>>,
    pub(crate) size: u64,
}

impl<D: BlockDevice> Filesystem<D> {
    /// Starts staging writes to `ino` (idempotent while a session is open).
    pub fn start_atomic_write(&mut self, ino: Ino) -> Result<()> {
        self.check_writable()?;
        if self.inode_kind(ino)? != FileType::Regular {
            return Err(Error::Invalid("atomic write on a non-regular file"));
        }
        if !self.atomic.contains_key(&ino) {
            let size = inode::size(self.inode_ref(ino)?);
            self.atomic.insert(ino, AtomicSession { blocks: BTreeMap::new(), size });
        }
        Ok(())
    }

    pub fn in_atomic_write(&self, ino: Ino) -> bool {
        self.atomic.contains_key(&ino)
    }

    /// Drops the staged writes: the file is as it was before the session.
    pub fn abort_atomic_write(&mut self, ino: Ino) -> Result<()> {
        if self.atomic.remove(&ino).is_some() {
            self.stats.atomic_aborts += 1;
        }
        Ok(())
    }

    /// Makes every staged write durable at once. On error nothing has changed and the
    /// session is kept, so the caller can retry or abort it — except after an I/O error,
    /// which leaves the filesystem read-only (it shut down; see DESIGN.md).
    pub fn commit_atomic_write(&mut self, ino: Ino, now: Timestamp) -> Result<()> {
        self.check_writable()?;
        if !self.atomic.contains_key(&ino) {
            return Err(Error::Invalid("no atomic write in progress"));
        }
        self.in_fsync = true;
        let r = self.op(|fs| fs.commit_atomic_inner(ino, now));
        self.in_fsync = false;
        if r.is_err() {
            self.stats.atomic_commit_failures += 1;
        }
        r
    }

    fn commit_atomic_inner(&mut self, ino: Ino, now: Timestamp) -> Result<()> {
        let idxs: alloc::vec::Vec<u64> = self.atomic[&ino].blocks.keys().copied().collect();
        let n = idxs.len() as u64;
        let partial = crate::mutant!("mutant-atomic-partial-commit");
        // How the commit will be made durable, decided first: the decision reads the file's
        // ancestors and their entries (a renamed directory above it, a stale recorded
        // parent), and a read that failed after the staged data entered the write-back
        // cache would leave a "failed" transaction visible, for the next sync to persist.
        // A checkpoint made for room below only clears what the decision looks at, so it
        // stays true (at worst one checkpoint more).
        let late = crate::mutant!("mutant-eio-change-before-read");
        let checkpoint = if late { None } else { Some(self.commit_needs_checkpoint(ino)?) };
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
        self.size_changed.insert(ino);
        let checkpoint = match checkpoint {
            Some(c) => c,
            // Mutant: decided after the change, as before issue 35.
            None => self.commit_needs_checkpoint(ino)?,
        };
        let t = self.fsync_submit_decided(ino, false, checkpoint, now)?;
        if t.flush_needed {
            self.finish_batch(crate::mutant!("mutant-atomic-no-wait"))?;
        }
        self.stats.atomic_commits += 1;
        Ok(())
    }

    /// Whether a commit of `ino` must be made durable by a checkpoint: a name removed from
    /// its directory since the last one (see the module header), or what makes an fsync
    /// checkpoint. Reads the file's ancestors; changes nothing.
    fn commit_needs_checkpoint(&mut self, ino: Ino) -> Result<bool> {
        let pino = inode::pino(self.inode_ref(ino)?);
        let journal_removed =
            self.removed_names.range((pino, alloc::vec::Vec::new())..).next().is_some_and(|(d, _)| *d == pino);
        Ok(journal_removed || self.fsync_needs_checkpoint(ino, FileType::Regular)?)
    }

    /// Stages a write into an open session.
    pub(crate) fn atomic_write(&mut self, ino: Ino, offset: u64, data: &[u8]) -> Result<()> {
        let end = offset.checked_add(data.len() as u64).ok_or(Error::FileTooBig)?;
        if end > MAX_FILE_SIZE {
            return Err(Error::FileTooBig);
        }
        if data.is_empty() {
            return Ok(());
        }
        let first = offset / BLOCK_SIZE as u64;
        let last = (end - 1) / BLOCK_SIZE as u64;
        // Staged blocks of every open session together stay within the dirty-memory bound:
        // any user can open sessions on their own files, and the daemon's memory must not
        // grow with their number. A transaction that does not fit cannot be staged.
        let staged: u64 = self.atomic.values().map(|s| s.blocks.len() as u64).sum();
        let limit = self.opts.dirty_bytes_max / BLOCK_SIZE as u64;
        if staged + (last - first + 1) > limit {
            return Err(Error::NoSpace);
        }
        // Only the first and last blocks can be partial: read their old bytes before
        // staging anything, so that a read that fails (EIO, a bad data checksum) leaves the
        // session as it was (failure atomicity: the next commit must not publish half of
        // a write that returned an error).
        let span = |idx: u64| {
            let blk_start = idx * BLOCK_SIZE as u64;
            (blk_start, offset.max(blk_start), end.min(blk_start + BLOCK_SIZE as u64))
        };
        let mut old_partial: BTreeMap<u64, Box<Block>> = BTreeMap::new();
        for idx in [first, last] {
            let (_, from, to) = span(idx);
            let staged = self.atomic[&ino].blocks.contains_key(&idx);
            if to - from < BLOCK_SIZE as u64 && !staged && !old_partial.contains_key(&idx) {
                let b = self.read_block_opt(ino, idx)?.unwrap_or_else(zero_block);
                old_partial.insert(idx, b);
            }
        }
        let mut done = 0usize;
        for idx in first..=last {
            let (blk_start, from, to) = span(idx);
            let mut b = match self.atomic[&ino].blocks.get(&idx) {
                Some(b) => b.clone(),
                None => old_partial.remove(&idx).unwrap_or_else(zero_block),
            };
            let len = (to - from) as usize;
            let in_blk = (from - blk_start) as usize;
            b[in_blk..in_blk + len].copy_from_slice(&data[done..done + len]);
            done += len;
            self.note_change();
            let s = self.atomic.get_mut(&ino).expect("session open");
            s.blocks.insert(idx, b);
        }
        let s = self.atomic.get_mut(&ino).expect("session open");
        s.size = s.size.max(end);
        Ok(())
    }

    /// Reads block `idx` as seen inside an atomic session (staged first).
    pub(crate) fn atomic_block(&self, ino: Ino, idx: u64) -> Option<&Block> {
        self.atomic.get(&ino).and_then(|s| s.blocks.get(&idx)).map(|b| &**b)
    }
}
