import os, sys, json, fcntl, array, subprocess, tarfile, io, time
# Counts what reaches the kernel and the device per operation on a mounted rollfs (the
# stats ioctl: FUSE requests per opcode, flushes): python3 opcount.py MOUNTPOINT (as root).
MNT=sys.argv[1]
def stats():
    fd=os.open(MNT, os.O_RDONLY)
    buf=bytearray(16383)
    fcntl.ioctl(fd, 0xBFFF5202, buf, True)
    os.close(fd)
    return json.loads(buf[:buf.index(0)].decode())
def delta(a,b):
    d={}
    for sec in ('driver','fuse'):
        for k,v in b.get(sec,{}).items():
            x=v-a.get(sec,{}).get(k,0)
            if x: d[f"{sec}.{k}"]=x
    return d
def report(name,n,a,b):
    d=delta(a,b)
    keys=['driver.fuse_requests','driver.host_flushes','driver.host_flushes_skipped','driver.group_flushes','driver.requests']
    print(f"{name}: per op: " + ", ".join(f"{k.split('.')[1]} {d.get(k,0)/n:.2f}" for k in keys))
    print("   fuse: " + ", ".join(f"{k[10:]} {v/n:.2f}" for k,v in sorted(d.items()) if k.startswith('fuse.')))
N=200
p=os.path.join(MNT,'f4k'); fd=os.open(p,os.O_CREAT|os.O_RDWR,0o644); buf=b'x'*4096
os.pwrite(fd,buf,0); os.fsync(fd)
a=stats()
for i in range(N):
    os.pwrite(fd,buf,(i%64)*4096); os.fsync(fd)
b=stats(); report("4KiB pwrite+fsync",N,a,b)
os.close(fd)
# tar of small files
t=io.BytesIO()
with tarfile.open(fileobj=t,mode='w') as tf:
    for i in range(N):
        data=b'y'*1000
        ti=tarfile.TarInfo(f"d/f{i}"); ti.size=len(data); ti.mode=0o644; ti.mtime=1700000000
        tf.addfile(ti,io.BytesIO(data))
open('/tmp/small.tar','wb').write(t.getvalue())
os.makedirs(os.path.join(MNT,'gt'),exist_ok=True)
a=stats()
subprocess.run(['tar','-xf','/tmp/small.tar','-C',os.path.join(MNT,'gt')],check=True)
b=stats(); report("GNU tar small file",N,a,b)
os.makedirs(os.path.join(MNT,'pt'),exist_ok=True)
a=stats()
with tarfile.open('/tmp/small.tar') as tf: tf.extractall(os.path.join(MNT,'pt'))
b=stats(); report("python tarfile small file",N,a,b)
a=stats()
subprocess.run(['rm','-rf',os.path.join(MNT,'gt')],check=True)
b=stats(); report("rm -rf per file",N,a,b)
# atomic transaction as SQLite does it: START, 2 writes, COMMIT, fsync
p=os.path.join(MNT,'db'); fd=os.open(p,os.O_CREAT|os.O_RDWR,0o644); os.pwrite(fd,b'z'*65536,0); os.fsync(fd)
a=stats()
for i in range(N):
    os.fstat(fd)
    fcntl.ioctl(fd,0xf501); os.pwrite(fd,b'a'*4096,0); os.pwrite(fd,b'b'*4096,4096*(1+i%8)); fcntl.ioctl(fd,0xf502); os.fsync(fd)
b=stats(); report("atomic txn (fstat,START,2 writes,COMMIT,fsync)",N,a,b)
