//! The namespace: lookup, create, link, unlink, rename, directories, symlinks, attributes,
//! xattrs and open/release — everything that joins inodes to names.
//!
//! Directory contents are reached through [`DirIo`], which gives the dentry-block code
//! (`dir`) access to a directory's data blocks through the write-back cache.

use crate::dir::{self, DirBlocks, EntryLoc};
use crate::error::{Error, Result};
use crate::fileflags::FileFlags;
use crate::fs::*;
use crate::layout::*;
use crate::node::{self, inode, FileType, NodeType};
use crate::nsrec::{CreateAttrs, NsRecord};
use crate::xattr;
use crate::{zero_block, Block, BlockDevice, Ino};
use alloc::boxed::Box;
use alloc::vec::Vec;

/// What a file records as its parent and name once one of its entries is removed (see
/// `other_names.rs`).
enum NameLeft {
    /// Nothing to do: it keeps what it records, and its other name stays remembered.
    Unchanged,
    /// It keeps what it records; its other name is forgotten (one link left).
    Forget,
    /// It records this other name of its (found by a lookup), forgotten as remembered.
    Other(Ino, Vec<u8>),
}

/// A directory's data blocks, as the dentry-block code sees them.
pub(crate) struct DirIo<'a, D: BlockDevice> {
    pub fs: &'a mut Filesystem<D>,
    pub ino: Ino,
}

impl<D: BlockDevice> DirBlocks for DirIo<'_, D> {
    fn read(&mut self, idx: u64) -> Result<Option<Box<Block>>> {
        self.fs.read_block_opt(self.ino, idx)
    }
    fn read_cached(&mut self, idx: u64) -> Result<Option<(Box<Block>, bool)>> {
        self.fs.read_dentry_block(self.ino, idx)
    }
    fn validated(&mut self, idx: u64, block: &Block) {
        self.fs.dentry_cache.keep(self.ino, idx, block);
    }
    fn write(&mut self, idx: u64, block: Box<Block>) -> Result<()> {
        self.fs.put_dirty_block(self.ino, idx, block)?;
        let b = self.fs.inode_mut(self.ino)?;
        let end = (idx + 1) * BLOCK_SIZE as u64;
        if end > inode::size(b) {
            inode::set_size(b, end);
        }
        Ok(())
    }
    fn addr_of(&mut self, idx: u64) -> u64 {
        self.fs.get_addr(self.ino, idx).map(|a| a as u64).unwrap_or(0)
    }
    fn hash_key(&mut self) -> Result<dir::HashKey> {
        self.fs.dir_hash_key(self.ino)
    }
    fn cookie_key(&mut self) -> Result<dir::HashKey> {
        self.fs.dir_cookie_key(self.ino)
    }
    fn overflow(&self) -> bool {
        self.fs.superblock().dir_v2()
    }
}

/// Where [`Filesystem::walk_up`] stopped.
pub(crate) enum Walk {
    Hit,
    Root,
    /// A recorded parent that is no longer a live directory.
    Lost,
}

/// Checks a name given by a caller for a new entry.
pub(crate) fn check_name(name: &[u8]) -> Result<()> {
    if name.is_empty() || name.contains(&b'/') || name.contains(&0) {
        return Err(Error::Invalid("file name empty or containing '/' or NUL"));
    }
    if name.len() > NAME_MAX {
        return Err(Error::NameTooLong);
    }
    Ok(())
}

fn is_dot(name: &[u8]) -> bool {
    name == b"." || name == b".."
}

impl<D: BlockDevice> Filesystem<D> {
    pub(crate) fn dir_depth(&mut self, dir: Ino) -> Result<u32> {
        Ok(inode::dir_depth(self.inode_ref(dir)?))
    }

    pub(crate) fn require_dir(&mut self, dir: Ino) -> Result<()> {
        if self.inode_kind(dir)? != FileType::Directory {
            return Err(Error::NotDir);
        }
        Ok(())
    }

    /// [`Self::require_dir`] for a directory that gets a new name: ENOENT for one removed
    /// while open (no links left: the kernel's IS_DEADDIR), which no record could replay.
    pub(crate) fn require_live_dir(&mut self, dir: Ino) -> Result<()> {
        self.require_dir(dir)?;
        if inode::links(self.inode_ref(dir)?) == 0 {
            return Err(Error::NotFound);
        }
        Ok(())
    }

    pub(crate) fn dir_lookup(&mut self, dir: Ino, name: &[u8]) -> Result<Option<(EntryLoc, Ino, FileType)>> {
        let depth = self.dir_depth(dir)?;
        let found = dir::lookup(&mut DirIo { fs: self, ino: dir }, depth, name)?;
        if let Some((_, ino, _)) = found {
            // A dentry must lead to a live inode; anything else is corruption.
            if self.check_ino(ino).is_err() {
                return Err(Error::corrupt(self.nat_addr(dir), "dentry points to a free inode"));
            }
        }
        Ok(found)
    }

    /// Node ids an insert into `dir` may take: the tree nodes of a new dentry block beyond
    /// the inode's own address array (none for directories whose every level fits there).
    pub(crate) fn dir_insert_nids(&mut self, dir: Ino) -> Result<u64> {
        let depth = self.dir_depth(dir)?;
        Ok(if dir::insert_blocks_end(depth) <= ADDRS_PER_INODE as u64 { 0 } else { 3 })
    }

    pub(crate) fn dir_insert(&mut self, dir: Ino, name: &[u8], ino: Ino, kind: FileType) -> Result<()> {
        let mut depth = self.dir_depth(dir)?;
        let before = depth;
        dir::insert(&mut DirIo { fs: self, ino: dir }, &mut depth, name, ino, kind)?;
        if depth != before {
            inode::set_dir_depth(self.inode_mut(dir)?, depth);
        }
        Ok(())
    }

