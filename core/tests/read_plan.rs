//! Reads in runs and reads planned for a driver that reads the device outside its lock
//! (issue 14's read path).
//!
//! - `planned_read_equals_read_at_every_offset`: `read_planned` + reading its runs gives
//!   exactly what `read` gives, for reads at block and byte offsets over a file mixing
//!   device blocks (adjacent and not), cached dirty blocks, holes, a partial last block and
//!   blocks staged by an atomic write; and `read` itself issues one device request per
//!   run of adjacent blocks; the holes it lists are whole zero blocks apart from the runs.
//! - `a_planned_block_that_fails_its_checksum_fails_verify_and_read_reports_it`.
//! - `no_planned_block_is_written_or_discarded_before_a_reuse_fence`: the invariant the
//!   driver's unlocked read rests on. A device wrapper watches the blocks of a plan and
//!   records any write or discard of them that no `reuse_fence` preceded, while the file
//!   is overwritten, checkpointed and the device filled until the blocks are reused.
//! - `the_fence_checker_reports_a_reuse_without_fence`: the wrapper catches the bug.
//! - `reads_across_node_boundaries_and_missing_nodes_match_the_model`: reads (plain,
//!   planned and `plan_read`, which leaves holes unwritten) of a sparse file whose blocks
//!   sit in the inode's first and last slots, a direct node's first and last slots, after
//!   direct nodes that do not exist and in a double-indirect subtree, some cached and some
//!   on the device, give the model's bytes at offsets around every node boundary.

mod common;
use common::images::content;
use common::probe::{complete, Probe, Watch};
use rollfs_core::*;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 0, gid: 0 };
const B: usize = BLOCK_SIZE;

fn mkfs(blocks: u64) -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [9; 16], ..Default::default() };
    Filesystem::format(MemDevice::new(blocks), &opts).unwrap()
}

#[test]
fn planned_read_equals_read_at_every_offset() {
    let mut fs = Filesystem::mount(Probe::new(mkfs(8192)), &MountOptions::default(), T).unwrap();
    let ino = fs.create(1, b"f", 0o644, C, T).unwrap().ino;
    // 40 blocks written in order (adjacent on the device), a hole at 40..44, 8 more
    // blocks, then a checkpoint: all of them on the device.
    for i in (0..40).chain(44..52) {
        fs.write(ino, i * B as u64, &content(1, i), T).unwrap();
    }
    fs.sync(T).unwrap();
    // Rewrite every third block (their new copies land elsewhere: runs break), then
    // checkpoint again; then dirty blocks 5 and 6 in the cache and a partial last block.
    for i in (0..52).step_by(3).filter(|i| !(40..44).contains(i)) {
        fs.write(ino, i * B as u64, &content(2, i), T).unwrap();
    }
    fs.sync(T).unwrap();
    fs.write(ino, 5 * B as u64, &content(3, 5), T).unwrap();
    fs.write(ino, 6 * B as u64 + 100, &[7u8; 50], T).unwrap();
    fs.write(ino, 52 * B as u64, &[9u8; 1000], T).unwrap();
    let size = 52 * B + 1000;

    // One request per run of adjacent blocks, not per block.
    fs.device_mut().read_requests = 0;
    let mut whole = vec![0u8; size];
    assert_eq!(fs.read(ino, 0, &mut whole).unwrap(), size);
    let requests = fs.device().read_requests;
    assert!(requests < 40, "{requests} device requests for 49 blocks on the device");

    let offsets = [0usize, 1, B - 1, B, 3 * B, 5 * B + 17, 39 * B, 40 * B, 43 * B + 5, 51 * B, 52 * B, size - 1];
    let lens = [1usize, 100, B, 2 * B, 7 * B + 3, 20 * B, size];
    for &off in &offsets {
        for &len in &lens {
            let mut expect = vec![0u8; len];
            let n = fs.read(ino, off as u64, &mut expect).unwrap();
            let mut got = vec![0xeeu8; len];
            let plan = fs.read_planned(ino, off as u64, &mut got).unwrap();
            assert_eq!(plan.len, n, "length at {off}+{len}");
            assert!(complete(fs.device_mut(), &plan, &mut got), "verify at {off}+{len}");
            assert_eq!(got[..n], expect[..n], "bytes at {off}+{len}");
            assert_eq!(&expect[..n], &whole[off.min(size)..(off + n).min(size)]);
            for run in &plan.runs {
                assert_eq!(run.buf_offset % B, (B - off % B) % B, "runs hold whole blocks");
                assert!(run.blocks >= 1 && run.crcs.as_ref().unwrap().len() == run.blocks);
            }
            // Listed holes are whole zero blocks of the result, apart from every run.
            let mut prev_end = 0;
            for h in &plan.holes {
                let end = h.buf_offset + h.blocks * B;
                assert!(h.blocks >= 1 && h.buf_offset >= prev_end && end <= n, "hole {h:?} at {off}+{len}");
                assert!(got[h.buf_offset..end].iter().all(|&x| x == 0), "hole {h:?} at {off}+{len} not zero");
                let overlaps = |r: &PlannedRun| r.buf_offset < end && h.buf_offset < r.buf_offset + r.blocks * B;
                assert!(!plan.runs.iter().any(overlaps), "hole {h:?} overlaps a run at {off}+{len}");
                prev_end = end;
            }
        }
    }
    // The file's one hole (blocks 40..44) is listed, as one entry, and nothing else is.
    let mut buf = vec![0u8; size];
    let plan = fs.read_planned(ino, 0, &mut buf).unwrap();
    assert_eq!(plan.holes, vec![PlannedHole { buf_offset: 40 * B, blocks: 4 }]);

    // Blocks staged by an atomic write are the session's view, from memory.
    fs.start_atomic_write(ino).unwrap();
    fs.write(ino, 10 * B as u64, &content(4, 10), T).unwrap();
    let mut expect = vec![0u8; 20 * B];
    fs.read(ino, 0, &mut expect).unwrap();
    let mut got = vec![0u8; 20 * B];
    let plan = fs.read_planned(ino, 0, &mut got).unwrap();
    assert!(complete(fs.device_mut(), &plan, &mut got));
    assert_eq!(got, expect);
    assert_eq!(&got[10 * B..11 * B], &content(4, 10)[..]);
}

