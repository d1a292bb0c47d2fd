//! Planned reads completed outside the lock (issue 14; from an adversarial review of that
//! read path), at the level of the FUSE driver without a mount: a real `FileDevice` (4
//! writer threads) under a core behind a mutex; a writer thread runs a random workload
//! (writes, fsync, sync, punch, truncate, unlink and recreate, background cleaning) on a
//! small image; a flusher thread waits and flushes outside the lock, as group commit does;
//! two readers take the fence, `read` and `read_planned` under the lock, sleep up to 20 ms,
//! then `DeviceReader::complete`. Every completion accepted must equal the `read` taken at
//! plan time, and both outcomes must occur. Without data checksums only the fence protects:
//! the test returns stale bytes with the core's `reuse_fence()` call removed.

use rollfs::device::{DeviceOptions, FileDevice};
use rollfs_core::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const C: Credentials = Credentials { uid: 0, gid: 0 };
const B: usize = BLOCK_SIZE;

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn run(data_checksums: bool, seconds: u64) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("img");
    std::fs::File::create(&p).unwrap().set_len(2048 * B as u64).unwrap();
    let dev = FileDevice::open(&p, DeviceOptions { writers: 4, ..DeviceOptions::default() }).unwrap();
    let opts = MkfsOptions { segment_blocks: 16, uuid: [3; 16], data_checksums, ..Default::default() };
    let dev = Filesystem::format(dev, &opts).unwrap();
    let mopts = MountOptions { dirty_bytes_max: 128 * B as u64, ..MountOptions::default() };
    let mut fs = Filesystem::mount(dev, &mopts, t(0)).unwrap();
    let reader = Arc::new(fs.device().reader().unwrap());
    let flusher = fs.device().flush_handle();
    let mut inos = Vec::new();
    for i in 0..8 {
        let ino = fs.create(1, format!("f{i}").as_bytes(), 0o644, C, t(0)).unwrap().ino;
        fs.open(ino).unwrap();
        inos.push(ino);
    }
    let fs = Arc::new(Mutex::new((fs, inos)));
    let stop = Arc::new(AtomicBool::new(false));
    let (accepted, refused) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut threads = Vec::new();
    {
        let (fs, stop) = (fs.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut rng = Rng(0x1234_5678_9abc_def1);
            let mut s = 1;
            while !stop.load(Ordering::Relaxed) {
                s += 1;
                let mut g = fs.lock().unwrap();
                let (fs, inos) = &mut *g;
                let k = rng.below(inos.len() as u64) as usize;
                let ino = inos[k];
                let r = match rng.below(20) {
                    0..=9 => {
                        let off = rng.below(200) * B as u64;
                        let n = 1 + rng.below(32) as usize;
                        let mut data = vec![0u8; n * B];
                        for (i, c) in data.chunks_mut(8).enumerate() {
                            c.copy_from_slice(&((s as u64) << 32 | (i as u64)).to_le_bytes());
                        }
                        fs.write(ino, off, &data, t(s)).map(|_| ())
                    }
                    10..=12 => fs.fsync(ino, false, t(s)),
                    13 => fs.sync(t(s)),
                    14 => fs.punch_hole(ino, rng.below(200) * B as u64, (1 + rng.below(16)) * B as u64, t(s)),
                    15 => fs
                        .setattr(ino, &SetAttr { size: Some(rng.below(200 * B as u64)), ..Default::default() }, t(s))
                        .map(|_| ()),
                    16 => {
                        let name = format!("f{k}");
                        fs.unlink(1, name.as_bytes(), t(s))
                            .and_then(|_| fs.release(ino, t(s)))
                            .and_then(|_| fs.create(1, name.as_bytes(), 0o644, C, t(s)))
                            .and_then(|a| {
                                fs.open(a.ino)?;
                                inos[k] = a.ino;
                                Ok(())
                            })
                    }
                    _ => fs.gc_background(t(s)).map(|_| ()),
                };
                match r {
                    Ok(()) | Err(Error::NoSpace) | Err(Error::Invalid(_)) => {}
                    Err(e) => panic!("writer: {e:?}"),
                }
            }
        }));
    }
    {
        let stop = stop.clone();
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = flusher.wait_and_flush();
                std::thread::sleep(Duration::from_micros(200));
            }
        }));
    }
    for r in 0..2u64 {
        let (fs, stop, reader, accepted, refused) =
            (fs.clone(), stop.clone(), reader.clone(), accepted.clone(), refused.clone());
        threads.push(std::thread::spawn(move || {
            let mut rng = Rng(0xdead_beef_0000_0001 + r);
            let (mut buf, mut expect) = (vec![0u8; 64 * B], vec![0u8; 64 * B]);
            while !stop.load(Ordering::Relaxed) {
                let len = (1 + rng.below(64) as usize) * B;
                let off = rng.below(200) * B as u64;
                let (plan, fence, n) = {
                    let mut g = fs.lock().unwrap();
                    let (fs, inos) = &mut *g;
                    let ino = inos[rng.below(inos.len() as u64) as usize];
                    let fence = reader.fence();
                    let n = fs.read(ino, off, &mut expect[..len]).unwrap();
                    buf[..len].fill(0xee);
                    let plan = fs.read_planned(ino, off, &mut buf[..len]).unwrap();
                    assert_eq!(plan.len, n);
                    (plan, fence, n)
                };
                if rng.below(2) == 0 {
                    std::thread::sleep(Duration::from_micros(rng.below(20_000)));
                }
                if reader.complete(&plan, fence, &mut buf[..len]) {
                    accepted.fetch_add(1, Ordering::Relaxed);
                    if buf[..n] != expect[..n] {
                        let at = (0..n).find(|&i| buf[i] != expect[i]).unwrap();
                        panic!("accepted an unlocked read that differs from read at plan time, at byte {at} of {n} (off {off})");
                    }
                } else {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(seconds) && !threads.iter().any(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    for h in threads {
        h.join().unwrap();
    }
    let (a, r) = (accepted.load(Ordering::Relaxed), refused.load(Ordering::Relaxed));
    eprintln!("checksums {data_checksums}: {a} unlocked reads accepted, {r} refused (read again under the lock)");
    assert!(a > 0 && r > 0, "both outcomes must occur: {a} accepted, {r} refused");
}

#[test]
fn unlocked_reads_under_concurrency_without_datasum() {
    run(false, 8);
}

#[test]
fn unlocked_reads_under_concurrency_with_datasum() {
    run(true, 5);
}
