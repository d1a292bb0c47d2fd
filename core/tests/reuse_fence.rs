//! The reuse fence of reads planned under the lock and completed outside it (issue 14; from
//! an adversarial review of that read path): random workloads on a small, nearly full
//! device (writes, fsync, sync, truncate, punch and zero range, unlink and recreate, atomic
//! start/commit/abort, background cleaning), with up to 24 read plans outstanding at once.
//!
//! - `planned_reads_stay_true_until_a_fence_in_random_workloads_nearly_full`: every
//!   `read_planned` + completion equals `read`; no planned block is written or discarded
//!   without a `reuse_fence` since its plan; and every plan whose fence has not moved still
//!   completes, later, to exactly the bytes `read` gave when it was made. Fails with the
//!   core's `reuse_fence()` call removed, and under `mutant-ssr-reuse-before-cp` and
//!   `mutant-reuse-before-cp`.

mod common;
use common::probe::{complete, Probe, Rng, Watch};
use rollfs_core::ReadPlan;
use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };
const B: usize = BLOCK_SIZE;

struct Outstanding {
    plan: ReadPlan,
    fence: u64,
    expect: Vec<u8>,
    what: String,
}

fn run_seed(seed: u64, data_checksums: bool) -> (u64, Stats, u64) {
    let mut rng = Rng(seed.wrapping_mul(0x9e3779b97f4a7c15) | 1);
    let opts = MkfsOptions { segment_blocks: 16, uuid: [7; 16], data_checksums, ..Default::default() };
    let img = Filesystem::format(MemDevice::new(2048), &opts).unwrap();
    let dev = Probe::new(img);
    let mut plans: Vec<Outstanding> = Vec::new();
    let mut sec = 1_700_000_000i64;
    let mopts = MountOptions { dirty_bytes_max: 256 * B as u64, ..MountOptions::default() };
    let mut fs = Filesystem::mount(dev, &mopts, Timestamp::new(sec, 0)).unwrap();
    let mut files: Vec<(Vec<u8>, Ino)> = Vec::new();
    for i in 0..8 {
        let name = format!("f{i}").into_bytes();
        let ino = fs.create(1, &name, 0o644, C, Timestamp::new(sec, 0)).unwrap().ino;
        fs.open(ino).unwrap();
        files.push((name, ino));
    }
    let mut checked = 0u64;
    for step in 0..6000u64 {
        sec += 1;
        let t = Timestamp::new(sec, 0);
        if fs.is_read_only() {
            break;
        }
        let (name, ino) = files[rng.below(files.len() as u64) as usize].clone();
        if ino == 0 {
            // Unlinked, and its re-creation failed for room (staged atomic writes take
            // space): try again.
            if let Ok(a) = fs.create(1, &name, 0o644, C, t).and_then(|a| fs.open(a.ino).map(|_| a)) {
                files.iter_mut().filter(|f| f.0 == name).for_each(|f| f.1 = a.ino);
            }
            continue;
        }
        let op = rng.below(100);
        let r: Result<()> = match op {
            0..=34 => {
                let off = rng.below(240 * B as u64);
                let len = 1 + rng.below(48 * B as u64) as usize;
                fs.write(ino, off, &vec![(step % 251) as u8; len], t).map(|_| ())
            }
            35..=44 => fs.fsync(ino, rng.below(2) == 0, t),
            45..=47 => fs.sync(t),
            48..=51 => {
                let sz = rng.below(240 * B as u64);
                fs.setattr(ino, &SetAttr { size: Some(sz), ..Default::default() }, t).map(|_| ())
            }
            52..=54 => fs.punch_hole(ino, rng.below(240 * B as u64), 1 + rng.below(32 * B as u64), t),
            55..=56 => fs.zero_range(ino, rng.below(240 * B as u64), 1 + rng.below(32 * B as u64), true, t),
            57..=59 => {
                let r = fs.unlink(1, &name, t).and_then(|_| fs.release(ino, t));
                if r.is_ok() {
                    // Gone: re-created below, or later if that fails.
                    files.iter_mut().filter(|f| f.0 == name).for_each(|f| f.1 = 0);
                }
                let r = r.and_then(|_| fs.create(1, &name, 0o644, C, t)).and_then(|a| {
                    fs.open(a.ino)?;
                    Ok(a.ino)
                });
                match r {
                    Ok(n) => {
                        for f in files.iter_mut() {
                            if f.0 == name {
                                f.1 = n;
                            }
                        }
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            60..=64 => {
                let _ = fs.start_atomic_write(ino).and_then(|_| {
                    for _ in 0..1 + rng.below(4) {
                        let off = rng.below(100 * B as u64);
                        fs.write(ino, off, &vec![0xaa; 1 + rng.below(8 * B as u64) as usize], t)?;
                    }
                    Ok(())
                });
                Ok(())
            }
            65..=67 => {
                if fs.in_atomic_write(ino) {
                    if rng.below(3) == 0 {
                        fs.abort_atomic_write(ino)
                    } else {
                        fs.commit_atomic_write(ino, t)
                    }
                } else {
                    Ok(())
                }
            }
            68..=70 => fs.gc_background(t).map(|_| ()),
            _ => {
                let off = if rng.below(2) == 0 { rng.below(240) * B as u64 } else { rng.below(240 * B as u64) };
                let len = 1 + rng.below(64 * B as u64) as usize;
                let mut expect = vec![0u8; len];
                let n = fs
                    .read(ino, off, &mut expect)
                    .unwrap_or_else(|e| panic!("seed {seed} step {step}: read failed: {e:?}"));
                expect.truncate(n);
                let mut got = vec![0x5au8; len];
                let plan = fs.read_planned(ino, off, &mut got).unwrap();
                assert_eq!(plan.len, n, "seed {seed} step {step}: planned length");
                let fence = fs.device().fences;
                assert!(complete(fs.device_mut(), &plan, &mut got), "seed {seed} step {step}: verify");
                assert_eq!(&got[..n], &expect[..], "seed {seed} step {step}: plan+complete != read");
                let what = format!("seed {seed} step {step} ino {ino} off {off} len {len}");
                let dev = fs.device_mut();
                dev.watches.push(Watch::of(&plan, fence, what.clone()));
                plans.push(Outstanding { plan, fence, expect, what });
                if plans.len() > 24 {
                    plans.remove(0);
                    dev.watches.remove(0);
                }
                Ok(())
            }
        };
        match r {
            Ok(()) | Err(Error::NoSpace) | Err(Error::Invalid(_)) => {}
            Err(e) => panic!("seed {seed} step {step} op {op}: {e:?}"),
        }
        let dev = fs.device_mut();
        let fences = dev.fences;
        for p in &plans {
            if p.fence == fences {
                let mut buf = vec![0u8; p.plan.len.max(1)];
                buf[..p.plan.len].copy_from_slice(&p.expect);
                assert!(complete(dev, &p.plan, &mut buf), "{}: late verify failed with the fence unchanged", p.what);
                assert_eq!(&buf[..p.plan.len], &p.expect[..], "{}: late bytes differ, fence unchanged", p.what);
                checked += 1;
            }
        }
        assert!(dev.violations.is_empty(), "{:?}", &dev.violations[..dev.violations.len().min(5)]);
    }
    let reused = fs.device().reused_after_fence;
    (checked, fs.stats(), reused)
}

#[test]
fn planned_reads_stay_true_until_a_fence_in_random_workloads_nearly_full() {
    let (mut checked, mut ssr, mut gc, mut reused) = (0, 0, 0, 0);
    for seed in 1..=12u64 {
        let (c, st, r) = run_seed(seed, seed % 3 != 0);
        checked += c;
        ssr += st.ssr_blocks;
        gc += st.gc_blocks_moved;
        reused += r;
    }
    eprintln!("late completions {checked}, ssr {ssr}, gc moved {gc}, reused after fence {reused}");
    assert!(ssr > 0 && gc > 0 && reused > 0, "workload must exercise SSR, cleaning and reuse");
    assert!(checked > 1000, "too few late completions ({checked})");
}
