//! The segment summary area: for every main-area block, its owner — for a node block the
//! node id, for a data block the node id of the node holding its address and the index of
//! the address in that node. Segment cleaning finds what to move through it, and fsck
//! checks that owners and pointers agree.
//!
//! One summary block per segment, two slots each. Summaries of segments written since the
//! last checkpoint are kept in memory and written by the next checkpoint into the slot the
//! previous checkpoint does not use. A segment with no valid blocks has no meaningful
//! summary on disk and is never read.
//!
//! With `FEATURE_INCOMPAT_CP_SUMMARIES`, the summary of a segment a log is filling at the
//! checkpoint travels in the checkpoint's payload instead ([`OpenSummary`]), when the pack
//! has room: a segment still being filled is not rewritten to a scattered slot by every
//! checkpoint. Its slot then holds an older summary, so the payload's copy is kept in the
//! cache, never evicted ("pinned"), for as long as that checkpoint is the current one; the
//! next checkpoint carries it again (still open) or writes it to its slot (closed).

use crate::codec::*;
use crate::error::Result;
use crate::layout::*;
use crate::{read_verified, zero_block, Block, BlockDevice, Nid};
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec;
use alloc::vec::Vec;
use core::mem::{offset_of, size_of};
use zerocopy::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

pub const SSA_MAGIC: u32 = 0x3141_5353; // "SSA1"

/// Bit 15 of a summary entry's `ofs` in a **node** segment: the block is a data block (its
/// `nid` the node holding its address, `ofs & !SSA_OFS_DATA` the slot), written beside an
/// fsync batch's nodes (`FEATURE_INCOMPAT_MIXED_NODE`). Never set in a data segment, whose
/// entries are all data. No slot reaches it: `ADDRS_PER_BLOCK` and `ADDRS_PER_INODE` are
/// below 2^15.
pub const SSA_OFS_DATA: u16 = 1 << 15;
const _: () = assert!(ADDRS_PER_BLOCK < SSA_OFS_DATA as u32);
const _: () = assert!(ADDRS_PER_INODE < SSA_OFS_DATA as u32);

/// One summary entry as it is on disk: the owner of one block of the segment.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy)]
#[repr(C)]
pub struct RawSsaEntry {
    pub nid: U32,
    pub ofs: U16,
}

/// A summary block as it is on disk: one entry per block of the largest segment, reserved
/// bytes, then the metadata footer.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawSsaBlock {
    pub entries: [RawSsaEntry; SEGMENT_BLOCKS_MAX as usize],
    pub reserved: [u8; META_FOOTER_OFFSET - SEGMENT_BLOCKS_MAX as usize * SSA_ENTRY_SIZE],
    pub footer: MetaFooter,
}

const _: () = {
    assert!(size_of::<RawSsaEntry>() == SSA_ENTRY_SIZE);
    assert!(offset_of!(RawSsaEntry, ofs) == 4);
    assert!(size_of::<RawSsaBlock>() == BLOCK_SIZE);
    assert!(offset_of!(RawSsaBlock, reserved) == 3072);
    assert!(offset_of!(RawSsaBlock, footer) == META_FOOTER_OFFSET);
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    pub nid: Nid,
    pub ofs: u16,
}

/// The summary of a segment a log is filling, as a checkpoint's payload carries it
/// (FORMAT.md, *Checkpoint payload*, part 7): the entries of blocks `0..entries.len()`, the
/// rest of the segment's entries zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenSummary {
    pub segno: u32,
    pub entries: Vec<Summary>,
}

/// The head of one [`OpenSummary`] in the checkpoint payload; `entry_count`
/// [`RawSsaEntry`]s follow it.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy)]
#[repr(C)]
pub struct RawOpenSummaryHead {
    pub segno: U32,
    pub entry_count: U32,
}

/// Bytes of one [`OpenSummary`] in the payload before its entries.
pub const OPEN_SUMMARY_HEAD_SIZE: usize = size_of::<RawOpenSummaryHead>();
const _: () = {
    assert!(OPEN_SUMMARY_HEAD_SIZE == 8);
    assert!(offset_of!(RawOpenSummaryHead, entry_count) == 4);
};

