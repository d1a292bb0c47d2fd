//! The segment information table: per main-area segment, the count and bitmap of valid
//! blocks, the log type that wrote it, its age (caller's time of last write) and its wear
//! (how many times it was opened for writing).
//!
//! Held fully in memory; made durable by checkpoints through the SIT journal (few changed
//! segments) or by rewriting SIT blocks into their alternate slots.

use crate::checkpoint::{flush_slotted, TableFlush};
use crate::codec::*;
use crate::error::{Error, Result};
use crate::layout::*;
use crate::{read_verified, zero_block, Block, BlockDevice};
use alloc::collections::BTreeSet;
use alloc::vec;
use alloc::vec::Vec;
use core::mem::{offset_of, size_of};
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

pub const SIT_MAGIC: u32 = 0x3154_4953; // "SIT1"

/// One SIT entry as it is on disk (also the entry of the checkpoint's SIT journal).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy)]
#[repr(C)]
pub struct RawSitEntry {
    pub valid: U16,
    pub seg_type: u8,
    /// Always zero.
    pub flags: u8,
    pub wear: U32,
    pub mtime: U64,
    pub bitmap: [u8; SIT_BITMAP_BYTES],
}

/// A SIT block as it is on disk: entries, reserved bytes, then the metadata footer.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawSitBlock {
    pub entries: [RawSitEntry; SIT_ENTRIES_PER_BLOCK as usize],
    pub reserved: [u8; META_FOOTER_OFFSET - SIT_ENTRIES_PER_BLOCK as usize * SIT_ENTRY_SIZE],
    pub footer: MetaFooter,
}

pub const SIT_OFF_VALID: usize = offset_of!(RawSitEntry, valid);
pub const SIT_OFF_TYPE: usize = offset_of!(RawSitEntry, seg_type);
pub const SIT_OFF_FLAGS: usize = offset_of!(RawSitEntry, flags);
pub const SIT_OFF_WEAR: usize = offset_of!(RawSitEntry, wear);
pub const SIT_OFF_MTIME: usize = offset_of!(RawSitEntry, mtime);
pub const SIT_OFF_BITMAP: usize = offset_of!(RawSitEntry, bitmap);

const _: () = {
    assert!(size_of::<RawSitEntry>() == SIT_ENTRY_SIZE);
    assert!(SIT_OFF_VALID == 0);
    assert!(SIT_OFF_TYPE == 2);
    assert!(SIT_OFF_FLAGS == 3);
    assert!(SIT_OFF_WEAR == 4);
    assert!(SIT_OFF_MTIME == 8);
    assert!(SIT_OFF_BITMAP == 16);
    assert!(size_of::<RawSitBlock>() == BLOCK_SIZE);
    assert!(offset_of!(RawSitBlock, reserved) == 4000);
    assert!(offset_of!(RawSitBlock, footer) == META_FOOTER_OFFSET);
};

/// Segment types as stored: 0 none, otherwise the log index + 1.
pub const SEG_TYPE_NONE: u8 = 0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegEntry {
    pub valid: u16,
    pub seg_type: u8,
    pub wear: u32,
    pub mtime: u64,
    pub bitmap: [u8; SIT_BITMAP_BYTES],
}

impl Default for SegEntry {
    fn default() -> Self {
        SegEntry { valid: 0, seg_type: SEG_TYPE_NONE, wear: 0, mtime: 0, bitmap: [0; SIT_BITMAP_BYTES] }
    }
}

const _: () = assert!(SIT_BITMAP_BYTES.is_multiple_of(8), "from_raw reads the bitmap in u64 words");

impl SegEntry {
    /// Whether the segment was written by a node log (types 4..=6): its summary entries name
    /// nodes, and, with `FEATURE_INCOMPAT_MIXED_NODE`, data blocks flagged
    /// [`crate::ssa::SSA_OFS_DATA`].
    pub fn holds_nodes(&self) -> bool {
        (self.seg_type as usize) > crate::segment::Log::ColdData.seg_type() as usize
            && (self.seg_type as usize) <= crate::layout::LOG_COUNT
    }

    #[inline]
    pub fn is_valid(&self, blkoff: u32) -> bool {
        self.bitmap[(blkoff / 8) as usize] & (1 << (blkoff % 8)) != 0
    }

