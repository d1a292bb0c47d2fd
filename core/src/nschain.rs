//! Namespace records in the chain (`FEATURE_INCOMPAT_NS_RECORDS`; DESIGN.md, *Namespace
//! records in the chain*): writing the records kept since the checkpoint (`since_cp`) as
//! record nodes (`nsrec`) in the warm node log before the fsync batch that needs them,
//! choosing which (those it depends on: [`record_closure`]), and replaying them at
//! roll-forward through namei's own operations.
//!
//! Invariants:
//! - every fsync batch is preceded in the chain by every record touching its file, and every
//!   fsync that needs a name durable by the records of its file (and of its path when a
//!   directory was renamed) — each with every earlier record it depends on
//!   (`write_pending_records` runs first);
//! - any two records in the chain that share an inode are in the list's order (each fsync's
//!   choice is closed under "an earlier unwritten record sharing an inode"), so replayed in
//!   chain order every record finds what it found when it ran (DESIGN.md, *Why the chain
//!   replays*);
//! - record nodes are numbered (`first_seq`): the chain walk ends at a gap;
//! - a record node is never valid in the SIT (nothing points at it; its block is invalid as
//!   soon as it is written, and the segment fence keeps it until the next checkpoint);
//! - a record that cannot apply (its name taken, its source missing) is damage: the replay
//!   changes nothing for it and reports it; the caller stops applying records there.

use crate::device::{BlockDevice, WriteFlags};
use crate::error::{Error, Result};
use crate::fs::{CachedNode, Filesystem, RenameFlags, Timestamp};
use crate::layout::*;
use crate::nat::NatEntry;
use crate::node::{self, inode, FileType, NodeType};
use crate::nsrec::{self, CreateAttrs, NsRecord};
use crate::segment::Log;
use crate::ssa::Summary;
use crate::{zero_block, Ino};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

/// Blocks a roll-forward may rewrite to replay one record: the dentry blocks it changes
/// and the growth of the target directory's tree (7, as for a name a dentry mark restores),
/// the inodes it rewrites (both directories and both inodes of a rename: 4) and a new
/// inode (1).
pub(crate) const RECORD_REPLAY_BLOCKS: u64 = 12;

impl<D: BlockDevice> Filesystem<D> {
    /// Whether fsync writes namespace records and roll-forward replays them: the image has
    /// `FEATURE_INCOMPAT_NS_RECORDS` and the records are kept.
    pub(crate) fn records_in_chain(&self) -> bool {
        self.ns_records && self.sb.ns_records()
    }

    /// What writing the records the fsync or commit selected takes
    /// ([`Self::select_records`]): record nodes, and the blocks their replay rewrites (for
    /// the recovery reserve). (0, 0) when records are not written.
    pub(crate) fn unwritten_record_cost(&self) -> (u64, u64) {
        if !self.records_in_chain() {
            return (0, 0);
        }
        let (mut nodes, mut used, mut count) = (0u64, nsrec::RECORD_NODE_BYTES_MAX, 0u64);
        // The packing `nsrec::pack` does: a record that does not fit opens a node.
        for r in self.since_cp.selected() {
            let len = r.encoded_len();
            if used + len > nsrec::RECORD_NODE_BYTES_MAX {
                nodes += 1;
                used = 0;
            }
            used += len;
            count += 1;
        }
        (nodes, count * RECORD_REPLAY_BLOCKS)
    }

    /// Chooses the records the fsync or commit being decided writes before its batch: every
    /// record not yet in the chain when `all` (a directory's fsync, a file whose names or
    /// path are not known for sure), else those that touch an inode of `inos` (the file, its
    /// directories when one was renamed) or that `seed` picks (a commit's journal removals),
    /// with every earlier one they depend on ([`record_closure`]), and those that touch the
    /// files they rename over a name (riders, whose batches follow and carry their link
    /// counts). Other users' records elsewhere stay unwritten for the fsync that needs them.
    /// Changes only the selection.
    pub(crate) fn select_records(&mut self, all: bool, inos: &BTreeSet<Ino>, seed: impl Fn(&NsRecord) -> bool) {
        if !self.records_in_chain() {
            return;
        }
        let unwritten: Vec<(usize, &NsRecord)> = self.since_cp.ns_unwritten().collect();
        let chosen: Vec<usize> = if all {
            unwritten.iter().map(|&(i, _)| i).collect()
        } else {
            let moved = self.since_cp.renamed_dirs();
            record_closure(&unwritten, inos, &seed, moved).into_iter().map(|k| unwritten[k].0).collect()
        };
        let left = unwritten.len() - chosen.len();
        self.stats.ns_records_left_unwritten += left as u64;
        self.since_cp.select_records(chosen);
    }

