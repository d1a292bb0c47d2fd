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
use crate::{zero_block, Block, BlockDevice, Nid};
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec;
use alloc::vec::Vec;

pub const SSA_MAGIC: u32 = 0x3141_5353; // "SSA1"

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

    /// Starts a fresh summary for a segment being opened for writing (its old summary
    /// describes no valid block and is not read).
    pub fn reset(&mut self, segno: u32) {
        self.cache.insert(segno, zero_block());
        self.dirty.insert(segno);
    }

    fn load<D: BlockDevice>(
        &mut self,
        dev: &mut D,
        geo: &Geometry,
        segno: u32,
        cp_version: u64,
    ) -> Result<&mut Box<Block>> {
        if !self.cache.contains_key(&segno) {
            if self.cache.len() >= self.cache_max {
                // Evict a clean summary (bounded: one pass).
                let victim = self.cache.keys().copied().find(|s| !self.dirty.contains(s));
                if let Some(v) = victim {
                    self.cache.remove(&v);
                }
            }
            let addr = geo.ssa_addr(segno, self.slots[segno as usize]);
            let mut b = zero_block();
            dev.read(addr, &mut b)?;
            meta_check(&b, addr, SSA_MAGIC, segno, cp_version, "SSA block: bad magic")?;
            self.cache.insert(segno, b);
        }
        Ok(self.cache.get_mut(&segno).expect("just inserted"))
    }

    pub fn get<D: BlockDevice>(&mut self, dev: &mut D, geo: &Geometry, addr: u32, cp_version: u64) -> Result<Summary> {
        let segno = geo.segno_of(addr);
        let off = geo.blkoff_of(addr) as usize * SSA_ENTRY_SIZE;
        let b = self.load(dev, geo, segno, cp_version)?;
        Ok(Summary { nid: get_u32(&b[..], off), ofs: get_u16(&b[..], off + 4) })
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
        let off = geo.blkoff_of(addr) as usize * SSA_ENTRY_SIZE;
        let b = self.load(dev, geo, segno, cp_version)?;
        put_u32(&mut b[..], off, s.nid);
        put_u16(&mut b[..], off + 4, s.ofs);
        self.dirty.insert(segno);
        Ok(())
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
}
