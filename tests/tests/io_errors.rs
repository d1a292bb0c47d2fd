//! A device that fails writes, through a real mount: the image lives on a small tmpfs, so
//! the host runs out of room under a sparse image and rollfs's writer threads get ENOSPC.
//! The filesystem must shut down — every later change EIO, not EROFS (it was not mounted
//! read-only) — keep serving what it acknowledged, and leave an image that mounts again
//! with every fsync'd byte once the host has room.

use rollfs_tests::*;
use std::fs::{self, File};
use std::io::Write;
use std::process::Command;

/// A tmpfs of `size` mounted on a fresh directory; unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn new(size: &str) -> Tmpfs {
        assert!(is_root(), "mounting a tmpfs for the image needs root");
        let dir = tempfile::Builder::new().prefix("rollfs-tmpfs-").tempdir().unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(st.success(), "mount -t tmpfs failed");
        Tmpfs { dir }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}

#[test]
fn host_out_of_space_under_a_sparse_image_shuts_the_filesystem_down_with_eio() {
    require_fuse();
    let host = Tmpfs::new("40M");
    let img = host.dir.path().join("fs.img");
    let o = rollfs(["mkfs", "-q", "--sparse", "--size", "256M", img.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = vec![0x4Bu8; 1 << 20];
    {
        let m = Mount::new(&img, &[]);
        let mut f = File::create(m.path("kept")).unwrap();
        f.write_all(&kept).unwrap();
        f.sync_all().unwrap();
        drop(f);
        // 80 MiB cannot fit the 40 MiB host: a write or the fsync must fail with EIO.
        let mut g = File::create(m.path("big")).unwrap();
        let chunk = vec![0x5Au8; 1 << 20];
        let mut err = None;
        for _ in 0..80 {
            if let Err(e) = g.write_all(&chunk) {
                err = Some(e);
                break;
            }
        }
        let err = err.or_else(|| g.sync_all().err()).expect("80 MiB on a 40 MiB host succeeded");
        assert_eq!(err.raw_os_error(), Some(libc::EIO), "{err}");
        drop(g);
        // Shut down: changes fail with EIO (not EROFS), what was acknowledged still reads.
        let e = File::create(m.path("after")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO), "create after the failure: {e}");
        let e = fs::create_dir(m.path("dir")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO), "mkdir after the failure: {e}");
        assert!(fs::read(m.path("kept")).unwrap() == kept, "fsync'd data changed after the failure");
        let _ = m.unmount();
    }
    // With room again, the image mounts and holds every fsync'd byte.
    let o = Command::new("mount").args(["-o", "remount,size=400M"]).arg(host.dir.path()).status().unwrap();
    assert!(o.success());
    let m = Mount::new(&img, &[]);
    assert!(fs::read(m.path("kept")).unwrap() == kept, "fsync'd data lost");
    fs::write(m.path("after"), b"works again").unwrap();
    let _ = m.unmount();
    let (code, out) = fsck_of(&img);
    assert_eq!(code, 0, "{}", stdout(&out));
}

fn fsck_of(img: &std::path::Path) -> (i32, std::process::Output) {
    let o = rollfs(["fsck", img.to_str().unwrap()]);
    (o.status.code().unwrap_or(-1), o)
}
