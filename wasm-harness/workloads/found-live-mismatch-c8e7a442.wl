# Shrunk by rollfs-sim from file:wasm-harness/workloads/atomic-commit-without-node-ids.wl (18 ops -> 18): live-mismatch
# original: rollfs-sim replay --seed 1 --case file:wasm-harness/workloads/atomic-commit-without-node-ids.wl --state 0:0 --mutant mutant-atomic-partial-commit
# atomic-commit-without-node-ids-shrunk
@seed 16664972103440478273
@completion random3
@device 4096 16
@max-points 40
mkdir /n
mkdir /n/a
mkdir /n/b
mkdir /n/c
mkdir /n/d
create /n/db
write /n/db 0 4096 1
sync
repeat 400 create /n/a/h{i}
repeat 400 create /n/b/h{i}
repeat 400 create /n/c/h{i}
repeat 400 create /n/d/h{i}
atomic_start /n/db
write /n/db 0 4096 20
write /n/db 3743744 4096 21
atomic_commit /n/db
atomic_abort /n/db
sync
