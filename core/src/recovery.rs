//! Roll-forward recovery: after the checkpoint is loaded, replay what fsync (and atomic
//! commit) appended to the warm node chain since then.
//!
//! Crash scenarios this module handles (a test named after each is in
//! `core/tests/recovery.rs`):
//!
//! | scenario | what recovery finds | result |
//! |---|---|---|
//! | crash after fsync returned | complete batch, fsync-marked inode | file restored to its fsync'd state |
//! | crash during fsync, before the flush | chain ends early, or the marked inode is present but a data block is not | batch skipped: file as at its previous fsync or checkpoint |
//! | node written without its data (volatile cache kept the node) | batch CRC mismatch | batch and later batches of that file skipped |
//! | out-of-order completion broke the chain before the mark | chain ends at the missing node | batches after the break not applied (fsync never returned) |
//! | stale node of an older checkpoint at the chain position | checkpoint version differs | chain ends there |
//! | stale chain of an earlier use of the same image (flashed again) after the chain | its version is the earlier mount's jump, not this one's | chain ends there (its tests: `core/tests/earlier_use.rs`) |
//! | torn or garbage block in the chain | CRC fails | chain ends there |
//! | chain loops back on itself | address already visited | chain ends there |
//! | file created since the checkpoint, fsync'd | dentry-marked inode | inode created and linked under its name |
//! | name reused after the old file was unlinked or renamed away | — | fsync checkpointed instead (the checkpoint still names the old file) |
//! | dentry mark for a name that is taken anyway (damage) | existing entry | the checkpointed file is kept, the recovered one dropped |
//! | file created since the checkpoint, its directory's block corrupted since (data checksum) | the name cannot be added | mount goes on; the inode is kept unreachable (`recovery_unlinked_inodes`) for `fsck --repair` to link into /lost+found (test in `core/tests/datasum_faults.rs`) |
//! | file truncated then fsync'd | truncation point in the batch | blocks past it dropped before the batch's nodes apply |
//! | atomic commit that returned | batch like an fsync | all new data |
//! | atomic commit cut by the crash | batch CRC mismatch or no mark | all old data |
//! | unlinked open file (orphan at the checkpoint) in the chain | orphan | ignored; removed at mount |
//! | I/O error reading the chain | — | mount fails with EIO; a later mount recovers |
//! | crash during recovery | nothing written until the final checkpoint; new writes go past the chain and its data | next mount recovers again |
//! | recovery on a nearly full device | the room it needs was reserved when each fsync was acknowledged (fsync checkpoints instead when it would not be) | mounts read-write; recovery never cleans or checkpoints before its own checkpoint |
//! | chain with no complete batch on a full device | nothing to apply | no segment pinned or opened: mounts read-write and read-only |
//!
//! With namespace records in the chain (`FEATURE_INCOMPAT_NS_RECORDS`; a test named after each
//! in `core/tests/nsrec_recovery.rs`, crashing at every point of the fsync):
//!
//! | scenario | what recovery finds | result |
//! |---|---|---|
//! | directory fsync after creates (files, a directory, a device node, a symlink) | record nodes, no batch | the names, as at the fsync or at the checkpoint (one record node: all or none) |
//! | file created (in a directory that is new too) and fsync'd | the creates' records, then the file's batch | directory, name and data restored, no checkpoint |
//! | save by rename: new file fsync'd, renamed over the old one, directory fsync'd | the rename's record | the new file under the name and the old one gone, or the old one under it: never both, never neither |
//! | file renamed to another directory, then fsync'd | the rename's record, then the batch | one name, the new one after the fsync returned |
//! | directory renamed, then a file below it fsync'd | the rename's record, then the file's batch | the file at the path it was fsync'd under |
//! | file hard-linked, then fsync'd | the link's record, then the batch | both names, link count 2 |
//! | unlink, rmdir and a create reusing the name, then the directory fsync'd | the records | the old file gone and the new one there, or the checkpoint's names |
//! | a batch whose records came after it (`mutant-nsrec-batch-before-records`) | a batch of an inode no record made yet | the batch rejected: a fsync'd file loses its data (the mutant's failure) |
//! | records written by dependency (stop 58): a file's fsync writes the records it depends on, a later fsync another directory's older ones after them (`core/tests/records_by_dependency.rs`) | record nodes whose records are not in the list's order, except that two sharing an inode are | each record applies where it ran: every fsync'd file at its path with its data, the other directory's changes as its own fsync made them |
//! | torn or stale record node, or one whose `first_seq` leaves a gap | CRC, version or number wrong | chain ends before it |
//! | crash during an fsync that writes records and batches after them (a file renamed over another without its own fsync, then a directory fsync) | a group whose record nodes or batches are not all complete | chain ends before the group: the checkpoint's tree or the whole new one, never the renamed file empty (`rename_over_without_fsync_then_directory_fsync_is_all_or_nothing_at_every_crash_point`) |
//! | record node that passes its CRC and version but does not decode (damage, not a crash) | the decoder's reason | mount fails naming the block; fsck reports it, `fsck --repair` drops the chain (`a_sealed_record_node_that_does_not_decode_fails_the_mount_naming_its_block`) |
//! | a batch written after a record node the crash lost, reached past the nodes a crashed recovery wrote at the lost node's place | the batch's `batch_records` exceeds the records the chain holds before it | batch and later batches of its file rejected (`a_batch_after_a_lost_record_node_is_not_applied_even_after_a_crash_during_recovery`) |
//! | a record that cannot apply (its source missing, its target taken: damage) | the check before the record | no later record applied, later batches of the inodes it and later records name rejected; mount goes on |
//! | crash during the recovery of a chain that ends at a lost block with blocks written after it (a group of records and riders, then another file's batch; group commit) | the chain up to the gap, again | as the first recovery: recovery writes in a fresh segment, never in the lost block's place, so the walk cannot cross the gap (`a_crash_during_recovery_never_completes_a_group_across_the_lost_block`) |
//! | crash during the recovery of a chain whose walk ends at the lost first block of a segment free at the checkpoint | the chain up to the gap, again | recovery never opens that segment (pinned): the next walk ends at the gap too (`core/tests/nsrec_group_gaps.rs`, review 52) |
//! | a group whose rider or own batch belongs to a file whose earlier batch was rejected (group commit: both fsyncs before one flush, the first's data lost) | a group whose batch recovery would skip | the group is not whole: the chain ends before it (`group_with_a_rider_whose_earlier_batch_was_rejected`, review 52) |
//! | crash during the recovery of a batch whose data the replay freed (a file unlinked or truncated after its fsync), with a symlink's create replayed after it (the symlink never fsync'd, so it did not ride) | the batch, whose data blocks recovery must verify again | as the first recovery: the target's block goes past every data block the chain points at, whose segments stay pinned (`a_crash_during_recovery_never_finds_the_data_its_chain_points_at_overwritten`; review 51) |
//! | a record whose replay meets a damaged or unreadable block (an inode failing its checksum, EIO) or finds no room | the block's error (`nschain::does_not_apply` is false) | mount fails naming the block (dropping the record would drop every later fsync in silence); `fsck --repair` then leaves a clean image (`a_damaged_block_met_by_a_replayed_record_fails_the_mount_naming_it`) |
//!
//! Recovery changes only memory until it writes one checkpoint. Before that checkpoint,
//! every log's write position moves past what the chain and the data its nodes point at
//! (claimed, or freed again by the replay) occupy in its open segment (the warm node log's
//! past its whole segment: `SegmentManager::pin_and_advance` says why), and every segment
//! the chain and that data touch is kept from reuse, so a crash in the middle leaves the
//! chain and its data intact for the next attempt. Recovery never cleans and never
//! checkpoints before its own checkpoint: the room it needs (the nodes it rewrites) was
//! reserved by each fsync it replays (`fsync::recovery_room_ok`).