impl OpenSummary {
    /// The payload bytes of a summary of `entries` entries.
    pub fn encoded_len(entries: usize) -> usize {
        OPEN_SUMMARY_HEAD_SIZE + entries * SSA_ENTRY_SIZE
    }

    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        let head = RawOpenSummaryHead { segno: self.segno.into(), entry_count: (self.entries.len() as u32).into() };
        out.extend_from_slice(head.as_bytes());
        for e in &self.entries {
            out.extend_from_slice(RawSsaEntry { nid: e.nid.into(), ofs: e.ofs.into() }.as_bytes());
        }
    }

    /// The summary block this stands for (unsealed: it is never written as a block).
    fn to_block(&self) -> Box<Block> {
        let mut b = zero_block();
        let raw = &mut view_mut::<RawSsaBlock>(&mut b).entries;
        for (r, e) in raw.iter_mut().zip(&self.entries) {
            *r = RawSsaEntry { nid: e.nid.into(), ofs: e.ofs.into() };
        }
        b
    }
}

/// What [`Ssa::flush`] made of the changed summaries: the slots the pack records, and the
/// summaries it carries in its payload.
pub(crate) struct SsaFlush {
    pub slots: Vec<u8>,
    pub summaries: Vec<OpenSummary>,
}

pub struct Ssa {
    cache: BTreeMap<u32, Box<Block>>,
    dirty: BTreeSet<u32>,
    /// Segments whose current summary is in the current checkpoint's payload (their slots
    /// are stale): never evicted, and written (to the payload or a slot) by the next
    /// checkpoint. At most `LOG_COUNT`.
    pinned: BTreeSet<u32>,
    pub slots: Vec<u8>,
    cache_max: usize,
}

impl Ssa {
    pub fn new_empty(geo: &Geometry) -> Ssa {
        Ssa {
            cache: BTreeMap::new(),
            dirty: BTreeSet::new(),
            pinned: BTreeSet::new(),
            slots: vec![0; geo.main_segments as usize],
            cache_max: 256,
        }
    }

    pub fn with_slots(geo: &Geometry, slots: Vec<u8>) -> Ssa {
        let mut s = Ssa::new_empty(geo);
        s.slots = slots;
        s
    }

    /// The summaries of the checkpoint `cp` (mount, repair): its slots, and the summaries
    /// its payload carries, cached and pinned (their slots are stale).
    pub fn from_checkpoint(geo: &Geometry, cp: &crate::checkpoint::Checkpoint) -> Ssa {
        let mut s = Ssa::with_slots(geo, cp.ssa_slots.clone());
        s.adopt_payload(&cp.summaries);
        s
    }

    fn adopt_payload(&mut self, summaries: &[OpenSummary]) {
        for sum in summaries {
            self.cache.insert(sum.segno, sum.to_block());
            if !crate::mutant!("mutant-cpsum-unpinned") {
                self.pinned.insert(sum.segno);
            }
        }
    }

    /// An online grow committed: the new segments' summaries are in slot 0 (never read
    /// before the segment is opened, which starts its summary afresh).
    pub(crate) fn grow_to(&mut self, geo: &Geometry) {
        self.slots.resize(geo.main_segments.max(self.slots.len() as u32) as usize, 0);
    }

    /// Starts a fresh summary for a segment being opened for writing (its old summary
    /// describes no valid block and is not read).
    pub fn reset(&mut self, segno: u32) {
        if !self.cache.contains_key(&segno) {
            self.make_room();
        }
        self.cache.insert(segno, zero_block());
        self.dirty.insert(segno);
    }

    /// Keeps the clean summaries within `cache_max` before one more is cached: evicts a
    /// clean one (bounded: one pass). Dirty summaries stay until the checkpoint writes them
    /// (they count toward the dirty-memory bound, `Filesystem::dirty_bytes`). Without this
    /// on `reset`, every segment opened since the mount kept its summary: a run of fsyncs
    /// (which opens segment after segment) grew the cache by 4 KiB per segment.
    fn make_room(&mut self) {
        if self.cache.len() >= self.cache_max {
            let victim = self.cache.keys().copied().find(|s| !self.dirty.contains(s) && !self.pinned.contains(s));
            if let Some(v) = victim {
                self.cache.remove(&v);
            }
        }
    }

