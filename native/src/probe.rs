//! Recognising what a device holds, so that mkfs does not destroy a filesystem by accident
//! and mount/fsck/inspect can say precisely why an image is not usable (wrong magic,
//! unsupported version, corrupted superblock) instead of a generic failure.

use crate::error::{CliError, Result};
use rollfs_core::superblock::{self, Superblock, FORMAT_VERSION_MAJOR, SB_MAGIC};
use rollfs_core::{BlockDevice, Error, BLOCK_SIZE};
use std::path::Path;

/// Bytes read from the start of the device for signature checks (covers btrfs at 64 KiB).
const PROBE_BYTES: usize = 17 * BLOCK_SIZE;

fn read_head<D: BlockDevice>(dev: &mut D) -> Vec<u8> {
    let blocks = (PROBE_BYTES / BLOCK_SIZE).min(dev.block_count() as usize);
    let mut out = vec![0u8; PROBE_BYTES];
    let mut buf = [0u8; BLOCK_SIZE];
    for i in 0..blocks {
        if dev.read(i as u64, &mut buf).is_ok() {
            out[i * BLOCK_SIZE..(i + 1) * BLOCK_SIZE].copy_from_slice(&buf);
        }
    }
    out
}

fn at(h: &[u8], off: usize, sig: &[u8]) -> bool {
    h.get(off..off + sig.len()) == Some(sig)
}

/// Names a foreign filesystem (or partition table) by its signature.
pub fn foreign_signature(h: &[u8]) -> Option<&'static str> {
    let le32 = |off: usize| u32::from_le_bytes(h[off..off + 4].try_into().unwrap());
    if at(h, 1080, &[0x53, 0xEF]) {
        return Some("an ext2/ext3/ext4 filesystem");
    }
    if le32(1024) == 0xF2F5_2010 {
        return Some("an f2fs filesystem");
    }
    if at(h, 0, b"XFSB") {
        return Some("an XFS filesystem");
    }
    if at(h, 65536 + 64, b"_BHRfS_M") {
        return Some("a btrfs filesystem");
    }
    if at(h, 0, b"LUKS\xba\xbe") {
        return Some("a LUKS encrypted volume");
    }
    if at(h, 0, b"hsqs") {
        return Some("a squashfs image");
    }
    if at(h, 4086, b"SWAPSPACE2") {
        return Some("a swap area");
    }
    if at(h, 3, b"NTFS    ") {
        return Some("an NTFS filesystem");
    }
    if at(h, 510, &[0x55, 0xAA]) && (at(h, 54, b"FAT") || at(h, 82, b"FAT32")) {
        return Some("a FAT filesystem");
    }
    if at(h, 32769, b"CD001") {
        return Some("an ISO 9660 image");
    }
    if at(h, 512, b"EFI PART") {
        return Some("a GPT partition table");
    }
    if at(h, 510, &[0x55, 0xAA]) {
        return Some("a DOS partition table or boot sector");
    }
    None
}

/// What mkfs would overwrite, if anything worth a `--force`.
pub fn existing_filesystem<D: BlockDevice>(dev: &mut D) -> Option<String> {
    let h = read_head(dev);
    for copy in 0..2 {
        let off = copy * BLOCK_SIZE;
        if u32::from_le_bytes(h[off..off + 4].try_into().unwrap()) == SB_MAGIC {
            return Some(match superblock::read_superblock(dev) {
                Ok(sb) if !sb.label.is_empty() => {
                    format!("a rollfs filesystem (label {:?})", String::from_utf8_lossy(&sb.label))
                }
                Ok(_) => "a rollfs filesystem".to_string(),
                Err(_) => "a (damaged) rollfs filesystem".to_string(),
            });
        }
    }
    foreign_signature(&h).map(str::to_string)
}

/// Reads the superblock the way mount will, turning each failure into the error a user
/// can act on: not rollfs at all, a version this build cannot read, or corruption.
pub fn check_superblock<D: BlockDevice>(dev: &mut D, path: &Path) -> Result<Superblock> {
    if dev.block_count() < 2 {
        return Err(CliError::WrongMagic { path: path.to_owned(), found: Some("an empty or tiny file".into()) });
    }
    match superblock::read_superblock(dev) {
        Ok(sb) => Ok(sb),
        Err(Error::Io { block, op }) => Err(CliError::Failed {
            path: path.to_owned(),
            what: "cannot read the superblock",
            detail: format!("I/O error at block {block} during {op}"),
        }),
        Err(err) => {
            let h = read_head(dev);
            let mut with_magic = None;
            for copy in 0..2 {
                let b = &h[copy * BLOCK_SIZE..(copy + 1) * BLOCK_SIZE];
                if u32::from_le_bytes(b[0..4].try_into().unwrap()) == SB_MAGIC {
                    with_magic = Some(b);
                    break;
                }
            }
            let Some(b) = with_magic else {
                let found = foreign_signature(&h)
                    .map(str::to_string)
                    .or_else(|| h.iter().all(|&x| x == 0).then(|| "an empty (all-zero) device".to_string()));
                return Err(CliError::WrongMagic { path: path.to_owned(), found });
            };
            let major = u16::from_le_bytes([b[4], b[5]]);
            let minor = u16::from_le_bytes([b[6], b[7]]);
            if major != FORMAT_VERSION_MAJOR {
                return Err(CliError::UnsupportedVersion {
                    path: path.to_owned(),
                    major,
                    minor,
                    supported: FORMAT_VERSION_MAJOR,
                });
            }
            if matches!(err, Error::Corrupt { reason, .. } if reason == superblock::UNSUPPORTED_FEATURE_REASON) {
                let at = superblock::SB_OFF_FEATURE_INCOMPAT;
                let bits = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
                let known = superblock::FEATURE_INCOMPAT_SUPPORTED;
                return Err(CliError::UnsupportedFeatures { path: path.to_owned(), unknown: bits & !known, known });
            }
            let reason = match err {
                Error::Corrupt { block, reason } => format!("{reason} (block {block})"),
                e => e.to_string(),
            };
            Err(CliError::CorruptSuperblock { path: path.to_owned(), reason })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_ext4_and_gpt() {
        let mut h = vec![0u8; PROBE_BYTES];
        assert_eq!(foreign_signature(&h), None);
        h[1080] = 0x53;
        h[1081] = 0xEF;
        assert_eq!(foreign_signature(&h), Some("an ext2/ext3/ext4 filesystem"));
        let mut g = vec![0u8; PROBE_BYTES];
        g[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(foreign_signature(&g), Some("a GPT partition table"));
    }
}
