//! Growing a filesystem in place (`rollfs resize`; DESIGN.md, *Growing an image*): what a
//! grow writes, worked out before anything is written.
//!
//! Only an image with room to grow (`FEATURE_INCOMPAT_GROW`, `mkfs --max-size`) grows: its
//! NAT, SIT and SSA areas and checkpoint packs were laid out for the largest size, so a
//! grow moves nothing. It adds the NAT and SIT blocks of the new node ids and segments (in
//! slots no checkpoint of the old size reads) and commits one checkpoint, into the pack
//! not in use, whose header records the new size. That header, written last after a flush
//! and flushed itself, is the only commit point: before it is durable every mount sees the old size
//! and the old checkpoint, after it the new ones. The superblocks are not written (they
//! keep the size mkfs gave; mount takes the size from the checkpoint), so no crash can
//! leave two copies that disagree. Unmounted, the writes are the caller's to issue, in
//! order (`rollfs resize`: the tables, then [`Checkpoint::commit`]); mounted,
//! [`Filesystem::grow`] issues the same ones after a checkpoint and then takes the new size
//! in memory (online grow, `rollfs resize MOUNTPOINT`).

use crate::checkpoint::{Checkpoint, CP_FLAG_UMOUNT};
use crate::error::{Error, Result};
use crate::fs::Timestamp;
use crate::layout::Geometry;
use crate::nat::Nat;
use crate::sit::Sit;
use crate::superblock::{read_superblock, Superblock};
use crate::{Block, BlockDevice, Filesystem};
use alloc::boxed::Box;
use alloc::vec::Vec;

/// What growing a filesystem writes, and the sizes before and after.
pub struct GrowPlan {
    pub superblock: Superblock,
    pub old: Geometry,
    pub new: Geometry,
    /// The NAT and SIT blocks the new size adds (address, contents), each into slot 0 of
    /// a block no checkpoint of the old size reads.
    pub tables: Vec<(u64, Box<Block>)>,
    /// The checkpoint that makes the new size live, and the pack it goes to (the one the
    /// newest checkpoint does not use).
    pub checkpoint: Checkpoint,
    pub pack: usize,
}

/// The filesystem's geometry now (the newest checkpoint's size on a grown image), its
/// superblock and its newest checkpoint.
pub fn current<D: BlockDevice>(dev: &mut D) -> Result<(Superblock, Checkpoint, usize, Geometry)> {
    let sb = read_superblock(dev)?;
    let (cp, pack) = Checkpoint::read_newest(dev, &sb.geometry)?;
    let geo = cp.geometry.unwrap_or(sb.geometry);
    Ok((sb, cp, pack, geo))
}

/// Plans growing the filesystem on `dev` to a device of `total_blocks` (the device may
/// still be smaller: the caller extends it before writing). `Ok(None)` when the new size
/// adds no segment. Refused: an image without room to grow, a size below the current one
/// or past the room mkfs gave (`Superblock::max_blocks`), and an image whose newest
/// checkpoint is not a clean unmount's. The caller must have mounted and unmounted the
/// image first (`rollfs resize` does): a crash can leave an fsync chain after even a clean
/// unmount's checkpoint (a later mount wrote it), and only roll-forward sees it; the
/// chain belongs to the checkpoint it follows, and recovery would not take it after the
/// grow's.
pub fn plan_grow<D: BlockDevice>(dev: &mut D, total_blocks: u64) -> Result<Option<GrowPlan>> {
    let (sb, cp, pack, old) = current(dev)?;
    refuse_size(&sb, total_blocks)?;
    if cp.flags & CP_FLAG_UMOUNT == 0 || !cp.orphans.is_empty() {
        return Err(Error::Invalid("the image was not cleanly unmounted: mount and unmount it first"));
    }
    let Some(new) = grown_geometry(&sb, &old, total_blocks)? else { return Ok(None) };
    let version = crate::checkpoint::next_version(cp.version, 1)?;
    let tables = new_tables(&old, &new, version);
    let mut next = grown_checkpoint(&cp, &new, version);
    next.flags = CP_FLAG_UMOUNT;
    Ok(Some(GrowPlan { superblock: sb, old, new, tables, checkpoint: next, pack: 1 - pack }))
}

