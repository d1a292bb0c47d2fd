//! The mount's version jump against earlier uses of the same image (DESIGN.md, *Mount*),
//! from the crash review of the change: versions near their end, a version that cannot
//! grow, the mount's own checkpoint failing or cut at each of its writes. The scenarios of
//! two uses of one image are in recovery.rs; the explorer's are the `earlier-use-*.wl`
//! workloads.

mod common;
use common::CrashDevice;
use rollfs_core::checkpoint::Checkpoint;
use rollfs_core::superblock::read_superblock;
use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn image() -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [3; 16], ..Default::default() };
    Filesystem::format(MemDevice::new(8192), &opts).unwrap()
}

fn content(fs: &mut Filesystem<MemDevice>, dir: Ino, name: &[u8]) -> Option<Vec<u8>> {
    let a = fs.lookup(dir, name).ok()?;
    let mut buf = vec![0u8; a.size as usize];
    fs.read(a.ino, 0, &mut buf).unwrap();
    Some(buf)
}

fn names(fs: &mut Filesystem<MemDevice>) -> Vec<Vec<u8>> {
    let mut names = Vec::new();
    fs.readdir(1, 0, &mut |e| {
        names.push(e.name.clone());
        true
    })
    .unwrap();
    names.retain(|n| n != b"." && n != b"..");
    names
}

/// Mounts a crash image (running recovery), checks fsck, and returns the filesystem.
fn recover(img: MemDevice) -> Filesystem<MemDevice> {
    let fs = Filesystem::mount(img, &MountOptions::default(), t(100)).expect("mount after crash");
    let mut dev = fs.unmount(t(101)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "fsck after recovery: {:?}", r.problems);
    Filesystem::mount(dev, &MountOptions::default(), t(102)).unwrap()
}

/// How an image is flashed over a device that held an earlier use of it.
#[derive(Clone, Copy, Debug)]
enum Flash {
    /// Every block the image file has allocated (bmaptool on a sparse image, or an image
    /// smaller than the size an earlier use grew to): blocks mkfs never wrote keep the
    /// earlier use's contents.
    Allocated,
    /// Every non-zero block (`cp --sparse=always`, `dd conv=sparse`): not a faithful
    /// copy even of the image's own blocks.
    SkippingZeros,
}

fn flash(image: &mut MemDevice, dev: &mut MemDevice, how: Flash) {
    let mut b = zero_block();
    let addrs: Vec<u64> = image.allocated_blocks().collect();
    for a in addrs {
        image.read(a, &mut b).unwrap();
        if matches!(how, Flash::Allocated) || b.iter().any(|&x| x != 0) {
            dev.write(a, &b, WriteFlags::empty()).unwrap();
        }
    }
    dev.flush().unwrap();
}

/// One use of a freshly flashed image: mounts with `nonce`, then creates `name` and
/// fsyncs `rounds` versions of it (byte `fill + i`), the last one durable; power cut.
fn use_of_the_image(dev: MemDevice, nonce: u64, name: &[u8], fill: u8, rounds: u8) -> MemDevice {
    let opts = MountOptions { mount_nonce: nonce, ..Default::default() };
    // The same time for both uses: the nonce alone must tell them apart.
    let mut fs = Filesystem::mount(CrashDevice::new(dev), &opts, t(0)).unwrap();
    let f = fs.create(1, name, 0o644, C, t(1)).unwrap().ino;
    for i in 0..rounds {
        fs.write(f, 0, &vec![fill + i; 6000], t(2)).unwrap();
        fs.fsync(f, false, t(2)).unwrap();
    }
    fs.into_device().crash_durable_only()
}

