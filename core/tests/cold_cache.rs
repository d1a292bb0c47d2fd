//! Failure atomicity on a cold cache (issue 35, findings 3 and 4; invariant 7 of
//! docs/INVARIANTS.md): an operation reads everything it needs before its first change, or
//! shuts the filesystem down when a read after it fails — never returns an error with half
//! of its change made for the next checkpoint to persist.
//!
//! With warm caches the reads an operation makes after its first change are cache hits,
//! so an injected read error never reached them: every checker passed while `unlink`
//! removed the name before it read the victim's inode, `rename` rewrote both directories
//! before it read the moved inode, `release` took an orphan off the list before it read
//! its tree, and an atomic commit moved its staged data into the write-back cache before
//! it read the ancestors its fsync decision needs. Here every operation runs on a cold
//! cache (`Filesystem::drop_clean_caches` just before it) and each of the reads it makes
//! fails in turn (`MemDevice::fail_nth_read`). After each failure:
//!
//! - the operation returned EIO;
//! - either the filesystem shut down (a read after the first change; counted in
//!   `errors_after_change`), or it changed nothing: the live tree is as before, and a
//!   `sync` then persists exactly that;
//! - the image mounts, fsck finds it clean, and it shows the state before the operation.
//!
//! Each test also prints how many distinct reads of the operation were failed, and asserts
//! that there was at least one (the operation was reached cold), and for the operations of
//! the findings that none of their failures shut the filesystem down: they read first.

use rollfs_core::*;
use std::collections::BTreeMap;

const C: Credentials = Credentials { uid: 0, gid: 0 };

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

/// Blocks of a file whose tree has direct and indirect nodes (past the inode's 457
/// pointers and the two direct nodes of 508).
const BIG_BLOCKS: u64 = 457 + 2 * 508 + 40;

/// The image every case starts from (made once per test).
fn setup() -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [35; 16], ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(16384), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap();
    let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
    let b = fs.mkdir(1, b"b", 0o755, C, t(1)).unwrap().ino;
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    fs.mkdir(d, b"x", 0o755, C, t(1)).unwrap();
    let f = fs.create(a, b"f", 0o644, C, t(2)).unwrap().ino;
    fs.write(f, 0, &[1u8; 5000], t(2)).unwrap();
    let h = fs.create(a, b"h", 0o644, C, t(2)).unwrap().ino;
    fs.write(h, 0, &[2u8; 3000], t(2)).unwrap();
    fs.setxattr(h, b"user.k", b"v1", XattrSetMode::Any, t(2)).unwrap();
    fs.link(h, b, b"h2", t(2)).unwrap();
    let big = fs.create(1, b"big", 0o644, C, t(3)).unwrap().ino;
    for i in (0..BIG_BLOCKS).step_by(3) {
        fs.write(big, i * 4096, &[(i % 250) as u8 + 1; 4096], t(3)).unwrap();
    }
    fs.create(a, b"o", 0o644, C, t(4)).unwrap();
    // A file whose recorded parent is stale: linked into /b twice and unlinked there again
    // (issue 35, finding 2; one link removed again would put /a back: other_names.rs), the
    // history hidden by the checkpoint.
    let s = fs.create(a, b"s", 0o644, C, t(5)).unwrap().ino;
    fs.write(s, 0, &[5u8; 5000], t(5)).unwrap();
    fs.link(s, b, b"s2", t(5)).unwrap();
    fs.link(s, b, b"s3", t(5)).unwrap();
    fs.unlink(b, b"s2", t(5)).unwrap();
    fs.unlink(b, b"s3", t(5)).unwrap();
    fs.unmount(t(6)).unwrap()
}

fn lookup_path(fs: &mut Filesystem<MemDevice>, path: &str) -> Result<Ino> {
    let mut ino = 1;
    for c in path.split('/').filter(|c| !c.is_empty()) {
        ino = fs.lookup(ino, c.as_bytes())?.ino;
    }
    Ok(ino)
}

/// Everything a user sees: path → (kind, size, links, mode, content digest, xattrs).
type Tree = BTreeMap<String, (FileType, u64, u32, u16, u32, Vec<(Vec<u8>, Vec<u8>)>)>;

