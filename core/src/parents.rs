//! The parent of each directory, in memory: what the rename loop check and fsync's
//! renamed-ancestor check walk up through ([`crate::namei`]'s `walk_up`).
//!
//! Why: those walks follow every directory's recorded parent (`pino` in its inode) up to
//! the root, under the driver's lock. Read from the inodes, a walk from the bottom of a
//! directory chain deeper than the node cache holds read every inode on the way from the
//! device, on every rename of a directory into it: with a 120,000-deep chain and three
//! users renaming to the bottom and back, every other user's requests waited up to 1.9 s
//! (issue 35, finding 9). With this record a walk costs one array load per level and no
//! device read; only the first walk through a directory not yet recorded (after a mount,
//! or after the caches were dropped) reads its inode.
//!
//! Invariant: an entry for `d` exists only while `d` is a live directory inode, and equals
//! the parent its inode records. Kept by: mkdir (records the new directory), the walk
//! (records what it read), rename (records the new parent), freeing a node id (forgets
//! it: rmdir's eviction, an undone create), roll-forward and repair (forget what they
//! rewrite), and dropping the clean caches (forgets everything).
//! `Filesystem::verify_dir_parents` checks every entry against its inode.
//!
//! Memory: pages of 1,024 node ids (4 KiB) made when a directory in them is first
//! recorded and freed when their last entry goes, so at most 4 bytes per node id — half
//! of what the NAT, held whole in memory, takes — plus 8 bytes of page table per 1,024
//! node ids. A dense table rather than a tree: one load per level of a walk (about 3 ns),
//! where a `BTreeMap` lookup took 200 ns on the loaded test VM (25 ms for a walk of
//! 120,000 levels).

use crate::Ino;
use alloc::boxed::Box;
use alloc::vec::Vec;

/// Node ids per page.
const PAGE: usize = 1024;

struct Page {
    /// The recorded parent of each directory of the page; 0 (never a parent: node id 0
    /// is not used) when none is recorded.
    parent: [Ino; PAGE],
    used: u32,
}

/// See the module header.
#[derive(Default)]
pub(crate) struct DirParents {
    pages: Vec<Option<Box<Page>>>,
    entries: usize,
}

impl DirParents {
    /// The recorded parent of directory `dir`, if recorded.
    #[inline]
    pub fn get(&self, dir: Ino) -> Option<Ino> {
        let p = self.pages.get(dir as usize / PAGE)?.as_ref()?;
        let v = p.parent[dir as usize % PAGE];
        (v != 0).then_some(v)
    }

    /// Records `parent` as the parent of directory `dir`.
    pub fn set(&mut self, dir: Ino, parent: Ino) {
        if parent == 0 {
            // Not a parent (a corrupt inode): recorded nowhere, so the walk reads it.
            self.forget(dir);
            return;
        }
        let i = dir as usize / PAGE;
        if self.pages.len() <= i {
            self.pages.resize_with(i + 1, || None);
        }
        let page = self.pages[i].get_or_insert_with(|| Box::new(Page { parent: [0; PAGE], used: 0 }));
        let slot = &mut page.parent[dir as usize % PAGE];
        if *slot == 0 {
            page.used += 1;
            self.entries += 1;
        }
        *slot = parent;
    }

    /// Forgets what is recorded for `ino` (nothing if it is not a recorded directory).
    pub fn forget(&mut self, ino: Ino) {
        let i = ino as usize / PAGE;
        let Some(Some(page)) = self.pages.get_mut(i) else { return };
        let slot = &mut page.parent[ino as usize % PAGE];
        if *slot == 0 {
            return;
        }
        *slot = 0;
        page.used -= 1;
        self.entries -= 1;
        if page.used == 0 {
            self.pages[i] = None;
        }
    }

    pub fn clear(&mut self) {
        self.pages = Vec::new();
        self.entries = 0;
    }

    /// Directories recorded.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Heap bytes held: the pages and the page table.
    pub fn bytes(&self) -> usize {
        let pages = self.pages.iter().filter(|p| p.is_some()).count();
        pages * core::mem::size_of::<Page>() + self.pages.capacity() * core::mem::size_of::<Option<Box<Page>>>()
    }

    /// Every (directory, parent) recorded, in directory order.
    pub fn iter(&self) -> impl Iterator<Item = (Ino, Ino)> + '_ {
        self.pages.iter().enumerate().filter_map(|(i, p)| p.as_ref().map(|p| (i, p))).flat_map(|(i, p)| {
            p.parent.iter().enumerate().filter(|(_, &v)| v != 0).map(move |(k, &v)| ((i * PAGE + k) as Ino, v))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::DirParents;

    #[test]
    fn pages_come_and_go_with_their_entries() {
        let mut p = DirParents::default();
        assert_eq!(p.get(5), None);
        p.set(5, 1);
        p.set(5, 3);
        p.set(2048, 5);
        assert_eq!((p.get(5), p.get(2048), p.get(6), p.len()), (Some(3), Some(5), None, 2));
        assert_eq!(p.iter().collect::<alloc::vec::Vec<_>>(), [(5, 3), (2048, 5)]);
        p.forget(5);
        p.forget(5);
        p.forget(999_999);
        assert_eq!((p.get(5), p.len()), (None, 1));
        assert!(p.pages[0].is_none(), "an empty page is freed");
        p.set(7, 0);
        assert_eq!(p.get(7), None, "0 is never recorded");
        p.clear();
        assert_eq!((p.len(), p.bytes()), (0, 0));
    }
}
