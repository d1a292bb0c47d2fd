//! `rollfs mkfs --root DIR`: a new image holding a copy of a directory tree (mke2fs's `-d`,
//! f2fs-tools' `sload.f2fs`). This module owns the scan of DIR (what it holds, what cannot
//! be represented, how many blocks the copy needs), the image size chosen from it, the copy
//! itself through the core's API, and [`HeldSuperblock`], which keeps a half-populated
//! image from ever looking like a filesystem.
//!
//! What is copied: regular files (holes stay holes: the data runs come from
//! `SEEK_DATA`/`SEEK_HOLE`), directories, symlinks, hard links (as hard links), FIFOs,
//! sockets, character and block devices (the host lets only root create the latter in DIR;
//! copying them needs no privilege), modes with the setuid, setgid and sticky bits, owners,
//! atime, mtime and ctime (the core sets a ctime given to it; through a mount nothing can),
//! and every extended attribute the host lists to this user (`trusted.*` only to root).
//! Skipped, each with a warning naming it and why: an entry whose name is longer than
//! rollfs's 255 bytes, a file larger than rollfs's largest, an extended attribute rollfs
//! cannot hold (name or value too long, or the inode's attribute block full), and the
//! target image itself when it lies inside DIR.
//!
//! Crash safety (why a kill or power loss during `mkfs --root` never leaves something that
//! passes for a good image): the image's superblocks are zeroed first (the core's format
//! does that before anything else) and the new ones are *held in memory* by
//! [`HeldSuperblock`] while the core formats, mounts and fills the image through it, its
//! checkpoints included. Only after the final unmount's checkpoint is written and flushed
//! does [`HeldSuperblock::commit`] write superblock copy 1, flush, then copy 0, flush. Before
//! that point every mount and fsck refuses the image ("not a rollfs filesystem"); after it
//! the image is the complete copy, checkpointed cleanly. A failure that returns (an error,
//! not a crash) also removes an image file mkfs created (cmd.rs); a block device is left
//! without superblocks.

