# A reservation made durable (fallocate, fsync: a checkpoint, reason Reserved) then carried
# by fsync batches that write elsewhere in the same file (issue 38): the batch's inode and
# direct node hold the NEW_ADDR pointers of the holes still reserved, and roll-forward must
# keep them and their count. Every crash state: fsck, the fsync'd contents, and the
# reservation rule (st_blocks of an fsync'd file keeps the blocks reserved when its fsync
# returned, less what was spent or released since). KEEP_SIZE past EOF and mode 0 inside
# the size, in the inode's own addresses and in a direct node.
# mutant-recovery-drops-reservations (roll-forward takes NEW_ADDR for a hole): consistent
# image, same contents, the reservation gone: only the reservation rule sees it.
@seed 29
@device 4096 16
mkdir /d
create /d/f
create /d/g
write /d/f 0 8192 1
falloc /d/f 8192 120000 keep
falloc /d/g 0 6000000
fsync /d/f
fsync /d/g
write /d/f 0 4096 2
fsync /d/f
write /d/g 0 4096 3
fdatasync /d/g
write /d/f 8192 4096 4
fsync /d/f
write /d/g 5000000 8192 5
fsync /d/g
truncate /d/f 40000
fsync /d/f
