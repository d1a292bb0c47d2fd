//! `rollfs dump IMAGE [PATH] --out DIR`: copies files out of an image without writing to it
//! (f2fs's `dump.f2fs`, debugfs's `rdump`), also when mount and `fsck --repair` refuse it.
//! This module owns the read-only walk of the image's tree, what it skips where the image
//! is damaged (each reported with the block and the reason), the copy's files on the host,
//! and the exit code.
//!
//! What it reads: the image is opened read-only (a shared lock: a mounted image is busy)
//! and mounted read-only, which rolls the fsync chain forward *in memory*: the dump shows
//! what the next mount would, fsync'd files included, and writes nothing. If the roll-forward
//! itself fails on a damaged chain, the dump falls back to the newest checkpoint alone
//! ([`Filesystem::mount_checkpoint`]) and says so.
//!
//! Damage is skipped and reported, never fatal: an inode that cannot be read (its file is
//! not copied), a data block whose checksum fails or a pointer that cannot be followed (those
//! bytes are left as a hole in the copy, ranges of adjacent bad blocks reported as one), a
//! directory whose listing fails partway (the entries read before the bad block are copied),
//! an extended attribute block that cannot be read. Every loop is bounded: each directory is
//! walked once (a cycle or a second name of a directory is reported, not followed), a
//! listing stops after as many entries as the image has inode ids, and a file's copy
//! advances by at least a block per step up to its size.
//!
//! Names from a damaged image are not trusted: a name that is empty, `.`, `..` or contains
//! `/` or NUL is reported and skipped, every file is created new (`O_EXCL`, never following
//! a symlink) and a directory's entries are written only into a directory the dump created.
//!
//! Exit codes, as fsck's: 0 everything copied, 4 some things not copied (listed on stderr
//! and counted in the summary), 8 nothing could be dumped (the image cannot be opened or
//! read at all, PATH is not in it, DIR is not a new or empty directory).

use crate::cmd::{Bar, FSCK_CLEAN, FSCK_OPERATIONAL, FSCK_UNCORRECTED};
use crate::device::FileDevice;
use crate::error::CliError;
use crate::populate::{decode_dev, set_host_xattr};
use rollfs_core::layout::ROOT_INO;
use rollfs_core::{Attr, BlockDevice, Error, FileType, Filesystem, Ino, MountOptions, SeekWhence, BLOCK_SIZE};
use std::collections::{HashMap, HashSet};
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// `rollfs dump` options.
#[derive(Debug, Clone, Default)]
pub struct DumpArgs {
    pub image: PathBuf,
    /// Where in the image to start (default: the root).
    pub path: Option<PathBuf>,
    pub out: PathBuf,
    pub json: bool,
    pub progress: bool,
}

/// Something the dump could not copy.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Damage {
    /// The path in the image.
    pub path: String,
    pub ino: Ino,
    /// What was not copied: "the file", "bytes A..B", "entries after the first N", ...
    pub what: String,
    /// The block the damage was found in, when the error names one.
    pub block: Option<u64>,
    pub reason: String,
}

/// What a dump copied and what it could not.
#[derive(Debug, Default, serde::Serialize)]
pub struct DumpReport {
    /// "rolled forward" (what a mount would see) or "checkpoint" (the fallback).
    pub source: &'static str,
    pub files: u64,
    pub directories: u64,
    pub symlinks: u64,
    pub hard_links: u64,
    pub special: u64,
    pub bytes: u64,
    pub not_copied: Vec<Damage>,
    /// Copied, but something about it could not be restored on the host (an owner when not
    /// root, an extended attribute the host refuses).
    pub warnings: Vec<String>,
}

type Failure = (i32, CliError);

/// Runs `rollfs dump`; returns the exit code (see the module header).
pub fn run(a: &DumpArgs) -> i32 {
    match run_inner(a) {
        Ok(code) => code,
        Err((code, e)) => {
            eprintln!("rollfs dump: {e}");
            code
        }
    }
}

