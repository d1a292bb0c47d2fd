//! Harness logic of the rollfs fuzz targets.
//!
//! This file is the crate root of `rollfs-fuzz` (the `fuzz_targets/*.rs` binaries call the
//! three entry points below) and is also included as a module by
//! `core/tests/fuzz_corpus.rs`, which replays `fuzz/regressions/<target>/*` through exactly
//! the same code in the normal test suite. It therefore uses only `std`, `rollfs_core` and
//! `rollfs_testkit` (a dev-dependency of the core).
//!
//! Targets:
//! - [`mount_walk_fsck`]: a few valid seed images (clean, crashed with an fsync node chain,
//!   crashed with orphans and atomic writes, a large directory) are built once with the
//!   core; the input is a list of block patches applied to one of them (optionally with
//!   the block's checksum recomputed, so the corruption gets past the CRC checks); then
//!   fsck, mount (read-write or read-only), a bounded walk of the tree, a write + fsync +
//!   sync when writable, unmount and fsck again. Only panics count as failures.
//! - [`decoders`]: arbitrary blocks fed to every on-disk decoder.
//! - [`ops_vs_model`]: operation sequences run against the filesystem and a plain model
//!   (rollfs-testkit's run loop, which `core/tests/model.rs` drives with proptest),
//!   compared after every step, after a simulated power loss and after a clean remount;
//!   any divergence panics.
#![allow(dead_code)]

use rollfs_core::checkpoint::{Checkpoint, CP_OFF_PAYLOAD_BLOCKS, CP_OFF_PAYLOAD_CRC};
use rollfs_core::codec;
use rollfs_core::dir::{self, DirBlocks};
use rollfs_core::layout::{Geometry, BLOCK_SIZE};
use rollfs_core::node::{self, NodeType};
use rollfs_core::superblock::Superblock;
use rollfs_core::{Block, Credentials, FileType, Filesystem, Ino, MkfsOptions, MountOptions, Timestamp};
use rollfs_core::{BlockDevice, MemDevice, WriteFlags};
use rollfs_core::{RenameFlags, SetAttr, XattrSetMode};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

const CRED: Credentials = Credentials { uid: 1000, gid: 1000 };

fn ts(i: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + i, 0)
}

/// Reads little-endian integers from the fuzz input; zeros once it runs out.
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Input<'a> {
        Input { data, pos: 0 }
    }
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }
    pub fn u8(&mut self) -> u8 {
        let v = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        v
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 != 0
    }
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        let end = (self.pos + n).min(self.data.len());
        self.pos += n;
        &self.data[start..end]
    }
}

// =======================================================================================
// Seed images
// =======================================================================================

/// How a block of a seed image is checksummed, so that a patch can be resealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// CRC32C at the end (superblock, NAT/SIT/SSA, dentry blocks).
    Plain,
    /// Node block: CRC32C seeded with the volume's seed.
    Node,
    /// Checkpoint pack header / payload block of pack `n`.
    CpHeader(usize),
    CpPayload(usize),
    /// No checksum of its own (file data, never-written blocks).
    Data,
}

pub struct SeedImage {
    pub name: &'static str,
    pub dev: MemDevice,
    /// Addresses of the blocks that hold anything (the interesting targets of patches).
    pub written: Vec<u64>,
    kinds: BTreeMap<u64, Kind>,
    geo: Geometry,
    node_seed: u32,
}

fn mkfs(blocks: u64) -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: *b"rollfs-fuzz-seed", time: ts(0), ..Default::default() };
    Filesystem::format(MemDevice::new(blocks), &opts).expect("mkfs")
}

