//! The reference model of a POSIX namespace: what every model of the filesystem shares.
//!
//! This module owns the namespace proper (inodes in BTreeMaps: regular files with their
//! bytes, directories with their entries, symlinks, permissions, link counts, parents,
//! xattrs) and the POSIX rules of each operation on it: which error an operation gets
//! (as the [`rollfs_core::Error`] the filesystem returns; `Error::errno` gives the Linux
//! value) and what it changes. Operations take inode numbers and names, not paths: the
//! differential tests know inode numbers (the filesystem hands them out), and the crash
//! explorer resolves its paths itself (its path-level errors, e.g. EBUSY for the root,
//! stay there).
//!
//! Each mutating operation checks first and changes nothing when it fails, so a caller may
//! apply it to the model before running it on the filesystem and compare the two results.
//! What belongs to one kind of test only stays with it: durability tracking and the
//! operation encoding of the differential runner ([`crate::ops`]), atomic-write sessions,
//! open handles, fallocate reservations and canonical trees of the explorer
//! (wasm-harness/src/model.rs).

use rollfs_core::{Error, Ino, RenameFlags};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The root directory's inode number (as in rollfs).
pub const ROOT: Ino = 1;

/// The error of a rename that would move a directory below itself (rollfs's message, so
/// that it compares equal to the filesystem's error).
pub const INTO_ITSELF: Error = Error::Invalid("cannot move a directory into itself");

/// The error of a content operation on something that is not a regular file.
pub const NOT_A_FILE: Error = Error::Invalid("not a regular file");

/// A regular file's bytes, shared copy-on-write with whatever a caller took of them (the
/// explorer keeps old contents for atomic sessions and trees), and a memo slot.
#[derive(Debug, Clone, Default)]
pub struct FileData {
    data: Arc<Vec<u8>>,
    /// A digest of `data` the embedding model may cache (the explorer's content hash);
    /// cleared by every change of the content. Not part of the state: equal to any other.
    memo: Cell<Option<u64>>,
}

impl PartialEq for FileData {
    fn eq(&self, other: &FileData) -> bool {
        self.data == other.data
    }
}
impl Eq for FileData {}

