# Issue 35, finding 2: an fsync'd path lost after a parent rename when the inode's recorded
# parent is stale. `link` records the new link's directory as the inode's parent; `unlink` of
# that link left it there, and the checkpoint hides the history. fsync's check for a renamed
# ancestor then walked up from the wrong directory (/b), found nothing renamed, and skipped the
# checkpoint: after a crash the file was back at /a/f. It must be at /x/f, the path it was
# fsync'd under (invariant 3).
# The dentry-mark path this guards exists only without namespace records (with them the
# fsync writes the names' records and never walks up): run on such an image.
# Two links, both removed: unlink puts back the name a link replaced in the inode when that
# link goes (core/src/other_names.rs), so one link made and removed again leaves no stale
# parent since stop 57; with a second link there is nothing left to put back.
@nonsrec
@seed 35
mkdir /a
mkdir /b
create /a/f
write /a/f 0 5000 1
link /a/f /b/g
link /a/f /b/h
unlink /b/g
unlink /b/h
sync
rename /a /x
write /x/f 0 8192 2
fsync /x/f
