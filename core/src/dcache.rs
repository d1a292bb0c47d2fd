//! The dentry-block cache: directory blocks that were read from the device and passed
//! validation ([`crate::dir`]'s dentry-block checks and their data checksum), kept by
//! device address so that the next lookup in the same directory does not read, checksum
//! and validate them again.
//!
//! Why: a lookup or create in a directory of thousands of names reads a few dentry blocks
//! of its name's bucket in every level; without this cache each of them was read from the
//! device, its data checksum and its own CRC computed and every slot checked, on every
//! call (the explorer's runs of big directories spent a third of their guest time there).
//!
//! Invariants:
//! - An entry holds the bytes the device held at `addr` when they were read, validated as
//!   dentry block `idx` of a directory, with the data checksum `crc` its node gave.
//! - The device content at `addr` cannot have changed since: the filesystem forgets `addr`
//!   before every write to it and every discard over it ([`DentryCache::forget`],
//!   [`DentryCache::forget_range`], called where main-area blocks are written and
//!   discarded). A hit also needs the caller's current pointer (`idx`, `crc`) to match.
//! - Clean blocks by address only: a directory block with a dirty copy in the write-back
//!   cache is read from there. For those, a copy of the bytes that last passed validation is
//!   kept by (inode, index): a dirty block equal to its copy is not validated again (a run
//!   of creates in one directory reads the same few dirty blocks over and over).
//! - At most [`DENTRY_CACHE_BLOCKS_MAX`] entries; eviction is deterministic (by address,
//!   from a cursor that moves on), as everything in the core is.

use crate::error::{Error, Result};
use crate::fs::Filesystem;
use crate::{Block, BlockDevice};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;

/// Blocks kept (1 MiB): enough for the buckets of every level of a few large directories.
pub const DENTRY_CACHE_BLOCKS_MAX: usize = 256;

struct Kept {
    idx: u64,
    crc: u32,
    block: Box<Block>,
}

/// A block handed out for validation: from the device, or a dirty one from the
/// write-back cache.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pending {
    Device { ino: u32, idx: u64, addr: u32, crc: u32 },
    Dirty { ino: u32, idx: u64 },
}

/// See the module header.
#[derive(Default)]
pub(crate) struct DentryCache {
    blocks: BTreeMap<u32, Kept>,
    /// Eviction cursor: the next victim is the first address at or after it.
    cursor: u32,
    /// Copies of dirty blocks (by inode and index) as they last passed validation. A dirty
    /// block whose bytes equal its copy needs no second validation: equality is the whole
    /// test, so nothing has to forget these when the write-back cache changes (a changed
    /// block differs from its copy and is validated again).
    dirty: BTreeMap<(u32, u64), Box<Block>>,
    /// The last block handed out that has not been validated yet. Kept only if
    /// [`Self::keep`] names the same block.
    pending: Option<Pending>,
}

impl DentryCache {
    /// A copy of the block at `addr` if it was validated as dentry block `idx` with data
    /// checksum `crc`.
    pub fn get(&self, addr: u32, idx: u64, crc: u32) -> Option<Box<Block>> {
        let k = self.blocks.get(&addr)?;
        (k.idx == idx && k.crc == crc).then(|| Box::new(*k.block))
    }

    /// Notes that block `idx` of inode `ino` was just read from `addr` (checksum `crc`),
    /// not yet validated.
    pub fn read_from_device(&mut self, ino: u32, idx: u64, addr: u32, crc: u32) {
        self.pending = Some(Pending::Device { ino, idx, addr, crc });
    }

    /// Whether `block`, the dirty block `idx` of `ino`, is byte for byte the copy that last
    /// passed validation. When not, it is noted for [`Self::keep`].
    pub fn dirty_validated(&mut self, ino: u32, idx: u64, block: &Block) -> bool {
        if self.dirty.get(&(ino, idx)).is_some_and(|c| same_bytes(c, block)) {
            return true;
        }
        self.pending = Some(Pending::Dirty { ino, idx });
        false
    }

