//! The subcommands. Each returns an exit code or a [`CliError`]; `main` prints errors and
//! maps them to exit codes, so every command reports failures the same way.

use crate::device::{DeviceKind, DeviceOptions, FileDevice};
use crate::error::{CliError, Result};
use crate::fuse::{Dev, RollFuse};
use crate::record::{self, RecordingDevice, ReplayOptions};
use crate::{probe, size};
use rollfs_core::{BlockDevice, Filesystem, MkfsOptions, MountOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------- mkfs

#[derive(Debug, Clone, Default)]
pub struct MkfsArgs {
    pub size: Option<u64>,
    pub segment_size: Option<u64>,
    pub overprovision: Option<u32>,
    pub label: Option<String>,
    pub force: bool,
    pub target: PathBuf,
    pub quiet: bool,
    /// `--reserve PCT`: the root reserve recorded in the superblock (the mount's default).
    pub reserve_pct: Option<u32>,
    /// Leave a new image file sparse instead of writing it out (see [`write_out`]).
    pub sparse: bool,
    /// `-O FEATURES` (each comma-separated): `datasum` / `nodatasum`, `dirv2` / `nodirv2`,
    /// `prealloc` / `noprealloc`, `inline` / `noinline`, `nsrec` / `nonsrec` (namespace
    /// records in the fsync chain), `mixed` / `nomixed` (data beside its chain), `cpsum` /
    /// `nocpsum` (open segments' summaries in the checkpoint). Defaults: [`mkfs_defaults`].
    pub features: Vec<String>,
    /// `--root DIR`: populate the new filesystem with a copy of DIR (see [`crate::populate`]).
    pub root: Option<PathBuf>,
    /// `--progress`: draw `--root`'s progress bar even when stderr is not a terminal.
    pub progress: bool,
    /// `--max-size MAX`: room to grow (`rollfs resize`) up to a device of MAX bytes.
    pub max_size: Option<u64>,
}

/// What `rollfs mkfs` makes without `-O`: directories v2 (per-directory hash keys,
/// overflowing buckets) unless `-O nodirv2`; fallocate's reservations kept on disk unless
/// `-O noprealloc`; small files' bytes in their inodes unless `-O noinline`; namespace
/// records in the fsync chain unless `-O nonsrec` (DESIGN.md, *Namespace records in the
/// chain*); a small fsync batch's data written beside its nodes, one device range, unless
/// `-O nomixed` (*Data beside its chain*); the summaries of open segments carried in the
/// checkpoint unless `-O nocpsum` (*SSA of open segments in the checkpoint payload*). (The core's `MkfsOptions::default()` is format 2
/// with every part off: what older binaries read.)
pub(crate) fn mkfs_defaults() -> MkfsOptions {
    MkfsOptions {
        dir_v2: true,
        prealloc_on_disk: true,
        inline_data: true,
        ns_records: true,
        mixed_node: true,
        cp_summaries: true,
        ..MkfsOptions::default()
    }
}

/// Applies `-O` feature words to the mkfs options; an unknown word is an error (before
/// anything is created or written).
pub(crate) fn apply_features(features: &[String], opts: &mut MkfsOptions) -> Result<()> {
    for word in features.iter().flat_map(|f| f.split(',')).map(str::trim).filter(|w| !w.is_empty()) {
        match word {
            "datasum" => opts.data_checksums = true,
            "nodatasum" => opts.data_checksums = false,
            "dirv2" => opts.dir_v2 = true,
            "nodirv2" => opts.dir_v2 = false,
            "prealloc" => opts.prealloc_on_disk = true,
            "noprealloc" => opts.prealloc_on_disk = false,
            "inline" => opts.inline_data = true,
            "noinline" => opts.inline_data = false,
            "nsrec" => opts.ns_records = true,
            "nonsrec" => opts.ns_records = false,
            "mixed" => opts.mixed_node = true,
            "nomixed" => opts.mixed_node = false,
            "cpsum" => opts.cp_summaries = true,
            "nocpsum" => opts.cp_summaries = false,
            other => {
                return Err(CliError::BadOption(format!(
                    "-O {other}: unknown feature (known: datasum, nodatasum, dirv2, nodirv2, prealloc, noprealloc, \
                     inline, noinline, nsrec, nonsrec, mixed, nomixed, cpsum, nocpsum)"
                )))
            }
        }
    }
    Ok(())
}

/// Writes zeros over the whole of a new image file and syncs it, so that the host has
/// allocated (and written: ext4 and XFS keep `fallocate`d extents "unwritten" and convert
/// them inside the first fdatasync that covers them) every block before the first mount.
/// Otherwise each first write to a block makes the host allocate inside one of rollfs's
/// fsyncs, which then waits for the host's own metadata journal. Progress on stderr for
/// large images when it is a terminal.
fn write_out(f: &std::fs::File, path: &std::path::Path, size_bytes: u64, quiet: bool) -> Result<()> {
    use std::io::IsTerminal;
    use std::os::unix::fs::FileExt;
    const CHUNK: u64 = 1 << 20;
    let zeros = vec![0u8; CHUNK as usize];
    let show = !quiet && size_bytes >= 1 << 30 && std::io::stderr().is_terminal();
    let mut last_pct = u64::MAX;
    let mut off = 0u64;
    while off < size_bytes {
        let n = CHUNK.min(size_bytes - off) as usize;
        f.write_all_at(&zeros[..n], off).map_err(|e| CliError::io(path, "write out the image", e))?;
        off += n as u64;
        let pct = off * 100 / size_bytes;
        if show && pct != last_pct {
            eprint!("\rrollfs: writing the image: {pct:3}%");
            last_pct = pct;
        }
    }
    if show {
        eprintln!();
    }
    f.sync_all().map_err(|e| CliError::io(path, "write out the image", e))
}

fn random_uuid() -> [u8; 16] {
    let mut u = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = std::io::Read::read_exact(&mut f, &mut u);
    }
    // RFC 4122 version 4, variant 1.
    u[6] = (u[6] & 0x0f) | 0x40;
    u[8] = (u[8] & 0x3f) | 0x80;
    u
}

/// The directory hash key of a new filesystem: 16 bytes from the kernel's random source
/// (getrandom(2)); never all zero (that means "unkeyed"). Secret: it is not printed, and
/// the image that holds it is created 0600.
fn random_hash_seed(path: &Path) -> Result<[u8; 16]> {
    let mut k = [0u8; 16];
    // SAFETY: getrandom writes at most k.len() bytes into k.
    let n = unsafe { libc::getrandom(k.as_mut_ptr() as *mut libc::c_void, k.len(), 0) };
    if n != k.len() as isize {
        return Err(CliError::io(path, "draw the directory hash key", std::io::Error::last_os_error()));
    }
    if k == [0; 16] {
        k[0] = 1;
    }
    Ok(k)
}

pub fn format_uuid(u: &[u8; 16]) -> String {
    let h: Vec<String> = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    )
}

