//! rollfs-sim-guest: rollfs-core behind the small WebAssembly ABI of `../ABI.md`.
//!
//! This crate owns the guest side of that ABI and nothing else: the block device is the
//! host's (imports of module `rollfs_dev`), the filesystem is `rollfs-core` unchanged, and
//! every export is a thin, path-based wrapper so the host never needs inode numbers.
//! All state lives in one global slot, because one instance runs one filesystem at a time:
//! at power loss the host drops the instance, or empties the slot with `sim_reset` (no
//! I/O) and gives the instance another device.

use rollfs_core::IoError;
use rollfs_core::{
    BlockDevice, Credentials, Error, FileType, Filesystem, Ino, MkfsOptions, MountOptions, RenameFlags, SetAttr,
    Timestamp, WriteFlags, XattrSetMode,
};
use std::cell::RefCell;

#[link(wasm_import_module = "rollfs_dev")]
extern "C" {
    fn block_count() -> i64;
    fn read(addr: i64, ptr: *mut u8) -> i32;
    fn write(addr: i64, ptr: *const u8, flags: i32) -> i32;
    fn wait_writes() -> i32;
    fn flush() -> i32;
    fn discard(addr: i64, count: i64) -> i32;
}

#[link(wasm_import_module = "rollfs_host")]
extern "C" {
    fn panic_message(ptr: *const u8, len: i32);
    fn crc32c_append(seed: i32, ptr: *const u8, len: i32) -> i32;
}

/// The core's CRC32C (feature `embedder-crc32c`), computed by the host: wasm has no CRC
/// instruction and the table-driven CRC was a quarter of the explorer's time. The host runs
/// `crc32c::crc32c_append`, the function the core computes natively (ABI.md).
#[no_mangle]
pub fn rollfs_crc32c_append(seed: u32, bytes: &[u8]) -> u32 {
    // Blocks are 4 KiB; nothing the core checksums comes near i32::MAX bytes.
    assert!(bytes.len() <= i32::MAX as usize, "CRC input too long");
    unsafe { crc32c_append(seed as i32, bytes.as_ptr(), bytes.len() as i32) as u32 }
}

/// The host's simulated device. Status codes: 0 ok, otherwise an errno (5 = EIO).
pub struct HostDev;

fn status(code: i32, block: u64, op: &'static str) -> Result<(), IoError> {
    if code == 0 {
        Ok(())
    } else {
        Err(IoError { block, op })
    }
}

impl BlockDevice for HostDev {
    fn block_count(&self) -> u64 {
        unsafe { block_count() as u64 }
    }
    fn read(&mut self, addr: u64, buf: &mut rollfs_core::Block) -> Result<(), IoError> {
        status(unsafe { read(addr as i64, buf.as_mut_ptr()) }, addr, "read")
    }
    fn write(&mut self, addr: u64, data: &rollfs_core::Block, flags: WriteFlags) -> Result<(), IoError> {
        status(unsafe { write(addr as i64, data.as_ptr(), flags.bits() as i32) }, addr, "write")
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        status(unsafe { wait_writes() }, IoError::FLUSH_BLOCK, "wait_writes")
    }
    fn flush(&mut self) -> Result<(), IoError> {
        status(unsafe { flush() }, IoError::FLUSH_BLOCK, "flush")
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        status(unsafe { discard(addr as i64, count as i64) }, addr, "discard")
    }
}

struct State {
    fs: Option<Filesystem<HostDev>>,
    scratch: Vec<u8>,
    out: Vec<u8>,
}

