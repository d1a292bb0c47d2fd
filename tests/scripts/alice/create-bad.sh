# A new file is fsynced, but not the directory that names it. On rollfs (an fsync persists
# a new file's name) and ext4 (an fsync commits the journal) it is there after a crash;
# POSIX promises only its data.
set -e
echo data > f
sync f
rollfs mark >/dev/null
