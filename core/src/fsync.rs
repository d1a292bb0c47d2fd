//! fsync without checkpoints: fsync batches appended to the warm node chain.
//!
//! An fsync writes the file's dirty data blocks (to the warm data log), then its dirty
//! direct nodes and xattr node, then its inode — all nodes to the warm node log, whose
//! blocks form a chain through their footers' `next_blkaddr`. The inode is the batch's
//! commit record: it carries the **fsync mark**, a **dentry mark** when recovery must
//! also restore the file's name (a file created since the last checkpoint), the lowest
//! file block truncated since the previous fsync, and the CRC32C of the batch's data
//! blocks, so that recovery can tell a complete batch from a torn one.
//!
//! **Writeback-wait-before-flush.** Recovery needs every earlier node of the chain to be
//! durable, and a flush only covers writes that have completed. So an fsync waits for all
//! submitted writes to complete (`wait_writes`) before it flushes: then the flush makes
//! the whole chain up to the fsync mark durable. Without the wait, the marked inode can be
//! durable while an earlier chain node is not: the chain breaks and an fsync that returned
//! success loses its data (scenario "broken dnode chain", docs/INVARIANTS.md). Data blocks are never trusted without the batch CRC,
//! so a node that reached the disk without its data is never applied (invariant 6, docs/INVARIANTS.md).
//!
//! On an image with namespace records (`FEATURE_INCOMPAT_NS_RECORDS`, mkfs's default) the
//! directory-entry changes since the checkpoint go into the chain as record nodes ahead of
//! the batches that need them (`nschain.rs`), with the riders a directory fsync or a rename
//! over a name needs ([`Filesystem::riders`]); the fallback to a checkpoint (counted by
//! reason in [`crate::Stats::fsync_checkpoint_fallbacks`]) is left for what records cannot
//! express. Without records it falls back where roll-forward cannot express the change:
//! directories; inodes renamed, hard-linked or unlinked-from-one-of-several-names since the
//! checkpoint; files created since the checkpoint whose parent directory is also new, that
//! have more than one link, or whose name was removed from its directory since the
//! checkpoint (the checkpoint may still hold another file under it).
//!
//! For a multi-threaded driver the fsync is split: [`Filesystem::fsync_submit`] (under the
//! driver's lock) submits the batch; the wait and flush can then be issued on the device
//! outside the lock and shared by concurrent fsyncs (group commit).

use crate::device::BlockDevice;
use crate::error::{Error, Result};
use crate::fs::{Filesystem, Timestamp};
use crate::layout::{NEW_ADDR, NULL_ADDR};
use crate::node::{self, inode, FileType, NodeType};
use crate::nsrec::NsRecord;
use crate::segment::Log;
use crate::since_cp::CheckpointReason;
use crate::{Ino, Nid};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

/// What the caller must still do after [`Filesystem::fsync_submit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct FsyncTicket {
    /// Wait for all submitted writes, then flush the device. False when the fsync was
    /// served by a checkpoint (already durable).
    pub flush_needed: bool,
}

impl<D: BlockDevice> Filesystem<D> {
    /// Makes the file's data and metadata durable (`datasync`: only what is needed to read
    /// the data back, like fdatasync).
    pub fn fsync(&mut self, ino: Ino, datasync: bool, now: Timestamp) -> Result<()> {
        let t = self.fsync_submit(ino, datasync, now)?;
        if t.flush_needed {
            self.finish_batch(crate::mutant!("mutant-fsync-no-wait"))?;
        }
        Ok(())
    }

    /// Waits for submitted writes (unless `skip_wait`, which only mutants ask for) and
    /// flushes. A failure turns the filesystem read-only.
    pub(crate) fn finish_batch(&mut self, skip_wait: bool) -> Result<()> {
        let r = (|| {
            if !skip_wait {
                self.dev.wait_writes()?;
            }
            self.dev.flush()?;
            Ok(())
        })();
        self.stats.flushes += 1;
        match r {
            Ok(()) => Ok(()),
            Err(e) => self.fail(e),
        }
    }

    /// A driver that issued the wait and flush itself reports a failure with this: the
    /// filesystem shuts down, as for any failed write.
    pub fn flush_failed(&mut self) {
        self.read_only = true;
        self.shut_down = true;
    }

    /// First half of fsync: submits the batch (or writes a checkpoint). The caller then
    /// waits for all writes and flushes the device, unless the ticket says otherwise.
    pub fn fsync_submit(&mut self, ino: Ino, datasync: bool, now: Timestamp) -> Result<FsyncTicket> {
        // An fsync of a clean file reads its inode (and its ancestors): keep the node
        // cache within its bound after it, as after a read (`reading`).
        let r = self.op(|fs| {
            fs.check_writable()?;
            let kind = fs.inode_kind(ino)?;
            fs.touch(now);
            fs.stats.fsyncs += 1;
            // Every read the decision needs (ancestors, directory entries) comes before the
            // batch changes anything.
            let (reason, records) = fs.fsync_decision(ino, kind)?;
            let (reason, riders) = match reason {
                Some(r) => (Some(r), Vec::new()),
                // A file's fsync that writes no record names no rider either (a directory's
                // riders are the whole tree's changes, with records or without).
                None if !records && kind != FileType::Directory => (None, Vec::new()),
                None => match fs.riders(ino, kind)? {
                    Ok(riders) => (None, riders),
                    Err(r) => (Some(r), Vec::new()),
                },
            };
            // Riders with no record to write would have no record node to carry their group:
            // each batch would stand alone and a crash could keep some of them. A checkpoint
            // makes them durable together (the directory fsync's promise without records).
            let (reason, riders) = if reason.is_none()
                && kind == FileType::Directory
                && !riders.is_empty()
                && fs.since_cp.ns_all_written()
            {
                (Some(CheckpointReason::Directory), Vec::new())
            } else {
                (reason, riders)
            };
            if reason.is_none() && kind == FileType::Directory {
                if crate::mutant!("mutant-dir-fsync-no-records") {
                    return Ok(FsyncTicket { flush_needed: true });
                }
                // Namespace records carry a directory's entries: write them, no batch of
                // its own; the changed files ride along (the whole tree, as a checkpoint).
                fs.group_riders = riders;
                let t = fs.fsync_records_only(now)?;
                return fs.write_riders(t, now);
            }
            fs.group_riders = riders;
            let t = fs.fsync_submit_decided(ino, datasync, reason, records, now)?;
            fs.write_riders(t, now)
        });
        // An fsync that failed after its decision leaves no riders for a later fsync or
        // commit to write (`group_riders`), and no choice of records.
        self.group_riders.clear();
        self.since_cp.take_selected();
        self.shrink_node_cache();
        r
    }

