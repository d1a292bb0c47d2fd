//! The segment summary area: for every main-area block, its owner — for a node block the
//! node id, for a data block the node id of the node holding its address and the index of
//! the address in that node. Segment cleaning finds what to move through it, and fsck
//! checks that owners and pointers agree.
//!
//! One summary block per segment, two slots each. Summaries of segments written since the
//! last checkpoint are kept in memory and written by the next checkpoint into the slot the
//! previous checkpoint does not use. A segment with no valid blocks has no meaningful
//! summary on disk and is never read.

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

pub struct Ssa {
    cache: BTreeMap<u32, Box<Block>>,
    dirty: BTreeSet<u32>,
    pub slots: Vec<u8>,
    cache_max: usize,
}

impl Ssa {
    pub fn new_empty(geo: &Geometry) -> Ssa {
        Ssa {
            cache: BTreeMap::new(),
            dirty: BTreeSet::new(),
            slots: vec![0; geo.main_segments as usize],
            cache_max: 256,
        }
    }

    pub fn with_slots(geo: &Geometry, slots: Vec<u8>) -> Ssa {
        let mut s = Ssa::new_empty(geo);
        s.slots = slots;
        s
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
            let victim = self.cache.keys().copied().find(|s| !self.dirty.contains(s));
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

    /// A checkpoint's SSA step: writes every changed summary block to its other slot
    /// (counting each in `blocks_written`) and returns the slots the pack records. Summaries
    /// have no journal. Changes nothing in memory: [`Ssa::publish`] does, after the commit.
    pub(crate) fn flush<D: BlockDevice>(
        &self,
        dev: &mut D,
        geo: &Geometry,
        cp_version: u64,
        blocks_written: &mut u64,
    ) -> Result<Vec<u8>> {
        let block = |segno, s| (geo.ssa_addr(segno, s), self.encode(segno, cp_version));
        let f = crate::checkpoint::flush_slotted::<_, ()>(
            dev,
            &self.slots,
            None,
            self.dirty_segments(),
            block,
            blocks_written,
        )?;
        Ok(f.slots)
    }

    /// After the pack of an [`Ssa::flush`] committed: its slots are current, nothing dirty.
    pub(crate) fn publish(&mut self, slots: Vec<u8>) {
        debug_assert_eq!(slots.len(), self.slots.len(), "SSA slot bitmap of another geometry");
        self.slots = slots;
        self.commit_written();
    }
}