/// Scenario: a stale chain of an earlier use of the same image lies right after this
/// use's chain (the card was flashed with the image, used, and flashed again): same UUID,
/// same checkpoint history. Each use's mount jumps the version by its own amount, so the
/// earlier use's nodes end this use's chain instead of continuing it.
#[test]
fn stale_chain_of_an_earlier_use_of_the_same_image_is_not_rolled_forward() {
    let mut img = image();
    // The first use fsyncs "first" five times; the second creates "second" (the same
    // inode number) and fsyncs it once, over the first use's first batch: the first use's
    // later batches follow its chain on the device.
    for how in [Flash::Allocated, Flash::SkippingZeros] {
        let mut dev = use_of_the_image(img.clone(), 1, b"first", 0x10, 5);
        flash(&mut img, &mut dev, how);
        let dev = use_of_the_image(dev, 2, b"second", 0x40, 1);
        let mut fs = recover(dev);
        assert_eq!(content(&mut fs, 1, b"second"), Some(vec![0x40; 6000]), "{how:?}: this use's fsync'd file");
        assert_eq!(content(&mut fs, 1, b"first"), None, "{how:?}: a file of the earlier use came back");
        let mut names = Vec::new();
        fs.readdir(1, 0, &mut |e| {
            names.push(e.name.clone());
            true
        })
        .unwrap();
        names.retain(|n| n != b"." && n != b"..");
        assert_eq!(names, [b"second".to_vec()], "{how:?}: the root holds only this use's file");
    }
}

/// Scenario: the image flashed over an earlier use that wrote checkpoints into both packs.
/// A faithful flash of the image's blocks mounts the image as made. A flash that skips zero
/// blocks leaves whatever of the earlier use the image has as zeros: mkfs marks the pack it
/// does not use (`CP_UNUSED_MAGIC`), so the earlier use's newer checkpoint there is
/// overwritten too, and the mount refuses the copy (the image's own checkpoint lost its
/// zero payload block) rather than mounting the earlier use's state.
#[test]
fn image_flashed_over_an_earlier_use_mounts_as_the_image() {
    let mut img = image();
    let pristine = img.clone();
    let earlier = || {
        let opts = MountOptions { mount_nonce: 1, ..Default::default() };
        let mut fs = Filesystem::mount(pristine.clone(), &opts, t(0)).unwrap();
        let f = fs.create(1, b"first", 0o644, C, t(1)).unwrap().ino;
        fs.write(f, 0, b"earlier use", t(1)).unwrap();
        fs.sync(t(2)).unwrap();
        fs.unmount(t(3)).unwrap()
    };
    let opts = MountOptions { mount_nonce: 2, ..Default::default() };
    let mut dev = earlier();
    flash(&mut img, &mut dev, Flash::Allocated);
    let r = fsck::check(&mut dev.clone()).unwrap();
    assert!(r.is_clean(), "fsck of the flashed image: {:?}", r.problems);
    let mut fs = Filesystem::mount(dev, &opts, t(0)).unwrap();
    assert_eq!(content(&mut fs, 1, b"first"), None, "the earlier use's checkpoint was mounted");
    let mut dev = earlier();
    flash(&mut img, &mut dev, Flash::SkippingZeros);
    match Filesystem::mount(dev, &opts, t(0)) {
        Ok(mut fs) => {
            panic!("a copy of the image that skipped zero blocks mounted: first = {:?}", content(&mut fs, 1, b"first"))
        }
        Err(e) => assert!(e.to_string().contains("no valid checkpoint pack"), "{e}"),
    }
}

