//! Summaries of open segments in the checkpoint (`FEATURE_INCOMPAT_CP_SUMMARIES`, issue 38;
//! `Ssa::flush`): the summary of a segment a log is filling travels in the checkpoint's
//! payload instead of being rewritten to its SSA slot by every checkpoint. Scenarios, each a
//! test named after it:
//!
//! | scenario | what must hold |
//! |---|---|
//! | a checkpoint after small changes in the open segments | no summary block written to the SSA area; the pack carries them; fewer blocks and ranges than without the feature |
//! | segments filled and closed, remounts, cleaning, between checkpoints | every summary right (fsck compares each valid block's owner with it), contents intact |
//! | a power cut at every write of a checkpoint that carries summaries | the image mounts, fsck clean |
//! | the feature turned on for an existing image (`rollfs tune -O cpsum`) | its checkpoints carry summaries from the next mount on; fsck clean |
//! | an online grow of a pack the summaries filled (review 55) | the grown copy of the checkpoint still fits its pack: the grow succeeds, fsck clean |
//!
//! `mutant-cpsum-unpinned` (the payload's summaries neither kept nor written again) fails
//! `summaries_stay_right_across_closed_segments_remounts_and_cleaning`: a segment the logs
//! leave after a checkpoint keeps the stale summary of its slot.
mod common;
use common::limits::{big_cache, every_cut_of_mount_recovers, pattern, read_all, t, C};
use common::mixed::Mixed;
use common::rec::Rec;
use common::CrashDevice;
use rollfs_core::checkpoint::Checkpoint;
use rollfs_core::layout::{CP_NAT_JOURNAL_ENTRY_SIZE, CP_SIT_JOURNAL_ENTRY_SIZE};
use rollfs_core::superblock::read_superblock;
use rollfs_core::*;

const UUID: [u8; 16] = [55; 16];
const BLOCKS: u64 = 4096;

/// `rollfs mkfs`'s default parts, with or without the summaries in the checkpoint.
fn opts(cp_summaries: bool) -> MkfsOptions {
    MkfsOptions {
        segment_blocks: 64,
        uuid: UUID,
        dir_v2: true,
        inline_data: true,
        prealloc_on_disk: true,
        ns_records: true,
        mixed_node: true,
        cp_summaries,
        ..Default::default()
    }
}

/// Consecutive runs of addresses in `writes`: the device ranges they make.
fn ranges(writes: &[u64]) -> usize {
    writes.iter().enumerate().filter(|&(i, &a)| i == 0 || writes[i - 1] + 1 != a).count()
}

#[test]
fn a_checkpoint_writes_no_summary_block_of_an_open_segment() {
    let mut seen = Vec::new();
    for on in [false, true] {
        let img = Filesystem::format(MemDevice::new(BLOCKS), &opts(on)).unwrap();
        let g = read_superblock(&mut img.clone()).unwrap().geometry;
        let mut fs = Filesystem::mount(Rec::new(img), &big_cache(), t(10)).unwrap();
        let d = fs.mkdir(1, b"d", 0o755, C, t(11)).unwrap().ino;
        let files: Vec<Ino> =
            (0..6).map(|i| fs.create(d, format!("f{i}").as_bytes(), 0o644, C, t(12)).unwrap().ino).collect();
        fs.sync(t(13)).unwrap();
        // Small changes: a data block each (warm data), their nodes (warm node), a dentry
        // block (hot data), the directory's inode (hot node).
        for (i, &f) in files.iter().enumerate() {
            fs.write(f, 0, &pattern(i as u32, 5000), t(14)).unwrap();
        }
        fs.create(d, b"late", 0o644, C, t(15)).unwrap();
        fs.device_mut().writes.clear();
        let before = fs.stats();
        fs.sync(t(16)).unwrap();
        let writes = fs.device_mut().writes.clone();
        let ssa_area = g.ssa_start as u64..g.main_start as u64;
        let ssa_writes = writes.iter().filter(|a| ssa_area.contains(a)).count();
        let meta = fs.stats().meta_blocks_written - before.meta_blocks_written;
        eprintln!(
            "cp_summaries {on}: {} writes in {} ranges, {ssa_writes} summary blocks, {meta} metadata blocks",
            writes.len(),
            ranges(&writes)
        );
        if on {
            assert_eq!(ssa_writes, 0, "a checkpoint wrote summary blocks of segments the logs are filling");
        } else {
            assert!(ssa_writes >= 3, "without the feature each open segment's summary is written ({ssa_writes})");
        }
        let mut dev = fs.unmount(t(17)).unwrap();
        let r = fsck::check(&mut dev).unwrap();
        assert!(r.is_clean(), "cp_summaries {on}: {:?}", r.problems);
        seen.push((writes.len(), ranges(&writes)));
    }
    let (off, on) = (seen[0], seen[1]);
    assert!(
        on.0 < off.0 && on.1 < off.1,
        "with the feature a checkpoint writes fewer blocks and ranges: {on:?} vs {off:?}"
    );
}

