//! The [`Filesystem`] API: what a FUSE driver and the simulator call.
//!
//! Every call that changes anything takes the caller's time ([`Timestamp`]); calls that
//! create files take the caller's [`Credentials`]. Permission checks are the driver's
//! (FUSE `default_permissions`); the core records ownership and modes.
//!
//! Concurrency: the core is a single-threaded state machine (`&mut self`). Calls never
//! wait for a device flush while they could avoid it: writes go to the write-back cache and
//! only `sync`/`fsync`/checkpoints reach the device. A multi-threaded driver holds a lock
//! around calls; the fsync path is split (see `fsync`) so that the flush itself can be
//! issued outside the lock and shared by concurrent fsyncs (group commit).

use crate::checkpoint::Checkpoint;
use crate::device::{BlockDevice, WriteFlags};
use crate::error::{Error, Result};
use crate::layout::*;
use crate::nat::{Nat, NatEntry};
use crate::node::{self, inode, FileType, NodeType};
use crate::segment::{Log, SegmentManager, REMOVAL_FLOOR_SEGMENTS};
use crate::sit::Sit;
use crate::ssa::{Ssa, Summary};
use crate::stats::Stats;
use crate::superblock::{read_superblock, Superblock};
use crate::{Block, Ino, Nid};
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

/// A point in time supplied by the caller: seconds and nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    pub sec: i64,
    pub nsec: u32,
}

impl Timestamp {
    pub const fn new(sec: i64, nsec: u32) -> Timestamp {
        Timestamp { sec, nsec }
    }
}

/// Who is making a call: recorded as the owner of new files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Credentials {
    pub uid: u32,
    pub gid: u32,
}

/// Attributes of an inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr {
    pub ino: Ino,
    pub size: u64,
    /// Allocated space in 512-byte units, as `st_blocks`: the file's data blocks and the
    /// holes fallocate reserved for it (not its tree nodes).
    pub blocks: u64,
    pub kind: FileType,
    /// Permission bits (the low 12 bits of the mode).
    pub perm: u16,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    pub rdev: u32,
    pub atime: Timestamp,
    pub mtime: Timestamp,
    pub ctime: Timestamp,
    pub crtime: Timestamp,
    pub generation: u32,
}

/// What `setattr` changes; `None` leaves a field alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetAttr {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// Truncate or extend (extension reads as zeros).
    pub size: Option<u64>,
    pub atime: Option<Timestamp>,
    pub mtime: Option<Timestamp>,
    pub ctime: Option<Timestamp>,
}

/// One directory entry from `readdir`. `cookie` resumes the listing after this entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub ino: Ino,
    pub kind: FileType,
    pub name: Vec<u8>,
    pub cookie: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatFs {
    pub block_size: u32,
    pub blocks: u64,
    pub blocks_free: u64,
    pub blocks_avail: u64,
    pub files: u64,
    pub files_free: u64,
    pub name_max: u32,
}

bitflags::bitflags! {
    /// Flags of `rename`, with Linux's values.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct RenameFlags: u32 {
        const NOREPLACE = 1;
        const EXCHANGE = 2;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum XattrSetMode {
    #[default]
    Any,
    /// XATTR_CREATE: fail with EEXIST if it exists.
    Create,
    /// XATTR_REPLACE: fail with ENODATA if it does not exist.
    Replace,
}

/// Options of `format` (mkfs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MkfsOptions {
    /// Segment size in blocks (power of two, 16..=512). Default 512 (2 MiB).
    pub segment_blocks: u32,
    /// Percent of main-area segments kept in reserve for cleaning.
    pub overprovision_pct: u32,
    /// Volume label (at most 32 bytes).
    pub label: Vec<u8>,
    /// Volume UUID, supplied by the caller (the core draws no randomness).
    pub uuid: [u8; 16],
    /// Creation time; also the root directory's times.
    pub time: Timestamp,
    /// Owner of the root directory.
    pub root_owner: Credentials,
    /// Secret key of the directory name hash (random per filesystem, supplied by the
    /// caller; all zero = the unkeyed hash of images made before it existed).
    pub hash_seed: [u8; 16],
    /// Root reserve recorded in the superblock, in percent (None: the mount decides).
    pub root_reserve_pct: Option<u32>,
    /// Data checksums (`FEATURE_RO_COMPAT_DATASUM`): a CRC32C of every data block beside
    /// its address, verified on every read. On by default; off (`-O nodatasum`) only to
    /// measure what they cost.
    pub data_checksums: bool,
    /// Directories version 2 (`FEATURE_INCOMPAT_DIR_V2`): per-directory name hash keys, and
    /// a bucket full in every level overflows rather than refusing a name. Off in the core's
    /// default, so that its images (and the golden image) stay those older readers mount;
    /// `rollfs mkfs` and the simulator turn it on.
    pub dir_v2: bool,
    /// Persistent reservations (`FEATURE_INCOMPAT_PREALLOC`): fallocate's reserved holes are
    /// `NEW_ADDR` pointers on disk and survive a remount and a crash. Off in the core's
    /// default, as `dir_v2`; `rollfs mkfs` and the simulator turn it on.
    pub prealloc_on_disk: bool,
    /// Inline data (`FEATURE_INCOMPAT_INLINE`): files of at most 3,656 bytes keep them in
    /// the inode, no data block. Off in the core's default, as `dir_v2`; `rollfs mkfs` and
    /// the simulator turn it on.
    pub inline_data: bool,
    /// Namespace records in the fsync chain (`FEATURE_INCOMPAT_NS_RECORDS`): an fsync that
    /// needs names durable writes the records of every directory-entry change since the
    /// checkpoint instead of writing a checkpoint. Off in the core's default, as `dir_v2`
    /// (what older binaries read); `rollfs mkfs` and the simulator turn it on (`-O nonsrec`
    /// off).
    pub ns_records: bool,
    /// Data beside its chain (`FEATURE_INCOMPAT_MIXED_NODE`): a small fsync batch writes its
    /// data blocks in the warm node log right after its nodes, one device range. Off in the
    /// core's default, as `dir_v2`; `rollfs mkfs` and the simulator turn it on.
    pub mixed_node: bool,
    /// Summaries of open segments in the checkpoint (`FEATURE_INCOMPAT_CP_SUMMARIES`): a
    /// checkpoint carries the summary of each segment a log is filling in its payload
    /// instead of writing it to its SSA slot. Off in the core's default, as `dir_v2`;
    /// `rollfs mkfs` and the simulator turn it on.
    pub cp_summaries: bool,
    /// Room to grow (`FEATURE_INCOMPAT_GROW`, `mkfs --max-size`): the metadata areas are
    /// laid out for a device of this many blocks, so that `rollfs resize` can grow the
    /// filesystem in place up to it. 0 (the default), or not above the device: no room.
    pub max_blocks: u64,
}

impl Default for MkfsOptions {
    fn default() -> Self {
        MkfsOptions {
            segment_blocks: crate::layout::SEGMENT_BLOCKS_DEFAULT,
            overprovision_pct: 5,
            label: Vec::new(),
            uuid: [0; 16],
            time: Timestamp::default(),
            root_owner: Credentials::default(),
            hash_seed: [0; 16],
            root_reserve_pct: None,
            data_checksums: true,
            dir_v2: false,
            prealloc_on_disk: false,
            inline_data: false,
            ns_records: false,
            mixed_node: false,
            cp_summaries: false,
            max_blocks: 0,
        }
    }
}