    fn load<D: BlockDevice>(
        &mut self,
        dev: &mut D,
        geo: &Geometry,
        segno: u32,
        cp_version: u64,
    ) -> Result<&mut Box<Block>> {
        if !self.cache.contains_key(&segno) {
            self.make_room();
            let addr = geo.ssa_addr(segno, self.slots[segno as usize]);
            let mut b = zero_block();
            // Read once more when it fails its checks (`read_twice_if`).
            read_verified(dev, addr, &mut b, |b| {
                meta_check(b, addr, SSA_MAGIC, segno, cp_version, "SSA block: bad magic")
            })?;
            self.cache.insert(segno, b);
        }
        Ok(self.cache.get_mut(&segno).expect("just inserted"))
    }

    pub fn get<D: BlockDevice>(&mut self, dev: &mut D, geo: &Geometry, addr: u32, cp_version: u64) -> Result<Summary> {
        let segno = geo.segno_of(addr);
        let b = self.load(dev, geo, segno, cp_version)?;
        let raw = &view::<RawSsaBlock>(b).entries[geo.blkoff_of(addr) as usize];
        Ok(Summary { nid: raw.nid.get(), ofs: raw.ofs.get() })
    }

    /// Records the owner of a block just allocated. The segment's summary is loaded first
    /// if it is not cached (an open segment carried over from the checkpoint), so that the
    /// owners of its earlier blocks are kept.
    pub fn set<D: BlockDevice>(
        &mut self,
        dev: &mut D,
        geo: &Geometry,
        addr: u32,
        s: Summary,
        cp_version: u64,
    ) -> Result<()> {
        let segno = geo.segno_of(addr);
        let b = self.load(dev, geo, segno, cp_version)?;
        view_mut::<RawSsaBlock>(b).entries[geo.blkoff_of(addr) as usize] =
            RawSsaEntry { nid: s.nid.into(), ofs: s.ofs.into() };
        self.dirty.insert(segno);
        Ok(())
    }

    /// Summaries changed since the last checkpoint (held in memory until it writes them).
    pub fn dirty_count(&self) -> usize {
        self.dirty.len()
    }

    pub fn dirty_segments(&self) -> Vec<u32> {
        self.dirty.iter().copied().collect()
    }

    pub fn encode(&self, segno: u32, cp_version: u64) -> Box<Block> {
        let mut b = self.cache.get(&segno).cloned().unwrap_or_else(zero_block);
        meta_seal(&mut b, SSA_MAGIC, segno, cp_version);
        b
    }

    pub fn commit_written(&mut self) {
        self.dirty.clear();
    }

    /// A checkpoint's SSA step: every changed summary, and every one the current checkpoint
    /// carries in its payload, is either carried in the new checkpoint's payload — a
    /// segment one of the logs is filling (`open`), while `room` payload bytes last — or
    /// written to its other slot (counting each in `blocks_written`). Summaries have no
    /// journal. Changes nothing in memory: [`Ssa::publish`] does, after the commit.
    pub(crate) fn flush<D: BlockDevice>(
        &self,
        dev: &mut D,
        geo: &Geometry,
        cp_version: u64,
        open: &[u32],
        mut room: usize,
        blocks_written: &mut u64,
    ) -> Result<SsaFlush> {
        let mut summaries = Vec::new();
        let mut to_slots = Vec::new();
        for segno in self.dirty.union(&self.pinned).copied() {
            let entries = self.owned_prefix(segno)?;
            let len = OpenSummary::encoded_len(entries.len());
            if open.contains(&segno) && len <= room {
                room -= len;
                summaries.push(OpenSummary { segno, entries });
            } else {
                to_slots.push(segno);
            }
        }
        let block = |segno, s| (geo.ssa_addr(segno, s), self.encode(segno, cp_version));
        let f = crate::checkpoint::flush_slotted::<_, ()>(dev, &self.slots, None, to_slots, block, blocks_written)?;
        Ok(SsaFlush { slots: f.slots, summaries })
    }

