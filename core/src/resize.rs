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
//! leave two copies that disagree. The writes are the caller's to issue, in order
//! (`rollfs resize`: the tables, then [`Checkpoint::commit`]).

use crate::checkpoint::{Checkpoint, CP_FLAG_UMOUNT};
use crate::error::{Error, Result};
use crate::layout::Geometry;
use crate::nat::Nat;
use crate::sit::Sit;
use crate::superblock::{read_superblock, Superblock};
use crate::{Block, BlockDevice};
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
    if !sb.can_grow() {
        return Err(Error::Invalid("the image has no room to grow (made without mkfs --max-size)"));
    }
    if total_blocks > sb.max_blocks {
        return Err(Error::Invalid("larger than the room the image was made with (mkfs --max-size)"));
    }
    if cp.flags & CP_FLAG_UMOUNT == 0 || !cp.orphans.is_empty() {
        return Err(Error::Invalid("the image was not cleanly unmounted: mount and unmount it first"));
    }
    let new = old.grown(total_blocks, sb.overprovision_pct)?;
    if new.main_segments == old.main_segments {
        return Ok(None);
    }
    let version = cp.version + 1;
    let mut tables = Vec::new();
    for i in old.nat_blocks..new.nat_blocks {
        tables.push((new.nat_addr(i, 0), Nat::encode_free_block(i, version)));
    }
    // The last SIT block of the old size already holds the first new segments: their
    // entries were encoded free (all zero) with it.
    for i in old.sit_blocks..new.sit_blocks {
        tables.push((new.sit_addr(i, 0), Sit::encode_free_block(i, version)));
    }
    let mut next = cp;
    next.version = version;
    next.flags = CP_FLAG_UMOUNT;
    next.nat_slots.resize(new.nat_blocks as usize, 0);
    next.sit_slots.resize(new.sit_blocks as usize, 0);
    // A new segment's summary is never read before the segment is opened (which starts
    // it afresh), so its slot bit is 0 and nothing is written for it.
    next.ssa_slots.resize(new.main_segments as usize, 0);
    next.geometry = Some(new);
    Ok(Some(GrowPlan { superblock: sb, old, new, tables, checkpoint: next, pack: 1 - pack }))
}

/// Issues a plan in the order that makes it crash-safe: the tables, then the checkpoint
/// (payload, wait, flush, header, wait, flush). What `rollfs resize` does, and what the
/// tests of a grow use when no write log is wanted. A failed flush after the header is an
/// error, though the new size may be durable: the caller reads which size the image has.
pub fn write_plan<D: BlockDevice>(dev: &mut D, plan: &GrowPlan) -> Result<()> {
    for (addr, b) in &plan.tables {
        dev.write(*addr, b, crate::WriteFlags::empty())?;
    }
    plan.checkpoint.commit(dev, &plan.new, plan.pack)?.flushed()
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
