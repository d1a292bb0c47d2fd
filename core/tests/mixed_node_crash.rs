//! Review 53 (data beside its chain): what the reviewer found, as tests.
mod common;
use common::limits::{big_cache, pattern, read_all, t, C};
use common::CrashDevice;
use rollfs_core::superblock::read_superblock;
use rollfs_core::*;

const UUID: [u8; 16] = [53; 16];

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

/// A damaged summary block (both slots) of the segment that holds a file's data: repair
/// rebuilds the SSA from the tree, so the file's data must survive it — as it does when the
/// data lies in a data segment. With data beside its chain, `Rebuild::data_beside_chain`
/// reads the old summary to decide whether a pointer into a node segment is data, and a
/// summary that cannot be read (damaged, or EIO) drops the pointer: the file loses its
/// fsync'd, checkpointed data.
#[test]
fn repair_of_a_damaged_summary_keeps_data_beside_its_chain() {
    for mixed in [false, true] {
        let img = Filesystem::format(MemDevice::new(4096), &opts(mixed)).unwrap();
        let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(10)).unwrap();
        let f = fs.create(1, b"f", 0o644, C, t(11)).unwrap().ino;
        fs.sync(t(12)).unwrap();
        let body = pattern(7, 2 * 4096);
        fs.write(f, 0, &body, t(13)).unwrap();
        fs.fsync(f, false, t(14)).unwrap();
        assert_eq!(fs.stats().data_beside_blocks, if mixed { 2 } else { 0 });
        let dev = fs.unmount(t(20)).unwrap();
        let mut img = dev.crash_durable_only();
        let r = fsck::check(&mut img).unwrap();
        assert!(r.is_clean(), "{:?}", r.problems);
        let ptrs = common::pointers::pointers(&mut img, f);
        let data_addr = ptrs[0].1;
        let g = read_superblock(&mut img).unwrap().geometry;
        let seg = g.segno_of(data_addr);
        for slot in 0..2u8 {
            img.write(g.ssa_addr(seg, slot), &zero_block(), WriteFlags::empty()).unwrap();
        }
        let rep = fsck::repair(&mut img, t(21)).unwrap();
        eprintln!("mixed {mixed}: data at {data_addr} (segment {seg}); fixes: {:#?}", rep.fixes);
        assert!(rep.is_clean(), "mixed {mixed}: not clean after repair: {:?} {:?}", rep.after.problems, rep.unfixed);
        let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(22)).unwrap();
        let g = fs.lookup(1, b"f").unwrap().ino;
        let got = read_all(&mut fs, g);
        assert!(
            got == body,
            "mixed {mixed}: repair lost the file's data ({} bytes, {} zero)",
            got.len(),
            got.iter().filter(|&&x| x == 0).count()
        );
    }
}