    /// A cached summary's entries up to its last nonzero one (the rest are zero: blocks not
    /// written yet, or never owned).
    /// Dirty and pinned summaries are never evicted: one missing is a bug, refused (the
    /// checkpoint fails and the filesystem turns read-only) rather than written empty.
    fn owned_prefix(&self, segno: u32) -> Result<Vec<Summary>> {
        let Some(b) = self.cache.get(&segno) else {
            debug_assert!(false, "summary of segment {segno} to flush is not cached");
            return Err(crate::error::Error::Invalid("SSA: a summary to write is not cached"));
        };
        let raw = &view::<RawSsaBlock>(b).entries;
        let n = raw.iter().rposition(|e| e.nid.get() != 0 || e.ofs.get() != 0).map_or(0, |i| i + 1);
        Ok(raw[..n].iter().map(|e| Summary { nid: e.nid.get(), ofs: e.ofs.get() }).collect())
    }

    /// After the pack of an [`Ssa::flush`] committed: its slots are current, the summaries
    /// it carries are pinned (and only those), nothing dirty.
    pub(crate) fn publish(&mut self, slots: Vec<u8>, summaries: &[OpenSummary]) {
        debug_assert_eq!(slots.len(), self.slots.len(), "SSA slot bitmap of another geometry");
        self.slots = slots;
        self.pinned.clear();
        if !crate::mutant!("mutant-cpsum-unpinned") {
            self.pinned.extend(summaries.iter().map(|s| s.segno));
        }
        self.commit_written();
    }

    /// Whether segment `segno`'s current summary is the checkpoint payload's (its slot is
    /// stale).
    pub fn in_payload(&self, segno: u32) -> bool {
        self.pinned.contains(&segno)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemDevice;

    /// A summary of an open segment goes into the payload only while the pack has room;
    /// past it, and for a segment no log is filling, it is written to its other slot.
    #[test]
    fn open_summaries_ride_the_payload_while_there_is_room() {
        let geo = Geometry::compute(2048, 16, 5).unwrap();
        let mut dev = MemDevice::new(2048);
        let mut ssa = Ssa::new_empty(&geo);
        for segno in [3, 5, 7] {
            ssa.reset(segno);
            let addr = geo.seg_start(segno) + 2;
            ssa.set(&mut dev, &geo, addr, Summary { nid: 40 + segno, ofs: 1 }, 1).unwrap();
        }
        let one = OpenSummary::encoded_len(3);
        let mut written = 0;
        // Room for one: segment 3 rides, 5 (open, no room) and 7 (closed) go to slots.
        let f = ssa.flush(&mut dev, &geo, 2, &[3, 5], one, &mut written).unwrap();
        assert_eq!(
            f.summaries,
            vec![OpenSummary {
                segno: 3,
                entries: vec![Summary::default(), Summary::default(), Summary { nid: 43, ofs: 1 }],
            }]
        );
        assert_eq!(written, 2);
        assert_eq!((f.slots[3], f.slots[5], f.slots[7]), (0, 1, 1));
        ssa.publish(f.slots, &f.summaries);
        assert!(ssa.in_payload(3) && !ssa.in_payload(5));
        // The next checkpoint, nothing changed, segment 3 no longer open: to its slot.
        let mut written = 0;
        let f = ssa.flush(&mut dev, &geo, 3, &[5], usize::MAX, &mut written).unwrap();
        assert!(f.summaries.is_empty());
        assert_eq!((written, f.slots[3]), (1, 1));
        ssa.publish(f.slots, &f.summaries);
        assert!(!ssa.in_payload(3));
        assert_eq!(ssa.get(&mut dev, &geo, geo.seg_start(3) + 2, 3).unwrap(), Summary { nid: 43, ofs: 1 });
    }
}