use crate::cmd::Bar;
use crate::error::{CliError, Result};
use crate::size;
use rollfs_core::layout::{
    Geometry, ADDRS_PER_BLOCK, ADDRS_PER_INODE, NAME_MAX, NIDS_PER_BLOCK, ROOT_INO, SUPERBLOCK_ADDRS,
};
use rollfs_core::node::MAX_FILE_SIZE;
use rollfs_core::{
    Block, BlockDevice, Credentials, Filesystem, Ino, IoError, MkfsOptions, MountOptions, SetAttr, Timestamp,
    WriteFlags, XattrSetMode, BLOCK_SIZE,
};
use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Test hook: after this many entries are copied, write a checkpoint (as a long run does
/// when its dirty data reaches the mount's bound) and abort the process, as a kill would.
/// tests/tests/mkfs_root.rs checks that the image left behind is refused.
pub const ABORT_AFTER_ENV: &str = "ROLLFS_MKFS_ROOT_ABORT_AFTER";

/// Room kept free beyond the tree when mkfs sizes the image itself, in percent of what the
/// tree needs: files can be added after the first mount, and the cleaner works best with
/// free segments.
pub const SIZE_MARGIN_PCT: u64 = 25;
/// The smallest image `mkfs --root` makes without `--size`.
pub const SIZE_MIN: u64 = 32 << 20;

/// One entry of DIR, in the order it is created (a directory before what it holds).
pub struct Entry {
    pub path: PathBuf,
    /// Index of the directory it is in (the root entry, DIR itself, is its own parent).
    pub parent: usize,
    pub name: Vec<u8>,
    pub meta: std::fs::Metadata,
}

/// What a scan of DIR found.
pub struct Tree {
    pub root: PathBuf,
    pub entries: Vec<Entry>,
    /// Warnings: what is skipped and why.
    pub skipped: Vec<String>,
    /// Data blocks of the regular files (holes not counted).
    pub data_blocks: u64,
    /// Bytes of data (holes not counted).
    pub data_bytes: u64,
    /// Node and directory blocks the copy will take (an estimate, rounded up).
    pub meta_blocks: u64,
    /// Node ids the copy will take (inodes, direct and indirect nodes, xattr blocks).
    pub nids: u64,
}

impl Tree {
    /// Blocks of the image's user capacity the copy needs.
    pub fn blocks_needed(&self) -> u64 {
        self.data_blocks + self.meta_blocks
    }
}

fn host_err<'a>(path: &'a Path, op: &'static str) -> impl FnOnce(std::io::Error) -> CliError + 'a {
    move |e| CliError::io(path, op, e)
}

/// Scans DIR: every entry's metadata and the blocks the copy will need. Fails (before
/// anything is written) when DIR is missing, is not a directory, or has something that
/// cannot be read; skips, with a warning, what rollfs cannot represent and `target`.
pub fn scan(root: &Path, target: &Path) -> Result<Tree> {
    let meta = std::fs::metadata(root).map_err(host_err(root, "read the directory given to --root"))?;
    if !meta.is_dir() {
        return Err(CliError::Failed {
            path: root.to_owned(),
            what: "cannot populate from it",
            detail: "not a directory (--root takes a directory tree)".into(),
        });
    }
    // The image may be inside DIR: never copy it into itself.
    let target_abs = std::path::absolute(target).unwrap_or_else(|_| target.to_owned());
    let mut tree = Tree {
        root: root.to_owned(),
        entries: vec![Entry { path: root.to_owned(), parent: 0, name: Vec::new(), meta }],
        skipped: Vec::new(),
        data_blocks: 0,
        data_bytes: 0,
        meta_blocks: 1,
        nids: 1,
    };
    // Directories are read in the order they are found; each directory's entries are
    // appended sorted by name, so the image is the same for the same tree.
    let mut next_dir = 0;
    // Multiply-linked inodes already counted: their other names cost a dentry only.
    let mut linked = HashSet::new();
    while next_dir < tree.entries.len() {
        if tree.entries[next_dir].meta.is_dir() {
            scan_dir(&mut tree, next_dir, &target_abs, &mut linked)?;
        }
        next_dir += 1;
    }
    Ok(tree)
}

fn scan_dir(tree: &mut Tree, dir: usize, target_abs: &Path, linked: &mut HashSet<(u64, u64)>) -> Result<()> {
    let dpath = tree.entries[dir].path.clone();
    let mut names: Vec<_> = std::fs::read_dir(&dpath)
        .map_err(host_err(&dpath, "read the directory"))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<std::io::Result<_>>()
        .map_err(host_err(&dpath, "read the directory"))?;
    names.sort();
    let mut slots = 0u64;
    for name in names {
        let path = dpath.join(&name);
        if name.len() > NAME_MAX {
            tree.skipped.push(format!("{}: skipped: name longer than {NAME_MAX} bytes", path.display()));
            continue;
        }
        if std::path::absolute(&path).is_ok_and(|p| p == target_abs) {
            tree.skipped.push(format!("{}: skipped: it is the image being made", path.display()));
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).map_err(host_err(&path, "read the metadata of"))?;
        if meta.is_file() && meta.len() > MAX_FILE_SIZE {
            tree.skipped.push(format!(
                "{}: skipped: {} is larger than rollfs's largest file ({})",
                path.display(),
                size::human(meta.len()),
                size::human(MAX_FILE_SIZE)
            ));
            continue;
        }
        if meta.is_dir() || meta.nlink() < 2 || linked.insert((meta.dev(), meta.ino())) {
            count_entry(tree, &path, &meta)?;
        }
        slots += (name.len() as u64).div_ceil(rollfs_core::dir::SLOT_NAME_LEN as u64);
        tree.entries.push(Entry { path, parent: dir, name: name.as_bytes().to_vec(), meta });
    }
    // Dentry blocks: a hashed directory fills its blocks unevenly; count three times the
    // slots its names take, and the nodes mapping those blocks.
    let dentry_blocks = 1 + (3 * slots).div_ceil(rollfs_core::dir::SLOTS_PER_BLOCK as u64);
    tree.meta_blocks += dentry_blocks + node_blocks_for(dentry_blocks);
    tree.nids += node_blocks_for(dentry_blocks);
    Ok(())
}

/// Direct and indirect node blocks beyond the inode mapping `blocks` data blocks: none
/// while the inode's own pointers suffice, then a direct node per [`ADDRS_PER_BLOCK`]
/// pointers and an indirect node per [`NIDS_PER_BLOCK`] direct nodes (rounded up: the two
/// direct nodes the inode points to need none; a double-indirect level is within the
/// rounding).
fn node_blocks_for(blocks: u64) -> u64 {
    let direct = blocks.saturating_sub(ADDRS_PER_INODE as u64).div_ceil(ADDRS_PER_BLOCK as u64);
    direct + direct.div_ceil(NIDS_PER_BLOCK as u64)
}

/// Adds one inode's blocks and node ids to the totals (once per inode: see [`scan`]).
fn count_entry(tree: &mut Tree, path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    // Every inode: its node block, and an xattr block if it has attributes.
    let xattr = u64::from(!xattr_names(path).map_err(host_err(path, "list the extended attributes of"))?.is_empty());
    tree.meta_blocks += 1 + xattr;
    tree.nids += 1 + xattr;
    if meta.is_file() {
        let f = open_source(path)?;
        let blocks: u64 = data_runs(&f, meta.len())
            .map_err(host_err(path, "find the data of"))?
            .iter()
            .map(|&(s, e)| e.div_ceil(BLOCK_SIZE as u64) - s / BLOCK_SIZE as u64)
            .sum();
        tree.data_blocks += blocks;
        tree.data_bytes += blocks * BLOCK_SIZE as u64;
        tree.meta_blocks += node_blocks_for(blocks);
        tree.nids += node_blocks_for(blocks);
    }
    Ok(())
}

fn open_source(path: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(path)
        .map_err(host_err(path, "open"))
}

/// The data runs `[start, end)` of a file of `size` bytes, from `SEEK_DATA`/`SEEK_HOLE`
/// (the whole file when the host filesystem does not tell). One step per run: bounded by
/// the file's size.
pub fn data_runs(f: &std::fs::File, size: u64) -> std::io::Result<Vec<(u64, u64)>> {
    use std::os::fd::AsRawFd;
    let seek = |off: u64, whence: libc::c_int| {
        // SAFETY: lseek on a descriptor this function borrows; no memory is passed.
        let r = unsafe { libc::lseek(f.as_raw_fd(), off as libc::off_t, whence) };
        if r < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(r as u64)
        }
    };
    let mut runs = Vec::new();
    let mut off = 0u64;
    while off < size {
        let start = match seek(off, libc::SEEK_DATA) {
            Ok(s) => s,
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => break,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Ok(vec![(off, size)]),
            Err(e) => return Err(e),
        };
        if start >= size {
            break;
        }
        let end = seek(start, libc::SEEK_HOLE)?.clamp(start + 1, size);
        runs.push((start, end));
        off = end;
    }
    Ok(runs)
}

