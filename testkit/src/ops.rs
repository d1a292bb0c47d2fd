//! The differential runner of the core's model test (core/tests/model.rs, proptest) and
//! the `ops_vs_model` fuzz target (fuzz/src/lib.rs, bytes): one operation encoding, one
//! loop that runs each operation on a [`Filesystem`] and on the [`Namespace`] model and
//! compares results and trees after every step, and the final checks (a power loss keeps
//! every durable file content, a clean unmount keeps everything, fsck is clean).
//!
//! The two callers only differ in how they produce operations (proptest strategies, fuzz
//! bytes), so everything else lives here once. Durability tracking (which file content an
//! fsync or checkpoint made durable) belongs to this runner, not to the model.

use crate::model::{Body, Namespace, NewKind};
use rollfs_core::{Credentials, Error, Filesystem, Ino, MemDevice, MkfsOptions, MountOptions, Timestamp};
use rollfs_core::{RenameFlags, SetAttr, XattrSetMode};
use std::collections::BTreeMap;

const C: Credentials = Credentials { uid: 1, gid: 2 };

/// Entry names the operations choose from (one spans several dentry slots).
pub const NAMES: [&[u8]; 4] = [b"a", b"b", b"long-name-with-many-bytes-to-span-dentry-slots", b"d"];
/// Extended attribute names the operations choose from.
pub const XNAMES: [&[u8]; 3] = [b"user.one", b"user.two", b"trusted.three"];

/// One operation. Its `u8` operands pick among the model's current directories, files or
/// inodes (modulo their number), names ([`NAMES`], [`XNAMES`]) or data seeds; offsets and
/// lengths are reduced to a few blocks.
#[derive(Debug, Clone)]
pub enum Op {
    Create(u8, u8),
    Mkdir(u8, u8),
    Write(u8, u16, u16, u8),
    Truncate(u8, u16),
    /// fallocate: mode 0 punch hole, 1 zero range keeping the size, 2 zero range.
    Punch(u8, u16, u16, u8),
    Unlink(u8, u8),
    Rmdir(u8, u8),
    /// Flags: 0 none, 1 NOREPLACE, 2 EXCHANGE (modulo 3).
    Rename(u8, u8, u8, u8, u8),
    Link(u8, u8, u8),
    Chmod(u8, u16),
    SetXattr(u8, u8, u8),
    RemoveXattr(u8, u8),
    Symlink(u8, u8),
    Sync,
    Remount,
    Fsync(u8, bool),
    Atomic(u8, u16, u16, u8, bool),
    /// A read of part of a file, compared with the model at once.
    Read(u8, u16, u16),
}

pub fn pick<T: Copy>(v: &[T], i: u8) -> Option<T> {
    if v.is_empty() {
        None
    } else {
        Some(v[i as usize % v.len()])
    }
}

fn t(i: usize) -> Timestamp {
    Timestamp::new(1_000_000 + i as i64, 0)
}

