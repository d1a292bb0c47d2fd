//! Namespace records in the chain (`FEATURE_INCOMPAT_NS_RECORDS`, issue 38): one test per
//! row of core/src/recovery.rs's scenario table for records. Each runs its operations on an
//! image with the feature, checks that the fsync that needs names wrote no checkpoint, and
//! then crashes at every point of that fsync (every subset of its pending writes when they
//! are few, else every prefix and a spread of subsets; each write torn at sectors too) and
//! after it returned: the recovered tree must be the live tree after some prefix of the
//! operations that includes everything durable before the fsync (after it returned: all of
//! them), and fsck must find the image clean.

mod common;
use common::CrashDevice;
use rollfs_core::*;
use std::collections::BTreeMap;

const C: Credentials = Credentials { uid: 0, gid: 0 };

type Fs = Filesystem<CrashDevice>;

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn image(ns_records: bool) -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [5; 16], ns_records, inline_data: true, ..Default::default() };
    Filesystem::format(MemDevice::new(8192), &opts).unwrap()
}

fn fresh() -> Fs {
    Filesystem::mount(CrashDevice::new(image(true)), &MountOptions::default(), t(0)).unwrap()
}

/// What the test compares: every reachable path, with its inode, type, link count and (for
/// a regular file or symlink) its bytes.
type Tree = BTreeMap<String, (Ino, FileType, u32, Vec<u8>)>;

fn snapshot<D: BlockDevice>(fs: &mut Filesystem<D>) -> Tree {
    let mut tree = Tree::new();
    let mut todo = vec![(String::new(), 1)];
    // Bounded by the few inodes these tests make.
    while let Some((path, dir)) = todo.pop() {
        let mut entries = Vec::new();
        fs.readdir(dir, 0, &mut |e| {
            if e.name != b"." && e.name != b".." {
                entries.push((e.name, e.ino));
            }
            true
        })
        .unwrap();
        for (name, ino) in entries {
            let p = format!("{path}/{}", String::from_utf8_lossy(&name));
            let a = fs.getattr(ino).unwrap();
            let bytes = match a.kind {
                FileType::Regular => {
                    let mut b = vec![0u8; a.size as usize];
                    fs.read(ino, 0, &mut b).unwrap();
                    b
                }
                FileType::Symlink => fs.readlink(ino).unwrap(),
                _ => Vec::new(),
            };
            if a.kind == FileType::Directory {
                todo.push((p.clone(), ino));
            }
            tree.insert(p, (ino, a.kind, a.nlink, bytes));
        }
    }
    tree
}

/// Mounts a crash image (running recovery), unmounts it, checks fsck, and returns the tree.
fn recover(img: MemDevice) -> Tree {
    let fs = Filesystem::mount(img, &MountOptions::default(), t(100)).expect("mount after crash");
    let mut dev = fs.unmount(t(101)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "fsck after recovery: {:?}", r.problems);
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(102)).unwrap();
    snapshot(&mut fs)
}

/// A scenario: its operations on a fresh image (they push the live tree after each change
/// into the list, the first being the durable tree they start from) and the inode whose
/// fsync ends it. Returns that inode and the index of the first state a crash may show.
type Ops = fn(&mut Fs, &mut Vec<Tree>) -> (Ino, usize);

/// Runs `ops`; returns the filesystem with its last fsync submitted (not flushed) or done,
/// and the live trees.
fn run(ops: Ops, finish: bool) -> (Fs, Vec<Tree>, usize) {
    let mut fs = fresh();
    let mut states = Vec::new();
    let (ino, required) = ops(&mut fs, &mut states);
    let cps = fs.stats().checkpoints;
    let fallbacks = fs.stats().fsync_checkpoint_fallbacks;
    if finish {
        fs.fsync(ino, false, t(50)).unwrap();
    } else {
        let ticket = fs.fsync_submit(ino, false, t(50)).unwrap();
        assert!(ticket.flush_needed, "the fsync was served by a checkpoint");
    }
    assert_eq!(fs.stats().checkpoints, cps, "an fsync that needs names wrote a checkpoint");
    assert_eq!(fs.stats().fsync_checkpoint_fallbacks, fallbacks);
    assert!(fs.stats().ns_record_nodes_written > 0, "no record node written");
    (fs, states, required)
}

/// The subsets of `n` pending writes a crash may keep: all of them when few, else every
/// prefix, every suffix and a deterministic spread.
fn masks(n: usize) -> Vec<Vec<bool>> {
    if n <= 10 {
        return (0..1u32 << n).map(|m| (0..n).map(|i| m & (1 << i) != 0).collect()).collect();
    }
    let mut out = Vec::new();
    for k in 0..=n {
        out.push((0..n).map(|i| i < k).collect());
        out.push((0..n).map(|i| i >= k).collect());
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..256 {
        out.push(
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x & 1 == 1
                })
                .collect(),
        );
    }
    out
}

fn assert_prefix(got: &Tree, states: &[Tree], required: usize, what: &str) {
    assert!(
        states[required..].iter().any(|s| s == got),
        "{what}: the recovered tree is no state from the fsync'd one on\nrecovered: {got:#?}\nstates: {:#?}",
        &states[required..]
    );
}

/// Recovers every crash image of the pending writes of `dev` (an fsync submitted, not yet
/// flushed): every subset of them a crash may keep, then each write torn at sectors with the
/// writes before it kept and those after it lost. Hands each recovered tree to `check` with
/// what the crash kept; returns how many images it recovered.
fn before_return(dev: &CrashDevice, mut check: impl FnMut(Tree, String)) -> usize {
    let n = dev.pending();
    let mut images = 0;
    for keep in masks(n) {
        check(recover(dev.crash(|i| keep[i])), format!("crash keeping {keep:?} of {n}"));
        images += 1;
    }
    for i in 0..n {
        for m in [0x01u8, 0x0F, 0xF0, 0x7F] {
            let torn = dev.crash_torn(|j| {
                if j < i {
                    0xFF
                } else if j == i {
                    m
                } else {
                    0
                }
            });
            check(recover(torn), format!("write {i} of {n} torn {m:#x}"));
            images += 1;
        }
    }
    images
}

/// The whole check of one scenario (see the file's header). Returns how many crash images
/// it recovered.
fn every_crash_point(ops: Ops) -> usize {
    let (fs, states, required) = run(ops, false);
    let mut images = before_return(&fs.into_device(), |got, what| assert_prefix(&got, &states, required, &what));
    // After the fsync returned: every operation is durable, whatever else is lost.
    let (fs, states, _) = run(ops, true);
    for img in after_return(fs) {
        assert_eq!(&recover(img), states.last().unwrap(), "after the fsync returned");
        images += 1;
    }
    images
}

