#!/bin/sh
# A `rollfs crashtest` workload: the seed scenarios of docs/INVARIANTS.md as shell steps,
# each ending in `rollfs mark` once what it made durable must survive. Its check is
# seed-scenarios-check.sh, which sees how many marks preceded the crash.
set -e
mark() { "$ROLLFS" mark >/dev/null; }
pat() { head -c "$1" /dev/zero | tr '\0' "$2"; }
# 1. "Broken dnode chain" (f2fs): multi-block writes to two files, each fsync'd.
mkdir d
sync .
pat 40000 a > d/f
pat 9000 b > d/g
sync d/g
sync d/f
mark
# 2. btrfs logged_trans, rename: fsync, rename, append, fsync the file and its directory.
pat 5000 c > d/r
sync d/r
mv d/r d/r2
pat 300 C >> d/r2
sync d/r2
sync d
mark
# 3. btrfs logged_trans, link: a new hard link, then fsync of the file.
pat 7000 e > d/l
sync d/l
ln d/l d/l2
sync d/l
mark
# 4. Many links to one file in one directory (generic/041's shape, smaller), fsync.
mkdir d2
pat 100 x > d2/x
for i in $(seq 1 200); do ln d2/x d2/x$i; done
sync d2/x
sync d2
mark
# 5-7. A log appended to and fdatasync'd.
for i in 1 2 3; do
    pat 1000 $i >> d/log
    sync -d d/log
    mark
done
# 8. Unlink, then fsync the directory.
rm d/g
sync d
mark
# 9. An overwrite inside a file, fsync.
printf 'ZZZZ' | dd of=d/f bs=1 seek=20000 conv=notrunc 2>/dev/null
sync d/f
mark
