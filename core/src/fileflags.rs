//! File attribute flags (`chattr`/`lsattr`, FS_IOC_GETFLAGS/SETFLAGS): immutable,
//! append-only, no-dump and no-atime, kept in the inode's `iflags` (FORMAT.md, *Inode*),
//! and the checks every operation makes against them. DESIGN.md, *File attribute flags*.
//!
//! The rules are ext4's (the VFS's `may_delete`, `notify_change`, `xattr_permission`,
//! `vfs_fallocate`, and ext4's own write and setflags checks), enforced here rather than by
//! the kernel: a FUSE inode carries no S_IMMUTABLE or S_APPEND, so the kernel lets every
//! such call through to the filesystem. Every refusal is EPERM and changes nothing.
//!
//! | flag | refused |
//! |---|---|
//! | immutable | a write, a size change, fallocate, a mode, owner or time change (a touch too), an xattr change, unlink, rename of it or over it, a hard link to it; in a directory: any entry added, removed or renamed |
//! | append-only | a write anywhere but at the end, a size change, a hole punch or zero range, a mode, owner or explicit time change (a touch is allowed), an xattr change, unlink, rename of it or over it, a hard link to it; in a directory: an entry removed or renamed away or over (entries may be added) |
//!
//! Only a caller the driver says may (CAP_LINUX_IMMUTABLE) sets or clears immutable or
//! append-only; a file that is and stays immutable has no other flag changed
//! (ext4's `ext4_ioctl_check_immutable`). New inodes inherit no-dump and no-atime from
//! their directory, as in ext4. rollfs never updates atime, so no-atime changes nothing.

use crate::error::{Error, Result};
use crate::fs::{Attr, Filesystem, SetAttr, Timestamp};
use crate::node::{inode, FileType};
use crate::{BlockDevice, Ino};

bitflags::bitflags! {
    /// A file's attribute flags, with their `iflags` bit values (not Linux's `FS_*_FL`:
    /// the driver translates).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct FileFlags: u16 {
        /// No change to the file at all (`chattr +i`).
        const IMMUTABLE = inode::IFLAG_IMMUTABLE;
        /// Writes at the end only, no removal (`chattr +a`).
        const APPEND = inode::IFLAG_APPEND;
        /// Not to be backed up by dump(8) (`chattr +d`): stored only.
        const NODUMP = inode::IFLAG_NODUMP;
        /// No atime updates (`chattr +A`): stored only (rollfs updates no atime).
        const NOATIME = inode::IFLAG_NOATIME;
    }
}

impl FileFlags {
    /// The flags only a caller with CAP_LINUX_IMMUTABLE may set or clear, which protect
    /// the file from removal and change.
    pub const PROTECTING: FileFlags = FileFlags::IMMUTABLE.union(FileFlags::APPEND);
    /// The flags a new inode takes from its directory (ext4's `EXT4_FL_INHERITED`, of
    /// the flags rollfs has).
    pub const INHERITED: FileFlags = FileFlags::NODUMP.union(FileFlags::NOATIME);
}

impl<D: BlockDevice> Filesystem<D> {
    /// The attribute flags of `ino`.
    pub fn file_flags(&mut self, ino: Ino) -> Result<FileFlags> {
        self.reading(|fs| fs.flags_of(ino))
    }

    pub(crate) fn flags_of(&mut self, ino: Ino) -> Result<FileFlags> {
        Ok(FileFlags::from_bits_truncate(inode::iflags(self.inode_ref(ino)?)))
    }

    /// Sets the attribute flags of `ino` (a regular file or a directory) to `flags`, and
    /// its ctime to `now`. `may_protect`: the caller may set or clear
    /// [`FileFlags::PROTECTING`] (CAP_LINUX_IMMUTABLE; who owns the file is the driver's
    /// check). Durable at the next checkpoint or fsync of the file, as a chmod is.
    pub fn set_file_flags(&mut self, ino: Ino, flags: FileFlags, may_protect: bool, now: Timestamp) -> Result<Attr> {
        self.op(|fs| fs.set_flags_inner(ino, flags, may_protect, now))
    }

