//! Inodes and the node tree under them: the node cache, loading and validating nodes,
//! mapping file block indexes to addresses, allocating and freeing nodes, truncation, and
//! inode life and death (eviction of an unlinked inode).
//!
//! Every node id and block address taken from disk is range-checked and every node read is
//! validated (CRC, nid, owner inode, type) before use; a node that fails is a corruption
//! error naming its block, never a panic.

use crate::error::{Error, Result};
use crate::fs::{Attr, CachedNode, Filesystem};
use crate::layout::*;
use crate::node::{self, inode, BlockPath, FileType, NodeType};
use crate::{zero_block, Block, BlockAddr, BlockDevice, Ino, Nid};
use alloc::boxed::Box;
use alloc::collections::btree_map;
use alloc::vec::Vec;

const A: u64 = ADDRS_PER_INODE as u64;
/// Most tree nodes an operation loads ahead of evicting an inode (4 MiB of node cache, the
/// tree of a file of up to about 4 GiB): the eviction then reads nothing from the device.
/// Beyond it, eviction reads the rest of a huge file's tree as it frees it (freeing each
/// subtree from the cache as it goes), and a read error there shuts the filesystem down.
pub(crate) const PREFETCH_NODES_MAX: usize = 1024;

impl<D: BlockDevice> Filesystem<D> {
    /// Loads node `nid` into the cache, validating it.
    pub(crate) fn load_node(&mut self, nid: Nid) -> Result<&mut CachedNode> {
        // One search of the node cache, hit or miss (the dump and fsck of a big tree make
        // several calls per inode).
        let vacant = match self.nodes.entry(nid) {
            btree_map::Entry::Occupied(o) => return Ok(o.into_mut()),
            btree_map::Entry::Vacant(v) => v,
        };
        if nid == NULL_NID || nid >= self.nat.nid_count() {
            return Err(Error::corrupt(0, "node id out of range"));
        }
        let e = self.nat.get(nid).ok_or(Error::corrupt(0, "node id out of range"))?;
        if e.addr == NULL_ADDR || e.addr == NEW_ADDR || !self.geo.in_main(e.addr) {
            return Err(Error::corrupt(e.addr as u64, "node pointer to a node that is not in use"));
        }
        let mut b = zero_block();
        let seed = self.seed;
        // Read once more when it fails its checks (`read_twice_if`: a misread node refuses
        // the mount or fails the operation).
        crate::read_verified(&mut self.dev, e.addr as u64, &mut b, |b| node::validate(b, e.addr as u64, nid, seed))?;
        self.stats.device_reads += 1;
        if node::footer_ino(&b) != e.ino {
            return Err(Error::corrupt(e.addr as u64, "node: owner inode differs from the NAT"));
        }
        Ok(vacant.insert(CachedNode { block: b, dirty: false }))
    }

    pub(crate) fn node_ref(&mut self, nid: Nid) -> Result<&Block> {
        Ok(&self.load_node(nid)?.block)
    }

    pub(crate) fn node_mut(&mut self, nid: Nid) -> Result<&mut Block> {
        self.load_node(nid)?;
        self.note_change();
        let n = self.nodes.get_mut(&nid).expect("loaded");
        self.dirty_nodes.insert(nid, node::footer_ino(&n.block));
        n.dirty = true;
        Ok(&mut n.block)
    }

    /// Checks that `ino` names a live inode; NotFound when it does not (stale handle).
    pub(crate) fn check_ino(&self, ino: Ino) -> Result<()> {
        match self.nat.get(ino) {
            Some(e) if e.ino == ino && !e.is_free() => Ok(()),
            _ => Err(Error::NotFound),
        }
    }

    /// The inode block of `ino`, validated as an inode.
    pub(crate) fn inode_ref(&mut self, ino: Ino) -> Result<&Block> {
        self.check_ino(ino)?;
        let addr = self.nat_addr(ino);
        let b = self.node_ref(ino)?;
        if node::footer_type(b) != Some(NodeType::Inode) {
            return Err(Error::corrupt(addr, "expected an inode, found another node type"));
        }
        Ok(b)
    }

    pub(crate) fn inode_mut(&mut self, ino: Ino) -> Result<&mut Block> {
        self.inode_ref(ino)?;
        self.node_mut(ino)
    }

    /// A copy of the inode block (for callers that then change other state).
    pub(crate) fn inode_block(&mut self, ino: Ino) -> Result<Box<Block>> {
        Ok(Box::new(*self.inode_ref(ino)?))
    }