fn tree(fs: &mut Filesystem<MemDevice>) -> Result<Tree> {
    let mut out = Tree::new();
    let mut stack = vec![(1u32, String::new())];
    while let Some((dir, path)) = stack.pop() {
        assert!(out.len() < 10_000, "bounded walk");
        let mut entries = Vec::new();
        fs.readdir(dir, 2, &mut |e| {
            entries.push(e);
            true
        })?;
        for e in entries {
            let p = format!("{path}/{}", String::from_utf8_lossy(&e.name));
            let a = fs.getattr(e.ino)?;
            let digest = if a.kind == FileType::Regular {
                let mut buf = vec![0u8; a.size as usize];
                fs.read(e.ino, 0, &mut buf)?;
                codec::crc(&buf)
            } else {
                0
            };
            let mut xattrs = Vec::new();
            for n in fs.listxattr(e.ino)? {
                let v = fs.getxattr(e.ino, &n)?;
                xattrs.push((n, v));
            }
            if a.kind == FileType::Directory {
                stack.push((e.ino, p.clone()));
            }
            out.insert(p, (a.kind, a.size, a.nlink, a.perm, digest, xattrs));
        }
    }
    Ok(out)
}

/// What one operation's sweep saw.
#[derive(Debug, Default)]
struct Sweep {
    /// Reads the operation made on a cold cache (each failed in turn).
    reads: u64,
    /// Failures after which the filesystem shut down (a read after the first change).
    shut_down: u64,
}

/// One case: `synced` runs and is made durable; `unsynced` runs after (its changes only in
/// memory); `paths` are resolved to inode numbers while the cache is still warm (the
/// operation then starts cold: a lookup along its path would have warmed its ancestors);
/// `op` is the operation swept.
#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    synced: fn(&mut Filesystem<MemDevice>),
    unsynced: fn(&mut Filesystem<MemDevice>),
    paths: &'static [&'static str],
    op: fn(&mut Filesystem<MemDevice>, &[Ino]) -> Result<()>,
    /// Turns a tree read with an atomic session open (reads show its staged data) into
    /// what a checkpoint persists of it (the data before the session).
    unstaged: Option<fn(&mut Tree)>,
}

fn nothing(_: &mut Filesystem<MemDevice>) {}

/// Fails each read the case's operation makes on a cold cache in turn, and checks the
/// module header's rules.
fn sweep(c: &Case) -> Sweep {
    let name = c.name;
    let image = setup();
    let mut s = Sweep::default();
    for k in 0..10_000u64 {
        let mut fs = Filesystem::mount(image.clone(), &MountOptions::default(), t(10)).unwrap();
        (c.synced)(&mut fs);
        fs.sync(t(11)).unwrap();
        let durable = tree(&mut fs).unwrap();
        (c.unsynced)(&mut fs);
        let live = tree(&mut fs).unwrap();
        let inos: Vec<Ino> = c.paths.iter().map(|p| lookup_path(&mut fs, p).unwrap()).collect();
        fs.drop_clean_caches();
        let base = fs.device().counters.reads;
        fs.device_mut().fail_nth_read = Some(base + k);
        let r = (c.op)(&mut fs, &inos);
        let fired = fs.device().fail_nth_read.is_none();
        fs.device_mut().fail_nth_read = None;
        if !fired {
            r.unwrap_or_else(|e| panic!("{name}: fails without an injected error: {e}"));
            s.reads = k;
            break;
        }
        let e = r.expect_err("a failed read must fail the operation");
        assert_eq!(e.errno(), 5, "{name}, read {k}: {e}");
        let late = fs.stats().errors_after_change;
        // What a healthy remount must show: the last durable state when the filesystem
        // shut down; the live state before the operation, which a sync made durable, when
        // it did not.
        let (mut dev, want) = if fs.is_shut_down() {
            // A late error of the operation (counted), or a checkpoint it wrote that failed
            // on a read of its own (checkpoints shut down on any failure).
            s.shut_down += 1;
            (fs.into_device(), durable)
        } else {
            assert_eq!(late, 0, "{name}, read {k}: counted a late error without shutting down");
            let now = tree(&mut fs).unwrap();
            assert_eq!(now, live, "{name}, read {k}: the failed operation changed the live tree");
            fs.sync(t(12)).unwrap();
            (fs.into_device(), live)
        };
        let mut want = want;
        if let Some(f) = c.unstaged {
            f(&mut want);
        }
        let report = fsck::check(&mut dev).unwrap();
        assert!(report.is_clean(), "{name}, read {k}: fsck: {:?}", report.problems);
        let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(13)).unwrap();
        assert_eq!(tree(&mut fs).unwrap(), want, "{name}, read {k}: the remount shows another state");
    }
    eprintln!("{name}: {} reads failed in turn, {} shut down", s.reads, s.shut_down);
    assert!(s.reads > 0, "{name}: the operation made no read on a cold cache");
    s
}