pub fn mkfs(a: &MkfsArgs) -> Result<i32> {
    let path = a.target.as_path();
    let mut opts = mkfs_defaults();
    apply_features(&a.features, &mut opts)?;
    if let Some(seg) = a.segment_size {
        if seg % rollfs_core::BLOCK_SIZE as u64 != 0 {
            return Err(CliError::BadOption(format!(
                "--segment-size {seg}: must be a multiple of 4 KiB (a power of two from 64K to 2M)"
            )));
        }
        opts.segment_blocks = (seg / rollfs_core::BLOCK_SIZE as u64) as u32;
    }
    if let Some(op) = a.overprovision {
        opts.overprovision_pct = op;
    }
    if let Some(l) = &a.label {
        if l.len() > rollfs_core::superblock::SB_LABEL_MAX {
            return Err(CliError::BadOption(format!(
                "--label {l:?}: at most {} bytes",
                rollfs_core::superblock::SB_LABEL_MAX
            )));
        }
        opts.label = l.as_bytes().to_vec();
    }
    opts.root_reserve_pct = a.reserve_pct;
    if let Some(max) = a.max_size {
        if a.size.is_some_and(|s| max <= s) {
            return Err(CliError::BadOption(format!(
                "--max-size {}: not above --size: there would be no room to grow",
                size::human(max)
            )));
        }
        opts.max_blocks = max / rollfs_core::BLOCK_SIZE as u64;
    }
    opts.uuid = random_uuid();
    opts.hash_seed = random_hash_seed(path)?;
    opts.time = crate::now();
    // SAFETY: getuid/getgid cannot fail.
    opts.root_owner = rollfs_core::Credentials { uid: unsafe { libc::getuid() }, gid: unsafe { libc::getgid() } };

    let existed = path.exists();
    // `--root`: scan the tree before anything is created or written, size the image from
    // it when --size is left out, and refuse a size that cannot hold it.
    let tree = match &a.root {
        Some(dir) => Some(crate::populate::scan(dir, path)?),
        None => None,
    };
    let size = match (&tree, a.size) {
        (Some(t), None) if !existed => Some(crate::populate::image_size(t, &opts)?),
        (_, s) => s,
    };
    if let (Some(t), Some(sz)) = (&tree, size) {
        crate::populate::check_fits(t, sz / rollfs_core::BLOCK_SIZE as u64, &opts, path)?;
    }
    if !existed {
        let Some(sz) = size else {
            return Err(CliError::Failed {
                path: path.to_owned(),
                what: "cannot format",
                detail: "no such file or device (give --size to create an image file)".into(),
            });
        };
        // Private (the image holds every file's data) and never through a planted link.
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| CliError::io(path, "create the image", e))?;
        f.set_len(sz).map_err(|e| CliError::io(path, "size the image", e))?;
        if !a.sparse {
            if let Err(e) = write_out(&f, path, sz, a.quiet) {
                drop(f);
                let _ = std::fs::remove_file(path);
                return Err(e);
            }
        }
    }
    let result = (|| {
        let mut dev = FileDevice::open(path, DeviceOptions::default())?;
        if existed {
            crate::secure::check_target(dev.file(), path, "format", a.force)?;
            if let Some(what) = probe::existing_filesystem(&mut dev) {
                if !a.force {
                    return Err(CliError::HasFilesystem { path: path.to_owned(), what });
                }
            }
            if let Some(sz) = size {
                match dev.kind() {
                    DeviceKind::ImageFile => {
                        drop(dev);
                        let f = std::fs::OpenOptions::new()
                            .write(true)
                            .open(path)
                            .map_err(|e| CliError::io(path, "open", e))?;
                        f.set_len(sz).map_err(|e| CliError::io(path, "resize the image", e))?;
                        drop(f);
                        dev = FileDevice::open(path, DeviceOptions::default())?;
                    }
                    DeviceKind::BlockDevice => {
                        if sz > dev.block_count() * rollfs_core::BLOCK_SIZE as u64 {
                            return Err(CliError::BadOption(format!(
                                "--size {}: larger than the device ({})",
                                size::human(sz),
                                size::human(dev.block_count() * rollfs_core::BLOCK_SIZE as u64)
                            )));
                        }
                    }
                }
            }
        }
        let bytes = dev.block_count() * rollfs_core::BLOCK_SIZE as u64;
        let (mut dev, populated) = match &tree {
            Some(t) => {
                crate::populate::check_fits(t, dev.block_count(), &opts, path)?;
                let popts = crate::populate::PopulateOptions { progress: a.progress };
                let (dev, summary) = crate::populate::format_populated(dev, &opts, t, &popts, path)?;
                (dev, Some(summary))
            }
            None => (Filesystem::format(dev, &opts).map_err(|e| CliError::core(path, "cannot format", e))?, None),
        };
        dev.wait_writes().and_then(|_| dev.flush()).map_err(|e| CliError::core(path, "cannot format", e.into()))?;
        if !a.quiet {
            let sb = rollfs_core::superblock::read_superblock(&mut dev)
                .map_err(|e| CliError::core(path, "format did not verify", e))?;
            let g = sb.geometry;
            println!(
                "rollfs: formatted {} ({}): {} main segments of {}, {} reserved, {} inodes max, data checksums {}, \
                 directories {}, reservations {}, inline data {}, namespace records {}, uuid {}{}{}",
                path.display(),
                size::human(bytes),
                g.main_segments,
                size::human(g.segment_blocks as u64 * rollfs_core::BLOCK_SIZE as u64),
                g.reserved_segments,
                g.nid_count,
                if sb.data_checksums() { "on" } else { "off" },
                if sb.dir_v2() { "v2" } else { "v1" },
                if sb.prealloc_on_disk() { "kept on disk" } else { "in memory" },
                if sb.inline_data() { "on" } else { "off" },
                if sb.ns_records() { "on" } else { "off" },
                format_uuid(&sb.uuid),
                if sb.label.is_empty() {
                    String::new()
                } else {
                    format!(", label {:?}", String::from_utf8_lossy(&sb.label))
                },
                if sb.can_grow() {
                    format!(", room to grow up to {}", size::human(sb.max_blocks * rollfs_core::BLOCK_SIZE as u64))
                } else {
                    String::new()
                }
            );
            if let (Some(p), Some(dir)) = (&populated, &a.root) {
                println!(
                    "rollfs: copied {} into it: {} files ({} of data), {} directories, {} symlinks, {} hard links, \
                     {} special files, {} extended attributes in {:.1} s{}",
                    dir.display(),
                    p.files,
                    size::human(p.data_bytes),
                    p.directories,
                    p.symlinks,
                    p.hard_links,
                    p.special,
                    p.xattrs,
                    p.seconds,
                    if p.skipped > 0 {
                        format!("; {} skipped (see the warnings above)", p.skipped)
                    } else {
                        String::new()
                    }
                );
            }
        }
        Ok(0)
    })();
    if result.is_err() && !existed {
        // Do not leave a half-made image behind.
        let _ = std::fs::remove_file(path);
    }
    result
}

// ---------------------------------------------------------------- mount

#[derive(Debug, Clone, Default)]
pub struct MountArgs {
    pub foreground: bool,
    pub options: Vec<String>,
    pub record_writes: Option<PathBuf>,
    /// `--record-ops LOG`: the operation log (oplog.rs).
    pub record_ops: Option<PathBuf>,
    pub target: PathBuf,
    pub mountpoint: PathBuf,
    /// Internal: this process is the background daemon; report readiness on stdout.
    pub daemon_child: bool,
    /// Mount a target that another user owns or can write (see [`crate::secure`]).
    pub force: bool,
}