/// Compares every inode of the model with the filesystem: attributes, contents, entries
/// (by readdir and by lookup), symlink targets, xattrs.
pub fn compare(fs: &mut Filesystem<MemDevice>, m: &Namespace) -> Result<(), String> {
    for (&ino, mi) in &m.inodes {
        let a = fs.getattr(ino).map_err(|e| format!("getattr {ino}: {e}"))?;
        if a.nlink != mi.nlink || a.perm != mi.perm {
            return Err(format!(
                "inode {ino}: nlink/perm {}/{:o} vs model {}/{:o}",
                a.nlink, a.perm, mi.nlink, mi.perm
            ));
        }
        match &mi.body {
            Body::File(data) => {
                let data = data.data();
                if a.size != data.len() as u64 {
                    return Err(format!("inode {ino}: size {} vs model {}", a.size, data.len()));
                }
                let mut buf = vec![0u8; data.len() + 10];
                let n = fs.read(ino, 0, &mut buf).map_err(|e| format!("read {ino}: {e}"))?;
                if buf[..n] != data[..] {
                    return Err(format!("inode {ino}: content differs"));
                }
            }
            Body::Symlink(target) => {
                if fs.readlink(ino).map_err(|e| e.to_string())? != *target {
                    return Err(format!("symlink {ino} differs"));
                }
            }
            Body::Dir(entries) => {
                let mut got = BTreeMap::new();
                fs.readdir(ino, 0, &mut |e| {
                    if e.name != b"." && e.name != b".." {
                        got.insert(e.name, e.ino);
                    }
                    true
                })
                .map_err(|e| format!("readdir {ino}: {e}"))?;
                if got != *entries {
                    return Err(format!("dir {ino}: entries {got:?} vs model {entries:?}"));
                }
                for (name, &child) in entries {
                    let l = fs.lookup(ino, name).map_err(|e| format!("lookup: {e}"))?;
                    if l.ino != child {
                        return Err(format!("lookup {name:?} in {ino} gives {}", l.ino));
                    }
                }
            }
        }
        let names = fs.listxattr(ino).map_err(|e| e.to_string())?;
        let want: Vec<Vec<u8>> = mi.xattrs.keys().cloned().collect();
        if names != want {
            return Err(format!("xattrs of {ino}: {names:?} vs {want:?}"));
        }
        for (k, v) in &mi.xattrs {
            if fs.getxattr(ino, k).map_err(|e| e.to_string())? != *v {
                return Err(format!("xattr value of {ino}"));
            }
        }
    }
    Ok(())
}

/// The filesystem's result `got` against the model's `want`: both fine (the value), the
/// same error (None), or a divergence.
pub fn same<T: std::fmt::Debug>(
    got: Result<T, Error>,
    want: Result<(), Error>,
    what: &str,
) -> Result<Option<T>, String> {
    match (got, want) {
        (Ok(v), Ok(())) => Ok(Some(v)),
        (Err(g), Err(w)) if g == w => Ok(None),
        (g, w) => Err(format!("{what}: fs {g:?} vs model {w:?}")),
    }
}

fn file_bytes(m: &Namespace, ino: Ino) -> &[u8] {
    m.file(ino).expect("a file").data()
}