fn mount_opts() -> MountOptions {
    MountOptions { dirty_bytes_max: 512 << 10, clean_cache_bytes_max: 1 << 20, ..Default::default() }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// Files, directories, links, symlinks, xattrs, a sparse file with direct and indirect
/// nodes, a special file. Returns (dir ino, file ino, sparse ino).
fn populate(fs: &mut Filesystem<MemDevice>) -> (Ino, Ino, Ino) {
    let root = 1;
    let d1 = fs.mkdir(root, b"d1", 0o755, CRED, ts(1)).unwrap().ino;
    let d2 = fs.mkdir(d1, b"d2", 0o700, CRED, ts(1)).unwrap().ino;
    let f1 = fs.create(root, b"f1", 0o644, CRED, ts(2)).unwrap().ino;
    fs.write(f1, 0, &pattern(10_000, 1), ts(2)).unwrap();
    let small = fs.create(d1, b"small", 0o600, CRED, ts(2)).unwrap().ino;
    fs.write(small, 0, b"hello, rollfs", ts(2)).unwrap();
    let deep = fs.create(d2, b"deep-file-with-a-rather-long-name-spanning-slots", 0o644, CRED, ts(2)).unwrap().ino;
    fs.write(deep, 0, &pattern(5000, 9), ts(2)).unwrap();
    fs.symlink(root, b"link", b"d1/small", CRED, ts(3)).unwrap();
    fs.symlink(d1, b"longlink", &[b'x'; 300], CRED, ts(3)).unwrap();
    fs.link(f1, d1, b"hard", ts(3)).unwrap();
    fs.setxattr(f1, b"user.a", b"value-a", XattrSetMode::Any, ts(4)).unwrap();
    fs.setxattr(f1, b"user.big", &[7u8; 300], XattrSetMode::Any, ts(4)).unwrap();
    fs.setxattr(d1, b"trusted.b", b"bb", XattrSetMode::Any, ts(4)).unwrap();
    fs.mknod(root, b"fifo", FileType::Fifo.mode_bits() | 0o644, 0, CRED, ts(4)).unwrap();
    // Block 1000 needs a direct node, block 3000 an indirect one (914 + 2*1016 < 3000).
    let sparse = fs.create(root, b"sparse", 0o644, CRED, ts(5)).unwrap().ino;
    fs.write(sparse, 1000 * BLOCK_SIZE as u64, &pattern(BLOCK_SIZE, 3), ts(5)).unwrap();
    fs.write(sparse, 3000 * BLOCK_SIZE as u64 + 100, &pattern(200, 4), ts(5)).unwrap();
    for i in 0..24u32 {
        let name = format!("entry-{i:03}-{}", "n".repeat((i % 5) as usize * 7));
        let e = fs.create(d1, name.as_bytes(), 0o644, CRED, ts(6)).unwrap().ino;
        if i % 6 == 0 {
            fs.write(e, 0, &pattern(100 + i as usize * 50, i as u8), ts(6)).unwrap();
        }
    }
    (d1, f1, sparse)
}

fn build_seeds() -> Vec<SeedImage> {
    let mut out = Vec::new();
    // 0: a clean image, unmounted.
    {
        let mut fs = Filesystem::mount(mkfs(768), &mount_opts(), ts(0)).unwrap();
        populate(&mut fs);
        out.push(("clean", fs.unmount(ts(10)).unwrap()));
    }
    // 1: crashed after fsyncs: a warm node chain after the checkpoint, with fsync and
    // dentry marks, truncation hints and data batches to roll forward.
    {
        let mut fs = Filesystem::mount(mkfs(768), &mount_opts(), ts(0)).unwrap();
        let (d1, f1, sparse) = populate(&mut fs);
        fs.sync(ts(10)).unwrap();
        fs.write(f1, 5000, &pattern(9000, 5), ts(11)).unwrap();
        fs.fsync(f1, false, ts(11)).unwrap();
        let n = fs.create(1, b"new-after-cp", 0o644, CRED, ts(12)).unwrap().ino;
        fs.write(n, 0, &pattern(6000, 6), ts(12)).unwrap();
        fs.fsync(n, false, ts(12)).unwrap();
        fs.write(sparse, 1000 * BLOCK_SIZE as u64 + 10, b"rewritten", ts(13)).unwrap();
        fs.setattr(sparse, &SetAttr { size: Some(2000 * BLOCK_SIZE as u64), ..Default::default() }, ts(13)).unwrap();
        fs.fsync(sparse, false, ts(13)).unwrap();
        let s = fs.lookup(d1, b"small").unwrap().ino;
        fs.write(s, 0, b"HELLO", ts(14)).unwrap();
        fs.fsync(s, true, ts(14)).unwrap();
        fs.setxattr(n, b"user.after", b"cp", XattrSetMode::Any, ts(15)).unwrap();
        fs.fsync(n, false, ts(15)).unwrap();
        // Unsynced changes too: they are lost at the crash.
        fs.write(f1, 0, b"lost", ts(16)).unwrap();
        out.push(("fsync-chain-crash", fs.into_device()));
    }
    // 2: crashed with an orphan in the checkpoint, a committed and an open atomic write,
    // a rename and a truncate since the checkpoint.
    {
        let mut fs = Filesystem::mount(mkfs(1024), &mount_opts(), ts(0)).unwrap();
        let (d1, f1, _) = populate(&mut fs);
        let o = fs.create(1, b"orphan", 0o644, CRED, ts(10)).unwrap().ino;
        fs.write(o, 0, &pattern(8192, 8), ts(10)).unwrap();
        fs.open(o).unwrap();
        fs.unlink(1, b"orphan", ts(10)).unwrap();
        fs.sync(ts(11)).unwrap();
        fs.start_atomic_write(f1).unwrap();
        fs.write(f1, 4096, &pattern(8192, 10), ts(12)).unwrap();
        fs.commit_atomic_write(f1, ts(12)).unwrap();
        let s = fs.lookup(d1, b"small").unwrap().ino;
        fs.start_atomic_write(s).unwrap();
        fs.write(s, 0, b"uncommitted", ts(13)).unwrap();
        fs.rename(d1, b"entry-001-nnnnnnn", 1, b"moved", RenameFlags::empty(), ts(14)).unwrap();
        fs.setattr(f1, &SetAttr { size: Some(3000), ..Default::default() }, ts(15)).unwrap();
        fs.fsync(f1, false, ts(15)).unwrap();
        out.push(("orphan-atomic-crash", fs.into_device()));
    }
    // 3: a directory deep enough to use several dentry levels, unmounted.
    {
        let mut fs = Filesystem::mount(mkfs(1024), &mount_opts(), ts(0)).unwrap();
        let big = fs.mkdir(1, b"big", 0o755, CRED, ts(1)).unwrap().ino;
        for i in 0..160u32 {
            let name = format!("f{i}{}", "y".repeat((i % 13) as usize * 5));
            fs.create(big, name.as_bytes(), 0o644, CRED, ts(2)).unwrap();
        }
        for i in (0..160u32).step_by(3) {
            let name = format!("f{i}{}", "y".repeat((i % 13) as usize * 5));
            fs.unlink(big, name.as_bytes(), ts(3)).unwrap();
        }
        out.push(("large-dir", fs.unmount(ts(10)).unwrap()));
    }
    out.into_iter().map(|(name, dev)| classify(name, dev)).collect()
}

fn classify(name: &'static str, mut dev: MemDevice) -> SeedImage {
    let mut b = rollfs_core::zero_block();
    dev.read(0, &mut b).unwrap();
    let sb = Superblock::decode(0, &b).expect("seed superblock");
    let geo = sb.geometry;
    let node_seed = codec::crc(&sb.uuid);
    let mut written = Vec::new();
    let mut kinds = BTreeMap::new();
    for addr in 0..dev.block_count() {
        dev.read(addr, &mut b).unwrap();
        let mut kind = None;
        for pack in 0..2 {
            let base = geo.cp_pack_addr(pack);
            if addr == base {
                kind = Some(Kind::CpHeader(pack));
            } else if addr > base && addr < base + geo.cp_pack_blocks as u64 {
                kind = Some(Kind::CpPayload(pack));
            }
        }
        if b.iter().all(|&x| x == 0) {
            if let Some(k) = kind {
                kinds.insert(addr, k);
            }
            continue;
        }
        written.push(addr);
        let k = kind.unwrap_or(if codec::crc_ok(&b) {
            Kind::Plain
        } else if codec::crc_ok_seeded(&b, node_seed) {
            Kind::Node
        } else {
            Kind::Data
        });
        kinds.insert(addr, k);
    }
    SeedImage { name, dev, written, kinds, geo, node_seed }
}

/// The seed images (built once per process).
pub fn seeds() -> &'static [SeedImage] {
    static SEEDS: OnceLock<Vec<SeedImage>> = OnceLock::new();
    SEEDS.get_or_init(build_seeds)
}