    /// The entry as it is stored.
    pub fn to_raw(&self) -> RawSitEntry {
        RawSitEntry {
            valid: self.valid.into(),
            seg_type: self.seg_type,
            flags: 0,
            wear: self.wear.into(),
            mtime: self.mtime.into(),
            bitmap: self.bitmap,
        }
    }

    /// Writes the entry into the first [`SIT_ENTRY_SIZE`] bytes of `out`.
    pub fn encode(&self, out: &mut [u8]) {
        out[..SIT_ENTRY_SIZE].copy_from_slice(self.to_raw().as_bytes());
    }

    /// Decodes and checks an entry: the count must match the bitmap, the bitmap must not
    /// cover blocks beyond the segment, and the type must be known.
    pub fn from_raw(raw: &RawSitEntry, segment_blocks: u32, addr: u64) -> Result<SegEntry> {
        let e = SegEntry {
            valid: raw.valid.get(),
            seg_type: raw.seg_type,
            wear: raw.wear.get(),
            mtime: raw.mtime.get(),
            bitmap: raw.bitmap,
        };
        // A word at a time: every mount and fsck decodes every entry (the byte loop was a
        // tenth of the crash explorer's time). Bitmap byte `k` of a word is its bits 8k..8k+7.
        let used_bytes = (segment_blocks / 8) as usize;
        let mut ones = 0u32;
        let mut beyond = 0u64; // bits of the bytes at or past `used_bytes`
        for (w, chunk) in e.bitmap.chunks_exact(8).enumerate() {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(chunk);
            let word = u64::from_le_bytes(bytes);
            ones += word.count_ones();
            let first = w * 8;
            if used_bytes <= first {
                beyond |= word;
            } else if used_bytes < first + 8 {
                beyond |= word >> ((used_bytes - first) * 8);
            }
        }
        if ones != e.valid as u32 {
            return Err(Error::corrupt(addr, "SIT: valid count does not match the bitmap"));
        }
        if beyond != 0 {
            return Err(Error::corrupt(addr, "SIT: bitmap covers blocks beyond the segment"));
        }
        if e.seg_type as usize > LOG_COUNT {
            return Err(Error::corrupt(addr, "SIT: unknown segment type"));
        }
        Ok(e)
    }

    /// As [`SegEntry::from_raw`], from the first [`SIT_ENTRY_SIZE`] bytes of `inp` (fewer
    /// bytes are a Corruption error at `addr`).
    pub fn decode(inp: &[u8], segment_blocks: u32, addr: u64) -> Result<SegEntry> {
        let (raw, _) = RawSitEntry::ref_from_prefix(inp).map_err(|_| Error::corrupt(addr, "SIT: entry cut short"))?;
        SegEntry::from_raw(raw, segment_blocks, addr)
    }
}

/// What [`Sit::load_tolerant`] returns: the table, which entries were read intact, and
/// each damage found as (SIT block address, reason).
pub type TolerantSit = (Sit, Vec<bool>, Vec<(u64, Error)>);

pub struct Sit {
    pub entries: Vec<SegEntry>,
    /// Sum of the valid counts, kept up to date (hot-path space checks read it).
    total_valid: u64,
    dirty: BTreeSet<u32>,
    pub slots: Vec<u8>,
    /// Set by fsck repair: the next checkpoint rewrites every SIT block (no journal).
    rewrite_all: bool,
}

impl Sit {
    pub fn new_empty(geo: &Geometry) -> Sit {
        Sit {
            entries: vec![SegEntry::default(); geo.main_segments as usize],
            total_valid: 0,
            dirty: BTreeSet::new(),
            slots: vec![0; geo.sit_blocks as usize],
            rewrite_all: false,
        }
    }

