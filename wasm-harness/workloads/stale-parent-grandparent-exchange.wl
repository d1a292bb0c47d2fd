# Issue 35, finding 2 (second form): the grandparent moved by RENAME_EXCHANGE while the file's
# recorded parent is stale (a link made and removed in another directory, hidden by a sync).
# The dentry-mark path this guards exists only without namespace records (with them the
# fsync writes the names' records and never walks up): run on such an image.
# Two links, both removed: unlink puts back the name a link replaced in the inode when that
# link goes (core/src/other_names.rs), so one link made and removed again leaves no stale
# parent since stop 57; with a second link there is nothing left to put back.
@nonsrec
@seed 36
mkdir /p
mkdir /q
mkdir /p/a
mkdir /b
create /p/a/f
write /p/a/f 0 5000 1
link /p/a/f /b/g
link /p/a/f /b/h
unlink /b/g
unlink /b/h
sync
rename /p /q exchange
write /q/a/f 0 8192 2
fsync /q/a/f