fn run_inner(a: &DumpArgs) -> Result<i32, Failure> {
    let (mut fs, source) = mount(&a.image)?;
    let (start, start_path) = resolve(&mut fs, a.path.as_deref(), &a.image)?;
    prepare_out(&a.out)?;
    let mut w = Walker::new(&mut fs, a.progress);
    w.report.source = source;
    w.run(start, &start_path, &a.out);
    let report = w.finish();
    print_report(a, &report);
    Ok(if report.not_copied.is_empty() { FSCK_CLEAN } else { FSCK_UNCORRECTED })
}

/// DIR must be new or an empty directory: the dump never overwrites or merges.
fn prepare_out(out: &Path) -> Result<(), Failure> {
    let op = |e| (FSCK_OPERATIONAL, CliError::io(out, "create the output directory", e));
    match std::fs::read_dir(out).map(|mut it| it.next().is_none()) {
        Ok(true) => Ok(()),
        Ok(false) => Err((
            FSCK_OPERATIONAL,
            CliError::Failed {
                path: out.to_owned(),
                what: "cannot dump into it",
                detail: "not empty (give a new or empty directory: the dump never overwrites)".into(),
            },
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(out).map_err(op),
        Err(e) => Err(op(e)),
    }
}

/// Opens the image read-only and mounts it read-only: rolled forward in memory, or from
/// the checkpoint alone when the roll-forward fails.
fn mount(image: &Path) -> Result<(Filesystem<FileDevice>, &'static str), Failure> {
    let opts = MountOptions { read_only: true, discard: false, ..MountOptions::default() };
    let (dev, _) = crate::cmd::open_checked(image, false)?;
    let err = match Filesystem::mount(dev, &opts, crate::now()) {
        Ok(fs) => return Ok((fs, "rolled forward")),
        Err(e) => e,
    };
    eprintln!(
        "rollfs dump: {}: the fsync chain cannot be rolled forward ({err}): dumping the last checkpoint's tree",
        image.display()
    );
    let (dev, _) = crate::cmd::open_checked(image, false)?;
    match Filesystem::mount_checkpoint(dev, &opts, crate::now()) {
        Ok(fs) => Ok((fs, "checkpoint")),
        Err(e) => Err((FSCK_OPERATIONAL, CliError::core(image, "cannot read the image", e))),
    }
}

/// The inode PATH names in the image, and PATH as the dump reports it.
fn resolve<D: BlockDevice>(
    fs: &mut Filesystem<D>,
    path: Option<&Path>,
    image: &Path,
) -> Result<(Ino, String), Failure> {
    let mut ino = ROOT_INO;
    let mut shown = String::new();
    for c in path.into_iter().flat_map(|p| p.components()) {
        use std::path::Component;
        let name = match c {
            Component::Normal(n) => n.as_bytes(),
            Component::ParentDir => b"..".as_slice(),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
        };
        shown.push('/');
        shown.push_str(&String::from_utf8_lossy(name));
        ino = fs
            .lookup(ino, name)
            .map_err(|e| {
                let code =
                    if matches!(e, Error::NotFound | Error::NotDir) { FSCK_OPERATIONAL } else { FSCK_UNCORRECTED };
                (
                    code,
                    CliError::Failed { path: image.to_owned(), what: "cannot dump", detail: format!("{shown}: {e}") },
                )
            })?
            .ino;
    }
    Ok((ino, if shown.is_empty() { "/".into() } else { shown }))
}

/// The block an error names, if any.
fn block_of(e: &Error) -> Option<u64> {
    match e {
        Error::Corrupt { block, .. } | Error::Io { block, .. } | Error::DataChecksum { block, .. } => Some(*block),
        _ => None,
    }
}

/// A name the host can take as one path component inside the directory being written.
fn safe_name(name: &[u8]) -> bool {
    !name.is_empty() && name != b"." && name != b".." && !name.contains(&b'/') && !name.contains(&0)
}

fn join(dir: &str, name: &[u8]) -> String {
    format!("{}/{}", dir.trim_end_matches('/'), String::from_utf8_lossy(name))
}

/// The walk: directories on an explicit stack (no recursion, whatever the depth).
struct Walker<'a, D: BlockDevice> {
    fs: &'a mut Filesystem<D>,
    report: DumpReport,
    /// Directories already walked: each once.
    seen_dirs: HashSet<Ino>,
    /// Multiply-linked inodes copied so far and where: later names become hard links.
    links: HashMap<Ino, PathBuf>,
    /// Directories to give their mode and times after their contents are written.
    dirs: Vec<(PathBuf, Attr)>,
    /// Most entries one directory listing may give (the image's inode ids).
    max_entries: u64,
    bar: Bar,
    inodes: u64,
    done: u64,
}

impl<'a, D: BlockDevice> Walker<'a, D> {
    fn new(fs: &'a mut Filesystem<D>, progress: bool) -> Self {
        use std::io::IsTerminal;
        let st = fs.statfs().ok();
        let max_entries = fs.geometry().nid_count as u64 + 2;
        Walker {
            fs,
            report: DumpReport::default(),
            seen_dirs: HashSet::new(),
            links: HashMap::new(),
            dirs: Vec::new(),
            max_entries,
            bar: Bar::labelled(progress || std::io::stderr().is_terminal(), "dump", "inodes"),
            inodes: st.map_or(0, |s| s.files.saturating_sub(s.files_free)),
            done: 0,
        }
    }

    fn damage(&mut self, path: &str, ino: Ino, what: impl Into<String>, e: &Error) {
        let what = what.into();
        self.report.not_copied.push(Damage { path: path.into(), ino, what, block: block_of(e), reason: e.to_string() });
    }

    fn host_failure(&mut self, path: &str, ino: Ino, what: &str, e: &std::io::Error) {
        let reason = format!("cannot write it here: {e}");
        self.report.not_copied.push(Damage { path: path.into(), ino, what: what.into(), block: None, reason });
    }

    fn warn(&mut self, msg: String) {
        eprintln!("rollfs dump: {msg}");
        self.report.warnings.push(msg);
    }

    /// Copies `ino` (shown as `path`) to `out`: a directory's contents into `out` itself
    /// (the output directory exists already), anything else to `out/<its name>`.
    fn run(&mut self, ino: Ino, path: &str, out: &Path) {
        let attr = match self.fs.getattr(ino) {
            Ok(a) => a,
            Err(e) => return self.damage(path, ino, "the file", &e),
        };
        if attr.kind != FileType::Directory {
            let name = Path::new(path).file_name().unwrap_or(OsStr::new("file"));
            return self.entry(ino, path, &out.join(name), &mut Vec::new());
        }
        self.seen_dirs.insert(ino);
        self.report.directories += 1;
        self.dirs.push((out.to_owned(), attr));
        self.xattrs(ino, path, out);
        let mut stack = vec![(ino, out.to_owned(), path.to_owned())];
        while let Some((dir, dout, dpath)) = stack.pop() {
            for e in self.list(dir, &dpath) {
                let ipath = join(&dpath, &e.name);
                if !safe_name(&e.name) {
                    let bad = Error::Invalid("a name the host cannot take as one path component");
                    self.damage(&ipath, e.ino, "the entry", &bad);
                    continue;
                }
                self.entry(e.ino, &ipath, &dout.join(OsStr::from_bytes(&e.name)), &mut stack);
            }
        }
    }

    /// The entries of directory `dir` but "." and "..": up to the first error (reported).
    fn list(&mut self, dir: Ino, path: &str) -> Vec<rollfs_core::DirEntry> {
        let mut entries = Vec::new();
        let max = self.max_entries;
        let r = self.fs.readdir(dir, 0, &mut |e| {
            if e.name != b"." && e.name != b".." {
                entries.push(e);
            }
            (entries.len() as u64) < max
        });
        if let Err(e) = r {
            let what = format!("the directory's entries after the first {}", entries.len());
            self.damage(path, dir, what, &e);
        } else if entries.len() as u64 >= max {
            let e = Error::corrupt(0, "directory lists more entries than the image has inodes");
            self.damage(path, dir, format!("the directory's entries after the first {max}"), &e);
        }
        entries
    }

    /// Copies one entry to `out` (which does not exist yet); a directory is pushed on
    /// `stack` for its contents.
    fn entry(&mut self, ino: Ino, path: &str, out: &Path, stack: &mut Vec<(Ino, PathBuf, String)>) {
        self.done += 1;
        self.bar.update(self.done, self.inodes.max(self.done));
        let attr = match self.fs.getattr(ino) {
            Ok(a) => a,
            Err(e) => return self.damage(path, ino, "the file", &e),
        };
        if attr.kind != FileType::Directory && attr.nlink > 1 {
            if let Some(first) = self.links.get(&ino).cloned() {
                let r = std::fs::hard_link(&first, out);
                self.made(r, path, ino, "the hard link", |r| &mut r.hard_links);
                return;
            }
        }
        let made = match attr.kind {
            FileType::Directory => self.directory(ino, path, out, &attr, stack),
            FileType::Regular => self.file(ino, path, out, &attr),
            FileType::Symlink => self.symlink(ino, path, out),
            _ => self.special(ino, path, out, &attr),
        };
        if !made {
            return;
        }
        if attr.kind != FileType::Directory && attr.nlink > 1 {
            self.links.insert(ino, out.to_owned());
        }
        self.xattrs(ino, path, out);
        if attr.kind != FileType::Directory {
            self.restore_meta(path, out, &attr);
        }
    }

    fn directory(
        &mut self,
        ino: Ino,
        path: &str,
        out: &Path,
        attr: &Attr,
        stack: &mut Vec<(Ino, PathBuf, String)>,
    ) -> bool {
        if !self.seen_dirs.insert(ino) {
            let e = Error::corrupt(0, "a directory reached a second time (a cycle, or a second name of a directory)");
            self.damage(path, ino, "the directory", &e);
            return false;
        }
        if let Err(e) = std::fs::create_dir(out) {
            self.host_failure(path, ino, "the directory", &e);
            return false;
        }
        self.report.directories += 1;
        self.dirs.push((out.to_owned(), *attr));
        stack.push((ino, out.to_owned(), path.to_owned()));
        true
    }

    fn symlink(&mut self, ino: Ino, path: &str, out: &Path) -> bool {
        let target = match self.fs.readlink(ino) {
            Ok(t) => t,
            Err(e) => {
                self.damage(path, ino, "the symlink", &e);
                return false;
            }
        };
        let r = std::os::unix::fs::symlink(OsStr::from_bytes(&target), out);
        self.made(r, path, ino, "the symlink", |r| &mut r.symlinks)
    }

    /// Counts an entry made on the host (in the report's field `count` picks), or records
    /// why it could not be made.
    fn made(
        &mut self,
        r: std::io::Result<()>,
        path: &str,
        ino: Ino,
        what: &str,
        count: fn(&mut DumpReport) -> &mut u64,
    ) -> bool {
        match r {
            Ok(()) => {
                *count(&mut self.report) += 1;
                true
            }
            Err(e) => {
                self.host_failure(path, ino, what, &e);
                false
            }
        }
    }

    fn special(&mut self, ino: Ino, path: &str, out: &Path, attr: &Attr) -> bool {
        let mode = attr.kind.mode_bits() | (attr.perm as u32 & 0o7777);
        let r = cstring(out).and_then(|c| {
            // SAFETY: a NUL-terminated path; mknod takes no other memory.
            if unsafe { libc::mknod(c.as_ptr(), mode, decode_dev(attr.rdev)) } == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
        self.made(r, path, ino, "the special file", |r| &mut r.special)
    }

    /// Copies a regular file: its data runs (holes stay holes), block by block where a
    /// read fails, so that one bad block costs only its own bytes.
    fn file(&mut self, ino: Ino, path: &str, out: &Path, attr: &Attr) -> bool {
        let f = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(out)
        {
            Ok(f) => f,
            Err(e) => {
                self.host_failure(path, ino, "the file", &e);
                return false;
            }
        };
        self.report.files += 1;
        if let Err(e) = self.copy_runs(ino, path, &f, attr.size).and_then(|_| f.set_len(attr.size)) {
            self.host_failure(path, ino, "the rest of the file", &e);
        }
        true
    }

    fn copy_runs(&mut self, ino: Ino, path: &str, f: &std::fs::File, size: u64) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        const CHUNK: u64 = 1 << 20;
        const B: u64 = BLOCK_SIZE as u64;
        let mut buf = vec![0u8; CHUNK as usize];
        let mut off = 0u64;
        // Each step advances `off` by at least one byte, and past every block it reads.
        while off < size {
            // Where the seek fails (a damaged node) the range is read, and fails there.
            let start = match self.fs.seek_data_hole(ino, off, SeekWhence::Data) {
                Ok(Some(s)) => s.max(off),
                Ok(None) => break,
                Err(_) => off,
            };
            if start >= size {
                break;
            }
            let end = match self.fs.seek_data_hole(ino, start, SeekWhence::Hole) {
                Ok(Some(h)) => h.clamp(start + 1, size),
                _ => size,
            };
            let end = end.min(start + CHUNK);
            let n = (end - start) as usize;
            match self.fs.read(ino, start, &mut buf[..n]) {
                Ok(got) => {
                    f.write_all_at(&buf[..got], start)?;
                    self.report.bytes += got as u64;
                    if got < n {
                        break; // the file ends here
                    }
                    off = end;
                }
                Err(_) => {
                    // One block at a time over the chunk, to keep every good block.
                    let mut o = start;
                    while o < end {
                        let e = ((o / B + 1) * B).min(end);
                        let len = (e - o) as usize;
                        match self.fs.read(ino, o, &mut buf[..len]) {
                            Ok(got) => {
                                f.write_all_at(&buf[..got], o)?;
                                self.report.bytes += got as u64;
                            }
                            Err(err) => self.bad_range(path, ino, o, e, &err),
                        }
                        o = e;
                    }
                    off = end;
                }
            }
        }
        Ok(())
    }

    /// Records bytes `[from, to)` of a file as not copied (left as a hole in the copy),
    /// merged with the range just before it when the reason is the same (a damaged node
    /// fails every block it maps: one line, not one per block).
    fn bad_range(&mut self, path: &str, ino: Ino, from: u64, to: u64, e: &Error) {
        if let Some(last) = self.report.not_copied.last_mut() {
            if last.ino == ino && last.path == path {
                if let Some((a, b)) = parse_range(&last.what) {
                    if b == from && last.reason.split(':').next() == e.to_string().split(':').next() {
                        last.what = format!("bytes {a}..{to}");
                        return;
                    }
                }
            }
        }
        let what = format!("bytes {from}..{to}");
        self.report.not_copied.push(Damage { path: path.into(), ino, what, block: block_of(e), reason: e.to_string() });
    }

    /// Copies the extended attributes of `ino` to `out`; the host refusing one is a warning.
    fn xattrs(&mut self, ino: Ino, path: &str, out: &Path) {
        let names = match self.fs.listxattr(ino) {
            Ok(n) => n,
            Err(e) => return self.damage(path, ino, "the extended attributes", &e),
        };
        for name in names {
            let shown = String::from_utf8_lossy(&name).into_owned();
            match self.fs.getxattr(ino, &name) {
                Ok(v) => {
                    if let Err(e) = set_host_xattr(out, &name, &v) {
                        self.warn(format!("{path}: extended attribute {shown} not restored: {e}"));
                    }
                }
                Err(e) => self.damage(path, ino, format!("extended attribute {shown}"), &e),
            }
        }
    }

    /// Owner (when root), permission bits (not on a symlink) and times, in that order:
    /// chown clears setuid and setgid, and both change the ctime the host keeps anyway.
    fn restore_meta(&mut self, path: &str, out: &Path, attr: &Attr) {
        if is_root() {
            if let Err(e) = std::os::unix::fs::lchown(out, Some(attr.uid), Some(attr.gid)) {
                self.warn(format!("{path}: owner {}:{} not restored: {e}", attr.uid, attr.gid));
            }
        }
        if attr.kind != FileType::Symlink {
            use std::os::unix::fs::PermissionsExt;
            let p = std::fs::Permissions::from_mode(attr.perm as u32 & 0o7777);
            if let Err(e) = std::fs::set_permissions(out, p) {
                self.warn(format!("{path}: mode {:o} not restored: {e}", attr.perm));
            }
        }
        let ts = |t: rollfs_core::Timestamp| libc::timespec { tv_sec: t.sec, tv_nsec: t.nsec as libc::c_long };
        let times = [ts(attr.atime), ts(attr.mtime)];
        let r = cstring(out).and_then(|c| {
            // SAFETY: a NUL-terminated path and an array of two timespecs.
            let r = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
            if r == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
        if let Err(e) = r {
            self.warn(format!("{path}: times not restored: {e}"));
        }
    }

    /// Directories get their mode and times last, deepest first: writing their contents
    /// changed their times, and a read-only mode would have stopped the writes.
    fn finish(mut self) -> DumpReport {
        // The count is of the entries reached: damage or hard links leave it short.
        let all = self.inodes.max(self.done);
        self.bar.update(all, all);
        self.bar.finish();
        for (out, attr) in std::mem::take(&mut self.dirs).into_iter().rev() {
            let shown = out.display().to_string();
            self.restore_meta(&shown, &out, &attr);
        }
        self.report
    }
}

/// `bytes A..B` back into (A, B).
fn parse_range(what: &str) -> Option<(u64, u64)> {
    let (a, b) = what.strip_prefix("bytes ")?.split_once("..")?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn cstring(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn print_report(a: &DumpArgs, r: &DumpReport) {
    for d in &r.not_copied {
        let hole = if d.what.starts_with("bytes ") { " (left as a hole)" } else { "" };
        eprintln!("rollfs dump: {} (inode {}): {} not copied{hole}: {}", d.path, d.ino, d.what, d.reason);
    }
    if a.json {
        let v = serde_json::json!({
            "image": a.image.display().to_string(),
            "out": a.out.display().to_string(),
            "complete": r.not_copied.is_empty(),
            "report": r,
        });
        println!("{v}");
        return;
    }
    println!(
        "rollfs dump: {} ({}): {} files ({} bytes), {} directories, {} symlinks, {} hard links, {} special files copied to {}{}{}",
        a.image.display(),
        if r.source == "checkpoint" { "the last checkpoint only" } else { "as a mount would see it" },
        r.files,
        r.bytes,
        r.directories,
        r.symlinks,
        r.hard_links,
        r.special,
        a.out.display(),
        if r.not_copied.is_empty() {
            String::new()
        } else {
            format!("; {} NOT copied (listed on stderr)", r.not_copied.len())
        },
        if r.warnings.is_empty() { String::new() } else { format!("; {} warnings", r.warnings.len()) }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_leave_the_directory_are_refused() {
        for bad in [&b""[..], b".", b"..", b"a/b", b"/etc", b"x\0y"] {
            assert!(!safe_name(bad), "{bad:?}");
        }
        assert!(safe_name(b"...") && safe_name(b"a b") && safe_name("é".as_bytes()));
    }

    #[test]
    fn ranges_read_back() {
        assert_eq!(parse_range("bytes 4096..8192"), Some((4096, 8192)));
        assert_eq!(parse_range("the file"), None);
    }
}
