//! Model-based property test: random operation sequences run against the filesystem and
//! against a plain in-memory model; the trees are compared after every step, after
//! unmount + mount, and the image must pass fsck.

use proptest::prelude::*;
use rollfs_core::*;
use std::collections::BTreeMap;

const C: Credentials = Credentials { uid: 1, gid: 2 };
const NAMES: [&[u8]; 4] = [b"a", b"b", b"long-name-with-many-bytes-to-span-dentry-slots", b"d"];

#[derive(Debug, Clone)]
enum Op {
    Create(u8, u8),
    Mkdir(u8, u8),
    Write(u8, u16, u16, u8),
    Truncate(u8, u16),
    /// fallocate: mode 0 punch hole, 1 zero range keeping the size, 2 zero range.
    Punch(u8, u16, u16, u8),
    Unlink(u8, u8),
    Rmdir(u8, u8),
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
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u8>(), any::<u8>()).prop_map(|(d, n)| Op::Create(d, n)),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(d, n)| Op::Mkdir(d, n)),
        5 => (any::<u8>(), any::<u16>(), any::<u16>(), any::<u8>()).prop_map(|(f, o, l, s)| Op::Write(f, o, l, s)),
        2 => (any::<u8>(), any::<u16>()).prop_map(|(f, s)| Op::Truncate(f, s)),
        2 => (any::<u8>(), any::<u16>(), any::<u16>(), 0u8..3).prop_map(|(f, o, l, m)| Op::Punch(f, o, l, m)),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(d, n)| Op::Unlink(d, n)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(d, n)| Op::Rmdir(d, n)),
        3 => (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), 0u8..3).prop_map(|(a, b, c, d, f)| Op::Rename(a, b, c, d, f)),
        1 => (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(f, d, n)| Op::Link(f, d, n)),
        1 => (any::<u8>(), any::<u16>()).prop_map(|(f, m)| Op::Chmod(f, m)),
        1 => (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(f, n, v)| Op::SetXattr(f, n, v)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(f, n)| Op::RemoveXattr(f, n)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(d, n)| Op::Symlink(d, n)),
        1 => Just(Op::Sync),
        2 => (any::<u8>(), any::<bool>()).prop_map(|(f, d)| Op::Fsync(f, d)),
        1 => (any::<u8>(), any::<u16>(), any::<u16>(), any::<u8>(), any::<bool>()).prop_map(|(f, o, l, s, c)| Op::Atomic(f, o, l, s, c)),
        1 => Just(Op::Remount),
    ]
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    File(Vec<u8>),
    Dir(BTreeMap<Vec<u8>, Ino>),
    Symlink(Vec<u8>),
}

#[derive(Debug, Clone)]
struct MInode {
    kind: Kind,
    nlink: u32,
    perm: u16,
    parent: Ino,
    xattrs: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Content made durable (fsync or checkpoint) and not changed since.
    durable: Option<Vec<u8>>,
}

#[derive(Default)]
struct Model {
    inodes: BTreeMap<Ino, MInode>,
}

impl Model {
    fn dirs(&self) -> Vec<Ino> {
        self.inodes.iter().filter(|(_, i)| matches!(i.kind, Kind::Dir(_))).map(|(k, _)| *k).collect()
    }
    fn files(&self) -> Vec<Ino> {
        self.inodes.iter().filter(|(_, i)| matches!(i.kind, Kind::File(_))).map(|(k, _)| *k).collect()
    }
    fn all(&self) -> Vec<Ino> {
        self.inodes.keys().copied().collect()
    }
    fn entries(&self, d: Ino) -> &BTreeMap<Vec<u8>, Ino> {
        match &self.inodes[&d].kind {
            Kind::Dir(e) => e,
            _ => unreachable!(),
        }
    }
    fn entries_mut(&mut self, d: Ino) -> &mut BTreeMap<Vec<u8>, Ino> {
        match &mut self.inodes.get_mut(&d).unwrap().kind {
            Kind::Dir(e) => e,
            _ => unreachable!(),
        }
    }
    fn is_dir(&self, i: Ino) -> bool {
        matches!(self.inodes[&i].kind, Kind::Dir(_))
    }
    fn within(&self, mut d: Ino, anc: Ino) -> bool {
        loop {
            if d == anc {
                return true;
            }
            if d == 1 {
                return false;
            }
            d = self.inodes[&d].parent;
        }
    }
    fn drop_link(&mut self, i: Ino) {
        let dir = self.is_dir(i);
        let n = self.inodes.get_mut(&i).unwrap();
        if dir {
            n.nlink = 0;
        } else {
            n.nlink -= 1;
        }
        if n.nlink == 0 {
            self.inodes.remove(&i);
        }
    }
}

