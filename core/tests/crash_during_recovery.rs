//! Power cuts during recovery: a cut at every write of the recovery mount of a chain written
//! by SSR, cleaning and overwrites, of one that links names, grows directories and adds
//! xattrs, and of sparse files; every image then recovers what was fsync'd.
//!
//! From the adversarial review of issue 13's first fix (fd77b54), whose other tests are in
//! failure_atomicity.rs, full_device.rs, recovery_reserve.rs and fsync_below_renamed_dir.rs:
//! these sweeps passed on fd77b54.

mod common;

use common::limits::*;
use common::CrashDevice;
use rollfs_core::*;

// ---- recovery: crash during the recovery of a chain with SSR, cleaning and overwrites ----

/// Random overwrites, truncations and fsyncs on a nearly full device with SSR and cleaning
/// in play, no checkpoint after the last sync; then a power cut at every write of the
/// recovery mount. `pin_and_advance` must keep every block the next recovery needs.
#[test]
fn crash_during_recovery_of_a_chain_written_by_ssr_and_cleaning_recovers() {
    for &(seed, leave, ops) in &[
        (1u64, 40u64, 150usize),
        (2, 80, 200),
        (3, 20, 120),
        (4, 160, 300),
        (5, 300, 400),
        (6, 0, 200),
        (7, 500, 600),
        (8, 120, 250),
    ] {
        let opts = MountOptions { dirty_bytes_max: 1 << 40, clean_cache_bytes_max: 1 << 40, ..MountOptions::default() };
        let mut fs = Filesystem::mount(CrashDevice::new(mkfs(BLOCKS)), &opts, t(0)).unwrap();
        let nfiles = 40usize;
        let mut files = Vec::new();
        let mut model: Vec<Vec<u8>> = Vec::new();
        for i in 0..nfiles {
            let f = fs.create(1, format!("f{i}").as_bytes(), 0o644, C, t(1)).unwrap().ino;
            let d = pattern(i as u32, 8 * B);
            fs.write(f, 0, &d, t(1)).unwrap();
            files.push(f);
            model.push(d);
        }
        // Half-valid segments: two fillers written 8 blocks each per checkpoint, then one
        // deleted; then the rest filled, so that new writes need SSR or cleaning.
        let fa = fs.create(1, b"fa", 0o644, C, t(2)).unwrap().ino;
        let fb = fs.create(1, b"fb", 0o644, C, t(2)).unwrap().ino;
        let mut off = 0u64;
        loop {
            let free = fs.statfs().unwrap().blocks_free;
            if free < 600 {
                break;
            }
            fs.write(fa, off, &vec![0xA1; 8 * B], t(2)).unwrap();
            fs.write(fb, off, &vec![0xB1; 8 * B], t(2)).unwrap();
            fs.sync(t(2)).unwrap();
            off += 8 * B as u64;
        }
        fs.unlink(1, b"fb", t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        fill(&mut fs, 1, "filler", leave, t(2));
        fs.sync(t(3)).unwrap();
        let mut durable = model.clone();
        let mut rng = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut next = || {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 33) as usize
        };
        let mut last_cp = fs.stats().checkpoints;
        let s0 = fs.stats();
        let mut since_cp = 0;
        for op in 0..ops {
            let i = next() % nfiles;
            let f = files[i];
            let before = model.clone();
            let cps0 = fs.stats().checkpoints;
            match next() % 8 {
                0 => {
                    let sz = (next() % (8 * B)) as u64;
                    match fs.setattr(f, &SetAttr { size: Some(sz), ..Default::default() }, t(4)) {
                        Ok(_) => model[i].resize(sz as usize, 0),
                        Err(e) => eprintln!("op {op}: truncate /f{i} to {sz}: {e}"),
                    }
                }
                _ => {
                    let blk = next() % 10;
                    let d = pattern((op * 7 + i) as u32, B);
                    let r = fs.write(f, (blk * B) as u64, &d, t(4));
                    if let Err(e) = &r {
                        eprintln!("op {op}: write /f{i} block {blk}: {e}");
                    }
                    if r.is_ok() {
                        let end = (blk + 1) * B;
                        if model[i].len() < end {
                            model[i].resize(end, 0);
                        }
                        model[i][blk * B..end].copy_from_slice(&d);
                    }
                }
            }
            if fs.stats().checkpoints != cps0 {
                // A checkpoint inside the operation (before it changed anything).
                durable = before;
                last_cp = fs.stats().checkpoints;
            }
            if next() % 2 == 0 {
                match fs.fsync(f, false, t(4)) {
                    Ok(()) => durable[i] = model[i].clone(),
                    Err(e) => panic!("fsync: {e}"),
                }
            }
            let cps = fs.stats().checkpoints;
            if cps != last_cp {
                last_cp = cps;
                since_cp = 0;
                // A checkpoint made everything durable.
                durable = model.clone();
            } else {
                since_cp += 1;
            }
        }
        for (i, want) in model.iter().enumerate() {
            let got = read_all(&mut fs, files[i]);
            assert!(got == *want, "seed={seed}: running /f{i} differs from the model");
        }
        let s = fs.stats();
        eprintln!(
            "seed={seed} leave={leave}: {since_cp} ops since the last checkpoint; ssr_blocks={} gc_moved={} fallbacks={} cps={}",
            s.ssr_blocks - s0.ssr_blocks, s.gc_blocks_moved - s0.gc_blocks_moved, s.recovery_reserve_fallbacks, s.checkpoints - s0.checkpoints
        );
        let img = fs.into_device().crash(|_| true);
        let durable2 = durable.clone();
        let cuts = every_cut_of_mount_recovers(&img, &opts, &|fs| {
            for (i, want) in durable2.iter().enumerate() {
                let ino = lookup_path(fs, &format!("/f{i}")).unwrap();
                let got = read_all(fs, ino);
                assert!(
                    got == *want,
                    "seed={seed}: /f{i} differs from its last fsync ({} vs {} bytes)",
                    got.len(),
                    want.len()
                );
            }
        });
        eprintln!("seed={seed}: {cuts} cut points");
    }
}

