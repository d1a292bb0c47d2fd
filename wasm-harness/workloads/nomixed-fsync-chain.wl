# The fsync batches of mixed-fsync-chain.wl on an image made with `mkfs -O nomixed` (no data
# beside its chain, issue 38): every batch in two logs — its data in the data log, its
# nodes in the warm node log — as images made before the feature, or with it turned off,
# keep working. Since data beside its chain became mkfs's default, only batches of more
# than 16 blocks took this path on the explorer's images; this workload (and one random
# workload in four, `@nomixed`) keeps it explored.
@nomixed
@seed 52
@device 2048 16
mkdir /d
create /d/a
create /d/b
create /d/c
sync
write /d/a 0 4096 1
fsync /d/a
write /d/b 0 12288 2
fsync /d/b
write /d/a 4096 4096 3
fdatasync /d/a
write /d/c 0 65536 4
fsync /d/c
write /d/c 0 69632 5
fsync /d/c
write /d/a 0 4096 6
fsync /d/a
punch /d/b 4096 4096
fsync /d/b
write /d/b 4096 4096 7
fsync /d/b
create /d/e
write /d/e 0 8192 8
fsync /d/e
rename /d/e /d/a
fsync /d
write /d/c 12288 12288 10
fsync /d/c
write /d/b 0 8192 21
fdatasync /d/b
write /d/c 24576 12288 11
fsync /d/c
write /d/b 0 8192 22
fdatasync /d/b
write /d/c 36864 12288 12
fsync /d/c
write /d/b 0 8192 20
fdatasync /d/b
write /d/c 49152 12288 13
fsync /d/c
write /d/b 0 8192 21
fdatasync /d/b
write /d/c 61440 12288 9
fsync /d/c
write /d/b 0 8192 22
fdatasync /d/b
write /d/c 8192 12288 10
fsync /d/c
write /d/b 0 8192 20
fdatasync /d/b
write /d/c 20480 12288 11
fsync /d/c
write /d/b 0 8192 21
fdatasync /d/b
write /d/c 32768 12288 12
fsync /d/c
write /d/b 0 8192 22
fdatasync /d/b
write /d/c 45056 12288 13
fsync /d/c
write /d/b 0 8192 20
fdatasync /d/b
write /d/c 57344 12288 9
fsync /d/c
write /d/b 0 8192 21
fdatasync /d/b
write /d/c 4096 12288 10
fsync /d/c
write /d/b 0 8192 22
fdatasync /d/b
write /d/c 16384 12288 11
fsync /d/c
write /d/b 0 8192 20
fdatasync /d/b
write /d/c 28672 12288 12
fsync /d/c
write /d/b 0 8192 21
fdatasync /d/b
write /d/c 40960 12288 13
fsync /d/c
write /d/b 0 8192 22
fdatasync /d/b
write /d/c 53248 12288 9
fsync /d/c
write /d/b 0 8192 20
fdatasync /d/b
write /d/c 0 12288 10
fsync /d/c
write /d/b 0 8192 21
fdatasync /d/b
write /d/c 12288 12288 11
fsync /d/c
write /d/b 0 8192 22
fdatasync /d/b
write /d/c 24576 12288 12
fsync /d/c
write /d/b 0 8192 20
fdatasync /d/b
write /d/c 36864 12288 13
fsync /d/c
write /d/b 0 8192 21
fdatasync /d/b
write /d/c 49152 12288 9
fsync /d/c
write /d/b 0 8192 22
fdatasync /d/b
write /d/c 61440 12288 10
fsync /d/c
write /d/b 0 8192 20
fdatasync /d/b
write /d/c 8192 12288 11
fsync /d/c
write /d/b 0 8192 21
fdatasync /d/b
write /d/c 20480 12288 12
fsync /d/c
write /d/b 0 8192 22
fdatasync /d/b
write /d/c 32768 12288 13
fsync /d/c
write /d/b 0 8192 20
fdatasync /d/b
write /d/c 45056 12288 9
fsync /d/c
write /d/b 0 8192 21
fdatasync /d/b
write /d/c 57344 12288 10
fsync /d/c
write /d/b 0 8192 22
fdatasync /d/b
write /d/c 4096 12288 11
fsync /d/c
write /d/b 0 8192 20
fdatasync /d/b
write /d/c 16384 12288 12
fsync /d/c
write /d/b 0 8192 21
fdatasync /d/b
write /d/c 28672 12288 13
fsync /d/c
write /d/b 0 8192 22
fdatasync /d/b
write /d/c 40960 12288 9
fsync /d/c
write /d/b 0 8192 20
fdatasync /d/b
write /d/a 0 4096 11
fsync /d/a