    /// [`Filesystem::fsync_submit`] once it is known whether roll-forward can express the
    /// file's change (`reason` None) or a checkpoint must serve it, and why. Reads nothing
    /// the caller has not read: a failure here is a failed write, which shuts down.
    /// `records`: whether the namespace records not yet in the chain go first
    /// ([`Self::fsync_decision`]; an atomic commit always writes them).
    pub(crate) fn fsync_submit_decided(
        &mut self,
        ino: Ino,
        datasync: bool,
        reason: Option<CheckpointReason>,
        records: bool,
        now: Timestamp,
    ) -> Result<FsyncTicket> {
        if let Some(reason) = reason {
            self.count_checkpoint_reason(reason);
            self.checkpoint(false, now)?;
            return Ok(FsyncTicket { flush_needed: false });
        }
        let has_data = self.data.range((ino, 0)..=(ino, u64::MAX)).next().is_some();
        // The batch lists the file's dirty nodes itself (after data write-back dirties
        // more); scan them here only when there is no data to decide on.
        let dirty_nodes = if has_data { Vec::new() } else { self.dirty_nodes_of(ino) };
        let others = dirty_nodes.iter().any(|&n| n != ino);
        if datasync && !has_data && !others && !self.since_cp.is_resized(ino) && !self.since_cp.is_created(ino) {
            // Only metadata that fdatasync need not persist (times, mode, owner) changed.
            // Still flush: an earlier batch of this file may be waiting for one.
            self.stats.fdatasync_noops += 1;
            return self.fsync_records_if(records, now);
        }
        if !has_data && dirty_nodes.is_empty() {
            return self.fsync_records_if(records, now);
        }
        if !self.recovery_room_ok(ino, records) {
            return self.checkpoint_for_recovery_room(now);
        }
        let kind = if records { BatchKind::Own } else { BatchKind::OwnWithoutRecords };
        match self.write_batch(ino, kind) {
            Ok(()) => Ok(FsyncTicket { flush_needed: true }),
            Err(e) => self.fail(e),
        }
    }

    /// [`Self::fsync_records_only`] when `records`, else nothing to write (still the wait
    /// and flush: an earlier batch of the file may be waiting for one).
    fn fsync_records_if(&mut self, records: bool, now: Timestamp) -> Result<FsyncTicket> {
        if records {
            self.fsync_records_only(now)
        } else {
            Ok(FsyncTicket { flush_needed: true })
        }
    }

    /// An fsync with no batch to write: the namespace records not yet in the chain, if any
    /// (`FEATURE_INCOMPAT_NS_RECORDS`), then the wait and flush the ticket asks for. A
    /// checkpoint serves it instead when the records' replay would outgrow the recovery
    /// reserve.
    pub(crate) fn fsync_records_only(&mut self, now: Timestamp) -> Result<FsyncTicket> {
        let (nodes, _) = self.unwritten_record_cost();
        if nodes == 0 {
            return Ok(FsyncTicket { flush_needed: true });
        }
        if !self.room_for_batch(0, 0, false, true) && !crate::mutant!("mutant-no-recovery-reserve") {
            return self.checkpoint_for_recovery_room(now);
        }
        match self.write_pending_records(false) {
            Ok(()) => Ok(FsyncTicket { flush_needed: true }),
            Err(e) => self.fail(e),
        }
    }

    /// The other files whose batches an fsync (or atomic commit) of `ino` writes after its
    /// own on an image with namespace records, so that the records it writes never name a
    /// file older than it was then (rollfs's promise without records, where such an fsync
    /// checkpointed; ext4's `auto_da_alloc` for a file replaced by rename is the narrow
    /// form of it):
    /// - a directory's fsync: every other file, symlink and device node with changes since
    ///   the checkpoint, so it makes the whole tree durable as a checkpoint does (the
    ///   README's promise); a directory whose own attributes changed is a reason to
    ///   checkpoint;
    /// - any other fsync: the changed files its unwritten records rename over a name
    ///   (or exchange): a file written, not fsync'd, and renamed over another must never
    ///   come back empty under the name (crashtest's `rename-bad`), since the record takes
    ///   the old contents away. A file only created, linked or renamed to a fresh name
    ///   does not ride: its name may come back with an older state of its own (as on ext4,
    ///   whose `auto_da_alloc` flushes a file on a rename over another only), and another
    ///   user's files cost the fsync nothing unless they replace a name.
    ///
    /// Orphans (no name) ride with nobody; a file in an atomic session rides as its fsync
    /// would write it (what it held before the session: staged blocks are not in it). `Err`: one of them can only be made
    /// durable by a checkpoint, for this reason. Called before any change (it may read an
    /// inode whose data alone was dirty).
    pub(crate) fn riders(
        &mut self,
        ino: Ino,
        kind: FileType,
    ) -> Result<core::result::Result<Vec<Ino>, CheckpointReason>> {
        if !self.records_in_chain() || crate::mutant!("mutant-no-riders") {
            return Ok(Ok(Vec::new()));
        }
        // A file's fsync with no record to write names no rider: skip the scan of the whole
        // write-back cache on the common fsync (SQLite's, an fsync loop's).
        if kind != FileType::Directory && self.since_cp.selected().next().is_none() {
            return Ok(Ok(Vec::new()));
        }
        // Bounded by the write-back cache's blocks and dirty nodes.
        let mut changed: BTreeSet<Ino> = self.data.keys().map(|&(i, _)| i).collect();
        changed.extend(self.dirty_nodes.inos());
        changed.remove(&ino);
        let named: Option<BTreeSet<Ino>> = (kind != FileType::Directory).then(|| {
            let mut named = BTreeSet::new();
            for r in self.since_cp.selected() {
                if let NsRecord::Rename { ino, ino2, exchange, .. } = r {
                    // Only a rename over a name (`ino2` the inode it replaced, or the
                    // other of an exchange) takes contents away from it.
                    if *ino2 != 0 {
                        named.insert(*ino);
                    }
                    if *exchange {
                        named.insert(*ino2);
                    }
                }
            }
            named
        });
        let mut riders = Vec::new();
        for c in changed {
            if named.as_ref().is_some_and(|n| !n.contains(&c)) || self.orphans.contains(&c) {
                continue;
            }
            let ck = self.inode_kind(c)?;
            if let Some(r) = self.records_checkpoint_reason(c, ck) {
                return Ok(Err(r));
            }
            if ck != FileType::Directory {
                riders.push(c);
            }
        }
        Ok(Ok(riders))
    }

