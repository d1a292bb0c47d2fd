# Issue 35, finding 7: a session that spilled to its copy-on-write inode, written to the
# device by a sync, is aborted: its blocks are freed, the file shows none of them, and a
# second session on the same file commits from memory with one fsync batch.
@seed 39
@max-points 200
mkdir /a
create /a/db
write /a/db 0 9000 1
sync
atomic_start /a/db
write /a/db 0 4096 2
write /a/db 20480 1048576 3
sync
atomic_abort /a/db
fsync /a/db
atomic_start /a/db
write /a/db 4096 4096 4
atomic_commit /a/db
sync