    /// No block handed out is waiting for its validation.
    pub fn forget_pending(&mut self) {
        self.pending = None;
    }

    /// Block `idx` of `ino` passed validation with the bytes `block`: kept when it is the
    /// block last handed out — by address when it came from the device, as the copy of a
    /// dirty block when it came from the write-back cache.
    pub fn keep(&mut self, ino: u32, idx: u64, block: &Block) {
        let (addr, crc) = match self.pending.take() {
            Some(Pending::Device { ino: i, idx: x, addr, crc }) if (i, x) == (ino, idx) => (addr, crc),
            Some(Pending::Dirty { ino: i, idx: x }) if (i, x) == (ino, idx) => {
                // Bounded like the clean blocks; all copies go at once (they are only a
                // shortcut past validation, and a run of creates refills them).
                if self.dirty.len() >= DENTRY_CACHE_BLOCKS_MAX && !self.dirty.contains_key(&(ino, idx)) {
                    self.dirty.clear();
                }
                self.dirty.insert((ino, idx), Box::new(*block));
                return;
            }
            _ => return,
        };
        if self.blocks.len() >= DENTRY_CACHE_BLOCKS_MAX && !self.blocks.contains_key(&addr) {
            let victim = match self.blocks.range(self.cursor..).next() {
                Some((&a, _)) => a,
                None => *self.blocks.keys().next().expect("the cache is full"),
            };
            self.blocks.remove(&victim);
            self.cursor = victim.wrapping_add(1);
        }
        self.blocks.insert(addr, Kept { idx, crc, block: Box::new(*block) });
        debug_assert!(self.blocks.len() <= DENTRY_CACHE_BLOCKS_MAX);
    }

    /// Forgets everything (`Filesystem::drop_clean_caches`). Dirty copies go too: they only
    /// save a validation.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.dirty.clear();
        self.pending = None;
    }

    /// The device block at `addr` is about to change.
    pub fn forget(&mut self, addr: u32) {
        if matches!(self.pending, Some(Pending::Device { addr: a, .. }) if a == addr) {
            self.pending = None;
        }
        self.blocks.remove(&addr);
    }

    /// The device blocks `addr..addr + count` are about to change (a discard).
    pub fn forget_range(&mut self, addr: u64, count: u64) {
        let doomed = |a: u32| (addr..addr.saturating_add(count)).contains(&(a as u64));
        if matches!(self.pending, Some(Pending::Device { addr: a, .. }) if doomed(a)) {
            self.pending = None;
        }
        // At most DENTRY_CACHE_BLOCKS_MAX entries, and discards are rare.
        self.blocks.retain(|&a, _| !doomed(a));
    }

    /// Blocks kept (for tests).
    pub fn len(&self) -> usize {
        self.blocks.len()
    }
}

impl<D: BlockDevice> Filesystem<D> {
    /// Checks the dentry-block cache against the device (for tests and debugging: it reads
    /// every kept block): each must hold the bytes the device holds at its address.
    /// Returns the blocks checked; a difference is `Error::Corrupt` at that address.
    pub fn verify_dentry_cache(&mut self) -> Result<usize> {
        let mut buf = crate::zero_block();
        let mut checked = 0;
        for (&addr, k) in &self.dentry_cache.blocks {
            self.dev.read(addr as u64, &mut buf)?;
            if buf[..] != k.block[..] {
                return Err(Error::corrupt(addr as u64, "dentry cache: kept block differs from the device"));
            }
            checked += 1;
        }
        Ok(checked)
    }

    /// Blocks in the dentry-block cache.
    pub fn dentry_cache_blocks(&self) -> usize {
        self.dentry_cache.len()
    }
}

