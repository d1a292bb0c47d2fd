# The fixed version of rename-bad.sh: the new data is fsynced before the rename.
set -e
printf 'old contents\n' > file
sync file
sync .
rollfs mark >/dev/null
printf 'new contents\n' > tmp
sync tmp
mv tmp file
sync .
