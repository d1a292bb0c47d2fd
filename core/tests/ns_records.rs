//! Namespace records are complete (issue 38; DESIGN.md, *Namespace records in the chain*):
//! with records kept, after every operation — failed ones included — the records since the
//! last checkpoint, replayed in order on the tree that checkpoint holds, give the live
//! tree: every name and the inode it names, each inode's type, permissions, owner, device
//! number, link count and symlink target, and each directory's mtime and ctime. The replay
//! here is the test's own model of what recovery's replay must do; it asserts what each
//! record claims (the name it removes names its inode, the name it adds is free), so a
//! record with a wrong field fails as surely as a missing one.
//!
//! On an image with `FEATURE_INCOMPAT_NS_RECORDS` fsync writes the list and mount replays
//! it: `the_replay_at_mount_gives_the_live_tree` checks that replay against the same tree.

use proptest::prelude::*;
use rollfs_core::nsrec::NsRecord;
use rollfs_core::*;
use std::collections::BTreeMap;

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 7)
}

fn fresh() -> Filesystem<MemDevice> {
    let opts = MkfsOptions { segment_blocks: 64, uuid: [38; 16], ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(16384), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap();
    fs.keep_namespace_records(true);
    fs
}

/// What the test compares of an inode.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Inode {
    kind: FileType,
    perm: u16,
    uid: u32,
    gid: u32,
    rdev: u32,
    nlink: u32,
    target: Vec<u8>,
    /// Directories only (a file's times change with writes, which are not records).
    times: Option<(Timestamp, Timestamp)>,
    entries: BTreeMap<Vec<u8>, Ino>,
}

type Tree = BTreeMap<Ino, Inode>;

/// The live tree, from the root (every inode reachable by a name).
fn snapshot(fs: &mut Filesystem<MemDevice>) -> Tree {
    let mut tree = Tree::new();
    let mut todo = vec![1];
    // Bounded by the inodes of the small trees these tests make.
    while let Some(ino) = todo.pop() {
        if tree.contains_key(&ino) {
            continue;
        }
        let a = fs.getattr(ino).unwrap();
        let mut entries = BTreeMap::new();
        if a.kind == FileType::Directory {
            fs.readdir(ino, 0, &mut |e| {
                if e.name != b"." && e.name != b".." {
                    entries.insert(e.name, e.ino);
                }
                true
            })
            .unwrap();
            todo.extend(entries.values().copied());
        }
        let target = if a.kind == FileType::Symlink { fs.readlink(ino).unwrap() } else { Vec::new() };
        let times = (a.kind == FileType::Directory).then_some((a.mtime, a.ctime));
        tree.insert(
            ino,
            Inode {
                kind: a.kind,
                perm: a.perm,
                uid: a.uid,
                gid: a.gid,
                rdev: a.rdev,
                nlink: a.nlink,
                target,
                times,
                entries,
            },
        );
    }
    tree
}

fn touch(tree: &mut Tree, dir: Ino, time: Timestamp) {
    tree.get_mut(&dir).expect("record names a directory that is not there").times = Some((time, time));
}

/// Removes `dir/name` (which must name `ino`) and drops one link of `ino`.
fn remove_name(tree: &mut Tree, dir: Ino, name: &[u8], ino: Ino) {
    let d = tree.get_mut(&dir).expect("record names a directory that is not there");
    assert_eq!(d.entries.remove(name), Some(ino), "record removes a name that does not name its inode");
    drop_link(tree, dir, ino);
}

fn drop_link(tree: &mut Tree, dir: Ino, ino: Ino) {
    let i = tree.get_mut(&ino).unwrap();
    if i.kind == FileType::Directory {
        assert!(i.entries.is_empty(), "record removes a directory that is not empty");
        tree.remove(&ino);
        tree.get_mut(&dir).unwrap().nlink -= 1;
    } else {
        i.nlink -= 1;
        if i.nlink == 0 {
            tree.remove(&ino);
        }
    }
}

