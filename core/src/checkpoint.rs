//! The checkpoint: the one place a checkpoint is written (`Filesystem::checkpoint`), and
//! its on-disk pack.
//!
//! **The procedure** (f2fs's `write_checkpoint`): write back every dirty data block and
//! node; flush the NAT, SIT and SSA (each table's own `flush`, which writes changed blocks
//! to their other slots or returns journal entries for the pack); build the pack; commit it
//! (payload, flush, header, flush); then publish: the tables' `publish`, the segment
//! manager's commit (freed segments become reusable, discarded if asked), and the
//! since-checkpoint records emptied as a whole. A failure anywhere before the header is
//! durable leaves the previous checkpoint in force on the device, and the filesystem turns
//! read-only (in memory the tables may be half-flushed: nothing is published).
//!
//! **The pack.** Two packs at fixed places are written alternately; mount takes the valid
//! pack with the highest version. A pack is one header block followed by payload blocks
//! holding, as one byte stream: the slot bitmaps of NAT, SIT and SSA blocks, the NAT
//! journal, the SIT journal and the orphan inode list. The header carries the CRC32C of the
//! whole payload, and is written last, after a flush, and flushed: it is the commit record.
//!
//! Crash scenarios this module handles (each has a test named after it):
//!
//! | scenario | what mount sees | result |
//! |---|---|---|
//! | crash before the new header is written | old header valid, new pack partial | previous checkpoint |
//! | crash while the header is written (torn) | header CRC fails | previous checkpoint |
//! | header durable but a payload block lost (no flush before it) | payload CRC fails | previous checkpoint |
//! | both packs valid | two versions | the higher version |
//! | neither pack valid | — | mount fails: corruption error naming the pack |