    pub(crate) fn inode_kind(&mut self, ino: Ino) -> Result<FileType> {
        let addr = self.nat_addr(ino);
        let b = self.inode_ref(ino)?;
        FileType::from_mode(inode::mode(b) as u32).ok_or(Error::corrupt(addr, "inode: invalid file type"))
    }

    pub(crate) fn attr_of(&mut self, ino: Ino) -> Result<Attr> {
        let staged = self.atomic.get(&ino).map(|s| s.size);
        // Holes fallocate reserved count as the file's blocks (st_blocks), as ext4 counts
        // unwritten extents: `du` then finds who holds the space statfs shows as used.
        let reserved = self.prealloc.hole_count(ino);
        let b = self.inode_ref(ino)?;
        let mode = inode::mode(b) as u32;
        let size = staged.unwrap_or(inode::size(b));
        // An inline file shows the sectors its bytes take (f2fs's getattr does the same), so
        // that tools that take st_blocks 0 for "all holes" still read it.
        let inline_sectors = if inode::is_inline(b) { size.div_ceil(512) } else { 0 };
        Ok(Attr {
            ino,
            size,
            blocks: inode::blocks(b).saturating_add(reserved).saturating_mul(BLOCK_SIZE as u64 / 512) + inline_sectors,
            kind: FileType::from_mode(mode).unwrap_or(FileType::Regular),
            perm: (mode & 0o7777) as u16,
            nlink: inode::links(b),
            uid: inode::uid(b),
            gid: inode::gid(b),
            rdev: inode::rdev(b),
            atime: inode::time(b, inode::OFF_ATIME_SEC, inode::OFF_ATIME_NSEC),
            mtime: inode::time(b, inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC),
            ctime: inode::time(b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC),
            crtime: inode::time(b, inode::OFF_CRTIME_SEC, inode::OFF_CRTIME_NSEC),
            generation: inode::generation(b),
        })
    }

    /// Loads a child node reached from a parent pointer and checks that it belongs to
    /// `ino` and has the expected type.
    pub(crate) fn tree_child(&mut self, nid: Nid, ino: Ino, ty: NodeType) -> Result<&Block> {
        self.child(nid, ino, ty)
    }

    pub(crate) fn child(&mut self, nid: Nid, ino: Ino, ty: NodeType) -> Result<&Block> {
        let addr = self.nat_addr(nid);
        let b = self.node_ref(nid)?;
        if node::footer_type(b) != Some(ty) {
            return Err(Error::corrupt(addr, "node tree: child node of the wrong type"));
        }
        if node::footer_ino(b) != ino {
            return Err(Error::corrupt(addr, "node tree: child node of another inode"));
        }
        Ok(b)
    }

    /// The address of file block `idx` (NULL_ADDR for a hole, NEW_ADDR for a block that
    /// is only in the write-back cache).
    pub(crate) fn get_addr(&mut self, ino: Ino, idx: u64) -> Result<BlockAddr> {
        Ok(self.get_ptr(ino, idx)?.0)
    }

    /// The data pointer of file block `idx`: its address (as [`Self::get_addr`]) and the
    /// checksum stored beside it (0 for a hole or a block not yet written).
    pub(crate) fn get_ptr(&mut self, ino: Ino, idx: u64) -> Result<(BlockAddr, u32)> {
        match node::block_path(idx)? {
            BlockPath::Inode { ofs } => {
                let b = self.inode_ref(ino)?;
                Ok((inode::addr(b, ofs), inode::data_crc(b, ofs)))
            }
            BlockPath::Node { slot, depth, idx: path, ofs, .. } => {
                let mut nid = inode::nid(self.inode_ref(ino)?, slot);
                for &i in path.iter().take(depth) {
                    if nid == NULL_NID {
                        return Ok((NULL_ADDR, 0));
                    }
                    nid = node::slot(self.child(nid, ino, NodeType::Indirect)?, i);
                }
                if nid == NULL_NID {
                    return Ok((NULL_ADDR, 0));
                }
                let b = self.child(nid, ino, NodeType::Direct)?;
                Ok((node::addr(b, ofs), node::data_crc(b, ofs)))
            }
        }
    }

    /// Allocates a fresh node of `ino` in the cache.
    pub(crate) fn new_node(&mut self, ino: Ino, ty: NodeType, ofs: u32) -> Result<Nid> {
        let nid = self.nat.alloc(|_| ino)?;
        self.note_change();
        let mut b = zero_block();
        node::init_footer(&mut b, nid, ino, ty, ofs);
        self.nodes.insert(nid, CachedNode { block: b, dirty: true });
        self.dirty_nodes.insert(nid, ino);
        Ok(nid)
    }

