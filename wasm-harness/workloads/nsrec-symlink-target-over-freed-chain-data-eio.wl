# Review 51, F1: The shrunk random:14024 workload with every read of the recovery mount failed in turn (EIO, no crash during recovery).
# original: rollfs-sim replay --seed 51051 --case random:14024 --state 42:1/38:3 --torn --eio --nsrec
# random-51051-14024-shrunk
@seed 6262407300739627807
@completion random3
@nsrec
@recovery-eio each
mkdir /b
create /b/g
write /b/g 8192 4096 628
fsync /b
truncate /b/g 4000
link /b/g /b/f
symlink /b/i target
fsync /b/f