#[test]
fn directory_fsync_after_create_restores_the_name_without_a_checkpoint() {
    fn ops(fs: &mut Fs, s: &mut Vec<Tree>) -> (Ino, usize) {
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        fs.sync(t(1)).unwrap();
        s.push(snapshot(fs));
        fs.create(d, b"a", 0o644, C, t(2)).unwrap();
        s.push(snapshot(fs));
        let sub = fs.mkdir(d, b"sub", 0o700, C, t(3)).unwrap().ino;
        s.push(snapshot(fs));
        fs.mknod(sub, b"fifo", 0o010644, 0, C, t(4)).unwrap();
        s.push(snapshot(fs));
        fs.symlink(d, b"ln", b"a", C, t(5)).unwrap();
        s.push(snapshot(fs));
        (d, 0)
    }
    let n = every_crash_point(ops);
    eprintln!("images: {n}");
    assert!(n > 4);
}

#[test]
fn file_fsync_after_create_restores_its_name_and_data_without_a_checkpoint() {
    // In a directory that is itself new (a dentry mark could not restore that name).
    fn ops(fs: &mut Fs, s: &mut Vec<Tree>) -> (Ino, usize) {
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        fs.sync(t(1)).unwrap();
        s.push(snapshot(fs));
        let d3 = fs.mkdir(d, b"newer", 0o755, C, t(2)).unwrap().ino;
        s.push(snapshot(fs));
        let f = fs.create(d3, b"f", 0o644, C, t(2)).unwrap().ino;
        s.push(snapshot(fs));
        fs.write(f, 0, &vec![7u8; 9000], t(3)).unwrap();
        s.push(snapshot(fs));
        (f, 0)
    }
    every_crash_point(ops);
}

#[test]
fn rename_then_fsync_is_atomic_at_every_crash_point() {
    // Save by rename: write a temporary file, fsync it, rename it over the old one, fsync
    // the directory.
    fn ops(fs: &mut Fs, s: &mut Vec<Tree>) -> (Ino, usize) {
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        let old = fs.create(d, b"config", 0o644, C, t(1)).unwrap().ino;
        fs.write(old, 0, b"old contents", t(1)).unwrap();
        fs.sync(t(1)).unwrap();
        s.push(snapshot(fs));
        let tmp = fs.create(d, b"config.tmp", 0o644, C, t(2)).unwrap().ino;
        fs.write(tmp, 0, b"new contents, longer", t(2)).unwrap();
        fs.fsync(tmp, false, t(2)).unwrap();
        s.push(snapshot(fs));
        fs.rename(d, b"config.tmp", d, b"config", RenameFlags::empty(), t(3)).unwrap();
        s.push(snapshot(fs));
        (d, 1)
    }
    every_crash_point(ops);
}

#[test]
fn rename_then_file_fsync_keeps_one_name_at_every_crash_point() {
    fn ops(fs: &mut Fs, s: &mut Vec<Tree>) -> (Ino, usize) {
        let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
        let b = fs.mkdir(1, b"b", 0o755, C, t(1)).unwrap().ino;
        let f = fs.create(a, b"f", 0o644, C, t(1)).unwrap().ino;
        fs.write(f, 0, b"data", t(1)).unwrap();
        fs.sync(t(1)).unwrap();
        s.push(snapshot(fs));
        fs.rename(a, b"f", b, b"g", RenameFlags::empty(), t(2)).unwrap();
        s.push(snapshot(fs));
        (f, 0)
    }
    every_crash_point(ops);
}

#[test]
fn rename_of_a_directory_then_fsync_of_a_file_below_it_finds_the_new_path() {
    fn ops(fs: &mut Fs, s: &mut Vec<Tree>) -> (Ino, usize) {
        let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
        let sub = fs.mkdir(a, b"sub", 0o755, C, t(1)).unwrap().ino;
        let f = fs.create(sub, b"f", 0o644, C, t(1)).unwrap().ino;
        fs.sync(t(1)).unwrap();
        s.push(snapshot(fs));
        fs.rename(a, b"sub", 1, b"moved", RenameFlags::empty(), t(2)).unwrap();
        s.push(snapshot(fs));
        fs.write(f, 0, b"written below the moved directory", t(3)).unwrap();
        s.push(snapshot(fs));
        (f, 0)
    }
    every_crash_point(ops);
}

#[test]
fn link_then_fsync_restores_both_names_without_a_checkpoint() {
    fn ops(fs: &mut Fs, s: &mut Vec<Tree>) -> (Ino, usize) {
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        let f = fs.create(d, b"f", 0o644, C, t(1)).unwrap().ino;
        fs.write(f, 0, b"linked", t(1)).unwrap();
        fs.sync(t(1)).unwrap();
        s.push(snapshot(fs));
        fs.link(f, 1, b"second-name", t(2)).unwrap();
        s.push(snapshot(fs));
        (f, 0)
    }
    every_crash_point(ops);
}

#[test]
fn unlink_then_dir_fsync_removes_the_name_without_a_checkpoint() {
    fn ops(fs: &mut Fs, s: &mut Vec<Tree>) -> (Ino, usize) {
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        let f = fs.create(d, b"f", 0o644, C, t(1)).unwrap().ino;
        fs.write(f, 0, &vec![3u8; 5000], t(1)).unwrap();
        fs.create(d, b"g", 0o644, C, t(1)).unwrap();
        fs.mkdir(d, b"empty", 0o755, C, t(1)).unwrap();
        fs.sync(t(1)).unwrap();
        s.push(snapshot(fs));
        fs.unlink(d, b"f", t(2)).unwrap();
        s.push(snapshot(fs));
        fs.rmdir(d, b"empty", t(3)).unwrap();
        s.push(snapshot(fs));
        fs.create(d, b"f", 0o600, C, t(4)).unwrap();
        s.push(snapshot(fs));
        (d, 0)
    }
    every_crash_point(ops);
}

#[test]
fn a_directory_whose_attributes_changed_still_checkpoints() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    fs.create(d, b"a", 0o644, C, t(2)).unwrap();
    fs.setattr(d, &SetAttr { mode: Some(0o700), ..Default::default() }, t(2)).unwrap();
    let cps = fs.stats().checkpoints;
    fs.fsync(d, false, t(3)).unwrap();
    assert_eq!(fs.stats().checkpoints, cps + 1);
    assert_eq!(fs.stats().fsync_cp_directory, 1);
}

#[test]
fn without_the_feature_the_same_fsync_checkpoints() {
    let mut fs = Filesystem::mount(CrashDevice::new(image(false)), &MountOptions::default(), t(0)).unwrap();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    fs.create(d, b"a", 0o644, C, t(2)).unwrap();
    let cps = fs.stats().checkpoints;
    fs.fsync(d, false, t(3)).unwrap();
    assert_eq!(fs.stats().checkpoints, cps + 1);
    assert_eq!(fs.stats().ns_record_nodes_written, 0);
}