thread_local! {
    static STATE: RefCell<State> = const {
        RefCell::new(State { fs: None, scratch: Vec::new(), out: Vec::new() })
    };
    /// Cold-cache mode (`sim_set_cold`): the core's clean caches are dropped after every
    /// path resolution, just before the operation itself.
    static COLD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The entropy a mount passes to the core (`sim_set_mount_nonce`; 0 until set).
    static MOUNT_NONCE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// In cold-cache mode, empties the core's clean caches (the lookups of path resolution
/// filled them with the operation's ancestors: a real cache may have lost them since).
fn go_cold(fs: &mut Filesystem<HostDev>) {
    if COLD.with(|c| c.get()) {
        fs.drop_clean_caches();
    }
}

/// Return codes beyond errno values (negated like errnos).
const E_NOT_MOUNTED: i64 = 1001;
const E_TREE: i64 = 1003;
/// A read that failed its data checksum (the core's `Error::DataChecksum`, EIO to users):
/// its own code, so that the explorer can tell it from an injected I/O error.
const E_DATASUM: i64 = 1004;

fn now(sec: i64) -> Timestamp {
    Timestamp::new(sec, 0)
}

const CRED: Credentials = Credentials { uid: 0, gid: 0 };

fn bytes<'a>(ptr: *const u8, len: i32) -> &'a [u8] {
    if len <= 0 {
        return &[];
    }
    // SAFETY: the host wrote `len` bytes at `ptr` inside the scratch buffer it obtained
    // from `sim_scratch`, which stays allocated for the duration of this call.
    unsafe { std::slice::from_raw_parts(ptr, len as usize) }
}

fn set_out(data: &[u8]) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.out.clear();
        s.out.extend_from_slice(data);
    });
}

/// Reports an error to the host: message in the out buffer, negated errno returned.
fn fail(e: &Error) -> i64 {
    set_out(format!("{e}").as_bytes());
    if matches!(e, Error::DataChecksum { .. }) {
        return -E_DATASUM;
    }
    -(e.errno() as i64)
}

fn with_fs(f: impl FnOnce(&mut Filesystem<HostDev>) -> Result<i64, Error>) -> i64 {
    // The filesystem is taken out of the slot during the call so that a nested export
    // call (never done by the host) could not alias it.
    let fs = STATE.with(|s| s.borrow_mut().fs.take());
    let Some(mut fs) = fs else {
        set_out(b"not mounted");
        return -E_NOT_MOUNTED;
    };
    let r = f(&mut fs);
    STATE.with(|s| s.borrow_mut().fs = Some(fs));
    match r {
        Ok(v) => v,
        Err(e) => fail(&e),
    }
}

/// Resolves an absolute path ("/" or "/a/b") to its inode (then goes cold, in that mode).
fn resolve(fs: &mut Filesystem<HostDev>, path: &[u8]) -> Result<Ino, Error> {
    let mut ino = rollfs_core::layout::ROOT_INO;
    for comp in path.split(|&b| b == b'/').filter(|c| !c.is_empty()) {
        ino = fs.lookup(ino, comp)?.ino;
    }
    go_cold(fs);
    Ok(ino)
}

/// Splits a path into its parent inode and final name.
fn resolve_parent<'a>(fs: &mut Filesystem<HostDev>, path: &'a [u8]) -> Result<(Ino, &'a [u8]), Error> {
    let trimmed = path.strip_suffix(b"/").unwrap_or(path);
    let cut = trimmed.iter().rposition(|&b| b == b'/').ok_or(Error::Invalid("relative path"))?;
    let name = &trimmed[cut + 1..];
    if name.is_empty() {
        return Err(Error::Invalid("empty name"));
    }
    Ok((resolve(fs, &trimmed[..cut])?, name))
}

fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = format!("{info}");
        unsafe { panic_message(msg.as_ptr(), msg.len() as i32) };
    }));
}

#[no_mangle]
pub extern "C" fn sim_scratch(len: i32) -> *mut u8 {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let len = len.max(0) as usize;
        if s.scratch.len() < len {
            s.scratch.resize(len, 0);
        }
        s.scratch.as_mut_ptr()
    })
}

#[no_mangle]
pub extern "C" fn sim_out_ptr() -> *const u8 {
    STATE.with(|s| s.borrow().out.as_ptr())
}

#[no_mangle]
pub extern "C" fn sim_out_len() -> i32 {
    STATE.with(|s| s.borrow().out.len() as i32)
}

/// The host's device seen `blocks` long: what `sim_format` formats with `grow_from` (an
/// image file made small, then extended).
struct Shorter(u64);

impl BlockDevice for Shorter {
    fn block_count(&self) -> u64 {
        self.0.min(HostDev.block_count())
    }
    fn read(&mut self, addr: u64, buf: &mut rollfs_core::Block) -> Result<(), IoError> {
        HostDev.read(addr, buf)
    }
    fn write(&mut self, addr: u64, data: &rollfs_core::Block, flags: WriteFlags) -> Result<(), IoError> {
        HostDev.write(addr, data, flags)
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        HostDev.wait_writes()
    }
    fn flush(&mut self) -> Result<(), IoError> {
        HostDev.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        HostDev.discard(addr, count)
    }
}

