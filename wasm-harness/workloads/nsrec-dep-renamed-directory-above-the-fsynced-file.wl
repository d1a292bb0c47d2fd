# Stop 58 (review 56, second user, F1): records are written by dependency. A directory renamed
# since the checkpoint above a file that is written and fsync'd: the fsync writes the rename
# (it touches a directory on the file's path) and leaves /e's pending save by rename. After
# a crash the file is at /r/q/f, the path it was fsync'd under (invariant 3). Catches
# mutant-records-without-path.
@nsrec
@seed 60
mkdir /p
mkdir /p/q
create /p/q/f
write /p/q/f 0 4096 1
mkdir /e
create /e/doc
sync
create /e/t
write /e/t 0 8192 2
rename /e/t /e/doc
rename /p /r
write /r/q/f 0 4096 7
fsync /r/q/f
