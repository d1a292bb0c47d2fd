# Issue 35, finding 7: a transaction larger than the in-memory staging budget (an eighth of
# the capacity: about 190 blocks on the explorer's 8 MiB device) spills to a hidden
# copy-on-write inode, an orphan; the sync during the session writes its blocks to the
# device as that inode's. A crash frees them at mount (the file as before the session); the
# commit re-points them to the file and, because the orphan still owns them in the last
# checkpoint, makes itself durable with a checkpoint: all of the transaction or none of it
# (invariant 5).
@seed 38
@max-points 200
mkdir /a
create /a/db
write /a/db 0 16384 1
create /a/other
sync
atomic_start /a/db
write /a/db 0 4096 2
write /a/db 8192 1048576 3
sync
write /a/db 4096 8192 4
write /a/other 0 100 5
fsync /a/other
atomic_commit /a/db
write /a/db 0 100 6
fsync /a/db