    /// Appends the batches of the riders the fsync decided on ([`Self::riders`], kept in
    /// `group_riders` from the decision on, so that the records' group counts them) after
    /// an fsync's own (`t`: nothing to do when a checkpoint served it, which made them
    /// durable too); a rider the recovery reserve cannot take makes the fsync a checkpoint
    /// instead. Riders a checkpoint made clean since the decision are skipped. Leaves
    /// `group_riders` empty.
    pub(crate) fn write_riders(&mut self, t: FsyncTicket, now: Timestamp) -> Result<FsyncTicket> {
        let riders = core::mem::take(&mut self.group_riders);
        if !t.flush_needed {
            return Ok(t);
        }
        for c in riders {
            if !self.rider_changed(c) {
                continue;
            }
            if !self.recovery_room_ok(c, true) {
                return self.checkpoint_for_recovery_room(now);
            }
            if let Err(e) = self.write_batch(c, BatchKind::Rider) {
                return self.fail(e);
            }
            self.stats.fsync_riders += 1;
        }
        Ok(t)
    }

    /// The chain would outgrow the room its roll-forward is promised: a checkpoint serves
    /// the fsync instead (and empties the chain) while there is still room for one, and a
    /// cleaning round follows if even an empty chain's recovery would not find its room.
    fn checkpoint_for_recovery_room(&mut self, now: Timestamp) -> Result<FsyncTicket> {
        self.stats.recovery_reserve_fallbacks += 1;
        self.count_checkpoint_reason(CheckpointReason::RecoveryRoom);
        self.checkpoint(false, now)?;
        self.make_room_for_chains(now)?;
        Ok(FsyncTicket { flush_needed: false })
    }

    /// Whether rider `c` still has something to write (a checkpoint since the decision may
    /// have written it): the same test counts the group's batches and writes them.
    pub(crate) fn rider_changed(&self, c: Ino) -> bool {
        self.data.range((c, 0)..=(c, u64::MAX)).next().is_some() || self.dirty_nodes.has_any_of(c)
    }

    /// Free segments a roll-forward needs at mount for a chain over `nodes` distinct nodes,
    /// `dentries` of them dentry-marked inodes: recovery rewrites each node and may recreate
    /// an indirect node above each direct node (2 blocks a node); each restored name dirties
    /// its directory's inode and a dentry block, and may grow the directory's tree (5 blocks
    /// a name), plus, where its bucket is full in every level and overflows
    /// (`FEATURE_INCOMPAT_DIR_V2`), its bucket's first block and that block's direct node
    /// (7); then a segment for each log it writes (warm and cold node; hot data and hot
    /// node for names), whose open segment may be full.
    /// `records`: the blocks replaying the chain's namespace records rewrites (nschain.rs,
    /// `RECORD_REPLAY_BLOCKS` a record), which also writes names.
    fn recovery_segments(&self, nodes: u64, dentries: u64, records: u64) -> u64 {
        let seg = self.geo.segment_blocks as u64;
        // Each log recovery writes may find its open segment full (or moved past the data
        // its chain points at: `recovery::chain_data_in_open_segments`): one segment more
        // per log — warm and cold node always; hot data and hot node to restore names; warm
        // data for a symlink's target a replayed create writes.
        let logs = if records > 0 {
            5
        } else if dentries > 0 {
            4
        } else {
            2
        };
        (2 * nodes + 7 * dentries + records + 16).div_ceil(seg) + logs
    }

    /// Whether appending `ino`'s batch to the chain keeps room for the chain's roll-forward:
    /// after the batch (the segments its data and nodes open beyond the room left in the
    /// warm logs), the free segments must still cover what recovery of the whole chain
    /// needs. A crash then always leaves a device that mounts read-write. `records`: whether
    /// the namespace records not yet written go into the chain before the batch (a batch
    /// without them needs no room for their replay: another user's pending renames must not
    /// turn a plain fsync into a checkpoint, review 51).
    fn recovery_room_ok(&self, ino: Ino, records: bool) -> bool {
        if crate::mutant!("mutant-no-recovery-reserve") {
            return true;
        }
        let data = self.data.range((ino, 0)..=(ino, u64::MAX)).count() as u64;
        // The batch's nodes: its dirty nodes (inode, xattr node, direct nodes) and the
        // direct node over each dirty data block (overwrites dirty theirs at write-back).
        // First an upper bound without scanning (fsync's fast path): every dirty node.
        let dnodes = self.data_dnodes(ino);
        let dentry = self.since_cp.dentry_pending(ino) && !self.records_in_chain();
        let bound = self.dirty_nodes.len() as u64 + 1 + dnodes;
        if self.room_for_batch(data, bound, dentry, records) {
            return true;
        }
        let exact = self.dirty_nodes_of(ino).len() as u64 + 1 + dnodes;
        exact < bound && self.room_for_batch(data, exact, dentry, records)
    }

    /// Distinct direct nodes over `ino`'s dirty data blocks (beyond the inode's own array).
    fn data_dnodes(&self, ino: Ino) -> u64 {
        let mut last = None;
        let mut n = 0;
        for (&(_, idx), _) in self.data.range((ino, 0)..=(ino, u64::MAX)) {
            if let Ok(node::BlockPath::Node { dnode, .. }) = node::block_path(idx) {
                if last != Some(dnode) {
                    n += 1;
                    last = Some(dnode);
                }
            }
        }
        n
    }