    /// Writes the records the fsync or commit selected ([`Self::select_records`]) as record
    /// nodes in the warm node log (a failure is a failed write: the caller shuts down),
    /// numbered on from those the chain holds. A second call writes nothing.
    /// `own`: the fsync's own batch follows the records (its group counts it, with the
    /// riders in `group_riders` that still have something to write).
    pub(crate) fn write_pending_records(&mut self, own: bool) -> Result<()> {
        if !self.records_in_chain() {
            return Ok(());
        }
        let first = self.since_cp.ns_written_count();
        let idxs = self.since_cp.take_selected();
        let recs: Vec<NsRecord> = {
            let (all, _) = self.since_cp.ns_records();
            idxs.iter().map(|&i| all[i].clone()).collect()
        };
        // The group: the record nodes written here and the batches the fsync writes after
        // them, which roll-forward applies whole or not at all (recovery.rs).
        let riders = self.group_riders.iter().filter(|&&c| self.rider_changed(c)).count() as u32;
        let batches = own as u32 + if crate::mutant!("mutant-nsrec-no-group") { 0 } else { riders };
        let mut done = 0usize;
        // Bounded: every node takes at least one record (every kept record is expressible
        // while the list is complete, which the caller checked).
        while done < recs.len() {
            let mut b = zero_block();
            let n = nsrec::pack(&mut b, &recs[done..], first + done as u32);
            if n == 0 {
                return Err(Error::Invalid("a namespace record no node can carry"));
            }
            let tag = if done + n < recs.len() { nsrec::GROUP_MORE } else { 1 + batches };
            nsrec::set_group_tag(&mut b, tag);
            self.write_record_node(&mut b)?;
            self.since_cp.ns_records_written(&idxs[done..done + n], n as u64 * RECORD_REPLAY_BLOCKS);
            self.stats.ns_records_written += n as u64;
            done += n;
        }
        Ok(())
    }

    /// Appends record node `b` to the warm node log, sealed like every chain node (this
    /// checkpoint's version, the log's next address). Its block is invalid at once: nothing
    /// points at it, and the fence on blocks written since the checkpoint keeps it.
    fn write_record_node(&mut self, b: &mut crate::Block) -> Result<()> {
        let addr = self.alloc_block(Log::WarmNode, Summary { nid: NULL_NID, ofs: 0 })?;
        let next = self.seg.peek_next(&self.geo, &mut self.sit, &mut self.ssa, Log::WarmNode)?;
        node::seal_for_write(b, self.cp.version, next, self.seed);
        self.dentry_cache.forget(addr);
        self.dev.write(addr as u64, b, WriteFlags::empty())?;
        self.seg.invalidate(&self.geo, &mut self.sit, addr)?;
        self.stats.node_blocks_written += 1;
        self.stats.ns_record_nodes_written += 1;
        self.written_blocks = self.written_blocks.saturating_add(1);
        Ok(())
    }

    /// Roll-forward: applies one record on the tree recovered so far. Ok(false): it cannot
    /// apply (damage: its name taken, its source missing or another inode), and nothing
    /// changed. A failed read, a damaged block or no room ([`does_not_apply`] is false) is
    /// returned: the mount fails naming it, rather than dropping this record and every
    /// fsync after it without a word.
    pub(crate) fn replay_record(&mut self, r: &NsRecord) -> Result<bool> {
        // A read-only mount rolls forward in memory too: the operations' own refusal of a
        // read-only filesystem is lifted while they replay (recovery writes nothing itself).
        let read_only = core::mem::replace(&mut self.read_only, false);
        let r = self.replay_record_inner(r);
        self.read_only = read_only;
        r
    }

