//! Online scrub (`Filesystem::scrub_step`, core/src/scrub.rs) on a live filesystem: what it
//! finds when a block goes bad under a mount, that it never writes, that it skips what is
//! only in memory, and that its steps always move on and add up to a whole scrub whatever
//! their budget.

mod common;

use common::pointers::{inode_addr, pointers};
use rollfs_core::*;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 1000, gid: 1000 };

/// Bytes of file block `idx` of a file made by `filled`.
fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31) ^ seed ^ (i / BLOCK_SIZE) as u8).collect()
}

/// A mounted filesystem with `/a` (3 blocks), `/big` (1,100 blocks: past the inode's
/// pointers into direct nodes), `/small` (inline when the image has inline data) and a
/// directory `/d` with a file in it, all checkpointed.
fn filled() -> (Filesystem<MemDevice>, Ino, Ino) {
    let opts = MkfsOptions { segment_blocks: 64, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(8192), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let a = fs.create(1, b"a", 0o644, C, T).unwrap().ino;
    fs.write(a, 0, &pattern(1, 3 * BLOCK_SIZE), T).unwrap();
    let big = fs.create(1, b"big", 0o644, C, T).unwrap().ino;
    fs.write(big, 0, &pattern(2, 1100 * BLOCK_SIZE), T).unwrap();
    let small = fs.create(1, b"small", 0o644, C, T).unwrap().ino;
    fs.write(small, 0, b"tiny", T).unwrap();
    let d = fs.mkdir(1, b"d", 0o755, C, T).unwrap().ino;
    let e = fs.create(d, b"e", 0o644, C, T).unwrap().ino;
    fs.write(e, 0, &pattern(3, BLOCK_SIZE), T).unwrap();
    fs.sync(T).unwrap();
    (fs, a, big)
}

/// A whole scrub in steps of `budget` blocks: the steps' totals and bad blocks, and how
/// many steps it took.
fn scrub_all(fs: &mut Filesystem<MemDevice>, budget: u32) -> (ScrubStep, u64) {
    let mut total = ScrubStep::default();
    let mut cur = ScrubCursor::default();
    let mut steps = 0u64;
    loop {
        let s = fs.scrub_step(cur, budget).unwrap();
        steps += 1;
        assert!(steps < 1_000_000, "the scrub does not end");
        assert!(s.bad.len() <= SCRUB_BAD_PER_STEP_MAX);
        total.nodes_verified += s.nodes_verified;
        total.data_blocks_verified += s.data_blocks_verified;
        total.blocks_skipped += s.blocks_skipped;
        total.bad.extend(s.bad);
        match s.next {
            Some(n) => {
                assert_ne!(n, cur, "a step of budget {budget} did not move the cursor");
                cur = n;
            }
            None => return (total, steps),
        }
    }
}

#[test]
fn a_clean_filesystem_scrubs_clean_and_nothing_is_written() {
    let (mut fs, _, _) = filled();
    let writes = fs.device().counters.writes;
    let flushes = fs.device().counters.flushes;
    let (s, steps) = scrub_all(&mut fs, SCRUB_STEP_BLOCKS_MAX);
    assert!(s.bad.is_empty(), "{:?}", s.bad);
    // 3 + 1100 + 1 data blocks (and the directories' blocks), the inodes and /big's direct nodes.
    assert!(s.data_blocks_verified >= 1104, "{}", s.data_blocks_verified);
    assert!(s.nodes_verified >= 7, "{}", s.nodes_verified);
    assert_eq!(s.blocks_skipped, 0);
    assert!(steps >= 2, "1,100+ blocks in steps of {SCRUB_STEP_BLOCKS_MAX}: {steps} step(s)");
    assert_eq!(fs.device().counters.writes, writes, "scrub wrote to the device");
    assert_eq!(fs.device().counters.flushes, flushes, "scrub flushed the device");
    assert_eq!(fs.stats().data_checksum_errors, 0);
}

#[test]
fn any_budget_covers_the_same_blocks() {
    let (mut fs, _, _) = filled();
    let (whole, _) = scrub_all(&mut fs, SCRUB_STEP_BLOCKS_MAX);
    for budget in [1, 2, 7, 100] {
        let (s, steps) = scrub_all(&mut fs, budget);
        assert_eq!(s.data_blocks_verified, whole.data_blocks_verified, "budget {budget}");
        assert_eq!(s.nodes_verified, whole.nodes_verified, "budget {budget}");
        assert!(s.bad.is_empty());
        assert!(steps > whole.data_blocks_verified / (u64::from(budget) + 1), "budget {budget}: {steps} steps");
    }
}

#[test]
fn a_data_block_that_went_bad_under_the_mount_is_found_by_file_and_block() {
    let (mut fs, a, big) = filled();
    let pa = pointers(fs.device_mut(), a);
    let pbig = pointers(fs.device_mut(), big);
    // File block 1 of /a and file block 1050 of /big (under a direct node).
    let bad_a = pa[1].1 as u64;
    let bad_big = pbig.iter().find(|p| p.0 == 1050).unwrap().1 as u64;
    fs.device_mut().block_mut(bad_a)[100] ^= 0x40;
    fs.device_mut().block_mut(bad_big)[4000] ^= 0x01;
    let (s, _) = scrub_all(&mut fs, 64);
    let mut got: Vec<_> = s.bad.iter().map(|b| (b.kind, b.ino, b.file_block, b.addr)).collect();
    got.sort();
    let mut want =
        vec![(ScrubBadKind::DataChecksum, a, Some(1), bad_a), (ScrubBadKind::DataChecksum, big, Some(1050), bad_big)];
    want.sort();
    assert_eq!(got, want);
    assert_eq!(fs.stats().data_checksum_errors, 2);
    // The rest of both files was checked: every block but the two bad ones verified.
    let (clean, _) = {
        let (mut fs2, _, _) = filled();
        scrub_all(&mut fs2, 64)
    };
    assert_eq!(s.data_blocks_verified, clean.data_blocks_verified - 2);
}

#[test]
fn a_node_block_that_went_bad_is_found_and_its_file_skipped() {
    let (mut fs, a, _) = filled();
    let addr = inode_addr(fs.device_mut(), a);
    fs.device_mut().block_mut(addr)[200] ^= 0x10;
    let (s, _) = scrub_all(&mut fs, SCRUB_STEP_BLOCKS_MAX);
    assert!(
        s.bad.contains(&ScrubBad { kind: ScrubBadKind::NodeCorrupt, ino: a, file_block: None, addr }),
        "{:?}",
        s.bad
    );
    assert_eq!(s.bad.len(), 1, "{:?}", s.bad);
}

#[test]
fn a_read_error_is_reported_as_one() {
    let (mut fs, a, _) = filled();
    let addr = pointers(fs.device_mut(), a)[2].1 as u64;
    fs.device_mut().fail_read_block = Some(addr);
    let (s, _) = scrub_all(&mut fs, SCRUB_STEP_BLOCKS_MAX);
    assert_eq!(s.bad, vec![ScrubBad { kind: ScrubBadKind::ReadError, ino: a, file_block: Some(2), addr }]);
}

#[test]
fn blocks_only_in_memory_are_skipped_not_reported() {
    let (mut fs, a, _) = filled();
    // Rewritten since the checkpoint and not written back: the device still holds the old
    // block, which the node in memory no longer points at with the old checksum.
    fs.write(a, 0, &pattern(9, BLOCK_SIZE), T).unwrap();
    let n = fs.create(1, b"new", 0o644, C, T).unwrap().ino;
    fs.write(n, 0, &pattern(4, 2 * BLOCK_SIZE), T).unwrap();
    let (s, _) = scrub_all(&mut fs, SCRUB_STEP_BLOCKS_MAX);
    assert!(s.bad.is_empty(), "{:?}", s.bad);
    assert!(s.blocks_skipped >= 3, "{}", s.blocks_skipped);
}

#[test]
fn more_bad_blocks_than_one_step_reports_go_on_in_the_next() {
    let (mut fs, _, big) = filled();
    let p = pointers(fs.device_mut(), big);
    let n = SCRUB_BAD_PER_STEP_MAX * 2 + 3;
    for (_, addr, _) in p.iter().take(n) {
        fs.device_mut().block_mut(*addr as u64)[0] ^= 0xff;
    }
    let (s, steps) = scrub_all(&mut fs, SCRUB_STEP_BLOCKS_MAX);
    assert_eq!(s.bad.len(), n);
    assert!(steps >= 3);
    let mut blocks: Vec<u64> = s.bad.iter().map(|b| b.file_block.unwrap()).collect();
    blocks.dedup();
    assert_eq!(blocks, (0..n as u64).collect::<Vec<_>>(), "each bad block once, in order");
}

/// Review finding: holes cost no reads but cost steps — a sparse file of terabytes took
/// thousands of steps. Holes are passed a missing node's span at a time.
#[test]
fn a_sparse_file_of_terabytes_costs_what_its_blocks_cost() {
    let (mut fs, _, _) = filled();
    let (clean, clean_steps) = scrub_all(&mut fs, 64);
    let sp = fs.create(1, b"sparse", 0o644, C, T).unwrap().ino;
    fs.setattr(sp, &SetAttr { size: Some(3 << 40), ..Default::default() }, T).unwrap();
    fs.write(sp, (1 << 40) + 5, b"x", T).unwrap();
    fs.sync(T).unwrap();
    let (s, steps) = scrub_all(&mut fs, 64);
    assert!(s.bad.is_empty(), "{:?}", s.bad);
    assert_eq!(s.data_blocks_verified, clean.data_blocks_verified + 1);
    assert!(steps <= clean_steps + 2, "{steps} steps for a 3 TiB sparse file (without it {clean_steps})");
}

#[test]
fn a_cursor_past_the_node_ids_is_refused() {
    let (mut fs, _, _) = filled();
    let e = fs.scrub_step(ScrubCursor { nid: u32::MAX, pos: 0 }, 10).unwrap_err();
    assert!(matches!(e, Error::Invalid(_)), "{e:?}");
}

/// The address of the direct node that maps file block `idx` (past the inode's pointers,
/// under its first direct slot) of `ino`, read through the on-disk NAT.
fn first_direct_node_addr(dev: &mut MemDevice, ino: Ino) -> u64 {
    use rollfs_core::checkpoint::Checkpoint;
    use rollfs_core::nat::Nat;
    use rollfs_core::node::inode;
    use rollfs_core::superblock::read_superblock;
    let g = read_superblock(dev).unwrap().geometry;
    let (cp, _) = Checkpoint::read_newest(dev, &g).unwrap();
    let nat = Nat::load(dev, &g, cp.nat_slots.clone(), &cp.nat_journal, cp.version).unwrap();
    let mut b = zero_block();
    dev.read(nat.get(ino).unwrap().addr as u64, &mut b).unwrap();
    nat.get(inode::nid(&b, 0)).unwrap().addr as u64
}

#[test]
fn a_bad_direct_node_with_cold_caches_is_found_and_the_rest_scrubbed() {
    let (mut fs, _, big) = filled();
    let (clean, _) = scrub_all(&mut fs, SCRUB_STEP_BLOCKS_MAX);
    let addr = first_direct_node_addr(fs.device_mut(), big);
    fs.device_mut().block_mut(addr)[64] ^= 0x08;
    // Cold: the file's walk must read the bad node from the device, as after memory
    // pressure (the warm cache would hide it from the walk, not from the node scan).
    fs.drop_clean_caches();
    let (s, _) = scrub_all(&mut fs, 50);
    assert!(s.bad.iter().all(|b| b.addr == addr && b.kind == ScrubBadKind::NodeCorrupt), "{:?}", s.bad);
    assert!(s.bad.iter().any(|b| b.ino == big && b.file_block.is_none()), "the node itself: {:?}", s.bad);
    assert!(s.bad.len() <= 2, "named once by its id and once by the file: {:?}", s.bad);
    // The bad node's 508 blocks are not checked; every other block is (the inode's own
    // pointers and the second direct node of /big, /a, /d/e).
    assert_eq!(s.data_blocks_verified, clean.data_blocks_verified - 508);
}