use crate::device::BlockDevice;
use crate::error::{Error, Result};
use crate::fs::{CachedNode, Filesystem, Timestamp};
use crate::layout::*;
use crate::nat::NatEntry;
use crate::node::{self, inode, FileType, NodeType};
use crate::nsrec::{self, NsRecord};
use crate::segment::Log;
use crate::{zero_block, Block, BlockAddr, Ino, Nid};
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

/// What a roll-forward did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    pub nodes_walked: u64,
    pub batches_applied: u64,
    pub batches_rejected: u64,
    /// Namespace records applied (`FEATURE_INCOMPAT_NS_RECORDS`).
    pub records_applied: u64,
    /// 1 when a record could not apply (damage): the replay of records stopped there.
    pub records_rejected: u64,
}

struct ChainNode {
    addr: BlockAddr,
    block: Box<Block>,
    /// A record node's records (`FEATURE_INCOMPAT_NS_RECORDS`), decoded by the walk.
    records: Option<Vec<NsRecord>>,
}

/// One step of the roll-forward, in chain order.
#[derive(Clone)]
enum Step {
    /// The records of the record node at this chain index.
    Records(usize),
    /// A batch: its inode and its nodes' chain indexes, up to its fsync-marked inode.
    Batch(Ino, Vec<usize>),
}