    fn room_for_batch(&self, data: u64, nodes: u64, dentry: bool, records: bool) -> bool {
        let seg = self.geo.segment_blocks as u64;
        let opened = |log: Log, blocks: u64| {
            let room = seg.saturating_sub(self.seg.logs[log as usize].blkoff as u64);
            blocks.saturating_sub(room).div_ceil(seg)
        };
        // Data may also go to the cold data log (blocks cleaning moved): count it as warm.
        // The record nodes written before the batch go to the warm node log too; replaying
        // their records rewrites what the records touch.
        let (record_nodes, record_blocks) = if records { self.unwritten_record_cost() } else { (0, 0) };
        let batch_segments = opened(Log::WarmData, data) + opened(Log::WarmNode, nodes + record_nodes) + 1;
        let (chain_nodes, chain_dentries) = self.since_cp.chain_extent();
        let chain = chain_nodes + nodes;
        let dentries = chain_dentries + dentry as u64;
        let records = self.since_cp.ns_replay_blocks() + record_blocks;
        let free = self.seg.free_segments() as u64;
        free >= batch_segments + self.recovery_segments(chain, dentries, records)
    }

    /// After a checkpoint that an fsync needed for room: if even an empty chain's recovery
    /// would not find its room now, clean one round (counted in `fsync_gc_rounds`). Best
    /// effort: the fsync is already durable, and a failure here shows in the next operation
    /// (a failed write turns the filesystem read-only).
    fn make_room_for_chains(&mut self, now: Timestamp) -> Result<()> {
        let want = self.recovery_segments(4, 1, 0) + 1;
        if self.read_only || (self.seg.free_segments() as u64) >= want {
            return Ok(());
        }
        self.stats.fsync_gc_rounds += 1;
        match self.gc_round(crate::gc::GcMode::Foreground, now) {
            // A round that found nothing to clean (or no room to clean into) is no failure:
            // the next fsync checkpoints again.
            Err(_) if !self.shut_down => Ok(()),
            // A write of the round failed and shut the filesystem down: the fsync reports
            // it (its own data is durable already, by the checkpoint), rather than leave
            // it to the next operation.
            Err(e) => Err(e),
            Ok(_) => Ok(()),
        }
    }

    /// Counts a checkpoint that serves an fsync or an atomic commit, and why.
    pub(crate) fn count_checkpoint_reason(&mut self, reason: CheckpointReason) {
        self.stats.fsync_checkpoint_fallbacks += 1;
        let s = &mut self.stats;
        *match reason {
            CheckpointReason::Directory => &mut s.fsync_cp_directory,
            CheckpointReason::Relinked => &mut s.fsync_cp_relinked,
            CheckpointReason::Orphan => &mut s.fsync_cp_orphan,
            CheckpointReason::PathChanged => &mut s.fsync_cp_path_changed,
            CheckpointReason::NameNotRestorable => &mut s.fsync_cp_name_not_restorable,
            CheckpointReason::DirLostAName => &mut s.fsync_cp_dir_lost_a_name,
            CheckpointReason::RecoveryRoom => &mut s.fsync_cp_recovery_room,
            CheckpointReason::Spilled => &mut s.fsync_cp_spilled,
            CheckpointReason::Reserved => &mut s.fsync_cp_reserved,
        } += 1;
    }

    /// What an fsync of `ino` decides before it changes anything: why it must checkpoint
    /// (if it must), and whether the namespace records not yet in the chain go before its
    /// batch. A directory's fsync writes them all (the whole tree); a file's only when it
    /// needs them: one of them names it (its create, a link, a rename), or it would need a
    /// checkpoint without records (relinked, below a renamed directory, a name its
    /// directory may not restore: `chain_checkpoint_reason`); then only those it depends on
    /// ([`Self::choose_records`]). Otherwise its batch goes alone, as without records:
    /// writing them would make the files they rename over names ride along — another
    /// user's rename of a file it never fsync'd made every fsync write that file (review
    /// 50, F2).
    pub(crate) fn fsync_decision(&mut self, ino: Ino, kind: FileType) -> Result<(Option<CheckpointReason>, bool)> {
        let all = kind == FileType::Directory;
        let (reason, records) = self.fsync_decision_for(ino, kind, all)?;
        self.choose_records(ino, kind, records, all, |_| false)?;
        Ok((reason, records))
    }

    /// Which of the records not yet in the chain an fsync or commit of `ino` that writes
    /// records (`records`) writes (`Filesystem::select_records`): every one for a directory
    /// (`all`: the whole tree, as a checkpoint) or a file whose names or path are not known
    /// for sure; else those touching the file, and its directories when one was renamed
    /// since the checkpoint (invariant 3: the path it was fsync'd under), those `seed`
    /// picks (a commit's journal removals), and what they depend on. Before, records were
    /// written as a prefix, so an fsync that needed one wrote every user's, with their
    /// riders (review 56, second user, F1). Reads the file's ancestors; changes only the
    /// selection.
    pub(crate) fn choose_records(
        &mut self,
        ino: Ino,
        kind: FileType,
        records: bool,
        all: bool,
        seed: impl Fn(&NsRecord) -> bool,
    ) -> Result<()> {
        if !records || !self.records_in_chain() {
            self.since_cp.select_records(Vec::new());
            return Ok(());
        }
        let mut all = all || kind == FileType::Directory;
        // The entries on the file's path are made only by records whose object — the inode
        // created, linked or moved — is a directory on it: those, not every record in those
        // directories (another user's files in a shared parent), with what they depend on.
        let mut path = BTreeSet::new();
        if !all && self.since_cp.any_dir_renamed() && !crate::mutant!("mutant-records-without-path") {
            match self.path_inodes(ino)? {
                Some(p) => path = p,
                None => all = true,
            }
        }
        self.select_records(all, &BTreeSet::from([ino]), |r| seed(r) || record_moves_one_of(r, &path));
        Ok(())
    }