impl SeedImage {
    fn kind_of(&self, addr: u64) -> Kind {
        self.kinds.get(&addr).copied().unwrap_or(Kind::Data)
    }
}

// =======================================================================================
// mount_walk_fsck
// =======================================================================================

/// Patches that [`mount_walk_fsck`] applies at most.
pub const MAX_PATCHES: usize = 32;

/// Input: `[header]` then records `[sel u16][off u16][flags u8][len u8][len bytes]`.
///
/// header: bits 0-1 seed image, bit 2 mount read-only, bit 3 skip the write phase.
/// flags: bit 0 `sel` indexes the written blocks (else any block), bit 1 reseal the
/// block's checksum after patching, bit 2 reseal an unchecksummed block as a node
/// (else as a plain block), bit 3 fill `len` bytes with the first byte, bits 4-7 added to
/// the length (`len + 16 * (flags >> 4)`, so up to 495 bytes).
pub fn mount_walk_fsck(data: &[u8]) {
    let mut inp = Input::new(data);
    let header = inp.u8();
    let seeds = seeds();
    let seed = &seeds[header as usize % seeds.len()];
    let read_only = header & 4 != 0;
    let no_write = header & 8 != 0;
    let mut dev = seed.dev.clone();
    let mut reseal: BTreeMap<u64, Kind> = BTreeMap::new();
    let mut cp_touched = BTreeSet::new();
    let mut n = 0;
    while !inp.is_empty() && n < MAX_PATCHES {
        n += 1;
        let sel = inp.u16() as u64;
        let off = inp.u16() as usize % BLOCK_SIZE;
        let flags = inp.u8();
        let len = inp.u8() as usize + 16 * (flags >> 4) as usize;
        let addr = if flags & 1 != 0 && !seed.written.is_empty() {
            seed.written[sel as usize % seed.written.len()]
        } else {
            sel % dev.block_count()
        };
        let bytes: Vec<u8> = if flags & 8 != 0 {
            let v = inp.u8();
            vec![v; len]
        } else {
            inp.bytes(len).to_vec()
        };
        let blk = dev.block_mut(addr);
        let end = (off + bytes.len()).min(BLOCK_SIZE);
        blk[off..end].copy_from_slice(&bytes[..end - off]);
        if flags & 2 != 0 {
            let k = match seed.kind_of(addr) {
                Kind::Data if flags & 4 != 0 => Kind::Node,
                Kind::Data => Kind::Plain,
                k => k,
            };
            reseal.insert(addr, k);
        }
        if let Kind::CpPayload(p) | Kind::CpHeader(p) = seed.kind_of(addr) {
            cp_touched.insert(p);
        }
    }
    for (&addr, &k) in &reseal {
        let blk = dev.block_mut(addr);
        match k {
            Kind::Plain => codec::seal(blk),
            Kind::Node => codec::seal_seeded(blk, seed.node_seed),
            Kind::CpPayload(p) | Kind::CpHeader(p) => {
                cp_touched.insert(p);
                let _ = p;
            }
            Kind::Data => {}
        }
    }
    // A resealed checkpoint pack gets its payload CRC and header CRC recomputed.
    for p in cp_touched {
        let base = seed.geo.cp_pack_addr(p);
        let want = (base..base + seed.geo.cp_pack_blocks as u64).any(|a| reseal.contains_key(&a));
        if !want {
            continue;
        }
        let mut h = *dev.block_mut(base);
        let blocks = (codec::get_u32(&h[..], CP_OFF_PAYLOAD_BLOCKS) as u64).min(seed.geo.cp_pack_blocks as u64 - 1);
        let mut payload = Vec::with_capacity(blocks as usize * BLOCK_SIZE);
        for i in 0..blocks {
            payload.extend_from_slice(&dev.block_mut(base + 1 + i)[..]);
        }
        codec::put_u32(&mut h[..], CP_OFF_PAYLOAD_CRC, codec::crc(&payload));
        codec::seal(&mut h);
        *dev.block_mut(base) = h;
    }
    check_image(dev, read_only, no_write);
}

