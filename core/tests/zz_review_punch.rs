//! Scratch review tests (to be deleted).
mod common;

use common::limits::*;
use rollfs_core::*;

const A: u64 = 914;
const P: u64 = 1016;

fn blk(seed: u32) -> Vec<u8> {
    pattern(seed, B)
}

/// Sparse file with blocks around every tree boundary; punch many ranges; compare with a model.
#[test]
fn zz_deep_punch_matches_model() {
    let bounds = [
        0,
        1,
        A - 1,
        A,
        A + 1,
        A + P - 1,
        A + P,
        A + P + 1,
        A + 2 * P - 1,
        A + 2 * P,
        A + 2 * P + 1,
        A + 2 * P + P - 1,
        A + 2 * P + P,
        A + 2 * P + 5 * P + 3,
        A + 2 * P + P * P - 1,
        A + 2 * P + P * P,
        A + 2 * P + 2 * P * P - 1,
        A + 2 * P + 2 * P * P,
        A + 2 * P + 2 * P * P + 1,
        A + 2 * P + 2 * P * P + P - 1,
        A + 2 * P + 2 * P * P + P,
        A + 2 * P + 2 * P * P + P * P - 1,
        A + 2 * P + 2 * P * P + P * P,
        A + 2 * P + 2 * P * P + P * P + 7,
    ];
    // punch ranges in blocks: (from, to) with optional byte offsets
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for (i, &a) in bounds.iter().enumerate() {
        for &b in &bounds[i..] {
            ranges.push((a, b + 1));
        }
    }
    let mut case = 0;
    for (pi, &(f0, t0)) in ranges.iter().enumerate() {
        if pi % 7 != 0 && pi % 11 != 3 {
            continue;
        }
        for &(db, de) in &[(0i64, 0i64), (100, -100)] {
            case += 1;
            let mut fs = mount(mkfs(BLOCKS));
            let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
            let mut model: std::collections::BTreeMap<u64, Vec<u8>> = Default::default();
            for (i, &b) in bounds.iter().enumerate() {
                let d = blk(i as u32 + 1);
                fs.write(f, b * B as u64, &d, t(1)).unwrap();
                model.insert(b, d);
            }
            let size = fs.getattr(f).unwrap().size;
            if case % 2 == 0 {
                fs.sync(t(2)).unwrap();
            }
            let off = (f0 * B as u64) as i64 + db;
            let end = (t0 * B as u64) as i64 + de;
            let off = off.max(0) as u64;
            let end = end.max(off as i64) as u64;
            fs.punch_hole(f, off, end - off, t(3)).unwrap();
            for (&b, d) in model.iter_mut() {
                let s = b * B as u64;
                let lo = off.max(s);
                let hi = end.min(s + B as u64);
                if lo < hi {
                    d[(lo - s) as usize..(hi - s) as usize].fill(0);
                }
            }
            let check = |fs: &mut Filesystem<_>, what: &str| {
                assert_eq!(fs.getattr(f).unwrap().size, size);
                for (&b, d) in &model {
                    let mut buf = vec![0u8; B];
                    fs.read(f, b * B as u64, &mut buf).unwrap();
                    assert!(buf == *d, "{what}: block {b} wrong after punch {off}..{end}");
                }
            };
            check(&mut fs, "live");
            // write into the punched area again, to exercise nodes after freeing
            let mid = (f0 + t0) / 2;
            let d = blk(999);
            fs.write(f, mid * B as u64, &d, t(4)).unwrap();
            let mut m2 = model.clone();
            m2.insert(mid, d.clone());
            fs.fsync(f, false, t(5)).unwrap();
            let img = fs.into_device().crash(|_| true);
            let mut dev = img.clone();
            let rep = fsck::check(&mut dev).unwrap();
            assert!(rep.is_clean(), "fsck after punch {f0}..{t0} ({db},{de}): {:?}", rep.problems);
            let mut fs = Filesystem::mount(img, &big_cache(), t(6)).unwrap();
            for (&b, d) in &m2 {
                let mut buf = vec![0u8; B];
                fs.read(f, b * B as u64, &mut buf).unwrap();
                assert!(buf == *d, "after crash: block {b} wrong after punch {off}..{end}");
            }
            let mut dev = fs.unmount(t(7)).unwrap();
            let rep = fsck::check(&mut dev).unwrap();
            assert!(rep.is_clean(), "fsck2 {f0}..{t0}: {:?}", rep.problems);
        }
    }
    eprintln!("{case} cases");
}