    /// As [`Sit::load`], for fsck repair: a SIT block or entry that fails its checks does
    /// not fail the load. Returns the table (damaged entries left empty), which segments'
    /// entries were read intact, and each damage as (SIT block address, reason). Only I/O
    /// errors are errors.
    pub fn load_tolerant<D: BlockDevice>(
        dev: &mut D,
        geo: &Geometry,
        slots: Vec<u8>,
        journal: &[(u32, SegEntry)],
        cp_version: u64,
    ) -> Result<TolerantSit> {
        let mut sit = Sit::new_empty(geo);
        sit.slots = slots;
        let mut known = vec![false; geo.main_segments as usize];
        let mut damaged = Vec::new();
        let mut buf = zero_block();
        for i in 0..geo.sit_blocks {
            let addr = geo.sit_addr(i, sit.slots[i as usize]);
            let check = |b: &Block| meta_check(b, addr, SIT_MAGIC, i, cp_version, "SIT block: bad magic");
            if let Err(e) = read_verified(dev, addr, &mut buf, check) {
                damaged.push((addr, e));
                continue;
            }
            for (j, raw) in view::<RawSitBlock>(&buf).entries.iter().enumerate() {
                let segno = i * SIT_ENTRIES_PER_BLOCK + j as u32;
                if segno >= geo.main_segments {
                    break;
                }
                match SegEntry::from_raw(raw, geo.segment_blocks, addr) {
                    Ok(e) => {
                        sit.entries[segno as usize] = e;
                        known[segno as usize] = true;
                    }
                    Err(e) => damaged.push((addr, e)),
                }
            }
        }
        for &(segno, e) in journal {
            if segno < geo.main_segments {
                sit.entries[segno as usize] = e;
                known[segno as usize] = true;
            }
        }
        sit.total_valid = sit.entries.iter().map(|e| e.valid as u64).sum();
        Ok((sit, known, damaged))
    }

    /// Fsck repair: replaces every entry and makes the next checkpoint write every SIT
    /// block whole.
    pub fn replace_all(&mut self, entries: Vec<SegEntry>) {
        debug_assert_eq!(entries.len(), self.entries.len());
        self.entries = entries;
        self.total_valid = self.entries.iter().map(|e| e.valid as u64).sum();
        self.rewrite_all = true;
    }

    /// True when the next checkpoint must write SIT blocks rather than journal entries.
    pub fn needs_block_write(&self) -> bool {
        self.rewrite_all || self.dirty.len() > CP_SIT_JOURNAL_MAX as usize
    }

    pub fn load<D: BlockDevice>(
        dev: &mut D,
        geo: &Geometry,
        slots: Vec<u8>,
        journal: &[(u32, SegEntry)],
        cp_version: u64,
    ) -> Result<Sit> {
        let mut sit = Sit::new_empty(geo);
        sit.slots = slots;
        let mut buf = zero_block();
        for i in 0..geo.sit_blocks {
            let addr = geo.sit_addr(i, sit.slots[i as usize]);
            // Read once more when it fails its checks (`read_twice_if`).
            read_verified(dev, addr, &mut buf, |b| {
                meta_check(b, addr, SIT_MAGIC, i, cp_version, "SIT block: bad magic")
            })?;
            for (j, raw) in view::<RawSitBlock>(&buf).entries.iter().enumerate() {
                let segno = i * SIT_ENTRIES_PER_BLOCK + j as u32;
                if segno >= geo.main_segments {
                    break;
                }
                sit.entries[segno as usize] = SegEntry::from_raw(raw, geo.segment_blocks, addr)?;
            }
        }
        for &(segno, e) in journal {
            if segno >= geo.main_segments {
                return Err(Error::corrupt(0, "checkpoint: SIT journal segment out of range"));
            }
            sit.entries[segno as usize] = e;
            sit.dirty.insert(segno);
        }
        sit.total_valid = sit.entries.iter().map(|e| e.valid as u64).sum();
        Ok(sit)
    }

    /// An online grow committed (`Filesystem::grow`): the segments of `geo`'s larger main
    /// area are added free (no valid block), the SIT blocks it adds current in slot 0.
    pub(crate) fn grow_to(&mut self, geo: &Geometry) {
        let n = (geo.main_segments as usize).max(self.entries.len());
        self.entries.resize(n, SegEntry::default());
        self.slots.resize(geo.sit_blocks.max(self.slots.len() as u32) as usize, 0);
    }

    /// Valid blocks over the whole main area.
    pub fn valid_total(&self) -> u64 {
        debug_assert_eq!(self.total_valid, self.entries.iter().map(|e| e.valid as u64).sum::<u64>());
        self.total_valid
    }

