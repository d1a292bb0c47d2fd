# ALICE's most common bug: replace a file by writing a temporary one and renaming it over
# the original, without fsyncing the temporary file's data first. On rollfs (a directory
# fsync is a checkpoint) and ext4 (auto_da_alloc) the new name never shows an empty file;
# under POSIX's rules the rename may persist before the data.
set -e
printf 'old contents\n' > file
sync file
sync .
rollfs mark >/dev/null
printf 'new contents\n' > tmp
mv tmp file
sync .