/// Options of `mount`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MountOptions {
    /// Bound on dirty cached data and nodes, in bytes; reaching it writes a checkpoint.
    pub dirty_bytes_max: u64,
    /// Bound on clean cached blocks, in bytes.
    pub clean_cache_bytes_max: u64,
    /// Mount read-only: no recovery writes, every change is EROFS.
    pub read_only: bool,
    /// Discard (TRIM) segments that a checkpoint frees.
    pub discard: bool,
    /// Slack space recycling: when free segments run low, data fills the holes of used
    /// segments instead of waiting for cleaning (see `segment`). Off: cleaning only.
    pub ssr: bool,
    /// Blocks of the user capacity only privileged callers may fill (ext4's reserved
    /// blocks, f2fs's `reserve_root`): a user filling the filesystem leaves root room to
    /// repair it. Who is privileged is the driver's to say ([`Filesystem::set_privileged`]).
    pub root_reserve_blocks: u64,
    /// The reserve as a percentage of the filesystem's size instead (ext4's `-m`): when set,
    /// `root_reserve_blocks` is computed from it at mount, from the size the checkpoint
    /// records (not the device's, which may be larger), and again when the filesystem grows.
    pub root_reserve_pct: Option<u32>,
    /// Entropy from the driver (the core has none of its own): a read-write mount's first
    /// checkpoint jumps the version by an amount drawn from it, the time, the UUID and the
    /// version, so that no earlier use of the same image can have written a chain this
    /// mount's recovery would take for its own (`checkpoint::version_jump`). Drivers pass
    /// a fresh random value per mount; 0 leaves the time to tell two mounts apart.
    pub mount_nonce: u64,
}

impl Default for MountOptions {
    fn default() -> Self {
        MountOptions {
            dirty_bytes_max: 64 << 20,
            clean_cache_bytes_max: 64 << 20,
            read_only: false,
            discard: true,
            ssr: true,
            root_reserve_blocks: 0,
            root_reserve_pct: None,
            mount_nonce: 0,
        }
    }
}

/// The root reserve for a filesystem of geometry `geo`: `opts.root_reserve_pct` of its size
/// when set, else `opts.root_reserve_blocks`.
pub(crate) fn root_reserve_blocks(opts: &MountOptions, geo: &Geometry) -> u64 {
    match opts.root_reserve_pct {
        Some(p) => geo.total_blocks * p as u64 / 100,
        None => opts.root_reserve_blocks,
    }
}

/// Most bytes the records kept since the last checkpoint (`removed_names`, `needs_cp`,
/// `new_since_cp`, `renamed_dirs`, the NAT's freed and changed ids, ...) may take between
/// two calls: past it, the call writes a checkpoint, which empties them (counted in
/// `Stats::since_cp_bound_checkpoints`). 1 MiB: a few thousand renames or unlinks of long
/// names, some 65,000 of short ones.
pub const SINCE_CP_BYTES_MAX: u64 = 1 << 20;
use crate::since_cp::{SINCE_CP_ID_BYTES, SINCE_CP_PAIR_BYTES};

/// What the in-memory state takes ([`Filesystem::memory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Memory {
    /// Node blocks in the node cache, clean and dirty (4 KiB each).
    pub cached_nodes: u64,
    /// Dirty data, nodes and segment summaries, in bytes (bounded by `dirty_bytes_max`).
    pub dirty_bytes: u64,
    /// The since-checkpoint records, in bytes (bounded by `SINCE_CP_BYTES_MAX`, 1 MiB).
    pub since_cp_bytes: u64,
    /// Names in `removed_names`.
    pub removed_names: u64,
    /// Directories whose parent is recorded in memory, and the bytes that takes.
    pub dir_parents: u64,
    pub dir_parents_bytes: u64,
}

/// A cached node block.
pub(crate) struct CachedNode {
    pub block: Box<Block>,
    pub dirty: bool,
}

/// The filesystem: a mounted image and all in-memory state.
pub struct Filesystem<D: BlockDevice> {
    pub(crate) dev: D,
    pub(crate) sb: Superblock,
    pub(crate) geo: Geometry,
    /// CRC seed of node blocks, derived from the volume UUID.
    pub(crate) seed: u32,
    /// The last committed checkpoint (its journals are not kept up to date).
    pub(crate) cp: Checkpoint,
    pub(crate) cp_pack: usize,
    pub(crate) nat: Nat,
    pub(crate) sit: Sit,
    pub(crate) ssa: Ssa,
    pub(crate) seg: SegmentManager,
    pub(crate) nodes: BTreeMap<Nid, CachedNode>,
    pub(crate) dirty_nodes: crate::dirty_nodes::DirtyNodes,
    /// Dirty data blocks by (inode, file block index): the write-back cache.
    pub(crate) data: BTreeMap<(Ino, u64), Box<Block>>,
    pub(crate) open_counts: BTreeMap<Ino, u32>,
    /// Unlinked inodes kept alive by open handles.
    pub(crate) orphans: BTreeSet<Ino>,
    pub(crate) read_only: bool,
    /// Set with `read_only` after a failed write or flush: later changes fail with
    /// `Error::ShutDown` (EIO) rather than EROFS. Reads go on from the caches.
    pub(crate) shut_down: bool,
    pub(crate) opts: MountOptions,
    pub(crate) stats: Stats,
    pub(crate) next_generation: u32,
    pub(crate) valid_inodes: u32,
    pub(crate) written_blocks: u64,
    /// Caller time of the latest call, for segment ages.
    pub(crate) now_sec: u64,
    /// What changed since the last checkpoint that decides how an fsync is made durable
    /// (created, relinked, renamed directories, removed names, the chain's extent, ...).
    pub(crate) since_cp: crate::since_cp::SinceCheckpoint,
    /// Holes reserved by fallocate (in memory, for the life of the mount).
    pub(crate) prealloc: crate::prealloc::Reservations,
    /// Dirty blocks moved by segment cleaning: written to the cold data log.
    pub(crate) gc_cold: BTreeSet<(Ino, u64)>,
    /// Blocks moved by cleaning whose contents failed their checksum: they move with the
    /// checksum they had, so that the corruption stays detected (cleaning never launders a
    /// bad block into a good one). A write to the block drops the entry.
    pub(crate) gc_kept_crcs: BTreeMap<(Ino, u64), u32>,
    /// Clean dentry blocks validated since the mount (forgotten before their address is
    /// written or discarded).
    pub(crate) dentry_cache: crate::dcache::DentryCache,
    /// Whether data blocks carry checksums (the superblock's `FEATURE_RO_COMPAT_DATASUM`).
    pub(crate) data_checksums: bool,
    /// Whether fallocate's reservations are `NEW_ADDR` pointers in the tree, persisted
    /// (`FEATURE_INCOMPAT_PREALLOC`), rather than `prealloc`'s in-memory runs.
    pub(crate) prealloc_on_disk: bool,
    /// Whether new regular files start inline (`FEATURE_INCOMPAT_INLINE`). Inline inodes
    /// are only ever met on such an image (fsck reports one elsewhere).
    pub(crate) inline_data: bool,
    /// Whether every directory-entry change is kept as a namespace record
    /// (`SinceCheckpoint::ns_record`): on an image with `FEATURE_INCOMPAT_NS_RECORDS`, and
    /// where a test turns it on without the bit ([`Filesystem::keep_namespace_records`]).
    pub(crate) ns_records: bool,
    /// Whether small fsync batches write their data beside their nodes in the warm node log
    /// (`FEATURE_INCOMPAT_MIXED_NODE`): `fsync::write_batch`, and every reader of a node
    /// segment's summary takes an entry with `SSA_OFS_DATA` for a data block.
    pub(crate) mixed_node: bool,
    /// Whether checkpoints carry the summaries of open segments in their payload
    /// (`FEATURE_INCOMPAT_CP_SUMMARIES`; `Ssa::flush`).
    pub(crate) cp_summaries: bool,
    /// Open atomic-write sessions.
    pub(crate) atomic: BTreeMap<Ino, crate::atomic::AtomicSession>,
    /// The riders of the fsync (or atomic commit) being written (`fsync::riders`): set
    /// before its records are written, whose last node counts their batches
    /// (`nschain::write_pending_records`); emptied by `fsync::write_riders`, and after every
    /// fsync and commit, failed ones too (invariant: empty outside them — a rider left over
    /// from a commit refused for room was written by a later commit that wrote no record,
    /// its rename's record with it but not as a group: review 56).
    pub(crate) group_riders: Vec<Ino>,
    /// Each directory's parent, as its inode records it, for the walks up the tree
    /// (`walk_up`): see `parents.rs`.
    pub(crate) dir_parents: crate::parents::DirParents,
    /// A file's name its inode stopped recording when a link recorded another, so that
    /// removing that link puts a right parent back: see `other_names.rs`.
    pub(crate) other_names: crate::other_names::OtherNames,
    /// Set while mount rolls the chain forward: recovery only uses the room the fsyncs
    /// reserved for it, so it never cleans, and never writes a checkpoint before its own.
    pub(crate) recovering: bool,
    /// What the next checkpoint adds to the version: the mount's jump for its first one
    /// (`checkpoint::version_jump`), 1 after it (and always 1 outside a mount: repair).
    pub(crate) version_step: u64,
    /// Set while an atomic commit makes room (cleaning then counts in `fsync_gc_rounds`;
    /// an fsync's own cleaning is counted where it runs, `make_room_for_chains`).
    pub(crate) in_fsync: bool,
    /// Whether the current caller may use the root reserve (see `set_privileged`).
    pub(crate) privileged: bool,
    /// Counts the logical changes operations make to the in-memory filesystem (a node
    /// dirtied, created or freed, a block put in or dropped from the write-back cache, an
    /// orphan or open count changed, an atomic session's data staged or taken). Checkpoints,
    /// cleaning and recovery move what exists without changing what it says, so they leave
    /// it as it was. [`Filesystem::op`] compares it before and after an operation: an
    /// operation that fails after its first change has broken failure atomicity
    /// (invariant 7), and the filesystem shuts down before anything could persist the half.
    pub(crate) change_count: u64,
}

