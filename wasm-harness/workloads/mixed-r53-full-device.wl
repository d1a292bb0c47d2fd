# Data beside its chain on a nearly full device: the device filled, a little freed, then
# small fsyncs whose data goes beside its nodes while the warm node log is short of
# segments and cleaning must move node segments' data; overwrites of those blocks.
# (review 53)
@seed 534
@discard ignore
@device min+40 16
mkdir /d
create /d/a
create /d/b
write /d/a 0 8192 1
write /d/b 0 4096 2
sync
create /fill
fill /fill 65536 3 0
fill /fill 4096 4 64
truncate /fill 65536
write /d/a 0 4096 5
fsync /d/a
write /d/b 4096 12288 6
fsync /d/b
write /d/a 8192 8192 7
fsync /d/a
write /d/a 0 4096 8
fdatasync /d/a
write /d/b 0 16384 9
fsync /d/b
unlink /fill
write /d/a 0 12288 10
fsync /d/a
write /d/b 0 4096 11
fsync /d/b
write /d/a 4096 4096 12
fsync /d/a
