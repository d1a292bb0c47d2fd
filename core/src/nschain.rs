//! Namespace records in the chain (`FEATURE_INCOMPAT_NS_RECORDS`; DESIGN.md, *Namespace
//! records in the chain*): writing the records kept since the checkpoint (`since_cp`) as
//! record nodes (`nsrec`) in the warm node log before the fsync batch that needs them, and
//! replaying them at roll-forward through namei's own operations.
//!
//! Invariants:
//! - every fsync batch, and every fsync that needs a name durable, is preceded in the chain
//!   by every record made before it (`write_pending_records` runs first), so a prefix of
//!   the chain in order is a state the running system had;
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

    /// What writing the records not yet in the chain takes: record nodes, and the blocks
    /// their replay rewrites (for the recovery reserve). (0, 0) when records are not written.
    pub(crate) fn unwritten_record_cost(&self) -> (u64, u64) {
        if !self.records_in_chain() {
            return (0, 0);
        }
        let (recs, _) = self.since_cp.ns_unwritten();
        let (mut nodes, mut used) = (0u64, nsrec::RECORD_NODE_BYTES_MAX);
        // The packing `nsrec::pack` does: a record that does not fit opens a node.
        for r in recs {
            let len = r.encoded_len();
            if used + len > nsrec::RECORD_NODE_BYTES_MAX {
                nodes += 1;
                used = 0;
            }
            used += len;
        }
        (nodes, recs.len() as u64 * RECORD_REPLAY_BLOCKS)
    }

    /// Writes every record not yet in the chain as record nodes in the warm node log (a
    /// failure is a failed write: the caller shuts down).
    /// `own`: the fsync's own batch follows the records (its group counts it, with the
    /// riders in `group_riders` that still have something to write).
    pub(crate) fn write_pending_records(&mut self, own: bool) -> Result<()> {
        if !self.records_in_chain() {
            return Ok(());
        }
        let (recs, first) = self.since_cp.ns_unwritten();
        let recs: Vec<NsRecord> = recs.to_vec();
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
            self.since_cp.ns_records_written(n, n as u64 * RECORD_REPLAY_BLOCKS);
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
