//! The name a file had before a link recorded another, in memory: what lets an unlink of
//! that link put a right parent and name back in the inode.
//!
//! Why: an inode records one parent and name (`pino`, `name`: those of its last link or
//! rename), and fsync and atomic commits trust them only when that directory holds the
//! entry (`records_its_entry`). A link made and removed again left them naming a directory
//! the file is not in, so every later fsync and commit of the file found its directory "not
//! known" — a checkpoint, or every user's pending namespace records with their riders —
//! until the file was renamed, across remounts. Another user needs only one `ln` and one
//! `rm` of a file she may link (review 56, second user, F2: root's atomic commit 2.0 →
//! 38.5 ms, its fsync 1.7 → 35.1 ms). With this record, the unlink that removes the
//! recorded name while the file keeps another puts the name it had before back (f2fs fixes
//! the same thing from the dentry at fsync: `try_to_fix_pino`).
//!
//! A hint, never trusted: the unlink writes it into the inode only after a lookup finds
//! that entry pointing at the file, and every reader of a recorded parent checks it again.
//! So a wrong or stale entry costs nothing but the lookup. Not kept: the name before a
//! rename of a file with several links, and anything across an unmount; there the recorded
//! parent stays stale, as before (the readers' checks cover it).
//!
//! Memory: one entry per inode whose link replaced its recorded name, dropped when the
//! file is down to one link or freed, and at most [`ENTRY_COUNT_MAX`] (the lowest node id's
//! goes first), each at most 8 + 255 bytes of name. A user who may link a file can push its
//! entry out with that many links of her own before she removes hers: the stale parent of
//! before comes back (a cost, not a correctness question).

use crate::Ino;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// Entries kept at most (about 1 MiB with the longest names).
pub(crate) const ENTRY_COUNT_MAX: usize = 4096;

/// See the module header.
#[derive(Default)]
pub(crate) struct OtherNames {
    by_ino: BTreeMap<Ino, (Ino, Vec<u8>)>,
}

impl OtherNames {
    /// Remembers `dir/name` as a name of `ino` that its inode no longer records.
    pub fn note(&mut self, ino: Ino, dir: Ino, name: &[u8]) {
        if !self.by_ino.contains_key(&ino) && self.by_ino.len() >= ENTRY_COUNT_MAX {
            self.by_ino.pop_first();
        }
        self.by_ino.insert(ino, (dir, name.to_vec()));
        debug_assert!(self.by_ino.len() <= ENTRY_COUNT_MAX);
    }

    /// The other name remembered for `ino`, if any (unchecked).
    pub fn get(&self, ino: Ino) -> Option<(Ino, Vec<u8>)> {
        self.by_ino.get(&ino).cloned()
    }

    /// Forgets `ino`'s entry: it has one link left, or its node id was freed.
    pub fn forget(&mut self, ino: Ino) {
        self.by_ino.remove(&ino);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_ino.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_stays_within_its_bound_dropping_the_lowest_node_id() {
        let mut o = OtherNames::default();
        for ino in 0..(ENTRY_COUNT_MAX as Ino + 10) {
            o.note(ino + 1, 1, b"n");
        }
        assert_eq!(o.len(), ENTRY_COUNT_MAX);
        assert_eq!(o.get(1), None, "the lowest node id's entry went first");
        assert_eq!(o.get(ENTRY_COUNT_MAX as Ino + 10), Some((1, b"n".to_vec())));
        // A second note for a node id already kept replaces it and drops nothing.
        o.note(ENTRY_COUNT_MAX as Ino + 10, 2, b"m");
        assert_eq!(o.len(), ENTRY_COUNT_MAX);
        assert_eq!(o.get(ENTRY_COUNT_MAX as Ino + 10), Some((2, b"m".to_vec())));
        o.forget(ENTRY_COUNT_MAX as Ino + 10);
        assert_eq!(o.get(ENTRY_COUNT_MAX as Ino + 10), None);
    }
}