/// Parsed `-o` options.
#[derive(Debug, Clone)]
pub struct MountOpts {
    pub read_only: bool,
    pub allow_other: bool,
    pub direct: bool,
    pub threads: usize,
    /// `-o uring` / `-o nouring`: the FUSE transport (io_uring or /dev/fuse); None = the
    /// default (/dev/fuse).
    pub uring: Option<bool>,
    pub writers: usize,
    pub dirty_bytes_max: Option<u64>,
    /// Root reserve (`-o reserve=PCT%|SIZE`; unset: what mkfs recorded, else 5 %): space only root, `resuid` and
    /// `resgid` may fill, so that a user filling the filesystem leaves room to repair it.
    pub reserve: Option<Reserve>,
    pub resuid: Option<u32>,
    pub resgid: Option<u32>,
    pub fuse: Vec<fuser::MountOption>,
    /// Discard (TRIM) segments freed by checkpoints: `-o discard` / `-o nodiscard`; unset,
    /// see [`discard_default`].
    pub discard: Option<bool>,
    /// Background cleaning after this many idle seconds (`-o gc_idle=N`; 0 = off).
    pub gc_idle_secs: u64,
    /// Slack space recycling when free segments run low (`-o nossr` turns it off).
    pub ssr: bool,
    /// `-o force`: as `mount --force` (for fstab and mount(8), which pass only options).
    pub force: bool,
}

/// How much space the root reserve holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    /// Percent of the device (0..=50).
    Percent(u32),
    Bytes(u64),
}

/// The root reserve when neither the mount options nor mkfs chose one, in percent.
pub const DEFAULT_RESERVE_PCT: u32 = 5;

fn parse_reserve(v: &str) -> Result<Reserve> {
    let bad = || CliError::BadOption(format!("-o reserve={v}: expected a percentage from 0% to 50% or a size"));
    match v.strip_suffix('%') {
        Some(p) => p.parse::<u32>().ok().filter(|&p| p <= 50).map(Reserve::Percent).ok_or_else(bad),
        None if v == "0" => Ok(Reserve::Bytes(0)),
        None => size::parse_size(v).map(Reserve::Bytes).map_err(|_| bad()),
    }
}

/// Whether to discard freed segments when the mount options do not say: on a block device
/// yes (TRIM helps flash); on an image file only when it is sparse, where a discard punches
/// a hole and gives the space back to the host. A written-out image (mkfs's default) keeps
/// its blocks allocated, so that the host never allocates inside one of rollfs's fsyncs.
pub fn discard_default(kind: DeviceKind, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    match kind {
        DeviceKind::BlockDevice => true,
        DeviceKind::ImageFile => meta.blocks() * 512 < meta.len(),
    }
}

pub fn parse_mount_options(list: &[String]) -> Result<MountOpts> {
    use fuser::MountOption as M;
    let mut o = MountOpts {
        read_only: false,
        allow_other: false,
        direct: false,
        threads: 8,
        uring: None,
        writers: 4,
        dirty_bytes_max: None,
        reserve: None,
        resuid: None,
        resgid: None,
        fuse: Vec::new(),
        discard: None,
        gc_idle_secs: 5,
        ssr: true,
        force: false,
    };
    let num = |k: &str, v: &str| -> Result<usize> {
        v.parse::<usize>()
            .ok()
            .filter(|&n| (1..=256).contains(&n))
            .ok_or_else(|| CliError::BadOption(format!("-o {k}={v}: expected a number from 1 to 256")))
    };
    for item in list.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = match item.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (item, None),
        };
        match (k, v) {
            ("ro", None) => o.read_only = true,
            ("rw", None) => o.read_only = false,
            ("allow_other", None) => o.allow_other = true,
            ("direct", None) | ("o_direct", None) => o.direct = true,
            ("discard", None) => o.discard = Some(true),
            ("nodiscard", None) => o.discard = Some(false),
            ("gc_idle", Some(v)) => {
                o.gc_idle_secs = v
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| n <= 86_400)
                    .ok_or_else(|| CliError::BadOption(format!("-o gc_idle={v}: expected seconds from 0 (off) to 86400")))?
            }
            ("nogc", None) => o.gc_idle_secs = 0,
            ("ssr", None) => o.ssr = true,
            ("nossr", None) => o.ssr = false,
            ("force", None) => o.force = true,
            ("threads", Some(v)) => o.threads = num(k, v)?,
            ("uring", None) => o.uring = Some(true),
            ("nouring", None) => o.uring = Some(false),
            ("writers", Some(v)) => o.writers = num(k, v)?,
            ("reserve", Some(v)) => o.reserve = Some(parse_reserve(v)?),
            ("resuid", Some(v)) => {
                o.resuid = Some(v.parse().map_err(|_| CliError::BadOption(format!("-o resuid={v}: expected a uid")))?)
            }
            ("resgid", Some(v)) => {
                o.resgid = Some(v.parse().map_err(|_| CliError::BadOption(format!("-o resgid={v}: expected a gid")))?)
            }
            ("dirty_max", Some(v)) => {
                o.dirty_bytes_max = Some(size::parse_size(v).map_err(|e| CliError::BadOption(format!("-o dirty_max: {e}")))?)
            }
            ("dev", None) => o.fuse.push(M::Dev),
            ("nodev", None) => o.fuse.push(M::NoDev),
            ("suid", None) => o.fuse.push(M::Suid),
            ("nosuid", None) => o.fuse.push(M::NoSuid),
            ("exec", None) => o.fuse.push(M::Exec),
            ("noexec", None) => o.fuse.push(M::NoExec),
            ("atime", None) => o.fuse.push(M::Atime),
            ("noatime", None) => o.fuse.push(M::NoAtime),
            ("dirsync", None) => o.fuse.push(M::DirSync),
            // Always on: the kernel checks permissions against the modes the core stores.
            ("default_permissions", None) => {}
            // fstab and mount(8) bookkeeping options that mean nothing to the filesystem.
            ("defaults" | "auto" | "noauto" | "user" | "users" | "nouser" | "nofail" | "_netdev" | "relatime" | "norelatime" | "strictatime" | "async" | "loop", None) => {}
            (k, _) if k.starts_with("x-") || k.starts_with("comment=") => {}
            _ => {
                return Err(CliError::BadOption(format!(
                    "-o {item}: unknown mount option (known: ro, rw, allow_other, direct, [no]discard, threads=N, [no]uring, writers=N, dirty_max=SIZE, reserve=PCT%|SIZE, resuid=UID, resgid=GID, [no]dev, [no]suid, [no]exec, [no]atime, dirsync, force)"
                )))
            }
        }
    }
    Ok(o)
}