/// fsck, repair (a copy), mount, walk, write, unmount, fsck. Errors are fine; panics are
/// not, and neither is an image the repair calls clean that does not mount.
pub fn check_image(dev: MemDevice, read_only: bool, no_write: bool) {
    let mut d0 = dev.clone();
    let _ = rollfs_core::fsck::check(&mut d0);
    if let Ok(rep) = rollfs_core::fsck::repair(&mut d0, ts(99)) {
        if rep.is_clean() {
            let mut fs = Filesystem::mount(d0, &mount_opts(), ts(99)).expect("an image the repair left clean mounts");
            walk(&mut fs);
        }
    }
    let opts = MountOptions { read_only, ..mount_opts() };
    let mut fs = match Filesystem::mount(dev, &opts, ts(100)) {
        Ok(fs) => fs,
        Err(_) => return,
    };
    walk(&mut fs);
    if !read_only && !no_write {
        let _ = fs.statfs();
        if let Ok(a) = fs.create(1, b"fuzz-new", 0o644, CRED, ts(101)) {
            let _ = fs.write(a.ino, 0, &pattern(9000, 42), ts(101));
            let _ = fs.setxattr(a.ino, b"user.fuzz", b"x", XattrSetMode::Any, ts(101));
            let _ = fs.fsync(a.ino, false, ts(102));
        }
        let _ = fs.mkdir(1, b"fuzz-dir", 0o755, CRED, ts(103));
        let _ = fs.rename(1, b"f1", 1, b"f1-renamed", RenameFlags::empty(), ts(103));
        let _ = fs.unlink(1, b"link", ts(103));
        let _ = fs.sync(ts(104));
        walk(&mut fs);
    }
    let mut dev = match fs.unmount(ts(105)) {
        Ok(d) => d,
        Err(_) => return,
    };
    let _ = rollfs_core::fsck::check(&mut dev);
    if let Ok(mut fs) = Filesystem::mount(dev, &mount_opts(), ts(106)) {
        walk(&mut fs);
    }
}

