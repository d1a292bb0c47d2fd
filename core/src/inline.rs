//! Inline data (`FEATURE_INCOMPAT_INLINE`, DESIGN.md *Inline data*): a regular file of at
//! most [`INLINE_DATA_MAX`] bytes that never had a block keeps its bytes in its inode's
//! pointer area, flagged `IFLAG_INLINE_DATA`. This module owns the inline file's reads,
//! writes and size changes, and its conversion to an ordinary file ([`Filesystem::uninline`]).
//!
//! Invariants:
//! - An inline inode maps nothing: `inode::addr` answers `NULL_ADDR` for it and its node
//!   ids are all null, so every walk over pointers sees an empty file and never takes its
//!   bytes for addresses. Only the functions here read or write the bytes.
//! - Bytes past the size are zero (invariant 6 of docs/INVARIANTS.md): a shrink zeroes
//!   them, so a later extension shows zeros.
//! - Conversion is one way, in memory: the bytes become block 0 in the write-back cache and
//!   the inode an ordinary (empty) one; the new state reaches the device only through a
//!   batch or a checkpoint, which write the block with (or before) the node that points at
//!   it. A crash shows the inline bytes of the last durable inode or the converted file with
//!   its block. Never back: a truncation of a converted file keeps it ordinary.
//! - The node's seeded CRC covers the bytes (no data CRC): an inline file's fsync batch is
//!   its inode alone, with no data blocks.

use crate::error::Result;
use crate::fs::{Filesystem, Timestamp};
use crate::node::inode::{self, INLINE_DATA_MAX};
use crate::{zero_block, BlockDevice, Ino};

impl<D: BlockDevice> Filesystem<D> {
    /// Whether `ino` keeps its bytes in its inode.
    pub(crate) fn is_inline(&mut self, ino: Ino) -> Result<bool> {
        Ok(inode::is_inline(self.inode_ref(ino)?))
    }

    /// Copies the inline file's bytes at `offset` into `buf` (up to its size); returns the
    /// count. The caller has checked that the file is inline.
    pub(crate) fn inline_read(&mut self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let b = self.inode_ref(ino)?;
        let size = inode::size(b).min(INLINE_DATA_MAX as u64);
        if offset >= size {
            return Ok(0);
        }
        let n = ((size - offset) as usize).min(buf.len());
        let from = offset as usize;
        buf[..n].copy_from_slice(&inode::inline_data(b)[from..from + n]);
        Ok(n)
    }

    /// Writes `data` at `offset` into an inline file when the result still fits
    /// ([`INLINE_DATA_MAX`]); returns false (nothing changed) when it would not, and the
    /// caller converts the file first. No block is needed, but the inode is dirtied: the
    /// room to write it back is reserved first (`reserve_nodes`, as every change that
    /// dirties metadata does), so that a full filesystem refuses the write (ENOSPC) rather
    /// than failing the next checkpoint and shutting down.
    pub(crate) fn inline_write(&mut self, ino: Ino, offset: u64, data: &[u8], now: Timestamp) -> Result<bool> {
        let end = offset.checked_add(data.len() as u64);
        if end.is_none_or(|e| e > INLINE_DATA_MAX as u64) {
            return Ok(false);
        }
        self.reserve_nodes(&[ino], 0, now)?;
        self.touch(now);
        let (from, to) = (offset as usize, offset as usize + data.len());
        let b = self.inode_mut(ino)?;
        inode::inline_data_mut(b)[from..to].copy_from_slice(data);
        if to as u64 > inode::size(b) {
            inode::set_size(b, to as u64);
        }
        self.inline_changed(ino, now)
    }

    /// Sets the size of an inline file when the new size still fits; returns false
    /// (nothing changed) when it would not. A shrink zeroes the bytes it drops.
    pub(crate) fn inline_set_size(&mut self, ino: Ino, size: u64, now: Timestamp) -> Result<bool> {
        if size > INLINE_DATA_MAX as u64 {
            return Ok(false);
        }
        let b = self.inode_mut(ino)?;
        let old = inode::size(b).min(INLINE_DATA_MAX as u64) as usize;
        if (size as usize) < old && !crate::mutant!("mutant-inline-shrink-keeps-bytes") {
            inode::inline_data_mut(b)[size as usize..old].fill(0);
        }
        inode::set_size(b, size);
        self.inline_changed(ino, now)
    }