impl<D: BlockDevice> Filesystem<D> {
    /// Walks the warm node chain from the checkpoint's position while blocks are valid.
    fn walk_chain(&mut self) -> Result<Vec<ChainNode>> {
        let l = self.cp.logs[Log::WarmNode as usize];
        let mut addr = self.geo.seg_start(l.segno) + l.blkoff;
        let mut chain = Vec::new();
        let mut visited = BTreeSet::new();
        // The number the next record node's first record must have.
        let mut next_seq = 0u32;
        // Bounded: every step visits a new main-area block.
        for _ in 0..self.geo.main_blocks() {
            if !self.geo.in_main(addr) || !visited.insert(addr) {
                break;
            }
            let mut b = zero_block();
            let seed = self.seed;
            // A node that fails its checksum is read once more: a misread would end the chain
            // early and drop the fsyncs after it (`read_twice_if`).
            let crc_ok = crate::read_twice_if(
                &mut self.dev,
                addr as u64,
                &mut b,
                |b| crate::mutant!("mutant-recovery-no-crc") || crate::codec::crc_ok_seeded(b, seed),
                |ok| !ok,
            )?;
            let version_ok =
                crate::mutant!("mutant-recovery-ignores-version") || node::footer_cp_version(&b) == self.cp.version;
            if !crc_ok || !version_ok {
                break;
            }
            let next = node::footer_next_blkaddr(&b);
            let records = if self.sb.ns_records() && nsrec::is_record_node(&b) {
                // A record node: decoded here, and numbered after the previous one (a gap
                // means a record node is missing: the chain ends before the gap). One that
                // passes its seeded CRC and carries this checkpoint's version was sealed by
                // this use's encoder: if it does not decode, that is damage (or a bug) and
                // not a crash, and ending the chain there would silently drop every fsync
                // after it. The mount fails naming the block; fsck reports it and
                // `fsck --repair` drops the chain (its pass without roll-forward).
                let rn = nsrec::decode(&b, addr as u64)?;
                if rn.first_seq != next_seq {
                    break;
                }
                next_seq = next_seq.saturating_add(rn.records.len() as u32);
                Some(rn.records)
            } else {
                let nid = node::footer_nid(&b);
                if nid == NULL_NID || nid >= self.nat.nid_count() || node::footer_type(&b).is_none() {
                    break;
                }
                None
            };
            chain.push(ChainNode { addr, block: b, records });
            addr = next;
        }
        Ok(chain)
    }

    /// What the next mount would roll forward, without applying it (fsck reports it): the
    /// chain's node blocks, and the inodes with a complete-looking (fsync-marked) batch.
    pub(crate) fn pending_recovery(&mut self) -> Result<(u64, u64)> {
        let chain = self.walk_chain()?;
        let marked: BTreeSet<Ino> = chain
            .iter()
            .filter(|n| {
                n.records.is_none()
                    && node::footer_flags(&n.block) & node::FLAG_FSYNC != 0
                    && node::footer_type(&n.block) == Some(NodeType::Inode)
            })
            .map(|n| node::footer_ino(&n.block))
            .collect();
        Ok((chain.len() as u64, marked.len() as u64))
    }

    /// Rolls the chain forward into memory. The caller writes the checkpoint.
    pub(crate) fn roll_forward(&mut self, now: Timestamp) -> Result<RecoveryReport> {
        let mut report = RecoveryReport::default();
        let chain = self.walk_chain()?;
        report.nodes_walked = chain.len() as u64;
        if chain.is_empty() {
            return Ok(report);
        }
        self.touch(now);
        let steps = chain_steps(&chain);
        // Inodes recovery may recreate keep their numbers: no node allocated while
        // applying an earlier step may take one (a create record's inode is made with its
        // number, a batch's inode may be recreated with its own).
        for step in &steps {
            match step {
                Step::Batch(ino, _) => self.nat.hold(*ino),
                Step::Records(i) => {
                    for r in chain[*i].records.iter().flatten() {
                        if let NsRecord::Create { ino, .. } = r {
                            self.nat.hold(*ino);
                        }
                    }
                }
            }
        }
        self.apply_steps(&chain, &steps, &mut report)?;
        if (report.batches_applied == 0 && report.records_applied == 0) || self.read_only {
            // Nothing recovered references the chain (or nothing will be written): its blocks
            // are garbage the mount's checkpoint makes stale (a new version), and no free
            // segment is needed, so a full device still mounts.
            return Ok(report);
        }
        let reserve = 2 * self.seg.reserved_segments() + LOG_COUNT as u32;
        if self.seg.free_segments() < reserve {
            self.stats.recovery_full_device += 1;
        }
        // Keep the chain's segments from reuse until the recovery checkpoint commits, and
        // write nothing where the chain's walk ended (the warm node log opens a fresh
        // segment) nor over a data block the chain's nodes point at.
        let mut pinned: BTreeSet<u32> = chain.iter().map(|n| self.geo.segno_of(n.addr)).collect();
        // The block where the walk ended (the crash lost it) may be the first of a segment
        // that was free at the checkpoint and holds no walked node: recovery must not open
        // that segment for its own writes, or its first node lands in the lost block's place
        // and a crash during recovery lets the next walk cross the gap (review 52, F1; review
        // 50's fix moved the warm node log to a fresh segment, which could be that one). The
        // fsync that opened it counted it (`room_for_batch`'s segment for the log's next
        // block), so the reserve still holds.
        if let Some(last) = chain.last() {
            let end = node::footer_next_blkaddr(&last.block);
            if self.geo.in_main(end) {
                pinned.insert(self.geo.segno_of(end));
            }
        }
        let addrs: Vec<BlockAddr> = chain.iter().map(|n| n.addr).collect();
        let data = self.chain_data_in_open_segments(&chain, &mut pinned);
        self.seg.pin_and_advance(&self.geo, &self.sit, &pinned, Log::WarmNode, &addrs, &data);
        Ok(report)
    }

