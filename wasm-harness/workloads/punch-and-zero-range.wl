# fallocate PUNCH_HOLE and ZERO_RANGE (issue 16), crash-explored like writes: a file over
# the inode's own addresses and a direct node, synced; holes punched across the boundary,
# fsync'd (a punch makes fsync fall back to a checkpoint), then more punches and zero
# ranges (one growing the file) with fdatasync, a write into a hole, and a punch left
# un-fsync'd at the end (a crash shows the file before or after it, never a mix).
@seed 16
mkdir /d
create /d/f
write /d/f 0 4000000 1
create /d/g
write /d/g 0 9000 2
sync
punch /d/f 3735552 300000
fsync /d/f
zero /d/f 5 10 keep
write /d/g 100 100 3
fsync /d/g
punch /d/f 4096 8192
fdatasync /d/f
zero /d/g 8000 20000
fsync /d/g
write /d/f 3800000 5000 4
fsync /d/f
punch /d/f 0 4000000