/// The test's model of replay: `records` applied in order to `tree`.
fn replay(mut tree: Tree, records: &[NsRecord]) -> Tree {
    for r in records {
        match r.clone() {
            NsRecord::Create { dir, name, ino, attrs, time } => {
                assert!(!tree.contains_key(&ino), "create of an inode that exists");
                let kind = FileType::from_mode(attrs.mode as u32).unwrap();
                let d = tree.get_mut(&dir).expect("create in a directory that is not there");
                assert!(d.entries.insert(name, ino).is_none(), "create over a name");
                let is_dir = kind == FileType::Directory;
                if is_dir {
                    d.nlink += 1;
                }
                tree.insert(
                    ino,
                    Inode {
                        kind,
                        perm: attrs.mode & 0o7777,
                        uid: attrs.uid,
                        gid: attrs.gid,
                        rdev: attrs.rdev,
                        nlink: if is_dir { 2 } else { 1 },
                        target: attrs.target,
                        times: is_dir.then_some((time, time)),
                        entries: BTreeMap::new(),
                    },
                );
                touch(&mut tree, dir, time);
            }
            NsRecord::Link { dir, name, ino, time } => {
                let d = tree.get_mut(&dir).expect("link into a directory that is not there");
                assert!(d.entries.insert(name, ino).is_none(), "link over a name");
                tree.get_mut(&ino).expect("link of an inode that is not there").nlink += 1;
                touch(&mut tree, dir, time);
            }
            NsRecord::Unlink { dir, name, ino, rmdir, time } => {
                assert_eq!(rmdir, tree[&ino].kind == FileType::Directory, "unlink's rmdir flag");
                remove_name(&mut tree, dir, &name, ino);
                touch(&mut tree, dir, time);
            }
            NsRecord::Rename { dir, name, ino, dir2, name2, ino2, exchange, time } => {
                assert_eq!(tree[&dir].entries.get(&name), Some(&ino), "rename of a name that does not name its inode");
                let at_target = tree[&dir2].entries.get(&name2).copied();
                assert_eq!(at_target.unwrap_or(0), ino2, "rename's record of the target");
                let src_dir = tree[&ino].kind == FileType::Directory;
                if exchange {
                    tree.get_mut(&dir).unwrap().entries.insert(name, ino2);
                    tree.get_mut(&dir2).unwrap().entries.insert(name2, ino);
                    let dst_dir = tree[&ino2].kind == FileType::Directory;
                    if dir != dir2 {
                        let delta = src_dir as i64 - dst_dir as i64;
                        tree.get_mut(&dir).unwrap().nlink = (tree[&dir].nlink as i64 - delta) as u32;
                        tree.get_mut(&dir2).unwrap().nlink = (tree[&dir2].nlink as i64 + delta) as u32;
                    }
                } else {
                    tree.get_mut(&dir).unwrap().entries.remove(&name);
                    if ino2 != 0 {
                        tree.get_mut(&dir2).unwrap().entries.remove(&name2);
                        drop_link(&mut tree, dir2, ino2);
                    }
                    tree.get_mut(&dir2).unwrap().entries.insert(name2, ino);
                    if src_dir && dir != dir2 {
                        tree.get_mut(&dir).unwrap().nlink -= 1;
                        tree.get_mut(&dir2).unwrap().nlink += 1;
                    }
                }
                touch(&mut tree, dir, time);
                touch(&mut tree, dir2, time);
                // A renamed inode's ctime is the rename's (both, for an exchange).
                for i in [ino, if exchange { ino2 } else { 0 }] {
                    if let Some(Inode { times: Some((_, ctime)), .. }) = tree.get_mut(&i) {
                        *ctime = time;
                    }
                }
            }
        }
    }
    tree
}

#[derive(Debug, Clone)]
enum Op {
    Create(u8, u8),
    Mkdir(u8, u8),
    Symlink(u8, u8, usize),
    Fifo(u8, u8),
    Link(u8, u8, u8, u8),
    Unlink(u8, u8),
    Rmdir(u8, u8),
    Rename(u8, u8, u8, u8, u8),
    Write(u8, u8),
    Sync,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let d = || 0u8..4;
    let n = || 0u8..4;
    prop_oneof![
        3 => (d(), n()).prop_map(|(a, b)| Op::Create(a, b)),
        2 => (d(), n()).prop_map(|(a, b)| Op::Mkdir(a, b)),
        1 => (d(), n(), prop_oneof![1usize..40, 3700usize..3800]).prop_map(|(a, b, l)| Op::Symlink(a, b, l)),
        1 => (d(), n()).prop_map(|(a, b)| Op::Fifo(a, b)),
        2 => (d(), n(), d(), n()).prop_map(|(a, b, c, e)| Op::Link(a, b, c, e)),
        2 => (d(), n()).prop_map(|(a, b)| Op::Unlink(a, b)),
        1 => (d(), n()).prop_map(|(a, b)| Op::Rmdir(a, b)),
        4 => (d(), n(), d(), n(), 0u8..3).prop_map(|(a, b, c, e, f)| Op::Rename(a, b, c, e, f)),
        1 => (d(), n()).prop_map(|(a, b)| Op::Write(a, b)),
        1 => Just(Op::Sync),
    ]
}

const NAMES: [&[u8]; 4] = [b"a", b"b", b"c", b"a-much-longer-name-of-a-file-in-a-directory"];

