//! The oracle's model of the filesystem, and the canonical trees compared with it.
//!
//! [`Model`] is the shared reference namespace of rollfs-testkit
//! ([`rollfs_testkit::model::Namespace`]: inodes in BTreeMaps and the POSIX rules of each
//! operation) wrapped with what only the explorer needs: path resolution and its errors
//! (the workload names paths, the guest answers with errnos), atomic-write sessions, open
//! handles, fallocate reservations, the per-file oracle's snapshots and canonical trees.
//! The workload is applied to it alongside the guest; it predicts each operation's
//! success and the tree after it. [`Tree`] is the canonical form both sides are reduced
//! to: path → entry (kind, permissions, link count, size, content, xattrs, and which
//! paths share an inode), independent of inode numbers, timestamps and directory sizes,
//! which the model cannot predict. [`Tree::parse_dump`] reads the guest's serialization
//! (ABI.md).

use crate::device::{BlockRef, BLOCK_SIZE};
use crate::rng::{block_hash, Hasher64};
use crate::workload::{with_pattern_bytes, Op, RENAME_EXCHANGE, RENAME_NOREPLACE};
use imbl::OrdMap;
use rollfs_core::{Error, Ino, RenameFlags};
use rollfs_testkit::model::{fallocate_bytes, Body, Namespace, NewKind, ROOT};
use std::borrow::Cow;
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

/// The errno of a namespace rule's error (as the guest reports it).
fn errno(e: &Error) -> i64 {
    e.errno() as i64
}

/// An entry name as a path component (names come from workload paths: always UTF-8).
fn name_str(n: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(n)
}

/// The model namespace. Inode 1 is the root.
#[derive(Debug, Clone)]
pub struct Model {
    ns: Namespace,
    /// The next inode number (the model's own: the guest's are not compared).
    next: Ino,
    /// Open atomic-write sessions: inode -> its content when the session started (what
    /// the disk may show until commit).
    sessions: BTreeMap<Ino, Arc<Vec<u8>>>,
    /// Open handles (`open PATH`) by the path string they were opened with.
    handles: BTreeMap<String, u32>,
    /// Blocks (4 KiB file indexes) that fallocate (mode 0, KEEP_SIZE) reserved
    /// and no write has filled since, by inode: a write entirely inside them must never
    /// get ENOSPC (posix_fallocate's promise; see `write_is_reserved`). Inode numbers are
    /// never reused, so entries of removed inodes are dead weight, not wrong.
    reserved: BTreeMap<Ino, std::collections::BTreeSet<u64>>,
    /// Paths the operations applied since the last [`Model::take_touched`] named
    /// (normalized: `/a/b`), for the incremental states of [`crate::states`].
    touched: std::collections::BTreeSet<String>,
    /// Each file's [`block_hash`]es of its whole 4 KiB blocks (`None`: not known), kept
    /// current by `apply` (a write forgets the blocks it changed; any other change of a
    /// file's bytes forgets the file), so that a file's [`content_hash`] after a write costs
    /// the changed blocks, not the file.
    block_hashes: std::collections::HashMap<Ino, Vec<Option<u64>>>,
    /// [`content_hash`] of each open session's saved content (the `Arc` held so that a
    /// cached entry is for exactly that buffer).
    session_hashes: std::collections::HashMap<Ino, (Arc<Vec<u8>>, u64)>,
}

/// What the per-file oracle needs of one model state: every regular file's names and
/// durable content (hash), and the inode an fsync-class operation targeted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snap {
    /// Path of every regular file name -> model inode.
    pub names: OrdMap<String, u64>,
    /// Model inode -> hash of its durable content (pre-session content while an atomic
    /// session is open).
    pub content: OrdMap<u64, u64>,
    /// Inodes in an open atomic session.
    pub in_session: std::collections::BTreeSet<u64>,
    /// Model inode -> how many of its blocks the model knows reserved (`Model::reserved`;
    /// absent: none). The core holds at least these; the oracle requires the fsync'd ones
    /// after a crash (invariant 2 for fallocate: a reservation is file state).
    pub reserved: OrdMap<u64, u64>,
}

/// The 4 KiB file blocks `first..end` that bytes `offset..offset+len` touch.
fn block_span(offset: u64, len: u64) -> (u64, u64) {
    (offset / 4096, offset.saturating_add(len).div_ceil(4096))
}

/// Hash of file content, as compared by the per-file oracle and folded into tree hashes
/// (whole 4 KiB pieces word by word, the tail byte by byte).
pub fn content_hash(c: &[u8]) -> u64 {
    let whole = c.len() / 4096 * 4096;
    content_hash_of(c.len(), c[..whole].chunks(4096).map(block_hash), &c[whole..])
}