/// A read-first operation: every failure leaves it unchanged and the mount writable.
fn reads_first(c: Case) {
    let s = sweep(&c);
    assert_eq!(s.shut_down, 0, "{}: {} failures came after the first change", c.name, s.shut_down);
}

/// An operation that decides (reading) before it checkpoints: the failures of its first
/// reads change nothing and shut nothing down; the checkpoint's own reads may shut down.
fn decides_first(c: Case) {
    let s = sweep(&c);
    assert!(s.shut_down < s.reads, "{}: every failure shut the filesystem down", c.name);
}

#[test]
fn unlink_of_a_file_with_a_tree_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "unlink /big",
        synced: nothing,
        unsynced: nothing,
        paths: &[],
        op: |fs, _| fs.unlink(1, b"big", t(20)),
        unstaged: None,
    });
}

#[test]
fn unlink_of_one_of_two_links_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "unlink /b/h2",
        synced: nothing,
        unsynced: nothing,
        paths: &["/b"],
        op: |fs, i| fs.unlink(i[0], b"h2", t(20)),
        unstaged: None,
    });
}

/// Unlink of the name a link recorded, which puts the name before it back
/// (`other_names.rs`): the lookup of that name in /a is read before the unlink changes
/// anything.
#[test]
fn unlink_of_a_link_that_puts_the_name_before_it_back_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "unlink /d/f2 (puts /a/f back)",
        synced: |fs| {
            let d = lookup_path(fs, "/d").unwrap();
            let f = lookup_path(fs, "/a/f").unwrap();
            fs.link(f, d, b"f2", t(11)).unwrap();
        },
        unsynced: nothing,
        paths: &["/d"],
        op: |fs, i| fs.unlink(i[0], b"f2", t(20)),
        unstaged: None,
    });
}

/// The same through a rename over that link.
#[test]
fn rename_over_a_link_that_puts_the_name_before_it_back_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "rename /d/n /d/f2 (puts /a/f back)",
        synced: |fs| {
            let d = lookup_path(fs, "/d").unwrap();
            let f = lookup_path(fs, "/a/f").unwrap();
            fs.link(f, d, b"f2", t(11)).unwrap();
            fs.create(d, b"n", 0o644, C, t(11)).unwrap();
        },
        unsynced: nothing,
        paths: &["/d"],
        op: |fs, i| fs.rename(i[0], b"n", i[0], b"f2", RenameFlags::empty(), t(20)),
        unstaged: None,
    });
}

#[test]
fn rmdir_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "rmdir /d/x",
        synced: nothing,
        unsynced: nothing,
        paths: &["/d"],
        op: |fs, i| fs.rmdir(i[0], b"x", t(20)),
        unstaged: None,
    });
}

#[test]
fn rename_between_directories_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "rename /a/f /b/f",
        synced: nothing,
        unsynced: nothing,
        paths: &["/a", "/b"],
        op: |fs, i| fs.rename(i[0], b"f", i[1], b"f", RenameFlags::empty(), t(20)),
        unstaged: None,
    });
}

#[test]
fn rename_over_a_file_with_a_tree_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "rename /a/f /big",
        synced: nothing,
        unsynced: nothing,
        paths: &["/a"],
        op: |fs, i| fs.rename(i[0], b"f", 1, b"big", RenameFlags::empty(), t(20)),
        unstaged: None,
    });
}

#[test]
fn rename_exchange_of_directories_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "rename /a /d exchange",
        synced: nothing,
        unsynced: nothing,
        paths: &[],
        op: |fs, _| fs.rename(1, b"a", 1, b"d", RenameFlags::EXCHANGE, t(20)),
        unstaged: None,
    });
}

#[test]
fn link_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "link /a/f /d/f",
        synced: nothing,
        unsynced: nothing,
        paths: &["/a/f", "/d"],
        op: |fs, i| fs.link(i[0], i[1], b"f", t(20)).map(|_| ()),
        unstaged: None,
    });
}

