//! Online scrub: every node block and every data block of a mounted filesystem read from
//! the device and checked (node CRC and identity, data checksum), in bounded steps.
//!
//! A driver calls [`Filesystem::scrub_step`] in a loop, each call under its lock: one step
//! reads at most its budget of blocks ([`SCRUB_STEP_BLOCKS_MAX`]) and reports at most
//! [`SCRUB_BAD_PER_STEP_MAX`] bad ones, then returns the cursor to go on from, so that a
//! scrub of a large filesystem holds up other requests for one step at a time and can stop
//! and resume anywhere (the cursor is two numbers).
//!
//! **What a step checks.** Nodes in node-id order: the block the NAT points at is read and
//! validated as [`node::validate`] does at load (checksum, footer, type). For an inode,
//! then, each of its file's blocks on the device, checked against the checksum its node
//! holds (the reader's own path, `read_block_at`, with its one retry of a misread; on an
//! image without data checksums only the nodes). Blocks
//! whose newest contents are only in memory are not on the device yet (the write-back
//! cache, a node never written: `NEW_ADDR`): they are counted as skipped, and checked by
//! a later scrub. Holes and inline files read nothing.
//!
//! **What a step promises.** It changes nothing: no block is written, no pointer or
//! counter moves except the read statistics (and `data_checksum_errors` for each bad data
//! block, as a read finds them). A block found bad is reported, not repaired: rollfs keeps
//! one copy. Because the filesystem runs between steps, a scrub sees each node and block
//! that exists at the step that reaches it: a file created behind the cursor, or a block
//! rewritten behind it, is checked by the next scrub, and one deleted ahead of it is not
//! checked at all. Every loop is bounded by the budget or by the node-id count.

use crate::data::Location;
use crate::error::{Error, Result};
use crate::fs::Filesystem;
use crate::layout::{NEW_ADDR, NULL_ADDR};
use crate::node::{self, inode};
use crate::{zero_block, BlockDevice, Ino};
use alloc::vec::Vec;

/// Blocks one step reads at most (4 MiB of data): a bound on how long a step holds the
/// filesystem. A caller's larger budget is cut to it.
pub const SCRUB_STEP_BLOCKS_MAX: u32 = 1024;

/// Bad blocks one step reports at most; the step ends early at this many, and the next
/// goes on from after the last.
pub const SCRUB_BAD_PER_STEP_MAX: usize = 16;

/// Tree nodes a hole search visits per unit of budget.
const SEEK_NODES_PER_UNIT: usize = 8;

/// NAT entries a step passes over per unit of its budget: a free entry costs no read, but
/// a sparse table must not make one step unbounded either.
const FREE_ENTRIES_PER_UNIT: u32 = 64;

/// Where a scrub goes on from: node id `nid`, at position `pos` in it: 0 is the node block
/// itself, `k + 1` is the inode's file block `k` (the node is then done).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScrubCursor {
    pub nid: u32,
    pub pos: u64,
}

/// What was wrong with a block a scrub read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ScrubBadKind {
    /// A data block does not match the checksum its node holds.
    DataChecksum,
    /// A node block fails its checks (checksum, footer, type), or a pointer in it is not a
    /// block of the main area.
    NodeCorrupt,
    /// The device returned an error for the read.
    ReadError,
}

impl ScrubBadKind {
    /// The number the scrub ioctl carries (docs: `rollfs scrub`).
    pub fn code(self) -> u32 {
        match self {
            ScrubBadKind::DataChecksum => 1,
            ScrubBadKind::NodeCorrupt => 2,
            ScrubBadKind::ReadError => 3,
        }
    }

    /// What was wrong, for a person (the daemon's log, `rollfs scrub`).
    pub fn text(self) -> &'static str {
        match self {
            ScrubBadKind::DataChecksum => "data checksum mismatch",
            ScrubBadKind::NodeCorrupt => "node block fails its checks",
            ScrubBadKind::ReadError => "read error",
        }
    }

    pub fn from_code(code: u32) -> Option<ScrubBadKind> {
        match code {
            1 => Some(ScrubBadKind::DataChecksum),
            2 => Some(ScrubBadKind::NodeCorrupt),
            3 => Some(ScrubBadKind::ReadError),
            _ => None,
        }
    }
}

/// One bad block: the inode it belongs to, the file block (`None` for a node block), the
/// device block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScrubBad {
    pub kind: ScrubBadKind,
    pub ino: Ino,
    pub file_block: Option<u64>,
    pub addr: u64,
}

