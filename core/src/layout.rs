//! Block size, on-disk geometry and the named constants of the format.
//!
//! The device is laid out as (addresses in 4 KiB blocks):
//!
//! ```text
//! 0            superblock copy 0
//! 1            superblock copy 1
//! cp_start     checkpoint pack 0 (cp_pack_blocks)   then pack 1 (cp_pack_blocks)
//! nat_start    NAT:  nat_blocks  pairs of slots (block i, slot s at nat_start + 2i + s)
//! sit_start    SIT:  sit_blocks  pairs of slots
//! ssa_start    SSA:  one pair of slots per main-area segment
//! main_start   main area: main_segments segments of segment_blocks blocks (segment aligned)
//! ```
//!
//! NAT, SIT and SSA blocks each have two slots; a checkpoint writes a changed block to the
//! slot the previous checkpoint does not use and records the choice in its slot bitmaps,
//! so the previous checkpoint's tables stay intact until the new one is durable.

use crate::error::{Error, Result};

pub const BLOCK_SIZE: usize = 4096;
pub const BLOCK_SIZE_LOG2: u32 = 12;

pub const SUPERBLOCK_ADDRS: [u64; 2] = [0, 1];
pub const CP_START: u32 = 2;

/// Segment sizes allowed at mkfs, in blocks (64 KiB to 2 MiB). 512 bounds the SIT bitmap.
pub const SEGMENT_BLOCKS_MIN: u32 = 16;
pub const SEGMENT_BLOCKS_MAX: u32 = 512;
pub const SEGMENT_BLOCKS_DEFAULT: u32 = 512;

/// Footer of NAT, SIT and SSA blocks: magic u32, index u32, cp_version u64, reserved u32, crc u32.
pub const META_FOOTER_SIZE: usize = 24;
pub const META_FOOTER_OFFSET: usize = BLOCK_SIZE - META_FOOTER_SIZE;

pub const NAT_ENTRY_SIZE: usize = 8;
pub const NAT_ENTRIES_PER_BLOCK: u32 = (META_FOOTER_OFFSET / NAT_ENTRY_SIZE) as u32; // 509
pub const SIT_ENTRY_SIZE: usize = 80;
pub const SIT_ENTRIES_PER_BLOCK: u32 = (META_FOOTER_OFFSET / SIT_ENTRY_SIZE) as u32; // 50
pub const SIT_BITMAP_BYTES: usize = (SEGMENT_BLOCKS_MAX / 8) as usize; // 64
pub const SSA_ENTRY_SIZE: usize = 6;

/// Node blocks: 4064 bytes of payload, then a 32-byte footer.
pub const NODE_FOOTER_SIZE: usize = 32;
pub const NODE_FOOTER_OFFSET: usize = BLOCK_SIZE - NODE_FOOTER_SIZE; // 4064
/// Bytes one data pointer takes in a node: the block address and the CRC32C of the block's
/// contents, stored in two parallel arrays so that the node write that publishes an address
/// publishes its checksum with it (format 2).
pub const DATA_POINTER_SIZE: usize = 8;
/// Data pointers in a direct node.
pub const ADDRS_PER_BLOCK: u32 = (NODE_FOOTER_OFFSET / DATA_POINTER_SIZE) as u32; // 508
/// Child node ids in an indirect node.
pub const NIDS_PER_BLOCK: u32 = (NODE_FOOTER_OFFSET / 4) as u32; // 1016
pub const INODE_HEADER_SIZE: usize = 384;
pub const NIDS_PER_INODE: usize = 6;
/// Data pointers in an inode.
pub const ADDRS_PER_INODE: u32 =
    ((NODE_FOOTER_OFFSET - INODE_HEADER_SIZE - NIDS_PER_INODE * 4) / DATA_POINTER_SIZE) as u32; // 457

/// Block address meaning "no block" (a hole, or an unused NAT entry).
pub const NULL_ADDR: u32 = 0;
/// Block address meaning "allocated in memory, not yet written" (a dirty cached block).
pub const NEW_ADDR: u32 = u32::MAX;

/// Node id 0 is never used; the root directory is node 1 (inode number 1, as FUSE expects).
pub const NULL_NID: u32 = 0;
pub const ROOT_INO: u32 = 1;

pub const NAME_MAX: usize = 255;
pub const LINK_MAX: u32 = 65_000;

