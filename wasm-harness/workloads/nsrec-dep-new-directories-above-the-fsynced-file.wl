# Stop 58 (review 56, second user, F1): records are written by dependency. A file created in
# two directories made since the checkpoint is fsync'd while another directory's save by
# rename is pending: the fsync writes the file's create and the two mkdirs it depends on
# (they share an inode with it, transitively), and leaves /e's records for a later fsync,
# which writes them after the newer ones. After a crash /n/m/f is where it was fsync'd, and
# /e/doc is old or new, whole. Catches mutant-records-without-dependencies.
@nsrec
@seed 58
mkdir /e
create /e/doc
write /e/doc 0 8192 1
sync
create /e/t
write /e/t 0 65536 2
rename /e/t /e/doc
mkdir /n
mkdir /n/m
create /n/m/f
write /n/m/f 0 5000 3
fsync /n/m/f
write /e/doc 0 4096 4
fsync /e/doc