/// The directories an op can name: the root and its subdirectories in name order, as the
/// live tree has them (an index past them is the root).
fn dirs(tree: &Tree) -> Vec<Ino> {
    let mut v = vec![1];
    let mut todo = vec![1];
    while let Some(d) = todo.pop() {
        for &i in tree[&d].entries.values() {
            if tree[&i].kind == FileType::Directory {
                v.push(i);
                todo.push(i);
            }
        }
    }
    v
}

fn run(fs: &mut Filesystem<MemDevice>, op: &Op, live: &Tree, now: Timestamp) {
    let ds = dirs(live);
    let dir = |i: u8| ds.get(i as usize).copied().unwrap_or(1);
    let name = |i: u8| NAMES[i as usize];
    let cred = Credentials { uid: 1000 + now.sec as u32 % 3, gid: 100 };
    let _ = match *op {
        Op::Create(d, n) => fs.create(dir(d), name(n), 0o640, cred, now).map(drop),
        Op::Mkdir(d, n) => fs.mkdir(dir(d), name(n), 0o2750, cred, now).map(drop),
        Op::Symlink(d, n, len) => fs.symlink(dir(d), name(n), &vec![b'x'; len], cred, now).map(drop),
        Op::Fifo(d, n) => fs.mknod(dir(d), name(n), 0o010600, 0, cred, now).map(drop),
        Op::Link(d, n, d2, n2) => match fs.lookup(dir(d), name(n)) {
            Ok(a) => fs.link(a.ino, dir(d2), name(n2), now).map(drop),
            Err(e) => Err(e),
        },
        Op::Unlink(d, n) => fs.unlink(dir(d), name(n), now),
        Op::Rmdir(d, n) => fs.rmdir(dir(d), name(n), now),
        Op::Rename(d, n, d2, n2, f) => {
            let flags = [RenameFlags::empty(), RenameFlags::NOREPLACE, RenameFlags::EXCHANGE][f as usize];
            fs.rename(dir(d), name(n), dir(d2), name(n2), flags, now)
        }
        Op::Write(d, n) => match fs.lookup(dir(d), name(n)) {
            Ok(a) if a.kind == FileType::Regular => fs.write(a.ino, 0, &[7u8; 5000], now).map(drop),
            _ => Ok(()),
        },
        Op::Sync => fs.sync(now),
    };
}

/// Checks the invariant after every op of `ops`; returns how many records were checked.
fn check_ops(ops: &[Op]) -> usize {
    let mut fs = fresh();
    fs.sync(t(0)).unwrap();
    let mut base = snapshot(&mut fs);
    let mut checked = 0;
    for (i, op) in ops.iter().enumerate() {
        let before = snapshot(&mut fs);
        let version = fs.checkpoint_version();
        run(&mut fs, op, &before, t(1 + i as i64));
        let live = snapshot(&mut fs);
        let (records, complete) = fs.namespace_records();
        if fs.checkpoint_version() != version {
            // A checkpoint during the op: the records start at it. It fell before the op's
            // change (one record, on the tree before it) or after it (none).
            base = if records.is_empty() { live.clone() } else { before };
        }
        if !complete {
            // A change no record expresses: only a checkpoint makes names durable.
            continue;
        }
        checked += records.len();
        assert_eq!(replay(base.clone(), records), live, "after op {i} {op:?}: records {records:?}");
    }
    checked
}