    /// Zeroes bytes `offset..end` of an inline file in its inode (a hole punch, or a zero
    /// range, which with `grow` also grows the size to `end`): no block is needed, so a full
    /// device still punches (a removal: `reserve_for_removal`) as it does in an ordinary
    /// file. Returns false (nothing changed) when the file is not inline or the result would
    /// not fit; the caller then converts it.
    pub(crate) fn inline_zero_range(
        &mut self,
        ino: Ino,
        offset: u64,
        end: u64,
        grow: bool,
        now: Timestamp,
    ) -> Result<bool> {
        let b = self.inode_ref(ino)?;
        if !inode::is_inline(b) {
            return Ok(false);
        }
        let size = inode::size(b);
        let new_size = if grow { size.max(end) } else { size };
        if new_size > INLINE_DATA_MAX as u64 {
            return Ok(false);
        }
        if new_size > size {
            self.reserve_nodes(&[ino], 0, now)?;
        } else {
            self.reserve_for_removal(&[ino], 0, now)?;
        }
        self.touch(now);
        let b = self.inode_mut(ino)?;
        let hi = end.min(size);
        if offset < hi {
            inode::inline_data_mut(b)[offset as usize..hi as usize].fill(0);
        }
        inode::set_size(b, new_size);
        self.inline_changed(ino, now)
    }

    /// What every change of an inline file's bytes or size ends with: the times, and the
    /// mark that makes fdatasync persist the inode (the bytes are data, as a size change
    /// is: the inode goes into the file's next batch even when only they changed).
    fn inline_changed(&mut self, ino: Ino, now: Timestamp) -> Result<bool> {
        let b = self.inode_mut(ino)?;
        inode::set_time(b, inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC, now);
        inode::set_time(b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
        self.since_cp.resized(ino);
        self.note_change();
        Ok(true)
    }

    /// Converts an inline file to an ordinary one, in memory: its bytes become block 0 in
    /// the write-back cache (none for an empty file), its pointer area is cleared and its
    /// flag dropped. For every call that needs the file's blocks (a write or size past
    /// [`INLINE_DATA_MAX`], fallocate, a zero range past it, copy into it, an atomic commit).
    /// Nothing to do for a file that is not inline.
    ///
    /// Failure atomicity (invariant 7): the conversion changes how the file is kept, not
    /// what it says (the same bytes and size), so it is maintenance for [`Filesystem::op`]:
    /// a call that converts and then fails (ENOSPC for the rest of a write on a full
    /// device: the explorer's `unlink-after-a-far-write-on-a-full-device.wl` found it) has
    /// changed nothing a reader sees, and the converted file may be persisted as it is. The
    /// room for the block is made before anything changes; a failed write-back cache insert
    /// shuts the filesystem down (`fail`) as any failed change does.
    pub(crate) fn uninline(&mut self, ino: Ino, now: Timestamp) -> Result<()> {
        self.maintenance(|fs| fs.uninline_inner(ino, now))
    }

    fn uninline_inner(&mut self, ino: Ino, now: Timestamp) -> Result<()> {
        let b = self.inode_ref(ino)?;
        if !inode::is_inline(b) {
            return Ok(());
        }
        let size = (inode::size(b) as usize).min(INLINE_DATA_MAX);
        let mut block = zero_block();
        block[..size].copy_from_slice(&inode::inline_data(b)[..size]);
        if size > 0 {
            self.ensure_space(1, now)?;
        }
        self.touch(now);
        inode::set_inline(self.inode_mut(ino)?, false);
        self.note_change();
        self.since_cp.resized(ino);
        self.stats.inline_conversions += 1;
        if size > 0 {
            if let Err(e) = self.put_dirty_block(ino, 0, block) {
                return self.fail(e);
            }
        }
        Ok(())
    }
}