/// `rollfs tune -O mixed` on a cleanly unmounted image (as `native/src/cmd.rs` does it:
/// superblock copy 1, then copy 0), including a crash between the two copies; then small
/// fsyncs beside their chains, a crash, recovery, fsck; and cleaning afterwards.
#[test]
fn tune_mixed_then_fsyncs_then_a_crash() {
    use rollfs_core::superblock::FEATURE_INCOMPAT_MIXED_NODE;
    for copies in [2usize, 1] {
        let img = Filesystem::format(MemDevice::new(4096), &opts(false)).unwrap();
        let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(10)).unwrap();
        let f = fs.create(1, b"f", 0o644, C, t(11)).unwrap().ino;
        let old = pattern(1, 3 * 4096);
        fs.write(f, 0, &old, t(12)).unwrap();
        fs.fsync(f, false, t(13)).unwrap();
        let mut img = fs.unmount(t(14)).unwrap().crash_durable_only();
        let mut sb = read_superblock(&mut img).unwrap();
        sb.feature_incompat |= FEATURE_INCOMPAT_MIXED_NODE;
        let block = sb.encode();
        for copy in [1u64, 0].into_iter().take(copies) {
            img.write(copy, &block, WriteFlags::empty()).unwrap();
        }
        let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(20)).unwrap();
        let mut want = old.clone();
        let new1 = pattern(2, 4096);
        fs.write(f, 4096, &new1, t(21)).unwrap();
        want[4096..8192].copy_from_slice(&new1);
        fs.fsync(f, false, t(22)).unwrap();
        let g = fs.create(1, b"g", 0o644, C, t(23)).unwrap().ino;
        let gb = pattern(3, 2 * 4096);
        fs.write(g, 0, &gb, t(24)).unwrap();
        fs.fsync(g, false, t(25)).unwrap();
        let beside = fs.stats().data_beside_blocks;
        eprintln!("copies {copies}: data beside {beside}");
        assert_eq!(beside, if copies == 2 { 3 } else { 0 });
        let img = fs.device().crash_durable_only();
        let mut r = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(30)).unwrap();
        let rf = r.lookup(1, b"f").unwrap().ino;
        let rg = r.lookup(1, b"g").unwrap().ino;
        assert!(read_all(&mut r, rf) == want, "copies {copies}: f after recovery");
        assert!(read_all(&mut r, rg) == gb, "copies {copies}: g after recovery");
        // Overwrite what lies beside, then clean and check.
        let new2 = pattern(4, 4096);
        r.write(rf, 4096, &new2, t(31)).unwrap();
        want[4096..8192].copy_from_slice(&new2);
        r.fsync(rf, false, t(32)).unwrap();
        r.sync(t(33)).unwrap();
        for _ in 0..10 {
            if !r.gc_background(t(5000)).unwrap() {
                break;
            }
        }
        let mut img = r.unmount(t(5001)).unwrap().crash_durable_only();
        let rep = fsck::check(&mut img).unwrap();
        if !rep.is_clean() {
            let mut again = img.clone();
            let fixed = fsck::repair(&mut again, t(5003)).unwrap();
            eprintln!(
                "copies {copies}: fsck {:?}; repair clean: {}, fixes {:?}",
                rep.problems,
                fixed.is_clean(),
                fixed.fixes
            );
        }
        assert!(rep.is_clean(), "copies {copies}: {:?}", rep.problems);
        let mut r = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(5002)).unwrap();
        let rf = r.lookup(1, b"f").unwrap().ino;
        assert!(read_all(&mut r, rf) == want, "copies {copies}: f at the end");
    }
}

/// A device over a crash device whose write number `fail_at` (counted from `armed`) fails
/// with EIO.
#[derive(Clone)]
struct FailNth {
    inner: CrashDevice,
    count: u64,
    fail_at: Option<u64>,
}

impl BlockDevice for FailNth {
    fn block_count(&self) -> u64 {
        self.inner.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        self.inner.read(addr, buf)
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        if let Some(n) = self.fail_at {
            self.count += 1;
            if self.count == n {
                return Err(IoError { block: addr, op: "write" });
            }
        }
        self.inner.write(addr, data, flags)
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.inner.wait_writes()
    }
    fn flush(&mut self) -> Result<(), IoError> {
        self.inner.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        self.inner.discard(addr, count)
    }
}

/// An I/O error on each write of a batch with data beside its nodes (a node, the first
/// data block, a later one): the fsync fails and shuts the filesystem down, reads still
/// show what was written, and every crash image of what reached the device recovers the
/// old content or the new one, fsck clean.
#[test]
fn an_eio_inside_the_range_fails_the_fsync_and_any_crash_keeps_old_or_new() {
    for fail in 1..=4u64 {
        let img = Filesystem::format(MemDevice::new(4096), &opts(true)).unwrap();
        let dev = FailNth { inner: CrashDevice::new(img), count: 0, fail_at: None };
        let mut fs = Filesystem::mount(dev, &big_cache(), t(10)).unwrap();
        let f = fs.create(1, b"f", 0o644, C, t(11)).unwrap().ino;
        let old = pattern(1, 3 * 4096);
        fs.write(f, 0, &old, t(12)).unwrap();
        fs.sync(t(13)).unwrap();
        let new = pattern(2, 3 * 4096);
        fs.write(f, 0, &new, t(14)).unwrap();
        fs.device_mut().fail_at = Some(fail);
        let r = fs.fsync(f, false, t(15));
        eprintln!("write {fail} fails: fsync {r:?}, beside {}", fs.stats().data_beside_blocks);
        assert!(r.is_err(), "write {fail}: the fsync reported success");
        let mut buf = vec![0u8; new.len()];
        let n = fs.read(f, 0, &mut buf).unwrap_or(0);
        assert!(n == new.len() && buf == new, "write {fail}: the running mount does not show what was written");
        let mut crash = fs.device().inner.clone();
        crash.wait_writes().unwrap();
        let pending = crash.pending();
        for keep in 0..1u32 << pending {
            let img = crash.crash(|i| keep & (1 << i) != 0);
            let mut m = Filesystem::mount(CrashDevice::new(img.clone()), &big_cache(), t(50)).unwrap();
            let g = m.lookup(1, b"f").unwrap().ino;
            let got = read_all(&mut m, g);
            assert!(got == old || got == new, "write {fail}, keep {keep:#b}: neither old nor new");
            let mut d = m.unmount(t(51)).unwrap();
            let rep = fsck::check(&mut d).unwrap();
            assert!(rep.is_clean(), "write {fail}, keep {keep:#b}: {:?}", rep.problems);
        }
    }
}