/// Walks the tree from the root, bounded: at most 300 inodes, 300 entries per directory,
/// 64 KiB read per file.
pub fn walk(fs: &mut Filesystem<MemDevice>) {
    let mut queue: Vec<Ino> = vec![1];
    let mut seen = BTreeSet::new();
    while let Some(ino) = queue.pop() {
        if !seen.insert(ino) || seen.len() > 300 {
            continue;
        }
        let Ok(a) = fs.getattr(ino) else { continue };
        match a.kind {
            FileType::Directory => {
                let mut entries = Vec::new();
                let _ = fs.readdir(ino, 0, &mut |e| {
                    entries.push(e);
                    entries.len() < 300
                });
                // Resume from a cookie in the middle, as a paging readdir would.
                if let Some(mid) = entries.get(entries.len() / 2) {
                    let mut k = 0;
                    let _ = fs.readdir(ino, mid.cookie, &mut |_| {
                        k += 1;
                        k < 300
                    });
                }
                for e in entries {
                    if e.name == b"." || e.name == b".." {
                        continue;
                    }
                    let _ = fs.lookup(ino, &e.name);
                    queue.push(e.ino);
                }
                let _ = fs.lookup(ino, b"no-such-name");
            }
            FileType::Regular => {
                let mut buf = vec![0u8; a.size.min(64 << 10) as usize];
                let _ = fs.read(ino, 0, &mut buf);
                let mut tail = [0u8; 100];
                let _ = fs.read(ino, a.size.saturating_sub(50), &mut tail);
                let _ = fs.read(ino, 1000 * BLOCK_SIZE as u64, &mut tail);
            }
            FileType::Symlink => {
                let _ = fs.readlink(ino);
            }
            _ => {}
        }
        if let Ok(names) = fs.listxattr(ino) {
            for n in names.iter().take(16) {
                let _ = fs.getxattr(ino, n);
            }
        }
    }
}

// =======================================================================================
// decoders
// =======================================================================================

/// A directory made of fuzzed dentry blocks.
struct FuzzDir {
    blocks: BTreeMap<u64, Box<Block>>,
    reads: u32,
    /// Full buckets overflow (`FEATURE_INCOMPAT_DIR_V2`).
    overflow: bool,
}

impl DirBlocks for FuzzDir {
    fn read(&mut self, idx: u64) -> rollfs_core::Result<Option<Box<Block>>> {
        self.reads += 1;
        Ok(self.blocks.get(&idx).cloned())
    }
    fn write(&mut self, idx: u64, block: Box<Block>) -> rollfs_core::Result<()> {
        self.blocks.insert(idx, block);
        Ok(())
    }
    fn overflow(&self) -> bool {
        self.overflow
    }
}

fn block_from(bytes: &[u8]) -> Box<Block> {
    let mut b = rollfs_core::zero_block();
    let n = bytes.len().min(BLOCK_SIZE);
    b[..n].copy_from_slice(&bytes[..n]);
    b
}

fn small_geometry() -> Geometry {
    Geometry::compute(1024, 16, 5).expect("geometry")
}