// ---- crash during a recovery that links names, grows directories and adds xattrs ----------

/// New files fsync'd into directories that exist at the checkpoint (one of them large, so
/// that recovery's inserts grow it), some with a first xattr and a block deep in the
/// double-indirect tree; then a power cut at every write of the recovery mount.
#[test]
fn crash_during_recovery_that_links_names_and_grows_directories_recovers() {
    for &(leave, nfiles) in &[(2000u64, 40usize), (700, 60), (400, 30)] {
        let mut fs = mount(mkfs(BLOCKS));
        let big = fs.mkdir(1, b"big", 0o755, C, t(1)).unwrap().ino;
        for i in 0..300 {
            let a = fs.create(big, format!("old-entry-with-a-long-name-{i:04}").as_bytes(), 0o644, C, t(1)).unwrap();
            let _ = a;
        }
        let mut dirs = vec![big];
        for i in 0..8 {
            dirs.push(fs.mkdir(1, format!("d{i}").as_bytes(), 0o755, C, t(1)).unwrap().ino);
        }
        fill(&mut fs, 1, "filler", leave, t(2));
        fs.sync(t(3)).unwrap();
        let deep = rollfs_core::layout::ADDRS_PER_INODE as u64
            + 2 * rollfs_core::layout::ADDRS_PER_BLOCK as u64
            + 2 * (rollfs_core::layout::ADDRS_PER_BLOCK as u64).pow(2)
            + 5;
        let mut expect: Vec<(String, u64, Vec<u8>, bool)> = Vec::new();
        for i in 0..nfiles {
            let di = i % dirs.len();
            let dname = if di == 0 { "big".to_string() } else { format!("d{}", di - 1) };
            let name = format!("new-file-with-a-long-name-{i:04}");
            let f = match fs.create(dirs[di], name.as_bytes(), 0o644, C, t(4)) {
                Ok(a) => a.ino,
                Err(Error::NoSpace) => break,
                Err(e) => panic!("{e}"),
            };
            let x = i % 3 == 0;
            if x && fs.setxattr(f, b"user.k", b"v", XattrSetMode::Any, t(4)).is_err() {
                break;
            }
            let blk = if i % 4 == 1 { deep } else { 0 };
            let data = pattern(i as u32 + 50, B);
            if fs.write(f, blk * B as u64, &data, t(4)).is_err() {
                break;
            }
            match fs.fsync(f, false, t(4)) {
                Ok(()) => expect.push((format!("/{dname}/{name}"), blk, data, x)),
                Err(Error::NoSpace) => break,
                Err(e) => panic!("{e}"),
            }
        }
        let s = fs.stats();
        eprintln!(
            "leave={leave}: {} fsyncs, {} fallbacks, {} checkpoints",
            expect.len(),
            s.fsync_checkpoint_fallbacks,
            s.checkpoints
        );
        let img = fs.into_device().crash(|_| true);
        let opts = big_cache();
        let cuts = every_cut_of_mount_recovers(&img, &opts, &|fs| {
            for (path, blk, data, x) in &expect {
                let ino = lookup_path(fs, path).unwrap_or_else(|| panic!("{path} lost"));
                let mut buf = vec![0u8; B];
                fs.read(ino, blk * B as u64, &mut buf).unwrap();
                assert!(buf == *data, "{path}: data lost");
                if *x {
                    assert_eq!(fs.getxattr(ino, b"user.k").unwrap(), b"v", "{path}: xattr lost");
                }
            }
        });
        eprintln!("leave={leave}: {cuts} cut points");
    }
}