impl FileData {
    pub fn data(&self) -> &Arc<Vec<u8>> {
        &self.data
    }
    /// Replaces the content (e.g. with one saved earlier).
    pub fn set(&mut self, data: Arc<Vec<u8>>) {
        self.data = data;
        self.memo.set(None);
    }
    /// The content for changing (copied first if shared).
    pub fn make_mut(&mut self) -> &mut Vec<u8> {
        self.memo.set(None);
        Arc::make_mut(&mut self.data)
    }
    /// The memoized digest of the content, computed by `f` if not known yet.
    pub fn memo(&self, f: impl FnOnce(&[u8]) -> u64) -> u64 {
        match self.memo.get() {
            Some(h) => h,
            None => {
                let h = f(&self.data);
                self.memo.set(Some(h));
                h
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    File(FileData),
    Dir(BTreeMap<Vec<u8>, Ino>),
    Symlink(Vec<u8>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inode {
    pub body: Body,
    /// Names of a file; 2 + subdirectories of a directory.
    pub nlink: u32,
    pub perm: u16,
    /// The directory holding the (first) name; the root is its own parent.
    pub parent: Ino,
    pub xattrs: BTreeMap<Vec<u8>, Vec<u8>>,
}

/// What [`Namespace::create`] makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewKind {
    File,
    Dir,
    Symlink(Vec<u8>),
}

/// The namespace: inode number -> inode. Inode 1 is the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    pub inodes: BTreeMap<Ino, Inode>,
}

impl Default for Namespace {
    fn default() -> Self {
        Namespace::new()
    }
}

/// Writes `data` at `off` into `v`, extending it with zeros as needed (a write of nothing
/// changes nothing, not even the size).
pub fn write_at(v: &mut Vec<u8>, off: usize, data: &[u8]) {
    if !data.is_empty() {
        let end = off + data.len();
        if v.len() < end {
            v.resize(end, 0);
        }
        v[off..end].copy_from_slice(data);
    }
}

/// fallocate's effect on a file's bytes. `mode`: 0 punch a hole, 1 zero the range keeping
/// the size, 2 zero the range (the size grows to cover it), 3 allocate (the size grows),
/// 4 allocate keeping the size. (Reservations are the explorer's business.)
pub fn fallocate_bytes(v: &mut Vec<u8>, off: u64, len: u64, mode: u8) {
    let end = off.saturating_add(len) as usize;
    if (mode == 2 || mode == 3) && v.len() < end {
        v.resize(end, 0);
    }
    if mode <= 2 {
        let end = end.min(v.len());
        if (off as usize) < end {
            v[off as usize..end].fill(0);
        }
    }
}

impl Namespace {
    /// An empty root directory (mode 0755), as mkfs leaves it.
    pub fn new() -> Namespace {
        let mut inodes = BTreeMap::new();
        let root =
            Inode { body: Body::Dir(BTreeMap::new()), nlink: 2, perm: 0o755, parent: ROOT, xattrs: BTreeMap::new() };
        inodes.insert(ROOT, root);
        Namespace { inodes }
    }

    pub fn get(&self, ino: Ino) -> &Inode {
        &self.inodes[&ino]
    }

    pub fn contains(&self, ino: Ino) -> bool {
        self.inodes.contains_key(&ino)
    }

    pub fn is_dir(&self, ino: Ino) -> bool {
        matches!(self.inodes[&ino].body, Body::Dir(_))
    }

    /// Every directory, regular file, inode (ascending inode numbers).
    pub fn dirs(&self) -> Vec<Ino> {
        self.inodes.iter().filter(|(_, i)| matches!(i.body, Body::Dir(_))).map(|(k, _)| *k).collect()
    }
    pub fn files(&self) -> Vec<Ino> {
        self.inodes.iter().filter(|(_, i)| matches!(i.body, Body::File(_))).map(|(k, _)| *k).collect()
    }
    pub fn all(&self) -> Vec<Ino> {
        self.inodes.keys().copied().collect()
    }

    /// The entries of directory `dir` (which must be one).
    pub fn entries(&self, dir: Ino) -> &BTreeMap<Vec<u8>, Ino> {
        match &self.inodes[&dir].body {
            Body::Dir(e) => e,
            _ => unreachable!("inode {dir} is not a directory"),
        }
    }
    fn entries_mut(&mut self, dir: Ino) -> &mut BTreeMap<Vec<u8>, Ino> {
        match &mut self.inodes.get_mut(&dir).unwrap().body {
            Body::Dir(e) => e,
            _ => unreachable!("inode {dir} is not a directory"),
        }
    }

    /// The inode `name` names in `dir` (None also when `dir` is not a directory).
    pub fn lookup(&self, dir: Ino, name: &[u8]) -> Option<Ino> {
        match &self.inodes[&dir].body {
            Body::Dir(e) => e.get(name).copied(),
            _ => None,
        }
    }

    /// Whether `d` is `anc` or below it.
    pub fn within(&self, mut d: Ino, anc: Ino) -> bool {
        loop {
            if d == anc {
                return true;
            }
            if d == ROOT {
                return false;
            }
            d = self.inodes[&d].parent;
        }
    }

    /// A file's content, or the error a content operation on `ino` gets.
    pub fn file(&self, ino: Ino) -> Result<&FileData, Error> {
        match &self.inodes[&ino].body {
            Body::File(d) => Ok(d),
            Body::Dir(_) => Err(Error::IsDir),
            Body::Symlink(_) => Err(NOT_A_FILE),
        }
    }
    pub fn file_mut(&mut self, ino: Ino) -> Result<&mut FileData, Error> {
        match &mut self.inodes.get_mut(&ino).unwrap().body {
            Body::File(d) => Ok(d),
            Body::Dir(_) => Err(Error::IsDir),
            Body::Symlink(_) => Err(NOT_A_FILE),
        }
    }

    /// Whether `name` is free in `dir` (what create, mkdir, symlink and link check).
    pub fn check_new_name(&self, dir: Ino, name: &[u8]) -> Result<(), Error> {
        if self.lookup(dir, name).is_some() {
            Err(Error::Exists)
        } else {
            Ok(())
        }
    }

    /// Creates inode `ino` (the number the filesystem gave it) named `name` in `dir`.
    /// A setgid directory passes its bit on to new subdirectories.
    pub fn create(&mut self, dir: Ino, name: &[u8], ino: Ino, kind: NewKind, perm: u16) -> Result<(), Error> {
        self.check_new_name(dir, name)?;
        let (body, nlink, perm) = match kind {
            NewKind::File => (Body::File(FileData::default()), 1, perm),
            NewKind::Dir => {
                let setgid = self.inodes[&dir].perm & 0o2000;
                self.inodes.get_mut(&dir).unwrap().nlink += 1;
                (Body::Dir(BTreeMap::new()), 2, perm | setgid)
            }
            NewKind::Symlink(t) => (Body::Symlink(t), 1, perm),
        };
        self.inodes.insert(ino, Inode { body, nlink, perm, parent: dir, xattrs: BTreeMap::new() });
        self.entries_mut(dir).insert(name.to_vec(), ino);
        Ok(())
    }

    /// One name of `ino` less; the inode goes with its last name.
    fn drop_link(&mut self, ino: Ino) {
        let dir = self.is_dir(ino);
        let n = self.inodes.get_mut(&ino).unwrap();
        if dir {
            n.nlink = 0;
        } else {
            n.nlink -= 1;
        }
        if n.nlink == 0 {
            self.inodes.remove(&ino);
        }
    }

    pub fn unlink(&mut self, dir: Ino, name: &[u8]) -> Result<(), Error> {
        let child = self.lookup(dir, name).ok_or(Error::NotFound)?;
        if self.is_dir(child) {
            return Err(Error::IsDir);
        }
        self.entries_mut(dir).remove(name);
        self.drop_link(child);
        Ok(())
    }

    pub fn rmdir(&mut self, dir: Ino, name: &[u8]) -> Result<(), Error> {
        let child = self.lookup(dir, name).ok_or(Error::NotFound)?;
        if !self.is_dir(child) {
            return Err(Error::NotDir);
        }
        if !self.entries(child).is_empty() {
            return Err(Error::NotEmpty);
        }
        self.entries_mut(dir).remove(name);
        self.inodes.get_mut(&dir).unwrap().nlink -= 1;
        self.drop_link(child);
        Ok(())
    }

    /// A new name for file `ino` (directories cannot have two).
    pub fn link(&mut self, ino: Ino, dir: Ino, name: &[u8]) -> Result<(), Error> {
        if self.is_dir(ino) {
            return Err(Error::NotPermitted);
        }
        self.check_new_name(dir, name)?;
        self.entries_mut(dir).insert(name.to_vec(), ino);
        self.inodes.get_mut(&ino).unwrap().nlink += 1;
        Ok(())
    }

    /// rename(2) and renameat2's NOREPLACE and EXCHANGE (not both: the caller checks).
    pub fn rename(&mut self, d1: Ino, n1: &[u8], d2: Ino, n2: &[u8], flags: RenameFlags) -> Result<(), Error> {
        let src = self.lookup(d1, n1);
        let dst = self.lookup(d2, n2);
        let exchange = flags.contains(RenameFlags::EXCHANGE);
        match (src, dst) {
            (None, _) => return Err(Error::NotFound),
            (Some(s), _) if self.is_dir(s) && self.within(d2, s) => return Err(INTO_ITSELF),
            (Some(_), None) if exchange => return Err(Error::NotFound),
            (Some(_), Some(t)) if exchange && self.is_dir(t) && self.within(d1, t) => return Err(INTO_ITSELF),
            (Some(_), Some(_)) if exchange => {}
            (Some(_), Some(_)) if flags.contains(RenameFlags::NOREPLACE) => return Err(Error::Exists),
            // Two names of one inode (or the same name): POSIX says do nothing.
            (Some(s), Some(t)) if s == t => return Ok(()),
            (Some(s), Some(t)) if self.is_dir(s) && !self.is_dir(t) => return Err(Error::NotDir),
            (Some(s), Some(t)) if !self.is_dir(s) && self.is_dir(t) => return Err(Error::IsDir),
            (Some(_), Some(t)) if self.is_dir(t) && !self.entries(t).is_empty() => return Err(Error::NotEmpty),
            _ => {}
        }
        let s = src.unwrap();
        if exchange {
            let t = dst.unwrap();
            self.entries_mut(d1).insert(n1.to_vec(), t);
            self.entries_mut(d2).insert(n2.to_vec(), s);
            if d1 != d2 {
                if self.is_dir(s) {
                    self.inodes.get_mut(&d1).unwrap().nlink -= 1;
                    self.inodes.get_mut(&d2).unwrap().nlink += 1;
                }
                if self.is_dir(t) {
                    self.inodes.get_mut(&d2).unwrap().nlink -= 1;
                    self.inodes.get_mut(&d1).unwrap().nlink += 1;
                }
            }
            self.inodes.get_mut(&s).unwrap().parent = d2;
            self.inodes.get_mut(&t).unwrap().parent = d1;
            return Ok(());
        }
        self.entries_mut(d1).remove(n1);
        if let Some(t) = dst {
            if self.is_dir(t) {
                self.inodes.get_mut(&d2).unwrap().nlink -= 1;
            }
            self.drop_link(t);
        }
        self.entries_mut(d2).insert(n2.to_vec(), s);
        if self.is_dir(s) && d1 != d2 {
            self.inodes.get_mut(&d1).unwrap().nlink -= 1;
            self.inodes.get_mut(&d2).unwrap().nlink += 1;
        }
        self.inodes.get_mut(&s).unwrap().parent = d2;
        Ok(())
    }

    pub fn write(&mut self, ino: Ino, off: u64, data: &[u8]) -> Result<(), Error> {
        write_at(self.file_mut(ino)?.make_mut(), off as usize, data);
        Ok(())
    }

    pub fn truncate(&mut self, ino: Ino, size: u64) -> Result<(), Error> {
        self.file_mut(ino)?.make_mut().resize(size as usize, 0);
        Ok(())
    }

    /// fallocate, `mode` as in [`fallocate_bytes`].
    pub fn fallocate(&mut self, ino: Ino, off: u64, len: u64, mode: u8) -> Result<(), Error> {
        fallocate_bytes(self.file_mut(ino)?.make_mut(), off, len, mode);
        Ok(())
    }

    pub fn chmod(&mut self, ino: Ino, mode: u32) {
        self.inodes.get_mut(&ino).unwrap().perm = (mode & 0o7777) as u16;
    }

    pub fn set_xattr(&mut self, ino: Ino, name: &[u8], value: &[u8]) {
        self.inodes.get_mut(&ino).unwrap().xattrs.insert(name.to_vec(), value.to_vec());
    }

    pub fn remove_xattr(&mut self, ino: Ino, name: &[u8]) -> Result<(), Error> {
        self.inodes.get_mut(&ino).unwrap().xattrs.remove(name).map(|_| ()).ok_or(Error::NoData)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_rules() {
        let mut m = Namespace::new();
        m.create(ROOT, b"d", 2, NewKind::Dir, 0o755).unwrap();
        assert_eq!(m.create(ROOT, b"d", 3, NewKind::File, 0o644), Err(Error::Exists));
        m.create(2, b"f", 3, NewKind::File, 0o644).unwrap();
        m.write(3, 10, b"hello").unwrap();
        assert_eq!(&m.file(3).unwrap().data()[..], b"\0\0\0\0\0\0\0\0\0\0hello");
        m.link(3, ROOT, b"g").unwrap();
        assert_eq!(m.get(3).nlink, 2);
        assert_eq!(m.link(2, ROOT, b"h"), Err(Error::NotPermitted));
        assert_eq!(m.rmdir(ROOT, b"d"), Err(Error::NotEmpty));
        assert_eq!(m.rmdir(ROOT, b"g"), Err(Error::NotDir));
        assert_eq!(m.unlink(ROOT, b"d"), Err(Error::IsDir));
        assert_eq!(m.rename(ROOT, b"d", 2, b"x", RenameFlags::empty()), Err(INTO_ITSELF));
        assert_eq!(m.rename(ROOT, b"g", 2, b"f", RenameFlags::empty()), Ok(()), "same inode: no-op");
        assert_eq!(m.rename(ROOT, b"g", ROOT, b"d", RenameFlags::empty()), Err(Error::IsDir));
        assert_eq!(m.rename(ROOT, b"g", ROOT, b"d", RenameFlags::NOREPLACE), Err(Error::Exists));
        m.rename(ROOT, b"g", ROOT, b"d", RenameFlags::EXCHANGE).unwrap();
        assert!(m.is_dir(m.lookup(ROOT, b"g").unwrap()));
        assert_eq!(m.get(ROOT).nlink, 3);
        m.unlink(2, b"f").unwrap();
        assert_eq!(m.get(3).nlink, 1);
        m.unlink(ROOT, b"d").unwrap();
        assert!(!m.contains(3));
        assert_eq!(m.remove_xattr(2, b"user.x"), Err(Error::NoData));
        m.chmod(2, 0o2775);
        m.create(2, b"sub", 4, NewKind::Dir, 0o755).unwrap();
        assert_eq!(m.get(4).perm, 0o2755, "setgid is inherited by subdirectories");
    }

    #[test]
    fn fallocate_modes() {
        let mut v = vec![1u8; 10];
        fallocate_bytes(&mut v, 8, 4, 0);
        assert_eq!(v, [1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
        fallocate_bytes(&mut v, 0, 2, 1);
        assert_eq!(v.len(), 10);
        fallocate_bytes(&mut v, 9, 3, 2);
        assert_eq!(v.len(), 12);
        fallocate_bytes(&mut v, 0, 20, 3);
        assert_eq!((v.len(), v[2]), (20, 1));
        fallocate_bytes(&mut v, 0, 30, 4);
        assert_eq!(v.len(), 20);
    }
}
