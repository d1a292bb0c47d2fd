//! The six active logs, block allocation, invalidation and segment states.
//!
//! Blocks are only ever appended to the open segment of a log (no in-place updates);
//! a log that fills its segment opens the next free one. A segment whose last valid block
//! is invalidated becomes *prefree*: it still holds blocks the last checkpoint references,
//! so it becomes free (reusable) only when the next checkpoint commits.
//!
//! Invariant (crash safety): no block referenced by the last committed checkpoint is ever
//! overwritten, because blocks are written only into segments that were free at that
//! checkpoint, or past the checkpoint's position in an open segment.

use crate::checkpoint::LogPos;
use crate::error::{Error, Result};
use crate::layout::*;
use crate::sit::Sit;
use crate::ssa::Ssa;
use crate::BlockAddr;
use alloc::vec;
use alloc::vec::Vec;

/// The logs, by temperature and kind (index into the active-log array).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Log {
    HotData = 0,
    WarmData = 1,
    ColdData = 2,
    HotNode = 3,
    WarmNode = 4,
    ColdNode = 5,
}

impl Log {
    pub const ALL: [Log; LOG_COUNT] =
        [Log::HotData, Log::WarmData, Log::ColdData, Log::HotNode, Log::WarmNode, Log::ColdNode];
    pub fn is_node(self) -> bool {
        (self as usize) >= 3
    }
    /// The SIT segment type code of segments written by this log.
    pub fn seg_type(self) -> u8 {
        self as u8 + 1
    }
    pub fn name(self) -> &'static str {
        ["hot-data", "warm-data", "cold-data", "hot-node", "warm-node", "cold-node"][self as usize]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegState {
    Free,
    Open,
    Used,
    /// No valid blocks, but may hold blocks of the last checkpoint: free after the next one.
    Prefree,
}

pub struct SegmentManager {
    pub logs: [LogPos; LOG_COUNT],
    pub states: Vec<SegState>,
    free_count: u32,
    cursor: u32,
    segment_blocks: u32,
    reserved: u32,
}

impl SegmentManager {
    /// Builds the in-memory state from a checkpoint's SIT and log positions, checking that
    /// they agree (no valid block beyond an open log's position).
    pub fn from_checkpoint(geo: &Geometry, sit: &Sit, logs: [LogPos; LOG_COUNT]) -> Result<SegmentManager> {
        let mut states = vec![SegState::Free; geo.main_segments as usize];
        for (segno, e) in sit.entries.iter().enumerate() {
            if e.valid > 0 {
                states[segno] = SegState::Used;
            }
        }
        for l in logs.iter() {
            let e = sit.get(l.segno);
            for off in l.blkoff..geo.segment_blocks {
                if e.is_valid(off) {
                    return Err(Error::corrupt(
                        geo.seg_start(l.segno) as u64 + off as u64,
                        "SIT: valid block beyond its log's write position",
                    ));
                }
            }
            states[l.segno as usize] = SegState::Open;
        }
        let free_count = states.iter().filter(|s| **s == SegState::Free).count() as u32;
        let cursor = logs.iter().map(|l| l.segno).max().unwrap_or(0);
        Ok(SegmentManager {
            logs,
            states,
            free_count,
            cursor,
            segment_blocks: geo.segment_blocks,
            reserved: geo.reserved_segments,
        })
    }

    pub fn free_segments(&self) -> u32 {
        self.free_count
    }

    pub fn reserved_segments(&self) -> u32 {
        self.reserved
    }

    /// Blocks that can still be written without opening a segment, over all logs.
    pub fn open_room(&self) -> u64 {
        self.logs.iter().map(|l| (self.segment_blocks - l.blkoff) as u64).sum()
    }

    pub fn prefree_count(&self) -> u32 {
        self.states.iter().filter(|s| **s == SegState::Prefree).count() as u32
    }

    fn pick_free(&mut self, allow_reserve: bool) -> Result<u32> {
        if self.free_count == 0 || (!allow_reserve && self.free_count <= self.reserved) {
            return Err(Error::NoSpace);
        }
        let n = self.states.len() as u32;
        // Round-robin from the last opened segment: spreads wear over the whole device.
        for i in 1..=n {
            let s = (self.cursor + i) % n;
            if self.states[s as usize] == SegState::Free {
                self.cursor = s;
                return Ok(s);
            }
        }
        Err(Error::NoSpace)
    }

    /// The address the next allocation in `log` will return, opening (reserving) the next
    /// segment now if the current one is full. Node footers record it as `next_blkaddr`.
    pub fn peek_next(&mut self, geo: &Geometry, sit: &mut Sit, ssa: &mut Ssa, log: Log) -> Result<BlockAddr> {
        self.ensure_room(geo, sit, ssa, log, true)?;
        let l = self.logs[log as usize];
        Ok(geo.seg_start(l.segno) + l.blkoff)
    }