    /// Makes sure the nodes on the path to file block `idx` exist; returns the node that
    /// holds the block's address, the index in it, and the current address.
    pub(crate) fn map_for_write(&mut self, ino: Ino, idx: u64) -> Result<(Nid, u32, BlockAddr)> {
        let path = node::block_path(idx)?;
        match path {
            BlockPath::Inode { ofs } => Ok((ino, ofs, inode::addr(self.inode_ref(ino)?, ofs))),
            BlockPath::Node { slot, depth, idx: pidx, ofs, dnode } => {
                let mut nid = inode::nid(self.inode_ref(ino)?, slot);
                if nid == NULL_NID {
                    let (ty, o) = if depth == 0 {
                        (NodeType::Direct, dnode as u32)
                    } else {
                        (NodeType::Indirect, node::indirect_ofs(&path, 0))
                    };
                    nid = self.new_node(ino, ty, o)?;
                    inode::set_nid(self.inode_mut(ino)?, slot, nid);
                }
                for (level, &i) in pidx.iter().enumerate().take(depth) {
                    self.child(nid, ino, NodeType::Indirect)?;
                    let mut c = node::slot(self.node_ref(nid)?, i);
                    if c == NULL_NID {
                        let last = level + 1 == depth;
                        let (ty, o) = if last {
                            (NodeType::Direct, dnode as u32)
                        } else {
                            (NodeType::Indirect, node::indirect_ofs(&path, level + 1))
                        };
                        c = self.new_node(ino, ty, o)?;
                        node::set_slot(self.node_mut(nid)?, i, c);
                    }
                    nid = c;
                }
                let old = node::addr(self.child(nid, ino, NodeType::Direct)?, ofs);
                Ok((nid, ofs, old))
            }
        }
    }

    /// How many tree nodes (direct and indirect) `map_for_write` would have to create to
    /// map every block in `idxs`: what an atomic commit must have node ids and room for
    /// before it changes anything. Reads nodes, changes nothing.
    pub(crate) fn nodes_missing(&mut self, ino: Ino, idxs: &[u64]) -> Result<u64> {
        // A tree position: (inode slot, level, index in the top indirect node, index in the
        // second); level 0 is the node the inode slot points at.
        let mut missing: alloc::collections::BTreeSet<(usize, usize, u32, u32)> = alloc::collections::BTreeSet::new();
        for &idx in idxs {
            let BlockPath::Node { slot, depth, idx: path, .. } = node::block_path(idx)? else { continue };
            let mut nid = inode::nid(self.inode_ref(ino)?, slot);
            for level in 0..=depth {
                let key = (slot, level, if level >= 1 { path[0] } else { 0 }, if level >= 2 { path[1] } else { 0 });
                if nid == NULL_NID {
                    missing.insert(key);
                    continue;
                }
                if level < depth {
                    nid = node::slot(self.child(nid, ino, NodeType::Indirect)?, path[level]);
                }
            }
        }
        Ok(missing.len() as u64)
    }

    /// Sets a data pointer (address and checksum) in the node that holds it (the inode or
    /// a direct node). A hole or a block only in the cache has checksum 0.
    pub(crate) fn set_holder_slot(&mut self, holder: Nid, ofs: u32, addr: BlockAddr, crc: u32) -> Result<()> {
        debug_assert!(crc == 0 || (addr != NULL_ADDR && addr != NEW_ADDR), "a checksum without a block");
        let b = self.node_mut(holder)?;
        if node::footer_type(b) == Some(NodeType::Inode) {
            inode::set_ptr(b, ofs, addr, crc);
        } else {
            node::set_ptr(b, ofs, addr, crc);
        }
        Ok(())
    }

    /// Records that file block `idx` now has data in the write-back cache.
    pub(crate) fn put_dirty_block(&mut self, ino: Ino, idx: u64, block: Box<Block>) -> Result<()> {
        let (holder, ofs, old) = self.map_for_write(ino, idx)?;
        if old == NULL_ADDR {
            self.set_holder_slot(holder, ofs, NEW_ADDR, 0)?;
            let b = self.inode_mut(ino)?;
            let n = inode::blocks(b);
            inode::set_blocks(b, n.saturating_add(1));
        } else if old == NEW_ADDR && self.prealloc_on_disk && !self.data.contains_key(&(ino, idx)) {
            // A reserved hole on disk now filled: the pointer stays `NEW_ADDR` (now "in
            // the write-back cache") and the block stays counted in `blocks`; the
            // reservation is spent (the block counts as dirty instead).
            self.prealloc.release_on_disk(1);
        }
        // A reserved hole now filled: the reservation is spent (its block is counted as dirty).
        self.prealloc.release_range(ino, idx, idx + 1);
        // New contents get a checksum of their own, even where cleaning moved a bad block.
        self.gc_kept_crcs.remove(&(ino, idx));
        self.note_change();
        self.data.insert((ino, idx), block);
        Ok(())
    }

