//! The oracle's model of the filesystem, and the canonical trees compared with it.
//!
//! [`Model`] is a small in-memory POSIX namespace (BTreeMaps all the way down) that the
//! workload is applied to alongside the guest; it predicts each operation's success and
//! the tree after it. [`Tree`] is the canonical form both sides are reduced to: path →
//! entry (kind, permissions, link count, size, content, xattrs, and which paths share an
//! inode), independent of inode numbers, timestamps and directory sizes, which the model
//! cannot predict. [`Tree::parse_dump`] reads the guest's serialization (ABI.md).

use crate::rng::{block_hash, Hasher64};
use crate::workload::{pattern_bytes, Op, RENAME_EXCHANGE, RENAME_NOREPLACE};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const ENOENT: i64 = 2;
pub const EPERM: i64 = 1;
pub const EEXIST: i64 = 17;
pub const ENOTDIR: i64 = 20;
pub const EISDIR: i64 = 21;
pub const EINVAL: i64 = 22;
pub const ENOTEMPTY: i64 = 39;
pub const ENODATA: i64 = 61;
pub const EBUSY: i64 = 16;
pub const EBADF: i64 = 9;
pub const ENOSPC: i64 = 28;

pub const KIND_FILE: u8 = 1;
pub const KIND_DIR: u8 = 2;
pub const KIND_SYMLINK: u8 = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Body {
    /// Shared with the trees taken of the model (copied on the next write), and the
    /// content's hash once computed.
    File(Arc<Vec<u8>>, HashCache),
    Dir(BTreeMap<String, u64>),
    Symlink(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inode {
    body: Body,
    perm: u16,
    xattrs: BTreeMap<String, String>,
}

/// A lazily computed [`content_hash`] (equal to any other: a cache, not state).
#[derive(Debug, Clone, Default)]
struct HashCache(std::cell::Cell<Option<u64>>);

impl PartialEq for HashCache {
    fn eq(&self, _: &HashCache) -> bool {
        true
    }
}
impl Eq for HashCache {}

impl HashCache {
    fn get(&self, content: &[u8]) -> u64 {
        match self.0.get() {
            Some(h) => h,
            None => {
                let h = content_hash(content);
                self.0.set(Some(h));
                h
            }
        }
    }
}

/// The model namespace. Inode 1 is the root.
#[derive(Debug, Clone)]
pub struct Model {
    inodes: BTreeMap<u64, Inode>,
    next: u64,
    /// Open atomic-write sessions: inode -> its content when the session started (what
    /// the disk may show until commit).
    sessions: BTreeMap<u64, Arc<Vec<u8>>>,
    /// Open handles (`open PATH`) by the path string they were opened with.
    handles: BTreeMap<String, u32>,
    /// Blocks (4 KiB file indexes) that fallocate (mode 0, KEEP_SIZE, ZERO_RANGE) reserved
    /// and no write has filled since, by inode: a write entirely inside them must never
    /// get ENOSPC (posix_fallocate's promise; see `write_is_reserved`). Inode numbers are
    /// never reused, so entries of removed inodes are dead weight, not wrong.
    reserved: BTreeMap<u64, std::collections::BTreeSet<u64>>,
}

/// What the per-file oracle needs of one model state: every regular file's names and
/// durable content (hash), and the inode an fsync-class operation targeted.
#[derive(Debug, Clone, Default)]
pub struct Snap {
    /// Path of every regular file name -> model inode.
    pub names: BTreeMap<String, u64>,
    /// Model inode -> hash of its durable content (pre-session content while an atomic
    /// session is open).
    pub content: BTreeMap<u64, u64>,
    /// Inodes in an open atomic session.
    pub in_session: std::collections::BTreeSet<u64>,
}

/// The 4 KiB file blocks `first..end` that bytes `offset..offset+len` touch.
fn block_span(offset: u64, len: u64) -> (u64, u64) {
    (offset / 4096, offset.saturating_add(len).div_ceil(4096))
}

/// Hash of file content, as compared by the per-file oracle and folded into tree hashes
/// (whole 4 KiB pieces word by word, the tail byte by byte).
pub fn content_hash(c: &[u8]) -> u64 {
    let mut h = Hasher64::new();
    h.u64(c.len() as u64);
    for piece in c.chunks(4096) {
        if piece.len() == 4096 {
            h.u64(block_hash(piece));
        } else {
            h.bytes(piece);
        }
    }
    h.finish()
}

impl Default for Model {
    fn default() -> Self {
        Model::new()
    }
}

fn split(path: &str) -> Vec<&str> {
    path.split('/').filter(|c| !c.is_empty()).collect()
}

impl Model {
    pub fn new() -> Model {
        let mut inodes = BTreeMap::new();
        inodes.insert(1, Inode { body: Body::Dir(BTreeMap::new()), perm: 0o755, xattrs: BTreeMap::new() });
        Model { inodes, next: 2, sessions: BTreeMap::new(), handles: BTreeMap::new(), reserved: BTreeMap::new() }
    }

    fn resolve(&self, path: &str) -> Result<u64, i64> {
        let mut ino = 1;
        for c in split(path) {
            match &self.inodes[&ino].body {
                Body::Dir(e) => ino = *e.get(c).ok_or(ENOENT)?,
                _ => return Err(ENOTDIR),
            }
        }
        Ok(ino)
    }

    /// Parent directory inode and final name.
    fn parent<'p>(&self, path: &'p str) -> Result<(u64, &'p str), i64> {
        let comps = split(path);
        let (name, dirs) = comps.split_last().ok_or(EINVAL)?;
        let mut ino = 1;
        for c in dirs {
            match &self.inodes[&ino].body {
                Body::Dir(e) => ino = *e.get(*c).ok_or(ENOENT)?,
                _ => return Err(ENOTDIR),
            }
        }
        match &self.inodes[&ino].body {
            Body::Dir(_) => Ok((ino, name)),
            _ => Err(ENOTDIR),
        }
    }

    fn entries(&mut self, dir: u64) -> &mut BTreeMap<String, u64> {
        match &mut self.inodes.get_mut(&dir).unwrap().body {
            Body::Dir(e) => e,
            _ => unreachable!("parent() checked"),
        }
    }

    fn lookup(&self, dir: u64, name: &str) -> Option<u64> {
        match &self.inodes[&dir].body {
            Body::Dir(e) => e.get(name).copied(),
            _ => None,
        }
    }

    fn is_dir(&self, ino: u64) -> bool {
        matches!(self.inodes[&ino].body, Body::Dir(_))
    }

    fn new_inode(&mut self, body: Body, perm: u16) -> u64 {
        let ino = self.next;
        self.next += 1;
        self.inodes.insert(ino, Inode { body, perm, xattrs: BTreeMap::new() });
        ino
    }

    fn add(&mut self, path: &str, body: Body, perm: u16) -> Result<(), i64> {
        let (dir, name) = self.parent(path)?;
        if self.lookup(dir, name).is_some() {
            return Err(EEXIST);
        }
        let ino = self.new_inode(body, perm);
        self.entries(dir).insert(name.to_string(), ino);
        Ok(())
    }

    /// Drops inodes no longer reachable (after unlink, rmdir or a replacing rename).
    fn collect(&mut self) {
        let mut live = std::collections::BTreeSet::new();
        let mut stack = vec![1u64];
        while let Some(i) = stack.pop() {
            if live.insert(i) {
                if let Body::Dir(e) = &self.inodes[&i].body {
                    stack.extend(e.values().copied());
                }
            }
        }
        self.inodes.retain(|i, _| live.contains(i));
        self.sessions.retain(|i, _| live.contains(i));
    }

    /// The model inode a path names (for the per-file oracle).
    pub fn ino_of(&self, path: &str) -> Option<u64> {
        self.resolve(path).ok()
    }

    /// The per-file oracle's view of this state.
    pub fn snap(&self) -> Snap {
        let mut s = Snap::default();
        let mut stack = vec![("".to_string(), 1u64)];
        while let Some((path, ino)) = stack.pop() {
            if let Body::Dir(e) = &self.inodes[&ino].body {
                for (n, c) in e {
                    let p = format!("{path}/{n}");
                    match &self.inodes[c].body {
                        Body::Dir(_) => stack.push((p, *c)),
                        Body::File(d, h) => {
                            s.names.insert(p, *c);
                            let h = match self.sessions.get(c) {
                                Some(old) => content_hash(old),
                                None => h.get(d),
                            };
                            s.content.insert(*c, h);
                        }
                        Body::Symlink(_) => {}
                    }
                }
            }
        }
        s.in_session = self.sessions.keys().copied().collect();
        s
    }

    fn file_mut(&mut self, path: &str) -> Result<&mut Vec<u8>, i64> {
        let ino = self.resolve(path)?;
        match &mut self.inodes.get_mut(&ino).unwrap().body {
            Body::File(d, h) => {
                h.0.set(None);
                Ok(Arc::make_mut(d))
            }
            Body::Dir(_) => Err(EISDIR),
            Body::Symlink(_) => Err(EINVAL),
        }
    }

    /// Applies one operation; `Err(errno)` leaves the model unchanged (a `repeat` stops at
    /// its first failing repetition, keeping the earlier ones).
    /// Whether `op` is a plain write entirely inside blocks fallocate reserved (it must
    /// then not fail with ENOSPC).
    pub fn write_is_reserved(&self, op: &Op) -> bool {
        let Op::Write { path, offset, len, .. } = op else { return false };
        let Ok(ino) = self.resolve(path) else { return false };
        if *len == 0 || self.sessions.contains_key(&ino) {
            return false;
        }
        let Some(r) = self.reserved.get(&ino) else { return false };
        let (first, end) = block_span(*offset, *len as u64);
        (first..end).all(|b| r.contains(&b))
    }

    /// Releases the reservations of `path`'s blocks `from..to`.
    fn unreserve(&mut self, path: &str, from: u64, to: u64) {
        if let Ok(ino) = self.resolve(path) {
            if let Some(r) = self.reserved.get_mut(&ino) {
                r.retain(|b| *b < from || *b >= to);
            }
        }
    }

    pub fn apply(&mut self, op: &Op) -> Result<(), i64> {
        match op {
            Op::Repeat(..) => op.expand().iter().try_for_each(|o| self.apply(o)),
            Op::Seq(v) => v.iter().try_for_each(|o| self.apply(o)),
            // The explorer runs a fill as its writes (each applied on its own); as one
            // operation it is a write of nothing.
            Op::Fill { path, .. } => match &self.inodes[&self.resolve(path)?].body {
                Body::File(..) => Ok(()),
                Body::Dir(_) => Err(EISDIR),
                Body::Symlink(_) => Err(EINVAL),
            },
            Op::Shrink(p, n) => {
                let size = self.file_size(p).ok_or(EINVAL)?;
                self.apply(&Op::Truncate(p.clone(), size.saturating_sub(*n)))
            }
            Op::Open(p) => {
                self.resolve(p)?;
                *self.handles.entry(p.clone()).or_default() += 1;
                Ok(())
            }
            Op::Close(p) => match self.handles.get_mut(p) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    Ok(())
                }
                Some(_) => {
                    self.handles.remove(p);
                    Ok(())
                }
                None => Err(EBADF),
            },
            Op::Create(p) => self.add(p, Body::File(Arc::default(), HashCache::default()), 0o644),
            Op::Mkdir(p) => self.add(p, Body::Dir(BTreeMap::new()), 0o755),
            Op::Symlink(p, t) => self.add(p, Body::Symlink(t.clone()), 0o777),
            Op::Write { path, offset, len, pattern } => {
                if let Ok(ino) = self.resolve(path) {
                    if let Some(r) = self.reserved.get_mut(&ino) {
                        // The reservation of the blocks written is spent.
                        let (first, end) = block_span(*offset, *len as u64);
                        r.retain(|b| *b < first || *b >= end);
                    }
                }
                let f = self.file_mut(path)?;
                let end = (*offset + *len as u64) as usize;
                if f.len() < end {
                    f.resize(end, 0);
                }
                f[*offset as usize..end].copy_from_slice(&pattern_bytes(*pattern, *offset, *len));
                Ok(())
            }
            Op::Truncate(p, size) => {
                if self.resolve(p).is_ok_and(|i| self.sessions.contains_key(&i)) {
                    return Err(EINVAL);
                }
                let f = self.file_mut(p)?;
                let shrinks = (*size as usize) < f.len();
                f.resize(*size as usize, 0);
                if shrinks {
                    // Truncation releases the reservations past the new end.
                    let keep = size.div_ceil(4096);
                    self.unreserve(p, keep, u64::MAX);
                }
                Ok(())
            }
            Op::Punch(p, off, len, mode) => {
                if self.resolve(p).is_ok_and(|i| self.sessions.contains_key(&i)) {
                    return Err(EINVAL);
                }
                if *mode >= 3 && *len == 0 {
                    return Err(EINVAL);
                }
                let f = self.file_mut(p)?;
                let end = off.saturating_add(*len) as usize;
                if (*mode == 2 || *mode == 3) && f.len() < end {
                    f.resize(end, 0);
                }
                if *mode <= 2 {
                    let end = end.min(f.len());
                    if (*off as usize) < end {
                        f[*off as usize..end].fill(0);
                    }
                }
                if *mode == 0 {
                    // A punch releases the reservations of the whole blocks it frees.
                    self.unreserve(p, off.div_ceil(4096), (*off + *len) / 4096);
                } else {
                    let ino = self.resolve(p)?;
                    let (first, end) = block_span(*off, *len);
                    self.reserved.entry(ino).or_default().extend(first..end);
                }
                Ok(())
            }
            Op::Chmod(p, mode) => {
                let ino = self.resolve(p)?;
                self.inodes.get_mut(&ino).unwrap().perm = (*mode & 0o7777) as u16;
                Ok(())
            }
            Op::Link(from, to) => {
                let ino = self.resolve(from)?;
                if self.is_dir(ino) {
                    return Err(EPERM);
                }
                let (dir, name) = self.parent(to)?;
                if self.lookup(dir, name).is_some() {
                    return Err(EEXIST);
                }
                self.entries(dir).insert(name.to_string(), ino);
                Ok(())
            }
            Op::Unlink(p) => {
                let (dir, name) = self.parent(p)?;
                let ino = self.lookup(dir, name).ok_or(ENOENT)?;
                if self.is_dir(ino) {
                    return Err(EISDIR);
                }
                self.entries(dir).remove(name);
                self.collect();
                Ok(())
            }
            Op::Rmdir(p) => {
                if split(p).is_empty() {
                    return Err(EBUSY);
                }
                let (dir, name) = self.parent(p)?;
                let ino = self.lookup(dir, name).ok_or(ENOENT)?;
                match &self.inodes[&ino].body {
                    Body::Dir(e) if !e.is_empty() => return Err(ENOTEMPTY),
                    Body::Dir(_) => {}
                    _ => return Err(ENOTDIR),
                }
                self.entries(dir).remove(name);
                self.collect();
                Ok(())
            }
            Op::Rename(from, to, flags) => self.rename(from, to, *flags),
            Op::SetXattr(p, n, v) => {
                let ino = self.resolve(p)?;
                self.inodes.get_mut(&ino).unwrap().xattrs.insert(n.clone(), v.clone());
                Ok(())
            }
            Op::RemoveXattr(p, n) => {
                let ino = self.resolve(p)?;
                self.inodes.get_mut(&ino).unwrap().xattrs.remove(n).map(|_| ()).ok_or(ENODATA)
            }
            Op::Sync => Ok(()),
            Op::Fsync(p) | Op::Fdatasync(p) => self.resolve(p).map(|_| ()),
            Op::AtomicStart(p) => {
                let ino = self.resolve(p)?;
                // Writes through a session are not checked against reservations.
                self.reserved.remove(&ino);
                let Body::File(d, _) = &self.inodes[&ino].body else { return Err(EINVAL) };
                let d = d.clone();
                self.sessions.entry(ino).or_insert(d);
                Ok(())
            }
            Op::AtomicCommit(p) => {
                let ino = self.resolve(p)?;
                self.sessions.remove(&ino).map(|_| ()).ok_or(EINVAL)
            }
            Op::AtomicAbort(p) => {
                let ino = self.resolve(p)?;
                if let Some(old) = self.sessions.remove(&ino) {
                    if let Body::File(d, h) = &mut self.inodes.get_mut(&ino).unwrap().body {
                        *d = old;
                        h.0.set(None);
                    }
                }
                Ok(())
            }
        }
    }

    fn rename(&mut self, from: &str, to: &str, flags: u32) -> Result<(), i64> {
        if flags & !(RENAME_NOREPLACE | RENAME_EXCHANGE) != 0
            || flags == RENAME_NOREPLACE | RENAME_EXCHANGE
            || split(from).is_empty()
            || split(to).is_empty()
        {
            return Err(EINVAL);
        }
        let (sdir, sname) = self.parent(from)?;
        let src = self.lookup(sdir, sname).ok_or(ENOENT)?;
        let (ddir, dname) = self.parent(to)?;
        let dst = self.lookup(ddir, dname);
        let (fc, tc) = (split(from), split(to));
        // A directory cannot move below itself (nor, for an exchange, the target below it).
        if self.is_dir(src) && tc.len() > fc.len() && tc[..fc.len()] == fc[..] {
            return Err(EINVAL);
        }
        if flags & RENAME_EXCHANGE != 0 {
            let dst = dst.ok_or(ENOENT)?;
            if self.is_dir(dst) && fc.len() > tc.len() && fc[..tc.len()] == tc[..] {
                return Err(EINVAL);
            }
            self.entries(sdir).insert(sname.to_string(), dst);
            self.entries(ddir).insert(dname.to_string(), src);
            return Ok(());
        }
        if let Some(dst) = dst {
            if flags & RENAME_NOREPLACE != 0 {
                return Err(EEXIST);
            }
            if dst == src {
                // Two names of one inode (or the same name): POSIX says do nothing.
                return Ok(());
            }
            match (self.is_dir(src), self.is_dir(dst)) {
                (true, false) => return Err(ENOTDIR),
                (false, true) => return Err(EISDIR),
                (true, true) => {
                    if let Body::Dir(e) = &self.inodes[&dst].body {
                        if !e.is_empty() {
                            return Err(ENOTEMPTY);
                        }
                    }
                }
                (false, false) => {}
            }
        }
        self.entries(sdir).remove(sname);
        self.entries(ddir).insert(dname.to_string(), src);
        self.collect();
        Ok(())
    }

    /// The size of the regular file at `path` (for `fill`'s appends).
    pub fn file_size(&self, path: &str) -> Option<u64> {
        match &self.inodes[&self.resolve(path).ok()?].body {
            Body::File(d, _) => Some(d.len() as u64),
            _ => None,
        }
    }

    /// Whether a handle opened with this path string is open.
    pub fn has_handle(&self, path: &str) -> bool {
        self.handles.contains_key(path)
    }

    /// Existing paths, for the workload generator: (files, directories).
    pub fn paths(&self) -> (Vec<String>, Vec<String>) {
        let mut files = Vec::new();
        let mut dirs = vec!["/".to_string()];
        let mut stack = vec![("".to_string(), 1u64)];
        while let Some((path, ino)) = stack.pop() {
            if let Body::Dir(e) = &self.inodes[&ino].body {
                for (n, c) in e {
                    let p = format!("{path}/{n}");
                    if self.is_dir(*c) {
                        dirs.push(p.clone());
                        stack.push((p, *c));
                    } else {
                        files.push(p);
                    }
                }
            }
        }
        files.sort();
        dirs.sort();
        (files, dirs)
    }

    /// The canonical tree of the model as a checkpoint would persist it: files in an open
    /// atomic session show their content from before the session.
    pub fn durable_tree(&self) -> Tree {
        if self.sessions.is_empty() {
            return self.tree();
        }
        let mut m = self.clone();
        for (ino, old) in std::mem::take(&mut m.sessions) {
            if let Body::File(d, h) = &mut m.inodes.get_mut(&ino).unwrap().body {
                *d = old;
                h.0.set(None);
            }
        }
        m.tree()
    }

    /// The canonical tree of the model (as the live filesystem shows it).
    pub fn tree(&self) -> Tree {
        let mut raw = Vec::new();
        let mut shared: BTreeMap<u64, Arc<Vec<u8>>> = BTreeMap::new();
        let mut stack = vec![("/".to_string(), 1u64)];
        while let Some((path, ino)) = stack.pop() {
            let node = &self.inodes[&ino];
            let (kind, size, content, nlink_dir, chash) = match &node.body {
                Body::File(d, h) => (KIND_FILE, d.len() as u64, d.clone(), None, Some(h.get(d))),
                Body::Symlink(t) => (
                    KIND_SYMLINK,
                    t.len() as u64,
                    shared.entry(ino).or_insert_with(|| Arc::new(t.as_bytes().to_vec())).clone(),
                    None,
                    None,
                ),
                Body::Dir(e) => {
                    let subdirs = e.values().filter(|c| self.is_dir(**c)).count() as u32;
                    for (n, c) in e {
                        let p = if path == "/" { format!("/{n}") } else { format!("{path}/{n}") };
                        stack.push((p, *c));
                    }
                    (KIND_DIR, 0, Arc::default(), Some(2 + subdirs), None)
                }
            };
            let xattrs = node.xattrs.iter().map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec())).collect();
            raw.push(RawEntry {
                path,
                ino: ino as u32,
                kind,
                perm: node.perm,
                nlink: nlink_dir.unwrap_or(0),
                size,
                content,
                chash,
                xattrs,
            });
        }
        // File link counts are the number of names.
        let mut names: BTreeMap<u32, u32> = BTreeMap::new();
        for r in &raw {
            *names.entry(r.ino).or_default() += 1;
        }
        for r in &mut raw {
            if r.kind != KIND_DIR {
                r.nlink = names[&r.ino];
            }
        }
        Tree::from_raw(raw)
    }
}