    /// The data blocks the chain's nodes point at, which a crash during recovery leaves the
    /// next walk to verify again (each batch's data against its CRC): their segments go into
    /// `pinned`, and those in a log's open segment are returned, for the log to move past
    /// them. The replay may have freed them — a file unlinked or truncated after its fsync,
    /// a record replayed after the batch — so the SIT no longer protects them, and the
    /// recovery checkpoint writes data (a replayed symlink's target, directory blocks) at
    /// its logs' positions, which are the last checkpoint's: behind everything the crashed
    /// mount wrote. Overwriting one made the next walk stop before its batch's group and
    /// drop every fsync after it (review 51). Pointers to blocks of earlier checkpoints are
    /// taken too: their segments are in use, and they lie behind the logs' positions.
    /// Bounded by the chain's nodes and their pointer slots.
    fn chain_data_in_open_segments(&self, chain: &[ChainNode], pinned: &mut BTreeSet<u32>) -> Vec<BlockAddr> {
        if crate::mutant!("mutant-recovery-writes-over-chain-data") {
            return Vec::new();
        }
        let open: BTreeSet<u32> = self.seg.logs.iter().map(|l| l.segno).collect();
        let mut data = Vec::new();
        for n in chain.iter().filter(|n| n.records.is_none()) {
            let ptrs: Vec<BlockAddr> = match node::footer_type(&n.block) {
                Some(NodeType::Inode) => inode::mapped_ptrs(&n.block).map(|(_, a, _)| a).collect(),
                Some(NodeType::Direct) => node::mapped_ptrs(&n.block).map(|(_, a, _)| a).collect(),
                _ => continue,
            };
            for a in ptrs.into_iter().filter(|&a| self.geo.in_main(a)) {
                let segno = self.geo.segno_of(a);
                pinned.insert(segno);
                if open.contains(&segno) {
                    data.push(a);
                }
            }
        }
        data
    }

    /// False when `steps[k]` starts a group (a record node after anything but a record node
    /// tagged "more follow") that is not whole ([`Self::group_complete`]).
    fn group_whole_from(
        &mut self,
        chain: &[ChainNode],
        steps: &[Step],
        k: usize,
        failed: &BTreeSet<Ino>,
    ) -> Result<bool> {
        let Step::Records(_) = steps[k] else { return Ok(true) };
        let more = |p: usize| nsrec::group_tag(&chain[p].block) == nsrec::GROUP_MORE;
        let starts = k == 0 || !matches!(steps[k - 1], Step::Records(p) if more(p));
        Ok(!starts || crate::mutant!("mutant-nsrec-no-group") || self.group_complete(chain, &steps[k..], failed)?)
    }