/// The refusals of a grow to `total_blocks` that do not depend on the current size: an
/// image without room to grow, a size past the room mkfs gave it.
fn refuse_size(sb: &Superblock, total_blocks: u64) -> Result<()> {
    if !sb.can_grow() {
        return Err(Error::Invalid("the image has no room to grow (made without mkfs --max-size)"));
    }
    if total_blocks > sb.max_blocks {
        return Err(Error::Invalid("larger than the room the image was made with (mkfs --max-size)"));
    }
    Ok(())
}

/// The geometry a filesystem of geometry `old` grows to on a device of `total_blocks`
/// (offline and online grows alike): refused as [`plan_grow`] says; `Ok(None)` when the
/// size adds no segment.
pub fn grown_geometry(sb: &Superblock, old: &Geometry, total_blocks: u64) -> Result<Option<Geometry>> {
    refuse_size(sb, total_blocks)?;
    let new = old.grown(total_blocks, sb.overprovision_pct)?;
    Ok((new.main_segments != old.main_segments).then_some(new))
}

/// The NAT and SIT blocks growing `old` to `new` adds, stamped `version` (the grow's
/// checkpoint), each into slot 0 of a block no checkpoint of the old size reads.
fn new_tables(old: &Geometry, new: &Geometry, version: u64) -> Vec<(u64, Box<Block>)> {
    let mut tables = Vec::new();
    for i in old.nat_blocks..new.nat_blocks {
        tables.push((new.nat_addr(i, 0), Nat::encode_free_block(i, version)));
    }
    // The last SIT block of the old size already holds the first new segments: their
    // entries were encoded free (all zero) with it.
    for i in old.sit_blocks..new.sit_blocks {
        tables.push((new.sit_addr(i, 0), Sit::encode_free_block(i, version)));
    }
    tables
}

/// The checkpoint that makes the size `new` live: `cp` (the newest, whose tables and
/// journals are what is on the device) at `version`, its slot bitmaps extended with slot
/// 0 for the new blocks and segments.
fn grown_checkpoint(cp: &Checkpoint, new: &Geometry, version: u64) -> Checkpoint {
    let mut next = cp.clone();
    next.version = version;
    next.nat_slots.resize(new.nat_blocks as usize, 0);
    next.sit_slots.resize(new.sit_blocks as usize, 0);
    // A new segment's summary is never read before the segment is opened (which starts
    // it afresh), so its slot bit is 0 and nothing is written for it.
    next.ssa_slots.resize(new.main_segments as usize, 0);
    next.geometry = Some(*new);
    next
}

/// Issues a plan in the order that makes it crash-safe: the tables, then the checkpoint
/// (payload, wait, flush, header, wait, flush). What `rollfs resize` does, and what the
/// tests of a grow use when no write log is wanted. A failed flush after the header is an
/// error, though the new size may be durable: the caller reads which size the image has.
pub fn write_plan<D: BlockDevice>(dev: &mut D, plan: &GrowPlan) -> Result<()> {
    write_tables(dev, &plan.tables)?;
    plan.checkpoint.commit(dev, &plan.new, plan.pack)?.flushed()
}

