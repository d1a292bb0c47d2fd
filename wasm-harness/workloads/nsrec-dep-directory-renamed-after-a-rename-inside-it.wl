# Stop 58, the crash-safety review of records by dependency (its tree-mismatch, shrunk): a file
# renamed over /u4/s5/f11, then /u4 moved to /u1/d13/m20, then an atomic commit of a file in
# it. The commit writes the move (on its path); a directory's rename takes every record before
# it, so the rename over f11 goes too. Without that the crash showed /u1/d13/m20/s5/f11 with
# the 100 bytes no file had under that path ("no state any file of that name had").
@seed 32
@completion random3
@nsrec
mkdir /u1
mkdir /u4
mkdir /u4/s5
create /u4/s5/f11
write /u4/s5/f11 0 100 15
mkdir /u1/d13
fsync /u1/d13
create /u4/s5/t16
rename /u4/s5/t16 /u4/s5/f11
create /u4/f18
rename /u4 /u1/d13/m20
atomic_start /u1/d13/m20/f18
atomic_commit /u1/d13/m20/f18