/// Runs `ops` on a fresh 32 MiB filesystem and on the model; see the module header.
pub fn run(ops: &[Op]) -> Result<(), String> {
    let opts = MkfsOptions { segment_blocks: 16, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(8192), &opts).map_err(|e| e.to_string())?;
    let mount = MountOptions { dirty_bytes_max: 256 << 10, ..Default::default() };
    let mut fs = Filesystem::mount(dev, &mount, t(0)).map_err(|e| e.to_string())?;
    let mut m = Namespace::new();
    // Content made durable (fsync or checkpoint) and not changed since, by inode.
    let mut durable: BTreeMap<Ino, Vec<u8>> = BTreeMap::new();
    for (step, op) in ops.iter().enumerate() {
        let now = t(step + 1);
        let cps_before = fs.stats().checkpoints;
        match *op {
            Op::Create(d, n) | Op::Mkdir(d, n) | Op::Symlink(d, n) => {
                let d = pick(&m.dirs(), d).unwrap();
                let name = NAMES[n as usize % NAMES.len()];
                let want = m.check_new_name(d, name);
                let got = match op {
                    Op::Create(..) => fs.create(d, name, 0o644, C, now),
                    Op::Mkdir(..) => fs.mkdir(d, name, 0o755, C, now),
                    _ => fs.symlink(d, name, b"target/path", C, now),
                };
                if let Some(a) = same(got, want, "create")? {
                    let (kind, perm) = match op {
                        Op::Create(..) => (NewKind::File, 0o644),
                        Op::Mkdir(..) => (NewKind::Dir, 0o755),
                        _ => (NewKind::Symlink(b"target/path".to_vec()), 0o777),
                    };
                    m.create(d, name, a.ino, kind, perm).expect("checked");
                    durable.remove(&a.ino);
                }
            }
            Op::Write(f, off, len, seed) => {
                let Some(f) = pick(&m.files(), f) else { continue };
                let off = off as u64 % 20_000;
                let len = len as usize % 9_000;
                let data: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(seed | 1).wrapping_add(seed)).collect();
                same(fs.write(f, off, &data, now), Ok(()), "write")?;
                m.write(f, off, &data).expect("a file");
            }
            Op::Read(f, off, len) => {
                let Some(f) = pick(&m.files(), f) else { continue };
                let off = off as usize % 24_000;
                let len = len as usize % 10_000;
                let mut buf = vec![0u8; len];
                let n = fs.read(f, off as u64, &mut buf).map_err(|e| format!("read: {e}"))?;
                let v = file_bytes(&m, f);
                let want = if off >= v.len() { &[][..] } else { &v[off..(off + len).min(v.len())] };
                if buf[..n] != *want {
                    return Err(format!("read {f} at {off} len {len}: {n} bytes differ from the model"));
                }
            }
            Op::Truncate(f, size) => {
                let Some(f) = pick(&m.files(), f) else { continue };
                let size = size as u64 % 30_000;
                let set = SetAttr { size: Some(size), ..Default::default() };
                same(fs.setattr(f, &set, now), Ok(()), "truncate")?;
                m.truncate(f, size).expect("a file");
            }
            Op::Punch(f, off, len, mode) => {
                let Some(f) = pick(&m.files(), f) else { continue };
                let (off, len) = (off as u64 % 30_000, len as u64 % 20_000);
                let mode = mode % 3;
                let got = match mode {
                    0 => fs.punch_hole(f, off, len, now),
                    _ => fs.zero_range(f, off, len, mode == 1, now),
                };
                same(got, Ok(()), "punch/zero range")?;
                m.fallocate(f, off, len, mode).expect("a file");
            }
            Op::Unlink(d, n) | Op::Rmdir(d, n) => {
                let d = pick(&m.dirs(), d).unwrap();
                let name = NAMES[n as usize % NAMES.len()];
                let (want, got) = if matches!(op, Op::Rmdir(..)) {
                    (m.rmdir(d, name), fs.rmdir(d, name, now))
                } else {
                    (m.unlink(d, name), fs.unlink(d, name, now))
                };
                same(got, want, "unlink/rmdir")?;
            }
            Op::Rename(d1, n1, d2, n2, fl) => {
                let dirs = m.dirs();
                let (d1, d2) = (pick(&dirs, d1).unwrap(), pick(&dirs, d2).unwrap());
                let (n1, n2) = (NAMES[n1 as usize % NAMES.len()], NAMES[n2 as usize % NAMES.len()]);
                let flags = [RenameFlags::empty(), RenameFlags::NOREPLACE, RenameFlags::EXCHANGE][fl as usize % 3];
                let want = m.rename(d1, n1, d2, n2, flags);
                same(fs.rename(d1, n1, d2, n2, flags, now), want, "rename")?;
            }
            Op::Link(f, d, n) => {
                let Some(f) = pick(&m.files(), f) else { continue };
                let d = pick(&m.dirs(), d).unwrap();
                let name = NAMES[n as usize % NAMES.len()];
                let want = m.link(f, d, name);
                same(fs.link(f, d, name, now), want, "link")?;
            }
            Op::Chmod(f, mode) => {
                let f = pick(&m.all(), f).unwrap();
                let set = SetAttr { mode: Some(mode as u32 & 0o7777), ..Default::default() };
                same(fs.setattr(f, &set, now), Ok(()), "chmod")?;
                m.chmod(f, mode as u32);
            }
            Op::SetXattr(f, n, v) => {
                let f = pick(&m.all(), f).unwrap();
                let name = XNAMES[n as usize % XNAMES.len()];
                let value = vec![v; v as usize * 3];
                same(fs.setxattr(f, name, &value, XattrSetMode::Any, now), Ok(()), "setxattr")?;
                m.set_xattr(f, name, &value);
            }
            Op::RemoveXattr(f, n) => {
                let f = pick(&m.all(), f).unwrap();
                let name = XNAMES[n as usize % XNAMES.len()];
                let want = m.remove_xattr(f, name);
                same(fs.removexattr(f, name, now), want, "removexattr")?;
            }
            Op::Sync => same(fs.sync(now), Ok(()), "sync").map(|_| ())?,
            Op::Fsync(f, datasync) => {
                let f = pick(&m.all(), f).unwrap();
                same(fs.fsync(f, datasync, now), Ok(()), "fsync")?;
            }
            Op::Atomic(f, off, len, seed, commit) => {
                let Some(f) = pick(&m.files(), f) else { continue };
                let off = off as u64 % 20_000;
                let len = len as usize % 9_000;
                let data: Vec<u8> = (0..len).map(|i| (i as u8) ^ seed).collect();
                same(fs.start_atomic_write(f), Ok(()), "start atomic")?;
                same(fs.write(f, off, &data, now), Ok(()), "atomic write")?;
                if commit {
                    same(fs.commit_atomic_write(f, now), Ok(()), "commit")?;
                    m.write(f, off, &data).expect("a file");
                } else {
                    same(fs.abort_atomic_write(f), Ok(()), "abort")?;
                }
            }
            Op::Remount => {
                let dev = fs.unmount(now).map_err(|e| format!("unmount: {e}"))?;
                fs = Filesystem::mount(dev, &mount, now).map_err(|e| format!("mount: {e}"))?;
            }
        }
        // Removed inodes take their durability along (inode numbers are reused).
        durable.retain(|ino, _| m.contains(*ino));
        // What the op changed is no longer durable...
        if matches!(op, Op::Write(..) | Op::Truncate(..) | Op::Punch(..) | Op::Atomic(..)) {
            durable.retain(|&ino, d| m.file(ino).is_ok_and(|c| c.data()[..] == d[..]));
        }
        // ...unless a checkpoint (sync, remount, fsync fallback, memory bound) made
        // everything durable, or an fsync this file.
        let all = fs.stats().checkpoints != cps_before || matches!(op, Op::Remount);
        let fsynced = match *op {
            Op::Fsync(f, _) => pick(&m.all(), f),
            Op::Atomic(f, _, _, _, true) => pick(&m.files(), f),
            _ => None,
        };
        for (&ino, mi) in &m.inodes {
            if let Body::File(c) = &mi.body {
                if all || fsynced == Some(ino) {
                    durable.insert(ino, c.data().to_vec());
                }
            }
        }
        compare(&mut fs, &m).map_err(|e| format!("after step {step} {op:?}: {e}"))?;
    }
    // Power loss now (a copy of the device: every write reached it): recovery must bring
    // back every file's durable content, and the image must be clean.
    let crashed = fs.device().clone();
    let mut cfs = Filesystem::mount(crashed, &mount, t(9_000)).map_err(|e| format!("mount after crash: {e}"))?;
    for (&ino, want) in &durable {
        let a = match cfs.getattr(ino) {
            Ok(a) => a,
            Err(e) => {
                let mut names = Vec::new();
                let _ = cfs.readdir(1, 0, &mut |d| {
                    names.push((String::from_utf8_lossy(&d.name).into_owned(), d.ino));
                    true
                });
                return Err(format!("after crash, durable inode {ino}: {e}; stats {:?}; root {names:?}", cfs.stats()));
            }
        };
        // Bounded: a corrupt size must fail the comparison, not exhaust memory.
        let mut buf = vec![0u8; a.size.min(1 << 20) as usize];
        cfs.read(ino, 0, &mut buf).map_err(|e| e.to_string())?;
        if buf != *want {
            return Err(format!("after crash, inode {ino}: {} bytes vs durable {} bytes", buf.len(), want.len()));
        }
    }
    let mut cdev = cfs.unmount(t(9_001)).map_err(|e| e.to_string())?;
    let report = rollfs_core::fsck::check(&mut cdev).map_err(|e| e.to_string())?;
    if !report.is_clean() {
        return Err(format!("fsck after crash: {:?}", report.problems));
    }
    // Clean unmount: everything is there, the image is clean.
    let mut dev = fs.unmount(t(10_000)).map_err(|e| e.to_string())?;
    let report = rollfs_core::fsck::check(&mut dev).map_err(|e| e.to_string())?;
    if !report.is_clean() {
        return Err(format!("fsck: {:?}", report.problems));
    }
    let mut fs = Filesystem::mount(dev, &mount, t(10_001)).map_err(|e| e.to_string())?;
    compare(&mut fs, &m).map_err(|e| format!("after final remount: {e}"))
}