    fn ensure_room(
        &mut self,
        _geo: &Geometry,
        sit: &mut Sit,
        ssa: &mut Ssa,
        log: Log,
        allow_reserve: bool,
    ) -> Result<()> {
        let l = self.logs[log as usize];
        if l.blkoff < self.segment_blocks {
            return Ok(());
        }
        let segno = self.pick_free(allow_reserve)?;
        let old = l.segno;
        self.states[old as usize] = if sit.get(old).valid == 0 { SegState::Prefree } else { SegState::Used };
        self.states[segno as usize] = SegState::Open;
        self.free_count -= 1;
        let wear = sit.get(segno).wear.saturating_add(1);
        sit.set_type_and_wear(segno, log.seg_type(), wear);
        ssa.reset(segno);
        self.logs[log as usize] = LogPos { segno, blkoff: 0 };
        Ok(())
    }

    /// Allocates the next block of `log`; the caller records its owner in the SSA. `allow_reserve` lets checkpoint and
    /// metadata writes use the reserved segments that user writes may not.
    pub fn alloc(
        &mut self,
        geo: &Geometry,
        sit: &mut Sit,
        ssa: &mut Ssa,
        log: Log,
        mtime: u64,
        allow_reserve: bool,
    ) -> Result<BlockAddr> {
        self.ensure_room(geo, sit, ssa, log, allow_reserve)?;
        let l = &mut self.logs[log as usize];
        let addr = geo.seg_start(l.segno) + l.blkoff;
        let ok = sit.set_valid(l.segno, l.blkoff, mtime);
        debug_assert!(ok, "allocating a valid block {addr}");
        if !ok {
            return Err(Error::corrupt(addr as u64, "allocator: block already valid"));
        }
        l.blkoff += 1;
        Ok(addr)
    }

    /// Invalidates a block that is no longer referenced (overwritten or freed).
    pub fn invalidate(&mut self, geo: &Geometry, sit: &mut Sit, addr: BlockAddr) -> Result<()> {
        if addr == NULL_ADDR || addr == NEW_ADDR {
            return Ok(());
        }
        if !geo.in_main(addr) {
            return Err(Error::corrupt(addr as u64, "block address outside the main area"));
        }
        let segno = geo.segno_of(addr);
        if !sit.set_invalid(segno, geo.blkoff_of(addr)) {
            return Err(Error::corrupt(addr as u64, "freeing a block the SIT says is not in use (doubly owned?)"));
        }
        if sit.get(segno).valid == 0 && self.states[segno as usize] == SegState::Used {
            if cfg!(feature = "mutant-reuse-before-cp") {
                // Mutant: the segment is reusable at once, before the checkpoint that
                // stops referencing its blocks is durable.
                self.states[segno as usize] = SegState::Free;
                self.free_count += 1;
            } else {
                self.states[segno as usize] = SegState::Prefree;
            }
        }
        Ok(())
    }

    /// Recovery: marks a block written after the checkpoint (and found in a complete fsync
    /// batch) as valid. Returns true when its segment was free at the checkpoint, in which
    /// case the caller starts a fresh summary for it.
    pub fn claim(&mut self, geo: &Geometry, sit: &mut Sit, addr: BlockAddr, log: Log, mtime: u64) -> Result<bool> {
        if !geo.in_main(addr) {
            return Err(Error::corrupt(addr as u64, "recovered block outside the main area"));
        }
        let segno = geo.segno_of(addr);
        let fresh = self.states[segno as usize] == SegState::Free;
        if !sit.set_valid(segno, geo.blkoff_of(addr), mtime) {
            return Err(Error::corrupt(addr as u64, "recovered block already in use"));
        }
        if fresh {
            self.states[segno as usize] = SegState::Used;
            self.free_count -= 1;
            let wear = sit.get(segno).wear.saturating_add(1);
            sit.set_type_and_wear(segno, log.seg_type(), wear);
        }
        Ok(fresh)
    }

    /// Recovery: keeps `pinned` segments (which hold the node chain) from reuse until the
    /// next checkpoint commits, and moves every log to a fresh segment so that nothing the
    /// chain or its data occupies is overwritten before then.
    pub fn pin_and_reopen(
        &mut self,
        geo: &Geometry,
        sit: &mut Sit,
        ssa: &mut Ssa,
        pinned: &alloc::collections::BTreeSet<u32>,
    ) -> Result<()> {
        for &s in pinned {
            if self.states[s as usize] == SegState::Free {
                self.states[s as usize] = SegState::Prefree;
                self.free_count -= 1;
            }
        }
        for log in Log::ALL {
            self.logs[log as usize].blkoff = self.segment_blocks;
            self.ensure_room(geo, sit, ssa, log, true)?;
        }
        Ok(())
    }

    /// After a checkpoint commits: prefree segments become free. Returns them (to discard).
    pub fn commit(&mut self) -> Vec<u32> {
        let mut freed = Vec::new();
        for (s, st) in self.states.iter_mut().enumerate() {
            if *st == SegState::Prefree {
                *st = SegState::Free;
                freed.push(s as u32);
            }
        }
        self.free_count += freed.len() as u32;
        freed
    }
}