#[test]
fn records_and_batches_replay_in_chain_order() {
    // The create of `f` and its first batch, then the rename and its second batch: the
    // second batch applies to the inode the records made and renamed.
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    let f = fs.create(d, b"f", 0o644, C, t(2)).unwrap().ino;
    fs.write(f, 0, b"one", t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    fs.rename(d, b"f", d, b"g", RenameFlags::empty(), t(3)).unwrap();
    fs.write(f, 0, b"two", t(3)).unwrap();
    fs.fsync(f, false, t(3)).unwrap();
    assert_eq!(fs.stats().fsync_checkpoint_fallbacks, 0);
    let img = fs.into_device().crash(|_| true);
    let fs = Filesystem::mount(img.clone(), &MountOptions::default(), t(100)).unwrap();
    assert_eq!(fs.stats().recovered_records, 2);
    assert_eq!(fs.stats().recovered_batches, 2);
    assert_eq!(fs.stats().recovery_records_rejected, 0);
    drop(fs);
    let got = recover(img);
    assert_eq!(got.get("/d/g").map(|e| e.3.clone()), Some(b"two".to_vec()));
    assert!(!got.contains_key("/d/f"));
}

#[test]
fn a_record_that_cannot_apply_stops_the_replay_and_rejects_later_batches_of_its_inodes() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(d, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, b"old", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    let durable = snapshot(&mut fs);
    fs.rename(d, b"f", d, b"g", RenameFlags::empty(), t(2)).unwrap();
    fs.create(d, b"h", 0o644, C, t(3)).unwrap();
    fs.write(f, 0, b"new", t(4)).unwrap();
    fs.fsync(f, false, t(4)).unwrap();
    let mut img = fs.into_device().crash(|_| true);
    // Damage: the rename's record names a source that is not there. The record node is
    // rewritten whole and sealed again, so only the replay's own check can see it.
    let seed = codec::crc(&[5u8; 16]);
    let mut found = 0;
    let mut b = zero_block();
    for addr in 0..img.block_count() {
        img.read(addr, &mut b).unwrap();
        if !nsrec::is_record_node(&b) || !codec::crc_ok_seeded(&b, seed) {
            continue;
        }
        let mut rn = nsrec::decode(&b, addr).unwrap();
        let nsrec::NsRecord::Rename { name, .. } = &mut rn.records[0] else { panic!("{rn:?}") };
        *name = b"zz".to_vec();
        let (version, next) = (node::footer_cp_version(&b), node::footer_next_blkaddr(&b));
        let mut nb = zero_block();
        assert_eq!(nsrec::pack(&mut nb, &rn.records, rn.first_seq), rn.records.len());
        node::seal_for_write(&mut nb, version, next, seed);
        img.write(addr, &nb, WriteFlags::empty()).unwrap();
        found += 1;
    }
    assert_eq!(found, 1);
    let fs = Filesystem::mount(img.clone(), &MountOptions::default(), t(100)).unwrap();
    assert_eq!(fs.stats().recovery_records_rejected, 1);
    assert_eq!(fs.stats().recovered_records, 0);
    assert_eq!(fs.stats().recovered_batches, 0, "the renamed file's later batch is rejected");
    drop(fs);
    assert_eq!(recover(img), durable);
}

/// Damage, not a crash: a record node that passes its seeded CRC and carries the chain's
/// version was sealed by the encoder, so one that does not decode must not end the chain
/// quietly (every fsync after it would be dropped). The mount fails naming the block, fsck
/// reports the chain, and `fsck --repair` drops the chain and leaves a clean image with the
/// checkpoint's tree.
#[test]
fn a_sealed_record_node_that_does_not_decode_fails_the_mount_naming_its_block() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    let durable = snapshot(&mut fs);
    fs.create(d, b"a", 0o644, C, t(2)).unwrap();
    fs.fsync(d, false, t(3)).unwrap();
    assert!(fs.stats().ns_record_nodes_written > 0);
    let mut img = fs.into_device().crash(|_| true);
    let seed = codec::crc(&[5u8; 16]);
    let mut b = zero_block();
    let mut damaged = None;
    for addr in 0..img.block_count() {
        img.read(addr, &mut b).unwrap();
        if !nsrec::is_record_node(&b) || !codec::crc_ok_seeded(&b, seed) {
            continue;
        }
        // A byte after the last record (the decoder requires zeros there), sealed again.
        b[layout::NODE_FOOTER_OFFSET - 1] = 0xa5;
        let (version, next) = (node::footer_cp_version(&b), node::footer_next_blkaddr(&b));
        node::seal_for_write(&mut b, version, next, seed);
        img.write(addr, &b, WriteFlags::empty()).unwrap();
        assert!(damaged.replace(addr).is_none(), "one record node expected");
    }
    let damaged = damaged.expect("the record node");
    match Filesystem::mount(img.clone(), &MountOptions::default(), t(100)) {
        Err(Error::Corrupt { block, reason }) => {
            assert_eq!(block, damaged);
            assert!(reason.contains("record node"), "{reason}");
        }
        Err(e) => panic!("mount failed with {e}, not the corruption"),
        Ok(_) => panic!("mounted over a record node that does not decode"),
    }
    let ro = MountOptions { read_only: true, ..MountOptions::default() };
    assert!(matches!(Filesystem::mount(img.clone(), &ro, t(100)), Err(Error::Corrupt { .. })));
    let r = fsck::check(&mut img).unwrap();
    assert!(
        r.problems.iter().any(|p| p.contains("fsync chain") && p.contains(&damaged.to_string())),
        "{:?}",
        r.problems
    );
    let rep = fsck::repair(&mut img, t(101)).unwrap();
    assert!(rep.after.is_clean(), "after repair: {:?}", rep.after.problems);
    let mut fs = Filesystem::mount(img, &MountOptions::default(), t(102)).unwrap();
    assert_eq!(snapshot(&mut fs), durable);
}

/// The recovery reserve counts the replay of records: on a nearly full device, new files
/// made in many directories and renamed across them, each step made durable by a directory
/// fsync (records only), must leave every acknowledged state mountable read-write (the
/// replay rewrites dentry blocks and inodes the chain does not hold), with every name in
/// place and fsck clean; and a power cut at every write of that recovery mount must leave
/// an image that recovers again (no checkpoint of its own before the recovery checkpoint).
#[test]
fn records_on_a_nearly_full_device_leave_room_for_their_replay() {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [6; 16], ns_records: true, ..Default::default() };
    let img = Filesystem::format(MemDevice::new(common::limits::BLOCKS), &opts).unwrap();
    let big = common::limits::big_cache();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big, t(0)).unwrap();
    let dirs: Vec<Ino> =
        (0..200).map(|i| fs.mkdir(1, format!("d{i}").as_bytes(), 0o755, C, t(1)).unwrap().ino).collect();
    common::limits::fill(&mut fs, 1, "filler", 150, t(2));
    fs.sync(t(3)).unwrap();
    let cps = fs.stats().checkpoints;
    let mut images = Vec::new();
    let mut acknowledged = 0;
    for (i, &d) in dirs.iter().enumerate() {
        let step = (|| {
            fs.create(d, b"x", 0o644, C, t(4))?;
            fs.rename(d, b"x", dirs[(i + 1) % dirs.len()], format!("from-{i}").as_bytes(), RenameFlags::empty(), t(4))?;
            fs.fsync(d, false, t(4))
        })();
        match step {
            Ok(()) => acknowledged += 1,
            Err(Error::NoSpace) => break,
            Err(e) => panic!("step {i}: {e}"),
        }
        if i % 16 == 7 {
            images.push((i, fs.device().crash(|_| true)));
        }
    }
    let s = fs.stats();
    eprintln!(
        "{acknowledged} steps acknowledged, {} record nodes, {} reserve fallbacks, {} checkpoints since the sync",
        s.ns_record_nodes_written,
        s.recovery_reserve_fallbacks,
        s.checkpoints - cps
    );
    assert!(acknowledged > 20 && s.ns_record_nodes_written > 0);
    let last = images.len() - 1;
    for (k, (i, img)) in images.into_iter().enumerate() {
        let mut fs = Filesystem::mount(img.clone(), &big, t(100))
            .unwrap_or_else(|e| panic!("crash after step {i}: read-write mount failed: {e}"));
        assert!(!fs.is_read_only());
        for j in 0..=i {
            let to = dirs[(j + 1) % dirs.len()];
            assert!(fs.lookup(to, format!("from-{j}").as_bytes()).is_ok(), "step {j}'s name lost (crash after {i})");
        }
        common::limits::unmount_clean(fs, t(101));
        if k == last {
            let names = |fs: &mut Filesystem<MemDevice>| {
                for j in 0..=i {
                    let to = dirs[(j + 1) % dirs.len()];
                    assert!(fs.lookup(to, format!("from-{j}").as_bytes()).is_ok(), "step {j}'s name lost");
                }
            };
            let cuts = common::limits::every_cut_of_mount_recovers(&img, &big, &names);
            assert!(cuts > 0);
        }
    }
}

