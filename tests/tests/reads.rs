//! Reads through FUSE that read the device outside the filesystem's lock (issue 14).
//!
//! - `unlocked_reads_never_return_reused_or_stale_blocks`: a writer rewrites a file whole,
//!   again and again (each block stamped with its version and index), while a filler file
//!   grows and is removed and directory fsyncs write checkpoints, so the file's old blocks
//!   are freed and reused on a small image; two readers read it whole with O_DIRECT (every
//!   read reaches the daemon), all the time. Every block a reader gets must be one the writer wrote
//!   at that index, of a version no older than the last one completed before the read
//!   began: a block read after its reuse (filler bytes, another version's index, or an old
//!   version) fails the test. The driver's counters must show the unlocked path in use.
//! - `a_corrupt_block_read_through_fuse_is_eio_not_its_bytes`: the unlocked path verifies
//!   checksums (the locked retry reports the error).

use rollfs_tests::*;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BLOCKS: usize = 96;
const B: usize = 4096;

/// Block `idx` of version `v`: (v, idx) repeated over the whole block.
fn stamp(v: u64, idx: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(B);
    while b.len() < B {
        b.extend_from_slice(&v.to_le_bytes());
        b.extend_from_slice(&idx.to_le_bytes());
    }
    b
}

/// The version of a block, if it is a whole stamp of index `idx`.
fn version_of(block: &[u8], idx: u64) -> Result<u64, String> {
    let v = u64::from_le_bytes(block[..8].try_into().unwrap());
    let want = stamp(v, idx);
    if let Some(at) = (0..B).find(|&k| block[k] != want[k]) {
        let at = at & !15;
        return Err(format!(
            "block {idx} is not a stamp of its index: version {v} at its start, {:?} at byte {at}",
            &block[at..at + 16]
        ));
    }
    Ok(v)
}

/// A zeroed buffer aligned for O_DIRECT.
struct AlignedBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        let layout = std::alloc::Layout::from_size_align(len, B).unwrap();
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        AlignedBuf { ptr, layout }
    }
    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr is a live allocation of layout.size() initialised bytes, borrowed
        // mutably through self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

#[test]
fn unlocked_reads_never_return_reused_or_stale_blocks() {
    require_fuse();
    let img = Image::new("48M", &[]);
    let m = img.mount();
    let path = m.path("f");
    let mut all = Vec::with_capacity(BLOCKS * B);
    for i in 0..BLOCKS {
        all.extend_from_slice(&stamp(1, i as u64));
    }
    fs::write(&path, &all).unwrap();
    File::open(&path).unwrap().sync_all().unwrap();
    let completed = Arc::new(AtomicU64::new(1));
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (path, completed, stop) = (path.clone(), completed.clone(), stop.clone());
            std::thread::spawn(move || -> Result<u64, String> {
                // O_DIRECT: every read reaches the daemon, and the page cache (whose
                // readers may see a page half-copied by a concurrent write(2), as on any
                // Linux filesystem) is out of the picture, so a block must be whole.
                let f = OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(&path).unwrap();
                let mut buf = AlignedBuf::new(BLOCKS * B);
                let buf = buf.as_mut();
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let floor = completed.load(Ordering::SeqCst);
                    f.read_exact_at(buf, 0).map_err(|e| format!("read: {e}"))?;
                    for (i, block) in buf.chunks(B).enumerate() {
                        let v = version_of(block, i as u64)?;
                        if v < floor {
                            return Err(format!("block {i}: version {v}, but version {floor} had completed"));
                        }
                    }
                    reads += 1;
                }
                Ok(reads)
            })
        })
        .collect();
    let start = Instant::now();
    let mut v = 1;
    let dir = File::open(m.path("")).unwrap();
    while start.elapsed() < Duration::from_secs(6) {
        v += 1;
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        for i in 0..BLOCKS {
            f.write_all_at(&stamp(v, i as u64), (i * B) as u64).unwrap();
        }
        f.sync_all().unwrap();
        completed.store(v, Ordering::SeqCst);
        // Free and reuse: a filler file, its removal, and a checkpoint (directory fsync).
        if v % 3 == 0 {
            let filler = m.path("filler");
            fs::write(&filler, vec![0x5au8; 2 << 20]).unwrap();
            fs::remove_file(&filler).unwrap();
            dir.sync_all().unwrap();
        }
    }
    stop.store(true, Ordering::Relaxed);
    let mut reads = 0;
    for r in readers {
        reads += r.join().unwrap().unwrap_or_else(|e| panic!("a reader got a wrong block: {e}"));
    }
    let stats: serde_json::Value = serde_json::from_str(&mount_stats(&path)).unwrap();
    let unlocked = stats["driver"]["unlocked_reads"].as_u64().unwrap();
    let retries = stats["driver"]["unlocked_read_retries"].as_u64().unwrap();
    eprintln!("{v} versions written, {reads} whole-file reads, {unlocked} unlocked read requests, {retries} retried under the lock");
    assert!(v > 10 && reads > 10, "the test did too little: {v} versions, {reads} reads");
    assert!(unlocked > 0, "no read took the unlocked path");
    drop(dir);
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}

#[test]
fn a_corrupt_block_read_through_fuse_is_eio_not_its_bytes() {
    require_fuse();
    let img = Image::new("48M", &[]);
    let m = img.mount();
    let path = m.path("g");
    let mut all = Vec::new();
    for i in 0..16 {
        all.extend_from_slice(&stamp(7, i));
    }
    fs::write(&path, &all).unwrap();
    assert!(m.unmount().success());
    // Flip a byte of block 5 of the file on the image: find it by its stamp.
    let mut bytes = fs::read(&img.path).unwrap();
    let want = stamp(7, 5);
    let at = bytes.chunks(B).position(|b| b == want.as_slice()).expect("block 5 on the image");
    bytes[at * B + 100] ^= 0xff;
    fs::write(&img.path, &bytes).unwrap();
    let m = img.mount();
    let f = File::open(m.path("g")).unwrap();
    let mut buf = vec![0u8; 16 * B];
    let e = f.read_exact_at(&mut buf, 0).expect_err("a read over a corrupt block must fail");
    assert_eq!(e.raw_os_error(), Some(libc::EIO));
    let mut one = vec![0u8; B];
    f.read_exact_at(&mut one, 6 * B as u64).unwrap();
    assert_eq!(one, stamp(7, 6), "the other blocks read");
    let stats: serde_json::Value = serde_json::from_str(&mount_stats(&m.path("g"))).unwrap();
    assert!(stats["driver"]["unlocked_read_retries"].as_u64().unwrap() > 0, "the bad run was retried under the lock");
    assert!(stats["core"]["data_checksum_errors"].as_u64().unwrap() > 0);
    drop(f);
    assert!(m.unmount().success());
}
