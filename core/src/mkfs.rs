//! mkfs: [`Filesystem::format`] writes a new, empty filesystem — the superblocks, the first
//! checkpoint pack, NAT/SIT/SSA slot 0 and the root directory's inode.
//!
//! Order (why a half-formatted device is never taken for a filesystem): the old superblocks
//! are zeroed and both checkpoint headers marked unused (`CP_UNUSED_MAGIC`) first; everything else is written next; the
//! superblocks go last, and the whole is waited for and flushed before `format` returns.

use crate::checkpoint::{Checkpoint, LogPos, CP_FLAG_UMOUNT};
use crate::device::{BlockDevice, WriteFlags};
use crate::error::{Error, Result};
use crate::fs::{volume_seed, Filesystem, MkfsOptions};
use crate::layout::*;
use crate::nat::{Nat, NatEntry};
use crate::node::{self, inode, FileType, NodeType};
use crate::segment::{Log, SegmentManager};
use crate::sit::Sit;
use crate::ssa::{Ssa, Summary};
use crate::superblock::Superblock;
use crate::zero_block;

impl<D: BlockDevice> Filesystem<D> {
    /// Formats `dev` (mkfs) and returns it. Everything is written and flushed before the
    /// superblocks, so a half-formatted device is never taken for a filesystem.
    pub fn format(mut dev: D, opts: &MkfsOptions) -> Result<D> {
        if opts.label.len() > crate::superblock::SB_LABEL_MAX {
            return Err(Error::Invalid("label longer than 32 bytes"));
        }
        if opts.root_reserve_pct.is_some_and(|p| p > crate::superblock::ROOT_RESERVE_PCT_MAX) {
            return Err(Error::Invalid("root reserve above 50 %"));
        }
        let geo = Geometry::compute_with_max(
            dev.block_count(),
            opts.max_blocks,
            opts.segment_blocks,
            opts.overprovision_pct,
        )?;
        let sb = new_superblock(opts, &geo);
        let seed = volume_seed(&opts.uuid);
        let version = 1u64;
        // Invalidate whatever superblocks and checkpoints a previous filesystem left.
        let zero = zero_block();
        for a in SUPERBLOCK_ADDRS {
            dev.write(a, &zero, WriteFlags::empty())?;
        }
        for pack in 0..2 {
            dev.write(geo.cp_pack_addr(pack), &crate::checkpoint::unused_pack_header(pack), WriteFlags::empty())?;
        }
        let mut nat = Nat::new_empty(&geo);
        let mut sit = Sit::new_empty(&geo);
        let mut ssa = Ssa::new_empty(&geo);
        let mut logs = [LogPos::default(); LOG_COUNT];
        for (i, l) in logs.iter_mut().enumerate() {
            l.segno = i as u32;
            sit.set_type_and_wear(i as u32, Log::ALL[i].seg_type(), 1);
            ssa.reset(i as u32);
        }
        let mut seg = SegmentManager::from_checkpoint(&geo, &sit, logs)?;
        // The root directory's inode, in the hot node log.
        let mut root = zero_block();
        node::init_footer(&mut root, ROOT_INO, ROOT_INO, NodeType::Inode, 0);
        inode::set_mode(&mut root, (FileType::Directory.mode_bits() | 0o755) as u16);
        inode::set_uid(&mut root, opts.root_owner.uid);
        inode::set_gid(&mut root, opts.root_owner.gid);
        inode::set_links(&mut root, 2);
        for (s, n) in [
            (inode::OFF_ATIME_SEC, inode::OFF_ATIME_NSEC),
            (inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC),
            (inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC),
            (inode::OFF_CRTIME_SEC, inode::OFF_CRTIME_NSEC),
        ] {
            inode::set_time(&mut root, s, n, opts.time);
        }
        inode::set_pino(&mut root, ROOT_INO);
        inode::set_generation(&mut root, 1);
        let addr = seg.alloc(&geo, &mut sit, &mut ssa, Log::HotNode, opts.time.sec.max(0) as u64, true)?;
        ssa.set(&mut dev, &geo, addr, Summary { nid: ROOT_INO, ofs: 0 }, version)?;
        let next = seg.peek_next(&geo, &mut sit, &mut ssa, Log::HotNode)?;
        node::seal_for_write(&mut root, version, next, seed);
        dev.write(addr as u64, &root, WriteFlags::empty())?;
        nat.set(ROOT_INO, NatEntry { ino: ROOT_INO, addr });
        // Slot 0 of every NAT and SIT block, and the summaries of the open segments.
        for i in 0..geo.nat_blocks {
            dev.write(geo.nat_addr(i, 0), &nat.encode_block(i, version), WriteFlags::empty())?;
        }
        for i in 0..geo.sit_blocks {
            dev.write(geo.sit_addr(i, 0), &sit.encode_block(i, version), WriteFlags::empty())?;
        }
        for s in ssa.dirty_segments() {
            dev.write(geo.ssa_addr(s, 0), &ssa.encode(s, version), WriteFlags::empty())?;
        }
        let cp = Checkpoint {
            version,
            flags: CP_FLAG_UMOUNT,
            valid_blocks: 1,
            valid_nodes: 1,
            valid_inodes: 1,
            time_sec: opts.time.sec,
            logs: seg.logs,
            next_generation: 2,
            written_blocks: 1,
            nat_slots: nat.slots.clone(),
            sit_slots: sit.slots.clone(),
            ssa_slots: ssa.slots.clone(),
            geometry: (geo.max_main_segments != 0).then_some(geo),
            // No journal entries, no orphan, no reservation.
            ..Default::default()
        };
        cp.commit(&mut dev, &geo, 0)?.flushed()?;
        let sbb = sb.encode();
        for a in SUPERBLOCK_ADDRS {
            dev.write(a, &sbb, WriteFlags::empty())?;
        }
        dev.wait_writes()?;
        dev.flush()?;
        Ok(dev)
    }
}

