# An append-only log and a pointer file naming its valid length, replaced by rename and
# made durable with a directory fsync: neither the appended record nor the pointer's data
# is fsynced first. On rollfs a directory fsync is a checkpoint of everything; under
# POSIX's rules (and on ext4) the pointer may persist while the record does not.
set -e
: > log
sync log
sync .
rollfs mark >/dev/null
for i in 1 2 3; do
    echo "record $i" >> log
    wc -c < log > ptr.tmp
    mv ptr.tmp ptr
    sync .
done