/// The image size `mkfs --root` picks without `--size`: the smallest whose user capacity
/// and node ids hold the tree plus [`SIZE_MARGIN_PCT`], at least [`SIZE_MIN`], in whole
/// segments. Many small files need more room for ids than for blocks: the format has one
/// node id per four main-area blocks.
pub fn image_size(tree: &Tree, opts: &MkfsOptions) -> Result<u64> {
    let want = tree.blocks_needed() + tree.blocks_needed() * SIZE_MARGIN_PCT / 100;
    let seg = opts.segment_blocks as u64;
    let mut blocks = (SIZE_MIN / BLOCK_SIZE as u64).max(want + want / 8).div_ceil(seg) * seg;
    // Each step adds an eighth: a few dozen steps reach any size up to the 16 TiB that
    // 32-bit block addresses allow.
    for _ in 0..200 {
        if let Ok(g) = Geometry::compute_with_max(blocks, opts.max_blocks, opts.segment_blocks, opts.overprovision_pct)
        {
            if g.user_blocks() >= want && g.nid_count as u64 > tree.nids + tree.nids * SIZE_MARGIN_PCT / 100 {
                return Ok(blocks * BLOCK_SIZE as u64);
            }
        }
        blocks = (blocks + blocks / 8).div_ceil(seg) * seg;
    }
    Err(CliError::Failed {
        path: tree.root.clone(),
        what: "cannot size an image for it",
        detail: format!("it needs {} blocks, more than one rollfs image holds", tree.blocks_needed()),
    })
}

