//! `rollfs resize MOUNTPOINT [SIZE]`: online grow of a live mount, and the ioctl it runs on
//! (DESIGN.md, *Growing an image*).
//!
//! The daemon answers [`ROLLFS_IOC_GROW`] under the filesystem's lock: the refusals that
//! need no device (no room to grow, shrink, past the room, nothing to do) first; then the
//! device is made long enough (`BlockDevice::refresh_size`: an image file is extended,
//! allocated if it was written out — a host without room refuses the grow at once — and
//! sparse if it is sparse, `device::extend_image_file`; a block device's size is read
//! again); then the core's
//! `Filesystem::grow` commits the new size (a checkpoint, then the new tables and the
//! checkpoint whose header records the size). statfs answers from the core, so `df` shows
//! the new size at once. A failed grow leaves an extended image file extended (it holds
//! nothing; the next grow uses it).
//!
//! Who may: the user who mounted it, or CAP_SYS_ADMIN (as the scrub and the statistics).
//! The mounter owns the image or device and could grow it offline anyway; any other user
//! must not, because a grow extends the backing file into the host's free space and
//! writes checkpoints at will.
//!
//! The argument, `_IOWR('R', 4, [u8; 256])`, little-endian:
//!
//! | offset | size | in | out |
//! |---|---|---|---|
//! | 0 | 8 | new size in bytes (0: a block device's size, an image file's room) | status: 0 grown, 1 nothing to do, else the errno of the refusal or failure |
//! | 8 | 8 | | size before, bytes |
//! | 16 | 8 | | size after, bytes |
//! | 24 | 8 | | the room (`mkfs --max-size`), bytes |
//! | 32 | 4 | | main segments before |
//! | 36 | 4 | | main segments after |
//! | 40 | 8 | | usable bytes before |
//! | 48 | 8 | | usable bytes after |
//! | 56 | 200 | | the reason of a refusal or failure (UTF-8, NUL-padded) |

use crate::error::CliError;
use crate::size;
use rollfs_core::{BlockDevice, Filesystem, BLOCK_SIZE};
use std::path::Path;

/// Bytes of the ioctl's argument.
pub const GROW_ARG_LEN: usize = 256;
/// `_IOWR('R', 4, [u8; GROW_ARG_LEN])`.
pub const ROLLFS_IOC_GROW: u32 = (3 << 30) | ((GROW_ARG_LEN as u32) << 16) | ((b'R' as u32) << 8) | 4;
const MESSAGE_AT: usize = 56;
pub const STATUS_GROWN: u64 = 0;
pub const STATUS_NOTHING: u64 = 1;

/// What a grow request did (the ioctl's reply, decoded).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct GrowReply {
    pub status: u64,
    pub old_bytes: u64,
    pub new_bytes: u64,
    pub max_bytes: u64,
    pub old_main_segments: u32,
    pub new_main_segments: u32,
    pub old_user_bytes: u64,
    pub new_user_bytes: u64,
    pub message: String,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

impl GrowReply {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; GROW_ARG_LEN];
        for (at, v) in [
            (0, self.status),
            (8, self.old_bytes),
            (16, self.new_bytes),
            (24, self.max_bytes),
            (40, self.old_user_bytes),
            (48, self.new_user_bytes),
        ] {
            b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        b[32..36].copy_from_slice(&self.old_main_segments.to_le_bytes());
        b[36..40].copy_from_slice(&self.new_main_segments.to_le_bytes());
        // Cut at a character boundary, within the room.
        let mut end = self.message.len().min(GROW_ARG_LEN - MESSAGE_AT);
        while !self.message.is_char_boundary(end) {
            end -= 1;
        }
        b[MESSAGE_AT..MESSAGE_AT + end].copy_from_slice(&self.message.as_bytes()[..end]);
        b
    }

    pub fn decode(b: &[u8]) -> Result<GrowReply, String> {
        if b.len() < GROW_ARG_LEN {
            return Err(format!("grow reply of {} bytes, want {GROW_ARG_LEN}", b.len()));
        }
        let msg = &b[MESSAGE_AT..GROW_ARG_LEN];
        let len = msg.iter().position(|&c| c == 0).unwrap_or(msg.len());
        Ok(GrowReply {
            status: u64_at(b, 0),
            old_bytes: u64_at(b, 8),
            new_bytes: u64_at(b, 16),
            max_bytes: u64_at(b, 24),
            old_main_segments: u32_at(b, 32),
            new_main_segments: u32_at(b, 36),
            old_user_bytes: u64_at(b, 40),
            new_user_bytes: u64_at(b, 48),
            message: String::from_utf8_lossy(&msg[..len]).into_owned(),
        })
    }
}