impl<D: BlockDevice> Filesystem<D> {
    /// Grows the mounted filesystem to a device of `total_blocks` (online grow; DESIGN.md,
    /// *Growing an image*): the device must already be that long (the driver extends an
    /// image file first). `Ok(None)`: the size adds no segment, nothing was done;
    /// `Ok(Some(geometry))`: the new size is committed and in use.
    ///
    /// Refused before anything is written: a read-only or shut-down filesystem (EROFS,
    /// EIO), no room to grow, a size below the current one or past the room (EINVAL), a
    /// device shorter than the size (EINVAL), orphans the new size's checkpoint pack has no
    /// room for (ENOSPC).
    ///
    /// Order: an ordinary checkpoint at the old size (every dirty block written back, the
    /// fsync chain since the last checkpoint covered by it); then the grow's writes, as the
    /// offline grow's: the new NAT and SIT blocks (slots no checkpoint of the old size
    /// reads), then one checkpoint, the same as that one but for its size, whose header is
    /// the commit point. Memory takes the new size only once that header's write completed.
    /// Failures: a failed write or flush shuts the filesystem down as any failed checkpoint
    /// does (the device failed a write: nothing more is written over what either pack
    /// names), at the old size in memory (the header's write did not complete) or, when
    /// only the flush after the header failed, at the new size (it may be durable).
    pub fn grow(&mut self, total_blocks: u64, now: Timestamp) -> Result<Option<Geometry>> {
        self.check_writable()?;
        let Some(new) = grown_geometry(&self.sb, &self.geo, total_blocks)? else { return Ok(None) };
        if self.dev.block_count() < new.total_blocks {
            return Err(Error::Invalid("the device is smaller than the size to grow to"));
        }
        if self.orphans.len() > new.orphan_capacity() as usize {
            return Err(Error::NoSpace);
        }
        self.checkpoint(false, now)?;
        self.touch(now);
        let version = crate::checkpoint::next_version(self.cp.version, 1)?;
        let tables = new_tables(&self.geo, &new, version);
        let mut next = grown_checkpoint(&self.cp, &new, version);
        next.time_sec = now.sec;
        if crate::mutant!("mutant-grow-header-before-tables") {
            // Mutant: the checkpoint of the new size committed before the NAT and SIT
            // blocks it names are written (and they are never flushed).
            return self.grow_commit(next, new).and_then(|g| write_tables(&mut self.dev, &tables).map(|()| g));
        }
        if let Err(e) = write_tables(&mut self.dev, &tables) {
            return self.fail(e);
        }
        self.grow_commit(next, new)
    }

    /// Commits `next`, the checkpoint of size `new`, into the pack not in use and adopts
    /// the new size once its header's write completed (see [`Filesystem::grow`]).
    fn grow_commit(&mut self, next: Checkpoint, new: Geometry) -> Result<Option<Geometry>> {
        let pack = 1 - self.cp_pack;
        let done = match next.commit(&mut self.dev, &new, pack) {
            Ok(done) => done,
            Err(e) => return self.fail(e),
        };
        self.stats.meta_blocks_written += done.blocks;
        self.stats.flushes += done.flushes;
        self.geo = new;
        // A reserve given as a share of the size grows with it (as ext4's online resize keeps
        // its ratio); one given in blocks stays.
        self.opts.root_reserve_blocks = crate::fs::root_reserve_blocks(&self.opts, &new);
        self.nat.grow_to(&new);
        self.sit.grow_to(&new);
        self.ssa.grow_to(&new);
        self.seg.grow_to(&new);
        debug_assert!(self.nat.slots == next.nat_slots && self.sit.slots == next.sit_slots);
        self.cp = next;
        self.cp_pack = pack;
        self.stats.checkpoints += 1;
        match done.flush_error {
            None => Ok(Some(new)),
            Some(e) => self.fail(e.into()),
        }
    }
}

