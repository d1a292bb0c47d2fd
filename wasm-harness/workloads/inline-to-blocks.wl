# Data growing from inline (< 3656 bytes) into blocks, then shrinking back, across syncs.
@seed 2
create /f
write /f 0 100 1
sync
write /f 3000 2000 2
sync
truncate /f 10
write /f 8192 4096 3
sync
truncate /f 0
sync
