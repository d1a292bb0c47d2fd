//! The consistency checker shared by `rollfs fsck` and the crash explorer (in progress).

use crate::device::BlockDevice;
use crate::error::Result;
use alloc::string::String;
use alloc::vec::Vec;

/// What a check found. `problems` is empty for a clean image.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsckReport {
    pub problems: Vec<String>,
    pub inodes: u64,
    pub directories: u64,
    pub data_blocks: u64,
    pub node_blocks: u64,
    pub checkpoint_version: u64,
}

impl FsckReport {
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the image on `dev` as a mount would see it (newest valid checkpoint), without
/// writing. An `Err` means the image could not be checked at all (unreadable superblock or
/// checkpoint, I/O error); problems found are in the report.
pub fn check<D: BlockDevice>(dev: &mut D) -> Result<FsckReport> {
    let _ = dev;
    Err(crate::error::Error::NotSupported("fsck in progress"))
}
