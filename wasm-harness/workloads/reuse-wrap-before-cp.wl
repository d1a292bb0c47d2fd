# mutant-reuse-before-cp: segments freed since the last checkpoint (by the unlink) must
# not be reused before the checkpoint that frees them is durable. /a takes the first
# segments, /b most of the rest, so the round-robin cursor wraps onto /a's freed
# segments during the write of /c; a crash before the last sync must show /a intact.
@seed 8
@completion random2
create /a
write /a 0 1048576 1
create /b
write /b 0 4194304 2
sync
unlink /a
create /c
write /c 0 1048576 3
sync