/// Refuses, before anything is written, a device of `total_blocks` too small for the tree:
/// the message names what the tree needs, what the image holds, and a size that fits.
pub fn check_fits(tree: &Tree, total_blocks: u64, opts: &MkfsOptions, target: &Path) -> Result<()> {
    let g = Geometry::compute_with_max(total_blocks, opts.max_blocks, opts.segment_blocks, opts.overprovision_pct)
        .map_err(|e| CliError::core(target, "cannot format", e))?;
    let need = tree.blocks_needed();
    if g.user_blocks() >= need && g.nid_count as u64 > tree.nids {
        return Ok(());
    }
    let b = BLOCK_SIZE as u64;
    let short = if g.user_blocks() < need {
        format!(
            "{} needs about {} ({} of data, {} of metadata) and an image of {} holds {}: {} short",
            tree.root.display(),
            size::human(need * b),
            size::human(tree.data_blocks * b),
            size::human(tree.meta_blocks * b),
            size::human(total_blocks * b),
            size::human(g.user_blocks() * b),
            size::human((need - g.user_blocks()) * b)
        )
    } else {
        format!("{} needs {} inode and node ids and the image has {}", tree.root.display(), tree.nids, g.nid_count)
    };
    Err(CliError::Failed {
        path: target.to_owned(),
        what: "too small",
        detail: format!("{short}; give --size {} or more, or leave --size out", size::human(image_size(tree, opts)?)),
    })
}

/// A device that keeps the superblocks it is given in memory, and reads them back from
/// there, until [`HeldSuperblock::commit`]: see the module header. Zeroed superblocks
/// (format's first writes, invalidating an older filesystem) go through to the device.
pub struct HeldSuperblock<D: BlockDevice> {
    inner: D,
    held: [Option<Box<Block>>; 2],
}

impl<D: BlockDevice> HeldSuperblock<D> {
    pub fn new(inner: D) -> Self {
        HeldSuperblock { inner, held: [None, None] }
    }

    fn slot(addr: u64) -> Option<usize> {
        SUPERBLOCK_ADDRS.iter().position(|&a| a == addr)
    }

    /// Writes the held superblocks after everything else is durable: copy 1 then copy 0,
    /// each flushed (mount takes the first valid copy, and both say the same). Returns the
    /// device.
    pub fn commit(mut self) -> Result<D, IoError> {
        self.inner.wait_writes()?;
        self.inner.flush()?;
        for i in [1usize, 0] {
            if let Some(b) = self.held[i].take() {
                self.inner.write(SUPERBLOCK_ADDRS[i], &b, WriteFlags::empty())?;
                self.inner.wait_writes()?;
                self.inner.flush()?;
            }
        }
        Ok(self.inner)
    }
}

