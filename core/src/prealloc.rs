//! Space preallocated by `fallocate` (mode 0, `KEEP_SIZE`, `ZERO_RANGE`): the holes of a
//! range are reserved so that later writes into them never fail with ENOSPC, which is
//! what `posix_fallocate` promises.
//!
//! A log-structured filesystem cannot allocate blocks in place — every write goes to the
//! head of a log — so a reservation is a promise about capacity, not about addresses: the
//! reserved holes count as used (statfs shows them so, and other writers get ENOSPC
//! first), and a write that fills one spends the reservation instead of new capacity.
//! Physical room for the write itself is then always obtainable by cleaning, exactly as
//! for an overwrite (`Filesystem::ensure_space_for` with no new blocks).
//!
//! Invariants:
//! - a reserved index is a hole: not mapped on disk, not in the write-back cache
//!   (`put_dirty_block` spends the reservation of the block it fills, `free_block_range`
//!   and truncation release the reservations of the range they free);
//! - `Reservations::total` is the sum over inodes of their reserved holes plus the node
//!   blocks reserved to address them, and is counted in `Filesystem::used_blocks`.
//!
//! Reservations live in memory for the life of the mount: unmount, a crash (recovery
//! starts with none) and the inode's eviction release them. See DESIGN.md, "fallocate".

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::error::{Error, Result};
use crate::fs::{Filesystem, Timestamp};
use crate::layout::{BLOCK_SIZE, NULL_ADDR};
use crate::node::inode;
use crate::{BlockDevice, Ino};

/// The reservation of one inode.
#[derive(Debug, Default, Clone)]
struct InodeReservation {
    /// Reserved hole indexes as disjoint, non-adjacent runs `start → end` (exclusive).
    runs: BTreeMap<u64, u64>,
    /// Holes in `runs`.
    hole_count: u64,
    /// Node blocks (direct and indirect nodes) kept to address the holes when written;
    /// released with the last hole.
    node_block_count: u64,
}

/// Every inode's reservation; see the module header.
#[derive(Debug, Default, Clone)]
pub struct Reservations {
    by_ino: BTreeMap<Ino, InodeReservation>,
    total: u64,
}

impl Reservations {
    /// Blocks held back by every reservation (holes and their nodes).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether file block `idx` of `ino` is a reserved hole.
    pub fn contains(&self, ino: Ino, idx: u64) -> bool {
        self.by_ino.get(&ino).and_then(|r| r.runs.range(..=idx).next_back()).is_some_and(|(_, &end)| idx < end)
    }

    /// Holes reserved for `ino`.
    pub fn hole_count(&self, ino: Ino) -> u64 {
        self.by_ino.get(&ino).map_or(0, |r| r.hole_count)
    }

    /// Adds the runs (disjoint from what `ino` has reserved) and the node blocks for them.
    fn add(&mut self, ino: Ino, runs: &[(u64, u64)], node_block_count: u64) {
        let r = self.by_ino.entry(ino).or_default();
        for &(start, end) in runs {
            debug_assert!(start < end);
            r.runs.insert(start, end);
            r.hole_count += end - start;
            self.total += end - start;
        }
        r.node_block_count += node_block_count;
        self.total += node_block_count;
        Self::merge_adjacent(r);
        self.check(ino);
    }

    /// Joins runs that touch, so that sequential reservations stay one run.
    fn merge_adjacent(r: &mut InodeReservation) {
        let mut merged: BTreeMap<u64, u64> = BTreeMap::new();
        // Bounded: one pass over the runs.
        for (&s, &e) in &r.runs {
            if let Some((_, last_end)) = merged.iter_mut().next_back() {
                if *last_end == s {
                    *last_end = e;
                    continue;
                }
            }
            merged.insert(s, e);
        }
        r.runs = merged;
    }

    /// Releases the reserved holes of `ino` in `from..to`; when none is left, its node
    /// blocks too. Returns the blocks released.
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
            released += r.node_block_count;
            self.by_ino.remove(&ino);
        }
        self.total -= released;
        self.check(ino);
        released
    }

    /// Releases everything `ino` holds.
    pub fn release_inode(&mut self, ino: Ino) -> u64 {
        self.release_range(ino, 0, u64::MAX)
    }

    /// The structure's invariants (debug builds): runs disjoint and counted, the total the
    /// sum of the inodes'.
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
            let sum: u64 = self.by_ino.values().map(|r| r.hole_count + r.node_block_count).sum();
            assert_eq!(sum, self.total);
        }
    }
}