    /// Whether the group that starts at `steps[0]` (a record node) is whole: its record
    /// nodes up to the one whose tag is not [`nsrec::GROUP_MORE`] are in the chain, and the
    /// G batches that tag counts follow, each complete (fsync-marked, its data verifying
    /// against the tree before the group: a group's records change names, never a file's
    /// block pointers). A record node tagged 0 stands alone. Reads the batches' data.
    fn group_complete(&mut self, chain: &[ChainNode], steps: &[Step], failed: &BTreeSet<Ino>) -> Result<bool> {
        let mut k = 0;
        // Bounded by the steps.
        let batches = loop {
            let Some(Step::Records(i)) = steps.get(k) else { return Ok(false) };
            let tag = nsrec::group_tag(&chain[*i].block);
            k += 1;
            if tag != nsrec::GROUP_MORE {
                break tag.saturating_sub(1) as usize;
            }
        };
        if steps[k..].len() < batches {
            return Ok(false);
        }
        for step in &steps[k..k + batches] {
            let Step::Batch(ino, idxs) = step else { return Ok(false) };
            // A batch `apply_steps` will skip (an earlier batch of its inode was rejected, or
            // it is an orphan's) leaves the group partial: the rename would apply without the
            // renamed file's batch (review 52, F2: group commit wrote an fsync's batch alone,
            // then a group with the same file's next batch, before one flush).
            if failed.contains(ino) || self.cp.orphans.contains(ino) {
                return Ok(false);
            }
            let nodes: Vec<&ChainNode> = idxs.iter().map(|&j| &chain[j]).collect();
            let Some(last) = nodes.last() else { return Ok(false) };
            let exists = self.check_ino(*ino).is_ok();
            let trunc = inode::trunc_block(&last.block);
            let Some(changes) = self.batch_changes(*ino, &nodes, exists, trunc)? else { return Ok(false) };
            if !self.batch_data_verifies(&last.block, &changes)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Applies the steps in chain order: each record node's records through namei's own
    /// operations, each complete batch as [`Self::apply_batch`] does. A record that cannot
    /// apply is damage: no record after it is applied, and no later batch of an inode it or
    /// a later record names (its name, its very existence may be wrong).
    fn apply_steps(&mut self, chain: &[ChainNode], steps: &[Step], report: &mut RecoveryReport) -> Result<()> {
        let orphans: BTreeSet<Ino> = self.cp.orphans.iter().copied().collect();
        let mut failed: BTreeSet<Ino> = BTreeSet::new();
        let mut records_ok = true;
        // Records the chain holds so far (numbered from 0 without a gap: the walk checked).
        let mut records_before = 0u64;
        for (k, step) in steps.iter().enumerate() {
            // A group (an fsync's record nodes and the batches it wrote after them) applies
            // whole or not at all: checked at its first record node, before any of it.
            if !self.group_whole_from(chain, steps, k, &failed)? {
                // The chain ends before the group, as at a torn record node.
                break;
            }
            let step = step.clone();
            match step {
                Step::Records(i) => {
                    records_before += chain[i].records.as_ref().map_or(0, |r| r.len() as u64);
                    for r in chain[i].records.iter().flatten() {
                        if records_ok && self.replay_record(r)? {
                            report.records_applied += 1;
                            continue;
                        }
                        if records_ok {
                            records_ok = false;
                            report.records_rejected += 1;
                        }
                        failed.extend(record_inodes(r));
                    }
                }
                Step::Batch(ino, idxs) => {
                    // A batch written after records the chain lost (a record node torn, and
                    // the batch found again after the nodes a crashed recovery wrote) may
                    // depend on them: its link count, its name.
                    let after_lost = idxs.last().is_some_and(|&l| {
                        self.sb.ns_records() && inode::batch_records(&chain[l].block) as u64 > records_before
                    });
                    if after_lost {
                        failed.insert(ino);
                    }
                    if failed.contains(&ino) || orphans.contains(&ino) {
                        report.batches_rejected += 1;
                        continue;
                    }
                    let nodes: Vec<&ChainNode> = idxs.iter().map(|&i| &chain[i]).collect();
                    if self.apply_batch(ino, &nodes)? {
                        report.batches_applied += 1;
                    } else {
                        failed.insert(ino);
                        report.batches_rejected += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Pointer changes a batch makes: (file block, new address, its checksum) for every
    /// slot of its direct nodes and its inode whose address differs from the current state.
    /// `None` when the batch is inconsistent with the current state.
    fn batch_changes(
        &mut self,
        ino: Ino,
        nodes: &[&ChainNode],
        exists: bool,
        trunc: u64,
    ) -> Result<Option<Vec<(u64, BlockAddr, u32)>>> {
        type Get = fn(&Block, u32) -> u32;
        let mut changes = Vec::new();
        for n in nodes {
            let (first, count, get, get_crc): (u64, u32, Get, Get) = match node::footer_type(&n.block) {
                Some(NodeType::Direct) => (
                    node::dnode_first_block(node::footer_ofs(&n.block) as u64),
                    ADDRS_PER_BLOCK,
                    node::addr,
                    node::data_crc,
                ),
                Some(NodeType::Inode) => (0, ADDRS_PER_INODE, inode::addr, inode::data_crc),
                _ => continue,
            };
            if first.checked_add(count as u64).is_none_or(|e| e > node::MAX_FILE_BLOCKS) {
                return Ok(None);
            }
            // The current addresses of the node's whole range at once: one tree walk, not
            // one per slot (recovery time grows with the chain; mount must stay fast).
            let current = if exists { self.current_range(ino, first, count)? } else { Vec::new() };
            for i in 0..count {
                let idx = first + i as u64;
                let mut new = get(&n.block, i);
                if new == NEW_ADDR && self.prealloc_on_disk && crate::mutant!("mutant-recovery-drops-reservations") {
                    new = NULL_ADDR;
                }
                let cur = if !exists || idx >= trunc { NULL_ADDR } else { current[i as usize] };
                if new == cur {
                    continue;
                }
                // A reserved hole (`NEW_ADDR`) only on an image that keeps them on disk.
                let reserved = new == NEW_ADDR && self.prealloc_on_disk;
                if new != NULL_ADDR && !reserved && (new == NEW_ADDR || !self.geo.in_main(new)) {
                    return Ok(None);
                }
                let crc = if new == NULL_ADDR || reserved { 0 } else { get_crc(&n.block, i) };
                changes.push((idx, new, crc));
            }
        }
        Ok(Some(changes))
    }

    /// Current addresses of file blocks `first..first + count`, where that range is exactly
    /// the inode's own address array (first 0) or one direct node's.
    fn current_range(&mut self, ino: Ino, first: u64, count: u32) -> Result<Vec<BlockAddr>> {
        if first == 0 {
            let b = self.inode_ref(ino)?;
            return Ok((0..count).map(|i| inode::addr(b, i)).collect());
        }
        match node::block_path(first)? {
            node::BlockPath::Node { slot, depth, idx: path, .. } => {
                let mut nid = inode::nid(self.inode_ref(ino)?, slot);
                for &i in path.iter().take(depth) {
                    if nid == NULL_NID {
                        break;
                    }
                    nid = self.tree_child(nid, ino, NodeType::Indirect).map(|b| node::slot(b, i))?;
                }
                if nid == NULL_NID {
                    return Ok(alloc::vec![NULL_ADDR; count as usize]);
                }
                let b = self.tree_child(nid, ino, NodeType::Direct)?;
                Ok((0..count).map(|i| node::addr(b, i)).collect())
            }
            node::BlockPath::Inode { .. } => Err(Error::corrupt(0, "direct node range inside the inode")),
        }
    }

    /// Applies one batch if it is complete. Returns false (and changes nothing) if not.
    fn apply_batch(&mut self, ino: Ino, nodes: &[&ChainNode]) -> Result<bool> {
        let Some(last) = nodes.last() else { return Ok(false) };
        let ib = &last.block;
        let kind = FileType::from_mode(inode::mode(ib) as u32);
        if !matches!(
            kind,
            Some(FileType::Regular)
                | Some(FileType::Symlink)
                | Some(FileType::Fifo)
                | Some(FileType::Socket)
                | Some(FileType::CharDevice)
                | Some(FileType::BlockDevice)
        ) {
            return Ok(false);
        }
        let exists = self.check_ino(ino).is_ok();
        let dentry = node::footer_flags(ib) & node::FLAG_DENTRY != 0;
        if !exists && !dentry {
            // A nameless new inode: nothing could reach it.
            return Ok(false);
        }
        if !exists && !self.nat.get(ino).is_some_and(|e| e.is_free()) {
            return Ok(false);
        }
        let trunc = inode::trunc_block(ib);
        let Some(changes) = self.batch_changes(ino, nodes, exists, trunc)? else { return Ok(false) };
        if !self.batch_data_verifies(ib, &changes)? && !crate::mutant!("mutant-recovery-no-data-check") {
            return Ok(false);
        }
        // Apply.
        let old_size = self.prepare_batch_inode(ino, ib, exists, trunc)?;
        let batch_inline = self.match_inline(ino, ib, exists)?;
        let claimed: Vec<(u64, BlockAddr)> =
            changes.iter().map(|c| (c.0, c.1)).filter(|c| c.1 != NULL_ADDR && c.1 != NEW_ADDR).collect();
        for (idx, new, crc) in changes {
            self.apply_slot(ino, idx, new, crc)?;
        }
        // Metadata from the marked inode (not its tree pointers or block count).
        {
            let b = self.inode_mut(ino)?;
            let blocks = inode::blocks(b);
            let xattr = inode::xattr_nid(b);
            let head = inode::OFF_TRUNC_BLOCK;
            b[..head].copy_from_slice(&ib[..head]);
            inode::set_blocks(b, blocks);
            inode::set_xattr_nid(b, xattr);
            if batch_inline && !crate::mutant!("mutant-recovery-drops-inline-data") {
                inode::inline_data_mut(b).copy_from_slice(inode::inline_data(ib));
            }
        }
        // The inode's recorded parent may have changed with it.
        self.dir_parents.forget(ino);
        let size = inode::size(ib);
        self.drop_past_size(ino, size, old_size, exists && trunc == u64::MAX)?;
        // Xattrs: the batch's xattr node if it has one; none if the inode says none.
        let xnode = nodes.iter().find(|n| node::footer_type(&n.block) == Some(NodeType::Xattr));
        if let Some(x) = xnode {
            if let Ok(m) = crate::xattr::decode(&x.block, x.addr as u64) {
                self.replace_xattrs(ino, &m)?;
            }
        } else if inode::xattr_nid(ib) == NULL_NID {
            self.replace_xattrs(ino, &Default::default())?;
        }
        if !dentry || self.recover_dentry(ino, ib)? {
            // (Else a name recovery cannot restore, damage, dropped the inode again.)
            self.assert_batch_applied(ino, &claimed, size);
        }
        Ok(true)
    }

    /// Before a complete batch's pointers apply: the inode recreated (the checkpoint does not
    /// have it), or cut at the batch's truncation point. Blocks of the inode still in the
    /// write-back cache (only a symlink's target, written by the replay of its create record)
    /// are dropped: the batch maps the file as it was at its fsync, the target included.
    /// Returns the size before the batch (`u64::MAX` for a recreated inode).
    fn prepare_batch_inode(&mut self, ino: Ino, ib: &Block, exists: bool, trunc: u64) -> Result<u64> {
        if !exists {
            self.recreate_inode(ino, ib);
            return Ok(u64::MAX);
        }
        let old_size = inode::size(self.inode_ref(ino)?);
        let cached = self.data.range((ino, 0)..=(ino, u64::MAX)).next().is_some();
        let from = if cached { 0 } else { trunc };
        if from != u64::MAX {
            self.truncate_blocks(ino, from)?;
        }
        Ok(old_size)
    }

    /// A batch's inode that the checkpoint does not have: a new inode with the batch's
    /// header (no pointers, blocks or xattr node yet: applying the batch adds them).
    fn recreate_inode(&mut self, ino: Ino, ib: &Block) {
        let mut b = zero_block();
        node::init_footer(&mut b, ino, ino, NodeType::Inode, 0);
        b[..inode::OFF_ADDRS].copy_from_slice(&ib[..inode::OFF_ADDRS]);
        inode::set_blocks(&mut b, 0);
        inode::set_xattr_nid(&mut b, NULL_NID);
        self.nat.set(ino, NatEntry { ino, addr: NEW_ADDR });
        self.nodes.insert(ino, CachedNode { block: b, dirty: true });
        self.dirty_nodes.insert(ino, ino);
        self.valid_inodes += 1;
    }

    /// Inline data (inline.rs) before a batch's pointers are applied: the batch's inode
    /// holds the file's bytes and maps nothing. An inline inode converted since (the
    /// batch's is not) becomes an empty ordinary one; an ordinary one whose batch is inline
    /// (only a damaged chain has one: conversion is one way) loses its blocks. Returns
    /// whether the batch's inode is inline (its bytes are installed with its header).
    fn match_inline(&mut self, ino: Ino, ib: &Block, exists: bool) -> Result<bool> {
        let batch_inline = inode::is_inline(ib);
        if exists {
            let cur_inline = inode::is_inline(self.inode_ref(ino)?);
            if cur_inline && !batch_inline {
                inode::set_inline(self.inode_mut(ino)?, false);
            } else if !cur_inline && batch_inline {
                self.truncate_blocks(ino, 0)?;
            }
        }
        Ok(batch_inline)
    }

    /// Postcondition of [`Self::apply_batch`]: the NAT names the rewritten inode and the SIT
    /// holds every data block the batch claimed below its size (blocks past it were dropped
    /// again); else the next checkpoint would free live data, or publish an inode no id
    /// leads to. Cheap: one NAT entry and one bit per block.
    fn assert_batch_applied(&self, ino: Ino, claimed: &[(u64, BlockAddr)], size: u64) {
        assert!(
            self.nat.get(ino).is_some_and(|e| !e.is_free() && e.ino == ino),
            "recovered inode {ino} not in the NAT"
        );
        for &(idx, a) in claimed.iter().filter(|&&(idx, _)| idx < size.div_ceil(BLOCK_SIZE as u64)) {
            let valid = self.sit.get(self.geo.segno_of(a)).is_valid(self.geo.blkoff_of(a));
            assert!(valid, "recovered block {a} (index {idx}) of inode {ino} not valid in the SIT");
        }
    }

    /// After a batch of `ino` (size `size`, `old_size` before it): blocks past the new size
    /// (the file shrank since its last durable state and the batch's truncation point did
    /// not cover it) are dropped. Skipped when the file did not shrink, which is the common
    /// case and keeps recovery fast; and on images that keep reservations on disk unless
    /// the inode existed and the batch had no truncation point (`untruncated`): otherwise
    /// what lies past the size is a KEEP_SIZE reservation, which is the file's (a recreated
    /// inode's state is its batch; a truncation point was applied before the pointers).
    fn drop_past_size(&mut self, ino: Ino, size: u64, old_size: u64, untruncated: bool) -> Result<()> {
        if size < old_size && (!self.prealloc_on_disk || untruncated) {
            self.truncate_blocks(ino, size.div_ceil(BLOCK_SIZE as u64))?;
        }
        Ok(())
    }

    /// Whether the batch of marked inode `ib` is all there, as fsync wrote it: every data
    /// block it newly points at is free in the SIT (else someone else's: the batch cannot
    /// be trusted) and their CRCs and count are the inode's `batch_crc` and `batch_blocks`;
    /// and its reserved holes fit the device.
    fn batch_data_verifies(&mut self, ib: &Block, changes: &[(u64, BlockAddr, u32)]) -> Result<bool> {
        if !self.reservations_fit(changes) {
            return Ok(false);
        }
        let mut crc = 0u32;
        let mut count = 0u32;
        let mut buf = zero_block();
        let checksums = self.data_checksums;
        for &(_, addr, want) in changes {
            // Holes and reserved holes are not blocks: nothing to read or claim.
            if addr == NULL_ADDR || addr == NEW_ADDR {
                continue;
            }
            if self.sit.get(self.geo.segno_of(addr)).is_valid(self.geo.blkoff_of(addr)) {
                return Ok(false);
            }
            // A block that fails the checksum its node holds is read once more: a misread
            // would reject the batch and drop the fsync (`read_twice_if`).
            let got = crate::read_twice_if(
                &mut self.dev,
                addr as u64,
                &mut buf,
                |b| crate::codec::crc(&b[..]),
                |&got| checksums && got != want,
            )?;
            crc = crate::codec::crc_seeded(crc, &got.to_le_bytes());
            count += 1;
        }
        Ok(crc == inode::batch_crc(ib) && count == inode::batch_blocks(ib))
    }

    /// Whether the reserved holes a batch adds (`NEW_ADDR` pointers, counted as if none of
    /// its slots had one before: an upper bound) fit in the main area beside what is in use
    /// and reserved. An fsync held that capacity when it wrote them, so only a damaged
    /// batch fails this.
    fn reservations_fit(&self, changes: &[(u64, BlockAddr, u32)]) -> bool {
        let added = changes.iter().filter(|c| c.1 == NEW_ADDR).count() as u64;
        added == 0 || self.sit.valid_total() + self.prealloc.total() + added <= self.geo.main_blocks()
    }

    /// Points file block `idx` of `ino` at `new` with checksum `crc`, claiming `new` and
    /// releasing the old one. `NEW_ADDR` (a reserved hole on disk: recovery has no dirty
    /// data, so every `NEW_ADDR` it meets is one) claims nothing and moves the reservations'
    /// count with the pointer.
    fn apply_slot(&mut self, ino: Ino, idx: u64, new: BlockAddr, crc: u32) -> Result<()> {
        let (holder, ofs, old) = self.map_for_write(ino, idx)?;
        if old == new {
            return Ok(());
        }
        debug_assert!(!self.data.contains_key(&(ino, idx)), "roll-forward over a dirty block");
        if old == NEW_ADDR && self.prealloc_on_disk {
            self.prealloc.release_on_disk(1);
        }
        if new == NEW_ADDR {
            self.prealloc.add_on_disk(1);
        }
        if new != NULL_ADDR && new != NEW_ADDR {
            let fresh = self.seg.claim(&self.geo, &mut self.sit, new, Log::WarmData, self.now_sec)?;
            if fresh {
                self.ssa.reset(self.geo.segno_of(new));
            }
            // A block beside its batch's nodes (data beside its chain) keeps the data flag
            // its node segment's summary needs; a segment the chain opened and only its data
            // claims becomes a data segment, whose entries never carry it.
            let summary = self.data_summary(new, holder, ofs);
            self.ssa.set(&mut self.dev, &self.geo, new, summary, self.cp.version)?;
        }
        self.set_holder_slot(holder, ofs, new, crc)?;
        if old != NULL_ADDR && old != NEW_ADDR {
            self.seg.invalidate(&self.geo, &mut self.sit, old)?;
        }
        let b = self.inode_mut(ino)?;
        let n = inode::blocks(b);
        match (old == NULL_ADDR, new == NULL_ADDR) {
            (true, false) => inode::set_blocks(b, n.saturating_add(1)),
            (false, true) => inode::set_blocks(b, n.saturating_sub(1)),
            _ => {}
        }
        Ok(())
    }

    /// Links a recovered new inode under the name its marked inode records. When the
    /// parent directory's block fails its data checksum the name cannot be added (the
    /// block's bytes are gone): the inode stays, unreachable, and the mount goes on — fsck
    /// lists it and the bad block, and `fsck --repair` links it into /lost+found. Failing the
    /// mount instead would turn one bad directory block into an image that does not mount.
    /// Restores the name of a dentry-marked inode; returns whether the inode is kept (false:
    /// the name could not be restored — damage — and the inode was dropped again).
    fn recover_dentry(&mut self, ino: Ino, ib: &Block) -> Result<bool> {
        match self.recover_dentry_inner(ino, ib) {
            Err(Error::DataChecksum { .. }) => {
                self.stats.recovery_unlinked_inodes += 1;
                Ok(true)
            }
            r => r,
        }
    }

    fn recover_dentry_inner(&mut self, ino: Ino, ib: &Block) -> Result<bool> {
        let parent = inode::pino(ib);
        let name = inode::name(ib).to_vec();
        let parent_ok = self.check_ino(parent).is_ok() && self.inode_kind(parent)? == FileType::Directory;
        if !parent_ok || crate::namei::check_name(&name).is_err() {
            return self.evict_inode(ino).map(|()| false);
        }
        if let Some((_, other, other_kind)) = self.dir_lookup(parent, &name)? {
            if other == ino {
                return Ok(true);
            }
            // fsync never writes a dentry mark for a name removed since the checkpoint, so
            // this is damage: keep what the checkpoint has, never destroy another file.
            let _ = other_kind;
            return self.evict_inode(ino).map(|()| false);
        }
        let kind = FileType::from_mode(inode::mode(ib) as u32).unwrap_or(FileType::Regular);
        self.recovery_link(parent, &name, ino, kind).map(|()| true)
    }
}

/// The chain's steps in order: a record node's records where it lies; a batch where its
/// fsync-marked inode lies, with its inode's nodes since that inode's previous mark.
fn chain_steps(chain: &[ChainNode]) -> Vec<Step> {
    let mut pending: BTreeMap<Ino, Vec<usize>> = BTreeMap::new();
    let mut steps = Vec::new();
    for (i, n) in chain.iter().enumerate() {
        if n.records.is_some() {
            steps.push(Step::Records(i));
            continue;
        }
        let ino = node::footer_ino(&n.block);
        pending.entry(ino).or_default().push(i);
        let marked = node::footer_flags(&n.block) & node::FLAG_FSYNC != 0;
        if marked && node::footer_type(&n.block) == Some(NodeType::Inode) && node::footer_nid(&n.block) == ino {
            steps.push(Step::Batch(ino, pending.remove(&ino).unwrap_or_default()));
        }
    }
    steps
}

/// The inodes a record names (the inodes whose later batches a failed replay rejects).
fn record_inodes(r: &NsRecord) -> Vec<Ino> {
    match r {
        NsRecord::Create { ino, .. } | NsRecord::Link { ino, .. } | NsRecord::Unlink { ino, .. } => alloc::vec![*ino],
        NsRecord::Rename { ino, ino2, .. } => alloc::vec![*ino, *ino2],
    }
}

#[allow(dead_code)]
fn _unused(_: Error, _: Nid) {}