/// `content_len` / `xattr_count` of a dump record for an inode dumped before under another
/// name: same content / xattrs as its first record, no bytes follow (ABI.md).
pub const SAME_AS_FIRST: u32 = u32::MAX;

/// One entry as read from a dump (or the model), before canonicalization.
#[derive(Debug, Clone)]
pub struct RawEntry {
    pub path: String,
    pub ino: u32,
    pub kind: u8,
    pub perm: u16,
    pub nlink: u32,
    pub size: u64,
    /// Shared by the names of one inode (a file with thousands of links holds its
    /// content once).
    pub content: Arc<Vec<u8>>,
    /// [`content_hash`] of `content` when the producer knows it already.
    pub chash: Option<u64>,
    pub xattrs: Vec<(Vec<u8>, Vec<u8>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: u8,
    pub perm: u16,
    pub nlink: u32,
    pub size: u64,
    pub content: Arc<Vec<u8>>,
    /// [`content_hash`] of `content` (computed once per inode).
    pub chash: u64,
    pub xattrs: Vec<(Vec<u8>, Vec<u8>)>,
    /// The smallest path naming the same inode (hard links share it).
    pub link: String,
}

/// A canonical tree with a precomputed hash (for fast matching against model states).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    pub entries: BTreeMap<String, Entry>,
    pub hash: u64,
}

