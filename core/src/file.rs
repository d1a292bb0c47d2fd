//! File contents: write, size changes and `copy_file_range` through the write-back cache
//! (reads: `data.rs`).
//!
//! Writes go to dirty blocks in memory (no device I/O) until write-back; reads see dirty
//! blocks first. Holes read as zeros. Invariant: bytes of the last block beyond the file
//! size are always zero, so extending a file (by truncate or a write past the end) can
//! never expose old bytes — invariant 6 of docs/INVARIANTS.md.

use crate::error::{Error, Result};
use crate::fs::{Filesystem, SetAttr, Timestamp};
use crate::layout::*;
use crate::node::{inode, FileType, MAX_FILE_SIZE};
use crate::{zero_block, Block, BlockDevice, Ino};

impl<D: BlockDevice> Filesystem<D> {
    /// Writes `data` at `offset`, extending the file as needed.
    pub fn write(&mut self, ino: Ino, offset: u64, data: &[u8], now: Timestamp) -> Result<usize> {
        self.op(|fs| fs.write_op(ino, offset, data, now))
    }

    fn write_op(&mut self, ino: Ino, offset: u64, data: &[u8], now: Timestamp) -> Result<usize> {
        self.check_writable()?;
        match self.inode_kind(ino)? {
            FileType::Regular => {}
            FileType::Directory => return Err(Error::IsDir),
            _ => return Err(Error::Invalid("write to a special file")),
        }
        self.check_write_at(ino, offset)?;
        if self.atomic.contains_key(&ino) {
            self.touch(now);
            self.atomic_write(ino, offset, data, now)?;
            self.after_change(now)?;
            return Ok(data.len());
        }
        if !data.is_empty() && self.is_inline(ino)? {
            if self.inline_write(ino, offset, data, now)? {
                self.after_change(now)?;
                return Ok(data.len());
            }
            self.uninline(ino, now)?;
        }
        self.write_inner(ino, offset, data, now)?;
        self.after_change(now)?;
        Ok(data.len())
    }

    pub(crate) fn write_inner(&mut self, ino: Ino, offset: u64, data: &[u8], now: Timestamp) -> Result<()> {
        self.touch(now);
        let Some((_, first, last)) = block_range(offset, data.len())? else { return Ok(()) };
        let total = last - first + 1;
        let cap = self.user_capacity();
        // A contiguous range needs at most a direct node per 508 blocks (two partial ones
        // at the ends) and their indirect nodes; only when ids are that short is the exact
        // count taken (what phase 1 below would create).
        let nid_bound = total / ADDRS_PER_BLOCK as u64 + 6;
        if self.nids_usable() < nid_bound {
            let idxs: alloc::vec::Vec<u64> = (first..=last).collect();
            let nodes = self.nodes_missing(ino, &idxs)?;
            self.ensure_nids(nodes, now)?;
        }
        // The capacity check counts the tree nodes the write may create (`nid_bound` bounds
        // them as it bounds their ids): counting its data blocks alone let a write at the
        // limit add its direct and indirect nodes beyond the capacity (issue 41).
        if self.free_blocks_for_user() < total + total / 512 + 4 || self.used_blocks() + total + nid_bound > cap {
            // Short of room: count what this write adds (holes it fills, and the nodes it
            // creates) so that a full filesystem still accepts overwrites.
            let mut new_blocks = 0;
            for idx in first..=last {
                if self.fills_new_block(ino, idx, false)? {
                    new_blocks += 1;
                }
            }
            let reps = crate::prealloc::direct_node_representatives(&[(first, last + 1)]);
            let nodes = self.nodes_missing(ino, &reps)?;
            self.ensure_space_exact(total + nodes, new_blocks + nodes, now)?;
        }
        self.write_fill(ino, offset, data, now)
    }

