//! Space preallocated by `fallocate` (mode 0 and `KEEP_SIZE`): the holes of a range are
//! reserved so that later writes into them never fail with ENOSPC, which is what
//! `posix_fallocate` promises.
//!
//! A log-structured filesystem cannot allocate blocks in place — every write goes to the
//! head of a log — so a reservation is a promise about capacity, not about addresses: the
//! reserved holes count as used (statfs shows them so, and other writers get ENOSPC
//! first), and a write that fills one spends the reservation instead of new capacity.
//! Physical room for the write itself is then always obtainable by cleaning, exactly as
//! for an overwrite (`Filesystem::ensure_space_for` with no new blocks). The tree nodes
//! that will address the holes are created (empty) by the fallocate itself, as f2fs
//! does: a write into the range then needs no new node and no node id, which would be
//! capacity and ids the reservation did not hold.
//!
//! Invariants:
//! - a reserved index is a hole: not mapped on disk, not in the write-back cache
//!   (`put_dirty_block` spends the reservation of the block it fills, `free_block_range`
//!   and truncation release the reservations of the range they free);
//! - `Reservations::total` is the sum over inodes of their reserved holes, and is counted
//!   in `Filesystem::used_blocks`;
//! - every reserved hole has its direct node (and the indirect nodes above it).
//!
//! Reservations live in memory for the life of the mount: unmount, a crash (recovery
//! starts with none) and the inode's eviction release them. See DESIGN.md, "fallocate".

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::error::{Error, Result};
use crate::fs::{Filesystem, Timestamp};
use crate::layout::{ADDRS_PER_BLOCK, ADDRS_PER_INODE, BLOCK_SIZE, NEW_ADDR, NULL_ADDR};
use crate::node::inode;
use crate::{BlockDevice, Ino};

/// The reservation of one inode.
#[derive(Debug, Default, Clone)]
struct InodeReservation {
    /// Reserved hole indexes as disjoint, non-adjacent runs `start → end` (exclusive).
    runs: BTreeMap<u64, u64>,
    /// Holes in `runs`.
    hole_count: u64,
}

/// Every inode's reservation; see the module header.
#[derive(Debug, Default, Clone)]
pub struct Reservations {
    by_ino: BTreeMap<Ino, InodeReservation>,
    total: u64,
}

impl Reservations {
    /// Reservations as a mount finds them: `total` reserved holes on an image that keeps
    /// them on disk (the checkpoint's count), none otherwise.
    pub fn with_total(total: u64) -> Reservations {
        Reservations { by_ino: BTreeMap::new(), total }
    }

    /// On disk (`FEATURE_INCOMPAT_PREALLOC`): `count` holes became `NEW_ADDR` pointers.
    pub(crate) fn add_on_disk(&mut self, count: u64) {
        debug_assert!(self.by_ino.is_empty(), "in-memory runs on an image that keeps reservations on disk");
        self.total += count;
    }

    /// On disk: `count` `NEW_ADDR` pointers went (written, freed, or replaced by roll-forward).
    pub(crate) fn release_on_disk(&mut self, count: u64) {
        debug_assert!(self.by_ino.is_empty(), "in-memory runs on an image that keeps reservations on disk");
        debug_assert!(count <= self.total, "more reservations released than held");
        self.total = self.total.saturating_sub(count);
    }

    /// Blocks held back by every reservation (its holes; the nodes addressing them exist
    /// and are counted as any node).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether file block `idx` of `ino` is a reserved hole.
    pub fn contains(&self, ino: Ino, idx: u64) -> bool {
        self.by_ino.get(&ino).and_then(|r| r.runs.range(..=idx).next_back()).is_some_and(|(_, &end)| idx < end)
    }

    #[cfg(test)]
    fn runs_of(&self, ino: Ino) -> Vec<(u64, u64)> {
        self.by_ino.get(&ino).map(|r| r.runs.iter().map(|(&s, &e)| (s, e)).collect()).unwrap_or_default()
    }