fn le32(b: &[u8], pos: &mut usize) -> Result<u32, String> {
    let v = b.get(*pos..*pos + 4).ok_or("dump truncated")?;
    *pos += 4;
    Ok(u32::from_le_bytes(v.try_into().unwrap()))
}

fn take<'a>(b: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8], String> {
    let v = b.get(*pos..*pos + n).ok_or("dump truncated")?;
    *pos += n;
    Ok(v)
}

impl Tree {
    pub fn from_raw(raw: Vec<RawEntry>) -> Tree {
        let mut first: BTreeMap<u32, String> = BTreeMap::new();
        for r in &raw {
            let e = first.entry(r.ino).or_insert_with(|| r.path.clone());
            if r.path < *e {
                *e = r.path.clone();
            }
        }
        let mut entries = BTreeMap::new();
        // Content hashes once per inode (and per distinct content buffer).
        let mut hashes: BTreeMap<u32, (Arc<Vec<u8>>, u64)> = BTreeMap::new();
        for r in raw {
            let link = first[&r.ino].clone();
            let size = if r.kind == KIND_DIR { 0 } else { r.size };
            let mut xattrs = r.xattrs;
            xattrs.sort();
            let chash = match hashes.get(&r.ino) {
                _ if r.chash.is_some() => r.chash.unwrap_or_default(),
                Some((c, h)) if Arc::ptr_eq(c, &r.content) || **c == *r.content => *h,
                _ => {
                    let h = content_hash(&r.content);
                    hashes.insert(r.ino, (r.content.clone(), h));
                    h
                }
            };
            entries.insert(
                r.path,
                Entry { kind: r.kind, perm: r.perm, nlink: r.nlink, size, content: r.content, chash, xattrs, link },
            );
        }
        let mut h = Hasher64::new();
        for (p, e) in &entries {
            h.bytes(p.as_bytes());
            h.u64(e.kind as u64);
            h.u64(e.perm as u64);
            h.u64(e.nlink as u64);
            h.u64(e.size);
            h.u64(e.chash);
            for (k, v) in &e.xattrs {
                h.bytes(k);
                h.u64(0xff);
                h.bytes(v);
                h.u64(0xfe);
            }
            h.bytes(e.link.as_bytes());
        }
        Tree { entries, hash: h.finish() }
    }