impl<D: BlockDevice> BlockDevice for HeldSuperblock<D> {
    fn block_count(&self) -> u64 {
        self.inner.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        match Self::slot(addr).and_then(|i| self.held[i].as_ref()) {
            Some(b) => {
                buf.copy_from_slice(&b[..]);
                Ok(())
            }
            None => self.inner.read(addr, buf),
        }
    }
    fn read_run(&mut self, addr: u64, blocks: &mut [Block]) -> Result<(), IoError> {
        if addr > SUPERBLOCK_ADDRS[1] {
            return self.inner.read_run(addr, blocks);
        }
        for (i, b) in blocks.iter_mut().enumerate() {
            self.read(addr + i as u64, b)?;
        }
        Ok(())
    }
    fn reuse_fence(&mut self) {
        self.inner.reuse_fence()
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        match Self::slot(addr) {
            Some(i) if data.iter().any(|&x| x != 0) => {
                self.held[i] = Some(Box::new(*data));
                Ok(())
            }
            _ => self.inner.write(addr, data, flags),
        }
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.inner.wait_writes()
    }
    fn flush(&mut self) -> Result<(), IoError> {
        self.inner.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        self.inner.discard(addr, count)
    }
}

/// What a population copied.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Summary {
    pub files: u64,
    pub directories: u64,
    pub symlinks: u64,
    pub hard_links: u64,
    pub special: u64,
    pub xattrs: u64,
    pub data_bytes: u64,
    pub skipped: u64,
    pub seconds: f64,
}

/// `mkfs --root` options beyond mkfs's own.
pub struct PopulateOptions {
    pub progress: bool,
}

/// Formats `dev`, copies the tree into it and unmounts: the superblocks reach the device
/// last (module header). Returns the device, flushed.
pub fn format_populated<D: BlockDevice>(
    dev: D,
    opts: &MkfsOptions,
    tree: &Tree,
    popts: &PopulateOptions,
    target: &Path,
) -> Result<(D, Summary)> {
    let core = |what| move |e| CliError::core(target, what, e);
    let started = std::time::Instant::now();
    let dev = Filesystem::format(HeldSuperblock::new(dev), opts).map_err(core("cannot format"))?;
    let mopts = MountOptions { discard: false, ..MountOptions::default() };
    let mut fs = Filesystem::mount(dev, &crate::with_mount_nonce(mopts), crate::now())
        .map_err(core("cannot mount the new image"))?;
    let mut summary = Summary { skipped: tree.skipped.len() as u64, ..Summary::default() };
    for w in &tree.skipped {
        eprintln!("rollfs mkfs: {w}");
    }
    Copier { fs: &mut fs, tree, target, summary: &mut summary }.run(popts)?;
    let held = fs.unmount(crate::now()).map_err(core("cannot write the final checkpoint"))?;
    let dev = held.commit().map_err(|e| CliError::core(target, "cannot write the superblocks", e.into()))?;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok((dev, summary))
}

/// The copy of a scanned tree into a mounted, empty filesystem.
struct Copier<'a, D: BlockDevice> {
    fs: &'a mut Filesystem<D>,
    tree: &'a Tree,
    target: &'a Path,
    summary: &'a mut Summary,
}