/// The six logs (active segments), by temperature and kind, as in f2fs.
pub const LOG_COUNT: usize = 6;

/// Geometry of a formatted device, derived at mkfs and stored in the superblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub total_blocks: u64,
    pub segment_blocks: u32,
    pub cp_pack_blocks: u32,
    pub nat_start: u32,
    pub nat_blocks: u32,
    pub sit_start: u32,
    pub sit_blocks: u32,
    pub ssa_start: u32,
    pub main_start: u32,
    pub main_segments: u32,
    pub nid_count: u32,
    pub reserved_segments: u32,
    /// Segments the metadata areas have room for (`FEATURE_INCOMPAT_GROW`, made by
    /// `mkfs --max-size`): the NAT, SIT and SSA areas and the checkpoint packs are laid out
    /// for this many, so that `rollfs resize` can grow `main_segments` up to it in place.
    /// 0 on images without room to grow, whose areas fit `main_segments` exactly.
    pub max_main_segments: u32,
}

/// Orphan inodes every checkpoint pack has room for (images made before the orphan room
/// scaled with the node ids have exactly this many).
pub const CP_ORPHAN_MAX: u32 = 1024;
/// Upper bound of a pack's orphan room (4 MiB of orphan list); mkfs sizes the room as
/// `clamp(nid_count, CP_ORPHAN_MAX, CP_ORPHAN_SLOTS_MAX)`, so on any device up to 16 GiB
/// every inode can be an orphan at once.
pub const CP_ORPHAN_SLOTS_MAX: u32 = 1 << 20;
/// NAT entries a checkpoint's NAT journal can carry (beyond that, NAT blocks are rewritten).
pub const CP_NAT_JOURNAL_MAX: u32 = 340;
/// SIT entries a checkpoint's SIT journal can carry.
pub const CP_SIT_JOURNAL_MAX: u32 = 48;
pub const CP_NAT_JOURNAL_ENTRY_SIZE: usize = 12;
pub const CP_SIT_JOURNAL_ENTRY_SIZE: usize = 4 + SIT_ENTRY_SIZE;

impl Geometry {
    /// Payload bytes of a checkpoint pack before its orphan list: bitmaps and full journals.
    pub fn cp_payload_fixed_bytes(nat_blocks: u32, sit_blocks: u32, main_segments: u32) -> usize {
        bitmap_bytes(nat_blocks)
            + bitmap_bytes(sit_blocks)
            + bitmap_bytes(main_segments)
            + CP_NAT_JOURNAL_MAX as usize * CP_NAT_JOURNAL_ENTRY_SIZE
            + CP_SIT_JOURNAL_MAX as usize * CP_SIT_JOURNAL_ENTRY_SIZE
    }

    /// The smallest payload a valid pack must have room for: bitmaps, full journals and
    /// [`CP_ORPHAN_MAX`] orphans.
    pub fn cp_payload_bytes(nat_blocks: u32, sit_blocks: u32, main_segments: u32) -> usize {
        Geometry::cp_payload_fixed_bytes(nat_blocks, sit_blocks, main_segments) + CP_ORPHAN_MAX as usize * 4
    }

    /// Orphan slots mkfs gives a pack for `nid_count` node ids.
    pub fn orphan_slots_for(nid_count: u32) -> u32 {
        nid_count.clamp(CP_ORPHAN_MAX, CP_ORPHAN_SLOTS_MAX)
    }

    /// Orphans a checkpoint of this geometry can carry: whatever room its pack has after
    /// the bitmaps and full journals (at least [`CP_ORPHAN_MAX`] on a valid geometry).
    pub fn orphan_capacity(&self) -> u32 {
        let room = (self.cp_pack_blocks as usize).saturating_sub(1) * BLOCK_SIZE;
        let fixed = Geometry::cp_payload_fixed_bytes(self.nat_blocks, self.sit_blocks, self.main_segments);
        (room.saturating_sub(fixed) / 4).min(u32::MAX as usize) as u32
    }

