# Review 52, crash-safety F1 (found by a reviewer with explore --seed 36/7/121 on this case):
# nsrec-crash-during-recovery-at-the-gap.wl shifted by 12 padding fsyncs of /p so that the
# rider batch's xattr node (the block the crash loses) is the first block of a fresh warm-node
# segment (free at the checkpoint, no walked node in it, so not pinned): the recovery mount opens
# that same segment (round-robin from the same cursor) and writes its first node where the lost
# block was; a crash during recovery let the next walk cross the gap: rename applied, xattr lost.
# Fixed: recovery pins the segment where the walk ended (core/tests/nsrec_group_gaps.rs).
@seed 7
@completion random3
@nsrec
mkdir /a
mkdir /a/c
create /p
sync
chmod /p 600
fsync /p
chmod /p 640
fsync /p
chmod /p 600
fsync /p
chmod /p 640
fsync /p
chmod /p 600
fsync /p
chmod /p 640
fsync /p
chmod /p 600
fsync /p
chmod /p 640
fsync /p
chmod /p 600
fsync /p
chmod /p 640
fsync /p
chmod /p 600
fsync /p
chmod /p 640
fsync /p
create /a/f
write /a/f 0 100 1
fsync /a
setxattr /a/f user.x v25
rename /a/f /a/c/g
fsync /