    /// Parses the guest's dump (ABI.md, "Tree dump").
    pub fn parse_dump(b: &[u8]) -> Result<Tree, String> {
        let mut pos = 0;
        let mut raw = Vec::new();
        type Shared = (Arc<Vec<u8>>, Vec<(Vec<u8>, Vec<u8>)>);
        let mut seen: BTreeMap<u32, Shared> = BTreeMap::new();
        while pos < b.len() {
            let n = le32(b, &mut pos)? as usize;
            let path = String::from_utf8_lossy(take(b, &mut pos, n)?).into_owned();
            let ino = le32(b, &mut pos)?;
            let kind = take(b, &mut pos, 1)?[0];
            let perm = u16::from_le_bytes(take(b, &mut pos, 2)?.try_into().unwrap());
            let _uid = le32(b, &mut pos)?;
            let _gid = le32(b, &mut pos)?;
            let nlink = le32(b, &mut pos)?;
            let size = u64::from_le_bytes(take(b, &mut pos, 8)?.try_into().unwrap());
            let n = le32(b, &mut pos)?;
            let content = if n == SAME_AS_FIRST {
                seen.get(&ino).ok_or_else(|| format!("{path}: content refers to an inode not dumped before"))?.0.clone()
            } else {
                Arc::new(take(b, &mut pos, n as usize)?.to_vec())
            };
            let nx = le32(b, &mut pos)?;
            let xattrs = if nx == SAME_AS_FIRST {
                seen.get(&ino).ok_or_else(|| format!("{path}: xattrs refer to an inode not dumped before"))?.1.clone()
            } else {
                let mut xattrs = Vec::new();
                for _ in 0..nx {
                    let n = le32(b, &mut pos)? as usize;
                    let k = take(b, &mut pos, n)?.to_vec();
                    let n = le32(b, &mut pos)? as usize;
                    let v = take(b, &mut pos, n)?.to_vec();
                    xattrs.push((k, v));
                }
                xattrs
            };
            seen.entry(ino).or_insert_with(|| (content.clone(), xattrs.clone()));
            raw.push(RawEntry { path, ino, kind, perm: perm & 0o7777, nlink, size, content, chash: None, xattrs });
        }
        Ok(Tree::from_raw(raw))
    }

