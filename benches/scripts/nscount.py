import os, sys, json, fcntl
# Counts checkpoints per save-by-rename and per directory fsync on a mounted rollfs (the
# stats ioctl's core counters): python3 nscount.py MOUNTPOINT (as the mounter or root).
# Issue 38's counted goal: <= 0.05 checkpoints per save-by-rename and per directory fsync
# (with namespace records: an image made with `rollfs mkfs -O nsrec`).
MNT = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 200


def stats():
    fd = os.open(MNT, os.O_RDONLY)
    buf = bytearray(16383)
    fcntl.ioctl(fd, 0xBFFF5202, buf, True)
    os.close(fd)
    s = json.loads(buf[:buf.index(0)].decode())
    return {**s["core"], **{"host_" + k: v for k, v in s["driver"].items()}}


def report(name, a, b):
    keys = ["checkpoints", "fsync_by_records", "ns_record_nodes_written", "host_host_flushes", "host_fuse_requests"]
    print(f"{name}: per op: " + ", ".join(f"{k} {(b.get(k, 0) - a.get(k, 0)) / N:.3f}" for k in keys))


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)


d = os.path.join(MNT, "save")
os.makedirs(d, exist_ok=True)
fsync_dir(MNT)
a = stats()
for i in range(N):
    # Save by rename, as editors, git and package managers do.
    tmp, dst = os.path.join(d, "doc.tmp"), os.path.join(d, "doc")
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o644)
    os.write(fd, b"v%d " % i * 100)
    os.fsync(fd)
    os.close(fd)
    os.rename(tmp, dst)
    fsync_dir(d)
b = stats()
report("save-by-rename (write tmp, fsync, rename over, fsync dir)", a, b)

d = os.path.join(MNT, "creates")
os.makedirs(d, exist_ok=True)
fsync_dir(MNT)
a = stats()
for i in range(N):
    fd = os.open(os.path.join(d, f"f{i}"), os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"x" * 100)
    os.fsync(fd)
    os.close(fd)
    fsync_dir(d)
b = stats()
report("create + fsync + directory fsync", a, b)
