# An @earlier-life case of the crash review of the mount's version jump: earlier use on a nearly full device
@seed 11
@completion random3
@discard ignore
@device min+64 16
@earlier-life
mkdir /d
create /d/f2
write /d/f2 0 9000 3
fsync /d/f2
create /fill
fill /fill 65536 100 0
fill /fill 4096 200 64
create /d/g
write /d/g 0 3000 5
fsync /d/g
truncate /d/f2 4095
fsync /d/f2
write /d/g 0 100 6
fsync /d/g
