# Scenario "fsync after rename or link" (docs/INVARIANTS.md; btrfs logged_trans race, link variant): a new hard link, then a buffered
# write, fsync another file, then fsync the linked file: after a crash it has the new data.
@seed 12
mkdir /a
create /a/f
write /a/f 0 5000 1
create /a/g
sync
link /a/f /a/l
write /a/l 0 8192 2
write /a/g 0 100 3
fsync /a/g
fsync /a/f
