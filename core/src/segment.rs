//! The six active logs, block allocation, invalidation and segment states.
//!
//! Blocks are only ever appended to the open segment of a log (no in-place updates);
//! a log that fills its segment opens the next free one. A segment whose last valid block
//! is invalidated becomes *prefree*: it still holds blocks the last checkpoint references,
//! so it becomes free (reusable) only when the next checkpoint commits.
//!
//! When free segments run low, the data logs switch to *slack space recycling* (SSR, f2fs's
//! threaded logging): instead of opening a free segment (which cleaning would first have
//! to produce by copying), a log fills the holes (invalid blocks) of a used segment, in
//! address order. Uniform random overwrites of a nearly full device then cost one write per
//! block instead of cleaning's copies (write amplification 1/(1 - u) at victim
//! utilisation u), at the price of scattered writes, which flash handles well.
//!
//! Invariant (crash safety): no block referenced by the last committed checkpoint, or by
//! an fsync chain written after it, is ever overwritten. Blocks are written only into
//! segments that were free at that checkpoint, past the checkpoint's position in an open
//! segment, or (SSR) into holes that were invalid at the last checkpoint and have not been
//! written since (f2fs's `ckpt_valid_map`): a block invalidated after the checkpoint may
//! still be what the checkpoint references, and a block written since may belong to an
//! fsync chain, however soon it was overwritten. [`CpMap`] keeps that set per segment
//! touched since the checkpoint; a log filling a segment by SSR works from a snapshot of
//! it taken when it chose the segment (only that log allocates there, so the snapshot's
//! holes stay holes). SSR is off from mount until the first checkpoint commits, so the
//! blocks a recovered chain left unclaimed are never reused before then.

use crate::checkpoint::LogPos;
use crate::error::{Error, Result};
use crate::layout::*;
use crate::sit::Sit;
use crate::ssa::Ssa;
use crate::BlockAddr;
use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

/// The blocks of one segment that slack space recycling must not reuse: valid at the last
/// committed checkpoint or allocated since. Kept only for segments touched since that
/// checkpoint (for the others it is the SIT's bitmap). Invariant: a superset of the
/// segment's current valid bitmap, and `count` is its population.
#[derive(Clone, Copy)]
struct CpMap {
    bits: [u8; SIT_BITMAP_BYTES],
    count: u32,
}

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
    /// Segments written or invalidated since the last committed checkpoint, with the blocks
    /// SSR must not reuse in them.
    cp_maps: BTreeMap<u32, CpMap>,
    /// Per log: the [`CpMap`] bits of the used segment it is filling by SSR, as they were
    /// when chosen (set bits are not holes); `None` for a log appending to a free segment.
    ssr: [Option<[u8; SIT_BITMAP_BYTES]>; LOG_COUNT],
    /// SSR allowed (off from mount until the first checkpoint commits).
    ssr_enabled: bool,
    /// SSR wanted: set by the filesystem when free segments cannot take what is pending.
    pub ssr_wanted: bool,
    /// Blocks written by SSR (statistics).
    pub ssr_blocks: u64,
    /// The data logs' SSR may fill holes of node segments (`FEATURE_INCOMPAT_MIXED_NODE`:
    /// such segments hold data beside fsync chains, whose deleted blocks leave holes that
    /// otherwise only cleaning — copying the data that is left — could take back; review 53).
    pub(crate) ssr_into_node_segments: bool,
    /// Per segment, meaningful while it is free: discarded since it last became free (by
    /// FITRIM or a checkpoint's discard), in this mount. A trim skips such segments, as
    /// ext4 skips groups trimmed since their last free.
    trimmed: Vec<bool>,
}

/// Data logs use SSR when the filesystem wants it: `Filesystem::ensure_space_for` does
/// when the free segments beyond the reserve cannot hold what is pending plus this margin
/// (kept for the node logs, which always append to free segments).
pub const SSR_MARGIN_SEGMENTS: u64 = 4;