    /// The directories from `ino`'s one directory up to the root, through each inode's
    /// recorded parent; None when that path is not known for sure (several links, a
    /// recorded parent that does not hold its entry, a directory no longer live). Bounded
    /// by the node ids.
    fn path_inodes(&mut self, ino: Ino) -> Result<Option<BTreeSet<Ino>>> {
        let b = self.inode_ref(ino)?;
        let (links, pino, name) = (inode::links(b), inode::pino(b), inode::name(b).to_vec());
        if links != 1 || !self.records_its_entry(ino, pino, &name)? {
            return Ok(None);
        }
        let path = core::cell::RefCell::new(BTreeSet::new());
        let walk = self.walk_up(pino, |d| {
            path.borrow_mut().insert(d);
            false
        })?;
        Ok(matches!(walk, crate::namei::Walk::Root).then(|| path.into_inner()))
    }

    /// [`Self::fsync_decision`]; `all`: the records go first whatever the file needs (a
    /// directory's fsync; an atomic commit whose directory lost a name).
    pub(crate) fn fsync_decision_for(
        &mut self,
        ino: Ino,
        kind: FileType,
        all: bool,
    ) -> Result<(Option<CheckpointReason>, bool)> {
        let reason = self.chain_checkpoint_reason(ino, kind)?;
        if !self.records_in_chain() {
            return Ok((reason, false));
        }
        let complete = self.since_cp.ns_records().1;
        let none_unwritten = self.since_cp.ns_all_written();
        let names_it = self.since_cp.ns_unwritten().any(|(_, r)| record_names(r, ino));
        // A file linked, unlinked or renamed since the checkpoint (`Relinked`) has every
        // change of its names in a record naming it: once those are in the chain (with every
        // record they depend on), its names need no other record, and
        // only the file's other reasons count. Before, every fsync and commit of such a
        // file wrote every user's pending records with their riders until the next
        // checkpoint (review 56, second user, F2: another user's link and unlink of it).
        let needs = match reason {
            Some(CheckpointReason::Relinked) if complete => {
                !crate::mutant!("mutant-relinked-skips-other-reasons")
                    && self.unrelinked_checkpoint_reason(ino)?.is_some()
            }
            r => r.is_some(),
        };
        let records = !none_unwritten && (all || needs || names_it);
        if !complete {
            // A change no record expresses: names are durable only by a checkpoint, and no
            // dentry mark is written on this image.
            let needs_names = records || self.since_cp.is_created(ino) || kind == FileType::Directory;
            return Ok((reason.or(needs_names.then_some(CheckpointReason::NameNotRestorable)), records));
        }
        let left = self.records_checkpoint_reason(ino, kind);
        if reason.is_some() && left.is_none() {
            self.stats.fsync_by_records += 1;
        }
        Ok((left, records))
    }

    /// After a change on a records image: whether it left the records in a state where every
    /// fsync that writes them must checkpoint — the list incomplete (a symlink target no
    /// record node holds), or a file renamed over a name (a rider of every such fsync:
    /// [`Self::riders`]) that only a checkpoint makes durable (a punched hole, reserved
    /// holes, a directory's own attributes). Then the change itself checkpoints
    /// (`Filesystem::after_change`): before, the next fsync that wrote records paid, whoever
    /// made it — another user's new file's fsync or atomic commit turned into a checkpoint
    /// that wrote every user's dirty data (review 52, F1: root's fsync 2.8 → 53 ms).
    /// Changes memory only (takes the noted inodes); reads nothing (kinds from the node
    /// cache, where the change left the inode).
    pub(crate) fn records_left_for_a_checkpoint(&mut self) -> bool {
        let noted = self.since_cp.take_rider_checks();
        if !self.records_in_chain() {
            return false;
        }
        if !self.since_cp.ns_records().1 {
            return true;
        }
        // Scanned only where needed (not collected: this runs after every change, and the
        // records another user left unwritten may number thousands — review of stop 58, F3).
        let since = &self.since_cp;
        let rides = |x: Ino| {
            since.ns_unwritten().any(|(_, r)| {
                matches!(r, NsRecord::Rename { ino, ino2, exchange, .. }
                if (*ino == x && *ino2 != 0) || (*exchange && *ino2 == x))
            })
        };
        let candidates: Vec<Ino> = match noted {
            Some(v) => v,
            None => since
                .ns_unwritten()
                .filter_map(|(_, r)| match r {
                    NsRecord::Rename { ino, ino2, .. } if *ino2 != 0 => Some(*ino),
                    _ => None,
                })
                .collect(),
        };
        candidates.into_iter().any(|x| {
            let is_dir = self
                .nodes
                .get(&x)
                .is_some_and(|n| FileType::from_mode(inode::mode(&n.block) as u32) == Some(FileType::Directory));
            // The cheap test first: a rename loop without punches never scans the records.
            let needs_cp = if is_dir {
                self.since_cp.attrs_changed_of(x)
            } else {
                self.since_cp.is_punched(x) || self.since_cp.is_reserved(x)
            };
            needs_cp && !self.orphans.contains(&x) && rides(x)
        })
    }

    /// With complete namespace records in the chain: what still makes an fsync of `ino`
    /// checkpoint. Names, links, renames and paths are all records; what is left is what no
    /// record or batch carries: a directory's own attributes, a punched hole, reserved holes,
    /// an orphan.
    fn records_checkpoint_reason(&self, ino: Ino, kind: FileType) -> Option<CheckpointReason> {
        if kind == FileType::Directory {
            return self.since_cp.attrs_changed_of(ino).then_some(CheckpointReason::Directory);
        }
        if self.since_cp.is_punched(ino) {
            return Some(CheckpointReason::Relinked);
        }
        if self.since_cp.is_reserved(ino) && !crate::mutant!("mutant-prealloc-by-batch") {
            return Some(CheckpointReason::Reserved);
        }
        if self.orphans.contains(&ino) {
            return Some(CheckpointReason::Orphan);
        }
        None
    }

    /// Why an fsync of `ino` must be served by a checkpoint when the chain carries no
    /// namespace records (None: a batch, with a dentry mark for a new file, carries it).
    fn chain_checkpoint_reason(&mut self, ino: Ino, kind: FileType) -> Result<Option<CheckpointReason>> {
        if kind == FileType::Directory {
            return Ok(Some(CheckpointReason::Directory));
        }
        if self.since_cp.is_relinked(ino) {
            return Ok(Some(CheckpointReason::Relinked));
        }
        self.unrelinked_checkpoint_reason(ino)
    }

