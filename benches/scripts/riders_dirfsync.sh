#!/bin/sh
# usage: riders_dirfsync.sh ROLLFS_BIN N [FEATURES]: N files made and checkpointed, each
# inode dirtied (utime), one file created, then the directory's fsync timed (3 rounds).
# With namespace records every changed file rides the directory fsync (review 51: riders
# cost a scan of every dirty node each before dirty_nodes.rs; 10,000 files: 8.9 s -> 50 ms).
# As root (FUSE mount); WORK picks the work directory (default /tmp/rollfs-riders).
set -e
B=$1; N=$2; F=${3:-nsrec}; W=${WORK:-/tmp/rollfs-riders}/w
mkdir -p ${WORK:-/tmp/rollfs-riders}; fusermount3 -u $W 2>/dev/null || true
rm -f ${WORK:-/tmp/rollfs-riders}/img; mkdir -p $W
$B mkfs -q --size 1G -O $F ${WORK:-/tmp/rollfs-riders}/img
$B mount ${WORK:-/tmp/rollfs-riders}/img $W; sleep 0.5
python3 - "$W" "$N" <<'PY'
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(f"{d}/e")
for i in range(n):
    open(f"{d}/e/f{i}", "w").close()
os.chmod(d, 0o755)
fd = os.open(d, os.O_RDONLY); os.fsync(fd); os.close(fd)
ts = []
for r in range(3):
    now = int(time.time()) + r
    for i in range(n):
        os.utime(f"{d}/e/f{i}", (now + i, i))
    open(f"{d}/e/new{r}", "w").close()
    t = time.perf_counter(); fd = os.open(f"{d}/e", os.O_RDONLY); os.fsync(fd); os.close(fd)
    ts.append(1000 * (time.perf_counter() - t))
print(" ".join("%.1f" % x for x in ts), "ms; median %.1f ms" % sorted(ts)[1])
PY
fusermount3 -u $W
