# The fixed version of pointer-bad.sh: the log is fsynced before the pointer names the new
# length, and the pointer's data before its rename.
set -e
: > log
sync log
sync .
rollfs mark >/dev/null
for i in 1 2 3; do
    echo "record $i" >> log
    sync log
    wc -c < log > ptr.tmp
    sync ptr.tmp
    mv ptr.tmp ptr
    sync .
done
