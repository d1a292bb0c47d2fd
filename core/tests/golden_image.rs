//! The byte format does not drift: a fixed workload that writes every on-disk structure
//! (superblock, checkpoint header and payload with NAT and SIT journals and orphans, NAT,
//! SIT and SSA blocks, inodes with inline and mapped data, direct and indirect nodes,
//! xattr nodes, dentry blocks with short and long names, fsync-marked inodes of the node
//! chain) must leave exactly the image the code made when these hashes were taken
//! (format 2.1: the version jump of issue 38's review; format 2.0, data checksums: issue 17; format 1.0's hashes were taken before the
//! on-disk structures became zerocopy types and held through it). A change of any byte
//! of any structure changes a hash; a deliberate format change updates them together with
//! FORMAT.md and the format version.
//!
//! The workload runs three times: on an image without `FEATURE_INCOMPAT_DIR_V2` (the format
//! older readers mount, unchanged since format 2.0: its hashes are those of 2.0), with it
//! (per-directory name hash keys: other dentry placement, so other hashes, taken when the
//! feature was added), and on format 3 with every part on (as `rollfs mkfs` makes images:
//! changes after the checkpoint write reservations, inline bytes and record nodes).

use rollfs_core::BlockDevice;
use rollfs_core::*;

const T: Timestamp = Timestamp::new(1_700_000_000, 123_456_789);
const C: Credentials = Credentials { uid: 1000, gid: 100 };
const BLOCKS: u64 = 16_384;