/// A crashed image with an orphan at its checkpoint and a chain after it: `/f` fsync'd
/// `fsyncs` times, the last with 6,000 bytes of `8 + fsyncs`.
fn crashed_with_a_chain_and_an_orphan(fsyncs: u8) -> MemDevice {
    let mut fs = Filesystem::mount(CrashDevice::new(image()), &MountOptions::default(), t(0)).unwrap();
    let o = fs.create(1, b"orphan", 0o644, C, t(1)).unwrap().ino;
    fs.write(o, 0, &[7; 9000], t(1)).unwrap();
    fs.open(o).unwrap();
    fs.unlink(1, b"orphan", t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    let f = fs.create(1, b"f", 0o644, C, t(3)).unwrap().ino;
    for i in 0..fsyncs {
        fs.write(f, 0, &[9 + i; 6000], t(3)).unwrap();
        fs.fsync(f, false, t(3)).unwrap();
    }
    fs.into_device().crash_durable_only()
}

/// Rewrites the newest checkpoint with `version` (same pack), as a device that has been
/// mounted about 2^62 / 2^39 (8 million) times would have it.
fn set_version(dev: &mut MemDevice, version: u64) {
    let sb = read_superblock(dev).unwrap();
    let (mut cp, pack) = Checkpoint::read_newest(dev, &sb.geometry).unwrap();
    cp.version = version;
    let geo = cp.geometry.unwrap_or(sb.geometry);
    cp.commit(dev, &geo, pack).unwrap();
    dev.flush().unwrap();
}

/// Near the end of the versions (an image mounted tens of millions of times, or copied at a
/// high version) the jumps shrink instead of stopping: two uses of one image still stamp
/// their chains apart. (With the step falling back to 1 near a limit, the earlier use's
/// fifth fsync was rolled forward: the review's F-1.)
#[test]
fn near_the_version_limit_two_uses_of_one_image_still_differ() {
    let mut img = image();
    set_version(&mut img, u64::MAX - (1 << 50));
    // A mount and clean unmount: an ordinary image at a high version, both packs valid.
    let fs = Filesystem::mount(img, &MountOptions::default(), t(0)).unwrap();
    let mut img = fs.unmount(t(0)).unwrap();
    let mut dev = use_of_the_image(img.clone(), 1, b"first", 0x10, 5);
    flash(&mut img, &mut dev, Flash::Allocated);
    let dev = use_of_the_image(dev, 2, b"second", 0x40, 1);
    let fs = Filesystem::mount(dev, &MountOptions::default(), t(100)).expect("mount after crash");
    let mut fs = Filesystem::mount(fs.unmount(t(101)).unwrap(), &MountOptions::default(), t(102)).unwrap();
    let n = names(&mut fs);
    let first = content(&mut fs, 1, b"first").map(|d| (d.len(), d[0]));
    assert_eq!(first, None, "a file of the earlier use came back (len, byte); root holds {n:?}");
    assert_eq!(content(&mut fs, 1, b"second"), Some(vec![0x40; 6000]));
    // Far from the end the jump spans 2^40; 2^30 before it, 2^14; 999 before it, a step of 1.
    let now = Timestamp::new(0, 0);
    let jump = |v| checkpoint::version_jump(7, now, &[3; 16], v);
    assert!((1..=1 << 40).contains(&jump(5)));
    assert!((1..=1 << 14).contains(&jump(u64::MAX - (1 << 30))));
    assert_eq!(jump(u64::MAX - 999), 1);
}

/// A checkpoint at `u64::MAX` (only a crafted or damaged image has one) cannot be followed
/// by another: a read-write mount fails with the reason, a read-only mount reads it, and
/// nothing panics. (The version's `+ 1` overflowed: the review's F-2.)
#[test]
fn a_version_that_cannot_grow_refuses_the_mount_without_a_panic() {
    let mut img = image();
    set_version(&mut img, u64::MAX);
    let rw = Filesystem::mount(img.clone(), &MountOptions::default(), t(0));
    let e = rw.err().expect("a read-write mount of a checkpoint at u64::MAX");
    assert!(e.to_string().contains("maximum"), "{e}");
    let ro = Filesystem::mount(img, &MountOptions { read_only: true, ..Default::default() }, t(0));
    assert!(ro.is_ok(), "read-only: {:?}", ro.err());
}

/// Fails write number `fail_write` (0-based) or flush number `fail_flush`, once.
struct FailDev<'a> {
    inner: &'a mut CrashDevice,
    writes: u64,
    flushes: u64,
    fail_write: u64,
    fail_flush: u64,
}

impl BlockDevice for FailDev<'_> {
    fn block_count(&self) -> u64 {
        self.inner.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        self.inner.read(addr, buf)
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        self.writes += 1;
        if self.writes - 1 == self.fail_write {
            return Err(IoError { block: addr, op: "write" });
        }
        self.inner.write(addr, data, flags)
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.inner.wait_writes()
    }
    fn flush(&mut self) -> Result<(), IoError> {
        self.flushes += 1;
        if self.flushes - 1 == self.fail_flush {
            return Err(IoError { block: IoError::FLUSH_BLOCK, op: "flush" });
        }
        self.inner.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        self.inner.discard(addr, count)
    }
}

