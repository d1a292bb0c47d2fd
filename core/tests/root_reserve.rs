//! The root reserve covers node ids as well as blocks (issue 35, finding 6): mkfs gives a
//! quarter of the main area's blocks as node ids, and an empty file takes one id and one
//! block, so a user making empty files used every id while three quarters of the space
//! was free, and root could then create nothing, make no directory and grow no file past
//! its inode's own pointers (root's SQLite: "unable to open database file").

use rollfs_core::*;

const USER: Credentials = Credentials { uid: 1000, gid: 1000 };
const ROOT: Credentials = Credentials { uid: 0, gid: 0 };

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

/// A 16 MiB image mounted with a root reserve of 5 % of its capacity.
fn mount() -> Filesystem<MemDevice> {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [6; 16], ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(4096), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap();
    let cap = fs.statfs().map(|s| s.blocks).unwrap_or(0);
    let dev = fs.unmount(t(0)).unwrap();
    let mopts = MountOptions { root_reserve_blocks: cap / 20, ..Default::default() };
    Filesystem::mount(dev, &mopts, t(0)).unwrap()
}

#[test]
fn a_user_taking_every_node_id_with_empty_files_leaves_root_the_reserve() {
    let mut fs = mount();
    let d = fs.mkdir(1, b"pub", 0o777, ROOT, t(1)).unwrap().ino;
    fs.set_privileged(false);
    let mut made = 0u32;
    let refused = loop {
        assert!(made < 100_000, "bounded by the node ids");
        match fs.create(d, format!("e{made}").as_bytes(), 0o644, USER, t(2)) {
            Ok(_) => made += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(refused.errno(), 28, "{refused}");
    let st = fs.statfs().unwrap();
    assert!(st.blocks_avail > st.blocks / 4, "the user ran out of ids, not of space: {st:?}");
    assert!(st.files_free > 0, "ids are left, for root: {st:?}");
    // Another unprivileged create, mkdir or a write that needs a direct node: refused too.
    assert_eq!(fs.mkdir(d, b"dir", 0o755, USER, t(3)).unwrap_err().errno(), 28);
    // Root still can: create, mkdir, and grow a file past its inode's pointers (a direct
    // node), as an SQLite database needs.
    fs.set_privileged(true);
    let f = fs.create(1, b"root.db", 0o600, ROOT, t(4)).expect("root creates").ino;
    fs.mkdir(1, b"root-dir", 0o700, ROOT, t(4)).expect("root makes a directory");
    fs.write(f, 2000 * 4096, &[7u8; 4096], t(4)).expect("root grows a file past the inode's pointers");
    fs.fsync(f, false, t(5)).unwrap();
    let mut dev = fs.unmount(t(6)).unwrap();
    assert!(fsck::check(&mut dev).unwrap().is_clean());
    eprintln!("the user made {made} empty files before ENOSPC");
}

#[test]
fn without_a_root_reserve_every_id_is_everyones() {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [7; 16], ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(4096), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap();
    fs.set_privileged(false);
    let mut made = 0u32;
    while fs.create(1, format!("e{made}").as_bytes(), 0o644, USER, t(1)).is_ok() {
        made += 1;
        assert!(made < 100_000);
    }
    assert_eq!(fs.statfs().unwrap().files_free, 0, "with no reserve, the user takes every id");
}