    fn set_flags_inner(&mut self, ino: Ino, flags: FileFlags, may_protect: bool, now: Timestamp) -> Result<Attr> {
        self.check_writable()?;
        if !matches!(self.inode_kind(ino)?, FileType::Regular | FileType::Directory) {
            return Err(Error::NotSupported("attribute flags on a file that is not a regular file or directory"));
        }
        let old = self.flags_of(ino)?;
        let changed = old.symmetric_difference(flags);
        if changed.intersects(FileFlags::PROTECTING) && !may_protect {
            return Err(Error::NotPermitted);
        }
        if old.contains(FileFlags::IMMUTABLE) && flags.contains(FileFlags::IMMUTABLE) && !changed.is_empty() {
            // An immutable file changes nothing, its other flags included, until it is not.
            return Err(Error::NotPermitted);
        }
        self.touch(now);
        self.reserve_nodes(&[ino], 0, now)?;
        self.since_cp.attrs_changed(ino);
        let b = self.inode_mut(ino)?;
        inode::set_iflags(b, (inode::iflags(b) & !inode::IFLAGS_ATTR) | flags.bits());
        inode::set_time(b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, now);
        self.after_change(now)?;
        self.attr_of(ino)
    }

    /// EPERM when `ino` has any of `which`.
    pub(crate) fn refuse_flags(&mut self, ino: Ino, which: FileFlags) -> Result<()> {
        // Roll-forward replays namespace records of operations that were allowed when they
        // ran; a flag on the replayed tree may be one cleared since (setattr is no record).
        if !self.recovering && self.flags_of(ino)?.intersects(which) {
            return Err(Error::NotPermitted);
        }
        Ok(())
    }

    /// EPERM when `ino` is immutable or append-only: it may not be unlinked, renamed,
    /// replaced, linked, resized, chmod'ed, chown'ed or have its xattrs changed.
    pub(crate) fn refuse_protected(&mut self, ino: Ino) -> Result<()> {
        self.refuse_flags(ino, FileFlags::PROTECTING)
    }

    /// A write of `ino` at `offset`: EPERM when it is immutable, or append-only and the
    /// write does not start at its end (O_APPEND writes do: the kernel places them there).
    pub(crate) fn check_write_at(&mut self, ino: Ino, offset: u64) -> Result<()> {
        let flags = self.flags_of(ino)?;
        if flags.contains(FileFlags::IMMUTABLE)
            || (flags.contains(FileFlags::APPEND) && offset != self.attr_of(ino)?.size)
        {
            return Err(Error::NotPermitted);
        }
        Ok(())
    }

    /// Whether a write of `ino` at `at` (Some), or a change of its bytes that is not an
    /// append (None: a hole punch, a zero range), would be refused (EPERM). Changes nothing:
    /// a driver asks before what precedes the call (the privilege removal of a write), so
    /// that a refused call changes nothing at all.
    pub fn check_change(&mut self, ino: Ino, at: Option<u64>) -> Result<()> {
        self.reading(|fs| match at {
            Some(offset) => fs.check_write_at(ino, offset),
            None => fs.refuse_protected(ino),
        })
    }

    /// Whether `ino` may be opened as asked: EPERM for an immutable file opened for writing
    /// or truncation, and for an append-only one opened for writing without O_APPEND or
    /// with O_TRUNC, as Linux's `may_open` refuses them. A FUSE driver must ask at open:
    /// the kernel does not know the flags, and a handle it let open would find every write
    /// refused only when it is made. Changes nothing.
    pub fn check_open(&mut self, ino: Ino, write: bool, append: bool, truncate: bool) -> Result<()> {
        self.reading(|fs| {
            let flags = fs.flags_of(ino)?;
            let refused = (flags.contains(FileFlags::IMMUTABLE) && (write || truncate))
                || (flags.contains(FileFlags::APPEND) && ((write && !append) || truncate));
            if refused {
                return Err(Error::NotPermitted);
            }
            Ok(())
        })
    }