/// [`content_hash`] of `len` bytes given the [`block_hash`]es of their whole 4 KiB blocks,
/// in order, and the bytes after them.
fn content_hash_of(len: usize, block_hashes: impl Iterator<Item = u64>, tail: &[u8]) -> u64 {
    let mut h = Hasher64::new();
    h.u64(len as u64);
    block_hashes.for_each(|b| h.u64(b));
    if !tail.is_empty() {
        h.bytes(tail);
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
        Model {
            ns: Namespace::new(),
            next: 2,
            sessions: BTreeMap::new(),
            handles: BTreeMap::new(),
            reserved: BTreeMap::new(),
            touched: Default::default(),
            block_hashes: Default::default(),
            session_hashes: Default::default(),
        }
    }

    /// The namespace (for [`crate::states`]).
    pub(crate) fn ns(&self) -> &Namespace {
        &self.ns
    }

    /// The inode a path names.
    pub(crate) fn resolve_ino(&self, path: &str) -> Option<Ino> {
        self.resolve(path).ok()
    }

    /// The paths named by the operations applied since the last call.
    pub(crate) fn take_touched(&mut self) -> std::collections::BTreeSet<String> {
        std::mem::take(&mut self.touched)
    }

    /// [`content_hash`] of the content a checkpoint would persist of file `ino`: the saved
    /// content while an atomic session is open. Cached (see `block_hashes`).
    pub(crate) fn durable_content_hash(&mut self, ino: Ino) -> u64 {
        if let Some(old) = self.sessions.get(&ino) {
            return match self.session_hashes.get(&ino) {
                Some((a, h)) if Arc::ptr_eq(a, old) => *h,
                _ => {
                    let h = content_hash(old);
                    self.session_hashes.insert(ino, (old.clone(), h));
                    h
                }
            };
        }
        let Body::File(d) = &self.ns.get(ino).body else { return content_hash(&[]) };
        let data = d.data();
        let cache = self.block_hashes.entry(ino).or_default();
        let whole = data.len() / 4096;
        cache.resize(whole, None);
        let blocks =
            cache.iter_mut().zip(data.chunks(4096)).map(|(slot, b)| *slot.get_or_insert_with(|| block_hash(b)));
        content_hash_of(data.len(), blocks, &data[whole * 4096..])
    }

    /// Inodes with an open atomic session.
    pub(crate) fn sessions_open(&self) -> impl Iterator<Item = Ino> + '_ {
        self.sessions.keys().copied()
    }

    /// The length of the content a checkpoint would persist of file `ino` (see
    /// [`Model::durable_content_hash`]).
    pub(crate) fn durable_content_len(&self, ino: Ino) -> u64 {
        match (self.sessions.get(&ino), &self.ns.get(ino).body) {
            (Some(old), _) => old.len() as u64,
            (None, Body::File(d)) => d.data().len() as u64,
            _ => 0,
        }
    }

    /// Notes that `apply` is changing file `ino`'s bytes `from..to` (`None`: any of them).
    fn forget_hashes(&mut self, ino: Ino, range: Option<(u64, u64)>) {
        match range {
            Some((from, to)) => {
                if let Some(v) = self.block_hashes.get_mut(&ino) {
                    let (first, end) = block_span(from, to.saturating_sub(from).max(1));
                    let end = (end as usize).min(v.len());
                    for slot in v.iter_mut().take(end).skip(first as usize) {
                        *slot = None;
                    }
                }
            }
            None => {
                self.block_hashes.remove(&ino);
            }
        }
    }

    fn resolve(&self, path: &str) -> Result<Ino, i64> {
        let mut ino = ROOT;
        for c in split(path) {
            match &self.ns.get(ino).body {
                Body::Dir(e) => ino = *e.get(c.as_bytes()).ok_or(ENOENT)?,
                _ => return Err(ENOTDIR),
            }
        }
        Ok(ino)
    }

    /// Parent directory inode and final name.
    fn parent<'p>(&self, path: &'p str) -> Result<(Ino, &'p str), i64> {
        let comps = split(path);
        let (name, dirs) = comps.split_last().ok_or(EINVAL)?;
        let mut ino = ROOT;
        for c in dirs {
            match &self.ns.get(ino).body {
                Body::Dir(e) => ino = *e.get(c.as_bytes()).ok_or(ENOENT)?,
                _ => return Err(ENOTDIR),
            }
        }
        match &self.ns.get(ino).body {
            Body::Dir(_) => Ok((ino, name)),
            _ => Err(ENOTDIR),
        }
    }

    fn lookup(&self, dir: Ino, name: &str) -> Option<Ino> {
        self.ns.lookup(dir, name.as_bytes())
    }

    fn is_dir(&self, ino: Ino) -> bool {
        self.ns.is_dir(ino)
    }

    fn add(&mut self, path: &str, kind: NewKind, perm: u16) -> Result<(), i64> {
        let (dir, name) = self.parent(path)?;
        self.ns.check_new_name(dir, name.as_bytes()).map_err(|e| errno(&e))?;
        let ino = self.next;
        self.next += 1;
        self.ns.create(dir, name.as_bytes(), ino, kind, perm).map_err(|e| errno(&e))
    }

    /// Drops the sessions of inodes gone with their last name (after unlink, rmdir or a
    /// replacing rename).
    fn collect(&mut self) {
        let ns = &self.ns;
        self.sessions.retain(|i, _| ns.contains(*i));
    }

    /// The model inode a path names (for the per-file oracle).
    pub fn ino_of(&self, path: &str) -> Option<u64> {
        self.resolve(path).ok().map(u64::from)
    }

    /// The per-file oracle's view of this state.
    pub fn snap(&self) -> Snap {
        let mut s = Snap::default();
        let mut stack = vec![("".to_string(), ROOT)];
        while let Some((path, ino)) = stack.pop() {
            if let Body::Dir(e) = &self.ns.get(ino).body {
                for (n, c) in e {
                    let p = format!("{path}/{}", name_str(n));
                    match &self.ns.get(*c).body {
                        Body::Dir(_) => stack.push((p, *c)),
                        Body::File(d) => {
                            s.names.insert(p, *c as u64);
                            let h = match self.sessions.get(c) {
                                Some(old) => content_hash(old),
                                None => d.memo(content_hash),
                            };
                            s.content.insert(*c as u64, h);
                            if let Some(n) = self.reserved_count(*c) {
                                s.reserved.insert(*c as u64, n);
                            }
                        }
                        Body::Symlink(_) => {}
                    }
                }
            }
        }
        s.in_session = self.sessions.keys().map(|i| *i as u64).collect();
        s
    }

    fn file_mut(&mut self, path: &str) -> Result<&mut Vec<u8>, i64> {
        let ino = self.resolve(path)?;
        Ok(self.ns.file_mut(ino).map_err(|e| errno(&e))?.make_mut())
    }

    /// How many blocks of `ino` the model knows reserved, when any.
    pub fn reserved_count(&self, ino: Ino) -> Option<u64> {
        self.reserved.get(&ino).map(|r| r.len() as u64).filter(|&n| n > 0)
    }

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

    /// Applies one operation; `Err(errno)` leaves the model unchanged (a `repeat` stops at
    /// its first failing repetition, keeping the earlier ones).
    pub fn apply(&mut self, op: &Op) -> Result<(), i64> {
        if !matches!(op, Op::Repeat(..) | Op::Seq(_)) {
            // (A repeat or sequence is applied as its operations, each noting its own.)
            self.touched.extend(op.paths().into_iter().map(|p| format!("/{}", split(p).join("/"))));
        }
        match op {
            Op::Repeat(..) => op.expand().iter().try_for_each(|o| self.apply(o)),
            Op::Seq(v) => v.iter().try_for_each(|o| self.apply(o)),
            // The explorer runs a fill as its writes (each applied on its own); as one
            // operation it is a write of nothing.
            Op::Fill { path, .. } => self.ns.file(self.resolve(path)?).map(|_| ()).map_err(|e| errno(&e)),
            Op::Shrink(p, n) => {
                let size = self.file_size(p).ok_or(EINVAL)?;
                self.apply(&Op::Truncate(p.clone(), size.saturating_sub(*n)))
            }
            Op::Rmtree(p) => {
                // The explorer runs an rmtree as its removals (each applied on its own).
                if p != "/" {
                    self.resolve(p)?;
                }
                for op in self.rmtree_ops(p) {
                    self.apply(&op)?;
                }
                Ok(())
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
            Op::Create(p) => self.add(p, NewKind::File, 0o644),
            Op::Mkdir(p) => self.add(p, NewKind::Dir, 0o755),
            Op::Symlink(p, t) => self.add(p, NewKind::Symlink(t.as_bytes().to_vec()), 0o777),
            Op::Write { path, offset, len, pattern } => {
                if let Ok(ino) = self.resolve(path) {
                    // Bytes from the old end (zeros now) or the offset to the write's end change.
                    let old_len = self.file_size(path).unwrap_or(0);
                    self.forget_hashes(ino, Some(((*offset).min(old_len), *offset + *len as u64)));
                    if let Some(r) = self.reserved.get_mut(&ino) {
                        // The reservation of the blocks written is spent.
                        let (first, end) = block_span(*offset, *len as u64);
                        r.retain(|b| *b < first || *b >= end);
                    }
                }
                let f = self.file_mut(path)?;
                // Not `model::write_at`: a write of nothing here still extends the file to
                // its offset, as the explorer always modelled it.
                let end = (*offset + *len as u64) as usize;
                if f.len() < end {
                    f.resize(end, 0);
                }
                with_pattern_bytes(*pattern, *offset, *len, |b| f[*offset as usize..end].copy_from_slice(b));
                Ok(())
            }
            Op::Truncate(p, size) => {
                if self.resolve(p).is_ok_and(|i| self.sessions.contains_key(&i)) {
                    return Err(EINVAL);
                }
                if let Ok(ino) = self.resolve(p) {
                    self.forget_hashes(ino, None);
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
                if let Ok(ino) = self.resolve(p) {
                    self.forget_hashes(ino, None);
                }
                let size_before = self.file_mut(p)?.len() as u64;
                fallocate_bytes(self.file_mut(p)?, *off, *len, *mode);
                if *mode <= 2 {
                    // A punch or a zero range releases the reservations of the whole blocks
                    // it frees (the core only those below the size: it keeps more, never less).
                    self.unreserve(p, off.div_ceil(4096), (*off + *len) / 4096);
                } else {
                    // The core reserves holes only; the model knows holes only past the end
                    // of the file it had before this call (below it a block may hold data,
                    // and a big overwrite on a full device may get ENOSPC): a subset of what
                    // the core reserved, so the oracle never demands more than was promised.
                    let ino = self.resolve(p)?;
                    let (first, end) = block_span(*off, *len);
                    let first = first.max(size_before.div_ceil(4096));
                    self.reserved.entry(ino).or_default().extend(first..end);
                }
                Ok(())
            }
            Op::Chmod(p, mode) => {
                let ino = self.resolve(p)?;
                self.ns.chmod(ino, *mode);
                Ok(())
            }
            Op::Link(from, to) => {
                let ino = self.resolve(from)?;
                if self.is_dir(ino) {
                    return Err(EPERM);
                }
                let (dir, name) = self.parent(to)?;
                self.ns.link(ino, dir, name.as_bytes()).map_err(|e| errno(&e))
            }
            Op::Unlink(p) => {
                let (dir, name) = self.parent(p)?;
                self.ns.unlink(dir, name.as_bytes()).map_err(|e| errno(&e))?;
                self.collect();
                Ok(())
            }
            Op::Rmdir(p) => {
                if split(p).is_empty() {
                    return Err(EBUSY);
                }
                let (dir, name) = self.parent(p)?;
                self.ns.rmdir(dir, name.as_bytes()).map_err(|e| errno(&e))?;
                self.collect();
                Ok(())
            }
            Op::Rename(from, to, flags) => self.rename(from, to, *flags),
            Op::SetXattr(p, n, v) => {
                let ino = self.resolve(p)?;
                self.ns.set_xattr(ino, n.as_bytes(), v.as_bytes());
                Ok(())
            }
            Op::RemoveXattr(p, n) => {
                let ino = self.resolve(p)?;
                self.ns.remove_xattr(ino, n.as_bytes()).map_err(|e| errno(&e))
            }
            // A grow changes no file: it is a persistence point, as sync.
            Op::Sync | Op::Grow(_) => Ok(()),
            Op::Fsync(p) | Op::Fdatasync(p) => self.resolve(p).map(|_| ()),
            Op::AtomicStart(p) => {
                let ino = self.resolve(p)?;
                // Writes through a session are not checked against reservations.
                self.reserved.remove(&ino);
                let Body::File(d) = &self.ns.get(ino).body else { return Err(EINVAL) };
                let d = d.data().clone();
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
                    self.forget_hashes(ino, None);
                    if let Ok(f) = self.ns.file_mut(ino) {
                        f.set(old);
                    }
                }
                Ok(())
            }
        }
    }

    /// Path-level checks (flags, the root, the source before the target's directory, as
    /// the explorer has always ordered them), then the namespace's rename rules.
    fn rename(&mut self, from: &str, to: &str, flags: u32) -> Result<(), i64> {
        if flags & !(RENAME_NOREPLACE | RENAME_EXCHANGE) != 0
            || flags == RENAME_NOREPLACE | RENAME_EXCHANGE
            || split(from).is_empty()
            || split(to).is_empty()
        {
            return Err(EINVAL);
        }
        let (sdir, sname) = self.parent(from)?;
        self.lookup(sdir, sname).ok_or(ENOENT)?;
        let (ddir, dname) = self.parent(to)?;
        // The workload's flag values are renameat2's, as are rollfs's.
        let flags = RenameFlags::from_bits_retain(flags);
        self.ns.rename(sdir, sname.as_bytes(), ddir, dname.as_bytes(), flags).map_err(|e| errno(&e))?;
        self.collect();
        Ok(())
    }

    /// The size of the regular file at `path` (for `fill`'s appends).
    pub fn file_size(&self, path: &str) -> Option<u64> {
        self.ns.file(self.resolve(path).ok()?).ok().map(|d| d.data().len() as u64)
    }

    /// Whether `path` names a directory.
    pub fn is_dir_path(&self, path: &str) -> bool {
        self.resolve(path).ok().is_some_and(|i| self.is_dir(i))
    }

    /// Whether a handle opened with this path string is open.
    pub fn has_handle(&self, path: &str) -> bool {
        self.handles.contains_key(path)
    }

    /// Existing paths, for the workload generator: (files, directories).
    /// The removals of `rmtree dir` in this tree ([`crate::workload::rmtree_ops`]).
    pub fn rmtree_ops(&self, dir: &str) -> Vec<Op> {
        let (files, dirs) = self.paths();
        crate::workload::rmtree_ops(dir, &files, &dirs)
    }

    /// Whether `op` removes something: it frees room, so it must never fail for the lack
    /// of it (README: "a full filesystem still deletes, truncates and recovers"). Unlink,
    /// rmdir, a truncation to a smaller size, a hole punch (with KEEP_SIZE) and removexattr.
    pub fn is_removal(&self, op: &Op) -> bool {
        match op {
            Op::Unlink(_) | Op::Rmdir(_) | Op::RemoveXattr(..) | Op::Rmtree(_) => true,
            Op::Truncate(p, size) => self.file_size(p).is_some_and(|s| *size < s),
            Op::Shrink(p, n) => *n > 0 && self.file_size(p).is_some_and(|s| s > 0),
            Op::Punch(_, _, _, mode) => *mode == 0,
            _ => false,
        }
    }

    pub fn paths(&self) -> (Vec<String>, Vec<String>) {
        let mut files = Vec::new();
        let mut dirs = vec!["/".to_string()];
        let mut stack = vec![("".to_string(), ROOT)];
        while let Some((path, ino)) = stack.pop() {
            if let Body::Dir(e) = &self.ns.get(ino).body {
                for (n, c) in e {
                    let p = format!("{path}/{}", name_str(n));
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
            if let Ok(f) = m.ns.file_mut(ino) {
                f.set(old);
            }
        }
        m.tree()
    }

    /// The canonical tree of the model (as the live filesystem shows it).
    pub fn tree(&self) -> Tree {
        let mut raw = Vec::new();
        let mut shared: BTreeMap<Ino, Arc<Vec<u8>>> = BTreeMap::new();
        let mut stack = vec![("/".to_string(), ROOT)];
        while let Some((path, ino)) = stack.pop() {
            let node = self.ns.get(ino);
            let (kind, size, content, nlink_dir, chash) = match &node.body {
                Body::File(d) => (KIND_FILE, d.data().len() as u64, d.data().clone(), None, Some(d.memo(content_hash))),
                Body::Symlink(t) => (
                    KIND_SYMLINK,
                    t.len() as u64,
                    shared.entry(ino).or_insert_with(|| Arc::new(t.clone())).clone(),
                    None,
                    None,
                ),
                Body::Dir(e) => {
                    for (n, c) in e {
                        let n = name_str(n);
                        let p = if path == "/" { format!("/{n}") } else { format!("{path}/{n}") };
                        stack.push((p, *c));
                    }
                    // The namespace keeps a directory's link count (2 + subdirectories) as it
                    // changes: counting them here made each state of a big directory O(entries).
                    (KIND_DIR, 0, Arc::default(), Some(node.nlink), None)
                }
            };
            let xattrs = node.xattrs.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            raw.push(RawEntry {
                path,
                ino,
                kind,
                perm: node.perm,
                nlink: nlink_dir.unwrap_or(0),
                size,
                content,
                chash,
                xattrs,
                alloc: Alloc::default(),
            });
        }
        // File link counts are the number of names (computed here, not taken from the
        // namespace's counts: the tree is what the guest's dump is compared with).
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

/// `content_len` of a planned file record: the device blocks are named, not read (ABI.md,
/// "Planned contents").
pub const PLANNED: u32 = u32::MAX - 1;

/// Each device block's [`block_hash`] and data checksum, computed once per block of a run:
/// the crash images of one run share their blocks (`Arc`s), so most states find them here.
/// Keyed by the block's address in memory; the cache holds a reference so the address is
/// not reused while cached. Bounded: cleared at [`BlockCache::ENTRIES_MAX`].
#[derive(Default)]
pub struct BlockCache(std::sync::Mutex<std::collections::HashMap<usize, (BlockRef, u64, u32)>>);

impl BlockCache {
    pub const ENTRIES_MAX: usize = 1 << 17;

    /// `(block_hash, crc)` of `b`.
    pub fn info(&self, b: &BlockRef) -> (u64, u32) {
        let key = Arc::as_ptr(b) as usize;
        if let Some(&(_, h, c)) = self.0.lock().unwrap().get(&key) {
            return (h, c);
        }
        let (h, c) = (block_hash(&b[..]), rollfs_core::codec::crc(&b[..]));
        let mut m = self.0.lock().unwrap();
        if m.len() >= Self::ENTRIES_MAX {
            m.clear();
        }
        m.insert(key, (b.clone(), h, c));
        (h, c)
    }
}

/// Where a planned dump's blocks come from: the device as the mounted filesystem sees it.
pub struct DumpBlocks<'a> {
    pub get: &'a dyn Fn(u64) -> Option<BlockRef>,
    pub cache: &'a BlockCache,
}

/// Why a dump could not be turned into a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DumpFault {
    /// Malformed (a guest or harness bug).
    Parse(String),
    /// A device block named by a file does not match its data checksum: a read would have
    /// failed (the oracle of data checksums).
    Checksum(String),
}

/// One run of a planned record.
struct PlannedRun {
    offset: usize,
    addr: u64,
    blocks: usize,
    crcs: Option<Vec<u32>>,
}

/// [`block_hash`] of a block of zeros, computed once.
fn zero_block_hash() -> u64 {
    static HASH: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *HASH.get_or_init(|| block_hash(&[0u8; BLOCK_SIZE]))
}

/// A zero block for a named block the device never wrote: one for the process (made per
/// file, it was a 4 KiB allocation and zeroing for every file of every dump parsed).
fn shared_zero_block() -> &'static BlockRef {
    static ZERO: std::sync::OnceLock<BlockRef> = std::sync::OnceLock::new();
    ZERO.get_or_init(|| Arc::new([0u8; BLOCK_SIZE]))
}

/// Parses a planned record's body at `pos` (after its marker) and returns the content
/// length and [`content_hash`], computed from the named blocks, the holes (zeros) and the
/// bytes between them.
fn planned_content(b: &[u8], pos: &mut usize, path: &str, dev: &DumpBlocks) -> Result<(u64, u64, u64), DumpFault> {
    let p = |e: String| DumpFault::Parse(e);
    let len = le32(b, pos).map_err(p)? as usize;
    let nruns = le32(b, pos).map_err(p)? as usize;
    let blocks_max = len / BLOCK_SIZE;
    // Bounded by the content and by the dump's bytes left (a run takes at least 17 of
    // them, a hole 8): a malformed count fails before anything is allocated for it.
    if nruns > blocks_max || nruns > (b.len() - *pos) / 17 {
        return Err(p(format!("{path}: {nruns} runs in {len} bytes")));
    }
    let mut runs: Vec<PlannedRun> = Vec::with_capacity(nruns);
    for _ in 0..nruns {
        let offset = le32(b, pos).map_err(p)? as usize;
        let addr = u64::from_le_bytes(take(b, pos, 8).map_err(p)?.try_into().unwrap());
        let blocks = le32(b, pos).map_err(p)? as usize;
        let crcs = match take(b, pos, 1).map_err(p)?[0] {
            0 => None,
            1 if blocks <= (b.len() - *pos) / 4 => {
                Some((0..blocks).map(|_| le32(b, pos)).collect::<Result<Vec<u32>, String>>().map_err(p)?)
            }
            f => return Err(p(format!("{path}: run at {offset}: checksum flag {f} or its {blocks} checksums"))),
        };
        if runs.last().is_some_and(|r| r.offset >= offset) {
            return Err(p(format!("{path}: run at {offset} out of order")));
        }
        runs.push(PlannedRun { offset, addr, blocks, crcs });
    }
    let nholes = le32(b, pos).map_err(p)? as usize;
    if nholes > blocks_max || nholes > (b.len() - *pos) / 8 {
        return Err(p(format!("{path}: {nholes} holes in {len} bytes")));
    }
    let mut holes: Vec<PlannedRun> = Vec::with_capacity(nholes);
    for _ in 0..nholes {
        let offset = le32(b, pos).map_err(p)? as usize;
        let blocks = le32(b, pos).map_err(p)? as usize;
        if holes.last().is_some_and(|h| h.offset >= offset) {
            return Err(p(format!("{path}: hole at {offset} out of order")));
        }
        holes.push(PlannedRun { offset, addr: 0, blocks, crcs: None });
    }
    // Runs and holes are whole blocks at block-aligned offsets, each list in order, none
    // overlapping another, inside the content: the guest reads from offset 0, so
    // content_hash's 4 KiB chunks are their blocks. Merged in offset order (a hole is a
    // run without an address).
    let mut pieces: Vec<(&PlannedRun, bool)> =
        runs.iter().map(|r| (r, true)).chain(holes.iter().map(|h| (h, false))).collect();
    pieces.sort_by_key(|(r, _)| r.offset);
    let mut next_free = 0usize;
    for (r, _) in &pieces {
        let end = r.offset.checked_add(r.blocks.saturating_mul(BLOCK_SIZE)).filter(|&e| e <= len);
        if !r.offset.is_multiple_of(BLOCK_SIZE) || r.offset < next_free || r.blocks == 0 || end.is_none() {
            return Err(p(format!("{path}: run or hole at {} of {} blocks is malformed", r.offset, r.blocks)));
        }
        next_free = end.unwrap_or(len);
    }
    let named_bytes: usize = pieces.iter().map(|(r, _)| r.blocks * BLOCK_SIZE).sum();
    let gaps = take(b, pos, len - named_bytes).map_err(p)?;
    let mut h = Hasher64::new();
    h.u64(len as u64);
    let mut gap_at = 0usize;
    let mut hash_gap = |h: &mut Hasher64, n: usize| {
        for piece in gaps[gap_at..gap_at + n].chunks(BLOCK_SIZE) {
            if piece.len() == BLOCK_SIZE {
                h.u64(block_hash(piece));
            } else {
                h.bytes(piece);
            }
        }
        gap_at += n;
    };
    let mut off = 0usize;
    for (r, on_device) in &pieces {
        hash_gap(&mut h, r.offset - off);
        off = r.offset + r.blocks * BLOCK_SIZE;
        if !on_device {
            for _ in 0..r.blocks {
                h.u64(zero_block_hash());
            }
            continue;
        }
        for j in 0..r.blocks {
            let addr = r.addr + j as u64;
            let block = (dev.get)(addr).unwrap_or_else(|| shared_zero_block().clone());
            let (bh, crc) = dev.cache.info(&block);
            if let Some(c) = &r.crcs {
                if c[j] != crc {
                    return Err(DumpFault::Checksum(format!(
                        "{path}: block {addr} (file offset {}) fails its data checksum",
                        r.offset + j * BLOCK_SIZE
                    )));
                }
            }
            h.u64(bh);
        }
    }
    hash_gap(&mut h, len - off);
    let hole_blocks = holes.iter().map(|h| h.blocks as u64).sum();
    Ok((len as u64, h.finish(), hole_blocks))
}

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
    /// The allocation a dump reports ([`Alloc`]; zero for the model's own trees).
    pub alloc: Alloc,
}