    /// [`Self::chain_checkpoint_reason`] of a file, its own names aside (as if it had not
    /// been linked, unlinked or renamed since the checkpoint).
    fn unrelinked_checkpoint_reason(&mut self, ino: Ino) -> Result<Option<CheckpointReason>> {
        if self.since_cp.is_reserved(ino) && !crate::mutant!("mutant-prealloc-by-batch") {
            return Ok(Some(CheckpointReason::Reserved));
        }
        if self.orphans.contains(&ino) {
            return Ok(Some(CheckpointReason::Orphan));
        }
        if self.since_cp.any_dir_renamed() && self.below_renamed_dir(ino)? {
            // The chain can restore the file's own name but not its ancestors': the
            // checkpoint still has them under their old names, and the file must be found
            // at the path it was fsync'd under.
            return Ok(Some(CheckpointReason::PathChanged));
        }
        if self.since_cp.is_created(ino) {
            let b = self.inode_ref(ino)?;
            let (links, pino) = (inode::links(b), inode::pino(b));
            let name = inode::name(b).to_vec();
            if links != 1 || self.since_cp.is_created(pino) || self.since_cp.was_removed(pino, &name) {
                return Ok(Some(CheckpointReason::NameNotRestorable));
            }
        }
        Ok(None)
    }

    /// True when a directory on the path from `ino` up to the root (through each inode's
    /// recorded parent) was renamed since the last checkpoint, or when that path is not
    /// known for sure. Bounded by the node ids.
    fn below_renamed_dir(&mut self, ino: Ino) -> Result<bool> {
        let b = self.inode_ref(ino)?;
        if inode::links(b) > 1 {
            // The inode records one parent (its last link's); its other names may be
            // below a renamed directory: checkpoint (hard links are rare).
            return Ok(true);
        }
        let pino = inode::pino(b);
        let name = inode::name(b).to_vec();
        // The recorded parent and name are those of the inode's last link or rename; a
        // link made elsewhere and removed again leaves them naming a directory the file is
        // not in (and a checkpoint hides that history; the directory may even be gone and
        // its id reused). Trust them only when the entry is there: otherwise the path is
        // unknown, and a checkpoint covers whatever it is (invariant 3).
        if !crate::mutant!("mutant-stale-parent") && !self.records_its_entry(ino, pino, &name)? {
            return Ok(true);
        }
        // The walk reads nodes (it needs `self`): lend it the records, restored before `?`.
        let since = core::mem::take(&mut self.since_cp);
        let walk = self.walk_up(pino, |d| since.renamed_dirs().contains(&d));
        self.since_cp = since;
        // A recorded parent that is no longer a live directory (the link it was recorded
        // for is gone): the path is unknown, so checkpoint too.
        Ok(!matches!(walk?, crate::namei::Walk::Root))
    }

    /// Whether directory `pino` holds `name` → `ino` (the parent and name an inode records).
    pub(crate) fn records_its_entry(&mut self, ino: Ino, pino: Ino, name: &[u8]) -> Result<bool> {
        if self.check_ino(pino).is_err() || self.inode_kind(pino)? != FileType::Directory {
            return Ok(false);
        }
        if crate::namei::check_name(name).is_err() {
            return Ok(false);
        }
        Ok(matches!(self.dir_lookup(pino, name)?, Some((_, found, _)) if found == ino))
    }

    /// Dirty nodes belonging to `ino` (its inode, direct nodes, xattr node), in nid order.
    pub(crate) fn dirty_nodes_of(&self, ino: Ino) -> Vec<Nid> {
        self.dirty_nodes.of(ino)
    }

    /// The batch fields of `ino`'s inode (FORMAT.md, *Inode*): its truncation point, its data
    /// blocks' CRC and count and, with namespace records in the chain, the number of records
    /// before it (roll-forward applies the batch only after all of them).
    fn set_batch_fields(&mut self, ino: Ino, trunc: u64, crc: u32, count: u32) -> Result<()> {
        let records = self.records_in_chain().then(|| self.since_cp.ns_written_count());
        let b = self.inode_mut(ino)?;
        inode::set_batch(b, trunc, crc, count);
        if let Some(n) = records {
            inode::set_batch_records(b, n);
        }
        Ok(())
    }

    /// Writes `ino`'s dirty data blocks for its batch; returns each block's CRC by (holder
    /// node, index in it).
    fn write_batch_data(&mut self, ino: Ino) -> Result<BTreeMap<(Nid, u32), u32>> {
        let keys: Vec<(Ino, u64)> = self.data.range((ino, 0)..=(ino, u64::MAX)).map(|(k, _)| *k).collect();
        let mut data_crcs: BTreeMap<(Nid, u32), u32> = BTreeMap::new();
        for k in keys {
            let block = self.data.remove(&k).expect("listed above");
            let (holder, ofs, content_crc) = match self.writeback_one(ino, k.1, &block) {
                Ok(v) => v,
                Err(e) => {
                    self.data.insert(k, block);
                    return Err(e);
                }
            };
            data_crcs.insert((holder, ofs), content_crc.unwrap_or_else(|| crate::codec::crc(&block[..])));
        }
        Ok(data_crcs)
    }

    /// The nodes of `ino`'s batch in the order they are written: direct and xattr nodes (nid
    /// order), then the inode (the batch's commit record).
    fn batch_node_order(&self, ino: Ino) -> Vec<Nid> {
        let mut order: Vec<Nid> = Vec::new();
        for nid in self.dirty_nodes_of(ino) {
            match node::footer_type(&self.nodes[&nid].block) {
                Some(NodeType::Direct) | Some(NodeType::Xattr) => order.push(nid),
                _ => {}
            }
        }
        order.push(ino);
        order
    }