fn check_mountpoint(p: &Path) -> Result<()> {
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(CliError::MountPointNotDir { path: p.to_owned() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(CliError::MountPointMissing { path: p.to_owned() }),
        Err(e) => Err(CliError::io(p, "use the mount point", e)),
    }
}

/// Blocks the termination signals in this thread (and every thread started after), so
/// that one dedicated thread can `sigwait` for them and unmount cleanly.
fn block_signals() -> libc::sigset_t {
    // SAFETY: plain signal-mask manipulation on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGHUP);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// Whether this kernel offers FUSE over io_uring to new mounts: the fuse module's
/// `enable_uring` parameter (Linux 6.14+ with CONFIG_FUSE_IO_URING; off by default).
fn check_uring_offered() -> std::result::Result<(), String> {
    const PARAM: &str = "/sys/module/fuse/parameters/enable_uring";
    match std::fs::read_to_string(PARAM) {
        Ok(v) if v.trim() == "Y" || v.trim() == "1" => Ok(()),
        Ok(_) => Err(format!("FUSE over io_uring is off in this kernel: as root, `echo Y > {PARAM}` (or boot with fuse.enable_uring=1), or mount without -o uring")),
        Err(_) => Err(format!("this kernel has no FUSE over io_uring ({PARAM} is missing: it needs Linux 6.14+ built with CONFIG_FUSE_IO_URING); mount without -o uring")),
    }
}

/// The background parent: starts the daemon (this program with `--foreground` and the
/// internal `--daemon-child`), waits for it to say the mount is up or why it failed.
fn spawn_daemon(a: &MountArgs) -> Result<i32> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let exe = std::env::current_exe().map_err(|e| CliError::io(Path::new("/proc/self/exe"), "find this program", e))?;
    let mut cmd = Command::new(exe);
    cmd.arg("mount").arg("--foreground").arg("--daemon-child");
    for o in &a.options {
        cmd.arg("-o").arg(o);
    }
    if a.force {
        cmd.arg("--force");
    }
    if let Some(l) = &a.record_writes {
        cmd.arg("--record-writes").arg(std::path::absolute(l).unwrap_or(l.clone()));
    }
    if let Some(l) = &a.record_ops {
        cmd.arg("--record-ops").arg(std::path::absolute(l).unwrap_or(l.clone()));
    }
    cmd.arg(std::path::absolute(&a.target).unwrap_or(a.target.clone()));
    cmd.arg(std::path::absolute(&a.mountpoint).unwrap_or(a.mountpoint.clone()));
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null()).current_dir("/");
    // SAFETY: setsid is async-signal-safe; it detaches the daemon from our terminal.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| CliError::io(Path::new("/proc/self/exe"), "start the mount daemon", e))?;
    let mut line = String::new();
    let _ = BufReader::new(child.stdout.take().unwrap()).read_line(&mut line);
    let line = line.trim_end();
    if line == "READY" {
        return Ok(0);
    }
    if let Some(rest) = line.strip_prefix("ERROR ") {
        let (code, msg) = rest.split_once(' ').unwrap_or(("1", rest));
        let _ = child.wait();
        eprintln!("rollfs: {msg}");
        return Ok(code.parse().unwrap_or(1));
    }
    let status = child.wait().ok();
    Err(CliError::Failed {
        path: a.target.clone(),
        what: "mount failed",
        detail: format!("the mount daemon exited before mounting ({status:?}); run with --foreground to see why"),
    })
}

pub fn mount(a: &MountArgs) -> Result<i32> {
    if !a.foreground && !a.daemon_child {
        // Validate the cheap things here too, so usage errors come back directly.
        parse_mount_options(&a.options)?;
        check_mountpoint(&a.mountpoint)?;
        return spawn_daemon(a);
    }
    let notify = |msg: &str| {
        if a.daemon_child {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{msg}");
            let _ = out.flush();
        }
    };
    match mount_foreground(a, &|| notify("READY")) {
        Ok(code) => Ok(code),
        Err(e) => {
            notify(&format!("ERROR {} {e}", e.exit_code()));
            Err(e)
        }
    }
}

/// One malloc arena for the whole daemon. The core's cache blocks are allocated by
/// whichever request thread writes and freed by whichever thread writes them back; with
/// glibc's default of an arena per thread, each of the 8 request threads' arenas kept up
/// to the cache's size in freed blocks, and a 1 GiB sequential write left the daemon at
/// 375 MiB resident for caches bounded at 128 MiB (93 MiB with one arena). The core runs
/// under one lock anyway, so the arena's own lock costs nothing measurable.
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; called before other threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