    /// Human-readable differences from `other` (at most `max` lines).
    pub fn diff(&self, other: &Tree, max: usize) -> Vec<String> {
        let mut out = Vec::new();
        let keys: std::collections::BTreeSet<&String> = self.entries.keys().chain(other.entries.keys()).collect();
        for k in keys {
            match (self.entries.get(k), other.entries.get(k)) {
                (Some(_), None) => out.push(format!("{k}: present, expected absent")),
                (None, Some(_)) => out.push(format!("{k}: absent, expected present")),
                (Some(a), Some(b)) if a != b => {
                    let mut what = Vec::new();
                    if a.kind != b.kind {
                        what.push(format!("kind {} vs {}", a.kind, b.kind));
                    }
                    if a.perm != b.perm {
                        what.push(format!("perm {:o} vs {:o}", a.perm, b.perm));
                    }
                    if a.nlink != b.nlink {
                        what.push(format!("nlink {} vs {}", a.nlink, b.nlink));
                    }
                    if a.size != b.size {
                        what.push(format!("size {} vs {}", a.size, b.size));
                    }
                    if a.content != b.content {
                        let at = a.content.iter().zip(b.content.iter()).position(|(x, y)| x != y);
                        what.push(format!(
                            "content differs (len {} vs {}, first difference at {:?})",
                            a.content.len(),
                            b.content.len(),
                            at
                        ));
                    }
                    if a.xattrs != b.xattrs {
                        what.push("xattrs differ".into());
                    }
                    if a.link != b.link {
                        what.push(format!("same inode as {} vs {}", a.link, b.link));
                    }
                    out.push(format!("{k}: {} (found vs expected)", what.join(", ")));
                }
                _ => {}
            }
            if out.len() >= max {
                break;
            }
        }
        out
    }