    /// Whether `ino`'s batch writes its data beside its nodes (`FEATURE_INCOMPAT_MIXED_NODE`),
    /// and where: at most [`CHAIN_DATA_MAX`] dirty data blocks, whose nodes and data fit in
    /// the warm node log's open segment with a block to spare (the inode's `next_blkaddr`
    /// must name a block of the same segment: the next segment is chosen only when the log
    /// reaches it). The plan's addresses follow the batch's nodes: the allocator hands them
    /// out in that order, nodes first, and nothing else allocates in the warm node log
    /// until the batch is written (one call, under the filesystem's lock).
    fn data_beside_plan(&mut self, ino: Ino) -> Result<Option<BesidePlan>> {
        if !self.mixed_node || self.seg.in_ssr(Log::WarmNode) {
            return Ok(None);
        }
        let keys: Vec<u64> = self.data.range((ino, 0)..=(ino, u64::MAX)).map(|(k, _)| k.1).collect();
        if keys.is_empty() || keys.len() > CHAIN_DATA_MAX {
            return Ok(None);
        }
        let mut slots = Vec::with_capacity(keys.len());
        for idx in keys {
            // Every dirty block's holder exists (`put_dirty_block` made it): this only reads.
            let (holder, ofs, old) = self.map_for_write(ino, idx)?;
            // The holder is written with the batch: dirty it now, so that the node count
            // below is the one the batch writes (a block filling a reserved hole on disk, a
            // staged block an atomic commit publishes, one cleaning moved: their holders
            // were clean; found by the explorer, `fallocate-batch-crash.wl` and `full`).
            self.node_mut(holder)?;
            slots.push((idx, holder, ofs, old));
        }
        let nodes = self.batch_node_order(ino).len() as u32;
        let head = self.seg.peek_next(&self.geo, &mut self.sit, &mut self.ssa, Log::WarmNode)?;
        let room = self.geo.segment_blocks - self.geo.blkoff_of(head);
        let blocks = slots.len() as u32;
        if nodes + blocks >= room {
            return Ok(None);
        }
        let first = head + nodes;
        let blocks = slots.into_iter().enumerate().map(|(i, s)| (first + i as u32, s)).collect();
        Ok(Some(BesidePlan { blocks }))
    }

    /// Points the batch's nodes at the addresses `plan` gives its data (with their CRCs),
    /// taking the blocks out of the write-back cache into the plan; returns each block's CRC
    /// by (holder node, index in it), as [`Self::write_batch_data`] does. Changes memory
    /// only; [`Self::restore_data_beside`] undoes it for a batch that cannot be written.
    fn point_at_data_beside(&mut self, ino: Ino, plan: &BesidePlan) -> Result<BTreeMap<(Nid, u32), u32>> {
        let mut data_crcs = BTreeMap::new();
        for &(addr, (idx, holder, ofs, _old)) in &plan.blocks {
            let block = &self.data[&(ino, idx)];
            let content_crc = self.data_checksums.then(|| crate::codec::crc(&block[..]));
            let crc_of_block = content_crc.unwrap_or_else(|| crate::codec::crc(&block[..]));
            let crc = self.writeback_crc(ino, idx, content_crc);
            self.set_holder_slot(holder, ofs, addr, crc)?;
            data_crcs.insert((holder, ofs), crc_of_block);
        }
        Ok(data_crcs)
    }

    /// Undoes [`Self::point_at_data_beside`] for a batch whose nodes could not be written:
    /// the pointers go back to what they were (the blocks are still in the write-back cache,
    /// where reads find them). The filesystem is shut down by then (a failed node write);
    /// this keeps what it serves from its caches true.
    fn restore_data_beside(&mut self, _ino: Ino, plan: BesidePlan) {
        for (_, (_, holder, ofs, old)) in plan.blocks {
            let _ = self.set_holder_slot(holder, ofs, old, 0);
        }
    }

    /// Writes the data of `plan` right after its batch's inode, each block at the address its
    /// node already names, flagged as data in the node segment's summary; frees the blocks
    /// they replace and takes them out of the write-back cache.
    fn write_data_beside(&mut self, ino: Ino, plan: BesidePlan) -> Result<()> {
        for (want, (idx, holder, ofs, old)) in plan.blocks {
            let summary = crate::ssa::Summary { nid: holder, ofs: ofs as u16 | crate::ssa::SSA_OFS_DATA };
            let addr = self.alloc_block(Log::WarmNode, summary)?;
            if addr != want {
                // The plan's invariant broke (something allocated in the warm node log between
                // the plan and here): the node names a block this write is not at.
                return Err(Error::corrupt(addr as u64, "data beside its chain not where its node names it"));
            }
            let block = self.data.remove(&(ino, idx)).expect("planned from the write-back cache");
            self.dentry_cache.forget(addr);
            if let Err(e) = self.dev.write(addr as u64, &block, crate::device::WriteFlags::empty()) {
                self.data.insert((ino, idx), block);
                return Err(e.into());
            }
            self.gc_cold.remove(&(ino, idx));
            self.stats.data_blocks_written += 1;
            self.stats.data_beside_blocks += 1;
            self.written_blocks = self.written_blocks.saturating_add(1);
            if old != NEW_ADDR && old != NULL_ADDR {
                self.seg.invalidate(&self.geo, &mut self.sit, old)?;
            }
            self.gc_kept_crcs.remove(&(ino, idx));
        }
        Ok(())
    }