/// The daemon's answer to a grow to `size` bytes (0: the device's size within the room, or
/// the room for an image file), under the filesystem's lock. Refusals and failures are
/// replies (status: their errno, and the reason), not ioctl errors, so that the command
/// can say why.
pub fn answer<D: BlockDevice>(fs: &mut Filesystem<D>, size: u64, now: rollfs_core::Timestamp) -> GrowReply {
    let old = *fs.geometry();
    let sb_max = fs.superblock().max_blocks;
    let mut r = GrowReply {
        status: STATUS_NOTHING,
        old_bytes: old.total_blocks * BLOCK_SIZE as u64,
        new_bytes: old.total_blocks * BLOCK_SIZE as u64,
        max_bytes: sb_max * BLOCK_SIZE as u64,
        old_main_segments: old.main_segments,
        new_main_segments: old.main_segments,
        old_user_bytes: old.user_blocks() * BLOCK_SIZE as u64,
        new_user_bytes: old.user_blocks() * BLOCK_SIZE as u64,
        message: String::new(),
    };
    let refuse = |mut r: GrowReply, e: rollfs_core::Error| {
        r.status = e.errno() as u64;
        r.message = match e {
            rollfs_core::Error::NoSpace => "the checkpoint at the new size has no room for the orphans now open".into(),
            e => e.to_string(),
        };
        r
    };
    if fs.is_read_only() {
        let e = if fs.is_shut_down() { rollfs_core::Error::ShutDown } else { rollfs_core::Error::ReadOnly };
        return refuse(r, e);
    }
    // The refusals that need no device first: nothing is extended for a size refused.
    let want = if size == 0 { sb_max } else { size / BLOCK_SIZE as u64 };
    match rollfs_core::resize::grown_geometry(fs.superblock(), &old, want) {
        Err(e) => return refuse(r, e),
        Ok(None) if size != 0 => return r,
        _ => {}
    }
    let have = match fs.device_mut().refresh_size(want) {
        Ok(n) => n,
        Err(e) => return refuse(r, e.into()),
    };
    let blocks = if size == 0 { have.min(sb_max) } else { want };
    if have < blocks {
        r.status = libc::EINVAL as u64;
        r.message = format!(
            "SIZE {}: larger than the device ({})",
            size::human(blocks * BLOCK_SIZE as u64),
            size::human(have * BLOCK_SIZE as u64)
        );
        return r;
    }
    match fs.grow(blocks, now) {
        Ok(None) => r,
        Ok(Some(new)) => {
            r.status = STATUS_GROWN;
            r.new_bytes = new.total_blocks * BLOCK_SIZE as u64;
            r.new_main_segments = new.main_segments;
            r.new_user_bytes = new.user_blocks() * BLOCK_SIZE as u64;
            r
        }
        Err(e) => refuse(r, e),
    }
}