#[test]
fn release_of_an_orphan_with_a_tree_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "release of orphan /big",
        synced: |fs| {
            let big = lookup_path(fs, "/big").unwrap();
            assert_eq!(big, BIG_INO);
            fs.open(big).unwrap();
            fs.unlink(1, b"big", t(15)).unwrap();
        },
        unsynced: nothing,
        paths: &[],
        op: |fs, _| fs.release(BIG_INO, t(20)),
        unstaged: None,
    });
}

/// The inode number of `/big`: setup is deterministic, and the release case asserts it.
const BIG_INO: Ino = 9;

#[test]
fn setxattr_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "setxattr /a/h",
        synced: nothing,
        unsynced: nothing,
        paths: &["/a/h"],
        op: |fs, i| fs.setxattr(i[0], b"user.k", b"v2", XattrSetMode::Any, t(20)),
        unstaged: None,
    });
}

#[test]
fn partial_write_into_a_tree_on_a_cold_cache_reads_first() {
    reads_first(Case {
        name: "write /big",
        synced: nothing,
        unsynced: nothing,
        paths: &["/big"],
        op: |fs, i| fs.write(i[0], 600 * 4096 + 100, &[9u8; 9000], t(20)).map(|_| ()),
        unstaged: None,
    });
}

#[test]
fn atomic_commit_below_a_renamed_directory_on_a_cold_cache_decides_before_it_changes() {
    // Finding 3: the commit's fsync decision walks up from the file looking for a renamed
    // ancestor; on a cold cache that reads, and a read that failed after the staged data
    // had entered the write-back cache left the "failed" transaction for the next sync.
    // The decision's reads now fail the commit with nothing changed; the checkpoint the
    // decision asks for (a renamed ancestor) reads too, and shuts down if that fails.
    decides_first(Case {
        name: "atomic commit below renamed /a",
        synced: |fs| {
            let f = lookup_path(fs, "/a/f").unwrap();
            fs.start_atomic_write(f).unwrap();
            fs.write(f, 0, &[7u8; 8192], t(15)).unwrap();
        },
        unsynced: |fs| fs.rename(1, b"a", 1, b"x", RenameFlags::empty(), t(16)).unwrap(),
        paths: &["/x/f"],
        op: |fs, i| fs.commit_atomic_write(i[0], t(20)),
        // The session survives a failed commit, staged: shown by reads, never persisted by
        // a sync or checkpoint, which keep the file's old data (under either path).
        unstaged: Some(|tree| {
            for p in ["/a/f", "/x/f"] {
                if let Some(f) = tree.get_mut(p) {
                    (f.1, f.4) = (5000, codec::crc(&[1u8; 5000]));
                }
            }
        }),
    });
}

#[test]
fn fsync_of_a_file_with_a_stale_parent_below_a_renamed_directory_on_a_cold_cache_decides_before_it_changes() {
    decides_first(Case {
        name: "fsync /x/s (stale parent, /a renamed)",
        synced: nothing,
        unsynced: |fs| {
            fs.rename(1, b"a", 1, b"x", RenameFlags::empty(), t(16)).unwrap();
            let s = lookup_path(fs, "/x/s").unwrap();
            fs.write(s, 0, &[6u8; 8192], t(16)).unwrap();
        },
        paths: &["/x/s"],
        op: |fs, i| fs.fsync(i[0], false, t(20)),
        unstaged: None,
    });
}

#[test]
fn truncate_of_a_tree_on_a_cold_cache_fails_or_shuts_down() {
    // Truncation frees as it reads (a huge file's tree is not held in memory): a read that
    // fails half way shuts the filesystem down, never returns with part of it freed.
    sweep(&Case {
        name: "truncate /big",
        synced: nothing,
        unsynced: nothing,
        paths: &["/big"],
        op: |fs, i| fs.setattr(i[0], &SetAttr { size: Some(3 * 4096 + 5), ..Default::default() }, t(20)).map(|_| ()),
        unstaged: None,
    });
}

#[test]
fn punch_hole_on_a_cold_cache_fails_or_shuts_down() {
    sweep(&Case {
        name: "punch /big",
        synced: nothing,
        unsynced: nothing,
        paths: &["/big"],
        op: |fs, i| fs.punch_hole(i[0], 100 * 4096 + 7, 700 * 4096, t(20)),
        unstaged: None,
    });
}