/// The mount's checkpoint (now written by every read-write mount) fails with EIO at each
/// write and each flush in turn: the mount must fail cleanly, and the device then mounts
/// (after a power cut keeping nothing or everything pending) with every fsync'd file, and
/// fsck clean.
#[test]
fn mount_checkpoint_eio_at_every_write_and_flush_leaves_a_mountable_image() {
    // A crashed image with a chain to recover and an orphan to evict.
    let img = crashed_with_a_chain_and_an_orphan(1);
    for clean in [false, true] {
        let mut failed = 0;
        let img = if clean {
            // A clean image: the mount writes only its checkpoint.
            let fs = Filesystem::mount(img.clone(), &MountOptions::default(), t(5)).unwrap();
            fs.unmount(t(6)).unwrap()
        } else {
            img.clone()
        };
        for (fw, ff) in (0..200u64).map(|k| (k, u64::MAX)).chain((0..20u64).map(|k| (u64::MAX, k))) {
            let mut cd = CrashDevice::new(img.clone());
            let r = {
                let d = FailDev { inner: &mut cd, writes: 0, flushes: 0, fail_write: fw, fail_flush: ff };
                Filesystem::mount(d, &MountOptions::default(), t(10)).map(|fs| fs.stats().checkpoints)
            };
            if r.is_ok() {
                continue;
            }
            failed += 1;
            for keep_all in [false, true] {
                let after = cd.crash(|_| keep_all);
                let fs = Filesystem::mount(after, &MountOptions::default(), t(20));
                let fs =
                    fs.unwrap_or_else(|e| panic!("clean={clean} write {fw} flush {ff} keep={keep_all}: remount: {e}"));
                let mut dev = fs.unmount(t(21)).unwrap();
                let rep = fsck::check(&mut dev).unwrap();
                assert!(rep.is_clean(), "clean={clean} write {fw} flush {ff} keep={keep_all}: {:?}", rep.problems);
                let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(22)).unwrap();
                assert_eq!(content(&mut fs, 1, b"f"), Some(vec![9; 6000]), "clean={clean} w{fw} f{ff} keep={keep_all}");
                assert_eq!(names(&mut fs), [b"f".to_vec()]);
            }
        }
        eprintln!("clean={clean}: {failed} failed mounts checked");
        assert!(failed > 3);
    }
}

/// The image itself holds a chain to recover and an orphan (a crashed image copied to many
/// cards). An earlier use recovered it (its mount's checkpoint wrote the recovered nodes,
/// stamped with the image's version), then fsync'd its own files and lost power. The
/// image is flashed again and this use's first mount is cut at every write: the image's
/// version is then the durable one, and the next mount must not continue into anything of
/// the earlier use.
#[test]
fn mount_cut_at_every_write_over_an_earlier_use_of_a_crashed_image() {
    let mut img = crashed_with_a_chain_and_an_orphan(3);
    // Earlier use.
    let mut dev = {
        let opts = MountOptions { mount_nonce: 1, ..Default::default() };
        let mut fs = Filesystem::mount(CrashDevice::new(img.clone()), &opts, t(10)).unwrap();
        let f = fs.lookup(1, b"f").unwrap().ino;
        let g = fs.create(1, b"first", 0o644, C, t(11)).unwrap().ino;
        for i in 0..6u8 {
            fs.write(g, 0, &[0x30 + i; 7000], t(12)).unwrap();
            fs.fsync(g, false, t(12)).unwrap();
            fs.write(f, 0, &[0x60 + i; 6000], t(12)).unwrap();
            fs.fsync(f, false, t(12)).unwrap();
        }
        fs.into_device().crash(|_| true)
    };
    flash(&mut img, &mut dev, Flash::Allocated);
    let mut cuts = 0;
    for k in 0..400u64 {
        let mut cd = CrashDevice::new(dev.clone());
        cd.power_cut_at = Some(k);
        let opts = MountOptions { mount_nonce: 2, ..Default::default() };
        let ok = Filesystem::mount(&mut cd, &opts, t(10)).is_ok();
        if ok {
            break;
        }
        cuts += 1;
        for keep in 0..3 {
            let after = cd.crash(|i| match keep {
                0 => false,
                1 => true,
                _ => i % 2 == 0,
            });
            let fs = Filesystem::mount(after, &MountOptions { mount_nonce: 3, ..Default::default() }, t(20))
                .unwrap_or_else(|e| panic!("cut {k} keep {keep}: {e}"));
            let mut dev = fs.unmount(t(21)).unwrap();
            let rep = fsck::check(&mut dev).unwrap();
            assert!(rep.is_clean(), "cut {k} keep {keep}: {:?}", rep.problems);
            let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(22)).unwrap();
            assert_eq!(names(&mut fs), [b"f".to_vec()], "cut {k} keep {keep}");
            assert_eq!(content(&mut fs, 1, b"f").map(|d| d[0]), Some(11), "cut {k} keep {keep}");
        }
    }
    eprintln!("{cuts} cuts");
    assert!(cuts > 3);
}
