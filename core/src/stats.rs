//! The filesystem's counters ([`Stats`]): one list, from which the struct, its field names
//! and the name/value pairs every consumer prints (the FUSE driver's stats ioctl, the
//! crash explorer's guest) are all generated, so that no consumer can miss a counter.

/// Declares `Stats` with its fields (each `pub u64`, doc comments kept) and
/// [`Stats::NAMES`] / [`Stats::counters`] in field order.
macro_rules! stats {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// Counters of what the filesystem did, for benchmarks, tests and the stats ioctl.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct Stats {
            $($(#[$doc])* pub $name: u64,)*
        }

        /// How many counters [`Stats`] has.
        pub const STAT_COUNT: usize = [$(stringify!($name),)*].len();

        impl Stats {
            /// Every counter's name, in field order.
            pub const NAMES: [&'static str; STAT_COUNT] = [$(stringify!($name),)*];

            /// Every counter as (name, value), in field order.
            pub fn counters(&self) -> [(&'static str, u64); STAT_COUNT] {
                [$((stringify!($name), self.$name),)*]
            }
        }
    };
}

stats! {
    checkpoints,
    data_blocks_written,
    node_blocks_written,
    meta_blocks_written,
    flushes,
    device_reads,
    fsyncs,
    fsync_checkpoint_fallbacks,
    fdatasync_noops,
    atomic_commits,
    atomic_aborts,
    recovered_batches,
    recovered_nodes_walked,
    dirty_bound_checkpoints,
    /// Checkpoints written because the records kept since the last checkpoint (removed
    /// names, renamed inodes, freed node ids, ...) passed their memory bound
    /// (`fs::SINCE_CP_BYTES_MAX`).
    since_cp_bound_checkpoints,
    discards,
    gc_segments,
    gc_blocks_moved,
    /// Data blocks written into holes of used segments (slack space recycling).
    ssr_blocks,
    discard_errors,
    /// Blocks FITRIM discarded (`Filesystem::trim_step`): free segments in the range asked,
    /// not discarded since they became free.
    trimmed_blocks,
    /// Data blocks read from the device that failed their checksum (each read gets EIO).
    data_checksum_errors,
    /// Data blocks that failed their checksum when cleaning moved them (moved with their
    /// old checksum, so they stay detected).
    gc_bad_blocks_moved,
    /// Inodes roll-forward recovered but could not name, because their directory's block
    /// failed its checksum: kept unreachable for `fsck --repair` to link into /lost+found.
    recovery_unlinked_inodes,
    // ---- rare events: what a checker of a full device must see happen (issue: the crash
    // explorer counts each and its CI sample must reach every one) ----
    /// Checkpoints written from inside an operation that is not sync/fsync/unmount: to make
    /// room (ensure_space), to free node ids, or at the dirty-memory bound.
    op_checkpoints,
    /// Operations refused with ENOSPC for lack of blocks or node ids (nothing changed).
    enospc_returned,
    /// fsyncs served by a checkpoint because the roll-forward of the fsync chain would no
    /// longer have had the room it was promised (the recovery reserve).
    recovery_reserve_fallbacks,
    /// Cleaning rounds run while serving an fsync or an atomic commit.
    fsync_gc_rounds,
    /// Roll-forward recoveries that applied batches on a nearly full device (free segments
    /// fewer than twice the cleaning reserve plus the logs when recovery started).
    recovery_full_device,
    /// Atomic commits that returned an error (the session stays open and abortable).
    atomic_commit_failures,
    /// Checkpoints written because node ids ran short while freed ids awaited a checkpoint.
    nid_shortage_checkpoints,
    /// Operations that failed after their first change (an I/O or corruption error reading
    /// what the change needed): the filesystem shut down so that the half-made change can
    /// never become durable (invariant 7). Any other error counted here is a bug.
    errors_after_change,
    /// Atomic-write sessions whose staged blocks passed the in-memory budget and moved to
    /// a session inode on the device (`atomic.rs`).
    atomic_spills,
    /// Removals (unlink, rmdir, truncation to a smaller size, hole punch, removing an
    /// xattr) on a full device: given room an ordinary change would not have had (the
    /// cleaner's reserve, down to `REMOVAL_FLOOR_SEGMENTS` free segments).
    full_device_removals,
    // ---- why fsyncs and atomic commits were served by a checkpoint (each also counted in
    // `fsync_checkpoint_fallbacks`; `since_cp::CheckpointReason`) ----
    /// A directory was fsync'd.
    fsync_cp_directory,
    /// The file was renamed, linked, unlinked from one of several names or had a hole
    /// punched since the checkpoint.
    fsync_cp_relinked,
    /// The file is unlinked and still open.
    fsync_cp_orphan,
    /// A directory above the file was renamed, or its path is not known for sure.
    fsync_cp_path_changed,
    /// A new file whose name a dentry mark cannot restore.
    fsync_cp_name_not_restorable,
    /// An atomic commit in a directory that lost a name since the checkpoint.
    fsync_cp_dir_lost_a_name,
    /// The chain's roll-forward would have outgrown its reserve.
    fsync_cp_recovery_room,
    /// An atomic commit whose staged blocks had spilled to a session inode.
    fsync_cp_spilled,
    /// The file reserved holes on disk since the checkpoint (fallocate).
    fsync_cp_reserved,
    /// Namespace records written to the chain (`FEATURE_INCOMPAT_NS_RECORDS`).
    ns_records_written,
    /// Record nodes written to the chain (each carries one or more records).
    ns_record_nodes_written,
    /// Records not yet in the chain that an fsync or atomic commit writing records left for
    /// later, summed over those fsyncs: they touch nothing it depends on (another
    /// directory's changes; `nschain::record_closure`).
    ns_records_left_unwritten,
    /// fsyncs (and atomic commits) that checkpointed before namespace records, for a name
    /// they needed durable, and were served by records in the chain instead.
    fsync_by_records,
    /// Batches of other files an fsync or atomic commit wrote after its own on an image with
    /// namespace records (`fsync::riders`: a directory fsync's changed files, the files an
    /// fsync's records name).
    fsync_riders,
    /// Namespace records roll-forward applied at this mount.
    recovered_records,
    /// Namespace records roll-forward could not apply (damage: a name taken, a source
    /// missing); the records after it were not applied either.
    recovery_records_rejected,
    /// Data blocks fsync batches wrote beside their nodes in the warm node log
    /// (`FEATURE_INCOMPAT_MIXED_NODE`: one device range per batch).
    data_beside_blocks,
    /// Data blocks cleaning moved out of node segments (written there beside a batch's
    /// nodes) into the cold data log.
    gc_data_from_node_segments,
    /// Checkpoints an operation wrote because it left namespace records that no fsync could
    /// write without one (a long symlink target; a file renamed over a name and punched,
    /// reserved, or a directory's attributes changed): the operation pays, not the next
    /// fsync that writes records (review 52, F1).
    records_unexpressible_checkpoints,
    /// Inline files converted to ordinary ones (their bytes moved to a block: a write or a
    /// size past the inline limit, fallocate, a zero range past the limit, a copy into
    /// them, an atomic commit; a punch, and a zero range within the limit, work in the
    /// inode).
    inline_conversions,
    /// Blocks a cleaning round moved whose old copy was still valid after its checkpoint:
    /// 0 on every consistent image (checked by the cleaning tests and the explorer); on a
    /// damaged one, a leak that fsck reports (`gc::check_moved_out`).
    gc_blocks_left_valid,
}

#[cfg(test)]
mod tests {
    use super::Stats;

    #[test]
    fn names_and_counters_follow_the_fields() {
        let s = Stats { checkpoints: 3, gc_blocks_left_valid: 7, ..Stats::default() };
        let c = s.counters();
        assert_eq!(c.len(), Stats::NAMES.len());
        assert_eq!(c[0], ("checkpoints", 3));
        assert_eq!(*c.last().unwrap(), ("gc_blocks_left_valid", 7));
        assert!(c.iter().zip(Stats::NAMES).all(|((n, _), m)| n == &m));
    }
}