/// Input: `[selector][flags][rest...]`; `rest` is split into 4 KiB blocks (zero-padded).
/// flags bit 0: reseal the blocks (plain or node CRC as the decoder expects) so that
/// decoding gets past the checksum.
pub fn decoders(data: &[u8]) {
    let mut inp = Input::new(data);
    let sel = inp.u8();
    let flags = inp.u8();
    let reseal = flags & 1 != 0;
    let rest = inp.bytes(usize::MAX / 2);
    let mut blocks: Vec<Box<Block>> = rest.chunks(BLOCK_SIZE).take(8).map(block_from).collect();
    if blocks.is_empty() {
        blocks.push(rollfs_core::zero_block());
    }
    const NODE_SEED: u32 = 0x1234_5678;
    match sel % 9 {
        0 => {
            let mut b = blocks.swap_remove(0);
            if reseal {
                codec::seal(&mut b);
            }
            if let Ok(sb) = Superblock::decode(0, &b) {
                let _ = sb.geometry.validate();
                let _ = sb.encode();
            }
        }
        1 => {
            let mut b = blocks.swap_remove(0);
            if reseal {
                codec::seal_seeded(&mut b, NODE_SEED);
            }
            let nid = node::footer_nid(&b);
            if let Ok(ty) = node::validate(&b, 0, nid, NODE_SEED) {
                let _ = (node::footer_flags(&b), node::footer_ofs(&b), node::footer_next_blkaddr(&b));
                match ty {
                    NodeType::Inode => {
                        use rollfs_core::node::inode;
                        let _ = (inode::size(&b), inode::links(&b), inode::name(&b).len(), inode::dir_depth(&b));
                        let _ = (inode::trunc_block(&b), inode::batch_crc(&b), inode::batch_blocks(&b));
                        for i in 0..rollfs_core::layout::ADDRS_PER_INODE {
                            let _ = (inode::addr(&b, i), inode::data_crc(&b, i));
                        }
                        for i in 0..rollfs_core::layout::NIDS_PER_INODE {
                            let _ = inode::nid(&b, i);
                        }
                        let _ = node::block_path(inode::size(&b) / BLOCK_SIZE as u64);
                    }
                    NodeType::Direct => {
                        for i in 0..rollfs_core::layout::ADDRS_PER_BLOCK {
                            let _ = (node::addr(&b, i), node::data_crc(&b, i));
                        }
                    }
                    NodeType::Indirect => {
                        for i in 0..rollfs_core::layout::NIDS_PER_BLOCK {
                            let _ = node::slot(&b, i);
                        }
                    }
                    NodeType::Xattr => {
                        let _ = rollfs_core::xattr::decode(&b, 0);
                    }
                }
            }
        }
        2 => {
            let _ = rollfs_core::xattr::decode(&blocks[0], 0);
            // The same bytes as a record node's payload: what decodes re-encodes to the
            // same bytes (the encoding is canonical, so a reader and a writer cannot
            // disagree about a record node).
            let mut r = blocks[0].clone();
            rollfs_core::nsrec::init_record_footer(&mut r);
            if let Ok(n) = rollfs_core::nsrec::decode(&r, 0) {
                let mut again = rollfs_core::zero_block();
                assert_eq!(rollfs_core::nsrec::pack(&mut again, &n.records, n.first_seq), n.records.len());
                let payload = rollfs_core::layout::NODE_FOOTER_OFFSET;
                assert!(again[..payload] == r[..payload], "a decoded record node re-encodes differently");
            }
        }
        3 => {
            // One dentry block, at an index taken from the input.
            let idx = u32::from_le_bytes([flags, sel, 0, 0]) as u64 >> 2;
            let mut b = blocks.swap_remove(0);
            if reseal {
                codec::seal(&mut b);
            }
            if let Ok(db) = dir::decode_block(idx, &b, 0) {
                let _ = (db.idx(), db.used_slots(), db.is_empty(), db.overflow(), db.check_placement());
                let _ = db.check_placement_with(&dir::NO_HASH_KEY, Some(&mut |_, _, _: &[u8]| {}));
                let names: Vec<(u32, Vec<u8>)> = db.entries().map(|e| (e.hash, e.name.to_vec())).collect();
                for (h, n) in &names {
                    assert!(db.find(*h, n).is_some(), "an entry listed by entries() is not found by find()");
                    let _ = db.find(dir::name_hash(n), n);
                }
                let _ = db.into_sealed();
            }
        }
        4 => {
            // A directory of several fuzzed blocks: lookup, iterate, insert, remove.
            let depth = (flags >> 1) as u32 % 6;
            let mut d = FuzzDir { blocks: BTreeMap::new(), reads: 0, overflow: flags & 0x80 != 0 };
            for (i, mut b) in blocks.into_iter().enumerate() {
                if reseal {
                    codec::seal(&mut b);
                }
                d.blocks.insert(i as u64, b);
            }
            let mut found = Vec::new();
            let _ = dir::iterate(&mut d, depth, 0, &mut |e| {
                found.push((e.name, e.cookie));
                found.len() < 1000
            });
            for (n, cookie) in found.iter().take(32) {
                let _ = dir::check_listed(&mut d, n, *cookie);
                let _ = dir::iterate(&mut d, depth, *cookie, &mut |_| false);
            }
            let found: Vec<Vec<u8>> = found.into_iter().map(|(n, _)| n).collect();
            for n in found.iter().take(32) {
                let _ = dir::lookup(&mut d, depth, n);
            }
            let mut depth2 = depth;
            let _ = dir::insert(&mut d, &mut depth2, b"fuzz-inserted", 77, FileType::Regular);
            let _ = dir::lookup(&mut d, depth2, b"fuzz-inserted");
            let _ = dir::remove(&mut d, depth2, b"fuzz-inserted");
            if let Some(n) = found.first() {
                let _ = dir::remove(&mut d, depth2, n);
            }
            let _ = dir::is_empty(&mut d, depth2);
        }
        5 => {
            let segment_blocks = 16u32 << ((flags >> 1) % 6);
            let b = &blocks[0];
            for j in 0..rollfs_core::layout::SIT_ENTRIES_PER_BLOCK as usize {
                let off = j * rollfs_core::layout::SIT_ENTRY_SIZE;
                let _ = rollfs_core::sit::SegEntry::decode(
                    &b[off..off + rollfs_core::layout::SIT_ENTRY_SIZE],
                    segment_blocks,
                    0,
                );
            }
        }
        6 => {
            // A checkpoint pack: header and payload from the input.
            let geo = small_geometry();
            let mut dev = MemDevice::new(geo.total_blocks);
            let pack = (flags >> 1) as usize & 1;
            let base = geo.cp_pack_addr(pack);
            let mut h = blocks.remove(0);
            let limit = geo.cp_pack_blocks as u64 - 1;
            for (i, b) in blocks.iter().enumerate().take(limit as usize) {
                dev.write(base + 1 + i as u64, b, WriteFlags::empty()).unwrap();
            }
            if reseal {
                let n = (codec::get_u32(&h[..], CP_OFF_PAYLOAD_BLOCKS) as u64).min(limit);
                let mut p = Vec::new();
                let mut b = rollfs_core::zero_block();
                for i in 0..n {
                    dev.read(base + 1 + i, &mut b).unwrap();
                    p.extend_from_slice(&b[..]);
                }
                codec::put_u32(&mut h[..], CP_OFF_PAYLOAD_CRC, codec::crc(&p));
                codec::seal(&mut h);
            }
            dev.write(base, &h, WriteFlags::empty()).unwrap();
            if let Ok(Some(cp)) = Checkpoint::read_pack(&mut dev, &geo, pack) {
                let _ = cp.encode(&geo, pack);
            }
            let _ = Checkpoint::read_newest(&mut dev, &geo);
        }
        7 => {
            // NAT and SIT loaders: block 0 of each table from the input.
            let geo = small_geometry();
            let mut dev = MemDevice::new(geo.total_blocks);
            let mut b0 = blocks.swap_remove(0);
            if reseal {
                codec::seal(&mut b0);
            }
            let v = u64::MAX;
            if flags & 2 == 0 {
                for i in 0..geo.nat_blocks {
                    let mut b = if i == 0 { b0.clone() } else { rollfs_core::zero_block() };
                    if i != 0 {
                        codec::meta_seal(&mut b, rollfs_core::nat::NAT_MAGIC, i, 1);
                    }
                    dev.write(geo.nat_addr(i, 0), &b, WriteFlags::empty()).unwrap();
                }
                let slots = vec![0u8; geo.nat_blocks as usize];
                if let Ok(nat) = rollfs_core::nat::Nat::load(&mut dev, &geo, slots, &[], v) {
                    let _ = (nat.used_count(), nat.available(), nat.iter_used().count());
                }
            } else {
                for i in 0..geo.sit_blocks {
                    let mut b = if i == 0 { b0.clone() } else { rollfs_core::zero_block() };
                    if i != 0 {
                        codec::meta_seal(&mut b, rollfs_core::sit::SIT_MAGIC, i, 1);
                    }
                    dev.write(geo.sit_addr(i, 0), &b, WriteFlags::empty()).unwrap();
                }
                let slots = vec![0u8; geo.sit_blocks as usize];
                if let Ok(sit) = rollfs_core::sit::Sit::load(&mut dev, &geo, slots, &[], v) {
                    let _ = sit.valid_total();
                }
            }
        }
        _ => {
            // Geometry fields straight from the input.
            let b = &blocks[0];
            let g = Geometry {
                total_blocks: codec::get_u64(&b[..], 0) % (1 << 20),
                segment_blocks: codec::get_u32(&b[..], 8),
                cp_pack_blocks: codec::get_u32(&b[..], 12),
                nat_start: codec::get_u32(&b[..], 16),
                nat_blocks: codec::get_u32(&b[..], 20),
                sit_start: codec::get_u32(&b[..], 24),
                sit_blocks: codec::get_u32(&b[..], 28),
                ssa_start: codec::get_u32(&b[..], 32),
                main_start: codec::get_u32(&b[..], 36),
                main_segments: codec::get_u32(&b[..], 40),
                nid_count: codec::get_u32(&b[..], 44),
                reserved_segments: codec::get_u32(&b[..], 48),
                max_main_segments: codec::get_u32(&b[..], 68),
            };
            if g.validate().is_ok() {
                let _ = (g.main_blocks(), g.main_end(), g.cp_pack_addr(1), g.ssa_addr(g.main_segments - 1, 1));
            }
            let _ = Geometry::compute(codec::get_u64(&b[..], 52) % (1 << 22), codec::get_u32(&b[..], 60), b[64] as u32);
        }
    }
}