fn mount_foreground(a: &MountArgs, ready: &dyn Fn()) -> Result<i32> {
    // Before any thread exists (drain threads, fuser's), so that every thread inherits
    // the blocked mask and only the signal thread below ever sees SIGINT/SIGTERM.
    let sigset = block_signals();
    one_malloc_arena();
    let o = parse_mount_options(&a.options)?;
    let path = a.target.as_path();
    check_mountpoint(&a.mountpoint)?;
    if !Path::new("/dev/fuse").exists() {
        return Err(CliError::Failed {
            path: "/dev/fuse".into(),
            what: "cannot mount",
            detail: "FUSE is not available (load the fuse module or install fuse3)".into(),
        });
    }
    let dopts = DeviceOptions { write: !o.read_only, direct: o.direct, lock: true, writers: o.writers };
    let mut fdev = FileDevice::open(path, dopts)?;
    let fdev_blocks = fdev.block_count();
    let fdev_kind = fdev.kind();
    let fdev_meta = fdev.file().metadata().map_err(|e| CliError::io(path, "open", e))?;
    crate::secure::check_target(fdev.file(), path, "mount", a.force || o.force)?;
    let sb = probe::check_superblock(&mut fdev, path)?;
    // Group commit flushes outside the filesystem lock, recording or not: the recorder
    // learns of completions and flushes from the device itself (record.rs).
    let flusher = fdev.flush_handle();
    // Data reads outside the lock: not with a recording (its log must see every read's
    // device state as the core does: keep one path), nor with O_DIRECT (reader() is None).
    let reader = if a.record_writes.is_none() { fdev.reader() } else { None };
    let (dev, marks): (Dev, _) = match &a.record_writes {
        Some(log) => {
            let snapshot_file = fdev.file().try_clone().map_err(|e| CliError::io(path, "open", e))?;
            let is_image = fdev.kind() == DeviceKind::ImageFile;
            let rec = RecordingDevice::create(fdev, log, is_image.then_some(&snapshot_file), true)?;
            // A fresh device has no observer: this cannot fail, and a log claiming device
            // reports without them would make every crash state look unflushed.
            let observed = rec.inner().observe(rec.observer());
            assert!(observed, "the device had an observer already");
            let log = rec.log();
            (Box::new(rec), Some(log))
        }
        None => (Box::new(fdev), None),
    };
    let discard = o.discard.unwrap_or_else(|| discard_default(fdev_kind, &fdev_meta));
    let mut mopts = MountOptions { read_only: o.read_only, discard, ssr: o.ssr, ..Default::default() };
    // The mount option, else what mkfs recorded (`mkfs --reserve`), else 5 % (as ext4).
    let reserve = o.reserve.unwrap_or(Reserve::Percent(sb.root_reserve_pct.unwrap_or(DEFAULT_RESERVE_PCT)));
    // A percentage is of the filesystem's size (the checkpoint's, which a grow changes), not
    // the device's: the core computes it at mount and again after an online grow.
    match reserve {
        Reserve::Percent(p) => mopts.root_reserve_pct = Some(p),
        Reserve::Bytes(b) => mopts.root_reserve_blocks = b.div_ceil(rollfs_core::BLOCK_SIZE as u64),
    }
    if let Some(d) = o.dirty_bytes_max {
        mopts.dirty_bytes_max = d;
    }
    let fs = Filesystem::mount(dev, &crate::with_mount_nonce(mopts), crate::now())
        .map_err(|e| CliError::core(path, "mount failed", e))?;
    let ops = match &a.record_ops {
        Some(l) => Some(crate::oplog::OpRecorder::create(l, fdev_blocks, rollfs_core::layout::ROOT_INO)?),
        None => None,
    };
    let mut driver = RollFuse::new(fs, Some(flusher));
    driver.set_marks(marks);
    driver.set_ops(ops);
    driver.set_reader(reader);
    driver.set_reserve_users(o.resuid, o.resgid);
    // The kernel leaves MS_DIRSYNC to the filesystem: the driver honours it.
    driver.set_dirsync(o.fuse.contains(&fuser::MountOption::DirSync));
    if o.gc_idle_secs > 0 && !o.read_only {
        use std::time::Duration;
        let idle = Duration::from_secs(o.gc_idle_secs);
        // Check for idleness a few times per idle period, at most once a second.
        driver.start_background_gc(idle, (idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(1)));
    }
    let unmount_result = driver.unmount_result();
    let notifications = driver.notifications();

    let mut fuse_opts = vec![
        fuser::MountOption::FSName(std::path::absolute(path).unwrap_or(path.to_owned()).display().to_string()),
        // As a kernel option, not fuser's `Subtype`: fuser's own mount(2) (as root) drops
        // that one, and /proc/mounts would say `fuse`; fusermount3 knows it too.
        fuser::MountOption::CUSTOM("subtype=rollfs".into()),
        fuser::MountOption::DefaultPermissions,
        if o.read_only { fuser::MountOption::RO } else { fuser::MountOption::RW },
    ];
    fuse_opts.extend(o.fuse.iter().cloned());
    let mut config = fuser::Config::default();
    config.mount_options = fuse_opts;
    config.acl = if o.allow_other { fuser::SessionACL::All } else { fuser::SessionACL::Owner };
    config.n_threads = Some(o.threads);
    config.clone_fd = true;
    config.io_uring = o.uring == Some(true);
    if config.io_uring {
        check_uring_offered().map_err(|detail| CliError::Failed {
            path: a.mountpoint.clone(),
            what: "cannot mount with -o uring",
            detail,
        })?;
    }

    let mut session = fuser::Session::new(driver, &a.mountpoint, &config).map_err(|e| {
        let detail = match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => format!("{e} (mounting FUSE needs root or fusermount3)"),
            _ => e.to_string(),
        };
        CliError::Failed { path: a.mountpoint.clone(), what: "cannot mount", detail }
    })?;
    if config.io_uring && !session.io_uring_negotiated() {
        return Err(CliError::Failed {
            path: a.mountpoint.clone(),
            what: "cannot mount with -o uring",
            detail: "the kernel did not offer FUSE over io_uring at INIT".into(),
        });
    }
    raise_readahead(&a.mountpoint);
    // Kernel notifications are sent from their own thread, never a request thread (notify.rs).
    notifications
        .start(std::sync::Arc::new(session.notifier()))
        .map_err(|e| CliError::io(path, "start the notify thread", e))?;
    let mut unmounter = session.unmount_callable();
    let mountpoint = a.mountpoint.clone();
    std::thread::Builder::new()
        .name("rollfs-signals".into())
        .spawn(move || loop {
            let mut sig: libc::c_int = 0;
            // SAFETY: waits on the set blocked above.
            if unsafe { libc::sigwait(&sigset, &mut sig) } != 0 {
                return;
            }
            match unmounter.unmount() {
                Ok(()) => return,
                Err(e) => eprintln!("rollfs: cannot unmount {} on signal {sig}: {e}", mountpoint.display()),
            }
        })
        .map_err(|e| CliError::io(path, "start the signal thread", e))?;
    ready();
    if a.daemon_child {
        // From here on nobody reads our stdout.
        if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
            use std::os::fd::AsRawFd;
            // SAFETY: replaces fd 1 with /dev/null.
            unsafe { libc::dup2(null.as_raw_fd(), 1) };
        }
    }
    let run = session.run();
    let result = unmount_result.lock().ok().and_then(|mut g| g.take());
    match (run, result) {
        (_, Some(Ok(()))) => Ok(0),
        (_, Some(Err(detail))) => Err(CliError::Failed { path: path.to_owned(), what: "unclean unmount", detail }),
        (Err(e), None) => {
            Err(CliError::Failed { path: path.to_owned(), what: "FUSE session failed", detail: e.to_string() })
        }
        (Ok(()), None) => Err(CliError::Failed {
            path: path.to_owned(),
            what: "unclean unmount",
            detail: "the FUSE session ended without a clean unmount".into(),
        }),
    }
}

// ---------------------------------------------------------------- fsck

pub const FSCK_CLEAN: i32 = 0;
pub const FSCK_FIXED: i32 = 1;
pub const FSCK_UNCORRECTED: i32 = 4;
pub const FSCK_OPERATIONAL: i32 = 8;
pub const FSCK_USAGE: i32 = 16;

/// `rollfs fsck` (and `scrub`) options.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsckArgs {
    pub repair: bool,
    pub json: bool,
    /// Check the metadata only: skip reading every data block against its checksum.
    pub no_verify_data: bool,
}

pub fn fsck(target: &Path, a: &FsckArgs) -> i32 {
    match fsck_inner(target, a) {
        Ok(code) => code,
        Err((code, e)) => {
            eprintln!("rollfs fsck: {e}");
            code
        }
    }
}

fn print_report(target: &Path, r: &rollfs_core::fsck::FsckReport, json: bool) {
    if json {
        let v = serde_json::json!({
            "target": target.display().to_string(),
            "clean": r.is_clean(),
            "problems": r.problems,
            "inodes": r.inodes,
            "directories": r.directories,
            "data_blocks": r.data_blocks,
            "node_blocks": r.node_blocks,
            "reserved_blocks": r.reserved_blocks,
            "checkpoint_version": r.checkpoint_version,
            "pending_chain_nodes": r.pending_chain_nodes,
            "pending_inodes": r.pending_inodes,
            "data_blocks_verified": r.data_blocks_verified,
            "bad_data": bad_data_json(&r.bad_data),
        });
        println!("{v}");
        return;
    }
    for p in &r.problems {
        println!("{}: {p}", target.display());
    }
    for b in &r.bad_data {
        println!("{}: {b}", target.display());
    }
    println!(
        "{}: {}, {} inodes ({} directories), {} data blocks{}{}, {} node blocks, checkpoint {}",
        target.display(),
        verdict(r),
        r.inodes,
        r.directories,
        r.data_blocks,
        if r.data_blocks_verified > 0 { format!(" ({} verified)", r.data_blocks_verified) } else { String::new() },
        if r.reserved_blocks > 0 { format!(", {} reserved (fallocate)", r.reserved_blocks) } else { String::new() },
        r.node_blocks,
        r.checkpoint_version
    );
    if !r.bad_data.is_empty() {
        println!("{}: {}", target.display(), BAD_DATA_ADVICE);
    }
    if r.pending_chain_nodes > 0 {
        // The counts above are the checkpoint's: say what the next mount adds to them.
        println!(
            "{}: fsync chain of {} node blocks after the checkpoint: the next read-write mount recovers {} fsync'd inodes",
            target.display(),
            r.pending_chain_nodes,
            r.pending_inodes
        );
    }
}

