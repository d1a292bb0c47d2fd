//! What changed since the last checkpoint that decides how an fsync is made durable:
//! [`SinceCheckpoint`].
//!
//! Roll-forward (recovery.rs) replays the fsync chain onto the last checkpoint. It can
//! restore a file's contents, size and — for a file created since the checkpoint — its one
//! name. It cannot express a rename, a hard link, the removal of one of several names, a
//! hole punched in the middle of a file, an ancestor renamed, or a directory's own change:
//! an fsync after any of those is served by a checkpoint instead. This module keeps the
//! records that decision needs, and the chain's extent for the recovery reserve, in one
//! place: the namespace and file code say what happened (`created`, `relinked`,
//! `name_removed`, `dir_renamed`, `truncated`, `resized`, `reserved`, `evicted`, ...), fsync.rs and
//! atomic.rs ask, and the checkpoint empties it as a whole (`reset`) — the role of f2fs's
//! `sbi->im[]` (APPEND_INO / UPDATE_INO / TRANS_DIR_INO) and `need_do_checkpoint()`.
//!
//! Invariant: right after a checkpoint publishes, every record is empty
//! ([`SinceCheckpoint::is_empty`], asserted there). Each record grows with requests, so
//! their size counts toward `fs::SINCE_CP_BYTES_MAX` ([`SinceCheckpoint::bytes`]).

use crate::node::FileType;
use crate::nsrec::NsRecord;
use crate::{Ino, Nid};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

/// Why an fsync (or an atomic commit) is served by a checkpoint rather than a batch in the
/// fsync chain. Each is counted in [`crate::Stats`] (`fsync_cp_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointReason {
    /// The file is a directory: roll-forward restores no directory's own change.
    Directory,
    /// The inode was renamed, hard-linked or unlinked from one of several names since the
    /// checkpoint, or had a hole punched (roll-forward replays sizes and blocks, not holes).
    Relinked,
    /// The inode is unlinked but still open (an orphan).
    Orphan,
    /// A directory on its path was renamed since the checkpoint, or the path is not known
    /// for sure (several links, a recorded parent that no longer holds its entry).
    PathChanged,
    /// Created since the checkpoint, but its name cannot be restored by a dentry mark: its
    /// directory is new too, it has several links, or its name was removed from that
    /// directory since the checkpoint (the checkpoint may hold another file under it).
    NameNotRestorable,
    /// An atomic commit of a file whose directory lost a name since the checkpoint (SQLite's
    /// journal), or whose directory is not known for sure.
    DirLostAName,
    /// Appending the batch would outgrow the room its roll-forward is promised (the
    /// recovery reserve).
    RecoveryRoom,
    /// An atomic commit whose staged blocks had spilled to a session inode.
    Spilled,
    /// The file reserved holes since the checkpoint (fallocate, `FEATURE_INCOMPAT_PREALLOC`):
    /// roll-forward replays onto the checkpoint's SIT, which may still hold blocks freed
    /// since (their free is not durable), so the capacity they take is promised only by a
    /// checkpoint, which makes the frees durable with them.
    Reserved,
}

/// Bytes counted per node id in a since-checkpoint set (measured 9 to 12, rounded up).
pub(crate) const SINCE_CP_ID_BYTES: u64 = 16;
/// Bytes counted per pair (a node id and an index or a checksum; measured 21 to 27).
pub(crate) const SINCE_CP_PAIR_BYTES: u64 = 32;
/// Bytes counted per removed name besides the name itself (measured 51).
pub(crate) const SINCE_CP_NAME_BYTES: u64 = 64;

