# fallocate's reservations kept on disk (issue 38, FEATURE_INCOMPAT_PREALLOC): an fsync
# after a fallocate writes the NEW_ADDR pointers in its batch, and roll-forward adds them
# to the checkpoint's count of reserved blocks (fsck compares it with the tree, in every
# crash state). Reservations in the inode's own addresses and in direct nodes, a write
# that spends part of one, a truncation that releases part, a punch (which checkpoints).
# mutant-prealloc-lost-on-recovery (the count not moved by roll-forward) fails fsck.
@seed 23
@device 4096 16
mkdir /d
create /d/f
create /d/g
sync
write /d/f 0 8192 3
falloc /d/f 16384 200000 keep
fsync /d/f
falloc /d/g 0 4000000
fsync /d/g
write /d/f 16384 8192 4
fsync /d/f
truncate /d/g 3000000
fdatasync /d/g
punch /d/f 100000 50000
fsync /d/f
write /d/g 40960 4096 5
fsync /d/g
