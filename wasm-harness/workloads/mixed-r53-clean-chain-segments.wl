# Cleaning segments of the current chain: a nearly full device, then small fsyncs
# (data beside their nodes) alternating between new files written once (their inode and
# block stay valid) and overwrites of /d/a (freed copies), so that several warm node
# segments written since the checkpoint are partly valid; then writes that need room:
# foreground cleaning takes segments of the live chain as victims and its checkpoint ends
# the chain; crashes before, during and after. (review 53)
@seed 5310
@discard ignore
@device 1024 16
mkdir /d
create /d/a
create /d/c
sync
create /fill
fill /fill 16384 90 0
fill /fill 4096 91 64
shrink /fill 229376
sync
create /d/e0
write /d/e0 0 4096 1
fsync /d/e0
write /d/a 0 8192 2
fdatasync /d/a
create /d/e1
write /d/e1 0 4096 3
fsync /d/e1
write /d/a 8192 8192 4
fsync /d/a
create /d/e2
write /d/e2 0 4096 5
fsync /d/e2
write /d/a 16384 8192 6
fsync /d/a
create /d/e3
write /d/e3 0 4096 7
fsync /d/e3
write /d/a 24576 8192 8
fdatasync /d/a
create /d/e4
write /d/e4 0 4096 9
fsync /d/e4
write /d/a 0 8192 10
fsync /d/a
create /d/e5
write /d/e5 0 4096 11
fsync /d/e5
write /d/a 8192 8192 12
fsync /d/a
create /d/e6
write /d/e6 0 4096 13
fsync /d/e6
write /d/a 16384 8192 14
fdatasync /d/a
create /d/e7
write /d/e7 0 4096 15
fsync /d/e7
write /d/a 24576 8192 16
fsync /d/a
create /d/e8
write /d/e8 0 4096 17
fsync /d/e8
write /d/a 0 8192 18
fsync /d/a
create /d/e9
write /d/e9 0 4096 19
fsync /d/e9
write /d/a 8192 8192 20
fdatasync /d/a
create /d/e10
write /d/e10 0 4096 21
fsync /d/e10
write /d/a 16384 8192 22
fsync /d/a
create /d/e11
write /d/e11 0 4096 23
fsync /d/e11
write /d/a 24576 8192 24
fsync /d/a
create /d/e12
write /d/e12 0 4096 25
fsync /d/e12
write /d/a 0 8192 26
fdatasync /d/a
create /d/e13
write /d/e13 0 4096 27
fsync /d/e13
write /d/a 8192 8192 28
fsync /d/a
create /d/e14
write /d/e14 0 4096 29
fsync /d/e14
write /d/a 16384 8192 30
fsync /d/a
create /d/e15
write /d/e15 0 4096 31
fsync /d/e15
write /d/a 24576 8192 32
fdatasync /d/a
create /d/e16
write /d/e16 0 4096 33
fsync /d/e16
write /d/a 0 8192 34
fsync /d/a
create /d/e17
write /d/e17 0 4096 35
fsync /d/e17
write /d/a 8192 8192 36
fsync /d/a
create /d/e18
write /d/e18 0 4096 37
fsync /d/e18
write /d/a 16384 8192 38
fdatasync /d/a
create /d/e19
write /d/e19 0 4096 39
fsync /d/e19
write /d/a 24576 8192 40
fsync /d/a
create /d/e20
write /d/e20 0 4096 41
fsync /d/e20
write /d/a 0 8192 42
fsync /d/a
create /d/e21
write /d/e21 0 4096 43
fsync /d/e21
write /d/a 8192 8192 44
fdatasync /d/a
create /d/e22
write /d/e22 0 4096 45
fsync /d/e22
write /d/a 16384 8192 46
fsync /d/a
create /d/e23
write /d/e23 0 4096 47
fsync /d/e23
write /d/a 24576 8192 48
fsync /d/a
create /d/e24
write /d/e24 0 4096 49
fsync /d/e24
write /d/a 0 8192 50
fdatasync /d/a
create /d/e25
write /d/e25 0 4096 51
fsync /d/e25
write /d/a 8192 8192 52
fsync /d/a
create /d/e26
write /d/e26 0 4096 53
fsync /d/e26
write /d/a 16384 8192 54
fsync /d/a
create /d/e27
write /d/e27 0 4096 55
fsync /d/e27
write /d/a 24576 8192 56
fdatasync /d/a
write /d/c 0 65536 57
fsync /d/c
write /d/c 65536 65536 58
fsync /d/c
write /d/c 131072 65536 59
fsync /d/c
write /d/c 196608 65536 60
fsync /d/c
write /d/a 0 4096 61
fsync /d/a
