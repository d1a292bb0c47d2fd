# An @earlier-life case of the crash review of the mount's version jump: earlier use of the image that grew online; this use grows too
@seed 39
@device 4096 16 grow-from 1024
@earlier-life
mkdir /d
create /d/synced
write /d/synced 0 40000 1
sync
create /fsynced
write /fsynced 0 9000 2
fsync /fsynced
grow 2048
create /dirty
write /dirty 0 8192 4
fsync /dirty
grow
create /big
write /big 0 3000000 6
fsync /big
write /fsynced 0 9000 7
fdatasync /fsynced
create /late
write /late 0 5000 8
fsync /late
