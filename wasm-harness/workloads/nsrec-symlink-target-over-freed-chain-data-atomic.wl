# Review 51, F1: F1 through an atomic commit (SQLite's path): a temporary file fsync'd and deleted, a
# symlink created by another user, then an atomic commit of a small new database, which
# writes every pending record (the symlink's create among them; the symlink does not ride).
@seed 5113
@nsrec
mkdir /b
create /b/tmp
write /b/tmp 0 8192 1
fsync /b/tmp
unlink /b/tmp
symlink /b/s target
create /db
atomic_start /db
truncate /db 100
atomic_commit /db
