# Data beside its chain and I/O errors in recovery: every read of a recovery that rolls
# batches with data beside their nodes forward fails in turn (the walk, the batch CRC's
# reads of the data in the node segment, the summary of the checkpoint's open warm node
# segment the claims load); mount must fail with EIO and a later healthy mount recover
# every fsync. (review 53)
@seed 539
@recovery-eio each
@max-points 60
@device 2048 16
mkdir /d
create /d/a
create /d/b
sync
write /d/a 0 8192 1
fsync /d/a
create /d/c
write /d/c 0 4096 2
fsync /d/c
write /d/b 4096 12288 3
fdatasync /d/b
write /d/a 4096 4096 4
fsync /d/a
rename /d/c /d/b
write /d/a 0 4096 5
fsync /d/a