/// Grows the mounted filesystem online to `blocks` blocks (0: the whole device). A size
/// that adds no segment grows nothing and syncs instead, so that the operation is always
/// a persistence point (the model's). Returns the main segments after it.
#[no_mangle]
pub extern "C" fn sim_grow(blocks: i64, now_sec: i64) -> i64 {
    with_fs(|fs| {
        go_cold(fs);
        let to = if blocks <= 0 { fs.device().block_count() } else { blocks as u64 };
        if fs.grow(to, now(now_sec))?.is_none() {
            fs.sync(now(now_sec))?;
        }
        Ok(fs.geometry().main_segments as i64)
    })
}

fn mkfs_options(segment_blocks: i32, now_sec: i64) -> MkfsOptions {
    MkfsOptions {
        segment_blocks: segment_blocks as u32,
        label: b"rollfs-sim".to_vec(),
        uuid: *b"rollfs-sim-uuid!",
        time: now(now_sec),
        // What `rollfs mkfs` makes: per-directory hash keys, overflowing buckets,
        // reservations kept on disk, inline data, data beside its chain, open segments'
        // summaries in the checkpoint (namespace records and data beside by the workload's
        // choice: `sim_format`'s features).
        dir_v2: true,
        prealloc_on_disk: true,
        inline_data: true,
        mixed_node: true,
        cp_summaries: true,
        ..MkfsOptions::default()
    }
}

/// `sim_format`'s `features`: namespace records in the fsync chain (as `rollfs mkfs` makes
/// images; workloads `@nsrec` and those that say neither).
pub const FORMAT_NS_RECORDS: i32 = 1;
/// `sim_format`'s `features`: no data beside its chain (`mkfs -O nomixed`; workloads
/// `@nomixed`).
pub const FORMAT_NO_MIXED: i32 = 2;

/// mkfs on the device with the `features` chosen (`FORMAT_*`). `grow_from` not 0: a
/// filesystem of that many blocks with room to grow to the whole device (`mkfs --max-size
/// DEVICE` on an image of `grow_from` blocks, extended since), for `grow`.
#[no_mangle]
pub extern "C" fn sim_format(segment_blocks: i32, now_sec: i64, grow_from: i64, features: i32) -> i64 {
    install_panic_hook();
    let base = mkfs_options(segment_blocks, now_sec);
    let opts = MkfsOptions {
        ns_records: features & FORMAT_NS_RECORDS != 0,
        mixed_node: features & FORMAT_NO_MIXED == 0,
        max_blocks: if grow_from > 0 { HostDev.block_count() } else { base.max_blocks },
        ..base
    };
    let r = if grow_from > 0 {
        Filesystem::format(Shorter(grow_from as u64), &opts).map(|_| ())
    } else {
        Filesystem::format(HostDev, &opts).map(|_| ())
    };
    match r {
        Ok(_) => 0,
        Err(e) => fail(&e),
    }
}

#[no_mangle]
pub extern "C" fn sim_mount(read_only: i32, now_sec: i64) -> i64 {
    install_panic_hook();
    let mount_nonce = MOUNT_NONCE.with(|n| n.get());
    let opts = MountOptions { read_only: read_only != 0, mount_nonce, ..MountOptions::default() };
    match Filesystem::mount(HostDev, &opts, now(now_sec)) {
        Ok(fs) => {
            STATE.with(|s| s.borrow_mut().fs = Some(fs));
            0
        }
        Err(e) => fail(&e),
    }
}

#[no_mangle]
pub extern "C" fn sim_unmount(now_sec: i64) -> i64 {
    let Some(fs) = STATE.with(|s| s.borrow_mut().fs.take()) else {
        set_out(b"not mounted");
        return -E_NOT_MOUNTED;
    };
    match fs.unmount(now(now_sec)) {
        Ok(_) => 0,
        Err(e) => fail(&e),
    }
}

#[no_mangle]
pub extern "C" fn sim_create(p: *const u8, plen: i32, perm: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let (parent, name) = resolve_parent(fs, bytes(p, plen))?;
        Ok(fs.create(parent, name, perm as u32, CRED, now(now_sec))?.ino as i64)
    })
}

