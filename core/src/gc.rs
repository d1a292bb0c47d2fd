//! Segment cleaning: making free segments out of partly valid ones.
//!
//! A log-structured filesystem only appends, so overwrites leave invalid blocks behind in
//! old segments. Cleaning picks victim segments, moves their valid blocks (found through
//! the SSA, checked against the node tree or the NAT) into the logs — data to the cold
//! data log, nodes through the NAT — and the checkpoint that follows makes the victims
//! free. Until that checkpoint commits the victims stay *prefree*, so the last checkpoint
//! (and any fsync chain after it) can still read everything it references.
//!
//! Victim selection, as in the LFS and f2fs papers:
//! - **foreground** (a write needs space now): *greedy*, fewest valid blocks first —
//!   the cheapest space right now;
//! - **background** (the caller says the filesystem is idle, with its own time):
//!   *cost-benefit*, maximising `(1 - u) · age / (1 + u)` with `u` the segment's
//!   utilisation and `age` the time since its last write — cold, mostly-empty segments
//!   first, so hot data is not moved again and again.
//!
//! Invariant: users get ENOSPC while the reserved segments are still free, so cleaning can
//! always move a victim's blocks somewhere; every loop here is bounded by the segment count.

use crate::device::BlockDevice;
use crate::error::{Error, Result};
use crate::fs::{Filesystem, Timestamp};
use crate::layout::*;
use crate::node::{self, inode, NodeType};
use crate::segment::{Log, SegState};
use crate::zero_block;
use alloc::vec::Vec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcMode {
    Foreground,
    Background,
}

/// Most victims cleaned in one round (one checkpoint).
const VICTIMS_PER_ROUND_MAX: usize = 8;

impl<D: BlockDevice> Filesystem<D> {
    /// Segments worth cleaning, best first.
    pub(crate) fn pick_victims(&self, mode: GcMode, budget_blocks: u64) -> Vec<u32> {
        let seg = self.geo.segment_blocks as u64;
        let mut cands: Vec<(u64, u32, u64)> = Vec::new(); // (score: lower is better, segno, valid)
        for (s, st) in self.seg.states.iter().enumerate() {
            if *st != SegState::Used {
                continue;
            }
            let e = self.sit.get(s as u32);
            let valid = e.valid as u64;
            if valid >= seg {
                continue;
            }
            let score = match mode {
                GcMode::Foreground => valid,
                GcMode::Background => {
                    let age = self.now_sec.saturating_sub(e.mtime).max(1);
                    // Maximise (seg - valid) * age / (seg + valid): store its inverse rank.
                    let benefit = (seg - valid).saturating_mul(age) / (seg + valid);
                    u64::MAX - benefit
                }
            };
            cands.push((score, s as u32, valid));
        }
        cands.sort_unstable();
        let mut out = Vec::new();
        let mut moved = 0u64;
        for (_, s, valid) in cands {
            if out.len() >= VICTIMS_PER_ROUND_MAX || moved + valid > budget_blocks {
                break;
            }
            moved += valid;
            out.push(s);
        }
        out
    }

