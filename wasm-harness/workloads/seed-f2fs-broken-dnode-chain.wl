# Scenario "broken dnode chain" (docs/INVARIANTS.md; f2fs discussion of the wait before the fsync flush). The device completes the
# fsync's writes in reverse order and only at a wait; a power loss right after fsync
# returns keeps only what was flushed or written with FUA (crash variant 0). Recovery needs
# every earlier node of the chain: the fsync'd data must survive. mutant-fsync-no-wait
# (no wait before the flush) loses it.
@seed 3
@completion reverse
mkdir /d
create /d/f
write /d/f 0 4096 1
sync
write /d/f 0 40000 2
write /d/f 200000 5000 3
create /d/g
write /d/g 0 9000 4
fsync /d/g
fsync /d/f