/// FNV-1a (64-bit) over every byte of the device, block by block (an unwritten block reads
/// as zero). Not a CRC: a block sealed with its own CRC32C (every node, table block,
/// checkpoint block and superblock) has the same CRC32C residue whatever it holds, so a
/// CRC over the image saw only data blocks and where blocks were written (found at stop
/// 49, when record nodes' new footer field left the CRC-based hashes unchanged).
fn image_hash(dev: &mut MemDevice) -> u64 {
    let mut b = zero_block();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for a in 0..dev.block_count() {
        dev.read(a, &mut b).unwrap();
        for &x in b.iter() {
            h = (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn name(i: usize) -> Vec<u8> {
    // Lengths 1..=200, so names take from one to 25 dentry slots.
    let len = 1 + (i * 37) % 200;
    (0..len).map(|k| b'a' + ((i + k) % 26) as u8).collect()
}

#[test]
fn the_image_of_a_fixed_workload_is_unchanged() {
    assert_eq!(
        workload(false),
        (GOLDEN_AFTER_FSYNC, GOLDEN_AFTER_UNMOUNT),
        "the image differs from the one format 2.1 code wrote: an on-disk byte moved"
    );
}

#[test]
fn the_image_of_a_fixed_workload_with_directories_v2_is_unchanged() {
    assert_eq!(
        workload(true),
        (GOLDEN_V2_AFTER_FSYNC, GOLDEN_V2_AFTER_UNMOUNT),
        "the image differs from the one the code wrote when FEATURE_INCOMPAT_DIR_V2 was added"
    );
}

/// Format 3 with every part on (directories v2, persistent reservations, inline data, as
/// `rollfs mkfs` makes images, namespace records, data beside its chain and open segments'
/// summaries in the checkpoint included), with
/// changes after the checkpoint that write each part's structures: a fallocated range
/// (`NEW_ADDR` pointers), small files kept inline, a rename, a link and a create made durable
/// by fsyncs through record nodes, and small batches' data written beside their nodes.
#[test]
fn the_image_of_a_fixed_workload_in_format_3_is_unchanged() {
    assert_eq!(
        workload_with(true, true),
        (GOLDEN_F3_AFTER_FSYNC, GOLDEN_F3_AFTER_UNMOUNT),
        "the image differs from the one format 3 code wrote with every part on (stop 55)"
    );
}

/// The image hashes after the fsyncs and after the unmount.
fn workload(dir_v2: bool) -> (u64, u64) {
    workload_with(dir_v2, false)
}

fn workload_with(dir_v2: bool, format3: bool) -> (u64, u64) {
    let opts = MkfsOptions {
        segment_blocks: 16,
        overprovision_pct: 5,
        label: b"golden".to_vec(),
        uuid: core::array::from_fn(|i| 0x10 + i as u8),
        time: T,
        root_owner: C,
        hash_seed: core::array::from_fn(|i| 0xA0 ^ i as u8),
        root_reserve_pct: Some(3),
        data_checksums: true,
        dir_v2,
        // Format 2's bytes unless `format3`: those hashes predate persistent reservations,
        // inline data, namespace records and data beside its chain.
        prealloc_on_disk: format3,
        inline_data: format3,
        ns_records: format3,
        mixed_node: format3,
        cp_summaries: format3,
        max_blocks: 0,
    };
    let dev = Filesystem::format(MemDevice::new(BLOCKS), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();

    let d = fs.mkdir(1, b"dir", 0o755, C, T).unwrap().ino;
    let mut inos = Vec::new();
    // More than the NAT journal holds (340): the checkpoint writes NAT blocks.
    for i in 0..420 {
        let a = fs.create(d, &name(i), 0o644, C, T).unwrap();
        if i % 7 == 0 {
            fs.write(a.ino, 0, &pattern(i as u64, 100 + i * 13), T).unwrap();
        }
        inos.push(a.ino);
    }
    // A file past the inode's addresses and both direct nodes: an indirect node.
    let big = fs.create(1, b"big", 0o600, C, T).unwrap().ino;
    let chunk = pattern(7, 64 * 1024);
    for k in 0..56u64 {
        fs.write(big, k * chunk.len() as u64, &chunk, T).unwrap();
    }
    fs.symlink(d, b"link", b"../big", C, T).unwrap();
    fs.setxattr(big, b"user.golden", &pattern(3, 300), XattrSetMode::Any, T).unwrap();
    // An open-unlinked file: an orphan in the checkpoint.
    let orphan = fs.create(1, b"orphan", 0o644, C, T).unwrap().ino;
    fs.open(orphan).unwrap();
    fs.unlink(1, b"orphan", T).unwrap();
    fs.sync(T).unwrap();

    // After the checkpoint: a few changes made durable by fsync alone (node chain, marks,
    // NAT and SIT journals in memory only).
    let small = inos[3];
    fs.write(small, 10, b"fsynced bytes", T).unwrap();
    fs.fsync(small, false, T).unwrap();
    let late = fs.create(d, b"created-after-checkpoint", 0o644, C, T).unwrap().ino;
    fs.write(late, 0, &pattern(11, 5000), T).unwrap();
    fs.fsync(late, false, T).unwrap();
    if format3 {
        let r = fs.create(1, b"reserved", 0o644, C, T).unwrap().ino;
        fs.fallocate(r, 0, 40 * 4096, true, T).unwrap();
        fs.fsync(r, false, T).unwrap();
        fs.rename(d, &name(1), 1, b"renamed", RenameFlags::empty(), T).unwrap();
        fs.link(inos[2], 1, b"linked", T).unwrap();
        let tiny = fs.create(1, b"tiny", 0o644, C, T).unwrap().ino;
        fs.write(tiny, 0, b"inline bytes", T).unwrap();
        fs.fsync(tiny, false, T).unwrap();
        fs.fsync(1, false, T).unwrap();
        assert!(fs.stats().ns_record_nodes_written > 0 && fs.stats().fsync_by_records > 0);
        assert!(fs.stats().data_beside_blocks > 0, "no batch wrote its data beside its nodes");
    }
    let after_fsync = image_hash(fs.device_mut());

    for i in (0..420).step_by(5) {
        fs.unlink(d, &name(i), T).unwrap();
    }
    fs.setattr(big, &SetAttr { size: Some(3_000 * 4096 + 123), ..Default::default() }, T).unwrap();
    fs.release(orphan, T).unwrap();
    let mut dev = fs.unmount(T).unwrap();
    let after_unmount = image_hash(&mut dev);

    let report = rollfs_core::fsck::check(&mut dev).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let mut buf = vec![0u8; 13];
    fs.read(small, 10, &mut buf).unwrap();
    assert_eq!(buf, b"fsynced bytes");
    assert_eq!(fs.getattr(big).unwrap().size, 3_000 * 4096 + 123);
    (after_fsync, after_unmount)
}

// FNV-1a hashes, taken at stop 49 when the CRC-based ones were found blind inside sealed
// blocks (`image_hash`): format 2.1 (mkfs marks the unused checkpoint pack; the mount's
// checkpoint jumps the version, which every node footer and table block written since
// carries), with and without directories v2, and format 3 with every part on (riders and
// record groups). The CRC-based values they replace: 724_504_947 / 1_568_186_691,
// 4_149_527_305 / 2_489_154_127, 3_857_126_748 / 3_041_548_979.
const GOLDEN_AFTER_FSYNC: u64 = 4_177_461_261_102_172_182;
const GOLDEN_AFTER_UNMOUNT: u64 = 10_808_688_528_007_956_884;
const GOLDEN_V2_AFTER_FSYNC: u64 = 7_679_020_178_985_543_002;
const GOLDEN_V2_AFTER_UNMOUNT: u64 = 15_425_698_412_079_778_487;
// Format 3's were retaken at stop 51, when a file's fsync stopped carrying the files its
// records rename to a fresh name or link (`fsync::riders`): the workload's `tiny` fsync no
// longer writes the renamed and linked files' batches (stop 49's values:
// 2_836_014_282_322_596_160 / 14_208_945_785_627_436_895); and at stop 52, when data beside
// its chain (`FEATURE_INCOMPAT_MIXED_NODE`) joined the parts: small batches' data in the
// warm node log, their summaries flagged (stop 51's: 1_736_178_337_262_218_839 /
// 16_904_112_150_973_790_538); and at stop 55, when the summaries of open segments moved
// into the checkpoint's payload (`FEATURE_INCOMPAT_CP_SUMMARIES`: the packs hold them, their
// slots stay as they were; stop 52's: 7_189_325_645_694_409_889 /
// 12_558_330_378_837_274_360).
const GOLDEN_F3_AFTER_FSYNC: u64 = 14_239_801_125_091_466_588;
const GOLDEN_F3_AFTER_UNMOUNT: u64 = 7_928_785_093_752_056_832;