#[no_mangle]
pub extern "C" fn sim_mkdir(p: *const u8, plen: i32, perm: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let (parent, name) = resolve_parent(fs, bytes(p, plen))?;
        Ok(fs.mkdir(parent, name, perm as u32, CRED, now(now_sec))?.ino as i64)
    })
}

#[no_mangle]
pub extern "C" fn sim_symlink(p: *const u8, plen: i32, t: *const u8, tlen: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let (parent, name) = resolve_parent(fs, bytes(p, plen))?;
        Ok(fs.symlink(parent, name, bytes(t, tlen), CRED, now(now_sec))?.ino as i64)
    })
}

#[no_mangle]
pub extern "C" fn sim_write(p: *const u8, plen: i32, off: i64, d: *const u8, dlen: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        Ok(fs.write(ino, off as u64, bytes(d, dlen), now(now_sec))? as i64)
    })
}

/// Reads up to `len` bytes at `off` into the out buffer; returns the count.
#[no_mangle]
pub extern "C" fn sim_read(p: *const u8, plen: i32, off: i64, len: i32) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        let mut buf = vec![0u8; len.max(0) as usize];
        let n = fs.read(ino, off as u64, &mut buf)?;
        set_out(&buf[..n]);
        Ok(n as i64)
    })
}

#[no_mangle]
pub extern "C" fn sim_truncate(p: *const u8, plen: i32, size: i64, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        let set = SetAttr { size: Some(size as u64), ..SetAttr::default() };
        fs.setattr(ino, &set, now(now_sec))?;
        Ok(0)
    })
}

/// fallocate of a range: mode 0 punch hole (size kept), 1 zero range keeping the size, 2
/// zero range growing the size to cover it.
#[no_mangle]
pub extern "C" fn sim_punch(p: *const u8, plen: i32, off: i64, len: i64, mode: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        match mode {
            0 => fs.punch_hole(ino, off as u64, len as u64, now(now_sec))?,
            1 | 2 => fs.zero_range(ino, off as u64, len as u64, mode == 1, now(now_sec))?,
            _ => fs.fallocate(ino, off as u64, len as u64, mode == 4, now(now_sec))?,
        }
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn sim_chmod(p: *const u8, plen: i32, mode: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        let set = SetAttr { mode: Some(mode as u32), ..SetAttr::default() };
        fs.setattr(ino, &set, now(now_sec))?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn sim_rename(p: *const u8, plen: i32, q: *const u8, qlen: i32, flags: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let flags = RenameFlags::from_bits(flags as u32).ok_or(Error::Invalid("rename flags"))?;
        let (sp, sn) = resolve_parent(fs, bytes(p, plen))?;
        let (dp, dn) = resolve_parent(fs, bytes(q, qlen))?;
        fs.rename(sp, sn, dp, dn, flags, now(now_sec))?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn sim_link(p: *const u8, plen: i32, q: *const u8, qlen: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        let (dp, dn) = resolve_parent(fs, bytes(q, qlen))?;
        fs.link(ino, dp, dn, now(now_sec))?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn sim_unlink(p: *const u8, plen: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let (parent, name) = resolve_parent(fs, bytes(p, plen))?;
        fs.unlink(parent, name, now(now_sec))?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn sim_rmdir(p: *const u8, plen: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let (parent, name) = resolve_parent(fs, bytes(p, plen))?;
        fs.rmdir(parent, name, now(now_sec))?;
        Ok(0)
    })
}

/// Opens a handle on the file at the path (`Filesystem::open`); returns its inode number,
/// which `sim_close` takes (an unlinked file stays alive, an orphan, until closed).
#[no_mangle]
pub extern "C" fn sim_open(p: *const u8, plen: i32) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        fs.open(ino)?;
        Ok(ino as i64)
    })
}

/// Closes a handle opened by `sim_open` (`Filesystem::release`).
#[no_mangle]
pub extern "C" fn sim_close(ino: i64, now_sec: i64) -> i64 {
    with_fs(|fs| {
        go_cold(fs);
        fs.release(ino as Ino, now(now_sec))?;
        Ok(0)
    })
}

