//! Data beside its chain (`FEATURE_INCOMPAT_MIXED_NODE`, issue 38; `fsync::write_batch`): a
//! small fsync batch writes its data blocks in the warm node log right after its nodes, so
//! that the whole batch is one device range, and its inode's `next_blkaddr` skips them.
//! Scenarios, each a test named after it:
//!
//! | scenario | what must hold |
//! |---|---|
//! | a 4 KiB write + fsync | nodes then data at consecutive addresses, one flush |
//! | a batch whose data lies in a direct node's range | direct node, inode, data: consecutive |
//! | a batch of more than `CHAIN_DATA_MAX` blocks, or on an image without the feature | data in the data log, as before |
//! | fsyncs one after another, a crash after each returned | every fsync'd content recovered (the chain walks past each batch's data) |
//! | a crash before the fsync returned, any subset of its writes kept or torn | the old content or the new one |
//! | node segments holding data become cleaning victims | their data moves to the data log, contents intact, fsck clean |
//! | fsck and repair of an image with data in node segments | clean; repair keeps every pointer |
//! | small fsync'd files deleted, then the space filled | the holes among data beside chains are filled by SSR: no more cleaning than without the feature |
//!
//! `mutant-chain-no-skip` (the inode names its first data block as the next node) fails
//! `fsyncs_one_after_another_each_recovered_after_a_crash`: the walk takes the data block for
//! a node, ends the chain there and loses the fsyncs after it.
mod common;
use common::limits::{big_cache, pattern, read_all, t, C};
use common::rec::Rec;
use common::CrashDevice;
use rollfs_core::*;

const UUID: [u8; 16] = [52; 16];
const BLOCKS: u64 = 4096;

type Fs = Filesystem<Rec>;

fn opts(mixed_node: bool) -> MkfsOptions {
    MkfsOptions {
        segment_blocks: 64,
        uuid: UUID,
        inline_data: true,
        prealloc_on_disk: true,
        dir_v2: true,
        mixed_node,
        ..Default::default()
    }
}

fn mount_rec(img: MemDevice) -> Fs {
    let dev = Rec::new(img);
    Filesystem::mount(dev, &big_cache(), t(10)).unwrap()
}

/// A fresh image (with or without the feature) holding files `names`, made durable.
fn fresh(mixed_node: bool, names: &[&str]) -> (Fs, Vec<Ino>) {
    let img = Filesystem::format(MemDevice::new(BLOCKS), &opts(mixed_node)).unwrap();
    let mut fs = mount_rec(img);
    let inos = names.iter().map(|n| fs.create(1, n.as_bytes(), 0o644, C, t(11)).unwrap().ino).collect();
    fs.sync(t(12)).unwrap();
    (fs, inos)
}

/// The addresses the fsync of `ino` wrote, and the flushes it issued.
fn fsync_writes(fs: &mut Fs, ino: Ino) -> (Vec<u64>, u64) {
    let (w, f) = (fs.device().writes.len(), fs.device().flushes);
    fs.fsync(ino, false, t(20)).unwrap();
    (fs.device().writes[w..].to_vec(), fs.device().flushes - f)
}

fn consecutive(addrs: &[u64]) -> bool {
    addrs.windows(2).all(|w| w[1] == w[0] + 1)
}

/// The image a crash leaves with only what was flushed, mounted (recovery) and checked by
/// fsck after a clean unmount of a second copy.
fn crash_and_recover(fs: Fs) -> Filesystem<CrashDevice> {
    let img = fs.into_device().inner.crash_durable_only();
    recover_checked(img)
}

fn recover_checked(img: MemDevice) -> Filesystem<CrashDevice> {
    let mut dev =
        Filesystem::mount(CrashDevice::new(img.clone()), &big_cache(), t(50)).unwrap().unmount(t(51)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "fsck after recovery: {:?}", r.problems);
    Filesystem::mount(CrashDevice::new(img), &big_cache(), t(50)).unwrap()
}

/// `v` after `data` is written at `off` (zeros fill a gap).
fn write_model(v: &mut Vec<u8>, off: usize, data: &[u8]) {
    if v.len() < off + data.len() {
        v.resize(off + data.len(), 0);
    }
    v[off..off + data.len()].copy_from_slice(data);
}

fn ino_of(fs: &mut Filesystem<CrashDevice>, name: &str) -> Ino {
    fs.lookup(1, name.as_bytes()).unwrap().ino
}