    pub fn get(&self, segno: u32) -> &SegEntry {
        &self.entries[segno as usize]
    }

    /// Marks block `blkoff` of `segno` valid. Returns false if it already was (a bug).
    pub fn set_valid(&mut self, segno: u32, blkoff: u32, mtime: u64) -> bool {
        let e = &mut self.entries[segno as usize];
        let (byte, bit) = ((blkoff / 8) as usize, 1u8 << (blkoff % 8));
        if e.bitmap[byte] & bit != 0 {
            return false;
        }
        e.bitmap[byte] |= bit;
        e.valid += 1;
        self.total_valid += 1;
        e.mtime = e.mtime.max(mtime);
        self.dirty.insert(segno);
        true
    }

    /// Marks a block invalid. Returns false if it was not valid (a bug or corruption).
    pub fn set_invalid(&mut self, segno: u32, blkoff: u32) -> bool {
        let e = &mut self.entries[segno as usize];
        let (byte, bit) = ((blkoff / 8) as usize, 1u8 << (blkoff % 8));
        if e.bitmap[byte] & bit == 0 {
            return false;
        }
        e.bitmap[byte] &= !bit;
        e.valid -= 1;
        self.total_valid -= 1;
        self.dirty.insert(segno);
        true
    }

    pub fn set_type_and_wear(&mut self, segno: u32, seg_type: u8, wear: u32) {
        let e = &mut self.entries[segno as usize];
        e.seg_type = seg_type;
        e.wear = wear;
        self.dirty.insert(segno);
    }

    pub fn dirty_count(&self) -> usize {
        self.dirty.len()
    }

    pub fn journal_entries(&self) -> Vec<(u32, SegEntry)> {
        self.dirty.iter().map(|&s| (s, self.entries[s as usize])).collect()
    }

    pub fn dirty_blocks(&self) -> BTreeSet<u32> {
        if self.rewrite_all {
            return (0..self.slots.len() as u32).collect();
        }
        self.dirty.iter().map(|s| s / SIT_ENTRIES_PER_BLOCK).collect()
    }

    /// SIT block `index` with every segment free (never written), stamped `cp_version`:
    /// what a resize writes for the segments a grown SIT adds. A free entry is all zero.
    pub fn encode_free_block(index: u32, cp_version: u64) -> alloc::boxed::Box<Block> {
        let mut b = zero_block();
        debug_assert!(SegEntry::default().to_raw().as_bytes().iter().all(|&x| x == 0));
        meta_seal(&mut b, SIT_MAGIC, index, cp_version);
        b
    }

    pub fn encode_block(&self, index: u32, cp_version: u64) -> alloc::boxed::Box<Block> {
        let mut b = zero_block();
        let first = (index * SIT_ENTRIES_PER_BLOCK) as usize;
        let entries = self.entries.get(first..).unwrap_or_default();
        let entries = &entries[..entries.len().min(SIT_ENTRIES_PER_BLOCK as usize)];
        for (raw, e) in view_mut::<RawSitBlock>(&mut b).entries.iter_mut().zip(entries) {
            *raw = e.to_raw();
        }
        meta_seal(&mut b, SIT_MAGIC, index, cp_version);
        // Paired assertion: the block passes the checks loading makes and holds the entries.
        debug_assert!(
            meta_check(&b, 0, SIT_MAGIC, index, cp_version, "").is_ok()
                && view::<RawSitBlock>(&b).entries.iter().zip(entries).all(|(raw, e)| SegEntry::from_raw(
                    raw,
                    SEGMENT_BLOCKS_MAX,
                    0
                )
                .ok()
                    == Some(*e)),
            "SIT block {index} does not read back as encoded"
        );
        b
    }

    pub fn commit_blocks_written(&mut self) {
        self.dirty.clear();
        self.rewrite_all = false;
    }