/// `mode`: 0 any, 1 create (XATTR_CREATE), 2 replace (XATTR_REPLACE).
#[no_mangle]
pub extern "C" fn sim_setxattr(
    p: *const u8,
    plen: i32,
    n: *const u8,
    nlen: i32,
    v: *const u8,
    vlen: i32,
    mode: i32,
    now_sec: i64,
) -> i64 {
    with_fs(|fs| {
        let mode = match mode {
            0 => XattrSetMode::Any,
            1 => XattrSetMode::Create,
            2 => XattrSetMode::Replace,
            _ => return Err(Error::Invalid("xattr mode")),
        };
        let ino = resolve(fs, bytes(p, plen))?;
        fs.setxattr(ino, bytes(n, nlen), bytes(v, vlen), mode, now(now_sec))?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn sim_removexattr(p: *const u8, plen: i32, n: *const u8, nlen: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        fs.removexattr(ino, bytes(n, nlen), now(now_sec))?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn sim_sync(now_sec: i64) -> i64 {
    with_fs(|fs| {
        go_cold(fs);
        fs.sync(now(now_sec)).map(|_| 0)
    })
}

#[no_mangle]
pub extern "C" fn sim_fsync(p: *const u8, plen: i32, datasync: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        fs.fsync(ino, datasync != 0, now(now_sec))?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn sim_start_atomic_write(p: *const u8, plen: i32) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        fs.start_atomic_write(ino)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn sim_commit_atomic_write(p: *const u8, plen: i32, now_sec: i64) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        fs.commit_atomic_write(ino, now(now_sec))?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn sim_abort_atomic_write(p: *const u8, plen: i32) -> i64 {
    with_fs(|fs| {
        let ino = resolve(fs, bytes(p, plen))?;
        fs.abort_atomic_write(ino)?;
        Ok(0)
    })
}

/// The core's statistics: every counter of `rollfs_core::Stats` as a little-endian u64 in
/// the out buffer, in field order (names: `sim_stat_names`). Returns the count.
#[no_mangle]
pub extern "C" fn sim_stats() -> i64 {
    with_fs(|fs| {
        let list = fs.stats().counters();
        let mut out = Vec::with_capacity(8 * list.len());
        for (_, v) in list {
            out.extend_from_slice(&v.to_le_bytes());
        }
        set_out(&out);
        Ok(list.len() as i64)
    })
}

/// Chooses the core mutant NAME for this instance (`rollfs_core::mutant::select`; the guest
/// must be built with `rollfs-core/mutants`). Returns 0, or -EINVAL when it cannot.
#[no_mangle]
pub extern "C" fn sim_select_mutant(p: *const u8, plen: i32) -> i64 {
    let name = core::str::from_utf8(bytes(p, plen)).unwrap_or("");
    if rollfs_core::mutant::select(name) {
        0
    } else {
        -22
    }
}

/// The names of the counters `sim_stats` returns, one per line in the out buffer (works
/// unmounted). Returns the count.
#[no_mangle]
pub extern "C" fn sim_stat_names() -> i64 {
    let names = rollfs_core::Stats::NAMES;
    set_out(names.join("\n").as_bytes());
    names.len() as i64
}

/// Cold-cache mode on (1) or off (0) for this instance: after resolving an operation's
/// paths the guest drops the core's clean caches (`Filesystem::drop_clean_caches`), so
/// that every read the operation needs comes from the device and can fail there (issue 35:
/// checkers must reach reads after an operation's first change). Returns 0.
#[no_mangle]
pub extern "C" fn sim_set_cold(on: i32) -> i64 {
    COLD.with(|c| c.set(on != 0));
    0
}

/// Drops the filesystem (no I/O: a mount is forgotten as at power loss) and the buffers,
/// so that the host can give this instance another device instead of making a new one
/// (`GuestModule::release`). What a later call sees is what a fresh instance's would; the
/// heap's layout differs, which nothing the core computes depends on.
#[no_mangle]
pub extern "C" fn sim_reset() -> i64 {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.fs = None;
        s.scratch = Vec::new();
        s.out = Vec::new();
    });
    COLD.with(|c| c.set(false));
    MOUNT_NONCE.with(|n| n.set(0));
    0
}

/// The entropy later mounts pass to the core (`MountOptions::mount_nonce`: a real driver's
/// random value per mount; the explorer gives an earlier use of an image its own). Returns 0.
#[no_mangle]
pub extern "C" fn sim_set_mount_nonce(nonce: i64) -> i64 {
    MOUNT_NONCE.with(|n| n.set(nonce as u64));
    0
}

/// Runs fsck on the device (of the mounted filesystem if there is one, else the bare
/// device). Returns the number of problems (0 = clean), one per line in the out buffer.
#[no_mangle]
pub extern "C" fn sim_fsck() -> i64 {
    install_panic_hook();
    let fs = STATE.with(|s| s.borrow_mut().fs.take());
    let (r, fs) = match fs {
        Some(mut fs) => (rollfs_core::fsck::check(fs.device_mut()), Some(fs)),
        None => (rollfs_core::fsck::check(&mut HostDev), None),
    };
    STATE.with(|s| s.borrow_mut().fs = fs);
    match r {
        Ok(rep) => {
            set_out(rep.problems.join("\n").as_bytes());
            rep.problems.len() as i64
        }
        Err(e) => fail(&e),
    }
}

/// Serializes the whole tree reachable from the root into the out buffer (format in
/// ABI.md); returns its length. Inconsistencies the walk itself sees (a name that readdir
/// lists but lookup cannot find, a directory reached twice) fail with E_TREE.
#[no_mangle]
pub extern "C" fn sim_dump() -> i64 {
    dump_export(false)
}

/// [`sim_dump`] with each regular file's device blocks named instead of read (ABI.md,
/// "Planned contents"): the host reads and verifies them from the device image.
#[no_mangle]
pub extern "C" fn sim_dump_planned() -> i64 {
    dump_export(true)
}

fn dump_export(planned: bool) -> i64 {
    let fs = STATE.with(|s| s.borrow_mut().fs.take());
    let Some(mut fs) = fs else {
        set_out(b"not mounted");
        return -E_NOT_MOUNTED;
    };
    let mut out = Vec::new();
    let r = dump(&mut fs, &mut out, planned);
    STATE.with(|s| s.borrow_mut().fs = Some(fs));
    match r {
        Ok(()) => {
            let n = out.len() as i64;
            STATE.with(|s| s.borrow_mut().out = out);
            n
        }
        Err(DumpError::Fs(e)) => fail(&e),
        Err(DumpError::Tree(msg)) => {
            set_out(msg.as_bytes());
            -E_TREE
        }
    }
}

enum DumpError {
    Fs(Error),
    Tree(String),
}

impl From<Error> for DumpError {
    fn from(e: Error) -> Self {
        DumpError::Fs(e)
    }
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put32(out, b.len() as u32);
    out.extend_from_slice(b);
}

fn kind_code(k: FileType) -> u8 {
    match k {
        FileType::Regular => 1,
        FileType::Directory => 2,
        FileType::Symlink => 3,
        _ => 4,
    }
}

/// Bounds of the walk: a corrupt image must not make the dump run away.
const DUMP_MAX_ENTRIES: usize = 100_000;
const DUMP_MAX_FILE: u64 = 64 << 20;
/// `content_len` and `xattr_count` of a later record of an inode already dumped.
const SAME_AS_FIRST: u32 = u32::MAX;

/// Content length of a planned file record (ABI.md).
const PLANNED: u32 = u32::MAX - 1;

/// Bytes of a file a planned dump reads at a time: the guest's memory holds one piece, not
/// the file (the full-device workloads' files are megabytes of holes).
const PLANNED_PIECE: usize = 256 * rollfs_core::BLOCK_SIZE;

/// A regular file's content as `plan_read` gives it (ABI.md, "Planned contents"): the
/// runs of device blocks, the holes, then every byte of the file outside them. Read a piece
/// at a time from offset 0 up to `size` (or the first short read).
/// `piece` is the caller's scratch buffer, kept from file to file: a planned read leaves
/// the blocks of its runs and holes as they are, so the buffer need not be zeroed for each.
fn put_planned(
    fs: &mut Filesystem<HostDev>,
    ino: Ino,
    size: usize,
    piece: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), DumpError> {
    if piece.len() < size.min(PLANNED_PIECE) {
        piece.resize(size.min(PLANNED_PIECE), 0);
    }
    let (mut runs, mut holes, mut bytes) = (Vec::new(), Vec::<(usize, usize)>::new(), Vec::new());
    let mut len = 0usize;
    while len < size {
        let want = (size - len).min(PLANNED_PIECE);
        let plan = fs.plan_read(ino, len as u64, &mut piece[..want])?;
        // Runs and holes are in buffer order within a piece; pieces follow each other.
        let mut cuts: Vec<(usize, usize)> = Vec::with_capacity(plan.runs.len() + plan.holes.len());
        for mut r in plan.runs {
            cuts.push((r.buf_offset, r.blocks));
            r.buf_offset += len;
            runs.push(r);
        }
        for h in plan.holes {
            cuts.push((h.buf_offset, h.blocks));
            match holes.last_mut() {
                Some((at, n)) if *at + *n * rollfs_core::BLOCK_SIZE == len + h.buf_offset => *n += h.blocks,
                _ => holes.push((len + h.buf_offset, h.blocks)),
            }
        }
        cuts.sort_unstable();
        let mut pos = 0usize;
        for (at, blocks) in cuts {
            bytes.extend_from_slice(&piece[pos..at]);
            pos = at + blocks * rollfs_core::BLOCK_SIZE;
        }
        bytes.extend_from_slice(&piece[pos..plan.len]);
        len += plan.len;
        if plan.len < want {
            break;
        }
    }
    runs.sort_by_key(|r| r.buf_offset);
    put32(out, PLANNED);
    put32(out, len as u32);
    put32(out, runs.len() as u32);
    for r in &runs {
        put32(out, r.buf_offset as u32);
        out.extend_from_slice(&r.addr.to_le_bytes());
        put32(out, r.blocks as u32);
        match &r.crcs {
            Some(c) => {
                out.push(1);
                for &x in c {
                    put32(out, x);
                }
            }
            None => out.push(0),
        }
    }
    put32(out, holes.len() as u32);
    for &(at, blocks) in &holes {
        put32(out, at as u32);
        put32(out, blocks as u32);
    }
    out.extend_from_slice(&bytes);
    Ok(())
}

fn dump(fs: &mut Filesystem<HostDev>, out: &mut Vec<u8>, planned: bool) -> Result<(), DumpError> {
    let root = rollfs_core::layout::ROOT_INO;
    let mut visited_dirs = std::collections::BTreeSet::new();
    // Each name to visit, its inode, and the file type its directory entry gives.
    let mut stack: Vec<(Vec<u8>, Ino, Option<FileType>)> = vec![(b"/".to_vec(), root, None)];
    let mut entries = 0usize;
    let mut piece = Vec::new();
    // Inodes dumped before under another name (hard links): their content and xattrs
    // are not read again (ABI.md: SAME_AS_FIRST).
    let mut dumped = std::collections::BTreeSet::new();
    while let Some((path, ino, listed_kind)) = stack.pop() {
        entries += 1;
        if entries > DUMP_MAX_ENTRIES {
            return Err(DumpError::Tree("tree walk exceeded the entry bound".into()));
        }
        let attr = fs.getattr(ino)?;
        if let Some(k) = listed_kind.filter(|&k| k != attr.kind) {
            return Err(DumpError::Tree(format!("{}: dentry says {k:?}, inode {ino} is {:?}", show(&path), attr.kind)));
        }
        put_bytes(out, &path);
        put32(out, ino);
        out.push(kind_code(attr.kind));
        out.extend_from_slice(&attr.perm.to_le_bytes());
        put32(out, attr.uid);
        put32(out, attr.gid);
        put32(out, attr.nlink);
        out.extend_from_slice(&attr.size.to_le_bytes());
        // st_blocks: the oracle checks that fsync'd reservations survive a crash with it.
        out.extend_from_slice(&attr.blocks.to_le_bytes());
        if attr.kind != FileType::Directory && !dumped.insert(ino) {
            put32(out, SAME_AS_FIRST);
            put32(out, SAME_AS_FIRST);
            continue;
        }
        if attr.kind == FileType::Regular && attr.size > DUMP_MAX_FILE {
            return Err(DumpError::Tree(format!("{} size {} too large", show(&path), attr.size)));
        }
        let content = match attr.kind {
            FileType::Regular if planned => {
                put_planned(fs, ino, attr.size as usize, &mut piece, out)?;
                None
            }
            FileType::Regular => {
                let mut data = vec![0u8; attr.size as usize];
                let mut off = 0usize;
                while off < data.len() {
                    let n = fs.read(ino, off as u64, &mut data[off..])?;
                    if n == 0 {
                        break;
                    }
                    off += n;
                }
                data.truncate(off);
                Some(data)
            }
            FileType::Symlink => Some(fs.readlink(ino)?),
            _ => Some(Vec::new()),
        };
        if let Some(content) = content {
            put_bytes(out, &content);
        }
        let mut names = fs.listxattr(ino)?;
        names.sort();
        put32(out, names.len() as u32);
        for n in names {
            let v = fs.getxattr(ino, &n)?;
            put_bytes(out, &n);
            put_bytes(out, &v);
        }
        if attr.kind == FileType::Directory {
            if !visited_dirs.insert(ino) {
                return Err(DumpError::Tree(format!("directory {ino} reached twice (at {})", show(&path))));
            }
            let mut children = Vec::new();
            let mut err = None;
            fs.readdir(ino, 0, &mut |e| {
                if e.name != b"." && e.name != b".." {
                    children.push(e);
                }
                if children.len() > DUMP_MAX_ENTRIES {
                    err = Some("directory listing exceeded the entry bound");
                    return false;
                }
                true
            })?;
            if let Some(msg) = err {
                return Err(DumpError::Tree(msg.into()));
            }
            children.sort_by(|a, b| b.name.cmp(&a.name));
            for w in children.windows(2) {
                if w[0].name == w[1].name {
                    return Err(DumpError::Tree(format!("{} listed twice in {}", show(&w[0].name), show(&path))));
                }
            }
            // Every name must be found by lookup where readdir listed it. Looking up every
            // name costs more than the rest of the dump together (a few verified dentry
            // blocks each), so every entry's placement is checked instead (its block lies
            // in its name's hash bucket, or within the overflow of that bucket, which is
            // where lookup searches; readdir lists only the directory's levels; names are
            // unique, checked above; its type is checked against its inode's when it is
            // visited) and lookup itself runs for an evenly spread sample of LOOKUP_MAX
            // names of each directory.
            let stride = children.len().div_ceil(LOOKUP_MAX).max(1);
            let keys = (fs.dir_hash_key(ino)?, rollfs_core::dir::Cookies::new(&fs.dir_cookie_key(ino)?));
            for (k, e) in children.into_iter().enumerate() {
                let mut child = path.clone();
                if child.len() > 1 {
                    child.push(b'/');
                }
                child.extend_from_slice(&e.name);
                check_placement(fs, ino, &keys, &e, &child)?;
                if k % stride == 0 {
                    let found = fs.lookup(ino, &e.name).map_err(|err| {
                        DumpError::Tree(format!("readdir lists {} but lookup fails: {err}", show(&child)))
                    })?;
                    if found.ino != e.ino || found.kind != e.kind {
                        return Err(DumpError::Tree(format!(
                            "{}: dentry says ino {} {:?}, lookup gives ino {} {:?}",
                            show(&child),
                            e.ino,
                            e.kind,
                            found.ino,
                            found.kind
                        )));
                    }
                }
                stack.push((child, e.ino, Some(e.kind)));
            }
        }
    }
    Ok(())
}

/// Names of each directory that the dump looks up (evenly spread; every name's placement
/// is checked).
const LOOKUP_MAX: usize = 16;

/// The entry lies where lookup searches: its name's hash bucket of the level its block
/// belongs to, or that bucket's overflow (the listing's cookie, inverted with the
/// directory's key, gives the entry's place).
fn check_placement(
    fs: &mut Filesystem<HostDev>,
    dir: Ino,
    (key, cookies): &(rollfs_core::dir::HashKey, rollfs_core::dir::Cookies),
    e: &rollfs_core::DirEntry,
    path: &[u8],
) -> Result<(), DumpError> {
    use rollfs_core::dir;
    // The common case without reading anything: the entry is in its name's own bucket.
    if let Some(pos) = cookies.position(e.cookie) {
        let hash = dir::name_hash_keyed(key, &e.name);
        if let Some((level, bucket)) = dir::block_position(pos / dir::SLOTS_PER_BLOCK as u64) {
            if bucket == hash as u64 % dir::buckets(level) {
                return Ok(());
            }
        }
    }
    // Elsewhere (an overflowed bucket's name, or misplaced): the core's full check.
    match fs.check_listed(dir, &e.name, e.cookie) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(why)) => Err(DumpError::Tree(format!(
            "{}: listed with cookie {:#x}: {why}: lookup cannot find it",
            show(path),
            e.cookie
        ))),
        Err(err) => Err(DumpError::Tree(format!("{}: checking its placement: {err}", show(path)))),
    }
}

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