    /// Holes reserved for `ino`.
    pub fn hole_count(&self, ino: Ino) -> u64 {
        self.by_ino.get(&ino).map_or(0, |r| r.hole_count)
    }

    /// Adds the runs (disjoint from what `ino` has reserved), each joined with a run it
    /// touches on either side (only the neighbours are looked at: O(log runs) per run,
    /// however fragmented the reservation).
    fn add(&mut self, ino: Ino, runs: &[(u64, u64)]) {
        let r = self.by_ino.entry(ino).or_default();
        for &(start, end) in runs {
            debug_assert!(start < end);
            r.hole_count += end - start;
            self.total += end - start;
            let (mut s, mut e) = (start, end);
            if let Some((&ls, &le)) = r.runs.range(..start).next_back() {
                if le == start {
                    r.runs.remove(&ls);
                    s = ls;
                }
            }
            if let Some(re) = r.runs.remove(&end) {
                e = re;
            }
            r.runs.insert(s, e);
        }
        self.check(ino);
    }

    /// Releases the reserved holes of `ino` in `from..to`. Returns the blocks released.
    pub fn release_range(&mut self, ino: Ino, from: u64, to: u64) -> u64 {
        let Some(r) = self.by_ino.get_mut(&ino) else { return 0 };
        if from >= to {
            return 0;
        }
        let mut released = 0;
        // Runs overlapping `from..to`: the one starting before `from`, and those inside.
        let first = r.runs.range(..from).next_back().map(|(&s, &e)| (s, e)).filter(|&(_, e)| e > from);
        let inside: Vec<(u64, u64)> = r.runs.range(from..to).map(|(&s, &e)| (s, e)).collect();
        for (s, e) in first.into_iter().chain(inside) {
            r.runs.remove(&s);
            let (cut_from, cut_to) = (s.max(from), e.min(to));
            if s < cut_from {
                r.runs.insert(s, cut_from);
            }
            if cut_to < e {
                r.runs.insert(cut_to, e);
            }
            released += cut_to - cut_from;
        }
        r.hole_count -= released;
        if r.hole_count == 0 {
            self.by_ino.remove(&ino);
        }
        self.total -= released;
        self.check(ino);
        released
    }

    /// The structure's invariants (debug builds): runs disjoint and counted. The total is
    /// checked against the sum of every inode only for small maps (the check must not make
    /// each call cost O(inodes)).
    fn check(&self, ino: Ino) {
        if cfg!(debug_assertions) {
            if let Some(r) = self.by_ino.get(&ino) {
                let mut prev_end = None;
                let mut holes = 0;
                for (&s, &e) in &r.runs {
                    assert!(s < e, "empty reserved run");
                    assert!(prev_end.is_none_or(|p| p < s), "reserved runs overlap or touch");
                    prev_end = Some(e);
                    holes += e - s;
                }
                assert_eq!(holes, r.hole_count);
                assert!(holes > 0, "an empty reservation is kept");
            }
            if self.by_ino.len() <= 64 {
                let sum: u64 = self.by_ino.values().map(|r| r.hole_count).sum();
                assert_eq!(sum, self.total);
            }
        }
    }
}

impl<D: BlockDevice> Filesystem<D> {
    /// `fallocate` mode 0 (`keep_size` false) and `FALLOC_FL_KEEP_SIZE`: reserves the
    /// holes of bytes `offset..offset+len` (see the module header), then, unless
    /// `keep_size`, grows the file to cover the range. ENOSPC, changing nothing, when the
    /// holes do not fit what the caller may still fill.
    pub fn fallocate(&mut self, ino: Ino, offset: u64, len: u64, keep_size: bool, now: Timestamp) -> Result<()> {
        self.op(|fs| fs.fallocate_inner(ino, offset, len, keep_size, now))
    }