#[test]
fn a_planned_block_that_fails_its_checksum_fails_verify_and_read_reports_it() {
    let mut fs = Filesystem::mount(Probe::new(mkfs(8192)), &MountOptions::default(), T).unwrap();
    let ino = fs.create(1, b"f", 0o644, C, T).unwrap().ino;
    for i in 0..8 {
        fs.write(ino, i * B as u64, &content(1, i), T).unwrap();
    }
    fs.sync(T).unwrap();
    let mut buf = vec![0u8; 8 * B];
    let plan = fs.read_planned(ino, 0, &mut buf).unwrap();
    let bad = plan.runs[0].addr + 3;
    fs.device_mut().inner.block_mut(bad)[100] ^= 1;
    assert!(!complete(fs.device_mut(), &plan, &mut buf), "a flipped bit must fail verify");
    match fs.read(ino, 0, &mut buf) {
        Err(Error::DataChecksum { block, .. }) => assert_eq!(block, bad),
        other => panic!("read of a bad block: {other:?}"),
    }
}

#[test]
fn no_planned_block_is_written_or_discarded_before_a_reuse_fence() {
    // 16 MiB, 64 KiB segments: the device fills and blocks get reused quickly.
    let mut fs = Filesystem::mount(Probe::new(mkfs(4096)), &MountOptions::default(), T).unwrap();
    let a = fs.create(1, b"a", 0o644, C, T).unwrap().ino;
    for i in 0..64 {
        fs.write(a, i * B as u64, &content(1, i), T).unwrap();
    }
    fs.sync(T).unwrap();
    for round in 0..40u64 {
        // A reader plans a read of the whole file, as the driver does under its lock.
        let mut buf = vec![0u8; 64 * B];
        let plan = fs.read_planned(a, 0, &mut buf).unwrap();
        let dev = fs.device_mut();
        dev.watches = vec![Watch::of(&plan, dev.fences, format!("round {round}"))];
        // Meanwhile: the file is rewritten (fsync'd, so its old blocks are invalidated
        // without a checkpoint first), another file grows and shrinks, checkpoints come.
        for i in 0..64 {
            fs.write(a, i * B as u64, &content(round as u8 + 2, i), T).unwrap();
            if i % 16 == 15 {
                fs.fsync(a, false, T).unwrap();
            }
        }
        let name = format!("fill{round}");
        let f = fs.create(1, name.as_bytes(), 0o644, C, T).unwrap().ino;
        for i in 0..400 {
            fs.write(f, i * B as u64, &content(9, i), T).unwrap();
        }
        fs.sync(T).unwrap();
        fs.unlink(1, name.as_bytes(), T).unwrap();
        fs.sync(T).unwrap();
    }
    let dev = fs.device();
    assert!(dev.violations.is_empty(), "{:?}", &dev.violations[..dev.violations.len().min(5)]);
    assert!(dev.reused_after_fence > 0, "the test never reused a planned block: it proved nothing");
    assert!(dev.fences >= 80, "one fence per checkpoint ({} fences)", dev.fences);
}