/// A batch is applied only after every record written before it: a link's record node lost
/// in the crash while the linked file's batch (link count 2) survived. The first recovery's
/// chain ends at the lost node; its checkpoint then writes nodes at the lost node's place,
/// linked (with the old version) to the surviving batch, so a crash during it leaves a
/// chain that reaches the batch past a gap in the records. Every such crash must recover
/// to a consistent tree without the link (the batch rejected: `batch_records`). Found by
/// the explorer (`--nsrec`, ace:87, a crash during recovery: fsck found link count 2 and
/// one name).
#[test]
fn a_batch_after_a_lost_record_node_is_not_applied_even_after_a_crash_during_recovery() {
    let big = common::limits::big_cache();
    let mut fs = Filesystem::mount(CrashDevice::new(image(true)), &big, t(0)).unwrap();
    let a = fs.mkdir(1, b"A", 0o755, C, t(1)).unwrap().ino;
    let b = fs.mkdir(1, b"B", 0o755, C, t(1)).unwrap().ino;
    let foo = fs.create(a, b"foo", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    let baz = fs.create(a, b"baz", 0o644, C, t(2)).unwrap().ino;
    fs.fsync(baz, false, t(2)).unwrap();
    fs.link(foo, b, b"lnk", t(3)).unwrap();
    let ticket = fs.fsync_submit(foo, false, t(3)).unwrap();
    assert!(ticket.flush_needed);
    let dev = fs.into_device();
    assert_eq!(dev.pending(), 2, "the link's record node, then foo's inode");
    let img = dev.crash(|i| i == 1);
    let check = |fs: &mut Filesystem<MemDevice>| {
        assert!(fs.lookup(a, b"baz").is_ok(), "baz was fsync'd");
        assert!(fs.lookup(b, b"lnk").is_err(), "the link's record was lost");
        assert_eq!(fs.getattr(foo).unwrap().nlink, 1);
    };
    let mut fs = Filesystem::mount(img.clone(), &big, t(100)).unwrap();
    check(&mut fs);
    common::limits::unmount_clean(fs, t(101));
    assert!(common::limits::every_cut_of_mount_recovers(&img, &big, &check) > 0);
}

/// Review 50, F1: a directory fsync's group (its records, then the batch of a file renamed
/// over another without its own fsync) followed in the chain by another file's batch,
/// submitted before the flush (group commit). A crash loses one of those writes; the
/// recovery mount, crashed at each of its writes, must never leave the renamed file's name
/// without its contents. Recovery used to write its first node into the lost block's place
/// (the chain's version, naming the next block), so after a crash during it the next walk
/// crossed the gap and the other file's batch completed the group: the rename applied, the
/// renamed file empty. Recovery writes in a fresh segment now; fails with
/// `mutant-recovery-writes-at-the-gap`.
#[test]
fn a_crash_during_recovery_never_completes_a_group_across_the_lost_block() {
    let big = common::limits::big_cache();
    let mut fs = Filesystem::mount(CrashDevice::new(image(true)), &big, t(0)).unwrap();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let file = fs.create(d, b"file", 0o644, C, t(1)).unwrap().ino;
    fs.write(file, 0, b"old contents", t(1)).unwrap();
    let x = fs.create(1, b"x", 0o644, C, t(1)).unwrap().ino;
    fs.write(x, 0, b"x, first", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    // An fsync'd file recovery applies (so that recovery writes before its checkpoint).
    let y = fs.create(1, b"y", 0o644, C, t(2)).unwrap().ino;
    fs.write(y, 0, b"y, fsync'd", t(2)).unwrap();
    fs.fsync(y, false, t(2)).unwrap();
    let tmp = fs.create(d, b"tmp", 0o644, C, t(3)).unwrap().ino;
    fs.write(tmp, 0, b"new contents, longer", t(3)).unwrap();
    fs.rename(d, b"tmp", d, b"file", RenameFlags::empty(), t(3)).unwrap();
    let t1 = fs.fsync_submit(d, false, t(4)).unwrap();
    fs.write(x, 0, b"x, second", t(4)).unwrap();
    let t2 = fs.fsync_submit(x, false, t(4)).unwrap();
    assert!(t1.flush_needed && t2.flush_needed, "both fsyncs wrote to the chain");
    let dev = fs.into_device();
    let pending = dev.pending();
    assert!(pending >= 3, "the group's record node and batch, then x's batch: {pending} writes");
    let check = |fs: &mut Filesystem<MemDevice>| {
        assert!(fs.lookup(1, b"y").is_ok(), "y was fsync'd");
        let got = fs.lookup(d, b"file").expect("d/file").ino;
        let a = fs.getattr(got).unwrap();
        let mut b = vec![0u8; a.size as usize];
        fs.read(got, 0, &mut b).unwrap();
        assert!(
            b == b"old contents" || (got == tmp && b == b"new contents, longer"),
            "d/file (inode {got}) holds {:?}: neither the old file nor the renamed one whole",
            String::from_utf8_lossy(&b)
        );
    };
    let mut cuts = 0;
    for lost in 0..pending {
        let img = dev.crash(|i| i != lost);
        cuts += common::limits::every_cut_of_mount_recovers(&img, &big, &check);
    }
    assert!(cuts > 0, "the recovery mounts wrote nothing");
}

/// Crash images of a run whose last fsync returned: only what was durable, and everything.
fn after_return(fs: Fs) -> Vec<MemDevice> {
    let dev = fs.into_device();
    vec![dev.crash_durable_only(), dev.crash(|_| true)]
}

/// Review 52, F2: an atomic commit wrote every pending record, so another user's file,
/// written, never fsync'd and renamed over a name elsewhere, rode root's commit of its
/// database (26 ms instead of 8.8 ms through a mount). A commit now writes records only
/// where the file's fsync would, or where one of them removes a name from the file's
/// directory: SQLite's journal, deleted beside the database, must not come back after a
/// crash next to the committed transaction (SQLite would take it for a hot journal and roll
/// the database back with it). Then it writes them all, in order, riders too. Fails with
/// `mutant-commit-skips-journal-records`: the journal is back after the crash.
#[test]
fn an_atomic_commit_writes_records_only_for_its_own_directory() {
    let big = common::limits::big_cache();
    let mut fs = Filesystem::mount(CrashDevice::new(image(true)), &big, t(0)).unwrap();
    let home = fs.mkdir(1, b"home", 0o777, C, t(1)).unwrap().ino;
    fs.create(home, b"saved", 0o600, C, t(1)).unwrap();
    let dir = fs.mkdir(1, b"app", 0o755, C, t(1)).unwrap().ino;
    let db = fs.create(dir, b"db", 0o644, C, t(1)).unwrap().ino;
    fs.write(db, 0, &[1u8; 8192], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    // The other user: 1 MiB written, never fsync'd, renamed over a name of their own.
    another_users_big_file_renamed(&mut fs, home, b"tmp", b"saved");
    let commit = |fs: &mut Filesystem<CrashDevice>, byte: u8, now: i64| {
        fs.start_atomic_write(db).unwrap();
        fs.write(db, 0, &[byte; 4096], t(now)).unwrap();
        fs.commit_atomic_write(db, t(now)).unwrap();
    };
    let written = |a: &Stats, b: &Stats| b.data_blocks_written - a.data_blocks_written;
    let before = fs.stats();
    commit(&mut fs, 2, 4);
    let after = fs.stats();
    assert_eq!(after.checkpoints, before.checkpoints, "no checkpoint");
    assert_eq!(after.ns_record_nodes_written, before.ns_record_nodes_written, "no record written");
    assert_eq!(after.fsync_riders, before.fsync_riders, "the other user's file rode");
    assert!(written(&before, &after) <= 1, "the other user's 256 blocks were written: {}", written(&before, &after));
    // SQLite's rollback journal: created and fsync'd (its create record written, and the
    // other user's rename with it), then deleted beside the database.
    let journal = fs.create(dir, b"db-journal", 0o644, C, t(5)).unwrap().ino;
    fs.write(journal, 0, &[9u8; 512], t(5)).unwrap();
    fs.fsync(journal, false, t(5)).unwrap();
    fs.unlink(dir, b"db-journal", t(6)).unwrap();
    let mid = fs.stats();
    commit(&mut fs, 3, 7);
    let end = fs.stats();
    assert_eq!(end.checkpoints, mid.checkpoints, "no checkpoint");
    assert!(end.ns_record_nodes_written > mid.ns_record_nodes_written, "the journal's removal was not written");
    let mut fs = Filesystem::mount(fs.into_device().crash_durable_only(), &big, t(100)).unwrap();
    assert!(fs.lookup(dir, b"db-journal").is_err(), "the deleted journal is back beside the committed database");
    let mut b = vec![0u8; 8192];
    fs.read(db, 0, &mut b).unwrap();
    assert!(b[..4096].iter().all(|&x| x == 3) && b[4096..].iter().all(|&x| x == 1), "the last commit");
}

/// A directory's fsync keeps the promise it has without records (where it is a
/// checkpoint): the whole tree is durable once it returns — a file written and renamed over
/// another without an fsync of its own (ALICE's `rename-bad`: never empty under the name),
/// a file appended to, one whose mode changed, a new symlink — with no checkpoint: the
/// changed files' batches ride after the records (`fsync::riders`). Fails with
/// `mutant-no-riders`.
#[test]
fn directory_fsync_makes_the_whole_tree_durable_without_a_checkpoint() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let file = fs.create(d, b"file", 0o644, C, t(1)).unwrap().ino;
    fs.write(file, 0, b"old contents", t(1)).unwrap();
    let log = fs.create(1, b"log", 0o644, C, t(1)).unwrap().ino;
    fs.write(log, 0, b"first record;", t(1)).unwrap();
    let other = fs.create(1, b"other", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    let cps = fs.stats().checkpoints;
    let tmp = fs.create(d, b"tmp", 0o644, C, t(2)).unwrap().ino;
    fs.write(tmp, 0, b"new contents, longer", t(2)).unwrap();
    fs.rename(d, b"tmp", d, b"file", RenameFlags::empty(), t(3)).unwrap();
    fs.write(log, 13, b"second record;", t(4)).unwrap();
    fs.setattr(other, &SetAttr { mode: Some(0o600), ..Default::default() }, t(4)).unwrap();
    fs.symlink(1, b"ln", b"d/file", C, t(5)).unwrap();
    fs.fsync(d, false, t(6)).unwrap();
    assert_eq!(fs.stats().checkpoints, cps, "the directory fsync checkpointed");
    assert!(fs.stats().fsync_riders >= 2, "the changed files rode along: {}", fs.stats().fsync_riders);
    let live = snapshot(&mut fs);
    let mode = |fs: &mut Filesystem<MemDevice>| fs.getattr(other).unwrap().perm & 0o7777;
    for img in after_return(fs) {
        let mut fs = Filesystem::mount(img, &MountOptions::default(), t(100)).expect("mount after crash");
        assert_eq!(snapshot(&mut fs), live, "the tree after the directory fsync returned");
        assert_eq!(mode(&mut fs), 0o600);
        let mut dev = fs.unmount(t(101)).unwrap();
        let r = fsck::check(&mut dev).unwrap();
        assert!(r.is_clean(), "{:?}", r.problems);
    }
}

/// Any fsync that writes a rename's record carries the renamed file's data with it: a file
/// written, renamed over another and never fsync'd itself, then an fsync of an unrelated
/// new file in the same directory (whose create record follows the rename's, and depends on
/// it: they share the directory) — after a crash the name shows the new contents, never an
/// empty file (the old contents are gone with the rename, which the record made durable).
/// Fails with `mutant-no-riders`.
#[test]
fn an_fsync_that_writes_a_rename_record_carries_the_renamed_files_data() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let file = fs.create(d, b"file", 0o644, C, t(1)).unwrap().ino;
    fs.write(file, 0, b"old contents", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    let tmp = fs.create(d, b"tmp", 0o644, C, t(2)).unwrap().ino;
    fs.write(tmp, 0, b"new contents, longer", t(2)).unwrap();
    fs.rename(d, b"tmp", d, b"file", RenameFlags::empty(), t(3)).unwrap();
    let g = fs.create(d, b"g", 0o644, C, t(4)).unwrap().ino;
    fs.write(g, 0, b"g", t(4)).unwrap();
    fs.fsync(g, false, t(5)).unwrap();
    for img in after_return(fs) {
        let mut fs = Filesystem::mount(img, &MountOptions::default(), t(100)).expect("mount after crash");
        let ino = fs.lookup(d, b"file").expect("the name").ino;
        let mut b = vec![0u8; 64];
        let n = fs.read(ino, 0, &mut b).unwrap();
        assert_eq!(&b[..n], b"new contents, longer", "the renamed file under its new name");
    }
}

/// ALICE's `rename-bad` at every crash point of the directory fsync: a file written and
/// renamed over another without an fsync of its own. The fsync's records and its riders'
/// batches are one group, applied whole or not at all: every crash shows the old contents
/// under the name or the new ones, never an empty file (the new inode's state when the
/// rename's record alone is replayed). Fails with `mutant-nsrec-no-group`.
#[test]
fn rename_over_without_fsync_then_directory_fsync_is_all_or_nothing_at_every_crash_point() {
    fn ops(fs: &mut Fs, s: &mut Vec<Tree>) -> (Ino, usize) {
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        let old = fs.create(d, b"file", 0o644, C, t(1)).unwrap().ino;
        fs.write(old, 0, b"old contents", t(1)).unwrap();
        fs.sync(t(1)).unwrap();
        s.push(snapshot(fs));
        let tmp = fs.create(d, b"tmp", 0o644, C, t(2)).unwrap().ino;
        s.push(snapshot(fs));
        fs.write(tmp, 0, &[7u8; 6000], t(2)).unwrap();
        s.push(snapshot(fs));
        fs.rename(d, b"tmp", d, b"file", RenameFlags::empty(), t(3)).unwrap();
        s.push(snapshot(fs));
        (d, 0)
    }
    let n = every_crash_point(ops);
    assert!(n > 4);
}

/// Another user (uid 1000) creates `home/from`, writes 1 MiB to it, never fsyncs it, and
/// renames it to `home/to` (over that name if it exists).
fn another_users_big_file_renamed(fs: &mut Fs, home: Ino, from: &[u8], to: &[u8]) {
    let u = Credentials { uid: 1000, gid: 1000 };
    let theirs = fs.create(home, from, 0o600, u, t(2)).unwrap().ino;
    for i in 0..256u64 {
        fs.write(theirs, i * 4096, &[7u8; 4096], t(2)).unwrap();
    }
    fs.rename(home, from, home, to, RenameFlags::empty(), t(3)).unwrap();
}

/// Review 50, F2: records are written in order, so an fsync that writes them writes every
/// user's, and a file's fsync rode the files they name. A file's fsync that needs none of
/// them (its name unchanged since the checkpoint, no record naming it) writes its batch
/// alone, as without records: another user's rename of a large file it never fsync'd costs
/// it nothing. A new file's fsync writes the records (its create is one of them) and rides
/// only the files they rename over a name (stop 51): the other user's file renamed to a
/// fresh name stays behind (its name may come back with an older state of its own), a file
/// renamed over another rides (its name must never come back without its data). After a
/// crash every fsync'd file is there with its data.
#[test]
fn a_files_fsync_rides_only_files_renamed_over_a_name() {
    let big = common::limits::big_cache();
    let mut fs = Filesystem::mount(CrashDevice::new(image(true)), &big, t(0)).unwrap();
    let home = fs.mkdir(1, b"home", 0o777, C, t(1)).unwrap().ino;
    let mine = fs.create(1, b"mine", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    // The other user: a 1 MiB file, written, never fsync'd, renamed to a fresh name.
    another_users_big_file_renamed(&mut fs, home, b"big0", b"big1");
    let u = Credentials { uid: 1000, gid: 1000 };
    let written = |a: &Stats, b: &Stats| b.data_blocks_written - a.data_blocks_written;
    let before = fs.stats();
    fs.write(mine, 0, b"fsync'd alone", t(4)).unwrap();
    fs.fsync(mine, false, t(4)).unwrap();
    let after = fs.stats();
    assert_eq!(after.checkpoints, before.checkpoints, "no checkpoint");
    assert_eq!(after.ns_record_nodes_written, before.ns_record_nodes_written, "no record written");
    assert_eq!(after.fsync_riders, before.fsync_riders, "no rider");
    assert!(written(&before, &after) <= 1, "the other user's 256 blocks were written: {}", written(&before, &after));
    // A new file's fsync needs its create record, written after the other user's create and
    // rename: neither replaced a name, so their file stays behind.
    let new = fs.create(1, b"new", 0o644, C, t(5)).unwrap().ino;
    fs.write(new, 0, b"new and fsync'd", t(5)).unwrap();
    fs.fsync(new, false, t(6)).unwrap();
    let last = fs.stats();
    assert!(last.ns_record_nodes_written > after.ns_record_nodes_written, "the create's record");
    assert_eq!(last.checkpoints, after.checkpoints, "no checkpoint");
    assert_eq!(last.fsync_riders, after.fsync_riders, "a file renamed to a fresh name rode");
    assert!(written(&after, &last) <= 1, "the other user's 256 blocks were written: {}", written(&after, &last));
    // The other user saves by rename without an fsync: a new file written and renamed over
    // the big one. The next new file's fsync in that directory writes that record (its
    // create shares the directory with it: records by dependency), and the file rides.
    let tmp = fs.create(home, b"tmp", 0o600, u, t(7)).unwrap().ino;
    fs.write(tmp, 0, b"saved over", t(7)).unwrap();
    fs.rename(home, b"tmp", home, b"big1", RenameFlags::empty(), t(8)).unwrap();
    let new2 = fs.create(home, b"new2", 0o644, C, t(9)).unwrap().ino;
    fs.write(new2, 0, b"second", t(9)).unwrap();
    fs.fsync(new2, false, t(9)).unwrap();
    let end = fs.stats();
    assert_eq!(end.fsync_riders, last.fsync_riders + 1, "the file renamed over a name rode");
    assert_eq!(end.checkpoints, last.checkpoints, "no checkpoint");
    let mut fs = Filesystem::mount(fs.into_device().crash_durable_only(), &big, t(100)).unwrap();
    let read = |fs: &mut Filesystem<MemDevice>, dir: Ino, name: &[u8]| {
        let ino = fs.lookup(dir, name).unwrap().ino;
        let mut b = vec![0u8; fs.getattr(ino).unwrap().size as usize];
        fs.read(ino, 0, &mut b).unwrap();
        b
    };
    assert_eq!(read(&mut fs, 1, b"mine"), b"fsync'd alone");
    assert_eq!(read(&mut fs, 1, b"new"), b"new and fsync'd");
    assert_eq!(read(&mut fs, home, b"new2"), b"second");
    assert_eq!(read(&mut fs, home, b"big1"), b"saved over", "the name shows what was renamed over it");
    assert!(fs.lookup(home, b"big0").is_err());
    assert!(fs.lookup(home, b"tmp").is_err());
}

/// Records whose files do not ride (stop 51: a file's fsync carries only the files renamed
/// over a name) replay onto the inodes the checkpoint holds: a file linked and renamed to a
/// fresh name, written and never fsync'd, and a file created and written, never fsync'd,
/// then a new file's fsync that writes their records (created in their directory, so its
/// create depends on all of them: records by dependency). At every crash point of that fsync
/// (every subset of its writes, each torn) recovery gives the checkpoint's tree or the
/// whole new namespace with each unridden file in its checkpointed (or created) state —
/// link counts right, fsck clean — and after the fsync returned, the new namespace.
#[test]
fn records_of_files_that_do_not_ride_replay_onto_their_checkpointed_inodes_at_every_crash_point() {
    fn ops(fs: &mut Fs, s: &mut Vec<Tree>) -> (Ino, usize) {
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        let p = fs.create(d, b"p", 0o644, C, t(1)).unwrap().ino;
        fs.write(p, 0, b"old contents", t(1)).unwrap();
        fs.sync(t(1)).unwrap();
        s.push(snapshot(fs));
        fs.write(p, 0, b"NEW contents, longer", t(2)).unwrap();
        fs.link(p, 1, b"l", t(2)).unwrap();
        fs.rename(d, b"p", d, b"r", RenameFlags::empty(), t(3)).unwrap();
        let q = fs.create(d, b"q", 0o600, C, t(3)).unwrap().ino;
        fs.write(q, 0, &[9u8; 5000], t(3)).unwrap();
        let y = fs.create(d, b"y", 0o644, C, t(4)).unwrap().ino;
        fs.write(y, 0, b"fsync'd", t(4)).unwrap();
        (y, 0)
    }
    // What the fsync makes durable: the namespace of the last state, each unridden file in
    // a state of its own — p as the checkpoint holds it or as written (this fsync does not
    // carry it, a later change may), q as created or as written.
    let expected = |s: &[Tree]| {
        let last = s.last().unwrap();
        let p = s[0]["/d/p"].clone();
        let q = last["/d/q"].clone();
        let mut out = Vec::new();
        for pb in [p.3.clone(), last["/l"].3.clone()] {
            for qb in [Vec::new(), q.3.clone()] {
                let mut e = last.clone();
                for name in ["/d/r", "/l"] {
                    e.insert(name.into(), (p.0, p.1, 2, pb.clone()));
                }
                e.insert("/d/q".into(), (q.0, q.1, 1, qb));
                out.push(e);
            }
        }
        out
    };
    let (fs, states, _) = run(ops, false);
    let mut live = states.clone();
    let mut fs_live = fs;
    live.push(snapshot(&mut fs_live));
    let mut want = expected(&live);
    want.push(states[0].clone());
    let dev = fs_live.into_device();
    let n = dev.pending();
    let images = before_return(&dev, |got, what| assert!(want.contains(&got), "{what}: {got:#?}"));
    assert!(images > 4 && n > 1, "{n} writes");
    let (mut fs, states, _) = run(ops, true);
    let mut live = states;
    live.push(snapshot(&mut fs));
    for img in after_return(fs) {
        let got = recover(img);
        assert!(expected(&live).contains(&got), "after the fsync returned: {got:#?}");
        assert_eq!(got["/d/y"].3, b"fsync'd");
    }
}

/// Review 51, F1: a file written, fsync'd (or committed atomically) and deleted, a symlink
/// created and never fsync'd (it does not ride), then a new file's fsync, which writes the
/// unlink's, the symlink's and its own records. The recovery mount replays the batch, then
/// the unlink (which frees the batch's data blocks), then the symlink's create, whose target
/// the recovery checkpoint writes as a data block. Written at the data log's position — the
/// last checkpoint's, behind the freed blocks — it overwrote one, and a power cut during
/// that mount let the next walk find the batch's data changed and drop the group: the new
/// file, fsync'd, was gone. At every cut of the recovery mount the fsync'd file is there.
/// Fails with `mutant-recovery-writes-over-chain-data`.
#[test]
fn a_crash_during_recovery_never_finds_the_data_its_chain_points_at_overwritten() {
    for atomic in [false, true] {
        let opts = MountOptions::default();
        let mut fs = Filesystem::mount(CrashDevice::new(image(true)), &opts, t(0)).unwrap();
        let g = fs.create(1, b"g", 0o644, C, t(1)).unwrap().ino;
        if atomic {
            fs.start_atomic_write(g).unwrap();
            fs.write(g, 0, &[7u8; 5000], t(1)).unwrap();
            fs.commit_atomic_write(g, t(1)).unwrap();
        } else {
            fs.write(g, 0, &[7u8; 5000], t(1)).unwrap();
            fs.fsync(g, false, t(1)).unwrap();
        }
        fs.unlink(1, b"g", t(2)).unwrap();
        fs.symlink(1, b"g", b"target", C, t(2)).unwrap();
        let i = fs.create(1, b"i", 0o644, C, t(3)).unwrap().ino;
        fs.setattr(i, &SetAttr { mode: Some(0o600), ..Default::default() }, t(3)).unwrap();
        let riders = fs.stats().fsync_riders;
        fs.fsync(i, false, t(4)).unwrap();
        assert_eq!(fs.stats().fsync_riders, riders, "the symlink rode: the scenario needs it not to");
        let img = fs.into_device().crash_durable_only();
        let check = |fs: &mut Filesystem<MemDevice>| {
            let ino = fs.lookup(1, b"i").expect("/i, fsync'd, is there").ino;
            assert_eq!(fs.getattr(ino).unwrap().perm & 0o777, 0o600);
            let link = fs.lookup(1, b"g").expect("/g, the symlink, is there").ino;
            assert_eq!(fs.readlink(link).unwrap(), b"target");
        };
        let cuts = common::limits::every_cut_of_mount_recovers(&img, &opts, &check);
        assert!(cuts > 0, "atomic {atomic}: the recovery mount wrote nothing");
    }
}

/// Review 51 (second user): the recovery reserve a batch must leave counted the replay of
/// every namespace record not yet written, even for a batch that writes none of them (a
/// file's fsync that needs no record: `fsync_decision`), so another user's pending renames
/// turned a plain fsync into a checkpoint (which wrote that user's dirty data too). A batch
/// without the records needs room for its own replay only.
#[test]
fn a_files_fsync_that_writes_no_record_needs_no_room_for_their_replay() {
    let big = common::limits::big_cache();
    let opts =
        MkfsOptions { segment_blocks: 16, uuid: [5; 16], ns_records: true, inline_data: true, ..Default::default() };
    let img = Filesystem::format(MemDevice::new(common::limits::BLOCKS), &opts).unwrap();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big, t(0)).unwrap();
    let d = fs.mkdir(1, b"d", 0o777, C, t(1)).unwrap().ino;
    let u = Credentials { uid: 1000, gid: 1000 };
    let n = 400;
    for i in 0..n {
        fs.create(d, format!("f{i}").as_bytes(), 0o644, u, t(1)).unwrap();
    }
    let mine = fs.create(1, b"mine", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    // The other user's renames to fresh names, never fsync'd: more records than the device
    // has room to replay.
    for i in 0..n {
        fs.rename(d, format!("f{i}").as_bytes(), d, format!("g{i}").as_bytes(), RenameFlags::empty(), t(2)).unwrap();
    }
    let before = fs.stats();
    fs.write(mine, 0, b"fsync'd alone", t(3)).unwrap();
    fs.fsync(mine, false, t(3)).unwrap();
    let after = fs.stats();
    assert_eq!(after.recovery_reserve_fallbacks, before.recovery_reserve_fallbacks, "a checkpoint for room");
    assert_eq!(after.checkpoints, before.checkpoints, "a checkpoint");
    assert_eq!(after.ns_record_nodes_written, before.ns_record_nodes_written, "records written");
    // The records, written by a directory fsync, still need their room: it checkpoints.
    fs.fsync(d, false, t(4)).unwrap();
    assert!(fs.stats().recovery_reserve_fallbacks > after.recovery_reserve_fallbacks, "the records' replay fits");
    let mut fs = Filesystem::mount(fs.into_device().crash_durable_only(), &big, t(100)).unwrap();
    let ino = fs.lookup(1, b"mine").unwrap().ino;
    let mut b = vec![0u8; 13];
    fs.read(ino, 0, &mut b).unwrap();
    assert_eq!(b, b"fsync'd alone");
    assert!(fs.lookup(d, b"g0").is_ok() && fs.lookup(d, b"f0").is_err());
}

/// Review 52, F1 (a second user on a real mount): a change that leaves a record no fsync can
/// write without a checkpoint — a file renamed over a name and punched (or reserved, or a
/// directory's attributes changed before it is renamed over another), a symlink whose target
/// no record node holds — used to make the *next* fsync that wrote records checkpoint: another
/// user's new file's fsync, or an atomic commit of an existing file, which then wrote every
/// user's dirty data (root's fsync 2.8 → 53 ms). Now the change checkpoints itself, and the
/// other user's fsyncs and commits after it write records and batches only. After a crash
/// every fsync'd file is there.
#[test]
fn a_change_that_leaves_records_only_a_checkpoint_can_write_pays_for_that_checkpoint_itself() {
    let big = common::limits::big_cache();
    // As `rollfs mkfs` makes images (reservations on disk: a reserved hole is a reason).
    let opts = MkfsOptions {
        segment_blocks: 16,
        uuid: [5; 16],
        ns_records: true,
        inline_data: true,
        prealloc_on_disk: true,
        dir_v2: true,
        ..Default::default()
    };
    let img = Filesystem::format(MemDevice::new(8192), &opts).unwrap();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big, t(0)).unwrap();
    let home = fs.mkdir(1, b"home", 0o777, C, t(1)).unwrap().ino;
    let db = fs.create(1, b"db", 0o644, C, t(1)).unwrap().ino;
    fs.write(db, 0, &[1u8; 8192], t(1)).unwrap();
    let u = Credentials { uid: 1000, gid: 1000 };
    fs.create(home, b"target", 0o600, u, t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    type Trick = fn(&mut Fs, Ino, Credentials, u32);
    let tricks: [(&str, Trick); 5] = [
        ("punch, then rename over", |fs, home, u, i| {
            let a = fs.create(home, format!("p{i}").as_bytes(), 0o600, u, t(2)).unwrap().ino;
            fs.write(a, 0, &[2u8; 8192], t(2)).unwrap();
            fs.punch_hole(a, 0, 4096, t(2)).unwrap();
            fs.rename(home, format!("p{i}").as_bytes(), home, b"target", RenameFlags::empty(), t(2)).unwrap();
        }),
        ("rename over, then punch", |fs, home, u, i| {
            let a = fs.create(home, format!("q{i}").as_bytes(), 0o600, u, t(2)).unwrap().ino;
            fs.write(a, 0, &[3u8; 8192], t(2)).unwrap();
            fs.rename(home, format!("q{i}").as_bytes(), home, b"target", RenameFlags::empty(), t(2)).unwrap();
            fs.punch_hole(a, 0, 4096, t(2)).unwrap();
        }),
        ("fallocate, then rename over", |fs, home, u, i| {
            let a = fs.create(home, format!("r{i}").as_bytes(), 0o600, u, t(2)).unwrap().ino;
            fs.fallocate(a, 0, 8 * 4096, false, t(2)).unwrap();
            fs.rename(home, format!("r{i}").as_bytes(), home, b"target", RenameFlags::empty(), t(2)).unwrap();
        }),
        ("chmod a directory, then rename it over another", |fs, home, u, i| {
            let d = fs.mkdir(home, format!("d{i}").as_bytes(), 0o700, u, t(2)).unwrap().ino;
            fs.mkdir(home, format!("e{i}").as_bytes(), 0o700, u, t(2)).unwrap();
            fs.setattr(d, &SetAttr { mode: Some(0o750), ..Default::default() }, t(2)).unwrap();
            let (from, to) = (format!("d{i}"), format!("e{i}"));
            fs.rename(home, from.as_bytes(), home, to.as_bytes(), RenameFlags::empty(), t(2)).unwrap();
        }),
        ("a symlink target no record holds", |fs, home, u, i| {
            fs.symlink(home, format!("l{i}").as_bytes(), &[b'x'; 4000], u, t(2)).unwrap();
        }),
    ];
    let mut fsyncd = Vec::new();
    for (i, (what, trick)) in tricks.iter().enumerate() {
        let before = fs.stats();
        trick(&mut fs, home, u, i as u32);
        let mid = fs.stats();
        assert_eq!(
            mid.records_unexpressible_checkpoints,
            before.records_unexpressible_checkpoints + 1,
            "{what}: the change did not checkpoint"
        );
        // Root: a new file's fsync (it writes its create record) and an atomic commit of an
        // existing file (it writes every record): no checkpoint, no rider.
        let name = format!("new{i}");
        let new = fs.create(1, name.as_bytes(), 0o644, C, t(3)).unwrap().ino;
        fs.write(new, 0, name.as_bytes(), t(3)).unwrap();
        fs.fsync(new, false, t(3)).unwrap();
        fs.start_atomic_write(db).unwrap();
        fs.write(db, 0, &[10 + i as u8; 4096], t(3)).unwrap();
        fs.commit_atomic_write(db, t(3)).unwrap();
        let after = fs.stats();
        assert_eq!(after.checkpoints, mid.checkpoints, "{what}: root's fsync or commit checkpointed");
        assert_eq!(after.fsync_riders, mid.fsync_riders, "{what}: the other user's file rode");
        fsyncd.push((name, 10 + i as u8));
    }
    let mut fs = Filesystem::mount(fs.into_device().crash_durable_only(), &big, t(100)).unwrap();
    for (name, _) in &fsyncd {
        let ino = fs.lookup(1, name.as_bytes()).unwrap().ino;
        let mut buf = vec![0u8; name.len()];
        fs.read(ino, 0, &mut buf).unwrap();
        assert_eq!(&buf, name.as_bytes(), "{name} lost");
    }
    let mut buf = vec![0u8; 4096];
    fs.read(db, 0, &mut buf).unwrap();
    assert_eq!(buf, vec![fsyncd.last().unwrap().1; 4096], "the last atomic commit lost");
}
