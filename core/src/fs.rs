//! The [`Filesystem`] API: what a FUSE driver and the simulator call.
//!
//! Every call that changes anything takes the caller's time ([`Timestamp`]); calls that
//! create files take the caller's [`Credentials`]. Permission checks are the driver's
//! (FUSE `default_permissions`); the core records ownership and modes.
//!
//! Concurrency: the core is a single-threaded state machine (`&mut self`). Calls never
//! wait for a device flush while they could avoid it: writes go to the write-back cache and
//! only `sync`/`fsync`/checkpoints reach the device. A multi-threaded driver holds a lock
//! around calls; the fsync path is split (see `fsync`) so that the flush itself can be
//! issued outside the lock and shared by concurrent fsyncs (group commit).

use crate::device::BlockDevice;
use crate::error::{Error, Result};
use crate::{Ino, Nid};
use alloc::vec::Vec;

/// A point in time supplied by the caller: seconds and nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    pub sec: i64,
    pub nsec: u32,
}

impl Timestamp {
    pub const fn new(sec: i64, nsec: u32) -> Timestamp {
        Timestamp { sec, nsec }
    }
}

/// Who is making a call: recorded as the owner of new files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Credentials {
    pub uid: u32,
    pub gid: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileType {
    Regular,
    Directory,
    Symlink,
    CharDevice,
    BlockDevice,
    Fifo,
    Socket,
}

impl FileType {
    pub const S_IFMT: u32 = 0o170000;
    /// The `S_IFMT` bits of a mode.
    pub fn mode_bits(self) -> u32 {
        match self {
            FileType::Regular => 0o100000,
            FileType::Directory => 0o040000,
            FileType::Symlink => 0o120000,
            FileType::CharDevice => 0o020000,
            FileType::BlockDevice => 0o060000,
            FileType::Fifo => 0o010000,
            FileType::Socket => 0o140000,
        }
    }
    pub fn from_mode(mode: u32) -> Option<FileType> {
        Some(match mode & Self::S_IFMT {
            0o100000 => FileType::Regular,
            0o040000 => FileType::Directory,
            0o120000 => FileType::Symlink,
            0o020000 => FileType::CharDevice,
            0o060000 => FileType::BlockDevice,
            0o010000 => FileType::Fifo,
            0o140000 => FileType::Socket,
            _ => return None,
        })
    }
    /// The dentry file-type code (as in Linux `DT_*` >> 12 convention: mode >> 12).
    pub fn dentry_code(self) -> u8 {
        (self.mode_bits() >> 12) as u8
    }
    pub fn from_dentry_code(code: u8) -> Option<FileType> {
        FileType::from_mode((code as u32) << 12)
    }
}

/// Attributes of an inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr {
    pub ino: Ino,
    pub size: u64,
    /// Allocated space in 512-byte units, as `st_blocks`.
    pub blocks: u64,
    pub kind: FileType,
    /// Permission bits (the low 12 bits of the mode).
    pub perm: u16,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    pub rdev: u32,
    pub atime: Timestamp,
    pub mtime: Timestamp,
    pub ctime: Timestamp,
    pub crtime: Timestamp,
    pub generation: u32,
}

/// What `setattr` changes; `None` leaves a field alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetAttr {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// Truncate or extend (extension reads as zeros).
    pub size: Option<u64>,
    pub atime: Option<Timestamp>,
    pub mtime: Option<Timestamp>,
    pub ctime: Option<Timestamp>,
}

/// One directory entry from `readdir`. `cookie` resumes the listing after this entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub ino: Ino,
    pub kind: FileType,
    pub name: Vec<u8>,
    pub cookie: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatFs {
    pub block_size: u32,
    pub blocks: u64,
    pub blocks_free: u64,
    pub blocks_avail: u64,
    pub files: u64,
    pub files_free: u64,
    pub name_max: u32,
}

bitflags::bitflags! {
    /// Flags of `rename`, with Linux's values.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct RenameFlags: u32 {
        const NOREPLACE = 1;
        const EXCHANGE = 2;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum XattrSetMode {
    #[default]
    Any,
    /// XATTR_CREATE: fail with EEXIST if it exists.
    Create,
    /// XATTR_REPLACE: fail with ENODATA if it does not exist.
    Replace,
}

/// Options of `format` (mkfs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MkfsOptions {
    /// Segment size in blocks (power of two, 16..=512). Default 512 (2 MiB).
    pub segment_blocks: u32,
    /// Percent of main-area segments kept in reserve for cleaning.
    pub overprovision_pct: u32,
    /// Volume label (at most 32 bytes).
    pub label: Vec<u8>,
    /// Volume UUID, supplied by the caller (the core draws no randomness).
    pub uuid: [u8; 16],
    /// Creation time; also the root directory's times.
    pub time: Timestamp,
    /// Owner of the root directory.
    pub root_owner: Credentials,
}

impl Default for MkfsOptions {
    fn default() -> Self {
        MkfsOptions {
            segment_blocks: crate::layout::SEGMENT_BLOCKS_DEFAULT,
            overprovision_pct: 5,
            label: Vec::new(),
            uuid: [0; 16],
            time: Timestamp::default(),
            root_owner: Credentials::default(),
        }
    }
}

