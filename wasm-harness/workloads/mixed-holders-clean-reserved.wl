# Data beside its chain: a batch whose holders were clean (a reserved hole filled, g's
# fallocated blocks) counted too few nodes and its data was refused a block early (stop 52,
# explorer seed 1959); the plan dirties each holder before counting.
# Shrunk by rollfs-sim from file:/work/wt-mixed/wasm-harness/workloads/fallocate-batch-crash.wl (18 ops -> 8): op-mismatch
# original: rollfs-sim replay --seed 1959 --case file:/work/wt-mixed/wasm-harness/workloads/fallocate-batch-crash.wl --state 0:0 --torn --eio
# fallocate-batch-crash-shrunk
@seed 29
@completion random3
@device 4096 16
mkdir /d
create /d/f
create /d/g
falloc /d/f 8192 120000 keep
falloc /d/g 0 6000000
fsync /d/f
write /d/g 5000000 8192 5
fsync /d/g
