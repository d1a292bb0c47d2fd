# Review 51, F1: a temporary file written, fsync'd and deleted; a symlink created (never
# fsync'd, as symlinks are); a small new file (its 100 bytes inline in its inode) written and
# fsync'd. Its fsync writes the unlink's, the symlink's and its own create records and its
# batch; the symlink does not ride (stop 51). The recovery mount replays the symlink's create
# alone and writes its target as a new block in the warm data log where the deleted file's
# blocks lie; a power cut (or a failed read) during that mount loses the chain. The deleted
# file's batch is larger than CHAIN_DATA_MAX (18 blocks), so its data is in the data log, not
# beside its chain (where the target could not be written over it).
@seed 5114
@nsrec
mkdir /b
create /b/tmp
write /b/tmp 0 73728 1
fsync /b/tmp
unlink /b/tmp
symlink /b/s target
create /b/lock
write /b/lock 0 100 2
fsync /b/lock
