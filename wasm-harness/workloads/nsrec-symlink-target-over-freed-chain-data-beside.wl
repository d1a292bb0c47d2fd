# Review 51, F1, with the deleted file's data beside its chain (2 blocks, in the warm node
# log after its inode): a temporary file written, fsync'd and deleted; a symlink created (never
# fsync'd, as symlinks are); a small new file (its 100 bytes inline in its inode) written and
# fsync'd. Its fsync writes the unlink's, the symlink's and its own create records and its
# batch; the symlink does not ride (stop 51). The recovery mount replays the symlink's create
# alone and writes its target as a new block in the warm data log where the deleted file's
# blocks lie; a power cut (or a failed read) during that mount loses the chain.
@seed 5114
@nsrec
mkdir /b
create /b/tmp
write /b/tmp 0 8192 1
fsync /b/tmp
unlink /b/tmp
symlink /b/s target
create /b/lock
write /b/lock 0 100 2
fsync /b/lock
