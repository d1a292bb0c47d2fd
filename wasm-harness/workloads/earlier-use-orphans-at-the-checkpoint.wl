# An @earlier-life case of the crash review of the mount's version jump: orphans at the checkpoint, evicted by the mount before its checkpoint
@seed 5
@earlier-life
create /a
write /a 0 20000 1
create /b
write /b 0 9000 2
open /a
open /b
unlink /a
unlink /b
sync
create /c
write /c 0 5000 3
fsync /c
close /a
write /c 0 5000 4
fsync /c