    /// Frees a node: its block becomes invalid and its nid free after the next checkpoint.
    pub(crate) fn free_node(&mut self, nid: Nid) -> Result<()> {
        let e = self.nat.get(nid).ok_or(Error::corrupt(0, "freeing a node id out of range"))?;
        self.note_change();
        self.seg.invalidate(&self.geo, &mut self.sit, e.addr)?;
        self.nat.free(nid);
        self.nodes.remove(&nid);
        self.dirty_nodes.remove(&nid);
        // A directory's id freed (rmdir's eviction, an undone mkdir): its parent is no
        // longer recorded (the id may later be another inode's).
        self.dir_parents.forget(nid);
        self.other_names.forget(nid);
        Ok(())
    }

    /// Drops the pointer of file block `idx` of `ino` (address `addr`): its block becomes
    /// invalid, or, for a reserved hole on disk (`NEW_ADDR` with nothing in the write-back
    /// cache), its reservation goes. Either way it leaves `blocks` (`freed`).
    fn drop_addr(&mut self, ino: Ino, idx: u64, addr: BlockAddr, freed: &mut u64) -> Result<()> {
        if addr != NULL_ADDR {
            self.note_change();
            if addr == NEW_ADDR && self.prealloc_on_disk && !self.data.contains_key(&(ino, idx)) {
                self.prealloc.release_on_disk(1);
            }
            self.seg.invalidate(&self.geo, &mut self.sit, addr)?;
            *freed += 1;
        }
        Ok(())
    }

    /// Frees every data block of `ino` at file index `from` or beyond, and the nodes that
    /// only held such blocks. Work is proportional to the nodes that exist, not to the
    /// file's size (a sparse 4 TiB file truncates fast).
    pub(crate) fn truncate_blocks(&mut self, ino: Ino, from: u64) -> Result<()> {
        self.since_cp.truncated(ino, from);
        self.free_block_range(ino, from, u64::MAX)
    }

    /// Frees the data blocks of `ino` at file indexes `from..to` (holes afterwards), and
    /// the nodes whose whole span lies in the range. Bounded by the nodes that exist.
    pub(crate) fn free_block_range(&mut self, ino: Ino, from: u64, to: u64) -> Result<()> {
        if from >= to {
            return Ok(());
        }
        // Reservations of the range go with it (truncation, hole punch, eviction): in
        // memory here, on disk as the walk below meets their pointers.
        self.prealloc.release_range(ino, from, to);
        let mut freed = 0u64;
        let ib = self.inode_block(ino)?;
        for ofs in (from.min(A) as u32)..(to.min(A) as u32) {
            let a = inode::addr(&ib, ofs);
            if a != NULL_ADDR {
                self.drop_addr(ino, ofs as u64, a, &mut freed)?;
                inode::set_ptr(self.inode_mut(ino)?, ofs, NULL_ADDR, 0);
            }
        }
        for (slot, &(base, span, depth)) in node::SLOT_SUBTREES.iter().enumerate() {
            let nid = inode::nid(&ib, slot);
            if nid == NULL_NID || base + span <= from || base >= to {
                continue;
            }
            if self.free_subtree_range(ino, nid, depth, base, from, to, &mut freed)? {
                inode::set_nid(self.inode_mut(ino)?, slot, NULL_NID);
            }
        }
        // The write-back cache last: the walk above tells a reserved `NEW_ADDR` from a
        // dirty block's by whether the cache holds the block.
        let doomed: Vec<(Ino, u64)> = self.data.range((ino, from)..(ino, to)).map(|(k, _)| *k).collect();
        for k in doomed {
            self.note_change();
            self.data.remove(&k);
            self.gc_kept_crcs.remove(&k);
        }
        let b = self.inode_mut(ino)?;
        let n = inode::blocks(b);
        inode::set_blocks(b, n.saturating_sub(freed));
        Ok(())
    }