/// The superblock mkfs writes for `opts` on a device laid out as `geo`.
fn new_superblock(opts: &MkfsOptions, geo: &Geometry) -> Superblock {
    Superblock {
        version_major: crate::superblock::FORMAT_VERSION_MAJOR,
        version_minor: crate::superblock::FORMAT_VERSION_MINOR,
        feature_compat: crate::superblock::FEATURE_COMPAT_ATOMIC_WRITE,
        feature_incompat: incompat_features(opts, geo),
        feature_ro_compat: if opts.data_checksums { crate::superblock::FEATURE_RO_COMPAT_DATASUM } else { 0 },
        geometry: *geo,
        root_ino: ROOT_INO,
        uuid: opts.uuid,
        label: opts.label.clone(),
        create_sec: opts.time.sec,
        create_nsec: opts.time.nsec,
        hash_seed: opts.hash_seed,
        root_reserve_pct: opts.root_reserve_pct,
        max_blocks: if geo.max_main_segments != 0 { opts.max_blocks.min(u32::MAX as u64) } else { 0 },
        overprovision_pct: if geo.max_main_segments != 0 { opts.overprovision_pct } else { 0 },
    }
}

/// The incompatible feature bits `opts` asks for (room to grow: when `geo` has it).
fn incompat_features(opts: &MkfsOptions, geo: &Geometry) -> u32 {
    use crate::superblock::{
        FEATURE_INCOMPAT_CP_SUMMARIES, FEATURE_INCOMPAT_DIR_V2, FEATURE_INCOMPAT_GROW, FEATURE_INCOMPAT_INLINE,
        FEATURE_INCOMPAT_MIXED_NODE, FEATURE_INCOMPAT_NS_RECORDS, FEATURE_INCOMPAT_PREALLOC,
    };
    let bits = [
        (opts.dir_v2, FEATURE_INCOMPAT_DIR_V2),
        (opts.prealloc_on_disk, FEATURE_INCOMPAT_PREALLOC),
        (opts.inline_data, FEATURE_INCOMPAT_INLINE),
        (opts.ns_records, FEATURE_INCOMPAT_NS_RECORDS),
        (opts.mixed_node, FEATURE_INCOMPAT_MIXED_NODE),
        (opts.cp_summaries, FEATURE_INCOMPAT_CP_SUMMARIES),
        (geo.max_main_segments != 0, FEATURE_INCOMPAT_GROW),
    ];
    bits.iter().filter(|(on, _)| *on).fold(0, |all, (_, bit)| all | bit)
}