/// What to do about bad data blocks (fsck, fsck --repair, scrub).
const BAD_DATA_ADVICE: &str = "a bad data block's bytes are lost (reads of it get EIO; the rest of each file reads fine) and no repair brings them back: restore those files from a copy, or rewrite the blocks (a write of a whole block replaces it)";

/// "clean", or what is wrong: metadata problems and bad data blocks (in how many files).
fn verdict(r: &rollfs_core::fsck::FsckReport) -> String {
    let mut parts = Vec::new();
    if !r.problems.is_empty() {
        parts.push(format!("{} problems", r.problems.len()));
    }
    if !r.bad_data.is_empty() {
        let files: std::collections::BTreeSet<u32> = r.bad_data.iter().map(|b| b.ino).collect();
        parts.push(format!("{} bad data blocks in {} files", r.bad_data.len(), files.len()));
    }
    if parts.is_empty() {
        "clean".to_string()
    } else {
        parts.join(", ")
    }
}

fn bad_data_json(bad: &[rollfs_core::fsck::BadData]) -> serde_json::Value {
    bad.iter()
        .map(|b| serde_json::json!({ "ino": b.ino, "path": b.path, "index": b.index, "offset": b.index * rollfs_core::BLOCK_SIZE as u64, "block": b.block }))
        .collect()
}

/// A progress bar on stderr when stderr is a terminal (and the output is not JSON):
/// `fsck: [####      ]  40% (N of M inodes)`, redrawn in place. `mkfs --root` and `dump`
/// draw theirs with [`Bar::labelled`].
pub(crate) struct Bar {
    show: bool,
    last_pct: u64,
    what: &'static str,
    unit: &'static str,
}

impl Bar {
    fn new(json: bool) -> Bar {
        use std::io::IsTerminal;
        Bar::labelled(!json && std::io::stderr().is_terminal(), "fsck", "inodes")
    }

    /// A bar for `what` (the command) counting `unit`s, drawn when `show`.
    pub(crate) fn labelled(show: bool, what: &'static str, unit: &'static str) -> Bar {
        Bar { show, last_pct: u64::MAX, what, unit }
    }

    pub(crate) fn update(&mut self, done: u64, total: u64) {
        use std::io::Write;
        if !self.show || total == 0 {
            return;
        }
        let pct = (done * 100 / total).min(100);
        if pct != self.last_pct {
            self.last_pct = pct;
            let filled = (pct / 5) as usize;
            let _ = write!(
                std::io::stderr(),
                "\r{}: [{}{}] {pct:3}% ({done} of {total} {})",
                self.what,
                "#".repeat(filled),
                " ".repeat(20 - filled),
                self.unit
            );
            let _ = std::io::stderr().flush();
        }
    }

    pub(crate) fn finish(&self) {
        if self.show {
            eprintln!();
        }
    }
}

fn print_repair(target: &Path, r: &rollfs_core::fsck::RepairReport, json: bool) {
    let t = target.display();
    if json {
        let v = serde_json::json!({
            "target": t.to_string(),
            "clean": r.is_clean(),
            "repaired": r.changed(),
            "problems": r.before.problems,
            "fixes": r.fixes,
            "unfixed": r.unfixed,
            "remaining": r.after.problems,
            "inodes": r.after.inodes,
            "directories": r.after.directories,
            "data_blocks": r.after.data_blocks,
            "node_blocks": r.after.node_blocks,
            "checkpoint_version": r.after.checkpoint_version,
            "data_blocks_verified": r.after.data_blocks_verified,
            "bad_data": bad_data_json(&r.after.bad_data),
        });
        println!("{v}");
        return;
    }
    if r.before.problems.is_empty() {
        // Nothing for the repair to do (bad data blocks, if any, are not repairable).
        print_report(target, &r.after, false);
        return;
    }
    for p in &r.before.problems {
        println!("{t}: {p}");
    }
    println!("{t}: repairing: rebuilding the metadata from the tree reachable from the root");
    for f in &r.fixes {
        println!("{t}: fixed: {f}");
    }
    for f in &r.unfixed {
        println!("{t}: not fixed: {f}");
    }
    for p in &r.after.problems {
        println!("{t}: still: {p}");
    }
    for b in &r.after.bad_data {
        println!("{t}: still: {b}");
    }
    let a = &r.after;
    println!(
        "{t}: {}: {} problems found, {} fixes; {}, {} inodes ({} directories), {} data blocks, {} node blocks, checkpoint {}",
        if r.is_clean() { "repaired" } else { "NOT fully repaired" },
        r.before.problems.len(),
        r.fixes.len(),
        if r.is_clean() {
            "clean".to_string()
        } else {
            let mut left = format!("{} problems left", a.problems.len() + r.unfixed.len());
            if !a.bad_data.is_empty() {
                left += &format!(", {} bad data blocks", a.bad_data.len());
            }
            left
        },
        a.inodes,
        a.directories,
        a.data_blocks,
        a.node_blocks,
        a.checkpoint_version
    );
    if !a.bad_data.is_empty() {
        println!("{t}: {BAD_DATA_ADVICE}");
    }
}

/// Opens TARGET for fsck or scrub and reads its superblock: a corrupted superblock is
/// exit 4 (errors left), anything else that stops the check exit 8 (operational).
pub(crate) fn open_checked(
    target: &Path,
    write: bool,
) -> Result<(FileDevice, rollfs_core::superblock::Superblock), (i32, CliError)> {
    let dopts = DeviceOptions { write, ..Default::default() };
    let mut dev = FileDevice::open(target, dopts).map_err(|e| (FSCK_OPERATIONAL, e))?;
    match probe::check_superblock(&mut dev, target) {
        Ok(sb) => Ok((dev, sb)),
        Err(e @ CliError::CorruptSuperblock { .. }) => Err((FSCK_UNCORRECTED, e)),
        Err(e) => Err((FSCK_OPERATIONAL, e)),
    }
}

fn fsck_inner(target: &Path, a: &FsckArgs) -> Result<i32, (i32, CliError)> {
    let (repair, json) = (a.repair, a.json);
    let (mut dev, _) = open_checked(target, repair)?;
    let opts = rollfs_core::fsck::FsckOptions { verify_data: !a.no_verify_data };
    let mut bar = Bar::new(json);
    if !repair {
        let r = rollfs_core::fsck::check_with(&mut dev, &opts, &mut |d, t| bar.update(d, t));
        bar.finish();
        let report = r.map_err(|e| (FSCK_OPERATIONAL, CliError::core(target, "cannot check", e)))?;
        print_report(target, &report, json);
        if report.is_clean() {
            return Ok(FSCK_CLEAN);
        }
        if !json && !report.problems.is_empty() {
            println!("{}: run `rollfs fsck --repair` to repair", target.display());
        }
        return Ok(FSCK_UNCORRECTED);
    }
    let r = rollfs_core::fsck::repair_with(&mut dev, crate::now(), &opts, &mut |d, t| bar.update(d, t));
    bar.finish();
    let rep = match r {
        Ok(rep) => rep,
        Err(e @ rollfs_core::Error::Io { .. }) => {
            return Err((FSCK_OPERATIONAL, CliError::core(target, "repair failed", e)))
        }
        Err(e) => return Err((FSCK_UNCORRECTED, CliError::core(target, "cannot repair", e))),
    };
    print_repair(target, &rep, json);
    Ok(if rep.before.is_clean() {
        FSCK_CLEAN
    } else if rep.is_clean() {
        FSCK_FIXED
    } else {
        FSCK_UNCORRECTED
    })
}

