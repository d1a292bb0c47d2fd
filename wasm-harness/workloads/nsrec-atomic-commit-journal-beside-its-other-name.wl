# db has two names, /a/db and /b/db2 (both made before the checkpoint: not relinked since);
# the journal beside the second name is removed, the commit goes through the first name.
# The core writes every record (directory not known for sure); the oracle checks every
# directory holding a name of the file at the commit (review 56: it checked only /a).
@nsrec
mkdir /a
mkdir /b
create /a/db
write /a/db 0 8192 1
link /a/db /b/db2
create /b/j
write /b/j 0 512 2
sync
unlink /b/j
atomic_start /a/db
write /a/db 0 4096 3
atomic_commit /a/db
create /o
write /o 0 100 4