#[test]
fn a_4k_write_and_fsync_is_one_range_of_nodes_then_data() {
    let (mut fs, f) = fresh(true, &["f"]);
    let body = pattern(1, 4096);
    fs.write(f[0], 0, &body, t(13)).unwrap();
    let (w, flushes) = fsync_writes(&mut fs, f[0]);
    assert_eq!(w.len(), 2, "inode and data: {w:?}");
    assert!(consecutive(&w), "one range: {w:?}");
    assert_eq!(flushes, 1);
    assert_eq!(fs.stats().data_beside_blocks, 1);
    // Three blocks: still one range, the inode first.
    let body3 = pattern(2, 3 * 4096);
    fs.write(f[0], 0, &body3, t(14)).unwrap();
    let (w, _) = fsync_writes(&mut fs, f[0]);
    assert_eq!(w.len(), 4, "{w:?}");
    assert!(consecutive(&w), "one range: {w:?}");
    let mut fs = crash_and_recover(fs);
    let g = ino_of(&mut fs, "f");
    assert_eq!(read_all(&mut fs, g), body3);
}

#[test]
fn a_batch_whose_data_lies_in_a_direct_nodes_range_is_one_range_too() {
    let (mut fs, f) = fresh(true, &["f"]);
    // Far past the inode's own pointers: the block's address lives in a direct node.
    let off = 4096 * 2000;
    let body = pattern(3, 4096);
    fs.write(f[0], off, &body, t(13)).unwrap();
    let (w, _) = fsync_writes(&mut fs, f[0]);
    assert_eq!(w.len(), 3, "direct node, inode, data: {w:?}");
    assert!(consecutive(&w), "one range: {w:?}");
    let mut fs = crash_and_recover(fs);
    let g = ino_of(&mut fs, "f");
    let mut buf = vec![0u8; 4096];
    fs.read(g, off, &mut buf).unwrap();
    assert_eq!(buf, body);
}

#[test]
fn a_large_batch_or_an_image_without_the_feature_writes_data_to_the_data_log() {
    for (mixed, blocks) in [(true, 17usize), (false, 1)] {
        let (mut fs, f) = fresh(mixed, &["f"]);
        let body = pattern(4, blocks * 4096);
        fs.write(f[0], 0, &body, t(13)).unwrap();
        let (w, flushes) = fsync_writes(&mut fs, f[0]);
        assert_eq!(fs.stats().data_beside_blocks, 0, "mixed {mixed}, {blocks} blocks");
        assert!(!consecutive(&w), "data in the data log, nodes in the node log: {w:?}");
        assert_eq!(flushes, 1);
        let mut fs = crash_and_recover(fs);
        let g = ino_of(&mut fs, "f");
        assert_eq!(read_all(&mut fs, g), body);
    }
}

#[test]
fn fsyncs_one_after_another_each_recovered_after_a_crash() {
    let (mut fs, f) = fresh(true, &["a", "b", "c"]);
    let mut want: Vec<Vec<u8>> = vec![Vec::new(); 3];
    let steps: [(usize, u64, usize); 7] =
        [(0, 0, 1), (1, 0, 2), (0, 4096, 1), (2, 0, 16), (1, 0, 1), (0, 0, 3), (2, 8192, 2)];
    for (k, &(i, off, blocks)) in steps.iter().enumerate() {
        let body = pattern(10 + k as u32, blocks * 4096);
        fs.write(f[i], off, &body, t(13)).unwrap();
        write_model(&mut want[i], off as usize, &body);
        fs.fsync(f[i], false, t(20)).unwrap();
        // A crash now: every fsync so far is recovered.
        let img = fs.device().inner.crash_durable_only();
        let mut r = recover_checked(img);
        for (j, name) in ["a", "b", "c"].iter().enumerate() {
            let g = ino_of(&mut r, name);
            assert_eq!(read_all(&mut r, g), want[j], "after step {k}: file {name}");
        }
    }
    // Every batch but the one of more than CHAIN_DATA_MAX blocks fit beside its nodes.
    assert!(fs.stats().data_beside_blocks >= 10, "{}", fs.stats().data_beside_blocks);
}