/// Random namespace and data changes with syncs, fsyncs, unmounts and cleaning between
/// them, on a small device: logs fill and leave segment after segment (a summary the pack
/// carried must reach its slot once its segment is closed), remounts take the summaries
/// from the pack, and cleaning reads them to find what to move.
#[test]
fn summaries_stay_right_across_closed_segments_remounts_and_cleaning() {
    let img = Filesystem::format(MemDevice::new(BLOCKS), &opts(true)).unwrap();
    let mut dev = CrashDevice::new(img);
    let mut mix = Mixed::new(55, true);
    let mut cleaned = 0;
    for round in 0..12u32 {
        let now = t(100 + round as i64 * 10);
        let mut fs = Filesystem::mount(dev, &big_cache(), now).unwrap();
        if round % 3 == 2 {
            // Room again (the mix never removes everything): rm -rf, a fresh mix.
            common::mixed::remove_all(&mut fs, 1, now);
            mix = Mixed::new(55 + round as u64, true);
        }
        let probe = fs.create(1, format!("probe{round}").as_bytes(), 0o644, C, now).unwrap().ino;
        let body = pattern(round, 9000);
        fs.write(probe, 0, &body, now).unwrap();
        for step in 0..4 {
            mix.run(&mut fs, 40, now);
            match step {
                0 => fs.sync(now).unwrap(),
                1 => fs.fsync(probe, false, now).unwrap(),
                _ => {}
            }
        }
        // Free space below a third of the device, in segments half of whose blocks are
        // then deleted: background cleaning moves the other half, found through the
        // segments' summaries.
        let keep = fs.create(1, format!("keep{round}").as_bytes(), 0o644, C, now).unwrap().ino;
        let gone = fs.create(1, b"gone", 0o644, C, now).unwrap().ino;
        let chunk = vec![0xC5u8; 8 * 4096];
        let mut off = 0;
        while fs.statfs().unwrap().blocks_free > 300 {
            // Each chunk fsync'd: written in turn, so the two files share segments.
            let mut put = |f| fs.write(f, off, &chunk, now).and_then(|_| fs.fsync(f, false, now));
            if put(keep).is_err() || put(gone).is_err() {
                break;
            }
            off += chunk.len() as u64;
        }
        fs.unlink(1, b"gone", now).unwrap();
        fs.sync(now).unwrap();
        for _ in 0..6 {
            fs.gc_background(now).unwrap();
        }
        fs.unlink(1, format!("keep{round}").as_bytes(), now).unwrap();
        assert_eq!(read_all(&mut fs, probe), body, "round {round}");
        cleaned += fs.stats().gc_segments;
        dev = fs.unmount(now).unwrap();
        let r = fsck::check(&mut dev).unwrap();
        assert!(r.is_clean(), "round {round}: {:?}", r.problems);
    }
    eprintln!("segments cleaned: {cleaned}");
    assert!(cleaned > 0, "no cleaning: the summaries were never read to move blocks");
}

/// Fsyncs after a checkpoint, then a power cut at every write of the recovery mount, whose
/// checkpoint carries the open segments' summaries (with and without the unflushed writes).
#[test]
fn a_power_cut_at_every_write_of_a_checkpoint_carrying_summaries() {
    let img = Filesystem::format(MemDevice::new(BLOCKS), &opts(true)).unwrap();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(10)).unwrap();
    let f = fs.create(1, b"f", 0o644, C, t(11)).unwrap().ino;
    fs.write(f, 0, &pattern(1, 3 * 4096), t(12)).unwrap();
    fs.sync(t(13)).unwrap();
    let body = pattern(2, 5 * 4096);
    fs.write(f, 0, &body, t(14)).unwrap();
    fs.fsync(f, false, t(15)).unwrap();
    let g = fs.create(1, b"g", 0o644, C, t(16)).unwrap().ino;
    fs.write(g, 0, b"small", t(17)).unwrap();
    fs.fsync(g, false, t(18)).unwrap();
    let img = fs.device().crash_durable_only();
    let cuts = every_cut_of_mount_recovers(&img, &big_cache(), &|fs| {
        let f = fs.lookup(1, b"f").unwrap().ino;
        assert_eq!(read_all(fs, f), body);
    });
    assert!(cuts > 3, "the recovery mount wrote {cuts} blocks");
}

