//! The dirty node set: which cached nodes differ from their on-disk copies, indexed by the
//! inode that owns each (a node's footer names it), so that "the dirty nodes of this file"
//! costs a lookup, not a scan of every dirty node.
//!
//! Why the index: an fsync that writes other files' batches (riders, DESIGN.md *Namespace
//! records in the chain*) asks that question once or more per rider; a scan made it riders ×
//! dirty nodes, under the filesystem lock — a directory fsync after 15,000 files' inodes
//! were touched took 27 s and held every other user's request (review 51). Both maps hold
//! the same nodes (a test checks them against a plain set); bounded by the dirty bound
//! (`MountOptions::dirty_bytes_max`), which a checkpoint enforces.

use crate::{Ino, Nid};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

#[derive(Debug, Default)]
pub(crate) struct DirtyNodes {
    /// Dirty node → the inode that owns it.
    owner: BTreeMap<Nid, Ino>,
    /// Inode → its dirty nodes (never an empty set).
    by_ino: BTreeMap<Ino, BTreeSet<Nid>>,
}

impl DirtyNodes {
    /// Marks `nid`, owned by `ino`, dirty. A node's owner never changes while it is cached
    /// (a node id is reused only after `remove`).
    pub(crate) fn insert(&mut self, nid: Nid, ino: Ino) {
        if let Some(old) = self.owner.insert(nid, ino) {
            debug_assert_eq!(old, ino, "dirty node {nid} changed owner");
            if old != ino {
                self.unindex(nid, old);
            }
        }
        self.by_ino.entry(ino).or_default().insert(nid);
    }

    /// `nid` is clean (written) or gone (freed).
    pub(crate) fn remove(&mut self, nid: &Nid) {
        if let Some(ino) = self.owner.remove(nid) {
            self.unindex(*nid, ino);
        }
    }

    fn unindex(&mut self, nid: Nid, ino: Ino) {
        if let Some(set) = self.by_ino.get_mut(&ino) {
            set.remove(&nid);
            if set.is_empty() {
                self.by_ino.remove(&ino);
            }
        }
    }

    pub(crate) fn contains(&self, nid: &Nid) -> bool {
        self.owner.contains_key(nid)
    }

    pub(crate) fn len(&self) -> usize {
        self.owner.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.owner.is_empty()
    }

    /// Every dirty node, in node id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Nid> + '_ {
        self.owner.keys()
    }

    /// `ino`'s dirty nodes (its inode, direct, indirect and xattr nodes), in node id order.
    pub(crate) fn of(&self, ino: Ino) -> Vec<Nid> {
        self.by_ino.get(&ino).map(|s| s.iter().copied().collect()).unwrap_or_default()
    }

    /// Whether `ino` has a dirty node.
    pub(crate) fn has_any_of(&self, ino: Ino) -> bool {
        self.by_ino.contains_key(&ino)
    }

    /// The inodes with a dirty node, in order.
    pub(crate) fn inos(&self) -> impl Iterator<Item = Ino> + '_ {
        self.by_ino.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random inserts and removes against a plain set of (node, owner): the index answers
    /// as a scan of the set would.
    #[test]
    fn the_index_answers_as_a_scan_would() {
        let mut d = DirtyNodes::default();
        let mut model: BTreeMap<Nid, Ino> = BTreeMap::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let nid = (x % 64) as Nid + 1;
            // A node's owner is fixed by its id here, as by its footer in the cache.
            let ino = nid % 7 + 1;
            if x & (1 << 40) != 0 {
                d.insert(nid, ino);
                model.insert(nid, ino);
            } else {
                d.remove(&nid);
                model.remove(&nid);
            }
            assert_eq!(d.len(), model.len());
            assert_eq!(d.is_empty(), model.is_empty());
            assert!(d.iter().copied().eq(model.keys().copied()));
            for i in 1..=8 {
                let scan: Vec<Nid> = model.iter().filter(|(_, &o)| o == i).map(|(&n, _)| n).collect();
                assert_eq!(d.of(i), scan);
                assert_eq!(d.has_any_of(i), !scan.is_empty());
            }
            let inos: BTreeSet<Ino> = model.values().copied().collect();
            assert!(d.inos().eq(inos.into_iter()));
            assert!(model.keys().all(|n| d.contains(n)));
        }
    }
}