/// Whose room a change may take (DESIGN.md, "Space").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Room {
    /// An ordinary change: leaves the cleaner's reserve to checkpoints and cleaning.
    User,
    /// A removal (unlink, rmdir, truncation to a smaller size, a hole punch, removing an
    /// xattr): may also use the cleaner's reserve down to [`REMOVAL_FLOOR_SEGMENTS`], so
    /// that deleting never needs room that ordinary writes can take.
    Removal,
}

pub(crate) fn volume_seed(uuid: &[u8; 16]) -> u32 {
    crate::codec::crc(uuid)
}

impl<D: BlockDevice> Filesystem<D> {
    // ---- mount -------------------------------------------------------------------

    /// Mounts the filesystem on `dev`: loads the newest valid checkpoint, removes orphans
    /// left by a crash, and (unless read-only) writes a checkpoint if it changed anything.
    pub fn mount(dev: D, opts: &MountOptions, now: Timestamp) -> Result<Filesystem<D>> {
        Filesystem::mount_inner(dev, opts, now, true)
    }

    /// Mounts read-only from the newest checkpoint alone, without rolling the fsync chain
    /// forward (what fsck checks): for a reader that must see *something* of an image whose
    /// chain cannot be replayed (`rollfs dump` falls back to it when [`Filesystem::mount`]
    /// fails). Writes nothing.
    pub fn mount_checkpoint(dev: D, opts: &MountOptions, now: Timestamp) -> Result<Filesystem<D>> {
        Filesystem::mount_inner(dev, &MountOptions { read_only: true, ..*opts }, now, false)
    }

    /// Mount; `recover: false` loads the checkpoint only (fsck checks the durable state).
    pub(crate) fn mount_inner(mut dev: D, opts: &MountOptions, now: Timestamp, recover: bool) -> Result<Filesystem<D>> {
        let sb = read_superblock(&mut dev)?;
        let (cp, cp_pack) = Checkpoint::read_newest(&mut dev, &sb.geometry)?;
        // A grown image's size is its checkpoint's (the superblock keeps mkfs's).
        let geo = cp.geometry.unwrap_or(sb.geometry);
        if cp.reserved_blocks != 0 && !sb.prealloc_on_disk() {
            // Only an image with persistent reservations has any to count.
            return Err(Error::corrupt(
                geo.cp_pack_addr(cp_pack),
                "checkpoint: reserved blocks without persistent reservations",
            ));
        }
        if !cp.summaries.is_empty() && !sb.cp_summaries() {
            // Only an image with the feature has summaries in its checkpoints.
            return Err(Error::corrupt(
                geo.cp_pack_addr(cp_pack),
                "checkpoint: open-segment summaries without FEATURE_INCOMPAT_CP_SUMMARIES",
            ));
        }
        let nat = Nat::load(&mut dev, &geo, cp.nat_slots.clone(), &cp.nat_journal, cp.version)?;
        let sit = Sit::load(&mut dev, &geo, cp.sit_slots.clone(), &cp.sit_journal, cp.version)?;
        let seg = SegmentManager::from_checkpoint(&geo, &sit, cp.logs)?;
        let mut fs = Filesystem::assemble(dev, sb, cp, cp_pack, nat, sit, seg, opts, now);
        // The root must be a directory.
        let root = fs.inode_block(ROOT_INO)?;
        if FileType::from_mode(inode::mode(&root) as u32) != Some(FileType::Directory) {
            return Err(Error::corrupt(fs.nat_addr(ROOT_INO), "root inode is not a directory"));
        }
        if !recover {
            return Ok(fs);
        }
        // Roll forward what was fsync'd after the checkpoint (in memory; read-only mounts
        // see it too but write nothing).
        fs.recovering = true;
        let recovered = fs.roll_forward(now);
        fs.recovering = false;
        let recovered = recovered?;
        let orphans = fs.cp.orphans.clone();
        if fs.read_only {
            return Ok(fs);
        }
        for &ino in &orphans {
            fs.evict_inode(ino)?;
        }
        // Every read-write mount writes a checkpoint before anything else can write a node:
        // the recovered state's, and the one whose jumped version this mount's chain carries
        // (see `checkpoint::version_jump`: a chain stamped with a version an earlier use of
        // the image also stamped could be continued by that use's stale nodes).
        fs.version_step = crate::checkpoint::version_jump(opts.mount_nonce, now, &fs.sb.uuid, fs.cp.version);
        fs.checkpoint(false, now)?;
        // Superblock copies a crash left different are made one again (after the
        // checkpoint: a mount that cannot write its checkpoint writes nothing else).
        crate::superblock::heal_copies(&mut fs.dev, &fs.sb)?;
        fs.stats.recovered_batches = recovered.batches_applied;
        fs.stats.recovered_records = recovered.records_applied;
        fs.stats.recovery_records_rejected = recovered.records_rejected;
        fs.stats.recovered_nodes_walked = recovered.nodes_walked;
        Ok(fs)
    }