/// `rollfs tune -O cpsum` sets the bit in both superblock copies of a cleanly unmounted
/// image (native/src/cmd.rs): the next mount's checkpoint carries summaries, and the image
/// stays clean through writes, cleaning and remounts.
#[test]
fn the_feature_turned_on_for_an_existing_image() {
    use rollfs_core::superblock::FEATURE_INCOMPAT_CP_SUMMARIES;
    let img = Filesystem::format(MemDevice::new(BLOCKS), &opts(false)).unwrap();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(10)).unwrap();
    let f = fs.create(1, b"f", 0o644, C, t(11)).unwrap().ino;
    fs.write(f, 0, &pattern(1, 20 * 4096), t(12)).unwrap();
    let mut img = fs.unmount(t(13)).unwrap().crash_durable_only();
    let mut sb = read_superblock(&mut img).unwrap();
    sb.feature_incompat |= FEATURE_INCOMPAT_CP_SUMMARIES;
    let block = sb.encode();
    for copy in [1u64, 0] {
        img.write(copy, &block, WriteFlags::empty()).unwrap();
    }
    let mut dev = CrashDevice::new(img);
    for round in 0..3 {
        let now = t(20 + round * 10);
        let mut fs = Filesystem::mount(dev, &big_cache(), now).unwrap();
        let body = pattern(round as u32 + 2, 7 * 4096);
        fs.write(f, 4096, &body, now).unwrap();
        fs.sync(now).unwrap();
        let (cp, _) = Checkpoint::read_newest(fs.device_mut(), &sb.geometry).unwrap();
        assert!(!cp.summaries.is_empty(), "round {round}: the checkpoint after writes carries no summary");
        fs.gc_background(now).unwrap();
        dev = fs.unmount(now).unwrap();
        let r = fsck::check(&mut dev).unwrap();
        assert!(r.is_clean(), "round {round}: {:?}", r.problems);
    }
}

const GROW_D: u64 = 7400;
const GROW_M: u64 = 9200;
const GROW_LAST: u64 = 330;
const GROW_SIT_TARGET: usize = 48;

fn bm(n: u32) -> usize {
    (n as usize).div_ceil(8)
}

/// Payload bytes of `cp` at `g`'s bitmap sizes.
fn payload_len(cp: &Checkpoint, g: &layout::Geometry) -> (usize, usize) {
    let s: usize = cp.summaries.iter().map(|s| 8 + 6 * s.entries.len()).sum();
    let t = bm(g.nat_blocks)
        + bm(g.sit_blocks)
        + bm(g.main_segments)
        + cp.nat_journal.len() * CP_NAT_JOURNAL_ENTRY_SIZE
        + cp.sit_journal.len() * CP_SIT_JOURNAL_ENTRY_SIZE
        + cp.orphans.len() * 4
        + s;
    (t, s)
}