/// The records kept since the last checkpoint (see the module header).
#[derive(Debug, Default)]
pub(crate) struct SinceCheckpoint {
    /// Inodes created since the last checkpoint: their names need a dentry mark.
    created: BTreeSet<Ino>,
    /// Inodes whose names or links changed (rename, link, unlink of one of several links)
    /// or that had a hole punched: roll-forward cannot express that, so their fsync falls
    /// back to a checkpoint.
    relinked: BTreeSet<Ino>,
    /// Names removed from (or retargeted in) directories. A new file reusing one cannot be
    /// restored by a dentry mark without destroying whatever the checkpoint still has under
    /// that name, so its fsync checkpoints instead.
    removed_names: BTreeSet<(Ino, Vec<u8>)>,
    /// What `removed_names` holds, in bytes (names and the set's overhead).
    removed_names_bytes: u64,
    /// Directories renamed. An fsync of a file below one of them checkpoints: roll-forward
    /// restores a file's own name, not its ancestors', and the file must be found at the
    /// path it was fsync'd under (DESIGN.md, "fsync").
    renamed_dirs: BTreeSet<Ino>,
    /// Lowest file block freed by truncation since the inode was last fsync'd.
    truncated_from: BTreeMap<Ino, u64>,
    /// Inodes whose size changed since they were last written (fdatasync needs those).
    resized: BTreeSet<Ino>,
    /// Inodes that reserved holes on disk (fallocate): their fsync checkpoints.
    reserved: BTreeSet<Ino>,
    /// Distinct nodes appended to the warm node chain: what a roll-forward would rewrite
    /// (each once, however often it was fsync'd); the recovery reserve is computed from
    /// their number.
    chain_nids: BTreeSet<Nid>,
    /// Inodes whose names the chain restores (dentry-marked batches).
    chain_dentries: BTreeSet<Ino>,
    /// Namespace records (DESIGN.md, *Namespace records in the chain*): every directory-entry
    /// change since the checkpoint, in the order it was made, when the filesystem keeps them
    /// (`Filesystem::ns_records`). Invariant (completeness): replayed in order on the
    /// checkpoint's tree, they give the live tree's names (core/tests/ns_records.rs).
    ns_records: Vec<NsRecord>,
    /// What `ns_records` holds, in bytes (encoded lengths and per-record overhead).
    ns_records_bytes: u64,
    /// A change since the checkpoint that no record can express (a symlink target past
    /// `RECORD_SYMLINK_TARGET_MAX`): the records are not complete, so only a checkpoint
    /// makes names durable until the next one.
    ns_records_incomplete: bool,
    /// How many of `ns_records` are written as record nodes in the chain
    /// (`FEATURE_INCOMPAT_NS_RECORDS`): the number the next record node starts from.
    ns_written: usize,
    /// Which of `ns_records` are written (parallel to it). An fsync writes the records it
    /// depends on, not every earlier one (`nschain::record_closure`), so the written ones
    /// need not be a prefix of the list.
    ns_done: Vec<bool>,
    /// Every record before this index is written: where scans for unwritten ones start.
    ns_first_unwritten: usize,
    /// The records (indices, ascending) the fsync or commit being made writes before its
    /// batch: chosen by its decision (`Filesystem::select_records`), taken by
    /// `nschain::write_pending_records`. Emptied with everything else by a checkpoint, which
    /// a commit may make for room between its decision and its batch.
    ns_selected: Vec<usize>,
    /// Blocks a roll-forward rewrites to replay the written records (`fsync::record_replay_blocks`):
    /// counted in the recovery reserve.
    ns_replay_blocks: u64,
    /// Inodes that had a hole punched: roll-forward replays sizes and blocks, not holes, so
    /// their fsync checkpoints even where records carry their names.
    punched: BTreeSet<Ino>,
    /// Inodes whose own attributes (setattr, xattrs, attribute flags) changed: a directory's
    /// are not in the chain (no batch is written for a directory), so its fsync checkpoints.
    attrs_changed: BTreeSet<Ino>,
    /// Inodes the operation in progress punched, reserved, changed the attributes of, or
    /// renamed over a name (or exchanged): `Filesystem::after_change` asks whether one of
    /// them is now a rider only a checkpoint can make durable, and checkpoints then, so that
    /// the operation that made it pays rather than the next fsync that writes records —
    /// another user's (review 52, F1). Emptied by every `after_change`.
    rider_checks: Vec<Ino>,
    /// More than [`RIDER_CHECKS_MAX`] inodes were noted: check every rider.
    rider_checks_all: bool,
}