impl<D: BlockDevice> Copier<'_, D> {
    fn run(&mut self, popts: &PopulateOptions) -> Result<()> {
        use std::io::IsTerminal;
        let abort_after: Option<usize> = std::env::var(ABORT_AFTER_ENV).ok().and_then(|v| v.parse().ok());
        let mut bar = Bar::labelled(popts.progress || std::io::stderr().is_terminal(), "mkfs --root", "entries");
        let tree = self.tree;
        let n = tree.entries.len();
        let mut inos: Vec<Ino> = vec![ROOT_INO; n];
        // Hard links: the host (device, inode) of every multiply-linked non-directory
        // copied so far, and the rollfs inode it became.
        let mut linked: HashMap<(u64, u64), Ino> = HashMap::new();
        // Whose attributes the last pass sets: the first name of each inode.
        let mut first = vec![true; n];
        self.copy_xattrs(ROOT_INO, &tree.entries[0].path)?;
        for i in 1..n {
            let e = &tree.entries[i];
            let parent = inos[e.parent];
            let key = (e.meta.dev(), e.meta.ino());
            if !e.meta.is_dir() && e.meta.nlink() > 1 {
                if let Some(&ino) = linked.get(&key) {
                    self.fs.link(ino, parent, &e.name, crate::now()).map_err(self.failed(e))?;
                    inos[i] = ino;
                    first[i] = false;
                    self.summary.hard_links += 1;
                    continue;
                }
            }
            let ino = self.create(e, parent)?;
            if !e.meta.is_dir() && e.meta.nlink() > 1 {
                linked.insert(key, ino);
            }
            inos[i] = ino;
            self.copy_xattrs(ino, &e.path)?;
            bar.update(i as u64 + 1, n as u64);
            if abort_after == Some(i) {
                let _ = self.fs.sync(crate::now());
                eprintln!("rollfs mkfs: {ABORT_AFTER_ENV}: aborting after {i} entries (test hook)");
                std::process::abort();
            }
        }
        bar.finish();
        // Attributes last: a link, a new entry or an xattr changes an inode's ctime (and a
        // directory's mtime), so each inode gets its owner, mode and times after everything
        // else that touches it.
        for i in 0..n {
            if first[i] {
                let e = &tree.entries[i];
                self.fs.setattr(inos[i], &attrs_of(&e.meta), crate::now()).map_err(self.failed(e))?;
            }
        }
        Ok(())
    }

    /// A CliError for a core error while copying entry `e`: running out of room names the
    /// shortfall (the scan's estimate was too low for this tree).
    fn failed(&self, e: &Entry) -> impl FnOnce(rollfs_core::Error) -> CliError + '_ {
        let path = e.path.clone();
        move |err| {
            match err {
            rollfs_core::Error::NoSpace => CliError::Failed {
                path: self.target.to_owned(),
                what: "too small",
                detail: format!(
                    "ran out of room copying {} ({err}) after {} of {} bytes of data; give a larger --size, or leave --size out",
                    path.display(),
                    self.summary.data_bytes,
                    self.tree.data_bytes
                ),
            },
            err => CliError::Failed {
                path: self.target.to_owned(),
                what: "cannot populate",
                detail: format!("{}: {err}", path.display()),
            },
        }
        }
    }

    fn create(&mut self, e: &Entry, parent: Ino) -> Result<Ino> {
        let cred = Credentials { uid: e.meta.uid(), gid: e.meta.gid() };
        let now = crate::now();
        let ft = e.meta.file_type();
        let mode = e.meta.mode();
        let attr = if ft.is_dir() {
            self.summary.directories += 1;
            self.fs.mkdir(parent, &e.name, mode & 0o7777, cred, now)
        } else if ft.is_file() {
            let a = self.fs.create(parent, &e.name, mode & 0o7777, cred, now).map_err(self.failed(e))?;
            self.copy_data(e, a.ino)?;
            self.summary.files += 1;
            return Ok(a.ino);
        } else if ft.is_symlink() {
            let t = std::fs::read_link(&e.path).map_err(host_err(&e.path, "read the symlink"))?;
            self.summary.symlinks += 1;
            self.fs.symlink(parent, &e.name, t.as_os_str().as_bytes(), cred, now)
        } else {
            // FIFOs, sockets, character and block devices: the type is in the mode.
            self.summary.special += 1;
            self.fs.mknod(parent, &e.name, mode, encode_dev(e.meta.rdev()), cred, now)
        };
        Ok(attr.map_err(self.failed(e))?.ino)
    }

    /// Copies the data runs of a regular file; the holes between them stay holes and the
    /// size is set last (a hole at the end stays a hole too).
    fn copy_data(&mut self, e: &Entry, ino: Ino) -> Result<()> {
        const CHUNK: u64 = 1 << 20;
        let f = open_source(&e.path)?;
        let size = e.meta.len();
        let runs = data_runs(&f, size).map_err(host_err(&e.path, "find the data of"))?;
        let mut buf = vec![0u8; CHUNK as usize];
        for (start, end) in runs {
            let mut off = start;
            while off < end {
                let n = CHUNK.min(end - off) as usize;
                let got = f.read_at(&mut buf[..n], off).map_err(host_err(&e.path, "read"))?;
                if got == 0 {
                    return Err(CliError::Failed {
                        path: e.path.clone(),
                        what: "cannot copy",
                        detail: format!("the file shrank while it was copied (at byte {off} of {size})"),
                    });
                }
                self.fs.write(ino, off, &buf[..got], crate::now()).map_err(self.failed(e))?;
                self.summary.data_bytes += got as u64;
                off += got as u64;
            }
        }
        let set = SetAttr { size: Some(size), ..SetAttr::default() };
        self.fs.setattr(ino, &set, crate::now()).map_err(self.failed(e))?;
        Ok(())
    }

    /// Copies the extended attributes the host lists for `path` (not following a
    /// symlink). One that rollfs cannot hold is skipped with a warning.
    fn copy_xattrs(&mut self, ino: Ino, path: &Path) -> Result<()> {
        for (name, value) in host_xattrs(path).map_err(host_err(path, "read the extended attributes of"))? {
            match self.fs.setxattr(ino, &name, &value, XattrSetMode::Any, crate::now()) {
                Ok(()) => self.summary.xattrs += 1,
                Err(e @ (rollfs_core::Error::Io { .. } | rollfs_core::Error::ShutDown)) => {
                    return Err(CliError::core(self.target, "cannot populate", e))
                }
                Err(e) => {
                    self.summary.skipped += 1;
                    eprintln!(
                        "rollfs mkfs: {}: extended attribute {} ({} bytes) skipped: {e}",
                        path.display(),
                        String::from_utf8_lossy(&name),
                        value.len()
                    );
                }
            }
        }
        Ok(())
    }
}