// =======================================================================================
// ops_vs_model (the run loop of core/tests/model.rs, driven by bytes)
// =======================================================================================

pub use rollfs_testkit::ops::{run as run_model, Op};

/// Operations that [`ops_vs_model`] runs at most.
pub const MAX_OPS: usize = 64;

pub fn decode_ops(data: &[u8]) -> Vec<Op> {
    let mut i = Input::new(data);
    let mut ops = Vec::new();
    while !i.is_empty() && ops.len() < MAX_OPS {
        let op = match i.u8() % 20 {
            0 | 1 => Op::Create(i.u8(), i.u8()),
            2 => Op::Mkdir(i.u8(), i.u8()),
            3 | 4 => Op::Write(i.u8(), i.u16(), i.u16(), i.u8()),
            5 => Op::Truncate(i.u8(), i.u16()),
            6 => Op::Unlink(i.u8(), i.u8()),
            7 => Op::Rmdir(i.u8(), i.u8()),
            8 => Op::Rename(i.u8(), i.u8(), i.u8(), i.u8(), i.u8() % 3),
            9 => Op::Link(i.u8(), i.u8(), i.u8()),
            10 => Op::Chmod(i.u8(), i.u16()),
            11 => Op::SetXattr(i.u8(), i.u8(), i.u8()),
            12 => Op::RemoveXattr(i.u8(), i.u8()),
            13 => Op::Symlink(i.u8(), i.u8()),
            14 => Op::Sync,
            15 => Op::Remount,
            16 | 17 => Op::Fsync(i.u8(), i.bool()),
            18 => Op::Atomic(i.u8(), i.u16(), i.u16(), i.u8(), i.bool()),
            _ => Op::Read(i.u8(), i.u16(), i.u16()),
        };
        ops.push(op);
    }
    ops
}

/// Runs the decoded operations against the filesystem and the model
/// (`rollfs_testkit::ops::run`); panics on any divergence, lost durable data after a power
/// loss, or an unclean fsck.
pub fn ops_vs_model(data: &[u8]) {
    let ops = decode_ops(data);
    if let Err(e) = run_model(&ops) {
        panic!("model divergence: {e}\nops: {ops:?}");
    }
}
