# Data beside its chain at every offset of a 16-block warm node segment: batches of
# 1..16 data blocks (one node: the inode) so that a batch exactly fills the segment,
# leaves one block to spare, or meets the end; records (new names) before some batches;
# overwrites of blocks that lie beside earlier batches. (review 53)
@seed 53
@device 2048 16
mkdir /d
create /d/a
create /d/b
create /d/c
sync
write /d/a 0 4096 1
fsync /d/a
write /d/b 12288 8192 2
fsync /d/b
write /d/c 4096 12288 3
fsync /d/c
write /d/a 16384 16384 4
fdatasync /d/a
write /d/b 8192 20480 5
fsync /d/b
create /d/n0_4
write /d/n0_4 0 8192 6
fsync /d/n0_4
write /d/c 0 24576 7
fsync /d/c
write /d/a 12288 28672 8
fsync /d/a
write /d/b 4096 32768 9
fdatasync /d/b
write /d/c 16384 36864 10
fsync /d/c
write /d/a 8192 40960 11
fsync /d/a
create /d/n0_9
write /d/n0_9 0 4096 12
fsync /d/n0_9
write /d/b 0 45056 13
fsync /d/b
write /d/c 12288 49152 14
fdatasync /d/c
write /d/a 4096 53248 15
fsync /d/a
write /d/b 16384 57344 16
fsync /d/b
write /d/c 8192 61440 17
fsync /d/c
create /d/n0_14
write /d/n0_14 0 12288 18
fsync /d/n0_14
write /d/a 0 65536 19
fdatasync /d/a
write /d/b 0 57344 20
fsync /d/b
write /d/c 12288 53248 21
fsync /d/c
write /d/a 4096 49152 22
fsync /d/a
write /d/b 16384 4096 23
fdatasync /d/b
write /d/c 8192 61440 24
fsync /d/c
create /d/n1_4
write /d/n1_4 0 8192 25
fsync /d/n1_4
write /d/a 0 8192 26
fsync /d/a
write /d/b 12288 45056 27
fsync /d/b
write /d/c 4096 12288 28
fdatasync /d/c
write /d/a 16384 40960 29
fsync /d/a
write /d/b 8192 16384 30
fsync /d/b
create /d/n1_9
write /d/n1_9 0 4096 31
fsync /d/n1_9
write /d/c 0 36864 32
fsync /d/c
write /d/a 12288 20480 33
fdatasync /d/a
write /d/b 4096 32768 34
fsync /d/b
write /d/c 16384 24576 35
fsync /d/c
write /d/a 8192 28672 36
fsync /d/a
create /d/n1_14
write /d/n1_14 0 12288 37
fsync /d/n1_14