/// Owner, permission bits and times to give the copy of an entry with metadata `m`.
fn attrs_of(m: &std::fs::Metadata) -> SetAttr {
    let t = |sec: i64, nsec: i64| Some(Timestamp::new(sec, nsec.clamp(0, 999_999_999) as u32));
    SetAttr {
        mode: Some(m.mode() & 0o7777),
        uid: Some(m.uid()),
        gid: Some(m.gid()),
        size: None,
        atime: t(m.atime(), m.atime_nsec()),
        mtime: t(m.mtime(), m.mtime_nsec()),
        ctime: t(m.ctime(), m.ctime_nsec()),
    }
}

/// A host `dev_t` as FUSE carries device numbers (the kernel's `new_encode_dev`), which
/// is how the mount stores and reports `rdev`.
pub fn encode_dev(rdev: u64) -> u32 {
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12)
}

/// The host's inverse of [`encode_dev`].
pub fn decode_dev(rdev: u32) -> u64 {
    let major = (rdev & 0xfff00) >> 8;
    let minor = (rdev & 0xff) | ((rdev >> 12) & 0xfff00);
    libc::makedev(major, minor)
}

fn cpath(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// The NUL-separated names of the extended attributes of `path` the host lists to this
/// user (not following a symlink); none where the host filesystem has none.
fn xattr_names(path: &Path) -> std::io::Result<Vec<u8>> {
    let c = cpath(path)?;
    // A name added between the size query and the listing makes the listing ERANGE: ask
    // again, a bounded number of times.
    for _ in 0..8 {
        // SAFETY: a size query (null buffer, length 0) on a NUL-terminated path.
        let len = unsafe { libc::llistxattr(c.as_ptr(), std::ptr::null_mut(), 0) };
        if len < 0 {
            let e = std::io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::ENOTSUP) { Ok(Vec::new()) } else { Err(e) };
        }
        let mut names = vec![0u8; len as usize];
        // SAFETY: the buffer holds `names.len()` bytes.
        let len = unsafe { libc::llistxattr(c.as_ptr(), names.as_mut_ptr() as *mut libc::c_char, names.len()) };
        if len >= 0 {
            names.truncate(len as usize);
            return Ok(names);
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ERANGE) {
            return Err(e);
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::ERANGE))
}