#[test]
fn a_crash_before_the_fsync_returned_keeps_the_old_content_or_the_new() {
    let (mut fs, f) = fresh(true, &["f", "g"]);
    let old = pattern(20, 2 * 4096);
    fs.write(f[0], 0, &old, t(13)).unwrap();
    fs.fsync(f[0], false, t(14)).unwrap();
    let new = pattern(21, 2 * 4096);
    fs.write(f[0], 0, &new, t(15)).unwrap();
    let t_ = fs.fsync_submit(f[0], false, t(16)).unwrap();
    assert!(t_.flush_needed);
    fs.device_mut().inner.wait_writes().unwrap();
    let dev = fs.device().inner.clone();
    let n = dev.pending();
    assert_eq!(n, 3, "inode and two data blocks pending");
    let mut images = 0;
    for keep in 0..1u32 << n {
        let mut r = recover_checked(dev.crash(|i| keep & (1 << i) != 0));
        let g = ino_of(&mut r, "f");
        let got = read_all(&mut r, g);
        assert!(got == old || got == new, "keep {keep:#b}: neither the old content nor the new");
        images += 1;
    }
    for i in 0..n {
        for m in [0x01u8, 0x0F, 0xF0, 0x7F] {
            let torn = dev.crash_torn(|j| match j.cmp(&i) {
                std::cmp::Ordering::Less => 0xFF,
                std::cmp::Ordering::Equal => m,
                std::cmp::Ordering::Greater => 0,
            });
            let mut r = recover_checked(torn);
            let g = ino_of(&mut r, "f");
            let got = read_all(&mut r, g);
            assert!(got == old || got == new, "write {i} torn {m:#x}: neither the old content nor the new");
            images += 1;
        }
    }
    eprintln!("crash images recovered: {images}");
}

#[test]
fn cleaning_moves_data_out_of_node_segments() {
    let names: Vec<String> = (0..120).map(|i| format!("f{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (mut fs, f) = fresh(true, &refs);
    // Most of the device full (cold data), so that background cleaning runs.
    common::limits::fill(&mut fs, 1, "big", 600, t(12));
    fs.sync(t(12)).unwrap();
    // Each file's fsync writes its inode and its block beside it; the chmods and the
    // checkpoint after them move every inode elsewhere, so the node segments the fsyncs
    // filled hold only data: cheap victims whose blocks are all data.
    let mut want = Vec::new();
    for (i, &ino) in f.iter().enumerate() {
        let body = pattern(100 + i as u32, 4096);
        fs.write(ino, 0, &body, t(13)).unwrap();
        fs.fsync(ino, false, t(14)).unwrap();
        want.push(body);
    }
    // All but the batches that met a segment's end (no room for the data in its segment).
    assert!(fs.stats().data_beside_blocks > f.len() as u64 * 3 / 4, "{}", fs.stats().data_beside_blocks);
    for &ino in &f {
        fs.setattr(ino, &SetAttr { mode: Some(0o600), ..Default::default() }, t(15)).unwrap();
    }
    fs.sync(t(16)).unwrap();
    for _ in 0..20 {
        if !fs.gc_background(t(1000)).unwrap() {
            break;
        }
    }
    let st = fs.stats();
    assert!(
        st.gc_data_from_node_segments > 0,
        "no data moved out of a node segment (segments cleaned {}, blocks moved {}, free {:?})",
        st.gc_segments,
        st.gc_blocks_moved,
        fs.statfs().unwrap()
    );
    for (i, &ino) in f.iter().enumerate() {
        assert_eq!(read_all(&mut fs, ino), want[i], "file {i}");
    }
    let dev = fs.unmount(t(2000)).unwrap();
    let mut img = dev.inner.crash_durable_only();
    let r = fsck::check(&mut img).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(2001)).unwrap();
    for (i, name) in names.iter().enumerate() {
        let g = ino_of(&mut fs, name);
        assert_eq!(read_all(&mut fs, g), want[i], "file {name} after a remount");
    }
}

#[test]
fn fsck_and_repair_keep_data_beside_its_chain() {
    let (mut fs, f) = fresh(true, &["a", "b", "x"]);
    let a = pattern(30, 4096);
    let b = pattern(31, 3 * 4096);
    fs.write(f[0], 0, &a, t(13)).unwrap();
    fs.fsync(f[0], false, t(14)).unwrap();
    fs.write(f[1], 0, &b, t(13)).unwrap();
    fs.fsync(f[1], false, t(14)).unwrap();
    assert_eq!(fs.stats().data_beside_blocks, 4);
    // The checkpoint keeps the data where the batches wrote it (in a node segment).
    let dev = fs.unmount(t(20)).unwrap();
    let mut img = dev.inner.crash_durable_only();
    let r = fsck::check(&mut img).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    // Damage elsewhere (another file's inode block zeroed) makes repair rebuild the SIT and
    // the SSA from the tree: the data beside the chain must stay where it is, owned.
    let x_addr = common::pointers::inode_addr(&mut img, f[2]);
    img.write(x_addr, &zero_block(), WriteFlags::empty()).unwrap();
    let rep = fsck::repair(&mut img, t(21)).unwrap();
    assert!(rep.changed(), "the damage was not repaired: {rep:?}");
    assert!(rep.is_clean(), "not clean after repair: {:?} {:?}", rep.after.problems, rep.unfixed);
    assert!(
        !rep.fixes.iter().any(|x| x.contains("segment of node blocks") || x.contains("owners wrong")),
        "repair dropped or re-owned data beside its chain: {:#?}",
        rep.fixes
    );
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(22)).unwrap();
    let (ga, gb) = (ino_of(&mut fs, "a"), ino_of(&mut fs, "b"));
    assert_eq!(read_all(&mut fs, ga), a);
    assert_eq!(read_all(&mut fs, gb), b);
}

