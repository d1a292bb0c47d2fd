# Cleaning node segments that hold data beside its chain, then crashes: 40 small files each
# fsync'd (inode + 2 data blocks beside it), chmod'ed and synced (the inodes move on, so
# the node segments hold mostly data), half overwritten and synced (holes in node
# segments, which SSR never fills), then a filler to ENOSPC so that foreground cleaning
# must take node segments as victims (their data to the cold data log) while more small
# fsyncs append beside their chains; overwrites of moved blocks; crashes everywhere.
# (review 53)
@seed 535
@discard ignore
@device 1024 16
mkdir /d
create /d/f0
create /d/f1
create /d/f2
create /d/f3
create /d/f4
create /d/f5
create /d/f6
create /d/f7
create /d/f8
create /d/f9
create /d/f10
create /d/f11
create /d/f12
create /d/f13
create /d/f14
create /d/f15
create /d/f16
create /d/f17
create /d/f18
create /d/f19
create /d/f20
create /d/f21
create /d/f22
create /d/f23
create /d/f24
create /d/f25
create /d/f26
create /d/f27
create /d/f28
create /d/f29
create /d/f30
create /d/f31
create /d/f32
create /d/f33
create /d/f34
create /d/f35
create /d/f36
create /d/f37
create /d/f38
create /d/f39
sync
write /d/f0 0 8192 1
fsync /d/f0
write /d/f1 0 8192 2
fsync /d/f1
write /d/f2 0 8192 3
fsync /d/f2
write /d/f3 0 8192 4
fsync /d/f3
write /d/f4 0 8192 5
fsync /d/f4
write /d/f5 0 8192 6
fsync /d/f5
write /d/f6 0 8192 7
fsync /d/f6
write /d/f7 0 8192 8
fsync /d/f7
write /d/f8 0 8192 9
fsync /d/f8
write /d/f9 0 8192 10
fsync /d/f9
write /d/f10 0 8192 11
fsync /d/f10
write /d/f11 0 8192 12
fsync /d/f11
write /d/f12 0 8192 13
fsync /d/f12
write /d/f13 0 8192 14
fsync /d/f13
write /d/f14 0 8192 15
fsync /d/f14
write /d/f15 0 8192 16
fsync /d/f15
write /d/f16 0 8192 17
fsync /d/f16
write /d/f17 0 8192 18
fsync /d/f17
write /d/f18 0 8192 19
fsync /d/f18
write /d/f19 0 8192 20
fsync /d/f19
write /d/f20 0 8192 21
fsync /d/f20
write /d/f21 0 8192 22
fsync /d/f21
write /d/f22 0 8192 23
fsync /d/f22
write /d/f23 0 8192 24
fsync /d/f23
write /d/f24 0 8192 25
fsync /d/f24
write /d/f25 0 8192 26
fsync /d/f25
write /d/f26 0 8192 27
fsync /d/f26
write /d/f27 0 8192 28
fsync /d/f27
write /d/f28 0 8192 29
fsync /d/f28
write /d/f29 0 8192 30
fsync /d/f29
write /d/f30 0 8192 31
fsync /d/f30
write /d/f31 0 8192 32
fsync /d/f31
write /d/f32 0 8192 33
fsync /d/f32
write /d/f33 0 8192 34
fsync /d/f33
write /d/f34 0 8192 35
fsync /d/f34
write /d/f35 0 8192 36
fsync /d/f35
write /d/f36 0 8192 37
fsync /d/f36
write /d/f37 0 8192 38
fsync /d/f37
write /d/f38 0 8192 39
fsync /d/f38
write /d/f39 0 8192 40
fsync /d/f39
chmod /d/f0 600
chmod /d/f1 600
chmod /d/f2 600
chmod /d/f3 600
chmod /d/f4 600
chmod /d/f5 600
chmod /d/f6 600
chmod /d/f7 600
chmod /d/f8 600
chmod /d/f9 600
chmod /d/f10 600
chmod /d/f11 600
chmod /d/f12 600
chmod /d/f13 600
chmod /d/f14 600
chmod /d/f15 600
chmod /d/f16 600
chmod /d/f17 600
chmod /d/f18 600
chmod /d/f19 600
chmod /d/f20 600
chmod /d/f21 600
chmod /d/f22 600
chmod /d/f23 600
chmod /d/f24 600
chmod /d/f25 600
chmod /d/f26 600
chmod /d/f27 600
chmod /d/f28 600
chmod /d/f29 600
chmod /d/f30 600
chmod /d/f31 600
chmod /d/f32 600
chmod /d/f33 600
chmod /d/f34 600
chmod /d/f35 600
chmod /d/f36 600
chmod /d/f37 600
chmod /d/f38 600
chmod /d/f39 600
sync
write /d/f0 0 8192 100
write /d/f2 0 8192 102
write /d/f4 0 8192 104
write /d/f6 0 8192 106
write /d/f8 0 8192 108
write /d/f10 0 8192 110
write /d/f12 0 8192 112
write /d/f14 0 8192 114
write /d/f16 0 8192 116
write /d/f18 0 8192 118
write /d/f20 0 8192 120
write /d/f22 0 8192 122
write /d/f24 0 8192 124
write /d/f26 0 8192 126
write /d/f28 0 8192 128
write /d/f30 0 8192 130
write /d/f32 0 8192 132
write /d/f34 0 8192 134
write /d/f36 0 8192 136
write /d/f38 0 8192 138
sync
create /fill
fill /fill 16384 200 0
fill /fill 4096 201 64
write /d/f1 0 4096 301
fsync /d/f1
write /d/f5 0 4096 305
fsync /d/f5
write /d/f9 0 4096 309
fsync /d/f9
write /d/f13 0 4096 313
fsync /d/f13
write /d/f17 0 4096 317
fsync /d/f17
write /d/f21 0 4096 321
fsync /d/f21
write /d/f25 0 4096 325
fsync /d/f25
write /d/f29 0 4096 329
fsync /d/f29
write /d/f33 0 4096 333
fsync /d/f33
write /d/f37 0 4096 337
fsync /d/f37
truncate /fill 409600
write /d/f3 4096 4096 403
fdatasync /d/f3
write /d/f7 4096 4096 407
fdatasync /d/f7
write /d/f11 4096 4096 411
fdatasync /d/f11
write /d/f15 4096 4096 415
fdatasync /d/f15
write /d/f19 4096 4096 419
fdatasync /d/f19
write /d/f23 4096 4096 423
fdatasync /d/f23
write /d/f27 4096 4096 427
fdatasync /d/f27
write /d/f31 4096 4096 431
fdatasync /d/f31
write /d/f35 4096 4096 435
fdatasync /d/f35
write /d/f39 4096 4096 439
fdatasync /d/f39
sync
write /d/f0 0 8192 500
fsync /d/f0
write /d/f8 0 8192 508
fsync /d/f8
write /d/f16 0 8192 516
fsync /d/f16
write /d/f24 0 8192 524
fsync /d/f24
write /d/f32 0 8192 532
fsync /d/f32