/// A dumped file's allocation, which the model does not predict (not part of an
/// [`Entry`]'s equality or hash): what the reservation rule of the per-file oracle reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Alloc {
    /// `st_blocks` (512-byte units: data blocks and reserved holes).
    pub blocks: u64,
    /// At least this many of the content's blocks hold data: the whole blocks a planned
    /// read did not name holes (a partial last block may be either; a plain dump names no
    /// holes, so none is known).
    pub data_blocks_min: u64,
}

impl Alloc {
    /// At most this many of the file's blocks are reserved holes (`st_blocks` counts data
    /// blocks and reserved holes only): a count below what must be reserved proves a loss.
    pub fn reserved_max(&self) -> u64 {
        (self.blocks / (BLOCK_SIZE as u64 / 512)).saturating_sub(self.data_blocks_min)
    }
}

/// Equal when everything but `content` is: `chash` stands for the content, which a planned
/// dump does not carry.
#[derive(Debug, Clone)]
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
    /// What a dump reported of its allocation (not compared: see [`Alloc`]).
    pub alloc: Alloc,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Entry) -> bool {
        self.kind == o.kind
            && self.perm == o.perm
            && self.nlink == o.nlink
            && self.size == o.size
            && self.chash == o.chash
            && self.xattrs == o.xattrs
            && self.link == o.link
    }
}