    /// The changes of a write whose room and node ids are reserved: reads the partial first
    /// and last blocks, maps every block's tree nodes, then fills the write-back cache.
    pub(crate) fn write_fill(&mut self, ino: Ino, offset: u64, data: &[u8], now: Timestamp) -> Result<()> {
        self.touch(now);
        let Some((end, first, last)) = block_range(offset, data.len())? else { return Ok(()) };
        let total = last - first + 1;
        // Phase 1, which may fail and changes nothing a reader sees: the partial first and
        // last blocks are read, and the tree nodes of every block are mapped (created empty
        // where missing: the same holes). Phase 2 then only fills the cache, so a failed
        // write never leaves part of itself behind (nor bytes past the end of the file).
        let mut blocks = alloc::vec::Vec::with_capacity(total.min(1 << 16) as usize);
        let mut done = 0usize;
        // The partial blocks' old bytes are read first, before any node is mapped (mapping
        // creates empty nodes, a change): a read that fails then changes nothing at all.
        let partial = |idx: u64| {
            let blk_start = idx * BLOCK_SIZE as u64;
            end.min(blk_start + BLOCK_SIZE as u64) - offset.max(blk_start) != BLOCK_SIZE as u64
        };
        let mut edges: [Option<alloc::boxed::Box<Block>>; 2] = [None, None];
        for (k, idx) in [first, last].into_iter().enumerate() {
            if partial(idx) && (k == 0 || last != first) {
                edges[k] = Some(self.read_block_opt(ino, idx)?.unwrap_or_else(zero_block));
            }
        }
        for idx in first..=last {
            let blk_start = idx * BLOCK_SIZE as u64;
            let from = offset.max(blk_start);
            let to = end.min(blk_start + BLOCK_SIZE as u64);
            let edge = if idx == first {
                edges[0].take()
            } else if idx == last {
                edges[1].take()
            } else {
                None
            };
            let mut b = edge.unwrap_or_else(zero_block);
            let len = (to - from) as usize;
            let in_blk = (from - blk_start) as usize;
            b[in_blk..in_blk + len].copy_from_slice(&data[done..done + len]);
            done += len;
            self.map_for_write(ino, idx)?;
            blocks.push((idx, b));
        }
        for (idx, b) in blocks {
            if let Err(e) = self.put_dirty_block(ino, idx, b) {
                return self.fail(e);
            }
        }
        if end > inode::size(self.inode_ref(ino)?) {
            self.since_cp.resized(ino);
        }
        let ib = self.inode_mut(ino)?;
        if end > inode::size(ib) {
            inode::set_size(ib, end);
        }
        inode::set_time(ib, inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC, now);
        inode::set_time(ib, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
        Ok(())
    }

    /// Sets the size of a regular file: truncation frees blocks past the end and zeroes
    /// the tail of the last block; extension adds a hole.
    pub(crate) fn set_size(&mut self, ino: Ino, size: u64, now: Timestamp) -> Result<()> {
        if self.atomic.contains_key(&ino) {
            return Err(Error::Invalid("size change during an atomic write"));
        }
        if size > MAX_FILE_SIZE {
            return Err(Error::FileTooBig);
        }
        if self.is_inline(ino)? {
            if self.inline_set_size(ino, size, now)? {
                return Ok(());
            }
            self.uninline(ino, now)?;
        }
        let old = inode::size(self.inode_ref(ino)?);
        if size < old {
            let keep_blocks = size.div_ceil(BLOCK_SIZE as u64);
            let tail = (size % BLOCK_SIZE as u64) as usize;
            // The new last block keeps only its first `tail` bytes: read it, and reserve the
            // room to rewrite it, before anything is freed. A checkpoint (or ENOSPC) between
            // freeing and zeroing would leave the old size over a freed block: bytes the
            // file never held.
            let mut zeroed = None;
            if tail != 0 {
                if let Some(mut b) = self.read_block_opt(ino, size / BLOCK_SIZE as u64)? {
                    if b[tail..].iter().any(|&x| x != 0) {
                        b[tail..].fill(0);
                        zeroed = Some(b);
                    }
                }
            }
            let free_first = crate::mutant!("mutant-truncate-free-before-reserve");
            if !free_first {
                self.reserve_for_removal(&[ino], zeroed.is_some() as u64, now)?;
            }
            // From here on the truncation must complete: a failure (an I/O error reading a
            // node) leaves it half done, so the filesystem stops writing.
            if let Err(e) = self.truncate_blocks(ino, keep_blocks) {
                return self.fail(e);
            }
            if let Some(b) = zeroed {
                if free_first {
                    self.ensure_space(1, now)?;
                }
                if let Err(e) = self.put_dirty_block(ino, size / BLOCK_SIZE as u64, b) {
                    return self.fail(e);
                }
            }
        }
        self.since_cp.resized(ino);
        let ib = self.inode_mut(ino)?;
        inode::set_size(ib, size);
        inode::set_time(ib, inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC, now);
        inode::set_time(ib, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
        Ok(())
    }

    /// `fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)`: bytes `offset..offset+len`
    /// read as zeros afterwards and whole blocks in the range are freed; the size never
    /// changes. Failure atomic: the partial blocks at the ends are read and their room
    /// reserved before anything is freed. An fsync of the file afterwards falls back to a
    /// checkpoint (the node chain carries no hole punches; a crash before that leaves the
    /// file as it was).
    pub fn punch_hole(&mut self, ino: Ino, offset: u64, len: u64, now: Timestamp) -> Result<()> {
        self.op(|fs| fs.punch_hole_inner(ino, offset, len, now))
    }

    fn punch_hole_inner(&mut self, ino: Ino, offset: u64, len: u64, now: Timestamp) -> Result<()> {
        let end = self.check_fallocate(ino, offset, len)?;
        self.refuse_protected(ino)?;
        if !self.inline_zero_range(ino, offset, end, false, now)? {
            self.uninline(ino, now)?;
            self.zero_blocks_range(ino, offset, end, now)?;
        }
        self.after_change(now)
    }

    /// `fallocate(FALLOC_FL_ZERO_RANGE)`: as [`Filesystem::punch_hole`] (rollfs keeps
    /// zeroed blocks as holes), then, unless `keep_size`, the size grows to cover the
    /// range. The range is not reserved (a caller wanting that calls
    /// [`Filesystem::fallocate`] after it): zeroing never needs more room than it frees.
    pub fn zero_range(&mut self, ino: Ino, offset: u64, len: u64, keep_size: bool, now: Timestamp) -> Result<()> {
        self.op(|fs| fs.zero_range_inner(ino, offset, len, keep_size, now))
    }

    fn zero_range_inner(&mut self, ino: Ino, offset: u64, len: u64, keep_size: bool, now: Timestamp) -> Result<()> {
        let end = self.check_fallocate(ino, offset, len)?;
        self.refuse_protected(ino)?;
        if self.inline_zero_range(ino, offset, end, !keep_size, now)? {
            return self.after_change(now);
        }
        self.uninline(ino, now)?;
        let grows = !keep_size && end > inode::size(self.inode_ref(ino)?);
        if grows {
            // The size change dirties the inode: its room first, so that the whole call
            // is refused (ENOSPC) or done, and the next checkpoint finds its room.
            self.reserve_nodes(&[ino], 0, now)?;
        }
        self.zero_blocks_range(ino, offset, end, now)?;
        if grows {
            self.set_size(ino, end, now)?;
        }
        self.after_change(now)
    }

    /// What every fallocate mode checks first: a writable filesystem, a regular file not in
    /// an atomic write, a range within the largest file. Returns the range's end. (A punch or
    /// zero range that fits works in an inline file's inode, `inline_zero_range`; every
    /// other mode converts it first, `uninline`: its blocks are what it works on.)
    pub(crate) fn check_fallocate(&mut self, ino: Ino, offset: u64, len: u64) -> Result<u64> {
        self.check_writable()?;
        match self.inode_kind(ino)? {
            FileType::Regular => {}
            FileType::Directory => return Err(Error::IsDir),
            _ => return Err(Error::Invalid("fallocate of a special file")),
        }
        if self.atomic.contains_key(&ino) {
            return Err(Error::Invalid("fallocate during an atomic write"));
        }
        // Append-only files allow a reservation (mode 0 and KEEP_SIZE: `vfs_fallocate`'s
        // "pure fallocate"), not punch or zero (their callers refuse those).
        self.refuse_flags(ino, crate::fileflags::FileFlags::IMMUTABLE)?;
        let end = offset.checked_add(len).ok_or(Error::FileTooBig)?;
        if end > MAX_FILE_SIZE {
            return Err(Error::FileTooBig);
        }
        Ok(end)
    }

    /// Zeroes bytes `offset..end` (checked by `check_fallocate`): frees the whole blocks,
    /// rewrites the partial ones at the ends.
    fn zero_blocks_range(&mut self, ino: Ino, offset: u64, end: u64, now: Timestamp) -> Result<()> {
        self.touch(now);
        // Nothing past the end of the file to zero: it reads as zeros already.
        let end = end.min(inode::size(self.inode_ref(ino)?));
        if offset >= end {
            return Ok(());
        }
        let bs = BLOCK_SIZE as u64;
        let (first_whole, end_whole) = (offset.div_ceil(bs), end / bs);
        // The partial blocks at the two ends keep their other bytes: zero the range in a
        // copy now, write them back after the whole blocks are freed.
        let mut edges: alloc::vec::Vec<(u64, alloc::boxed::Box<Block>)> = alloc::vec::Vec::new();
        for idx in [offset / bs, (end - 1) / bs] {
            if edges.iter().any(|(i, _)| *i == idx) || (idx >= first_whole && idx < end_whole) {
                continue;
            }
            if let Some(mut b) = self.read_block_opt(ino, idx)? {
                let lo = offset.max(idx * bs) - idx * bs;
                let hi = end.min((idx + 1) * bs) - idx * bs;
                if b[lo as usize..hi as usize].iter().any(|&x| x != 0) {
                    b[lo as usize..hi as usize].fill(0);
                    edges.push((idx, b));
                }
            }
        }
        self.reserve_for_removal(&[ino], edges.len() as u64, now)?;
        // From here on the change must complete: a failure (an I/O error reading a node)
        // leaves it half done, so the filesystem stops writing.
        if let Err(e) = self.free_block_range(ino, first_whole, end_whole) {
            return self.fail(e);
        }
        for (idx, b) in edges {
            if let Err(e) = self.put_dirty_block(ino, idx, b) {
                return self.fail(e);
            }
        }
        self.since_cp.relinked(ino);
        self.since_cp.punched(ino);
        let ib = self.inode_mut(ino)?;
        inode::set_time(ib, inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC, now);
        inode::set_time(ib, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
        Ok(())
    }
}

/// Bytes one [`Filesystem::copy_range`] call copies at most (FUSE's largest write): a
/// driver copying more calls again for the rest, so that other requests get the
/// filesystem in between.
pub const COPY_CHUNK_BYTES_MAX: u64 = 1 << 20;

impl<D: BlockDevice> Filesystem<D> {
    /// `copy_file_range(2)` between (or within) files of this filesystem: copies up to
    /// `len` bytes — at most [`COPY_CHUNK_BYTES_MAX`], and not past the source's end — of
    /// `src` from `src_off` to `dst` at `dst_off`, and returns the count (0 at or past the
    /// source's end). The source's data runs are read and written ([`Filesystem::write`]:
    /// into the destination's atomic session when it has one); its holes stay holes: the
    /// destination's data there is zeroed as a hole punch does (whole blocks freed, so no
    /// block is allocated for them; in a session, where nothing can be punched, zeros are
    /// staged over that data only), and past the destination's end only its size grows.
    ///
    /// Overlapping ranges in one file are EINVAL (Linux's `generic_copy_file_checks`,
    /// judged on the whole request shortened to the source's end). The copy is made of
    /// steps that each succeed or change nothing; when one fails after others, the count
    /// of the bytes copied before it is returned (the destination is changed exactly
    /// there), and the error only when nothing was copied.
    pub fn copy_range(
        &mut self,
        src: Ino,
        src_off: u64,
        dst: Ino,
        dst_off: u64,
        len: u64,
        now: Timestamp,
    ) -> Result<u64> {
        self.check_writable()?;
        for ino in [src, dst] {
            match self.inode_kind(ino)? {
                FileType::Regular => {}
                FileType::Directory => return Err(Error::IsDir),
                _ => return Err(Error::Invalid("copy of a special file")),
            }
        }
        self.check_write_at(dst, dst_off)?;
        let size = self.size_seen(src)?;
        if src_off >= size || len == 0 {
            return Ok(0);
        }
        let total = len.min(size - src_off);
        if src == dst && dst_off < src_off + total && src_off < dst_off.saturating_add(total) {
            return Err(Error::Invalid("copy between overlapping ranges of one file"));
        }
        if dst_off >= MAX_FILE_SIZE {
            return Err(Error::FileTooBig);
        }
        let n = total.min(COPY_CHUNK_BYTES_MAX).min(MAX_FILE_SIZE - dst_off);
        let (mut done, mut changed) = (0, false);
        // Bounded: every step copies at least one byte (a run of data or of a hole).
        while done < n {
            match self.copy_step(src, src_off + done, dst, dst_off + done, n - done, now) {
                Ok((k, c)) if k > 0 => (done, changed) = (done + k, changed || c),
                Ok(_) => break,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            }
        }
        if done > 0 && !changed && !self.atomic.contains_key(&dst) {
            // A hole copied over a hole changed no byte, but the file was written to: its
            // times change as for a write (FUSE leaves them to the filesystem). The copy is
            // done either way, so a failure here is not the copy's.
            let _ = self.setattr(dst, &SetAttr { mtime: Some(now), ..Default::default() }, now);
        }
        Ok(done)
    }

    /// One step of [`Filesystem::copy_range`]: the run of data, or of a hole, of `src` that
    /// starts at `src_off` (within the next `n` bytes), copied to `dst` at `dst_off`.
    /// Returns the bytes it copied (at least one) and whether it changed the destination.
    fn copy_step(
        &mut self,
        src: Ino,
        src_off: u64,
        dst: Ino,
        dst_off: u64,
        n: u64,
        now: Timestamp,
    ) -> Result<(u64, bool)> {
        let bs = BLOCK_SIZE as u64;
        let end = src_off + n;
        let (first, last_end) = (src_off / bs, end.div_ceil(bs));
        let data_at = match self.next_data_block(src, first, last_end)? {
            Some(i) => (i * bs).clamp(src_off, end),
            None => end,
        };
        if data_at > src_off {
            return self.copy_hole(dst, dst_off, data_at - src_off, now);
        }
        // The block at `src_off` is data: its run ends at the next hole.
        let hole_at = match self.next_hole_block(src, first, last_end)? {
            Some(i) => (i * bs).clamp(src_off, end),
            None => end,
        };
        let mut buf = alloc::vec![0u8; (hole_at - src_off) as usize];
        let got = match self.read(src, src_off, &mut buf) {
            Ok(got) => got,
            Err(e) => {
                // A block of the run cannot be read (EIO, a bad checksum): the copy goes up
                // to it, a block at a time, and ends there (a bounded retry: the run's
                // blocks, each read once more).
                let mut got = 0;
                while got < buf.len() {
                    let to = ((src_off + got as u64) / bs + 1) * bs - src_off;
                    let to = (to as usize).min(buf.len());
                    match self.read(src, src_off + got as u64, &mut buf[got..to]) {
                        Ok(k) if k == to - got => got = to,
                        _ => break,
                    }
                }
                if got == 0 {
                    return Err(e);
                }
                got
            }
        };
        self.write(dst, dst_off, &buf[..got], now)?;
        Ok((got as u64, got > 0))
    }

    /// Makes bytes `at..at + len` of `dst` read as a copied hole: its data there zeroed
    /// (a run at a time) and, past its end, only its size grown. Returns the bytes done,
    /// from `at` on, and whether it changed the file.
    fn copy_hole(&mut self, dst: Ino, at: u64, len: u64, now: Timestamp) -> Result<(u64, bool)> {
        let bs = BLOCK_SIZE as u64;
        let end = at + len;
        let session = self.atomic.contains_key(&dst);
        let size = self.size_seen(dst)?;
        if at >= size {
            if session {
                self.op(|fs| fs.grow_session(dst, end))?;
            } else {
                // Past the end nothing is zeroed: the size grows over a hole.
                self.zero_range(dst, at, len, false, now)?;
            }
            return Ok((len, true));
        }
        let below = end.min(size);
        let (first, last_end) = (at / bs, below.div_ceil(bs));
        let Some(i) = self.next_data_block(dst, first, last_end)? else { return Ok((below - at, false)) };
        let run_at = (i * bs).max(at);
        let run_end = match self.next_hole_block(dst, i, last_end)? {
            Some(h) => (h * bs).min(below),
            None => below,
        };
        if session {
            self.write(dst, run_at, &alloc::vec![0u8; (run_end - run_at) as usize], now)?;
        } else {
            // Only the data run: a hole fallocate reserved around it keeps its reservation.
            self.zero_range(dst, run_at, run_end - run_at, true, now)?;
        }
        Ok((run_end - at, true))
    }
}

/// The end offset and the first and last file blocks of a write of `len` bytes at `offset`;
/// `None` for an empty write. EFBIG past the largest file.
fn block_range(offset: u64, len: usize) -> Result<Option<(u64, u64, u64)>> {
    if len == 0 {
        return Ok(None);
    }
    let end = offset.checked_add(len as u64).ok_or(Error::FileTooBig)?;
    if end > MAX_FILE_SIZE {
        return Err(Error::FileTooBig);
    }
    Ok(Some((end, offset / BLOCK_SIZE as u64, (end - 1) / BLOCK_SIZE as u64)))
}
