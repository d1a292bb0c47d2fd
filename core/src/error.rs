//! The one error type of the core, and its mapping to errno values.
//!
//! Corruption is always reported with the block it was found in and the reason, so that a
//! user (and fsck) can tell what is wrong without a debugger; it maps to EUCLEAN.

use crate::device::IoError;

pub type Result<T, E = Error> = core::result::Result<T, E>;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("no such file or directory")]
    NotFound,
    #[error("file exists")]
    Exists,
    #[error("directory not empty")]
    NotEmpty,
    #[error("not a directory")]
    NotDir,
    #[error("is a directory")]
    IsDir,
    #[error("file name too long")]
    NameTooLong,
    #[error("invalid argument: {0}")]
    Invalid(&'static str),
    #[error("no space left on device")]
    NoSpace,
    /// A directory cannot take the name: the name's hash bucket is full in all 64 levels
    /// of the directory's hash table (docs/FORMAT.md, "Hash table"). ENOSPC, as in ext4
    /// and f2fs; the mount logs which directory.
    #[error("directory full: no room for the name in its hash bucket at any of the 64 levels")]
    DirectoryFull,
    #[error("operation not permitted")]
    NotPermitted,
    #[error("too many links")]
    TooManyLinks,
    #[error("file too large")]
    FileTooBig,
    #[error("no such attribute")]
    NoData,
    #[error("attribute value does not fit the buffer")]
    Range,
    #[error("operation not supported: {0}")]
    NotSupported(&'static str),
    #[error("read-only filesystem")]
    ReadOnly,
    /// A write or flush failed earlier: the in-memory state may no longer match anything
    /// durable, so the filesystem stopped writing (f2fs's and redb's shutdown). EIO, not
    /// EROFS: the mount was not asked to be read-only; unmount and mount again.
    #[error("input/output error: the filesystem shut down after a failed write (mount again)")]
    ShutDown,
    #[error("I/O error at block {block} during {op}")]
    Io { block: u64, op: &'static str },
    #[error("corruption at block {block}: {reason}")]
    Corrupt { block: u64, reason: &'static str },
    /// A data block read back does not match the checksum its node holds (the device
    /// returned flipped or stale bytes). EIO, as btrfs and ZFS: the bytes are never
    /// returned; the rest of the file stays readable.
    #[error("data checksum mismatch: inode {ino}, file block {index} (byte offset {}), block {block}", index * 4096)]
    DataChecksum { ino: u32, index: u64, block: u64 },
}

impl Error {
    /// The Linux errno value for this error.
    pub fn errno(&self) -> i32 {
        match self {
            Error::NotPermitted => 1,        // EPERM
            Error::NotFound => 2,            // ENOENT
            Error::Io { .. } => 5,           // EIO
            Error::DataChecksum { .. } => 5, // EIO
            Error::ShutDown => 5,            // EIO
            Error::Exists => 17,             // EEXIST
            Error::NotDir => 20,             // ENOTDIR
            Error::IsDir => 21,              // EISDIR
            Error::Invalid(_) => 22,         // EINVAL
            Error::FileTooBig => 27,         // EFBIG
            Error::NoSpace => 28,            // ENOSPC
            Error::DirectoryFull => 28,      // ENOSPC
            Error::ReadOnly => 30,           // EROFS
            Error::TooManyLinks => 31,       // EMLINK
            Error::Range => 34,              // ERANGE
            Error::NameTooLong => 36,        // ENAMETOOLONG
            Error::NotEmpty => 39,           // ENOTEMPTY
            Error::NoData => 61,             // ENODATA
            Error::NotSupported(_) => 95,    // EOPNOTSUPP
            Error::Corrupt { .. } => 117,    // EUCLEAN
        }
    }

    /// Shorthand used by decoders.
    pub fn corrupt(block: u64, reason: &'static str) -> Error {
        Error::Corrupt { block, reason }
    }
}

impl From<IoError> for Error {
    fn from(e: IoError) -> Error {
        Error::Io { block: e.block, op: e.op }
    }
}