    fn dir_remove(&mut self, dir: Ino, name: &[u8]) -> Result<()> {
        self.since_cp.name_removed(dir, name);
        let depth = self.dir_depth(dir)?;
        match dir::remove(&mut DirIo { fs: self, ino: dir }, depth, name)? {
            Some(_) => Ok(()),
            None => Err(Error::NotFound),
        }
    }

    fn dir_is_empty(&mut self, dir: Ino) -> Result<bool> {
        let depth = self.dir_depth(dir)?;
        dir::is_empty(&mut DirIo { fs: self, ino: dir }, depth)
    }

    pub(crate) fn touch_dir(&mut self, dir: Ino, now: Timestamp) -> Result<()> {
        let b = self.inode_mut(dir)?;
        inode::set_time(b, inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC, now);
        inode::set_time(b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
        Ok(())
    }

    pub(crate) fn add_links(&mut self, ino: Ino, delta: i32, now: Timestamp) -> Result<u32> {
        let b = self.inode_mut(ino)?;
        let n = (inode::links(b) as i64 + delta as i64).max(0) as u32;
        inode::set_links(b, n);
        inode::set_time(b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
        Ok(n)
    }

    pub fn lookup(&mut self, parent: Ino, name: &[u8]) -> Result<Attr> {
        self.reading(|fs| fs.lookup_inner(parent, name))
    }

    fn lookup_inner(&mut self, parent: Ino, name: &[u8]) -> Result<Attr> {
        self.require_dir(parent)?;
        if name == b"." {
            return self.attr_of(parent);
        }
        if name == b".." {
            let p = inode::pino(self.inode_ref(parent)?);
            return self.attr_of(p);
        }
        check_name(name)?;
        match self.dir_lookup(parent, name)? {
            Some((_, ino, _)) => self.attr_of(ino),
            None => Err(Error::NotFound),
        }
    }

    pub fn getattr(&mut self, ino: Ino) -> Result<Attr> {
        self.reading(|fs| fs.attr_of(ino))
    }

    pub fn setattr(&mut self, ino: Ino, set: &SetAttr, now: Timestamp) -> Result<Attr> {
        self.op(|fs| {
            fs.check_setattr_flags(ino, set, now)?;
            fs.setattr_inner(ino, set, now)
        })
    }

    pub(crate) fn setattr_inner(&mut self, ino: Ino, set: &SetAttr, now: Timestamp) -> Result<Attr> {
        self.check_writable()?;
        let kind = self.inode_kind(ino)?;
        self.touch(now);
        if set.size.is_some() && !matches!(kind, FileType::Regular) {
            return Err(if kind == FileType::Directory {
                Error::IsDir
            } else {
                Error::Invalid("size change of a special file")
            });
        }
        // The inode will be rewritten: reserve its block first (a full filesystem refuses
        // the change rather than failing the next checkpoint). A truncation to a smaller
        // size is a removal: it may use the cleaner's reserve (`reserve_for_removal`).
        let shrinks = match set.size {
            Some(size) => size < inode::size(self.inode_ref(ino)?),
            None => false,
        };
        if shrinks {
            self.reserve_for_removal(&[ino], 0, now)?;
        } else {
            self.reserve_nodes(&[ino], 0, now)?;
        }
        if let Some(size) = set.size {
            self.set_size(ino, size, now)?;
        }
        self.since_cp.attrs_changed(ino);
        let b = self.inode_mut(ino)?;
        if let Some(mode) = set.mode {
            let old = inode::mode(b) as u32;
            inode::set_mode(b, ((old & FileType::S_IFMT) | (mode & 0o7777)) as u16);
        }
        if let Some(uid) = set.uid {
            inode::set_uid(b, uid);
        }
        if let Some(gid) = set.gid {
            inode::set_gid(b, gid);
        }
        if let Some(t) = set.atime {
            inode::set_time(b, inode::OFF_ATIME_SEC, inode::OFF_ATIME_NSEC, t);
        }
        if let Some(t) = set.mtime {
            inode::set_time(b, inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC, t);
        }
        inode::set_time(b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, set.ctime.unwrap_or(now));
        self.after_change(now)?;
        self.attr_of(ino)
    }

    /// What a new inode of `kind` takes from its directory `parent`: the mode and group
    /// (a setgid directory gives new entries its group, and new subdirectories its setgid
    /// bit; the kernel has already dropped S_ISGID from a file's mode when the caller is
    /// not in that group) and the inherited attribute flags. EPERM in an immutable
    /// directory.
    fn inherited(
        &mut self,
        parent: Ino,
        kind: FileType,
        mode: u32,
        cred: Credentials,
    ) -> Result<(u32, u32, FileFlags)> {
        let flags = self.flags_for_new_inode(parent)?;
        let p = self.inode_ref(parent)?;
        Ok(if inode::mode(p) as u32 & 0o2000 != 0 {
            let m = if kind == FileType::Directory { mode | 0o2000 } else { mode };
            (m, inode::gid(p), flags)
        } else {
            (mode, cred.gid, flags)
        })
    }

    /// Creates an inode and links it under `parent`.
    fn new_inode(
        &mut self,
        parent: Ino,
        name: &[u8],
        mode: u32,
        rdev: u32,
        cred: Credentials,
        now: Timestamp,
    ) -> Result<Ino> {
        self.check_writable()?;
        self.require_live_dir(parent)?;
        if is_dot(name) {
            return Err(Error::Exists);
        }
        check_name(name)?;
        let kind = FileType::from_mode(mode).ok_or(Error::Invalid("unknown file type in mode"))?;
        if self.dir_lookup(parent, name)?.is_some() {
            return Err(Error::Exists);
        }
        let (mode, gid, flags) = self.inherited(parent, kind, mode, cred)?;
        self.touch(now);
        self.ensure_space(4, now)?;
        // The inode's id and the ids the directory insert may take, before anything changes.
        let nids = 1 + self.dir_insert_nids(parent)?;
        self.ensure_nids(nids, now)?;
        let before_inode = self.change_count;
        let ino = self.nat.alloc(|nid| nid)?;
        self.note_change();
        let mut b = zero_block();
        node::init_footer(&mut b, ino, ino, NodeType::Inode, 0);
        inode::set_mode(&mut b, ((mode & FileType::S_IFMT) | (mode & 0o7777)) as u16);
        inode::set_uid(&mut b, cred.uid);
        inode::set_gid(&mut b, gid);
        inode::set_links(&mut b, if kind == FileType::Directory { 2 } else { 1 });
        inode::set_all_times(&mut b, now);
        inode::set_generation(&mut b, self.next_generation);
        self.next_generation = self.next_generation.wrapping_add(1).max(1);
        inode::set_pino(&mut b, parent);
        inode::set_name(&mut b, name);
        inode::set_rdev(&mut b, rdev);
        inode::set_iflags(&mut b, flags.bits());
        if kind == FileType::Regular && self.inline_data {
            // A new regular file starts inline (empty): its bytes stay in the inode until a
            // write, a size change or a call that needs blocks converts it (`uninline`).
            inode::set_inline(&mut b, true);
        }
        self.nodes.insert(ino, CachedNode { block: b, dirty: true });
        self.dirty_nodes.insert(ino, ino);
        self.valid_inodes += 1;
        self.since_cp.created(ino);
        if kind == FileType::Directory {
            self.dir_parents.set(ino, parent);
        }
        let before_insert = self.change_count;
        if let Err(e) = self.dir_insert(parent, name, ino, kind) {
            // Undo: the inode was never linked. When the insert itself changed nothing (a
            // full bucket, a read that failed), the undone inode leaves nothing behind
            // either: an id freed since the checkpoint, reusable after the next one.
            let undone = self.change_count == before_insert;
            self.free_node(ino)?;
            self.valid_inodes -= 1;
            if undone {
                self.change_count = before_inode;
            }
            return Err(e);
        }
        if kind == FileType::Directory {
            self.add_links(parent, 1, now)?;
        }
        self.touch_dir(parent, now)?;
        self.ns_record_create(parent, name, ino, now).map(|()| ino)
    }

    /// Keeps a create's namespace record (when records are kept), with the attributes the
    /// new inode `ino` got; a symlink's target is added when it is written.
    fn ns_record_create(&mut self, parent: Ino, name: &[u8], ino: Ino, now: Timestamp) -> Result<()> {
        if self.ns_records {
            let b = self.inode_ref(ino)?;
            let attrs = CreateAttrs {
                mode: inode::mode(b),
                iflags: inode::iflags(b) & inode::IFLAGS_ATTR,
                uid: inode::uid(b),
                gid: inode::gid(b),
                rdev: inode::rdev(b),
                generation: inode::generation(b),
                target: Vec::new(),
            };
            self.since_cp.ns_record(NsRecord::Create { dir: parent, name: name.to_vec(), ino, attrs, time: now });
        }
        Ok(())
    }

    pub fn mknod(
        &mut self,
        parent: Ino,
        name: &[u8],
        mode: u32,
        rdev: u32,
        cred: Credentials,
        now: Timestamp,
    ) -> Result<Attr> {
        if FileType::from_mode(mode) == Some(FileType::Directory) {
            return self.mkdir(parent, name, mode, cred, now);
        }
        if FileType::from_mode(mode) == Some(FileType::Symlink) {
            // A symlink has a target: symlink() makes it (the kernel's mknod: EINVAL).
            return Err(Error::Invalid("mknod of a symlink"));
        }
        let mode = if mode & FileType::S_IFMT == 0 { mode | FileType::Regular.mode_bits() } else { mode };
        self.op(|fs| {
            let ino = fs.new_inode(parent, name, mode, rdev, cred, now)?;
            fs.after_change(now)?;
            fs.attr_of(ino)
        })
    }

    pub fn create(&mut self, parent: Ino, name: &[u8], perm: u32, cred: Credentials, now: Timestamp) -> Result<Attr> {
        self.mknod(parent, name, FileType::Regular.mode_bits() | (perm & 0o7777), 0, cred, now)
    }

    pub fn mkdir(&mut self, parent: Ino, name: &[u8], perm: u32, cred: Credentials, now: Timestamp) -> Result<Attr> {
        self.op(|fs| {
            let ino = fs.new_inode(parent, name, FileType::Directory.mode_bits() | (perm & 0o7777), 0, cred, now)?;
            fs.after_change(now)?;
            fs.attr_of(ino)
        })
    }

    pub fn symlink(
        &mut self,
        parent: Ino,
        name: &[u8],
        target: &[u8],
        cred: Credentials,
        now: Timestamp,
    ) -> Result<Attr> {
        self.op(|fs| fs.symlink_inner(parent, name, target, cred, now))
    }

    fn symlink_inner(
        &mut self,
        parent: Ino,
        name: &[u8],
        target: &[u8],
        cred: Credentials,
        now: Timestamp,
    ) -> Result<Attr> {
        if target.is_empty() || target.len() >= BLOCK_SIZE || target.contains(&0) {
            return Err(if target.len() >= BLOCK_SIZE {
                Error::NameTooLong
            } else {
                Error::Invalid("empty symlink target")
            });
        }
        // The target is written after the inode exists: reserve for both first (the inode,
        // its dentry, the target block, the margins of both), so that the write cannot fail
        // for room and leave a symlink without a target.
        self.check_writable()?;
        self.ensure_space(8, now)?;
        let nids = 1 + self.dir_insert_nids(parent)?;
        self.ensure_nids(nids, now)?;
        let ino = self.new_inode(parent, name, FileType::Symlink.mode_bits() | 0o777, 0, cred, now)?;
        // The target lies in the inode's own address array: no node, and the room was
        // reserved above, so no checkpoint can fall between the name and its target.
        if let Err(e) = self.write_fill(ino, 0, target, now) {
            // Only an I/O error gets here: the filesystem is shutting down.
            return self.fail(e);
        }
        if self.ns_records {
            self.since_cp.ns_record_symlink_target(ino, target);
        }
        self.after_change(now)?;
        self.attr_of(ino)
    }

    pub fn readlink(&mut self, ino: Ino) -> Result<Vec<u8>> {
        self.reading(|fs| fs.readlink_inner(ino))
    }

    fn readlink_inner(&mut self, ino: Ino) -> Result<Vec<u8>> {
        if self.inode_kind(ino)? != FileType::Symlink {
            return Err(Error::Invalid("not a symlink"));
        }
        let size = inode::size(self.inode_ref(ino)?) as usize;
        if size >= BLOCK_SIZE {
            return Err(Error::corrupt(self.nat_addr(ino), "symlink longer than a block"));
        }
        let mut buf = alloc::vec![0u8; size];
        let n = self.read(ino, 0, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }

    /// Drops one link of `ino`; destroys it when no link and no open handle is left.
    fn drop_link(&mut self, ino: Ino, is_dir: bool, now: Timestamp) -> Result<()> {
        let left = if is_dir {
            // A removed directory loses its "." link and its entry in the parent.
            inode::set_links(self.inode_mut(ino)?, 0);
            0
        } else {
            self.add_links(ino, -1, now)?
        };
        if left > 0 {
            // One of several names went away: roll-forward could not express it.
            self.since_cp.relinked(ino);
        }
        if left == 0 {
            if self.open_counts.get(&ino).copied().unwrap_or(0) > 0 {
                self.note_change();
                self.orphans.insert(ino);
            } else {
                self.evict_inode(ino)?;
            }
        }
        Ok(())
    }

    /// What `ino`'s recorded name becomes once its entry `dir/name` is removed (unlink, or
    /// a rename over it), decided before the removal changes anything (invariant 7: it reads
    /// the inode and maybe a directory). See `other_names.rs`.
    fn name_left_after_removing(&mut self, ino: Ino, dir: Ino, name: &[u8]) -> Result<NameLeft> {
        let Some((other_dir, other_name)) = self.other_names.get(ino) else {
            return Ok(NameLeft::Unchanged);
        };
        let b = self.inode_ref(ino)?;
        let links = inode::links(b);
        let recorded = inode::pino(b) == dir && inode::name(b) == name;
        if recorded
            && links >= 2
            && (other_dir, other_name.as_slice()) != (dir, name)
            && self.records_its_entry(ino, other_dir, &other_name)?
        {
            return Ok(NameLeft::Other(other_dir, other_name));
        }
        // Down to one link: the name it records is its only one, or not known; either way
        // the other name has nothing more to give.
        Ok(if links <= 2 { NameLeft::Forget } else { NameLeft::Unchanged })
    }

    /// After one of `ino`'s names went (`drop_link`): applies what
    /// [`Self::name_left_after_removing`] decided. Changes only what is cached: the inode,
    /// dirty since `drop_link` changed its link count, when a name is put back.
    fn record_name_left(&mut self, ino: Ino, left: NameLeft) -> Result<()> {
        match left {
            NameLeft::Unchanged => {}
            NameLeft::Forget => self.other_names.forget(ino),
            NameLeft::Other(dir, name) => {
                let b = self.inode_mut(ino)?;
                inode::set_pino(b, dir);
                inode::set_name(b, &name);
                self.other_names.forget(ino);
            }
        }
        Ok(())
    }

    /// Reads what dropping one link of `ino` will read: its inode and, when that link is
    /// its last and no handle keeps it (it will be evicted), its tree. Changes nothing.
    fn prefetch_victim(&mut self, ino: Ino, is_dir: bool) -> Result<()> {
        if crate::mutant!("mutant-eio-change-before-read") {
            return Ok(());
        }
        let links = inode::links(self.inode_ref(ino)?);
        let last = is_dir || links <= 1;
        if last && self.open_counts.get(&ino).copied().unwrap_or(0) == 0 {
            self.prefetch_for_evict(ino)?;
        }
        Ok(())
    }

    pub fn unlink(&mut self, parent: Ino, name: &[u8], now: Timestamp) -> Result<()> {
        self.op(|fs| fs.unlink_inner(parent, name, now))
    }

    pub(crate) fn unlink_inner(&mut self, parent: Ino, name: &[u8], now: Timestamp) -> Result<()> {
        self.check_writable()?;
        self.require_dir(parent)?;
        if is_dot(name) {
            return Err(Error::Invalid("cannot unlink . or .."));
        }
        check_name(name)?;
        let (_, ino, kind) = self.dir_lookup(parent, name)?.ok_or(Error::NotFound)?;
        self.refuse_protected(parent)?;
        self.refuse_protected(ino)?;
        if kind == FileType::Directory {
            return Err(Error::IsDir);
        }
        self.touch(now);
        self.check_orphan_room(ino)?;
        self.reserve_for_removal(&[parent, ino], 1, now)?;
        // Everything the change reads, before its first change (invariant 7).
        self.prefetch_victim(ino, false)?;
        let name_left = self.name_left_after_removing(ino, parent, name)?;
        self.dir_remove(parent, name)?;
        self.touch_dir(parent, now)?;
        self.drop_link(ino, false, now)?;
        self.record_name_left(ino, name_left)?;
        if self.ns_records {
            self.since_cp.ns_record(NsRecord::Unlink {
                dir: parent,
                name: name.to_vec(),
                ino,
                rmdir: false,
                time: now,
            });
        }
        self.after_change(now)
    }

    pub fn rmdir(&mut self, parent: Ino, name: &[u8], now: Timestamp) -> Result<()> {
        self.op(|fs| fs.rmdir_inner(parent, name, now))
    }

    pub(crate) fn rmdir_inner(&mut self, parent: Ino, name: &[u8], now: Timestamp) -> Result<()> {
        self.check_writable()?;
        self.require_dir(parent)?;
        if name == b"." {
            return Err(Error::Invalid("cannot remove ."));
        }
        if name == b".." {
            return Err(Error::NotEmpty);
        }
        check_name(name)?;
        let (_, ino, kind) = self.dir_lookup(parent, name)?.ok_or(Error::NotFound)?;
        self.refuse_protected(parent)?;
        self.refuse_protected(ino)?;
        if kind != FileType::Directory {
            return Err(Error::NotDir);
        }
        if !self.dir_is_empty(ino)? {
            return Err(Error::NotEmpty);
        }
        self.touch(now);
        self.check_orphan_room(ino)?;
        self.reserve_for_removal(&[parent, ino], 1, now)?;
        self.prefetch_victim(ino, true)?;
        self.dir_remove(parent, name)?;
        self.add_links(parent, -1, now)?;
        self.touch_dir(parent, now)?;
        self.drop_link(ino, true, now)?;
        if self.ns_records {
            self.since_cp.ns_record(NsRecord::Unlink { dir: parent, name: name.to_vec(), ino, rmdir: true, time: now });
        }
        self.after_change(now)
    }

    pub fn link(&mut self, ino: Ino, new_parent: Ino, new_name: &[u8], now: Timestamp) -> Result<Attr> {
        self.op(|fs| fs.link_inner(ino, new_parent, new_name, now))
    }

    pub(crate) fn link_inner(&mut self, ino: Ino, new_parent: Ino, new_name: &[u8], now: Timestamp) -> Result<Attr> {
        self.check_writable()?;
        self.require_live_dir(new_parent)?;
        if is_dot(new_name) {
            return Err(Error::Exists);
        }
        check_name(new_name)?;
        let kind = self.inode_kind(ino)?;
        if kind == FileType::Directory {
            return Err(Error::NotPermitted);
        }
        self.refuse_flags(new_parent, FileFlags::IMMUTABLE)?;
        self.refuse_protected(ino)?;
        match inode::links(self.inode_ref(ino)?) {
            // An open file with no name left gets none back (the kernel: unless O_TMPFILE).
            0 => return Err(Error::NotFound),
            n if n >= LINK_MAX => return Err(Error::TooManyLinks),
            _ => {}
        }
        if self.dir_lookup(new_parent, new_name)?.is_some() {
            return Err(Error::Exists);
        }
        self.touch(now);
        self.ensure_space(2, now)?;
        self.reserve_nodes(&[ino, new_parent], 0, now)?;
        let nids = self.dir_insert_nids(new_parent)?;
        self.ensure_nids(nids, now)?;
        self.dir_insert(new_parent, new_name, ino, kind)?;
        self.add_links(ino, 1, now)?;
        self.since_cp.relinked(ino);
        let b = self.inode_mut(ino)?;
        // The name recorded until now is (or was) another of the file's: kept, so that an
        // unlink of the new one can put it back (other_names.rs).
        let (old_parent, old_name) = (inode::pino(b), inode::name(b).to_vec());
        inode::set_pino(b, new_parent);
        inode::set_name(b, new_name);
        self.other_names.note(ino, old_parent, &old_name);
        self.touch_dir(new_parent, now)?;
        if self.ns_records {
            self.since_cp.ns_record(NsRecord::Link { dir: new_parent, name: new_name.to_vec(), ino, time: now });
        }
        self.after_change(now)?;
        self.attr_of(ino)
    }

    /// True when `dir` is `ancestor` or lies below it (walks parent links, bounded).
    fn is_within(&mut self, dir: Ino, ancestor: Ino) -> Result<bool> {
        match self.walk_up(dir, |d| d == ancestor)? {
            Walk::Hit => Ok(true),
            Walk::Root => Ok(false),
            Walk::Lost => Err(Error::corrupt(self.nat_addr(dir), "directory parent chain leaves the tree")),
        }
    }

    /// Walks from directory `dir` up through recorded parents until `hit` accepts one
    /// (`dir` included), the root is reached, or an inode on the way is not a live
    /// directory. Bounded by the node ids. Each step takes the parent from the in-memory
    /// record (`dir_parents`, see `parents.rs`): one array load and no device read, however
    /// deep the tree and however small the node cache; a directory not recorded yet (after
    /// a mount) is read once and recorded.
    pub(crate) fn walk_up(&mut self, dir: Ino, hit: impl Fn(Ino) -> bool) -> Result<Walk> {
        let mut cur = dir;
        for _ in 0..self.nat.nid_count() {
            if hit(cur) {
                return Ok(Walk::Hit);
            }
            if cur == ROOT_INO {
                return Ok(Walk::Root);
            }
            cur = match self.dir_parents.get(cur) {
                // Recorded: a live directory whose inode names this parent.
                Some(parent) => parent,
                None => {
                    // Read once, and not kept in the node cache unless it was there: a first
                    // walk up a chain of 100,000 directories would otherwise fill the cache
                    // with all of them (400 MB) until the call ends.
                    let cached = self.nodes.contains_key(&cur);
                    if self.check_ino(cur).is_err() || self.inode_kind(cur)? != FileType::Directory {
                        return Ok(Walk::Lost);
                    }
                    let parent = inode::pino(self.inode_ref(cur)?);
                    if !cached {
                        self.nodes.remove(&cur);
                    }
                    self.dir_parents.set(cur, parent);
                    parent
                }
            };
        }
        Err(Error::corrupt(self.nat_addr(dir), "directory parent chain does not reach the root"))
    }

    pub fn rename(
        &mut self,
        parent: Ino,
        name: &[u8],
        new_parent: Ino,
        new_name: &[u8],
        flags: RenameFlags,
        now: Timestamp,
    ) -> Result<()> {
        self.op(|fs| {
            fs.check_rename_flags(parent, name, new_parent, new_name)?;
            fs.rename_inner(parent, name, new_parent, new_name, flags, now)
        })
    }

    pub(crate) fn rename_inner(
        &mut self,
        parent: Ino,
        name: &[u8],
        new_parent: Ino,
        new_name: &[u8],
        flags: RenameFlags,
        now: Timestamp,
    ) -> Result<()> {
        self.check_writable()?;
        if flags.contains(RenameFlags::NOREPLACE | RenameFlags::EXCHANGE) || !RenameFlags::all().contains(flags) {
            return Err(Error::Invalid("bad rename flags"));
        }
        self.require_dir(parent)?;
        self.require_live_dir(new_parent)?;
        if is_dot(name) || is_dot(new_name) {
            return Err(Error::Invalid("cannot rename . or .."));
        }
        check_name(name)?;
        check_name(new_name)?;
        let (_, src, src_kind) = self.dir_lookup(parent, name)?.ok_or(Error::NotFound)?;
        let dst = self.dir_lookup(new_parent, new_name)?;
        // A directory may not move below itself. Within its own directory it cannot (its
        // parent is not below it), so only a move to another directory walks up, as the
        // kernel's own check (`lock_rename`) does.
        if src_kind == FileType::Directory && parent != new_parent && self.is_within(new_parent, src)? {
            return Err(Error::Invalid("cannot move a directory into itself"));
        }
        self.touch(now);
        // Everything a rename rewrites, reserved before it changes anything: both parents'
        // inodes and a dentry block in each (a new one in the target for a plain move),
        // the source and the target inode.
        let dst_ino = dst.as_ref().map(|d| d.1).unwrap_or(NULL_NID);
        if let Some((_, d, _)) = dst.as_ref() {
            if !flags.contains(RenameFlags::EXCHANGE) && !flags.contains(RenameFlags::NOREPLACE) && *d != src {
                self.check_orphan_room(*d)?;
            }
        }
        if dst.is_none() {
            self.ensure_space(2, now)?;
            let nids = self.dir_insert_nids(new_parent)?;
            self.ensure_nids(nids, now)?;
        }
        self.reserve_nodes(&[parent, new_parent, src, dst_ino], 2, now)?;
        let target = (new_parent, new_name);
        let victim_name_left = self.rename_reads(src, dst.as_ref().map(|d| (d.1, d.2)), target, flags)?;
        if flags.contains(RenameFlags::EXCHANGE) {
            let (dst_loc, dst_ino, dst_kind) = dst.ok_or(Error::NotFound)?;
            if dst_kind == FileType::Directory && parent != new_parent && self.is_within(parent, dst_ino)? {
                return Err(Error::Invalid("cannot move a directory into itself"));
            }
            let (src_loc, _, _) = self.dir_lookup(parent, name)?.ok_or(Error::NotFound)?;
            self.since_cp.name_removed(parent, name);
            self.since_cp.name_removed(new_parent, new_name);
            dir::set_entry(&mut DirIo { fs: self, ino: parent }, src_loc, dst_ino, dst_kind)?;
            dir::set_entry(&mut DirIo { fs: self, ino: new_parent }, dst_loc, src, src_kind)?;
            if parent != new_parent {
                if src_kind == FileType::Directory {
                    self.add_links(parent, -1, now)?;
                    self.add_links(new_parent, 1, now)?;
                }
                if dst_kind == FileType::Directory {
                    self.add_links(new_parent, -1, now)?;
                    self.add_links(parent, 1, now)?;
                }
            }
            self.set_parent_name(src, new_parent, new_name, now)?;
            self.set_parent_name(dst_ino, parent, name, now)?;
            self.renamed(parent, name, src, new_parent, new_name, dst_ino, true, now)?;
            return self.after_change(now);
        }
        if let Some((dst_loc, dst_ino, dst_kind)) = dst {
            if flags.contains(RenameFlags::NOREPLACE) {
                return Err(Error::Exists);
            }
            if dst_ino == src {
                // Two names of one inode: POSIX says do nothing.
                return Ok(());
            }
            match (src_kind == FileType::Directory, dst_kind == FileType::Directory) {
                (true, false) => return Err(Error::NotDir),
                (false, true) => return Err(Error::IsDir),
                (true, true) if !self.dir_is_empty(dst_ino)? => return Err(Error::NotEmpty),
                _ => {}
            }
            self.since_cp.name_removed(new_parent, new_name);
            dir::set_entry(&mut DirIo { fs: self, ino: new_parent }, dst_loc, src, src_kind)?;
            self.dir_remove(parent, name)?;
            if dst_kind == FileType::Directory {
                // The replaced directory's ".." no longer counts toward new_parent.
                self.add_links(new_parent, -1, now)?;
            }
            self.drop_link(dst_ino, dst_kind == FileType::Directory, now)?;
            self.record_name_left(dst_ino, victim_name_left)?;
        } else {
            self.dir_insert(new_parent, new_name, src, src_kind)?;
            self.dir_remove(parent, name)?;
        }
        if src_kind == FileType::Directory && parent != new_parent {
            self.add_links(parent, -1, now)?;
            self.add_links(new_parent, 1, now)?;
        }
        self.set_parent_name(src, new_parent, new_name, now)?;
        self.renamed(parent, name, src, new_parent, new_name, dst_ino, false, now)?;
        self.after_change(now)
    }

    /// Everything a rename of `src` over `target` (which holds `dst`, if anything) reads
    /// before its first change (invariant 7): the moved inode, the replaced one and, if it
    /// dies here, its tree; and what the replaced file records once its entry there goes.
    fn rename_reads(
        &mut self,
        src: Ino,
        dst: Option<(Ino, FileType)>,
        target: (Ino, &[u8]),
        flags: RenameFlags,
    ) -> Result<NameLeft> {
        if !crate::mutant!("mutant-eio-change-before-read") {
            self.inode_ref(src)?;
            if let Some((d, d_kind)) = dst {
                if flags.contains(RenameFlags::EXCHANGE) || d == src {
                    self.inode_ref(d)?;
                } else {
                    self.prefetch_victim(d, d_kind == FileType::Directory)?;
                }
            }
        }
        match dst {
            Some((d, kind))
                if kind != FileType::Directory
                    && !flags.intersects(RenameFlags::EXCHANGE | RenameFlags::NOREPLACE)
                    && d != src =>
            {
                self.name_left_after_removing(d, target.0, target.1)
            }
            _ => Ok(NameLeft::Unchanged),
        }
    }

    /// The end of a rename of `dir/name` (inode `ino`) to `dir2/name2`, which held `ino2`
    /// (0: nothing): both directories' times, and the namespace record when records are
    /// kept.
    #[allow(clippy::too_many_arguments)]
    fn renamed(
        &mut self,
        dir: Ino,
        name: &[u8],
        ino: Ino,
        dir2: Ino,
        name2: &[u8],
        ino2: Ino,
        exchange: bool,
        now: Timestamp,
    ) -> Result<()> {
        self.touch_dir(dir, now)?;
        self.touch_dir(dir2, now)?;
        if self.ns_records {
            self.since_cp.ns_record(NsRecord::Rename {
                dir,
                name: name.to_vec(),
                ino,
                dir2,
                name2: name2.to_vec(),
                ino2,
                exchange,
                time: now,
            });
        }
        Ok(())
    }

    /// Records an inode's parent and name (".." for directories; the name roll-forward
    /// restores for dentry-marked inodes).
    fn set_parent_name(&mut self, ino: Ino, parent: Ino, name: &[u8], now: Timestamp) -> Result<()> {
        // A renamed inode's old name is in the checkpoint: only a checkpoint can move it.
        self.since_cp.relinked(ino);
        if self.inode_kind(ino)? == FileType::Directory {
            // Files below it are found by their new path only after a checkpoint.
            self.since_cp.dir_renamed(ino);
            self.dir_parents.set(ino, parent);
        }
        let b = self.inode_mut(ino)?;
        inode::set_pino(b, parent);
        inode::set_name(b, name);
        inode::set_time(b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
        Ok(())
    }

    /// Lists entries after `cookie` (0 = from the start, including "." and ".."), calling
    /// `f` for each until it returns false.
    pub fn readdir(&mut self, ino: Ino, cookie: u64, f: &mut dyn FnMut(DirEntry) -> bool) -> Result<()> {
        self.reading(|fs| fs.readdir_inner(ino, cookie, f))
    }

    fn readdir_inner(&mut self, ino: Ino, cookie: u64, f: &mut dyn FnMut(DirEntry) -> bool) -> Result<()> {
        self.require_dir(ino)?;
        if cookie < 1 && !f(DirEntry { ino, kind: FileType::Directory, name: b".".to_vec(), cookie: 1 }) {
            return Ok(());
        }
        if cookie < 2 {
            let p = inode::pino(self.inode_ref(ino)?);
            if !f(DirEntry { ino: p, kind: FileType::Directory, name: b"..".to_vec(), cookie: 2 }) {
                return Ok(());
            }
        }
        let depth = self.dir_depth(ino)?;
        let after = cookie.max(2);
        dir::iterate(&mut DirIo { fs: self, ino }, depth, after, &mut |e: dir::Entry| {
            f(DirEntry { ino: e.ino, kind: e.kind, name: e.name, cookie: e.cookie })
        })
    }

    // ---- xattrs ---------------------------------------------------------------------

    fn xattrs(&mut self, ino: Ino) -> Result<xattr::XattrMap> {
        let x = inode::xattr_nid(self.inode_ref(ino)?);
        if x == NULL_NID {
            return Ok(xattr::XattrMap::new());
        }
        let addr = self.nat_addr(x);
        let b = self.node_ref(x)?;
        if node::footer_type(b) != Some(NodeType::Xattr) || node::footer_ino(b) != ino {
            return Err(Error::corrupt(addr, "xattr node of the wrong type or owner"));
        }
        xattr::decode(b, addr)
    }

    pub(crate) fn replace_xattrs(&mut self, ino: Ino, m: &xattr::XattrMap) -> Result<()> {
        let now = Timestamp::new(self.now_sec as i64, 0);
        let ctime = inode::time(self.inode_ref(ino)?, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC);
        self.store_xattrs(ino, m, now)?;
        inode::set_time(self.inode_mut(ino)?, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, ctime);
        Ok(())
    }

    /// Recovery: links `ino` under `name` in `parent`.
    pub(crate) fn recovery_link(&mut self, parent: Ino, name: &[u8], ino: Ino, kind: FileType) -> Result<()> {
        self.dir_insert(parent, name, ino, kind)
    }

    fn store_xattrs(&mut self, ino: Ino, m: &xattr::XattrMap, now: Timestamp) -> Result<()> {
        let x = inode::xattr_nid(self.inode_ref(ino)?);
        if m.is_empty() {
            if x != NULL_NID {
                self.free_node(x)?;
                inode::set_xattr_nid(self.inode_mut(ino)?, NULL_NID);
            }
        } else {
            let x = if x == NULL_NID {
                if crate::mutant!("mutant-cp-in-recovery") {
                    // Mutant: the old place of the reservation, which roll-forward reaches
                    // through `replace_xattrs` (it may clean and checkpoint).
                    self.ensure_space(2, now)?;
                }
                let nid = self.new_node(ino, NodeType::Xattr, 0)?;
                inode::set_xattr_nid(self.inode_mut(ino)?, nid);
                nid
            } else {
                x
            };
            let mut tmp = zero_block();
            xattr::encode(m, &mut tmp)?;
            let b = self.node_mut(x)?;
            b[..xattr::XATTR_PAYLOAD].copy_from_slice(&tmp[..xattr::XATTR_PAYLOAD]);
        }
        self.since_cp.attrs_changed(ino);
        let b = self.inode_mut(ino)?;
        inode::set_time(b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
        Ok(())
    }

    pub fn getxattr(&mut self, ino: Ino, name: &[u8]) -> Result<Vec<u8>> {
        xattr::check_args(name, 0)?;
        self.reading(|fs| fs.xattrs(ino)?.remove(name).ok_or(Error::NoData))
    }

    /// Whether `ino` has extended attribute `name`: no read beyond the inode when it has no
    /// attributes at all (a driver asks before every write whether file capabilities must
    /// be removed).
    pub fn has_xattr(&mut self, ino: Ino, name: &[u8]) -> Result<bool> {
        self.reading(|fs| {
            if inode::xattr_nid(fs.inode_ref(ino)?) == NULL_NID {
                return Ok(false);
            }
            Ok(fs.xattrs(ino)?.contains_key(name))
        })
    }

    pub fn setxattr(&mut self, ino: Ino, name: &[u8], value: &[u8], mode: XattrSetMode, now: Timestamp) -> Result<()> {
        self.op(|fs| {
            fs.refuse_protected(ino)?;
            fs.setxattr_inner(ino, name, value, mode, now)
        })
    }

    fn setxattr_inner(
        &mut self,
        ino: Ino,
        name: &[u8],
        value: &[u8],
        mode: XattrSetMode,
        now: Timestamp,
    ) -> Result<()> {
        self.check_writable()?;
        xattr::check_args(name, value.len())?;
        let mut m = self.xattrs(ino)?;
        let exists = m.contains_key(name);
        match mode {
            XattrSetMode::Create if exists => return Err(Error::Exists),
            XattrSetMode::Replace if !exists => return Err(Error::NoData),
            _ => {}
        }
        self.touch(now);
        m.insert(name.to_vec(), value.to_vec());
        if xattr::encoded_len(&m) > xattr::XATTR_PAYLOAD {
            return Err(Error::NoSpace);
        }
        // The inode and the xattr node (a new one on the first xattr) will be written.
        let x = inode::xattr_nid(self.inode_ref(ino)?);
        if x == NULL_NID {
            self.ensure_space_for(2, 1, now)?;
            self.ensure_nids(1, now)?;
        } else {
            self.reserve_nodes(&[ino, x], 0, now)?;
        }
        self.store_xattrs(ino, &m, now)?;
        self.after_change(now)
    }

    pub fn listxattr(&mut self, ino: Ino) -> Result<Vec<Vec<u8>>> {
        self.reading(|fs| Ok(fs.xattrs(ino)?.into_keys().collect()))
    }

    pub fn removexattr(&mut self, ino: Ino, name: &[u8], now: Timestamp) -> Result<()> {
        self.op(|fs| {
            fs.refuse_protected(ino)?;
            fs.removexattr_inner(ino, name, now)
        })
    }

    pub(crate) fn removexattr_inner(&mut self, ino: Ino, name: &[u8], now: Timestamp) -> Result<()> {
        self.check_writable()?;
        xattr::check_args(name, 0)?;
        let mut m = self.xattrs(ino)?;
        if m.remove(name).is_none() {
            return Err(Error::NoData);
        }
        self.touch(now);
        let x = inode::xattr_nid(self.inode_ref(ino)?);
        self.reserve_for_removal(&[ino, x], 0, now)?;
        self.store_xattrs(ino, &m, now)?;
        self.after_change(now)
    }

    /// Refuses (ENOSPC, changing nothing) to unlink the last name of an open file when the
    /// checkpoint has no room left for another orphan. The room is sized at mkfs for every
    /// node id to be an orphan (`Geometry::orphan_capacity`), so only images made before
    /// that can meet it; it never turns into a failed checkpoint.
    fn check_orphan_room(&mut self, ino: Ino) -> Result<()> {
        let open = self.open_counts.get(&ino).copied().unwrap_or(0) > 0;
        if !open || self.orphans.contains(&ino) {
            return Ok(());
        }
        let last_link = inode::links(self.inode_ref(ino)?) <= 1 || self.inode_kind(ino)? == FileType::Directory;
        if last_link && self.orphans.len() as u64 >= self.orphan_capacity() {
            self.stats.enospc_returned += 1;
            return Err(Error::NoSpace);
        }
        Ok(())
    }

    // ---- handles --------------------------------------------------------------------

    /// A file handle was opened on `ino` (keeps an unlinked file alive until released).
    pub fn open(&mut self, ino: Ino) -> Result<()> {
        self.check_ino(ino)?;
        *self.open_counts.entry(ino).or_insert(0) += 1;
        Ok(())
    }

    /// A handle was closed; an unlinked inode dies with its last handle.
    pub fn release(&mut self, ino: Ino, now: Timestamp) -> Result<()> {
        self.op(|fs| fs.release_inner(ino, now))
    }

    fn release_inner(&mut self, ino: Ino, now: Timestamp) -> Result<()> {
        let n = self.open_counts.get(&ino).copied().unwrap_or(0);
        if n <= 1 {
            self.open_counts.remove(&ino);
            if self.orphans.contains(&ino) && !self.read_only {
                // The orphan stays listed until its eviction is done (`evict_inode` takes it
                // off the list last): an eviction that fails on a read before freeing
                // anything leaves it listed, so the next checkpoint still names it and the
                // next mount (or the unmount) evicts it; one that fails half way shuts the
                // filesystem down (`op`) with the last checkpoint's list intact.
                self.prefetch_for_evict(ino)?;
                self.evict_inode(ino)?;
                self.after_change(now)?;
            }
        } else {
            self.open_counts.insert(ino, n - 1);
        }
        Ok(())
    }
}