    /// Number of differing entries (to pick the closest allowed state in reports).
    pub fn distance(&self, other: &Tree) -> usize {
        self.diff(other, usize::MAX).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(p: &str, off: u64, len: u32) -> Op {
        Op::Write { path: p.into(), offset: off, len, pattern: 3 }
    }

    #[test]
    fn posix_semantics() {
        let mut m = Model::new();
        assert_eq!(m.apply(&Op::Mkdir("/a".into())), Ok(()));
        assert_eq!(m.apply(&Op::Mkdir("/a".into())), Err(EEXIST));
        assert_eq!(m.apply(&Op::Create("/a/f".into())), Ok(()));
        assert_eq!(m.apply(&w("/a/f", 10, 5)), Ok(()));
        assert_eq!(m.apply(&Op::Link("/a/f".into(), "/g".into())), Ok(()));
        assert_eq!(m.apply(&Op::Rmdir("/a".into())), Err(ENOTEMPTY));
        assert_eq!(m.apply(&Op::Rename("/a".into(), "/a/b".into(), 0)), Err(EINVAL));
        assert_eq!(m.apply(&Op::Rename("/g".into(), "/a/f".into(), 0)), Ok(()), "same inode: no-op");
        let t = m.tree();
        assert_eq!(t.entries["/g"].nlink, 2);
        assert_eq!(t.entries["/g"].link, "/a/f");
        assert_eq!(t.entries["/a/f"].size, 15);
        assert_eq!(&t.entries["/a/f"].content[..10], &[0u8; 10]);
        assert_eq!(t.entries["/"].nlink, 3);
        assert_eq!(m.apply(&Op::Unlink("/a/f".into())), Ok(()));
        assert_eq!(m.tree().entries["/g"].nlink, 1);
        assert_eq!(m.apply(&Op::Rename("/g".into(), "/a".into(), 0)), Err(EISDIR));
        assert_eq!(m.apply(&Op::Rename("/g".into(), "/a".into(), RENAME_EXCHANGE)), Ok(()));
        assert_eq!(m.tree().entries["/g"].kind, KIND_DIR);
        assert_eq!(m.apply(&Op::RemoveXattr("/a".into(), "user.x".into())), Err(ENODATA));
    }

    #[test]
    fn dump_round_trip() {
        let mut m = Model::new();
        m.apply(&Op::Mkdir("/d".into())).unwrap();
        m.apply(&Op::Create("/d/f".into())).unwrap();
        m.apply(&w("/d/f", 0, 100)).unwrap();
        m.apply(&Op::SetXattr("/d/f".into(), "user.k".into(), "v".into())).unwrap();
        let t = m.tree();
        // Serialize as the guest would and parse back.
        let mut b = Vec::new();
        for (i, (p, e)) in t.entries.iter().enumerate() {
            b.extend_from_slice(&(p.len() as u32).to_le_bytes());
            b.extend_from_slice(p.as_bytes());
            b.extend_from_slice(&(i as u32 + 1).to_le_bytes());
            b.push(e.kind);
            b.extend_from_slice(&e.perm.to_le_bytes());
            b.extend_from_slice(&[0; 8]);
            b.extend_from_slice(&e.nlink.to_le_bytes());
            b.extend_from_slice(&(if e.kind == KIND_DIR { 4096 } else { e.size }).to_le_bytes());
            b.extend_from_slice(&(e.content.len() as u32).to_le_bytes());
            b.extend_from_slice(&e.content);
            b.extend_from_slice(&(e.xattrs.len() as u32).to_le_bytes());
            for (k, v) in &e.xattrs {
                b.extend_from_slice(&(k.len() as u32).to_le_bytes());
                b.extend_from_slice(k);
                b.extend_from_slice(&(v.len() as u32).to_le_bytes());
                b.extend_from_slice(v);
            }
        }
        let parsed = Tree::parse_dump(&b).unwrap();
        assert_eq!(parsed, t, "{:?}", parsed.diff(&t, 10));
    }
}
