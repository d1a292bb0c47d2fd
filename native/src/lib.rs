//! rollfs: the native tools around `rollfs-core` — mkfs (and `mkfs --root`), mount through FUSE, fsck, dump,
//! inspect and write-log replay — and the block-device backend for image files and
//! block devices.
//!
//! | module | owns |
//! |---|---|
//! | [`error`] | the CLI's typed error, its messages and exit codes |
//! | [`size`] | parsing of sizes like `1G`, `512M` |
//! | [`device`] | [`device::FileDevice`]: pread, queued writes drained as sorted pwritev (large drains over writer threads), flush, FUA, discard, exclusive open |
//! | [`probe`] | recognising what is on a device before it is overwritten or mounted |
//! | [`record`] | the write log (`mount --record-writes`), its marks, and the crash states it gives under the shared crash model (rollfs-crash) |
//! | [`crashtest`] | `rollfs crashtest`: run a command on a recorded mount, then check its crash states |
//! | [`oplog`] | the operation log (`mount --record-ops`): the file-system operations a program made, in order, with their data |
//! | [`models`] | the persistence models of `crashtest --model` (posix-weak, ext4-ordered): which states an operation log may leave, built on fresh images, and why a failing one is allowed |
//! | [`mutant`] | the driver's deliberately broken variants (test-only feature `mutants`) |
//! | [`fuse`] | the FUSE driver: `fuser::Filesystem` over the core |
//! | [`notify`] | kernel notifications (page-cache invalidation), queued by request threads and sent by their own thread |
//! | [`cmd`] | the subcommands: mkfs, mount, fsck, inspect, replay |
//! | [`dump`] | `rollfs dump`: files copied out of an image read-only, damage skipped and reported with its block |
//! | [`populate`] | `mkfs --root DIR`: the scan of a directory tree, the image size from it, the copy, and the superblocks held back until the copy is complete |
//! | [`resize`] | `rollfs resize`: an unmounted image grown in place (extended, then the core's plan written in its crash-safe order) |
//! | [`inspect`] | the `inspect` report: text, JSON and the SVG picture (layout to scale, segment utilisation with the log heads, wear) |
//! | [`secure`] | private output files (0600, no symlinks) and the ownership check of targets |

pub mod cmd;
pub mod crashtest;
pub mod device;
pub mod dump;
pub mod error;
pub mod fuse;
pub mod inspect;
pub mod models;
pub mod mutant;
pub mod notify;
pub mod online_grow;
pub mod online_scrub;
pub mod oplog;
pub mod populate;
pub mod probe;
pub mod record;
pub mod resize;
pub mod secure;
pub mod size;

/// The current time as the core wants it (the core reads no clock).
pub fn now() -> rollfs_core::Timestamp {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    rollfs_core::Timestamp::new(d.as_secs() as i64, d.subsec_nanos())
}

/// Mount options with this mount's entropy (`MountOptions::mount_nonce`: the version jump
/// that keeps an earlier use's stale chain from being taken for this mount's). From
/// getrandom(2), which waits until the kernel's pool is seeded (identical boards booting
/// the same image read the same /dev/urandom bytes before that); where it fails, the time
/// in nanoseconds, the process id and a per-process counter (two mounts still differ
/// unless they share all three).
pub fn with_mount_nonce(opts: rollfs_core::MountOptions) -> rollfs_core::MountOptions {
    rollfs_core::MountOptions { mount_nonce: mount_nonce(), ..opts }
}

fn mount_nonce() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: getrandom writes at most b.len() bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr() as *mut libc::c_void, b.len(), 0) };
    if n == b.len() as isize {
        return u64::from_le_bytes(b);
    }
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    (d.as_nanos() as u64) ^ ((std::process::id() as u64) << 40) ^ n.rotate_left(20)
}
