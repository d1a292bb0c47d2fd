# mutant-reuse-before-cp: segments freed since the last checkpoint (by unlink /a) must
# not be reused before the checkpoint that frees them is durable. /a takes the first data
# segments; /b is written and removed (synced) so the round-robin cursor sits far along;
# /c then wraps the cursor onto /a's freed segments during the final sync's write-back.
# A crash before that sync's checkpoint is durable must show /a intact.
@seed 8
@completion random2
create /a
write /a 0 524288 1
sync
create /b
write /b 0 4718592 2
sync
unlink /b
sync
unlink /a
create /c
write /c 0 2097152 3
sync