/// Small files fsync'd one by one (their data beside their chains, in node segments), every
/// other one deleted, then the free space filled: the device writes this costs, and what
/// cleaning moved. Returns (device writes, blocks cleaning moved, blocks written by SSR).
fn fill_after_deleting_small_fsynced_files(mixed_node: bool) -> (u64, u64, u64) {
    let names: Vec<String> = (0..240).map(|i| format!("s{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (mut fs, f) = fresh(mixed_node, &refs);
    for (i, &ino) in f.iter().enumerate() {
        fs.write(ino, 0, &pattern(300 + i as u32, 2 * 4096), t(13)).unwrap();
        fs.fsync(ino, false, t(14)).unwrap();
    }
    // The rest of the device full but a few segments, so that writing into the holes the
    // deletes leave is what the fill must do.
    common::limits::fill(&mut fs, 1, "pad", 256, t(15));
    fs.sync(t(15)).unwrap();
    for name in names.iter().step_by(2) {
        fs.unlink(1, name.as_bytes(), t(16)).unwrap();
    }
    fs.sync(t(17)).unwrap();
    let (w0, st0) = (fs.device().writes.len() as u64, fs.stats());
    let big = common::limits::fill(&mut fs, 1, "big", 0, t(18));
    fs.sync(t(19)).unwrap();
    // Then the big file rewritten twice over: cleaning must find room for it.
    let size = fs.getattr(big).unwrap().size;
    for round in 0..2u64 {
        for off in (0..size).step_by(16 * 4096) {
            let n = (size - off).min(16 * 4096) as usize;
            fs.write(big, off, &vec![round as u8; n], t(19)).unwrap();
        }
        fs.sync(t(19)).unwrap();
    }
    let (w1, st1) = (fs.device().writes.len() as u64, fs.stats());
    // Every file kept reads back; fsck is clean after a remount.
    for (i, name) in names.iter().enumerate().skip(1).step_by(2) {
        let ino = fs.lookup(1, name.as_bytes()).unwrap().ino;
        let mut buf = vec![0u8; 2 * 4096];
        assert_eq!(fs.read(ino, 0, &mut buf).unwrap(), buf.len());
        assert_eq!(buf, pattern(300 + i as u32, 2 * 4096), "{name}");
    }
    let mut img = fs.unmount(t(21)).unwrap().inner.crash_durable_only();
    let r = fsck::check(&mut img).unwrap();
    assert!(r.is_clean(), "mixed {mixed_node}: {:?}", r.problems);
    (w1 - w0, st1.gc_blocks_moved - st0.gc_blocks_moved, st1.ssr_blocks - st0.ssr_blocks)
}

/// Review 53 (second user, F1): the holes deleted files leave among data written beside
/// chains are filled by SSR as holes in data segments are, not taken back only by cleaning
/// that copies the data left there (which cost 1.7-4.1 device writes per block written on
/// a filled image, against 1.05-1.2 without the feature).
#[test]
fn holes_among_data_beside_chains_are_filled_by_ssr_not_only_by_cleaning() {
    let (mixed_writes, mixed_moved, mixed_ssr) = fill_after_deleting_small_fsynced_files(true);
    let (plain_writes, plain_moved, plain_ssr) = fill_after_deleting_small_fsynced_files(false);
    eprintln!(
        "mixed: {mixed_writes} writes, {mixed_moved} moved, {mixed_ssr} by SSR; nomixed: {plain_writes} writes, \
         {plain_moved} moved, {plain_ssr} by SSR"
    );
    assert!(plain_ssr > 0, "the fill used no SSR without the feature: the test does not reach its path");
    assert!(mixed_ssr > 0, "no hole among the data beside chains was filled by SSR");
    assert!(mixed_moved <= plain_moved + plain_moved / 4 + 64, "cleaning moved {mixed_moved} vs {plain_moved}");
    assert!(mixed_writes <= plain_writes + plain_writes / 5, "device writes {mixed_writes} vs {plain_writes}");
}
