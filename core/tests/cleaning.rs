//! Segment cleaning: a filesystem that runs full keeps working. Long overwrite workloads
//! on nearly full images run to completion without unexpected ENOSPC, with every byte
//! verified and fsck clean; cleaning under fsync survives a crash.

mod common;
use common::CrashDevice;
use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };

fn t(s: u64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s as i64, 0)
}

/// A tiny deterministic PRNG (SplitMix64): tests must not depend on the platform.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn pattern(file: usize, block: u64, gen: u32) -> [u8; 4096] {
    let mut b = [0u8; 4096];
    for (i, chunk) in b.chunks_mut(16).enumerate() {
        chunk[..8].copy_from_slice(&(block * 1000 + i as u64).to_le_bytes());
        chunk[8..12].copy_from_slice(&(file as u32).to_le_bytes());
        chunk[12..16].copy_from_slice(&gen.to_le_bytes());
    }
    b
}

/// Fills `util` of the user capacity with files, then overwrites random blocks for
/// `rounds` times the device size, fsyncing every 64 writes. Returns the stats.
fn overwrite_workload(util_pct: u64, rounds: u64, seed: u64, ssr: bool) -> Stats {
    let blocks = 8192u64; // 32 MiB
    let opts = MkfsOptions { segment_blocks: 64, overprovision_pct: 5, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(blocks), &opts).unwrap();
    let mount = MountOptions { dirty_bytes_max: 1 << 20, ssr, ..Default::default() };
    let mut fs = Filesystem::mount(dev, &mount, t(0)).unwrap();
    let cap = fs.statfs().unwrap().blocks;
    let file_blocks = 64u64;
    let nfiles = (cap * util_pct / 100 / (file_blocks + 1)) as usize;
    let mut inos = Vec::new();
    let mut gens = vec![vec![0u32; file_blocks as usize]; nfiles];
    for f in 0..nfiles {
        let ino = fs.create(1, format!("f{f}").as_bytes(), 0o644, C, t(1)).unwrap().ino;
        for b in 0..file_blocks {
            fs.write(ino, b * 4096, &pattern(f, b, 0), t(1)).unwrap();
        }
        inos.push(ino);
    }
    fs.sync(t(2)).unwrap();
    let mut rng = Rng(seed);
    let total = blocks * rounds;
    for i in 0..total {
        let f = (rng.next() % nfiles as u64) as usize;
        let b = rng.next() % file_blocks;
        gens[f][b as usize] += 1;
        let now = t(3 + i / 100);
        fs.write(inos[f], b * 4096, &pattern(f, b, gens[f][b as usize]), now)
            .unwrap_or_else(|e| panic!("write {i} at {util_pct}%: {e} ({:?})", fs.stats()));
        if i % 64 == 63 {
            fs.fsync(inos[f], false, now).unwrap();
        }
    }
    let stats = fs.stats();
    let mut dev = fs.unmount(t(1_000_000)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    let mut fs = Filesystem::mount(dev, &mount, t(1_000_001)).unwrap();
    let mut buf = vec![0u8; 4096];
    for (f, &ino) in inos.iter().enumerate() {
        for b in 0..file_blocks {
            fs.read(ino, b * 4096, &mut buf).unwrap();
            assert!(buf[..] == pattern(f, b, gens[f][b as usize])[..], "file {f} block {b} wrong after cleaning");
        }
    }
    stats
}

#[test]
fn overwrite_at_80_percent_runs_to_completion() {
    let s = overwrite_workload(80, 3, 1, false);
    assert!(s.gc_segments > 0, "cleaning never ran: {s:?}");
    assert_eq!(s.gc_blocks_left_valid, 0, "cleaning left moved blocks valid in its victims");
}

#[test]
fn overwrite_at_95_percent_runs_to_completion() {
    let s = overwrite_workload(95, 2, 2, false);
    assert!(s.gc_segments > 0, "cleaning never ran: {s:?}");
    assert_eq!(s.gc_blocks_left_valid, 0, "cleaning left moved blocks valid in its victims");
}

#[test]
fn overwrite_at_95_percent_with_slack_space_recycling() {
    let s = overwrite_workload(95, 2, 3, true);
    assert!(s.ssr_blocks > 0, "SSR never ran: {s:?}");
    assert_eq!(s.gc_blocks_left_valid, 0, "cleaning left moved blocks valid in its victims (SSR)");
}

#[test]
fn full_filesystem_gives_enospc_then_recovers_space() {
    let opts = MkfsOptions { segment_blocks: 16, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(4096), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap();
    let f = fs.create(1, b"big", 0o644, C, t(1)).unwrap().ino;
    let mut off = 0u64;
    loop {
        match fs.write(f, off, &[7u8; 4096], t(1)) {
            Ok(_) => off += 4096,
            Err(Error::NoSpace) => break,
            Err(e) => panic!("{e}"),
        }
        assert!(off < 64 << 20);
    }
    let st = fs.statfs().unwrap();
    assert!(st.blocks_free < 8, "{st:?}");
    // Overwriting in place still works when full (cleaning makes room).
    for i in 0..2000u64 {
        if let Err(e) = fs.write(f, (i * 7 % (off / 4096)) * 4096, &[9u8; 4096], t(2)) {
            panic!("overwrite {i} of a full filesystem: {e}; {:?} {:?}", fs.statfs(), fs.stats());
        }
    }
    // Freeing space makes it usable again.
    fs.setattr(f, &SetAttr { size: Some(off / 2), ..Default::default() }, t(3)).unwrap();
    let g = fs.create(1, b"more", 0o644, C, t(4)).unwrap().ino;
    fs.write(g, 0, &vec![1u8; (off / 4) as usize], t(4)).unwrap();
    let mut dev = fs.unmount(t(5)).unwrap();
    assert!(fsck::check(&mut dev).unwrap().is_clean());
}

#[test]
fn cleaning_under_fsync_survives_a_crash() {
    let s = overwrite_under_fsync_with_crashes(false);
    assert!(s.gc_segments > 0, "cleaning never ran: {s:?}");
}

#[test]
fn slack_space_recycling_under_fsync_survives_a_crash() {
    let s = overwrite_under_fsync_with_crashes(true);
    assert!(s.ssr_blocks > 0, "SSR never ran: {s:?}");
}

/// Random overwrites of an 85%-full file, each fsync'd, with a crash (durable writes only)
/// every 97 steps: each crash image mounts, fscks clean and has every fsync'd block.
fn overwrite_under_fsync_with_crashes(ssr: bool) -> Stats {
    let opts = MkfsOptions { segment_blocks: 16, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(4096), &opts).unwrap();
    let mount = MountOptions { dirty_bytes_max: 256 << 10, ssr, ..Default::default() };
    let mut fs = Filesystem::mount(CrashDevice::new(dev), &mount, t(0)).unwrap();
    let cap = fs.statfs().unwrap().blocks;
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    let n = cap * 85 / 100;
    for b in 0..n {
        fs.write(f, b * 4096, &pattern(0, b, 0), t(1)).unwrap();
    }
    fs.sync(t(1)).unwrap();
    let mut gens = vec![0u32; n as usize];
    let mut rng = Rng(9);
    for i in 0..(3 * n) {
        let b = rng.next() % n;
        gens[b as usize] += 1;
        fs.write(f, b * 4096, &pattern(0, b, gens[b as usize]), t(2 + i)).unwrap();
        fs.fsync(f, true, t(2 + i)).unwrap();
        if i % 97 == 0 {
            // Crash here: everything fsync'd must be there.
            let img = fs.device().crash_durable_only();
            let cfs = Filesystem::mount(img, &mount, t(9)).unwrap();
            let mut dev = cfs.unmount(t(10)).unwrap();
            let r = fsck::check(&mut dev).unwrap();
            assert!(r.is_clean(), "{:?}", r.problems);
            let mut cfs = Filesystem::mount(dev, &mount, t(11)).unwrap();
            let mut buf = [0u8; 4096];
            for bb in 0..n {
                cfs.read(f, bb * 4096, &mut buf).unwrap();
                assert!(buf == pattern(0, bb, gens[bb as usize]), "block {bb} lost at step {i}");
            }
        }
    }
    fs.stats()
}