// ---------------------------------------------------------------- scrub

/// `rollfs scrub TARGET`: reads every data block of an unmounted image and checks it
/// against its checksum; lists the bad ones by path. Exit codes as fsck's: 0 every block
/// good, 4 bad blocks (or metadata problems) found, 8 could not scrub (including an image
/// without data checksums: there is nothing to check the blocks against).
pub fn scrub(target: &Path, json: bool) -> i32 {
    match scrub_inner(target, json) {
        Ok(code) => code,
        Err((code, e)) => {
            eprintln!("rollfs scrub: {e}");
            code
        }
    }
}

fn scrub_inner(target: &Path, json: bool) -> Result<i32, (i32, CliError)> {
    let (mut dev, sb) = open_checked(target, false)?;
    if !sb.data_checksums() {
        return Err((
            FSCK_OPERATIONAL,
            CliError::Failed {
                path: target.to_owned(),
                what: "cannot scrub",
                detail: "made with `mkfs -O nodatasum`: its data blocks have no checksums to verify".into(),
            },
        ));
    }
    let mut bar = Bar::new(json);
    let opts = rollfs_core::fsck::FsckOptions { verify_data: true };
    let r = rollfs_core::fsck::check_with(&mut dev, &opts, &mut |d, t| bar.update(d, t));
    bar.finish();
    let r = r.map_err(|e| (FSCK_OPERATIONAL, CliError::core(target, "cannot scrub", e)))?;
    let t = target.display();
    if json {
        let v = serde_json::json!({
            "target": t.to_string(),
            "clean": r.is_clean(),
            "data_blocks": r.data_blocks,
            "data_blocks_verified": r.data_blocks_verified,
            "bad_data": bad_data_json(&r.bad_data),
            "problems": r.problems,
        });
        println!("{v}");
    } else {
        for b in &r.bad_data {
            println!("{t}: {b}");
        }
        for p in &r.problems {
            println!("{t}: metadata: {p}");
        }
        println!("{t}: scrub: {} data blocks verified: {}", r.data_blocks_verified, verdict(&r));
        if !r.bad_data.is_empty() {
            println!("{t}: {BAD_DATA_ADVICE}");
        }
        if !r.problems.is_empty() {
            println!("{t}: the metadata has problems: run `rollfs fsck` for the full check");
        }
        if r.pending_chain_nodes > 0 {
            println!(
                "{t}: an fsync chain of {} node blocks awaits roll-forward: its blocks are checked when the next mount recovers it",
                r.pending_chain_nodes
            );
        }
    }
    Ok(if r.is_clean() { FSCK_CLEAN } else { FSCK_UNCORRECTED })
}

// ---------------------------------------------------------------- replay

pub fn replay(log: &Path, out: Option<&Path>, opts: &ReplayOptions, json: bool) -> Result<i32> {
    let summary = match out {
        None => record::summarize(&record::WriteLog::open(log)?),
        Some(out) => record::replay(log, out, opts)?,
    };
    if json {
        println!("{}", serde_json::to_string(&summary).unwrap_or_default());
    } else {
        let s = &summary;
        println!("flushes: {}\nwrites: {}\ncrash points: 0 to {}", s.flushes_in_log, s.writes_in_log, s.points - 1);
        if out.is_some() {
            println!(
                "crash point: {} ({} marks before it)\ndurable writes: {}\nunflushed writes: {}\ndropped writes: {}\ntorn writes: {}\ndiscards: {}",
                s.point,
                s.marks_before,
                s.durable_writes,
                s.unflushed_writes,
                s.dropped_writes,
                s.torn_writes,
                if s.discard_ignored { "ignored" } else { "zeroed" }
            );
        }
    }
    Ok(0)
}

/// Readahead the mount is given: sequential reads reach the daemon as 1 MiB requests (the
/// kernel offers FUSE only 128 KiB at INIT, its default for a new device).
pub const READAHEAD_KB: u64 = 1024;

/// Raises the mount's readahead to [`READAHEAD_KB`] through sysfs (root only; otherwise it
/// stays the kernel's default). The kernel lowers it to what INIT negotiated when it
/// processes the INIT reply, which happens after the session starts: a short-lived thread
/// sets it until it stays set. Found through /proc/self/mountinfo (reading it sends no
/// FUSE request; a stat of the mount point would wait for INIT, which this thread must not).
fn raise_readahead(mountpoint: &Path) {
    let Ok(mnt) = std::path::absolute(mountpoint) else { return };
    let _ = std::thread::Builder::new().name("rollfs-readahead".into()).spawn(move || {
        let want = READAHEAD_KB.to_string();
        let mut stable = 0;
        for _ in 0..100 {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let Some(dev) = mount_device(&mnt) else { continue };
            let f = format!("/sys/class/bdi/{dev}/read_ahead_kb");
            match std::fs::read_to_string(&f) {
                Ok(v) if v.trim() == want => {
                    stable += 1;
                    if stable >= 4 {
                        return;
                    }
                }
                Ok(_) => {
                    stable = 0;
                    if std::fs::write(&f, &want).is_err() {
                        return; // not root: the kernel's default stays
                    }
                }
                Err(_) => return,
            }
        }
    });
}

/// `MAJOR:MINOR` of the filesystem mounted at `mnt` (the last such mount), from
/// /proc/self/mountinfo (mount points there escape space, tab, newline and backslash as
/// octal).
fn mount_device(mnt: &Path) -> Option<String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = mnt.to_str()?;
    let unescape = |s: &str| {
        let mut out = String::new();
        let mut it = s.chars().peekable();
        while let Some(c) = it.next() {
            if c == '\\' {
                let code: String = it.by_ref().take(3).collect();
                match u8::from_str_radix(&code, 8) {
                    Ok(b) => out.push(b as char),
                    Err(_) => out.push_str(&code),
                }
            } else {
                out.push(c);
            }
        }
        out
    };
    info.lines().rev().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        (f.len() > 4 && unescape(f[4]) == want).then(|| f[2].to_string())
    })
}

/// `rollfs tune -O FEATURES TARGET`: turns on, on an existing unmounted image, the format 3
/// parts that nothing on a format 2 image can be using yet (DESIGN.md, *Format 3*): today
/// `prealloc` (fallocate's reservations kept on disk), `inline` (small files' bytes in
/// their inodes: only new files start inline) and `nsrec` (namespace records in the fsync
/// chain: a cleanly unmounted image has no chain). Turning one off, or a feature that
/// changes what existing blocks mean (`dirv2`, `datasum`), is refused: make a new image.
pub struct TuneArgs {
    pub features: Vec<String>,
    pub target: PathBuf,
}