    /// Lays out a device of `total_blocks` blocks.
    pub fn compute(total_blocks: u64, segment_blocks: u32, overprovision_pct: u32) -> Result<Geometry> {
        if !segment_blocks.is_power_of_two() || !(SEGMENT_BLOCKS_MIN..=SEGMENT_BLOCKS_MAX).contains(&segment_blocks) {
            return Err(Error::Invalid("segment size must be a power of two from 64 KiB to 2 MiB"));
        }
        if overprovision_pct > 50 {
            return Err(Error::Invalid("overprovision must be at most 50 percent"));
        }
        // Block addresses are 32 bits.
        let total_blocks = total_blocks.min(u32::MAX as u64);
        let seg = segment_blocks as u64;
        // Start from an upper bound on main segments and shrink until metadata fits.
        let mut main_segments = (total_blocks / seg) as u32;
        loop {
            if main_segments < 16 {
                return Err(Error::Invalid("device too small: fewer than 16 main segments"));
            }
            let main_blocks = main_segments as u64 * seg;
            let nat_blocks = nat_blocks_for(main_segments, segment_blocks);
            let sit_blocks = main_segments.div_ceil(SIT_ENTRIES_PER_BLOCK);
            let orphan_slots = Geometry::orphan_slots_for(nat_blocks * NAT_ENTRIES_PER_BLOCK) as usize;
            let cp_pack_blocks = 1
                + (Geometry::cp_payload_fixed_bytes(nat_blocks, sit_blocks, main_segments) + orphan_slots * 4)
                    .div_ceil(BLOCK_SIZE) as u32;
            let nat_start = CP_START + 2 * cp_pack_blocks;
            let sit_start = nat_start + 2 * nat_blocks;
            let ssa_start = sit_start + 2 * sit_blocks;
            let meta_end = ssa_start as u64 + 2 * main_segments as u64;
            let main_start = meta_end.div_ceil(seg) * seg;
            if main_start + main_blocks <= total_blocks {
                // Half of the overprovisioning is the cleaner's reserve; the other half is
                // slack that keeps invalid blocks around when users fill their capacity, so
                // that overwrites of a full filesystem can always be cleaned for.
                let reserved_segments = reserved_segments_for(main_segments, overprovision_pct);
                if 2 * reserved_segments + LOG_COUNT as u32 + 2 >= main_segments {
                    return Err(Error::Invalid("device too small for the overprovisioning reserve"));
                }
                let g = Geometry {
                    total_blocks,
                    segment_blocks,
                    cp_pack_blocks,
                    nat_start,
                    nat_blocks,
                    sit_start,
                    sit_blocks,
                    ssa_start,
                    main_start: main_start as u32,
                    main_segments,
                    nid_count: nat_blocks * NAT_ENTRIES_PER_BLOCK,
                    reserved_segments,
                    max_main_segments: 0,
                };
                g.validate()?;
                return Ok(g);
            }
            main_segments -= 1;
        }
    }

    /// Lays out a device of `total_blocks` blocks with room in its metadata areas for the
    /// main area of a device of `max_blocks` (`mkfs --max-size`; FORMAT.md, *Room to grow*):
    /// the areas and the checkpoint packs of the larger device, the main area of this one.
    /// A `max_blocks` not above `total_blocks` leaves no room ([`Geometry::compute`]).
    pub fn compute_with_max(
        total_blocks: u64,
        max_blocks: u64,
        segment_blocks: u32,
        overprovision_pct: u32,
    ) -> Result<Geometry> {
        let total_blocks = total_blocks.min(u32::MAX as u64);
        if max_blocks.min(u32::MAX as u64) <= total_blocks {
            return Geometry::compute(total_blocks, segment_blocks, overprovision_pct);
        }
        let big = Geometry::compute(max_blocks, segment_blocks, overprovision_pct)?;
        let fits = total_blocks.saturating_sub(big.main_start as u64) / segment_blocks as u64;
        let main_segments = fits.min(big.main_segments as u64) as u32;
        if main_segments < 16 {
            return Err(Error::Invalid("device too small for the metadata of its maximum size"));
        }
        let reserved = reserved_segments_for(main_segments, overprovision_pct);
        let g =
            Geometry { max_main_segments: big.main_segments, ..big }.with_size(total_blocks, main_segments, reserved);
        g.map_err(|_| Error::Invalid("device too small for the overprovisioning reserve"))
    }