/// Two crashes during recovery, one after the other, of a chain of batches with data
/// beside their nodes that crosses segments (with create records before some): every
/// fsync'd content survives the third mount, fsck clean.
#[test]
fn two_crashes_during_the_recovery_of_batches_with_data_beside() {
    let img = Filesystem::format(MemDevice::new(4096), &MkfsOptions { ns_records: true, ..opts(true) }).unwrap();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(10)).unwrap();
    let mut files: Vec<(Vec<u8>, Ino, Vec<u8>)> = Vec::new();
    for n in 0..3u8 {
        let name = vec![b'a' + n];
        let ino = fs.create(1, &name, 0o644, C, t(11)).unwrap().ino;
        files.push((name, ino, Vec::new()));
    }
    fs.sync(t(12)).unwrap();
    let mut synced = std::collections::BTreeSet::new();
    for k in 0..40u32 {
        if k % 9 == 4 {
            let name = format!("n{k}").into_bytes();
            let ino = fs.create(1, &name, 0o644, C, t(13)).unwrap().ino;
            files.push((name, ino, Vec::new()));
        }
        let i = (k as usize * 7) % files.len();
        let blocks = 1 + (k as usize % 5);
        let off = (k as usize % 3) * 4096;
        let body = pattern(100 + k, blocks * 4096);
        fs.write(files[i].1, off as u64, &body, t(14)).unwrap();
        let v = &mut files[i].2;
        if v.len() < off + body.len() {
            v.resize(off + body.len(), 0);
        }
        v[off..off + body.len()].copy_from_slice(&body);
        fs.fsync(files[i].1, false, t(15)).unwrap();
        synced.insert(i);
    }
    // Only files fsync'd after their creation are promised (a file only created has no
    // record of its own in the chain unless another fsync's records name it).
    let files: Vec<_> =
        files.into_iter().enumerate().filter(|(i, _)| *i < 3 || synced.contains(i)).map(|(_, f)| f).collect();
    assert!(fs.stats().data_beside_blocks > 60, "{}", fs.stats().data_beside_blocks);
    let img = fs.device().crash_durable_only();
    let check = |img: MemDevice, what: &str| {
        let mut m =
            Filesystem::mount(CrashDevice::new(img), &big_cache(), t(90)).unwrap_or_else(|e| panic!("{what}: {e}"));
        for (name, _, want) in &files {
            let g = m.lookup(1, name).unwrap_or_else(|e| panic!("{what}: {:?} {e}", String::from_utf8_lossy(name))).ino;
            assert!(read_all(&mut m, g) == *want, "{what}: {:?}", String::from_utf8_lossy(name));
        }
        let mut d = m.unmount(t(91)).unwrap();
        let rep = fsck::check(&mut d).unwrap();
        assert!(rep.is_clean(), "{what}: {:?}", rep.problems);
    };
    check(img.clone(), "no crash during recovery");
    let mut cuts = 0;
    for k in (0..200u64).step_by(3) {
        let mut cd = CrashDevice::new(img.clone());
        cd.power_cut_at = Some(k);
        if Filesystem::mount(&mut cd, &big_cache(), t(20)).is_ok() {
            break;
        }
        for keep in 0..3 {
            let img2 = cd.crash(|i| match keep {
                0 => false,
                1 => true,
                _ => i % 2 == 0,
            });
            for k2 in [0u64, 1, 2, 5, 9, 17, 33] {
                let mut cd2 = CrashDevice::new(img2.clone());
                cd2.power_cut_at = Some(k2);
                if Filesystem::mount(&mut cd2, &big_cache(), t(30)).is_ok() {
                    check(cd2.crash_durable_only(), &format!("cut {k} keep {keep}, second recovery completed"));
                    break;
                }
                cuts += 1;
                let img3 = cd2.crash(|i| (i + keep) % 2 == 0);
                check(img3, &format!("cut {k} keep {keep}, second cut {k2}"));
            }
        }
    }
    eprintln!("{cuts} double cuts");
    assert!(cuts > 10);
}
