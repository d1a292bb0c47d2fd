# Stop 58, records by dependency: /p renamed to /r, then a file made in /r/q and linked into
# /t, then a name removed from /t and an atomic commit of /t/db there (its directory lost a
# name: the removal goes, with the link and the create it depends on). The rename of /p is a
# barrier: a later record chosen takes it, so the file is never found at /p/q/n2, a path it
# never had.
@seed 61
@nsrec
mkdir /p
mkdir /p/q
mkdir /t
create /t/db
write /t/db 0 8192 1
create /t/j
sync
rename /p /r
create /r/q/n2
write /r/q/n2 0 100 2
link /r/q/n2 /t/l
unlink /t/j
atomic_start /t/db
write /t/db 0 4096 3
atomic_commit /t/db