impl core::fmt::Display for ScrubBad {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let what = self.kind.text();
        match self.file_block {
            Some(fb) => write!(f, "inode {}, file block {fb}, block {}: {what}", self.ino, self.addr),
            None => write!(f, "inode {}, node block {}: {what}", self.ino, self.addr),
        }
    }
}

/// What one step did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScrubStep {
    /// Where the next step starts; `None` when the scrub has passed the last node id.
    pub next: Option<ScrubCursor>,
    pub nodes_verified: u64,
    pub data_blocks_verified: u64,
    /// Blocks whose newest contents are in memory only (not on the device yet).
    pub blocks_skipped: u64,
    /// False on a filesystem without data checksums (`-O nodatasum`): there is nothing to
    /// check data blocks against, so only nodes are read.
    pub data_checked: bool,
    pub bad: Vec<ScrubBad>,
}

/// A step's budget as it is spent.
struct Budget {
    units: u32,
    free_entries: u32,
}

impl Budget {
    fn spend(&mut self) {
        self.units = self.units.saturating_sub(1);
    }

    fn spend_free_entry(&mut self) {
        self.free_entries += 1;
        if self.free_entries == FREE_ENTRIES_PER_UNIT {
            self.free_entries = 0;
            self.spend();
        }
    }
}

impl<D: BlockDevice> Filesystem<D> {
    /// The node ids a scrub passes over: the total its cursor's node id counts toward.
    pub fn node_id_count(&self) -> u32 {
        self.nat.nid_count()
    }

    /// One step of an online scrub from `from` (module header), reading at most
    /// `budget_blocks` blocks (at least one, at most [`SCRUB_STEP_BLOCKS_MAX`]). Bad blocks
    /// are results, not errors: an error is returned only for a cursor outside the node-id
    /// range.
    pub fn scrub_step(&mut self, from: ScrubCursor, budget_blocks: u32) -> Result<ScrubStep> {
        if from.nid >= self.nat.nid_count() {
            return Err(Error::Invalid("scrub cursor past the last node id"));
        }
        let mut budget = Budget { units: budget_blocks.clamp(1, SCRUB_STEP_BLOCKS_MAX), free_entries: 0 };
        self.reading(|fs| {
            let mut step = ScrubStep { data_checked: fs.data_checksums, ..ScrubStep::default() };
            let mut cur = from;
            while cur.nid < fs.nat.nid_count() {
                if budget.units == 0 || step.bad.len() >= SCRUB_BAD_PER_STEP_MAX {
                    step.next = Some(cur);
                    break;
                }
                cur = match fs.scrub_nid(cur, &mut budget, &mut step) {
                    Some(block) => ScrubCursor { nid: cur.nid, pos: block + 1 },
                    None => ScrubCursor { nid: cur.nid + 1, pos: 0 },
                };
            }
            // Every step moves the cursor: a node check or a block read spends budget only
            // after the cursor has passed it.
            debug_assert!(step.next != Some(from));
            Ok(step)
        })
    }

    /// Scrubs node `cur.nid` from position `cur.pos`: `Some(block)` when the budget or the
    /// report ran out inside its file (go on from that file block), `None` when the node is
    /// done.
    fn scrub_nid(&mut self, cur: ScrubCursor, budget: &mut Budget, step: &mut ScrubStep) -> Option<u64> {
        let nid = cur.nid;
        let e = self.nat.get(nid)?;
        if e.is_free() {
            budget.spend_free_entry();
            return None;
        }
        let is_inode = e.ino == nid;
        if cur.pos == 0 {
            if e.addr == NULL_ADDR || e.addr == NEW_ADDR {
                // Made since the last write-back and never written: in memory only.
                step.blocks_skipped += 1;
                budget.spend_free_entry();
            } else if !self.scrub_node_block(nid, e.ino, e.addr as u64, budget, step) {
                return None;
            }
        }
        if !is_inode {
            return None;
        }
        self.scrub_file(nid, cur.pos.saturating_sub(1), budget, step)
    }

    /// Reads node `nid`'s block at `addr` from the device and validates it; false when it
    /// is bad (reported).
    fn scrub_node_block(&mut self, nid: u32, ino: Ino, addr: u64, budget: &mut Budget, step: &mut ScrubStep) -> bool {
        budget.spend();
        if !self.geo.in_main(addr as u32) {
            step.bad.push(ScrubBad { kind: ScrubBadKind::NodeCorrupt, ino, file_block: None, addr });
            return false;
        }
        let mut b = zero_block();
        let seed = self.seed;
        let r = crate::read_verified(&mut self.dev, addr, &mut b, |b| node::validate(b, addr, nid, seed));
        self.stats.device_reads += 1;
        match r {
            Ok(_) => {
                step.nodes_verified += 1;
                true
            }
            Err(e) => {
                let kind =
                    if matches!(e, Error::Io { .. }) { ScrubBadKind::ReadError } else { ScrubBadKind::NodeCorrupt };
                step.bad.push(ScrubBad { kind, ino, file_block: None, addr });
                false
            }
        }
    }