    /// This geometry at another size within its room: `main_segments` segments, the NAT
    /// and SIT sized for them as mkfs would, the areas where they are. What a checkpoint
    /// of a grown image records (FORMAT.md, *Checkpoint header*).
    pub fn with_size(&self, total_blocks: u64, main_segments: u32, reserved_segments: u32) -> Result<Geometry> {
        let nat_blocks = nat_blocks_for(main_segments, self.segment_blocks);
        let g = Geometry {
            total_blocks,
            main_segments,
            nat_blocks,
            sit_blocks: main_segments.div_ceil(SIT_ENTRIES_PER_BLOCK),
            nid_count: nat_blocks.saturating_mul(NAT_ENTRIES_PER_BLOCK),
            reserved_segments,
            ..*self
        };
        g.validate()?;
        Ok(g)
    }

    /// The geometry `rollfs resize` grows this one to on a device of `total_blocks`: as
    /// many segments as fit, up to the room (blocks past it stay unused, as the tail of
    /// any device), and the cleaner's reserve mkfs would give them at `overprovision_pct`
    /// (never below the current one). Refused without room to grow, or below the current
    /// size.
    pub fn grown(&self, total_blocks: u64, overprovision_pct: u32) -> Result<Geometry> {
        if self.max_main_segments == 0 {
            return Err(Error::Invalid("the image has no room to grow (made without mkfs --max-size)"));
        }
        if total_blocks < self.total_blocks {
            return Err(Error::Invalid("rollfs cannot shrink a filesystem"));
        }
        let total_blocks = total_blocks.min(u32::MAX as u64);
        let fits = (total_blocks - self.main_start as u64) / self.segment_blocks as u64;
        let main_segments = (fits.min(self.max_main_segments as u64) as u32).max(self.main_segments);
        let reserved = reserved_segments_for(main_segments, overprovision_pct).max(self.reserved_segments);
        self.with_size(total_blocks, main_segments, reserved)
    }

    /// Segments the SSA area has room for: `max_main_segments`, or `main_segments` on an
    /// image without room to grow.
    pub fn ssa_capacity(&self) -> u32 {
        if self.max_main_segments == 0 {
            self.main_segments
        } else {
            self.max_main_segments
        }
    }

    /// NAT blocks the NAT area has room for.
    pub fn nat_capacity(&self) -> u32 {
        if self.max_main_segments == 0 {
            self.nat_blocks
        } else {
            nat_blocks_for(self.max_main_segments, self.segment_blocks)
        }
    }

    /// SIT blocks the SIT area has room for.
    pub fn sit_capacity(&self) -> u32 {
        self.ssa_capacity().div_ceil(SIT_ENTRIES_PER_BLOCK)
    }

    /// The end of the main area at its room: the largest filesystem this one can grow to
    /// (its own main area's end on an image without room to grow).
    pub fn max_main_end(&self) -> u64 {
        self.main_start as u64 + self.ssa_capacity() as u64 * self.segment_blocks as u64
    }

    /// Checks that the areas are in order, inside the device and consistent with each
    /// other. Run on every geometry read from disk before anything is addressed through it.
    pub fn validate(&self) -> Result<()> {
        let bad = |r| Err(Error::corrupt(0, r));
        if !self.segment_blocks.is_power_of_two()
            || !(SEGMENT_BLOCKS_MIN..=SEGMENT_BLOCKS_MAX).contains(&self.segment_blocks)
        {
            return bad("superblock: bad segment size");
        }
        if self.total_blocks > u32::MAX as u64 {
            return bad("superblock: device larger than 32-bit block addresses");
        }
        if self.nat_blocks == 0 || self.sit_blocks == 0 || self.main_segments < 16 {
            return bad("superblock: empty area");
        }
        if self.sit_blocks != self.main_segments.div_ceil(SIT_ENTRIES_PER_BLOCK) {
            return bad("superblock: SIT size does not match segment count");
        }
        if self.nid_count != self.nat_blocks.saturating_mul(NAT_ENTRIES_PER_BLOCK) {
            return bad("superblock: nid count does not match NAT size");
        }
        if self.max_main_segments != 0
            && (self.max_main_segments < self.main_segments || self.nat_blocks > self.nat_capacity())
        {
            return bad("superblock: more segments or node ids than the areas have room for");
        }
        // The pack holds the largest payload of the room (what a grown image writes).
        let (nat_cap, sit_cap, ssa_cap) = (self.nat_capacity(), self.sit_capacity(), self.ssa_capacity());
        let need = 1 + Geometry::cp_payload_bytes(nat_cap, sit_cap, ssa_cap).div_ceil(BLOCK_SIZE) as u64;
        if (self.cp_pack_blocks as u64) < need {
            return bad("superblock: checkpoint pack too small");
        }
        let nat_start = CP_START as u64 + 2 * self.cp_pack_blocks as u64;
        let sit_start = nat_start + 2 * nat_cap as u64;
        let ssa_start = sit_start + 2 * sit_cap as u64;
        let meta_end = ssa_start + 2 * ssa_cap as u64;
        if self.nat_start as u64 != nat_start
            || self.sit_start as u64 != sit_start
            || self.ssa_start as u64 != ssa_start
            || (self.main_start as u64) < meta_end
            || !self.main_start.is_multiple_of(self.segment_blocks)
        {
            return bad("superblock: areas out of order");
        }
        let main_end = self.main_start as u64 + self.main_segments as u64 * self.segment_blocks as u64;
        if main_end > self.total_blocks {
            return bad("superblock: main area beyond the device");
        }
        if self.max_main_end() > u32::MAX as u64 + 1 {
            return bad("superblock: room to grow past 32-bit block addresses");
        }
        if 2 * self.reserved_segments as u64 + LOG_COUNT as u64 + 2 >= self.main_segments as u64 {
            return bad("superblock: reserve larger than the main area");
        }
        Ok(())
    }

