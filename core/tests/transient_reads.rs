//! A read that returns flipped bits once (flash read disturb) and the right bits on a retry
//! never changes what a mount shows: every block the core checks is read once more before
//! a failed check stands (`read_twice_if`). Each read of a mount and of the file read back
//! is misread in turn, on a cleanly unmounted image (the newest checkpoint pack must not
//! give way to the older one) and on an image an fsync left (the chain node and the batch
//! data roll-forward reads must not drop the fsync). rollfs-sim's `bitflip-transient`
//! device model measures the same over the explorer's workloads (docs/TESTING.md).

use rollfs_core::*;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 1000, gid: 1000 };

fn content(v: u8) -> Vec<u8> {
    (0..3 * BLOCK_SIZE).map(|i| (i as u8).wrapping_mul(7) ^ v).collect()
}

/// Mounts `image` with read `flip_at` misread and returns `/f`'s contents, and the reads made.
fn mount_and_read(image: &MemDevice, flip_at: Option<u64>) -> (Result<Vec<u8>>, u64) {
    let mut dev = image.clone();
    dev.counters = MemDeviceCounters::default();
    dev.flip_nth_read = flip_at;
    let mut fs = match Filesystem::mount(dev, &MountOptions::default(), T) {
        Ok(fs) => fs,
        Err(e) => return (Err(e), flip_at.unwrap_or(0) + 1),
    };
    let got = fs.lookup(1, b"f").and_then(|a| {
        let mut buf = vec![0u8; a.size as usize];
        fs.read(a.ino, 0, &mut buf).map(|n| buf[..n].to_vec())
    });
    (got, fs.into_device().counters.reads)
}

/// Every read of mounting `image` and reading `/f` misread in turn: `/f` is `want` each time.
fn every_misread_shows(image: &MemDevice, want: &[u8]) {
    let (got, reads) = mount_and_read(image, None);
    assert_eq!(got.expect("healthy mount"), want);
    assert!(reads > 5, "only {reads} reads");
    for n in 0..reads {
        let (got, _) = mount_and_read(image, Some(n));
        match got {
            Ok(g) => assert!(g == want, "read {n} misread: /f shows other contents ({} bytes)", g.len()),
            Err(e) => panic!("read {n} misread: {e}"),
        }
    }
}

/// A formatted, mounted image with `/f` holding `content(1)`, checkpointed; and its inode.
fn synced_file() -> (Filesystem<MemDevice>, Ino) {
    let opts = MkfsOptions { segment_blocks: 16, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(2048), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let f = fs.create(1, b"f", 0o644, C, T).unwrap();
    fs.write(f.ino, 0, &content(1), T).unwrap();
    fs.sync(T).unwrap();
    (fs, f.ino)
}

#[test]
fn a_misread_checkpoint_pack_does_not_roll_back() {
    let (mut fs, f) = synced_file();
    // The second checkpoint goes to the other pack: the older one holds content(1).
    fs.write(f, 0, &content(2), T).unwrap();
    let image = fs.unmount(T).unwrap();
    every_misread_shows(&image, &content(2));
}

#[test]
fn a_misread_chain_node_or_batch_block_does_not_drop_an_fsync() {
    let (mut fs, f) = synced_file();
    fs.write(f, 0, &content(3), T).unwrap();
    fs.fsync(f, false, T).unwrap();
    // Power loss after the fsync: the in-memory device holds what was written.
    let image = fs.into_device();
    every_misread_shows(&image, &content(3));
}