    /// A checkpoint's SIT step: journals the changed segment entries in the pack if they
    /// fit, else writes every changed block to its other slot (counting each in
    /// `blocks_written`). Changes nothing in memory: [`Sit::publish`] does, after the commit.
    pub(crate) fn flush<D: BlockDevice>(
        &self,
        dev: &mut D,
        geo: &Geometry,
        cp_version: u64,
        blocks_written: &mut u64,
    ) -> Result<TableFlush<(u32, SegEntry)>> {
        let journal = (!self.needs_block_write()).then(|| self.journal_entries());
        let block = |i, s| (geo.sit_addr(i, s), self.encode_block(i, cp_version));
        flush_slotted(dev, &self.slots, journal, self.dirty_blocks(), block, blocks_written)
    }

    /// After the pack of a [`Sit::flush`] committed: its slots are current and written
    /// changes are forgotten (journaled ones stay dirty for the next pack).
    pub(crate) fn publish(&mut self, slots: Vec<u8>, wrote_blocks: bool) {
        debug_assert_eq!(slots.len(), self.slots.len(), "SIT slot bitmap of another geometry");
        self.slots = slots;
        if wrote_blocks {
            self.commit_blocks_written();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The byte-at-a-time rules `from_raw` implements a word at a time.
    fn reference(raw: &RawSitEntry, segment_blocks: u32) -> core::result::Result<(), &'static str> {
        let ones: u32 = raw.bitmap.iter().map(|b| b.count_ones()).sum();
        if ones != raw.valid.get() as u32 {
            return Err("count");
        }
        if raw.bitmap.iter().skip((segment_blocks / 8) as usize).any(|&b| b != 0) {
            return Err("beyond");
        }
        if raw.seg_type as usize > LOG_COUNT {
            return Err("type");
        }
        Ok(())
    }

    fn verdict(r: Result<SegEntry>) -> core::result::Result<(), &'static str> {
        match r {
            Ok(_) => Ok(()),
            Err(Error::Corrupt { reason, .. }) if reason.contains("valid count") => Err("count"),
            Err(Error::Corrupt { reason, .. }) if reason.contains("beyond") => Err("beyond"),
            Err(Error::Corrupt { reason, .. }) if reason.contains("type") => Err("type"),
            Err(e) => panic!("unexpected error {e}"),
        }
    }

    proptest! {
        /// Every segment size, bitmaps with bits anywhere (sparse, so that both the
        /// in-segment and the beyond-the-segment cases are common), right and wrong counts.
        #[test]
        fn sit_entry_decode_matches_the_byte_rules(
            size_log2 in 4u32..=9,
            bits in proptest::collection::vec(0usize..SIT_BITMAP_BYTES * 8, 0..12),
            count_delta in -1i32..=1,
            seg_type in 0u8..=(LOG_COUNT as u8 + 1),
        ) {
            let segment_blocks = 1u32 << size_log2;
            let mut bitmap = [0u8; SIT_BITMAP_BYTES];
            for b in bits {
                bitmap[b / 8] |= 1 << (b % 8);
            }
            let ones: u32 = bitmap.iter().map(|b| b.count_ones()).sum();
            let valid = (ones as i32 + count_delta).max(0) as u16;
            let raw = RawSitEntry {
                valid: valid.into(),
                seg_type,
                flags: 0,
                wear: 3.into(),
                mtime: 9.into(),
                bitmap,
            };
            prop_assert_eq!(verdict(SegEntry::from_raw(&raw, segment_blocks, 77)), reference(&raw, segment_blocks));
        }
    }

    #[test]
    fn a_bit_just_past_the_segment_is_corruption() {
        for size_log2 in 4..=8u32 {
            let segment_blocks = 1u32 << size_log2;
            let mut bitmap = [0u8; SIT_BITMAP_BYTES];
            bitmap[(segment_blocks / 8) as usize] = 1;
            let raw = RawSitEntry { valid: 1.into(), seg_type: 1, flags: 0, wear: 0.into(), mtime: 0.into(), bitmap };
            assert_eq!(verdict(SegEntry::from_raw(&raw, segment_blocks, 5)), Err("beyond"), "{segment_blocks}");
            let mut inside = bitmap;
            inside[(segment_blocks / 8) as usize] = 0;
            inside[(segment_blocks / 8) as usize - 1] = 0x80;
            let raw = RawSitEntry { bitmap: inside, ..raw };
            assert_eq!(verdict(SegEntry::from_raw(&raw, segment_blocks, 5)), Ok(()), "{segment_blocks}");
        }
    }
}