/// A power cut at every write of the recovery of a sparse fsync (new direct nodes below an
/// indirect node of the checkpoint, recreated under new node ids by roll-forward) and of a
/// second sparse file created since the checkpoint.
#[test]
fn crash_during_recovery_of_sparse_files_recovers() {
    let a = rollfs_core::layout::ADDRS_PER_INODE as u64;
    let p = rollfs_core::layout::ADDRS_PER_BLOCK as u64;
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"old", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, (a + 2 * p) * B as u64, &pattern(1, B), t(1)).unwrap();
    fill(&mut fs, 1, "filler", 900, t(2));
    fs.sync(t(3)).unwrap();
    let g = fs.create(1, b"new", 0o644, C, t(4)).unwrap().ino;
    let mut expect = Vec::new();
    for j in 0..40u64 {
        let idx = a + 2 * p + j * p + (j % 7);
        let d = pattern(100 + j as u32, B);
        fs.write(f, idx * B as u64, &d, t(4)).unwrap();
        expect.push(("/old", idx, d));
        let idx2 = a + 2 * p + 2 * p * p + j * p * 3;
        let d2 = pattern(200 + j as u32, B);
        fs.write(g, idx2 * B as u64, &d2, t(4)).unwrap();
        expect.push(("/new", idx2, d2));
        if j % 10 == 9 {
            fs.fsync(f, false, t(4)).unwrap();
            fs.fsync(g, false, t(4)).unwrap();
        }
    }
    // The mount's checkpoint (its version jump) and the sync's.
    let cps_after_sync = 2;
    assert_eq!(fs.stats().checkpoints, cps_after_sync, "no checkpoint after the sync");
    let img = fs.into_device().crash(|_| true);
    let cuts = every_cut_of_mount_recovers(&img, &big_cache(), &|fs| {
        for (path, idx, d) in &expect {
            let ino = lookup_path(fs, path).unwrap_or_else(|| panic!("{path} lost"));
            let mut buf = vec![0u8; B];
            fs.read(ino, idx * B as u64, &mut buf).unwrap();
            assert!(buf == *d, "{path} block {idx} lost");
        }
    });
    eprintln!("{cuts} cut points");
}