    /// A rename's checks (before the rename reads or changes anything else): the moved
    /// inode and one it replaces or exchanges with may be neither immutable nor
    /// append-only; the source directory loses an entry (neither flag), the target
    /// directory gains one (not immutable) and, when it loses the replaced one, not
    /// append-only either. Names that do not exist are left to the rename to report.
    pub(crate) fn check_rename_flags(
        &mut self,
        parent: Ino,
        name: &[u8],
        new_parent: Ino,
        new_name: &[u8],
    ) -> Result<()> {
        let found = |fs: &mut Self, dir: Ino, name: &[u8]| -> Result<Option<Ino>> {
            if fs.inode_kind(dir)? != FileType::Directory || crate::namei::check_name(name).is_err() {
                return Ok(None);
            }
            Ok(fs.dir_lookup(dir, name)?.map(|(_, ino, _)| ino))
        };
        let Some(src) = found(self, parent, name)? else { return Ok(()) };
        self.refuse_protected(parent)?;
        self.refuse_protected(src)?;
        self.refuse_flags(new_parent, FileFlags::IMMUTABLE)?;
        if let Some(dst) = found(self, new_parent, new_name)? {
            self.refuse_protected(new_parent)?;
            self.refuse_protected(dst)?;
        }
        Ok(())
    }

    /// A setattr's checks: an immutable file changes no attribute (a touch, the times set
    /// to the call's own `now`, neither); an append-only one changes no mode, owner or size
    /// and takes no explicit time (a touch is allowed), as Linux's `notify_change`.
    pub(crate) fn check_setattr_flags(&mut self, ino: Ino, set: &SetAttr, now: Timestamp) -> Result<()> {
        let flags = self.flags_of(ino)?;
        if flags.is_empty() {
            return Ok(());
        }
        let explicit_time = [set.atime, set.mtime].iter().any(|t| t.is_some_and(|t| t != now));
        let touch = set.atime.is_some() || set.mtime.is_some();
        let attrs = set.mode.is_some() || set.uid.is_some() || set.gid.is_some() || set.size.is_some();
        let refused = (flags.contains(FileFlags::IMMUTABLE) && (attrs || touch))
            || (flags.contains(FileFlags::APPEND) && (attrs || explicit_time));
        if refused {
            return Err(Error::NotPermitted);
        }
        Ok(())
    }

    /// The mode change of the kernel's privilege removal before a write, truncation or
    /// chown (`file_remove_privs`: suid and sgid cleared): as [`Filesystem::setattr`] of
    /// `mode` alone, except that an append-only file allows it (its permitted writes come
    /// here first; Linux lets ATTR_KILL_SUID through `notify_change` the same way).
    pub fn setattr_removing_privileges(&mut self, ino: Ino, mode: u32, now: Timestamp) -> Result<Attr> {
        self.op(|fs| {
            fs.refuse_flags(ino, FileFlags::IMMUTABLE)?;
            fs.setattr_inner(ino, &SetAttr { mode: Some(mode), ..Default::default() }, now)
        })
    }

    /// The xattr removal of the same privilege removal (`security.capability`): as
    /// [`Filesystem::removexattr`], allowed on an append-only file (Linux removes it with
    /// `__vfs_removexattr`, past the permission check).
    pub fn removexattr_removing_privileges(&mut self, ino: Ino, name: &[u8], now: Timestamp) -> Result<()> {
        self.op(|fs| {
            fs.refuse_flags(ino, FileFlags::IMMUTABLE)?;
            fs.removexattr_inner(ino, name, now)
        })
    }

    /// The flags a new inode in `parent` starts with (see [`FileFlags::INHERITED`]), or
    /// EPERM when `parent` is immutable.
    pub(crate) fn flags_for_new_inode(&mut self, parent: Ino) -> Result<FileFlags> {
        let p = self.flags_of(parent)?;
        if p.contains(FileFlags::IMMUTABLE) {
            return Err(Error::NotPermitted);
        }
        Ok(p.intersection(FileFlags::INHERITED))
    }
}
