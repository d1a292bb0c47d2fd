#!/usr/bin/python3
# A/B of request thread count and FUSE transport on a disk image (written out, 1 GiB):
# ops/s of (a) one writer's 4 KiB pwrite+fsync loop, (b) fio 16 jobs 4 KiB randwrite
# fsync=1, (c) atomic transactions as SQLite issues them. Rounds alternate configs; medians.
import os, sys, time, subprocess, fcntl, statistics, json
BIN = sys.argv[1]; ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 2; SECS = 4.0
D = sys.argv[3] if len(sys.argv) > 3 else '/work/scratch/threads-ab-disk'; IMG = D + '/img'; MNT = D + '/mnt'
CONFIGS = [('dev', 1), ('dev', 2), ('dev', 4), ('dev', 8), ('uring', 2), ('uring', 4), ('uring', 8)]
def sh(*a): subprocess.run(a, check=True, stdout=subprocess.DEVNULL)
def loop4k(path, secs):
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644); buf = b'x' * 4096; n = 0
    t = time.time()
    while time.time() - t < secs:
        os.pwrite(fd, buf, (n % 64) * 4096); os.fsync(fd); n += 1
    os.close(fd); return n / (time.time() - t)
def atomic(path, secs):
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644); os.pwrite(fd, b'z' * 65536, 0); os.fsync(fd); n = 0
    t = time.time()
    while time.time() - t < secs:
        os.fstat(fd); fcntl.ioctl(fd, 0xf501); os.pwrite(fd, b'a' * 4096, 0)
        os.pwrite(fd, b'b' * 4096, 4096 * (1 + n % 8)); fcntl.ioctl(fd, 0xf502); os.fsync(fd); n += 1
    os.close(fd); return n / (time.time() - t)
def fio16(d, secs):
    o = subprocess.run(['fio', '--name=w', f'--directory={d}', '--rw=randwrite', '--bs=4k', '--size=16m',
        '--numjobs=16', '--fsync=1', f'--runtime={int(secs)}', '--time_based', '--group_reporting',
        '--output-format=json'], check=True, capture_output=True, text=True).stdout
    j = json.loads(o[o.index('{'):]); return j['jobs'][0]['write']['iops']
os.makedirs(MNT, exist_ok=True)
sh('dd', 'if=/dev/zero', f'of={IMG}', 'bs=1M', 'count=1024', 'conv=fsync', 'status=none')
res = {}
for r in range(ROUNDS):
    for (tr, th) in CONFIGS:
        sh(BIN, 'mkfs', '-q', '--force', IMG)
        opts = f'threads={th}' + (',uring' if tr == 'uring' else '')
        sh(BIN, 'mount', '-o', opts, IMG, MNT)
        v = (loop4k(MNT + '/f', SECS), fio16(MNT, SECS), atomic(MNT + '/db', SECS))
        sh('fusermount3', '-u', MNT); time.sleep(1)
        for k, x in zip(('fsync4k-1', 'fio16-randwrite-fsync', 'atomic-tx'), v):
            res.setdefault((k, tr, th), []).append(x)
        print(r, tr, th, [round(x) for x in v], flush=True)
for k in ('fsync4k-1', 'fio16-randwrite-fsync', 'atomic-tx'):
    print(k, ' | '.join(f'{tr} t={th}: {statistics.median(res[(k, tr, th)]):.0f}/s' for (tr, th) in CONFIGS))
