# Scenario "I/O error during log replay" (docs/INVARIANTS.md; btrfs: an error returned, never a crash):
# fsyncs after a sync leave a dnode chain for recovery to read; in every crash state whose
# recovery rolls something forward, every read of the recovery mount (superblock,
# checkpoint, tables, then the chain walk and what applying it reads) fails in turn. Mount
# must fail with EIO (or succeed with an allowed tree), never panic or report anything
# else, and a later mount of what the failed mount left, on a healthy device, must recover
# every fsync that returned.
@seed 8
@recovery-eio each
mkdir /d
create /d/f
create /d/g
write /d/g 0 3000 1
sync
write /d/f 0 9000 2
fsync /d/f
write /d/g 0 5000 3
fdatasync /d/g
create /d/h
write /d/h 0 100 4
fsync /d/h
