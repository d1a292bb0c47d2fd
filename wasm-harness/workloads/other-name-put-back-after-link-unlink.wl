# Stop 57 (review 56, second user, F2): a link made in /b and removed again puts the name the
# inode recorded before it (/a/f) back (core/src/other_names.rs), so the recorded parent is
# right after the unlink, and the sync keeps it. The fsync after /a's rename walks up from /a,
# finds it renamed and checkpoints; after a crash the file must be at /x/f, the path it was
# fsync'd under (invariant 3). Then a link renamed before its removal: the rename records the
# link's new name, and removing it puts /x/f back again before the last fsync.
@nonsrec
@seed 57
mkdir /a
mkdir /b
create /a/f
write /a/f 0 5000 1
link /a/f /b/g
unlink /b/g
sync
rename /a /x
write /x/f 0 8192 2
fsync /x/f
link /x/f /b/g2
rename /b/g2 /b/g3
unlink /b/g3
write /x/f 0 4096 3
fsync /x/f