/// Every extended attribute of `path` the host lists to this user, not following a
/// symlink. An attribute removed between the listing and the read is left out.
pub fn host_xattrs(path: &Path) -> std::io::Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let c = cpath(path)?;
    let names = xattr_names(path)?;
    let mut out = Vec::new();
    for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let cname = CString::new(name).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        let mut value = vec![0u8; BLOCK_SIZE];
        // SAFETY: the buffer holds `value.len()` bytes; both strings are NUL-terminated.
        let n = unsafe {
            libc::lgetxattr(c.as_ptr(), cname.as_ptr(), value.as_mut_ptr() as *mut libc::c_void, value.len())
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::ENODATA) => continue,
                // Larger than a rollfs attribute block can hold: let the core refuse it
                // by its real size (a warning, not a failure).
                Some(libc::ERANGE) => value = vec![0u8; 1 << 16],
                _ => return Err(e),
            }
            // SAFETY: as above, with the larger buffer.
            let n = unsafe {
                libc::lgetxattr(c.as_ptr(), cname.as_ptr(), value.as_mut_ptr() as *mut libc::c_void, value.len())
            };
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            value.truncate(n as usize);
        } else {
            value.truncate(n as usize);
        }
        out.push((name.to_vec(), value));
    }
    Ok(out)
}

/// Sets an extended attribute on the host (not following a symlink): `dump`'s way back.
pub fn set_host_xattr(path: &Path, name: &[u8], value: &[u8]) -> std::io::Result<()> {
    let c = cpath(path)?;
    let cname = CString::new(name).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: NUL-terminated strings and a buffer of `value.len()` bytes.
    let r =
        unsafe { libc::lsetxattr(c.as_ptr(), cname.as_ptr(), value.as_ptr() as *const libc::c_void, value.len(), 0) };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_survive_the_fuse_encoding() {
        for (major, minor) in [(1, 3), (8, 17), (259, 65_536), (4095, 0xfffff)] {
            let d = libc::makedev(major, minor);
            assert_eq!(decode_dev(encode_dev(d)), d, "{major}:{minor}");
        }
        assert_eq!(encode_dev(libc::makedev(1, 3)), 0x103);
    }

    #[test]
    fn small_files_need_no_node_beyond_their_inode() {
        assert_eq!(node_blocks_for(0), 0);
        assert_eq!(node_blocks_for(ADDRS_PER_INODE as u64), 0);
        assert_eq!(node_blocks_for(ADDRS_PER_INODE as u64 + 1), 2, "a direct node and (rounded up) an indirect");
        let big = node_blocks_for(1 << 20); // 4 GiB
        assert!((2064..2100).contains(&big), "{big}");
    }

    #[test]
    fn data_runs_skip_holes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sparse");
        let f = std::fs::File::create(&p).unwrap();
        f.write_all_at(b"x", 1 << 20).unwrap();
        f.set_len(4 << 20).unwrap();
        let runs = data_runs(&f, 4 << 20).unwrap();
        let data: u64 = runs.iter().map(|(s, e)| e - s).sum();
        assert!(data < 1 << 20, "{runs:?}: the holes are not data");
        assert!(runs.iter().any(|&(s, e)| s <= 1 << 20 && e > 1 << 20), "{runs:?}");
    }
}
