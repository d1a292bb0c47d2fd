//! Files the tools create, and the targets they format or mount, checked against other
//! users (issue 18; DESIGN.md "Security").
//!
//! - [`create_private`]: the write log (`mount --record-writes`), `replay --out` and
//!   `inspect --svg` files are created 0600 without following a symbolic link, and an
//!   existing file is reused only when it is a regular file of the caller with no other
//!   link — so a name planted by another user in a shared directory (a symlink or hard
//!   link to a victim's file, or a file the planter can read) is refused, not written.
//! - [`check_target`]: whoever can write an image or device controls the filesystem on
//!   it (its metadata, setuid files, what the kernel is handed), so mkfs and mount refuse,
//!   without `--force`, a target owned by another user than the caller or root, or
//!   writable by others than its owner (for block devices: by everyone — the `disk`
//!   group's write access is the system's design). The check runs on the opened file, so
//!   renaming another file into place after the check changes nothing.

use crate::error::{CliError, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// Creates `path` for writing with mode 0600 and no symlink following, or truncates it if
/// it is already a regular file of the caller with a single link (and sets it to 0600).
pub fn create_private(path: &Path, what: &'static str) -> Result<File> {
    let refuse = |detail: String| CliError::Failed { path: path.to_owned(), what, detail };
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o600)
        // O_NONBLOCK: a planted FIFO must not hang the tool before the check below.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| {
            // ELOOP, or EACCES when the link sits in a sticky directory.
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                return refuse(
                    "it is a symbolic link; refusing to follow it (remove it or choose another path)".into(),
                );
            }
            match e.raw_os_error() {
                Some(libc::ENXIO) => refuse("it is a FIFO or socket, not a regular file".into()),
                _ => CliError::io(path, what, e),
            }
        })?;
    let md = f.metadata().map_err(|e| CliError::io(path, what, e))?;
    if !md.file_type().is_file() {
        return Err(refuse("not a regular file".into()));
    }
    if md.uid() != euid() {
        return Err(refuse(format!(
            "the file exists and belongs to uid {}, another user; refusing to write into it",
            md.uid()
        )));
    }
    if md.nlink() > 1 {
        return Err(refuse(format!(
            "the file exists and has {} hard links; refusing to overwrite a file that has other names",
            md.nlink()
        )));
    }
    f.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(|e| CliError::io(path, what, e))?;
    f.set_len(0).map_err(|e| CliError::io(path, what, e))?;
    // Back to blocking writes (the flag is ignored for regular files, but be plain).
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        use std::os::fd::AsRawFd;
        let fl = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(f.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
    }
    Ok(f)
}

/// Why another user could control the filesystem on the opened target, if they could.
pub fn target_risk(md: &std::fs::Metadata) -> Option<String> {
    let me = euid();
    if md.uid() != me && md.uid() != 0 {
        return Some(format!(
            "it belongs to uid {}, another user, who could change the filesystem under you",
            md.uid()
        ));
    }
    let mode = md.mode() & 0o7777;
    let writable_by_others = if md.file_type().is_block_device() { mode & 0o002 } else { mode & 0o022 };
    if writable_by_others != 0 {
        return Some(format!(
            "it is writable by {} (mode {mode:04o}), who could change the filesystem under you; chmod go-w it",
            if mode & 0o002 != 0 { "every user" } else { "its group" }
        ));
    }
    None
}

/// Refuses (without `force`) a target another user could write; `action` is "format" or
/// "mount".
pub fn check_target(file: &File, path: &Path, action: &'static str, force: bool) -> Result<()> {
    let md = file.metadata().map_err(|e| CliError::io(path, "inspect the target", e))?;
    // A symlink (e.g. /dev/disk/by-id/...) is followed only when it is the caller's or
    // root's: one planted by another user could point anywhere (a victim's file).
    let link_risk = std::fs::symlink_metadata(path).ok().filter(|l| l.file_type().is_symlink()).and_then(|l| {
        (l.uid() != euid() && l.uid() != 0)
            .then(|| format!("it is a symbolic link that belongs to uid {}, another user", l.uid()))
    });
    match link_risk.or_else(|| target_risk(&md)) {
        Some(why) if !force => Err(CliError::Failed {
            path: path.to_owned(),
            what: if action == "mount" { "refusing to mount" } else { "refusing to format" },
            detail: format!("{why} (use --force to {action} it anyway)"),
        }),
        Some(why) => {
            eprintln!("rollfs: warning: {}: {why}; going on because of --force", path.display());
            Ok(())
        }
        None => {
            if let Some(who) = readable_by_others(&md) {
                eprintln!(
                    "rollfs: warning: {}: readable by {who}, who can read every file's data in it; chmod {} it",
                    path.display(),
                    if md.file_type().is_block_device() { "o-r" } else { "go-r" }
                );
            }
            Ok(())
        }
    }
}

/// Who besides the owner can read the target, if anyone: image files should be private
/// (mkfs creates them 0600); block devices are readable by the `disk` group by design.
fn readable_by_others(md: &std::fs::Metadata) -> Option<&'static str> {
    let mode = md.mode();
    if mode & 0o004 != 0 {
        Some("every user")
    } else if !md.file_type().is_block_device() && mode & 0o040 != 0 {
        Some("its group")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_private_refuses_symlinks_and_sets_0600() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = d.path().join("out");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = create_private(&link, "write the output").unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        let hard = d.path().join("hard");
        std::fs::hard_link(&victim, &hard).unwrap();
        let e = create_private(&hard, "write the output").unwrap_err().to_string();
        assert!(e.contains("hard links"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        let new = d.path().join("new");
        drop(create_private(&new, "write the output").unwrap());
        assert_eq!(std::fs::metadata(&new).unwrap().mode() & 0o777, 0o600);
        std::fs::write(&new, b"old contents").unwrap();
        std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(create_private(&new, "write the output").unwrap());
        let md = std::fs::metadata(&new).unwrap();
        assert_eq!((md.len(), md.mode() & 0o777), (0, 0o600), "one's own file is truncated and made private");
    }
}