/// One grow through the ioctl on `dir` (the mountpoint, open).
fn request(dir: &std::fs::File, size: u64) -> std::io::Result<GrowReply> {
    use std::os::fd::AsRawFd;
    let mut arg = vec![0u8; GROW_ARG_LEN];
    arg[0..8].copy_from_slice(&size.to_le_bytes());
    // SAFETY: the argument is GROW_ARG_LEN bytes, the size the ioctl number carries; the
    // kernel copies that many in and out.
    let r = unsafe { libc::ioctl(dir.as_raw_fd(), ROLLFS_IOC_GROW as _, arg.as_mut_ptr()) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    GrowReply::decode(&arg).map_err(std::io::Error::other)
}

/// `rollfs resize MOUNTPOINT [SIZE]`. Exit codes as the offline command's: 0 grown or
/// nothing to do, 2 a bad SIZE (smaller than the filesystem, past its room, larger than the
/// device), 1 could not resize (not a rollfs mount, permission, no room, read-only, I/O).
pub fn run(mountpoint: &Path, size: Option<u64>, json: bool) -> Result<i32, CliError> {
    let failed = |detail: String| CliError::Failed { path: mountpoint.to_owned(), what: "cannot resize", detail };
    let dir = std::fs::File::open(mountpoint).map_err(|e| failed(e.to_string()))?;
    if size == Some(0) {
        return Err(CliError::BadOption("SIZE 0: give the size to grow to (e.g. 4G), or none".into()));
    }
    let r = request(&dir, size.unwrap_or(0)).map_err(|e| {
        failed(match e.raw_os_error() {
            Some(libc::ENOTTY) => "not a rollfs mount (or a daemon without online grow)".into(),
            Some(libc::EPERM) => {
                "permission denied: only the user who mounted it, or root (CAP_SYS_ADMIN), may grow it".into()
            }
            _ => e.to_string(),
        })
    })?;
    let t = mountpoint.display().to_string();
    if r.status != STATUS_GROWN && r.status != STATUS_NOTHING {
        let detail = if r.message.contains("no room to grow") {
            format!(
                "{}: it was made without room to grow: make a new image with `rollfs mkfs --size SIZE --max-size MAX` and copy the files into it",
                r.message
            )
        } else {
            r.message.clone()
        };
        return Err(if r.status == libc::EINVAL as u64 && !r.message.contains("no room") {
            CliError::BadOption(detail)
        } else {
            failed(detail)
        });
    }
    if json {
        let mut v = serde_json::to_value(&r).unwrap_or_default();
        v["target"] = serde_json::json!(t);
        v["online"] = serde_json::json!(true);
        v["grown"] = serde_json::json!(r.status == STATUS_GROWN);
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        let report = crate::resize::ResizeReport {
            target: t,
            grown: r.status == STATUS_GROWN,
            old_bytes: r.old_bytes,
            new_bytes: r.new_bytes,
            old_main_segments: r.old_main_segments,
            new_main_segments: r.new_main_segments,
            old_user_bytes: r.old_user_bytes,
            new_user_bytes: r.new_user_bytes,
            max_bytes: r.max_bytes,
        };
        crate::resize::print_text(&report, "grown online");
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rollfs_core::{MemDevice, MkfsOptions, MountOptions, Timestamp};

    const T: Timestamp = Timestamp::new(1_700_000_000, 0);

    #[test]
    fn the_ioctl_number_carries_the_argument_size() {
        assert_eq!(ROLLFS_IOC_GROW, 0xC100_5204);
        assert_eq!((ROLLFS_IOC_GROW >> 16) & 0x3fff, GROW_ARG_LEN as u32);
    }

    #[test]
    fn a_reply_reads_back_as_written() {
        let r = GrowReply {
            status: 22,
            old_bytes: 1,
            new_bytes: 2,
            max_bytes: 3,
            old_main_segments: 4,
            new_main_segments: 5,
            old_user_bytes: 6,
            new_user_bytes: 7,
            message: "é".repeat(150),
        };
        let back = GrowReply::decode(&r.encode()).unwrap();
        assert_eq!(back.message, "é".repeat(100), "cut at a character boundary within 200 bytes");
        assert_eq!(GrowReply { message: String::new(), ..back }, GrowReply { message: String::new(), ..r });
    }

    fn mounted(max_blocks: u64) -> Filesystem<MemDevice> {
        let opts = MkfsOptions { segment_blocks: 16, max_blocks, ..MkfsOptions::default() };
        let mut dev = Filesystem::format(MemDevice::new(2048), &opts).unwrap();
        dev.set_block_count(8192);
        Filesystem::mount(dev, &MountOptions::default(), T).unwrap()
    }

    #[test]
    fn answers_grow_refuse_and_say_why() {
        let mut fs = mounted(8192);
        let r = answer(&mut fs, 1 << 20, T);
        assert_eq!(r.status, libc::EINVAL as u64);
        assert!(r.message.contains("shrink"), "{}", r.message);
        let r = answer(&mut fs, 8193 * 4096, T);
        assert!(r.status == libc::EINVAL as u64 && r.message.contains("room"), "{r:?}");
        assert_eq!(answer(&mut fs, 2049 * 4096, T).status, STATUS_NOTHING);
        // No SIZE: the room (the MemDevice is a partition of 8192 blocks already).
        let r = answer(&mut fs, 0, T);
        assert_eq!(r.status, STATUS_GROWN, "{r:?}");
        assert!(r.new_bytes == 8192 * 4096 && r.new_main_segments > r.old_main_segments);
        assert_eq!(fs.geometry().total_blocks, 8192);
        let mut plain = mounted(0);
        let r = answer(&mut plain, 0, T);
        assert!(r.status == libc::EINVAL as u64 && r.message.contains("no room"), "{r:?}");
        let dev = fs.unmount(T).unwrap();
        let mut ro = Filesystem::mount(dev, &MountOptions { read_only: true, ..Default::default() }, T).unwrap();
        let r = answer(&mut ro, 0, T);
        assert!(r.status == libc::EROFS as u64, "{r:?}");
    }
}