fn pick<T: Copy>(v: &[T], i: u8) -> Option<T> {
    if v.is_empty() {
        None
    } else {
        Some(v[i as usize % v.len()])
    }
}

fn t(i: usize) -> Timestamp {
    Timestamp::new(1_000_000 + i as i64, 0)
}

fn compare(fs: &mut Filesystem<MemDevice>, m: &Model) -> Result<(), String> {
    for (&ino, mi) in &m.inodes {
        let a = fs.getattr(ino).map_err(|e| format!("getattr {ino}: {e}"))?;
        if a.nlink != mi.nlink || a.perm != mi.perm {
            return Err(format!(
                "inode {ino}: nlink/perm {}/{:o} vs model {}/{:o}",
                a.nlink, a.perm, mi.nlink, mi.perm
            ));
        }
        match &mi.kind {
            Kind::File(data) => {
                if a.size != data.len() as u64 {
                    return Err(format!("inode {ino}: size {} vs model {}", a.size, data.len()));
                }
                let mut buf = vec![0u8; data.len() + 10];
                let n = fs.read(ino, 0, &mut buf).map_err(|e| format!("read {ino}: {e}"))?;
                if buf[..n] != data[..] {
                    return Err(format!("inode {ino}: content differs"));
                }
            }
            Kind::Symlink(target) => {
                if fs.readlink(ino).map_err(|e| e.to_string())? != *target {
                    return Err(format!("symlink {ino} differs"));
                }
            }
            Kind::Dir(entries) => {
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

fn same<T: std::fmt::Debug>(got: Result<T, Error>, want: Result<(), Error>, what: &str) -> Result<Option<T>, String> {
    match (got, want) {
        (Ok(v), Ok(())) => Ok(Some(v)),
        (Err(g), Err(w)) if g == w => Ok(None),
        (g, w) => Err(format!("{what}: fs {g:?} vs model {w:?}")),
    }
}

fn run(ops: &[Op]) -> Result<(), String> {
    let opts = MkfsOptions { segment_blocks: 16, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(8192), &opts).map_err(|e| e.to_string())?;
    let mount = MountOptions { dirty_bytes_max: 256 << 10, ..Default::default() };
    let mut fs = Filesystem::mount(dev, &mount, t(0)).map_err(|e| e.to_string())?;
    let mut m = Model::default();
    m.inodes.insert(
        1,
        MInode {
            kind: Kind::Dir(BTreeMap::new()),
            nlink: 2,
            perm: 0o755,
            parent: 1,
            xattrs: BTreeMap::new(),
            durable: None,
        },
    );
    for (step, op) in ops.iter().enumerate() {
        let now = t(step + 1);
        let cps_before = fs.stats().checkpoints;
        match *op {
            Op::Create(d, n) | Op::Mkdir(d, n) | Op::Symlink(d, n) => {
                let d = pick(&m.dirs(), d).unwrap();
                let name = NAMES[n as usize % NAMES.len()];
                let want = if m.entries(d).contains_key(name) { Err(Error::Exists) } else { Ok(()) };
                let got = match op {
                    Op::Create(..) => fs.create(d, name, 0o644, C, now),
                    Op::Mkdir(..) => fs.mkdir(d, name, 0o755, C, now),
                    _ => fs.symlink(d, name, b"target/path", C, now),
                };
                if let Some(a) = same(got, want, "create")? {
                    let (kind, perm, nlink) = match op {
                        Op::Create(..) => (Kind::File(vec![]), 0o644, 1),
                        Op::Mkdir(..) => (Kind::Dir(BTreeMap::new()), 0o755, 2),
                        _ => (Kind::Symlink(b"target/path".to_vec()), 0o777, 1),
                    };
                    // A setgid directory passes its bit on to new subdirectories.
                    let setgid = m.inodes[&d].perm & 0o2000;
                    let perm = if matches!(kind, Kind::Dir(_)) { perm | setgid } else { perm };
                    if matches!(kind, Kind::Dir(_)) {
                        m.inodes.get_mut(&d).unwrap().nlink += 1;
                    }
                    m.inodes
                        .insert(a.ino, MInode { kind, nlink, perm, parent: d, xattrs: BTreeMap::new(), durable: None });
                    m.entries_mut(d).insert(name.to_vec(), a.ino);
                }
            }
            Op::Write(f, off, len, seed) => {
                let Some(f) = pick(&m.files(), f) else { continue };
                let off = off as u64 % 20_000;
                let len = len as usize % 9_000;
                let data: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(seed | 1).wrapping_add(seed)).collect();
                same(fs.write(f, off, &data, now), Ok(()), "write")?;
                if let Kind::File(v) = &mut m.inodes.get_mut(&f).unwrap().kind {
                    if len > 0 {
                        let end = off as usize + len;
                        if v.len() < end {
                            v.resize(end, 0);
                        }
                        v[off as usize..end].copy_from_slice(&data);
                    }
                }
            }
            Op::Truncate(f, size) => {
                let Some(f) = pick(&m.files(), f) else { continue };
                let size = size as u64 % 30_000;
                let set = SetAttr { size: Some(size), ..Default::default() };
                same(fs.setattr(f, &set, now), Ok(()), "truncate")?;
                if let Kind::File(v) = &mut m.inodes.get_mut(&f).unwrap().kind {
                    v.resize(size as usize, 0);
                }
            }
            Op::Punch(f, off, len, mode) => {
                let Some(f) = pick(&m.files(), f) else { continue };
                let (off, len) = (off as u64 % 30_000, len as u64 % 20_000);
                let got = match mode {
                    0 => fs.punch_hole(f, off, len, now),
                    _ => fs.zero_range(f, off, len, mode == 1, now),
                };
                same(got, Ok(()), "punch/zero range")?;
                if let Kind::File(v) = &mut m.inodes.get_mut(&f).unwrap().kind {
                    let end = (off + len) as usize;
                    if mode == 2 && v.len() < end {
                        v.resize(end, 0);
                    }
                    let end = end.min(v.len());
                    if (off as usize) < end {
                        v[off as usize..end].fill(0);
                    }
                }
            }
            Op::Unlink(d, n) | Op::Rmdir(d, n) => {
                let d = pick(&m.dirs(), d).unwrap();
                let name = NAMES[n as usize % NAMES.len()];
                let rmdir = matches!(op, Op::Rmdir(..));
                let child = m.entries(d).get(name).copied();
                let want = match child {
                    None => Err(Error::NotFound),
                    Some(c) if !rmdir && m.is_dir(c) => Err(Error::IsDir),
                    Some(c) if rmdir && !m.is_dir(c) => Err(Error::NotDir),
                    Some(c) if rmdir && !m.entries(c).is_empty() => Err(Error::NotEmpty),
                    _ => Ok(()),
                };
                let got = if rmdir { fs.rmdir(d, name, now) } else { fs.unlink(d, name, now) };
                if same(got, want, "unlink/rmdir")?.is_some() {
                    let c = child.unwrap();
                    m.entries_mut(d).remove(name);
                    if rmdir {
                        m.inodes.get_mut(&d).unwrap().nlink -= 1;
                    }
                    m.drop_link(c);
                }
            }
            Op::Rename(d1, n1, d2, n2, fl) => {
                let dirs = m.dirs();
                let (d1, d2) = (pick(&dirs, d1).unwrap(), pick(&dirs, d2).unwrap());
                let (n1, n2) = (NAMES[n1 as usize % NAMES.len()], NAMES[n2 as usize % NAMES.len()]);
                let flags = [RenameFlags::empty(), RenameFlags::NOREPLACE, RenameFlags::EXCHANGE][fl as usize];
                let src = m.entries(d1).get(n1).copied();
                let dst = m.entries(d2).get(n2).copied();
                let want = match (src, dst) {
                    (None, _) => Err(Error::NotFound),
                    (Some(s), _) if m.is_dir(s) && m.within(d2, s) => {
                        Err(Error::Invalid("cannot move a directory into itself"))
                    }
                    (Some(_), None) if flags == RenameFlags::EXCHANGE => Err(Error::NotFound),
                    (Some(_), Some(t)) if flags == RenameFlags::EXCHANGE && m.is_dir(t) && m.within(d1, t) => {
                        Err(Error::Invalid("cannot move a directory into itself"))
                    }
                    (Some(_), Some(_)) if flags == RenameFlags::EXCHANGE => Ok(()),
                    (Some(_), Some(_)) if flags == RenameFlags::NOREPLACE => Err(Error::Exists),
                    (Some(s), Some(t)) if s == t => Ok(()),
                    (Some(s), Some(t)) if m.is_dir(s) && !m.is_dir(t) => Err(Error::NotDir),
                    (Some(s), Some(t)) if !m.is_dir(s) && m.is_dir(t) => Err(Error::IsDir),
                    (Some(_), Some(t)) if m.is_dir(t) && !m.entries(t).is_empty() => Err(Error::NotEmpty),
                    _ => Ok(()),
                };
                if same(fs.rename(d1, n1, d2, n2, flags, now), want, "rename")?.is_some() {
                    let s = src.unwrap();
                    if flags == RenameFlags::EXCHANGE {
                        let t = dst.unwrap();
                        m.entries_mut(d1).insert(n1.to_vec(), t);
                        m.entries_mut(d2).insert(n2.to_vec(), s);
                        if d1 != d2 {
                            if m.is_dir(s) {
                                m.inodes.get_mut(&d1).unwrap().nlink -= 1;
                                m.inodes.get_mut(&d2).unwrap().nlink += 1;
                            }
                            if m.is_dir(t) {
                                m.inodes.get_mut(&d2).unwrap().nlink -= 1;
                                m.inodes.get_mut(&d1).unwrap().nlink += 1;
                            }
                        }
                        m.inodes.get_mut(&s).unwrap().parent = d2;
                        m.inodes.get_mut(&t).unwrap().parent = d1;
                    } else if dst != Some(s) {
                        m.entries_mut(d1).remove(n1);
                        if let Some(t) = dst {
                            if m.is_dir(t) {
                                m.inodes.get_mut(&d2).unwrap().nlink -= 1;
                            }
                            m.drop_link(t);
                        }
                        m.entries_mut(d2).insert(n2.to_vec(), s);
                        if m.is_dir(s) && d1 != d2 {
                            m.inodes.get_mut(&d1).unwrap().nlink -= 1;
                            m.inodes.get_mut(&d2).unwrap().nlink += 1;
                        }
                        m.inodes.get_mut(&s).unwrap().parent = d2;
                    }
                }
            }
            Op::Link(f, d, n) => {
                let Some(f) = pick(&m.files(), f) else { continue };
                let d = pick(&m.dirs(), d).unwrap();
                let name = NAMES[n as usize % NAMES.len()];
                let want = if m.entries(d).contains_key(name) { Err(Error::Exists) } else { Ok(()) };
                if same(fs.link(f, d, name, now), want, "link")?.is_some() {
                    m.entries_mut(d).insert(name.to_vec(), f);
                    m.inodes.get_mut(&f).unwrap().nlink += 1;
                }
            }
            Op::Chmod(f, mode) => {
                let f = pick(&m.all(), f).unwrap();
                let set = SetAttr { mode: Some(mode as u32 & 0o7777), ..Default::default() };
                same(fs.setattr(f, &set, now), Ok(()), "chmod")?;
                m.inodes.get_mut(&f).unwrap().perm = mode & 0o7777;
            }
            Op::SetXattr(f, n, v) => {
                let f = pick(&m.all(), f).unwrap();
                let name = [b"user.one".as_slice(), b"user.two", b"trusted.three"][n as usize % 3];
                let value = vec![v; v as usize * 3];
                same(fs.setxattr(f, name, &value, XattrSetMode::Any, now), Ok(()), "setxattr")?;
                m.inodes.get_mut(&f).unwrap().xattrs.insert(name.to_vec(), value);
            }
            Op::RemoveXattr(f, n) => {
                let f = pick(&m.all(), f).unwrap();
                let name = [b"user.one".as_slice(), b"user.two", b"trusted.three"][n as usize % 3];
                let want = if m.inodes[&f].xattrs.contains_key(name) { Ok(()) } else { Err(Error::NoData) };
                if same(fs.removexattr(f, name, now), want, "removexattr")?.is_some() {
                    m.inodes.get_mut(&f).unwrap().xattrs.remove(name);
                }
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
                    if let Kind::File(v) = &mut m.inodes.get_mut(&f).unwrap().kind {
                        if len > 0 {
                            let end = off as usize + len;
                            if v.len() < end {
                                v.resize(end, 0);
                            }
                            v[off as usize..end].copy_from_slice(&data);
                        }
                    }
                } else {
                    same(fs.abort_atomic_write(f), Ok(()), "abort")?;
                }
            }
            Op::Remount => {
                let dev = fs.unmount(now).map_err(|e| format!("unmount: {e}"))?;
                fs = Filesystem::mount(dev, &mount, now).map_err(|e| format!("mount: {e}"))?;
            }
        }
        // What the op changed is no longer durable...
        match *op {
            Op::Write(..) | Op::Truncate(..) | Op::Punch(..) | Op::Atomic(..) => {
                for mi in m.inodes.values_mut() {
                    if let Kind::File(c) = &mi.kind {
                        if mi.durable.as_ref().is_some_and(|d| d != c) {
                            mi.durable = None;
                        }
                    }
                }
            }
            _ => {}
        }
        // ...unless a checkpoint (sync, remount, fsync fallback, memory bound) made
        // everything durable, or an fsync this file.
        let all = fs.stats().checkpoints != cps_before || matches!(op, Op::Remount);
        let fsynced = match *op {
            Op::Fsync(f, _) => pick(&m.all(), f),
            Op::Atomic(f, _, _, _, true) => pick(&m.files(), f),
            _ => None,
        };
        for (&ino, mi) in m.inodes.iter_mut() {
            if let Kind::File(c) = &mi.kind {
                if all || fsynced == Some(ino) {
                    mi.durable = Some(c.clone());
                }
            }
        }
        compare(&mut fs, &m).map_err(|e| format!("after step {step} {op:?}: {e}"))?;
    }
    // Power loss now (a copy of the device: every write reached it): recovery must bring
    // back every file's durable content, and the image must be clean.
    let crashed = fs.device().clone();
    let mut cfs = Filesystem::mount(crashed, &mount, t(9_000)).map_err(|e| format!("mount after crash: {e}"))?;
    for (&ino, mi) in &m.inodes {
        if let Some(want) = &mi.durable {
            let a = match cfs.getattr(ino) {
                Ok(a) => a,
                Err(e) => {
                    let mut names = Vec::new();
                    let _ = cfs.readdir(1, 0, &mut |d| {
                        names.push((String::from_utf8_lossy(&d.name).into_owned(), d.ino));
                        true
                    });
                    return Err(format!(
                        "after crash, durable inode {ino}: {e}; stats {:?}; root {names:?}",
                        cfs.stats()
                    ));
                }
            };
            let mut buf = vec![0u8; a.size as usize];
            cfs.read(ino, 0, &mut buf).map_err(|e| e.to_string())?;
            if buf != *want {
                return Err(format!("after crash, inode {ino}: {} bytes vs durable {} bytes", buf.len(), want.len()));
            }
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]
    #[test]
    fn model_matches(ops in proptest::collection::vec(op(), 1..40)) {
        if let Err(e) = run(&ops) {
            prop_assert!(false, "{}", e);
        }
    }
}
