# Inline data (FEATURE_INCOMPAT_INLINE, issue 38): files of at most 3,656 bytes keep them
# in the inode, so their fsync batch is the inode alone (no data block, batch of 0
# blocks) and roll-forward must install the inode's bytes. Small files created and
# fsync'd, rewritten in place (fdatasync with the size unchanged: the bytes are data),
# shrunk and extended (the dropped bytes must read as zeros), converted to blocks by a
# write past the limit, by a size past it, by fallocate, by a hole punch and by an atomic
# session, each fsync'd; crashes everywhere. The oracle's fsync rule checks every fsync'd
# content; mutant-recovery-drops-inline-data (roll-forward installs the inode's header
# without its bytes) loses them.
@seed 41
mkdir /d
create /d/a
create /d/b
create /d/c
write /d/a 0 3000 1
sync
write /d/a 0 1200 2
fsync /d/a
write /d/b 0 700 3
fsync /d/b
write /d/a 100 50 4
fdatasync /d/a
truncate /d/b 10
truncate /d/b 2000
fsync /d/b
write /d/c 0 3656 5
fsync /d/c
write /d/c 3656 1 6
fsync /d/c
create /d/e
write /d/e 0 900 7
fsync /d/e
truncate /d/e 100000
fsync /d/e
create /d/f
write /d/f 0 500 8
fsync /d/f
falloc /d/f 0 65536 keep
fsync /d/f
create /d/g
write /d/g 0 2500 9
fsync /d/g
punch /d/g 100 200
fsync /d/g
create /d/h
write /d/h 0 1500 10
sync
atomic_start /d/h
write /d/h 0 100 11
atomic_commit /d/h
write /d/a 3000 20000 12
fsync /d/a
