# Online grow (issue 39): a filesystem formatted at 1,024 blocks with room to grow to the
# 4,096-block device (`mkfs --max-size`, the image extended since) grows while mounted,
# between fsyncs: files synced, fsync'd and only written before the grow, a grow in two
# steps (to 2,048 blocks, then to the whole device), then writes into the new room (more
# than the old size held) with fsyncs and a sync. Every crash state of each grow must
# mount at the old size or the new one with every durable file; an fsync after a grow
# is rolled forward on the new size.
@seed 39
@device 4096 16 grow-from 1024
mkdir /d
create /d/synced
write /d/synced 0 40000 1
sync
create /fsynced
write /fsynced 0 9000 2
fsync /fsynced
create /dirty
write /dirty 0 5000 3
grow 2048
write /dirty 4096 8192 4
fsync /dirty
create /d/after
write /d/after 0 20000 5
fsync /d/after
grow
create /big
write /big 0 3000000 6
fsync /big
write /fsynced 0 9000 7
fdatasync /fsynced
rename /d/after /moved
sync