impl<D: BlockDevice> Filesystem<D> {
    /// `fallocate` mode 0 (`keep_size` false) and `FALLOC_FL_KEEP_SIZE`: reserves the
    /// holes of bytes `offset..offset+len` (see the module header), then, unless
    /// `keep_size`, grows the file to cover the range. ENOSPC, changing nothing, when the
    /// holes do not fit what the caller may still fill.
    pub fn fallocate(&mut self, ino: Ino, offset: u64, len: u64, keep_size: bool, now: Timestamp) -> Result<()> {
        if len == 0 {
            return Err(Error::Invalid("fallocate of an empty range"));
        }
        let end = self.check_fallocate(ino, offset, len)?;
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

    /// Reserves the holes of bytes `offset..end` of `ino` that are not reserved yet: ENOSPC,
    /// changing nothing, when they do not fit.
    pub(crate) fn reserve_holes(&mut self, ino: Ino, offset: u64, end: u64, now: Timestamp) -> Result<()> {
        let (runs, hole_count) = self.unreserved_holes(ino, offset, end)?;
        if hole_count == 0 {
            return Ok(());
        }
        // The same allowance for the nodes that `ensure_space_for` counts for new blocks.
        self.ensure_space_for(0, hole_count, now)?;
        if crate::mutant!("mutant-fallocate-no-reserve") {
            // Mutant: the call succeeds but reserves nothing (mode 0 only grows the size).
            return Ok(());
        }
        self.prealloc.add(ino, &runs, hole_count / 512 + 2);
        Ok(())
    }

    /// The holes of bytes `offset..end` of `ino` neither reserved nor in the write-back
    /// cache, as runs, and their count. ENOSPC when they cannot fit however many there are.
    pub(crate) fn unreserved_holes(&mut self, ino: Ino, offset: u64, end: u64) -> Result<(Vec<(u64, u64)>, u64)> {
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

    /// `FALLOC_FL_ZERO_RANGE`'s reservation, in two steps around the zeroing (which frees
    /// the range's whole blocks and with them any reservation there): `zero_range_room`
    /// checks, before anything changes, that the range's current holes and the nodes of the
    /// whole span fit; `zero_range_reserve` then reserves every hole of the range without
    /// a check — the blocks the zeroing freed left `used_blocks` by as many as it adds.
    pub(crate) fn zero_range_room(&mut self, ino: Ino, offset: u64, end: u64, now: Timestamp) -> Result<()> {
        let (_, hole_count) = self.unreserved_holes(ino, offset, end)?;
        let span = end.div_ceil(BLOCK_SIZE as u64) - offset / BLOCK_SIZE as u64;
        self.ensure_space_for(0, hole_count + span / 512, now)
    }

    pub(crate) fn zero_range_reserve(&mut self, ino: Ino, offset: u64, end: u64) -> Result<()> {
        let (runs, hole_count) = self.unreserved_holes(ino, offset, end)?;
        if hole_count > 0 {
            let span = end.div_ceil(BLOCK_SIZE as u64) - offset / BLOCK_SIZE as u64;
            self.prealloc.add(ino, &runs, span / 512 + 2);
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_splits_runs_and_frees_nodes_with_the_last_hole() {
        let mut r = Reservations::default();
        r.add(7, &[(10, 20)], 2);
        r.add(7, &[(20, 25)], 1);
        assert_eq!(r.total(), 18);
        assert!(r.contains(7, 10) && r.contains(7, 24) && !r.contains(7, 25) && !r.contains(7, 9));
        assert_eq!(r.release_range(7, 12, 13), 1);
        assert!(!r.contains(7, 12) && r.contains(7, 11) && r.contains(7, 13));
        assert_eq!(r.hole_count(7), 14);
        assert_eq!(r.release_range(7, 0, 12), 2);
        assert_eq!(r.release_range(7, 13, u64::MAX), 12 + 3);
        assert_eq!(r.total(), 0);
        assert_eq!(r.release_inode(7), 0);
    }
}
