//! rollfs-core: the whole rollfs filesystem as a `no_std` + `alloc` library.
//!
//! The core performs no I/O of its own (a [`device::BlockDevice`] is handed in), reads
//! no clock (every mutating call takes a [`Timestamp`]) and draws no randomness, so the
//! same source runs natively behind FUSE and as WebAssembly under the crash explorer,
//! where every run is reproducible bit for bit.
//!
//! Module map (one module per on-disk structure or mechanism, as f2fs splits its files):
//!
//! | module | owns |
//! |---|---|
//! | [`layout`] | block size, geometry, areas, named on-disk constants |
//! | [`codec`] | typed block views, little-endian field access, CRC32C helpers |
//! | [`superblock`] | the two superblock copies |
//! | [`mkfs`] | `Filesystem::format`: a new, empty filesystem |
//! | [`checkpoint`] | the checkpoint: write back, table flushes, the pack (header, payload), publish |
//! | [`nat`] | node address table: node id → block address, free nids |
//! | [`sit`] | segment information table: valid counts, bitmaps, age, wear |
//! | [`ssa`] | segment summary area: the owner of every main-area block |
//! | [`node`] | node blocks: footer, inode, direct and indirect node layouts |
//! | [`segment`] | the six active logs, block allocation and invalidation |
//! | [`inode`] | node cache, block mapping, truncation, inode life and death |
//! | [`file`] | file contents: write, size |
//! | [`data`] | where a file block is (`locate`) and reading it, planned reads |
//! | [`dir`] | hashed dentry blocks, readdir cookies |
//! | [`dcache`] | the dentry-block cache: clean directory blocks already validated |
//! | `dirkey` | a directory's keys (name hash, cookies) from the superblock's seed |
//! | [`namei`] | the namespace: names, links, rename, attributes, xattrs |
//! | `parents` | each directory's parent in memory: the walks of the rename loop check and fsync |
//! | [`xattr`] | extended attribute block |
//! | [`prealloc`] | fallocate reservations (in memory) |
//! | [`fsync`] | fsync without checkpoints: batches in the warm node chain, marks |
//! | [`since_cp`] | what changed since the last checkpoint, and why an fsync checkpoints |
//! | [`atomic`] | atomic writes: staged until one commit batch |
//! | [`gc`] | segment cleaning: victims, moving valid blocks |
//! | [`recovery`] | roll-forward of the node chain at mount |
//! | [`fs`] | the [`Filesystem`] API: mount, space accounting, caches, write-back |
//! | [`fsck`] | the consistency checker shared by `rollfs fsck` and the simulator |
//! | [`repair`] | `fsck --repair`: metadata rebuilt from the reachable tree |
//! | [`device`] | the `BlockDevice` trait and the in-memory `MemDevice` |
//! | [`error`] | the error type and its errno mapping |
//! | [`stats`] | the counters, from one list |
//! | `mutant` | test-only deliberately broken variants (`mutant!`) |
#![no_std]
// No unsafe code; the one exception is the call into the embedder's CRC32C of the
// test-only feature `embedder-crc32c` (codec.rs), which production builds never enable.
#![cfg_attr(not(feature = "embedder-crc32c"), forbid(unsafe_code))]
#![cfg_attr(feature = "embedder-crc32c", deny(unsafe_code))]

extern crate alloc;

pub mod atomic;
pub mod checkpoint;
pub mod codec;
pub mod data;
pub mod dcache;
pub mod device;
pub mod dir;
mod dirkey;
pub mod error;
pub mod file;
pub mod fs;
pub mod fsck;
pub mod fsync;
pub mod gc;
pub mod inode;
pub mod layout;
pub mod mkfs;
pub mod mutant;
pub mod namei;
pub mod nat;
pub mod node;
mod parents;
pub mod prealloc;
pub mod recovery;
pub mod repair;
pub mod segment;
pub mod since_cp;
pub mod sit;
pub mod ssa;
pub mod stats;
pub mod superblock;
pub mod xattr;

pub use device::{BlockDevice, IoError, MemDevice, WriteFlags};
pub use error::{Error, Result};
pub use fs::{
    Attr, Credentials, DirEntry, FileType, Filesystem, Memory, MkfsOptions, MountOptions, RenameFlags, SetAttr, StatFs,
    Stats, Timestamp, XattrSetMode,
};
pub use layout::BLOCK_SIZE;

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