    /// Writes one batch for `ino`: data, then direct and xattr nodes, then the inode with
    /// the fsync mark. Indirect nodes stay dirty in memory: recovery rebuilds the path to
    /// each direct node from the node's footer, so they are written by the next checkpoint.
    /// `kind`: the fsync's own batch (the records not yet written go first and count it in
    /// their group), its own batch without them (none of them is the file's:
    /// [`Self::fsync_decision`]), or a rider's.
    pub(crate) fn write_batch(&mut self, ino: Ino, kind: BatchKind) -> Result<()> {
        // 0. The namespace records made before the batch, ahead of it in the chain (roll-
        // forward replays them first: the batch's inode may be one they create). Without
        // them the batch records how many the chain holds before it (`batch_records`), so
        // it is never taken for one that follows records written later.
        let records_late = crate::mutant!("mutant-nsrec-batch-before-records");
        let own = kind == BatchKind::Own;
        if !records_late && kind != BatchKind::OwnWithoutRecords {
            self.write_pending_records(own)?;
        }
        // 1. Data, recording each block's CRC by (holder node, index): in the data log, or,
        // for a small batch that fits in the warm node log's open segment, right after the
        // batch's nodes there (data beside its chain: the batch is one device range).
        let beside = self.data_beside_plan(ino)?;
        let data_crcs = match &beside {
            Some(plan) => self.point_at_data_beside(ino, plan)?,
            None => self.write_batch_data(ino)?,
        };
        // 2. The nodes of the batch, inode last.
        let order = self.batch_node_order(ino);
        let (batch, count) = batch_crc(&order, &data_crcs);
        let trunc = self.since_cp.take_truncated_from(ino);
        // With namespace records in the chain, the file's create record restores its name.
        let dentry = self.since_cp.is_created(ino) && !self.records_in_chain();
        self.set_batch_fields(ino, trunc, batch, count)?;
        let skip = match &beside {
            Some(plan) if !crate::mutant!("mutant-chain-no-skip") => plan.blocks.len() as u32,
            _ => 0,
        };
        if let Err(e) = self.write_batch_nodes(ino, &order, dentry, skip) {
            if let Some(plan) = beside {
                self.restore_data_beside(ino, plan);
            }
            return Err(e);
        }
        // 3. Data beside its chain: right after the inode, at the addresses its nodes name.
        if let Some(plan) = beside {
            self.write_data_beside(ino, plan)?;
        }
        self.since_cp.batch_written(ino);
        if records_late && kind != BatchKind::OwnWithoutRecords {
            self.write_pending_records(own)?;
        }
        // Postcondition: the batch took all of the file's dirty data (a block left behind
        // would be acknowledged as durable and lost by a crash) and every dirty node of it
        // but indirect ones (rebuilt by recovery from the direct nodes' footers). The node
        // scan walks every dirty node, so it is a debug assertion.
        assert!(self.data.range((ino, 0)..=(ino, u64::MAX)).next().is_none(), "fsync batch left data of {ino} dirty");
        debug_assert!(
            self.dirty_nodes_of(ino)
                .iter()
                .all(|n| node::footer_type(&self.nodes[n].block) == Some(NodeType::Indirect)),
            "fsync batch left a node of {ino} dirty"
        );
        Ok(())
    }

    /// Writes a batch's nodes in `order` to the warm node log, the inode (last) with the
    /// fsync mark (and the dentry mark if `dentry`), its `next_blkaddr` skipping `skip` data
    /// blocks written beside it: the chain names nodes only (a walk that took a data block
    /// for the next node would end the chain there and lose every later fsync).
    fn write_batch_nodes(&mut self, ino: Ino, order: &[Nid], dentry: bool, skip: u32) -> Result<()> {
        let last = order.len() - 1;
        for (i, &nid) in order.iter().enumerate() {
            let mut flags = 0;
            if i == last {
                if !crate::mutant!("mutant-no-fsync-mark") {
                    flags |= node::FLAG_FSYNC;
                }
                if dentry && !crate::mutant!("mutant-no-dentry-mark") {
                    flags |= node::FLAG_DENTRY;
                }
            }
            let skip_here = if i == last { skip } else { 0 };
            self.write_node_skipping(nid, flags, Log::WarmNode, skip_here)?;
            self.since_cp.chained(ino, nid, flags & node::FLAG_DENTRY != 0);
        }
        Ok(())
    }
}

/// The batch CRC and block count: over the data blocks' CRCs in the order recovery will
/// meet them — node by node in chain order, then by index within the node.
fn batch_crc(order: &[Nid], data_crcs: &BTreeMap<(Nid, u32), u32>) -> (u32, u32) {
    let mut batch = 0u32;
    let mut count = 0u32;
    for &nid in order {
        for (_, c) in data_crcs.range((nid, 0)..=(nid, u32::MAX)) {
            batch = crate::codec::crc_seeded(batch, &c.to_le_bytes());
            count += 1;
        }
    }
    debug_assert_eq!(count as usize, data_crcs.len(), "every data block of the batch has a node in it");
    (batch, count)
}

/// Most data blocks an fsync batch writes beside its nodes in the warm node log
/// (`FEATURE_INCOMPAT_MIXED_NODE`); larger batches write their data to the data log, as
/// without the feature. Small, so that node segments stay mostly nodes (cleaning moves the
/// data out of them) while the fsyncs that pay most for a second range (a page, a record)
/// take one.
pub const CHAIN_DATA_MAX: usize = 16;

/// Where [`Filesystem::write_batch`] puts a batch's data beside its nodes: per block, its
/// address, then (file block, holder node, slot in it, the address it replaces).
pub(crate) struct BesidePlan {
    blocks: Vec<(u32, (u64, Nid, u32, u32))>,
}

/// Which batch [`Filesystem::write_batch`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BatchKind {
    /// An fsync's (or atomic commit's) own batch, after the records not yet written.
    Own,
    /// An fsync's own batch, the records left for a later fsync that needs them.
    OwnWithoutRecords,
    /// Another file's batch riding after an fsync's records ([`Filesystem::riders`]).
    Rider,
}

/// Whether record `r` names inode `ino` (created, linked, unlinked, renamed, or replaced or
/// exchanged by a rename).
/// Whether record `r` makes an entry name an inode of `inos`: a create, link or rename of
/// it, or the other inode of an exchange (an unlink removes an entry, and no entry on a live
/// path is removed).
fn record_moves_one_of(r: &NsRecord, inos: &BTreeSet<Ino>) -> bool {
    match r {
        NsRecord::Create { ino, .. } | NsRecord::Link { ino, .. } => inos.contains(ino),
        NsRecord::Unlink { .. } => false,
        NsRecord::Rename { ino, ino2, exchange, .. } => inos.contains(ino) || (*exchange && inos.contains(ino2)),
    }
}

fn record_names(r: &NsRecord, ino: Ino) -> bool {
    match r {
        NsRecord::Create { ino: i, .. } | NsRecord::Link { ino: i, .. } | NsRecord::Unlink { ino: i, .. } => *i == ino,
        NsRecord::Rename { ino: i, ino2, .. } => *i == ino || *ino2 == ino,
    }
}

#[allow(dead_code)]
fn _assert_error_is_used(e: Error) -> Error {
    e
}