impl Eq for Entry {}

/// A canonical tree with a precomputed hash (for fast matching against model states).
/// `entries` is a persistent map: a run's model states share what did not change between
/// them ([`crate::states`]).
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub entries: OrdMap<String, Entry>,
    /// The wrapping sum of [`entry_hash`] over the entries (a sum, so that a state made
    /// from the one before by changing a few entries updates it in O(changes)).
    pub hash: u64,
}

impl PartialEq for Tree {
    fn eq(&self, o: &Tree) -> bool {
        self.hash == o.hash && self.entries == o.entries
    }
}

impl Eq for Tree {}

/// The hash of one entry of a tree, under its path (every field [`Entry`]'s equality
/// compares).
pub fn entry_hash(path: &str, e: &Entry) -> u64 {
    let mut h = Hasher64::new();
    h.bytes(path.as_bytes());
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
    h.finish()
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
    /// Whether every entry reports the same allocation as `o`'s ([`Alloc`] is not part of
    /// equality; the reservation rule's verdict depends on it).
    pub fn same_alloc(&self, o: &Tree) -> bool {
        self.entries.len() == o.entries.len()
            && self.entries.iter().zip(o.entries.iter()).all(|((p, a), (q, b))| p == q && a.alloc == b.alloc)
    }

    pub fn from_raw(raw: Vec<RawEntry>) -> Tree {
        let mut first: BTreeMap<u32, String> = BTreeMap::new();
        for r in &raw {
            let e = first.entry(r.ino).or_insert_with(|| r.path.clone());
            if r.path < *e {
                *e = r.path.clone();
            }
        }
        let mut entries = OrdMap::new();
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
                Entry {
                    kind: r.kind,
                    perm: r.perm,
                    nlink: r.nlink,
                    size,
                    content: r.content,
                    chash,
                    xattrs,
                    link,
                    alloc: r.alloc,
                },
            );
        }
        let hash = entries.iter().fold(0u64, |h, (p, e)| h.wrapping_add(entry_hash(p, e)));
        Tree { entries, hash }
    }

    /// Parses the guest's dump (ABI.md, "Tree dump").
    pub fn parse_dump(b: &[u8]) -> Result<Tree, String> {
        Self::parse_dump_with(b, None).map_err(|e| match e {
            DumpFault::Parse(m) | DumpFault::Checksum(m) => m,
        })
    }

    /// Parses a dump of `sim_dump_planned`: the blocks files name are read from `dev`.
    pub fn parse_planned_dump(b: &[u8], dev: &DumpBlocks) -> Result<Tree, DumpFault> {
        Self::parse_dump_with(b, Some(dev))
    }

    fn parse_dump_with(b: &[u8], dev: Option<&DumpBlocks>) -> Result<Tree, DumpFault> {
        let p = DumpFault::Parse;
        let mut pos = 0;
        let mut raw = Vec::new();
        type Shared = (Arc<Vec<u8>>, Vec<(Vec<u8>, Vec<u8>)>, Option<u64>, u64);
        let mut seen: BTreeMap<u32, Shared> = BTreeMap::new();
        while pos < b.len() {
            let n = le32(b, &mut pos).map_err(p)? as usize;
            let path = String::from_utf8_lossy(take(b, &mut pos, n).map_err(p)?).into_owned();
            let ino = le32(b, &mut pos).map_err(p)?;
            let kind = take(b, &mut pos, 1).map_err(p)?[0];
            let perm = u16::from_le_bytes(take(b, &mut pos, 2).map_err(p)?.try_into().unwrap());
            let _uid = le32(b, &mut pos).map_err(p)?;
            let _gid = le32(b, &mut pos).map_err(p)?;
            let nlink = le32(b, &mut pos).map_err(p)?;
            let size = u64::from_le_bytes(take(b, &mut pos, 8).map_err(p)?.try_into().unwrap());
            let blocks = u64::from_le_bytes(take(b, &mut pos, 8).map_err(p)?.try_into().unwrap());
            let n = le32(b, &mut pos).map_err(p)?;
            let (content, chash, data_blocks_min) = if n == SAME_AS_FIRST {
                let first =
                    seen.get(&ino).ok_or_else(|| p(format!("{path}: content refers to an inode not dumped before")))?;
                (first.0.clone(), first.2, first.3)
            } else if n == PLANNED {
                let dev = dev.ok_or_else(|| p(format!("{path}: a planned record in a dump without a device")))?;
                let (len, h, holes) = planned_content(b, &mut pos, &path, dev)?;
                (Arc::new(Vec::new()), Some(h), (len / BLOCK_SIZE as u64).saturating_sub(holes))
            } else {
                (Arc::new(take(b, &mut pos, n as usize).map_err(p)?.to_vec()), None, 0)
            };
            let nx = le32(b, &mut pos).map_err(p)?;
            let xattrs = if nx == SAME_AS_FIRST {
                seen.get(&ino)
                    .ok_or_else(|| p(format!("{path}: xattrs refer to an inode not dumped before")))?
                    .1
                    .clone()
            } else {
                let mut xattrs = Vec::new();
                for _ in 0..nx {
                    let n = le32(b, &mut pos).map_err(p)? as usize;
                    let k = take(b, &mut pos, n).map_err(p)?.to_vec();
                    let n = le32(b, &mut pos).map_err(p)? as usize;
                    let v = take(b, &mut pos, n).map_err(p)?.to_vec();
                    xattrs.push((k, v));
                }
                xattrs
            };
            seen.entry(ino).or_insert_with(|| (content.clone(), xattrs.clone(), chash, data_blocks_min));
            let alloc = Alloc { blocks, data_blocks_min };
            raw.push(RawEntry { path, ino, kind, perm: perm & 0o7777, nlink, size, content, chash, xattrs, alloc });
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
                    if a.chash != b.chash {
                        // A planned dump carries no bytes: then only the hashes differ.
                        let whole = |e: &Entry| e.kind != KIND_FILE || e.content.len() as u64 == e.size;
                        if whole(a) && whole(b) {
                            let at = a.content.iter().zip(b.content.iter()).position(|(x, y)| x != y);
                            what.push(format!(
                                "content differs (len {} vs {}, first difference at {:?})",
                                a.content.len(),
                                b.content.len(),
                                at
                            ));
                        } else {
                            what.push(format!("content differs (hash {:016x} vs {:016x})", a.chash, b.chash));
                        }
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

    /// A planned record of file `/f` with the given body after its marker.
    fn planned_record(body: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(b"/f");
        b.extend_from_slice(&5u32.to_le_bytes());
        b.push(KIND_FILE);
        b.extend_from_slice(&0o644u16.to_le_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&(3 * 4096u64).to_le_bytes());
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&PLANNED.to_le_bytes());
        b.extend_from_slice(body);
        b.extend_from_slice(&0u32.to_le_bytes());
        b
    }

    /// Planned bodies: a good one (a run, a hole, bytes) parses to the content's hash; bad
    /// counts, flags, order and overlaps are parse errors, with nothing allocated for a
    /// count the dump cannot hold.
    #[test]
    fn planned_records_parse_or_fail_cleanly() {
        let le = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let run = |off: u32, addr: u64, blocks: u32, flag: u8| {
            let mut r = le(&[off]);
            r.extend_from_slice(&addr.to_le_bytes());
            r.extend_from_slice(&le(&[blocks]));
            r.push(flag);
            r
        };
        let block: BlockRef = Arc::new([7u8; BLOCK_SIZE]);
        let get = |a: u64| (a == 40).then(|| block.clone());
        let dev = DumpBlocks { get: &get, cache: &BlockCache::default() };
        let body = |runs: &[Vec<u8>], holes: &[(u32, u32)], tail: &[u8]| {
            let mut b = le(&[3 * 4096, runs.len() as u32]);
            runs.iter().for_each(|r| b.extend_from_slice(r));
            b.extend_from_slice(&le(&[holes.len() as u32]));
            holes.iter().for_each(|&(o, n)| b.extend_from_slice(&le(&[o, n])));
            b.extend_from_slice(tail);
            b
        };
        // Block 0 on the device, block 1 a hole, block 2 sent.
        let good = body(&[run(0, 40, 1, 0)], &[(4096, 1)], &[3u8; 4096]);
        let t = Tree::parse_planned_dump(&planned_record(&good), &dev).unwrap();
        let mut want = vec![7u8; 4096];
        want.extend_from_slice(&[0u8; 4096]);
        want.extend_from_slice(&[3u8; 4096]);
        assert_eq!(t.entries["/f"].chash, content_hash(&want));
        let bad = [
            ("huge run count", le(&[3 * 4096, u32::MAX])),
            ("huge hole count", {
                let mut b = le(&[3 * 4096, 0]);
                b.extend_from_slice(&le(&[u32::MAX]));
                b
            }),
            ("checksum flag 2", body(&[run(0, 40, 1, 2)], &[], &[0u8; 8192])),
            ("more checksums than bytes", body(&[run(0, 40, 2_000_000, 1)], &[], &[])),
            ("runs out of order", body(&[run(4096, 40, 1, 0), run(0, 40, 1, 0)], &[], &[0u8; 4096])),
            ("holes out of order", body(&[], &[(4096, 1), (0, 1)], &[0u8; 4096])),
            ("hole over a run", body(&[run(0, 40, 2, 0)], &[(4096, 1)], &[0u8; 4096])),
            ("unaligned hole", body(&[], &[(100, 1)], &[0u8; 8192])),
            ("hole past the end", body(&[], &[(8192, 2)], &[0u8; 8192])),
            ("bytes missing", body(&[run(0, 40, 1, 0)], &[(4096, 1)], &[3u8; 100])),
        ];
        for (what, b) in bad {
            match Tree::parse_planned_dump(&planned_record(&b), &dev) {
                Err(DumpFault::Parse(_)) => {}
                other => panic!("{what}: {other:?}"),
            }
        }
    }

    /// [`Model::tree`] and the state tracker take a directory's link count from the
    /// namespace, which keeps it as operations go: it must be 2 + the subdirectories,
    /// through mkdir, rmdir and renames of directories across parents.
    #[test]
    fn kept_directory_link_counts_match_the_subdirectories() {
        let mut dirs_checked = 0usize;
        let cases = (0..300).map(crate::workload::CaseId::Random).chain((0..300).map(crate::workload::CaseId::Ace));
        for case in cases {
            let w = crate::workload::workload(&case, 7).unwrap();
            let mut m = Model::new();
            for op in &w.ops {
                let _ = m.apply(op);
                for (ino, node) in &m.ns().inodes {
                    if let Body::Dir(e) = &node.body {
                        let subdirs = e.values().filter(|c| m.ns().is_dir(**c)).count() as u32;
                        assert_eq!(node.nlink, 2 + subdirs, "{case}: directory {ino} after {op:?}");
                        dirs_checked += 1;
                    }
                }
            }
        }
        assert!(dirs_checked > 10_000, "only {dirs_checked} directory states checked");
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
            b.extend_from_slice(&(8 * (i as u64 + 3)).to_le_bytes());
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
        // st_blocks is carried, not compared; a plain dump knows no data block for sure.
        let f = parsed.entries.iter().position(|(p, _)| p == "/d/f").unwrap() as u64;
        assert_eq!(parsed.entries["/d/f"].alloc, Alloc { blocks: 8 * (f + 3), data_blocks_min: 0 });
        assert_eq!(parsed.entries["/d/f"].alloc.reserved_max(), f + 3);
        assert!(!parsed.same_alloc(&t), "the model's tree reports no allocation");
    }
}
