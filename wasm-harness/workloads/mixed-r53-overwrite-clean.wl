# Data beside its chain under space pressure: small batches overwritten again and again (old
# copies freed in node segments), files truncated and unlinked, on a small device so that
# checkpoints and SSR reclaim space between fsyncs (this one never cleans: see
# mixed-r53-clean-node-segments.wl). (review 53)
@seed 531
@device min+48 16
mkdir /d
create /d/f0
create /d/f1
create /d/f2
create /d/f3
create /d/f4
create /d/f5
sync
punch /d/f4 4096 4096
fsync /d/f4
write /d/f3 45056 32768 1
fdatasync /d/f3
truncate /d/f2 301
fsync /d/f2
sync
truncate /d/f2 16843
fsync /d/f2
write /d/f1 28672 16384 2
fsync /d/f1
write /d/f1 32768 24576 3
fdatasync /d/f1
write /d/f2 0 28672 4
fsync /d/f2
write /d/f2 24576 28672 5
fsync /d/f2
truncate /d/f1 8616
fsync /d/f1
write /d/f3 12288 32768 6
fsync /d/f3
sync
punch /d/f1 0 4096
fsync /d/f1
unlink /d/f0
create /d/f0
write /d/f0 0 8192 7
fsync /d/f0
punch /d/f0 0 4096
fsync /d/f0
sync
write /d/f4 0 16384 8
fsync /d/f4
write /d/f3 12288 12288 9
fdatasync /d/f3
write /d/f2 28672 16384 10
fsync /d/f2
write /d/f4 8192 24576 11
fsync /d/f4
write /d/f1 45056 8192 12
fdatasync /d/f1
write /d/f3 4096 28672 13
fsync /d/f3
sync
write /d/f3 36864 32768 14
fsync /d/f3
write /d/f2 28672 32768 15
fsync /d/f2
write /d/f1 32768 16384 16
fsync /d/f1
unlink /d/f1
create /d/f1
write /d/f1 0 8192 17
fsync /d/f1
sync
truncate /d/f2 4190
fsync /d/f2
punch /d/f1 0 4096
fsync /d/f1
write /d/f5 20480 28672 18
fsync /d/f5
truncate /d/f1 20256
fsync /d/f1
write /d/f5 8192 12288 19
fdatasync /d/f5
write /d/f5 40960 4096 20
fdatasync /d/f5
write /d/f3 40960 4096 21
fsync /d/f3
write /d/f4 40960 12288 22
fdatasync /d/f4
write /d/f5 36864 16384 23
fsync /d/f5
write /d/f0 32768 28672 24
fsync /d/f0
write /d/f4 0 24576 25
fsync /d/f4
write /d/f2 45056 28672 26
fdatasync /d/f2
write /d/f4 0 4096 27
fdatasync /d/f4
write /d/f3 40960 4096 28
fsync /d/f3
write /d/f5 32768 24576 29
fsync /d/f5
unlink /d/f3
create /d/f3
write /d/f3 0 8192 30
fsync /d/f3
unlink /d/f5
create /d/f5
write /d/f5 0 8192 31
fsync /d/f5
sync
write /d/f3 12288 28672 32
fdatasync /d/f3
write /d/f5 24576 4096 33
fsync /d/f5
write /d/f2 16384 28672 34
fsync /d/f2
write /d/f3 12288 32768 35
fdatasync /d/f3
unlink /d/f3
create /d/f3
write /d/f3 0 8192 36
fsync /d/f3
truncate /d/f4 26986
fsync /d/f4
write /d/f1 28672 20480 37
fsync /d/f1
truncate /d/f5 32173
fsync /d/f5
write /d/f1 8192 32768 38
fdatasync /d/f1
write /d/f0 12288 32768 39
fsync /d/f0
write /d/f1 4096 24576 40
fsync /d/f1
write /d/f1 24576 20480 41
fsync /d/f1
write /d/f0 4096 4096 42
fdatasync /d/f0
write /d/f2 16384 28672 43
fsync /d/f2
write /d/f4 40960 16384 44
fsync /d/f4
truncate /d/f0 26851
fsync /d/f0
write /d/f1 8192 20480 45
fsync /d/f1
write /d/f1 4096 8192 46
fsync /d/f1
write /d/f2 0 4096 47
fsync /d/f2
write /d/f2 24576 12288 48
fsync /d/f2
sync
write /d/f3 24576 32768 49
fdatasync /d/f3
sync
write /d/f4 12288 16384 50
fsync /d/f4
