//! The CLI's one error type. Every message names the path it is about and the reason,
//! and every variant has an exit code (see [`CliError::exit_code`]), so scripts and the
//! tests can tell a missing device from a wrong magic without parsing text.

use std::io;
use std::path::{Path, PathBuf};

pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// Exit code for a usage error (bad options), as clap uses it.
pub const EXIT_USAGE: i32 = 2;
/// Exit code for any other failure of mkfs, mount, inspect and replay.
pub const EXIT_FAILURE: i32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{}: no such file or device", .path.display())]
    NotFound { path: PathBuf },
    #[error("{}: permission denied while trying to {op} (are you root, or in the disk group?)", .path.display())]
    PermissionDenied { path: PathBuf, op: &'static str },
    #[error("{}: cannot {op}: {source}", .path.display())]
    Io { path: PathBuf, op: &'static str, source: io::Error },
    #[error("{}: not a rollfs filesystem (bad superblock magic{})", .path.display(),
        .found.as_ref().map(|f| format!("; it looks like {f}")).unwrap_or_default())]
    WrongMagic { path: PathBuf, found: Option<String> },
    #[error("{}: unsupported rollfs format version {major}.{minor} (this rollfs reads version {supported}.x){}", .path.display(),
        if *.major == 1 { "; format 1 was made before data checksums: copy the files off with rollfs 0.1 and make a new image" } else { "" })]
    UnsupportedVersion { path: PathBuf, major: u16, minor: u16, supported: u16 },
    #[error("{}: made by a newer rollfs: incompatible feature bits {unknown:#x} are unknown to this one (it knows {known:#x}); use the rollfs that made the image", .path.display())]
    UnsupportedFeatures { path: PathBuf, unknown: u32, known: u32 },
    #[error("{}: corrupted superblock: {reason} (run `rollfs fsck` on it)", .path.display())]
    CorruptSuperblock { path: PathBuf, reason: String },
    #[error("{}: device or image is busy: {detail}", .path.display())]
    Busy { path: PathBuf, detail: String },
    #[error("{}: already contains {what}; refusing to overwrite it without --force", .path.display())]
    HasFilesystem { path: PathBuf, what: String },
    #[error("mount point {}: does not exist (create it with mkdir first)", .path.display())]
    MountPointMissing { path: PathBuf },
    #[error("mount point {}: not a directory", .path.display())]
    MountPointNotDir { path: PathBuf },
    #[error("bad option: {0}")]
    BadOption(String),
    #[error("{}: {what}: {err}", .path.display())]
    Core { path: PathBuf, what: &'static str, err: rollfs_core::Error },
    #[error("{}: {what}: {detail}", .path.display())]
    Failed { path: PathBuf, what: &'static str, detail: String },
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::BadOption(_) => EXIT_USAGE,
            _ => EXIT_FAILURE,
        }
    }

    /// Classifies an I/O error on `path`: missing and permission-denied get their own
    /// variants because they are the two a user most often has to act on.
    pub fn io(path: &Path, op: &'static str, e: io::Error) -> CliError {
        match e.kind() {
            io::ErrorKind::NotFound => CliError::NotFound { path: path.to_owned() },
            io::ErrorKind::PermissionDenied => CliError::PermissionDenied { path: path.to_owned(), op },
            _ if e.raw_os_error() == Some(libc::EROFS) => CliError::PermissionDenied { path: path.to_owned(), op },
            _ if e.raw_os_error() == Some(libc::EBUSY) => CliError::Busy {
                path: path.to_owned(),
                detail: "it is opened exclusively by someone else (mounted?)".into(),
            },
            _ => CliError::Io { path: path.to_owned(), op, source: e },
        }
    }

    pub fn core(path: &Path, what: &'static str, err: rollfs_core::Error) -> CliError {
        CliError::Core { path: path.to_owned(), what, err }
    }
}
