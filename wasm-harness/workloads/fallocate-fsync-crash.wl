# fallocate's reservations kept on disk (issue 38, FEATURE_INCOMPAT_PREALLOC). A
# reservation made since the checkpoint is made durable by a checkpoint (fsync reason
# Reserved), never by a batch: here a file is truncated and the capacity it freed is
# reserved again and fsync'd; roll-forward would replay a batch onto the checkpoint's SIT,
# which still holds the truncated blocks, and could not fit it. Then reservations in the
# inode's own addresses and in direct nodes, fsync'd, spent by writes (batches), released
# by a truncation, punched. Every crash state: fsck (which counts the tree's NEW_ADDR
# pointers against the checkpoint) and the fsync'd contents and sizes.
# mutant-prealloc-by-batch (the batch instead of the checkpoint) loses the fsync'd
# truncation: the file comes back with its old blocks.
@seed 23
@device 4096 16
mkdir /d
create /d/big
create /d/f
create /d/g
write /d/big 0 8000000 2
sync
truncate /d/big 0
falloc /d/big 0 9000000 keep
fsync /d/big
write /d/f 0 8192 3
falloc /d/f 16384 200000 keep
fsync /d/f
falloc /d/g 0 400000
fsync /d/g
write /d/f 16384 8192 4
fsync /d/f
truncate /d/g 300000
fdatasync /d/g
punch /d/f 100000 50000
fsync /d/f
write /d/g 40960 4096 5
fsync /d/g
