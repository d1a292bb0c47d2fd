# Data beside its chain with the other chain writers: small atomic commits (SQLite's
# ioctls: the batch's data beside its inode), a file written and renamed over another name
# without fsync (a rider of the next fsync that writes the record: its batch beside too),
# blocks written into holes fallocate reserved before the checkpoint, an inline file grown
# into blocks, and a directory fsync writing every changed file's batch. (review 53)
@seed 533
@device 2048 16
mkdir /d
create /d/db
create /d/j
create /d/r
create /d/i
write /d/db 0 16384 1
write /d/i 0 100 2
falloc /d/r 0 65536 keep
sync
atomic_start /d/db
write /d/db 4096 8192 3
atomic_commit /d/db
atomic_start /d/db
write /d/db 0 4096 4
write /d/db 16384 4096 5
atomic_commit /d/db
write /d/r 8192 8192 6
fsync /d/r
write /d/i 100 5000 7
fsync /d/i
create /d/tmp
write /d/tmp 0 12288 8
rename /d/tmp /d/j
write /d/db 0 4096 9
fsync /d/db
atomic_start /d/db
write /d/db 8192 4096 10
atomic_commit /d/db
write /d/r 0 4096 11
write /d/i 0 4096 12
create /d/x
write /d/x 0 4096 13
fsync /d
write /d/r 61440 4096 14
fdatasync /d/r
truncate /d/i 50
fsync /d/i
atomic_start /d/db
write /d/db 0 65536 15
atomic_commit /d/db
write /d/db 4096 4096 16
fsync /d/db