/// Free segments a removal leaves when it goes ahead on room ordinary changes may not take
/// (`Filesystem::removal_fits`): cleaning then still has a segment for each log it writes
/// (the cold data log and two node logs for a data victim, the node logs for a node one).
pub const REMOVAL_FLOOR_SEGMENTS: u64 = 3;

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
            cp_maps: BTreeMap::new(),
            ssr: [None; LOG_COUNT],
            ssr_enabled: false,
            ssr_wanted: false,
            ssr_blocks: 0,
            ssr_into_node_segments: false,
            trimmed: vec![false; geo.main_segments as usize],
        })
    }

    /// An online grow committed (`Filesystem::grow`): the segments `geo` adds are free,
    /// and the cleaner's reserve is the new size's.
    pub(crate) fn grow_to(&mut self, geo: &Geometry) {
        let added = (geo.main_segments as usize).saturating_sub(self.states.len());
        self.states.resize(self.states.len() + added, SegState::Free);
        self.trimmed.resize(self.states.len(), false);
        self.free_count += added as u32;
        self.reserved = self.reserved.max(geo.reserved_segments);
    }

    pub fn free_segments(&self) -> u32 {
        self.free_count
    }

    pub fn reserved_segments(&self) -> u32 {
        self.reserved
    }

    /// Blocks that can still be written without opening a segment, over all logs.
    // Nothing calls it: it was reachable only while `segment` was a public module (issue 37).
    #[allow(dead_code)]
    pub fn open_room(&self) -> u64 {
        self.logs.iter().map(|l| (self.segment_blocks - l.blkoff) as u64).sum()
    }

    /// Whether a trim may discard segment `segno`: free (it holds nothing the last
    /// checkpoint or an fsync chain after it references: a segment freed since the
    /// checkpoint is prefree until the next one commits, a chain's segments are open or
    /// used) and not discarded since it became free.
    pub fn trimmable(&self, segno: u32) -> bool {
        self.states.get(segno as usize) == Some(&SegState::Free) && !self.trimmed[segno as usize]
    }

    /// Segment `segno`, free, was discarded.
    pub fn set_trimmed(&mut self, segno: u32) {
        if self.states.get(segno as usize) == Some(&SegState::Free) {
            self.trimmed[segno as usize] = true;
        }
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
        let old = l.segno;
        self.ssr[log as usize] = None;
        if let Some((segno, map)) = self.pick_ssr(sit, log) {
            self.close(sit, old);
            self.states[segno as usize] = SegState::Open;
            // A pass of writes over the segment: counted as wear like a fresh open.
            let e = sit.get(segno);
            let (seg_type, wear) = (e.seg_type, e.wear.saturating_add(1));
            sit.set_type_and_wear(segno, seg_type, wear);
            self.note_touch(sit, segno);
            let first = Self::next_hole(&map, 0, self.segment_blocks);
            self.ssr[log as usize] = Some(map);
            self.logs[log as usize] = LogPos { segno, blkoff: first };
            return Ok(());
        }
        let segno = self.pick_free(allow_reserve)?;
        self.close(sit, old);
        self.states[segno as usize] = SegState::Open;
        self.free_count -= 1;
        let wear = sit.get(segno).wear.saturating_add(1);
        sit.set_type_and_wear(segno, log.seg_type(), wear);
        ssa.reset(segno);
        self.note_touch(sit, segno);
        self.logs[log as usize] = LogPos { segno, blkoff: 0 };
        Ok(())
    }

    /// Segment `segno` is about to change: from now until the next checkpoint its
    /// [`CpMap`] starts from its bitmap as the last checkpoint left it.
    fn note_touch(&mut self, sit: &Sit, segno: u32) {
        let e = sit.get(segno);
        self.cp_maps.entry(segno).or_insert(CpMap { bits: e.bitmap, count: e.valid as u32 });
    }

    /// Block `off` of touched segment `segno` was allocated: SSR must not reuse it before
    /// the next checkpoint, even once it is overwritten (it may be in an fsync chain).
    fn note_alloc(&mut self, segno: u32, off: u32) {
        if let Some(m) = self.cp_maps.get_mut(&segno) {
            let (byte, bit) = ((off / 8) as usize, 1u8 << (off % 8));
            if m.bits[byte] & bit == 0 {
                m.bits[byte] |= bit;
                m.count += 1;
            }
        }
    }

    /// The blocks of `segno` SSR must not reuse, and how many (see [`CpMap`]).
    fn cp_map(&self, sit: &Sit, segno: u32) -> ([u8; SIT_BITMAP_BYTES], u32) {
        let e = sit.get(segno);
        if crate::mutant!("mutant-ssr-reuse-before-cp") {
            // Mutant: SSR reuses every current hole, including blocks the last checkpoint
            // or an fsync chain after it still references.
            return (e.bitmap, e.valid as u32);
        }
        match self.cp_maps.get(&segno) {
            Some(m) => (m.bits, m.count),
            None => (e.bitmap, e.valid as u32),
        }
    }

    /// Holes of `segno` SSR may fill (the count of [`SegmentManager::cp_map`], without
    /// copying its bitmap: this runs per segment on every write while SSR is wanted).
    fn ssr_holes(&self, sit: &Sit, segno: u32) -> u32 {
        let count = match self.cp_maps.get(&segno) {
            Some(m) if !crate::mutant!("mutant-ssr-reuse-before-cp") => m.count,
            _ => sit.get(segno).valid as u32,
        };
        self.segment_blocks.saturating_sub(count)
    }

    /// A log leaves segment `segno`: used, or prefree if nothing in it is valid.
    fn close(&mut self, sit: &Sit, segno: u32) {
        self.states[segno as usize] = if sit.get(segno).valid == 0 { SegState::Prefree } else { SegState::Used };
    }

    /// The first hole of `map` at or after `from` (`end` if none).
    fn next_hole(map: &[u8; SIT_BITMAP_BYTES], from: u32, end: u32) -> u32 {
        (from..end).find(|&o| map[(o / 8) as usize] & (1 << (o % 8)) == 0).unwrap_or(end)
    }

    /// A segment SSR may fill: used, with holes free since the last checkpoint, and holding
    /// data — or, on an image with data beside its chain, nodes: there a data block's
    /// summary entry says it is data (`SSA_OFS_DATA`, set by `Filesystem::alloc_block` from
    /// the segment's type), so cleaning, fsck and repair tell it from the nodes around it.
    /// SSR keeps the segment's type. The node logs never use SSR (a chain's `next_blkaddr`
    /// names the next block of its log), and SSR never fills an open segment (`Used` only),
    /// so no chain runs through blocks SSR writes; the holes it fills were free at the last
    /// checkpoint and since (`cp_maps`), so no chain since the checkpoint needs them.
    fn ssr_candidate(&self, sit: &Sit, s: usize) -> bool {
        let t = sit.get(s as u32).seg_type;
        let data = (Log::HotData.seg_type()..=Log::ColdData.seg_type()).contains(&t);
        let node = (Log::HotNode.seg_type()..=Log::ColdNode.seg_type()).contains(&t);
        self.states[s] == SegState::Used
            && (data || (node && self.ssr_into_node_segments))
            && self.ssr_holes(sit, s as u32) > 0
    }

    /// SSR victim for a data log when free segments are scarce: the used segment with the
    /// most reusable holes (greedy, like foreground cleaning). O(segments), only while
    /// free space is low.
    fn pick_ssr(&self, sit: &Sit, log: Log) -> Option<(u32, [u8; SIT_BITMAP_BYTES])> {
        if !self.ssr_enabled || !self.ssr_wanted || !matches!(log, Log::HotData | Log::WarmData) {
            return None;
        }
        let best = (0..self.states.len())
            .filter(|&s| self.ssr_candidate(sit, s))
            .map(|s| (self.segment_blocks - self.ssr_holes(sit, s as u32), s as u32))
            .min()?;
        Some((best.1, self.cp_map(sit, best.1).0))
    }

    /// Holes SSR could fill now (eligible segments' reusable holes plus what is left in the
    /// segments data logs are filling by SSR); 0 when SSR is not in use.
    pub fn ssr_room(&self, sit: &Sit) -> u64 {
        if !self.ssr_enabled || !self.ssr_wanted {
            return 0;
        }
        let eligible: u64 = (0..self.states.len())
            .filter(|&s| self.ssr_candidate(sit, s))
            .map(|s| self.ssr_holes(sit, s as u32) as u64)
            .sum();
        let current: u64 =
            Log::ALL
                .iter()
                .filter_map(|&log| {
                    let map = self.ssr[log as usize].as_ref()?;
                    let from = self.logs[log as usize].blkoff;
                    Some((from..self.segment_blocks).filter(|&o| map[(o / 8) as usize] & (1 << (o % 8)) == 0).count()
                        as u64)
                })
                .sum();
        eligible + current
    }

    /// Free segments the logs open to write `blocks[log]` more blocks each: beyond the room
    /// left in each log's open segment, one per segment's worth, counting one where the
    /// blocks end exactly at a segment's end (a node log opens the next segment as soon as
    /// one fills, for `next_blkaddr`). A log filling holes is counted as having no room
    /// left. An upper bound: data logs may fill holes of used segments instead.
    pub fn segments_to_open(&self, blocks: &[u64; LOG_COUNT]) -> u64 {
        let seg = self.segment_blocks as u64;
        Log::ALL
            .iter()
            .map(|&log| {
                let w = blocks[log as usize];
                let room = match self.ssr[log as usize] {
                    Some(_) => 0,
                    None => seg - self.logs[log as usize].blkoff as u64,
                };
                if w == 0 || w < room {
                    0
                } else {
                    (w - room) / seg + 1
                }
            })
            .sum()
    }

    /// An upper bound of [`SegmentManager::segments_to_open`] for `total` blocks spread over
    /// the logs in any way: a segment per segment's worth, plus one for each log whose open
    /// segment `total` blocks could fill (a log filling holes counts as full). O(logs):
    /// checked before every change that needs room.
    pub fn segments_to_open_bound(&self, total: u64) -> u64 {
        let seg = self.segment_blocks as u64;
        let fillable = Log::ALL
            .iter()
            .filter(|&&log| {
                let room = match self.ssr[log as usize] {
                    Some(_) => 0,
                    None => seg - self.logs[log as usize].blkoff as u64,
                };
                total > 0 && room <= total
            })
            .count() as u64;
        total / seg + fillable
    }

    /// Log positions as a checkpoint records them: a log filling a segment by SSR is
    /// recorded as at the end of it (a mounted image opens a new one), so that the
    /// checkpoint's rule "nothing valid beyond a log's position" holds.
    pub fn durable_logs(&self) -> [LogPos; LOG_COUNT] {
        let mut logs = self.logs;
        for log in Log::ALL {
            if self.ssr[log as usize].is_some() {
                logs[log as usize].blkoff = self.segment_blocks;
            }
        }
        logs
    }

    /// Whether `log` fills the holes of a used segment (SSR) rather than appending to a free
    /// one: its next blocks are not consecutive.
    pub fn in_ssr(&self, log: Log) -> bool {
        self.ssr[log as usize].is_some()
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
        let end = self.segment_blocks;
        let l = self.logs[log as usize];
        let (segno, off) = (l.segno, l.blkoff);
        let addr = geo.seg_start(segno) + off;
        self.note_touch(sit, segno);
        let ok = sit.set_valid(segno, off, mtime);
        debug_assert!(ok, "allocating a valid block {addr}");
        if !ok {
            return Err(Error::corrupt(addr as u64, "allocator: block already valid"));
        }
        self.note_alloc(segno, off);
        let l = &mut self.logs[log as usize];
        l.blkoff = match &self.ssr[log as usize] {
            Some(map) => {
                self.ssr_blocks += 1;
                Self::next_hole(map, off + 1, end)
            }
            None => off + 1,
        };
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
        self.note_touch(sit, segno);
        if !sit.set_invalid(segno, geo.blkoff_of(addr)) {
            return Err(Error::corrupt(addr as u64, "freeing a block the SIT says is not in use (doubly owned?)"));
        }
        if sit.get(segno).valid == 0 && self.states[segno as usize] == SegState::Used {
            if crate::mutant!("mutant-reuse-before-cp") {
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
        self.note_touch(sit, segno);
        let fresh = self.states[segno as usize] == SegState::Free;
        if !sit.set_valid(segno, geo.blkoff_of(addr), mtime) {
            return Err(Error::corrupt(addr as u64, "recovered block already in use"));
        }
        self.note_alloc(segno, geo.blkoff_of(addr));
        if fresh {
            self.states[segno as usize] = SegState::Used;
            self.free_count -= 1;
            let wear = sit.get(segno).wear.saturating_add(1);
            sit.set_type_and_wear(segno, log.seg_type(), wear);
        } else if self.states[segno as usize] == SegState::Prefree {
            // Pinned (fsck repair pins what the old checkpoint uses): it holds a valid
            // block now, so the next checkpoint must not free it.
            self.states[segno as usize] = SegState::Used;
        }
        Ok(fresh)
    }

    /// Recovery: keeps `pinned` segments (which hold the node chain and the data its nodes
    /// point at) from reuse until the next checkpoint commits, and moves each log's write
    /// position past everything the crashed mount wrote there that recovery relies on: the
    /// blocks it claimed (valid in the SIT now), the `data` blocks the chain points at
    /// (valid or freed by the replay: a crash during recovery verifies them again), and,
    /// for the log `chain_log`, the rest of its segment when the chain is not empty. Nothing the chain or its data occupies is then overwritten before the
    /// recovery checkpoint commits, and the checkpoint's rule "nothing valid beyond a log's
    /// position" holds.
    ///
    /// Why the chain log's whole segment: the walk ended at a block the crash lost (torn,
    /// never written), and blocks the crashed mount wrote after it (another fsync's batch,
    /// submitted before the flush that never completed) may follow. A node recovery wrote
    /// into the lost block's place would carry the chain's version and name the next
    /// address, so a crash during recovery would let the next walk cross the gap and take
    /// those blocks for the rest of the chain (a group of namespace records completed by
    /// another file's batch: review 50's F1). Its writes go to a fresh segment instead: the
    /// recovery reserve counts one segment more for every log it writes
    /// (`fsync::recovery_segments`), and a full segment opens the next free one at the next
    /// allocation, as always; the pinned segments are not free.
    pub fn pin_and_advance(
        &mut self,
        geo: &Geometry,
        sit: &Sit,
        pinned: &alloc::collections::BTreeSet<u32>,
        chain_log: Log,
        chain: &[BlockAddr],
        data: &[BlockAddr],
    ) {
        self.pin(pinned);
        for log in Log::ALL {
            let l = self.logs[log as usize];
            let e = sit.get(l.segno);
            let mut next = l.blkoff;
            if let Some(off) = (l.blkoff..self.segment_blocks).rev().find(|&o| e.is_valid(o)) {
                next = off + 1;
            }
            let past = |addrs: &[BlockAddr], next: u32| {
                addrs
                    .iter()
                    .filter(|&&a| geo.in_main(a) && geo.segno_of(a) == l.segno)
                    .fold(next, |n, &a| n.max(geo.blkoff_of(a) + 1))
            };
            if log == chain_log && !chain.is_empty() && !crate::mutant!("mutant-recovery-writes-at-the-gap") {
                next = self.segment_blocks;
            } else if log == chain_log {
                next = past(chain, next);
            }
            // The data the chain's nodes point at, wherever it lies (any log's segment).
            next = past(data, next);
            self.logs[log as usize].blkoff = next.min(self.segment_blocks);
        }
    }

    /// Keeps free segments from reuse until the next checkpoint commits (they become
    /// prefree): recovery pins the node chain, fsck repair every segment the checkpoint it
    /// started from still uses.
    pub fn pin(&mut self, segnos: &alloc::collections::BTreeSet<u32>) {
        for &s in segnos {
            if self.states.get(s as usize) == Some(&SegState::Free) {
                self.states[s as usize] = SegState::Prefree;
                self.free_count -= 1;
            }
        }
    }

    /// Opens a fresh segment for every log whose segment is full, so that a checkpoint
    /// records a position the next block of each log is really written at (roll-forward
    /// starts from the warm node log's position).
    pub fn open_full_logs(&mut self, geo: &Geometry, sit: &mut Sit, ssa: &mut Ssa) -> Result<()> {
        for log in Log::ALL {
            self.ensure_room(geo, sit, ssa, log, true)?;
        }
        Ok(())
    }

    /// After a checkpoint commits: prefree segments become free. Returns them (to discard).
    /// A prefree segment that holds a valid block would be a bug (the invariant is that
    /// prefree segments hold none): it stays in use rather than be overwritten.
    pub fn commit(&mut self, sit: &Sit) -> Vec<u32> {
        let mut freed = Vec::new();
        for (s, st) in self.states.iter_mut().enumerate() {
            if *st == SegState::Prefree {
                let valid = sit.get(s as u32).valid;
                debug_assert_eq!(valid, 0, "prefree segment {s} holds valid blocks");
                if valid > 0 {
                    *st = SegState::Used;
                    continue;
                }
                *st = SegState::Free;
                self.trimmed[s] = false;
                freed.push(s as u32);
            }
        }
        self.free_count += freed.len() as u32;
        // Everything is as the new checkpoint says: no segment touched since it, and SSR
        // may fill holes (the checkpoint no longer needs a recovered chain's leftovers).
        self.cp_maps.clear();
        self.ssr_enabled = true;
        freed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEG: u32 = 16;

    fn setup() -> (Geometry, Sit, Ssa, SegmentManager) {
        let geo = Geometry::compute(8 << 8, SEG, 5).unwrap();
        let mut sit = Sit::new_empty(&geo);
        let ssa = Ssa::new_empty(&geo);
        let mut logs = [LogPos::default(); LOG_COUNT];
        for (i, l) in logs.iter_mut().enumerate() {
            l.segno = i as u32;
            sit.set_type_and_wear(i as u32, Log::ALL[i].seg_type(), 0);
        }
        let sm = SegmentManager::from_checkpoint(&geo, &sit, logs).unwrap();
        (geo, sit, ssa, sm)
    }

    fn alloc(g: &Geometry, sit: &mut Sit, ssa: &mut Ssa, sm: &mut SegmentManager) -> BlockAddr {
        sm.alloc(g, sit, ssa, Log::HotData, 0, true).unwrap()
    }

    /// The hot data log fills segment 0 and moves on; a checkpoint commits.
    fn full_segment_0() -> (Geometry, Sit, Ssa, SegmentManager) {
        let (g, mut sit, mut ssa, mut sm) = setup();
        for i in 0..=SEG {
            let a = alloc(&g, &mut sit, &mut ssa, &mut sm);
            assert_eq!(g.segno_of(a) == 0, i < SEG);
        }
        sm.commit(&sit);
        sm.ssr_wanted = true;
        assert_eq!(sm.states[0], SegState::Used);
        (g, sit, ssa, sm)
    }

    #[test]
    fn ssr_skips_holes_the_last_checkpoint_still_references() {
        let (g, mut sit, _ssa, mut sm) = full_segment_0();
        for off in 0..4 {
            sm.invalidate(&g, &mut sit, g.seg_start(0) + off).unwrap();
        }
        // Invalidated after the checkpoint: the checkpoint still references them.
        assert_eq!(sm.ssr_room(&sit), 0, "holes the last checkpoint references were offered for reuse");
        sm.commit(&sit);
        sm.ssr_wanted = true;
        assert_eq!(sm.ssr_room(&sit), 4, "holes become reusable once a checkpoint no longer references them");
    }

    #[test]
    fn ssr_skips_holes_written_since_the_checkpoint() {
        let (g, mut sit, mut ssa, mut sm) = full_segment_0();
        for off in 0..4 {
            sm.invalidate(&g, &mut sit, g.seg_start(0) + off).unwrap();
        }
        sm.commit(&sit);
        sm.ssr_wanted = true;
        // Fill the log's current segment; the next block goes into segment 0's first hole.
        let mut a = alloc(&g, &mut sit, &mut ssa, &mut sm);
        let mut bound = 0;
        while g.segno_of(a) != 0 {
            a = alloc(&g, &mut sit, &mut ssa, &mut sm);
            bound += 1;
            assert!(bound <= SEG, "SSR never chose segment 0");
        }
        assert_eq!(a, g.seg_start(0));
        assert_eq!(sit.get(0).wear, 1, "an SSR pass over a segment counts as wear");
        // Overwritten before a checkpoint (an fsync chain may point at it): not reusable.
        sm.invalidate(&g, &mut sit, a).unwrap();
        // The log keeps filling segment 0 from its snapshot: the next holes, not block 0.
        for off in 1..4 {
            assert_eq!(alloc(&g, &mut sit, &mut ssa, &mut sm), g.seg_start(0) + off);
        }
        assert_ne!(g.segno_of(alloc(&g, &mut sit, &mut ssa, &mut sm)), 0);
        assert_eq!(sm.states[0], SegState::Used);
        assert_eq!(sm.ssr_room(&sit), 0, "a block written since the checkpoint was offered for reuse");
        sm.commit(&sit);
        sm.ssr_wanted = true;
        assert_eq!(sm.ssr_room(&sit), 1);
    }
}