    pub fn cp_pack_addr(&self, pack: usize) -> u64 {
        CP_START as u64 + pack as u64 * self.cp_pack_blocks as u64
    }
    #[inline]
    pub fn nat_addr(&self, index: u32, slot: u8) -> u64 {
        self.nat_start as u64 + 2 * index as u64 + slot as u64
    }
    #[inline]
    pub fn sit_addr(&self, index: u32, slot: u8) -> u64 {
        self.sit_start as u64 + 2 * index as u64 + slot as u64
    }
    #[inline]
    pub fn ssa_addr(&self, segno: u32, slot: u8) -> u64 {
        self.ssa_start as u64 + 2 * segno as u64 + slot as u64
    }
    #[inline]
    pub fn main_blocks(&self) -> u64 {
        self.main_segments as u64 * self.segment_blocks as u64
    }
    /// Blocks users can fill: the main area less the cleaner's reserve, the slack half of
    /// the overprovisioning and one segment per log head (what `statfs` reports as
    /// `f_blocks`). Public so that a tool can size an image before writing anything
    /// (`rollfs mkfs --root` sizes one from a directory tree).
    #[inline]
    pub fn user_blocks(&self) -> u64 {
        (self.main_segments.saturating_sub(2 * self.reserved_segments)).saturating_sub(LOG_COUNT as u32) as u64
            * self.segment_blocks as u64
    }
    #[inline]
    pub fn main_end(&self) -> u64 {
        self.main_start as u64 + self.main_blocks()
    }
    /// True when `addr` is a block of the main area.
    #[inline]
    pub fn in_main(&self, addr: u32) -> bool {
        (addr as u64) >= self.main_start as u64 && (addr as u64) < self.main_end()
    }
    #[inline]
    pub fn segno_of(&self, addr: u32) -> u32 {
        debug_assert!(self.in_main(addr));
        (addr - self.main_start) / self.segment_blocks
    }
    #[inline]
    pub fn blkoff_of(&self, addr: u32) -> u32 {
        (addr - self.main_start) % self.segment_blocks
    }
    #[inline]
    pub fn seg_start(&self, segno: u32) -> u32 {
        self.main_start + segno * self.segment_blocks
    }
}

/// NAT blocks mkfs gives `main_segments` segments of `segment_blocks`: one node id per
/// four main-area blocks, at least 1024 node ids.
pub fn nat_blocks_for(main_segments: u32, segment_blocks: u32) -> u32 {
    let nid_wanted = (main_segments as u64 * segment_blocks as u64 / 4).max(1024);
    nid_wanted.div_ceil(NAT_ENTRIES_PER_BLOCK as u64) as u32
}

/// The cleaner's reserve mkfs gives `main_segments` segments at `overprovision_pct`: half
/// of the overprovisioning, at least one segment per log.
pub fn reserved_segments_for(main_segments: u32, overprovision_pct: u32) -> u32 {
    let reserved = (main_segments as u64 * overprovision_pct as u64).div_ceil(200) as u32;
    reserved.max(LOG_COUNT as u32)
}

pub fn bitmap_bytes(bits: u32) -> usize {
    (bits as usize).div_ceil(8)
}
