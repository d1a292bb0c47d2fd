# Scenario "fsync after rename or link" (docs/INVARIANTS.md; btrfs logged_trans race): rename a file, then a buffered write to it, fsync
# another file, then fsync the renamed file: after a crash the renamed file has the new
# data (under its new name, or its old one if the rename is not yet durable).
@seed 11
mkdir /a
create /a/f
write /a/f 0 5000 1
create /a/g
sync
rename /a/f /a/h
write /a/h 0 8192 2
write /a/g 0 100 3
fsync /a/g
fsync /a/h