    fn fallocate_inner(&mut self, ino: Ino, offset: u64, len: u64, keep_size: bool, now: Timestamp) -> Result<()> {
        if len == 0 {
            return Err(Error::Invalid("fallocate of an empty range"));
        }
        let end = self.check_fallocate(ino, offset, len)?;
        self.uninline(ino, now)?;
        self.touch(now);
        let grows = !keep_size && end > inode::size(self.inode_ref(ino)?);
        if grows {
            // The size change dirties the inode: its room first.
            self.reserve_nodes(&[ino], 0, now)?;
        }
        self.reserve_holes(ino, offset, end, now)?;
        if grows {
            // Growing cannot fail for lack of room or a bad argument (both checked above);
            // anything else (an I/O error) leaves the call half done: stop writing.
            if let Err(e) = self.set_size(ino, end, now) {
                return self.fail(e);
            }
        }
        self.after_change(now)
    }

    /// Reserves the holes of bytes `offset..end` of `ino` that are not reserved yet, and
    /// creates the tree nodes that will address them: ENOSPC, changing nothing, when the
    /// holes and those nodes do not fit (or no node ids are left for the nodes).
    pub(crate) fn reserve_holes(&mut self, ino: Ino, offset: u64, end: u64, now: Timestamp) -> Result<()> {
        let (runs, hole_count) = self.unreserved_holes(ino, offset, end)?;
        if hole_count == 0 {
            return Ok(());
        }
        let reps = direct_node_representatives(&runs);
        let node_count = self.nodes_missing(ino, &reps)?;
        // The nodes are new blocks as much as the holes are (they stay in use until the
        // file is truncated), and node ids.
        self.ensure_space_for(node_count, hole_count + node_count, now)?;
        self.ensure_nids(node_count, now)?;
        if crate::mutant!("mutant-fallocate-no-reserve") {
            // Mutant: the call succeeds but reserves nothing (mode 0 only grows the size).
            return Ok(());
        }
        // From here on the call must complete: mapping only reads existing nodes and creates
        // the missing ones (room and ids are there), so a failure is an I/O error reading a
        // node, which leaves the call half done: stop writing.
        if self.prealloc_on_disk {
            return self.reserve_on_disk(ino, &runs, hole_count);
        }
        for &idx in &reps {
            if let Err(e) = self.map_for_write(ino, idx) {
                return self.fail(e);
            }
        }
        self.note_change();
        self.prealloc.add(ino, &runs);
        Ok(())
    }

    /// [`Self::reserve_holes`] on an image that keeps reservations on disk: each hole of
    /// `runs` becomes a `NEW_ADDR` pointer in its node (created here), counted in the
    /// inode's `blocks` and in the reservations' total; a later fsync or checkpoint
    /// persists them with the node. Room and node ids are already held.
    fn reserve_on_disk(&mut self, ino: Ino, runs: &[(u64, u64)], hole_count: u64) -> Result<()> {
        for &(start, end) in runs {
            // Bounded: the runs hold `hole_count` indexes, which fit the free capacity.
            for idx in start..end {
                let r = self.map_for_write(ino, idx).and_then(|(holder, ofs, old)| {
                    debug_assert_eq!(old, NULL_ADDR, "reserving a block that is not a hole");
                    self.set_holder_slot(holder, ofs, NEW_ADDR, 0)
                });
                if let Err(e) = r {
                    return self.fail(e);
                }
            }
        }
        match self.inode_mut(ino) {
            Ok(b) => {
                let n = inode::blocks(b);
                inode::set_blocks(b, n.saturating_add(hole_count));
            }
            Err(e) => return self.fail(e),
        }
        self.note_change();
        self.prealloc.add_on_disk(hole_count);
        self.since_cp.reserved(ino);
        Ok(())
    }

