# a file in an atomic session renamed over another, then a new file's fsync writes the
# rename's record (the session file rides as before its session), then the commit
@nsrec
mkdir /d
create /d/file
write /d/file 0 5000 1
create /d/tmp
write /d/tmp 0 3000 2
sync
write /d/tmp 0 3000 3
atomic_start /d/tmp
write /d/tmp 0 6000 4
rename /d/tmp /d/file
create /d/n
write /d/n 0 10 5
fsync /d/n
atomic_commit /d/file
create /d/m
fsync /d/m
atomic_start /d/file
write /d/file 8192 100 6
rename /d/file /d/n
fsync /d
atomic_abort /d/n
fsync /d