/// ZERO_RANGE past EOF (which only grows the size) on a full device: never read-only.
#[test]
fn zz_zero_range_extend_full_device() {
    let mut fs = mount(mkfs(BLOCKS));
    let d = fs.mkdir(1, b"many", 0o755, C, t(1)).unwrap().ino;
    let mut files = Vec::new();
    for i in 0..1200 {
        match fs.create(d, format!("e{i}").as_bytes(), 0o644, C, t(1)) {
            Ok(a) => files.push(a.ino),
            Err(Error::NoSpace) => break,
            Err(e) => panic!("create: {e}"),
        }
    }
    fill(&mut fs, 1, "filler", 0, t(2));
    fs.sync(t(3)).unwrap();
    let mut refused = 0;
    for (i, &f) in files.iter().enumerate() {
        let r = if std::env::var("ZZ_SETATTR").is_ok() {
            fs.setattr(f, &SetAttr { size: Some(10), ..Default::default() }, t(10)).map(|_| ())
        } else {
            fs.zero_range(f, 0, 10, false, t(10))
        };
        match r {
            Ok(()) => {}
            Err(Error::NoSpace) => refused += 1,
            Err(e) => panic!("zero_range {i}: {e} (read-only {})", fs.is_read_only()),
        }
        assert!(!fs.is_read_only(), "zero_range {i} turned the filesystem read-only");
    }
    eprintln!("{} files, {refused} refused", files.len());
    let r = fs.sync(t(21));
    eprintln!("sync: {r:?}, read_only {} shut_down {}", fs.is_read_only(), fs.is_shut_down());
    eprintln!("then write: {:?}", fs.write(files[0], 0, b"x", t(22)));
    r.unwrap_or_else(|e| panic!("sync after zero_range extends: {e}"));
    assert!(!fs.is_read_only());
}

/// fsync'd state of the file, then punch, then another file's fsync, crash: file is the fsync'd state.
#[test]
fn zz_punch_after_fsync_chain() {
    for variant in 0..4 {
        let mut fs = mount(mkfs(BLOCKS));
        let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
        let g = fs.create(1, b"g", 0o644, C, t(1)).unwrap().ino;
        let data = pattern(3, 1200 * B);
        fs.write(f, 0, &data, t(1)).unwrap();
        fs.sync(t(2)).unwrap();
        let mut v = data.clone();
        let d2 = pattern(4, 3 * B);
        fs.write(f, 950 * B as u64, &d2, t(3)).unwrap();
        v[950 * B..953 * B].copy_from_slice(&d2);
        fs.fsync(f, false, t(3)).unwrap();
        let fsynced = v.clone();
        fs.punch_hole(f, 900 * B as u64 + 5, 60 * B as u64, t(4)).unwrap();
        v[900 * B + 5..960 * B + 5].fill(0);
        if variant >= 2 {
            // write after punch then fdatasync
            let d3 = pattern(5, 10);
            fs.write(f, 920 * B as u64, &d3, t(5)).unwrap();
            v[920 * B..920 * B + 10].copy_from_slice(&d3);
            fs.fsync(f, variant == 3, t(5)).unwrap();
        }
        fs.write(g, 0, b"x", t(6)).unwrap();
        fs.fsync(g, false, t(6)).unwrap();
        let img = fs.into_device().crash(|_| true);
        let mut dev = img.clone();
        assert!(fsck::check(&mut dev).unwrap().is_clean());
        let mut fs = Filesystem::mount(img, &big_cache(), t(7)).unwrap();
        let got = read_all(&mut fs, f);
        let want = if variant >= 2 { &v } else { &fsynced };
        assert!(got == *want, "variant {variant}: wrong contents after crash");
    }
}
