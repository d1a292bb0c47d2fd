//! The node address table: node id → (inode number, block address), and free node ids.
//!
//! The whole table is held in memory (8 bytes a node id; nid count is a quarter of the
//! main-area blocks). Changes are made in memory and become durable only with a
//! checkpoint, either in the checkpoint's NAT journal (few changes) or by rewriting the
//! changed NAT blocks into their alternate slots (many changes).
//!
//! Invariant: a node id freed since the last checkpoint is not handed out again until a
//! checkpoint has made the free durable, so the last checkpoint's view of every nid stays
//! true on disk until it is superseded.

use crate::checkpoint::{flush_slotted, TableFlush};
use crate::codec::*;
use crate::error::{Error, Result};
use crate::layout::*;
use crate::{read_verified, zero_block, Block, BlockAddr, BlockDevice, Nid};
use alloc::collections::BTreeSet;
use alloc::vec;
use alloc::vec::Vec;
use core::mem::{offset_of, size_of};
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

pub const NAT_MAGIC: u32 = 0x3154_414E; // "NAT1"

/// One NAT entry as it is on disk.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy)]
#[repr(C)]
pub struct RawNatEntry {
    pub ino: U32,
    pub addr: U32,
}

/// A NAT block as it is on disk: entries, then the metadata footer.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawNatBlock {
    pub entries: [RawNatEntry; NAT_ENTRIES_PER_BLOCK as usize],
    pub footer: MetaFooter,
}

const _: () = {
    assert!(size_of::<RawNatEntry>() == NAT_ENTRY_SIZE);
    assert!(offset_of!(RawNatEntry, addr) == 4);
    assert!(size_of::<RawNatBlock>() == BLOCK_SIZE);
    assert!(offset_of!(RawNatBlock, footer) == META_FOOTER_OFFSET);
};

