//! rollfs-core: the whole rollfs filesystem as a `no_std` + `alloc` library.
//!
//! The core performs no I/O of its own (a [`BlockDevice`] is handed in), reads
//! no clock (every mutating call takes a [`Timestamp`]) and draws no randomness, so the
//! same source runs natively behind FUSE and as WebAssembly under the crash explorer,
//! where every run is reproducible bit for bit.
//!
//! Module map (one module per on-disk structure or mechanism, as f2fs splits its files).
//! The API is the items re-exported at the crate root below (redb's way: curated with
//! `pub use`); a module is public only where outside users need so much of it that
//! re-exporting item by item would not help, and the column *public* says who they are.
//! Everything else is private (named without a link here).
//!
//! | module | owns |
//! |---|---|
//! | [`layout`] | block size, geometry, areas, named on-disk constants. *Public*: the inspector, the simulator's guest, the fuzz targets and the format, repair and data-checksum tests compute with them |
//! | [`codec`] | typed block views, little-endian field access, CRC32C helpers. *Public*: tests, the fuzz targets and the simulator craft and reseal blocks with them |
//! | [`superblock`] | the two superblock copies. *Public*: `rollfs` reads the superblock (probe, label), tests and fuzz targets craft superblocks |
//! | `mkfs` | `Filesystem::format`: a new, empty filesystem |
//! | [`checkpoint`] | the checkpoint: write back, table flushes, the pack (header, payload), publish. *Public*: the inspector and the format, repair and fuzz code read packs |
//! | [`nat`] | node address table: node id → block address, free nids. *Public* (on-disk format): the format, repair and fuzz code read and craft NAT blocks |
//! | [`sit`] | segment information table: valid counts, bitmaps, age, wear. *Public* (on-disk format): the inspector, the format, repair and fuzz code |
//! | [`ssa`] | segment summary area: the owner of every main-area block. *Public* (on-disk format): the format test checks its layout |
//! | [`node`] | node blocks: footer, inode, direct and indirect node layouts, the [`FileType`] as mode and dentry code. *Public* (on-disk format): tests and fuzz targets read and craft nodes |
//! | [`nsrec`] | namespace records: a create, link, unlink or rename since the checkpoint as a logical record, and the record node (type 5) that carries them in the chain. *Public* (on-disk format): the format test and the fuzz decoders. Written and replayed by `nschain` |
//! | `segment` | the six active logs ([`Log`], re-exported), block allocation and invalidation |
//! | `inode` | node cache, block mapping, truncation, inode life and death |
//! | `dirty_nodes` | the dirty node set, indexed by owner inode |
//! | `inline` | inline data: a small regular file's bytes in its inode, and its conversion when it needs a block |
//! | `file` | file contents: write, size, `copy_range` ([`COPY_CHUNK_BYTES_MAX`], re-exported) |
//! | `data` | where a file block is (`locate`) and reading it, planned reads ([`ReadPlan`], re-exported), where data and holes are (`seek_step`: [`SeekWhence`], [`SeekStep`], re-exported) |
//! | [`dir`] | hashed dentry blocks, readdir cookies. *Public* (on-disk format): the dirhash and format tests, the simulator's guest, the fuzz targets |
//! | `dcache` | the dentry-block cache: clean directory blocks already validated |
//! | `dirkey` | a directory's keys (name hash, cookies) from the superblock's seed |
//! | `namei` | the namespace: names, links, rename, attributes, xattrs |
//! | `fileflags` | file attribute flags (`chattr`: immutable, append-only, no-dump, no-atime, [`FileFlags`], re-exported) and the checks every operation makes against them |
//! | `parents` | each directory's parent in memory: the walks of the rename loop check and fsync |
//! | `other_names` | the name a file recorded before a link recorded another: unlink puts it back |
//! | [`xattr`] | extended attribute block. *Public* (on-disk format): the format test and the fuzz decoders |
//! | `prealloc` | fallocate reservations (in memory, or `NEW_ADDR` pointers on disk) |
//! | `fsync` | fsync without checkpoints: batches in the warm node chain, marks ([`FsyncTicket`], re-exported) |
//! | `since_cp` | what changed since the last checkpoint, and why an fsync checkpoints |
//! | `nschain` | namespace records in the chain: record nodes written before fsync batches, replayed at roll-forward (`FEATURE_INCOMPAT_NS_RECORDS`) |
//! | `atomic` | atomic writes: staged until one commit batch |
//! | `gc` | segment cleaning: victims, moving valid blocks |
//! | `trim` | FITRIM: the free segments of a range discarded on request, in steps ([`TrimStep`], re-exported) |
//! | `recovery` | roll-forward of the node chain at mount |
//! | `fs` | the [`Filesystem`] API: mount, space accounting, caches, write-back |
//! | [`fsck`] | the consistency checker shared by `rollfs fsck` and the simulator. *Public*: `rollfs`, the simulator, the testkit and most tests call `fsck::check` and `fsck::repair` |
//! | `repair` | `fsck --repair`: metadata rebuilt from the reachable tree |
//! | [`resize`] | growing a filesystem in place (`rollfs resize`): the tables and the checkpoint a grow writes, planned before anything is written. *Public*: `rollfs resize` issues the plan |
//! | `scrub` | online scrub: node and data blocks read back and checked in bounded, resumable steps ([`ScrubCursor`], [`ScrubStep`], re-exported) |
//! | `device` | the [`BlockDevice`] trait and the in-memory [`MemDevice`] |
//! | `error` | the [`Error`] type and its errno mapping |
//! | `stats` | the counters ([`Stats`]), from one list |
//! | [`mutant`] | test-only deliberately broken variants (`mutant!`). *Public*: the simulator's guest calls [`mutant::select`], and the exported `mutant!` expands to `$crate::mutant::selected` |
//!
//! [`mutant`]: mod@mutant
#![no_std]
// No unsafe code; the one exception is the call into the embedder's CRC32C of the
// test-only feature `embedder-crc32c` (codec.rs), which production builds never enable.
#![cfg_attr(not(feature = "embedder-crc32c"), forbid(unsafe_code))]
#![cfg_attr(feature = "embedder-crc32c", deny(unsafe_code))]

