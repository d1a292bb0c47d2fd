# The fixed version of create-bad.sh: the directory is fsynced too.
set -e
echo data > f
sync f
sync .
rollfs mark >/dev/null