    fn replay_record_inner(&mut self, r: &NsRecord) -> Result<bool> {
        let r = match r {
            NsRecord::Create { dir, name, ino, attrs, time } => self.replay_create(*dir, name, *ino, attrs, *time),
            NsRecord::Link { dir, name, ino, time } => self.replay_link(*dir, name, *ino, *time),
            NsRecord::Unlink { dir, name, ino, rmdir, time } => {
                if !self.entry_is(*dir, name, *ino)? {
                    return Ok(false);
                }
                if *rmdir {
                    self.rmdir_inner(*dir, name, *time)
                } else {
                    self.unlink_inner(*dir, name, *time)
                }
            }
            NsRecord::Rename { dir, name, ino, dir2, name2, ino2, exchange, time } => {
                if !self.entry_is(*dir, name, *ino)? || !self.entry_is(*dir2, name2, *ino2)? {
                    return Ok(false);
                }
                let flags = if *exchange { RenameFlags::EXCHANGE } else { RenameFlags::empty() };
                self.rename_inner(*dir, name, *dir2, name2, flags, *time)
            }
        };
        match r {
            Ok(()) => Ok(true),
            Err(e) if does_not_apply(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Whether `dir/name` names `ino` (0: whether it names nothing). False for a `dir` that
    /// is not a live directory.
    fn entry_is(&mut self, dir: Ino, name: &[u8], ino: Ino) -> Result<bool> {
        if self.check_ino(dir).is_err() || self.inode_kind(dir)? != FileType::Directory {
            return Ok(false);
        }
        let found = self.dir_lookup(dir, name)?.map(|(_, i, _)| i).unwrap_or(NULL_NID);
        Ok(found == ino)
    }

    fn replay_link(&mut self, dir: Ino, name: &[u8], ino: Ino, time: Timestamp) -> Result<()> {
        if self.check_ino(ino).is_err() || !self.entry_is(dir, name, NULL_NID)? {
            return Err(Error::NotFound);
        }
        self.link_inner(ino, dir, name, time).map(|_| ())
    }

    /// A create record: inode `ino` (held since the chain was read) with the record's
    /// attributes, linked as `dir/name`, as `namei::new_inode` made it.
    fn replay_create(&mut self, dir: Ino, name: &[u8], ino: Ino, attrs: &CreateAttrs, time: Timestamp) -> Result<()> {
        let kind = FileType::from_mode(attrs.mode as u32).ok_or(Error::Invalid("create record's file type"))?;
        if !self.entry_is(dir, name, NULL_NID)? || !self.nat.get(ino).is_some_and(|e| e.is_free()) {
            return Err(Error::Exists);
        }
        let mut b = zero_block();
        node::init_footer(&mut b, ino, ino, NodeType::Inode, 0);
        inode::set_mode(&mut b, attrs.mode);
        inode::set_uid(&mut b, attrs.uid);
        inode::set_gid(&mut b, attrs.gid);
        inode::set_links(&mut b, if kind == FileType::Directory { 2 } else { 1 });
        inode::set_all_times(&mut b, time);
        inode::set_generation(&mut b, attrs.generation);
        inode::set_pino(&mut b, dir);
        inode::set_name(&mut b, name);
        inode::set_rdev(&mut b, attrs.rdev);
        inode::set_iflags(&mut b, attrs.iflags);
        if kind == FileType::Regular && self.inline_data {
            inode::set_inline(&mut b, true);
        }
        if attrs.generation >= self.next_generation {
            self.next_generation = attrs.generation.wrapping_add(1).max(1);
        }
        self.nat.set(ino, NatEntry { ino, addr: NEW_ADDR });
        self.nodes.insert(ino, CachedNode { block: b, dirty: true });
        self.dirty_nodes.insert(ino, ino);
        self.valid_inodes += 1;
        self.since_cp.created(ino);
        if let Err(e) = self.dir_insert(dir, name, ino, kind) {
            self.free_node(ino)?;
            self.valid_inodes -= 1;
            return Err(e);
        }
        if kind == FileType::Directory {
            self.dir_parents.set(ino, dir);
            self.add_links(dir, 1, time)?;
        }
        self.touch_dir(dir, time)?;
        if kind == FileType::Symlink {
            self.write_fill(ino, 0, &attrs.target, time)?;
        }
        Ok(())
    }
}

/// Whether a replayed operation's error says that its record does not apply on the tree
/// recovered so far (the name taken or gone, the inode another, a type or flag that
/// forbids it): the namespace's own refusals, which change nothing. Every other error is
/// the device's or the image's (a read that failed, a block that fails its checksum, a data
/// block that does not match, no room left where the recovery reserve should have kept
/// it): swallowing one would drop the record and every fsync after it in silence, and it
/// would come back on the next read anyway.
fn does_not_apply(e: &Error) -> bool {
    match e {
        Error::NotFound
        | Error::Exists
        | Error::NotEmpty
        | Error::NotDir
        | Error::IsDir
        | Error::NameTooLong
        | Error::Invalid(_)
        | Error::NotPermitted
        | Error::TooManyLinks
        | Error::FileTooBig
        | Error::NoData
        | Error::Range
        | Error::NotSupported(_) => true,
        Error::NoSpace
        | Error::DirectoryFull
        | Error::ReadOnly
        | Error::ShutDown
        | Error::Io { .. }
        | Error::Corrupt { .. }
        | Error::DataChecksum { .. } => false,
    }
}

/// The inodes a record reads or changes: its directories (their entries, link counts and
/// times) and the inodes it names (their links, recorded parent, a directory's `..` and
/// emptiness). Two records that share none commute: either order gives the same tree.
fn record_touches(r: &NsRecord) -> [Ino; 4] {
    match r {
        NsRecord::Create { dir, ino, .. } | NsRecord::Link { dir, ino, .. } | NsRecord::Unlink { dir, ino, .. } => {
            [*dir, *ino, 0, 0]
        }
        NsRecord::Rename { dir, ino, dir2, ino2, .. } => [*dir, *ino, *dir2, *ino2],
    }
}

/// Whether a record renames a directory (to another parent or not; an exchange with one): it
/// changes the path of every name below it, which no inode of the records below need share,
/// and a move changes the ancestry every later move's loop check reads. Such a rename is a
/// barrier for the records around it ([`record_closure`]).
fn renames_a_directory(r: &NsRecord, renamed_dirs: &BTreeSet<Ino>) -> bool {
    matches!(r, NsRecord::Rename { ino, ino2, exchange, .. }
        if renamed_dirs.contains(ino) || (*exchange && renamed_dirs.contains(ino2)))
}

/// The records of `unwritten` (in order; positions in it, ascending) an fsync must write:
/// - every record touching an inode of `inos`, and those `seed` picks;
/// - every record touching a file a chosen record renames over a name (a rider: its batch
///   follows, carrying its link count and recorded parent);
/// - every earlier record that shares an inode with a chosen one ([`record_touches`]),
///   transitively;
/// - around a directory's rename ([`renames_a_directory`]), every record before it when it
///   is chosen, and it (so every record before it) when a later record is chosen. Otherwise
///   a crash could show a directory at its new path without the changes made below it
///   before its rename — names with contents they never had there (a file renamed over
///   `s/f` inside it, the review of stop 58 found) — or a name made below it after its
///   rename at its old path, where that name never was.
///
/// Replayed in the list's order on the chain's tree, the chosen records then do exactly what
/// they did, under the paths they had: a record left out touches nothing a chosen later one
/// touches, and no directory was renamed between them, so moving it after them (the fsync
/// that needs it writes it) changes neither. A worklist over the records by inode: each
/// record is chosen at most once and each (inode, record) pair visited once, so it takes
/// O(n log n) for n records, however the riders chain (an earlier version ran a whole pass
/// per rider found, which another user could make quadratic).
pub(crate) fn record_closure(
    unwritten: &[(usize, &NsRecord)],
    inos: &BTreeSet<Ino>,
    seed: &impl Fn(&NsRecord) -> bool,
    renamed_dirs: &BTreeSet<Ino>,
) -> Vec<usize> {
    let n = unwritten.len();
    // The records touching each inode, and the directories' renames, by position (ascending).
    let mut by_ino: BTreeMap<Ino, Vec<usize>> = BTreeMap::new();
    let mut barriers: Vec<usize> = Vec::new();
    for (k, (_, r)) in unwritten.iter().enumerate() {
        for x in record_touches(r) {
            if x != 0 && by_ino.get(&x).is_none_or(|v| v.last() != Some(&k)) {
                by_ino.entry(x).or_default().push(k);
            }
        }
        if renames_a_directory(r, renamed_dirs) {
            barriers.push(k);
        }
    }
    let mut c = Closure { by_ino, taken: BTreeMap::new(), chosen: alloc::vec![false; n], work: Vec::new() };
    // Records before this position are all chosen (a barrier's prefix).
    let mut prefix = 0usize;
    for &x in inos {
        c.raise(x, n);
    }
    for (k, (_, r)) in unwritten.iter().enumerate() {
        if seed(r) {
            c.choose(k);
        }
    }
    // Bounded: each record enters the worklist at most once, and `prefix` only grows.
    while let Some(k) = c.work.pop() {
        let r = unwritten[k].1;
        if !crate::mutant!("mutant-records-without-dependencies") {
            for x in record_touches(r) {
                if x != 0 {
                    c.raise(x, k);
                }
            }
            // The last barrier at or before `k`: it and every record before it.
            let upto = if crate::mutant!("mutant-records-without-barriers") {
                0
            } else {
                barriers.partition_point(|&b| b <= k)
            };
            if upto > 0 {
                let end = barriers[upto - 1] + 1;
                while prefix < end {
                    c.choose(prefix);
                    prefix += 1;
                }
            }
        }
        if let NsRecord::Rename { ino, ino2, exchange, .. } = r {
            if *ino2 != 0 && !crate::mutant!("mutant-records-without-riders-own") {
                c.raise(*ino, n);
                if *exchange {
                    c.raise(*ino2, n);
                }
            }
        }
    }
    c.chosen.iter().enumerate().filter(|(_, &t)| t).map(|(k, _)| k).collect()
}

/// The worklist of [`record_closure`].
struct Closure {
    /// Positions of the records touching each inode, ascending.
    by_ino: BTreeMap<Ino, Vec<usize>>,
    /// How many of each inode's records (from the first) are chosen already.
    taken: BTreeMap<Ino, usize>,
    chosen: Vec<bool>,
    /// Chosen records whose dependencies are not followed yet.
    work: Vec<usize>,
}

impl Closure {
    fn choose(&mut self, k: usize) {
        if !self.chosen[k] {
            self.chosen[k] = true;
            self.work.push(k);
        }
    }

    /// Chooses every record touching `x` before position `before`.
    fn raise(&mut self, x: Ino, before: usize) {
        let Some(list) = self.by_ino.get(&x) else { return };
        let taken = self.taken.entry(x).or_insert(0);
        while *taken < list.len() && list[*taken] < before {
            let k = list[*taken];
            *taken += 1;
            if !self.chosen[k] {
                self.chosen[k] = true;
                self.work.push(k);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nsrec::CreateAttrs;

    fn create(dir: Ino, name: &[u8], ino: Ino) -> NsRecord {
        let attrs =
            CreateAttrs { mode: 0o100644, iflags: 0, uid: 0, gid: 0, rdev: 0, generation: 1, target: Vec::new() };
        NsRecord::Create { dir, name: name.to_vec(), ino, attrs, time: Timestamp::default() }
    }
    fn unlink(dir: Ino, name: &[u8], ino: Ino) -> NsRecord {
        NsRecord::Unlink { dir, name: name.to_vec(), ino, rmdir: false, time: Timestamp::default() }
    }
    fn rename(dir: Ino, name: &[u8], ino: Ino, dir2: Ino, name2: &[u8], ino2: Ino) -> NsRecord {
        NsRecord::Rename {
            dir,
            name: name.to_vec(),
            ino,
            dir2,
            name2: name2.to_vec(),
            ino2,
            exchange: false,
            time: Timestamp::default(),
        }
    }
    fn closure(recs: &[NsRecord], inos: &[Ino], renamed_dirs: &[Ino]) -> Vec<usize> {
        let list: Vec<(usize, &NsRecord)> = recs.iter().enumerate().collect();
        record_closure(
            &list,
            &inos.iter().copied().collect(),
            &|_: &NsRecord| false,
            &renamed_dirs.iter().copied().collect(),
        )
    }

    #[test]
    fn another_directorys_records_are_left_and_the_files_own_dependencies_taken() {
        // 1 = root, 10 = eve's directory, 20 = /tmp; eve saves by rename in hers, creates
        // and removes a name in /tmp; root creates its file in /tmp.
        let recs = [
            create(10, b"t", 11),
            rename(10, b"t", 11, 10, b"doc", 12),
            create(20, b"e", 21),
            unlink(20, b"e", 21),
            create(20, b"db", 22),
        ];
        assert_eq!(closure(&recs, &[22], &[]), [2, 3, 4], "/tmp's records, not eve's own");
        assert_eq!(closure(&recs, &[12], &[]), [0, 1], "the renamed-over file's");
        assert_eq!(closure(&recs, &[99], &[]), Vec::<usize>::new());
    }

    #[test]
    fn dependencies_are_followed_through_shared_inodes_transitively() {
        // mkdir /a (30), mkdir /a/b (31), create /a/b/f (32), and an unrelated create.
        let mut mkdir_a = create(1, b"a", 30);
        if let NsRecord::Create { attrs, .. } = &mut mkdir_a {
            attrs.mode = 0o40755;
        }
        let recs = [mkdir_a, create(40, b"x", 41), create(30, b"b", 31), create(31, b"f", 32)];
        assert_eq!(closure(&recs, &[32], &[]), [0, 2, 3]);
        // Later records touching the chosen ones' inodes are not needed (they came after).
        let recs2 = [create(31, b"f", 32), create(31, b"g", 33)];
        assert_eq!(closure(&recs2, &[32], &[]), [0], "a later record in the same directory is not needed");
        assert_eq!(closure(&recs2, &[33], &[]), [0, 1], "an earlier one in the same directory is");
    }

    #[test]
    fn a_rider_takes_every_record_touching_it_later_ones_too() {
        // v renamed over u in /tmp (20), then linked into /e (10); root's create in /tmp.
        let recs = [
            create(20, b"v", 21),
            rename(20, b"v", 21, 20, b"u", 22),
            NsRecord::Link { dir: 10, name: b"u2".to_vec(), ino: 21, time: Timestamp::default() },
            create(30, b"other", 31),
            create(20, b"db", 23),
        ];
        assert_eq!(closure(&recs, &[23], &[]), [0, 1, 2, 4]);
    }

    #[test]
    fn riders_that_lead_to_riders_are_all_taken_in_one_closure() {
        // Each file renamed over a name in its own directory, its rename depending on the
        // previous rider's later record: a chain another user could make as long as the
        // since-checkpoint bound lets her (every record taken once, not a pass per rider).
        let n = 2000u32;
        let mut recs = Vec::new();
        for i in 0..n {
            // Directory 100 + i, file 10_000 + i renamed over 20_000 + i, then linked into the
            // next directory (whose rename follows).
            recs.push(rename(100 + i, b"t", 10_000 + i, 100 + i, b"f", 20_000 + i));
        }
        for i in 0..n - 1 {
            recs.push(NsRecord::Link {
                dir: 101 + i,
                name: b"l".to_vec(),
                ino: 10_000 + i,
                time: Timestamp::default(),
            });
        }
        recs.push(create(100, b"db", 5));
        let got = closure(&recs, &[5], &[]);
        assert_eq!(got.len(), recs.len(), "every rename and link in the chain of riders");
    }

    #[test]
    fn a_directorys_rename_is_a_barrier_for_the_records_around_it() {
        // A file renamed over s/f inside directory 50, then 50 renamed: the rename takes
        // every record before it (the review's tree-mismatch: /u1/d13/m20/s5/f11).
        let recs = [
            create(51, b"t", 52),
            rename(51, b"t", 52, 51, b"f", 53),
            create(7, b"x", 8),
            rename(1, b"d", 50, 2, b"d", 0),
            create(9, b"y", 10),
        ];
        assert_eq!(closure(&recs, &[50], &[50]), [0, 1, 2, 3]);
        // A later record in an unrelated directory takes the rename before it, and so
        // everything before that.
        assert_eq!(closure(&recs, &[10], &[50]), [0, 1, 2, 3, 4]);
        // Not a directory (not in the renamed set): a file's rename commutes.
        assert_eq!(closure(&recs, &[10], &[]), [4]);
        // Nothing after the last barrier is chosen: a record before it alone takes no barrier.
        assert_eq!(closure(&recs, &[8], &[50]), [2]);
    }
}