#[test]
fn the_fence_checker_reports_a_reuse_without_fence() {
    let mut dev = Probe::new(MemDevice::new(64));
    let plan =
        ReadPlan { len: B, runs: vec![PlannedRun { buf_offset: 0, addr: 7, blocks: 1, crcs: None }], holes: vec![] };
    dev.watches.push(Watch::of(&plan, dev.fences, "test".into()));
    dev.write(8, &[0; B], WriteFlags::empty()).unwrap();
    assert!(dev.violations.is_empty());
    dev.write(7, &[0; B], WriteFlags::empty()).unwrap();
    dev.discard(0, 16).unwrap();
    assert_eq!(dev.violations.len(), 2, "{:?}", dev.violations);
    dev.reuse_fence();
    dev.write(7, &[0; B], WriteFlags::empty()).unwrap();
    assert_eq!((dev.violations.len(), dev.reused_after_fence), (2, 1));
}

#[test]
fn reads_across_node_boundaries_and_missing_nodes_match_the_model() {
    const A: u64 = layout::ADDRS_PER_INODE as u64;
    const P: u64 = layout::ADDRS_PER_BLOCK as u64;
    let mut fs = Filesystem::mount(Probe::new(mkfs(8192)), &MountOptions::default(), T).unwrap();
    let ino = fs.create(1, b"f", 0o644, C, T).unwrap().ino;
    // File blocks: the inode's first and last slots, the first direct node's first and
    // last, the fourth direct node (the second and third do not exist), a block under the
    // first indirect node, and one under the first double-indirect node.
    let far = A + 2 * P + 1016 * P * 2 + 3;
    let blocks = [0, 1, A - 1, A, A + 1, A + P - 1, A + 3 * P + 7, A + 2 * P + 5 * P + 2, far];
    let mut model: std::collections::BTreeMap<u64, Vec<u8>> = Default::default();
    for (k, &b) in blocks.iter().enumerate() {
        fs.write(ino, b * B as u64, &content(k as u8 + 1, b), T).unwrap();
        model.insert(b, content(k as u8 + 1, b).to_vec());
    }
    // All on the device; then three blocks in the write-back cache: two rewritten, one new
    // in the third direct node, which does not exist on the device.
    fs.sync(T).unwrap();
    for (k, &b) in [1, A + 1, A + 2 * P + 9].iter().enumerate() {
        fs.write(ino, b * B as u64, &content(k as u8 + 20, b), T).unwrap();
        model.insert(b, content(k as u8 + 20, b).to_vec());
    }
    let size = (far + 1) * B as u64;
    let byte = |pos: u64| model.get(&(pos / B as u64)).map_or(0, |c| c[(pos % B as u64) as usize]);
    let starts = [0, A - 2, A - 1, A, A + P - 2, A + P - 1, A + P, A + 3 * P - 1, A + 3 * P + 6, far - 3];
    for &first in &starts {
        for &(skew, len) in &[(0u64, 3 * B), (0, 1100 * B), (17, 2 * B + 9), (0, 1)] {
            let off = first * B as u64 + skew;
            let len = len.min((size - off) as usize);
            let want: Vec<u8> = (off..off + len as u64).map(byte).collect();
            let mut got = vec![0xEEu8; len];
            assert_eq!(fs.read(ino, off, &mut got).unwrap(), len, "read at block {first}+{skew}");
            assert!(got == want, "read at block {first}+{skew}, {len} bytes");
            let mut planned = vec![0xEEu8; len];
            let plan = fs.read_planned(ino, off, &mut planned).unwrap();
            assert!(complete(fs.device_mut(), &plan, &mut planned));
            assert!(planned == want, "read_planned at block {first}+{skew}, {len} bytes");
            // plan_read: the holes it lists are left as they were (0xEE); with them zeroed
            // and the runs read, the same bytes.
            let mut sparse = vec![0xEEu8; len];
            let plan2 = fs.plan_read(ino, off, &mut sparse).unwrap();
            assert_eq!((&plan2.runs, &plan2.holes), (&plan.runs, &plan.holes));
            for h in &plan2.holes {
                let hole = &mut sparse[h.buf_offset..h.buf_offset + h.blocks * B];
                assert!(hole.iter().all(|&x| x == 0xEE), "plan_read wrote a hole at block {first}+{skew}");
                hole.fill(0);
            }
            assert!(complete(fs.device_mut(), &plan2, &mut sparse));
            assert!(sparse == want, "plan_read at block {first}+{skew}, {len} bytes");
        }
    }
}
