# Issue 41: a full filesystem could not delete. The far write below fills the device to
# its capacity counting its one data block, not the direct and indirect nodes it creates:
# the valid blocks end above the capacity, and every removal, held to the capacity as if
# it added blocks, got ENOSPC (op-mismatch: a removal must never fail for room). Shrunk
# by rollfs-sim (159 ops -> 9) from the fill-delete family's full:15 at seed 11.
@seed 16897480642383372025
@completion random3
@discard ignore
@device min+80 16
@max-points 48
mkdir /d
mkdir /d/a
create /d/f25
create /d/a/f26
create /fill
fill /fill 65536 100 0
fill /fill 4096 200 64
write /d/a/f26 8192000 4096 4537
unlink /d/f25