    /// Marks every valid block of `segno` for moving: data blocks into the write-back cache
    /// (bound for the cold data log), nodes dirty in the node cache. Returns the count.
    pub(crate) fn move_segment(&mut self, segno: u32) -> Result<u64> {
        let e = *self.sit.get(segno);
        let is_node = e.seg_type as usize > Log::ColdData as usize + 1;
        let start = self.geo.seg_start(segno);
        let mut moved = 0;
        for off in 0..self.geo.segment_blocks {
            if !e.is_valid(off) {
                continue;
            }
            let addr = start + off;
            let s = self.ssa.get(&mut self.dev, &self.geo, addr, self.cp.version)?;
            if is_node {
                let n =
                    self.nat.get(s.nid).ok_or(Error::corrupt(addr as u64, "summary names a node id out of range"))?;
                if n.addr != addr {
                    return Err(Error::corrupt(addr as u64, "valid node block the NAT does not point to"));
                }
                self.node_mut(s.nid)?;
            } else {
                let holder = self.node_ref(s.nid)?;
                let (ino, idx, slot, crc) = match node::footer_type(holder) {
                    Some(NodeType::Inode) if (s.ofs as u32) < ADDRS_PER_INODE => {
                        (s.nid, s.ofs as u64, inode::addr(holder, s.ofs as u32), inode::data_crc(holder, s.ofs as u32))
                    }
                    Some(NodeType::Direct) if (s.ofs as u32) < ADDRS_PER_BLOCK => (
                        node::footer_ino(holder),
                        node::dnode_first_block(node::footer_ofs(holder) as u64) + s.ofs as u64,
                        node::addr(holder, s.ofs as u32),
                        node::data_crc(holder, s.ofs as u32),
                    ),
                    _ => return Err(Error::corrupt(addr as u64, "summary names a node that holds no data")),
                };
                if slot != addr {
                    return Err(Error::corrupt(addr as u64, "valid data block its summary's node does not point to"));
                }
                if self.data.contains_key(&(ino, idx)) {
                    // Already being rewritten: its write-back invalidates this copy.
                    continue;
                }
                let mut b = zero_block();
                self.dev.read(addr as u64, &mut b)?;
                if self.data_checksums && crate::codec::crc(&b[..]) != crc {
                    // Moved as it is, with its old checksum: reads of it keep failing.
                    self.gc_kept_crcs.insert((ino, idx), crc);
                    self.stats.gc_bad_blocks_moved += 1;
                }
                self.data.insert((ino, idx), b);
                self.gc_cold.insert((ino, idx));
            }
            moved += 1;
        }
        self.stats.gc_blocks_moved += moved;
        self.stats.gc_segments += 1;
        Ok(moved)
    }

    /// One cleaning round: victims chosen by `mode`, moved, then a checkpoint frees them.
    /// Returns false when no segment is worth cleaning.
    pub(crate) fn gc_round(&mut self, mode: GcMode, now: Timestamp) -> Result<bool> {
        // Cleaning moves blocks without changing what any file says: not an operation's
        // change (`Filesystem::op`).
        self.maintenance(|fs| fs.gc_round_inner(mode, now))
    }

    fn gc_round_inner(&mut self, mode: GcMode, now: Timestamp) -> Result<bool> {
        let seg = self.geo.segment_blocks as u64;
        let pending = (self.data.len() + self.dirty_nodes.len()) as u64;
        // What the victims' blocks, plus what is already dirty, can be written into: the
        // free segments (reserve included) less two kept back for the checkpoint's nodes.
        let budget = (self.seg.free_segments().saturating_sub(2) as u64 * seg).saturating_sub(pending);
        let victims = self.pick_victims(mode, budget);
        if victims.is_empty() {
            return Ok(false);
        }
        for s in victims {
            self.move_segment(s)?;
        }
        self.checkpoint(false, now)?;
        Ok(true)
    }

    /// Background cleaning, for a driver to call when the filesystem is idle (with its own
    /// clock). Cleans one round if free space is below a third of the device and a victim
    /// is at most half valid. Returns whether it cleaned anything.
    pub fn gc_background(&mut self, now: Timestamp) -> Result<bool> {
        self.maintenance(|fs| fs.gc_background_inner(now))
    }

    fn gc_background_inner(&mut self, now: Timestamp) -> Result<bool> {
        self.check_writable()?;
        self.touch(now);
        let free = self.seg.free_segments() as u64;
        if free * 3 >= self.geo.main_segments as u64 {
            return Ok(false);
        }
        let seg = self.geo.segment_blocks as u64;
        let best = self.pick_victims(GcMode::Background, seg);
        match best.first() {
            Some(&s) if (self.sit.get(s).valid as u64) * 2 <= seg => {
                self.move_segment(s)?;
                self.checkpoint(false, now)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