/// `a == b`, a word at a time with no early exit: the slice comparison became a call of
/// the byte-at-a-time `memcmp` in the wasm guest, which cost more than the validation it
/// saved (11 % of an exploration's time).
fn same_bytes(a: &Block, b: &Block) -> bool {
    let mut diff = 0u64;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let x = u64::from_le_bytes(x.try_into().expect("8 bytes"));
        let y = u64::from_le_bytes(y.try_into().expect("8 bytes"));
        diff |= x ^ y;
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(v: u8) -> Box<Block> {
        Box::new([v; crate::BLOCK_SIZE])
    }

    #[test]
    fn kept_only_after_a_device_read_of_the_same_block() {
        let mut c = DentryCache::default();
        c.keep(5, 0, &block(1));
        assert_eq!(c.len(), 0, "no device read noted");
        c.read_from_device(5, 0, 100, 7);
        c.keep(5, 1, &block(1));
        assert_eq!(c.len(), 0, "another block validated");
        c.read_from_device(5, 0, 100, 7);
        c.keep(5, 0, &block(1));
        assert_eq!(c.get(100, 0, 7).map(|b| b[0]), Some(1));
        assert!(c.get(100, 1, 7).is_none(), "another index");
        assert!(c.get(100, 0, 8).is_none(), "another checksum");
    }

    #[test]
    fn writes_and_discards_forget_their_blocks() {
        let mut c = DentryCache::default();
        for a in [10u32, 20, 30, 40] {
            c.read_from_device(1, a as u64, a, 0);
            c.keep(1, a as u64, &block(a as u8));
        }
        c.forget(20);
        assert!(c.get(20, 20, 0).is_none());
        c.forget_range(25, 10);
        assert!(c.get(30, 30, 0).is_none());
        assert!(c.get(10, 10, 0).is_some() && c.get(40, 40, 0).is_some());
        // A write between the read and the validation: the block is not kept.
        c.read_from_device(1, 50, 50, 0);
        c.forget(50);
        c.keep(1, 50, &block(5));
        assert!(c.get(50, 50, 0).is_none());
        // A read that was not validated (its parse failed) is not kept by a later keep.
        c.read_from_device(1, 60, 60, 0);
        c.forget_pending();
        c.keep(1, 60, &block(6));
        assert!(c.get(60, 60, 0).is_none());
    }

    #[test]
    fn dirty_blocks_skip_validation_only_when_unchanged() {
        let mut c = DentryCache::default();
        assert!(!c.dirty_validated(3, 0, &block(1)), "never validated");
        c.keep(3, 0, &block(1));
        assert!(c.dirty_validated(3, 0, &block(1)));
        assert!(!c.dirty_validated(3, 0, &block(2)), "changed since");
        for at in [0, 7, 8, crate::BLOCK_SIZE - 1] {
            let mut one = block(1);
            one[at] ^= 0x80;
            assert!(!c.dirty_validated(3, 0, &one), "one byte changed at {at}");
        }
        assert!(!c.dirty_validated(3, 1, &block(1)), "another index");
        assert!(!c.dirty_validated(4, 0, &block(1)), "another directory");
        assert_eq!(c.len(), 0, "a dirty block is never kept by address");
        // Not validated (its parse failed): a later keep of another block does not store it.
        assert!(!c.dirty_validated(3, 5, &block(9)));
        c.forget_pending();
        c.keep(3, 5, &block(9));
        assert!(!c.dirty_validated(3, 5, &block(9)));
    }

    #[test]
    fn bounded_with_deterministic_eviction() {
        let mut c = DentryCache::default();
        for a in 0..(DENTRY_CACHE_BLOCKS_MAX as u32 * 3) {
            c.read_from_device(1, a as u64, a, 0);
            c.keep(1, a as u64, &block(0));
            assert!(c.len() <= DENTRY_CACHE_BLOCKS_MAX);
        }
        assert_eq!(c.len(), DENTRY_CACHE_BLOCKS_MAX);
        let newest = DENTRY_CACHE_BLOCKS_MAX as u32 * 3 - 1;
        assert!(c.get(newest, newest as u64, 0).is_some(), "the newest block is kept");
    }
}
