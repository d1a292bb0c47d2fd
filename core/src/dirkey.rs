//! The keys of a directory, from the superblock's secret `hash_seed` and the directory's
//! identity: the key its names are hashed with, and the key of its readdir cookies
//! (`dir`: [`dir::dir_hash_key`], [`dir::dir_cookie_key`]).
//!
//! On images with [`crate::superblock::FEATURE_INCOMPAT_DIR_V2`] every directory has its
//! own name hash key, derived from its inode number and generation (a reused inode number
//! has another generation, hence another key), so what a user learns about the hash in a
//! directory of its own (by timing, listing order, or a full bucket) does not carry over
//! to a shared one. Older images keep hashing names with `hash_seed` itself (all zero: the
//! unkeyed hash), as they always did. Cookies are not stored, so every image gets
//! per-directory cookie keys.

use crate::dir::{self, EntryLoc, HashKey};
use crate::error::Result;
use crate::fs::Filesystem;
use crate::namei::DirIo;
use crate::node::inode;
use crate::{BlockDevice, Ino};

impl<D: BlockDevice> Filesystem<D> {
    /// The key names of directory `dir` are hashed with. For checkers and tests: the
    /// filesystem never shows it to its users.
    pub fn dir_hash_key(&mut self, dir: Ino) -> Result<HashKey> {
        let sb = self.superblock();
        if !sb.dir_v2() {
            return Ok(sb.hash_seed);
        }
        let seed = sb.hash_seed;
        let generation = inode::generation(self.inode_ref(dir)?);
        Ok(dir::dir_hash_key(&seed, dir, generation))
    }

    /// The key of directory `dir`'s readdir cookies ([`dir::Cookies`]). For checkers and
    /// tests, as [`Filesystem::dir_hash_key`].
    pub fn dir_cookie_key(&mut self, dir: Ino) -> Result<HashKey> {
        let seed = self.superblock().hash_seed;
        let generation = inode::generation(self.inode_ref(dir)?);
        Ok(dir::dir_cookie_key(&seed, dir, generation))
    }

    /// Checks an entry that a listing of directory `dir` returned with `cookie`
    /// ([`dir::check_listed`]): `Ok(Ok(place))` when lookup searches where it lies.
    pub fn check_listed(
        &mut self,
        dir: Ino,
        name: &[u8],
        cookie: u64,
    ) -> Result<core::result::Result<EntryLoc, &'static str>> {
        self.inode_ref(dir)?;
        dir::check_listed(&mut DirIo { fs: self, ino: dir }, name, cookie)
    }
}