/// Most inodes one operation notes for the rider check (`SinceCheckpoint::check_rider`).
const RIDER_CHECKS_MAX: usize = 64;

impl SinceCheckpoint {
    // ---- events: what the namespace and file code report --------------------------

    /// `ino` was created.
    pub(crate) fn created(&mut self, ino: Ino) {
        self.created.insert(ino);
    }

    /// `ino` was renamed, hard-linked, lost one of several names or had a hole punched.
    pub(crate) fn relinked(&mut self, ino: Ino) {
        self.relinked.insert(ino);
    }

    /// Directory `ino` was renamed (it is also [`relinked`](Self::relinked) by the caller).
    pub(crate) fn dir_renamed(&mut self, ino: Ino) {
        self.renamed_dirs.insert(ino);
    }

    /// A name was removed from (or retargeted in) directory `dir`.
    pub(crate) fn name_removed(&mut self, dir: Ino, name: &[u8]) {
        if self.removed_names.insert((dir, name.to_vec())) {
            self.removed_names_bytes += name.len() as u64 + SINCE_CP_NAME_BYTES;
        }
    }

    /// `ino`'s blocks from `from_idx` on were freed by a truncation.
    pub(crate) fn truncated(&mut self, ino: Ino, from_idx: u64) {
        let h = self.truncated_from.entry(ino).or_insert(u64::MAX);
        *h = (*h).min(from_idx);
    }

    /// Changes were made without records (records were not kept): the list is incomplete.
    pub(crate) fn ns_records_missed(&mut self) {
        if !self.is_empty() || self.ns_records_bytes > 0 {
            self.ns_records_incomplete = true;
        }
    }

    /// `ino` had a hole punched (it is also [`relinked`](Self::relinked) by the caller).
    pub(crate) fn punched(&mut self, ino: Ino) {
        self.punched.insert(ino);
        self.check_rider(ino);
    }

    /// `ino`'s own attributes changed (setattr, xattrs, attribute flags).
    pub(crate) fn attrs_changed(&mut self, ino: Ino) {
        self.attrs_changed.insert(ino);
        self.check_rider(ino);
    }

    /// Notes `ino` for the rider check at the end of the operation. Bounded: past
    /// [`RIDER_CHECKS_MAX`] inodes (an operation that touches that many without an
    /// `after_change`) the check covers every rider instead (`rider_checks_all`).
    fn check_rider(&mut self, ino: Ino) {
        if self.rider_checks.len() < RIDER_CHECKS_MAX {
            self.rider_checks.push(ino);
        } else {
            self.rider_checks_all = true;
        }
    }

    /// The inodes to check for riders only a checkpoint can make durable, taken: `None`
    /// when every rider must be checked (too many noted).
    pub(crate) fn take_rider_checks(&mut self) -> Option<Vec<Ino>> {
        let all = core::mem::take(&mut self.rider_checks_all);
        let v = core::mem::take(&mut self.rider_checks);
        (!all).then_some(v)
    }

    /// Records `idxs` (indices into the list, none written yet) are now in the chain, their
    /// replay taking `replay_blocks` blocks of the recovery reserve.
    pub(crate) fn ns_records_written(&mut self, idxs: &[usize], replay_blocks: u64) {
        for &i in idxs {
            assert!(!self.ns_done[i], "namespace record {i} written twice");
            self.ns_done[i] = true;
        }
        self.ns_written += idxs.len();
        debug_assert!(self.ns_written <= self.ns_records.len());
        while self.ns_first_unwritten < self.ns_done.len() && self.ns_done[self.ns_first_unwritten] {
            self.ns_first_unwritten += 1;
        }
        self.ns_replay_blocks += replay_blocks;
    }