    /// The holes of bytes `offset..end` of `ino` neither reserved nor in the write-back
    /// cache, as runs, and their count. ENOSPC when they cannot fit however many there are.
    fn unreserved_holes(&mut self, ino: Ino, offset: u64, end: u64) -> Result<(Vec<(u64, u64)>, u64)> {
        let bs = BLOCK_SIZE as u64;
        let (first, last_end) = (offset / bs, end.div_ceil(bs));
        let span = last_end.saturating_sub(first);
        // Holes in the range are at least the span less every block the file has; when even
        // that does not fit, refuse before walking the range (a huge request on a small
        // device must not walk billions of indexes).
        let mapped = inode::blocks(self.inode_ref(ino)?);
        let reserved = self.prealloc.hole_count(ino);
        let room = self.user_capacity().saturating_sub(self.used_blocks());
        if span.saturating_sub(mapped + reserved) > room {
            self.stats.enospc_returned += 1;
            return Err(Error::NoSpace);
        }
        // Bounded by the check above: span ≤ room + mapped + reserved, all within the device.
        let mut runs: Vec<(u64, u64)> = Vec::new();
        let mut hole_count = 0u64;
        for idx in first..last_end {
            if !self.fills_new_block(ino, idx, mapped == 0)? {
                continue;
            }
            hole_count += 1;
            match runs.last_mut() {
                Some((_, e)) if *e == idx => *e += 1,
                _ => runs.push((idx, idx + 1)),
            }
        }
        Ok((runs, hole_count))
    }

    /// Whether writing file block `idx` of `ino` would add a block to what is in use: a
    /// hole neither in the write-back cache nor reserved. `empty` says the file has no
    /// block at all (no tree walk needed).
    pub(crate) fn fills_new_block(&mut self, ino: Ino, idx: u64, empty: bool) -> Result<bool> {
        if self.prealloc.contains(ino, idx) || self.data.contains_key(&(ino, idx)) {
            return Ok(false);
        }
        Ok(empty || self.get_addr(ino, idx)? == NULL_ADDR)
    }
}

/// One file index per direct node that the runs cover (the first in each), so that mapping
/// them creates every node the runs need: at most one per run plus one per 508 blocks,
/// however long the runs are.
pub(crate) fn direct_node_representatives(runs: &[(u64, u64)]) -> Vec<u64> {
    let (a, p) = (ADDRS_PER_INODE as u64, ADDRS_PER_BLOCK as u64);
    let mut reps = Vec::new();
    for &(start, end) in runs {
        // Blocks in the inode's own addresses need no node.
        let mut idx = start.max(a);
        // Bounded: each step moves to the next direct node's first index.
        while idx < end {
            reps.push(idx);
            idx = a + ((idx - a) / p + 1) * p;
        }
    }
    reps
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn release_splits_runs_and_frees_nodes_with_the_last_hole() {
        let mut r = Reservations::default();
        r.add(7, &[(10, 20)]);
        r.add(7, &[(25, 30)]);
        r.add(7, &[(20, 25)]);
        assert_eq!(r.runs_of(7), vec![(10, 30)]);
        r.release_range(7, 25, 30);
        assert_eq!(r.total(), 15);
        assert!(r.contains(7, 10) && r.contains(7, 24) && !r.contains(7, 25) && !r.contains(7, 9));
        assert_eq!(r.release_range(7, 12, 13), 1);
        assert!(!r.contains(7, 12) && r.contains(7, 11) && r.contains(7, 13));
        assert_eq!(r.hole_count(7), 14);
        assert_eq!(r.release_range(7, 0, 12), 2);
        assert_eq!(r.release_range(7, 13, u64::MAX), 12);
        assert_eq!(r.total(), 0);
        assert_eq!(r.release_range(7, 0, u64::MAX), 0);
    }

    #[test]
    fn representatives_name_every_direct_node_the_runs_cover() {
        let (a, p) = (ADDRS_PER_INODE as u64, ADDRS_PER_BLOCK as u64);
        assert!(direct_node_representatives(&[(0, a)]).is_empty());
        assert_eq!(direct_node_representatives(&[(a - 1, a + 2 * p + 1)]), vec![a, a + p, a + 2 * p]);
        // Two runs in one direct node give it twice (harmless: mapping is idempotent).
        assert_eq!(direct_node_representatives(&[(a + 5, a + 6), (a + 9, a + 10)]), vec![a + 5, a + 9]);
    }
}