/// Options of `mount`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MountOptions {
    /// Bound on dirty cached data and nodes, in bytes; reaching it writes a checkpoint.
    pub dirty_bytes_max: u64,
    /// Bound on clean cached blocks, in bytes.
    pub clean_cache_bytes_max: u64,
    /// Mount read-only: no recovery writes, every change is EROFS.
    pub read_only: bool,
}

impl Default for MountOptions {
    fn default() -> Self {
        MountOptions {
            dirty_bytes_max: 64 << 20,
            clean_cache_bytes_max: 64 << 20,
            read_only: false,
        }
    }
}

/// Counters of what the filesystem did, for benchmarks and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub checkpoints: u64,
    pub data_blocks_written: u64,
    pub node_blocks_written: u64,
    pub meta_blocks_written: u64,
    pub flushes: u64,
    pub device_reads: u64,
    pub fsyncs: u64,
    pub fsync_checkpoint_fallbacks: u64,
    pub dirty_bound_checkpoints: u64,
}

pub struct Filesystem<D: BlockDevice> {
    dev: D,
    #[allow(dead_code)]
    nid_placeholder: Nid,
}

#[allow(unused_variables)]
impl<D: BlockDevice> Filesystem<D> {
    pub fn format(dev: D, opts: &MkfsOptions) -> Result<D> { todo!() }
    pub fn mount(dev: D, opts: &MountOptions, now: Timestamp) -> Result<Filesystem<D>> { todo!() }
    /// Writes a clean checkpoint and returns the device.
    pub fn unmount(self, now: Timestamp) -> Result<D> { todo!() }
    /// Gives the device back without writing anything (simulates power loss / abandon).
    pub fn into_device(self) -> D { self.dev }
    pub fn device(&self) -> &D { &self.dev }
    pub fn device_mut(&mut self) -> &mut D { &mut self.dev }
    pub fn stats(&self) -> Stats { todo!() }
    pub fn is_read_only(&self) -> bool { todo!() }
    pub fn statfs(&mut self) -> Result<StatFs> { todo!() }
    pub fn lookup(&mut self, parent: Ino, name: &[u8]) -> Result<Attr> { todo!() }
    pub fn getattr(&mut self, ino: Ino) -> Result<Attr> { todo!() }
    pub fn setattr(&mut self, ino: Ino, set: &SetAttr, now: Timestamp) -> Result<Attr> { todo!() }
    pub fn mknod(&mut self, parent: Ino, name: &[u8], mode: u32, rdev: u32, cred: Credentials, now: Timestamp) -> Result<Attr> { todo!() }
    pub fn create(&mut self, parent: Ino, name: &[u8], perm: u32, cred: Credentials, now: Timestamp) -> Result<Attr> { todo!() }
    pub fn mkdir(&mut self, parent: Ino, name: &[u8], perm: u32, cred: Credentials, now: Timestamp) -> Result<Attr> { todo!() }
    pub fn unlink(&mut self, parent: Ino, name: &[u8], now: Timestamp) -> Result<()> { todo!() }
    pub fn rmdir(&mut self, parent: Ino, name: &[u8], now: Timestamp) -> Result<()> { todo!() }
    pub fn rename(&mut self, parent: Ino, name: &[u8], new_parent: Ino, new_name: &[u8], flags: RenameFlags, now: Timestamp) -> Result<()> { todo!() }
    pub fn link(&mut self, ino: Ino, new_parent: Ino, new_name: &[u8], now: Timestamp) -> Result<Attr> { todo!() }
    pub fn symlink(&mut self, parent: Ino, name: &[u8], target: &[u8], cred: Credentials, now: Timestamp) -> Result<Attr> { todo!() }
    pub fn readlink(&mut self, ino: Ino) -> Result<Vec<u8>> { todo!() }
    /// Reads up to `buf.len()` bytes at `offset`; returns the count (0 at or past EOF).
    pub fn read(&mut self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize> { todo!() }
    pub fn write(&mut self, ino: Ino, offset: u64, data: &[u8], now: Timestamp) -> Result<usize> { todo!() }
    /// Lists entries after `cookie` (0 = from the start, including "." and ".."), calling
    /// `f` for each until it returns false.
    pub fn readdir(&mut self, ino: Ino, cookie: u64, f: &mut dyn FnMut(DirEntry) -> bool) -> Result<()> { todo!() }
    pub fn getxattr(&mut self, ino: Ino, name: &[u8]) -> Result<Vec<u8>> { todo!() }
    pub fn setxattr(&mut self, ino: Ino, name: &[u8], value: &[u8], mode: XattrSetMode, now: Timestamp) -> Result<()> { todo!() }
    pub fn listxattr(&mut self, ino: Ino) -> Result<Vec<Vec<u8>>> { todo!() }
    pub fn removexattr(&mut self, ino: Ino, name: &[u8], now: Timestamp) -> Result<()> { todo!() }
    /// Writes a checkpoint: everything before it is durable when it returns.
    pub fn sync(&mut self, now: Timestamp) -> Result<()> { todo!() }
    /// Makes the file's data (and, unless `datasync`, metadata) durable.
    pub fn fsync(&mut self, ino: Ino, datasync: bool, now: Timestamp) -> Result<()> { todo!() }
    /// A file handle was opened on `ino` (keeps an unlinked file alive until released).
    pub fn open(&mut self, ino: Ino) -> Result<()> { todo!() }
    pub fn release(&mut self, ino: Ino, now: Timestamp) -> Result<()> { todo!() }
}

#[allow(dead_code)]
fn _unused() -> Error { Error::NotFound }