impl RawNatEntry {
    #[inline]
    fn get(&self) -> NatEntry {
        NatEntry { ino: self.ino.get(), addr: self.addr.get() }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NatEntry {
    pub ino: u32,
    pub addr: BlockAddr,
}

impl NatEntry {
    #[inline]
    pub fn is_free(&self) -> bool {
        self.ino == 0 && self.addr == NULL_ADDR
    }
}

pub struct Nat {
    entries: Vec<NatEntry>,
    /// Entries that differ from the NAT blocks in their current slots.
    dirty: BTreeSet<Nid>,
    /// Nids freed since the last checkpoint: not reusable until it commits.
    freed: BTreeSet<Nid>,
    /// Nids recovery will give back to inodes it recreates: not handed out meanwhile.
    held: BTreeSet<Nid>,
    /// Current slot of each NAT block, as of the last committed checkpoint.
    pub slots: Vec<u8>,
    cursor: Nid,
    free_count: u32,
    /// Set by fsck repair: the next checkpoint rewrites every NAT block (no journal), so
    /// that damaged blocks are replaced and the rebuilt table is written whole.
    rewrite_all: bool,
}

/// Byte offset of `nid`'s entry in its NAT block.
pub fn entry_offset(nid: Nid) -> usize {
    (nid % NAT_ENTRIES_PER_BLOCK) as usize * size_of::<RawNatEntry>()
}

impl Nat {
    /// A fresh table for mkfs: every nid free except those given.
    pub fn new_empty(geo: &Geometry) -> Nat {
        Nat {
            entries: vec![NatEntry::default(); geo.nid_count as usize],
            dirty: BTreeSet::new(),
            freed: BTreeSet::new(),
            held: BTreeSet::new(),
            slots: vec![0; geo.nat_blocks as usize],
            cursor: ROOT_INO + 1,
            free_count: geo.nid_count - 1,
            rewrite_all: false,
        }
    }

    /// Loads the table from the slots the checkpoint names, then applies its journal.
    pub fn load<D: BlockDevice>(
        dev: &mut D,
        geo: &Geometry,
        slots: Vec<u8>,
        journal: &[(Nid, NatEntry)],
        cp_version: u64,
    ) -> Result<Nat> {
        let mut nat = Nat::new_empty(geo);
        nat.slots = slots;
        let mut buf = zero_block();
        for i in 0..geo.nat_blocks {
            let addr = geo.nat_addr(i, nat.slots[i as usize]);
            // Read once more when it fails its checks (`read_twice_if`).
            read_verified(dev, addr, &mut buf, |b| {
                meta_check(b, addr, NAT_MAGIC, i, cp_version, "NAT block: bad magic")
            })?;
            let first = (i * NAT_ENTRIES_PER_BLOCK) as usize;
            for (e, raw) in nat.entries[first..].iter_mut().zip(&view::<RawNatBlock>(&buf).entries) {
                *e = raw.get();
            }
        }
        for &(nid, e) in journal {
            if nid >= geo.nid_count {
                return Err(Error::corrupt(0, "checkpoint: NAT journal nid out of range"));
            }
            nat.entries[nid as usize] = e;
            nat.dirty.insert(nid);
        }
        if !nat.entries[NULL_NID as usize].is_free() {
            return Err(Error::corrupt(geo.nat_addr(0, nat.slots[0]), "NAT: nid 0 in use"));
        }
        // One pass: every mount and fsck checks every entry (the crash explorer mounts twice
        // per crash state), so the error's block is worked out only for a bad entry.
        let mut free_count = 0u32;
        for (nid, e) in nat.entries.iter().enumerate().skip(1) {
            let outside = e.addr != NULL_ADDR && !geo.in_main(e.addr);
            // An entry is free (no owner, no block) or in use (both): a checkpoint writes
            // every node it names, so half of one is damage (as `load_tolerant` says too).
            let half = (e.addr == NULL_ADDR) != (e.ino == 0);
            if outside || half {
                // The block the entry was read from (a journal entry overrides it but the
                // block still names the nid's place).
                let block = nid as u32 / NAT_ENTRIES_PER_BLOCK;
                let at = geo.nat_addr(block, nat.slots[block as usize]);
                let why = if outside {
                    "NAT: block address outside the main area"
                } else {
                    "NAT: entry with an owner but no block, or a block but no owner"
                };
                return Err(Error::corrupt(at, why));
            }
            free_count += e.is_free() as u32;
        }
        nat.free_count = free_count;
        Ok(nat)
    }

    /// As [`Nat::load`], for fsck repair: a NAT block that fails its checks (or an entry
    /// pointing outside the main area) does not fail the load; its entries are left free
    /// and each damaged block or entry is returned as (NAT block address, reason). Only
    /// I/O errors are errors.
    pub fn load_tolerant<D: BlockDevice>(
        dev: &mut D,
        geo: &Geometry,
        slots: Vec<u8>,
        journal: &[(Nid, NatEntry)],
        cp_version: u64,
    ) -> Result<(Nat, Vec<(u64, Error)>)> {
        let mut nat = Nat::new_empty(geo);
        nat.slots = slots;
        let mut damaged = Vec::new();
        let mut buf = zero_block();
        for i in 0..geo.nat_blocks {
            let addr = geo.nat_addr(i, nat.slots[i as usize]);
            let check = |b: &Block| meta_check(b, addr, NAT_MAGIC, i, cp_version, "NAT block: bad magic");
            if let Err(e) = read_verified(dev, addr, &mut buf, check) {
                damaged.push((addr, e));
                continue;
            }
            for (j, raw) in view::<RawNatBlock>(&buf).entries.iter().enumerate() {
                let nid = i * NAT_ENTRIES_PER_BLOCK + j as u32;
                let e = raw.get();
                let bad = if nid == NULL_NID {
                    !e.is_free()
                } else {
                    e.addr == NEW_ADDR
                        || (e.addr != NULL_ADDR && !geo.in_main(e.addr))
                        || (e.addr == NULL_ADDR) != (e.ino == 0)
                };
                if bad {
                    damaged.push((addr, Error::corrupt(addr, "NAT: entry out of range")));
                    continue;
                }
                nat.entries[nid as usize] = e;
            }
        }
        for &(nid, e) in journal {
            if nid >= geo.nid_count || nid == NULL_NID {
                continue;
            }
            nat.entries[nid as usize] = e;
        }
        nat.free_count = nat.entries.iter().skip(1).filter(|e| e.is_free()).count() as u32;
        Ok((nat, damaged))
    }

    /// An online grow committed (`Filesystem::grow`): the node ids of `geo`'s larger NAT
    /// are added free, their blocks current in slot 0 (where the grow wrote them).
    pub(crate) fn grow_to(&mut self, geo: &Geometry) {
        let added = geo.nid_count.saturating_sub(self.nid_count());
        self.entries.resize(geo.nid_count.max(self.nid_count()) as usize, NatEntry::default());
        self.slots.resize(geo.nat_blocks.max(self.slots.len() as u32) as usize, 0);
        self.free_count += added;
    }

    /// Fsck repair: the next checkpoint writes every NAT block whole.
    pub fn rewrite_all_blocks(&mut self) {
        self.rewrite_all = true;
    }

    /// True when the next checkpoint must write NAT blocks rather than journal entries.
    pub fn needs_block_write(&self) -> bool {
        self.rewrite_all || self.dirty.len() > CP_NAT_JOURNAL_MAX as usize
    }

    pub fn nid_count(&self) -> u32 {
        self.entries.len() as u32
    }

    pub fn get(&self, nid: Nid) -> Option<NatEntry> {
        if nid == NULL_NID {
            return None;
        }
        self.entries.get(nid as usize).copied()
    }

    pub fn set(&mut self, nid: Nid, e: NatEntry) {
        let old = self.entries[nid as usize];
        if old.is_free() && !e.is_free() {
            self.free_count -= 1;
        } else if !old.is_free() && e.is_free() {
            self.free_count += 1;
        }
        self.entries[nid as usize] = e;
        self.dirty.insert(nid);
    }

    /// Node ids in use (including nids allocated but not yet written).
    pub fn used_count(&self) -> u32 {
        self.nid_count() - 1 - self.free_count
    }

    /// Mutant: forgets the most recent-numbered NAT change, so a checkpoint does not record it.
    pub fn mutant_forget_one(&mut self) {
        let victim = self.dirty.iter().copied().rfind(|&n| n != ROOT_INO);
        if let Some(n) = victim {
            self.dirty.remove(&n);
        }
    }

    /// Free nids available now (excludes those freed since the last checkpoint).
    pub fn available(&self) -> u32 {
        self.free_count - self.freed.len() as u32
    }

    /// Nids freed since the last checkpoint (reusable once the next one commits).
    pub fn freed_count(&self) -> u32 {
        self.freed.len() as u32
    }

    /// Hands out a free nid, reserving it for `ino` (its address is NEW_ADDR until written).
    pub fn alloc(&mut self, ino_of: impl FnOnce(Nid) -> u32) -> Result<Nid> {
        if self.available() == 0 {
            return Err(Error::NoSpace);
        }
        let n = self.nid_count();
        // Bounded: at most one pass over the table.
        for _ in 0..n {
            let nid = self.cursor;
            self.cursor = if self.cursor + 1 >= n { ROOT_INO + 1 } else { self.cursor + 1 };
            if nid > ROOT_INO
                && self.entries[nid as usize].is_free()
                && !self.freed.contains(&nid)
                && !self.held.contains(&nid)
            {
                let ino = ino_of(nid);
                self.set(nid, NatEntry { ino, addr: NEW_ADDR });
                return Ok(nid);
            }
        }
        Err(Error::NoSpace)
    }

    /// Frees a nid; it becomes reusable after the next checkpoint.
    pub fn free(&mut self, nid: Nid) {
        self.set(nid, NatEntry::default());
        self.freed.insert(nid);
    }

    /// Entries a checkpoint must record; whether they fit the journal.
    pub fn dirty_count(&self) -> usize {
        self.dirty.len()
    }

    pub fn journal_entries(&self) -> Vec<(Nid, NatEntry)> {
        self.dirty.iter().map(|&nid| (nid, self.entries[nid as usize])).collect()
    }

    /// NAT block `index` with every entry free, stamped `cp_version`: what a resize writes
    /// for the node ids a grown NAT adds (without building a table of them all).
    pub fn encode_free_block(index: u32, cp_version: u64) -> alloc::boxed::Box<Block> {
        let mut b = zero_block();
        meta_seal(&mut b, NAT_MAGIC, index, cp_version);
        b
    }

    /// Encodes NAT block `index` from memory.
    pub fn encode_block(&self, index: u32, cp_version: u64) -> alloc::boxed::Box<Block> {
        let mut b = zero_block();
        let first = (index * NAT_ENTRIES_PER_BLOCK) as usize;
        let entries = &self.entries[first..first + NAT_ENTRIES_PER_BLOCK as usize];
        for (raw, e) in view_mut::<RawNatBlock>(&mut b).entries.iter_mut().zip(entries) {
            // NEW_ADDR never reaches disk: a checkpoint writes every dirty node first.
            debug_assert!(e.addr != NEW_ADDR, "NAT: unwritten node at checkpoint (block {index})");
            *raw = RawNatEntry { ino: e.ino.into(), addr: e.addr.into() };
        }
        meta_seal(&mut b, NAT_MAGIC, index, cp_version);
        // Paired assertion: the block passes the checks `Nat::load` makes and holds the entries.
        debug_assert!(
            meta_check(&b, 0, NAT_MAGIC, index, cp_version, "").is_ok()
                && view::<RawNatBlock>(&b).entries.iter().map(RawNatEntry::get).eq(entries.iter().copied()),
            "NAT block {index} does not read back as encoded"
        );
        b
    }

    /// NAT block indexes holding dirty entries (every block after [`Nat::rewrite_all_blocks`]).
    pub fn dirty_blocks(&self) -> BTreeSet<u32> {
        if self.rewrite_all {
            return (0..self.slots.len() as u32).collect();
        }
        self.dirty.iter().map(|nid| nid / NAT_ENTRIES_PER_BLOCK).collect()
    }

    /// After a checkpoint that wrote all dirty blocks to their alternate slots.
    pub fn commit_blocks_written(&mut self) {
        self.dirty.clear();
        self.rewrite_all = false;
    }

    /// A checkpoint's NAT step: journals the changed entries in the pack if they fit, else
    /// writes every changed block to its other slot (counting each in `blocks_written`).
    /// Changes nothing in memory: [`Nat::publish`] does, once the pack has committed.
    pub(crate) fn flush<D: BlockDevice>(
        &self,
        dev: &mut D,
        geo: &Geometry,
        cp_version: u64,
        blocks_written: &mut u64,
    ) -> Result<TableFlush<(Nid, NatEntry)>> {
        let journal = (!self.needs_block_write()).then(|| self.journal_entries());
        let block = |i, s| (geo.nat_addr(i, s), self.encode_block(i, cp_version));
        flush_slotted(dev, &self.slots, journal, self.dirty_blocks(), block, blocks_written)
    }

    /// After the pack of a [`Nat::flush`] committed: its slots are current, written changes
    /// are forgotten (journaled ones stay dirty: the next pack journals them again), and
    /// node ids freed before it become reusable.
    pub(crate) fn publish(&mut self, slots: Vec<u8>, wrote_blocks: bool) {
        debug_assert_eq!(slots.len(), self.slots.len(), "NAT slot bitmap of another geometry");
        self.slots = slots;
        if wrote_blocks {
            self.commit_blocks_written();
        }
        self.commit();
    }

    /// Recovery: keeps `nid` from being handed out until the next checkpoint commits.
    pub fn hold(&mut self, nid: Nid) {
        self.held.insert(nid);
    }

    /// After any checkpoint commits: freed nids become reusable.
    pub fn commit(&mut self) {
        self.freed.clear();
        self.held.clear();
    }

    /// Iterates over in-use entries (for fsck and inspect).
    pub fn iter_used(&self) -> impl Iterator<Item = (Nid, NatEntry)> + '_ {
        self.entries.iter().enumerate().filter(|(_, e)| !e.is_free()).map(|(n, e)| (n as Nid, *e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::MemDevice;

    /// A NAT written block by block into slot 0 of a fresh device.
    fn store(nat: &Nat, geo: &Geometry, dev: &mut MemDevice) {
        for i in 0..geo.nat_blocks {
            dev.write(geo.nat_addr(i, 0), &nat.encode_block(i, 1), crate::WriteFlags::empty()).unwrap();
        }
    }

    fn load(geo: &Geometry, dev: &mut MemDevice) -> Result<Nat> {
        Nat::load(dev, geo, vec![0; geo.nat_blocks as usize], &[], 1)
    }

    #[test]
    fn nat_load_counts_free_entries_and_refuses_half_entries() {
        let geo = Geometry::compute(2048, 16, 5).unwrap();
        let mut dev = MemDevice::new(2048);
        let mut nat = Nat::new_empty(&geo);
        let main = geo.main_start;
        // Entries in the first and the last NAT block.
        let last = geo.nid_count - 1;
        for (nid, addr) in [(1, main), (2, main + 1), (last, main + 2)] {
            nat.set(nid, NatEntry { ino: nid, addr });
        }
        store(&nat, &geo, &mut dev);
        let loaded = load(&geo, &mut dev).unwrap();
        assert_eq!(loaded.used_count(), 3);
        assert_eq!(loaded.get(last), Some(NatEntry { ino: last, addr: main + 2 }));

        // Each damage names the NAT block the entry lives in.
        let last_block = geo.nat_addr(last / NAT_ENTRIES_PER_BLOCK, 0);
        let cases: [(NatEntry, &str); 3] = [
            (NatEntry { ino: last, addr: NULL_ADDR }, "owner but no block"),
            (NatEntry { ino: 0, addr: main + 5 }, "owner but no block"),
            (NatEntry { ino: last, addr: 3 }, "outside the main area"),
        ];
        for (bad, why) in cases {
            let mut broken = Nat::new_empty(&geo);
            broken.set(last, bad);
            store(&broken, &geo, &mut dev);
            match load(&geo, &mut dev) {
                Err(Error::Corrupt { block, reason }) => {
                    assert_eq!(block, last_block, "{bad:?}");
                    assert!(reason.contains(why), "{bad:?}: {reason}");
                }
                other => panic!("{bad:?}: loaded {:?}", other.map(|n| n.used_count())),
            }
        }
        let mut nid0 = Nat::new_empty(&geo);
        nid0.set(0, NatEntry { ino: 1, addr: main });
        store(&nid0, &geo, &mut dev);
        assert!(matches!(load(&geo, &mut dev), Err(Error::Corrupt { reason: "NAT: nid 0 in use", .. })));
    }
}