/// Submits a grow's table blocks (not waited for: the commit's flush covers them).
fn write_tables<D: BlockDevice>(dev: &mut D, tables: &[(u64, Box<Block>)]) -> Result<()> {
    for (addr, b) in tables {
        dev.write(*addr, b, crate::WriteFlags::empty())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{Credentials, MkfsOptions, MountOptions, Timestamp};
    use crate::layout::ROOT_INO;
    use crate::{Filesystem, MemDevice};
    extern crate std;

    const T: Timestamp = Timestamp::new(1_700_000_000, 0);
    const C: Credentials = Credentials { uid: 0, gid: 0 };

    fn grown_copy(dev: &MemDevice, blocks: u64) -> MemDevice {
        let mut out = dev.clone();
        out.set_block_count(blocks);
        out
    }

    fn image(blocks: u64, max_blocks: u64) -> MemDevice {
        let opts = MkfsOptions { segment_blocks: 16, max_blocks, ..MkfsOptions::default() };
        let dev = Filesystem::format(MemDevice::new(blocks), &opts).unwrap();
        let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
        let ino = fs.create(ROOT_INO, b"f", 0o644, C, T).unwrap().ino;
        fs.write(ino, 0, &[7u8; 20_000], T).unwrap();
        fs.unmount(T).unwrap()
    }

    #[test]
    fn a_grown_image_mounts_at_the_new_size_and_checks_clean() {
        let dev = image(2048, 8192);
        let mut big = grown_copy(&dev, 8192);
        let plan = plan_grow(&mut big, 8192).unwrap().expect("grows");
        assert!(plan.new.main_segments > plan.old.main_segments && plan.new.main_segments <= plan.old.ssa_capacity());
        write_plan(&mut big, &plan).unwrap();
        let fs = Filesystem::mount(big, &MountOptions::default(), T).unwrap();
        assert_eq!(fs.geometry().main_segments, plan.new.main_segments);
        let mut dev = fs.unmount(T).unwrap();
        let r = crate::fsck::check(&mut dev).unwrap();
        assert!(r.is_clean(), "{:?}", r.problems);
        // Growing again to the same size has nothing to do.
        assert!(plan_grow(&mut dev, 8192).unwrap().is_none());
    }

    /// What the room costs: the main-area blocks a device loses to metadata laid out for a
    /// larger one (DESIGN.md, *Growing an image*, quotes these figures). Bounded by 0.6 %
    /// of the maximum size with 2 MiB segments: two SSA blocks per segment (0.39 %), the NAT
    /// (0.1 %) and the orphan room of the larger node id count.
    #[test]
    fn the_room_to_grow_costs_little() {
        for size in [256u64 << 20, 1 << 30, 8 << 30, 64 << 30] {
            for factor in [2u64, 4, 8] {
                let (blocks, max) = (size / 4096, size * factor / 4096);
                let plain = Geometry::compute(blocks, 512, 5).unwrap();
                let room = Geometry::compute_with_max(blocks, max, 512, 5).unwrap();
                let lost = (plain.main_segments - room.main_segments) as u64 * 512;
                let grown = room.grown(max, 5).unwrap();
                std::eprintln!(
                    "size {} MiB, max {factor}x: {lost} blocks lost ({:.2} % of the size), user {} -> {} MiB at max",
                    size >> 20,
                    lost as f64 * 100.0 / blocks as f64,
                    room.user_blocks() / 256,
                    grown.user_blocks() / 256
                );
                assert!(lost * 1000 <= max * 6, "{lost} blocks lost for {max}");
                assert_eq!(grown.main_segments, room.max_main_segments);
                assert_eq!(grown.user_blocks(), Geometry::compute(max, 512, 5).unwrap().user_blocks());
            }
        }
    }

    #[test]
    fn refusals_change_nothing() {
        let mut plain = image(2048, 0);
        assert!(matches!(plan_grow(&mut plain, 4096), Err(Error::Invalid(m)) if m.contains("no room")));
        let mut dev = image(2048, 4096);
        assert!(matches!(plan_grow(&mut dev, 1024), Err(Error::Invalid(m)) if m.contains("shrink")));
        assert!(matches!(plan_grow(&mut dev, 4097), Err(Error::Invalid(m)) if m.contains("room")));
    }
}