    /// The records the fsync or commit being made writes before its batch (indices,
    /// ascending, none written yet), replacing any earlier choice.
    pub(crate) fn select_records(&mut self, idxs: Vec<usize>) {
        debug_assert!(idxs.windows(2).all(|w| w[0] < w[1]), "a selection out of order");
        debug_assert!(idxs.iter().all(|&i| !self.ns_done[i]), "a selection of a written record");
        self.ns_selected = idxs;
    }

    /// The records chosen by [`Self::select_records`], taken.
    pub(crate) fn take_selected(&mut self) -> Vec<usize> {
        core::mem::take(&mut self.ns_selected)
    }

    /// The records chosen by [`Self::select_records`] and not written yet.
    pub(crate) fn selected(&self) -> impl Iterator<Item = &NsRecord> + '_ {
        self.ns_selected.iter().map(|&i| &self.ns_records[i])
    }

    /// `ino`'s size changed.
    pub(crate) fn resized(&mut self, ino: Ino) {
        self.resized.insert(ino);
    }

    /// `ino` reserved holes on disk.
    pub(crate) fn reserved(&mut self, ino: Ino) {
        self.reserved.insert(ino);
        self.check_rider(ino);
    }

    /// A directory-entry change, as its namespace record (kept only when the filesystem keeps
    /// records: the caller asks). A record no node can carry marks the list incomplete.
    pub(crate) fn ns_record(&mut self, r: NsRecord) {
        // A symlink's create is recorded before its target is written
        // (`ns_record_symlink_target` judges it then).
        let target_follows = matches!(&r, NsRecord::Create { attrs, .. }
            if attrs.target.is_empty() && FileType::from_mode(attrs.mode as u32) == Some(FileType::Symlink));
        if !target_follows && !r.expressible() {
            self.ns_records_incomplete = true;
        }
        // A rename over a name makes the renamed file a rider of every fsync that writes
        // the record (an exchange: both).
        if let NsRecord::Rename { ino, ino2, exchange, .. } = &r {
            if *ino2 != 0 {
                self.check_rider(*ino);
            }
            if *exchange {
                self.check_rider(*ino2);
            }
        }
        self.ns_records_bytes += r.encoded_len() as u64 + SINCE_CP_NAME_BYTES;
        self.ns_records.push(r);
        self.ns_done.push(false);
    }

    /// Sets the symlink target of the last record, the create of symlink `ino` (its target
    /// is written after its name).
    pub(crate) fn ns_record_symlink_target(&mut self, ino: Ino, target: &[u8]) {
        if let Some(NsRecord::Create { ino: i, attrs, .. }) = self.ns_records.last_mut() {
            debug_assert_eq!(*i, ino, "the last record is not the symlink's create");
            if *i == ino {
                self.ns_records_bytes += target.len() as u64;
                attrs.target = target.to_vec();
                if !self.ns_records.last().is_some_and(NsRecord::expressible) {
                    self.ns_records_incomplete = true;
                }
            }
        }
    }

    /// `ino` was destroyed: nothing of it needs a record any more.
    pub(crate) fn evicted(&mut self, ino: Ino) {
        self.truncated_from.remove(&ino);
        self.resized.remove(&ino);
        self.reserved.remove(&ino);
        self.relinked.remove(&ino);
        self.created.remove(&ino);
        self.punched.remove(&ino);
        self.attrs_changed.remove(&ino);
    }

    /// A batch of `ino` is about to be written: returns (and forgets) the lowest file block
    /// truncated since its last batch (`u64::MAX`: none).
    pub(crate) fn take_truncated_from(&mut self, ino: Ino) -> u64 {
        self.truncated_from.remove(&ino).unwrap_or(u64::MAX)
    }

    /// Node `nid` of `ino`'s batch was appended to the chain (`dentry`: with the dentry mark).
    pub(crate) fn chained(&mut self, ino: Ino, nid: Nid, dentry: bool) {
        self.chain_nids.insert(nid);
        if dentry {
            self.chain_dentries.insert(ino);
        }
    }

    /// `ino`'s batch is written: its size is durable with it.
    pub(crate) fn batch_written(&mut self, ino: Ino) {
        self.resized.remove(&ino);
    }

    /// A checkpoint published: everything recorded is in it.
    pub(crate) fn reset(&mut self) {
        *self = SinceCheckpoint::default();
    }

    // ---- questions: what fsync, atomic commit and the recovery reserve ask ---------

    pub(crate) fn is_created(&self, ino: Ino) -> bool {
        self.created.contains(&ino)
    }

    pub(crate) fn is_relinked(&self, ino: Ino) -> bool {
        self.relinked.contains(&ino)
    }

    pub(crate) fn is_resized(&self, ino: Ino) -> bool {
        self.resized.contains(&ino)
    }

    pub(crate) fn is_reserved(&self, ino: Ino) -> bool {
        self.reserved.contains(&ino)
    }

    pub(crate) fn any_dir_renamed(&self) -> bool {
        !self.renamed_dirs.is_empty()
    }

    pub(crate) fn renamed_dirs(&self) -> &BTreeSet<Ino> {
        &self.renamed_dirs
    }

    pub(crate) fn any_name_removed(&self) -> bool {
        !self.removed_names.is_empty()
    }

    /// Whether `name` was removed from directory `dir`.
    pub(crate) fn was_removed(&self, dir: Ino, name: &[u8]) -> bool {
        // A set of pairs cannot be asked with a borrowed name: compare the range instead.
        self.removed_names.range((dir, name.to_vec())..).next().is_some_and(|(d, n)| *d == dir && n == name)
    }

    /// Whether any name was removed from directory `dir`.
    pub(crate) fn dir_lost_a_name(&self, dir: Ino) -> bool {
        self.removed_names.range((dir, Vec::new())..).next().is_some_and(|(d, _)| *d == dir)
    }

    /// Whether `ino`'s next batch must carry the dentry mark for the chain to restore its
    /// name and the chain does not restore it yet.
    pub(crate) fn dentry_pending(&self, ino: Ino) -> bool {
        self.created.contains(&ino) && !self.chain_dentries.contains(&ino)
    }

    /// Distinct nodes in the chain, and the inodes whose names it restores.
    pub(crate) fn chain_extent(&self) -> (u64, u64) {
        (self.chain_nids.len() as u64, self.chain_dentries.len() as u64)
    }

    /// The namespace records since the checkpoint, in order, and whether they are complete
    /// (every change expressible).
    pub(crate) fn ns_records(&self) -> (&[NsRecord], bool) {
        (&self.ns_records, !self.ns_records_incomplete)
    }

    /// The records not yet written to the chain, in order, with their indices in the list.
    pub(crate) fn ns_unwritten(&self) -> impl DoubleEndedIterator<Item = (usize, &NsRecord)> + '_ {
        let from = self.ns_first_unwritten;
        self.ns_records[from..]
            .iter()
            .zip(&self.ns_done[from..])
            .enumerate()
            .filter(|(_, (_, &done))| !done)
            .map(move |(k, (r, _))| (from + k, r))
    }

    /// Whether every record is in the chain.
    pub(crate) fn ns_all_written(&self) -> bool {
        self.ns_written == self.ns_records.len()
    }

    /// How many records the chain holds: the number of the next record written.
    pub(crate) fn ns_written_count(&self) -> u32 {
        self.ns_written as u32
    }

    /// Blocks a roll-forward rewrites to replay the records written so far.
    pub(crate) fn ns_replay_blocks(&self) -> u64 {
        self.ns_replay_blocks
    }

    pub(crate) fn is_punched(&self, ino: Ino) -> bool {
        self.punched.contains(&ino)
    }

    pub(crate) fn attrs_changed_of(&self, ino: Ino) -> bool {
        self.attrs_changed.contains(&ino)
    }

    /// Names in the removed-name record.
    pub(crate) fn removed_name_count(&self) -> u64 {
        self.removed_names.len() as u64
    }

    /// What the records take, in bytes (an estimate from their entry counts, measured with
    /// a counting allocator; see the constants).
    pub(crate) fn bytes(&self) -> u64 {
        let ids = self.relinked.len()
            + self.created.len()
            + self.renamed_dirs.len()
            + self.resized.len()
            + self.reserved.len()
            + self.chain_nids.len()
            + self.chain_dentries.len()
            + self.punched.len()
            + self.attrs_changed.len();
        self.removed_names_bytes
            + self.ns_records_bytes
            + ids as u64 * SINCE_CP_ID_BYTES
            + self.truncated_from.len() as u64 * SINCE_CP_PAIR_BYTES
    }

    /// Whether nothing is recorded (true right after a checkpoint).
    pub(crate) fn is_empty(&self) -> bool {
        self.created.is_empty()
            && self.relinked.is_empty()
            && self.removed_names.is_empty()
            && self.removed_names_bytes == 0
            && self.renamed_dirs.is_empty()
            && self.truncated_from.is_empty()
            && self.resized.is_empty()
            && self.reserved.is_empty()
            && self.chain_nids.is_empty()
            && self.chain_dentries.is_empty()
            && self.ns_records.is_empty()
            && self.ns_records_bytes == 0
            && !self.ns_records_incomplete
            && self.ns_written == 0
            && self.ns_done.is_empty()
            && self.ns_first_unwritten == 0
            && self.ns_selected.is_empty()
            && self.ns_replay_blocks == 0
            && self.punched.is_empty()
            && self.attrs_changed.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rider_checks_are_bounded_and_fall_back_to_checking_every_rider() {
        let mut s = SinceCheckpoint::default();
        for ino in 2..2 + RIDER_CHECKS_MAX as Ino {
            s.punched(ino);
        }
        assert_eq!(s.take_rider_checks().map(|v| v.len()), Some(RIDER_CHECKS_MAX));
        // Past the bound nothing more is kept; the check covers every rider instead.
        for ino in 2..2 + 3 * RIDER_CHECKS_MAX as Ino {
            s.reserved(ino);
            assert!(s.rider_checks.len() <= RIDER_CHECKS_MAX);
        }
        assert_eq!(s.take_rider_checks(), None);
        assert_eq!(s.take_rider_checks(), Some(Vec::new()), "taken: empty again");
    }

    #[test]
    fn removed_names_are_found_by_directory_and_name() {
        let mut s = SinceCheckpoint::default();
        s.name_removed(7, b"b");
        assert!(s.was_removed(7, b"b"));
        assert!(!s.was_removed(7, b"a"));
        assert!(!s.was_removed(7, b"bb"));
        assert!(!s.was_removed(8, b"b"));
        assert!(s.dir_lost_a_name(7));
        assert!(!s.dir_lost_a_name(6));
        assert!(!s.dir_lost_a_name(8));
        s.name_removed(7, b"b");
        assert_eq!(s.bytes(), 1 + SINCE_CP_NAME_BYTES, "a name is counted once");
    }

    #[test]
    fn reset_empties_every_record() {
        let mut s = SinceCheckpoint::default();
        s.created(1);
        s.relinked(2);
        s.dir_renamed(3);
        s.name_removed(3, b"x");
        s.truncated(4, 9);
        s.truncated(4, 5);
        s.resized(4);
        s.chained(5, 6, true);
        assert!(!s.is_empty());
        assert_eq!(s.chain_extent(), (1, 1));
        assert!(s.dentry_pending(1) && !s.dentry_pending(5));
        assert_eq!(s.take_truncated_from(4), 5);
        assert_eq!(s.take_truncated_from(4), u64::MAX);
        s.reset();
        assert!(s.is_empty());
        assert_eq!(s.bytes(), 0);
    }
}
