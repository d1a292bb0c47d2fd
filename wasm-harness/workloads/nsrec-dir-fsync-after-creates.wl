# Namespace records (@nsrec): creates in a directory, then an fsync of the directory, which
# writes their records instead of a checkpoint; a file fsync'd after creation in a new
# directory; then more creates and a second directory fsync.
@seed 11
@nsrec
mkdir /d
sync
create /d/a
mkdir /d/sub
create /d/sub/b
write /d/sub/b 0 6000 3
symlink /d/ln a
fsync /d
create /d/sub/c
write /d/sub/c 0 100 5
fsync /d/sub/c
mkdir /d/sub/new
create /d/sub/new/e
fsync /d/sub