/// On an image with `FEATURE_INCOMPAT_NS_RECORDS` the core's own replay at mount does what
/// the model above does: after `ops` and an fsync of the root (which writes the records
/// not yet written, no checkpoint), a crash that keeps the device's writes recovers the live
/// tree, inode numbers, attributes and directory times included. Returns the records the
/// mount replayed.
fn check_mount_replay(ops: &[Op]) -> u64 {
    let opts = MkfsOptions { segment_blocks: 64, uuid: [39; 16], ns_records: true, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(16384), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap();
    for (i, op) in ops.iter().enumerate() {
        let live = snapshot(&mut fs);
        run(&mut fs, op, &live, t(1 + i as i64));
    }
    let now = t(1 + ops.len() as i64);
    fs.fsync(1, false, now).unwrap();
    let live = snapshot(&mut fs);
    let dev = fs.into_device();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(1000)).unwrap();
    let replayed = fs.stats().recovered_records;
    assert_eq!(fs.stats().recovery_records_rejected, 0);
    assert_eq!(snapshot(&mut fs), live, "after the replay at mount of {ops:?}");
    let mut dev = fs.unmount(t(1001)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    replayed
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn records_replayed_on_the_checkpoint_give_the_live_tree(ops in prop::collection::vec(op_strategy(), 1..60)) {
        check_ops(&ops);
    }

    #[test]
    fn the_replay_at_mount_gives_the_live_tree(ops in prop::collection::vec(op_strategy(), 1..60)) {
        check_mount_replay(&ops);
    }
}

/// A fixed history that reaches every kind of record, every rename flavour and a
/// checkpoint between them, so the property above cannot pass by making nothing.
#[test]
fn every_record_kind_is_kept_and_the_checkpoint_empties_them() {
    use Op::*;
    let ops = [
        Mkdir(0, 0),           // /a
        Create(1, 1),          // /a/b
        Symlink(0, 2, 10),     // /c -> xxxxxxxxxx
        Fifo(1, 2),            // /a/c
        Link(1, 1, 0, 1),      // /b = /a/b
        Rename(1, 1, 0, 3, 0), // /a/b -> /<long>
        Rename(0, 1, 0, 3, 0), // /b over /<long> (two names of one inode: nothing)
        Rename(0, 2, 1, 2, 2), // exchange /c and /a/c
        Unlink(0, 1),          // /b
        Rename(0, 0, 0, 1, 1), // /a -> /b, noreplace
        Create(0, 0),          // /a
        Rename(0, 0, 1, 0, 0), // /a -> /b/a
        Rmdir(0, 1),           // /b: not empty, fails
    ];
    let mut fs = fresh();
    for (i, op) in ops.iter().enumerate() {
        let live = snapshot(&mut fs);
        run(&mut fs, op, &live, t(i as i64));
    }
    let (records, complete) = fs.namespace_records();
    assert!(complete);
    assert!(check_ops(&ops) >= 9);
    assert!(check_mount_replay(&ops) >= 9, "the mount replays the records");
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| match r {
            NsRecord::Create { .. } => "create",
            NsRecord::Link { .. } => "link",
            NsRecord::Unlink { .. } => "unlink",
            NsRecord::Rename { exchange: true, .. } => "exchange",
            NsRecord::Rename { ino2: 0, .. } => "rename",
            NsRecord::Rename { .. } => "rename-over",
        })
        .collect();
    eprintln!("{kinds:?}");
    assert_eq!(
        kinds,
        ["create", "create", "create", "create", "link", "rename", "exchange", "unlink", "rename", "create", "rename"]
    );
    fs.sync(t(99)).unwrap();
    assert_eq!(fs.namespace_records(), (&[][..], true), "the checkpoint empties the records");
    // A symlink target no record node can carry: the records are incomplete until the
    // next checkpoint.
    fs.symlink(1, b"long", &[b'y'; nsrec::RECORD_SYMLINK_TARGET_MAX + 1], Credentials { uid: 0, gid: 0 }, t(100))
        .unwrap();
    assert!(!fs.namespace_records().1);
    fs.sync(t(101)).unwrap();
    assert!(fs.namespace_records().1);
}

/// Kept off (the default on every image today), nothing is recorded.
#[test]
fn without_records_nothing_is_kept() {
    let mut fs = fresh();
    fs.keep_namespace_records(false);
    fs.mkdir(1, b"d", 0o755, Credentials { uid: 0, gid: 0 }, t(1)).unwrap();
    fs.rename(1, b"d", 1, b"e", RenameFlags::empty(), t(2)).unwrap();
    assert_eq!(fs.namespace_records(), (&[][..], true));
}

/// The records grow with requests: they count in the since-checkpoint bound, so a rename
/// loop through fresh long names checkpoints (emptying them) rather than growing them
/// without end (DESIGN.md, *Resource bounds*).
#[test]
fn the_records_are_held_to_the_since_checkpoint_bound() {
    let mut fs = fresh();
    let cred = Credentials { uid: 0, gid: 0 };
    fs.create(1, b"f", 0o644, cred, t(1)).unwrap();
    let mut name = b"f".to_vec();
    let (mut most_records, mut most_bytes) = (0usize, 0u64);
    for i in 0..6000u32 {
        let next = format!("{i:0>200}").into_bytes();
        fs.rename(1, &name, 1, &next, RenameFlags::empty(), t(2 + i as i64)).unwrap();
        name = next;
        let records = fs.namespace_records().0;
        let encoded: usize = records.iter().map(NsRecord::encoded_len).sum();
        let counted = fs.memory().since_cp_bytes;
        assert!(counted >= encoded as u64, "the records' {encoded} bytes are not counted ({counted})");
        most_records = most_records.max(records.len());
        most_bytes = most_bytes.max(counted);
    }
    assert!(fs.stats().since_cp_bound_checkpoints > 0, "the loop never reached the bound");
    assert!(most_bytes <= (1 << 20) + 4096, "the records passed the bound: {most_bytes} bytes");
    assert!(most_records < 6000, "the checkpoints never emptied the records ({most_records})");
}