    /// Checks the data blocks of inode `ino` from file block `from` on: `Some(block)` when
    /// the step must end before the file does.
    fn scrub_file(&mut self, ino: Ino, from: u64, budget: &mut Budget, step: &mut ScrubStep) -> Option<u64> {
        let Ok(b) = self.inode_ref(ino) else {
            // The node check above reported a bad inode block; a cached one cannot fail.
            return None;
        };
        if inode::is_inline(b) || !step.data_checked {
            return None;
        }
        let block_count = inode::size(b).div_ceil(crate::BLOCK_SIZE as u64);
        let mut idx = from;
        while idx < block_count {
            if budget.units == 0 || step.bad.len() >= SCRUB_BAD_PER_STEP_MAX {
                return Some(idx);
            }
            // Holes first, a missing node's span at a time (one unit of budget): a sparse
            // file of terabytes costs what its blocks cost, not its size (review finding:
            // a user's sparse files made a scrub take hours). A node that cannot be read
            // is left to the run below, which reports it.
            budget.spend();
            idx = match self.next_own_block_bounded(ino, idx, block_count, SEEK_NODES_PER_UNIT) {
                Ok(Some(i)) => i,
                Ok(None) => return None,
                Err(_) => idx,
            };
            if idx >= block_count {
                return None;
            }
            idx = self.scrub_run(ino, idx, block_count, budget, step)?;
        }
        None
    }

    /// Checks the blocks of `ino` from `idx` to the end of the node that maps it (within
    /// the budget); returns the block to go on from, `None` when the file's mapping is
    /// unreadable beyond repair (an index past the largest file).
    ///
    /// A node on the way that cannot be read is reported (once for a run of blocks it
    /// maps: not again when the bad block just reported is the same) and its direct node's
    /// blocks are passed over; the node is reported under its own id too, when the scan
    /// reaches it (`rollfs scrub` lists each device block once).
    fn scrub_run(&mut self, ino: Ino, idx: u64, end: u64, budget: &mut Budget, step: &mut ScrubStep) -> Option<u64> {
        let mut ptrs = Vec::new();
        budget.spend();
        if let Err(e) = self.get_ptrs(ino, idx, end - idx, &mut ptrs) {
            let addr = error_block(&e);
            if step.bad.last().is_none_or(|b| b.addr != addr || b.ino != ino) {
                step.bad.push(ScrubBad { kind: bad_kind(&e), ino, file_block: Some(idx), addr });
            }
            return match node::block_path(idx).ok()? {
                node::BlockPath::Inode { .. } => Some(u64::from(crate::layout::ADDRS_PER_INODE)),
                node::BlockPath::Node { ofs, .. } => Some(idx + u64::from(crate::layout::ADDRS_PER_BLOCK - ofs)),
            };
        }
        let mut at = idx;
        for (addr, crc) in ptrs {
            // The first block is checked whatever is left, so that every step moves on.
            if at > idx && (budget.units == 0 || step.bad.len() >= SCRUB_BAD_PER_STEP_MAX) {
                return Some(at);
            }
            if self.locate_in_memory(ino, at).is_some() {
                step.blocks_skipped += 1;
            } else if addr != NULL_ADDR {
                budget.spend();
                match self.read_located(ino, at, Location::Device { addr, crc }) {
                    Ok(_) => step.data_blocks_verified += 1,
                    Err(e) => {
                        step.bad.push(ScrubBad { kind: bad_kind(&e), ino, file_block: Some(at), addr: u64::from(addr) })
                    }
                }
            }
            at += 1;
        }
        Some(at)
    }
}

fn bad_kind(e: &Error) -> ScrubBadKind {
    match e {
        Error::DataChecksum { .. } => ScrubBadKind::DataChecksum,
        Error::Io { .. } => ScrubBadKind::ReadError,
        _ => ScrubBadKind::NodeCorrupt,
    }
}

fn error_block(e: &Error) -> u64 {
    match e {
        Error::DataChecksum { block, .. } | Error::Io { block, .. } | Error::Corrupt { block, .. } => *block,
        _ => 0,
    }
}