    /// Builds the in-memory filesystem from a checkpoint and its loaded tables: mount, and
    /// fsck repair (which loads and rebuilds the tables its own way).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        dev: D,
        sb: Superblock,
        cp: Checkpoint,
        cp_pack: usize,
        nat: Nat,
        sit: Sit,
        seg: SegmentManager,
        opts: &MountOptions,
        now: Timestamp,
    ) -> Filesystem<D> {
        let geo = cp.geometry.unwrap_or(sb.geometry);
        let ssa = Ssa::from_checkpoint(&geo, &cp);
        let seed = volume_seed(&sb.uuid);
        // An image with read-only-compatible features this code does not know can be read
        // but must not be written.
        let unknown_ro = sb.feature_ro_compat & !crate::superblock::FEATURE_RO_COMPAT_SUPPORTED != 0;
        let data_checksums = sb.feature_ro_compat & crate::superblock::FEATURE_RO_COMPAT_DATASUM != 0;
        let prealloc_on_disk = sb.prealloc_on_disk();
        let inline_data = sb.inline_data();
        let (ns_records, mixed_node, cp_summaries) = (sb.ns_records(), sb.mixed_node(), sb.cp_summaries());
        let mut seg = seg;
        seg.ssr_into_node_segments = mixed_node;
        let prealloc = crate::prealloc::Reservations::with_total(if prealloc_on_disk { cp.reserved_blocks } else { 0 });
        Filesystem {
            dev,
            seed,
            geo,
            sb,
            next_generation: cp.next_generation,
            valid_inodes: cp.valid_inodes,
            written_blocks: cp.written_blocks,
            cp,
            cp_pack,
            nat,
            sit,
            ssa,
            seg,
            nodes: BTreeMap::new(),
            dirty_nodes: Default::default(),
            data: BTreeMap::new(),
            open_counts: BTreeMap::new(),
            orphans: BTreeSet::new(),
            read_only: opts.read_only || unknown_ro,
            shut_down: false,
            opts: MountOptions { root_reserve_blocks: root_reserve_blocks(opts, &geo), ..*opts },
            stats: Stats::default(),
            now_sec: now.sec.max(0) as u64,
            prealloc,
            atomic: BTreeMap::new(),
            group_riders: Vec::new(),
            gc_cold: BTreeSet::new(),
            gc_kept_crcs: BTreeMap::new(),
            dentry_cache: Default::default(),
            data_checksums,
            prealloc_on_disk,
            inline_data,
            ns_records,
            mixed_node,
            cp_summaries,
            since_cp: Default::default(),
            dir_parents: Default::default(),
            other_names: Default::default(),
            recovering: false,
            version_step: 1,
            in_fsync: false,
            privileged: true,
            change_count: 0,
        }
    }

    /// Writes a clean checkpoint and returns the device.
    pub fn unmount(mut self, now: Timestamp) -> Result<D> {
        if !self.read_only {
            // Files still open are released: an unlinked open file dies with the mount.
            let orphans: Vec<Ino> = self.orphans.iter().copied().collect();
            self.open_counts.clear();
            // Uncommitted atomic writes are abandoned, as at a crash.
            self.atomic.clear();
            for ino in orphans {
                self.evict_inode(ino)?;
            }
            self.orphans.clear();
            self.checkpoint(true, now)?;
        }
        Ok(self.dev)
    }

    /// Says whether the caller of the following calls may fill the root reserve
    /// (`MountOptions::root_reserve_blocks`). A driver serving several users sets it before
    /// each request; the default is privileged (the core's own callers, tests, the
    /// simulator).
    pub fn set_privileged(&mut self, privileged: bool) {
        self.privileged = privileged;
    }

    /// Gives the device back without writing anything (what a power loss leaves).
    pub fn into_device(self) -> D {
        self.dev
    }
    pub fn device(&self) -> &D {
        &self.dev
    }
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.dev
    }
    /// Keeps (or stops keeping, from the next checkpoint's view) every directory-entry change
    /// as a namespace record. On by itself on an image with `FEATURE_INCOMPAT_NS_RECORDS`
    /// (where fsync writes the records and roll-forward replays them); tests turn it on
    /// elsewhere only to check that the records are complete (nothing writes them there).
    #[doc(hidden)]
    pub fn keep_namespace_records(&mut self, on: bool) {
        if on && !self.ns_records {
            // The changes made since the checkpoint while records were not kept are in no
            // record: the list is not complete until the next checkpoint.
            self.since_cp.ns_records_missed();
        }
        self.ns_records = on;
    }

    /// The namespace records since the last checkpoint, in order, and whether they are
    /// complete (every change since the checkpoint expressible as a record).
    #[doc(hidden)]
    pub fn namespace_records(&self) -> (&[crate::nsrec::NsRecord], bool) {
        self.since_cp.ns_records()
    }

    pub fn stats(&self) -> Stats {
        Stats { ssr_blocks: self.seg.ssr_blocks, ..self.stats }
    }
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }
    /// Whether a failed write or flush shut the filesystem down (it is then read-only too).
    pub fn is_shut_down(&self) -> bool {
        self.shut_down
    }
    pub fn superblock(&self) -> &Superblock {
        &self.sb
    }
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    pub fn checkpoint_version(&self) -> u64 {
        self.cp.version
    }

    /// Orphans (open, unlinked inodes) a checkpoint can carry; see `check_orphan_room`.
    pub(crate) fn orphan_capacity(&self) -> u64 {
        if crate::mutant!("mutant-orphan-limit") {
            // Mutant: the old fixed limit, not enforced when unlinking: the checkpoint
            // fails instead and the filesystem turns read-only.
            return u64::MAX;
        }
        self.geo.orphan_capacity() as u64
    }

    pub(crate) fn nat_addr(&self, nid: Nid) -> u64 {
        self.nat.get(nid).map(|e| e.addr as u64).unwrap_or(0)
    }

    pub(crate) fn touch(&mut self, now: Timestamp) {
        self.now_sec = self.now_sec.max(now.sec.max(0) as u64);
    }

    pub(crate) fn check_writable(&self) -> Result<()> {
        if self.shut_down {
            Err(Error::ShutDown)
        } else if self.read_only {
            Err(Error::ReadOnly)
        } else {
            Ok(())
        }
    }

    // ---- space ---------------------------------------------------------------------

    /// Blocks that can still be allocated for user data and the nodes pointing at it,
    /// beyond what the dirty cache will need at the next write-back. Conservative: room
    /// left in open segments is not counted (each log can only use its own), so what the
    /// reserve holds back is always really there for checkpoints, cleaning and removals.
    pub(crate) fn free_blocks_for_user(&self) -> u64 {
        let seg_blocks = self.geo.segment_blocks as u64;
        let free = self.seg.free_segments().saturating_sub(self.seg.reserved_segments()) as u64 * seg_blocks;
        let pending = (self.data.len() + self.dirty_nodes.len()) as u64;
        free.saturating_sub(pending)
    }

    /// Whether an ordinary change that needs `need` more blocks leaves, after the next
    /// checkpoint, the cleaner's reserve free: the checkpoint writes the dirty cache and
    /// `need`, and opens at most a segment per segment's worth of blocks plus one for each
    /// log whose open segment could fill ([`SegmentManager::segments_to_open_bound`]).
    /// Unlike [`Filesystem::free_blocks_for_user`], room left in open segments counts
    /// when it is enough for every log; and the logs' rounding is never taken from the
    /// reserve, which removals rely on.
    pub(crate) fn room_for_user(&self, need: u64) -> bool {
        let total = (self.data.len() + self.dirty_nodes.len()) as u64 + need;
        let free = self.seg.free_segments() as u64;
        free >= self.seg.reserved_segments() as u64 + self.seg.segments_to_open_bound(total)
    }

    /// Blocks users may fill: the main area less the overprovisioning (the cleaner's
    /// reserve and as much slack again) and one open segment per log. statfs reports this
    /// as the size.
    pub(crate) fn user_capacity(&self) -> u64 {
        self.capacity(self.privileged)
    }

    /// [`Filesystem::user_capacity`] for a privileged caller (all of it) or not (less the
    /// root reserve).
    pub(crate) fn capacity(&self, privileged: bool) -> u64 {
        let all = self.geo.user_blocks();
        if privileged {
            all
        } else {
            all.saturating_sub(self.opts.root_reserve_blocks)
        }
    }

    /// Valid blocks in the main area plus what the dirty cache will add (counted as if
    /// every dirty block were new: conservative) plus the holes fallocate reserved.
    pub(crate) fn used_blocks(&self) -> u64 {
        self.sit.valid_total() + (self.data.len() + self.dirty_nodes.len()) as u64 + self.prealloc.total()
    }

    /// Makes sure `blocks` more blocks can be written: ENOSPC if they would not fit the
    /// user capacity; otherwise checkpoints (prefree segments become free) and cleans
    /// segments until they fit physically.
    pub(crate) fn ensure_space(&mut self, blocks: u64, now: Timestamp) -> Result<()> {
        self.ensure_space_for(blocks, blocks, now)
    }

    /// As [`Filesystem::ensure_space`] for a write of `blocks` blocks of which `new_blocks`
    /// fill holes (only those add to what is in use; overwrites need room to be written to
    /// but cleaning gets it back).
    pub(crate) fn ensure_space_for(&mut self, blocks: u64, new_blocks: u64, now: Timestamp) -> Result<()> {
        self.ensure_room(Room::User, blocks, new_blocks, now)
    }

    /// [`Filesystem::ensure_space_for`] for a change of class `room`.
    pub(crate) fn ensure_room(&mut self, room: Room, blocks: u64, new_blocks: u64, now: Timestamp) -> Result<()> {
        let new_need = if new_blocks == 0 { 0 } else { new_blocks + new_blocks / 512 + 2 };
        self.ensure_room_for(room, blocks, new_need, None, now)
    }

    /// [`Filesystem::ensure_space_for`] for a write that counted every block it adds,
    /// the tree nodes it creates included (`new_blocks`): no margin is added for them.
    pub(crate) fn ensure_space_exact(&mut self, blocks: u64, new_blocks: u64, now: Timestamp) -> Result<()> {
        self.ensure_room_for(Room::User, blocks, new_blocks, None, now)
    }

    /// [`Filesystem::ensure_room`] with `new_need`, the blocks the change adds (margin
    /// included); a removal also says what it writes, per log (`own`): when the room
    /// beyond the cleaner's reserve is short, it is let through if the checkpoint after it
    /// fits the free segments with [`REMOVAL_FLOOR_SEGMENTS`] to spare, each log's open
    /// segment counted (see [`Filesystem::removal_fits`]).
    fn ensure_room_for(
        &mut self,
        room: Room,
        blocks: u64,
        new_need: u64,
        own: Option<&[u64; LOG_COUNT]>,
        now: Timestamp,
    ) -> Result<()> {
        if self.recovering && !crate::mutant!("mutant-cp-in-recovery") {
            // Roll-forward neither cleans nor checkpoints: the fsyncs it replays reserved
            // its room when they were acknowledged (see `fsync::recovery_room_ok`).
            return Ok(());
        }
        // Margin for the nodes a write-back dirties (a direct node per 508 blocks, inodes).
        let need = blocks + blocks / 512 + 4;
        // The root reserve limits what users add, not rewrites of what they have (nor
        // writes into holes fallocate reserved for them): those are held to the whole
        // capacity, which is what checkpoints and cleaning rely on.
        let cap = self.capacity(self.privileged || new_need == 0);
        // Slack space recycling while free segments (less a margin for the nodes) cannot
        // take what is pending: holes of used segments instead of cleaning's copies.
        let margin = crate::segment::SSR_MARGIN_SEGMENTS * self.geo.segment_blocks as u64;
        self.seg.ssr_wanted = self.opts.ssr && self.free_blocks_for_user() < need + margin;
        // Only what adds blocks is held to the capacity. A rewrite (or a removal) adds none:
        // refusing it whenever the used count is at or over the capacity (as a check of
        // `used + 0 > cap` did) left a full filesystem unable to delete anything (issue 41).
        let over_capacity = |fs: &Self| new_need > 0 && fs.used_blocks() + new_need > cap;
        if self.room_for_user(need) && !over_capacity(self) {
            return self.granted(room, need);
        }
        if over_capacity(self) {
            // Dirty blocks overwriting old ones were counted as new; a checkpoint settles it,
            // unless what is valid already leaves no room (a write-back never lowers it).
            let settled = self.sit.valid_total() + self.prealloc.total();
            if settled + new_need <= cap && (!self.data.is_empty() || !self.dirty_nodes.is_empty()) {
                self.stats.op_checkpoints += 1;
                self.checkpoint(false, now)?;
            }
            if over_capacity(self) {
                self.stats.enospc_returned += 1;
                return Err(Error::NoSpace);
            }
        }
        // Bounded: each round checkpoints or cleans at least one segment.
        for _ in 0..self.geo.main_segments + 2 {
            if self.room_for_user(need) || self.ssr_can_take(blocks) {
                return self.granted(room, need);
            }
            if let Some(own) = own {
                if self.removal_fits(own)? {
                    return self.granted(room, need);
                }
            }
            if self.seg.prefree_count() > 0 || !self.data.is_empty() || !self.dirty_nodes.is_empty() {
                self.stats.op_checkpoints += 1;
                self.checkpoint(false, now)?;
                continue;
            }
            if self.in_fsync {
                self.stats.fsync_gc_rounds += 1;
            }
            if !self.gc_round(crate::gc::GcMode::Foreground, now)? {
                break;
            }
        }
        if self.room_for_user(need) || (own.is_some() && self.removal_fits(own.unwrap())?) {
            self.granted(room, need)
        } else {
            self.stats.enospc_returned += 1;
            Err(Error::NoSpace)
        }
    }

    /// Node ids only privileged callers may take: the root reserve's share of the ids
    /// (`root_reserve_blocks` over the capacity, as a fraction of every id), so that a user
    /// who fills the filesystem with empty files (one id each, a quarter of a block's
    /// worth of the ids mkfs gives) leaves root ids to create, mkdir and grow files with
    /// (issue 35, finding 6: root's SQLite could not open its database while `df` showed
    /// 140 MiB free). Rounded up: a reserve of any blocks keeps at least one id.
    pub(crate) fn root_reserve_nids(&self) -> u64 {
        let cap = self.capacity(true).max(1);
        let reserve = self.opts.root_reserve_blocks.min(cap);
        (self.nat.nid_count() as u64 * reserve).div_ceil(cap)
    }

    /// Node ids the current caller may still take (the root reserve held back from
    /// unprivileged callers).
    pub(crate) fn nids_usable(&self) -> u64 {
        let held = if self.privileged { 0 } else { self.root_reserve_nids() };
        (self.nat.available() as u64).saturating_sub(held)
    }

    /// A change of class `room` got its `need` blocks: counts a removal that got room an
    /// ordinary change would not have (`Stats::full_device_removals`).
    fn granted(&mut self, room: Room, need: u64) -> Result<()> {
        if room == Room::Removal && !self.room_for_user(need) {
            self.stats.full_device_removals += 1;
        }
        Ok(())
    }

    /// Whether a removal writing `own` blocks per log can go ahead on a filesystem whose room
    /// beyond the cleaner's reserve is short: the checkpoint after it (the dirty
    /// cache and `own`, each log filling its open segment first) must leave
    /// [`REMOVAL_FLOOR_SEGMENTS`] free segments, so that it always fits and cleaning still
    /// has room to work. A deletion on a full filesystem mostly dirties a few directory
    /// blocks that fit in the open segments: it must not wait for cleaning to free whole
    /// segments, which segments full of small files' nodes may never give (issue 41).
    fn removal_fits(&mut self, own: &[u64; LOG_COUNT]) -> Result<bool> {
        let mut counted = BTreeSet::new();
        let mut plan = self.pending_by_log(&mut counted)?;
        for (p, o) in plan.iter_mut().zip(own) {
            *p += o;
        }
        Ok(self.seg.segments_to_open(&plan) + REMOVAL_FLOOR_SEGMENTS <= self.seg.free_segments() as u64)
    }

    /// Makes sure `count` node ids can be handed out: ids freed since the last checkpoint
    /// become reusable only when the next one commits, so a shortage writes a checkpoint
    /// (create/unlink churn must never exhaust ids). ENOSPC, changing nothing, when the
    /// ids are really in use (or, for an unprivileged caller, only the root reserve's are
    /// left).
    pub(crate) fn ensure_nids(&mut self, count: u64, now: Timestamp) -> Result<()> {
        if count == 0 || self.nids_usable() >= count {
            return Ok(());
        }
        if self.nat.freed_count() > 0 && !self.recovering {
            self.stats.nid_shortage_checkpoints += 1;
            self.stats.op_checkpoints += 1;
            self.checkpoint(false, now)?;
        }
        if self.nids_usable() >= count {
            return Ok(());
        }
        self.stats.enospc_returned += 1;
        Err(Error::NoSpace)
    }

    /// Reserves what writing back `nodes` (node ids, inodes included) will take, counting
    /// only those not dirty already: every change that dirties metadata (setattr, xattrs,
    /// link, rename, unlink) calls this before it changes anything, so that a full
    /// filesystem refuses the change (ENOSPC) instead of failing the next checkpoint.
    pub(crate) fn reserve_nodes(&mut self, nodes: &[Nid], extra_blocks: u64, now: Timestamp) -> Result<()> {
        self.reserve_nodes_in(Room::User, nodes, extra_blocks, now)
    }

    /// [`Filesystem::reserve_nodes`] for a removal (unlink, rmdir, truncation to a smaller
    /// size, hole punches, removing an xattr): when ordinary changes have taken the room
    /// beyond the cleaner's reserve, it may use the reserve (see `removal_fits`), so a full
    /// filesystem always deletes.
    pub(crate) fn reserve_for_removal(&mut self, nodes: &[Nid], extra_blocks: u64, now: Timestamp) -> Result<()> {
        self.reserve_nodes_in(Room::Removal, nodes, extra_blocks, now)
    }

    fn reserve_nodes_in(&mut self, room: Room, nodes: &[Nid], extra_blocks: u64, now: Timestamp) -> Result<()> {
        let mut k = extra_blocks;
        // What a removal writes, per log: its nodes in theirs, and its data blocks (a
        // dentry block, a file's partial last block) with the node over each counted in
        // every log they may go to.
        let mut own = [0u64; LOG_COUNT];
        for l in [Log::HotData, Log::WarmData, Log::HotNode, Log::WarmNode] {
            own[l as usize] = extra_blocks;
        }
        for (i, nid) in nodes.iter().enumerate() {
            if *nid != crate::layout::NULL_NID && !self.dirty_nodes.contains(nid) && !nodes[..i].contains(nid) {
                k += 1;
                if room == Room::Removal {
                    self.node_ref(*nid)?;
                    own[self.node_log(*nid)? as usize] += 1;
                }
            }
        }
        if k == 0 {
            return Ok(());
        }
        // Rewrites, not new blocks: they need room to be written, not user capacity.
        let own = (room == Room::Removal).then_some(own);
        self.ensure_room_for(room, k, 0, own.as_ref(), now)
    }

    /// Whether slack space recycling can take a write of `blocks` data blocks (and all
    /// dirty data) without cleaning, with the free segments left for the nodes.
    fn ssr_can_take(&self, blocks: u64) -> bool {
        let room = self.seg.ssr_room(&self.sit);
        if room == 0 {
            return false;
        }
        // The node logs append to free segments: each of the three may open one, and the
        // nodes themselves must fit, without touching the cleaner's reserve.
        let seg_blocks = self.geo.segment_blocks as u64;
        let free_segments = self.seg.free_segments().saturating_sub(self.seg.reserved_segments()) as u64;
        let node_blocks = blocks / 512 + 4 + self.dirty_nodes.len() as u64;
        room >= blocks + self.data.len() as u64 && free_segments >= 3 + node_blocks.div_ceil(seg_blocks)
    }

    /// After each mutating call: keeps dirty memory, what is recorded since the last
    /// checkpoint and the clean cache within their bounds, so that each holds between
    /// calls (DESIGN.md, "Resource bounds").
    pub(crate) fn after_change(&mut self, now: Timestamp) -> Result<()> {
        if self.recovering {
            // Roll-forward replays namespace records through the operations' own code; it
            // never checkpoints before its own checkpoint (the bounds hold again after it).
            return Ok(());
        }
        if self.dirty_bytes() > self.opts.dirty_bytes_max {
            self.stats.dirty_bound_checkpoints += 1;
            self.stats.op_checkpoints += 1;
            self.checkpoint(false, now)?;
        } else if self.since_cp_bytes() > SINCE_CP_BYTES_MAX {
            self.stats.since_cp_bound_checkpoints += 1;
            self.stats.op_checkpoints += 1;
            self.checkpoint(false, now)?;
        } else if self.records_left_for_a_checkpoint() {
            // The change left a record no fsync can write without a checkpoint: it pays for
            // it now, not the next fsync that writes records (another user's).
            self.stats.records_unexpressible_checkpoints += 1;
            self.stats.op_checkpoints += 1;
            self.checkpoint(false, now)?;
        }
        self.shrink_node_cache();
        Ok(())
    }

    /// Dirty memory, in bytes: the write-back cache, dirty nodes, and the summary blocks of
    /// the segments written since the last checkpoint (one per segment: a run of fsyncs
    /// writes segment after segment without a checkpoint, and each keeps its summary in
    /// memory until one).
    pub(crate) fn dirty_bytes(&self) -> u64 {
        (self.data.len() + self.dirty_nodes.len() + self.ssa.dirty_count()) as u64 * BLOCK_SIZE as u64
    }

    /// What the records kept since the last checkpoint take, in bytes (an estimate from
    /// their entry counts, measured with a counting allocator: a node id in a `BTreeSet`
    /// takes 9 to 12 bytes, a pair 21 to 27, a removed name 51 plus its length). Each of
    /// these grows with requests that dirty nothing a checkpoint would otherwise come for:
    /// a rename loop through fresh names (issue 35: 4 MB/s of `removed_names`), create and
    /// unlink, or setting and removing an xattr (freed node ids).
    pub(crate) fn since_cp_bytes(&self) -> u64 {
        let ids = u64::from(self.nat.freed_count()) + self.nat.dirty_count() as u64;
        let pairs = (self.gc_cold.len() + self.gc_kept_crcs.len()) as u64;
        self.since_cp.bytes() + ids * SINCE_CP_ID_BYTES + pairs * SINCE_CP_PAIR_BYTES
    }

    /// What the in-memory state takes now (counts and byte estimates), for tests and
    /// diagnostics: see [`Memory`].
    pub fn memory(&self) -> Memory {
        Memory {
            cached_nodes: self.nodes.len() as u64,
            dirty_bytes: self.dirty_bytes(),
            since_cp_bytes: self.since_cp_bytes(),
            removed_names: self.since_cp.removed_name_count(),
            dir_parents: self.dir_parents.len() as u64,
            dir_parents_bytes: self.dir_parents.bytes() as u64,
        }
    }

    /// Checks every recorded directory parent (`parents.rs`) against its inode: the
    /// directory is live and its inode records that parent. Returns how many were checked.
    pub fn verify_dir_parents(&mut self) -> Result<usize> {
        let all: Vec<(Ino, Ino)> = self.dir_parents.iter().collect();
        for &(dir, parent) in &all {
            let live = self.check_ino(dir).is_ok() && self.inode_kind(dir)? == FileType::Directory;
            let recorded = if live { Some(inode::pino(self.inode_ref(dir)?)) } else { None };
            if recorded != Some(parent) {
                return Err(Error::corrupt(
                    self.nat_addr(dir),
                    "in-memory parent of a directory differs from its inode (or it is not a live directory)",
                ));
            }
        }
        Ok(all.len())
    }

    /// Runs a call that changes nothing (lookup, getattr, readdir, readlink, read, the
    /// xattr reads), then keeps the clean node cache within its bound, as `after_change`
    /// does after changes: reads load nodes too, and without this a `find` over a big tree,
    /// or the read of a huge file, cached every node it met until the next change.
    pub(crate) fn reading<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let r = f(self);
        self.shrink_node_cache();
        r
    }

    /// Keeps the clean node cache within its bound: for a driver after calls that load
    /// nodes without ending in `after_change` or `reading` (background cleaning).
    pub fn trim_caches(&mut self) {
        self.shrink_node_cache();
    }

    /// Drops every clean cached node (the root's inode too) and every kept dentry block:
    /// what memory pressure may do to the caches between two operations. The crash
    /// explorer's cold-cache mode (`--cold`) and the core's cold-cache tests call it before
    /// every operation, so that every read an operation can make comes from the device, and
    /// can fail there (invariant 7: an operation reads what it needs before its first
    /// change). Dirty nodes stay: they are the only copy of their changes.
    pub fn drop_clean_caches(&mut self) {
        self.nodes.retain(|_, n| n.dirty);
        self.dentry_cache.clear();
        // Directory parents are read back from the inodes too (walks read them again).
        self.dir_parents.clear();
    }

    pub(crate) fn shrink_node_cache(&mut self) {
        let max = (self.opts.clean_cache_bytes_max / BLOCK_SIZE as u64) as usize;
        if self.nodes.len() <= max.max(64) {
            return;
        }
        let target = max * 3 / 4;
        let mut excess = self.nodes.len().saturating_sub(target);
        // Bounded: one pass over the cache.
        let victims: Vec<Nid> = self
            .nodes
            .iter()
            .filter(|(_, n)| !n.dirty)
            .map(|(nid, _)| *nid)
            .take_while(|_| {
                let go = excess > 0;
                excess = excess.saturating_sub(1);
                go
            })
            .collect();
        for nid in victims {
            if nid != ROOT_INO {
                self.nodes.remove(&nid);
            }
        }
    }

    // ---- write-back and checkpoint -------------------------------------------------

    /// Shuts the filesystem down after a failed write (read-only; later changes EIO): the
    /// in-memory state may no longer match anything durable, so guessing further could
    /// only make things worse.
    pub(crate) fn fail<T>(&mut self, e: Error) -> Result<T> {
        self.latch_shutdown();
        Err(e)
    }

    /// Notes a logical change (see `change_count`).
    #[inline]
    pub(crate) fn note_change(&mut self) {
        self.change_count = self.change_count.wrapping_add(1);
    }

    /// Runs one public operation under the failure-atomicity guard (invariant 7,
    /// docs/INVARIANTS.md): every operation reads what it needs and makes its room before
    /// its first change, so an error normally leaves everything as it was. When an error
    /// comes after a change anyway (a node read that failed after a directory was already
    /// rewritten, on a cold cache), the half-made change must never become durable: the
    /// filesystem shuts down (read-only, later changes EIO), and the next mount shows the
    /// last durable state. Counted in `Stats::errors_after_change`; an error other than
    /// an I/O or corruption error there is a bug the checkers report.
    pub(crate) fn op<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let before = self.change_count;
        let r = f(self);
        if r.is_err() && self.change_count != before && !crate::mutant!("mutant-eio-change-before-read") {
            self.stats.errors_after_change += 1;
            if !self.shut_down {
                self.latch_shutdown();
            }
        }
        r
    }

    /// Runs maintenance that moves what exists without changing what it says (a
    /// checkpoint, a cleaning round): it does not count as an operation's change.
    pub(crate) fn maintenance<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let before = self.change_count;
        let r = f(self);
        self.change_count = before;
        r
    }

    fn latch_shutdown(&mut self) {
        let latch = !crate::mutant!("mutant-eio-no-read-only");
        self.read_only = latch;
        self.shut_down = latch;
    }

    /// Writes every dirty data block to its log and points its node at it.
    pub(crate) fn writeback_data(&mut self) -> Result<()> {
        let dirty = core::mem::take(&mut self.data);
        let mut iter = dirty.into_iter();
        while let Some(((ino, idx), block)) = iter.next() {
            let r = self.writeback_one(ino, idx, &block).map(|_| ());
            if let Err(e) = r {
                // Keep the unwritten blocks so nothing acknowledged silently disappears.
                self.data.insert((ino, idx), block);
                self.data.extend(iter);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Writes one dirty data block and points its node at it (address and checksum);
    /// returns the node that holds its address, the index, and the CRC32C of the block's
    /// contents when it was computed (data checksums on).
    pub(crate) fn writeback_one(&mut self, ino: Ino, idx: u64, block: &Block) -> Result<(Nid, u32, Option<u32>)> {
        let is_dir = self.inode_kind(ino)? == FileType::Directory;
        let (holder, ofs, old) = self.map_for_write(ino, idx)?;
        let log = if self.gc_cold.remove(&(ino, idx)) {
            Log::ColdData
        } else if is_dir {
            Log::HotData
        } else {
            Log::WarmData
        };
        let addr = self.alloc_block(log, Summary { nid: holder, ofs: ofs as u16 })?;
        self.dentry_cache.forget(addr);
        self.dev.write(addr as u64, block, WriteFlags::empty())?;
        self.stats.data_blocks_written += 1;
        self.written_blocks = self.written_blocks.saturating_add(1);
        let content_crc = self.data_checksums.then(|| crate::codec::crc(&block[..]));
        // A bad block moved by cleaning keeps the checksum it had (data.rs, step 2).
        let crc = self.writeback_crc(ino, idx, content_crc);
        self.set_holder_slot(holder, ofs, addr, crc)?;
        if old != NEW_ADDR && old != NULL_ADDR {
            self.seg.invalidate(&self.geo, &mut self.sit, old)?;
        }
        // Forgotten only now: when a step above fails, `writeback_data` puts the block back
        // in the write-back cache, where its bytes must go on failing their kept checksum.
        self.gc_kept_crcs.remove(&(ino, idx));
        Ok((holder, ofs, content_crc))
    }

    /// Allocates the next block of `log` and records its owner.
    pub(crate) fn alloc_block(&mut self, log: Log, owner: Summary) -> Result<u32> {
        let addr = self.seg.alloc(&self.geo, &mut self.sit, &mut self.ssa, log, self.now_sec, true)?;
        if crate::mutant!("mutant-gc-no-ssa") && log == Log::ColdData {
            // Mutant: a block moved by cleaning keeps whatever summary its new slot had.
            return Ok(addr);
        }
        // A data log filling holes of a node segment by SSR (data beside its chain): the
        // entry says the block is data.
        let owner = if !log.is_node() { self.data_summary(addr, owner.nid, owner.ofs as u32) } else { owner };
        self.ssa.set(&mut self.dev, &self.geo, addr, owner, self.cp.version)?;
        Ok(addr)
    }

    /// The summary entry of a data block at `addr` whose address `holder` keeps in slot
    /// `ofs`: in a node segment (data beside its chain) the slot carries `SSA_OFS_DATA`, so
    /// that cleaning, fsck and repair take the block for data (FORMAT.md, *SSA*).
    pub(crate) fn data_summary(&self, addr: u32, holder: Nid, ofs: u32) -> Summary {
        debug_assert!(ofs < crate::ssa::SSA_OFS_DATA as u32);
        let in_node_segment = self.sit.get(self.geo.segno_of(addr)).holds_nodes();
        let flag = if in_node_segment { crate::ssa::SSA_OFS_DATA } else { 0 };
        Summary { nid: holder, ofs: ofs as u16 | flag }
    }

    /// The log a node belongs to.
    pub(crate) fn node_log(&mut self, nid: Nid) -> Result<Log> {
        let b = &self.nodes[&nid].block;
        Ok(match node::footer_type(b) {
            Some(NodeType::Inode) => {
                if FileType::from_mode(inode::mode(b) as u32) == Some(FileType::Directory) {
                    Log::HotNode
                } else {
                    Log::WarmNode
                }
            }
            Some(NodeType::Direct) => {
                let ino = node::footer_ino(b);
                if self.inode_kind(ino)? == FileType::Directory {
                    Log::HotNode
                } else {
                    Log::WarmNode
                }
            }
            _ => Log::ColdNode,
        })
    }

    /// Blocks each log will write at the next checkpoint: the dirty data blocks (moved by
    /// cleaning: cold; of directories: hot; the others warm), the dirty nodes, and the
    /// nodes that hold the addresses of dirty data blocks (an overwrite dirties its node
    /// only when it is written back), each once: those are added to `counted`.
    pub(crate) fn pending_by_log(&mut self, counted: &mut BTreeSet<Nid>) -> Result<[u64; LOG_COUNT]> {
        let mut by_log = [0u64; LOG_COUNT];
        let dirty: Vec<Nid> = self.dirty_nodes.iter().copied().collect();
        for nid in dirty {
            by_log[self.node_log(nid)? as usize] += 1;
        }
        let keys: Vec<(Ino, u64)> = self.data.keys().copied().collect();
        let mut last: Option<(Ino, bool, Option<u64>)> = None;
        for (ino, idx) in keys {
            let dnode = match node::block_path(idx)? {
                node::BlockPath::Inode { .. } => None,
                node::BlockPath::Node { dnode, .. } => Some(dnode),
            };
            let (is_dir, same_holder) = match last {
                Some((i, d, n)) if i == ino => (d, n == dnode),
                _ => (self.inode_kind(ino)? == FileType::Directory, false),
            };
            last = Some((ino, is_dir, dnode));
            let log = if self.gc_cold.contains(&(ino, idx)) {
                Log::ColdData
            } else if is_dir {
                Log::HotData
            } else {
                Log::WarmData
            };
            by_log[log as usize] += 1;
            if !same_holder {
                if let Some(h) = self.holder_of(ino, idx)? {
                    if !self.dirty_nodes.contains(&h) && counted.insert(h) {
                        by_log[self.node_log(h)? as usize] += 1;
                    }
                }
            }
        }
        Ok(by_log)
    }

    /// The node that holds the address of `ino`'s block `idx` (the inode or a direct
    /// node), if the path to it exists. Reads nodes, changes nothing.
    pub(crate) fn holder_of(&mut self, ino: Ino, idx: u64) -> Result<Option<Nid>> {
        match node::block_path(idx)? {
            node::BlockPath::Inode { .. } => Ok(Some(ino)),
            node::BlockPath::Node { slot, depth, idx: path, .. } => {
                let mut nid = inode::nid(self.inode_ref(ino)?, slot);
                for &i in path.iter().take(depth) {
                    if nid == crate::layout::NULL_NID {
                        return Ok(None);
                    }
                    nid = node::slot(self.tree_child(nid, ino, NodeType::Indirect)?, i);
                }
                if nid == crate::layout::NULL_NID {
                    return Ok(None);
                }
                self.tree_child(nid, ino, NodeType::Direct)?;
                Ok(Some(nid))
            }
        }
    }

    /// Writes every dirty node to its log and records its new address in the NAT.
    pub(crate) fn writeback_nodes(&mut self) -> Result<()> {
        let dirty: Vec<Nid> = self.dirty_nodes.iter().copied().collect();
        for nid in dirty {
            self.write_node(nid, 0)?;
        }
        Ok(())
    }

    /// Writes one cached dirty node with the given footer flags.
    pub(crate) fn write_node(&mut self, nid: Nid, flags: u32) -> Result<u32> {
        let log = self.node_log(nid)?;
        self.write_node_to(nid, flags, log)
    }

    /// Writes one cached node to `log` with the given footer flags (fsync writes every
    /// node of its batch to the warm node log, whose chain recovery walks).
    pub(crate) fn write_node_to(&mut self, nid: Nid, flags: u32, log: Log) -> Result<u32> {
        self.write_node_skipping(nid, flags, log, 0)
    }

    /// [`Self::write_node_to`] whose `next_blkaddr` names the block `skip` blocks after the
    /// log's next one: an fsync batch's inode skips the data written right after it (data
    /// beside its chain; the caller has checked that they are in the same segment).
    pub(crate) fn write_node_skipping(&mut self, nid: Nid, flags: u32, log: Log, skip: u32) -> Result<u32> {
        let addr = self.alloc_block(log, Summary { nid, ofs: 0 })?;
        let next = self.seg.peek_next(&self.geo, &mut self.sit, &mut self.ssa, log)? + skip;
        debug_assert!(skip == 0 || self.geo.segno_of(next) == self.geo.segno_of(addr), "a skip past the segment");
        let version = self.cp.version;
        let seed = self.seed;
        let entry = self.nodes.get_mut(&nid).expect("dirty node is cached");
        node::set_footer_flags(&mut entry.block, flags);
        node::seal_for_write(&mut entry.block, version, next, seed);
        // Paired assertion: the node verifies as recovery and the node cache will read it.
        debug_assert!(
            node::validate(&entry.block, addr as u64, nid, seed).is_ok()
                && node::footer_cp_version(&entry.block) == version
                && node::footer_next_blkaddr(&entry.block) == next
                && node::footer_flags(&entry.block) == flags,
            "node {nid} does not verify as written"
        );
        self.dentry_cache.forget(addr);
        self.dev.write(addr as u64, &entry.block, WriteFlags::empty())?;
        entry.dirty = false;
        self.dirty_nodes.remove(&nid);
        self.stats.node_blocks_written += 1;
        self.written_blocks = self.written_blocks.saturating_add(1);
        let old = self.nat.get(nid).ok_or(Error::corrupt(addr as u64, "writing a node with no NAT entry"))?;
        self.nat.set(nid, NatEntry { ino: old.ino, addr });
        self.seg.invalidate(&self.geo, &mut self.sit, old.addr)?;
        Ok(addr)
    }

    // ---- public entry points that are checkpoint-shaped ---------------------------

    /// Writes a checkpoint: everything before it is durable when it returns.
    pub fn sync(&mut self, now: Timestamp) -> Result<()> {
        self.checkpoint(false, now)
    }

    pub fn statfs(&mut self) -> Result<StatFs> {
        let cap = self.capacity(true);
        let free = cap.saturating_sub(self.used_blocks());
        Ok(StatFs {
            block_size: BLOCK_SIZE as u32,
            blocks: cap,
            blocks_free: free,
            // What unprivileged users may still fill (statfs's f_bavail).
            blocks_avail: free.saturating_sub(self.opts.root_reserve_blocks),
            files: (self.nat.nid_count() - 1) as u64,
            // statfs has no "available to unprivileged users" count of files: what every
            // caller may take, the root reserve's ids included (as `f_bfree`).
            files_free: self.nat.available() as u64,
            name_max: NAME_MAX as u32,
        })
    }
}