extern crate alloc;

// The on-disk format and the checker: public, see the module map above for who uses them.
pub mod checkpoint;
pub mod codec;
pub mod dir;
pub mod fsck;
pub mod layout;
pub mod mutant;
pub mod nat;
pub mod node;
pub mod nsrec;
pub mod resize;
pub mod sit;
pub mod ssa;
pub mod superblock;
pub mod xattr;

mod atomic;
mod data;
mod dcache;
mod device;
mod dirkey;
mod dirty_nodes;
mod error;
mod file;
mod fileflags;
mod fs;
mod fsync;
mod gc;
mod inline;
mod inode;
mod mkfs;
mod namei;
mod nschain;
mod other_names;
mod parents;
mod prealloc;
mod recovery;
mod repair;
mod scrub;
mod segment;
mod since_cp;
mod stats;
mod trim;

pub use data::{PlannedHole, PlannedRun, ReadPlan, SeekStep, SeekWhence};
pub use device::{read_twice_if, read_verified, BlockDevice, IoError, MemDevice, MemDeviceCounters, WriteFlags};
pub use error::{Error, Result};
pub use file::COPY_CHUNK_BYTES_MAX;
pub use fileflags::FileFlags;
pub use fs::{
    Attr, Credentials, DirEntry, Filesystem, Memory, MkfsOptions, MountOptions, RenameFlags, SetAttr, StatFs,
    Timestamp, XattrSetMode,
};
pub use fsync::{FsyncTicket, CHAIN_DATA_MAX};
pub use layout::BLOCK_SIZE;
pub use node::FileType;
pub use scrub::{ScrubBad, ScrubBadKind, ScrubCursor, ScrubStep, SCRUB_BAD_PER_STEP_MAX, SCRUB_STEP_BLOCKS_MAX};
pub use segment::Log;
pub use stats::{Stats, STAT_COUNT};
pub use trim::TrimStep;

/// Inode number. In rollfs an inode number is the node id of the inode's node block.
pub type Ino = u32;
/// Node id: the index of a node in the NAT.
pub type Nid = u32;
/// A block address on the device (in 4 KiB blocks).
pub type BlockAddr = u32;
/// One 4 KiB block.
pub type Block = [u8; BLOCK_SIZE];

/// Allocates a zeroed block on the heap (blocks are too large for comfortable stack use,
/// especially on wasm32 where the default stack is small).
pub fn zero_block() -> alloc::boxed::Box<Block> {
    alloc::boxed::Box::new([0u8; BLOCK_SIZE])
}
