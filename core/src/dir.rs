//! Hashed dentry blocks: how a directory's entries are stored and found.
//!
//! CONTRACT (implemented by the directory module; the rest of the core relies on it):
//!
//! A directory's entries live in *dentry blocks*, which are the data blocks of the
//! directory inode (file block index `idx`), reached through [`DirBlocks`]. Unused indexes
//! are holes. Lookup is not a linear scan: entries are placed in a multi-level hash table
//! as in f2fs. Level `l` (0-based) has `buckets(l)` buckets of `BLOCKS_PER_BUCKET(l)`
//! blocks; a name with hash `h` can only live in bucket `h % buckets(l)` of each level, so
//! lookup reads at most `depth × blocks_per_bucket` blocks. `depth` (levels in use) is kept
//! in the directory inode by the caller and only grows.
//!
//! "." and ".." are not stored; the caller synthesises them (readdir cookies 1 and 2).
//! Cookies of stored entries are `3 + block_idx * SLOTS_PER_BLOCK + slot`, stable while the
//! entry exists, so readdir can resume after any entry.
//!
//! Every dentry block read is validated (magic, CRC, bitmap/name-length consistency) and a
//! bad one is `Error::Corrupt { block: <idx given by DirBlocks::addr_of or idx>, reason }`.

use crate::error::{Error, Result};
use crate::fs::FileType;
use crate::{Block, Ino};
use alloc::boxed::Box;
use alloc::vec::Vec;

/// Access to a directory's data blocks, provided by the filesystem.
pub trait DirBlocks {
    /// Reads dentry block `idx`; `None` when it is a hole (never written).
    fn read(&mut self, idx: u64) -> Result<Option<Box<Block>>>;
    /// Writes dentry block `idx` (the block is already sealed by this module).
    fn write(&mut self, idx: u64, block: Box<Block>) -> Result<()>;
    /// Device address of block `idx` for error messages (0 if unknown).
    fn addr_of(&mut self, idx: u64) -> u64 {
        let _ = idx;
        0
    }
}

/// Where an entry was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryLoc {
    pub block_idx: u64,
    pub slot: u32,
}

/// One stored entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub ino: Ino,
    pub kind: FileType,
    pub name: Vec<u8>,
    pub cookie: u64,
}

pub fn lookup(_d: &mut dyn DirBlocks, _depth: u32, _name: &[u8]) -> Result<Option<(EntryLoc, Ino, FileType)>> {
    Err(Error::NotSupported("dir"))
}