/// Review 55: a grow copies the newest checkpoint with longer slot bitmaps; summaries that
/// filled the pack against the bitmaps at the old size made the grown pack too large
/// ("payload larger than the pack"), and the grow shut the filesystem down. Orphans up to
/// the node ids, both journals nearly full, then a file grown block by block (its log's
/// summary with it) until the grown pack would not have fitted: the grow must succeed.
#[test]
fn an_online_grow_of_a_pack_the_summaries_filled() {
    let opts = MkfsOptions {
        segment_blocks: 16,
        max_blocks: GROW_M,
        cp_summaries: true,
        uuid: [55; 16],
        ..Default::default()
    };
    let img = Filesystem::format(MemDevice::new(GROW_D), &opts).unwrap();
    let sb = read_superblock(&mut img.clone()).unwrap();
    let mut fs = Filesystem::mount(img, &big_cache(), t(10)).unwrap();
    let g = *fs.geometry();
    let new = resize::grown_geometry(&sb, &g, GROW_M).unwrap().expect("grows");
    let cap = new.orphan_capacity() as usize;
    let room = (g.cp_pack_blocks as usize - 1) * BLOCK_SIZE;
    let delta = bm(new.nat_blocks) + bm(new.sit_blocks) + bm(new.main_segments)
        - bm(g.nat_blocks)
        - bm(g.sit_blocks)
        - bm(g.main_segments);
    eprintln!(
        "old segs {} new segs {} room {room} orphan cap at new size {cap} bitmap growth {delta}",
        g.main_segments, new.main_segments
    );
    // A file over many segments (its blocks' segments get dirtied one by one later) and a
    // small one (grows its log's open summary block by block).
    let big = fs.create(1, b"big", 0o644, C, t(11)).unwrap().ino;
    fs.write(big, 0, &vec![7u8; 60 * 16 * 4096], t(12)).unwrap();
    let small = fs.create(1, b"small", 0o644, C, t(11)).unwrap().ino;
    fs.sync(t(13)).unwrap();
    // Orphans: all node ids but the last ~335 ones, a checkpoint (NAT and SIT blocks
    // written), then the rest (their NAT entries journaled): the pack nearly full.
    let mut o = 0usize;
    let orphan = |fs: &mut Filesystem<MemDevice>, o: &mut usize| -> bool {
        match fs.create(1, format!("o{}", *o).as_bytes(), 0o644, C, t(14)) {
            Ok(a) => {
                fs.open(a.ino).unwrap();
                fs.unlink(1, format!("o{}", *o).as_bytes(), t(14)).unwrap();
                *o += 1;
                true
            }
            Err(e) => {
                eprintln!("orphan {}: {e:?}", *o);
                false
            }
        }
    };
    while fs.statfs().unwrap().files_free > GROW_LAST && o < cap {
        assert!(orphan(&mut fs, &mut o));
    }
    fs.sync(t(15)).unwrap();
    while o < cap && orphan(&mut fs, &mut o) {}
    fs.sync(t(15)).unwrap();
    let mut next_seg = 1u64;
    let mut appended = 0u64;
    let (mut closest, mut past_edge) = (0, 0);
    for step in 0..3000 {
        let (cp, _) = Checkpoint::read_newest(fs.device_mut(), &sb.geometry).unwrap();
        let (used, s) = payload_len(&cp, &g);
        let grown = used + delta;
        eprintln!(
            "step {step}: nat_j {} sit_j {} orphans {} summaries {:?} ({s} B) used {used}/{room} grown {grown}",
            cp.nat_journal.len(),
            cp.sit_journal.len(),
            cp.orphans.len(),
            cp.summaries.iter().map(|s| (s.segno, s.entries.len())).collect::<Vec<_>>()
        );
        // The invariant: the copy a grow makes still fits the pack.
        assert!(grown <= room, "step {step}: a grow's copy of this checkpoint is {grown} bytes, the pack holds {room}");
        closest = closest.max(grown);
        if room - grown < 24 {
            past_edge += 1;
        }
        if past_edge > 8 || step == 2999 {
            assert!(room - closest < 24, "the pack never came near full ({closest} of {room} bytes)");
            assert!(cp.orphans.len() <= cap);
            fs.device_mut().set_block_count(GROW_M);
            let r = fs.grow(GROW_M, t(1000));
            assert!(r.is_ok(), "online grow failed: {r:?}");
            // Writable after it (node ids are all taken by the orphans: no create).
            fs.write(small, appended * 4096, &[4u8; 4096], t(1001)).unwrap();
            let mut img = fs.unmount(t(1002)).unwrap();
            let r = fsck::check(&mut img).unwrap();
            assert!(r.is_clean(), "{:?}", r.problems);
            return;
        }
        if cp.nat_journal.is_empty() {
            panic!("NAT journal flushed: no state");
        }
        // One more SIT entry (a block of an older data segment) while the SIT journal has
        // room, else one more block in the small file (its log's summary grows).
        if cp.sit_journal.len() < GROW_SIT_TARGET && next_seg < 60 {
            fs.write(big, next_seg * 16 * 4096, &[9u8; 4096], t(20)).unwrap();
            next_seg += 1;
        } else {
            fs.write(small, appended * 4096, &[3u8; 4096], t(20)).unwrap();
            appended += 1;
        }
        fs.sync(t(22)).unwrap();
    }
    panic!("no state found");
}
