# Namespace records (@nsrec): SQLite's pattern. A journal is created, fsync'd and removed
# beside the database between atomic commits: the commit after the removal (a checkpoint
# without records, reason DirLostAName) is a batch after the unlink's record; the files of
# a directory renamed since the checkpoint too.
@seed 15
@nsrec
mkdir /a
create /a/db
write /a/db 0 8192 1
sync
create /a/db-journal
write /a/db-journal 0 512 2
fsync /a/db-journal
atomic_start /a/db
write /a/db 0 4096 3
atomic_commit /a/db
unlink /a/db-journal
atomic_start /a/db
write /a/db 4096 4096 4
atomic_commit /a/db
rename /a /b
create /b/db-journal
write /b/db-journal 0 512 5
fsync /b/db-journal
atomic_start /b/db
write /b/db 0 100 6
atomic_commit /b/db
unlink /b/db-journal
fsync /b