use crate::codec::*;
use crate::error::{Error, Result};
use crate::fs::{Filesystem, Timestamp};
use crate::layout::*;
use crate::nat::NatEntry;
use crate::sit::{RawSitEntry, SegEntry};
use crate::ssa::{OpenSummary, RawOpenSummaryHead, RawSsaEntry, Summary};
use crate::{zero_block, Block, BlockDevice, Nid};
use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::mem::{offset_of, size_of, size_of_val};
use zerocopy::little_endian::{I64, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

pub const CP_MAGIC: u32 = 0x544B_4350; // "PCKT"

/// The header mkfs writes into a pack it does not use ("PCKU"): not a checkpoint, but not
/// zeros either, so that flashing the image with a tool that skips zero blocks (`cp
/// --sparse=always`, `dd conv=sparse`) still overwrites a checkpoint an earlier use of the
/// device left in that pack (a zero header would be skipped, and the earlier use's newer
/// checkpoint mounted). FORMAT.md, "Checkpoint pack".
pub const CP_UNUSED_MAGIC: u32 = 0x554B_4350;

/// The header block of a pack no checkpoint was written to yet (mkfs): the unused magic and
/// the pack's index; no version, no CRC.
pub fn unused_pack_header(pack: usize) -> Box<Block> {
    let mut h = zero_block();
    let r: &mut RawCpHeader = view_mut(&mut h);
    r.magic.set(CP_UNUSED_MAGIC);
    r.pack.set(pack as u32);
    h
}

/// A jump is drawn from at most 1/2^`VERSION_ROOM_SHIFT` of the room left below `u64::MAX`,
/// so that the jumps shrink as the versions near their end (and the protection with them:
/// the chance of two uses colliding is about n / range) instead of stopping: full jumps for
/// the first 2^64 / 2^39 = 33 million mounts on average, smaller ones for many more; a
/// version that cannot grow at all refuses the checkpoint ([`next_version`]).
pub const VERSION_ROOM_SHIFT: u32 = 16;

/// Jumps are drawn from [1, 2^40]: the chance that two uses of one image that started from
/// the same checkpoint land within n checkpoints of each other is about n / 2^40.
pub const VERSION_JUMP_BITS: u32 = 40;

/// The version of the checkpoint after `version` when the step is `step` (a mount's jump,
/// else 1). An error, not an overflow, when the version cannot grow: only a crafted or
/// damaged image holds a version near `u64::MAX` (ordinary use stays under
/// 2^64 by far).
pub fn next_version(version: u64, step: u64) -> Result<u64> {
    version
        .checked_add(step)
        .or_else(|| version.checked_add(1))
        .ok_or(Error::Invalid("checkpoint version at its maximum (u64::MAX): the image cannot be written"))
}

/// What a read-write mount's first checkpoint adds to the version.
///
/// Why: the warm node chain after a checkpoint is recognised by its nodes carrying the
/// checkpoint's version (and the volume's CRC seed). A device can hold the stale chain of an
/// *earlier use of the same image*: a card flashed with an image, used, then flashed again
/// with the same image (its grown region, or any block a sparse-aware flash skips, keeps
/// the first use's blocks). Had both uses stamped their chains with the same version, the
/// second use's recovery would continue its own chain into the first use's nodes and apply
/// fsyncs that never happened in this use (invariant 6). Every read-write mount therefore
/// writes a checkpoint whose version jumps by an amount drawn from the driver's entropy
/// (`MountOptions::mount_nonce`), the time, the UUID and the version before any node of the
/// mount is written; the stale chain of an earlier use then carries a version this use
/// never stamps, except with a probability of about n / 2^40 (n: checkpoints written in the
/// two uses). The core has no randomness of its own: with a nonce of 0 two mounts at the
/// same time of the same checkpoint jump alike (deterministic tests rely on that).
pub fn version_jump(nonce: u64, now: crate::fs::Timestamp, uuid: &[u8; 16], version: u64) -> u64 {
    if crate::mutant!("mutant-mount-no-version-jump") {
        return 1;
    }
    let mut h = splitmix64(nonce);
    for word in [now.sec as u64, now.nsec as u64, version] {
        h = splitmix64(h ^ word);
    }
    for chunk in uuid.chunks_exact(8) {
        h = splitmix64(h ^ u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
    }
    let range = ((u64::MAX - version) >> VERSION_ROOM_SHIFT).min(1 << VERSION_JUMP_BITS);
    if range == 0 {
        return 1;
    }
    1 + h % range
}

/// The splitmix64 finaliser (Steele, Lea, Flood 2014): a bijection of u64 whose every output
/// bit depends on every input bit.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The checkpoint header as it is on disk: one whole block, CRC last. FORMAT.md, section
/// "Checkpoint header".
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawCpHeader {
    pub magic: U32,
    pub pack: U32,
    pub version: U64,
    pub flags: U32,
    pub payload_blocks: U32,
    pub payload_crc: U32,
    pub nat_journal_count: U32,
    pub sit_journal_count: U32,
    pub orphan_count: U32,
    pub valid_blocks: U64,
    pub valid_nodes: U32,
    pub valid_inodes: U32,
    pub time_sec: I64,
    pub reserved_blocks: U64,
    /// `FEATURE_INCOMPAT_GROW`: the size of the filesystem this checkpoint describes (a
    /// resize raises it; the superblock keeps the size mkfs gave). Zero without it.
    pub size_total_blocks: U64,
    pub size_main_segments: U32,
    pub size_nat_blocks: U32,
    pub size_reserved_segments: U32,
    /// `FEATURE_INCOMPAT_CP_SUMMARIES`: open-segment summaries in the payload (part 7),
    /// 0..=`LOG_COUNT`; 0 without it.
    pub summary_count: U32,
    pub reserved0: [u8; 64],
    pub next_generation: U32,
    pub reserved1: [u8; 4],
    pub written_blocks: U64,
    pub reserved2: [u8; 1872],
    /// The log positions sit in the fifth 512-byte sector of the header, away from the
    /// version in the first: a header write torn at sector boundaries then mixes a new
    /// version with old positions, which only the header CRC can reject (and a mount that
    /// trusted it would write over live blocks). Keeping them apart is what lets the crash
    /// explorer show that the CRC check matters (mutant `mutant-cp-no-crc`).
    pub logs: [RawLogPos; LOG_COUNT],
    pub reserved3: [u8; 1948],
    pub crc: U32,
}

/// One active log's position in the checkpoint header.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy)]
#[repr(C)]
pub struct RawLogPos {
    pub segno: U32,
    pub blkoff: U32,
    pub reserved: [u8; 8],
}

/// One NAT journal entry of the checkpoint payload.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy)]
#[repr(C)]
pub struct RawNatJournalEntry {
    pub nid: U32,
    pub ino: U32,
    pub addr: U32,
}

/// One SIT journal entry of the checkpoint payload.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy)]
#[repr(C)]
pub struct RawSitJournalEntry {
    pub segno: U32,
    pub entry: RawSitEntry,
}

pub const CP_OFF_MAGIC: usize = offset_of!(RawCpHeader, magic);
pub const CP_OFF_PACK: usize = offset_of!(RawCpHeader, pack);
pub const CP_OFF_VERSION: usize = offset_of!(RawCpHeader, version);
pub const CP_OFF_FLAGS: usize = offset_of!(RawCpHeader, flags);
pub const CP_OFF_PAYLOAD_BLOCKS: usize = offset_of!(RawCpHeader, payload_blocks);
pub const CP_OFF_PAYLOAD_CRC: usize = offset_of!(RawCpHeader, payload_crc);
pub const CP_OFF_NAT_JOURNAL_COUNT: usize = offset_of!(RawCpHeader, nat_journal_count);
pub const CP_OFF_SIT_JOURNAL_COUNT: usize = offset_of!(RawCpHeader, sit_journal_count);
pub const CP_OFF_ORPHAN_COUNT: usize = offset_of!(RawCpHeader, orphan_count);
pub const CP_OFF_VALID_BLOCKS: usize = offset_of!(RawCpHeader, valid_blocks);
pub const CP_OFF_VALID_NODES: usize = offset_of!(RawCpHeader, valid_nodes);
pub const CP_OFF_VALID_INODES: usize = offset_of!(RawCpHeader, valid_inodes);
pub const CP_OFF_TIME_SEC: usize = offset_of!(RawCpHeader, time_sec);
pub const CP_OFF_RESERVED_BLOCKS: usize = offset_of!(RawCpHeader, reserved_blocks);
pub const CP_OFF_SIZE_TOTAL_BLOCKS: usize = offset_of!(RawCpHeader, size_total_blocks);
pub const CP_OFF_SIZE_MAIN_SEGMENTS: usize = offset_of!(RawCpHeader, size_main_segments);
pub const CP_OFF_SIZE_NAT_BLOCKS: usize = offset_of!(RawCpHeader, size_nat_blocks);
pub const CP_OFF_SIZE_RESERVED_SEGMENTS: usize = offset_of!(RawCpHeader, size_reserved_segments);
pub const CP_OFF_SUMMARY_COUNT: usize = offset_of!(RawCpHeader, summary_count);
pub const CP_OFF_NEXT_GENERATION: usize = offset_of!(RawCpHeader, next_generation);
pub const CP_OFF_WRITTEN_BLOCKS: usize = offset_of!(RawCpHeader, written_blocks);
pub const CP_OFF_LOGS: usize = offset_of!(RawCpHeader, logs);
pub const CP_LOG_ENTRY_SIZE: usize = size_of::<RawLogPos>();

// The layout FORMAT.md states (format 1.0), checked at compile time.
const _: () = {
    assert!(size_of::<RawCpHeader>() == BLOCK_SIZE);
    assert!(CP_OFF_MAGIC == 0);
    assert!(CP_OFF_PACK == 4);
    assert!(CP_OFF_VERSION == 8);
    assert!(CP_OFF_FLAGS == 16);
    assert!(CP_OFF_PAYLOAD_BLOCKS == 20);
    assert!(CP_OFF_PAYLOAD_CRC == 24);
    assert!(CP_OFF_NAT_JOURNAL_COUNT == 28);
    assert!(CP_OFF_SIT_JOURNAL_COUNT == 32);
    assert!(CP_OFF_ORPHAN_COUNT == 36);
    assert!(CP_OFF_VALID_BLOCKS == 40);
    assert!(CP_OFF_VALID_NODES == 48);
    assert!(CP_OFF_VALID_INODES == 52);
    assert!(CP_OFF_TIME_SEC == 56);
    assert!(CP_OFF_RESERVED_BLOCKS == 64);
    assert!(CP_OFF_SIZE_TOTAL_BLOCKS == 72);
    assert!(CP_OFF_SIZE_MAIN_SEGMENTS == 80);
    assert!(CP_OFF_SIZE_NAT_BLOCKS == 84);
    assert!(CP_OFF_SIZE_RESERVED_SEGMENTS == 88);
    assert!(CP_OFF_SUMMARY_COUNT == 92);
    assert!(CP_OFF_NEXT_GENERATION == 160);
    assert!(CP_OFF_WRITTEN_BLOCKS == 168);
    assert!(CP_OFF_LOGS == 2048);
    assert!(CP_LOG_ENTRY_SIZE == 16);
    assert!(offset_of!(RawLogPos, blkoff) == 4);
    assert!(offset_of!(RawCpHeader, crc) == CRC_OFFSET);
    assert!(size_of::<RawNatJournalEntry>() == CP_NAT_JOURNAL_ENTRY_SIZE);
    assert!(offset_of!(RawNatJournalEntry, ino) == 4);
    assert!(offset_of!(RawNatJournalEntry, addr) == 8);
    assert!(size_of::<RawSitJournalEntry>() == CP_SIT_JOURNAL_ENTRY_SIZE);
    assert!(offset_of!(RawSitJournalEntry, entry) == 4);
};

/// Header flags.
pub const CP_FLAG_UMOUNT: u32 = 1 << 0;

/// Position of one active log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogPos {
    pub segno: u32,
    /// Next block offset to write in the segment.
    pub blkoff: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Checkpoint {
    pub version: u64,
    pub flags: u32,
    pub valid_blocks: u64,
    pub valid_nodes: u32,
    pub valid_inodes: u32,
    pub time_sec: i64,
    pub logs: [LogPos; LOG_COUNT],
    pub next_generation: u32,
    /// Blocks ever written to the main area (wear accounting), carried across mounts.
    pub written_blocks: u64,
    /// `NEW_ADDR` pointers (reserved holes) in the checkpointed tree
    /// (`FEATURE_INCOMPAT_PREALLOC`; 0 on images without it).
    pub reserved_blocks: u64,
    pub nat_slots: Vec<u8>,
    pub sit_slots: Vec<u8>,
    pub ssa_slots: Vec<u8>,
    pub nat_journal: Vec<(Nid, NatEntry)>,
    pub sit_journal: Vec<(u32, SegEntry)>,
    pub orphans: Vec<u32>,
    /// Summaries of segments the logs were filling, carried in the payload instead of their
    /// SSA slots (`FEATURE_INCOMPAT_CP_SUMMARIES`; empty on images without it). Their slot
    /// bits do not change: the slot holds an older summary, which nothing reads while the
    /// checkpoint is the current one.
    pub summaries: Vec<OpenSummary>,
    /// The filesystem's geometry at this checkpoint, on an image with room to grow
    /// (`FEATURE_INCOMPAT_GROW`: the superblock's areas at the size the header records);
    /// `None` on other images, whose geometry is the superblock's.
    pub geometry: Option<Geometry>,
}

fn put_bitmap(out: &mut Vec<u8>, slots: &[u8]) {
    let mut bytes = vec![0u8; bitmap_bytes(slots.len() as u32)];
    for (i, &s) in slots.iter().enumerate() {
        if s != 0 {
            bytes[i / 8] |= 1 << (i % 8);
        }
    }
    out.extend_from_slice(&bytes);
}

fn get_bitmap(inp: &[u8], pos: &mut usize, count: u32) -> Vec<u8> {
    let n = bitmap_bytes(count);
    let bytes = &inp[*pos..*pos + n];
    *pos += n;
    (0..count as usize).map(|i| (bytes[i / 8] >> (i % 8)) & 1).collect()
}

impl Checkpoint {
    /// The payload's byte stream, its parts in FORMAT.md's order (unpadded).
    fn payload_stream(&self) -> Vec<u8> {
        let mut p: Vec<u8> = Vec::new();
        put_bitmap(&mut p, &self.nat_slots);
        put_bitmap(&mut p, &self.sit_slots);
        put_bitmap(&mut p, &self.ssa_slots);
        for &(nid, e) in &self.nat_journal {
            let rec = RawNatJournalEntry { nid: nid.into(), ino: e.ino.into(), addr: e.addr.into() };
            p.extend_from_slice(rec.as_bytes());
        }
        for &(segno, e) in &self.sit_journal {
            let rec = RawSitJournalEntry { segno: segno.into(), entry: e.to_raw() };
            p.extend_from_slice(rec.as_bytes());
        }
        for &o in &self.orphans {
            p.extend_from_slice(U32::new(o).as_bytes());
        }
        for sum in &self.summaries {
            sum.encode_into(&mut p);
        }
        p
    }

    /// Encodes the pack: header first, then the payload blocks.
    pub fn encode(&self, geo: &Geometry, pack: usize) -> Result<Vec<Box<Block>>> {
        if self.nat_journal.len() > CP_NAT_JOURNAL_MAX as usize || self.sit_journal.len() > CP_SIT_JOURNAL_MAX as usize
        {
            return Err(Error::Invalid("checkpoint: journal over capacity"));
        }
        let orphan_room = if crate::mutant!("mutant-orphan-limit") { CP_ORPHAN_MAX } else { geo.orphan_capacity() };
        if self.orphans.len() > orphan_room as usize {
            return Err(Error::NoSpace);
        }
        if self.summaries.len() > LOG_COUNT {
            return Err(Error::Invalid("checkpoint: more open-segment summaries than logs"));
        }
        let mut p = self.payload_stream();
        let payload_blocks = p.len().div_ceil(BLOCK_SIZE).max(1);
        if 1 + payload_blocks > geo.cp_pack_blocks as usize {
            return Err(Error::Invalid("checkpoint: payload larger than the pack"));
        }
        p.resize(payload_blocks * BLOCK_SIZE, 0);
        let mut h = zero_block();
        let r: &mut RawCpHeader = view_mut(&mut h);
        r.magic.set(CP_MAGIC);
        r.pack.set(pack as u32);
        r.version.set(self.version);
        r.flags.set(self.flags);
        r.payload_blocks.set(payload_blocks as u32);
        r.payload_crc.set(crc(&p));
        r.nat_journal_count.set(self.nat_journal.len() as u32);
        r.sit_journal_count.set(self.sit_journal.len() as u32);
        r.orphan_count.set(self.orphans.len() as u32);
        r.summary_count.set(self.summaries.len() as u32);
        r.valid_blocks.set(self.valid_blocks);
        r.valid_nodes.set(self.valid_nodes);
        r.valid_inodes.set(self.valid_inodes);
        r.time_sec.set(self.time_sec);
        for (raw, l) in r.logs.iter_mut().zip(&self.logs) {
            raw.segno.set(l.segno);
            raw.blkoff.set(l.blkoff);
        }
        r.next_generation.set(self.next_generation);
        r.written_blocks.set(self.written_blocks);
        r.reserved_blocks.set(self.reserved_blocks);
        if geo.max_main_segments != 0 {
            r.size_total_blocks.set(geo.total_blocks);
            r.size_main_segments.set(geo.main_segments);
            r.size_nat_blocks.set(geo.nat_blocks);
            r.size_reserved_segments.set(geo.reserved_segments);
        }
        seal(&mut h);
        let mut out = vec![h];
        for chunk in p.chunks(BLOCK_SIZE) {
            let mut b = zero_block();
            b.copy_from_slice(chunk);
            out.push(b);
        }
        Ok(out)
    }

    /// Commits this checkpoint into pack `pack`: the one commit sequence of the format,
    /// used by mkfs, mount, sync, unmount and repair. The payload blocks are written, then
    /// the device waits for every submitted write (the payload and everything the
    /// checkpoint references: nodes, data, NAT/SIT/SSA blocks written before) and flushes,
    /// and only then is the header written, waited for and flushed: the header is the
    /// commit record, and a crash at any point before that flush leaves the previous
    /// checkpoint.
    ///
    /// Once the header's write has completed the pack may be durable whatever happens next,
    /// so a failure of the flush after it does not undo the commit: it is returned in
    /// [`Committed::flush_error`], and the caller adopts the checkpoint (it may be what the
    /// next mount finds) and then stops writing, so that both packs stay whole.
    pub fn commit<D: BlockDevice>(&self, dev: &mut D, geo: &Geometry, pack: usize) -> Result<Committed> {
        let blocks = self.encode(geo, pack)?;
        // Paired assertion: the pack about to be committed reads back as this checkpoint.
        debug_assert!(
            Checkpoint::decode_blocks(geo, pack, &blocks).ok().flatten().as_ref() == Some(self),
            "checkpoint pack does not decode to what was encoded"
        );
        let base = geo.cp_pack_addr(pack);
        for (i, b) in blocks.iter().enumerate().skip(1) {
            dev.write(base + i as u64, b, crate::device::WriteFlags::empty())?;
        }
        let mut flushes = 0;
        if !crate::mutant!("mutant-cp-no-flush") {
            dev.wait_writes()?;
            dev.flush()?;
            flushes += 1;
        }
        // The header is made durable by a flush of its own, not by FUA: flash that
        // acknowledges FUA writes from its volatile cache but honours flushes (rollfs-sim's
        // `fua-ignored`) would otherwise lose a checkpoint `sync` had returned, and let the
        // writes after it overwrite what the older pack still names. Where the device has
        // no FUA the kernel emulates it with the same flush; where it has one, a flush of a
        // cache holding one block costs about the same.
        // The mutant is the protocol before: the header with FUA and no flush after it.
        let fua_only = crate::mutant!("mutant-device-cp-header-fua");
        let flags = if fua_only { crate::device::WriteFlags::FUA } else { crate::device::WriteFlags::empty() };
        dev.write(base, &blocks[0], flags)?;
        dev.wait_writes()?;
        let mut flush_error = None;
        if !fua_only {
            flush_error = dev.flush().err();
            flushes += 1;
        }
        Ok(Committed { blocks: blocks.len() as u64, flushes, flush_error })
    }

    /// Reads and validates pack `pack`. `Ok(None)` when the pack is not a valid checkpoint
    /// (never written, torn, or incomplete); `Err` only for I/O errors and for a header
    /// that verifies but describes an impossible state.
    pub fn read_pack<D: BlockDevice>(dev: &mut D, geo: &Geometry, pack: usize) -> Result<Option<Checkpoint>> {
        let base = geo.cp_pack_addr(pack);
        let mut h = zero_block();
        dev.read(base, &mut h)?;
        let check_crc = !crate::mutant!("mutant-cp-no-crc");
        let r: &RawCpHeader = view(&h);
        if r.magic.get() != CP_MAGIC || (check_crc && !crc_ok(&h)) {
            return Ok(None);
        }
        if r.pack.get() != pack as u32 {
            return Ok(None);
        }
        let payload_blocks = r.payload_blocks.get() as usize;
        if payload_blocks == 0 || 1 + payload_blocks > geo.cp_pack_blocks as usize {
            return Err(Error::corrupt(base, "checkpoint: payload size out of range"));
        }
        let mut p = vec![0u8; payload_blocks * BLOCK_SIZE];
        let mut b = zero_block();
        for i in 0..payload_blocks {
            dev.read(base + 1 + i as u64, &mut b)?;
            p[i * BLOCK_SIZE..(i + 1) * BLOCK_SIZE].copy_from_slice(&b[..]);
        }
        let cp = Checkpoint::decode(geo, pack, &h, &p)?;
        if let Some(g) = cp.as_ref().and_then(|c| c.geometry) {
            if g.total_blocks > dev.block_count() {
                return Err(Error::corrupt(base, "checkpoint: filesystem (grown by resize) larger than the device"));
            }
        }
        Ok(cp)
    }

    /// Decodes an encoded pack held in memory ([`Checkpoint::encode`]'s blocks): what
    /// [`Checkpoint::read_pack`] would make of it. The write path checks every pack it is
    /// about to commit with it (debug builds: the explorer's guest, the fuzzers).
    pub fn decode_blocks(geo: &Geometry, pack: usize, blocks: &[Box<Block>]) -> Result<Option<Checkpoint>> {
        let (h, rest) = blocks.split_first().ok_or(Error::Invalid("checkpoint: no header block"))?;
        let r: &RawCpHeader = view(h);
        if r.magic.get() != CP_MAGIC || !crc_ok(h) || r.pack.get() != pack as u32 {
            return Ok(None);
        }
        let mut p: Vec<u8> = Vec::with_capacity(rest.len() * BLOCK_SIZE);
        for b in rest {
            p.extend_from_slice(&b[..]);
        }
        Checkpoint::decode(geo, pack, h, &p)
    }

    /// Decodes a pack from its verified header and its payload stream. `sb_geo` is the
    /// superblock's geometry; on an image with room to grow the pack is decoded at the size
    /// its header records ([`sized_geometry`]).
    fn decode(sb_geo: &Geometry, pack: usize, h: &Block, p: &[u8]) -> Result<Option<Checkpoint>> {
        let base = sb_geo.cp_pack_addr(pack);
        let check_crc = !crate::mutant!("mutant-cp-no-crc");
        let r: &RawCpHeader = view(h);
        if r.payload_blocks.get() as usize * BLOCK_SIZE != p.len() {
            return Err(Error::corrupt(base, "checkpoint: payload size out of range"));
        }
        if check_crc && crc(p) != r.payload_crc.get() {
            return Ok(None);
        }
        let geo = &sized_geometry(sb_geo, base, r)?;
        let nat_n = r.nat_journal_count.get();
        let sit_n = r.sit_journal_count.get();
        let orphan_n = r.orphan_count.get();
        if nat_n > CP_NAT_JOURNAL_MAX || sit_n > CP_SIT_JOURNAL_MAX || orphan_n > geo.orphan_capacity() {
            return Err(Error::corrupt(base, "checkpoint: journal or orphan count out of range"));
        }
        let need = bitmap_bytes(geo.nat_blocks)
            + bitmap_bytes(geo.sit_blocks)
            + bitmap_bytes(geo.main_segments)
            + nat_n as usize * CP_NAT_JOURNAL_ENTRY_SIZE
            + sit_n as usize * CP_SIT_JOURNAL_ENTRY_SIZE
            + orphan_n as usize * 4;
        if need > p.len() {
            return Err(Error::corrupt(base, "checkpoint: payload shorter than its contents"));
        }
        let mut pos = 0;
        let nat_slots = get_bitmap(p, &mut pos, geo.nat_blocks);
        let sit_slots = get_bitmap(p, &mut pos, geo.sit_blocks);
        let ssa_slots = get_bitmap(p, &mut pos, geo.main_segments);
        // Cannot fail after the length check above; a typed error all the same.
        let short = Error::corrupt(base, "checkpoint: payload shorter than its contents");
        let (raw_nat, _) =
            <[RawNatJournalEntry]>::ref_from_prefix_with_elems(&p[pos..], nat_n as usize).map_err(|_| short.clone())?;
        let mut nat_journal = Vec::with_capacity(nat_n as usize);
        for raw in raw_nat {
            let nid = raw.nid.get();
            let e = NatEntry { ino: raw.ino.get(), addr: raw.addr.get() };
            if nid >= geo.nid_count || (e.addr != NULL_ADDR && !geo.in_main(e.addr)) {
                return Err(Error::corrupt(base, "checkpoint: NAT journal entry out of range"));
            }
            nat_journal.push((nid, e));
        }
        pos += size_of_val(raw_nat);
        let (raw_sit, _) =
            <[RawSitJournalEntry]>::ref_from_prefix_with_elems(&p[pos..], sit_n as usize).map_err(|_| short.clone())?;
        let mut sit_journal = Vec::with_capacity(sit_n as usize);
        for raw in raw_sit {
            let segno = raw.segno.get();
            if segno >= geo.main_segments {
                return Err(Error::corrupt(base, "checkpoint: SIT journal segment out of range"));
            }
            sit_journal.push((segno, SegEntry::from_raw(&raw.entry, geo.segment_blocks, base)?));
        }
        pos += size_of_val(raw_sit);
        let orphans = decode_orphans(geo, base, &p[pos..], orphan_n).map_err(|e| e.unwrap_or(short.clone()))?;
        pos += orphan_n as usize * 4;
        let logs = decode_logs(geo, base, r)?;
        let summaries = decode_summaries(geo, base, &p[pos..], r.summary_count.get(), &logs)?;
        check_counters(geo, base, r)?;
        Ok(Some(Checkpoint {
            version: r.version.get(),
            flags: r.flags.get(),
            valid_blocks: r.valid_blocks.get(),
            valid_nodes: r.valid_nodes.get(),
            valid_inodes: r.valid_inodes.get(),
            time_sec: r.time_sec.get(),
            logs,
            next_generation: r.next_generation.get(),
            written_blocks: r.written_blocks.get(),
            reserved_blocks: r.reserved_blocks.get(),
            nat_slots,
            sit_slots,
            ssa_slots,
            nat_journal,
            sit_journal,
            orphans,
            summaries,
            geometry: (geo.max_main_segments != 0).then_some(*geo),
        }))
    }

    /// Reads both packs and returns the newest valid checkpoint and its pack index.
    pub fn read_newest<D: BlockDevice>(dev: &mut D, geo: &Geometry) -> Result<(Checkpoint, usize)> {
        let mut best: Option<(Checkpoint, usize)> = None;
        let mut first_err = None;
        for pack in 0..2 {
            let mut read = Checkpoint::read_pack(dev, geo, pack);
            if matches!(read, Ok(None) | Err(Error::Corrupt { .. })) {
                // Once more before it is given up: a pack misread once (flipped bits) must
                // not roll the filesystem back to the older one (`read_twice_if`).
                read = Checkpoint::read_pack(dev, geo, pack);
            }
            match read {
                Ok(Some(cp)) => {
                    if best.as_ref().is_none_or(|(b, _)| cp.version > b.version) {
                        best = Some((cp, pack));
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    if first_err.is_none() {
                        first_err = Some(e);
                    }
                }
            }
        }
        match (best, first_err) {
            // An I/O error on one pack must not silently roll back to an older checkpoint.
            (_, Some(e @ Error::Io { .. })) => Err(e),
            (Some(b), _) => Ok(b),
            (None, Some(e)) => Err(e),
            (None, None) => Err(Error::corrupt(geo.cp_pack_addr(0), "no valid checkpoint pack")),
        }
    }
}

/// What a checkpoint's flush of one table (NAT or SIT) leaves for the pack.
#[derive(Debug)]
pub(crate) struct TableFlush<J> {
    /// The slot each of the table's blocks is current in once the pack commits.
    pub slots: Vec<u8>,
    /// Changes the pack journals instead (empty when the changed blocks were written).
    pub journal: Vec<J>,
    /// Whether the changed blocks were written (then `publish` forgets the changes).
    pub wrote_blocks: bool,
}

/// The flush every slotted table (NAT, SIT, SSA) makes for a checkpoint: with `journal`
/// (the changes fit in the pack), nothing is written; else each of `dirty_blocks` is
/// written by `block` (its address in the slot it is not current in, and its contents) and
/// that slot becomes its current one once the pack commits. Counts each write in
/// `blocks_written`, even when a later one fails (the stats count what reached the device).
pub(crate) fn flush_slotted<D: BlockDevice, J>(
    dev: &mut D,
    slots: &[u8],
    journal: Option<Vec<J>>,
    dirty_blocks: impl IntoIterator<Item = u32>,
    block: impl Fn(u32, u8) -> (u64, Box<Block>),
    blocks_written: &mut u64,
) -> Result<TableFlush<J>> {
    let mut slots = slots.to_vec();
    if let Some(journal) = journal {
        return Ok(TableFlush { slots, journal, wrote_blocks: false });
    }
    for i in dirty_blocks {
        let s = 1 - slots[i as usize];
        let (addr, b) = block(i, s);
        dev.write(addr, &b, crate::WriteFlags::empty())?;
        *blocks_written += 1;
        slots[i as usize] = s;
    }
    Ok(TableFlush { slots, journal: Vec::new(), wrote_blocks: true })
}

/// What [`Checkpoint::commit`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    /// Blocks written (payload and header).
    pub blocks: u64,
    /// Flushes issued.
    pub flushes: u64,
    /// The flush after the header failed: the checkpoint may or may not be durable.
    pub flush_error: Option<crate::IoError>,
}

impl Committed {
    /// The flush after the header as an error (for callers with no memory to keep in step
    /// with the pack: mkfs, resize).
    pub fn flushed(self) -> Result<()> {
        self.flush_error.map_or(Ok(()), |e| Err(e.into()))
    }
}

impl<D: BlockDevice> Filesystem<D> {
    /// Writes a checkpoint. On any failure the filesystem turns read-only.
    pub(crate) fn checkpoint(&mut self, umount: bool, now: Timestamp) -> Result<()> {
        self.check_writable()?;
        self.touch(now);
        match self.maintenance(|fs| fs.checkpoint_inner(umount, now)) {
            Ok(()) => {
                // Postcondition: everything was written back, and what "since the last
                // checkpoint" recorded is now in it (cheap: three emptiness checks).
                assert!(self.data.is_empty() && self.dirty_nodes.is_empty(), "a checkpoint left dirty state");
                assert!(self.since_cp.is_empty(), "a checkpoint left since-checkpoint records");
                Ok(())
            }
            Err(e) => self.fail(e),
        }
    }

    fn checkpoint_inner(&mut self, umount: bool, now: Timestamp) -> Result<()> {
        // Roll-forward writes exactly one checkpoint, after it has finished: one written in
        // the middle would record the old log positions with recovered blocks already valid
        // in the SIT, an image that never mounts again.
        if self.recovering && !crate::mutant!("mutant-cp-in-recovery") {
            debug_assert!(false, "checkpoint requested during roll-forward");
            return Err(Error::Invalid("checkpoint requested during roll-forward recovery"));
        }
        // Before anything is written: a version that cannot grow refuses the checkpoint.
        let version = next_version(self.cp.version, self.version_step)?;
        // 1. Write back: every node and data block the checkpoint will point at.
        self.writeback_data()?;
        self.writeback_nodes()?;
        debug_assert!(self.data.is_empty() && self.dirty_nodes.is_empty());
        // 2. The tables, into the pack that is not current.
        let pack = 1 - self.cp_pack;
        let g = self.geo;
        if crate::mutant!("mutant-nat-lost") {
            self.nat.mutant_forget_one();
        }
        let mut meta_blocks = 0;
        let open: Vec<u32> = self.seg.durable_logs().iter().map(|l| l.segno).collect();
        let flushed = (|| -> Result<_> {
            let nat = self.nat.flush(&mut self.dev, &g, version, &mut meta_blocks)?;
            let sit = self.sit.flush(&mut self.dev, &g, version, &mut meta_blocks)?;
            // The open segments' summaries ride in the payload as far as the pack has room
            // after the parts before them (FORMAT.md, *Checkpoint payload*), the bitmaps
            // counted at the size the image can grow to: a grow copies this checkpoint with
            // longer bitmaps (`resize::grown_checkpoint`), and must find it fits (review 55).
            let (open, room) = if self.cp_summaries {
                let used = bitmap_bytes(g.nat_capacity())
                    + bitmap_bytes(g.sit_capacity())
                    + bitmap_bytes(g.ssa_capacity())
                    + nat.journal.len() * CP_NAT_JOURNAL_ENTRY_SIZE
                    + sit.journal.len() * CP_SIT_JOURNAL_ENTRY_SIZE
                    + self.orphans.len() * 4;
                let room = (g.cp_pack_blocks as usize - 1) * BLOCK_SIZE;
                (&open[..], room.saturating_sub(used))
            } else {
                (&[][..], 0)
            };
            let ssa = self.ssa.flush(&mut self.dev, &g, version, open, room, &mut meta_blocks)?;
            Ok((nat, sit, ssa))
        })();
        self.stats.meta_blocks_written += meta_blocks;
        let (nat, sit, ssa) = flushed?;
        // 3. Build and commit the pack: its header, written last and flushed, is the commit.
        let wrote_blocks = (nat.wrote_blocks, sit.wrote_blocks);
        let cp = self.build_checkpoint(version, umount, now, nat, sit, ssa);
        let done = cp.commit(&mut self.dev, &g, pack)?;
        self.stats.meta_blocks_written += done.blocks;
        self.stats.flushes += done.flushes;
        // 4. Committed: publish. Also when the flush after the header failed: the header may
        // be durable, so memory must match it; the error then shuts the filesystem down
        // (`checkpoint`), and nothing more is written over what either pack names.
        self.publish_checkpoint(cp, pack, wrote_blocks, done.flush_error.is_none());
        match done.flush_error {
            None => Ok(()),
            Some(e) => Err(e.into()),
        }
    }

    /// The pack for a checkpoint of `version` whose tables were flushed as given.
    fn build_checkpoint(
        &self,
        version: u64,
        umount: bool,
        now: Timestamp,
        nat: TableFlush<(Nid, NatEntry)>,
        sit: TableFlush<(u32, SegEntry)>,
        ssa: crate::ssa::SsaFlush,
    ) -> Checkpoint {
        Checkpoint {
            version,
            flags: if umount { CP_FLAG_UMOUNT } else { 0 },
            valid_blocks: self.sit.valid_total(),
            valid_nodes: self.nat.used_count(),
            valid_inodes: self.valid_inodes,
            time_sec: now.sec,
            // The same positions `checkpoint_inner` named the open segments by: flushing
            // the tables writes nothing to the main area.
            logs: self.seg.durable_logs(),
            next_generation: self.next_generation,
            written_blocks: self.written_blocks,
            // Every dirty data block was written first (`checkpoint_inner`), so each
            // `NEW_ADDR` left in the tree is a reserved hole, and the count is theirs.
            reserved_blocks: if self.prealloc_on_disk { self.prealloc.total() } else { 0 },
            nat_slots: nat.slots,
            sit_slots: sit.slots,
            ssa_slots: ssa.slots,
            nat_journal: nat.journal,
            sit_journal: sit.journal,
            orphans: self.orphans.iter().copied().collect(),
            summaries: ssa.summaries,
            geometry: (self.geo.max_main_segments != 0).then_some(self.geo),
        }
    }

    /// After pack `pack` holding `cp` committed: the tables take its slots and forget what
    /// they wrote as blocks (`wrote_blocks`: NAT, SIT), freed segments become reusable
    /// (discarded if the mount asks, when the pack is known `durable`: not after a failed
    /// flush, when the older pack may be what the next mount finds, with the blocks of
    /// those segments), and what was recorded since the last checkpoint is emptied.
    fn publish_checkpoint(&mut self, cp: Checkpoint, pack: usize, wrote_blocks: (bool, bool), durable: bool) {
        self.nat.publish(cp.nat_slots.clone(), wrote_blocks.0);
        self.sit.publish(cp.sit_slots.clone(), wrote_blocks.1);
        self.ssa.publish(cp.ssa_slots.clone(), &cp.summaries);
        // From here on the blocks this checkpoint freed may be reallocated, written and
        // discarded: tell the device first (readers outside the driver's lock).
        self.dev.reuse_fence();
        let freed = self.seg.commit(&self.sit);
        if self.opts.discard && durable {
            self.discard_segments(&freed);
        }
        self.cp = cp;
        self.cp_pack = pack;
        self.version_step = 1;
        self.stats.checkpoints += 1;
        self.since_cp.reset();
        self.gc_cold.clear();
        self.gc_kept_crcs.clear();
    }

    /// Discards freed segments, merging neighbours into one request. A discard is only a
    /// hint: its failure is counted, never an error.
    fn discard_segments(&mut self, segnos: &[u32]) {
        let seg = self.geo.segment_blocks as u64;
        let mut i = 0;
        while i < segnos.len() {
            let mut j = i + 1;
            while j < segnos.len() && segnos[j] == segnos[j - 1] + 1 {
                j += 1;
            }
            let start = self.geo.seg_start(segnos[i]) as u64;
            self.dentry_cache.forget_range(start, (j - i) as u64 * seg);
            if self.dev.discard(start, (j - i) as u64 * seg).is_err() {
                self.stats.discard_errors += 1;
            } else {
                self.stats.discards += 1;
                // A later FITRIM need not discard them again.
                segnos[i..j].iter().for_each(|&s| self.seg.set_trimmed(s));
            }
            i = j;
        }
    }
}

/// The header's counters bound what the filesystem adds to them: an inode count past the
/// node ids there are, or a block count past the main area, is corruption.
fn check_counters(geo: &Geometry, base: u64, r: &RawCpHeader) -> Result<()> {
    if r.valid_inodes.get() > geo.nid_count || r.valid_nodes.get() > geo.nid_count {
        return Err(Error::corrupt(base, "checkpoint: more valid inodes or nodes than node ids"));
    }
    if r.valid_blocks.get().max(r.reserved_blocks.get()) > geo.main_blocks() {
        return Err(Error::corrupt(base, "checkpoint: more valid or reserved blocks than the main area holds"));
    }
    Ok(())
}

/// The open-segment summaries of a pack's payload (part 7): `n` of them, each of a segment
/// one of the checkpoint's `logs` is filling, none twice, none longer than a segment.
fn decode_summaries(
    geo: &Geometry,
    base: u64,
    mut p: &[u8],
    n: u32,
    logs: &[LogPos; LOG_COUNT],
) -> Result<Vec<OpenSummary>> {
    if n as usize > LOG_COUNT {
        return Err(Error::corrupt(base, "checkpoint: more open-segment summaries than logs"));
    }
    let short = || Error::corrupt(base, "checkpoint: payload shorter than its contents");
    let mut out: Vec<OpenSummary> = Vec::with_capacity(n as usize);
    // Bounded: `n` ≤ LOG_COUNT, each summary's entries ≤ segment_blocks.
    for _ in 0..n {
        let (head, rest) = RawOpenSummaryHead::ref_from_prefix(p).map_err(|_| short())?;
        let (segno, count) = (head.segno.get(), head.entry_count.get());
        if !logs.iter().any(|l| l.segno == segno) || out.iter().any(|o| o.segno == segno) {
            return Err(Error::corrupt(base, "checkpoint: summary of a segment no log is filling"));
        }
        if count > geo.segment_blocks {
            return Err(Error::corrupt(base, "checkpoint: open-segment summary longer than a segment"));
        }
        let (raw, rest) = <[RawSsaEntry]>::ref_from_prefix_with_elems(rest, count as usize).map_err(|_| short())?;
        let entries = raw.iter().map(|e| Summary { nid: e.nid.get(), ofs: e.ofs.get() }).collect();
        out.push(OpenSummary { segno, entries });
        p = rest;
    }
    Ok(out)
}

/// The orphan list of a pack's payload (`Err(None)`: shorter than `n` entries).
fn decode_orphans(geo: &Geometry, base: u64, p: &[u8], n: u32) -> core::result::Result<Vec<u32>, Option<Error>> {
    let (raw_orphans, _) = <[U32]>::ref_from_prefix_with_elems(p, n as usize).map_err(|_| None)?;
    let mut orphans = Vec::with_capacity(n as usize);
    for raw in raw_orphans {
        let ino = raw.get();
        if ino == NULL_NID || ino >= geo.nid_count {
            return Err(Some(Error::corrupt(base, "checkpoint: orphan inode out of range")));
        }
        orphans.push(ino);
    }
    Ok(orphans)
}

/// The geometry a pack of an image with room to grow describes: the superblock's areas at
/// the size its header records (validated as a superblock's geometry is, and never below
/// the superblock's size: a resize only grows). Other images: the superblock's.
fn sized_geometry(sb_geo: &Geometry, base: u64, r: &RawCpHeader) -> Result<Geometry> {
    if sb_geo.max_main_segments == 0 {
        return Ok(*sb_geo);
    }
    let (total, segments) = (r.size_total_blocks.get(), r.size_main_segments.get());
    let nat_blocks = r.size_nat_blocks.get();
    let sized = sb_geo.with_size(total, segments, r.size_reserved_segments.get());
    match sized {
        Ok(g) if g.nat_blocks == nat_blocks && total >= sb_geo.total_blocks && segments >= sb_geo.main_segments => {
            Ok(g)
        }
        _ => Err(Error::corrupt(base, "checkpoint: size outside the room the superblock gives")),
    }
}

/// The six log positions of header `r` (pack at `base`): each inside the main area, no two
/// in one segment.
fn decode_logs(geo: &Geometry, base: u64, r: &RawCpHeader) -> Result<[LogPos; LOG_COUNT]> {
    let mut logs = [LogPos::default(); LOG_COUNT];
    for (l, raw) in logs.iter_mut().zip(&r.logs) {
        l.segno = raw.segno.get();
        l.blkoff = raw.blkoff.get();
        if l.segno >= geo.main_segments || l.blkoff > geo.segment_blocks {
            return Err(Error::corrupt(base, "checkpoint: active log position out of range"));
        }
    }
    for i in 0..LOG_COUNT {
        for j in 0..i {
            if logs[i].segno == logs[j].segno {
                return Err(Error::corrupt(base, "checkpoint: two logs share a segment"));
            }
        }
    }
    Ok(logs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemDevice;

    fn geo() -> Geometry {
        Geometry::compute(8 << 8, 16, 5).unwrap()
    }

    fn sample(version: u64) -> Checkpoint {
        let g = geo();
        let mut cp = Checkpoint {
            version,
            nat_slots: vec![0; g.nat_blocks as usize],
            sit_slots: vec![1; g.sit_blocks as usize],
            ssa_slots: vec![0; g.main_segments as usize],
            ..Default::default()
        };
        for (i, l) in cp.logs.iter_mut().enumerate() {
            l.segno = i as u32;
            l.blkoff = 3;
        }
        cp.nat_journal.push((5, NatEntry { ino: 5, addr: g.main_start + 7 }));
        cp.sit_journal.push((2, SegEntry::default()));
        cp.orphans.push(9);
        let e = |nid, ofs| crate::ssa::Summary { nid, ofs };
        cp.summaries.push(OpenSummary { segno: 4, entries: vec![e(3, 0), e(0, 0), e(7, 0x8001)] });
        cp
    }

    fn write(dev: &mut MemDevice, cp: &Checkpoint, pack: usize, skip_payload: bool) {
        let g = geo();
        for (i, b) in cp.encode(&g, pack).unwrap().iter().enumerate() {
            if skip_payload && i > 0 {
                continue;
            }
            dev.write(g.cp_pack_addr(pack) + i as u64, b, crate::WriteFlags::empty()).unwrap();
        }
    }

    #[test]
    fn round_trip() {
        let mut dev = MemDevice::new(2048);
        let cp = sample(7);
        write(&mut dev, &cp, 1, false);
        let (got, pack) = Checkpoint::read_newest(&mut dev, &geo()).unwrap();
        assert_eq!(pack, 1);
        assert_eq!(got, cp);
    }

    /// An open-segment summary that no log's segment names, names one twice, or is longer
    /// than a segment is corruption naming the pack, not a summary taken on trust.
    #[test]
    fn bad_open_segment_summaries_are_corruption() {
        let g = geo();
        let bad: [fn(&mut Checkpoint); 4] = [
            |cp| cp.summaries[0].segno = 40,
            |cp| cp.summaries.push(cp.summaries[0].clone()),
            |cp| cp.summaries[0].entries = vec![Summary::default(); 17],
            |cp| cp.summaries = (0..7).map(|s| OpenSummary { segno: s % 6, entries: vec![] }).collect(),
        ];
        for (i, f) in bad.iter().enumerate() {
            let mut cp = sample(7);
            f(&mut cp);
            // Encoded by hand where `encode` itself refuses (more summaries than logs).
            let blocks = match cp.encode(&g, 1) {
                Ok(b) => b,
                Err(_) => {
                    let n = cp.summaries.len();
                    cp.summaries.truncate(LOG_COUNT);
                    let mut b = cp.encode(&g, 1).unwrap();
                    view_mut::<RawCpHeader>(&mut b[0]).summary_count.set(n as u32);
                    seal(&mut b[0]);
                    b
                }
            };
            match Checkpoint::decode_blocks(&g, 1, &blocks) {
                Err(Error::Corrupt { block, .. }) => assert_eq!(block, g.cp_pack_addr(1), "case {i}"),
                other => panic!("case {i}: {other:?}"),
            }
        }
    }

    #[test]
    fn both_packs_valid_takes_higher_version() {
        let mut dev = MemDevice::new(2048);
        write(&mut dev, &sample(7), 1, false);
        write(&mut dev, &sample(8), 0, false);
        assert_eq!(Checkpoint::read_newest(&mut dev, &geo()).unwrap().0.version, 8);
    }

    #[test]
    fn crash_while_header_written_torn_falls_back() {
        let mut dev = MemDevice::new(2048);
        write(&mut dev, &sample(7), 1, false);
        write(&mut dev, &sample(8), 0, false);
        let a = geo().cp_pack_addr(0);
        dev.block_mut(a)[100] ^= 0x40; // a torn / corrupted header sector
        assert_eq!(Checkpoint::read_newest(&mut dev, &geo()).unwrap().0.version, 7);
    }

    #[test]
    fn header_durable_payload_lost_falls_back() {
        let mut dev = MemDevice::new(2048);
        write(&mut dev, &sample(7), 1, false);
        // Pack 0 gets its header, but its payload never reached the device.
        write(&mut dev, &sample(8), 0, true);
        let (cp, pack) = Checkpoint::read_newest(&mut dev, &geo()).unwrap();
        assert_eq!((cp.version, pack), (7, 1));
    }

    #[test]
    fn crash_before_header_keeps_previous() {
        let mut dev = MemDevice::new(2048);
        write(&mut dev, &sample(7), 1, false);
        assert_eq!(Checkpoint::read_newest(&mut dev, &geo()).unwrap().0.version, 7);
    }

    #[test]
    fn header_torn_at_sector_boundaries_is_rejected() {
        let g = geo();
        let mut dev = MemDevice::new(2048);
        write(&mut dev, &sample(7), 1, false);
        let mut old = sample(5);
        for l in old.logs.iter_mut() {
            l.blkoff = 1;
        }
        write(&mut dev, &old, 0, false);
        // Checkpoint 9 goes to pack 0, but only the header's first sector reaches the disk.
        let new = sample(9).encode(&g, 0).unwrap();
        let a = g.cp_pack_addr(0);
        for (i, b) in new.iter().enumerate().skip(1) {
            dev.write(a + i as u64, b, crate::WriteFlags::empty()).unwrap();
        }
        dev.block_mut(a)[..512].copy_from_slice(&new[0][..512]);
        let (cp, pack) = Checkpoint::read_newest(&mut dev, &g).unwrap();
        assert_eq!((cp.version, pack), (7, 1), "a torn header mixing versions must not be used");
    }

    #[test]
    fn neither_pack_valid_is_an_error() {
        let mut dev = MemDevice::new(2048);
        assert!(matches!(Checkpoint::read_newest(&mut dev, &geo()), Err(Error::Corrupt { .. })));
    }

    #[test]
    fn io_error_on_a_pack_is_reported() {
        let mut dev = MemDevice::new(2048);
        write(&mut dev, &sample(7), 1, false);
        dev.fail_read_block = Some(geo().cp_pack_addr(0));
        assert!(matches!(Checkpoint::read_newest(&mut dev, &geo()), Err(Error::Io { .. })));
    }
}
