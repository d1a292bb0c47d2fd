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
use crate::{Ino, Nid};
use alloc::collections::BTreeSet;
use alloc::vec::Vec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcMode {
    Foreground,
    Background,
}

/// Most victims cleaned in one round (one checkpoint).
const VICTIMS_PER_ROUND_MAX: usize = 8;

/// How one valid block of a victim segment moves.
pub(crate) enum Move {
    /// A data block of file `ino` at index `idx`, at `addr`, whose pointer in `holder`
    /// carries `crc`: read into the write-back cache, bound for the cold data log. Writing
    /// it back rewrites `holder` too.
    Data { ino: Ino, idx: u64, addr: u32, crc: u32, holder: Nid },
    /// A node: marked dirty, rewritten to its log through the NAT.
    Node(Nid),
}

impl<D: BlockDevice> Filesystem<D> {
    /// Used segments that cleaning could free, best first (`mode`'s order).
    pub(crate) fn victim_candidates(&self, mode: GcMode) -> Vec<u32> {
        let seg = self.geo.segment_blocks as u64;
        let mut cands: Vec<(u64, u32)> = Vec::new(); // (score: lower is better, segno)
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
            cands.push((score, s as u32));
        }
        cands.sort_unstable();
        cands.into_iter().map(|(_, s)| s).collect()
    }

    /// The moves that empty `segno`: its valid blocks, each owner found through the SSA and
    /// checked against the tree (a data block's node must point at it) or the NAT (a node's
    /// entry must). A data block already in the write-back cache is skipped: its write-back
    /// invalidates this copy.
    pub(crate) fn segment_moves(&mut self, segno: u32) -> Result<Vec<Move>> {
        let e = *self.sit.get(segno);
        let is_node = e.seg_type as usize > Log::ColdData as usize + 1;
        let start = self.geo.seg_start(segno);
        let mut moves = Vec::new();
        for off in 0..self.geo.segment_blocks {
            if !e.is_valid(off) {
                continue;
            }
            let addr = start + off;
            let mut s = self.ssa.get(&mut self.dev, &self.geo, addr, self.cp.version)?;
            // A data block beside a batch's nodes (data beside its chain) moves as data.
            let data_in_node_segment = is_node && s.ofs & crate::ssa::SSA_OFS_DATA != 0;
            if data_in_node_segment {
                if !self.mixed_node {
                    return Err(Error::corrupt(
                        addr as u64,
                        "summary flags data in a node segment on an image without it",
                    ));
                }
                s.ofs &= !crate::ssa::SSA_OFS_DATA;
            }
            if is_node && !data_in_node_segment {
                let n =
                    self.nat.get(s.nid).ok_or(Error::corrupt(addr as u64, "summary names a node id out of range"))?;
                if n.addr != addr {
                    return Err(Error::corrupt(addr as u64, "valid node block the NAT does not point to"));
                }
                self.node_ref(s.nid)?;
                moves.push(Move::Node(s.nid));
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
                moves.push(Move::Data { ino, idx, addr, crc, holder: s.nid });
            }
        }
        Ok(moves)
    }

    /// Adds what `moves` will write at the checkpoint to `plan` (blocks per log): each
    /// data block in the cold data log, and each node — moved, or the holder a moved data
    /// block rewrites — once, in its own log, unless it is dirty already (then the dirty
    /// cache counts it). `counted` holds the nodes counted so far. Returns the blocks added.
    fn count_moves(&mut self, moves: &[Move], plan: &mut [u64; LOG_COUNT], counted: &mut BTreeSet<Nid>) -> Result<u64> {
        let mut added = 0;
        for m in moves {
            let nid = match *m {
                Move::Data { holder, .. } => {
                    plan[Log::ColdData as usize] += 1;
                    added += 1;
                    holder
                }
                Move::Node(nid) => nid,
            };
            if !self.dirty_nodes.contains(&nid) && counted.insert(nid) {
                self.node_ref(nid)?;
                plan[self.node_log(nid)? as usize] += 1;
                added += 1;
            }
        }
        Ok(added)
    }

    /// The victims of one round among `candidates` (best first) and their moves, at most
    /// `max`. A victim is
    /// taken only when the checkpoint that ends the round still fits the free segments
    /// (reserve included) with everything it writes: the dirty cache, the victims' blocks
    /// and the nodes that point at moved data blocks (a segment of one-block files moves
    /// an inode with every block), each log starting in its open segment: a checkpoint that
    /// does not fit turns the filesystem read-only. And only when it writes fewer blocks
    /// than it frees; the round is cut to the victims that gain the most blocks, none when
    /// no round gains: a round that does not would only use up the reserve. (What the
    /// last segment a log opens has left carries over to the next round.)
    pub(crate) fn plan_round(&mut self, candidates: Vec<u32>, max: usize) -> Result<Vec<(u32, Vec<Move>)>> {
        let seg = self.geo.segment_blocks as u64;
        let free = self.seg.free_segments() as u64;
        let mut counted = BTreeSet::new();
        let mut plan = self.pending_by_log(&mut counted)?;
        let mut out = Vec::new();
        let mut written_total = 0u64;
        let mut best = (0u64, 0usize); // (gain in blocks, victims)
                                       // Bounded: the candidates looked at (each reads its summary block and owners).
        for s in candidates.into_iter().take(4 * max) {
            if out.len() >= max {
                break;
            }
            let moves = self.segment_moves(s)?;
            let (mut trial, mut trial_counted) = (plan, counted.clone());
            let written = self.count_moves(&moves, &mut trial, &mut trial_counted)?;
            if written >= seg || self.seg.segments_to_open(&trial) > free {
                continue;
            }
            (plan, counted) = (trial, trial_counted);
            out.push((s, moves));
            written_total += written;
            let freed = out.len() as u64 * seg;
            if freed > written_total && freed - written_total > best.0 {
                best = (freed - written_total, out.len());
            }
        }
        out.truncate(best.1);
        Ok(out)
    }

    /// Marks every move of a victim: data blocks into the write-back cache (bound for the
    /// cold data log), nodes dirty in the node cache.
    pub(crate) fn apply_moves(&mut self, moves: Vec<Move>) -> Result<()> {
        let mut moved = 0;
        for m in moves {
            match m {
                Move::Node(nid) => {
                    self.node_mut(nid)?;
                }
                Move::Data { ino, idx, addr, crc, .. } => {
                    let mut b = zero_block();
                    self.dev.read(addr as u64, &mut b)?;
                    if self.data_checksums && crate::codec::crc(&b[..]) != crc {
                        // Moved as it is, with its old checksum: reads of it keep failing.
                        self.gc_kept_crcs.insert((ino, idx), crc);
                        self.stats.gc_bad_blocks_moved += 1;
                    }
                    self.data.insert((ino, idx), b);
                    self.gc_cold.insert((ino, idx));
                    if self.sit.get(self.geo.segno_of(addr)).holds_nodes() {
                        self.stats.gc_data_from_node_segments += 1;
                    }
                }
            }
            moved += 1;
        }
        self.stats.gc_blocks_moved += moved;
        self.stats.gc_segments += 1;
        Ok(())
    }

    /// One cleaning round: victims chosen by `mode` (see [`Filesystem::plan_round`]), moved,
    /// then a checkpoint frees them. Returns false when no round would gain a segment.
    pub(crate) fn gc_round(&mut self, mode: GcMode, now: Timestamp) -> Result<bool> {
        // Cleaning moves blocks without changing what any file says: not an operation's
        // change (`Filesystem::op`).
        self.maintenance(|fs| fs.gc_round_inner(mode, now))
    }

    fn gc_round_inner(&mut self, mode: GcMode, now: Timestamp) -> Result<bool> {
        let candidates = self.victim_candidates(mode);
        let victims = self.plan_round(candidates, VICTIMS_PER_ROUND_MAX)?;
        if victims.is_empty() {
            return Ok(false);
        }
        let moved = self.moved_addrs(&victims);
        for (_, moves) in victims {
            self.apply_moves(moves)?;
        }
        self.checkpoint(false, now)?;
        self.check_moved_out(&moved);
        Ok(true)
    }

    /// The addresses the moves of `victims` take their blocks from (a node's from the NAT).
    fn moved_addrs(&self, victims: &[(u32, Vec<Move>)]) -> Vec<u32> {
        let addr = |m: &Move| match *m {
            Move::Data { addr, .. } => Some(addr),
            Move::Node(nid) => self.nat.get(nid).map(|e| e.addr),
        };
        victims.iter().flat_map(|(_, moves)| moves.iter().filter_map(addr)).collect()
    }

    /// Postcondition of a cleaning round: after its checkpoint, no block it moved is still
    /// valid where it was (each victim kept no block of its own; SSR may since have put new
    /// blocks in its old holes). Cheap: one bit per block. It holds on every consistent
    /// image, and the tests of cleaning and the explorer's full-device runs require the
    /// count to stay 0. It is counted (`Stats::gc_blocks_left_valid`), not asserted: on a
    /// damaged image (a node its inode's tree no longer reaches, with valid checksums)
    /// write-back maps the moved block through the tree and the old copy stays valid — a
    /// leak fsck reports, where a panic would take the mount down for a block that was
    /// never lost.
    fn check_moved_out(&mut self, moved: &[u32]) {
        for &a in moved {
            let (segno, off) = (self.geo.segno_of(a), self.geo.blkoff_of(a));
            if self.sit.get(segno).is_valid(off) {
                self.stats.gc_blocks_left_valid += 1;
            }
        }
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
        let best = match self.victim_candidates(GcMode::Background).first() {
            Some(&s) if (self.sit.get(s).valid as u64) * 2 <= seg => s,
            _ => return Ok(false),
        };
        match self.plan_round(alloc::vec![best], 1)?.pop() {
            Some(victim) => {
                let moved = self.moved_addrs(core::slice::from_ref(&victim));
                self.apply_moves(victim.1)?;
                self.checkpoint(false, now)?;
                self.check_moved_out(&moved);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}