    /// Frees the blocks at `from..to` under node `nid` (spanning file blocks from `base`);
    /// returns true when the node itself was freed (its whole span was in the range).
    #[allow(clippy::too_many_arguments)]
    fn free_subtree_range(
        &mut self,
        ino: Ino,
        nid: Nid,
        depth: usize,
        base: u64,
        from: u64,
        to: u64,
        freed: &mut u64,
    ) -> Result<bool> {
        let ty = if depth == 0 { NodeType::Direct } else { NodeType::Indirect };
        let slots: Vec<u32> = {
            let b = self.child(nid, ino, ty)?;
            if depth == 0 {
                (0..ADDRS_PER_BLOCK).map(|i| node::addr(b, i)).collect()
            } else {
                (0..NIDS_PER_BLOCK).map(|i| node::slot(b, i)).collect()
            }
        };
        let child_span = node::entry_span(depth);
        let whole = from <= base && base.saturating_add(child_span * node::entries_at(depth) as u64) <= to;
        for (i, &v) in slots.iter().enumerate() {
            if v == NULL_ADDR {
                continue;
            }
            let cbase = base + i as u64 * child_span;
            if cbase + child_span <= from || cbase >= to {
                continue;
            }
            let clear = if depth == 0 {
                self.drop_addr(ino, cbase, v, freed)?;
                true
            } else {
                self.free_subtree_range(ino, v, depth - 1, cbase, from, to, freed)?
            };
            if clear && !whole {
                let b = self.node_mut(nid)?;
                if depth == 0 {
                    node::set_ptr(b, i as u32, NULL_ADDR, 0);
                } else {
                    node::set_slot(b, i as u32, NULL_NID);
                }
            }
        }
        if whole {
            self.free_node(nid)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Loads what evicting `ino` will read — its inode and the nodes of its tree, up to
    /// [`PREFETCH_NODES_MAX`] — into the node cache, changing nothing. Operations that may
    /// evict an inode (unlink, rmdir, rename over a name, the release of an orphan) call
    /// it before their first change, so that a read that fails (EIO, a node that fails its
    /// checksum: a cold cache meets them) fails the operation while nothing has changed
    /// (invariant 7) instead of half way through.
    pub(crate) fn prefetch_for_evict(&mut self, ino: Ino) -> Result<()> {
        if crate::mutant!("mutant-eio-change-before-read") {
            return Ok(());
        }
        let ib = self.inode_block(ino)?;
        let mut budget = PREFETCH_NODES_MAX;
        for (slot, &(_, _, depth)) in node::SLOT_SUBTREES.iter().enumerate() {
            let nid = inode::nid(&ib, slot);
            if nid != NULL_NID {
                self.prefetch_subtree(ino, nid, depth, &mut budget)?;
            }
        }
        Ok(())
    }

    /// Loads node `nid` (at `depth` above the data) and its subtree, within `budget`
    /// nodes. Bounded by the budget and the tree's depth (at most 3 levels).
    fn prefetch_subtree(&mut self, ino: Ino, nid: Nid, depth: usize, budget: &mut usize) -> Result<()> {
        if *budget == 0 {
            return Ok(());
        }
        *budget -= 1;
        if depth == 0 {
            self.child(nid, ino, NodeType::Direct)?;
            return Ok(());
        }
        let kids: Vec<Nid> = {
            let b = self.child(nid, ino, NodeType::Indirect)?;
            (0..NIDS_PER_BLOCK).map(|i| node::slot(b, i)).filter(|&c| c != NULL_NID).collect()
        };
        for k in kids {
            self.prefetch_subtree(ino, k, depth - 1, budget)?;
        }
        Ok(())
    }

    /// Destroys an inode with no links and no open handles: its blocks, nodes, xattrs.
    pub(crate) fn evict_inode(&mut self, ino: Ino) -> Result<()> {
        self.check_ino(ino)?;
        self.truncate_blocks(ino, 0)?;
        let x = inode::xattr_nid(self.inode_ref(ino)?);
        if x != NULL_NID {
            self.free_node(x)?;
        }
        self.free_node(ino)?;
        self.valid_inodes = self.valid_inodes.saturating_sub(1);
        self.open_counts.remove(&ino);
        self.orphans.remove(&ino);
        if let Some(cow) = self.atomic.remove(&ino).and_then(|s| s.cow) {
            // The file's open session dies with it: its staged blocks too.
            self.drop_session_inode(cow);
        }
        self.since_cp.evicted(ino);
        Ok(())
    }
}