pub fn tune(a: &TuneArgs) -> Result<i32> {
    use rollfs_core::superblock::{
        read_superblock, FEATURE_INCOMPAT_CP_SUMMARIES, FEATURE_INCOMPAT_INLINE, FEATURE_INCOMPAT_MIXED_NODE,
        FEATURE_INCOMPAT_NS_RECORDS, FEATURE_INCOMPAT_PREALLOC,
    };
    let mut add = 0u32;
    for word in a.features.iter().flat_map(|f| f.split(',')).map(str::trim).filter(|w| !w.is_empty()) {
        match word {
            "prealloc" => add |= FEATURE_INCOMPAT_PREALLOC,
            "inline" => add |= FEATURE_INCOMPAT_INLINE,
            // Safe on a cleanly unmounted image: its chain is empty, and the one field the
            // feature gives meaning to (an fsync batch's `batch_records`) is read only from
            // inodes in the chain, which the next mount writes with the feature on.
            "nsrec" => add |= FEATURE_INCOMPAT_NS_RECORDS,
            // Safe on any cleanly unmounted image: no node segment holds data before the
            // first fsync with the feature on writes some.
            "mixed" => add |= FEATURE_INCOMPAT_MIXED_NODE,
            // Safe on any image: its current checkpoint carries no summaries (the bit was
            // off when it was written), and the next mount's first checkpoint writes them.
            "cpsum" => add |= FEATURE_INCOMPAT_CP_SUMMARIES,
            "noprealloc" | "noinline" | "dirv2" | "nodirv2" | "datasum" | "nodatasum" | "nonsrec" | "nomixed"
            | "nocpsum" => {
                return Err(CliError::BadOption(format!(
                    "-O {word}: cannot be changed on an existing image (what its blocks hold depends on it): \
                     make a new image with `rollfs mkfs -O {word}` and copy the files over"
                )))
            }
            other => {
                return Err(CliError::BadOption(format!(
                    "-O {other}: unknown feature (tune knows: prealloc, inline, nsrec, mixed, cpsum)"
                )))
            }
        }
    }
    if add == 0 {
        return Err(CliError::BadOption(
            "-O FEATURES: nothing to change (tune knows: prealloc, inline, nsrec, mixed, cpsum)".into(),
        ));
    }
    let path = a.target.as_path();
    let mut dev = FileDevice::open(path, DeviceOptions::default())?;
    let sb = probe::check_superblock(&mut dev, path)?;
    let core_err = |e| CliError::core(path, "cannot tune", e);
    let (cp, _) = rollfs_core::checkpoint::Checkpoint::read_newest(&mut dev, &sb.geometry).map_err(core_err)?;
    if cp.flags & rollfs_core::checkpoint::CP_FLAG_UMOUNT == 0 {
        // A pending fsync chain was written under the old features: let recovery apply it
        // under them first.
        return Err(CliError::Failed {
            path: path.to_owned(),
            what: "cannot tune",
            detail: "the image was not cleanly unmounted: mount and unmount it first".into(),
        });
    }
    let mut sb = read_superblock(&mut dev).map_err(core_err)?;
    if sb.feature_incompat & add == add {
        println!("rollfs tune: {}: nothing to do (the features asked for are already on)", path.display());
        return Ok(0);
    }
    sb.feature_incompat |= add;
    let block = sb.encode();
    // Copy 1 first, then copy 0, each flushed: mount uses the first valid copy, so a
    // crash between or during the writes leaves the old features or the new ones, and
    // both describe the image (nothing on it uses the new part yet).
    for copy in [1u64, 0] {
        dev.write(copy, &block, rollfs_core::WriteFlags::empty())
            .map_err(|e| CliError::core(path, "cannot tune", e.into()))?;
        dev.flush().map_err(|e| CliError::core(path, "cannot tune", e.into()))?;
    }
    if add & FEATURE_INCOMPAT_PREALLOC != 0 {
        println!("rollfs tune: {}: fallocate's reservations are now kept on disk (-O prealloc)", path.display());
    }
    if add & FEATURE_INCOMPAT_INLINE != 0 {
        println!("rollfs tune: {}: new small files now keep their bytes in their inodes (-O inline)", path.display());
    }
    if add & FEATURE_INCOMPAT_MIXED_NODE != 0 {
        println!(
            "rollfs tune: {}: small fsyncs now write their data beside their nodes, one device range (-O mixed)",
            path.display()
        );
    }
    if add & FEATURE_INCOMPAT_CP_SUMMARIES != 0 {
        println!("rollfs tune: {}: checkpoints now carry the summaries of open segments (-O cpsum)", path.display());
    }
    if add & FEATURE_INCOMPAT_NS_RECORDS != 0 {
        println!(
            "rollfs tune: {}: fsyncs now carry renames, links and new names as namespace records instead of \
             writing a checkpoint (-O nsrec)",
            path.display()
        );
    }
    Ok(0)
}

#[cfg(test)]
mod option_tests {
    use super::*;

    #[test]
    fn discard_follows_the_options_and_otherwise_the_target() {
        assert_eq!(parse_mount_options(&[]).unwrap().discard, None);
        assert_eq!(parse_mount_options(&["rw,nodiscard".to_string()]).unwrap().discard, Some(false));
        assert_eq!(parse_mount_options(&["nodiscard,discard".to_string()]).unwrap().discard, Some(true));
        let d = tempfile::tempdir().unwrap();
        let sparse = d.path().join("sparse.img");
        std::fs::File::create(&sparse).unwrap().set_len(64 << 20).unwrap();
        let full = d.path().join("full.img");
        std::fs::write(&full, vec![1u8; 1 << 20]).unwrap();
        let meta = |p: &std::path::Path| std::fs::File::open(p).unwrap().metadata().unwrap();
        assert!(discard_default(DeviceKind::ImageFile, &meta(&sparse)), "a sparse image is kept sparse");
        assert!(!discard_default(DeviceKind::ImageFile, &meta(&full)), "a written-out image keeps its blocks");
        assert!(parse_mount_options(&["nosuchoption".to_string()]).is_err());
    }

    #[test]
    fn root_reserve_is_unset_by_default_and_can_be_sized() {
        let o = parse_mount_options(&[]).unwrap();
        assert_eq!((o.reserve, o.resuid, o.resgid), (None, None, None));
        let o = parse_mount_options(&["reserve=16M,resuid=1000,resgid=50".to_string()]).unwrap();
        assert_eq!((o.reserve, o.resuid, o.resgid), (Some(Reserve::Bytes(16 << 20)), Some(1000), Some(50)));
        assert_eq!(parse_mount_options(&["reserve=0".to_string()]).unwrap().reserve, Some(Reserve::Bytes(0)));
        assert_eq!(parse_mount_options(&["reserve=10%".to_string()]).unwrap().reserve, Some(Reserve::Percent(10)));
        for bad in ["reserve=51%", "reserve=lots", "resuid=root", "resgid=-1"] {
            assert!(parse_mount_options(&[bad.to_string()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn background_cleaning_is_on_by_default_and_can_be_tuned_or_turned_off() {
        assert_eq!(parse_mount_options(&[]).unwrap().gc_idle_secs, 5);
        assert_eq!(parse_mount_options(&["gc_idle=30".to_string()]).unwrap().gc_idle_secs, 30);
        assert_eq!(parse_mount_options(&["nogc".to_string()]).unwrap().gc_idle_secs, 0);
        assert_eq!(parse_mount_options(&["gc_idle=0".to_string()]).unwrap().gc_idle_secs, 0);
        assert!(parse_mount_options(&["gc_idle=soon".to_string()]).is_err());
        assert!(parse_mount_options(&[]).unwrap().ssr);
        assert!(!parse_mount_options(&["nossr".to_string()]).unwrap().ssr);
    }
}
